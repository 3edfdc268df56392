/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tiering: the per-pool state, its settings and its schedule timer. */
#include "tiering.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "tiering-internal.h"

/* The words of the protocol and of the state's CHECK constraint. */
static const char *const io_names[] = {
	[JOB_IO_OFF] = "off",
	[JOB_IO_THROTTLED] = "throttled",
	[JOB_IO_IDLE] = "idle",
};

const char *tiering_io_name(enum job_io io)
{
	return (unsigned)io < sizeof(io_names) / sizeof(io_names[0]) ? io_names[io] : "?";
}

int tiering_io_parse(const char *s, enum job_io *out)
{
	for (size_t i = 0; s && i < sizeof(io_names) / sizeof(io_names[0]); i++) {
		if (strcmp(s, io_names[i]) == 0) {
			*out = (enum job_io)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- the schedule timer ---- */

/*
 * libev asks for the next time in two cases: the timer fired (its callback
 * follows in the same loop iteration), or the system clock was stepped, and
 * then a time stepped over never fires.  Both look the same from here: the
 * armed time has come.  It is noted as due and counts as the last start, so
 * that `every` and `auto` reckon from it (not from the previous run, which
 * would make the timer fire again a second later).  If the next time lies
 * ahead, a prepare watcher (the one loop change libev allows in here) looks
 * at the start of the next iteration: the timer's callback has taken the
 * due time by then if the timer fired; otherwise the clock stepped over it,
 * and the run starts late (as schedule_catch_up() allows).
 */
static ev_tstamp tiering_reschedule(ev_periodic *w, ev_tstamp now)
{
	struct tiering_pool *tp = w->data;
	int64_t next, t = (int64_t)floor(now), last;

	if (tp->armed_at && tp->armed_at <= t)
		tp->due = tp->armed_at;
	else if (tp->due > t)
		tp->due = 0; /* the clock went back before it: it comes again */
	/* Firing now is the plan that was asked for again. */
	if (tp->due)
		tp->auto_again = false;
	last = tp->due > tp->last_start ? tp->due : tp->last_start;
	/*
	 * An interval counts from the run about to start: from the due time it
	 * would come out overdue again when the loop is late by an interval.
	 */
	if (tp->due && (tp->sched.kind == SCHEDULE_EVERY || tp->sched.kind == SCHEDULE_AUTO) &&
	    last < t)
		last = t;
	/* No previous start to count from: the next second the window allows. */
	if (tp->auto_again && tp->sched.kind == SCHEDULE_AUTO)
		last = 0;
	/* One second on, so a run that just started is not due again. */
	if (schedule_next(&tp->sched, t + 1, last, &next) < 0) {
		tp->armed_at = 0;
		return now + 1e9;
	}
	/* An early plan on young heat comes before the interval's. */
	if (tp->young_plan_at && tp->young_plan_at <= t)
		tp->young_plan_at = 0;
	if (tp->young_plan_at && tp->sched.kind == SCHEDULE_AUTO && tp->young_plan_at < next)
		next = tp->young_plan_at;
	if (tp->due && next > t + 1)
		ev_prepare_start(tp->ts->loop, &tp->catch_up);
	tp->armed_at = next;
	return (ev_tstamp)next > now ? (ev_tstamp)next : now + 1;
}

/* What the timer will fire at, which a catch-up may have moved from what schedule_next says. */
static int tiering_next_run(const struct tiering_pool *tp, int64_t now, int64_t *next)
{
	if (tp->cfg.paused)
		return -ENOENT;
	if (tp->armed_at) {
		*next = tp->armed_at;
		return 0;
	}
	return schedule_next(&tp->sched, now, tp->last_start, next);
}

void tierings_heat_sampled(struct tierings *ts, struct pool *p)
{
	struct tiering_pool *tp = tiering_find(ts, p);

	if (!tp || !tp->auto_cold || tp->running || !pool_has_heat(p, tp->cold_min_heat))
		return;
	tp->auto_cold = false;
	tp->heat_since = time(NULL);
	log_pool_debug(pool_name(p), "auto: the first heat sampled; planning now");
	tiering_plan_again_soon(tp);
}

void tiering_young_heat_planned(struct tiering_pool *tp, int64_t planned_at)
{
	if (!tp->heat_since || tp->sched.kind != SCHEDULE_AUTO)
		return;
	/*
	 * Heat older than a third of the interval is no longer young, nor is
	 * a plan due outside the window: the interval's plans take over.
	 */
	if (schedule_young_next(tp->heat_since, planned_at, time(NULL), &tp->young_plan_at) < 0 ||
	    (tp->sched.has_window && !schedule_in_window(&tp->sched, tp->young_plan_at))) {
		tp->heat_since = 0;
		tp->young_plan_at = 0;
		return;
	}
	if (ev_is_active(&tp->timer))
		ev_periodic_again(tp->ts->loop, &tp->timer);
}

void tiering_plan_again_soon(struct tiering_pool *tp)
{
	if (tp->sched.kind != SCHEDULE_AUTO || !ev_is_active(&tp->timer))
		return;
	tp->auto_again = true;
	/* Has libev ask tiering_reschedule for the time again. */
	ev_periodic_again(tp->ts->loop, &tp->timer);
}

static void tiering_apply_schedule(struct tiering_pool *tp)
{
	ev_periodic_stop(tp->ts->loop, &tp->timer);
	ev_prepare_stop(tp->ts->loop, &tp->catch_up);
	tp->armed_at = 0;
	tp->due = 0;
	tp->auto_again = false;
	tp->auto_cold = false;
	tp->heat_since = 0;
	tp->young_plan_at = 0;
	if (tp->sched.kind != SCHEDULE_MANUAL)
		ev_periodic_start(tp->ts->loop, &tp->timer);
}

static void tiering_timer_cb(struct ev_loop *loop, ev_periodic *w, int revents)
{
	struct tiering_pool *tp = w->data;
	int64_t due = tp->due ? tp->due : (int64_t)floor(ev_now(loop));

	(void)revents;
	/* It fired: the due time was not stepped over. */
	tp->due = 0;
	ev_prepare_stop(loop, &tp->catch_up);
	tiering_scheduled_run(tp, due);
}

static void tiering_catch_up_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct tiering_pool *tp = w->data;
	int64_t due = tp->due;
	const char *what = "starting it now";
	char text[32];
	struct tm tm;
	time_t t = (time_t)due;

	(void)revents;
	ev_prepare_stop(loop, w);
	tp->due = 0;
	if (!due || !schedule_catch_up(&tp->sched, due, (int64_t)floor(ev_now(loop))))
		return;
	if (!localtime_r(&t, &tm) || !strftime(text, sizeof(text), "%Y-%m-%d %H:%M", &tm))
		snprintf(text, sizeof(text), "%lld", (long long)due);
	if (tp->cfg.paused)
		what = "runs are paused";
	else if (!pool_is_active(tp->p))
		what = "the pool is inactive";
	log_pool_info(pool_name(tp->p), "the clock was stepped over the run due at %s; %s", text,
		      what);
	tiering_scheduled_run(tp, due);
}

/* ---- per pool ---- */

/* cfg into sched: stored settings were checked when set; a failure means a newer tierd wrote them. */
static int tiering_parse_cfg(const struct state_tiering *cfg, struct schedule *s, char *err,
			     size_t err_len)
{
	int r = schedule_parse(cfg->spec, s, err, err_len);

	if (r == 0 && cfg->window[0])
		r = schedule_parse_window(cfg->window, s, err, err_len);
	return r;
}

struct tiering_pool *tiering_find(struct tierings *ts, const struct pool *p)
{
	for (struct tiering_pool *tp = ts->list; tp; tp = tp->next)
		if (tp->p == p)
			return tp;
	return NULL;
}

struct tiering_pool *tiering_get(struct tierings *ts, struct pool *p)
{
	struct tiering_pool *tp = tiering_find(ts, p);
	struct state_run *runs;
	size_t nr;
	char err[256];

	if (tp)
		return tp;
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return NULL;
	tp->ts = ts;
	tp->p = p;
	if (state_tiering_load(ts->st, pool_state_id(p), &tp->cfg) < 0)
		log_pool_warn(pool_name(p), "cannot read its tiering settings (%s); using the"
			      " defaults", state_last_error(ts->st));
	if (tiering_parse_cfg(&tp->cfg, &tp->sched, err, sizeof(err)) < 0) {
		log_pool_warn(pool_name(p), "stored schedule '%s' is invalid (%s); tiering is"
			      " manual", tp->cfg.spec, err);
		snprintf(tp->cfg.spec, sizeof(tp->cfg.spec), "manual");
		tp->cfg.window[0] = '\0';
		schedule_parse("manual", &tp->sched, NULL, 0);
	}
	if (state_pins_load(ts->st, pool_state_id(p), &tp->pins, &tp->nr_pins) < 0)
		log_pool_warn(pool_name(p), "cannot read its pins: %s", state_last_error(ts->st));
	if (state_runs_list(ts->st, pool_state_id(p), 1, &runs, &nr) == 0) {
		if (nr)
			tp->last_start = runs[0].started;
		free(runs);
	}
	ev_periodic_init(&tp->timer, tiering_timer_cb, 0., 0., tiering_reschedule);
	tp->timer.data = tp;
	ev_prepare_init(&tp->catch_up, tiering_catch_up_cb);
	tp->catch_up.data = tp;
	tp->next = ts->list;
	ts->list = tp;
	tiering_apply_schedule(tp);
	return tp;
}

int tiering_get_or_fail(struct tierings *ts, struct pool *p, struct tiering_pool **out,
			char *err, size_t err_len)
{
	*out = tiering_get(ts, p);
	return *out ? 0 : errbuf_fail(-ENOMEM, err, err_len, "out of memory");
}

static void tiering_free(struct tierings *ts, struct tiering_pool *tp)
{
	ev_periodic_stop(ts->loop, &tp->timer);
	ev_prepare_stop(ts->loop, &tp->catch_up);
	free(tp->pins);
	free(tp->moves);
	free(tp);
}

/* The pool is being destroyed: its timer must not fire on a freed pool. */
static void tierings_forget(struct pool *p, void *ctx)
{
	struct tierings *ts = ctx;

	for (struct tiering_pool **pp = &ts->list; *pp; pp = &(*pp)->next) {
		if ((*pp)->p == p) {
			struct tiering_pool *tp = *pp;

			*pp = tp->next;
			tiering_free(ts, tp);
			return;
		}
	}
}

static int open_pool(struct pool *p, void *ctx)
{
	return tiering_get(ctx, p) ? 0 : -ENOMEM;
}

int tierings_open(struct tierings **out, struct ev_loop *loop, struct pools *ps, struct state *st,
		  const char *const *policy_dirs, size_t nr_dirs, char *err, size_t err_len)
{
	struct tierings *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	if (nr_dirs > TIERING_MAX_DIRS) {
		free(ts);
		return errbuf_fail(-EINVAL, err, err_len, "at most %d policy folders",
				   TIERING_MAX_DIRS);
	}
	ts->loop = loop;
	ts->ps = ps;
	ts->st = st;
	for (size_t i = 0; i < nr_dirs; i++)
		snprintf(ts->dirs[ts->nr_dirs++], PATH_MAX, "%s", policy_dirs[i]);
	if (state_runs_interrupted(st, time(NULL)) < 0)
		log_warn("cannot mark interrupted tiering runs: %s", state_last_error(st));
	if (pools_for_each(ps, open_pool, ts) < 0)
		log_warn("out of memory while loading the tiering settings");
	pools_set_forget_hook(ps, tierings_forget, ts);
	*out = ts;
	return 0;
}

void tierings_close(struct tierings *ts)
{
	if (!ts)
		return;
	pools_set_forget_hook(ts->ps, NULL, NULL);
	while (ts->list) {
		struct tiering_pool *tp = ts->list;

		ts->list = tp->next;
		tiering_free(ts, tp);
	}
	free(ts);
}

/* ---- settings ---- */

static int tiering_save(struct tiering_pool *tp, char *err, size_t err_len)
{
	int r = state_tiering_save(tp->ts->st, pool_state_id(tp->p), &tp->cfg);

	if (r < 0)
		return errbuf_fail(r, err, err_len, "cannot store the settings of pool %s: %s",
				   pool_name(tp->p), state_last_error(tp->ts->st));
	return 0;
}

int tiering_set_policy(struct tierings *ts, struct pool *p, const char *policy, char *err,
		       size_t err_len)
{
	struct tiering_pool *tp;
	struct state_tiering saved;
	struct policy pol;
	char path[PATH_MAX];
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	if (r < 0)
		return r;
	r = tierings_load_policy(ts, policy, &pol, path, sizeof(path), err, err_len);
	if (r < 0)
		return r;
	saved = tp->cfg;
	snprintf(tp->cfg.policy, sizeof(tp->cfg.policy), "%s", policy);
	r = tiering_save(tp, err, err_len);
	if (r < 0) {
		tp->cfg = saved;
		return r;
	}
	/* A cold pool waits for heat worth a move to this policy now. */
	tp->cold_min_heat = policy_promote_min_heat(&pol);
	return 0;
}

int tiering_set_schedule(struct tierings *ts, struct pool *p, const struct tiering_schedule_args *a,
			 char *err, size_t err_len)
{
	struct tiering_pool *tp;
	struct state_tiering cfg;
	struct schedule sched = { 0 };
	enum job_io io;
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	if (r < 0)
		return r;
	cfg = tp->cfg;
	if (a->spec) {
		r = schedule_parse(a->spec, &sched, err, err_len);
		if (r < 0)
			return r;
		schedule_format(&sched, cfg.spec, sizeof(cfg.spec));
	}
	if (a->window) {
		if (a->window[0]) {
			r = schedule_parse_window(a->window, &sched, err, err_len);
			if (r < 0)
				return r;
			schedule_format_window(&sched, cfg.window, sizeof(cfg.window));
		} else {
			cfg.window[0] = '\0';
		}
	}
	if (a->io_awareness) {
		if (tiering_io_parse(a->io_awareness, &io) < 0)
			return errbuf_fail(-EINVAL, err, err_len,
					   "bad io_awareness '%s': use off, throttled or idle",
					   a->io_awareness);
		snprintf(cfg.io_awareness, sizeof(cfg.io_awareness), "%s", tiering_io_name(io));
	}
	if (a->max_bytes)
		cfg.max_bytes = *a->max_bytes;
	if (a->rate)
		cfg.rate = *a->rate;
	if (cfg.max_bytes > INT64_MAX || cfg.rate > INT64_MAX)
		return errbuf_fail(-EINVAL, err, err_len, "max_bytes and rate_bytes_per_second must be below 2^63");
	r = tiering_parse_cfg(&cfg, &sched, err, err_len);
	if (r < 0)
		return r;
	tp->cfg = cfg;
	r = tiering_save(tp, err, err_len);
	if (r < 0)
		return r;
	tp->sched = sched;
	tiering_apply_schedule(tp);
	return 0;
}

void tiering_fill_schedule(const struct tiering_pool *tp, int64_t now,
			   struct tiering_schedule_report *out)
{
	int64_t next = 0;

	*out = (struct tiering_schedule_report){
		.max_bytes = tp->cfg.max_bytes,
		.rate = tp->cfg.rate,
		.paused = tp->cfg.paused,
		.running = tp->running,
		.next_run = tiering_next_run(tp, now, &next) == 0 ? next : 0,
	};
	snprintf(out->spec, sizeof(out->spec), "%s", tp->cfg.spec);
	snprintf(out->window, sizeof(out->window), "%s", tp->cfg.window);
	snprintf(out->policy, sizeof(out->policy), "%s", tp->cfg.policy);
	/* The state takes no other word; a run would go throttled all the same. */
	if (tiering_io_parse(tp->cfg.io_awareness, &out->io_awareness) < 0)
		out->io_awareness = JOB_IO_THROTTLED;
}

int tiering_report_schedule(struct tierings *ts, struct pool *p,
			    struct tiering_schedule_report *out)
{
	struct tiering_pool *tp = tiering_get(ts, p);

	if (!tp)
		return -ENOMEM;
	tiering_fill_schedule(tp, time(NULL), out);
	return 0;
}

int tiering_pause(struct tierings *ts, struct pool *p, bool paused, char *err, size_t err_len)
{
	struct tiering_pool *tp;
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	if (r < 0)
		return r;
	tp->cfg.paused = paused;
	r = tiering_save(tp, err, err_len);
	if (r < 0) {
		tp->cfg.paused = !paused;
		return r;
	}
	if (tp->running)
		job_pause(p, paused);
	log_pool_info(pool_name(p), "tiering %s", paused ? "paused" : "resumed");
	return 0;
}
