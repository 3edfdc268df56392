/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pieces: the plan of a run on a pool that watches pieces (the piece-heat
 * setting): whole extents and pieces of extents ranked together
 * (lib/pieceplan.h), and the moves that reach that placement, in the
 * phases a run carries out one after another.
 */
#include "tiering-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pieceplan.h"

bool tiering_pieces_apply(const struct tiering_pool *tp, const struct policy *pol)
{
	/* The ranking is highest's; other policies fill or empty the SSD by their own rules. */
	return pol->promote == POLICY_PROMOTE_HEAT && pol->demote == POLICY_DEMOTE_NEEDED &&
	       pool_is_active(tp->p) && pool_pieces_per_extent(tp->p) > 0;
}

/*
 * The share of the listed heat on the SSD now: whole extents there, and
 * pieces out at the shares the ranking takes (after a restart too).
 */
static double tiering_pieces_share_now(const struct pieceplan_input *in, double total)
{
	double on_ssd = 0, *shares;

	if (!(total > 0))
		return 0;
	shares = malloc(in->pieces_per_extent * sizeof(*shares));
	if (!shares)
		return 0;
	for (uint32_t i = 0; i < in->nr; i++) {
		const struct pieceplan_extent *e = &in->ext[i];
		double sum, out = 0;

		if (e->whole_ssd) {
			on_ssd += e->heat;
			continue;
		}
		if (!e->nr_out)
			continue;
		sum = pieceplan_shares_total(in->shares(in->ctx, i, shares), shares,
					     in->pieces_per_extent);
		for (uint32_t j = 0; j < e->nr_out; j++)
			out += shares[e->out[j]];
		if (sum > 0)
			on_ssd += e->heat * out / sum;
	}
	free(shares);
	return on_ssd / total;
}

/*
 * The moves into plan (whole extents) and out (pieces), within max_bytes
 * (0: no limit) in the order they run: a move that does not fit ends the
 * plan there.
 */
static int tiering_pieces_split(const struct pieceplan_moves *m, uint64_t es, uint64_t piece_bytes,
				uint64_t max_bytes, struct plan *plan,
				struct tiering_piece_plan *out)
{
	uint64_t bytes = 0;

	plan->moves = calloc(m->whole_in + m->whole_out + 1, sizeof(*plan->moves));
	out->home = calloc(m->pieces_home + 1, sizeof(*out->home));
	out->out = calloc(m->pieces_out + 1, sizeof(*out->out));
	if (!plan->moves || !out->home || !out->out)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr; i++) {
		const struct pieceplan_move *mv = &m->v[i];
		uint64_t b = mv->whole ? es : piece_bytes;

		if (max_bytes && bytes + b > max_bytes) {
			plan->budget_exhausted = true;
			break;
		}
		bytes += b;
		if (mv->whole) {
			plan->moves[plan->nr++] = (struct planner_move){
				.le = mv->le, .to = mv->to_ssd ? PLANNER_SSD : PLANNER_HDD };
		} else if (mv->to_ssd) {
			out->out[out->nr_out++] = (struct job_piece_req){ mv->le, mv->piece };
		} else {
			out->home[out->nr_home++] = (struct job_piece_req){ mv->le, mv->piece };
		}
		if (mv->to_ssd) {
			plan->promote_extents += mv->whole;
			plan->promote_bytes += b;
		} else {
			plan->demote_extents += mv->whole;
			plan->demote_bytes += b;
		}
	}
	return 0;
}

int tiering_piece_plan(struct tiering_pool *tp, const struct policy *pol, uint64_t max_bytes,
		       struct plan *plan, struct tiering_piece_plan *out)
{
	struct pool_planner_list list = { 0 };
	struct pool_piece_input pi = { 0 };
	struct pieceplan_moves moves = { 0 };
	struct pieceplan pp = { 0 };
	struct pieceplan_input in;
	uint64_t es = pool_extent_size(tp->p);
	int r;

	memset(plan, 0, sizeof(*plan));
	memset(out, 0, sizeof(*out));
	r = pool_planner_list(tp->p, tp->pins, tp->nr_pins, &list);
	if (r < 0)
		goto out;
	r = pool_piece_input(tp->p, &list, pol->min_heat, pol->ssd_headroom, (uint32_t)time(NULL),
			     pol->min_residency_s, &pi);
	if (r == -ENOENT || r == -ENODEV) {
		r = 1; /* no pieces to place: the whole planner's plan */
		goto out;
	}
	if (r < 0)
		goto out;
	pool_piece_input_use(&pi, &in);
	/* The policy's hysteresis is how many times hotter; the ranking's, the bonus over 1. */
	in.hysteresis = pol->hysteresis > 1 ? pol->hysteresis - 1 : 0;
	/*
	 * A plan with pieces keeps a container's worth of room back, even when
	 * its pieces are only a fill of what whole extents leave: bench-compare's
	 * profiles sent 17 whole extents and 231 pieces, or 18 whole, where the
	 * whole planner sent 19. While no container is in use, its room is
	 * tried too.
	 */
	r = pieceplan_select_rooms(&in, pi.room_whole, &pp);
	if (r == 0)
		r = pieceplan_moves(&in, &pp, &moves);
	if (r < 0)
		goto out;
	/*
	 * Whole extents home that the HDD tier has no room for, even with
	 * what the promotions free: a pin to the HDD on a full pool whose
	 * capacity is both tiers, where the room has to come from cold HDD
	 * extents trading places with the pinned ones. The whole planner
	 * does that; heat alone never chooses them.
	 */
	if (moves.whole_out > moves.whole_in + list.hdd_free) {
		r = 1;
		goto out;
	}
	out->piece_bytes = es / pi.pieces_per_extent;
	r = tiering_pieces_split(&moves, es, out->piece_bytes, max_bytes, plan, out);
	if (r < 0)
		goto out;
	/* Said as the whole planner says it: the run's message and table.passed_over_extents. */
	plan->table_skipped = pp.left_out;
	plan->ssd_share_before = tiering_pieces_share_now(&in, pp.heat_total);
	plan->ssd_share_after = pp.heat_total > 0 ? pp.heat_placed / pp.heat_total : 0;
out:
	if (r < 0) {
		plan_destroy(plan);
		tiering_piece_plan_destroy(out);
	}
	pieceplan_moves_destroy(&moves);
	pieceplan_destroy(&pp);
	pool_piece_input_destroy(&pi);
	pool_planner_list_destroy(&list);
	return r;
}

void tiering_piece_plan_destroy(struct tiering_piece_plan *pp)
{
	if (!pp)
		return;
	free(pp->home);
	free(pp->out);
	memset(pp, 0, sizeof(*pp));
}
