#include "tiering.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "planner.h"
#include "policy.h"
#include "schedule.h"

#define TIERING_MAX_DIRS 4
/* A policy file is a few lines; anything larger is not one. */
#define TIERING_POLICY_FILE_MAX 65536
/* An auto run moves a few extents at a time, as heat changes (docs/schedule.md). */
#define TIERING_AUTO_EXTENTS 16
#define TIERING_RUNS_KEPT_IN_STATS 1

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
	struct pool_move_req *moves;
	size_t nr_moves;
	tiering_notify_fn notify;
	void *notify_ctx;
};

struct tierings {
	struct ev_loop *loop;
	struct pools *ps;
	struct state *st;
	char dirs[TIERING_MAX_DIRS][PATH_MAX];
	size_t nr_dirs;
	struct tiering_pool *list;
};

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return 0;
}

#define failf(r, err, len, ...) (fail((err), (len), __VA_ARGS__), (r))

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

/* ISO 8601 in UTC, or JSON null for 0 (never). */
static json_object *time_json(int64_t t)
{
	char buf[32];
	struct tm tm;
	time_t tt = (time_t)t;

	if (t <= 0 || !gmtime_r(&tt, &tm))
		return NULL;
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_object_new_string(buf);
}

/* ---- policies ---- */

static int read_small_file(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;
	char *buf = NULL;
	size_t n = 0;
	ssize_t got;

	if (fd < 0)
		return -errno;
	buf = malloc(TIERING_POLICY_FILE_MAX + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	while ((got = read(fd, buf + n, TIERING_POLICY_FILE_MAX + 1 - n)) > 0) {
		n += (size_t)got;
		if (n > TIERING_POLICY_FILE_MAX) {
			r = -EFBIG;
			goto out;
		}
	}
	if (got < 0)
		r = -errno;
out:
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*text = buf;
	*len = n;
	return 0;
}

static int policy_load_file(const char *path, const char *name, struct policy *out, char *err,
			    size_t err_len)
{
	char why[256];
	char *text = NULL;
	size_t len = 0;
	int r = read_small_file(path, &text, &len);

	if (r < 0)
		return r == -ENOENT ? r :
				      failf(r, err, err_len, "%s: %s", path, r == -EFBIG ?
						    "too large for a policy file" : strerror(-r));
	r = policy_parse(name, text, len, out, why, sizeof(why));
	free(text);
	if (r < 0)
		return failf(r, err, err_len, "%s: %s", path, why);
	return 0;
}

/* The first NAME.policy of the folders, or the built-in auto; path "" for built-in. */
static int tierings_load_policy(struct tierings *ts, const char *name, struct policy *out,
				char *path, size_t path_len, char *err, size_t err_len)
{
	char looked[512] = "";

	if (!policy_name_valid(name))
		return failf(-EINVAL, err, err_len,
			     "bad policy name '%s': use 1 to 63 of a-z 0-9 _ -, not starting with -",
			     name);
	for (size_t i = 0; i < ts->nr_dirs; i++) {
		int r;

		snprintf(path, path_len, "%s/%s.policy", ts->dirs[i], name);
		r = policy_load_file(path, name, out, err, err_len);
		if (r != -ENOENT)
			return r;
		snprintf(looked + strlen(looked), sizeof(looked) - strlen(looked), "%s%s",
			 looked[0] ? ", " : "", ts->dirs[i]);
	}
	path[0] = '\0';
	if (strcmp(name, "auto") == 0) {
		policy_default(out);
		return 0;
	}
	return failf(-ENOENT, err, err_len, "no policy named %s (looked in %s); see tierctl policy list",
		     name, looked[0] ? looked : "no folder");
}

static json_object *policy_json(const struct policy *pol, const char *path)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(pol->name));
	json_object_object_add(o, "description", json_object_new_string(pol->description));
	json_object_object_add(o, "path", path[0] ? json_object_new_string(path) : NULL);
	json_object_object_add(o, "promote", json_object_new_string(policy_promote_name(pol->promote)));
	json_object_object_add(o, "demote", json_object_new_string(policy_demote_name(pol->demote)));
	json_object_object_add(o, "ssd_headroom", json_object_new_double(pol->ssd_headroom));
	json_object_object_add(o, "hysteresis", json_object_new_double(pol->hysteresis));
	add_u64(o, "min_residency_s", pol->min_residency_s);
	json_object_object_add(o, "min_heat", json_object_new_double(pol->min_heat));
	return o;
}

static int by_name(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b, *nx, *ny;

	json_object_object_get_ex(x, "name", &nx);
	json_object_object_get_ex(y, "name", &ny);
	return strcmp(json_object_get_string(nx), json_object_get_string(ny));
}

