/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "zone.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Fine zones a layout of zone size ze allows, or 0 when ze does not fit the budget. */
static uint32_t zone_fine_allowed(const struct zone_layout *l, uint64_t budget_bytes)
{
	uint64_t zone_bytes = (uint64_t)l->zone_extents * l->area_bytes, fine;

	if (zone_coarse_bytes(l) * ZONE_COARSE_SHARE > budget_bytes ||
	    zone_coarse_bytes(l) + zone_bytes > budget_bytes)
		return 0;
	fine = (budget_bytes - zone_coarse_bytes(l)) / zone_bytes;
	if (fine > ZONE_MAX_FINE)
		fine = ZONE_MAX_FINE;
	return fine < l->nr_zones ? (uint32_t)fine : l->nr_zones;
}

int zone_layout_plan(struct zone_layout *l, uint32_t nr_extents, uint64_t area_bytes,
		     uint64_t budget_bytes)
{
	struct zone_layout best = { 0 };
	uint64_t best_cover = 0;

	if (!area_bytes)
		return -EINVAL;
	*l = (struct zone_layout){
		.nr_extents = nr_extents,
		.zone_extents = 1,
		.nr_zones = nr_extents,
		.area_bytes = area_bytes,
		.budget_bytes = budget_bytes,
	};
	if ((uint64_t)nr_extents * area_bytes <= budget_bytes)
		return 0;
	/*
	 * The most extents at extent resolution at once, in the smallest zones
	 * that give it: larger zones cover more while ZONE_MAX_FINE binds, and
	 * about the same once the budget does, only coarser.
	 */
	for (uint32_t ze = 2; ze <= ZONE_MAX_EXTENTS; ze *= 2) {
		uint32_t fine;

		l->zone_extents = ze;
		l->nr_zones = (uint32_t)(((uint64_t)nr_extents + ze - 1) / ze);
		fine = zone_fine_allowed(l, budget_bytes);
		if (!fine) {
			if (best_cover)
				break;
			continue;
		}
		if ((uint64_t)fine * ze > best_cover) {
			best = *l;
			best.max_fine = fine;
			best_cover = (uint64_t)fine * ze;
		}
		if (fine < ZONE_MAX_FINE && fine < l->nr_zones)
			break;
	}
	if (!best_cover)
		return -ENOSPC;
	*l = best;
	return 0;
}

uint32_t zone_extents_of(const struct zone_layout *l, uint32_t z, uint32_t *first)
{
	uint64_t start = (uint64_t)z * l->zone_extents;

	if (start >= l->nr_extents) {
		*first = l->nr_extents;
		return 0;
	}
	*first = (uint32_t)start;
	return l->nr_extents - start < l->zone_extents ? (uint32_t)(l->nr_extents - start) :
							  l->zone_extents;
}

uint64_t zone_coarse_bytes(const struct zone_layout *l)
{
	return (uint64_t)l->nr_zones * l->area_bytes;
}

uint64_t zone_fine_bytes(const struct zone_layout *l, uint32_t nr_fine)
{
	return l->zone_extents > 1 ? (uint64_t)nr_fine * l->zone_extents * l->area_bytes : 0;
}

void zone_choice_default(struct zone_choice *c, const struct zone_layout *l)
{
	*c = (struct zone_choice){
		.hysteresis = 1.25,
		.survey = l->max_fine / 4,
		.max_new = 0,
	};
}

