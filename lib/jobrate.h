/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobrate: how fast a long job goes and how long it has left, from samples
 * of the bytes it has done. Pure: the caller passes the clock.
 */
#ifndef TIERD_JOBRATE_H
#define TIERD_JOBRATE_H

#include <stdint.h>

/*
 * The rate is measured over about the last minute, so that it follows a
 * change of pace (a rate cap set, a busy volume) yet one slow batch does not
 * swing it; samples closer together than a second are not kept.
 */
#define JOBRATE_SAMPLES 64
#define JOBRATE_WINDOW_NS (60ull * 1000000000ull)
#define JOBRATE_MIN_GAP_NS (1000000000ull)

struct jobrate {
	uint64_t at_ns[JOBRATE_SAMPLES];
	uint64_t bytes[JOBRATE_SAMPLES];
	unsigned nr, next; /* samples held; where the next one goes */
};

/* A job starting at now_ns with nothing done. */
void jobrate_start(struct jobrate *r, uint64_t now_ns);
/* done_bytes done by now_ns (never fewer than before, never earlier). */
void jobrate_sample(struct jobrate *r, uint64_t now_ns, uint64_t done_bytes);
/*
 * Bytes per second from the newest sample at least a window old (or the
 * oldest sample there is) to now and done_bytes; 0 when under a second has
 * passed since that sample.
 */
double jobrate_rate(const struct jobrate *r, uint64_t now_ns, uint64_t done_bytes);
/* Whole seconds until total_bytes at rate, rounded up; 0 when done, -1 when rate is 0. */
int64_t jobrate_eta(double rate, uint64_t done_bytes, uint64_t total_bytes);

#endif
