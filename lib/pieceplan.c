/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "pieceplan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piecemap.h"

/*
 * A piece is ranked as if it took this many slots: its own, and what it
 * costs besides (up to two targets of the table, a copy and a commit of its
 * own, a lookup in the piece array).  So an extent goes by pieces only when
 * they hold its heat in fewer than half its slots: random I/O all over an
 * extent sends it whole, not as 255 pieces that save one slot.
 */
#define PIECEPLAN_PIECE_WEIGHT 2.0

/* Bisection steps: prices to 2^-40 (slots) and 2^-24 (pieces) of their range; the fill does the rest. */
#define PIECEPLAN_LAMBDA_STEPS 40
#define PIECEPLAN_MU_STEPS 24

/* Plans at most this many times over to fit the table's entries (pieceplan_select()). */
#define PIECEPLAN_TABLE_PASSES 4

/* One extent as the search sees it: its shares sorted, most first. */
struct pp_ext {
	double heat;
	double whole_worth; /* its heat, with the hysteresis' bonus when whole on the SSD now */
	double *prefix; /* [k]: the sum of the k largest shares; NULL: whole only */
	uint16_t *idx;  /* [k]: the piece of the k-th largest share */
	bool fixed;     /* a pin that fits: whole, outside the search */
	double top;     /* the worth of its hottest piece (its heat without shares) */
	bool no_whole;  /* the rest of its heat not placed yet (PIECEPLAN_SHARES_PART) */
};

struct pp_eval {
	uint64_t room, pieces, whole;
	double heat;
};

struct pp_ctx {
	struct pp_ext *e;
	uint32_t nr, ppe;
	uint64_t room;      /* left after the pins */
	bool pieces_ok;     /* a piece budget and some shares */
	/*
	 * The extents that can only go whole (no shares, or no piece budget),
	 * hottest first, and prefix sums of their heat: at a price they are
	 * the first few, found by a binary search, so that a search step costs
	 * the extents with shares, not every hot extent of the pool.
	 */
	double *whole_heat, *whole_prefix;
	uint32_t nr_whole;
};

/* The k-th largest share of e. */
static double pp_share(const struct pp_ext *e, uint32_t k)
{
	return e->prefix[k + 1] - e->prefix[k];
}

double pieceplan_shares_total(int r, const double *shares, uint32_t ppe)
{
	double sum = 0;

	if (r != PIECEPLAN_SHARES_ALL && r != PIECEPLAN_SHARES_PART)
		return 0;
	for (uint32_t k = 0; k < ppe; k++)
		sum += shares[k];
	return r == PIECEPLAN_SHARES_PART && sum > 0 && sum < 1 ? 1 : sum;
}

/*
 * Extent i's shares from the callback, into out: its return. A young
 * extent (PIECEPLAN_SHARES_PART) in a plan whose known extents are mostly
 * even (young_even) is taken as even too: the rest of its heat spread
 * over the pieces it does not place, and PIECEPLAN_SHARES_ALL.
 */
static int pp_get_shares(const struct pieceplan_input *in, bool young_even, uint32_t i,
			 double *out)
{
	uint32_t ppe = in->pieces_per_extent, known = 0;
	double sum = 0;
	int r;

	r = in->shares ? in->shares(in->ctx, i, out) : 0;
	if (r != PIECEPLAN_SHARES_PART || !young_even)
		return r;
	for (uint32_t k = 0; k < ppe; k++) {
		/* Left for pp_load_shares() to refuse. */
		if (!isfinite(out[k]) || out[k] < 0)
			return r;
		if (out[k] > 0) {
			sum += out[k];
			known++;
		}
	}
	if (known == ppe || sum >= 1)
		return PIECEPLAN_SHARES_ALL;
	for (uint32_t k = 0; k < ppe; k++)
		if (out[k] == 0)
			out[k] = (1 - sum) / (ppe - known);
	return PIECEPLAN_SHARES_ALL;
}

