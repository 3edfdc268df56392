/* SPDX-License-Identifier: GPL-2.0-or-later */
/* heat: an exponentially decayed score per extent, from dm-stats samples. */
#ifndef TIERD_HEAT_H
#define TIERD_HEAT_H

#include <stdint.h>

#include "pagedir.h"
#include "statsparse.h"

/*
 * Heat is counted in "small random I/Os": one read of at most
 * large_io_bytes that does not continue the previous I/O adds read_weight,
 * and every sample decays what came before with the half-life.  At a
 * steady rate of R such I/Os per second an extent settles at
 * R * half_life_s / ln 2.  docs/heat.md has the formula and the reasons.
 */
struct heat_params {
	double half_life_s;      /* 86400: a day of history, like Qtier and Easy Tier */
	double read_weight;      /* 1.0 */
	double write_weight;     /* 1.0 */
	uint32_t large_io_bytes; /* 65536: a larger average I/O counts large_io_bytes / avg */
	uint64_t scan_bytes;     /* 64 MiB: sequential I/O counts one per scan_bytes it moves */
};

void heat_params_default(struct heat_params *p);
/*
 * 0 or -EINVAL.  Ranges: half-life 1 s to 10 years; weights 0 to 1000 and
 * not both zero; large_io_bytes 512 B to 1 GiB; scan_bytes 512 B to 1 PiB
 * (whatever it is, a sequential I/O never counts more than a random one of
 * its size).
 */
int heat_params_valid(const struct heat_params *p);

struct heat_extent {
	float heat;     /* scaled (heat_value()); 24 bits of precision is plenty to rank extents */
	uint32_t moved_at; /* unix time of the last move (tierd), 0: never; heat only zeroes it */
	uint64_t reads, writes; /* totals since the table was made, for display */
};

_Static_assert(sizeof(struct heat_extent) == 24, "a million extents in 24 MB");

/*
 * Extents per chunk of the table: the unit in which changes are tracked
 * (heat_chunk_dirty()) and heat is stored (tierd/store keeps a row a chunk).
 */
#define HEAT_CHUNK 16384u

/*
 * Extents per page: the unit in which the table holds memory.  A page is
 * allocated when one of its extents first has I/O or moves, so an extent
 * nobody has used costs 8 bytes / HEAT_PAGE (its page's pointer), and the
 * table grows with the part of the pool in use, not with its size.  64
 * extents (1.5 KiB, 256 MiB of volume at 4 MiB extents), as the extent
 * map's pages: a hot extent alone in its page costs 1.5 KiB, and the
 * pointers are 6.5 MB at 200 TiB (tests/bench/bench-size measured 256:
 * 16,384 scattered hot extents then took 96 MiB at any size from 16 TiB).
 */
#define HEAT_PAGE 64u

_Static_assert(HEAT_CHUNK % HEAT_PAGE == 0, "a stored row is whole pages");

/*
 * Decay costs nothing per extent: an extent's heat is e->heat / scale, and
 * a sample divides scale by its decay factor instead of multiplying every
 * extent by it.  What a sample adds is multiplied by scale, so an idle
 * extent is never touched and a sample costs what had I/O, not the pool's
 * size.  Once scale passes HEAT_SCALE_MAX (40 half-lives) every page is
 * brought back to scale 1 in one pass, long before float could overflow.
 * Ranking compares e->heat directly: one scale for all.
 */
struct heat_table {
	uint32_t nr;
	struct pagedir pages;      /* a page per HEAT_PAGE extents; NULL: all cold, never moved, no I/O */
	uint32_t nr_pages_used;    /* pages allocated */
	uint64_t last_sample_ns;   /* 0: no sample yet */
	double scale;              /* >= 1; 0 in a zeroed table reads as 1 */
	uint8_t *dirty;            /* per chunk: changed since heat_chunk_clean() */
};

/* What every extent of a page that is not allocated holds: all zero. */
extern const struct heat_extent heat_extent_cold;

/* nr cold extents (nr may be 0), every chunk clean.  On error *t is left empty. */
int heat_table_init(struct heat_table *t, uint32_t nr);
/* Accepts NULL and a zeroed or already destroyed table. */
void heat_table_destroy(struct heat_table *t);
/*
 * Extents below both sizes keep everything; new ones start cold, in dirty
 * chunks (a store may hold an older table's rows there).  -ENOMEM leaves t
 * as it was.
 */
int heat_table_resize(struct heat_table *t, uint32_t nr);
/* Memory the table holds: pointers, pages and chunk flags. */
uint64_t heat_table_bytes(const struct heat_table *t);

static inline uint32_t heat_nr_pages(const struct heat_table *t)
{
	return (uint32_t)(((uint64_t)t->nr + HEAT_PAGE - 1) / HEAT_PAGE);
}

