/*
 * tiering: each pool's policy, pins and schedule, and the tiering runs that
 * turn them into moves (docs/policies.md, docs/schedule.md). A run plans once
 * (planner.c), records itself in the state, and hands its moves to the pool's
 * job engine; schedules are libev periodic timers in local time.
 */
#ifndef TIERD_TIERING_H
#define TIERD_TIERING_H

#include <ev.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "state.h"

struct tierings;

/* What a run reports to the client that started it with --wait. */
typedef void (*tiering_notify_fn)(json_object *progress, json_object *run_done, void *ctx);

/*
 * policy_dirs: folders searched in order for NAME.policy (the first wins);
 * the built-in "auto" applies when no folder has one. Schedules of every
 * pool start; runs the state still calls running become interrupted.
 */
int tierings_open(struct tierings **out, struct ev_loop *loop, struct pools *ps, struct state *st,
		  const char *const *policy_dirs, size_t nr_dirs, char *err, size_t err_len);
void tierings_close(struct tierings *ts);
/* The pool is going away (destroy): stop its timer and forget it. */
void tierings_forget(struct tierings *ts, struct pool *p);

json_object *tierings_policies_json(struct tierings *ts);
int tiering_set_policy(struct tierings *ts, struct pool *p, const char *policy, char *err,
		       size_t err_len);

struct tiering_schedule_args {
	const char *spec, *window, *io_awareness; /* NULL: unchanged */
	const uint64_t *max_bytes, *rate;         /* NULL: unchanged */
};

int tiering_set_schedule(struct tierings *ts, struct pool *p, const struct tiering_schedule_args *a,
			 char *err, size_t err_len);
json_object *tiering_schedule_json(struct tierings *ts, struct pool *p);
int tiering_pause(struct tierings *ts, struct pool *p, bool paused, char *err, size_t err_len);

struct tiering_range {
	uint64_t offset, length; /* bytes of the volume */
};

/*
 * Pin every range, each rounded out to whole extents, to tier "ssd" or
 * "hdd", or unpin them (tier NULL): all of them or, on any error, none.
 */
int tiering_pin(struct tierings *ts, struct pool *p, const struct tiering_range *ranges,
		size_t nr_ranges, const char *tier, char *err, size_t err_len);
json_object *tiering_pins_json(struct tierings *ts, struct pool *p);

/* The plan a run would carry out now, its first limit moves listed. */
int tiering_plan_json(struct tierings *ts, struct pool *p, uint64_t limit, json_object **out,
		      char *err, size_t err_len);
/*
 * Start a run (trigger "on-demand", "schedule" or "auto"). Returns 0 with
 * *run set (the run object) when it started, 1 when it ended at once (nothing
 * to move), -errno with err set otherwise. notify (may be NULL) gets progress,
 * then the finished run.
 */
int tiering_run_start(struct tierings *ts, struct pool *p, const char *trigger,
		      tiering_notify_fn notify, void *ctx, json_object **run, char *err,
		      size_t err_len);
/* The client waiting on the run went away. */
void tiering_run_unwatch(struct tierings *ts, struct pool *p, void *ctx);
json_object *tiering_runs_json(struct tierings *ts, struct pool *p, unsigned limit);
/* docs/protocol.md, pool.stats. */
int tiering_stats_json(struct tierings *ts, struct pool *p, uint32_t window_s, uint32_t history_s,
		       uint32_t step_s, json_object **out, char *err, size_t err_len);

#endif
