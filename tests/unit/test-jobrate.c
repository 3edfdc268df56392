/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdint.h>

#include "check.h"
#include "jobrate.h"

#define S 1000000000ull
#define MiB (UINT64_C(1) << 20)

static void test_start(void)
{
	struct jobrate r;

	jobrate_start(&r, 100 * S);
	/* Under a second since the start: no rate yet, so no time left either. */
	CHECK(jobrate_rate(&r, 100 * S + S / 2, 4 * MiB) == 0);
	CHECK_INT(jobrate_eta(0, 4 * MiB, 40 * MiB), -1);
	/* Since the start while the job is younger than the window. */
	CHECK(jobrate_rate(&r, 104 * S, 40 * MiB) == 10.0 * MiB);
}

static void test_window(void)
{
	struct jobrate r;

	/* 1 MiB/s for five minutes, then 4 MiB/s for two: the rate follows the last minute. */
	jobrate_start(&r, 0);
	for (uint64_t t = 1; t <= 300; t++)
		jobrate_sample(&r, t * S, t * MiB);
	for (uint64_t t = 301; t <= 420; t++)
		jobrate_sample(&r, t * S, (300 + 4 * (t - 300)) * MiB);
	CHECK(jobrate_rate(&r, 420 * S, 780 * MiB) == 4.0 * MiB);
	/* Samples closer than a second apart are not kept: they would shorten the window. */
	jobrate_start(&r, 0);
	for (uint64_t ms = 1; ms <= 1500; ms++)
		jobrate_sample(&r, ms * 1000000ull, ms * 1000);
	CHECK_UINT(r.nr, 2);
	/* A job that stalled: the rate falls as time passes without bytes. */
	jobrate_start(&r, 0);
	jobrate_sample(&r, 10 * S, 100 * MiB);
	CHECK(jobrate_rate(&r, 70 * S, 100 * MiB) == 0);
	CHECK(jobrate_rate(&r, 40 * S, 100 * MiB) == 100.0 * MiB / 40);
}

static void test_ring(void)
{
	struct jobrate r;

	/* More samples than the ring holds, a second apart: the oldest kept one is the reference. */
	jobrate_start(&r, 0);
	for (uint64_t t = 1; t <= 3 * JOBRATE_SAMPLES; t++)
		jobrate_sample(&r, t * S, t * 2 * MiB);
	CHECK_UINT(r.nr, JOBRATE_SAMPLES);
	CHECK(jobrate_rate(&r, 3 * JOBRATE_SAMPLES * S, 3 * JOBRATE_SAMPLES * 2 * MiB) ==
	      2.0 * MiB);
}

static void test_eta(void)
{
	CHECK_INT(jobrate_eta(MiB, 0, 10 * MiB), 10);
	/* Rounded up: 1.5 s left shows as 2. */
	CHECK_INT(jobrate_eta(2.0 * MiB, 7 * MiB, 10 * MiB), 2);
	CHECK_INT(jobrate_eta(MiB, 10 * MiB, 10 * MiB), 0);
	CHECK_INT(jobrate_eta(MiB, 11 * MiB, 10 * MiB), 0);
	CHECK_INT(jobrate_eta(-1, 0, 10 * MiB), -1);
	CHECK_INT(jobrate_eta(1e-300, 0, UINT64_MAX), -1);
}

int main(void)
{
	test_start();
	test_window();
	test_ring();
	test_eta();
	return 0;
}
