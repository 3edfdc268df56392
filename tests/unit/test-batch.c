/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-batch: the rule that picks the moves of the next migration batch (lib/batch.c). */
#include <stdint.h>
#include <stdlib.h>

#include "batch.h"
#include "check.h"
#include "extmap.h"

/* As in a pool: device 0 is the HDD, device 1 the SSD. */
#define HDD 0
#define SSD 1
#define LOOK 4096

#define CHECK_CONSISTENT(m) CHECK_OK(extmap_check((m), NULL))

/* nr_logical extents, the first on_ssd of them on the SSD, the rest on the HDD. */
static void pool_init(struct extmap *m, uint32_t nr_logical, uint32_t hdd_pe, uint32_t ssd_pe,
		      uint32_t on_ssd)
{
	unsigned dev;

	CHECK_OK(extmap_init(m, nr_logical));
	CHECK_OK(extmap_add_dev(m, hdd_pe, &dev));
	CHECK_UINT(dev, HDD);
	CHECK_OK(extmap_add_dev(m, ssd_pe, &dev));
	CHECK_UINT(dev, SSD);
	for (uint32_t le = 0; le < on_ssd; le++)
		CHECK_OK(extmap_map(m, le, SSD, le));
	for (uint32_t le = on_ssd; le < nr_logical; le++)
		CHECK_OK(extmap_map(m, le, HDD, le - on_ssd));
	CHECK_CONSISTENT(m);
}

static void check_item(const struct batch_item *it, uint32_t le, unsigned dev, uint32_t pe)
{
	CHECK_UINT(it->le, le);
	CHECK_UINT(it->dev, dev);
	CHECK_UINT(it->pe, pe);
}

/*
 * What the caller does when a batch has moved (tierd/move/migrate.c): each
 * extent onto its destination, the reservation released first, since
 * extmap_remap() wants a free pe.
 */
static void commit(struct extmap *m, const struct batch_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		CHECK_OK(extmap_release(m, items[i].dev, items[i].pe));
		CHECK_OK(extmap_remap(m, items[i].le, items[i].dev, items[i].pe));
	}
	CHECK_CONSISTENT(m);
}

static void test_plain(void)
{
	const uint32_t reserve[2] = { 0, 0 };
	struct batch_move moves[10];
	struct batch_item items[16];
	struct extmap m;
	size_t first = 0, started = 0;

	pool_init(&m, 10, 20, 16, 0);
	for (uint32_t i = 0; i < 10; i++)
		moves[i] = (struct batch_move){ .le = i, .dev = SSD, .state = BATCH_WAITING };

	/* max 0: nothing starts, nothing changes. */
	CHECK_UINT(batch_next(&m, moves, 10, &first, reserve, NULL, 0, LOOK, items, &started), 0);
	CHECK_UINT(started, 0);
	CHECK_UINT(first, 0);
	CHECK_UINT(m.nr_free[SSD], 16);

	/* Up to max, in list order, each destination reserved in the map. */
	CHECK_UINT(batch_next(&m, moves, 10, &first, reserve, NULL, 4, LOOK, items, &started), 4);
	for (uint32_t i = 0; i < 4; i++) {
		check_item(&items[i], i, SSD, i);
		CHECK_UINT(moves[i].state, BATCH_STARTED);
	}
	CHECK_UINT(moves[4].state, BATCH_WAITING);
	CHECK_UINT(started, 4);
	CHECK_UINT(first, 4);
	CHECK_UINT(m.nr_free[SSD], 12);
	CHECK_UINT(extmap_get(&m, 0).dev, HDD); /* reserved, not moved */
	CHECK_UINT(batch_waiting(moves, 10, first), 6);

	/* The batch failed for items 1 and 3: the caller gives their destinations back. */
	commit(&m, &items[0], 1);
	commit(&m, &items[2], 1);
	CHECK_OK(extmap_release(&m, SSD, items[1].pe));
	CHECK_OK(extmap_release(&m, SSD, items[3].pe));
	CHECK_CONSISTENT(&m);
	CHECK_UINT(m.nr_free[SSD], 14);

	/* started is added to, not set; a NULL started is fine. */
	CHECK_UINT(batch_next(&m, moves, 10, &first, reserve, NULL, 16, LOOK, items, NULL), 6);
	check_item(&items[0], 4, SSD, 1); /* the lowest free pe: item 1's, given back */
	check_item(&items[1], 5, SSD, 3);
	check_item(&items[5], 9, SSD, 7);
	CHECK_UINT(started, 4);
	CHECK_UINT(first, 10);
	CHECK(!batch_pending(moves, 10, &first));
	CHECK_UINT(batch_waiting(moves, 10, first), 0);
	commit(&m, items, 6);
	CHECK_UINT(extmap_count_on_dev(&m, SSD), 8);
	extmap_destroy(&m);
}

