/* SPDX-License-Identifier: GPL-2.0-or-later */
/* heat: decay, weights, discounts, ranking. */
#include <errno.h>
#include <math.h> /* NAN and INFINITY only: the tests link no libm */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "heat.h"

#define NS_PER_S UINT64_C(1000000000)
#define DAY_NS (86400 * NS_PER_S)
#define T0 (1000 * NS_PER_S) /* any clock value; 0 means "no sample" */

/* Sectors of one I/O of this many KiB. */
#define KIB_SECTORS(k) ((uint64_t)(k) * 2)

static struct statsparse_area reads(uint32_t n, uint32_t merged, uint64_t sectors)
{
	return (struct statsparse_area){ .reads = n, .reads_merged = merged, .sectors_read = sectors };
}

static struct statsparse_area writes(uint32_t n, uint32_t merged, uint64_t sectors)
{
	return (struct statsparse_area){ .writes = n, .writes_merged = merged, .sectors_written = sectors };
}

static void test_params(void)
{
	struct heat_params p, bad;

	heat_params_default(&p);
	CHECK_NEAR(p.half_life_s, 86400, 0);
	CHECK_NEAR(p.read_weight, 1, 0);
	CHECK_NEAR(p.write_weight, 1, 0);
	CHECK_UINT(p.large_io_bytes, 65536);
	CHECK(p.scan_bytes == UINT64_C(64) << 20);
	CHECK_OK(heat_params_valid(&p));
	CHECK_INT(heat_params_valid(NULL), -EINVAL);

#define CHECK_BAD(field, value)                                   \
	do {                                                      \
		bad = p;                                          \
		bad.field = (value);                              \
		CHECK_INT(heat_params_valid(&bad), -EINVAL);      \
	} while (0)
	CHECK_BAD(half_life_s, 0);
	CHECK_BAD(half_life_s, 0.5);
	CHECK_BAD(half_life_s, -86400);
	CHECK_BAD(half_life_s, NAN);
	CHECK_BAD(half_life_s, INFINITY);
	CHECK_BAD(half_life_s, 11 * 365 * 86400.0);
	CHECK_BAD(read_weight, -1);
	CHECK_BAD(read_weight, NAN);
	CHECK_BAD(write_weight, 1001);
	CHECK_BAD(write_weight, INFINITY);
	CHECK_BAD(large_io_bytes, 0);
	CHECK_BAD(large_io_bytes, 511);
	CHECK_BAD(large_io_bytes, (UINT32_C(1) << 30) + 1);
	CHECK_BAD(scan_bytes, 0);
	CHECK_BAD(scan_bytes, 511);
	CHECK_BAD(scan_bytes, (UINT64_C(1) << 50) + 1);
#undef CHECK_BAD
	bad = p;
	bad.read_weight = bad.write_weight = 0;
	CHECK_INT(heat_params_valid(&bad), -EINVAL);
	/* The edges are allowed: writes may not count, sequential I/O next to nothing. */
	bad = p;
	bad.write_weight = 0;
	bad.scan_bytes = UINT64_C(1) << 50;
	bad.half_life_s = 1;
	bad.large_io_bytes = 512;
	CHECK_OK(heat_params_valid(&bad));
	bad.scan_bytes = 512;
	CHECK_OK(heat_params_valid(&bad));
}

static void test_decay_factor(void)
{
	struct heat_params p;

	heat_params_default(&p);
	CHECK_NEAR(heat_decay_factor(&p, 0), 1, 0);
	CHECK_NEAR(heat_decay_factor(&p, DAY_NS), 0.5, 0);
	CHECK_NEAR(heat_decay_factor(&p, 2 * DAY_NS), 0.25, 0);
	CHECK_NEAR(heat_decay_factor(&p, 10 * DAY_NS), 1.0 / 1024, 0);
	CHECK_NEAR(heat_decay_factor(&p, DAY_NS / 2), 0.7071067811865476, 1e-15);
	CHECK_NEAR(heat_decay_factor(&p, DAY_NS / 3), 0.7937005259840998, 1e-15);
	/* One default sample interval. */
	CHECK_NEAR(heat_decay_factor(&p, 10 * NS_PER_S), 0.9999197778498484, 1e-15);
	/* 5000 half-lives: nothing left, and no trouble getting there. */
	CHECK_NEAR(heat_decay_factor(&p, 5000 * DAY_NS), 0, 0);
	CHECK_NEAR(heat_decay_factor(&p, UINT64_MAX), 0, 0);
	p.half_life_s = 3600;
	CHECK_NEAR(heat_decay_factor(&p, 3 * 3600 * NS_PER_S), 0.125, 0);
	CHECK(heat_decay_factor(&p, 1) < 1);
	CHECK(heat_decay_factor(&p, 1) > 0.999999);
}

/* What heat_sample_begin() does to the table for a sample's decay, without the clock. */
static void decay_table(struct heat_table *t, double decay)
{
	t->scale = (t->scale > 0 ? t->scale : 1) / decay;
}

static void test_decay_apply(void)
{
	struct heat_params p;
	struct heat_table t;
	struct statsparse_area a = reads(100, 0, KIB_SECTORS(4) * 100), idle = { 0 };

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, 1));
	CHECK_UINT(t.last_sample_ns, 0);
	/* The first sample has nothing to decay, however late it comes. */
	CHECK_OK(heat_apply(&t, &p, &a, 1, T0));
	CHECK_UINT(t.last_sample_ns, T0);
	CHECK_NEAR(heat_value(&t, 0), 100, 0);
	CHECK_OK(heat_apply(&t, &p, &idle, 1, T0 + DAY_NS));
	CHECK_NEAR(heat_value(&t, 0), 50, 0);
	CHECK_OK(heat_apply(&t, &p, &idle, 1, T0 + 3 * DAY_NS));
	CHECK_NEAR(heat_value(&t, 0), 12.5, 0);
	/* Zero elapsed: the sample adds and nothing decays. */
	CHECK_OK(heat_apply(&t, &p, &a, 1, T0 + 3 * DAY_NS));
	CHECK_NEAR(heat_value(&t, 0), 112.5, 0);
	/* Many small steps make the same day as one big one. */
	for (int i = 1; i <= 8640; i++)
		CHECK_OK(heat_apply(&t, &p, &idle, 1, T0 + 3 * DAY_NS + (uint64_t)i * 10 * NS_PER_S));
	CHECK_NEAR(heat_value(&t, 0), 56.25, 56.25 * 1e-5);
	/* Long idle ends at exactly 0, not in subnormal floats. */
	CHECK_OK(heat_apply(&t, &p, &idle, 1, T0 + 200 * DAY_NS));
	CHECK_NEAR(heat_value(&t, 0), 0, 0);
	CHECK_UINT(heat_at(&t, 0)->reads, 200);
	heat_table_destroy(&t);
}

