/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devload: how busy a block device is with its users' I/O, from the kernel's
 * counters in /sys/dev/block/MAJ:MIN/stat. For a tierd volume these count
 * only what applications send to /dev/mapper/NAME: the mirror's copy (kcopyd)
 * goes to the tier devices underneath, so a migration does not mistake its
 * own traffic for foreground load (docs/migration.md).
 */
#ifndef TIERD_DEVLOAD_H
#define TIERD_DEVLOAD_H

#include <stdint.h>

struct devload_sample {
	uint64_t ios;     /* reads + writes completed */
	uint64_t busy_ms; /* io_ticks: time with at least one I/O in flight */
	uint64_t at_ns;   /* CLOCK_MONOTONIC */
};

int devload_read(unsigned major, unsigned minor, struct devload_sample *out);
/* Share of the time from a to b with I/O in flight, 0 to 1 (0 if no time passed). */
double devload_busy(const struct devload_sample *a, const struct devload_sample *b);

#endif