/* Extent i (i < t->nr), read only: heat_extent_cold where its page is not allocated. */
static inline const struct heat_extent *heat_at(const struct heat_table *t, uint32_t i)
{
	const struct heat_extent *pg = pagedir_get(&t->pages, i / HEAT_PAGE);

	return pg ? &pg[i % HEAT_PAGE] : &heat_extent_cold;
}
/*
 * Extent i to change: allocates its page and marks its chunk dirty.
 * NULL when i is out of the table or no memory is left.
 */
struct heat_extent *heat_at_mut(struct heat_table *t, uint32_t i);
/*
 * The first extent in [i, end) whose page is allocated, or end (at most
 * t->nr) when there is none: every extent in between is cold.  Costs the
 * pages of the range, a pointer each.
 */
uint32_t heat_next_used(const struct heat_table *t, uint32_t i, uint32_t end);

/* Extent i's heat (i < t->nr). */
static inline double heat_value(const struct heat_table *t, uint32_t i)
{
	return heat_at(t, i)->heat / (t->scale > 0 ? t->scale : 1.0);
}
/*
 * Set extent i's heat (i < t->nr, heat >= 0 and finite); marks its chunk
 * dirty.  0, or -ENOMEM when its page could not be allocated.
 */
int heat_set(struct heat_table *t, uint32_t i, double heat);
/* Extent i was moved at unix time when; marks its chunk dirty.  0 or -ENOMEM. */
int heat_set_moved(struct heat_table *t, uint32_t i, uint32_t when);
/* Chunks: extents [k * HEAT_CHUNK, (k + 1) * HEAT_CHUNK) of t. */
static inline uint32_t heat_nr_chunks(const struct heat_table *t)
{
	return (uint32_t)(((uint64_t)t->nr + HEAT_CHUNK - 1) / HEAT_CHUNK);
}
/* Whether chunk k changed since it was last made clean (false out of the table). */
int heat_chunk_dirty(const struct heat_table *t, uint32_t k);
/* Chunk k is what the store holds: clean until it changes again. */
void heat_chunk_clean(struct heat_table *t, uint32_t k);

/* One sample's contribution to an extent, before decay; params assumed valid. */
double heat_score(const struct heat_params *p, const struct statsparse_area *a);
/* 2^(-elapsed / half-life): what remains of heat after elapsed_ns. */
double heat_decay_factor(const struct heat_params *p, uint64_t elapsed_ns);
/*
 * Decay every extent to now_ns, then add the sample a[0..nr) taken at
 * now_ns and add its I/Os to the totals.  The first sample decays nothing.
 * -EINVAL for invalid params, nr != t->nr or now_ns before the last sample;
 * -ENOMEM when a page for an extent with I/O cannot be allocated (the
 * extents before it keep what they got).
 */
int heat_apply(struct heat_table *t, const struct heat_params *p,
	       const struct statsparse_area *a, uint32_t nr, uint64_t now_ns);

/*
 * One sample in parts, for a region read in chunks: begin decays the whole
 * table to now_ns and records it as the last sample (O(1) but once every
 * 40 half-lives), apply_range adds the counters of extents
 * [first, first + nr) (every extent at most once per sample; only those
 * with I/O cost anything; -ENOMEM as for heat_apply()).  heat_apply() is
 * the two over the whole table.
 */
int heat_sample_begin(struct heat_table *t, const struct heat_params *p, uint64_t now_ns);
int heat_apply_range(struct heat_table *t, const struct heat_params *p,
		     const struct statsparse_area *a, uint32_t first, uint32_t nr);

/*
 * A coarse area's counters (a zone's, lib/zone.h) for extents
 * [first, first + nr) that have no area of their own: shares the area's
 * score and I/Os among them,
 * half in proportion to the heat each has, half evenly.  Where the I/O went
 * inside the area is not known; the heat an extent had (from an earlier
 * time with an area of its own) is the best guess there is, and the even
 * half lets extents that were cold rise.  share (nr entries, may be NULL)
 * receives each extent's part, which the caller uses to split the I/O by
 * tier the same way; it is filled only when the area has I/O (without,
 * nothing is shared and nothing is touched).  The I/O counts given out add
 * up to the area's.
 */
int heat_apply_shared(struct heat_table *t, const struct heat_params *p,
		      const struct statsparse_area *a, uint32_t first, uint32_t nr, double *share);
/* The heat of extents [first, first + nr) added up (0 for a range out of the table). */
double heat_sum(const struct heat_table *t, uint32_t first, uint32_t nr);

/*
 * Indices of the min(n, t->nr) hottest extents into out (room for n),
 * hottest first, equal heat by lower index; their number in *nr_out.
 * O((extents in used pages + n) log n), no allocation.
 */
int heat_top(const struct heat_table *t, uint32_t n, uint32_t *out, uint32_t *nr_out);
/*
 * The same over the extents of ranges [first[k], first[k] + count[k]),
 * ascending and disjoint (-EINVAL otherwise): min(n, their extents) of them.
 */
int heat_top_ranges(const struct heat_table *t, const uint32_t *first, const uint32_t *count,
		    uint32_t nr_ranges, uint32_t n, uint32_t *out, uint32_t *nr_out);

#endif