static void test_apply_errors(void)
{
	struct heat_params p, bad;
	struct heat_table t;
	struct statsparse_area a[2] = { reads(1, 0, 8), writes(2, 0, 16) };

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, 2));
	CHECK_OK(heat_apply(&t, &p, a, 2, T0));
	CHECK_INT(heat_apply(&t, &p, a, 1, T0 + 1), -EINVAL);      /* nr != t->nr */
	CHECK_INT(heat_apply(&t, &p, a, 3, T0 + 1), -EINVAL);
	CHECK_INT(heat_apply(&t, &p, a, 2, T0 - 1), -EINVAL);      /* time went back */
	CHECK_INT(heat_apply(&t, &p, a, 2, 0), -EINVAL);
	CHECK_INT(heat_apply(&t, &p, NULL, 2, T0 + 1), -EINVAL);
	CHECK_INT(heat_apply(NULL, &p, a, 2, T0 + 1), -EINVAL);
	bad = p;
	bad.half_life_s = 0;
	CHECK_INT(heat_apply(&t, &bad, a, 2, T0 + 1), -EINVAL);
	/* None of that touched the table. */
	CHECK_UINT(t.last_sample_ns, T0);
	CHECK_NEAR(heat_value(&t, 0), 1, 0);
	CHECK_NEAR(heat_value(&t, 1), 2, 0);
	CHECK_UINT(heat_at(&t, 0)->reads, 1);
	CHECK_UINT(heat_at(&t, 1)->writes, 2);
	heat_table_destroy(&t);
}

static void test_totals_and_moved_at(void)
{
	struct heat_params p;
	struct heat_table t;
	struct statsparse_area a[2] = {
		{ .reads = 3, .sectors_read = 24, .writes = 5, .writes_merged = 4, .sectors_written = 40 },
		{ .reads = 4000000000u, .sectors_read = 8 * 4000000000ull },
	};

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, 2));
	heat_at_mut(&t, 0)->moved_at = 0xabcd;
	for (uint64_t i = 0; i < 3; i++)
		CHECK_OK(heat_apply(&t, &p, a, 2, T0 + i * 10 * NS_PER_S));
	CHECK_UINT(heat_at(&t, 0)->reads, 9);
	CHECK_UINT(heat_at(&t, 0)->writes, 15);
	CHECK_UINT(heat_at(&t, 1)->reads, 12000000000ull); /* totals outgrow one sample's 32 bits */
	CHECK_UINT(heat_at(&t, 1)->writes, 0);
	CHECK_UINT(heat_at(&t, 0)->moved_at, 0xabcd);
	CHECK_UINT(heat_at(&t, 1)->moved_at, 0);
	heat_table_destroy(&t);
}

static void test_weights(void)
{
	struct heat_params p;
	struct statsparse_area a = { .reads = 10, .sectors_read = KIB_SECTORS(4) * 10,
				     .writes = 10, .sectors_written = KIB_SECTORS(4) * 10 };

	heat_params_default(&p);
	/* The unit: one small random I/O is 1. */
	CHECK_NEAR(heat_score(&p, &a), 20, 0);
	p.read_weight = 2;
	p.write_weight = 0.5;
	CHECK_NEAR(heat_score(&p, &a), 25, 0);
	p.write_weight = 0;
	CHECK_NEAR(heat_score(&p, &a), 20, 0);
	a = (struct statsparse_area){ 0 };
	CHECK_NEAR(heat_score(&p, &a), 0, 0);
}

static void test_large_io(void)
{
	struct heat_params p;
	struct statsparse_area a;

	heat_params_default(&p);
	/* Up to large_io_bytes an I/O is a whole I/O, however small. */
	a = reads(1, 0, 1);
	CHECK_NEAR(heat_score(&p, &a), 1, 0);
	a = reads(1, 0, KIB_SECTORS(64));
	CHECK_NEAR(heat_score(&p, &a), 1, 0);
	/* Above it, large_io_bytes / average size. */
	a = reads(1, 0, KIB_SECTORS(128));
	CHECK_NEAR(heat_score(&p, &a), 0.5, 0);
	a = reads(10, 0, KIB_SECTORS(1024) * 10);
	CHECK_NEAR(heat_score(&p, &a), 10.0 / 16, 0);
	a = writes(2, 0, KIB_SECTORS(256) * 2);
	CHECK_NEAR(heat_score(&p, &a), 0.5, 0);
	/* The average decides: one 1 MiB and three 4 KiB reads average 259 KiB. */
	a = reads(4, 0, KIB_SECTORS(1024 + 3 * 4));
	CHECK_NEAR(heat_score(&p, &a), 4 * 64.0 / 259, 1e-12);
	/* The threshold is a knob. */
	p.large_io_bytes = 4096;
	a = reads(1, 0, KIB_SECTORS(64));
	CHECK_NEAR(heat_score(&p, &a), 1.0 / 16, 0);
}

static void test_merged(void)
{
	struct heat_params p;
	struct statsparse_area a;

	heat_params_default(&p);
	/* 4 random and 16 sequential 4 KiB: 2 of the 4 are the stream's restarts. */
	a = reads(20, 16, KIB_SECTORS(4) * 20);
	CHECK_NEAR(heat_score(&p, &a), 2 + 18.0 / 16384, 1e-15);
	a = writes(20, 16, KIB_SECTORS(4) * 20);
	CHECK_NEAR(heat_score(&p, &a), 2 + 18.0 / 16384, 1e-15);
	/* Nothing merged, nothing taken: 20 random. */
	a = reads(20, 0, KIB_SECTORS(4) * 20);
	CHECK_NEAR(heat_score(&p, &a), 20, 0);
	/* dm-stats races can count more merged than done: never more than all. */
	a = reads(2, 5, KIB_SECTORS(4) * 2);
	CHECK_NEAR(heat_score(&p, &a), 2.0 / 16384, 1e-15);
	/* 8 sequential 128 KiB reads: 1 MiB of 64. */
	a = reads(8, 8, KIB_SECTORS(128) * 8);
	CHECK_NEAR(heat_score(&p, &a), 1.0 / 64, 1e-15);
	/* The unit is a knob: at 1 MiB the same reads count 1. */
	p.scan_bytes = 1 << 20;
	CHECK_NEAR(heat_score(&p, &a), 1, 1e-15);
}

