/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_PIECEPLAN_H
#define TIERD_PIECEPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * pieceplan: what the SSD tier should hold when it may hold pieces of
 * extents as well as whole ones (docs/design.md, "Placement finer than an
 * extent"): the target placement a planner then reaches by moves.
 *
 * One ranking of units by density, not a second stage that gets what the
 * extent plan leaves: on zipf every extent is about as hot as the next, and
 * whole extents would fill the SSD before a piece had room.  A whole extent
 * is worth its heat and costs pieces_per_extent slots of room; a piece is
 * worth its extent's heat times its share (pieceheat.h) and costs one slot
 * of room and one of the table's piece budget (each piece out costs the
 * volume's table up to two targets; the caller turns the targets it can
 * spare into pieces).  Two budgets, so the choice is made with a price per
 * slot (lambda) and a price per piece (mu), as a Lagrangian relaxation of
 * the knapsack: at given prices each extent takes the best of nothing, the
 * whole extent (heat - lambda * ppe) or its pieces worth more than
 * 2 * lambda + mu each (a piece is ranked as two slots: its own, and its
 * cost in the table, a copy and a commit); lambda is the lowest price whose
 * choices fit the room, and mu the lowest that keeps the pieces within
 * their budget.  An extent whose heat needs more than half its pieces goes
 * whole (one unit, no piece budget); a few hot blocks in cold data go as
 * pieces.  With no piece budget the answer is the densest whole extents,
 * as `highest` would choose.
 *
 * The choice is exact at its prices and within one extent of the room
 * otherwise (discrete units).  Where anything is now counts only through
 * the hysteresis below; pins and the order of moves are the caller's and
 * pieceplan_moves()'s.
 *
 * Pure: no I/O.  Functions that can fail return 0 or a negative errno.
 */

struct pieceplan_extent {
	uint32_t le;
	double heat;     /* finite, >= 0 */
	bool pin_ssd;    /* must be on the SSD whole: placed first, whatever its heat */
	bool pin_hdd;    /* must be at home whole: placed nowhere, nothing of it kept */
	/*
	 * Where it is now, for the hysteresis and for pieceplan_moves(): whole
	 * on the SSD, or at home on the HDD with out[0..nr_out) of its pieces
	 * on the SSD (by increasing index).  Extents the plan is not given
	 * stay as they are.
	 */
	bool whole_ssd;
	uint32_t nr_out;
	const uint16_t *out;
};

/*
 * How extent i's heat divides among its pieces, in out[0..ppe): returns
 * PIECEPLAN_SHARES_ALL with shares that add up to about 1;
 * PIECEPLAN_SHARES_PART with the shares known so far, adding up to less
 * than 1, where the rest of its heat lies is not known yet; or 0 when
 * nothing is known (the extent is then whole or nothing).  Where the
 * extents whose shares are known hold more heat read evenly (every share
 * the same) than not, or none is uneven, the rest of a PART extent's heat
 * is taken as even too, spread over its pieces without a share; else it waits: its pieces
 * may go by their shares, the rest of it nowhere, and the extent goes
 * whole only by staying whole on the SSD.
 */
#define PIECEPLAN_SHARES_ALL 1
#define PIECEPLAN_SHARES_PART 2
typedef int pieceplan_shares_fn(void *ctx, uint32_t i, double *out);
/*
 * What shares[0..ppe) from such a callback (its return r) are shares of:
 * their sum when they are all the extent's, at least 1 when only those
 * known so far (the rest is heat not placed); 0 when there are none.
 */
double pieceplan_shares_total(int r, const double *shares, uint32_t ppe);

struct pieceplan_input {
	const struct pieceplan_extent *ext; /* by increasing le */
	uint32_t nr;
	uint32_t pieces_per_extent;         /* a power of two from 2 */
	uint64_t room;                      /* SSD room in slots (a whole extent is ppe) */
	uint64_t max_pieces;                /* pieces out the table can afford */
	/*
	 * Entries of the volume's table the plan may use (UINT64_MAX: no limit):
	 * its pieces out (now or new) plus the whole extents it brings to the
	 * SSD, each of which can cost the table two targets as a piece out
	 * does.  Pieces give way first; once none is left, the coldest whole
	 * extents brought in (pins never).
	 */
	uint64_t max_entries;
	pieceplan_shares_fn *shares;        /* may be NULL: whole extents only */
	void *ctx;
	/*
	 * What staying where it is is worth, as a share of a unit's heat
	 * (the policy's hysteresis): a whole extent on the SSD ranks at
	 * heat * (1 + hysteresis), a piece out at its heat times as much, so
	 * that two units of about the same heat do not trade places every run.
	 * heat_placed counts heat without it.  0: none.
	 */
	double hysteresis;
};

