/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "pieceheat.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "piecemap.h"

/*
 * A piece's weight beyond mean + Z sqrt(mean) + MIN is beyond chance: for
 * a Poisson count of mean 3.5 (900 reads over 256 pieces) 13 or more has a
 * chance of 1 in 13,000, so one extent in 50 read evenly has such a piece;
 * for a mean of 10, 25 or more 1 in 21,000; for a mean of 0.1, 4 or more 1
 * in 260,000. (At Z = 3, one extent in 14.)
 */
#define PIECEHEAT_CHANCE_Z 4.0
#define PIECEHEAT_CHANCE_MIN 2.0
/* Reads a piece on average, below which an extent still measured is young. */
#define PIECEHEAT_CHANCE_MEAN_MIN 1.0
/* As heat.c: past 40 half-lives of growth, weights are brought back to scale 1. */
#define PIECEHEAT_SCALE_MAX 1099511627776.0

int pieceheat_init(struct pieceheat *ph, uint32_t pieces_per_extent, uint32_t max_extents)
{
	if (!ph)
		return -EINVAL;
	memset(ph, 0, sizeof(*ph));
	if (pieces_per_extent < 2 || pieces_per_extent > PIECEMAP_MAX_PIECES_PER_EXTENT ||
	    (pieces_per_extent & (pieces_per_extent - 1)) || !max_extents)
		return -EINVAL;
	ph->v = calloc(max_extents, sizeof(*ph->v));
	if (!ph->v)
		return -ENOMEM;
	ph->pieces_per_extent = pieces_per_extent;
	ph->max_extents = max_extents;
	ph->scale = 1.0;
	return 0;
}

void pieceheat_destroy(struct pieceheat *ph)
{
	if (!ph)
		return;
	for (uint32_t i = 0; i < ph->nr; i++)
		free(ph->v[i].w);
	free(ph->v);
	memset(ph, 0, sizeof(*ph));
}

/* Every weight divided by the scale, which becomes 1: exact enough, and rare. */
static void pieceheat_rescale(struct pieceheat *ph, double decay)
{
	double factor = decay / ph->scale;

	for (uint32_t i = 0; i < ph->nr; i++) {
		struct pieceheat_extent *e = &ph->v[i];
		double total = 0;

		for (uint32_t k = 0; k < ph->pieces_per_extent; k++) {
			e->w[k] = (float)(e->w[k] * factor);
			total += e->w[k];
		}
		e->total = (float)total;
	}
	ph->scale = 1.0;
}

int pieceheat_sample_begin(struct pieceheat *ph, const struct heat_params *p, uint64_t now_ns)
{
	double decay;

	if (!ph || !ph->v || heat_params_valid(p) < 0 || !now_ns || now_ns < ph->last_sample_ns)
		return -EINVAL;
	decay = ph->last_sample_ns ? heat_decay_factor(p, now_ns - ph->last_sample_ns) : 1.0;
	if (!(ph->scale < PIECEHEAT_SCALE_MAX * decay))
		pieceheat_rescale(ph, decay);
	else
		ph->scale /= decay;
	ph->last_sample_ns = now_ns;
	return 0;
}

/* Where le is in v[], or where it would go. */
static uint32_t pieceheat_search(const struct pieceheat *ph, uint32_t le)
{
	uint32_t lo = 0, hi = ph->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ph->v[mid].le < le)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct pieceheat_extent *pieceheat_find(const struct pieceheat *ph, uint32_t le)
{
	uint32_t at = ph && ph->v ? pieceheat_search(ph, le) : 0;

	return ph && ph->v && at < ph->nr && ph->v[at].le == le ? &ph->v[at] : NULL;
}

static void pieceheat_remove_at(struct pieceheat *ph, uint32_t at)
{
	free(ph->v[at].w);
	memmove(&ph->v[at], &ph->v[at + 1], (size_t)(ph->nr - at - 1) * sizeof(*ph->v));
	ph->nr--;
}

/* The watched extent with the least weight: the one a newcomer may replace. */
static uint32_t pieceheat_coldest(const struct pieceheat *ph)
{
	uint32_t coldest = 0;

	for (uint32_t i = 1; i < ph->nr; i++)
		if (ph->v[i].total < ph->v[coldest].total)
			coldest = i;
	return coldest;
}

/*
 * Extent le's entry, watched from now on when it is not yet and may take
 * the place of the coldest one (weight: what it would bring, scaled).
 * NULL with *r 0 when it may not (the caller's weight is dropped and
 * counted), or with *r -ENOMEM.
 */
