/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_PIECEMAP_H
#define TIERD_PIECEMAP_H

#include <stdint.h>

/*
 * The pieces of split extents: placement finer than an extent.
 *
 * A split extent is a logical extent whose data lives where the extent map
 * puts it (its home) except for some pieces, each moved to a slot of a
 * piece container.  A piece is 1/pieces_per_extent of an extent (16 KiB of
 * a 4 MiB extent); a container is one physical extent, usually on the SSD
 * tier, given over to pieces: its slots are pieces_per_extent pieces in a
 * row.  The extent map holds a container's pe as used without mapping a
 * logical extent to it (extmap_alloc()), so no extent is placed there.
 * While a piece is out, its bytes at home are stale and unused: a split
 * extent keeps its home whole, so a piece moving back needs no allocation.
 *
 * The volume's table stays linear targets (dmtable_build_split()): a piece
 * out costs up to two targets, fewer where pieces out lie next to each other
 * in the volume and in their container, so the table's limit bounds the
 * pieces out, and their number stays small beside the extents (tens of
 * thousands).  They are held in one array sorted by (le, piece), a piece
 * 12 bytes: a lookup is a binary search, and changing a piece moves the
 * array's tail, which at that size costs less than the copy of the piece.
 *
 * Like extmap, a slot is "used" when a piece is in it or when it is
 * reserved as a destination (piecemap_alloc_slot()); the map cannot tell
 * the two apart, and piecemap_check() verifies what it can.
 *
 * Pure: no I/O.  Functions that can fail return 0 or a negative errno.
 */

/* At most: a piece index and a slot fit 16 bits; at least two pieces make a split worth having. */
#define PIECEMAP_MAX_PIECES_PER_EXTENT 65536u
#define PIECEMAP_NO_CONTAINER UINT32_MAX

struct piecemap_piece {
	uint32_t le;
	uint16_t idx;       /* which piece of le: bytes [idx, idx + 1) * piece size of it */
	uint16_t slot;      /* where in its container */
	uint32_t container; /* index into piecemap.containers */
};

struct piecemap_container {
	uint16_t dev;
	uint32_t pe;
	uint32_t nr_used;   /* slots used: pieces in them or reserved */
	uint64_t *used;     /* bit per slot */
};

struct piecemap {
	uint32_t pieces_per_extent; /* a power of two, 2..PIECEMAP_MAX_PIECES_PER_EXTENT */
	struct piecemap_piece *pieces; /* by (le, idx), each once */
	uint32_t nr_pieces, pieces_cap;
	struct piecemap_container *containers;
	uint32_t nr_containers, containers_cap;
	/*
	 * Counts every change of what a slot records (containers, pieces out,
	 * their places; not reservations): a writer that remembers the count it
	 * wrote knows whether its copy is behind, as extmap's dirty groups do.
	 */
	uint64_t changes;
};

/* No pieces, no containers.  -EINVAL unless pieces_per_extent is a power of two in range. */
int piecemap_init(struct piecemap *pm, uint32_t pieces_per_extent);
/* Accepts NULL and a zeroed or already destroyed map. */
void piecemap_destroy(struct piecemap *pm);

/*
 * Give pe of dev over to pieces, all its slots free; its index in *index
 * (may be NULL).  -EEXIST when dev:pe is a container already (a look at
 * each), -ENOSPC past PIECEMAP_NO_CONTAINER - 1 containers, -ENOMEM.  The
 * caller holds pe used in the extent map first.
 */
int piecemap_add_container(struct piecemap *pm, uint16_t dev, uint32_t pe, uint32_t *index);
/*
 * The same without looking for dev:pe among the containers: for a decoder
 * that claimed pe in the extent map just before (extmap_claim() refuses a
 * pe claimed twice), so that thousands of containers cost no n^2.
 */
int piecemap_append_container(struct piecemap *pm, uint16_t dev, uint32_t pe, uint32_t *index);
/*
 * Take container index back (its pe is the extent map's again): only when
 * none of its slots is used (-EBUSY).  The containers after it take the
 * next lower index, in the map and in every piece.
 */
