/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_DMTABLE_H
#define TIERD_DMTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "extmap.h"
#include "piecemap.h"

/*
 * The device-mapper table of a volume: a run of `linear` targets covering
 * sectors 0..size-1 without gaps.  Built from the extent map so the kernel
 * does all I/O, and parsed back from what the kernel reports so tests can
 * compare the two.  All positions and lengths are 512-byte sectors.
 */

struct dmtable_dev {
	uint32_t major, minor;
	uint64_t data_start; /* sector where pe 0 starts */
	/*
	 * The device is gone (a degraded activation): its extents map to the
	 * `error` target, so reading them fails rather than returning other data.
	 */
	bool missing;
};

struct dmtable_target {
	uint64_t start;
	uint64_t len;
	uint32_t major, minor;
	uint64_t offset;
	/*
	 * A moving extent: a `mirror` target whose first leg is the source above
	 * and whose second leg is the destination below. The kernel copies the
	 * source to the destination (kcopyd) while writes go to both legs.
	 * mirror_region is 0 for a plain `linear` target.
	 */
	uint32_t mirror_region;
	uint32_t mirror_major, mirror_minor;
	uint64_t mirror_offset;
	bool error; /* an `error` target: no device, every I/O fails */
};

/* Where one logical extent moves to. */
struct dmtable_move {
	uint32_t le;
	unsigned dev;
	uint32_t pe;
};

struct dmtable {
	size_t nr;
	size_t cap;
	struct dmtable_target *t;
};

/*
 * One linear target per run of logical extents that sit contiguously on the
 * same device, one error target per run of extents on missing devices; devs
 * is indexed by extmap device.  *out is overwritten (left empty on error).
 * -EINVAL if any le is unmapped or extent_sectors is 0, -ERANGE if a sector
 * number would not fit 64 bits.
 */
int dmtable_build(struct dmtable *out, const struct extmap *m,
		  const struct dmtable_dev *devs, uint64_t extent_sectors);

/*
 * dmtable_build() of a volume with split extents: each piece out in pm
 * (extent_sectors / pm->pieces_per_extent sectors) maps to its slot, the
 * rest of a split extent to its home; pieces next to each other in the
 * volume and in a container make one target.  pm NULL or zeroed (as
 * decoded from a slot without pieces): dmtable_build().
 * -EINVAL also for pieces_per_extent not dividing extent_sectors, a piece
 * of an le out of the map or unmapped, or a container out of its device.
 */
int dmtable_build_split(struct dmtable *out, const struct extmap *m, const struct piecemap *pm,
			const struct dmtable_dev *devs, uint64_t extent_sectors);

/*
 * The same table with each extent of moves[] (sorted by le, each le once)
 * as a mirror from where the map puts it to the move's destination, so the
 * kernel copies it live; region_sectors is the mirror's region size, a power
 * of two dividing extent_sectors. -EINVAL for unsorted moves, a move to where
 * the extent already is, a destination out of range, or a move from or to a
 * missing device.
 */
int dmtable_build_moving(struct dmtable *out, const struct extmap *m,
			 const struct dmtable_dev *devs, uint64_t extent_sectors,
			 const struct dmtable_move *moves, size_t nr_moves, uint32_t region_sectors);

/* Where one piece of a split extent moves to: a slot, or home. */
struct dmtable_piece_move {
	uint32_t le;
	uint32_t idx;       /* which piece of le */
	uint32_t container; /* PIECEMAP_NO_CONTAINER: back to le's home */
	uint16_t slot;
};

/*
 * dmtable_build_moving() of a volume with split extents (pm, which may be
 * NULL when there are no pieces nor piece moves): each piece of
 * piece_moves[] (sorted by le then piece, each once) is a mirror from
 * where it is (its slot, or home) to where it goes, of region
 * min(region_sectors, piece sectors); the rest as dmtable_build_split().
 * -EINVAL also for unsorted piece moves, a piece move to where the piece
 * is or to a slot out of range, a piece move of an extent that moves
 * whole, or a whole move of a split extent (its pieces go home first).
 * A destination slot is one piecemap_alloc_slot() reserved, so no other
 * piece is in it or goes to it: that is not checked here.
 */
int dmtable_build_moving_split(struct dmtable *out, const struct extmap *m,
			       const struct piecemap *pm, const struct dmtable_dev *devs,
			       uint64_t extent_sectors, const struct dmtable_move *moves,
			       size_t nr_moves, const struct dmtable_piece_move *piece_moves,
			       size_t nr_piece_moves, uint32_t region_sectors);

/* "linear", "mirror" or "error". */
const char *dmtable_type(const struct dmtable_target *t);

/*
 * Target parameters for dm_task_add_target(): "253:4 2048" for linear,
 * "core 1 REGION 2 253:4 2048 253:5 0 1 handle_errors" for mirror, "" for
 * error.  -ENOSPC if len is too small.
 */
int dmtable_params(const struct dmtable_target *t, char *buf, size_t len);

/*
 * Parse lines "START LEN linear MAJ:MIN OFFSET" and "START LEN error" as
 * `dmsetup table` prints them; the last newline is optional and "" is the
 * empty table.  Targets are kept as given, not merged.  -EINVAL for any
 * other target type, malformed
 * text, a zero length, or a gap or overlap (first start must be 0); -ERANGE
 * for a number too large.  *out is overwritten (left empty on error).
 */
int dmtable_parse(struct dmtable *out, const char *text);

/* The whole table as `dmsetup table` prints it (mirror params as loaded), one line per target; free() *text_out. */
int dmtable_format(const struct dmtable *t, char **text_out);

/* Sectors covered: the end of the last target. */
uint64_t dmtable_size(const struct dmtable *t);

/* Accepts NULL and a zeroed or already destroyed table. */
void dmtable_destroy(struct dmtable *t);

#endif
