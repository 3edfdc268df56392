/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "extmap.h"

/* A map that extmap_check() must accept, or the test stops here. */
#define CHECK_CONSISTENT(m) CHECK_OK(extmap_check((m), NULL))

static unsigned add_dev(struct extmap *m, uint32_t nr_pe)
{
	unsigned dev = 999;

	CHECK_OK(extmap_add_dev(m, nr_pe, &dev));
	return dev;
}

/* nr_logical unmapped extents and two devices, numbered 0 and 1. */
static void init_two_devs(struct extmap *m, uint32_t nr_logical, uint32_t nr_pe0, uint32_t nr_pe1)
{
	CHECK_OK(extmap_init(m, nr_logical));
	CHECK_UINT(add_dev(m, nr_pe0), 0);
	CHECK_UINT(add_dev(m, nr_pe1), 1);
}

static void check_loc(const struct extmap *m, uint32_t le, unsigned dev, uint32_t pe)
{
	struct extmap_loc loc = extmap_get(m, le);

	CHECK_UINT(loc.dev, dev);
	CHECK_UINT(loc.pe, pe);
}

static void test_lifecycle(void)
{
	struct extmap zero = { 0 };
	struct extmap m;

	extmap_destroy(NULL);
	extmap_destroy(&zero);
	CHECK_INT(extmap_init(NULL, 4), -EINVAL);

	CHECK_OK(extmap_init(&m, 0));
	CHECK_UINT(m.nr_logical, 0);
	CHECK_CONSISTENT(&m);
	CHECK_UINT(extmap_get(&m, 0).dev, EXTMAP_NO_DEV);
	extmap_destroy(&m);
	extmap_destroy(&m);

	CHECK_OK(extmap_init(&m, 10));
	CHECK_UINT(m.nr_devs, 0);
	for (uint32_t le = 0; le < 10; le++)
		check_loc(&m, le, EXTMAP_NO_DEV, 0);
	check_loc(&m, 10, EXTMAP_NO_DEV, 0);
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
	CHECK(m.pages.leaf == NULL && m.runs == NULL);
}