/*
 * A scan's heat must not depend on the size of its I/Os: one pass over a
 * 4 MiB extent adds 1/16 in 4 KiB reads as in 2 MiB ones (and in writes).
 * Past that, sequential I/Os count as random ones of their size do, never
 * more: at 16 MiB a random I/O counts 1/256, below the 1/4 its bytes are.
 */
static void test_scan_any_size(void)
{
	struct heat_params p;
	struct statsparse_area a;

	heat_params_default(&p);
	for (uint32_t kib = 4; kib <= 2048; kib *= 2) {
		uint32_t n = 4096 / kib;

		a = reads(n, n, KIB_SECTORS(4096));
		CHECK_NEAR(heat_score(&p, &a), 1.0 / 16, 1e-12);
		a = writes(n, n, KIB_SECTORS(4096));
		CHECK_NEAR(heat_score(&p, &a), 1.0 / 16, 1e-12);
	}
	/* A pass of 64 KiB reads that restarted 7 times (CPU moves) is still a pass. */
	a = reads(64, 57, KIB_SECTORS(4096));
	CHECK_NEAR(heat_score(&p, &a), 1.0 / 16, 1e-12);
	/* 56 merged explain 7 restarts: the eighth counts as a random read. */
	a = reads(64, 56, KIB_SECTORS(4096));
	CHECK_NEAR(heat_score(&p, &a), 1 + 63.0 / 1024, 1e-12);
	a = reads(1, 1, KIB_SECTORS(16384));
	CHECK_NEAR(heat_score(&p, &a), 1.0 / 256, 0);
	a = reads(1, 0, KIB_SECTORS(16384));
	CHECK_NEAR(heat_score(&p, &a), 1.0 / 256, 0);
	/* Whatever the unit and size: sequential never above random of the same size. */
	for (uint64_t scan = 512; scan <= UINT64_C(1) << 50; scan <<= 3) {
		p.scan_bytes = scan;
		for (uint32_t kib = 1; kib <= 1 << 20; kib <<= 1) {
			struct statsparse_area seq = reads(3, 3, KIB_SECTORS(kib) * 3);
			struct statsparse_area rnd = reads(3, 0, KIB_SECTORS(kib) * 3);

			CHECK(heat_score(&p, &seq) <= heat_score(&p, &rnd));
		}
	}
}

/*
 * The point of the discounts: a backup reading the whole volume must not
 * look hot.  4 GiB of 4 MiB extents; 200 random 4 KiB reads on 4 of them,
 * then a scan of all 1024 in 1 MiB reads that all continue the previous one.
 */
static void test_scan_vs_random(void)
{
	enum { NR = 1024, HOT = 4, EXTENT_SECTORS = 8192 };
	static const uint32_t hot[HOT] = { 17, 300, 301, 999 };
	static struct statsparse_area random_sample[NR], scan[NR];
	struct heat_params p;
	struct heat_table t;
	uint32_t top[HOT], nr_top;
	double scan_total = 0;

	heat_params_default(&p);
	for (uint32_t i = 0; i < HOT; i++)
		random_sample[hot[i]] = reads(200 / HOT, 0, KIB_SECTORS(4) * (200 / HOT));
	for (uint32_t i = 0; i < NR; i++)
		scan[i] = reads(4, 4, EXTENT_SECTORS);

	/* Per extent: 4 MiB of sequential reads / 64 MiB = 1/16, against 50. */
	CHECK_NEAR(heat_score(&p, &scan[0]), 1.0 / 16, 0);
	CHECK_NEAR(heat_score(&p, &random_sample[hot[0]]), 50, 0);
	for (uint32_t i = 0; i < NR; i++)
		scan_total += heat_score(&p, &scan[i]);
	/* Over the whole volume the scan adds 64: less than the 200 random reads. */
	CHECK_NEAR(scan_total, 64, 0);

	/* Either order, 10 s apart: the random extents stay on top, some 800 times hotter. */
	for (int order = 0; order < 2; order++) {
		CHECK_OK(heat_table_init(&t, NR));
		CHECK_OK(heat_apply(&t, &p, order ? scan : random_sample, NR, T0));
		CHECK_OK(heat_apply(&t, &p, order ? random_sample : scan, NR, T0 + 10 * NS_PER_S));
		CHECK_OK(heat_top(&t, HOT, top, &nr_top));
		CHECK_UINT(nr_top, HOT);
		for (uint32_t i = 0; i < HOT; i++) {
			CHECK_UINT(top[i], hot[i]);
			CHECK(heat_value(&t, hot[i]) > 50 * 0.9999);
		}
		CHECK(heat_value(&t, 0) < 0.0626f);
		CHECK(heat_value(&t, hot[0]) > 799 * heat_value(&t, 0));
		heat_table_destroy(&t);
	}

	/* Without the discounts the scan would outweigh the random reads 20 times over. */
	p.scan_bytes = 512;
	p.large_io_bytes = 1u << 30;
	CHECK_NEAR(heat_score(&p, &scan[0]) * NR, 4096, 0);
}

static void set_heats(struct heat_table *t, const float *heats, uint32_t nr)
{
	CHECK_OK(heat_table_resize(t, nr));
	for (uint32_t i = 0; i < nr; i++)
		heat_at_mut(t, i)->heat = heats[i];
}

static void check_top(const struct heat_table *t, uint32_t n, const uint32_t *want, uint32_t nr_want)
{
	uint32_t out[16], nr_out = 99;

	memset(out, 0xff, sizeof(out));
	CHECK_OK(heat_top(t, n, out, &nr_out));
	CHECK_UINT(nr_out, nr_want);
	for (uint32_t i = 0; i < nr_want; i++)
		CHECK_UINT(out[i], want[i]);
	/* Nothing written past what was asked for. */
	for (uint32_t i = n; i < 16; i++)
		CHECK_UINT(out[i], UINT32_MAX);
}

