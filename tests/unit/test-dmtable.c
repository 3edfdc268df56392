/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "dmtable.h"
#include "extmap.h"
#include "piecemap.h"

/* 4 MiB extents, as a pool would typically use. */
#define EXT 8192u

static const struct dmtable_dev devs[] = {
	{ .major = 253, .minor = 4, .data_start = 2048 },
	{ .major = 8, .minor = 16, .data_start = 8192 },
	{ .major = 259, .minor = 1048575, .data_start = 0 },
};

static void check_target(const struct dmtable *t, size_t i, uint64_t start, uint64_t len,
			 uint32_t major, uint32_t minor, uint64_t offset)
{
	CHECK(i < t->nr);
	CHECK_UINT(t->t[i].start, start);
	CHECK_UINT(t->t[i].len, len);
	CHECK_UINT(t->t[i].major, major);
	CHECK_UINT(t->t[i].minor, minor);
	CHECK_UINT(t->t[i].offset, offset);
}

static void check_same_table(const struct dmtable *a, const struct dmtable *b)
{
	CHECK_UINT(a->nr, b->nr);
	for (size_t i = 0; i < a->nr; i++) {
		const struct dmtable_target *x = &a->t[i];

		check_target(b, i, x->start, x->len, x->major, x->minor, x->offset);
		CHECK_UINT(b->t[i].error, x->error);
	}
}

/* build -> format -> parse must reproduce the built table exactly. */
static void check_round_trip(const struct dmtable *t)
{
	struct dmtable back;
	char *text;

	CHECK_OK(dmtable_format(t, &text));
	CHECK_OK(dmtable_parse(&back, text));
	check_same_table(t, &back);
	CHECK_UINT(dmtable_size(&back), dmtable_size(t));
	free(text);
	dmtable_destroy(&back);
}

static void build(struct dmtable *t, const struct extmap *m)
{
	CHECK_OK(dmtable_build(t, m, devs, EXT));
	CHECK_UINT(dmtable_size(t), (uint64_t)m->nr_logical * EXT);
	check_round_trip(t);
}

/* nr_logical unmapped extents over nr_devs devices of nr_pe extents each. */
static void init_map(struct extmap *m, uint32_t nr_logical, unsigned nr_devs, uint32_t nr_pe)
{
	CHECK_OK(extmap_init(m, nr_logical));
	for (unsigned i = 0; i < nr_devs; i++)
		CHECK_OK(extmap_add_dev(m, nr_pe, NULL));
}

static void test_single_run(void)
{
	struct dmtable t;
	struct extmap m;
	char buf[32];

	init_map(&m, 100, 1, 100);
	CHECK_INT(extmap_fill_linear(&m, 0), 100);
	build(&t, &m);
	CHECK_UINT(t.nr, 1);
	check_target(&t, 0, 0, 100 * EXT, 253, 4, 2048);
	CHECK_OK(dmtable_params(&t.t[0], buf, sizeof(buf)));
	CHECK_STR(buf, "253:4 2048");
	dmtable_destroy(&t);
	dmtable_destroy(&t);
	extmap_destroy(&m);
}

static void test_runs_split_and_merge(void)
{
	struct dmtable t;
	struct extmap m;
	uint32_t pe;

	init_map(&m, 10, 3, 20);

	/* Contiguous on dev 0 for le 0-3, a hole in pe at le 4, then dev 1. */
	for (uint32_t le = 0; le < 4; le++)
		CHECK_OK(extmap_map(&m, le, 0, le));
	CHECK_OK(extmap_map(&m, 4, 0, 5));
	CHECK_OK(extmap_map(&m, 5, 0, 6));
	CHECK_OK(extmap_map(&m, 6, 1, 0));
	CHECK_OK(extmap_map(&m, 7, 1, 1));
	/* Backwards on one device is not contiguous. */
	CHECK_OK(extmap_map(&m, 8, 2, 9));
	CHECK_OK(extmap_map(&m, 9, 2, 8));
	build(&t, &m);
	CHECK_UINT(t.nr, 5);
	check_target(&t, 0, 0, 4 * EXT, 253, 4, 2048);
	check_target(&t, 1, 4 * EXT, 2 * EXT, 253, 4, 2048 + 5 * EXT);
	check_target(&t, 2, 6 * EXT, 2 * EXT, 8, 16, 8192);
	check_target(&t, 3, 8 * EXT, EXT, 259, 1048575, 9 * EXT);
	check_target(&t, 4, 9 * EXT, EXT, 259, 1048575, 8 * EXT);
	dmtable_destroy(&t);

	/* Moving le 2 out splits the first run in three... */
	CHECK_OK(extmap_alloc(&m, 1, &pe));
	CHECK_OK(extmap_release(&m, 1, pe));
	CHECK_OK(extmap_remap(&m, 2, 1, pe));
	build(&t, &m);
	CHECK_UINT(t.nr, 7);
	check_target(&t, 0, 0, 2 * EXT, 253, 4, 2048);
	check_target(&t, 1, 2 * EXT, EXT, 8, 16, 8192 + 2 * EXT);
	check_target(&t, 2, 3 * EXT, EXT, 253, 4, 2048 + 3 * EXT);
	dmtable_destroy(&t);

	/* ...and moving it back merges them again. */
	CHECK_OK(extmap_remap(&m, 2, 0, 2));
	build(&t, &m);
	CHECK_UINT(t.nr, 5);
	check_target(&t, 0, 0, 4 * EXT, 253, 4, 2048);
	dmtable_destroy(&t);

	/* Closing the pe hole joins le 4-5 onto the first run. */
	CHECK_OK(extmap_remap(&m, 4, 0, 4));
	CHECK_OK(extmap_remap(&m, 5, 0, 5));
	build(&t, &m);
	CHECK_UINT(t.nr, 4);
	check_target(&t, 0, 0, 6 * EXT, 253, 4, 2048);
	dmtable_destroy(&t);
	extmap_destroy(&m);
}

