/* SPDX-License-Identifier: GPL-2.0-or-later */
/* heat: an exponentially decayed score per extent, from dm-stats samples. */
#ifndef TIERD_HEAT_H
#define TIERD_HEAT_H

#include <stdint.h>

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
	float heat;     /* 24 bits of precision is plenty to rank extents */
	uint32_t moved_at; /* unix time of the last move (tierd), 0: never; heat only zeroes it */
	uint64_t reads, writes; /* totals since the table was made, for display */
};

_Static_assert(sizeof(struct heat_extent) == 24, "a million extents in 24 MB");

struct heat_table {
	uint32_t nr;
	struct heat_extent *e;
	uint64_t last_sample_ns; /* 0: no sample yet */
};

/* nr cold extents (nr may be 0).  On error *t is left empty. */
int heat_table_init(struct heat_table *t, uint32_t nr);
/* Accepts NULL and a zeroed or already destroyed table. */
void heat_table_destroy(struct heat_table *t);
/* Extents below both sizes keep everything; new ones start cold.  -ENOMEM leaves t as it was. */
int heat_table_resize(struct heat_table *t, uint32_t nr);

/* One sample's contribution to an extent, before decay; params assumed valid. */
double heat_score(const struct heat_params *p, const struct statsparse_area *a);
/* 2^(-elapsed / half-life): what remains of heat after elapsed_ns. */
double heat_decay_factor(const struct heat_params *p, uint64_t elapsed_ns);
/*
 * Decay every extent to now_ns, then add the sample a[0..nr) taken at
 * now_ns and add its I/Os to the totals.  The first sample decays nothing.
 * -EINVAL for invalid params, nr != t->nr or now_ns before the last sample.
 */
int heat_apply(struct heat_table *t, const struct heat_params *p,
	       const struct statsparse_area *a, uint32_t nr, uint64_t now_ns);

/*
 * One sample in parts, for a region read in chunks: begin fixes the decay
 * since the last sample, apply_range decays extents [first, first + nr) and
 * adds their counters (every extent exactly once per sample), end records
 * the sample's time. heat_apply() is the three over the whole table.
 */
int heat_sample_begin(const struct heat_table *t, const struct heat_params *p, uint64_t now_ns,
		      double *decay);
int heat_apply_range(struct heat_table *t, const struct heat_params *p,
		     const struct statsparse_area *a, uint32_t first, uint32_t nr, double decay);
void heat_sample_end(struct heat_table *t, uint64_t now_ns);

/*
 * A coarse area's counters (a zone's, lib/zone.h) for extents
 * [first, first + nr) that have no area of their own: decays them as
 * heat_apply_range() does and shares the area's score and I/Os among them,
 * half in proportion to the heat each has, half evenly.  Where the I/O went
 * inside the area is not known; the heat an extent had (from an earlier
 * time with an area of its own) is the best guess there is, and the even
 * half lets extents that were cold rise.  share (nr entries, may be NULL)
 * receives each extent's part, which the caller uses to split the I/O by
 * tier the same way.  The I/O counts given out add up to the area's.
 */
int heat_apply_shared(struct heat_table *t, const struct heat_params *p,
		      const struct statsparse_area *a, uint32_t first, uint32_t nr, double decay,
		      double *share);
/* The heat of extents [first, first + nr) added up (0 for a range out of the table). */
double heat_sum(const struct heat_table *t, uint32_t first, uint32_t nr);

/*
 * Indices of the min(n, t->nr) hottest extents into out (room for n),
 * hottest first, equal heat by lower index; their number in *nr_out.
 * O(nr log n), no allocation.
 */
int heat_top(const struct heat_table *t, uint32_t n, uint32_t *out, uint32_t *nr_out);

#endif