static void test_top(void)
{
	static const float heats[] = { 3, 5, 5, 1, 5, 0, 2 };
	static const uint32_t sorted[] = { 1, 2, 4, 0, 6, 3, 5 };
	struct heat_table t;
	uint32_t out[1], nr_out = 99;

	CHECK_OK(heat_table_init(&t, 0));
	set_heats(&t, heats, 7);
	check_top(&t, 0, sorted, 0);
	check_top(&t, 1, sorted, 1);
	check_top(&t, 2, sorted, 2);
	check_top(&t, 3, sorted, 3);     /* three ties, by index */
	check_top(&t, 4, sorted, 4);
	check_top(&t, 7, sorted, 7);
	check_top(&t, 12, sorted, 7);    /* more asked than there are */
	/* A later tie never displaces an earlier one. */
	static const float late[] = { 1, 2, 9, 2, 9, 9 };
	static const uint32_t late_sorted[] = { 2, 4, 5, 1, 3, 0 };
	set_heats(&t, late, 6);
	check_top(&t, 2, late_sorted, 2);
	check_top(&t, 4, late_sorted, 4);
	/* All equal: index order. */
	static const float flat[] = { 7, 7, 7, 7, 7 };
	static const uint32_t flat_sorted[] = { 0, 1, 2, 3, 4 };
	set_heats(&t, flat, 5);
	check_top(&t, 3, flat_sorted, 3);
	check_top(&t, 5, flat_sorted, 5);

	CHECK_INT(heat_top(&t, 1, NULL, &nr_out), -EINVAL);
	CHECK_INT(heat_top(&t, 1, out, NULL), -EINVAL);
	CHECK_INT(heat_top(NULL, 1, out, &nr_out), -EINVAL);
	CHECK_OK(heat_top(&t, 0, NULL, &nr_out));
	CHECK_UINT(nr_out, 0);
	CHECK_OK(heat_table_resize(&t, 0));
	CHECK_OK(heat_top(&t, 1, out, &nr_out));
	CHECK_UINT(nr_out, 0);
	heat_table_destroy(&t);
}

/* heat_top(t) against the obvious O(nr * n) selection, for sizes around t->nr. */
static void check_top_against_selection(const struct heat_table *t)
{
	const uint32_t sizes[] = { 1, 2, 7, 100, t->nr - 1, t->nr, t->nr + 500 };
	uint32_t *out = calloc(t->nr + 500, sizeof(*out)), nr_out;
	bool *taken = calloc(t->nr, sizeof(*taken));

	CHECK(out && taken);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t n = sizes[s];

		CHECK_OK(heat_top(t, n, out, &nr_out));
		CHECK_UINT(nr_out, n < t->nr ? n : t->nr);
		memset(taken, 0, t->nr * sizeof(*taken));
		for (uint32_t k = 0; k < nr_out; k++) {
			uint32_t best = UINT32_MAX;

			for (uint32_t i = 0; i < t->nr; i++)
				if (!taken[i] &&
				    (best == UINT32_MAX || heat_at(t, i)->heat > heat_at(t, best)->heat))
					best = i;
			taken[best] = true;
			CHECK_UINT(out[k], best);
		}
	}
	free(out);
	free(taken);
}

/* heat_top_ranges() against the same selection among the extents of its ranges. */
static void check_top_ranges(const struct heat_table *t)
{
	uint32_t nr = t->nr, first[3] = { 3, nr / 3, nr / 2 + 1 };
	uint32_t count[3] = { nr / 4, nr / 8 + 1, nr - (nr / 2 + 1) };
	uint32_t *out = calloc(nr, sizeof(*out)), nr_out, total = 0;
	bool *in = calloc(nr, sizeof(*in)), *taken = calloc(nr, sizeof(*taken));

	CHECK(out && in && taken);
	for (int k = 0; k < 3; k++) {
		for (uint32_t i = first[k]; i < first[k] + count[k]; i++)
			in[i] = true;
		total += count[k];
	}
	for (uint32_t n = 1; n <= total + 1; n = n * 3 + 1) {
		CHECK_OK(heat_top_ranges(t, first, count, 3, n, out, &nr_out));
		CHECK_UINT(nr_out, n < total ? n : total);
		memset(taken, 0, nr * sizeof(*taken));
		for (uint32_t k = 0; k < nr_out; k++) {
			uint32_t best = UINT32_MAX;

			for (uint32_t i = 0; i < nr; i++)
				if (in[i] && !taken[i] &&
				    (best == UINT32_MAX || heat_at(t, i)->heat > heat_at(t, best)->heat))
					best = i;
			taken[best] = true;
			CHECK_UINT(out[k], best);
		}
	}
	/* Ranges out of order, overlapping, or past the table. */
	uint32_t back[2] = { 10, 5 }, one[2] = { 1, 1 }, over[2] = { 0, 3 }, five[2] = { 5, 5 };
	uint32_t past = nr - 1, two = 2;

	CHECK_INT(heat_top_ranges(t, back, one, 2, 1, out, &nr_out), -EINVAL);
	CHECK_INT(heat_top_ranges(t, over, five, 2, 1, out, &nr_out), -EINVAL);
	CHECK_INT(heat_top_ranges(t, &past, &two, 1, 1, out, &nr_out), -EINVAL);
	CHECK_OK(heat_top_ranges(t, NULL, NULL, 0, 4, out, &nr_out));
	CHECK_UINT(nr_out, 0);
	free(out);
	free(in);
	free(taken);
}

/* Many ties, every page in use; then pages in use among many that are not. */
static void test_top_random(void)
{
	struct heat_table t;
	uint32_t x = 1;

	CHECK_OK(heat_table_init(&t, 1000));
	for (uint32_t i = 0; i < t.nr; i++) {
		x = x * 1664525 + 1013904223;
		heat_at_mut(&t, i)->heat = (float)(x >> 26) / 4; /* 64 distinct values */
	}
	check_top_against_selection(&t);
	check_top_ranges(&t);
	heat_table_destroy(&t);

	/* Pages 2, 5 and the last (in part) in use; in page 5 only cold extents. */
	CHECK_OK(heat_table_init(&t, 8 * HEAT_PAGE + 5));
	for (uint32_t i = 2 * HEAT_PAGE + 3; i < 3 * HEAT_PAGE; i += 5) {
		x = x * 1664525 + 1013904223;
		CHECK_OK(heat_set(&t, i, (double)(x >> 28)));
	}
	CHECK_OK(heat_set_moved(&t, 5 * HEAT_PAGE + 9, 1));
	CHECK_OK(heat_set(&t, 8 * HEAT_PAGE + 4, 1000));
	CHECK_UINT(t.nr_pages_used, 3);
	check_top_against_selection(&t);
	check_top_ranges(&t);
	heat_table_destroy(&t);
}