static struct pieceheat_extent *pieceheat_watch(struct pieceheat *ph, uint32_t le, double weight,
						int *r)
{
	uint32_t at = pieceheat_search(ph, le);
	float *w;

	*r = 0;
	if (at < ph->nr && ph->v[at].le == le)
		return &ph->v[at];
	w = calloc(ph->pieces_per_extent, sizeof(*w));
	if (!w) {
		*r = -ENOMEM;
		return NULL;
	}
	if (ph->nr == ph->max_extents) {
		uint32_t coldest = pieceheat_coldest(ph);

		if (!(ph->v[coldest].total < weight)) {
			free(w);
			ph->dropped++;
			return NULL;
		}
		pieceheat_remove_at(ph, coldest);
		at = pieceheat_search(ph, le);
	}
	memmove(&ph->v[at + 1], &ph->v[at], (size_t)(ph->nr - at) * sizeof(*ph->v));
	ph->v[at] = (struct pieceheat_extent){ .le = le, .w = w };
	ph->nr++;
	return &ph->v[at];
}

int pieceheat_apply(struct pieceheat *ph, const struct heat_params *p, uint32_t le,
		    const struct statsparse_area *a)
{
	struct pieceheat_extent *e;
	uint32_t ppe;
	double sum = 0;
	int r;

	if (!ph || !ph->v || !a || heat_params_valid(p) < 0)
		return -EINVAL;
	ppe = ph->pieces_per_extent;
	for (uint32_t k = 0; k < ppe; k++)
		sum += heat_score(p, &a[k]);
	if (sum <= 0)
		return 0;
	e = pieceheat_watch(ph, le, sum * ph->scale, &r);
	if (!e)
		return r;
	for (uint32_t k = 0; k < ppe; k++)
		e->w[k] += (float)(heat_score(p, &a[k]) * ph->scale);
	e->total += (float)(sum * ph->scale);
	ph->changes++;
	return 0;
}

int pieceheat_add(struct pieceheat *ph, uint32_t le, const uint16_t *idx, const float *weight,
		  uint32_t n)
{
	struct pieceheat_extent *e;
	double sum = 0;
	int r;

	if (!ph || !ph->v || (n && (!idx || !weight)))
		return -EINVAL;
	for (uint32_t j = 0; j < n; j++) {
		if (idx[j] >= ph->pieces_per_extent || !(weight[j] >= 0) || !(weight[j] < 3e38f))
			return -EINVAL;
		sum += weight[j];
	}
	if (!(sum > 0))
		return 0;
	e = pieceheat_watch(ph, le, sum * ph->scale, &r);
	if (!e)
		return r;
	for (uint32_t j = 0; j < n; j++) {
		e->w[idx[j]] += (float)(weight[j] * ph->scale);
		e->total += (float)(weight[j] * ph->scale);
	}
	ph->changes++;
	return 0;
}

double pieceheat_weight(const struct pieceheat *ph, uint32_t le, uint32_t idx)
{
	const struct pieceheat_extent *e = pieceheat_find(ph, le);

	return e && idx < ph->pieces_per_extent ? e->w[idx] / ph->scale : 0;
}

int pieceheat_forget(struct pieceheat *ph, uint32_t le)
{
	if (!pieceheat_find(ph, le))
		return ph ? -ENOENT : -EINVAL;
	pieceheat_remove_at(ph, pieceheat_search(ph, le));
	ph->changes++;
	return 0;
}

