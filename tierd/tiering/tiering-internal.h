/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tiering-internal: what the tiering layer's .c files share, private to tierd/tiering/. */
#ifndef TIERD_TIERING_INTERNAL_H
#define TIERD_TIERING_INTERNAL_H

#include <ev.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "job.h"
#include "planner.h"
#include "policy.h"
#include "pool.h"
#include "schedule.h"
#include "state.h"
#include "tiering.h"

#define TIERING_MAX_DIRS 4

/* A run's pieces (pieces.c): brought home first, sent out last. */
struct tiering_piece_plan {
	struct job_piece_req *home, *out;
	size_t nr_home, nr_out;
	uint64_t piece_bytes; /* 0: the plan has no pieces (the whole planner's) */
};

/* A run's jobs, one after another: only a run with pieces has more than the whole moves. */
enum tiering_phase { TIERING_PIECES_HOME, TIERING_WHOLE, TIERING_PIECES_OUT, TIERING_PHASES };

struct tiering_pool {
	struct tiering_pool *next;
	struct tierings *ts;
	struct pool *p;
	struct state_tiering cfg;
	struct schedule sched;
	struct state_pin *pins;
	size_t nr_pins;
	ev_periodic timer;
	/* What the timer is set to fire at, 0 if not armed. */
	int64_t armed_at;
	/* A scheduled time that has come, until a run starts for it (see tiering_reschedule). */
	int64_t due;
	ev_prepare catch_up;
	int64_t last_start;
	/* The run in progress. */
	int running;
	struct state_run run;
	uint64_t started_ns; /* the run's start on the monotonic clock, for its rate */
	struct job_move_req *moves;
	size_t nr_moves;
	/* With pieces: the run's pieces home before its whole moves, and out after them. */
	struct tiering_piece_plan pieces;
	int phase; /* the run's phase under way (enum tiering_phase) */
	struct job_limits limits; /* every phase's */
	/* The run is auto's and its budget cut its plan short: more waits. */
	bool auto_full;
	/* A full auto run ended: the next plan comes at once, not an interval on. */
	bool auto_again;
	/*
	 * An auto plan found the pool without heat: the first sample that
	 * brings some has the next plan come at once (tierings_heat_sampled).
	 */
	bool auto_cold;
	/* The heat auto_cold waits for: the policy's least worth a move. */
	double cold_min_heat;
	/*
	 * When a cold pool's heat began (its first sample with heat), while
	 * that heat is young: a run planned on it has the next plan come when
	 * the heat is SCHEDULE_YOUNG_FACTOR times as old (young_plan_at), not an
	 * interval on (schedule_young_next()). 0: none.
	 */
	int64_t heat_since;
	int64_t young_plan_at;
	/* The table's limit passed over this many extents in the run's plan. */
	uint64_t table_passed_over;
	struct tiering_table table;
	tiering_notify_fn notify;
	void *notify_ctx;
};

#define TIERING_MESSAGE_MAX sizeof(((struct state_run *)0)->message)

struct tierings {
	struct ev_loop *loop;
	struct pools *ps;
	struct state *st;
	char dirs[TIERING_MAX_DIRS][PATH_MAX];
	size_t nr_dirs;
	struct tiering_pool *list;
};

/* ---- tiering.c: the per-pool state ---- */

struct tiering_pool *tiering_find(struct tierings *ts, const struct pool *p);
/* The pool's state, loaded (and its timer started) on first use; NULL when out of memory. */
struct tiering_pool *tiering_get(struct tierings *ts, struct pool *p);
int tiering_get_or_fail(struct tierings *ts, struct pool *p, struct tiering_pool **out,
			char *err, size_t err_len);
void tiering_fill_schedule(const struct tiering_pool *tp, int64_t now,
			   struct tiering_schedule_report *out);
/* Under schedule auto: the next plan in a second (in the window), not an interval on. */
void tiering_plan_again_soon(struct tiering_pool *tp);
/*
 * A run planned at planned_at ended, or a plan then found nothing to move:
 * if that was on young heat, the next plan comes when the heat is
 * SCHEDULE_YOUNG_FACTOR times as old (schedule_young_next()).
 */
void tiering_young_heat_planned(struct tiering_pool *tp, int64_t planned_at);

/* ---- pieces.c ---- */

/* Whether runs under pol place pieces: a heat policy on a pool that watches them. */
bool tiering_pieces_apply(const struct tiering_pool *tp, const struct policy *pol);
/*
 * The plan of whole moves into plan, and the pieces' moves into out, within
 * max_bytes (0: no limit). 1 when the whole planner's plan is wanted
 * instead (both left empty): the pool has no pieces to place after all, or
 * the HDD tier has no room for the whole extents the plan sends home;
 * else 0 or -ENOMEM, -EINVAL (from the ranking).
 */
int tiering_piece_plan(struct tiering_pool *tp, const struct policy *pol, uint64_t max_bytes,
		       struct plan *plan, struct tiering_piece_plan *out);
/* Accepts NULL and a zeroed or already destroyed one. */
void tiering_piece_plan_destroy(struct tiering_piece_plan *pp);

/* ---- policies.c ---- */

/* The first NAME.policy of the folders, or the built-in auto; path "" for built-in. */
int tierings_load_policy(struct tierings *ts, const char *name, struct policy *out, char *path,
			 size_t path_len, char *err, size_t err_len);

/* ---- pins.c ---- */

/* ---- runs.c ---- */

/* A run for the scheduled time `due`, which counts as started whether or not a run can start. */
void tiering_scheduled_run(struct tiering_pool *tp, int64_t due);
/* row as it stands now: a run in progress has newer counters than its row in the state. */
const struct state_run *tiering_live_run(const struct tiering_pool *tp,
					 const struct state_run *row);

#endif
