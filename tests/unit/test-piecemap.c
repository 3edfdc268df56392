/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "piecemap.h"

static void test_init(void)
{
	struct piecemap pm;

	CHECK_INT(piecemap_init(&pm, 0), -EINVAL);
	CHECK_INT(piecemap_init(&pm, 1), -EINVAL);
	CHECK_INT(piecemap_init(&pm, 96), -EINVAL);
	CHECK_INT(piecemap_init(&pm, PIECEMAP_MAX_PIECES_PER_EXTENT * 2), -EINVAL);
	CHECK_INT(piecemap_init(NULL, 256), -EINVAL);
	CHECK_OK(piecemap_init(&pm, PIECEMAP_MAX_PIECES_PER_EXTENT));
	piecemap_destroy(&pm);
	CHECK_OK(piecemap_init(&pm, 256));
	CHECK_UINT(piecemap_next_split(&pm, 0), UINT32_MAX);
	CHECK_INT(piecemap_find(&pm, 0, 0, NULL, NULL), -ENOENT);
	CHECK_INT(piecemap_check(&pm, NULL), 0);
	piecemap_destroy(&pm);
	piecemap_destroy(&pm);
	piecemap_destroy(NULL);
	/* Zeroed: no pieces, consistent; the queries take NULL as empty. */
	CHECK_OK(piecemap_check(&pm, NULL));
	pm.nr_pieces = 1;
	CHECK_INT(piecemap_check(&pm, NULL), -EUCLEAN);
	memset(&pm, 0, sizeof(pm));
	CHECK_INT(piecemap_check(NULL, NULL), -EINVAL);
	CHECK_UINT(piecemap_next_split(NULL, 0), UINT32_MAX);
	CHECK_UINT(piecemap_extent(NULL, 0, NULL), 0);
	CHECK_INT(piecemap_find(NULL, 0, 0, NULL, NULL), -EINVAL);
	CHECK_UINT(piecemap_container_at(NULL, 0, 0), PIECEMAP_NO_CONTAINER);
	CHECK_UINT(piecemap_bytes(NULL), 0);
}