/* How many of e's pieces are worth more than theta each. */
static uint32_t pp_count_above(const struct pp_ext *e, uint32_t ppe, double theta)
{
	uint32_t lo = 0, hi = ppe;

	/* Shares are sorted most first: the first k are those above. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (e->heat * pp_share(e, mid) > theta)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* e's best choice at prices lambda, mu: 0 nothing, ppe whole (*whole set), else that many pieces. */
static uint32_t pp_choose(const struct pp_ctx *c, const struct pp_ext *e, double lambda, double mu,
			  bool *whole)
{
	double whole_v = e->no_whole ? 0 : e->whole_worth - lambda * c->ppe, pieces_v = 0;
	uint32_t k = 0;

	double theta = lambda * PIECEPLAN_PIECE_WEIGHT + mu;

	*whole = false;
	/* Most extents are worth nothing at most prices: no search for them. */
	if (whole_v <= 0 && e->top <= theta)
		return 0;
	if (c->pieces_ok && e->prefix) {
		k = pp_count_above(e, c->ppe, theta);
		pieces_v = e->heat * e->prefix[k] - k * theta;
	}
	/* Equal worth: whole, which costs no piece of the table's budget. */
	if (whole_v > 0 && whole_v >= pieces_v) {
		*whole = true;
		return c->ppe;
	}
	return pieces_v > 0 ? k : 0;
}

static struct pp_eval pp_evaluate(const struct pp_ctx *c, double lambda, double mu)
{
	struct pp_eval v = { 0 };
	uint32_t lo = 0, hi = c->nr_whole;

	/* Whole-only extents worth more than their room at lambda: the hottest few. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->whole_heat[mid] - lambda * c->ppe > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	v.whole = lo;
	v.room = (uint64_t)lo * c->ppe;
	v.heat = c->whole_prefix[lo];
	for (uint32_t i = 0; i < c->nr; i++) {
		const struct pp_ext *e = &c->e[i];
		bool whole;
		uint32_t k;

		if (e->fixed || e->heat <= 0 || !e->prefix || !c->pieces_ok)
			continue;
		k = pp_choose(c, e, lambda, mu, &whole);
		v.room += k;
		if (whole) {
			v.whole++;
			v.heat += e->whole_worth;
		} else if (k) {
			v.pieces += k;
			v.heat += e->heat * e->prefix[k];
		}
	}
	return v;
}

/* The lowest price per slot at which the choices fit the room, at mu. */
static double pp_lambda(const struct pp_ctx *c, double mu, double hi)
{
	/*
	 * Room is never quite free. At a price of 0 an extent whose reads sit
	 * in a few of its pieces is worth as much whole, and the tie sends it
	 * whole: 256 slots for what a few pieces hold, moved before any piece
	 * (a run's bytes spent on it) and then kept by min_residency. Under
	 * auto on zipf, plans on a few seconds of heat, with room to spare,
	 * sent 9 to 15 extents so. At the smallest price the bisection tells
	 * from 0 such an extent goes as its pieces, and one whose heat needs
	 * more than half of them still goes whole.
	 */
	double lo = hi / (double)(1ull << PIECEPLAN_LAMBDA_STEPS);

	if (pp_evaluate(c, lo, mu).room <= c->room)
		return lo;
	for (int i = 0; i < PIECEPLAN_LAMBDA_STEPS; i++) {
		double mid = (lo + hi) / 2;

		if (pp_evaluate(c, mid, mu).room <= c->room)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static int pp_by_index(const void *a, const void *b)
{
	uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;

	return (x > y) - (x < y);
}

struct pp_sort {
	double share;
	uint16_t idx;
};

static int pp_by_share(const void *a, const void *b)
{
	const struct pp_sort *x = a, *y = b;

	if (x->share != y->share)
		return x->share < y->share ? 1 : -1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* e's shares from the callback, sorted; e->prefix stays NULL when unknown. */
static int pp_load_shares(const struct pieceplan_input *in, bool young_even, uint32_t i,
			  struct pp_ext *e, double *raw, struct pp_sort *sorted)
{
	uint32_t ppe = in->pieces_per_extent;
	double sum, run = 0;
	int r;

	r = pp_get_shares(in, young_even, i, raw);
	if (r != PIECEPLAN_SHARES_ALL && r != PIECEPLAN_SHARES_PART)
		return 0;
	for (uint32_t k = 0; k < ppe; k++)
		if (!isfinite(raw[k]) || raw[k] < 0)
			return -EINVAL;
	/*
	 * Where the rest of a young extent's heat lies is not known: it goes
	 * nowhere yet, neither by pieces nor whole (unless it is whole on the
	 * SSD now, where it may stay).
	 */
	e->no_whole = r == PIECEPLAN_SHARES_PART && !in->ext[i].whole_ssd;
	sum = pieceplan_shares_total(r, raw, ppe);
	if (!(sum > 0)) {
		if (e->no_whole)
			e->heat = 0;
		return 0;
	}
	for (uint32_t k = 0; k < ppe; k++)
		sorted[k] = (struct pp_sort){ raw[k] / sum, (uint16_t)k };
	/* A piece out stays unless another is worth more than its bonus. */
	for (uint32_t j = 0; j < in->ext[i].nr_out; j++)
		sorted[in->ext[i].out[j]].share *= 1 + in->hysteresis;
	qsort(sorted, ppe, sizeof(*sorted), pp_by_share);
	e->prefix = malloc((ppe + 1) * sizeof(*e->prefix));
	e->idx = malloc(ppe * sizeof(*e->idx));
	if (!e->prefix || !e->idx)
		return -ENOMEM;
	e->prefix[0] = 0;
	for (uint32_t k = 0; k < ppe; k++) {
		run += sorted[k].share;
		/*
		 * Summed in another order than the shares were scaled, the pieces
		 * can add up to a hair above the extent: then the pieces that hold
		 * its heat outrank it whole by rounding, and with room to spare the
		 * rest of it stays behind. Never more than the extent, but for
		 * the hysteresis' bonus of pieces out.
		 */
		e->prefix[k + 1] = in->ext[i].nr_out || run < 1 ? run : 1;
		e->idx[k] = sorted[k].idx;
	}
	e->top = e->heat * e->prefix[1];
	return 0;
}

static int pp_by_heat_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y) - (x > y);
}

/* c->whole_heat and c->whole_prefix of the extents that can only go whole. */
static int pp_index_whole(struct pp_ctx *c)
{
	uint32_t n = 0;

	c->whole_heat = malloc(((size_t)c->nr + 1) * sizeof(*c->whole_heat));
	c->whole_prefix = malloc(((size_t)c->nr + 1) * sizeof(*c->whole_prefix));
	if (!c->whole_heat || !c->whole_prefix)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nr; i++) {
		const struct pp_ext *e = &c->e[i];

		if (!e->fixed && e->heat > 0 && !e->no_whole && (!e->prefix || !c->pieces_ok))
			c->whole_heat[n++] = e->whole_worth;
	}
	qsort(c->whole_heat, n, sizeof(*c->whole_heat), pp_by_heat_desc);
	c->whole_prefix[0] = 0;
	for (uint32_t i = 0; i < n; i++)
		c->whole_prefix[i + 1] = c->whole_prefix[i] + c->whole_heat[i];
	c->nr_whole = n;
	return 0;
}

static int pp_valid(const struct pieceplan_input *in)
{
	uint32_t ppe;

	if (!in || (!in->ext && in->nr))
		return 0;
	ppe = in->pieces_per_extent;
	if (ppe < 2 || ppe > PIECEMAP_MAX_PIECES_PER_EXTENT || (ppe & (ppe - 1)))
		return 0;
	if (!isfinite(in->hysteresis) || in->hysteresis < 0)
		return 0;
	for (uint32_t i = 0; i < in->nr; i++) {
		const struct pieceplan_extent *x = &in->ext[i];

		if (!isfinite(x->heat) || x->heat < 0 || (x->pin_ssd && x->pin_hdd))
			return 0;
		if (i && x->le <= in->ext[i - 1].le)
			return 0;
		if (x->nr_out && (x->whole_ssd || !x->out || x->nr_out > ppe))
			return 0;
		for (uint32_t j = 0; j < x->nr_out; j++)
			if (x->out[j] >= ppe || (j && x->out[j] <= x->out[j - 1]))
				return 0;
	}
	return 1;
}

static uint32_t pp_min(uint32_t a, uint64_t b)
{
	return b < a ? (uint32_t)b : a;
}

/* A unit the prices left out: a whole extent or one piece (rank: its place in the extent's). */
struct pp_unit {
	double density; /* heat per slot */
	uint32_t ext;
	uint32_t rank;  /* UINT32_MAX: the whole extent */
};

static int pp_by_density(const void *a, const void *b)
{
	const struct pp_unit *x = a, *y = b;

	if (x->density != y->density)
		return x->density < y->density ? 1 : -1;
	/* Equal worth: whole extents first, which cost no piece of the table's budget. */
	if ((x->rank == UINT32_MAX) != (y->rank == UINT32_MAX))
		return x->rank == UINT32_MAX ? -1 : 1;
	if (x->ext != y->ext)
		return (x->ext > y->ext) - (x->ext < y->ext);
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/*
 * What the prices leave of the room, filled with the densest units left
 * that fit: extents of equal worth are all in or all out at a price, and
 * a unit larger than what is left can let smaller ones in.  k[i] is extent
 * i's pieces (the first k[i] by share), whole[i] whether it is whole.
 */
static int pp_fill(const struct pp_ctx *c, uint64_t max_pieces, uint32_t *k, bool *whole)
{
	uint64_t room = c->room, pieces = 0;
	struct pp_unit *u;
	size_t n = 0, cap = 0;

	for (uint32_t i = 0; i < c->nr; i++) {
		if (c->e[i].fixed || c->e[i].heat <= 0)
			continue;
		room -= whole[i] ? c->ppe : k[i];
		pieces += whole[i] ? 0 : k[i];
	}
	/* An extent can add no more pieces than the room left: only those are ranked. */
	for (uint32_t i = 0; i < c->nr; i++)
		if (!c->e[i].fixed && c->e[i].heat > 0 && !whole[i])
			cap += 1 + (c->pieces_ok && c->e[i].prefix ? pp_min(c->ppe - k[i], room) : 0);
	u = malloc((cap ? cap : 1) * sizeof(*u));
	if (!u)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nr; i++) {
		const struct pp_ext *e = &c->e[i];

		if (e->fixed || e->heat <= 0 || whole[i])
			continue;
		if (!k[i] && !e->no_whole)
			u[n++] = (struct pp_unit){ e->whole_worth / c->ppe, i, UINT32_MAX };
		for (uint32_t r = k[i]; c->pieces_ok && e->prefix && r < k[i] + pp_min(c->ppe - k[i], room);
		     r++)
			if (pp_share(e, r) > 0)
				u[n++] = (struct pp_unit){
					e->heat * pp_share(e, r) / PIECEPLAN_PIECE_WEIGHT, i, r };
	}
	qsort(u, n, sizeof(*u), pp_by_density);
	for (size_t j = 0; j < n && room; j++) {
		uint32_t i = u[j].ext;

		if (whole[i])
			continue;
		if (u[j].rank == UINT32_MAX) {
			/* An extent none of whose pieces went yet, whole if it fits. */
			if (!k[i] && room >= c->ppe) {
				whole[i] = true;
				room -= c->ppe;
			}
			continue;
		}
		/* Pieces go by share, most first: this one is the next. */
		if (u[j].rank == k[i] && pieces < max_pieces) {
			k[i]++;
			pieces++;
			room--;
		}
	}
	free(u);
	return 0;
}

/*
 * The heat of extent i's pieces idx[0..k), without the bonus the pieces
 * out had in the ranking (raw: room for a share per piece).
 */
static double pp_pieces_heat(const struct pieceplan_input *in, bool young_even,
			     const struct pp_ext *e, uint32_t i, const uint16_t *idx, uint32_t k,
			     double *raw)
{
	double sum, chosen = 0;

	if (!in->hysteresis || !in->ext[i].nr_out)
		return e->heat * e->prefix[k];
	sum = pieceplan_shares_total(pp_get_shares(in, young_even, i, raw), raw, in->pieces_per_extent);
	for (uint32_t j = 0; j < k; j++)
		chosen += raw[idx[j]];
	return sum > 0 ? e->heat * chosen / sum : 0;
}

/* The choices at the prices found, and the fill, into out. */
static int pp_materialize(const struct pieceplan_input *in, const struct pp_ctx *c,
			  double lambda, double mu, uint64_t max_pieces, struct pieceplan *out)
{
	size_t cap_pieces = 0;
	uint32_t *k = calloc(c->nr ? c->nr : 1, sizeof(*k));
	bool *whole = calloc(c->nr ? c->nr : 1, sizeof(*whole));
	double *raw = malloc(c->ppe * sizeof(*raw));
	int r = -ENOMEM;

	out->choices = calloc(in->nr ? in->nr : 1, sizeof(*out->choices));
	if (!out->choices || !k || !whole || !raw)
		goto out;
	for (uint32_t i = 0; i < c->nr; i++) {
		const struct pp_ext *e = &c->e[i];

		whole[i] = e->fixed;
		if (!e->fixed && e->heat > 0) {
			k[i] = pp_choose(c, e, lambda, mu, &whole[i]);
			if (whole[i])
				k[i] = 0;
		}
	}
	r = pp_fill(c, max_pieces, k, whole);
	for (uint32_t i = 0; r == 0 && i < c->nr; i++) {
		const struct pp_ext *e = &c->e[i];
		struct pieceplan_choice *ch = &out->choices[out->nr_choices];

		if (!whole[i] && !k[i])
			continue;
		ch->le = in->ext[i].le;
		out->nr_choices++;
		if (whole[i]) {
			out->whole++;
			out->room_used += c->ppe;
			out->heat_placed += e->heat;
			continue;
		}
		if (out->nr_pieces + k[i] > cap_pieces) {
			size_t cap = cap_pieces ? 2 * cap_pieces : 256;
			uint16_t *v;

			while (cap < out->nr_pieces + k[i])
				cap *= 2;
			v = reallocarray(out->pieces, cap, sizeof(*v));
			if (!v) {
				r = -ENOMEM;
				break;
			}
			out->pieces = v;
			cap_pieces = cap;
		}
		ch->first = (uint32_t)out->nr_pieces;
		ch->nr_pieces = k[i];
		memcpy(out->pieces + out->nr_pieces, e->idx, k[i] * sizeof(*e->idx));
		/* By index: pieces next to each other share a target. */
		qsort(out->pieces + out->nr_pieces, k[i], sizeof(*out->pieces), pp_by_index);
		out->nr_pieces += k[i];
		out->room_used += k[i];
		out->heat_placed += pp_pieces_heat(in, out->young_even, e, i, e->idx, k[i], raw);
	}
out:
	free(k);
	free(whole);
	free(raw);
	return r;
}

/*
 * Whether the young extents of in are taken as even: whether the extents
 * whose shares are known hold more heat read evenly (every share the
 * same) than not. The reads that told about some extents are the best
 * guess for those they have not told about yet: on zoned:90/10:10/90 the
 * hot range is even, and its cold range, a few reads an extent at a tier
 * now after 20 s, is too (made to wait, it left 10 extents of room empty
 * and 4K random writes ran 14-17% slower); on zipf every extent with enough
 * reads has hot pieces, and the extents read a little, taken as even,
 * went whole into room to spare a second into a cold start, to be kept
 * there by min_residency. With nothing known (no extent uneven), they
 * are even too, as without piece heat: a few hundred random reads on a
 * few extents of a new pool cannot show a hot piece, and waiting left a
 * tier now with nothing to move. zipf does not get there: 1,000 of its
 * reads over bench-compare's 88 extents already leave 30 of them uneven.
 */
static bool pp_young_even(const struct pieceplan_input *in, double *raw)
{
	double even = 0, uneven = 0;

	if (!in->shares)
		return false;
	for (uint32_t i = 0; i < in->nr; i++) {
		const struct pieceplan_extent *x = &in->ext[i];
		double lo, hi;

		if (x->pin_ssd || x->pin_hdd || !(x->heat > 0) ||
		    in->shares(in->ctx, i, raw) != PIECEPLAN_SHARES_ALL)
			continue;
		lo = hi = raw[0];
		for (uint32_t k = 1; k < in->pieces_per_extent; k++) {
			lo = raw[k] < lo ? raw[k] : lo;
			hi = raw[k] > hi ? raw[k] : hi;
		}
		if (lo == hi)
			even += x->heat;
		else
			uneven += x->heat;
	}
	return even > uneven || !(uneven > 0);
}

/* The placement with at most max_pieces pieces out (in is valid, out zeroed). */
static int pp_select(const struct pieceplan_input *in, uint64_t max_pieces, struct pieceplan *out)
{
	struct pp_ctx c = { 0 };
	struct pp_sort *sorted = NULL;
	double *raw = NULL, hi = 0, lambda, mu = 0;
	bool any_shares = false;
	int r;

	c.nr = in->nr;
	c.ppe = in->pieces_per_extent;
	c.room = in->room;
	r = -ENOMEM;
	c.e = calloc(in->nr ? in->nr : 1, sizeof(*c.e));
	raw = malloc(c.ppe * sizeof(*raw));
	sorted = malloc(c.ppe * sizeof(*sorted));
	if (!c.e || !raw || !sorted)
		goto out;
	out->young_even = pp_young_even(in, raw);
	for (uint32_t i = 0; i < in->nr; i++) {
		struct pp_ext *e = &c.e[i];

		out->heat_total += in->ext[i].heat;
		e->heat = in->ext[i].pin_hdd ? 0 : in->ext[i].heat;
		e->whole_worth = e->heat * (in->ext[i].whole_ssd ? 1 + in->hysteresis : 1);
		e->top = e->whole_worth;
		if (in->ext[i].pin_ssd) {
			/* Pins first, lowest le first, while they fit. */
			e->fixed = c.room >= c.ppe;
			if (e->fixed)
				c.room -= c.ppe;
			continue;
		}
		/*
		 * Without a piece budget too: the shares, unused, still say
		 * whether a young extent waits.
		 */
		if (e->heat <= 0)
			continue;
		r = pp_load_shares(in, out->young_even, i, e, raw, sorted);
		if (r < 0)
			goto out;
		any_shares |= e->prefix != NULL;
	}
	/* A price above every unit's worth chooses nothing: the searches' upper bound. */
	for (uint32_t i = 0; i < in->nr; i++)
		if (c.e[i].heat > hi)
			hi = c.e[i].heat;
	hi = hi * (1 + in->hysteresis) * 2 + 1;
	c.pieces_ok = any_shares && max_pieces;
	r = pp_index_whole(&c);
	if (r < 0)
		goto out;
	lambda = pp_lambda(&c, 0, hi);
	if (c.pieces_ok && pp_evaluate(&c, lambda, 0).pieces > max_pieces) {
		double lo = 0, hi_mu = hi;

		/* The lowest price per piece that keeps them within the budget. */
		for (int i = 0; i < PIECEPLAN_MU_STEPS; i++) {
			double mid = (lo + hi_mu) / 2, l = pp_lambda(&c, mid, hi);

			if (pp_evaluate(&c, l, mid).pieces <= max_pieces)
				hi_mu = mid;
			else
				lo = mid;
		}
		mu = hi_mu;
		lambda = pp_lambda(&c, mu, hi);
	}
	out->lambda = lambda;
	out->mu = mu;
	r = pp_materialize(in, &c, lambda, mu, max_pieces, out);
out:
	for (uint32_t i = 0; c.e && i < c.nr; i++) {
		free(c.e[i].prefix);
		free(c.e[i].idx);
	}
	free(c.e);
	free(c.whole_heat);
	free(c.whole_prefix);
	free(raw);
	free(sorted);
	if (r < 0)
		pieceplan_destroy(out);
	return r;
}

/*
 * Whether extent i of in comes to the SSD whole in pp (choice c is its),
 * and so may cost the table two targets, as a piece out does.
 */
static bool pp_brings_whole(const struct pieceplan_input *in, uint32_t i,
			    const struct pieceplan_choice *c)
{
	return !c->nr_pieces && !in->ext[i].whole_ssd;
}

static uint64_t pp_entries(const struct pieceplan_input *in, const struct pieceplan *pp)
{
	uint64_t n = pp->nr_pieces;

	/* Both by le, and the choices are some of in's extents. */
	for (uint32_t i = 0, c = 0; i < in->nr && c < pp->nr_choices; i++)
		if (pp->choices[c].le == in->ext[i].le)
			n += pp_brings_whole(in, i, &pp->choices[c++]);
	return n;
}

struct pp_trim {
	double heat;
	uint32_t choice;
};

static int pp_by_trim_heat(const void *a, const void *b)
{
	const struct pp_trim *x = a, *y = b;

	if (x->heat != y->heat)
		return x->heat < y->heat ? -1 : 1;
	return (x->choice < y->choice) - (x->choice > y->choice);
}

/*
 * Leave out the coldest `over` of the whole extents pp brings in (not
 * pins): what the table's entries cannot take once no piece is left to
 * give up for them.
 */
static int pp_trim_whole_in(const struct pieceplan_input *in, struct pieceplan *pp, uint64_t over)
{
	struct pp_trim *t = malloc((pp->nr_choices ? pp->nr_choices : 1) * sizeof(*t));
	bool *drop = calloc(pp->nr_choices ? pp->nr_choices : 1, sizeof(*drop));
	size_t n = 0, kept = 0;
	int r = -ENOMEM;

	if (!t || !drop)
		goto out;
	for (uint32_t i = 0, c = 0; i < in->nr && c < pp->nr_choices; i++) {
		if (pp->choices[c].le != in->ext[i].le)
			continue;
		if (pp_brings_whole(in, i, &pp->choices[c]) && !in->ext[i].pin_ssd)
			t[n++] = (struct pp_trim){ in->ext[i].heat, c };
		c++;
	}
	qsort(t, n, sizeof(*t), pp_by_trim_heat);
	for (size_t j = 0; j < n && j < over; j++) {
		drop[t[j].choice] = true;
		pp->left_out++;
		pp->whole--;
		pp->room_used -= in->pieces_per_extent;
		pp->heat_placed -= t[j].heat;
	}
	for (size_t j = 0; j < pp->nr_choices; j++)
		if (!drop[j])
			pp->choices[kept++] = pp->choices[j];
	pp->nr_choices = kept;
	if (pp->heat_placed < 0)
		pp->heat_placed = 0;
	r = 0;
out:
	free(t);
	free(drop);
	return r;
}

int pieceplan_select(const struct pieceplan_input *in, struct pieceplan *out)
{
	uint64_t budget, used = 0;
	int r;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!pp_valid(in))
		return -EINVAL;
	budget = in->max_pieces < in->max_entries ? in->max_pieces : in->max_entries;
	/*
	 * Pieces given up for the table's entries free room that may take a
	 * whole extent more, which costs an entry too: a few passes, each
	 * giving up as many pieces as the entries are over, then the coldest
	 * whole extents brought in go.
	 */
	for (int pass = 0;; pass++) {
		r = pp_select(in, budget, out);
		if (r < 0 || in->max_entries == UINT64_MAX)
			return r;
		used = pp_entries(in, out);
		if (used <= in->max_entries)
			return 0;
		if (!out->nr_pieces || pass == PIECEPLAN_TABLE_PASSES - 1)
			break;
		budget = out->nr_pieces > used - in->max_entries ?
				 out->nr_pieces - (used - in->max_entries) : 0;
		pieceplan_destroy(out);
	}
	r = pp_trim_whole_in(in, out, used - in->max_entries);
	if (r < 0)
		pieceplan_destroy(out);
	return r;
}

int pieceplan_select_rooms(struct pieceplan_input *in, uint64_t room_whole, struct pieceplan *out)
{
	uint64_t ppe, room = in ? in->room : 0;
	struct pieceplan_input big;
	struct pieceplan alt;
	int r;

	r = pieceplan_select(in, out);
	if (r < 0 || room_whole <= room || !(out->heat_placed < out->heat_total * (1 - 1e-9)))
		return r;
	ppe = in->pieces_per_extent;
	big = *in;
	big.room = room_whole;
	/*
	 * Pieces first: whole extents alone win whenever an extent with a few
	 * hot blocks and an even rest is worth its slots whole, and would
	 * take it whole (to be kept there by the policy's residency) where it
	 * should go as pieces. Its pieces rounded up to whole containers must
	 * fit beside its whole extents: that is the room it takes.
	 */
	if (pieceplan_select(&big, &alt) == 0 &&
	    alt.whole * ppe + (alt.nr_pieces + ppe - 1) / ppe * ppe <= room_whole &&
	    alt.heat_placed > out->heat_placed * (1 + 1e-9))
		goto take;
	pieceplan_destroy(&alt);
	big.max_pieces = 0;
	if (pieceplan_select(&big, &alt) == 0 && alt.heat_placed > out->heat_placed * (1 + 1e-9))
		goto take;
	pieceplan_destroy(&alt);
	return 0;
take:
	pieceplan_destroy(out);
	*out = alt;
	*in = big;
	return 0;
}

void pieceplan_destroy(struct pieceplan *pp)
{
	if (!pp)
		return;
	free(pp->choices);
	free(pp->pieces);
	memset(pp, 0, sizeof(*pp));
}

static int pp_moves_add(struct pieceplan_moves *m, size_t *cap, struct pieceplan_move mv)
{
	if (m->nr == *cap) {
		size_t n = *cap ? 2 * *cap : 64;
		struct pieceplan_move *v = reallocarray(m->v, n, sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		*cap = n;
	}
	m->v[m->nr++] = mv;
	return 0;
}

/* Whether sorted v[0..n) holds x. */
static bool pp_holds(const uint16_t *v, uint32_t n, uint16_t x)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (v[mid] == x)
			return true;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

enum pp_phase { PP_PIECES_HOME, PP_WHOLE_HOME, PP_WHOLE_IN, PP_PIECES_OUT, PP_PHASES };

/*
 * Extent i's moves of one phase; ch: its choice in the plan, or NULL;
 * keep_whole, keep_pieces: it stays whole on the SSD, or that many of the
 * pieces out the plan does not want stay out (the first ones), in room the
 * plan leaves; shares: room for the extent's shares, for its pieces' heat.
 */
static int pp_moves_of(const struct pieceplan_input *in, const struct pieceplan *pp, uint32_t i,
		       const struct pieceplan_choice *ch, bool keep_whole, uint32_t keep_pieces,
		       enum pp_phase phase, double *shares, struct pieceplan_moves *m, size_t *cap)
{
	const struct pieceplan_extent *x = &in->ext[i];
	bool want_whole = ch && !ch->nr_pieces;
	const uint16_t *want = ch && ch->nr_pieces ? pp->pieces + ch->first : NULL;
	uint32_t nr_want = ch ? ch->nr_pieces : 0;
	int r = 0;

	switch (phase) {
	case PP_PIECES_HOME:
		for (uint32_t j = 0; r == 0 && j < x->nr_out; j++)
			if (!pp_holds(want, nr_want, x->out[j]) && !(keep_pieces && keep_pieces--)) {
				r = pp_moves_add(m, cap, (struct pieceplan_move){ x->le, x->out[j], 0, 0 });
				m->pieces_home++;
			}
		break;
	case PP_WHOLE_HOME:
		if (x->whole_ssd && !want_whole && !x->pin_ssd && !keep_whole) {
			r = pp_moves_add(m, cap, (struct pieceplan_move){ x->le, 0, 1, 0 });
			m->whole_out++;
		}
		break;
	case PP_WHOLE_IN:
		if (want_whole && !x->whole_ssd) {
			r = pp_moves_add(m, cap, (struct pieceplan_move){ x->le, 0, 1, 1, x->heat });
			m->whole_in++;
		}
		break;
	default: {
		double sum = 0;

		/* pieceplan_select() took these shares: finite, not negative. */
		if (nr_want && in->shares)
			sum = pieceplan_shares_total(pp_get_shares(in, pp->young_even, i, shares), shares,
					   in->pieces_per_extent);
		/* Pieces the extent has out stay; it has none while whole on the SSD. */
		for (uint32_t j = 0; r == 0 && j < nr_want; j++)
			if (!pp_holds(x->out, x->nr_out, want[j])) {
				double heat = sum > 0 ? x->heat * shares[want[j]] / sum :
						 x->heat / in->pieces_per_extent;

				r = pp_moves_add(m, cap, (struct pieceplan_move){ x->le, want[j], 0, 1,
										  heat });
				m->pieces_out++;
			}
		break;
	}
	}
	return r;
}

static int pp_by_heat_in(const void *a, const void *b)
{
	const struct pieceplan_move *x = a, *y = b;

	if (x->heat != y->heat)
		return x->heat < y->heat ? 1 : -1;
	if (x->le != y->le)
		return x->le > y->le ? 1 : -1;
	return (x->piece > y->piece) - (x->piece < y->piece);
}

/*
 * What stays though the plan does not choose it, in the room and piece
 * budget the plan leaves: heat 0 ranks for nothing, and moving it home
 * would free room nothing needs.  Whole extents first (a move of theirs is
 * an extent's copy), then pieces, in the order of the input.
 */
static void pp_keep(const struct pieceplan_input *in, const struct pieceplan *pp,
		    const struct pieceplan_choice *const *of, bool *keep_whole,
		    uint32_t *keep_pieces)
{
	uint64_t left = in->room > pp->room_used ? in->room - pp->room_used : 0;
	uint64_t pieces_left = in->max_pieces > pp->nr_pieces ? in->max_pieces - pp->nr_pieces : 0;
	uint32_t ppe = in->pieces_per_extent;

	/* A piece kept out holds table entries the whole extents brought in need too. */
	if (in->max_entries != UINT64_MAX) {
		uint64_t used = pp_entries(in, pp);
		uint64_t entries_left = in->max_entries > used ? in->max_entries - used : 0;

		if (entries_left < pieces_left)
			pieces_left = entries_left;
	}

	for (uint32_t i = 0; i < in->nr; i++)
		if (in->ext[i].whole_ssd && !in->ext[i].pin_ssd && !in->ext[i].pin_hdd && !of[i] &&
		    left >= ppe) {
			keep_whole[i] = true;
			left -= ppe;
		}
	for (uint32_t i = 0; i < in->nr && left && pieces_left; i++) {
		const struct pieceplan_extent *x = &in->ext[i];
		const struct pieceplan_choice *ch = of[i];
		uint32_t unwanted;

		if (!x->nr_out || x->pin_hdd || (ch && !ch->nr_pieces))
			continue; /* none out, or all come home for a pin or a whole move */
		unwanted = x->nr_out;
		for (uint32_t j = 0; ch && j < x->nr_out; j++)
			unwanted -= pp_holds(pp->pieces + ch->first, ch->nr_pieces, x->out[j]);
		keep_pieces[i] = (uint32_t)(unwanted < left ? unwanted : left);
		if (keep_pieces[i] > pieces_left)
			keep_pieces[i] = (uint32_t)pieces_left;
		left -= keep_pieces[i];
		pieces_left -= keep_pieces[i];
	}
}

int pieceplan_moves(const struct pieceplan_input *in, const struct pieceplan *pp,
		    struct pieceplan_moves *out)
{
	const struct pieceplan_choice **of = NULL;
	uint32_t *keep_pieces = NULL;
	bool *keep_whole = NULL;
	double *shares = NULL;
	size_t cap = 0, c = 0;
	int r = -EINVAL;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!pp || !pp_valid(in) || (pp->nr_choices && !pp->choices))
		return -EINVAL;
	of = calloc(in->nr ? in->nr : 1, sizeof(*of));
	if (!of)
		return -ENOMEM;
	/* Both by le: each choice to its extent. */
	for (uint32_t i = 0; i < in->nr && c < pp->nr_choices; i++) {
		const struct pieceplan_choice *ch = &pp->choices[c];

		if (ch->le < in->ext[i].le)
			goto out;
		if (ch->le > in->ext[i].le)
			continue;
		if (ch->nr_pieces > in->pieces_per_extent ||
		    ch->first + (uint64_t)ch->nr_pieces > pp->nr_pieces)
			goto out;
		for (uint32_t j = 0; j < ch->nr_pieces; j++) {
			uint16_t k = pp->pieces[ch->first + j];

			if (k >= in->pieces_per_extent || (j && k <= pp->pieces[ch->first + j - 1]))
				goto out;
		}
		of[i] = ch;
		c++;
	}
	if (c < pp->nr_choices)
		goto out;
	r = -ENOMEM;
	keep_whole = calloc(in->nr ? in->nr : 1, sizeof(*keep_whole));
	keep_pieces = calloc(in->nr ? in->nr : 1, sizeof(*keep_pieces));
	if (!keep_whole || !keep_pieces)
		goto out;
	shares = malloc(in->pieces_per_extent * sizeof(*shares));
	if (!shares)
		goto out;
	pp_keep(in, pp, of, keep_whole, keep_pieces);
	r = 0;
	for (int phase = 0; r == 0 && phase < PP_PHASES; phase++) {
		size_t from = out->nr;

		for (uint32_t i = 0; r == 0 && i < in->nr; i++)
			r = pp_moves_of(in, pp, i, of[i], keep_whole[i], keep_pieces[i],
					(enum pp_phase)phase, shares, out, &cap);
		/* Not qsort of none: out->v is NULL while no move was added. */
		if (r == 0 && (phase == PP_WHOLE_IN || phase == PP_PIECES_OUT) && out->nr - from > 1)
			qsort(out->v + from, out->nr - from, sizeof(*out->v), pp_by_heat_in);
	}
out:
	free(shares);
	free(of);
	free(keep_whole);
	free(keep_pieces);
	if (r < 0)
		pieceplan_moves_destroy(out);
	return r;
}

void pieceplan_moves_destroy(struct pieceplan_moves *m)
{
	if (!m)
		return;
	free(m->v);
	memset(m, 0, sizeof(*m));
}
