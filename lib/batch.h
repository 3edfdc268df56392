/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * batch: which waiting moves of an ordered list start together in the next
 * migration batch, and their destinations reserved in the extent map. The
 * one rule of the job engine (tierd/move/job.c, docs/migration.md).
 */
#ifndef TIERD_BATCH_H
#define TIERD_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "extmap.h"

enum batch_state {
	BATCH_WAITING = 0,
	BATCH_STARTED = 1, /* in a batch (moved or failed since), or found in place */
};

/* One move of the list: logical extent le to device dev. */
struct batch_move {
	uint32_t le;
	uint16_t dev;  /* destination device */
	uint8_t state; /* enum batch_state */
};

/* A move of the batch, its destination pe reserved with extmap_alloc(). */
struct batch_item {
	uint32_t le;
	unsigned dev;
	uint32_t pe;
};

/*
 * The volume's table, for batches that keep it within a number of targets:
 * each takes kernel memory and time of every table swap while the volume
 * is suspended, and libdevmapper cannot load a table of a million
 * (docs/scale.md, "The volume's table").
 */
struct batch_table {
	uint32_t targets;     /* the map's runs (extmap_runs) before; after the batch on return */
	uint32_t max_targets; /* 0: no limit */
	size_t held;          /* grows by the moves left waiting because of max_targets */
};

/*
 * Advance *first_waiting past started moves (every move before it must be
 * started already). Returns whether a move is left waiting, that is
 * *first_waiting < nr.
 */
bool batch_pending(const struct batch_move *moves, size_t nr, size_t *first_waiting);

/*
 * The next batch: up to max items, chosen from the waiting moves from
 * *first_waiting on, in list order, looking at no more than lookahead
 * waiting moves (started ones are passed over and not counted).
 *
 * - A move whose le already sits on its destination dev is marked
 *   BATCH_STARTED and left out of the batch; it counts against lookahead.
 * - A move may start only if its destination has more free extents than
 *   reserve[dev] (map->nr_free[dev] > reserve[dev]) and extmap_alloc()
 *   reserves one, and its le is held (extmap_hold(), so that the remap
 *   that commits it and the one that undoes it cannot fail); it is then
 *   marked BATCH_STARTED and its item, with the reserved pe, appended to
 *   items. Without memory for the hold it waits, as without room. reserve holds map->nr_devs entries; a
 *   dev at or past map->nr_devs never fits.
 * - With table given, a move that would take the table past max_targets
 *   (counting the moves before it in the batch: a move may split a run,
 *   join two or neither) waits too, and table->held counts it; one that
 *   adds no target may start even on a table past its limit. table->targets
 *   becomes what the table has after the batch commits.
 * - A move that does not fit stays BATCH_WAITING, for a later batch: what
 *   this batch's commit frees may make room (a swap).
 *
 * *first_waiting advances past started moves, before and after the batch
 * is chosen. *started (may be NULL) grows by the number of moves this call
 * marked started: the items and the moves found in place.
 *
 * Returns the number of items. 0 with moves still waiting (batch_pending())
 * means none of the moves looked at could start on the map as it is.
 *
 * Every item's destination stays reserved in map until the caller gives it
 * back with extmap_release(): when its extent moved, just before
 * extmap_remap() puts le there; when it did not (the batch failed or could
 * not start), for good.
 */
size_t batch_next(struct extmap *map, struct batch_move *moves, size_t nr, size_t *first_waiting,
		  const uint32_t *reserve, struct batch_table *table, size_t max, size_t lookahead,
		  struct batch_item *items, size_t *started);

/* The moves still waiting from first_waiting on: a scan. */
size_t batch_waiting(const struct batch_move *moves, size_t nr, size_t first_waiting);

/*
 * How many pieces the next held copy may take (docs/migration.md, "Held
 * copies of pieces"): the volume's I/O waits for the whole copy, so its
 * time is kept near target_ns. The last batch copied copied pieces in
 * copy_ns at once (cur was the most it could take); the next takes as many
 * as that rate fits in the target, but grows past cur only to twice what
 * was copied (a quick copy of a few pieces says little of many), within
 * [lo, hi]. copied 0 keeps cur, and so does a copy of fewer than a quarter
 * of cur within half the target (a job's last pieces, timed mostly by what
 * any copy costs).
 */
size_t batch_held_pieces(size_t cur, size_t copied, uint64_t copy_ns, uint64_t target_ns,
			 size_t lo, size_t hi);
/*
 * The copy time batch_held_pieces aims at, from the last held batch: a
 * stall is its copy plus a part that does not depend on how many pieces
 * it holds (the suspend, the commit, the resume that swaps the table,
 * which grows with the pieces out). The copy may take floor_ns, or 1/share
 * of that part where it is longer: I/O is held at most 1/share longer per
 * stall, for many more pieces per stall, and so for less in all. stall_ns
 * below copy_ns (not measured) gives floor_ns.
 */
uint64_t batch_held_target(uint64_t stall_ns, uint64_t copy_ns, uint64_t floor_ns,
			   unsigned share);

#endif