static int listed(json_object *a, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *n;

		if (json_object_object_get_ex(json_object_array_get_idx(a, i), "name", &n) &&
		    strcmp(json_object_get_string(n), name) == 0)
			return 1;
	}
	return 0;
}

json_object *tierings_policies_json(struct tierings *ts)
{
	json_object *a = json_object_new_array();
	struct policy pol;
	char path[PATH_MAX], err[512];

	for (size_t i = 0; i < ts->nr_dirs; i++) {
		DIR *d = opendir(ts->dirs[i]);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);
			char name[POLICY_NAME_MAX];

			if (len <= 7 || len - 7 >= sizeof(name) ||
			    strcmp(e->d_name + len - 7, ".policy") != 0)
				continue;
			memcpy(name, e->d_name, len - 7);
			name[len - 7] = '\0';
			if (!policy_name_valid(name) || listed(a, name))
				continue;
			/* The folder order decides which file is in force. */
			if (tierings_load_policy(ts, name, &pol, path, sizeof(path), err, sizeof(err)) < 0) {
				log_warn("policy %s: %s", name, err);
				continue;
			}
			json_object_array_add(a, policy_json(&pol, path));
		}
		closedir(d);
	}
	if (!listed(a, "auto")) {
		policy_default(&pol);
		json_object_array_add(a, policy_json(&pol, ""));
	}
	json_object_array_sort(a, by_name);
	return a;
}

/* ---- per pool ---- */

static void tiering_timer_cb(struct ev_loop *loop, ev_periodic *w, int revents);
static void tiering_catch_up_cb(struct ev_loop *loop, ev_prepare *w, int revents);

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
	last = tp->due > tp->last_start ? tp->due : tp->last_start;
	/*
	 * An interval counts from the run about to start: from the due time it
	 * would come out overdue again when the loop is late by an interval.
	 */
	if (tp->due && (tp->sched.kind == SCHEDULE_EVERY || tp->sched.kind == SCHEDULE_AUTO) &&
	    last < t)
		last = t;
	/* One second on, so a run that just started is not due again. */
	if (schedule_next(&tp->sched, t + 1, last, &next) < 0) {
		tp->armed_at = 0;
		return now + 1e9;
	}
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

static void tiering_apply_schedule(struct tiering_pool *tp)
{
	ev_periodic_stop(tp->ts->loop, &tp->timer);
	ev_prepare_stop(tp->ts->loop, &tp->catch_up);
	tp->armed_at = 0;
	tp->due = 0;
	if (tp->sched.kind != SCHEDULE_MANUAL)
		ev_periodic_start(tp->ts->loop, &tp->timer);
}

/* cfg into sched: stored settings were checked when set, so failure means a newer tierd wrote them. */
static int tiering_parse_cfg(const struct state_tiering *cfg, struct schedule *s, char *err,
			     size_t err_len)
{
	int r = schedule_parse(cfg->spec, s, err, err_len);

	if (r == 0 && cfg->window[0])
		r = schedule_parse_window(cfg->window, s, err, err_len);
	return r;
}

static struct tiering_pool *tiering_find(struct tierings *ts, const struct pool *p)
{
	for (struct tiering_pool *tp = ts->list; tp; tp = tp->next)
		if (tp->p == p)
			return tp;
	return NULL;
}

static struct tiering_pool *tiering_get(struct tierings *ts, struct pool *p)
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
		log_warn("pool %s: cannot read its tiering settings (%s); using the defaults",
			 pool_name(p), state_last_error(ts->st));
	if (tiering_parse_cfg(&tp->cfg, &tp->sched, err, sizeof(err)) < 0) {
		log_warn("pool %s: stored schedule '%s' is invalid (%s); tiering is manual",
			 pool_name(p), tp->cfg.spec, err);
		snprintf(tp->cfg.spec, sizeof(tp->cfg.spec), "manual");
		tp->cfg.window[0] = '\0';
		schedule_parse("manual", &tp->sched, NULL, 0);
	}
	if (state_pins_load(ts->st, pool_state_id(p), &tp->pins, &tp->nr_pins) < 0)
		log_warn("pool %s: cannot read its pins: %s", pool_name(p), state_last_error(ts->st));
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

static int tiering_get_or_fail(struct tierings *ts, struct pool *p, struct tiering_pool **out,
			       char *err, size_t err_len)
{
	*out = tiering_get(ts, p);
	return *out ? 0 : failf(-ENOMEM, err, err_len, "out of memory");
}

static void tiering_free(struct tierings *ts, struct tiering_pool *tp)
{
	ev_periodic_stop(ts->loop, &tp->timer);
	ev_prepare_stop(ts->loop, &tp->catch_up);
	free(tp->pins);
	free(tp->moves);
	free(tp);
}

