// SPDX-License-Identifier: GPL-2.0
/*
 * tsc_khz: prints the host's TSC frequency in kHz, measured against
 * CLOCK_MONOTONIC_RAW over 200 ms.
 *
 * Under TCG a guest's RDTSC reads the host's TSC, so this is the rate the
 * test VM's TSC runs at.  scripts/vm-run.sh passes it on the kernel
 * command line (tsc_early_khz=): the VM kernel has no ACPI, so no HPET or
 * PM timer to calibrate the TSC against, and under TCG its calibration
 * against the PIT fails.
 *
 * Each end of the interval is the tightest of a few (clock, TSC, clock)
 * readings, so a preemption between the reads cannot skew it; the error
 * is well under one part in a million.
 */
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A TSC reading and the clock at it, from the tightest of 16 tries. */
static void sample(unsigned long long *tsc, double *at)
{
	double best = 1.0;
	int i;

	for (i = 0; i < 16; i++) {
		double a = now();
		unsigned long long c = __rdtsc();
		double b = now();

		if (b - a < best) {
			best = b - a;
			*tsc = c;
			*at = (a + b) / 2;
		}
	}
}

int main(void)
{
	const struct timespec gap = { 0, 200000000 };
	unsigned long long c0, c1;
	double t0, t1;

	sample(&c0, &t0);
	nanosleep(&gap, NULL);
	sample(&c1, &t1);
	printf("%.0f\n", (double)(c1 - c0) / (t1 - t0) / 1000);
	return 0;
}
