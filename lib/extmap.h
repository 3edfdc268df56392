/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_EXTMAP_H
#define TIERD_EXTMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "bitset.h"
#include "pagedir.h"

/*
 * The extent map of a pool: logical extent le of the volume is either
 * unmapped or lives at physical extent pe of pool device dev.
 *
 * Held as runs and pages.  A run maps le [first, first + count) to
 * consecutive pe of one device: the layout a pool starts with (and the one
 * a decoder rebuilds in le order) is a run per device however large the
 * pool.  A page holds the locations of one group of EXTMAP_DIRTY_GROUP le
 * one by one; it is made when an le of its group leaves what the runs say,
 * and from then on the page alone says where its group's le are.  So the
 * map costs 512 bytes per group in which something moved, the pointers
 * to those pages (pagedir.h: 4 KiB per 512 groups that have one, 8 bytes
 * per 512 that have none), and a bitmap of the physical extents used that holds
 * bits only where a device is neither all used nor all free (bitset.h).
 *
 * A physical extent is "used" when a logical extent maps to it or when it
 * is reserved by extmap_alloc() as a migration destination.  The map has
 * no reverse index, so it cannot tell those two apart; extmap_check()
 * verifies what can be verified without one.
 *
 * Functions that can fail return 0 or a negative errno.
 */

#define EXTMAP_MAX_DEVS 16
#define EXTMAP_NO_DEV 0xffff

struct extmap_loc {
	uint16_t dev; /* EXTMAP_NO_DEV: unmapped (pe is then 0) */
	uint16_t reserved;
	uint32_t pe;
};

/*
 * Logical extents are also counted in groups of EXTMAP_DIRTY_GROUP: a
 * group is dirty once any of its entries changes, until
 * extmap_dirty_clear(). A commit of the map to the devices then encodes
 * and writes the groups that changed, not the whole map. 64 entries are
 * 512 bytes of the on-device record, so a group rarely spans two of its
 * 4 KiB blocks; the bitmap is a bit per 256 KiB of volume at 4 MiB extents.
 */
#define EXTMAP_DIRTY_GROUP 64u

struct extmap_run {
	uint32_t first, count; /* le */
	uint32_t pe;           /* of first */
	uint16_t dev;
};

struct extmap {
	uint32_t nr_logical;
	struct pagedir pages; /* a page per group of EXTMAP_DIRTY_GROUP le; NULL: as the runs say */
	uint32_t nr_pages;        /* pages allocated */
	/* By first, not overlapping; an le in none of them and in no page is unmapped. */
	struct extmap_run *runs;
	uint32_t nr_runs, runs_cap;
	uint64_t *dirty; /* bit per group of EXTMAP_DIRTY_GROUP le */
	unsigned nr_devs;
	uint32_t nr_pe[EXTMAP_MAX_DEVS];
	uint32_t nr_free[EXTMAP_MAX_DEVS];
	uint32_t nr_mapped[EXTMAP_MAX_DEVS]; /* logical extents on each device */
	struct bitset used[EXTMAP_MAX_DEVS]; /* bit per pe */
	/* Every pe below 64 times this is used: allocation starts here. */
	uint32_t free_hint[EXTMAP_MAX_DEVS];
};

/* All nr_logical extents unmapped, no devices.  On error *m is left empty. */
int extmap_init(struct extmap *m, uint32_t nr_logical);
/* Accepts NULL and a zeroed or already destroyed map. */
void extmap_destroy(struct extmap *m);

/* Device indices are dense and in order of addition.  -EINVAL for nr_pe 0, -ENOSPC past EXTMAP_MAX_DEVS. */
int extmap_add_dev(struct extmap *m, uint32_t nr_pe, unsigned *dev_out);
/*
 * Only the last device (-EINVAL otherwise), so indices stay dense; and only
 * when none of its pe is used, mapped or reserved (-EBUSY otherwise).
 */
int extmap_remove_dev(struct extmap *m, unsigned dev);
/*
 * Any device none of whose pe is used (-EBUSY otherwise): the devices after
 * it take the next lower index, in the map and in every logical extent.
 */
int extmap_drop_dev(struct extmap *m, unsigned dev);
/* Growing adds unmapped extents; shrinking needs the dropped tail unmapped (-EBUSY). */
int extmap_resize_logical(struct extmap *m, uint32_t nr_logical);

/*
 * -EINVAL out of range, -EEXIST le already mapped, -EBUSY pe used, -ENOMEM
 * when le needs a page (it does not continue the last run) and none can be
 * had.  Mapping in increasing le order and consecutive pe, as a decoder
 * and extmap_fill_linear() do, makes runs and no pages.
 */
int extmap_map(struct extmap *m, uint32_t le, unsigned dev, uint32_t pe);
/*
 * extmap_map of le + i to pe + i for i < count, in one step where nothing
 * is in the way (all unmapped and past the last run, all pe free): a
 * decoder's run of entries costs a run, not count lookups.  Otherwise one
 * by one, stopping at the first error, which it returns (the extents
 * before it stay mapped).  -EINVAL for count 0 or a range out of the map
 * or the device.
 */
int extmap_map_run(struct extmap *m, uint32_t le, unsigned dev, uint32_t pe, uint32_t count);
/*
 * Frees the pe; -ENOENT if le is unmapped; -ENOMEM (nothing changed) when
 * le needs a page (not at either end of a run: unmapping a range in order
 * needs none) or its pe a leaf of the device's bitmap (a device all used
 * has none).  Neither once le is held (extmap_hold).
 */