void tierings_forget(struct tierings *ts, struct pool *p)
{
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
		return failf(-ENOMEM, err, err_len, "out of memory");
	if (nr_dirs > TIERING_MAX_DIRS) {
		free(ts);
		return failf(-EINVAL, err, err_len, "at most %d policy folders", TIERING_MAX_DIRS);
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
	*out = ts;
	return 0;
}

void tierings_close(struct tierings *ts)
{
	if (!ts)
		return;
	while (ts->list) {
		struct tiering_pool *tp = ts->list;

		ts->list = tp->next;
		tiering_free(ts, tp);
	}
	free(ts);
}

static int tiering_save(struct tiering_pool *tp, char *err, size_t err_len)
{
	int r = state_tiering_save(tp->ts->st, pool_state_id(tp->p), &tp->cfg);

	if (r < 0)
		return failf(r, err, err_len, "cannot store the settings of pool %s: %s",
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
	if (r < 0)
		tp->cfg = saved;
	return r;
}

static int io_awareness_valid(const char *v)
{
	return !strcmp(v, "off") || !strcmp(v, "throttled") || !strcmp(v, "idle");
}

int tiering_set_schedule(struct tierings *ts, struct pool *p, const struct tiering_schedule_args *a,
			 char *err, size_t err_len)
{
	struct tiering_pool *tp;
	struct state_tiering cfg;
	struct schedule sched = { 0 };
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
		if (!io_awareness_valid(a->io_awareness))
			return failf(-EINVAL, err, err_len,
				     "bad io_awareness '%s': use off, throttled or idle",
				     a->io_awareness);
		snprintf(cfg.io_awareness, sizeof(cfg.io_awareness), "%s", a->io_awareness);
	}
	if (a->max_bytes)
		cfg.max_bytes = *a->max_bytes;
	if (a->rate)
		cfg.rate = *a->rate;
	if (cfg.max_bytes > INT64_MAX || cfg.rate > INT64_MAX)
		return failf(-EINVAL, err, err_len, "max_bytes and rate must be below 2^63");
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

json_object *tiering_schedule_json(struct tierings *ts, struct pool *p)
{
	struct tiering_pool *tp = tiering_get(ts, p);
	json_object *o;
	int64_t next;

	if (!tp)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "spec", json_object_new_string(tp->cfg.spec));
	json_object_object_add(o, "window", tp->cfg.window[0] ?
					    json_object_new_string(tp->cfg.window) : NULL);
	add_u64(o, "max_bytes", tp->cfg.max_bytes);
	add_u64(o, "rate", tp->cfg.rate);
	json_object_object_add(o, "io_awareness", json_object_new_string(tp->cfg.io_awareness));
	json_object_object_add(o, "policy", json_object_new_string(tp->cfg.policy));
	json_object_object_add(o, "paused", json_object_new_boolean(tp->cfg.paused));
	json_object_object_add(o, "running", json_object_new_boolean(tp->running));
	json_object_object_add(o, "next_run",
			       tiering_next_run(tp, time(NULL), &next) == 0 ? time_json(next) : NULL);
	return o;
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
		pool_job_pause(p, paused);
	log_info("pool %s: tiering %s", pool_name(p), paused ? "paused" : "resumed");
	return 0;
}

/* ---- pins ---- */

static json_object *pins_json(const struct tiering_pool *tp)
{
	json_object *a = json_object_new_array();
	uint64_t es = pool_extent_size(tp->p);

	for (size_t i = 0; i < tp->nr_pins; i++) {
		json_object *o = json_object_new_object();

		add_u64(o, "first_extent", tp->pins[i].first);
		add_u64(o, "extents", tp->pins[i].nr);
		add_u64(o, "offset", tp->pins[i].first * es);
		add_u64(o, "length", tp->pins[i].nr * es);
		json_object_object_add(o, "tier", json_object_new_string(tp->pins[i].ssd ? "ssd" : "hdd"));
		json_object_array_add(a, o);
	}
	return a;
}

json_object *tiering_pins_json(struct tierings *ts, struct pool *p)
{
	struct tiering_pool *tp = tiering_get(ts, p);

	return tp ? pins_json(tp) : json_object_new_array();
}

/*
 * Pins as a per-extent array (0 none, 1 hdd, 2 ssd) is the simple way to
 * overlay, split and merge ranges; a pool's extents number millions at most.
 */
static int pins_rebuild(const uint8_t *per, uint32_t nr, struct state_pin **out, size_t *nr_out)
{
	struct state_pin *v = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t le = 0; le < nr;) {
		uint32_t end = le;

		if (!per[le]) {
			le++;
			continue;
		}
		while (end < nr && per[end] == per[le])
			end++;
		if (n == cap) {
			size_t want = cap ? cap * 2 : 8;
			struct state_pin *grown = realloc(v, want * sizeof(*v));

			if (!grown) {
				free(v);
				return -ENOMEM;
			}
			v = grown;
			cap = want;
		}
		v[n++] = (struct state_pin){ .first = le, .nr = end - le, .ssd = per[le] == 2 };
		le = end;
	}
	*out = v;
	*nr_out = n;
	return 0;
}