static void test_in_place(void)
{
	const uint32_t reserve[2] = { 0, 0 };
	struct batch_move moves[5];
	struct batch_item items[16];
	struct extmap m;
	size_t first = 0, started = 0;

	/* 0 and 1 on the SSD already, 2 to 4 on the HDD; 3 is asked to stay on the HDD. */
	pool_init(&m, 5, 10, 10, 2);
	moves[0] = (struct batch_move){ .le = 0, .dev = SSD };
	moves[1] = (struct batch_move){ .le = 2, .dev = SSD };
	moves[2] = (struct batch_move){ .le = 1, .dev = SSD };
	moves[3] = (struct batch_move){ .le = 3, .dev = HDD };
	moves[4] = (struct batch_move){ .le = 4, .dev = SSD };
	CHECK_UINT(batch_next(&m, moves, 5, &first, reserve, NULL, 16, LOOK, items, &started), 2);
	check_item(&items[0], 2, SSD, 2);
	check_item(&items[1], 4, SSD, 3);
	/* In place: started and counted, but not in the batch and nothing reserved. */
	for (size_t i = 0; i < 5; i++)
		CHECK_UINT(moves[i].state, BATCH_STARTED);
	CHECK_UINT(started, 5);
	CHECK_UINT(first, 5);
	CHECK_UINT(m.nr_free[SSD], 6);
	CHECK_UINT(m.nr_free[HDD], 7);
	commit(&m, items, 2);
	extmap_destroy(&m);

	/* Only moves in place: no batch, nothing left waiting. */
	pool_init(&m, 3, 10, 10, 3);
	first = started = 0;
	for (uint32_t i = 0; i < 3; i++)
		moves[i] = (struct batch_move){ .le = i, .dev = SSD };
	CHECK_UINT(batch_next(&m, moves, 3, &first, reserve, NULL, 16, LOOK, items, &started), 0);
	CHECK_UINT(started, 3);
	CHECK(!batch_pending(moves, 3, &first));
	extmap_destroy(&m);
}