struct pieceplan_choice {
	uint32_t le;
	uint32_t nr_pieces;  /* 0: whole */
	uint32_t first;      /* with pieces: pieceplan.pieces[first, first + nr_pieces), by index */
};

struct pieceplan {
	struct pieceplan_choice *choices; /* extents with anything on the SSD, by le */
	size_t nr_choices;
	uint16_t *pieces;
	size_t nr_pieces;
	uint64_t whole;          /* extents whole */
	uint64_t room_used;      /* slots */
	double heat_placed;      /* heat on the SSD, pieces at their share */
	double heat_total;       /* of every extent given */
	double lambda, mu;       /* the prices found */
	uint64_t left_out;       /* whole extents the table's entries left out (max_entries) */
	/*
	 * The young extents (PIECEPLAN_SHARES_PART) were taken as even, the
	 * rest of their heat spread over their other pieces: the extents whose
	 * shares are known hold more heat read evenly than not. Else they
	 * waited.
	 */
	bool young_even;
};

/*
 * The placement.  -EINVAL for NULL pointers, pieces_per_extent not a power
 * of two from 2 to 65536, extents not by increasing le, heat negative or
 * not finite, an extent pinned to both tiers, pieces out invalid (see
 * pieceplan_moves()), hysteresis negative or not finite, or shares that
 * are negative or not finite; -ENOMEM.  Pinned
 * extents that do not fit the room are left out, lowest le first kept.
 * On error *out is empty.
 */
int pieceplan_select(const struct pieceplan_input *in, struct pieceplan *out);
/*
 * pieceplan_select() where the room may be had two ways: in->room, which
 * keeps a container's worth back for the container being filled, or
 * room_whole (0: none), what the whole-extent planner would use, when no
 * container is in use yet. A plan in in->room comes first; when it leaves
 * heat out and room_whole is more, a plan with pieces in room_whole is
 * taken if its pieces rounded up to containers fit beside its whole
 * extents, else whole extents alone in room_whole, either only when it
 * places more heat (not on a tie: then the pieces need no container they
 * cannot have). in->room and in->max_pieces become the chosen plan's,
 * for pieceplan_moves(). Errors as pieceplan_select()'s; an alternative
 * that cannot be made (-ENOMEM) leaves the first plan.
 */
int pieceplan_select_rooms(struct pieceplan_input *in, uint64_t room_whole, struct pieceplan *out);
/* Accepts NULL and a zeroed or already destroyed plan. */
void pieceplan_destroy(struct pieceplan *pp);

/* One move from where the input's extents are to the plan. */
struct pieceplan_move {
	uint32_t le;
	uint16_t piece;  /* with whole 0 */
	uint8_t whole;   /* 1: the whole extent */
	uint8_t to_ssd;  /* 1: to the SSD tier; 0: to the HDD (a piece: home) */
	double heat;     /* to the SSD: the extent's heat, or the piece's share of it */
};

struct pieceplan_moves {
	struct pieceplan_move *v;
	size_t nr;
	uint64_t pieces_out, pieces_home, whole_in, whole_out;
};

/*
 * The moves that take the extents of in (as they are now) to pp, chosen
 * from in by pieceplan_select(), in the order they can run.  What is on the
 * SSD and not chosen (heat 0 ranks for nothing) stays while the room and
 * the piece budget the plan leaves hold it: whole extents first, then
 * pieces; only what the room needs goes home.  The order: pieces home
 * first (those the plan drops, and all of an extent that is to go whole:
 * a split extent moves whole only when none of its pieces is out), whole
 * extents to the HDD, whole extents to the SSD, pieces out; the moves to
 * the SSD hottest first within their step, so that a run's first batches
 * bring the most of what it brings, and a byte budget cuts the coldest
 * (ties by le, then piece).  Each step
 * uses only room an earlier one freed or the plan left, and an extent
 * whole on the SSD that the plan wants by pieces goes home before its
 * pieces go out.  A pinned extent never leaves the SSD.
 *
 * -EINVAL for NULL pointers, an input that pieceplan_select() refuses, an
 * extent both whole on the SSD and with pieces out, pieces out not by
 * increasing index or past the extent's, a plan naming an extent the input
 * does not have, or a choice's pieces not by increasing index; -ENOMEM.
 * On error *out is empty.
 */
int pieceplan_moves(const struct pieceplan_input *in, const struct pieceplan *pp,
		    struct pieceplan_moves *out);
/* Accepts NULL and zeroed or already destroyed moves. */
void pieceplan_moves_destroy(struct pieceplan_moves *m);

#endif