static uint8_t *pins_per_extent(const struct tiering_pool *tp, uint32_t nr)
{
	uint8_t *per = calloc(nr ? nr : 1, 1);

	if (!per)
		return NULL;
	for (size_t i = 0; i < tp->nr_pins; i++)
		for (uint32_t le = tp->pins[i].first; le < tp->pins[i].first + tp->pins[i].nr && le < nr;
		     le++)
			per[le] = tp->pins[i].ssd ? 2 : 1;
	return per;
}

int tiering_pin(struct tierings *ts, struct pool *p, const struct tiering_range *ranges,
		size_t nr_ranges, const char *tier, char *err, size_t err_len)
{
	struct tiering_pool *tp;
	uint32_t nr = pool_nr_extents(p);
	uint64_t es = pool_extent_size(p), size = (uint64_t)nr * es;
	struct state_pin *pins;
	size_t nr_pins;
	uint8_t *per, value;
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	if (r < 0)
		return r;
	if (tier && strcmp(tier, "ssd") && strcmp(tier, "hdd"))
		return failf(-EINVAL, err, err_len, "bad tier '%s': use ssd or hdd", tier);
	if (!nr_ranges)
		return failf(-EINVAL, err, err_len, "no range given");
	/* Every range is checked before any changes: a bad one anywhere changes nothing. */
	for (size_t i = 0; i < nr_ranges; i++) {
		uint64_t offset = ranges[i].offset, length = ranges[i].length;

		if (length && offset < size && length <= size - offset)
			continue;
		if (nr_ranges == 1)
			return failf(-EINVAL, err, err_len,
				     "the range must lie inside the volume (%llu bytes) and not be empty",
				     (unsigned long long)size);
		return failf(-EINVAL, err, err_len,
			     "range %zu of %zu (offset %llu, length %llu) must lie inside the volume"
			     " (%llu bytes) and not be empty; no range was changed",
			     i + 1, nr_ranges, (unsigned long long)offset, (unsigned long long)length,
			     (unsigned long long)size);
	}
	value = !tier ? 0 : !strcmp(tier, "ssd") ? 2 : 1;
	per = pins_per_extent(tp, nr);
	if (!per)
		return failf(-ENOMEM, err, err_len, "out of memory");
	for (size_t i = 0; i < nr_ranges; i++) {
		uint64_t first = ranges[i].offset / es;
		uint64_t end = (ranges[i].offset + ranges[i].length + es - 1) / es;

		memset(per + first, value, end - first);
	}
	r = pins_rebuild(per, nr, &pins, &nr_pins);
	free(per);
	if (r < 0)
		return failf(r, err, err_len, "out of memory");
	r = state_pins_save(ts->st, pool_state_id(p), pins, nr_pins);
	if (r < 0) {
		free(pins);
		return failf(r, err, err_len, "cannot store the pins of pool %s: %s", pool_name(p),
			     state_last_error(ts->st));
	}
	free(tp->pins);
	tp->pins = pins;
	tp->nr_pins = nr_pins;
	return 0;
}

/* ---- planning ---- */

static int tiering_make_plan(struct tiering_pool *tp, const struct policy *pol, uint64_t max_bytes,
			     struct plan *plan, char *err, size_t err_len)
{
	struct planner_input in = { 0 };
	struct planner_extent *ext;
	int r;

	r = pool_planner_input(tp->p, &ext, &in.ssd_capacity, &in.ssd_free, &in.hdd_free);
	if (r < 0)
		return failf(r, err, err_len, "out of memory");
	in.ext = ext;
	in.nr = pool_nr_extents(tp->p);
	for (size_t i = 0; i < tp->nr_pins; i++)
		for (uint32_t le = tp->pins[i].first; le < tp->pins[i].first + tp->pins[i].nr && le < in.nr;
		     le++)
			ext[le].pin = tp->pins[i].ssd ? PLANNER_SSD : PLANNER_HDD;
	in.extent_bytes = pool_extent_size(tp->p);
	in.max_bytes = max_bytes;
	in.now = (uint32_t)time(NULL);
	in.policy = pol;
	r = planner_plan(&in, plan);
	free(ext);
	if (r < 0)
		return failf(r, err, err_len, "pool %s: the planner failed: %s", pool_name(tp->p),
			     strerror(-r));
	return 0;
}