/* A move may use a device's swap reserve only to make room on the other tier. */
static void test_reserve(void)
{
	uint32_t reserve[2] = { 0, 2 };
	struct batch_move moves[6];
	struct batch_item items[16];
	struct extmap m;
	size_t first = 0, started = 0;

	/* SSD of 4 extents, 2 used (0, 1): its 2 free are its reserve. */
	pool_init(&m, 6, 10, 4, 2);
	moves[0] = (struct batch_move){ .le = 2, .dev = SSD };
	moves[1] = (struct batch_move){ .le = 0, .dev = HDD };
	moves[2] = (struct batch_move){ .le = 3, .dev = SSD };
	moves[3] = (struct batch_move){ .le = 1, .dev = HDD };
	moves[4] = (struct batch_move){ .le = 4, .dev = SSD };
	moves[5] = (struct batch_move){ .le = 5, .dev = SSD };

	/* Promotions wait; the demotions fill the HDD (reserve 0). */
	CHECK_UINT(batch_next(&m, moves, 6, &first, reserve, NULL, 16, LOOK, items, &started), 2);
	check_item(&items[0], 0, HDD, 4);
	check_item(&items[1], 1, HDD, 5);
	CHECK_UINT(moves[0].state, BATCH_WAITING);
	CHECK_UINT(moves[2].state, BATCH_WAITING);
	CHECK_UINT(first, 0);
	CHECK_UINT(started, 2);
	CHECK_UINT(m.nr_free[SSD], 2);
	/* The demotions commit: the SSD has 4 free, 2 above its reserve. */
	commit(&m, items, 2);
	CHECK_UINT(m.nr_free[SSD], 4);
	CHECK_UINT(batch_next(&m, moves, 6, &first, reserve, NULL, 16, LOOK, items, &started), 2);
	check_item(&items[0], 2, SSD, 0);
	check_item(&items[1], 3, SSD, 1);
	CHECK_UINT(first, 4);
	CHECK_UINT(m.nr_free[SSD], 2);
	commit(&m, items, 2);
	/* Down to its reserve: the rest waits, and the reserve stays free. */
	CHECK_UINT(batch_next(&m, moves, 6, &first, reserve, NULL, 16, LOOK, items, &started), 0);
	CHECK_UINT(batch_waiting(moves, 6, first), 2);
	CHECK_UINT(m.nr_free[SSD], 2);

	/* One extent above the reserve: one more promotion. */
	reserve[SSD] = 1;
	CHECK_UINT(batch_next(&m, moves, 6, &first, reserve, NULL, 16, LOOK, items, &started), 1);
	check_item(&items[0], 4, SSD, 2);
	CHECK_UINT(first, 5);
	/* No reserve (an HDD, or a detach): the last free extent goes too. */
	reserve[SSD] = 0;
	CHECK_UINT(batch_next(&m, moves, 6, &first, reserve, NULL, 16, LOOK, items + 1, &started), 1);
	check_item(&items[1], 5, SSD, 3);
	CHECK_UINT(m.nr_free[SSD], 0);
	CHECK_UINT(started, 6);
	commit(&m, items, 2);
	CHECK(!batch_pending(moves, 6, &first));
	extmap_destroy(&m);
}

/* A full SSD and one free HDD extent: each commit frees the room the next move waits for. */
static void test_swap(void)
{
	const uint32_t reserve[2] = { 0, 0 };
	struct batch_move moves[4] = {
		{ .le = 0, .dev = HDD }, /* the planner's order: demotion, then promotion */
		{ .le = 2, .dev = SSD },
		{ .le = 1, .dev = HDD },
		{ .le = 3, .dev = SSD },
	};
	struct batch_item items[16];
	struct extmap m;
	size_t first = 0, started = 0;

	/* SSD of 2, both used by 0 and 1; HDD of 3, 2 used by 2 and 3. */
	pool_init(&m, 4, 3, 2, 2);
	CHECK_UINT(m.nr_free[SSD], 0);
	CHECK_UINT(m.nr_free[HDD], 1);

	/* The demotion alone: the promotion's room is not free until the demotion commits. */
	CHECK_UINT(batch_next(&m, moves, 4, &first, reserve, NULL, 16, LOOK, items, &started), 1);
	check_item(&items[0], 0, HDD, 2);
	CHECK_UINT(first, 1);
	CHECK_UINT(batch_waiting(moves, 4, first), 3);
	commit(&m, items, 1);
	CHECK_UINT(extmap_get(&m, 0).dev, HDD);

	/* The promotion into the extent 0 left; the HDD is full until it commits. */
	CHECK_UINT(batch_next(&m, moves, 4, &first, reserve, NULL, 16, LOOK, items, &started), 1);
	check_item(&items[0], 2, SSD, 0);
	CHECK_UINT(first, 2);
	commit(&m, items, 1);

	CHECK_UINT(batch_next(&m, moves, 4, &first, reserve, NULL, 16, LOOK, items, &started), 1);
	check_item(&items[0], 1, HDD, 0);
	commit(&m, items, 1);
	CHECK_UINT(batch_next(&m, moves, 4, &first, reserve, NULL, 16, LOOK, items, &started), 1);
	check_item(&items[0], 3, SSD, 1);
	commit(&m, items, 1);

	CHECK_UINT(started, 4);
	CHECK(!batch_pending(moves, 4, &first));
	CHECK_UINT(extmap_get(&m, 2).dev, SSD);
	CHECK_UINT(extmap_get(&m, 3).dev, SSD);
	CHECK_UINT(extmap_count_on_dev(&m, HDD), 2);
	extmap_destroy(&m);
}

