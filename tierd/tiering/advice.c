/* SPDX-License-Identifier: GPL-2.0-or-later */
/* advice: what an SSD tier of another size would serve, from the pool's heat (pool.advise). */
#include "tiering.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor.h"
#include "pieceplan.h"
#include "tiering-internal.h"

/* Points of the curve drawn when no sizes are asked for, 0 and the top included. */
#define ADVICE_STEPS 10

/* Extents of data an SSD device of nr_pe extents takes: all but its swap reserve. */
static uint64_t data_extents(uint64_t nr_pe)
{
	uint32_t pe = nr_pe > UINT32_MAX ? UINT32_MAX : (uint32_t)nr_pe;
	uint32_t reserve = pool_reserve_for(pe);

	return pe > reserve ? pe - reserve : 0;
}

/* The smallest device, in extents, with capacity extents for data. */
static uint64_t device_extents(uint64_t capacity)
{
	uint64_t pe = capacity ? capacity + pool_reserve_for((uint32_t)capacity) : 0;

	while (capacity && pe > capacity && data_extents(pe - 1) >= capacity)
		pe--;
	while (data_extents(pe) < capacity)
		pe++;
	return pe;
}

static int by_size(const void *a, const void *b)
{
	const struct tiering_advice_point *x = a, *y = b;

	if (x->ssd_size != y->ssd_size)
		return x->ssd_size < y->ssd_size ? -1 : 1;
	return (int)y->current - (int)x->current; /* the current one survives the dedup */
}