static int tiering_plan_now(struct tiering_pool *tp, const char *trigger, struct policy *pol,
			    struct plan *plan, char *err, size_t err_len)
{
	char path[PATH_MAX];
	uint64_t max_bytes = tp->cfg.max_bytes;
	int r;

	/* An inactive pool tiers too: tierd copies its extents itself (docs/migration.md). */
	r = tierings_load_policy(tp->ts, tp->cfg.policy, pol, path, sizeof(path), err, err_len);
	if (r < 0)
		return r;
	if (strcmp(trigger, "auto") == 0) {
		uint64_t small = TIERING_AUTO_EXTENTS * pool_extent_size(tp->p);

		if (!max_bytes || max_bytes > small)
			max_bytes = small;
	}
	return tiering_make_plan(tp, pol, max_bytes, plan, err, err_len);
}

static json_object *plan_json(const struct tiering_pool *tp, const struct plan *plan,
			      const struct policy *pol, uint64_t limit)
{
	json_object *o = json_object_new_object(), *moves = json_object_new_array();
	uint64_t es = pool_extent_size(tp->p);
	struct planner_extent *ext = NULL;
	uint32_t cap, sfree, hfree;

	pool_planner_input(tp->p, &ext, &cap, &sfree, &hfree);
	json_object_object_add(o, "policy", json_object_new_string(pol->name));
	add_u64(o, "promote_extents", plan->promote_extents);
	add_u64(o, "demote_extents", plan->demote_extents);
	add_u64(o, "promote_bytes", plan->promote_bytes);
	add_u64(o, "demote_bytes", plan->demote_bytes);
	json_object_object_add(o, "ssd_share_before", json_object_new_double(plan->ssd_share_before));
	json_object_object_add(o, "ssd_share_after", json_object_new_double(plan->ssd_share_after));
	add_u64(o, "moves_total", plan->nr);
	for (size_t i = 0; i < plan->nr && i < limit; i++) {
		json_object *m = json_object_new_object();
		uint32_t le = plan->moves[i].le;

		add_u64(m, "extent", le);
		add_u64(m, "offset", le * es);
		json_object_object_add(m, "heat", json_object_new_double(ext ? ext[le].heat : 0));
		json_object_object_add(m, "to", json_object_new_string(
			plan->moves[i].to == PLANNER_SSD ? "ssd" : "hdd"));
		json_object_array_add(moves, m);
	}
	free(ext);
	json_object_object_add(o, "moves", moves);
	return o;
}

int tiering_plan_json(struct tierings *ts, struct pool *p, uint64_t limit, json_object **out,
		      char *err, size_t err_len)
{
	struct tiering_pool *tp;
	struct plan plan = { 0 };
	struct policy pol;
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	if (r < 0)
		return r;
	r = tiering_plan_now(tp, "on-demand", &pol, &plan, err, err_len);
	if (r < 0)
		return r;
	*out = plan_json(tp, &plan, &pol, limit);
	plan_destroy(&plan);
	return 0;
}

/* ---- runs ---- */

static json_object *run_json(const struct state_run *run)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_int64(run->id));
	json_object_object_add(o, "trigger", json_object_new_string(run->trigger));
	json_object_object_add(o, "policy", json_object_new_string(run->policy));
	json_object_object_add(o, "started", time_json(run->started));
	json_object_object_add(o, "finished", time_json(run->finished));
	add_u64(o, "planned_extents", run->planned_extents);
	add_u64(o, "promoted_extents", run->moved.promoted_extents);
	add_u64(o, "demoted_extents", run->moved.demoted_extents);
	add_u64(o, "promoted_bytes", run->moved.promoted_bytes);
	add_u64(o, "demoted_bytes", run->moved.demoted_bytes);
	add_u64(o, "bytes", run->moved.promoted_bytes + run->moved.demoted_bytes);
	add_u64(o, "failed", run->moved.failed);
	json_object_object_add(o, "result", json_object_new_string(run->result));
	json_object_object_add(o, "message", run->message[0] ?
					     json_object_new_string(run->message) : NULL);
	return o;
}

static void tiering_run_end(struct tiering_pool *tp, const char *result, const char *message)
{
	struct state_run *run = &tp->run;
	tiering_notify_fn notify = tp->notify;
	void *ctx = tp->notify_ctx;

	run->finished = time(NULL);
	snprintf(run->result, sizeof(run->result), "%s", result);
	snprintf(run->message, sizeof(run->message), "%s", message ? message : "");
	if (state_run_update(tp->ts->st, run) < 0)
		log_warn("pool %s: cannot record the end of run %lld: %s", pool_name(tp->p),
			 (long long)run->id, state_last_error(tp->ts->st));
	log_info("pool %s: tiering run %lld (%s) %s: %llu extents promoted, %llu demoted,"
		 " %llu failed%s%s", pool_name(tp->p), (long long)run->id, run->trigger, result,
		 (unsigned long long)run->moved.promoted_extents,
		 (unsigned long long)run->moved.demoted_extents,
		 (unsigned long long)run->moved.failed, run->message[0] ? ": " : "", run->message);
	tp->running = 0;
	tp->notify = NULL;
	tp->notify_ctx = NULL;
	free(tp->moves);
	tp->moves = NULL;
	if (notify)
		notify(NULL, run_json(run), ctx);
}