static void test_build_errors(void)
{
	struct dmtable t = { .nr = 99 };
	struct extmap m;

	init_map(&m, 3, 1, 3);
	CHECK_OK(extmap_map(&m, 0, 0, 0));
	CHECK_OK(extmap_map(&m, 2, 0, 2));
	/* A live volume has every extent mapped. */
	CHECK_INT(dmtable_build(&t, &m, devs, EXT), -EINVAL);
	CHECK_UINT(t.nr, 0);
	CHECK(t.t == NULL);
	CHECK_OK(extmap_map(&m, 1, 0, 1));
	CHECK_INT(dmtable_build(&t, &m, devs, 0), -EINVAL);
	CHECK_INT(dmtable_build(&t, &m, NULL, EXT), -EINVAL);
	CHECK_INT(dmtable_build(&t, NULL, devs, EXT), -EINVAL);
	CHECK_INT(dmtable_build(NULL, &m, devs, EXT), -EINVAL);
	CHECK_INT(dmtable_build(&t, &m, devs, UINT64_MAX / 2), -ERANGE);
	/* The volume fits 64 bits but the device offsets do not. */
	CHECK_INT(dmtable_build(&t, &m, devs, UINT64_MAX / 3 - 100), -ERANGE);
	CHECK_OK(dmtable_build(&t, &m, devs, EXT));
	CHECK_UINT(t.nr, 1);
	dmtable_destroy(&t);

	/* No extents: the empty table, which formats to "". */
	for (uint32_t le = 0; le < 3; le++)
		CHECK_OK(extmap_unmap(&m, le));
	CHECK_OK(extmap_resize_logical(&m, 0));
	CHECK_OK(dmtable_build(&t, &m, devs, EXT));
	CHECK_UINT(t.nr, 0);
	CHECK_UINT(dmtable_size(&t), 0);
	check_round_trip(&t);
	dmtable_destroy(&t);
	extmap_destroy(&m);
}

static void test_params(void)
{
	const struct dmtable_target tg = { .major = 253, .minor = 4, .offset = 2048 };
	const struct dmtable_target big = { .major = UINT32_MAX, .minor = UINT32_MAX, .offset = UINT64_MAX };
	char buf[64];

	CHECK_INT(dmtable_params(&tg, buf, 10), -ENOSPC);
	CHECK_OK(dmtable_params(&tg, buf, 11));
	CHECK_STR(buf, "253:4 2048");
	CHECK_INT(dmtable_params(&tg, NULL, 0), -ENOSPC);
	CHECK_INT(dmtable_params(NULL, buf, sizeof(buf)), -EINVAL);
	CHECK_OK(dmtable_params(&big, buf, sizeof(buf)));
	CHECK_STR(buf, "4294967295:4294967295 18446744073709551615");
}

static void test_format(void)
{
	const struct dmtable_target targets[] = {
		{ 0, 16384, 253, 4, 2048 },
		{ 16384, 8192, 8, 16, 8192 },
	};
	const struct dmtable t = { .nr = 2, .cap = 2, .t = (struct dmtable_target *)targets };
	const struct dmtable empty = { 0 };
	char dummy = 0;
	char *text;

	CHECK_OK(dmtable_format(&t, &text));
	CHECK_STR(text, "0 16384 linear 253:4 2048\n16384 8192 linear 8:16 8192\n");
	free(text);
	CHECK_OK(dmtable_format(&empty, &text));
	CHECK_STR(text, "");
	free(text);
	text = &dummy;
	CHECK_INT(dmtable_format(NULL, &text), -EINVAL);
	CHECK(text == NULL);
	CHECK_INT(dmtable_format(&t, NULL), -EINVAL);
	CHECK_UINT(dmtable_size(&t), 24576);
	CHECK_UINT(dmtable_size(NULL), 0);
}

static void test_parse_good(void)
{
	struct dmtable t;

	/* As dmsetup prints it: with and without the final newline. */
	CHECK_OK(dmtable_parse(&t, "0 16384 linear 253:4 2048\n16384 8 linear 8:16 0\n"));
	CHECK_UINT(t.nr, 2);
	check_target(&t, 0, 0, 16384, 253, 4, 2048);
	check_target(&t, 1, 16384, 8, 8, 16, 0);
	CHECK_UINT(dmtable_size(&t), 16392);
	dmtable_destroy(&t);

	CHECK_OK(dmtable_parse(&t, "0 8 linear 8:0 0"));
	CHECK_UINT(t.nr, 1);
	dmtable_destroy(&t);

	/* Parsing reports what the kernel has: adjacent runs stay separate. */
	CHECK_OK(dmtable_parse(&t, "0 8 linear 8:0 0\n8 8 linear 8:0 8\n"));
	CHECK_UINT(t.nr, 2);
	dmtable_destroy(&t);

	CHECK_OK(dmtable_parse(&t, "0  8\tlinear 8:0 0 \n"));
	check_target(&t, 0, 0, 8, 8, 0, 0);
	dmtable_destroy(&t);

	CHECK_OK(dmtable_parse(&t, ""));
	CHECK_UINT(t.nr, 0);
	dmtable_destroy(&t);

	CHECK_OK(dmtable_parse(&t, "0 18446744073709551615 linear 4294967295:4294967295 0\n"));
	check_target(&t, 0, 0, UINT64_MAX, UINT32_MAX, UINT32_MAX, 0);
	dmtable_destroy(&t);
}

