/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the C check programs print and count: note() a line of detail,
 * bad() a check that failed (counted in `failures`, the run goes on),
 * die() a test that cannot go on (exit 2), and now(), a monotonic clock
 * in seconds.  Each program includes it once.
 */
#ifndef RRXE_PROGS_REPORT_H
#define RRXE_PROGS_REPORT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int failures __attribute__((unused));

static inline void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("  ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

/* Something that must hold did not: counted, the run goes on. */
static inline void bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("  FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	failures++;
}

/* The test itself cannot go on (setup failed). */
static inline void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FATAL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	exit(2);
}

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
