/* SPDX-License-Identifier: GPL-2.0-or-later */
/* runs: planning a run, starting it on the job engine, recording how it ended. */
#include "tiering.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "size.h"
#include "tiering-internal.h"

/* An auto run moves a few extents at a time, as heat changes (docs/schedule.md). */
#define TIERING_AUTO_EXTENTS 16
/*
 * Runs a pool keeps in its history: a few days of auto runs at their most
 * frequent (two a minute), years of nightly ones; their counts outlive
 * them (state_runs_count).
 */
#define TIERING_RUNS_KEPT 10000

/* The words of the protocol and of the state's CHECK constraints. */
static const char *const trigger_names[TIERING_TRIGGER_NR] = {
	[TIERING_ON_DEMAND] = "on-demand",
	[TIERING_SCHEDULE] = "schedule",
	[TIERING_AUTO] = "auto",
};

static const char *const result_names[TIERING_RESULT_NR] = {
	[TIERING_RUNNING] = "running",
	[TIERING_DONE] = "done",
	[TIERING_PARTIAL] = "partial",
	[TIERING_FAILED] = "failed",
	[TIERING_CANCELLED] = "cancelled",
	[TIERING_INTERRUPTED] = "interrupted",
	[TIERING_ABORTED] = "aborted",
};

const char *tiering_trigger_name(enum tiering_trigger t)
{
	return (unsigned)t < TIERING_TRIGGER_NR ? trigger_names[t] : "?";
}

const char *tiering_result_name(enum tiering_result r)
{
	return (unsigned)r < TIERING_RESULT_NR ? result_names[r] : "?";
}