int piecemap_remove_container(struct piecemap *pm, uint32_t index);
/*
 * A device is gone for good: forget its containers and every piece in
 * them (their data went with it; reserved slots too), and number the
 * containers of later devices one lower, as the device list closes up.
 * scratch holds nr_containers entries, so that this cannot fail for
 * memory; one pass over the pieces and the containers.  -EINVAL for NULL.
 */
int piecemap_drop_dev(struct piecemap *pm, uint16_t dev, uint32_t *scratch);
/* The container at dev:pe, or PIECEMAP_NO_CONTAINER. */
uint32_t piecemap_container_at(const struct piecemap *pm, uint16_t dev, uint32_t pe);

/*
 * Reserve the lowest free slot of the first container on dev that has one:
 * a destination for a piece.  -ENOSPC when none has.
 */
int piecemap_alloc_slot(struct piecemap *pm, uint16_t dev, uint32_t *container, uint16_t *slot);
/*
 * Reserve that slot, which must be free (-EBUSY otherwise; -EINVAL out of
 * range): a decoder restoring a piece where it was.
 */
int piecemap_claim_slot(struct piecemap *pm, uint32_t container, uint16_t slot);
/* Undo piecemap_alloc_slot(); -ENOENT when the slot is free, -EINVAL out of range. */
int piecemap_release_slot(struct piecemap *pm, uint32_t container, uint16_t slot);

/*
 * Piece idx of le is now at (container, slot), which piecemap_alloc_slot()
 * reserved (-ENOENT when the slot is free; a slot another piece holds is
 * not detected here, piecemap_check() finds it): the in-memory step that
 * commits a piece's move.  A piece that was out elsewhere frees its old
 * slot.  -EINVAL out of range or for the slot the piece is in already.
 * -ENOMEM leaves the map as it was; a piece already out never needs
 * memory to move again.
 */
int piecemap_place(struct piecemap *pm, uint32_t le, uint32_t idx, uint32_t container,
		   uint16_t slot);
/*
 * Room for extra more pieces out, so that as many piecemap_place() calls
 * of pieces now home cannot fail for want of memory (a commit makes them
 * while the volume is suspended).  0, -ENOMEM, -ENOSPC past UINT32_MAX
 * pieces, -EINVAL for NULL.
 */
int piecemap_reserve(struct piecemap *pm, uint32_t extra);
/* Piece idx of le is home again and its slot free.  -ENOENT when it is home already. */
int piecemap_return(struct piecemap *pm, uint32_t le, uint32_t idx);

/*
 * The pieces of le that are out: pm->pieces[*first, *first + return), by
 * piece.  0 when le is not split (*first is then where its pieces would go)
 * and for a NULL map.  The queries below take a NULL map as one without
 * pieces too (piecemap_find() then says -EINVAL).
 */
uint32_t piecemap_extent(const struct piecemap *pm, uint32_t le, uint32_t *first);
/* The first split extent at or after le, or UINT32_MAX. */
uint32_t piecemap_next_split(const struct piecemap *pm, uint32_t le);
/* Where piece idx of le is: 0 and its place, or -ENOENT when it is home. */
int piecemap_find(const struct piecemap *pm, uint32_t le, uint32_t idx, uint32_t *container,
		  uint16_t *slot);

/*
 * Whether a and b put every piece in the same place: the same piece size
 * (when either has pieces), containers at the same dev:pe in the same
 * order, and the same pieces out in the same slots.  Two maps without
 * containers are the same whatever their piece size (none was written);
 * NULL is such a map.
 */
int piecemap_same_placement(const struct piecemap *a, const struct piecemap *b);

/* Memory the map holds. */
uint64_t piecemap_bytes(const struct piecemap *pm);

/*
 * Consistency: pieces sorted and each once, each piece's index, container
 * and slot in range, every slot held by one piece at most and marked used,
 * no container twice, counters agree with the bitmaps.  0 or -EUCLEAN with
 * *bad (may be NULL) the first bad piece's index into pm->pieces, or
 * UINT32_MAX when the fault is in a container.  A zeroed map (no piece
 * size) is consistent when it has nothing.  -ENOMEM; -EINVAL for NULL.
 */
int piecemap_check(const struct piecemap *pm, uint32_t *bad);

#endif