static void test_slots_and_pieces(void)
{
	struct piecemap pm;
	uint32_t c0, c1, c, first;
	uint16_t s;

	CHECK_OK(piecemap_init(&pm, 4));
	CHECK_INT(piecemap_alloc_slot(&pm, 1, &c, &s), -ENOSPC);
	CHECK_OK(piecemap_add_container(&pm, 1, 10, &c0));
	CHECK_INT(piecemap_add_container(&pm, 1, 10, NULL), -EEXIST);
	CHECK_OK(piecemap_add_container(&pm, 1, 11, &c1));
	CHECK_UINT(c0, 0);
	CHECK_UINT(c1, 1);
	CHECK_UINT(piecemap_container_at(&pm, 1, 11), 1);
	CHECK_UINT(piecemap_container_at(&pm, 0, 11), PIECEMAP_NO_CONTAINER);

	/* Lowest slot of the first container with room, then the next container. */
	for (unsigned i = 0; i < 4; i++) {
		CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
		CHECK_UINT(c, 0);
		CHECK_UINT(s, i);
	}
	CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
	CHECK_UINT(c, 1);
	CHECK_UINT(s, 0);
	CHECK_INT(piecemap_alloc_slot(&pm, 0, &c, &s), -ENOSPC);
	CHECK_OK(piecemap_release_slot(&pm, 0, 2));
	CHECK_INT(piecemap_release_slot(&pm, 0, 2), -ENOENT);
	CHECK_INT(piecemap_release_slot(&pm, 0, 4), -EINVAL);
	CHECK_INT(piecemap_release_slot(&pm, 2, 0), -EINVAL);

	/* Pieces out: sorted by le and piece whatever the order they came in. */
	CHECK_INT(piecemap_place(&pm, 7, 1, 0, 2), -ENOENT); /* slot not reserved */
	CHECK_INT(piecemap_place(&pm, 7, 4, 0, 1), -EINVAL); /* no piece 4 of 4 */
	CHECK_OK(piecemap_place(&pm, 7, 3, 0, 0));
	CHECK_OK(piecemap_place(&pm, 5, 2, 0, 1));
	CHECK_OK(piecemap_place(&pm, 7, 0, 0, 3));
	CHECK_UINT(pm.nr_pieces, 3);
	CHECK_UINT(piecemap_next_split(&pm, 0), 5);
	CHECK_UINT(piecemap_next_split(&pm, 6), 7);
	CHECK_UINT(piecemap_next_split(&pm, 8), UINT32_MAX);
	CHECK_UINT(piecemap_extent(&pm, 7, &first), 2);
	CHECK_UINT(first, 1);
	CHECK_UINT(pm.pieces[1].idx, 0);
	CHECK_UINT(pm.pieces[2].idx, 3);
	CHECK_UINT(piecemap_extent(&pm, 6, &first), 0);
	CHECK_UINT(first, 1);
	CHECK_OK(piecemap_find(&pm, 7, 3, &c, &s));
	CHECK_UINT(c, 0);
	CHECK_UINT(s, 0);
	CHECK_INT(piecemap_find(&pm, 7, 2, &c, &s), -ENOENT);
	CHECK_OK(piecemap_check(&pm, NULL));

	/* A piece moving on frees the slot it leaves. */
	CHECK_INT(piecemap_place(&pm, 7, 3, 0, 0), -EINVAL);
	CHECK_OK(piecemap_place(&pm, 7, 3, 1, 0));
	CHECK_UINT(pm.containers[0].nr_used, 2);
	CHECK_INT(piecemap_remove_container(&pm, 1), -EBUSY);
	CHECK_OK(piecemap_return(&pm, 7, 3));
	CHECK_INT(piecemap_return(&pm, 7, 3), -ENOENT);
	CHECK_UINT(pm.containers[1].nr_used, 0);
	CHECK_OK(piecemap_check(&pm, NULL));

	/* Removing a container renumbers the pieces of those after it. */
	CHECK_OK(piecemap_add_container(&pm, 1, 12, &c));
	CHECK_UINT(c, 2);
	CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s)); /* the room left in c0 first */
	CHECK_UINT(c * 4 + s, 0);
	CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
	CHECK_UINT(c * 4 + s, 2);
	for (unsigned i = 0; i < 4; i++) {
		CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
		CHECK_UINT(c * 4 + s, 4 + i);
	}
	CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
	CHECK_UINT(c * 4 + s, 8);
	CHECK_OK(piecemap_place(&pm, 9, 1, 2, s));
	for (unsigned i = 0; i < 4; i++)
		CHECK_OK(piecemap_release_slot(&pm, 1, (uint16_t)i));
	CHECK_OK(piecemap_remove_container(&pm, 1));
	CHECK_UINT(pm.nr_containers, 2);
	CHECK_OK(piecemap_find(&pm, 9, 1, &c, &s));
	CHECK_UINT(c, 1);
	CHECK_UINT(pm.containers[1].pe, 12);
	CHECK_OK(piecemap_check(&pm, NULL));
	CHECK(piecemap_bytes(&pm) >= 3 * sizeof(struct piecemap_piece));
	piecemap_destroy(&pm);
}

/* Each fault piecemap_check() is there to find, on a good map. */
static void test_check(void)
{
	struct piecemap pm;
	uint32_t c, bad;
	uint16_t s;

	CHECK_OK(piecemap_init(&pm, 128));
	CHECK_OK(piecemap_add_container(&pm, 1, 3, NULL));
	for (unsigned i = 0; i < 3; i++) {
		CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
		CHECK_OK(piecemap_place(&pm, 4, 10 * i, c, s));
	}
	CHECK_OK(piecemap_check(&pm, &bad));

	pm.pieces[2].slot = pm.pieces[1].slot; /* two pieces, one slot */
	CHECK_INT(piecemap_check(&pm, &bad), -EUCLEAN);
	CHECK_UINT(bad, 2);
	pm.pieces[2].slot = 2;
	pm.pieces[1].idx = 0; /* not sorted */
	CHECK_INT(piecemap_check(&pm, &bad), -EUCLEAN);
	CHECK_UINT(bad, 1);
	pm.pieces[1].idx = 10;
	pm.pieces[1].slot = 100; /* a slot not marked used */
	CHECK_INT(piecemap_check(&pm, &bad), -EUCLEAN);
	CHECK_UINT(bad, 1);
	pm.pieces[1].slot = 1;
	pm.pieces[0].container = 1;
	CHECK_INT(piecemap_check(&pm, &bad), -EUCLEAN);
	CHECK_UINT(bad, 0);
	pm.pieces[0].container = 0;
	pm.containers[0].nr_used = 2;
	CHECK_INT(piecemap_check(&pm, &bad), -EUCLEAN);
	CHECK_UINT(bad, UINT32_MAX);
	pm.containers[0].nr_used = 3;
	pm.containers[0].used[1] |= UINT64_C(1) << 63;
	pm.containers[0].nr_used = 4;
	CHECK_OK(piecemap_check(&pm, &bad)); /* reserved: used and no piece is fine */
	CHECK_OK(piecemap_add_container(&pm, 1, 4, NULL));
	pm.containers[1].pe = 3;
	CHECK_INT(piecemap_check(&pm, &bad), -EUCLEAN);
	CHECK_UINT(bad, UINT32_MAX);
	piecemap_destroy(&pm);

	/* Bits past the last slot of a container smaller than a word. */
	CHECK_OK(piecemap_init(&pm, 16));
	CHECK_OK(piecemap_add_container(&pm, 0, 0, NULL));
	pm.containers[0].used[0] = UINT64_C(1) << 16;
	pm.containers[0].nr_used = 1;
	CHECK_INT(piecemap_check(&pm, &bad), -EUCLEAN);
	piecemap_destroy(&pm);
}