static void test_devices(void)
{
	struct extmap m;

	CHECK_OK(extmap_init(&m, 4));
	CHECK_INT(extmap_add_dev(&m, 0, NULL), -EINVAL);
	for (unsigned i = 0; i < EXTMAP_MAX_DEVS; i++) {
		CHECK_UINT(add_dev(&m, 1 + i * 50), i);
		CHECK_UINT(m.nr_free[i], 1 + i * 50);
	}
	CHECK_INT(extmap_add_dev(&m, 8, NULL), -ENOSPC);
	CHECK_UINT(m.nr_devs, EXTMAP_MAX_DEVS);
	CHECK_CONSISTENT(&m);

	/* Only the last device goes, and only once nothing on it is used. */
	CHECK_INT(extmap_remove_dev(&m, 3), -EINVAL);
	CHECK_INT(extmap_remove_dev(&m, EXTMAP_MAX_DEVS), -EINVAL);
	CHECK_OK(extmap_map(&m, 0, 15, 7));
	CHECK_INT(extmap_remove_dev(&m, 15), -EBUSY);
	CHECK_OK(extmap_unmap(&m, 0));
	CHECK_OK(extmap_remove_dev(&m, 15));
	CHECK_UINT(m.nr_devs, 15);

	/* A reservation pins the device too: a migration is headed there. */
	{
		uint32_t pe;

		CHECK_OK(extmap_alloc(&m, 14, &pe));
		CHECK_INT(extmap_remove_dev(&m, 14), -EBUSY);
		CHECK_OK(extmap_release(&m, 14, pe));
	}
	CHECK_OK(extmap_remove_dev(&m, 14));
	CHECK_UINT(add_dev(&m, 3), 14);
	CHECK_UINT(m.nr_pe[14], 3);
	CHECK_CONSISTENT(&m);
	while (m.nr_devs)
		CHECK_OK(extmap_remove_dev(&m, m.nr_devs - 1));
	CHECK_INT(extmap_remove_dev(&m, 0), -EINVAL);
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

static void test_map_unmap(void)
{
	const unsigned d0 = 0, d1 = 1;
	struct extmap m;

	init_two_devs(&m, 8, 4, 4);

	CHECK_INT(extmap_map(&m, 8, d0, 0), -EINVAL);
	CHECK_INT(extmap_map(&m, 0, 2, 0), -EINVAL);
	CHECK_INT(extmap_map(&m, 0, EXTMAP_NO_DEV, 0), -EINVAL);
	CHECK_INT(extmap_map(&m, 0, d0, 4), -EINVAL);
	CHECK_INT(extmap_map(NULL, 0, d0, 0), -EINVAL);

	CHECK_OK(extmap_map(&m, 0, d0, 3));
	check_loc(&m, 0, d0, 3);
	CHECK_UINT(m.nr_free[d0], 3);
	CHECK_INT(extmap_map(&m, 0, d1, 0), -EEXIST);
	CHECK_INT(extmap_map(&m, 1, d0, 3), -EBUSY);
	/* The same pe number on another device is a different extent. */
	CHECK_OK(extmap_map(&m, 1, d1, 3));
	CHECK_UINT(extmap_count_on_dev(&m, d0), 1);
	CHECK_UINT(extmap_count_on_dev(&m, d1), 1);
	CHECK_UINT(extmap_count_on_dev(&m, 7), 0);
	CHECK_CONSISTENT(&m);

	CHECK_INT(extmap_unmap(&m, 2), -ENOENT);
	CHECK_INT(extmap_unmap(&m, 8), -EINVAL);
	CHECK_OK(extmap_unmap(&m, 0));
	check_loc(&m, 0, EXTMAP_NO_DEV, 0);
	CHECK_UINT(m.nr_free[d0], 4);
	CHECK_INT(extmap_unmap(&m, 0), -ENOENT);
	/* The freed pe can be taken again. */
	CHECK_OK(extmap_map(&m, 5, d0, 3));
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

static void test_remap(void)
{
	const unsigned cold = 0, hot = 1;
	struct extmap m;
	uint32_t pe;

	init_two_devs(&m, 4, 4, 2);
	CHECK_INT(extmap_fill_linear(&m, cold), 4);

	CHECK_INT(extmap_remap(&m, 0, hot, 2), -EINVAL);
	CHECK_INT(extmap_remap(&m, 4, hot, 0), -EINVAL);
	CHECK_INT(extmap_remap(&m, 0, cold, 1), -EBUSY);
	CHECK_INT(extmap_remap(&m, 0, cold, 0), -EBUSY);

	/* The migration sequence: reserve, (copy), release and remap. */
	CHECK_OK(extmap_alloc(&m, hot, &pe));
	CHECK_UINT(pe, 0);
	CHECK_INT(extmap_remap(&m, 2, hot, pe), -EBUSY);
	CHECK_OK(extmap_release(&m, hot, pe));
	CHECK_OK(extmap_remap(&m, 2, hot, pe));
	check_loc(&m, 2, hot, 0);
	CHECK_UINT(m.nr_free[cold], 1);
	CHECK_UINT(m.nr_free[hot], 1);
	CHECK_UINT(extmap_count_on_dev(&m, cold), 3);
	CHECK_CONSISTENT(&m);

	/* The old pe is free again and reusable. */
	CHECK_OK(extmap_alloc(&m, cold, &pe));
	CHECK_UINT(pe, 2);
	CHECK_OK(extmap_release(&m, cold, pe));
	CHECK_OK(extmap_remap(&m, 2, cold, 2));
	check_loc(&m, 2, cold, 2);
	CHECK_UINT(m.nr_free[hot], 2);

	CHECK_OK(extmap_unmap(&m, 3));
	CHECK_INT(extmap_remap(&m, 3, hot, 1), -ENOENT);
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

static void test_same_mapping(void)
{
	const unsigned cold = 0, hot = 1;
	struct extmap a, b, c;
	uint32_t pe;

	init_two_devs(&a, 4, 4, 2);
	init_two_devs(&b, 4, 4, 2);
	init_two_devs(&c, 4, 4, 3);
	CHECK_INT(extmap_fill_linear(&a, cold), 4);
	CHECK_INT(extmap_fill_linear(&b, cold), 4);
	CHECK_INT(extmap_fill_linear(&c, cold), 4);
	CHECK(extmap_same_mapping(&a, &b));
	/* A device of another size is another pool. */
	CHECK(!extmap_same_mapping(&a, &c));
	/* A reservation is not a mapping. */
	CHECK_OK(extmap_alloc(&b, hot, &pe));
	CHECK(extmap_same_mapping(&a, &b));
	CHECK_OK(extmap_release(&b, hot, pe));
	CHECK_OK(extmap_remap(&b, 1, hot, pe));
	CHECK(!extmap_same_mapping(&a, &b));
	CHECK(!extmap_same_mapping(&b, &a));
	extmap_destroy(&a);
	extmap_destroy(&b);
	extmap_destroy(&c);
}

static void test_alloc(void)
{
	/* 130: two full words and a partial one, so padding bits are exercised. */
	const uint32_t nr_pe = 130;
	struct extmap m;
	unsigned dev;
	uint32_t pe;

	CHECK_OK(extmap_init(&m, 1));
	dev = add_dev(&m, nr_pe);
	CHECK_INT(extmap_alloc(&m, 1, &pe), -EINVAL);
	CHECK_INT(extmap_alloc(&m, dev, NULL), -EINVAL);
	for (uint32_t i = 0; i < nr_pe; i++) {
		CHECK_OK(extmap_alloc(&m, dev, &pe));
		CHECK_UINT(pe, i);
	}
	CHECK_UINT(m.nr_free[dev], 0);
	pe = 4242;
	CHECK_INT(extmap_alloc(&m, dev, &pe), -ENOSPC);
	CHECK_UINT(pe, 4242);
	CHECK_INT(extmap_map(&m, 0, dev, 5), -EBUSY);
	CHECK_CONSISTENT(&m);

	/* Lowest free first, whatever order they were freed in. */
	CHECK_OK(extmap_release(&m, dev, 129));
	CHECK_OK(extmap_release(&m, dev, 70));
	CHECK_OK(extmap_release(&m, dev, 3));
	CHECK_INT(extmap_release(&m, dev, 3), -ENOENT);
	CHECK_INT(extmap_release(&m, dev, nr_pe), -EINVAL);
	CHECK_INT(extmap_release(&m, 1, 0), -EINVAL);
	CHECK_CONSISTENT(&m);
	CHECK_OK(extmap_alloc(&m, dev, &pe));
	CHECK_UINT(pe, 3);
	CHECK_OK(extmap_alloc(&m, dev, &pe));
	CHECK_UINT(pe, 70);
	CHECK_OK(extmap_alloc(&m, dev, &pe));
	CHECK_UINT(pe, 129);
	CHECK_INT(extmap_alloc(&m, dev, &pe), -ENOSPC);

	/* Mapping fills a hole and allocation steps over it. */
	CHECK_OK(extmap_release(&m, dev, 64));
	CHECK_OK(extmap_release(&m, dev, 65));
	CHECK_OK(extmap_map(&m, 0, dev, 64));
	CHECK_OK(extmap_alloc(&m, dev, &pe));
	CHECK_UINT(pe, 65);
	CHECK_CONSISTENT(&m);

	/* A claim takes the pe asked for, if free, and allocation steps over it. */
	CHECK_OK(extmap_release(&m, dev, 100));
	CHECK_OK(extmap_release(&m, dev, 101));
	CHECK_INT(extmap_claim(&m, dev, 99), -EBUSY);
	CHECK_INT(extmap_claim(&m, dev, nr_pe), -EINVAL);
	CHECK_INT(extmap_claim(&m, 1, 0), -EINVAL);
	CHECK_OK(extmap_claim(&m, dev, 100));
	CHECK_UINT(m.nr_free[dev], 1);
	CHECK_OK(extmap_alloc(&m, dev, &pe));
	CHECK_UINT(pe, 101);
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

static void test_resize_logical(void)
{
	struct extmap m;
	unsigned dev;

	CHECK_OK(extmap_init(&m, 2));
	dev = add_dev(&m, 10);
	CHECK_OK(extmap_map(&m, 1, dev, 0));
	CHECK_OK(extmap_resize_logical(&m, 6));
	CHECK_UINT(m.nr_logical, 6);
	check_loc(&m, 1, dev, 0);
	for (uint32_t le = 2; le < 6; le++)
		check_loc(&m, le, EXTMAP_NO_DEV, 0);
	CHECK_OK(extmap_map(&m, 5, dev, 1));

	CHECK_INT(extmap_resize_logical(&m, 5), -EBUSY);
	CHECK_UINT(m.nr_logical, 6);
	CHECK_OK(extmap_unmap(&m, 5));
	CHECK_OK(extmap_resize_logical(&m, 2));
	CHECK_UINT(m.nr_logical, 2);
	CHECK_INT(extmap_map(&m, 2, dev, 2), -EINVAL);
	CHECK_INT(extmap_resize_logical(&m, 0), -EBUSY);
	CHECK_OK(extmap_unmap(&m, 1));
	CHECK_OK(extmap_resize_logical(&m, 0));
	CHECK(m.pages.leaf == NULL && m.runs == NULL);
	CHECK_OK(extmap_resize_logical(&m, 3));
	CHECK_INT(extmap_fill_linear(&m, dev), 3);
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

static void test_fill_linear(void)
{
	const unsigned small = 0, big = 1;
	struct extmap m;

	init_two_devs(&m, 10, 4, 100);
	CHECK_INT(extmap_fill_linear(&m, 2), -EINVAL);

	/* Already-mapped extents and used pe are skipped, not disturbed. */
	CHECK_OK(extmap_map(&m, 1, big, 50));
	CHECK_OK(extmap_map(&m, 3, small, 1));
	CHECK_INT(extmap_fill_linear(&m, small), 3);
	check_loc(&m, 0, small, 0);
	check_loc(&m, 1, big, 50);
	check_loc(&m, 2, small, 2);
	check_loc(&m, 3, small, 1);
	check_loc(&m, 4, small, 3);
	check_loc(&m, 5, EXTMAP_NO_DEV, 0);
	CHECK_INT(extmap_fill_linear(&m, small), 0);

	CHECK_INT(extmap_fill_linear(&m, big), 5);
	for (uint32_t le = 5; le < 10; le++)
		check_loc(&m, le, big, le - 5);
	CHECK_INT(extmap_fill_linear(&m, big), 0);
	CHECK_UINT(m.nr_free[big], 94);
	CHECK_CONSISTENT(&m);

	/* The search hint must not hide pe freed below it. */
	CHECK_OK(extmap_unmap(&m, 9));
	CHECK_OK(extmap_unmap(&m, 5));
	CHECK_INT(extmap_fill_linear(&m, big), 2);
	check_loc(&m, 5, big, 0);
	check_loc(&m, 9, big, 4);
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

/* Build a small valid map, let corrupt() poke it, expect check() to name bad_le. */
static void expect_corruption(void (*corrupt)(struct extmap *m), uint32_t bad_le)
{
	struct extmap m;
	uint32_t got = 4242;

	init_two_devs(&m, 200, 100, 150);
	CHECK_INT(extmap_fill_linear(&m, 0), 100);
	CHECK_INT(extmap_fill_linear(&m, 1), 100);
	CHECK_OK(extmap_unmap(&m, 150));
	CHECK_CONSISTENT(&m);
	corrupt(&m);
	CHECK_INT(extmap_check(&m, &got), -EUCLEAN);
	CHECK_UINT(got, bad_le);
	CHECK_INT(extmap_check(&m, NULL), -EUCLEAN);
	extmap_destroy(&m);
}

static void shared_pe(struct extmap *m)
{
	*extmap_raw(m, 120) = extmap_get(m, 110);
	bitset_clear(&m->used[1], 20);
	m->nr_free[1]++;
}

static void pe_not_marked_used(struct extmap *m)
{
	/* Counters kept coherent so only the le scan can see it. */
	*extmap_raw(m, 150) = (struct extmap_loc){ .dev = 1, .pe = 149 };
}

static void pe_out_of_range(struct extmap *m)
{
	extmap_raw(m, 30)->pe = 100;
}

static void dev_out_of_range(struct extmap *m)
{
	extmap_raw(m, 7)->dev = 2;
}

static void free_count_off(struct extmap *m)
{
	m->nr_free[0]++;
}

static void mapped_count_off(struct extmap *m)
{
	m->nr_mapped[1]--;
}

static void used_bit_lost(struct extmap *m)
{
	bitset_clear(&m->used[0], 64);
}

static void padding_bit_set(struct extmap *m)
{
	bitset_hold(&m->used[1], 0);
	m->used[1].leaf[0][2] |= UINT64_C(1) << 63;
	m->nr_free[1]--;
}

static void hint_too_high(struct extmap *m)
{
	m->free_hint[1] = 2;
}

static void test_check_catches_corruption(void)
{
	expect_corruption(shared_pe, 120);
	expect_corruption(pe_not_marked_used, 150);
	expect_corruption(pe_out_of_range, 30);
	expect_corruption(dev_out_of_range, 7);
	expect_corruption(free_count_off, UINT32_MAX);
	expect_corruption(mapped_count_off, UINT32_MAX);
	expect_corruption(used_bit_lost, UINT32_MAX);
	expect_corruption(padding_bit_set, UINT32_MAX);
	expect_corruption(hint_too_high, UINT32_MAX);
	CHECK_INT(extmap_check(NULL, NULL), -EINVAL);
}

/* xorshift: deterministic, so a failure reproduces. */
static uint32_t rnd(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

/*
 * Random operations against a plain model: owner[dev][pe] is the le using
 * it, RESERVED for an alloc, FREE otherwise.
 */
#define MODEL_DEVS 3
#define MODEL_PE_MAX 1500
#define FREE UINT32_MAX
#define RESERVED (UINT32_MAX - 1)

struct model {
	struct extmap m;
	uint32_t nr_le, nr_pe;
	uint32_t owner[MODEL_DEVS][MODEL_PE_MAX];
	uint32_t seed;
};

static uint32_t model_lowest_free(const struct model *s, unsigned dev)
{
	for (uint32_t pe = 0; pe < s->nr_pe; pe++)
		if (s->owner[dev][pe] == FREE)
			return pe;
	return FREE;
}

static void model_step(struct model *s)
{
	uint32_t le = rnd(&s->seed) % s->nr_le;
	unsigned dev = rnd(&s->seed) % MODEL_DEVS;
	uint32_t pe = rnd(&s->seed) % s->nr_pe;
	struct extmap_loc cur = extmap_get(&s->m, le);
	uint32_t got;

	switch (rnd(&s->seed) % 5) {
	case 0:
		if (cur.dev != EXTMAP_NO_DEV)
			CHECK_INT(extmap_map(&s->m, le, dev, pe), -EEXIST);
		else if (s->owner[dev][pe] != FREE)
			CHECK_INT(extmap_map(&s->m, le, dev, pe), -EBUSY);
		else {
			CHECK_OK(extmap_map(&s->m, le, dev, pe));
			s->owner[dev][pe] = le;
		}
		break;
	case 1:
		if (cur.dev == EXTMAP_NO_DEV) {
			CHECK_INT(extmap_unmap(&s->m, le), -ENOENT);
			break;
		}
		CHECK_OK(extmap_unmap(&s->m, le));
		s->owner[cur.dev][cur.pe] = FREE;
		break;
	case 2:
		if (cur.dev == EXTMAP_NO_DEV)
			CHECK_INT(extmap_remap(&s->m, le, dev, pe), -ENOENT);
		else if (s->owner[dev][pe] != FREE)
			CHECK_INT(extmap_remap(&s->m, le, dev, pe), -EBUSY);
		else {
			CHECK_OK(extmap_remap(&s->m, le, dev, pe));
			s->owner[cur.dev][cur.pe] = FREE;
			s->owner[dev][pe] = le;
		}
		break;
	case 3:
		pe = model_lowest_free(s, dev);
		if (pe == FREE) {
			CHECK_INT(extmap_alloc(&s->m, dev, &got), -ENOSPC);
			break;
		}
		CHECK_OK(extmap_alloc(&s->m, dev, &got));
		CHECK_UINT(got, pe);
		s->owner[dev][pe] = RESERVED;
		break;
	default:
		if (s->owner[dev][pe] == FREE) {
			CHECK_INT(extmap_release(&s->m, dev, pe), -ENOENT);
		} else if (s->owner[dev][pe] == RESERVED) {
			CHECK_OK(extmap_release(&s->m, dev, pe));
			s->owner[dev][pe] = FREE;
		}
		break;
	}
}

static void model_compare(const struct model *s)
{
	struct extmap_loc loc;
	uint32_t span;

	/* Every span says of each of its le what extmap_get says. */
	for (uint32_t le = 0; le < s->nr_le; le += span) {
		span = extmap_span(&s->m, le, 3, &loc);
		CHECK(span >= 1 && span <= 3);
		span = extmap_span(&s->m, le, UINT32_MAX, &loc);
		CHECK(span >= 1 && span <= s->nr_le - le);
		for (uint32_t i = 0; i < span; i++)
			check_loc(&s->m, le + i, loc.dev, loc.dev == EXTMAP_NO_DEV ? 0 : loc.pe + i);
	}
	CHECK_UINT(extmap_span(&s->m, s->nr_le, UINT32_MAX, &loc), 0);
	CHECK_UINT(extmap_span(&s->m, 0, 0, &loc), 0);
	for (unsigned dev = 0; dev < MODEL_DEVS; dev++) {
		uint32_t nr_free = 0, nr_mapped = 0;

		for (uint32_t pe = 0; pe < s->nr_pe; pe++) {
			uint32_t le = s->owner[dev][pe];

			nr_free += le == FREE;
			if (le != FREE && le != RESERVED) {
				check_loc(&s->m, le, dev, pe);
				nr_mapped++;
			}
		}
		CHECK_UINT(s->m.nr_free[dev], nr_free);
		CHECK_UINT(extmap_count_on_dev(&s->m, dev), nr_mapped);
	}
	CHECK_CONSISTENT(&s->m);
}

/*
 * linear: start as a pool does, every le on device 0 in order (runs, no
 * page), then move at random: pages appear among runs, and runs shrink at
 * their ends.
 */
static void model_run(uint32_t nr_le, uint32_t nr_pe, bool linear, unsigned steps)
{
	static struct model s;

	s.seed = 0x9e3779b9u;
	s.nr_le = nr_le;
	s.nr_pe = nr_pe;
	memset(s.owner, 0xff, sizeof(s.owner));
	CHECK_OK(extmap_init(&s.m, nr_le));
	for (unsigned dev = 0; dev < MODEL_DEVS; dev++)
		add_dev(&s.m, nr_pe);
	if (linear) {
		CHECK_INT(extmap_fill_linear(&s.m, 0), nr_le < nr_pe ? nr_le : nr_pe);
		for (uint32_t le = 0; le < nr_le && le < nr_pe; le++)
			s.owner[0][le] = le;
		CHECK_UINT(s.m.nr_runs, 1);
		CHECK_UINT(s.m.nr_pages, 0);
	}
	for (unsigned i = 0; i < steps; i++) {
		model_step(&s);
		if (i % 97 == 0)
			model_compare(&s);
	}
	model_compare(&s);
	extmap_destroy(&s.m);
}

static void test_against_model(void)
{
	model_run(97, 70, false, 200000);
	model_run(1400, 1500, true, 3000);
	model_run(1400, 1500, true, 60000);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A million extents: fill two devices, migrate a slice, check, all well under a second. */
static void test_large(void)
{
	const uint32_t nr = 1000000;
	const unsigned cold = 0, hot = 1;
	struct timespec t0;
	struct extmap m;
	double elapsed;
	uint32_t bad;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	init_two_devs(&m, nr, 800000, 300000);
	CHECK_INT(extmap_fill_linear(&m, cold), 800000);
	CHECK_INT(extmap_fill_linear(&m, hot), 200000);
	CHECK_OK(extmap_check(&m, &bad));

	for (uint32_t le = 0; le < nr; le += 10) {
		struct extmap_loc old = extmap_get(&m, le);
		uint32_t pe;

		if (old.dev != cold)
			continue;
		CHECK_OK(extmap_alloc(&m, hot, &pe));
		CHECK_OK(extmap_release(&m, hot, pe));
		CHECK_OK(extmap_remap(&m, le, hot, pe));
	}
	CHECK_UINT(m.nr_free[hot], 20000);
	CHECK_UINT(m.nr_free[cold], 80000);
	CHECK_UINT(extmap_count_on_dev(&m, hot), 280000);
	CHECK_OK(extmap_check(&m, &bad));
	check_loc(&m, 0, hot, 200000);
	check_loc(&m, 1, cold, 1);
	check_loc(&m, 999999, hot, 199999);
	extmap_destroy(&m);

	elapsed = seconds_since(&t0);
	printf("1,000,000 extents: %.3f s\n", elapsed);
	/* Around 0.03 s plain and 0.07 s under ASan: a second leaves room for a busy machine. */
	CHECK(elapsed < 1.0);
}

/* Unmapping either end of a run shortens it, without a page; the rest stays where it was. */
static void test_trim_runs(void)
{
	struct extmap m;

	init_two_devs(&m, 300, 300, 10);
	CHECK_INT(extmap_fill_linear(&m, 0), 300);
	CHECK_OK(extmap_unmap(&m, 0));
	CHECK_OK(extmap_unmap(&m, 299));
	CHECK_UINT(m.nr_runs, 1);
	CHECK_UINT(m.nr_pages, 0);
	check_loc(&m, 0, EXTMAP_NO_DEV, 0);
	check_loc(&m, 1, 0, 1);
	check_loc(&m, 298, 0, 298);
	check_loc(&m, 299, EXTMAP_NO_DEV, 0);
	CHECK_UINT(m.nr_free[0], 2);
	CHECK_CONSISTENT(&m);
	/* Down to nothing: the run goes. */
	for (uint32_t le = 1; le < 299; le++)
		CHECK_OK(extmap_unmap(&m, le));
	CHECK_UINT(m.nr_runs, 0);
	CHECK_UINT(m.nr_pages, 0);
	CHECK_UINT(m.nr_free[0], 300);
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

/* A run of entries in one step, or one by one up to what is in the way. */
static void test_map_run(void)
{
	struct extmap m;

	init_two_devs(&m, 1000, 700, 300);
	CHECK_INT(extmap_map_run(&m, 0, 0, 0, 0), -EINVAL);
	CHECK_INT(extmap_map_run(&m, 990, 0, 0, 11), -EINVAL);
	CHECK_INT(extmap_map_run(&m, 0, 1, 250, 51), -EINVAL);
	CHECK_INT(extmap_map_run(&m, 0, 2, 0, 1), -EINVAL);
	extmap_dirty_clear(&m);
	CHECK_OK(extmap_map_run(&m, 10, 0, 100, 500));
	CHECK_UINT(m.nr_runs, 1);
	CHECK_UINT(m.nr_pages, 0);
	CHECK_UINT(m.nr_free[0], 200);
	CHECK_UINT(extmap_count_on_dev(&m, 0), 500);
	check_loc(&m, 9, EXTMAP_NO_DEV, 0);
	check_loc(&m, 10, 0, 100);
	check_loc(&m, 509, 0, 599);
	check_loc(&m, 510, EXTMAP_NO_DEV, 0);
	CHECK_UINT(extmap_next_dirty(&m, 0), 0);
	CHECK_UINT(extmap_next_dirty(&m, 7), 7); /* le 509 */
	CHECK_UINT(extmap_next_dirty(&m, 8), UINT32_MAX);
	/* Continuing the run extends it. */
	CHECK_OK(extmap_map_run(&m, 510, 0, 600, 10));
	CHECK_UINT(m.nr_runs, 1);
	/* A pe in the way: mapped up to it, its error returned. */
	CHECK_OK(extmap_map(&m, 700, 1, 5));
	CHECK_INT(extmap_map_run(&m, 600, 1, 0, 10), -EBUSY);
	check_loc(&m, 604, 1, 4);
	check_loc(&m, 605, EXTMAP_NO_DEV, 0);
	/* Before the last run: one by one, through pages. */
	CHECK_OK(extmap_map_run(&m, 0, 1, 20, 10));
	check_loc(&m, 0, 1, 20);
	check_loc(&m, 9, 1, 29);
	CHECK_UINT(extmap_count_on_dev(&m, 1), 16);
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

/*
 * A 16 TiB pool of 4 MiB extents (tests/bench/bench-map times 1 to 200
 * TiB): a run for the whole HDD, a pointer per 64 extents, a page for each
 * group something moved in, and a decoder's pass in le order over the
 * moved map makes no more pages than that.
 */
static void test_nas_size(void)
{
	const uint32_t nr = 4194304, hdd_pe = nr + 1000, moved = 5000;
	struct extmap m, back;
	struct extmap_loc loc;
	uint32_t pe, span, n = 0;
	uint64_t pointers = (uint64_t)nr / 64 * 8, bitmaps = (uint64_t)(hdd_pe + 63) / 64 * 8 + 2048;

	init_two_devs(&m, nr, hdd_pe, 16384);
	CHECK_INT(extmap_fill_linear(&m, 0), (int)nr);
	CHECK_UINT(m.nr_runs, 1);
	CHECK_UINT(m.nr_pages, 0);
	/* Pointers, bitmaps and dirty groups: 600 KB; an entry per extent was 32 MB. */
	CHECK(extmap_bytes(&m) < pointers + bitmaps + nr / 64 / 8 + 1024);
	for (uint32_t i = 0; i < moved; i++) {
		uint32_t le = (uint32_t)((uint64_t)i * 839 % nr);

		CHECK_OK(extmap_alloc(&m, 1, &pe));
		CHECK_OK(extmap_hold(&m, le));
		CHECK_OK(extmap_release(&m, 1, pe));
		CHECK_OK(extmap_remap(&m, le, 1, pe));
	}
	CHECK_UINT(m.nr_pages, moved);
	CHECK_UINT(m.nr_runs, 1);
	CHECK_UINT(extmap_count_on_dev(&m, 1), moved);
	CHECK_OK(extmap_check(&m, NULL));

	/* What a decoder does: every le again, in order. */
	init_two_devs(&back, nr, hdd_pe, 16384);
	for (uint32_t le = 0; le < nr; le += span) {
		span = extmap_span(&m, le, UINT32_MAX, &loc);
		for (uint32_t i = 0; i < span; i++)
			CHECK_OK(extmap_map(&back, le + i, loc.dev, loc.pe + i));
		n++;
	}
	/* 64 spans of one in each page, a run between pages (le 0 moved: none before). */
	CHECK_UINT(n, moved * 64 + moved);
	CHECK(extmap_same_mapping(&m, &back));
	CHECK(back.nr_pages <= moved);
	CHECK_OK(extmap_check(&back, NULL));
	extmap_destroy(&back);
	extmap_destroy(&m);
}

/* A middle device goes: the later ones take its index, their extents with them. */
static void test_drop_dev(void)
{
	struct extmap m;

	CHECK_OK(extmap_init(&m, 6));
	CHECK_UINT(add_dev(&m, 4), 0);
	CHECK_UINT(add_dev(&m, 3), 1);
	CHECK_UINT(add_dev(&m, 5), 2);
	CHECK_OK(extmap_map(&m, 0, 0, 1));
	CHECK_OK(extmap_map(&m, 1, 2, 4));
	CHECK_OK(extmap_map(&m, 2, 1, 0));
	CHECK_OK(extmap_map(&m, 3, 2, 0));
	CHECK_INT(extmap_drop_dev(&m, 1), -EBUSY); /* le 2 is on it */
	CHECK_INT(extmap_drop_dev(&m, 3), -EINVAL);
	CHECK_OK(extmap_remap(&m, 2, 0, 3));
	CHECK_OK(extmap_drop_dev(&m, 1));
	CHECK_CONSISTENT(&m);
	CHECK_UINT(m.nr_devs, 2);
	CHECK_UINT(m.nr_pe[1], 5);
	CHECK_UINT(m.nr_free[1], 3);
	CHECK(m.used[2].leaf == NULL);
	check_loc(&m, 0, 0, 1);
	check_loc(&m, 1, 1, 4);
	check_loc(&m, 2, 0, 3);
	check_loc(&m, 3, 1, 0);
	check_loc(&m, 4, EXTMAP_NO_DEV, 0);
	/* The last one too, and the map still takes new devices after. */
	CHECK_OK(extmap_unmap(&m, 1));
	CHECK_OK(extmap_unmap(&m, 3));
	CHECK_OK(extmap_drop_dev(&m, 1));
	CHECK_CONSISTENT(&m);
	CHECK_UINT(add_dev(&m, 2), 1);
	CHECK_OK(extmap_map(&m, 1, 1, 1));
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

/* Destinations for a device's extents: lowest device first, reserves kept, or nothing. */
static void test_plan_evacuate(void)
{
	uint32_t reserve[3] = { 1, 0, 1 }, needed = 99, room = 99;
	struct extmap_dest *d = NULL;
	struct extmap m;

	CHECK_OK(extmap_init(&m, 8));
	CHECK_UINT(add_dev(&m, 4), 0);
	CHECK_UINT(add_dev(&m, 4), 1);
	CHECK_UINT(add_dev(&m, 3), 2);
	/* dev 0: le 0, 1 (2 free, 1 kept); dev 1: le 2, 3, 5, 7; dev 2: le 4 (2 free, 1 kept). */
	CHECK_OK(extmap_map(&m, 0, 0, 0));
	CHECK_OK(extmap_map(&m, 1, 0, 2));
	CHECK_OK(extmap_map(&m, 2, 1, 0));
	CHECK_OK(extmap_map(&m, 3, 1, 1));
	CHECK_OK(extmap_map(&m, 4, 2, 1));
	CHECK_OK(extmap_map(&m, 5, 1, 2));
	CHECK_OK(extmap_map(&m, 7, 1, 3));

	CHECK_INT(extmap_plan_evacuate(&m, 1, reserve, &d, &needed, &room), -ENOSPC);
	CHECK_UINT(needed, 4);
	CHECK_UINT(room, 2);
	CHECK(d == NULL);
	CHECK_UINT(m.nr_free[0], 2); /* nothing reserved */
	CHECK_UINT(m.nr_free[2], 2);

	/* Without reserves there is room: dev 0's two free pe first, then dev 2's. */
	CHECK_OK(extmap_plan_evacuate(&m, 1, NULL, &d, &needed, &room));
	CHECK_UINT(needed, 4);
	CHECK_UINT(room, 4);
	CHECK_UINT(d[0].le, 2);
	CHECK_UINT(d[0].dev, 0);
	CHECK_UINT(d[0].pe, 1);
	CHECK_UINT(d[1].le, 3);
	CHECK_UINT(d[1].dev, 0);
	CHECK_UINT(d[1].pe, 3);
	CHECK_UINT(d[2].le, 5);
	CHECK_UINT(d[2].dev, 2);
	CHECK_UINT(d[2].pe, 0);
	CHECK_UINT(d[3].le, 7);
	CHECK_UINT(d[3].dev, 2);
	CHECK_UINT(d[3].pe, 2);
	CHECK_UINT(m.nr_free[0], 0);
	CHECK_UINT(m.nr_free[2], 0);
	CHECK_CONSISTENT(&m);
	for (unsigned i = 0; i < 4; i++) {
		CHECK_OK(extmap_release(&m, d[i].dev, d[i].pe));
		CHECK_OK(extmap_remap(&m, d[i].le, d[i].dev, d[i].pe));
	}
	free(d);
	CHECK_UINT(extmap_count_on_dev(&m, 1), 0);
	CHECK_OK(extmap_drop_dev(&m, 1));
	CHECK_CONSISTENT(&m);
	check_loc(&m, 2, 0, 1);
	check_loc(&m, 4, 1, 1);
	check_loc(&m, 7, 1, 2);

	/* Nothing on the device: an empty plan. */
	CHECK_UINT(add_dev(&m, 2), 2);
	CHECK_OK(extmap_plan_evacuate(&m, 2, NULL, &d, &needed, &room));
	CHECK_UINT(needed, 0);
	free(d);
	extmap_destroy(&m);
}

/* The dirty groups, as a list, for comparing with what a test expects. */
static size_t dirty_groups(const struct extmap *m, uint32_t *out, size_t cap)
{
	size_t n = 0;

	for (uint32_t g = extmap_next_dirty(m, 0); g != UINT32_MAX; g = extmap_next_dirty(m, g + 1)) {
		CHECK(n < cap);
		out[n++] = g;
	}
	return n;
}

static void test_dirty(void)
{
	const uint32_t G = EXTMAP_DIRTY_GROUP;
	struct extmap m;
	uint32_t got[256], pe;

	init_two_devs(&m, 100 * G + 7, 100 * G, 100);
	/* A fresh map's entries are all new. */
	CHECK_UINT(dirty_groups(&m, got, 128), 101);
	extmap_dirty_clear(&m);
	CHECK_UINT(extmap_next_dirty(&m, 0), UINT32_MAX);
	CHECK_UINT(extmap_fill_linear(&m, 0), 100 * G);
	CHECK_UINT(dirty_groups(&m, got, 128), 100);
	extmap_dirty_clear(&m);

	/* A reservation changes no entry. */
	CHECK_OK(extmap_alloc(&m, 1, &pe));
	CHECK_UINT(extmap_next_dirty(&m, 0), UINT32_MAX);
	CHECK_OK(extmap_release(&m, 1, pe));
	CHECK_UINT(extmap_next_dirty(&m, 0), UINT32_MAX);
	CHECK_OK(extmap_remap(&m, 70 * G + 3, 1, pe));
	CHECK_OK(extmap_map(&m, 100 * G + 6, 1, 1));
	CHECK_OK(extmap_unmap(&m, 5));
	CHECK_UINT(dirty_groups(&m, got, 64), 3);
	CHECK_UINT(got[0], 0);
	CHECK_UINT(got[1], 70);
	CHECK_UINT(got[2], 100);
	CHECK_UINT(extmap_next_dirty(&m, 1), 70);
	CHECK_UINT(extmap_next_dirty(&m, 71), 100);
	CHECK_UINT(extmap_next_dirty(&m, 101), UINT32_MAX);
	CHECK_UINT(extmap_next_dirty(&m, 5000), UINT32_MAX);

	/* Dropping device 0 renumbers every le on device 1. */
	extmap_dirty_clear(&m);
	CHECK_OK(extmap_unmap(&m, 70 * G + 3));
	CHECK_OK(extmap_unmap(&m, 100 * G + 6));
	extmap_dirty_clear(&m);
	for (uint32_t le = 0; le < 100 * G; le++)
		if (extmap_get(&m, le).dev == 0)
			CHECK_OK(extmap_unmap(&m, le));
	CHECK_OK(extmap_map(&m, 3 * G, 1, 7));
	extmap_dirty_clear(&m);
	CHECK_OK(extmap_drop_dev(&m, 0));
	CHECK_UINT(dirty_groups(&m, got, 64), 1);
	CHECK_UINT(got[0], 3);
	check_loc(&m, 3 * G, 0, 7);

	/* Growing adds new groups; shrinking marks the group cut short and no more. */
	extmap_dirty_clear(&m);
	CHECK_OK(extmap_resize_logical(&m, 200 * G));
	CHECK_UINT(extmap_next_dirty(&m, 0), 100);
	CHECK_UINT(dirty_groups(&m, got, 128), 100);
	CHECK_OK(extmap_resize_logical(&m, 40 * G + 1));
	CHECK_UINT(dirty_groups(&m, got, 64), 1);
	CHECK_UINT(got[0], 40);
	CHECK_OK(extmap_unmap(&m, 3 * G));
	CHECK_OK(extmap_resize_logical(&m, 0));
	CHECK_UINT(extmap_next_dirty(&m, 0), UINT32_MAX);
	extmap_destroy(&m);
}

/*
 * What a migration relies on: once an extent is held and its destination
 * reserved, the remap that commits the move and the one that undoes it
 * need no memory.  On a device all used (its bitmap no leaf, its map one
 * run) freeing the source is the step that would otherwise need some.
 * Any page, leaf or pointer block made shows in extmap_bytes().
 */
static void test_held_remap_needs_no_memory(void)
{
	const uint32_t nr = 3 * BITSET_LEAF_BITS + 100;
	struct extmap m;
	unsigned hdd, ssd;

	srand(5);
	CHECK_OK(extmap_init(&m, nr));
	CHECK_OK(extmap_add_dev(&m, nr, &hdd));
	CHECK_OK(extmap_add_dev(&m, 40000, &ssd));
	CHECK_INT(extmap_fill_linear(&m, hdd), (int)nr);
	CHECK_UINT(m.used[hdd].nr_allocated, 0);
	for (unsigned k = 0; k < 300; k++) {
		uint32_t le = (uint32_t)rand() % nr, pe;
		struct extmap_loc was = extmap_get(&m, le);
		unsigned to = was.dev == hdd ? ssd : hdd;
		uint64_t bytes;

		CHECK_OK(extmap_hold(&m, le));
		if (extmap_alloc(&m, to, &pe) < 0)
			continue;
		bytes = extmap_bytes(&m);
		CHECK_OK(extmap_release(&m, to, pe));
		CHECK_OK(extmap_remap(&m, le, to, pe));
		CHECK_OK(extmap_remap(&m, le, was.dev, was.pe)); /* undone */
		CHECK_OK(extmap_remap(&m, le, to, pe));          /* and committed */
		CHECK_UINT(extmap_bytes(&m), bytes);
	}
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

int main(void)
{
	test_held_remap_needs_no_memory();
	test_dirty();
	test_lifecycle();
	test_devices();
	test_map_unmap();
	test_remap();
	test_same_mapping();
	test_alloc();
	test_resize_logical();
	test_fill_linear();
	test_check_catches_corruption();
	test_against_model();
	test_trim_runs();
	test_map_run();
	test_nas_size();
	test_drop_dev();
	test_plan_evacuate();
	test_large();
	return 0;
}