/* A degraded activation: the missing device's extents become error targets. */
static void test_missing_device(void)
{
	struct dmtable_dev gone[3] = { devs[0], devs[1], devs[2] };
	struct dmtable_move move = { .le = 0, .dev = 1, .pe = 9 };
	struct dmtable t;
	struct extmap m;
	char buf[32], *text;

	gone[1].missing = true;
	init_map(&m, 6, 2, 10);
	CHECK_OK(extmap_map(&m, 0, 0, 0));
	CHECK_OK(extmap_map(&m, 1, 1, 3));
	CHECK_OK(extmap_map(&m, 2, 1, 7)); /* not next to pe 3, but all errors are one */
	CHECK_OK(extmap_map(&m, 3, 0, 1));
	CHECK_OK(extmap_map(&m, 4, 1, 0));
	CHECK_OK(extmap_map(&m, 5, 0, 2));
	CHECK_OK(dmtable_build(&t, &m, gone, EXT));
	CHECK_UINT(t.nr, 5);
	check_target(&t, 0, 0, EXT, 253, 4, 2048);
	CHECK(!t.t[0].error);
	CHECK(t.t[1].error);
	CHECK_UINT(t.t[1].start, EXT);
	CHECK_UINT(t.t[1].len, 2 * EXT);
	check_target(&t, 2, 3 * EXT, EXT, 253, 4, 2048 + EXT);
	CHECK(t.t[3].error);
	/* A linear run does not merge across an error target. */
	check_target(&t, 4, 5 * EXT, EXT, 253, 4, 2048 + 2 * EXT);
	CHECK_STR(dmtable_type(&t.t[1]), "error");
	CHECK_OK(dmtable_params(&t.t[1], buf, sizeof(buf)));
	CHECK_STR(buf, "");
	CHECK_OK(dmtable_format(&t, &text));
	CHECK_STR(text, "0 8192 linear 253:4 2048\n8192 16384 error\n24576 8192 linear 253:4 10240\n"
			"32768 8192 error\n40960 8192 linear 253:4 18432\n");
	free(text);
	check_round_trip(&t);
	dmtable_destroy(&t);

	/* No move from or to a missing device. */
	CHECK_INT(dmtable_build_moving(&t, &m, gone, EXT, &move, 1, 1024), -EINVAL);
	move = (struct dmtable_move){ .le = 1, .dev = 0, .pe = 9 };
	CHECK_INT(dmtable_build_moving(&t, &m, gone, EXT, &move, 1, 1024), -EINVAL);
	extmap_destroy(&m);
}