static int find_name(const char *const *names, size_t nr, const char *s)
{
	for (size_t i = 0; s && i < nr; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

int tiering_trigger_parse(const char *s, enum tiering_trigger *out)
{
	int i = find_name(trigger_names, TIERING_TRIGGER_NR, s);

	if (i < 0)
		return i;
	*out = (enum tiering_trigger)i;
	return 0;
}

int tiering_result_parse(const char *s, enum tiering_result *out)
{
	int i = find_name(result_names, TIERING_RESULT_NR, s);

	if (i < 0)
		return i;
	*out = (enum tiering_result)i;
	return 0;
}

/* ---- planning ---- */

/*
 * table (may be NULL): the volume's table as the plan saw it. pieces: the
 * moves of pieces, when the policy and the pool place them (pieces.c);
 * else it stays empty and plan is the whole planner's.
 */
static int tiering_make_plan(struct tiering_pool *tp, const struct policy *pol, uint64_t max_bytes,
			     struct plan *plan, struct tiering_table *table,
			     struct tiering_piece_plan *pieces, char *err, size_t err_len)
{
	struct planner_input in = { 0 };
	struct pool_planner_list list;
	int r;

	memset(pieces, 0, sizeof(*pieces));
	if (table)
		*table = (struct tiering_table){ pool_table_targets(tp->p),
						 pool_table_targets_max(tp->p) };
	if (tiering_pieces_apply(tp, pol)) {
		/* The pieces' counts since their last read, so that the plan has them. */
		if (pool_piece_heat_refresh(tp->p, err, err_len) < 0)
			log_pool_warn(pool_name(tp->p), "planning on the pieces' heat as last read:"
				      " %s", err);
		r = tiering_piece_plan(tp, pol, max_bytes, plan, pieces);
		if (r < 0)
			return errbuf_fail(r, err, err_len, "pool %s: the planner failed: %s",
					   pool_name(tp->p), strerror(-r));
		if (r == 0)
			return 0;
	}
	/* A list of the extents that matter, not every extent: a run costs what can move. */
	r = pool_planner_list(tp->p, tp->pins, tp->nr_pins, &list);
	if (r < 0)
		return errbuf_fail(r, err, err_len, "out of memory");
	pool_planner_list_use(&list, &in);
	in.extent_bytes = pool_extent_size(tp->p);
	in.max_bytes = max_bytes;
	in.now = (uint32_t)time(NULL);
	in.policy = pol;
	/* The job holds moves past the limit (lib/batch.h); the plan leaves them out. */
	in.table_targets = pool_table_targets(tp->p);
	in.max_table_targets = pool_table_targets_max(tp->p);
	r = planner_plan(&in, plan);
	pool_planner_list_destroy(&list);
	if (r < 0)
		return errbuf_fail(r, err, err_len, "pool %s: the planner failed: %s",
				   pool_name(tp->p), strerror(-r));
	return 0;
}

/* The bytes one run may move (0: no limit): the schedule's, and auto's small runs. */
static uint64_t tiering_run_budget(const struct tiering_pool *tp, enum tiering_trigger trigger)
{
	uint64_t max_bytes = tp->cfg.max_bytes;

	if (trigger == TIERING_AUTO) {
		uint64_t small = TIERING_AUTO_EXTENTS * pool_extent_size(tp->p);

		if (!max_bytes || max_bytes > small)
			max_bytes = small;
	}
	return max_bytes;
}

static int tiering_plan_now(struct tiering_pool *tp, enum tiering_trigger trigger,
			    struct policy *pol, struct plan *plan, struct tiering_table *table,
			    struct tiering_piece_plan *pieces, char *err, size_t err_len)
{
	char path[PATH_MAX];
	int r;

	/* An inactive pool tiers too: tierd copies its extents itself (docs/migration.md). */
	r = tierings_load_policy(tp->ts, tp->cfg.policy, pol, path, sizeof(path), err, err_len);
	if (r < 0)
		return r;
	tp->cold_min_heat = policy_promote_min_heat(pol);
	return tiering_make_plan(tp, pol, tiering_run_budget(tp, trigger), plan, table, pieces, err,
				 err_len);
}

/* A piece's move in a plan's listing, the extent's heat beside it. */
static struct tiering_plan_move plan_piece_move(const struct tiering_pool *tp,
						const struct tiering_piece_plan *pieces,
						const struct job_piece_req *req, bool to_ssd)
{
	return (struct tiering_plan_move){
		.extent = req->le,
		.offset = req->le * pool_extent_size(tp->p) + req->idx * pieces->piece_bytes,
		.heat = (float)pool_extent_heat(tp->p, req->le),
		.to_ssd = to_ssd,
		.piece = req->idx,
	};
}

static int plan_report(const struct tiering_pool *tp, const struct plan *plan,
		       const struct tiering_piece_plan *pieces, const struct tiering_table *table,
		       const struct policy *pol, uint64_t limit, struct tiering_plan_report *out)
{
	uint64_t es = pool_extent_size(tp->p);
	size_t total = pieces->nr_home + plan->nr + pieces->nr_out;
	size_t n = total < limit ? total : (size_t)limit, k = 0;

	*out = (struct tiering_plan_report){
		.promote_extents = plan->promote_extents,
		.demote_extents = plan->demote_extents,
		.promote_bytes = plan->promote_bytes,
		.demote_bytes = plan->demote_bytes,
		.ssd_share_before = plan->ssd_share_before,
		.ssd_share_after = plan->ssd_share_after,
		.moves_total = plan->nr,
		.table = *table,
		.table_passed_over = plan->table_skipped,
		.pieces_home = pieces->nr_home,
		.pieces_out = pieces->nr_out,
		.piece_bytes = pieces->piece_bytes,
	};
	snprintf(out->policy, sizeof(out->policy), "%s", pol->name);
	if (!n)
		return 0;
	out->moves = calloc(n, sizeof(*out->moves));
	if (!out->moves)
		return -ENOMEM;
	/* In the order a run moves them: pieces home, whole extents, pieces out. */
	for (size_t i = 0; k < n && i < pieces->nr_home; i++)
		out->moves[k++] = plan_piece_move(tp, pieces, &pieces->home[i], false);
	for (size_t i = 0; k < n && i < plan->nr; i++) {
		uint32_t le = plan->moves[i].le;

		out->moves[k++] = (struct tiering_plan_move){
			.extent = le,
			.offset = le * es,
			/* As the plan saw it, in the float the planner ranks by. */
			.heat = (float)pool_extent_heat(tp->p, le),
			.to_ssd = plan->moves[i].to == PLANNER_SSD,
			.piece = -1,
		};
	}
	for (size_t i = 0; k < n && i < pieces->nr_out; i++)
		out->moves[k++] = plan_piece_move(tp, pieces, &pieces->out[i], true);
	out->nr_moves = n;
	return 0;
}

int tiering_report_plan(struct tierings *ts, struct pool *p, uint64_t limit,
			struct tiering_plan_report *out, char *err, size_t err_len)
{
	struct tiering_piece_plan pieces;
	struct tiering_table table;
	struct tiering_pool *tp;
	struct plan plan = { 0 };
	struct policy pol;
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	*out = (struct tiering_plan_report){ 0 };
	if (r < 0)
		return r;
	r = tiering_plan_now(tp, TIERING_ON_DEMAND, &pol, &plan, &table, &pieces, err, err_len);
	if (r < 0)
		return r;
	r = plan_report(tp, &plan, &pieces, &table, &pol, limit, out);
	plan_destroy(&plan);
	tiering_piece_plan_destroy(&pieces);
	if (r < 0) {
		tiering_plan_report_destroy(out);
		return errbuf_fail(r, err, err_len, "out of memory");
	}
	return 0;
}

void tiering_plan_report_destroy(struct tiering_plan_report *r)
{
	if (!r)
		return;
	free(r->moves);
	r->moves = NULL;
	r->nr_moves = 0;
}

/* ---- runs ---- */

const struct state_run *tiering_live_run(const struct tiering_pool *tp,
					 const struct state_run *row)
{
	return tp && tp->running && tp->run.id == row->id ? &tp->run : row;
}

/* The run's one line at info: what moved, how many bytes, how long it took and how fast. */
static void tiering_run_summary(const struct tiering_pool *tp)
{
	const struct state_run *run = &tp->run;
	uint64_t bytes = run->moved.promoted_bytes + run->moved.demoted_bytes;
	double seconds = (double)(clock_now_ns() - tp->started_ns) / 1e9;
	char size[SIZE_FORMAT_MAX], rate[SIZE_FORMAT_MAX], pieces[64] = "";

	size_format(bytes, size, sizeof(size));
	if (run->planned_pieces)
		snprintf(pieces, sizeof(pieces), "%llu pieces out, %llu home, ",
			 (unsigned long long)run->moved.promoted_pieces,
			 (unsigned long long)run->moved.demoted_pieces);
	/* A run that moved nothing has no rate worth a number. */
	size_format(bytes && seconds > 0 ? (uint64_t)((double)bytes / seconds) : 0, rate,
		    sizeof(rate));
	log_run_info(pool_name(tp->p), run->id, "tiering run %lld (%s) %s: %s%llu extents promoted,"
		     " %llu demoted, %llu failed; %s in %.1f s, %s/s%s%s", (long long)run->id,
		     run->trigger, run->result, pieces,
		     (unsigned long long)run->moved.promoted_extents,
		     (unsigned long long)run->moved.demoted_extents,
		     (unsigned long long)run->moved.failed, size, seconds, rate,
		     run->message[0] ? ": " : "", run->message);
}

static void tiering_run_end(struct tiering_pool *tp, enum tiering_result result,
			    const char *message)
{
	struct state_run *run = &tp->run;
	tiering_notify_fn notify = tp->notify;
	void *ctx = tp->notify_ctx;

	run->finished = time(NULL);
	snprintf(run->result, sizeof(run->result), "%s", tiering_result_name(result));
	snprintf(run->message, sizeof(run->message), "%s", message ? message : "");
	if (state_run_update(tp->ts->st, run) < 0)
		log_run_warn(pool_name(tp->p), run->id, "cannot record the end of run %lld: %s",
			     (long long)run->id, state_last_error(tp->ts->st));
	tiering_run_summary(tp);
	tp->running = 0;
	/* An auto run whose budget cut its plan short left moves: plan again now. */
	if (tp->auto_full && result == TIERING_DONE)
		tiering_plan_again_soon(tp);
	else if (result == TIERING_DONE || result == TIERING_PARTIAL)
		tiering_young_heat_planned(tp, run->started);
	tp->auto_full = false;
	tp->notify = NULL;
	tp->notify_ctx = NULL;
	free(tp->moves);
	tp->moves = NULL;
	tiering_piece_plan_destroy(&tp->pieces);
	if (notify)
		notify(NULL, run, ctx);
}

static void tiering_progress(struct pool *p, const struct job_report *now, void *ctx)
{
	struct tiering_pool *tp = ctx;
	struct tiering_progress pr = { .pool = p, .job = now };

	if (tp->notify)
		tp->notify(&pr, NULL, tp->notify_ctx);
}

/* The job engine's results are the run's, but for the state's own words. */
static const enum tiering_result run_results[JOB_RESULT_NR] = {
	[JOB_DONE] = TIERING_DONE,
	[JOB_PARTIAL] = TIERING_PARTIAL,
	[JOB_FAILED] = TIERING_FAILED,
	[JOB_CANCELLED] = TIERING_CANCELLED,
	[JOB_ABORTED] = TIERING_ABORTED,
};

/*
 * What a run that ended as planned says: nothing, but that the table's
 * limit passed over extents the policy would have moved.
 */
static const char *tiering_run_note(const struct tiering_pool *tp, bool planned_none, char *buf,
				    size_t len)
{
	if (!tp->table_passed_over)
		return planned_none ? "nothing to move" : NULL;
	snprintf(buf, len, "%s%llu extents passed over: the volume's table would pass its limit of"
		 " %u targets (the table-targets setting; it has %u)",
		 planned_none ? "nothing to move; " : "", (unsigned long long)tp->table_passed_over,
		 tp->table.max_targets, tp->table.targets);
	return buf;
}

static int tiering_phase_start(struct tiering_pool *tp, char *err, size_t err_len);

static void tiering_done(struct pool *p, int r, const char *err, uint64_t moved, uint64_t failed,
			 void *ctx)
{
	struct tiering_pool *tp = ctx;
	char note[TIERING_MESSAGE_MAX], why[POOL_ERR_MAX];

	(void)p;
	(void)moved;
	/* A phase that ended as planned hands over to the next; any other end is the run's. */
	if (r == 0 && !failed && tp->phase + 1 < TIERING_PHASES) {
		/* Slots the pieces left are room for pieces only: whole extents need their containers back. */
		if (tp->phase == TIERING_PIECES_HOME)
			pool_drop_empty_containers(tp->p);
		tp->phase++;
		r = tiering_phase_start(tp, why, sizeof(why));
		if (r == 0)
			return;
		if (r < 0) {
			tiering_run_end(tp, TIERING_FAILED, why);
			return;
		}
		r = 0;
	}
	if (r == 0 && failed)
		err = "some extents could not move (device errors, see the log)";
	tiering_run_end(tp, run_results[job_result_of(r, failed)],
			r == 0 && !failed ? tiering_run_note(tp, false, note, sizeof(note)) : err);
}

/*
 * The run's phase tp->phase, or the first after it with moves: 0 when a job
 * started, 1 when none is left, or the job engine's error with err set.
 */
static int tiering_phase_start(struct tiering_pool *tp, char *err, size_t err_len)
{
	struct pool *p = tp->p;
	struct ev_loop *loop = tp->ts->loop;
	long long id = (long long)tp->run.id;
	char what[80];
	int r;

	for (; tp->phase < TIERING_PHASES; tp->phase++) {
		if (tp->phase == TIERING_PIECES_HOME && tp->pieces.nr_home) {
			snprintf(what, sizeof(what), "tiering run %lld: pieces home", id);
			r = job_move_piece_list(p, loop, tp->pieces.home, tp->pieces.nr_home, false,
						&tp->limits, what, &tp->run.moved, tiering_progress,
						tiering_done, tp, err, err_len);
		} else if (tp->phase == TIERING_WHOLE && tp->nr_moves) {
			snprintf(what, sizeof(what), "tiering run %lld", id);
			r = job_move_list(p, loop, tp->moves, tp->nr_moves, &tp->limits, what,
					  &tp->run.moved, tiering_progress, tiering_done, tp, err,
					  err_len);
		} else if (tp->phase == TIERING_PIECES_OUT && tp->pieces.nr_out) {
			snprintf(what, sizeof(what), "tiering run %lld: pieces out", id);
			r = job_move_piece_list(p, loop, tp->pieces.out, tp->pieces.nr_out, true,
						&tp->limits, what, &tp->run.moved, tiering_progress,
						tiering_done, tp, err, err_len);
		} else {
			continue;
		}
		/* A pause asked for while an earlier phase ran holds this one too. */
		if (r == 0 && tp->cfg.paused)
			job_pause(p, true);
		return r;
	}
	return 1;
}

int tiering_run_start(struct tierings *ts, struct pool *p, enum tiering_trigger trigger,
		      tiering_notify_fn notify, void *ctx, struct state_run *run_out, char *err,
		      size_t err_len)
{
	struct job_limits limits = { 0 };
	struct tiering_piece_plan pieces;
	struct tiering_pool *tp;
	struct plan plan = { 0 };
	char note[TIERING_MESSAGE_MAX];
	bool nothing;
	struct tiering_table table;
	struct policy pol;
	struct state_run *run;
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	if (r < 0)
		return r;
	if (tp->running || pool_job_what(p))
		return errbuf_fail(-EBUSY, err, err_len, "pool %s is busy: %s", pool_name(p),
				   pool_job_what(p) ? pool_job_what(p) : "");
	if (tp->cfg.paused)
		return errbuf_fail(-EAGAIN, err, err_len,
				   "tiering of pool %s is paused; `tierctl tier resume %s` first",
				   pool_name(p), pool_name(p));
	r = tiering_plan_now(tp, trigger, &pol, &plan, &table, &pieces, err, err_len);
	if (r < 0)
		return r;
	tp->table_passed_over = plan.table_skipped;
	tp->table = table;
	nothing = plan.nr == 0 && !pieces.nr_home && !pieces.nr_out;
	/* An auto pass that finds nothing to do is not worth a row. */
	if (nothing && trigger == TIERING_AUTO) {
		plan_destroy(&plan);
		tiering_piece_plan_destroy(&pieces);
		return errbuf_fail(-EALREADY, err, err_len, "nothing to move");
	}
	tp->auto_full = trigger == TIERING_AUTO && plan.budget_exhausted;
	run = &tp->run;
	memset(run, 0, sizeof(*run));
	snprintf(run->trigger, sizeof(run->trigger), "%s", tiering_trigger_name(trigger));
	snprintf(run->policy, sizeof(run->policy), "%s", pol.name);
	snprintf(run->result, sizeof(run->result), "%s", tiering_result_name(TIERING_RUNNING));
	run->started = time(NULL);
	tp->started_ns = clock_now_ns();
	run->planned_extents = plan.nr;
	run->planned_pieces = pieces.nr_home + pieces.nr_out;
	r = state_run_insert(ts->st, pool_state_id(p), run);
	if (r < 0) {
		tp->auto_full = false;
		plan_destroy(&plan);
		tiering_piece_plan_destroy(&pieces);
		return errbuf_fail(r, err, err_len, "cannot record the run: %s",
				   state_last_error(ts->st));
	}
	tp->last_start = run->started;
	if (state_runs_prune(ts->st, pool_state_id(p), TIERING_RUNS_KEPT) < 0)
		log_pool_warn(pool_name(p), "cannot forget old runs: %s", state_last_error(ts->st));
	if (nothing) {
		plan_destroy(&plan);
		tiering_piece_plan_destroy(&pieces);
		tp->running = 1;
		tiering_run_end(tp, TIERING_DONE, tiering_run_note(tp, true, note, sizeof(note)));
		*run_out = *run;
		return 1;
	}
	/* The run owns the pieces' lists from here; its end frees them. */
	tp->pieces = pieces;
	tp->moves = calloc(plan.nr + 1, sizeof(*tp->moves));
	if (!tp->moves) {
		plan_destroy(&plan);
		tp->running = 1;
		tiering_run_end(tp, TIERING_FAILED, "out of memory");
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	}
	for (size_t i = 0; i < plan.nr; i++)
		tp->moves[i] = (struct job_move_req){ .le = plan.moves[i].le,
						       .to_ssd = plan.moves[i].to == PLANNER_SSD };
	tp->nr_moves = plan.nr;
	plan_destroy(&plan);
	limits.rate = tp->cfg.rate;
	/* The state takes no other word; throttled is the default. */
	if (tiering_io_parse(tp->cfg.io_awareness, &limits.io) < 0)
		limits.io = JOB_IO_THROTTLED;
	/* A scheduled run stops where its window closes; one asked for now does not. */
	if (trigger != TIERING_ON_DEMAND && tp->sched.has_window)
		limits.deadline = schedule_window_end(&tp->sched, run->started);
	tp->limits = limits;
	tp->phase = TIERING_PIECES_HOME;
	tp->running = 1;
	tp->notify = notify;
	tp->notify_ctx = ctx;
	r = tiering_phase_start(tp, err, err_len);
	if (r < 0) {
		tp->notify = NULL;
		tiering_run_end(tp, TIERING_FAILED, err);
		return r;
	}
	if (tp->pieces.piece_bytes)
		log_run_info(pool_name(p), run->id, "tiering run %lld (%s, policy %s) started:"
			     " %zu pieces home, %zu moves of extents, %zu pieces out",
			     (long long)run->id, tiering_trigger_name(trigger), pol.name,
			     tp->pieces.nr_home, tp->nr_moves, tp->pieces.nr_out);
	else
		log_run_info(pool_name(p), run->id, "tiering run %lld (%s, policy %s) started:"
			     " %zu moves", (long long)run->id, tiering_trigger_name(trigger),
			     pol.name, tp->nr_moves);
	*run_out = *run;
	return 0;
}

void tiering_scheduled_run(struct tiering_pool *tp, int64_t due)
{
	enum tiering_trigger trigger = tp->sched.kind == SCHEDULE_AUTO ? TIERING_AUTO :
									   TIERING_SCHEDULE;
	struct state_run run;
	char err[512];
	int r = 0;

	if (!tp->cfg.paused && pool_is_active(tp->p))
		r = tiering_run_start(tp->ts, tp->p, trigger, NULL, NULL, &run, err, sizeof(err));
	/*
	 * Nothing to move because nothing has heat yet: plan again once
	 * something has. A job in the way leaves that as it was.
	 */
	if (r != -EBUSY) {
		tp->auto_cold = r == -EALREADY && trigger == TIERING_AUTO &&
				!pool_has_heat(tp->p, tp->cold_min_heat);
		if (tp->auto_cold)
			log_pool_debug(pool_name(tp->p), "auto: no heat worth a move yet; the first"
				       " sample with some plans again");
	}
	/* auto plans every half minute: a long run or job in its way is no news. */
	if (r == -EBUSY && trigger == TIERING_AUTO)
		log_pool_debug(pool_name(tp->p), "auto tiering waits: %s", err);
	else if (r < 0 && r != -EALREADY)
		log_pool_warn(pool_name(tp->p), "scheduled tiering run not started: %s", err);
	/* time() may read a second before the timer's own clock did. */
	if (tp->last_start < due)
		tp->last_start = due;
	/*
	 * Young heat that showed nothing to move, or a job in the way, may
	 * allow a move a little later. After last_start: the reschedule
	 * counts the interval from it.
	 */
	if ((r == -EALREADY || r == -EBUSY) && trigger == TIERING_AUTO && !tp->auto_cold)
		tiering_young_heat_planned(tp, (int64_t)time(NULL));
}

int tiering_report_runs(struct tierings *ts, struct pool *p, unsigned limit,
			struct tiering_runs_report *out, char *err, size_t err_len)
{
	const struct tiering_pool *tp = tiering_find(ts, p);
	int r = state_runs_list(ts->st, pool_state_id(p), limit, &out->runs, &out->nr);

	if (r < 0) {
		*out = (struct tiering_runs_report){ 0 };
		return errbuf_fail(r, err, err_len, "pool %s: cannot read its runs: %s",
				   pool_name(p), state_last_error(ts->st));
	}
	for (size_t i = 0; i < out->nr; i++) {
		const struct state_run *live = tiering_live_run(tp, &out->runs[i]);

		if (live != &out->runs[i])
			out->runs[i] = *live;
	}
	return 0;
}

void tiering_runs_report_destroy(struct tiering_runs_report *r)
{
	if (!r)
		return;
	free(r->runs);
	r->runs = NULL;
	r->nr = 0;
}