static void tiering_progress(struct pool *p, const char *what, uint64_t done, uint64_t total,
			     void *ctx)
{
	struct tiering_pool *tp = ctx;
	json_object *o;

	(void)p;
	if (!tp->notify)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "what", json_object_new_string(what));
	add_u64(o, "done", done);
	add_u64(o, "total", total);
	if (done > 0 && done <= tp->nr_moves) {
		const struct pool_move_req *m = &tp->moves[done - 1];

		add_u64(o, "extent", m->le);
		json_object_object_add(o, "from", json_object_new_string(m->to_ssd ? "hdd" : "ssd"));
		json_object_object_add(o, "to", json_object_new_string(m->to_ssd ? "ssd" : "hdd"));
	}
	tp->notify(o, NULL, tp->notify_ctx);
}

static void tiering_done(struct pool *p, int r, const char *err, uint64_t moved, uint64_t failed,
			 void *ctx)
{
	struct tiering_pool *tp = ctx;

	(void)p;
	(void)moved;
	if (r == 0)
		tiering_run_end(tp, failed ? "partial" : "done",
				failed ? "some extents could not move (device errors, see the log)" :
					 NULL);
	else if (r == -ETIME || r == -ECANCELED)
		tiering_run_end(tp, "cancelled", err);
	else if (r == -ENOSPC)
		tiering_run_end(tp, "partial", err);
	else
		tiering_run_end(tp, "failed", err);
}

static enum pool_io_awareness io_mode(const char *v)
{
	return !strcmp(v, "off") ? POOL_IO_OFF : !strcmp(v, "idle") ? POOL_IO_IDLE : POOL_IO_THROTTLED;
}

int tiering_run_start(struct tierings *ts, struct pool *p, const char *trigger,
		      tiering_notify_fn notify, void *ctx, json_object **run_out, char *err,
		      size_t err_len)
{
	struct pool_move_limits limits = { 0 };
	struct tiering_pool *tp;
	struct plan plan = { 0 };
	struct policy pol;
	struct state_run *run;
	char what[64];
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	if (r < 0)
		return r;
	if (tp->running || *pool_busy(p))
		return failf(-EBUSY, err, err_len, "pool %s is busy: %s", pool_name(p), pool_busy(p));
	if (tp->cfg.paused)
		return failf(-EAGAIN, err, err_len,
			     "tiering of pool %s is paused; `tierctl tier resume %s` first",
			     pool_name(p), pool_name(p));
	r = tiering_plan_now(tp, trigger, &pol, &plan, err, err_len);
	if (r < 0)
		return r;
	/* An auto pass that finds nothing to do is not worth a row. */
	if (plan.nr == 0 && strcmp(trigger, "auto") == 0) {
		plan_destroy(&plan);
		return failf(-EALREADY, err, err_len, "nothing to move");
	}
	run = &tp->run;
	memset(run, 0, sizeof(*run));
	snprintf(run->trigger, sizeof(run->trigger), "%s", trigger);
	snprintf(run->policy, sizeof(run->policy), "%s", pol.name);
	snprintf(run->result, sizeof(run->result), "running");
	run->started = time(NULL);
	run->planned_extents = plan.nr;
	r = state_run_insert(ts->st, pool_state_id(p), run);
	if (r < 0) {
		plan_destroy(&plan);
		return failf(r, err, err_len, "cannot record the run: %s", state_last_error(ts->st));
	}
	tp->last_start = run->started;
	if (plan.nr == 0) {
		plan_destroy(&plan);
		tp->running = 1;
		tiering_run_end(tp, "done", "nothing to move");
		*run_out = run_json(run);
		return 1;
	}
	tp->moves = calloc(plan.nr, sizeof(*tp->moves));
	if (!tp->moves) {
		plan_destroy(&plan);
		tp->running = 1;
		tiering_run_end(tp, "failed", "out of memory");
		return failf(-ENOMEM, err, err_len, "out of memory");
	}
	for (size_t i = 0; i < plan.nr; i++)
		tp->moves[i] = (struct pool_move_req){ .le = plan.moves[i].le,
						       .to_ssd = plan.moves[i].to == PLANNER_SSD };
	tp->nr_moves = plan.nr;
	plan_destroy(&plan);
	limits.rate = tp->cfg.rate;
	limits.io = io_mode(tp->cfg.io_awareness);
	/* A scheduled run stops where its window closes; one asked for now does not. */
	if (strcmp(trigger, "on-demand") != 0 && tp->sched.has_window)
		limits.deadline = schedule_window_end(&tp->sched, run->started);
	snprintf(what, sizeof(what), "tiering run %lld", (long long)run->id);
	tp->running = 1;
	tp->notify = notify;
	tp->notify_ctx = ctx;
	r = pool_moves_start(p, ts->loop, tp->moves, tp->nr_moves, &limits, what, &run->moved,
			     tiering_progress, tiering_done, tp, err, err_len);
	if (r < 0) {
		tp->notify = NULL;
		tiering_run_end(tp, "failed", err);
		return r;
	}
	log_info("pool %s: tiering run %lld (%s, policy %s) started: %zu moves", pool_name(p),
		 (long long)run->id, trigger, pol.name, tp->nr_moves);
	*run_out = run_json(run);
	return 0;
}