static void test_parse_bad(void)
{
	static const struct check_bad_input cases[] = {
		{ "\n", -EINVAL },
		{ "0 8 linear 8:0 0\n\n", -EINVAL },
		{ "0 8 linear 8:0 0\n\n8 8 linear 8:0 8\n", -EINVAL },
		{ " 0 8 linear 8:0 0", -EINVAL },
		{ "0 8 striped 2 128 8:0 0 8:16 0", -EINVAL },
		{ "0 8 errorx", -EINVAL },
		{ "0 8 error 8:0 0", -EINVAL },
		{ "0 8 linearx 8:0 0", -EINVAL },
		{ "0 8 Linear 8:0 0", -EINVAL },
		{ "0 8 linear 8:0", -EINVAL },
		{ "0 8 linear 8:0 ", -EINVAL },
		{ "0 8 linear 8 0", -EINVAL },
		{ "0 8 linear 8:0 0 extra", -EINVAL },
		{ "0 8 linear /dev/sda 0", -EINVAL },
		{ "0 8 linear 8:-1 0", -EINVAL },
		{ "0 -8 linear 8:0 0", -EINVAL },
		{ "0 +8 linear 8:0 0", -EINVAL },
		{ "0 0x8 linear 8:0 0", -EINVAL },
		{ "0 0 linear 8:0 0", -EINVAL },
		{ "8 8 linear 8:0 0", -EINVAL },
		{ "0 8 linear 8:0 0\n16 8 linear 8:0 0", -EINVAL },
		{ "0 8 linear 8:0 0\n4 8 linear 8:0 0", -EINVAL },
		{ "0 8 linear 8:0 0\n0 8 linear 8:0 0", -EINVAL },
		{ "0 8 linear 8:0 18446744073709551615", -EINVAL },
		{ "0 18446744073709551615 linear 8:0 0\n18446744073709551615 1 linear 8:0 0", -EINVAL },
		{ "0 8 linear 4294967296:0 0", -ERANGE },
		{ "0 8 linear 8:4294967296 0", -ERANGE },
		{ "0 18446744073709551616 linear 8:0 0", -ERANGE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dmtable t = { .nr = 99 };

		CHECK_INT(dmtable_parse(&t, cases[i].text), cases[i].err);
		CHECK_UINT(t.nr, 0);
		CHECK(t.t == NULL);
	}
	CHECK_INT(dmtable_parse(&(struct dmtable){ 0 }, NULL), -EINVAL);
	CHECK_INT(dmtable_parse(NULL, ""), -EINVAL);
}

/* A fragmented million-extent volume survives the round trip. */
static void test_large_round_trip(void)
{
	const uint32_t nr = 1000000;
	struct dmtable t;
	struct extmap m;

	/* The even-length runs need slightly more than half. */
	init_map(&m, nr, 2, nr / 2 + 1000);
	/* Runs of 1, 2, 3... alternating between the two devices. */
	for (uint32_t le = 0, run = 1, dev = 0, next[2] = { 0, 0 }; le < nr; run++, dev ^= 1)
		for (uint32_t i = 0; i < run && le < nr; i++, le++)
			CHECK_OK(extmap_map(&m, le, dev, next[dev]++));
	CHECK_OK(extmap_check(&m, NULL));
	build(&t, &m);
	CHECK_UINT(t.nr, 1414);
	for (size_t i = 1; i < t.nr; i++)
		CHECK(t.t[i].major != t.t[i - 1].major);
	dmtable_destroy(&t);
	extmap_destroy(&m);
}

/* Moving extents become mirrors from where they are to where they go. */
static void test_moving(void)
{
	const struct dmtable_move moves[] = { { 1, 1, 0 }, { 2, 1, 5 } };
	const struct dmtable_move unsorted[] = { { 2, 1, 5 }, { 1, 1, 0 } };
	const struct dmtable_move in_place[] = { { 1, 0, 1 } };
	const struct dmtable_move out_of_range[] = { { 1, 1, 999 } };
	struct extmap m;
	struct dmtable t;
	char params[160], *text;

	init_map(&m, 4, 2, 16);
	for (uint32_t le = 0; le < 4; le++)
		CHECK_OK(extmap_map(&m, le, 0, le));
	CHECK_OK(dmtable_build_moving(&t, &m, devs, EXT, moves, 2, 1024));
	CHECK_UINT(t.nr, 4);
	check_target(&t, 0, 0, EXT, 253, 4, 2048);
	CHECK_STR(dmtable_type(&t.t[0]), "linear");
	check_target(&t, 1, EXT, EXT, 253, 4, 2048 + EXT);
	CHECK_STR(dmtable_type(&t.t[1]), "mirror");
	CHECK_OK(dmtable_params(&t.t[1], params, sizeof(params)));
	CHECK_STR(params, "core 1 1024 2 253:4 10240 8:16 8192 1 handle_errors");
	CHECK_OK(dmtable_params(&t.t[2], params, sizeof(params)));
	CHECK_STR(params, "core 1 1024 2 253:4 18432 8:16 49152 1 handle_errors");
	check_target(&t, 3, 3 * EXT, EXT, 253, 4, 2048 + 3 * EXT);
	CHECK_OK(dmtable_format(&t, &text));
	CHECK_STR(text, "0 8192 linear 253:4 2048\n"
			"8192 8192 mirror core 1 1024 2 253:4 10240 8:16 8192 1 handle_errors\n"
			"16384 8192 mirror core 1 1024 2 253:4 18432 8:16 49152 1 handle_errors\n"
			"24576 8192 linear 253:4 26624\n");
	free(text);
	dmtable_destroy(&t);

	CHECK_INT(dmtable_build_moving(&t, &m, devs, EXT, unsorted, 2, 1024), -EINVAL);
	CHECK_INT(dmtable_build_moving(&t, &m, devs, EXT, in_place, 1, 1024), -EINVAL);
	CHECK_INT(dmtable_build_moving(&t, &m, devs, EXT, out_of_range, 1, 1024), -EINVAL);
	CHECK_INT(dmtable_build_moving(&t, &m, devs, EXT, moves, 2, 1000), -EINVAL);
	CHECK_INT(dmtable_build_moving(&t, &m, devs, EXT, moves, 2, 2 * EXT), -EINVAL);
	CHECK_UINT(t.nr, 0);
	/* No moves: the plain table. */
	CHECK_OK(dmtable_build_moving(&t, &m, devs, EXT, NULL, 0, 1024));
	CHECK_UINT(t.nr, 1);
	dmtable_destroy(&t);
	extmap_destroy(&m);
}

/*
 * Where target tg puts le (its sector), as the kernel would read it: a
 * linear target's offset, an error target none.
 */
static const struct dmtable_target *target_of(const struct dmtable *t, uint64_t sector)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->t[i].start <= sector && sector < t->t[i].start + t->t[i].len)
			return &t->t[i];
	return NULL;
}

/*
 * Three devices of nr_pe[] extents, every le mapped in order to device 0
 * then 1 (which hold them all), then up to moves random le to the lowest
 * free pe of a random device: a map of runs and pages.
 */