/*
 * Memory follows use: a page for each HEAT_PAGE extents where something
 * happened, none for the rest, and sums and scans that skip them agree
 * with the extents one by one.
 */
static void test_pages(void)
{
	enum { NR = 1u << 20 };
	struct statsparse_area *a = calloc(NR, sizeof(*a)), zone = reads(7, 0, KIB_SECTORS(28));
	struct heat_params p;
	struct heat_table t;
	double sum = 0;

	CHECK(a != NULL);
	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, NR));
	CHECK_UINT(t.nr_pages_used, 0);
	/* The directory and chunk flags only: 8 bytes per PAGEDIR_LEAF pages, a byte a chunk. */
	CHECK_UINT(heat_table_bytes(&t), NR / HEAT_PAGE / PAGEDIR_LEAF * 8 + NR / HEAT_CHUNK);
	CHECK_UINT(heat_next_used(&t, 0, NR), NR);
	a[7] = reads(3, 0, KIB_SECTORS(12));
	a[NR / 2] = writes(1, 0, KIB_SECTORS(4));
	a[NR - 2] = reads(1, 0, KIB_SECTORS(4));
	a[NR - 1] = reads(2, 0, KIB_SECTORS(8));
	CHECK_OK(heat_apply(&t, &p, a, NR, T0));
	CHECK_UINT(t.nr_pages_used, 3);
	/* Three pages, each in a leaf of the directory of its own. */
	CHECK_UINT(heat_table_bytes(&t), NR / HEAT_PAGE / PAGEDIR_LEAF * 8 + NR / HEAT_CHUNK +
						 3 * PAGEDIR_LEAF * 8 +
						 3 * HEAT_PAGE * sizeof(struct heat_extent));
	CHECK_UINT(heat_next_used(&t, 0, NR), 0);
	CHECK_UINT(heat_next_used(&t, 9, NR), 9);
	CHECK_UINT(heat_next_used(&t, HEAT_PAGE, NR), NR / 2);
	CHECK_UINT(heat_next_used(&t, NR / 2 + 1, NR), NR / 2 + 1);
	CHECK_UINT(heat_next_used(&t, NR / 2 + HEAT_PAGE, NR), NR - HEAT_PAGE);
	CHECK_UINT(heat_next_used(&t, NR, NR), NR);
	/* Bounded: no page in [HEAT_PAGE, NR / 2) is in use. */
	CHECK_UINT(heat_next_used(&t, HEAT_PAGE, NR / 2), NR / 2);
	CHECK_UINT(heat_next_used(&t, HEAT_PAGE, 2 * HEAT_PAGE + 1), 2 * HEAT_PAGE + 1);
	CHECK_UINT(heat_next_used(&t, NR / 2 - 1, NR / 2 + 1), NR / 2);
	CHECK_UINT(heat_next_used(&t, 5, 3), 3);
	CHECK_UINT(heat_at(&t, NR / 2)->writes, 1);
	CHECK_UINT(heat_at(&t, NR - 1)->reads, 2);
	CHECK_UINT(heat_at(&t, 100000)->reads, 0);

	/* Idle samples, no heat and no move take no page. */
	memset(a, 0, NR * sizeof(*a));
	CHECK_OK(heat_apply(&t, &p, a, NR, T0 + NS_PER_S));
	CHECK_OK(heat_set(&t, 100000, 0));
	CHECK_OK(heat_set_moved(&t, 100000, 0));
	CHECK_UINT(t.nr_pages_used, 3);
	CHECK_OK(heat_set_moved(&t, 100000, 1700000000u));
	CHECK_UINT(t.nr_pages_used, 4);
	/* A coarse area gives every extent a part: every page it spans. */
	CHECK_OK(heat_apply_shared(&t, &p, &zone, 10 * HEAT_PAGE - 1, HEAT_PAGE + 2, NULL));
	CHECK_UINT(t.nr_pages_used, 7);
	CHECK(heat_value(&t, 10 * HEAT_PAGE - 1) > 0 && heat_value(&t, 11 * HEAT_PAGE) > 0);

	for (uint32_t i = 5; i < NR - 5; i++)
		sum += heat_value(&t, i);
	CHECK_NEAR(heat_sum(&t, 5, NR - 10), sum, sum * 1e-12);
	CHECK_NEAR(heat_sum(&t, 11 * HEAT_PAGE + 1, HEAT_PAGE), 0, 0);

	/* A page kept in part: what was cut off is cold when the table grows back. */
	CHECK_OK(heat_table_resize(&t, NR - 1));
	CHECK_UINT(t.nr_pages_used, 7);
	CHECK_OK(heat_table_resize(&t, NR));
	CHECK_UINT(heat_at(&t, NR - 2)->reads, 1);
	CHECK_UINT(heat_at(&t, NR - 1)->reads, 0);
	CHECK(heat_value(&t, NR - 1) == 0);
	/* Pages past the end are freed. */
	CHECK_OK(heat_table_resize(&t, HEAT_PAGE));
	CHECK_UINT(t.nr_pages_used, 1);
	CHECK_OK(heat_table_resize(&t, NR));
	CHECK_UINT(heat_at(&t, NR / 2)->writes, 0);
	CHECK_UINT(heat_at(&t, 7)->reads, 3);
	heat_table_destroy(&t);
	free(a);
}

