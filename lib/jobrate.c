/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "jobrate.h"

#include <math.h>
#include <string.h>

void jobrate_start(struct jobrate *r, uint64_t now_ns)
{
	memset(r, 0, sizeof(*r));
	jobrate_sample(r, now_ns, 0);
}

void jobrate_sample(struct jobrate *r, uint64_t now_ns, uint64_t done_bytes)
{
	unsigned last = (r->next + JOBRATE_SAMPLES - 1) % JOBRATE_SAMPLES;

	if (r->nr && now_ns < r->at_ns[last] + JOBRATE_MIN_GAP_NS)
		return;
	r->at_ns[r->next] = now_ns;
	r->bytes[r->next] = done_bytes;
	r->next = (r->next + 1) % JOBRATE_SAMPLES;
	if (r->nr < JOBRATE_SAMPLES)
		r->nr++;
}

double jobrate_rate(const struct jobrate *r, uint64_t now_ns, uint64_t done_bytes)
{
	unsigned oldest = (r->next + JOBRATE_SAMPLES - r->nr) % JOBRATE_SAMPLES, ref = oldest;
	uint64_t dt;

	if (!r->nr)
		return 0;
	/* From the oldest sample on, the last one still a window or more before now. */
	for (unsigned i = 0; i < r->nr; i++) {
		unsigned k = (oldest + i) % JOBRATE_SAMPLES;

		if (r->at_ns[k] + JOBRATE_WINDOW_NS > now_ns)
			break;
		ref = k;
	}
	if (now_ns < r->at_ns[ref] + JOBRATE_MIN_GAP_NS || done_bytes < r->bytes[ref])
		return 0;
	dt = now_ns - r->at_ns[ref];
	return (double)(done_bytes - r->bytes[ref]) / ((double)dt / 1e9);
}

int64_t jobrate_eta(double rate, uint64_t done_bytes, uint64_t total_bytes)
{
	double left;

	if (done_bytes >= total_bytes)
		return 0;
	if (!(rate > 0))
		return -1;
	left = ceil((double)(total_bytes - done_bytes) / rate);
	return left > (double)INT64_MAX / 2 ? -1 : (int64_t)left;
}