static void random_map(struct extmap *m, uint32_t nr_logical, const uint32_t nr_pe[3],
		       unsigned moves)
{
	CHECK_OK(extmap_init(m, nr_logical));
	for (unsigned d = 0; d < 3; d++)
		CHECK_OK(extmap_add_dev(m, nr_pe[d], NULL));
	CHECK_INT(extmap_fill_linear(m, 0), nr_pe[0]);
	CHECK_INT(extmap_fill_linear(m, 1), nr_logical - nr_pe[0]);
	for (unsigned i = 0; i < moves; i++) {
		uint32_t le = (uint32_t)rand() % nr_logical, pe;
		unsigned dev = (unsigned)rand() % 3;

		if (extmap_alloc(m, dev, &pe) == 0) {
			CHECK_OK(extmap_release(m, dev, pe));
			CHECK_OK(extmap_remap(m, le, dev, pe));
		}
	}
}

/*
 * A table built from a map that moves made into runs and pages, with one
 * device missing and some extents mirroring: every extent where the map
 * says, the targets tiling the volume in order, and no two neighbours the
 * kernel would see as one run (the table is as short as it can be).
 */
static void check_random_table(unsigned seed)
{
	struct dmtable_dev dv[3] = { devs[0], devs[1], devs[2] };
	const uint32_t nr_logical = 2000, nr_pe[3] = { 1500, 700, 400 };
	struct dmtable_move moves[8];
	size_t nr_moves = 0;
	struct extmap m;
	struct dmtable t;

	srand(seed);
	random_map(&m, nr_logical, nr_pe, (unsigned)rand() % 300);
	dv[2].missing = seed % 3 == 0;
	/* With every device present, the map's runs are the table's targets. */
	if (!dv[2].missing) {
		struct dmtable still;

		CHECK_OK(dmtable_build(&still, &m, dv, EXT));
		CHECK_UINT(extmap_runs(&m), still.nr);
		dmtable_destroy(&still);
	}
	for (uint32_t le = (uint32_t)rand() % 50; le < nr_logical && nr_moves < 8;
	     le += 1 + (uint32_t)rand() % 400) {
		struct extmap_loc loc = extmap_get(&m, le);
		uint32_t pe;

		if (dv[loc.dev].missing || dv[1].missing || extmap_alloc(&m, 1, &pe) < 0)
			continue;
		moves[nr_moves++] = (struct dmtable_move){ .le = le, .dev = 1, .pe = pe };
	}
	CHECK_OK(dmtable_build_moving(&t, &m, dv, EXT, moves, nr_moves, 1024));
	for (size_t i = 0; i < t.nr; i++) {
		const struct dmtable_target *a = &t.t[i];

		CHECK_UINT(a->start, i ? t.t[i - 1].start + t.t[i - 1].len : 0);
		if (i && !a->mirror_region && !t.t[i - 1].mirror_region) {
			const struct dmtable_target *b = &t.t[i - 1];

			CHECK(!(a->error && b->error));
			CHECK(a->error || b->error || a->major != b->major || a->minor != b->minor ||
			      b->offset + b->len != a->offset);
		}
	}
	CHECK_UINT(t.t[t.nr - 1].start + t.t[t.nr - 1].len, (uint64_t)nr_logical * EXT);
	for (uint32_t le = 0, k = 0; le < nr_logical; le++) {
		struct extmap_loc loc = extmap_get(&m, le);
		const struct dmtable_target *tg = target_of(&t, (uint64_t)le * EXT);
		bool moving = k < nr_moves && moves[k].le == le;

		CHECK(tg != NULL);
		if (moving) {
			CHECK_UINT(tg->mirror_region, 1024);
			CHECK_UINT(tg->len, EXT);
			CHECK_UINT(tg->mirror_offset, dv[1].data_start + (uint64_t)moves[k].pe * EXT);
			k++;
		}
		if (dv[loc.dev].missing) {
			CHECK(tg->error);
			continue;
		}
		CHECK(!tg->error);
		CHECK_UINT(tg->major, dv[loc.dev].major);
		CHECK_UINT(tg->offset + ((uint64_t)le * EXT - tg->start),
			   dv[loc.dev].data_start + (uint64_t)loc.pe * EXT);
	}
	dmtable_destroy(&t);
	extmap_destroy(&m);
}

static void test_random_tables(void)
{
	for (unsigned seed = 1; seed <= 200; seed++)
		check_random_table(seed);
}

/*
 * 4 extents on device 0 in a row, device 1's pe 5 a container of 4 slots
 * (pieces of EXT / 4), no piece out yet.
 */
static void split_pool(struct extmap *m, struct piecemap *pm)
{
	CHECK_OK(extmap_init(m, 4));
	CHECK_OK(extmap_add_dev(m, 8, NULL));
	CHECK_OK(extmap_add_dev(m, 8, NULL));
	CHECK_INT(extmap_fill_linear(m, 0), 4);
	CHECK_OK(piecemap_init(pm, 4));
	CHECK_OK(extmap_claim(m, 1, 5));
	CHECK_OK(piecemap_add_container(pm, 1, 5, NULL));
}

/*
 * Split extents: a piece out is a target from its slot, pieces in a row in
 * the volume and in their container one target, and the home around them
 * continues the extents beside it.
 */