static void test_lookahead(void)
{
	const uint32_t reserve[2] = { 0, 0 };
	struct batch_move moves[8];
	struct batch_item items[16];
	struct extmap m;
	size_t first = 0, started = 0;

	pool_init(&m, 8, 16, 16, 0);
	for (uint32_t i = 0; i < 8; i++)
		moves[i] = (struct batch_move){ .le = i, .dev = SSD };
	CHECK_UINT(batch_next(&m, moves, 8, &first, reserve, NULL, 16, 3, items, &started), 3);
	check_item(&items[2], 2, SSD, 2);
	CHECK_UINT(moves[3].state, BATCH_WAITING);
	commit(&m, items, 3);

	/* Started moves are passed over without counting; waiting ones that do not fit count. */
	moves[4].state = BATCH_STARTED;
	moves[5].state = BATCH_STARTED;
	moves[3].dev = 7; /* no such device: never fits */
	CHECK_UINT(batch_next(&m, moves, 8, &first, reserve, NULL, 16, 2, items, &started), 1);
	check_item(&items[0], 6, SSD, 3);
	CHECK_UINT(moves[3].state, BATCH_WAITING);
	CHECK_UINT(moves[7].state, BATCH_WAITING);
	CHECK_UINT(first, 3);
	commit(&m, items, 1);

	/* So do moves found in place: two of them use up a lookahead of 2. */
	moves[3] = (struct batch_move){ .le = 0, .dev = SSD };
	moves[6] = (struct batch_move){ .le = 1, .dev = SSD };
	first = 0;
	started = 0;
	CHECK_UINT(batch_next(&m, moves, 8, &first, reserve, NULL, 16, 2, items, &started), 0);
	CHECK_UINT(started, 2);
	CHECK_UINT(first, 7);
	CHECK_UINT(batch_next(&m, moves, 8, &first, reserve, NULL, 16, 2, items, &started), 1);
	check_item(&items[0], 7, SSD, 4);
	CHECK_UINT(started, 3);
	commit(&m, items, 1);
	/* Lookahead 0 looks at nothing. */
	moves[7].state = BATCH_WAITING;
	first = 0;
	CHECK_UINT(batch_next(&m, moves, 8, &first, reserve, NULL, 16, 0, items, &started), 0);
	CHECK_UINT(first, 7);
	extmap_destroy(&m);
}