/* The sizes to predict, in bytes of whole extents, sorted, each once. */
static int advice_points(struct tiering_advice_report *out, const uint64_t *sizes, size_t nr_sizes)
{
	uint64_t es = out->extent_size, top, n = 0;
	struct tiering_advice_point *v;

	v = calloc(nr_sizes + ADVICE_STEPS + 3, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[n++] = (struct tiering_advice_point){ .ssd_size = out->ssd_size, .current = true };
	for (size_t i = 0; i < nr_sizes; i++)
		v[n++].ssd_size = sizes[i] / es * es;
	if (!nr_sizes) {
		/* Past the larger of the SSD now and the one that holds it all, so both show. */
		top = out->all_hot_size > out->ssd_size ? out->all_hot_size : out->ssd_size;
		top = top / es + top / es / 4;
		if (top < ADVICE_STEPS)
			top = ADVICE_STEPS;
		for (uint64_t i = 0; i <= ADVICE_STEPS; i++)
			v[n++].ssd_size = top * i / ADVICE_STEPS * es;
		v[n++].ssd_size = out->all_hot_size;
	}
	qsort(v, n, sizeof(*v), by_size);
	out->nr_points = 0;
	for (size_t i = 0; i < n; i++)
		if (!out->nr_points || v[out->nr_points - 1].ssd_size != v[i].ssd_size)
			v[out->nr_points++] = v[i];
	out->points = v;
	return 0;
}

/* advisor_shares_fn over the planner's list: ext[i] is list->list[i]. */
struct advice_pieces {
	const struct pool *p;
	const struct pool_planner_list *list;
};

static int advice_piece_shares(void *ctx, uint32_t i, double *out)
{
	const struct advice_pieces *ap = ctx;

	return pool_piece_shares(ap->p, ap->list->list[i].le, false, out) == PIECEPLAN_SHARES_ALL;
}

int tiering_report_advice(struct tierings *ts, struct pool *p, uint32_t window_s,
			  const uint64_t *sizes, size_t nr_sizes, struct tiering_advice_report *out,
			  char *err, size_t err_len)
{
	struct tiering_stats_report stats = { 0 };
	struct tiering_plan_report plan = { 0 };
	struct pool_planner_list list = { 0 };
	struct planner_extent *ext = NULL;
	struct advisor adv = { 0 };
	struct tiering_pool *tp;
	struct pool_report rep;
	char path[PATH_MAX];
	struct policy pol;
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	*out = (struct tiering_advice_report){ 0 };
	if (r < 0)
		return r;
	if (nr_sizes > TIERING_ADVICE_POINTS)
		return errbuf_fail(-EINVAL, err, err_len, "at most %d SSD sizes",
				   TIERING_ADVICE_POINTS);
	r = tierings_load_policy(ts, tp->cfg.policy, &pol, path, sizeof(path), err, err_len);
	if (r < 0)
		return r;
	/* The window's I/O and the run's moves, as pool.stats and tier now --dry-run report them. */
	r = tiering_report_stats(ts, p, window_s, 0, 0, &stats, err, err_len);
	if (r == 0)
		r = tiering_report_plan(ts, p, 0, &plan, err, err_len);
	if (r < 0)
		goto out;
	/*
	 * The extents the planner would list: the others (cold on the HDD,
	 * unmapped) add no heat and no candidate, so the what-if costs what
	 * has heat or sits on the SSD, not the pool (52 million at 200 TiB).
	 */
	r = pool_planner_list(p, tp->pins, tp->nr_pins, &list);
	if (r == 0) {
		ext = malloc((list.nr_list ? list.nr_list : 1) * sizeof(*ext));
		r = ext ? 0 : -ENOMEM;
	}
	if (r == 0) {
		for (uint32_t i = 0; i < list.nr_list; i++)
			ext[i] = list.list[i].e;
		r = advisor_init(&adv, ext, list.nr_list, &pol);
	}
	if (r == 0 && pool_pieces_per_extent(p)) {
		struct advice_pieces ap = { .p = p, .list = &list };

		r = advisor_add_pieces(&adv, ext, list.nr_list, &pol, pool_pieces_per_extent(p),
				       advice_piece_shares, &ap);
	}
	if (r < 0) {
		errbuf_fail(r, err, err_len, "pool %s: cannot rank its extents: %s", pool_name(p),
			    strerror(-r));
		goto out;
	}
	pool_get_report(p, &rep);
	snprintf(out->policy, sizeof(out->policy), "%s", pol.name);
	out->heat_on = rep.heat.enabled;
	out->extent_size = rep.extent_size;
	if (rep.tiers[METADATA_TIER_SSD].present)
		out->ssd_size = (uint64_t)rep.tiers[METADATA_TIER_SSD].total_extents * rep.extent_size;
	out->all_hot_size = device_extents(advisor_capacity_for_all(&adv)) * rep.extent_size;
	out->all_hot_share = advisor_share(&adv, advisor_capacity_for_all(&adv));
	out->piece_size = adv.pieces_per_extent ? rep.extent_size / adv.pieces_per_extent : 0;
	out->promote_bytes = plan.promote_bytes;
	out->demote_bytes = plan.demote_bytes;
	out->window_seconds = stats.window_seconds;
	out->io[0] = stats.io[0];
	out->io[1] = stats.io[1];
	r = advice_points(out, sizes, nr_sizes);
	if (r < 0) {
		errbuf_fail(r, err, err_len, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < out->nr_points; i++) {
		struct tiering_advice_point *pt = &out->points[i];

		/* The SSD as it is keeps the capacity the planner gives it: the point a run aims at. */
		uint64_t capacity = pt->current ? list.ssd_capacity :
						  data_extents(pt->ssd_size / rep.extent_size);

		pt->ssd_io_share = advisor_share(&adv, capacity);
		pt->ssd_io_share_pieces = advisor_share_pieces(&adv, capacity);
	}
out:
	if (r < 0)
		tiering_advice_report_destroy(out);
	advisor_destroy(&adv);
	free(ext);
	pool_planner_list_destroy(&list);
	tiering_plan_report_destroy(&plan);
	tiering_stats_report_destroy(&stats);
	return r;
}

void tiering_advice_report_destroy(struct tiering_advice_report *r)
{
	if (!r)
		return;
	free(r->points);
	r->points = NULL;
	r->nr_points = 0;
}