/* Hotter first; equal heat by lower zone, so the choice does not depend on qsort. */
static int hotter_first(const void *a, const void *b, void *ctx)
{
	const double *heat = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (heat[x] != heat[y])
		return heat[x] > heat[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int colder_first(const void *a, const void *b, void *ctx)
{
	return -hotter_first(a, b, ctx);
}

int zone_choose(const struct zone_layout *l, struct zone_choice *c, const double *heat,
		uint8_t *kind)
{
	uint32_t nz = l->nr_zones, survey = c->survey < l->max_fine ? c->survey : l->max_fine;
	uint32_t hot_slots = l->max_fine - survey, nr_ranked = 0, nr_hot = 0, nr_survey = 0;
	uint32_t nr_kept, added = 0, j = 0, *ranked = NULL, *hot = NULL;
	uint32_t survey_from = c->survey_next;
	uint8_t *want = NULL;
	double last_added = -1;
	int changes = 0;

	if (l->max_fine == 0) {
		for (uint32_t z = 0; z < nz; z++)
			changes += kind[z] != ZONE_COARSE;
		memset(kind, ZONE_COARSE, nz);
		return changes;
	}
	ranked = malloc((size_t)nz * sizeof(*ranked));
	hot = malloc((size_t)nz * sizeof(*hot));
	want = calloc(nz, 1);
	if (!ranked || !hot || !want) {
		changes = -ENOMEM;
		goto out;
	}
	/* The hot zones that stay hot: any heat left, coldest first. */
	for (uint32_t z = 0; z < nz; z++) {
		if (kind[z] == ZONE_HOT && heat[z] > 0)
			hot[nr_hot++] = z;
		else if (heat[z] > 0)
			ranked[nr_ranked++] = z;
	}
	qsort_r(hot, nr_hot, sizeof(*hot), colder_first, (void *)heat);
	if (nr_hot > hot_slots) {
		memmove(hot, hot + (nr_hot - hot_slots), (size_t)hot_slots * sizeof(*hot));
		nr_hot = hot_slots;
	}
	for (uint32_t i = 0; i < nr_hot; i++)
		want[hot[i]] = ZONE_HOT;
	nr_kept = nr_hot;
	/*
	 * Candidates hottest first: a free slot takes one, a full set gives its
	 * coldest kept zone only for one hotter by the hysteresis factor. Once a
	 * newcomer is the coldest, every later candidate is colder still: stop.
	 * Newcomers are not in hot[]: past its kept zones there is none to give.
	 */
	qsort_r(ranked, nr_ranked, sizeof(*ranked), hotter_first, (void *)heat);
	for (uint32_t i = 0; i < nr_ranked; i++) {
		uint32_t z = ranked[i];

		if (c->max_new && added >= c->max_new)
			break;
		if (nr_hot < hot_slots) {
			nr_hot++;
		} else {
			if (j >= nr_kept || (last_added >= 0 && last_added < heat[hot[j]]) ||
			    !(heat[z] > c->hysteresis * heat[hot[j]]))
				break;
			want[hot[j++]] = ZONE_COARSE;
		}
		want[z] = ZONE_HOT;
		last_added = heat[z];
		added += kind[z] == ZONE_COARSE;
	}
	/* Survey zones stay until the survey moves on; hot ones left it. */
	for (uint32_t z = 0; z < nz && !c->advance_survey; z++)
		if (kind[z] == ZONE_SURVEY && want[z] == ZONE_COARSE && nr_survey < survey) {
			want[z] = ZONE_SURVEY;
			nr_survey++;
		}
	/* From where it stood: survey_next moves on as zones are taken. */
	for (uint32_t n = 0; n < nz && nr_survey < survey; n++) {
		uint32_t z = (uint32_t)(((uint64_t)survey_from + n) % nz);

		if (c->max_new && added >= c->max_new)
			break;
		if (want[z] != ZONE_COARSE)
			continue;
		want[z] = ZONE_SURVEY;
		nr_survey++;
		added += kind[z] != ZONE_SURVEY;
		c->survey_next = (uint32_t)(((uint64_t)z + 1) % nz);
	}
	c->advance_survey = 0;
	for (uint32_t z = 0; z < nz; z++) {
		changes += kind[z] != want[z];
		kind[z] = want[z];
	}
out:
	free(ranked);
	free(hot);
	free(want);
	return changes;
}

int zone_apply(const struct zone_layout *l, const uint8_t *kind, uint32_t z,
	       struct heat_table *t, const struct heat_params *p,
	       const struct statsparse_area *coarse, const struct statsparse_area *fine,
	       double *share)
{
	uint32_t first, n;
	int r;

	if (z >= l->nr_zones)
		return -EINVAL;
	n = zone_extents_of(l, z, &first);
	if (kind[z] != ZONE_COARSE) {
		if (!fine)
			return -EINVAL;
		r = heat_apply_range(t, p, fine, first, n);
		return r < 0 ? r : 1;
	}
	return heat_apply_shared(t, p, coarse, first, n, share);
}