static void test_first_waiting(void)
{
	const uint32_t reserve[2] = { 0, 0 };
	struct batch_move moves[6];
	struct batch_item items[16];
	struct extmap m;
	size_t first = 0, started = 0;

	pool_init(&m, 6, 16, 1, 0);
	for (uint32_t i = 0; i < 6; i++)
		moves[i] = (struct batch_move){ .le = i, .dev = HDD + (i & 1) };
	moves[0].state = BATCH_STARTED;
	moves[2].state = BATCH_STARTED;
	/* Advanced past started moves, and no further. */
	CHECK(batch_pending(moves, 6, &first));
	CHECK_UINT(first, 1);
	moves[1].state = BATCH_STARTED;
	CHECK(batch_pending(moves, 6, &first));
	CHECK_UINT(first, 3);

	/* 3 is promoted into the SSD's only extent, 4 stays in place, 5 waits for room. */
	CHECK_UINT(batch_next(&m, moves, 6, &first, reserve, NULL, 16, LOOK, items, &started), 1);
	check_item(&items[0], 3, SSD, 0);
	CHECK_UINT(started, 2);
	CHECK_UINT(first, 5); /* stops at the first move still waiting */
	CHECK_UINT(batch_waiting(moves, 6, 0), 1);
	commit(&m, items, 1);

	/* Past the end: nothing. */
	moves[5].state = BATCH_STARTED;
	CHECK_UINT(batch_next(&m, moves, 6, &first, reserve, NULL, 16, LOOK, items, &started), 0);
	CHECK_UINT(first, 6);
	CHECK(!batch_pending(moves, 6, &first));
	first = 9;
	CHECK_UINT(batch_next(&m, moves, 6, &first, reserve, NULL, 16, LOOK, items, &started), 0);
	CHECK_UINT(first, 9);
	CHECK_UINT(batch_waiting(moves, 6, first), 0);
	CHECK_UINT(started, 2);
	extmap_destroy(&m);
}

static void test_nothing_fits(void)
{
	/* Exactly nr_devs entries: a device out of range must not be looked up. */
	const uint32_t reserve[2] = { 0, 1 };
	struct batch_move moves[4] = {
		{ .le = 2, .dev = SSD },
		{ .le = 3, .dev = SSD },
		{ .le = 0, .dev = HDD },
		{ .le = 1, .dev = EXTMAP_MAX_DEVS - 1 },
	};
	struct batch_item items[16];
	struct extmap m;
	size_t first = 0, started = 0;

	/* The SSD has one free extent, its reserve; the HDD none. */
	pool_init(&m, 4, 2, 3, 2);
	CHECK_UINT(m.nr_free[SSD], 1);
	CHECK_UINT(m.nr_free[HDD], 0);
	CHECK_UINT(batch_next(&m, moves, 4, &first, reserve, NULL, 16, LOOK, items, &started), 0);
	for (size_t i = 0; i < 4; i++)
		CHECK_UINT(moves[i].state, BATCH_WAITING);
	CHECK_UINT(started, 0);
	CHECK_UINT(first, 0);
	CHECK(batch_pending(moves, 4, &first));
	CHECK_UINT(batch_waiting(moves, 4, first), 4);
	/* Nothing reserved. */
	CHECK_UINT(m.nr_free[SSD], 1);
	CHECK_UINT(m.nr_free[HDD], 0);
	CHECK_CONSISTENT(&m);
	extmap_destroy(&m);
}

/*
 * A budget of table targets: the batch stops taking moves that would pass
 * it, counts them held, still takes moves that add none, and says how many
 * targets the table has after the batch, which is what the map then has.
 */