void tiering_run_unwatch(struct tierings *ts, struct pool *p, void *ctx)
{
	struct tiering_pool *tp = tiering_find(ts, p);

	if (tp && tp->notify_ctx == ctx) {
		tp->notify = NULL;
		tp->notify_ctx = NULL;
	}
}

/* A run for the scheduled time `due`, which counts as started whether or not a run can start. */
static void tiering_scheduled_run(struct tiering_pool *tp, int64_t due)
{
	const char *trigger = tp->sched.kind == SCHEDULE_AUTO ? "auto" : "schedule";
	json_object *run = NULL;
	char err[512];
	int r = 0;

	if (!tp->cfg.paused && pool_is_active(tp->p)) {
		r = tiering_run_start(tp->ts, tp->p, trigger, NULL, NULL, &run, err, sizeof(err));
		json_object_put(run);
	}
	if (r < 0 && r != -EALREADY)
		log_warn("pool %s: scheduled tiering run not started: %s", pool_name(tp->p), err);
	/* time() may read a second before the timer's own clock did. */
	if (tp->last_start < due)
		tp->last_start = due;
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
	log_info("pool %s: the clock was stepped over the run due at %s; %s", pool_name(tp->p), text,
		 what);
	tiering_scheduled_run(tp, due);
}

json_object *tiering_runs_json(struct tierings *ts, struct pool *p, unsigned limit)
{
	json_object *a = json_object_new_array();
	struct state_run *runs;
	size_t nr;

	if (state_runs_list(ts->st, pool_state_id(p), limit, &runs, &nr) < 0) {
		log_warn("pool %s: cannot read its runs: %s", pool_name(p), state_last_error(ts->st));
		return a;
	}
	for (size_t i = 0; i < nr; i++) {
		struct tiering_pool *tp = tiering_find(ts, p);

		/* The live counters of a run in progress are newer than its row. */
		json_object_array_add(a, run_json(tp && tp->running && tp->run.id == runs[i].id ?
							  &tp->run : &runs[i]));
	}
	free(runs);
	return a;
}

/* ---- statistics ---- */

static json_object *fraction_json(uint64_t part, uint64_t all)
{
	return all ? json_object_new_double((double)part / (double)all) : NULL;
}

static json_object *tiers_json(struct pool *p)
{
	json_object *pool = pool_to_json(p), *tiers, *out = json_object_new_array();

	if (json_object_object_get_ex(pool, "tiers", &tiers)) {
		for (size_t i = 0; i < json_object_array_length(tiers); i++) {
			json_object *t = json_object_array_get_idx(tiers, i), *devs, *paths;

			paths = json_object_new_array();
			if (json_object_object_get_ex(t, "devices", &devs)) {
				for (size_t d = 0; d < json_object_array_length(devs); d++) {
					json_object *path;

					if (json_object_object_get_ex(json_object_array_get_idx(devs, d),
								      "path", &path))
						json_object_array_add(paths, json_object_get(path));
				}
			}
			json_object_object_add(t, "devices", paths);
			json_object_array_add(out, json_object_get(t));
		}
	}
	json_object_put(pool);
	return out;
}

static uint64_t ios(const struct state_tier_io *io)
{
	return io->reads + io->writes;
}

