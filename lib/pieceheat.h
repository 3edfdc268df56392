/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_PIECEHEAT_H
#define TIERD_PIECEHEAT_H

#include <stdbool.h>
#include <stdint.h>

#include "heat.h"
#include "statsparse.h"

/*
 * pieceheat: how an extent's I/O spreads over its pieces (piecemap.h), for
 * the extents watched at piece resolution.
 *
 * dm-stats counts an I/O once in every area it touches, with that area's
 * part of its sectors (measured in the test VM: a 1 MiB read over areas of
 * 256 KiB is one read of 256 KiB in each of four).  With areas of a piece,
 * a sequential read of 1 MiB is 64 reads of 16 KiB, as random as 4 KiB
 * reads look, so piece areas cannot tell a scan from random I/O.  The heat
 * of an extent therefore stays what its extent-sized area says
 * (heat_score() discounts large I/O by its size there); piece areas only
 * say how that heat divides among its pieces.  Each watched extent keeps a
 * decayed weight per piece, heat_score() of the piece's area: I/Os at most
 * a piece large, a stream's bios (which dm-stats marks merged) discounted as
 * ever.  A piece's heat is the extent's heat times the piece's share of the
 * weights: a scan spreads its weight evenly and makes no piece stand out,
 * 4 KiB reads on a few blocks do.
 *
 * Weights decay with the heat's half-life, kept scaled as heat.h does so a
 * sample costs the extents with I/O, not all of them.  A watched extent
 * costs 4 bytes a piece (1 KiB at 256); at most max_extents are kept, the
 * one with the least weight giving way to a new one with more.
 *
 * Pure: no I/O.  Functions that can fail return 0 or a negative errno.
 */

struct pieceheat_extent {
	uint32_t le;
	float total; /* the sum of w[], scaled like them */
	float *w;    /* a weight per piece, scaled: w / scale is the weight */
};

struct pieceheat {
	uint32_t pieces_per_extent;
	uint32_t max_extents;
	struct pieceheat_extent *v; /* by le */
	uint32_t nr;
	double scale; /* >= 1 */
	uint64_t last_sample_ns; /* 0: no sample yet */
	uint64_t dropped;        /* samples of new extents that found no room */
	uint64_t changes;        /* weights added or forgotten: what a store compares */
};

/*
 * Nothing watched.  -EINVAL unless pieces_per_extent is a power of two in
 * 2..PIECEMAP_MAX_PIECES_PER_EXTENT and max_extents > 0; -ENOMEM.
 */
int pieceheat_init(struct pieceheat *ph, uint32_t pieces_per_extent, uint32_t max_extents);
/* Accepts NULL and a zeroed or already destroyed one. */
void pieceheat_destroy(struct pieceheat *ph);

/*
 * A sample taken at now_ns: what came before decays (the first sample
 * decays nothing).  -EINVAL for invalid params or now_ns before the last
 * sample.
 */
int pieceheat_sample_begin(struct pieceheat *ph, const struct heat_params *p, uint64_t now_ns);
/*
 * The sample's areas of extent le, one per piece (a[0..pieces_per_extent)):
 * their I/Os added to its weights.  An extent not watched yet is watched
 * from now on when it has any I/O, taking the place of the watched extent
 * with the least weight when max_extents are watched and that weight is
 * less than the sample's (else the sample is dropped and counted).
 * -ENOMEM leaves everything as it was.
 */
int pieceheat_apply(struct pieceheat *ph, const struct heat_params *p, uint32_t le,
		    const struct statsparse_area *a);
/*
 * Weights of le's pieces known from elsewhere (a store that outlived a
 * restart), at this moment: weight[j] added to piece idx[j]'s, watched as
 * pieceheat_apply() watches (dropped and counted when no room).  -EINVAL
 * for a piece out of range or a weight negative or not finite; -ENOMEM.
 */
int pieceheat_add(struct pieceheat *ph, uint32_t le, const uint16_t *idx, const float *weight,
		  uint32_t n);
/* Piece idx's weight now, as pieceheat_add() takes it; 0 when le is not watched. */
double pieceheat_weight(const struct pieceheat *ph, uint32_t le, uint32_t idx);
/* Stop watching le (its pieces' weights are forgotten); -ENOENT when not watched. */
int pieceheat_forget(struct pieceheat *ph, uint32_t le);

/*
 * Keep what is watched for a volume of nr_extents extents, at most
 * max_extents of them (a heat restart: a resize, a switch between an area
 * per piece of the volume and windows): those at or past nr_extents are
 * forgotten, then the least weight first until max_extents remain, the
 * extents of keep[0..nr_keep) (ascending: those with pieces out, whose
 * pieces' heat would else be guessed) only once no other is left.
 * -EINVAL for max_extents 0, one not initialised or keep NULL with
 * nr_keep; -ENOMEM (growing) leaves it as it was.
 */
int pieceheat_resize(struct pieceheat *ph, uint32_t max_extents, uint32_t nr_extents,
		     const uint32_t *keep, uint32_t nr_keep);
/* Whether le is watched and has any weight. */
int pieceheat_known(const struct pieceheat *ph, uint32_t le);
/*
 * le's weights, scaled alike (only their ratios mean anything), and their
 * sum in *total: for a caller that reads many pieces of one extent. NULL
 * when le is not known.
 */
const float *pieceheat_weights(const struct pieceheat *ph, uint32_t le, double *total);
/* Piece idx's share of le's weight, in [0, 1]; 0 when le is not known. */
double pieceheat_share(const struct pieceheat *ph, uint32_t le, uint32_t idx);
/*
 * How le's weight divides among its pieces for a plan, into
 * out[0..pieces_per_extent), telling reads spread evenly from reads
 * that stand out. Each piece's count of small random reads spread evenly
 * is near Poisson, so one beyond mean + 4 sqrt(mean) + 2 (mean: the
 * extent's weight over its pieces) is beyond chance. Returns:
 *
 *  1  with some piece beyond chance, each piece's share of the weight
 *     (pieceheat_share()); with none, an even share each, adding up to 1:
 *     reads spread evenly over an extent leave its pieces even shares
 *     however the counts fell, rather than the most to those that
 *     happened to be read most, so that it is placed whole or not at all.
 *  2  (PIECEPLAN_SHARES_PART) with none beyond chance, only when growing
 *     (le's weights are still being measured) and its reads fewer than
 *     its pieces (a mean below 1), which cannot show yet whether they are
 *     even: every share 0, where its heat lies not known yet.
 *  0  le is not known (out untouched).
 */
int pieceheat_plan_shares(const struct pieceheat *ph, uint32_t le, bool growing, double *out);
/*
 * The n pieces of le with the most weight (fewer when fewer have any), most
 * first, equal weight by lower index: idx[] and, when share is not NULL,
 * their shares.  Returns how many; 0 when le is not known.
 */
uint32_t pieceheat_hottest(const struct pieceheat *ph, uint32_t le, uint32_t n, uint32_t *idx,
			   double *share);
/*
 * The fewest pieces of le that hold share (0 < share <= 1) of its weight:
 * how finely its I/O is spread.  A few for hot blocks scattered in cold
 * data, most of them for a scan or uniform I/O.  0 when le is not known.
 */
uint32_t pieceheat_pieces_for(const struct pieceheat *ph, uint32_t le, double share);
/* Memory held. */
uint64_t pieceheat_bytes(const struct pieceheat *ph);

#endif