static void test_table_budget(void)
{
	const uint32_t reserve[2] = { 0, 0 };
	struct batch_move moves[7];
	struct batch_item items[16];
	struct batch_table table;
	size_t first = 0;
	struct extmap m;

	/* 20 extents on the HDD: one target. A lone promotion adds two. */
	pool_init(&m, 20, 32, 8, 0);
	CHECK_UINT(extmap_runs(&m), 1);
	moves[0] = (struct batch_move){ .le = 3, .dev = SSD };  /* 1 + 2 */
	moves[1] = (struct batch_move){ .le = 10, .dev = SSD }; /* 3 + 2 > 4: waits */
	moves[2] = (struct batch_move){ .le = 4, .dev = SSD };  /* continues le 3 on the SSD: + 0 */
	moves[3] = (struct batch_move){ .le = 15, .dev = SSD }; /* waits */
	moves[4] = (struct batch_move){ .le = 19, .dev = SSD }; /* the last extent: + 1 */
	table = (struct batch_table){ .targets = extmap_runs(&m), .max_targets = 4 };
	CHECK_UINT(batch_next(&m, moves, 5, &first, reserve, &table, 16, LOOK, items, NULL), 3);
	check_item(&items[0], 3, SSD, 0);
	check_item(&items[1], 4, SSD, 1);
	check_item(&items[2], 19, SSD, 2);
	CHECK_UINT(table.held, 2);
	CHECK_UINT(table.targets, 4);
	CHECK_UINT(moves[1].state, BATCH_WAITING);
	CHECK_UINT(moves[3].state, BATCH_WAITING);
	commit(&m, items, 3);
	CHECK_UINT(extmap_runs(&m), 4);

	/*
	 * A limit lowered below the table: a move that adds no target still
	 * starts (le 19 to the HDD's lowest free pe, 3: a run for a run), one
	 * that adds some waits.
	 */
	moves[5] = (struct batch_move){ .le = 19, .dev = HDD };
	moves[6] = (struct batch_move){ .le = 12, .dev = SSD };
	first = 5;
	table = (struct batch_table){ .targets = extmap_runs(&m), .max_targets = 2 };
	CHECK_UINT(batch_next(&m, moves, 7, &first, reserve, &table, 16, LOOK, items, NULL), 1);
	check_item(&items[0], 19, HDD, 3);
	CHECK_UINT(table.held, 1);
	CHECK_UINT(table.targets, 4);
	commit(&m, items, 1);
	CHECK_UINT(extmap_runs(&m), 4);

	/* Without a limit the table still counts: le 12 splits the HDD's run. */
	first = 6;
	table = (struct batch_table){ .targets = extmap_runs(&m) };
	CHECK_UINT(batch_next(&m, moves, 7, &first, reserve, &table, 16, LOOK, items, NULL), 1);
	CHECK_UINT(table.targets, 6);
	commit(&m, items, 1);
	CHECK_UINT(extmap_runs(&m), 6);
	extmap_destroy(&m);
}

/*
 * Random maps and moves: whatever the batch takes, the map's runs after
 * its commit are what table.targets said, within the limit, or no more
 * than before for a table that was past it.
 */
static void test_table_budget_random(void)
{
	const uint32_t reserve[2] = { 0, 0 };
	struct batch_move moves[48];
	struct batch_item items[64];
	unsigned seed = 7;

	for (int round = 0; round < 300; round++) {
		struct batch_table table;
		uint32_t before;
		size_t first = 0, n;
		struct extmap m;

		pool_init(&m, 200, 260, 80, (uint32_t)(rand_r(&seed) % 30));
		for (size_t i = 0; i < 48; i++) {
			moves[i] = (struct batch_move){ .le = (uint32_t)(rand_r(&seed) % 200),
							.dev = (uint16_t)(rand_r(&seed) % 2) };
			/* One move per le in a list, as the planner makes them. */
			for (size_t j = 0; j < i; j++)
				if (moves[j].le == moves[i].le)
					moves[i].state = BATCH_STARTED;
		}
		before = extmap_runs(&m);
		table = (struct batch_table){ .targets = before,
					      .max_targets = 1 + (uint32_t)(rand_r(&seed) % 40) };
		n = batch_next(&m, moves, 48, &first, reserve, &table, 64, LOOK, items, NULL);
		commit(&m, items, n);
		CHECK_UINT(extmap_runs(&m), table.targets);
		CHECK(table.targets <= (before > table.max_targets ? before : table.max_targets));
		extmap_destroy(&m);
	}
}