/*
 * Random places, moves, returns and releases against a plain model of
 * every piece of every extent: where each piece is, how many slots each
 * container has used, and the map's own check after every step.
 */
#define MODEL_LE 40u
#define MODEL_PIECES 64u
#define MODEL_CONTAINERS 5u

static void check_against_model(const struct piecemap *pm,
				 const uint32_t model[MODEL_LE][MODEL_PIECES],
				 const uint32_t reserved[MODEL_CONTAINERS])
{
	uint32_t nr = 0;

	CHECK_OK(piecemap_check(pm, NULL));
	for (uint32_t le = 0; le < MODEL_LE; le++) {
		uint32_t first, n = piecemap_extent(pm, le, &first);
		uint32_t out = 0;

		for (uint32_t i = 0; i < MODEL_PIECES; i++) {
			uint32_t c;
			uint16_t s;
			int ret = piecemap_find(pm, le, i, &c, &s);

			if (model[le][i] == UINT32_MAX) {
				CHECK_INT(ret, -ENOENT);
				continue;
			}
			CHECK_OK(ret);
			CHECK_UINT(c * MODEL_PIECES + s, model[le][i]);
			out++;
		}
		CHECK_UINT(n, out);
		nr += out;
	}
	CHECK_UINT(pm->nr_pieces, nr);
	for (uint32_t c = 0; c < MODEL_CONTAINERS; c++) {
		uint32_t used = reserved[c];

		for (uint32_t le = 0; le < MODEL_LE; le++)
			for (uint32_t i = 0; i < MODEL_PIECES; i++)
				used += model[le][i] / MODEL_PIECES == c;
		CHECK_UINT(pm->containers[c].nr_used, used);
	}
}

static void test_random_against_model(void)
{
	static uint32_t model[MODEL_LE][MODEL_PIECES];
	uint32_t reserved[MODEL_CONTAINERS] = { 0 };
	uint32_t held[8], nr_held = 0;
	struct piecemap pm;

	srand(7);
	memset(model, 0xff, sizeof(model));
	CHECK_OK(piecemap_init(&pm, MODEL_PIECES));
	for (uint32_t c = 0; c < MODEL_CONTAINERS; c++)
		CHECK_OK(piecemap_add_container(&pm, (uint16_t)(c % 2), 100 + c, NULL));
	for (unsigned step = 0; step < 20000; step++) {
		uint32_t le = (uint32_t)rand() % MODEL_LE, idx = (uint32_t)rand() % MODEL_PIECES;
		uint32_t c;
		uint16_t s;
		int op = rand() % 4;

		if (op <= 1 && nr_held < 8) {
			/* Reserve a destination and either use it or keep it reserved a while. */
			int ret = piecemap_alloc_slot(&pm, (uint16_t)(rand() % 2), &c, &s);

			if (ret == -ENOSPC)
				continue;
			CHECK_OK(ret);
			if (op == 0) {
				CHECK_OK(piecemap_place(&pm, le, idx, c, s));
				model[le][idx] = c * MODEL_PIECES + s;
			} else {
				held[nr_held++] = c * MODEL_PIECES + s;
				reserved[c]++;
			}
		} else if (op == 2) {
			CHECK_INT(piecemap_return(&pm, le, idx),
				  model[le][idx] == UINT32_MAX ? -ENOENT : 0);
			model[le][idx] = UINT32_MAX;
		} else if (nr_held) {
			uint32_t h = held[--nr_held];

			CHECK_OK(piecemap_release_slot(&pm, h / MODEL_PIECES,
						       (uint16_t)(h % MODEL_PIECES)));
			reserved[h / MODEL_PIECES]--;
		}
		if (step % 97 == 0)
			check_against_model(&pm, model, reserved);
	}
	check_against_model(&pm, model, reserved);
	piecemap_destroy(&pm);
}