static void test_table(void)
{
	struct heat_table t;
	struct heat_params p;
	struct statsparse_area a[3] = { reads(1, 0, 8), reads(2, 0, 16), reads(3, 0, 24) };

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, 3));
	CHECK_UINT(t.nr, 3);
	CHECK_OK(heat_apply(&t, &p, a, 3, T0));
	heat_at_mut(&t, 2)->moved_at = 1;
	/* Growing keeps every extent and adds cold ones. */
	CHECK_OK(heat_table_resize(&t, 1000));
	CHECK_UINT(t.nr, 1000);
	CHECK_UINT(t.last_sample_ns, T0);
	for (uint32_t i = 0; i < 3; i++) {
		CHECK_NEAR(heat_value(&t, i), i + 1, 0);
		CHECK_UINT(heat_at(&t, i)->reads, i + 1);
	}
	CHECK_UINT(heat_at(&t, 2)->moved_at, 1);
	for (uint32_t i = 3; i < 1000; i++) {
		CHECK_NEAR(heat_value(&t, i), 0, 0);
		CHECK_UINT(heat_at(&t, i)->reads, 0);
		CHECK_UINT(heat_at(&t, i)->writes, 0);
		CHECK_UINT(heat_at(&t, i)->moved_at, 0);
	}
	/* Shrinking keeps the head; growing again brings back cold extents, not old values. */
	CHECK_OK(heat_table_resize(&t, 2));
	CHECK_NEAR(heat_value(&t, 1), 2, 0);
	CHECK_OK(heat_table_resize(&t, 3));
	CHECK_NEAR(heat_value(&t, 0), 1, 0);
	CHECK_NEAR(heat_value(&t, 2), 0, 0);
	CHECK_UINT(heat_at(&t, 2)->moved_at, 0);
	/* A sample must match the new size. */
	CHECK_INT(heat_apply(&t, &p, a, 2, T0 + 1), -EINVAL);
	CHECK_OK(heat_apply(&t, &p, a, 3, T0 + 1));
	CHECK_OK(heat_table_resize(&t, 0));
	CHECK_UINT(t.nr, 0);
	CHECK(t.pages.leaf == NULL);
	CHECK_UINT(t.nr_pages_used, 0);
	CHECK_OK(heat_apply(&t, &p, NULL, 0, T0 + 2));
	heat_table_destroy(&t);
	heat_table_destroy(&t);
	heat_table_destroy(NULL);
	CHECK_INT(heat_table_init(NULL, 1), -EINVAL);
	CHECK_INT(heat_table_resize(NULL, 1), -EINVAL);
}

/* A sample applied in chunks equals the same sample applied at once. */
static void test_chunked_sample(void)
{
	struct heat_params p;
	struct heat_table whole, parts;
	struct statsparse_area a[10] = { 0 };
	const uint64_t t0 = 1000000000ull, t1 = t0 + 3600ull * 1000000000ull;

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&whole, 10));
	CHECK_OK(heat_table_init(&parts, 10));
	for (uint32_t i = 0; i < 10; i++) {
		a[i].reads = i * 3;
		a[i].writes = i % 4;
		a[i].sectors_read = a[i].reads * 8;
		a[i].sectors_written = a[i].writes * 256;
	}
	CHECK_OK(heat_apply(&whole, &p, a, 10, t0));
	CHECK_OK(heat_apply(&parts, &p, a, 10, t0));
	CHECK_OK(heat_apply(&whole, &p, a, 10, t1));
	CHECK_OK(heat_sample_begin(&parts, &p, t1));
	/* An hour of a day's half-life, in the scale: no extent was touched for it. */
	CHECK(parts.scale > 1 / 0.98 && parts.scale < 1 / 0.97);
	CHECK_UINT(parts.last_sample_ns, t1);
	CHECK_OK(heat_apply_range(&parts, &p, a, 0, 4));
	CHECK_OK(heat_apply_range(&parts, &p, a + 4, 4, 6));
	CHECK_INT(heat_apply_range(&parts, &p, a, 8, 3), -EINVAL);
	for (uint32_t i = 0; i < 10; i++) {
		CHECK(heat_value(&parts, i) == heat_value(&whole, i));
		CHECK_UINT(heat_at(&parts, i)->reads, heat_at(&whole, i)->reads);
		CHECK_UINT(heat_at(&parts, i)->writes, heat_at(&whole, i)->writes);
	}
	CHECK_INT(heat_sample_begin(&parts, &p, t0), -EINVAL); /* before the last sample */
	heat_table_destroy(&whole);
	heat_table_destroy(&parts);
}

static void test_sum(void)
{
	static const float heats[] = { 1.5f, 2, 0, 4, 0.25f };
	struct heat_table t;

	CHECK_OK(heat_table_init(&t, 0));
	set_heats(&t, heats, 5);
	CHECK_NEAR(heat_sum(&t, 0, 5), 7.75, 0);
	CHECK_NEAR(heat_sum(&t, 1, 3), 6, 0);
	CHECK_NEAR(heat_sum(&t, 4, 1), 0.25, 0);
	CHECK_NEAR(heat_sum(&t, 5, 0), 0, 0);
	/* Out of the table: nothing, not a partial sum. */
	CHECK_NEAR(heat_sum(&t, 3, 3), 0, 0);
	CHECK_NEAR(heat_sum(&t, 6, 0), 0, 0);
	CHECK_NEAR(heat_sum(&t, 1, UINT32_MAX), 0, 0);
	CHECK_NEAR(heat_sum(NULL, 0, 1), 0, 0);
	heat_table_destroy(&t);
}

static void test_shared_errors(void)
{
	struct heat_params p;
	struct heat_table t;
	struct statsparse_area a = reads(8, 0, KIB_SECTORS(4) * 8);

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, 4));
	heat_at_mut(&t, 1)->heat = 3;
	CHECK_INT(heat_apply_shared(NULL, &p, &a, 0, 4, NULL), -EINVAL);
	CHECK_INT(heat_apply_shared(&t, &p, NULL, 0, 4, NULL), -EINVAL);
	CHECK_INT(heat_apply_shared(&t, &p, &a, 0, 0, NULL), -EINVAL);
	CHECK_INT(heat_apply_shared(&t, &p, &a, 1, 4, NULL), -EINVAL);
	CHECK_INT(heat_apply_shared(&t, &p, &a, 5, 1, NULL), -EINVAL);
	CHECK_INT(heat_apply_shared(&t, &p, &a, 1, UINT32_MAX, NULL), -EINVAL);
	for (uint32_t i = 0; i < 4; i++) {
		CHECK_NEAR(heat_value(&t, i), i == 1 ? 3 : 0, 0);
		CHECK_UINT(heat_at(&t, i)->reads, 0);
	}
	heat_table_destroy(&t);
}