/* Held copies keep near their target: shrink at once, grow by doubling at most. */
static void test_held_pieces(void)
{
	const uint64_t ms = 1000000;

	CHECK_UINT(batch_held_pieces(64, 64, 18 * ms, 20 * ms, 4, 64), 64);
	/* 64 in 80 ms (a slow array): 16 fit in 20 ms. */
	CHECK_UINT(batch_held_pieces(64, 64, 80 * ms, 20 * ms, 4, 64), 16);
	/* Then 16 in 10 ms: 32 would fit; no more than twice 16. */
	CHECK_UINT(batch_held_pieces(16, 16, 10 * ms, 20 * ms, 4, 64), 32);
	CHECK_UINT(batch_held_pieces(16, 16, 1 * ms, 20 * ms, 4, 64), 32);
	/* Never below lo, however slow. */
	CHECK_UINT(batch_held_pieces(16, 16, 2000 * ms, 20 * ms, 4, 64), 4);
	/*
	 * A job's last batch of 3 pieces within the target keeps the size: its
	 * time is what any copy costs. In the VM, 3 pieces in about 8 ms made
	 * the next 7, and five batches doubled back to 224. Past half the
	 * target it shrinks the next.
	 */
	CHECK_UINT(batch_held_pieces(64, 3, 1 * ms, 20 * ms, 4, 64), 64);
	CHECK_UINT(batch_held_pieces(64, 3, 10 * ms, 20 * ms, 4, 64), 64);
	CHECK_UINT(batch_held_pieces(256, 3, 8 * ms, 20 * ms, 4, 256), 256);
	CHECK_UINT(batch_held_pieces(64, 3, 30 * ms, 20 * ms, 4, 64), 4);
	CHECK_UINT(batch_held_pieces(8, 3, 1 * ms, 20 * ms, 4, 64), 8);
	/* A quarter of cur or more is timed as any batch, and so is a copy near the target. */
	CHECK_UINT(batch_held_pieces(64, 16, 10 * ms, 20 * ms, 4, 64), 32);
	CHECK_UINT(batch_held_pieces(256, 60, 19 * ms, 20 * ms, 4, 256), 63);
	/* No copy, or one too quick to time. */
	CHECK_UINT(batch_held_pieces(40, 0, 0, 20 * ms, 4, 64), 40);
	CHECK_UINT(batch_held_pieces(100, 0, 0, 20 * ms, 4, 64), 64);
	CHECK_UINT(batch_held_pieces(8, 8, 0, 20 * ms, 4, 64), 16);
}

/*
 * The copy's target: 20 ms where the rest of the stall is short (no disk
 * latency), a quarter of that rest where it is long (a commit to slow
 * disks, the resume of a table with thousands of pieces out).
 */
static void test_held_target(void)
{
	const uint64_t ms = 1000000;

	CHECK_UINT(batch_held_target(30 * ms, 10 * ms, 20 * ms, 4), 20 * ms);
	CHECK_UINT(batch_held_target(94 * ms, 14 * ms, 20 * ms, 4), 20 * ms);
	CHECK_UINT(batch_held_target(190 * ms, 14 * ms, 20 * ms, 4), 44 * ms);
	/* Not measured (a copy timed longer than the stall) or no share: the floor. */
	CHECK_UINT(batch_held_target(0, 14 * ms, 20 * ms, 4), 20 * ms);
	CHECK_UINT(batch_held_target(190 * ms, 14 * ms, 20 * ms, 0), 20 * ms);
	/* At 190 ms of stall, 64 pieces in 14 ms: the next batch may double, then reach 201. */
	CHECK_UINT(batch_held_pieces(64, 64, 14 * ms,
				     batch_held_target(190 * ms, 14 * ms, 20 * ms, 4), 4, 256),
		   128);
	CHECK_UINT(batch_held_pieces(128, 128, 28 * ms,
				     batch_held_target(204 * ms, 28 * ms, 20 * ms, 4), 4, 256),
		   201);
}

int main(void)
{
	test_plain();
	test_in_place();
	test_reserve();
	test_swap();
	test_lookahead();
	test_first_waiting();
	test_nothing_fits();
	test_held_pieces();
	test_held_target();
	test_table_budget();
	test_table_budget_random();
	return 0;
}