/* Reserved room makes the next places of new pieces need no memory. */
static void test_reserve(void)
{
	struct piecemap pm;
	uint32_t c;
	uint16_t s;
	struct piecemap_piece *before;

	CHECK_OK(piecemap_init(&pm, 256));
	CHECK_OK(piecemap_add_container(&pm, 1, 0, NULL));
	CHECK_OK(piecemap_reserve(&pm, 200));
	CHECK(pm.pieces_cap >= 200);
	before = pm.pieces;
	for (uint32_t i = 0; i < 200; i++) {
		CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
		CHECK_OK(piecemap_place(&pm, 199 - i, 0, c, s));
	}
	CHECK(pm.pieces == before);
	CHECK_INT(piecemap_reserve(&pm, UINT32_MAX), -ENOSPC);
	CHECK_OK(piecemap_check(&pm, NULL));
	piecemap_destroy(&pm);
}

/* Two maps built alike, then each way they can differ. */
static void build_same(struct piecemap *pm, uint32_t ppe)
{
	uint32_t c;
	uint16_t s;

	CHECK_OK(piecemap_init(pm, ppe));
	CHECK_OK(piecemap_add_container(pm, 1, 7, NULL));
	CHECK_OK(piecemap_add_container(pm, 1, 9, NULL));
	for (uint32_t le = 0; le < 3; le++) {
		CHECK_OK(piecemap_alloc_slot(pm, 1, &c, &s));
		CHECK_OK(piecemap_place(pm, le * 5, le, c, s));
	}
}

static void test_same_placement(void)
{
	struct piecemap a, b, empty4, empty8;
	uint32_t c;
	uint16_t s;

	CHECK_OK(piecemap_init(&empty4, 4));
	CHECK_OK(piecemap_init(&empty8, 8));
	/* Nothing out is nothing out, whatever the piece size, and NULL is that. */
	CHECK(piecemap_same_placement(&empty4, &empty8));
	CHECK(piecemap_same_placement(NULL, &empty8));
	CHECK(piecemap_same_placement(NULL, NULL));
	build_same(&a, 4);
	build_same(&b, 4);
	CHECK(piecemap_same_placement(&a, &b));
	CHECK(!piecemap_same_placement(&a, NULL));
	CHECK(!piecemap_same_placement(&empty4, &a));
	/* A piece in another slot. */
	CHECK_OK(piecemap_alloc_slot(&b, 1, &c, &s));
	CHECK_OK(piecemap_place(&b, 10, 2, c, s));
	CHECK(!piecemap_same_placement(&a, &b));
	piecemap_destroy(&b);
	/* Another piece out in the same slot count. */
	build_same(&b, 4);
	CHECK_OK(piecemap_return(&b, 10, 2));
	CHECK_OK(piecemap_alloc_slot(&b, 1, &c, &s));
	CHECK_OK(piecemap_place(&b, 10, 3, c, s));
	CHECK(!piecemap_same_placement(&a, &b));
	piecemap_destroy(&b);
	/* Another piece size. */
	build_same(&b, 8);
	CHECK(!piecemap_same_placement(&a, &b));
	piecemap_destroy(&b);
	/* A container elsewhere. */
	build_same(&b, 4);
	b.containers[1].pe = 8;
	CHECK(!piecemap_same_placement(&a, &b));
	piecemap_destroy(&b);
	piecemap_destroy(&a);
	piecemap_destroy(&empty4);
	piecemap_destroy(&empty8);
}