/* A coarse area over extents that have no heat yet: even shares, the I/Os split to the unit. */
static void test_shared_cold(void)
{
	static const uint64_t want_reads[] = { 3, 2, 3, 2 };
	struct heat_params p;
	struct heat_table t;
	struct statsparse_area a = reads(10, 0, KIB_SECTORS(4) * 10), idle = { 0 };
	double share[4];

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, 6));
	CHECK_OK(heat_apply_shared(&t, &p, &a, 1, 4, share));
	for (uint32_t i = 0; i < 4; i++) {
		CHECK_NEAR(share[i], 0.25, 0);
		CHECK_NEAR(heat_value(&t, 1 + i), 2.5, 0);
		CHECK_UINT(heat_at(&t, 1 + i)->reads, want_reads[i]);
		CHECK_UINT(heat_at(&t, 1 + i)->writes, 0);
	}
	/* Nothing outside the range. */
	CHECK_NEAR(heat_value(&t, 0), 0, 0);
	CHECK_NEAR(heat_value(&t, 5), 0, 0);
	CHECK_UINT(heat_at(&t, 0)->reads + heat_at(&t, 5)->reads, 0);
	/* An idle area shares nothing and touches nothing: the decay is the table's. */
	decay_table(&t, 0.5);
	for (uint32_t i = 0; i < 4; i++)
		share[i] = -1;
	CHECK_OK(heat_apply_shared(&t, &p, &idle, 1, 4, share));
	for (uint32_t i = 0; i < 4; i++) {
		CHECK_NEAR(share[i], -1, 0);
		CHECK_NEAR(heat_value(&t, 1 + i), 1.25, 0);
		CHECK_UINT(heat_at(&t, 1 + i)->reads, want_reads[i]);
	}
	heat_table_destroy(&t);
}

/* Half by the heat each extent has, half evenly: the one with history gets more. */
static void test_shared_history(void)
{
	static const float before[] = { 6, 2, 0, 0 };
	static const double want_share[] = { 0.5, 0.25, 0.125, 0.125 };
	static const uint64_t want_reads[] = { 8, 4, 2, 2 };
	static const float want_heat[] = { 3 + 8, 1 + 4, 2, 2 };
	struct heat_params p;
	struct heat_table t;
	struct statsparse_area a = reads(16, 0, KIB_SECTORS(4) * 16);
	double share[4];

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, 0));
	set_heats(&t, before, 4);
	/* The shares come from the heat before this sample's decay (the same ratios). */
	decay_table(&t, 0.5);
	CHECK_OK(heat_apply_shared(&t, &p, &a, 0, 4, share));
	for (uint32_t i = 0; i < 4; i++) {
		CHECK_NEAR(share[i], want_share[i], 0);
		CHECK_NEAR(heat_value(&t, i), want_heat[i], 0);
		CHECK_UINT(heat_at(&t, i)->reads, want_reads[i]);
	}
	CHECK(heat_value(&t, 2) > 0); /* the even half lets a cold extent rise */
	heat_table_destroy(&t);
}

/* For any heat and counts: the I/Os add up exactly, the shares to 1, the heat to the score. */
static void test_shared_conservation(void)
{
	enum { NR = 64, TRIALS = 2000 };
	struct heat_params p;
	struct heat_table t;
	double share[NR];
	uint32_t x = 12345;

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, NR));
	for (int trial = 0; trial < TRIALS; trial++) {
		uint32_t first, nr, kind;
		uint64_t sum_reads = 0, sum_writes = 0, reads_before = 0, writes_before = 0;
		double before, after, sum_share = 0, decay, score;
		struct statsparse_area a = { 0 };

		x = x * 1664525 + 1013904223;
		nr = 1 + (x >> 8) % NR;
		first = (x >> 20) % (NR - nr + 1);
		kind = x >> 29;
		for (uint32_t i = 0; i < NR; i++) {
			x = x * 1664525 + 1013904223;
			/* Some trials all cold, some with a few hot extents, some with all. */
			heat_at_mut(&t, i)->heat = kind < 2 || (kind < 5 && (x >> 28)) ? 0 : (float)(x >> 12) / 64;
		}
		x = x * 1664525 + 1013904223;
		a.reads = kind == 7 ? UINT32_MAX : x % 1000 == 0 ? 0 : (x >> 3) % 100000;
		x = x * 1664525 + 1013904223;
		a.writes = (x >> 5) % (kind == 1 ? 3 : 5000);
		a.writes_merged = a.writes / 2;
		a.sectors_read = (uint64_t)a.reads * 8;
		a.sectors_written = (uint64_t)a.writes * 512;
		decay = kind == 3 ? 1 : 0.999;
		for (uint32_t i = 0; i < nr; i++) {
			reads_before += heat_at(&t, first + i)->reads;
			writes_before += heat_at(&t, first + i)->writes;
		}
		before = heat_sum(&t, first, nr);
		score = heat_score(&p, &a);
		decay_table(&t, decay);
		before *= decay;
		CHECK_OK(heat_apply_shared(&t, &p, &a, first, nr, share));
		after = heat_sum(&t, first, nr);
		for (uint32_t i = 0; i < nr; i++) {
			sum_reads += heat_at(&t, first + i)->reads;
			sum_writes += heat_at(&t, first + i)->writes;
			sum_share += share[i];
			CHECK(share[i] > 0);
		}
		CHECK_UINT(sum_reads - reads_before, a.reads);
		CHECK_UINT(sum_writes - writes_before, a.writes);
		CHECK_NEAR(sum_share, 1, 1e-12);
		/* float heat: about 24 bits of the total. */
		CHECK_NEAR(after, before + score, (before + score) * 1e-6);
	}
	heat_table_destroy(&t);
}

/* A coarse area over one extent is that extent's own area. */
static void test_shared_one(void)
{
	static const struct statsparse_area areas[] = {
		{ 0 },
		{ .reads = 7, .sectors_read = KIB_SECTORS(4) * 7 },
		{ .reads = 40, .reads_merged = 39, .sectors_read = 40 * 2048, .writes = 3,
		  .sectors_written = 3 * 512 },
		{ .writes = 4000000000u, .sectors_written = 8 * 4000000000ull },
	};
	static const float heats[] = { 0, 1, 1234.5f, 3e-12f };
	struct heat_params p;
	struct heat_table shared, own;
	double share;

	heat_params_default(&p);
	CHECK_OK(heat_table_init(&shared, 1));
	CHECK_OK(heat_table_init(&own, 1));
	for (size_t h = 0; h < sizeof(heats) / sizeof(heats[0]); h++)
		for (size_t k = 0; k < sizeof(areas) / sizeof(areas[0]); k++) {
			*heat_at_mut(&own, 0) = (struct heat_extent){ .heat = heats[h], .reads = 5 };
			*heat_at_mut(&shared, 0) = *heat_at(&own, 0);
			decay_table(&shared, 0.75);
			decay_table(&own, 0.75);
			share = 1; /* not filled for an idle area */
			CHECK_OK(heat_apply_shared(&shared, &p, &areas[k], 0, 1, &share));
			CHECK_OK(heat_apply_range(&own, &p, &areas[k], 0, 1));
			CHECK_NEAR(share, 1, 0);
			CHECK(heat_value(&shared, 0) == heat_value(&own, 0));
			CHECK_UINT(heat_at(&shared, 0)->reads, heat_at(&own, 0)->reads);
			CHECK_UINT(heat_at(&shared, 0)->writes, heat_at(&own, 0)->writes);
		}
	heat_table_destroy(&shared);
	heat_table_destroy(&own);
}