int extmap_unmap(struct extmap *m, uint32_t le);
/*
 * Make le's group a page now, and the leaf of the used bitmap that holds
 * le's pe, so that a later extmap_remap() or extmap_unmap() of le cannot
 * fail for want of memory.  0 or -ENOMEM; -EINVAL out of range.  Pages
 * stay until the map shrinks past them, leaves until the map goes.
 */
int extmap_hold(struct extmap *m, uint32_t le);
/*
 * Make the leaf of dev's used bitmap that holds pe (a device all used or
 * all free has none), so that a later extmap_release() or claim of pe
 * cannot fail for want of memory: what extmap_hold() does for le's pe, for
 * a pe no extent maps, such as a piece container's.  0, -ENOMEM, -EINVAL.
 */
int extmap_hold_pe(struct extmap *m, unsigned dev, uint32_t pe);
/*
 * Move mapped le (-ENOENT otherwise) to free pe (-EBUSY otherwise) and free
 * its old pe: the single in-memory step that commits a migration.  A
 * destination reserved with extmap_alloc() is released first; neither call
 * can fail once the arguments are known good and le is held (extmap_hold;
 * otherwise -ENOMEM is possible, and leaves the map as it was).
 */
int extmap_remap(struct extmap *m, uint32_t le, unsigned dev, uint32_t pe);

/*
 * Reserve the lowest free pe of dev without mapping it; -ENOSPC when full,
 * -ENOMEM when its leaf of the bitmap cannot be made.  The leaf stays, so
 * releasing the pe, and remapping an le to or from it, needs no memory.
 */
int extmap_alloc(struct extmap *m, unsigned dev, uint32_t *pe);
/*
 * Reserve pe of dev, which must be free (-EBUSY otherwise), as
 * extmap_alloc() would have: a decoder restoring what was reserved for
 * good, such as a piece container (piecemap.h).  -EINVAL out of range,
 * -ENOMEM when its leaf of the bitmap cannot be made.
 */
int extmap_claim(struct extmap *m, unsigned dev, uint32_t pe);
/*
 * Undo extmap_alloc(); -ENOENT if pe is free.  Releasing a mapped pe
 * corrupts the map (checking would cost a scan of every le); extmap_check()
 * reports it.
 */
int extmap_release(struct extmap *m, unsigned dev, uint32_t pe);
/*
 * Map every unmapped le, in le order, to the lowest free pe of dev until
 * dev is full.  Returns the number mapped (the initial layout of a pool).
 */
int extmap_fill_linear(struct extmap *m, unsigned dev);

/* A logical extent and the free pe reserved for it (extmap_plan_evacuate). */
struct extmap_dest {
	uint32_t le;
	uint16_t dev;
	uint32_t pe;
};

/*
 * Give every le mapped to device gone a free pe elsewhere, reserved with
 * extmap_alloc(): on the lowest-numbered device with room first, leaving
 * reserve[dev] free on each (reserve may be NULL). *needed is the number of
 * le on gone, *room the pe the others can give. When room < needed,
 * -ENOSPC and nothing is reserved; else *out (le order, free it) holds the
 * destinations: extmap_release() each, then extmap_remap() to it or not.
 */
int extmap_plan_evacuate(struct extmap *m, unsigned gone, const uint32_t *reserve,
			 struct extmap_dest **out, uint32_t *needed, uint32_t *room);

/* The first dirty group at or after group from, or UINT32_MAX. */
uint32_t extmap_next_dirty(const struct extmap *m, uint32_t from);
/* Groups that change from now on are what extmap_next_dirty() finds. */
void extmap_dirty_clear(struct extmap *m);

/* Unmapped (dev EXTMAP_NO_DEV) for an le out of range too. */
struct extmap_loc extmap_get(const struct extmap *m, uint32_t le);
/*
 * How many le from le on (at least 1 and at most max; 0 out of range or
 * for max 0) map as le does, each to the next pe of the same device, or
 * are all unmapped, by one run or gap and no page: *loc is le's location.
 * Scans of the map use it to pass a run in one step; it looks at a
 * pointer per 64 le of what it returns.
 */
uint32_t extmap_span(const struct extmap *m, uint32_t le, uint32_t max, struct extmap_loc *loc);
/*
 * Whether b continues a: the next pe of the same device, or both unmapped.
 * Where it does not, the volume's table starts a new target.
 */
bool extmap_loc_follows(struct extmap_loc a, struct extmap_loc b);
/*
 * The map's runs: maximal stretches of le that each continue the one
 * before (extmap_loc_follows), which is the number of targets of the
 * volume's table with every device present. A span at a time: it grows
 * with the runs and pages, not with the extents.
 */
uint32_t extmap_runs(const struct extmap *m);
/*
 * le's entry itself, its group made a page (NULL without memory or out of
 * range), for tests that corrupt a map on purpose: a write through it
 * bypasses counters, bitmaps and dirty groups.
 */
struct extmap_loc *extmap_raw(struct extmap *m, uint32_t le);
/* Memory the map holds: pages, their pointers, runs, bitmaps. */
uint64_t extmap_bytes(const struct extmap *m);
/* Logical extents mapped to dev: a counter, so a report costs nothing per extent. */
uint32_t extmap_count_on_dev(const struct extmap *m, unsigned dev);

/*
 * Whether a and b map every logical extent to the same place, over the same
 * devices. Reservations are not compared: they live in memory only.
 */
int extmap_same_mapping(const struct extmap *a, const struct extmap *b);

/*
 * Consistency: every mapped pe in range, marked used and used by one le
 * only; counters, search hints and bitmap padding agree with the bitmaps.
 * Returns 0, -ENOMEM, or -EUCLEAN with *bad_le (may be NULL) set to the
 * first offending le, or UINT32_MAX when the fault is in per-device state.
 */
int extmap_check(const struct extmap *m, uint32_t *bad_le);

#endif