int tiering_stats_json(struct tierings *ts, struct pool *p, uint32_t window_s, uint32_t history_s,
		       uint32_t step_s, json_object **out, char *err, size_t err_len)
{
	struct tiering_pool *tp;
	struct state_interval win = { 0 }, *hist = NULL;
	struct state_tier_io pending[2];
	struct state_moves total;
	struct state_run *runs = NULL;
	json_object *o, *io, *mig, *sched;
	int64_t now = time(NULL), minute_now = now / 60 * 60;
	size_t nr_runs = 0, nr_hist = 0;
	int64_t next;
	uint64_t all;
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	if (r < 0)
		return r;
	if (window_s < 60 || (history_s && step_s < 60))
		return failf(-EINVAL, err, err_len, "window and step are at least 60 seconds");
	if (history_s) {
		nr_hist = (history_s + step_s - 1) / step_s;
		if (nr_hist > 10000)
			return failf(-EINVAL, err, err_len,
				     "at most 10000 intervals: use a larger step");
		hist = calloc(nr_hist, sizeof(*hist));
		if (!hist)
			return failf(-ENOMEM, err, err_len, "out of memory");
	}
	/* The minute now running is not stored yet: pending covers it. */
	r = state_history(ts->st, pool_state_id(p), minute_now + 60 - (int64_t)window_s / 60 * 60,
			  window_s / 60 * 60, 1, &win);
	if (r == 0 && hist)
		r = state_history(ts->st, pool_state_id(p),
				  minute_now + 60 - (int64_t)nr_hist * step_s, step_s, nr_hist, hist);
	if (r == 0)
		r = state_moves_total(ts->st, pool_state_id(p), &total);
	if (r == 0)
		r = state_runs_list(ts->st, pool_state_id(p), TIERING_RUNS_KEPT_IN_STATS, &runs,
				    &nr_runs);
	if (r < 0) {
		free(hist);
		return failf(r, err, err_len, "cannot read the statistics of pool %s: %s",
			     pool_name(p), state_last_error(ts->st));
	}
	pool_io_pending(p, pending);
	for (int t = 0; t < 2; t++) {
		win.io[t].reads += pending[t].reads;
		win.io[t].writes += pending[t].writes;
		if (hist) {
			hist[nr_hist - 1].io[t].reads += pending[t].reads;
			hist[nr_hist - 1].io[t].writes += pending[t].writes;
		}
	}
	o = json_object_new_object();
	json_object_object_add(o, "pool", json_object_new_string(pool_name(p)));
	add_u64(o, "extent_size", pool_extent_size(p));
	json_object_object_add(o, "state", json_object_new_string(
		tp->cfg.paused ? "paused" : *pool_busy(p) ? "migrating" : "idle"));
	json_object_object_add(o, "tiers", tiers_json(p));
	io = json_object_new_object();
	add_u64(io, "window_seconds", window_s / 60 * 60);
	add_u64(io, "reads", win.io[0].reads + win.io[1].reads);
	add_u64(io, "writes", win.io[0].writes + win.io[1].writes);
	all = ios(&win.io[0]) + ios(&win.io[1]);
	json_object_object_add(io, "ssd_io_fraction", fraction_json(ios(&win.io[METADATA_TIER_SSD]), all));
	json_object_object_add(o, "io", io);
	mig = json_object_new_object();
	add_u64(mig, "promoted_extents", total.promoted_extents);
	add_u64(mig, "demoted_extents", total.demoted_extents);
	add_u64(mig, "promoted_bytes", total.promoted_bytes);
	add_u64(mig, "demoted_bytes", total.demoted_bytes);
	add_u64(mig, "failed", total.failed);
	json_object_object_add(o, "migration", mig);
	json_object_object_add(o, "last_run", nr_runs ? run_json(tp->running && tp->run.id == runs[0].id ?
								&tp->run : &runs[0]) : NULL);
	sched = json_object_new_object();
	json_object_object_add(sched, "spec", json_object_new_string(tp->cfg.spec));
	json_object_object_add(sched, "next_run",
			       tiering_next_run(tp, now, &next) == 0 ? time_json(next) : NULL);
	json_object_object_add(o, "schedule", sched);
	if (hist) {
		json_object *a = json_object_new_array();

		for (size_t i = 0; i < nr_hist; i++) {
			json_object *h = json_object_new_object();
			uint64_t n = ios(&hist[i].io[0]) + ios(&hist[i].io[1]);

			json_object_object_add(h, "start", time_json(hist[i].start));
			add_u64(h, "seconds", step_s);
			add_u64(h, "reads", hist[i].io[0].reads + hist[i].io[1].reads);
			add_u64(h, "writes", hist[i].io[0].writes + hist[i].io[1].writes);
			json_object_object_add(h, "ssd_io_fraction",
					       fraction_json(ios(&hist[i].io[METADATA_TIER_SSD]), n));
			add_u64(h, "promoted_bytes", hist[i].moved.promoted_bytes);
			add_u64(h, "demoted_bytes", hist[i].moved.demoted_bytes);
			json_object_array_add(a, h);
		}
		json_object_object_add(o, "history", a);
	}
	free(hist);
	free(runs);
	*out = o;
	return 0;
}