static void test_split(void)
{
	const uint64_t ps = EXT / 4;
	const uint64_t slots = devs[1].data_start + 5 * (uint64_t)EXT;
	struct piecemap pm;
	struct extmap m;
	struct dmtable t;
	uint32_t c;
	uint16_t s;

	split_pool(&m, &pm);
	/* le 1's pieces 1 and 2 in slots 0 and 1; le 2's last and le 3's first in slots 2 and 3. */
	const uint32_t where[][2] = { { 1, 1 }, { 1, 2 }, { 2, 3 }, { 3, 0 } };
	for (unsigned i = 0; i < 4; i++) {
		CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
		CHECK_UINT(s, i);
		CHECK_OK(piecemap_place(&pm, where[i][0], where[i][1], c, s));
	}
	CHECK_OK(dmtable_build_split(&t, &m, &pm, devs, EXT));
	CHECK_UINT(t.nr, 5);
	check_target(&t, 0, 0, EXT + ps, 253, 4, 2048);
	check_target(&t, 1, EXT + ps, 2 * ps, 8, 16, slots);
	check_target(&t, 2, EXT + 3 * ps, 4 * ps, 253, 4, 2048 + EXT + 3 * ps);
	check_target(&t, 3, 2 * EXT + 3 * ps, 2 * ps, 8, 16, slots + 2 * ps);
	check_target(&t, 4, 3 * EXT + ps, 3 * ps, 253, 4, 2048 + 3 * EXT + ps);
	check_round_trip(&t);
	dmtable_destroy(&t);

	/* Without pieces (NULL, or zeroed as decoded from a slot without), the plain table. */
	CHECK_OK(dmtable_build_split(&t, &m, NULL, devs, EXT));
	CHECK_UINT(t.nr, 1);
	dmtable_destroy(&t);
	{
		struct piecemap zeroed = { 0 };

		CHECK_OK(dmtable_build_split(&t, &m, &zeroed, devs, EXT));
		CHECK_UINT(t.nr, 1);
		dmtable_destroy(&t);
		zeroed.nr_containers = 1; /* no piece size, yet something in it */
		CHECK_INT(dmtable_build_split(&t, &m, &zeroed, devs, EXT), -EINVAL);
	}

	/* A missing container device: its pieces fail rather than read other data. */
	{
		struct dmtable_dev dv[2] = { devs[0], devs[1] };

		dv[1].missing = true;
		CHECK_OK(dmtable_build_split(&t, &m, &pm, dv, EXT));
		CHECK_UINT(t.nr, 5);
		CHECK(t.t[1].error && t.t[3].error && !t.t[2].error);
		dmtable_destroy(&t);
	}

	/* What cannot be a table. */
	CHECK_INT(dmtable_build_split(&t, &m, &pm, devs, 6), -EINVAL);
	pm.containers[0].pe = 8;
	CHECK_INT(dmtable_build_split(&t, &m, &pm, devs, EXT), -EINVAL);
	pm.containers[0].pe = 5;
	CHECK_OK(extmap_unmap(&m, 3));
	CHECK_INT(dmtable_build_split(&t, &m, &pm, devs, EXT), -EINVAL);
	CHECK_OK(extmap_resize_logical(&m, 3));
	CHECK_INT(dmtable_build_split(&t, &m, &pm, devs, EXT), -EINVAL);
	CHECK_UINT(t.nr, 0);
	piecemap_destroy(&pm);
	extmap_destroy(&m);
}

/*
 * Pieces on their way: a mirror per moving piece from where it is (home or
 * its slot) to where it goes (a slot or home), the rest as the split table.
 */
