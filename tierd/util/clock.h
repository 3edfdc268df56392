/* SPDX-License-Identifier: GPL-2.0-or-later */
/* clock: the monotonic clock every timeout, rate cap and stall is measured on. */
#ifndef TIERD_CLOCK_H
#define TIERD_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds: never steps with the wall clock. */
static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