static int pieceheat_cmp_le(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static bool pieceheat_in(const uint32_t *keep, uint32_t nr_keep, uint32_t le)
{
	return nr_keep && bsearch(&le, keep, nr_keep, sizeof(*keep), pieceheat_cmp_le);
}

/* The coldest extent not in keep, or the coldest of all when every one is. */
static uint32_t pieceheat_coldest_but(const struct pieceheat *ph, const uint32_t *keep,
				      uint32_t nr_keep)
{
	uint32_t coldest = ph->nr;

	for (uint32_t i = 0; i < ph->nr; i++)
		if (!pieceheat_in(keep, nr_keep, ph->v[i].le) &&
		    (coldest == ph->nr || ph->v[i].total < ph->v[coldest].total))
			coldest = i;
	return coldest < ph->nr ? coldest : pieceheat_coldest(ph);
}

int pieceheat_resize(struct pieceheat *ph, uint32_t max_extents, uint32_t nr_extents,
		     const uint32_t *keep, uint32_t nr_keep)
{
	struct pieceheat_extent *v;

	if (!ph || !ph->v || !max_extents || (!keep && nr_keep))
		return -EINVAL;
	if (max_extents > ph->max_extents) {
		v = realloc(ph->v, (size_t)max_extents * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ph->v = v;
	}
	while (ph->nr && ph->v[ph->nr - 1].le >= nr_extents) {
		pieceheat_remove_at(ph, ph->nr - 1);
		ph->changes++;
	}
	while (ph->nr > max_extents) {
		pieceheat_remove_at(ph, pieceheat_coldest_but(ph, keep, nr_keep));
		ph->changes++;
	}
	if (max_extents < ph->max_extents) {
		/* Smaller: a failure keeps the larger array, which is as good. */
		v = realloc(ph->v, (size_t)max_extents * sizeof(*v));
		if (v)
			ph->v = v;
	}
	ph->max_extents = max_extents;
	return 0;
}

int pieceheat_known(const struct pieceheat *ph, uint32_t le)
{
	const struct pieceheat_extent *e = pieceheat_find(ph, le);

	return e && e->total > 0;
}

const float *pieceheat_weights(const struct pieceheat *ph, uint32_t le, double *total)
{
	const struct pieceheat_extent *e = pieceheat_find(ph, le);

	if (!e || !(e->total > 0))
		return NULL;
	*total = e->total;
	return e->w;
}

double pieceheat_share(const struct pieceheat *ph, uint32_t le, uint32_t idx)
{
	const struct pieceheat_extent *e = pieceheat_find(ph, le);
	double share;

	if (!e || !(e->total > 0) || idx >= ph->pieces_per_extent)
		return 0;
	/* Float sums round: a share is never above 1. */
	share = e->w[idx] / (double)e->total;
	return share < 1 ? share : 1;
}

int pieceheat_plan_shares(const struct pieceheat *ph, uint32_t le, bool growing, double *out)
{
	const struct pieceheat_extent *e = pieceheat_find(ph, le);
	double total, mean, chance;
	uint32_t k;

	if (!e || !(e->total > 0))
		return 0;
	total = e->total / ph->scale;
	mean = total / ph->pieces_per_extent;
	chance = mean + PIECEHEAT_CHANCE_Z * sqrt(mean) + PIECEHEAT_CHANCE_MIN;
	for (k = 0; k < ph->pieces_per_extent; k++)
		if (e->w[k] / ph->scale > chance)
			break;
	/*
	 * A piece beyond chance: the reads are not spread evenly, and the
	 * other pieces rank by theirs too. On zipf the pieces below the
	 * hottest few hold a share that falls off piece by piece; taken as
	 * even, the next best were picked at random.
	 */
	if (k < ph->pieces_per_extent) {
		for (k = 0; k < ph->pieces_per_extent; k++)
			out[k] = pieceheat_share(ph, le, k);
		return 1;
	}
	/*
	 * Fewer reads than pieces cannot show an extent even: a block read
	 * twice in a few seconds' reads is not beyond chance. Where the reads
	 * are still coming, the planner is told that nothing is known yet
	 * (it takes the extent to be like those whose reads have told).
	 */
	if (growing && mean < PIECEHEAT_CHANCE_MEAN_MIN) {
		memset(out, 0, ph->pieces_per_extent * sizeof(*out));
		return 2;
	}
	for (k = 0; k < ph->pieces_per_extent; k++)
		out[k] = 1.0 / ph->pieces_per_extent;
	return 1;
}

uint32_t pieceheat_hottest(const struct pieceheat *ph, uint32_t le, uint32_t n, uint32_t *idx,
			   double *share)
{
	const struct pieceheat_extent *e = pieceheat_find(ph, le);
	uint32_t nr = 0;

	if (!e || !(e->total > 0) || !idx)
		return 0;
	/* Insertion into the n best so far: n is a batch's worth of pieces, small. */
	for (uint32_t k = 0; k < ph->pieces_per_extent; k++) {
		uint32_t at = nr;

		if (!(e->w[k] > 0))
			continue;
		while (at > 0 && e->w[idx[at - 1]] < e->w[k])
			at--;
		if (at >= n)
			continue;
		if (nr < n)
			nr++;
		memmove(&idx[at + 1], &idx[at], (size_t)(nr - 1 - at) * sizeof(*idx));
		idx[at] = k;
	}
	for (uint32_t i = 0; share && i < nr; i++)
		share[i] = pieceheat_share(ph, le, idx[i]);
	return nr;
}

static int heavier_first(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x > y ? -1 : x < y;
}

uint32_t pieceheat_pieces_for(const struct pieceheat *ph, uint32_t le, double share)
{
	const struct pieceheat_extent *e = pieceheat_find(ph, le);
	double want, sum = 0;
	uint32_t n = 0;
	float *w;

	if (!e || !(e->total > 0) || !(share > 0))
		return 0;
	w = malloc((size_t)ph->pieces_per_extent * sizeof(*w));
	if (!w)
		return 0;
	memcpy(w, e->w, (size_t)ph->pieces_per_extent * sizeof(*w));
	qsort(w, ph->pieces_per_extent, sizeof(*w), heavier_first);
	/* The sum of the floats, not e->total: rounding must not leave the last piece out. */
	for (uint32_t k = 0; k < ph->pieces_per_extent; k++)
		sum += w[k];
	want = (share < 1 ? share : 1) * sum;
	for (sum = 0; n < ph->pieces_per_extent && sum < want; n++)
		sum += w[n];
	free(w);
	return n;
}

uint64_t pieceheat_bytes(const struct pieceheat *ph)
{
	return (uint64_t)ph->max_extents * sizeof(*ph->v) +
	       (uint64_t)ph->nr * ph->pieces_per_extent * sizeof(float);
}