static void test_split_moving(void)
{
	const uint64_t ps = EXT / 4;
	const uint64_t slots = devs[1].data_start + 5 * (uint64_t)EXT;
	struct dmtable_piece_move pmv[3] = {
		{ .le = 1, .idx = 0, .container = 0, .slot = 2 },     /* home -> slot 2 */
		{ .le = 1, .idx = 2, .container = PIECEMAP_NO_CONTAINER }, /* slot 1 -> home */
		{ .le = 3, .idx = 0, .container = 0, .slot = 3 },     /* home -> slot 3 */
	};
	struct dmtable_move mv = { .le = 2, .dev = 1, .pe = 6 };
	struct piecemap pm;
	struct extmap m;
	struct dmtable t;
	uint32_t c;
	uint16_t s;

	split_pool(&m, &pm);
	for (unsigned i = 1; i <= 2; i++) {
		CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
		CHECK_OK(piecemap_place(&pm, 1, i, c, s)); /* le 1's pieces 1, 2 in slots 0, 1 */
	}
	CHECK_OK(dmtable_build_moving_split(&t, &m, &pm, devs, EXT, &mv, 1, pmv, 3, 1024));
	CHECK_UINT(t.nr, 8);
	check_target(&t, 0, 0, EXT, 253, 4, 2048);
	/* le 1: piece 0 mirrors home -> slot 2, piece 1 stays in slot 0, piece 2 slot 1 -> home. */
	check_target(&t, 1, EXT, ps, 253, 4, 2048 + EXT);
	CHECK_UINT(t.t[1].mirror_region, 1024); /* the smaller of the region and the piece */
	CHECK_UINT(t.t[1].mirror_minor, 16);
	CHECK_UINT(t.t[1].mirror_offset, slots + 2 * ps);
	check_target(&t, 2, EXT + ps, ps, 8, 16, slots);
	CHECK_UINT(t.t[2].mirror_region, 0);
	check_target(&t, 3, EXT + 2 * ps, ps, 8, 16, slots + ps);
	CHECK_UINT(t.t[3].mirror_offset, 2048 + EXT + 2 * ps);
	CHECK_UINT(t.t[3].mirror_major, 253);
	check_target(&t, 4, EXT + 3 * ps, ps, 253, 4, 2048 + EXT + 3 * ps);
	/* le 2 moves whole, as before. */
	check_target(&t, 5, 2 * EXT, EXT, 253, 4, 2048 + 2 * EXT);
	CHECK_UINT(t.t[5].mirror_region, 1024);
	check_target(&t, 6, 3 * EXT, ps, 253, 4, 2048 + 3 * EXT);
	CHECK_UINT(t.t[6].mirror_offset, slots + 3 * ps);
	check_target(&t, 7, 3 * EXT + ps, 3 * ps, 253, 4, 2048 + 3 * EXT + ps);
	dmtable_destroy(&t);
	/* A region larger than a piece: the piece's mirror has one region. */
	CHECK_OK(dmtable_build_moving_split(&t, &m, &pm, devs, EXT, &mv, 1, pmv, 3, 4096));
	CHECK_UINT(t.t[1].mirror_region, ps);
	CHECK_UINT(t.t[5].mirror_region, 4096);
	dmtable_destroy(&t);

	/* What cannot be a batch's table. */
	{
		struct dmtable_piece_move bad = pmv[1];
		struct dmtable_move whole = { .le = 1, .dev = 1, .pe = 6 };

		bad.idx = 0; /* a piece at home going home */
		CHECK_INT(dmtable_build_moving_split(&t, &m, &pm, devs, EXT, NULL, 0, &bad, 1, 1024),
			  -EINVAL);
		bad = pmv[0];
		bad.slot = 4;
		CHECK_INT(dmtable_build_moving_split(&t, &m, &pm, devs, EXT, NULL, 0, &bad, 1, 1024),
			  -EINVAL);
		bad.slot = 0; /* in a container that does not exist */
		bad.container = 1;
		CHECK_INT(dmtable_build_moving_split(&t, &m, &pm, devs, EXT, NULL, 0, &bad, 1, 1024),
			  -EINVAL);
		/* le 1 is split: it cannot move whole. */
		CHECK_INT(dmtable_build_moving_split(&t, &m, &pm, devs, EXT, &whole, 1, NULL, 0, 1024),
			  -EINVAL);
		/* le 2 moves whole and has a piece move. */
		bad = pmv[0];
		bad.le = 2;
		CHECK_INT(dmtable_build_moving_split(&t, &m, &pm, devs, EXT, &mv, 1, &bad, 1, 1024),
			  -EINVAL);
		/* Unsorted, and piece moves without a piece map. */
		struct dmtable_piece_move two[2] = { pmv[2], pmv[0] };
		CHECK_INT(dmtable_build_moving_split(&t, &m, &pm, devs, EXT, NULL, 0, two, 2, 1024),
			  -EINVAL);
		CHECK_INT(dmtable_build_moving_split(&t, &m, NULL, devs, EXT, NULL, 0, pmv, 1, 1024),
			  -EINVAL);
		CHECK_UINT(t.nr, 0);
	}
	piecemap_destroy(&pm);
	extmap_destroy(&m);
}

/*
 * Piece moves over a random split table: pieces out go home or to another
 * slot, pieces at home to a slot; every moving piece is a mirror from where
 * it is to where it goes, every other piece where it was.
 */
static void check_random_piece_moves(struct extmap *m, struct piecemap *pm,
				     const struct dmtable_dev *dv, uint64_t ps)
{
	struct dmtable_piece_move mv[40];
	size_t nr = 0;
	struct dmtable t;

	for (uint32_t le = (uint32_t)rand() % 7; le < m->nr_logical && nr < 40;
	     le += 1 + (uint32_t)rand() % 20) {
		uint32_t idx = (uint32_t)rand() % pm->pieces_per_extent, c;
		struct extmap_loc loc = extmap_get(m, le);
		uint16_t s;
		bool out = piecemap_find(pm, le, idx, &c, &s) == 0;

		if (dv[loc.dev].missing || (out && dv[pm->containers[c].dev].missing))
			continue;
		if (out && rand() % 2) {
			mv[nr++] = (struct dmtable_piece_move){ .le = le, .idx = idx,
								.container = PIECEMAP_NO_CONTAINER };
			continue;
		}
		if (piecemap_alloc_slot(pm, 1, &c, &s) < 0)
			continue;
		mv[nr++] = (struct dmtable_piece_move){ .le = le, .idx = idx, .container = c,
							.slot = s };
	}
	CHECK_OK(dmtable_build_moving_split(&t, m, pm, dv, EXT, NULL, 0, mv, nr, 64));
	CHECK_UINT(dmtable_size(&t), (uint64_t)m->nr_logical * EXT);
	size_t k = 0;

	for (size_t i = 0; i < t.nr; i++) {
		const struct dmtable_target *tg = &t.t[i];
		uint64_t sector = tg->start, want_src, want_dst;
		uint32_t le = (uint32_t)(sector / EXT), idx = (uint32_t)(sector % EXT / ps), c;
		struct extmap_loc loc = extmap_get(m, le);
		uint16_t s;

		CHECK_UINT(tg->start, i ? t.t[i - 1].start + t.t[i - 1].len : 0);
		if (!tg->mirror_region)
			continue;
		CHECK(k < nr);
		CHECK_UINT(le, mv[k].le);
		CHECK_UINT(idx, mv[k].idx);
		CHECK_UINT(tg->len, ps);
		CHECK_UINT(tg->mirror_region, 64);
		want_src = dv[loc.dev].data_start + (uint64_t)loc.pe * EXT + idx * ps;
		if (piecemap_find(pm, le, idx, &c, &s) == 0)
			want_src = dv[pm->containers[c].dev].data_start +
				   (uint64_t)pm->containers[c].pe * EXT + s * ps;
		want_dst = dv[loc.dev].data_start + (uint64_t)loc.pe * EXT + idx * ps;
		if (mv[k].container != PIECEMAP_NO_CONTAINER)
			want_dst = dv[1].data_start + (uint64_t)pm->containers[mv[k].container].pe * EXT +
				   mv[k].slot * ps;
		CHECK_UINT(tg->offset, want_src);
		CHECK_UINT(tg->mirror_offset, want_dst);
		k++;
	}
	CHECK_UINT(k, nr);
	dmtable_destroy(&t);
}

