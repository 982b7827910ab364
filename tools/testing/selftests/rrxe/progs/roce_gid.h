/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gid_is_roce_v2(): whether GID table entry INDEX of port 1 of the RDMA
 * device DEV is a RoCE v2 GID (sysfs gid_attrs/types).  Shared by the C
 * check programs that look for a device's RoCE v2 IPv4 GID.
 */
#ifndef RRXE_PROGS_ROCE_GID_H
#define RRXE_PROGS_ROCE_GID_H

#include <stdio.h>
#include <string.h>

static inline int gid_is_roce_v2(const char *dev, int index)
{
	char path[256], s[64];
	FILE *f;
	int yes;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gid_attrs/types/%d",
		 dev, index);
	f = fopen(path, "r");
	if (!f)
		return 0;
	yes = fgets(s, sizeof(s), f) && !strncmp(s, "RoCE v2", 7);
	fclose(f);
	return yes;
}

#endif
