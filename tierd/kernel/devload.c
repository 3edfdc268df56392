/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devload: how busy a block device is, from its io_ticks in sysfs. */
#include "devload.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "clock.h"

int devload_read(unsigned major, unsigned minor, struct devload_sample *out)
{
	uint64_t f[10];
	char path[64];
	FILE *file;
	int n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/stat", major, minor);
	file = fopen(path, "re");
	if (!file)
		return -errno;
	/* reads, merges, sectors, ms; writes, merges, sectors, ms; in flight; io_ticks */
	n = fscanf(file, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &f[0], &f[1], &f[2], &f[3],
		   &f[4], &f[5], &f[6], &f[7], &f[8], &f[9]);
	fclose(file);
	if (n != 10)
		return -EPROTO;
	out->ios = f[0] + f[4];
	out->busy_ms = f[9];
	out->at_ns = clock_now_ns();
	return 0;
}

double devload_busy(const struct devload_sample *a, const struct devload_sample *b)
{
	double elapsed_ms, busy;

	if (b->at_ns <= a->at_ns || b->busy_ms < a->busy_ms)
		return 0;
	elapsed_ms = (double)(b->at_ns - a->at_ns) / 1e6;
	busy = (double)(b->busy_ms - a->busy_ms) / elapsed_ms;
	return busy > 1 ? 1 : busy;
}