/*
 * A sample costs what had I/O: decay touches no extent, an idle area
 * leaves its extents as they are, and only chunks with I/O or a move
 * become dirty, so a flush stores only those.
 */
static void test_idle_untouched(void)
{
	const uint32_t nr = 3 * HEAT_CHUNK + 10;
	struct heat_params p;
	struct heat_table t;
	struct statsparse_area *a = calloc(nr, sizeof(*a));
	float stored;

	CHECK(a != NULL);
	heat_params_default(&p);
	CHECK_OK(heat_table_init(&t, nr));
	CHECK_UINT(heat_nr_chunks(&t), 4);
	for (uint32_t k = 0; k < 4; k++)
		CHECK(!heat_chunk_dirty(&t, k));
	a[5] = reads(100, 0, KIB_SECTORS(4) * 100);
	CHECK_OK(heat_apply(&t, &p, a, nr, T0));
	CHECK(heat_chunk_dirty(&t, 0));
	CHECK(!heat_chunk_dirty(&t, 1) && !heat_chunk_dirty(&t, 2) && !heat_chunk_dirty(&t, 3));
	heat_chunk_clean(&t, 0);
	stored = heat_at(&t, 5)->heat;
	a[5] = (struct statsparse_area){ 0 };
	CHECK_OK(heat_apply(&t, &p, a, nr, T0 + 86400 * NS_PER_S));
	CHECK(heat_at(&t, 5)->heat == stored); /* untouched */
	CHECK_NEAR(heat_value(&t, 5), 50, 50e-6);
	for (uint32_t k = 0; k < 4; k++)
		CHECK(!heat_chunk_dirty(&t, k));
	heat_set_moved(&t, 3 * HEAT_CHUNK + 9, 1700000000u);
	CHECK(heat_chunk_dirty(&t, 3));
	CHECK_UINT(heat_at(&t, 3 * HEAT_CHUNK + 9)->moved_at, 1700000000u);
	heat_set(&t, HEAT_CHUNK, 7);
	CHECK(heat_chunk_dirty(&t, 1));
	CHECK_NEAR(heat_value(&t, HEAT_CHUNK), 7, 7e-6);
	CHECK(!heat_chunk_dirty(&t, 2));
	/* A shared area dirties its range; an idle one does not. */
	heat_chunk_clean(&t, 1);
	CHECK_OK(heat_apply_shared(&t, &p, &a[0], HEAT_CHUNK, HEAT_CHUNK, NULL));
	CHECK(!heat_chunk_dirty(&t, 1));
	a[0] = reads(3, 0, KIB_SECTORS(4) * 3);
	CHECK_OK(heat_apply_shared(&t, &p, &a[0], 2 * HEAT_CHUNK, 10, NULL));
	CHECK(heat_chunk_dirty(&t, 2) && !heat_chunk_dirty(&t, 1));
	/* Growing dirties the chunk that grew and the new ones (a store may hold old rows there). */
	for (uint32_t k = 0; k < 4; k++)
		heat_chunk_clean(&t, k);
	CHECK_OK(heat_table_resize(&t, 5 * HEAT_CHUNK));
	CHECK(!heat_chunk_dirty(&t, 2) && heat_chunk_dirty(&t, 3) && heat_chunk_dirty(&t, 4));
	CHECK(!heat_chunk_dirty(&t, 5)); /* past the table */
	heat_table_destroy(&t);
	free(a);
}

/*
 * Forty half-lives of samples bring the table back to scale 1 in one pass:
 * the heat is what it was, what decayed below HEAT_COLD is exactly 0.
 */
static void test_rescale(void)
{
	struct heat_params p;
	struct heat_table t;
	struct statsparse_area a[2] = { reads(1000, 0, KIB_SECTORS(4) * 1000), reads(1, 0, 8) };
	struct statsparse_area idle[2] = { { 0 } };
	uint64_t now = T0;

	heat_params_default(&p);
	p.half_life_s = 3600;
	CHECK_OK(heat_table_init(&t, 2));
	CHECK_OK(heat_apply(&t, &p, a, 2, now));
	for (int h = 1; h <= 45; h++) {
		now += 3600 * NS_PER_S;
		CHECK_OK(heat_apply(&t, &p, h == 39 ? a : idle, 2, now));
		CHECK(t.scale >= 1 && t.scale <= 1099511627776.0 * 2);
		CHECK(heat_at(&t, 0)->heat < 3e38f);
	}
	/* The pass at hour 40 changed no heat: six half-lives since the sample of hour 39... */
	CHECK_NEAR(heat_value(&t, 0), 1000 * (1 + 1.0 / 549755813888.0) / 64, 1000 / 64 * 1e-6);
	CHECK_NEAR(heat_value(&t, 1), 1.0 / 64, 1e-6 / 64);
	/* ...and 80 more take both below HEAT_COLD: exactly 0 after the pass at hour 120. */
	for (int h = 0; h < 80; h++) {
		now += 3600 * NS_PER_S;
		CHECK_OK(heat_apply(&t, &p, idle, 2, now));
	}
	CHECK_NEAR(heat_value(&t, 0), 0, 0);
	CHECK_NEAR(heat_value(&t, 1), 0, 0);
	heat_table_destroy(&t);
}

int main(void)
{
	test_chunked_sample();
	test_params();
	test_decay_factor();
	test_decay_apply();
	test_apply_errors();
	test_totals_and_moved_at();
	test_weights();
	test_large_io();
	test_merged();
	test_scan_any_size();
	test_scan_vs_random();
	test_top();
	test_top_random();
	test_pages();
	test_table();
	test_sum();
	test_shared_errors();
	test_shared_cold();
	test_shared_history();
	test_shared_conservation();
	test_shared_one();
	test_idle_untouched();
	test_rescale();
	return 0;
}