/*
 * A map made of runs and pages by random moves, containers reserved in it
 * on two devices (one sometimes missing) and random pieces out: every
 * piece of every extent reads from where the two maps say, the targets
 * tile the volume, and no two neighbours could be one.
 */
static void check_random_split(unsigned seed)
{
	struct dmtable_dev dv[3] = { devs[0], devs[1], devs[2] };
	const uint32_t nr_logical = 600, ppe = 16, nr_pe[3] = { 500, 200, 60 };
	const uint64_t ps = EXT / ppe;
	struct piecemap pm;
	struct extmap m;
	struct dmtable t;

	srand(seed);
	random_map(&m, nr_logical, nr_pe, (unsigned)rand() % 100);
	CHECK_OK(piecemap_init(&pm, ppe));
	for (unsigned i = 0; i < 6; i++) {
		unsigned dev = 1 + i % 2;
		uint32_t pe;

		CHECK_OK(extmap_alloc(&m, dev, &pe));
		CHECK_OK(piecemap_add_container(&pm, (uint16_t)dev, pe, NULL));
	}
	for (unsigned i = 0, n = (unsigned)rand() % 90; i < n; i++) {
		/* Clustered, so that neighbours in the volume and in a container occur. */
		uint32_t le = (uint32_t)rand() % 40 * 15, idx = (uint32_t)rand() % ppe, c;
		uint16_t s;

		if (piecemap_alloc_slot(&pm, (uint16_t)(1 + rand() % 2), &c, &s) == 0)
			CHECK_OK(piecemap_place(&pm, le, idx, c, s));
	}
	CHECK_OK(piecemap_check(&pm, NULL));
	dv[2].missing = seed % 3 == 0;
	CHECK_OK(dmtable_build_split(&t, &m, &pm, dv, EXT));
	for (size_t i = 0; i < t.nr; i++) {
		const struct dmtable_target *a = &t.t[i];

		CHECK_UINT(a->start, i ? t.t[i - 1].start + t.t[i - 1].len : 0);
		if (i) {
			const struct dmtable_target *b = &t.t[i - 1];

			CHECK(!(a->error && b->error));
			CHECK(a->error || b->error || a->major != b->major || a->minor != b->minor ||
			      b->offset + b->len != a->offset);
		}
	}
	CHECK_UINT(dmtable_size(&t), (uint64_t)nr_logical * EXT);
	for (uint32_t le = 0; le < nr_logical; le++) {
		struct extmap_loc loc = extmap_get(&m, le);

		for (uint32_t idx = 0; idx < ppe; idx++) {
			uint64_t sector = (uint64_t)le * EXT + idx * ps, want;
			const struct dmtable_target *tg = target_of(&t, sector);
			unsigned dev = loc.dev;
			uint32_t c;
			uint16_t s;

			want = dv[loc.dev].data_start + (uint64_t)loc.pe * EXT + idx * ps;
			if (piecemap_find(&pm, le, idx, &c, &s) == 0) {
				dev = pm.containers[c].dev;
				want = dv[dev].data_start + (uint64_t)pm.containers[c].pe * EXT + s * ps;
			}
			CHECK(tg != NULL);
			if (dv[dev].missing) {
				CHECK(tg->error);
				continue;
			}
			CHECK(!tg->error);
			CHECK_UINT(tg->major, dv[dev].major);
			CHECK_UINT(tg->minor, dv[dev].minor);
			CHECK_UINT(tg->offset + (sector - tg->start), want);
		}
	}
	check_round_trip(&t);
	dmtable_destroy(&t);
	check_random_piece_moves(&m, &pm, dv, ps);
	piecemap_destroy(&pm);
	extmap_destroy(&m);
}

static void test_random_splits(void)
{
	for (unsigned seed = 1; seed <= 100; seed++)
		check_random_split(seed);
}

int main(void)
{
	test_split();
	test_split_moving();
	test_random_splits();
	test_random_tables();
	test_moving();
	test_single_run();
	test_runs_split_and_merge();
	test_build_errors();
	test_params();
	test_format();
	test_parse_good();
	test_missing_device();
	test_parse_bad();
	test_large_round_trip();
	return 0;
}