/* A device gone: its containers and their pieces go, later devices' containers renumber. */
static void test_drop_dev(void)
{
	struct piecemap pm;
	uint32_t scratch[4], c;
	uint16_t s;

	CHECK_OK(piecemap_init(&pm, 4));
	CHECK_OK(piecemap_add_container(&pm, 1, 7, NULL)); /* 0: goes */
	CHECK_OK(piecemap_add_container(&pm, 2, 3, NULL)); /* 1: stays, dev 2 -> 1 */
	CHECK_OK(piecemap_add_container(&pm, 1, 8, NULL)); /* 2: goes */
	CHECK_OK(piecemap_add_container(&pm, 0, 9, NULL)); /* 3: stays */
	for (uint32_t le = 0; le < 8; le++) {
		/* Pieces in containers 0-3 in turn, by the device given. */
		static const uint16_t dev[] = { 1, 2, 1, 0 };

		CHECK_OK(piecemap_alloc_slot(&pm, dev[le % 4], &c, &s));
		CHECK_OK(piecemap_place(&pm, le, le % 4, c, s));
	}
	CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s)); /* reserved, no piece: goes too */
	CHECK_OK(piecemap_drop_dev(&pm, 1, scratch));
	CHECK_UINT(pm.nr_containers, 2);
	CHECK_UINT(pm.containers[0].dev, 1);
	CHECK_UINT(pm.containers[0].pe, 3);
	CHECK_UINT(pm.containers[1].dev, 0);
	CHECK_UINT(pm.nr_pieces, 4);
	for (uint32_t i = 0; i < pm.nr_pieces; i++) {
		const struct piecemap_piece *pc = &pm.pieces[i];

		CHECK(pc->le % 4 == 1 || pc->le % 4 == 3);
		CHECK_UINT(pc->container, pc->le % 4 == 1 ? 0 : 1);
	}
	CHECK_OK(piecemap_check(&pm, NULL));
	CHECK_UINT(piecemap_container_at(&pm, 1, 3), 0);
	CHECK_OK(piecemap_drop_dev(&pm, 3, scratch)); /* no container there: only none renumber */
	CHECK_UINT(pm.nr_containers, 2);
	CHECK_INT(piecemap_drop_dev(NULL, 0, scratch), -EINVAL);
	piecemap_destroy(&pm);
}

/* What a slot records counts as a change; a reservation does not. */
static void test_changes(void)
{
	struct piecemap pm;
	uint32_t c, scratch[2];
	uint16_t s, s2;
	uint64_t n;

	CHECK_OK(piecemap_init(&pm, 4));
	CHECK(pm.changes == 0);
	CHECK_OK(piecemap_add_container(&pm, 1, 7, &c));
	n = pm.changes;
	CHECK(n > 0);
	CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
	CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s2));
	CHECK_OK(piecemap_release_slot(&pm, c, s2));
	CHECK_OK(piecemap_reserve(&pm, 10));
	CHECK(pm.changes == n);
	CHECK_OK(piecemap_place(&pm, 3, 1, c, s));
	CHECK(pm.changes > n);
	n = pm.changes;
	CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s2));
	CHECK_OK(piecemap_place(&pm, 3, 1, c, s2));
	CHECK(pm.changes > n);
	n = pm.changes;
	CHECK(piecemap_return(&pm, 3, 2) == -ENOENT);
	CHECK(pm.changes == n);
	CHECK_OK(piecemap_return(&pm, 3, 1));
	CHECK(pm.changes > n);
	n = pm.changes;
	CHECK_OK(piecemap_remove_container(&pm, c));
	CHECK(pm.changes > n);
	n = pm.changes;
	/* A device with no container: nothing changes. */
	CHECK_OK(piecemap_drop_dev(&pm, 1, scratch));
	CHECK(pm.changes == n);
	CHECK_OK(piecemap_add_container(&pm, 1, 9, NULL));
	n = pm.changes;
	CHECK_OK(piecemap_drop_dev(&pm, 2, scratch));
	CHECK(pm.changes == n);
	/* Device 0 goes: the container on device 1 is now on device 0, in the record too. */
	CHECK_OK(piecemap_drop_dev(&pm, 0, scratch));
	CHECK(pm.changes > n && pm.containers[0].dev == 0);
	n = pm.changes;
	CHECK_OK(piecemap_drop_dev(&pm, 0, scratch));
	CHECK(pm.changes > n && pm.nr_containers == 0);
	piecemap_destroy(&pm);
}

int main(void)
{
	test_init();
	test_slots_and_pieces();
	test_check();
	test_random_against_model();
	test_reserve();
	test_same_placement();
	test_drop_dev();
	test_changes();
	return 0;
}
