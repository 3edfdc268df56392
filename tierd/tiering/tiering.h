/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tiering: each pool's policy, pins and schedule, and the runs that turn them into moves. */
#ifndef TIERD_TIERING_H
#define TIERD_TIERING_H

/*
 * docs/policies.md, docs/schedule.md. A run plans once (planner.c), records
 * itself in the state, and hands its moves to the pool's job engine;
 * schedules are libev periodic timers in local time. What this layer reports
 * are plain structs, so that the protocol's JSON is made in one place
 * (control/tierview.c) and the exporter reads values instead of parsing it.
 */

#include <ev.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "policy.h"
#include "pool.h"
#include "state.h"

struct tierings;

/*
 * The words the protocol and the state use for I/O awareness, triggers and
 * results: one table each, so that nobody else compares strings. A name is
 * "?" for a value out of range; parsing anything else is -EINVAL.
 */
const char *tiering_io_name(enum job_io io);
int tiering_io_parse(const char *s, enum job_io *out); /* "off", "throttled", "idle" */

/* In the order the exporter lists them. */
enum tiering_trigger { TIERING_ON_DEMAND, TIERING_SCHEDULE, TIERING_AUTO, TIERING_TRIGGER_NR };
enum tiering_result {
	TIERING_RUNNING,
	TIERING_DONE,
	TIERING_PARTIAL,
	TIERING_FAILED,
	TIERING_CANCELLED,
	TIERING_INTERRUPTED,
	TIERING_ABORTED,
	TIERING_RESULT_NR
};

const char *tiering_trigger_name(enum tiering_trigger t);
const char *tiering_result_name(enum tiering_result r);
int tiering_trigger_parse(const char *s, enum tiering_trigger *out);
int tiering_result_parse(const char *s, enum tiering_result *out);

/*
 * A run is reported as the state's row (struct state_run): the same values,
 * with the live counters while it runs.
 */

/* Progress of a run: its job as the job engine reports it (job.h). */
struct tiering_progress {
	const struct pool *pool;
	const struct job_report *job;
};

/* What a run reports to the client that started it with --wait: progress, or the finished run. */
typedef void (*tiering_notify_fn)(const struct tiering_progress *progress,
				  const struct state_run *run_done, void *ctx);

/*
 * policy_dirs: folders searched in order for NAME.policy (the first wins);
 * the built-in "auto" applies when no folder has one. Schedules of every
 * pool start; runs the state still calls running become interrupted.
 */
int tierings_open(struct tierings **out, struct ev_loop *loop, struct pools *ps, struct state *st,
		  const char *const *policy_dirs, size_t nr_dirs, char *err, size_t err_len);
void tierings_close(struct tierings *ts);
/*
 * p's heat was just sampled. Under schedule auto, a pool whose last plan
 * found no heat at all is planned again at once if it has some now: a
 * cold pool's first plan comes with its first I/O, not an interval later.
 */
void tierings_heat_sampled(struct tierings *ts, struct pool *p);
struct tiering_policy_report {
	struct policy policy;
	char path[PATH_MAX]; /* "" for the built-in auto */
};

/* Every policy in force, sorted by name. */
struct tiering_policies_report {
	struct tiering_policy_report *v;
	size_t nr;
};

/* Files that do not parse are logged and left out. -ENOMEM, *out empty then. */
int tierings_report_policies(struct tierings *ts, struct tiering_policies_report *out);
/* Frees and empties r; accepts NULL and an emptied report. */
void tiering_policies_report_destroy(struct tiering_policies_report *r);

int tiering_set_policy(struct tierings *ts, struct pool *p, const char *policy, char *err,
		       size_t err_len);

struct tiering_schedule_args {
	const char *spec, *window, *io_awareness; /* NULL: unchanged */
	const uint64_t *max_bytes, *rate;         /* NULL: unchanged */
};

int tiering_set_schedule(struct tierings *ts, struct pool *p, const struct tiering_schedule_args *a,
			 char *err, size_t err_len);

struct tiering_schedule_report {
	char spec[256];
	char window[32]; /* "" when runs may start at any time */
	uint64_t max_bytes, rate;
	enum job_io io_awareness;
	char policy[STATE_NAME_MAX];
	bool paused, running;
	int64_t next_run; /* unix seconds, 0 when none is due (manual, or paused) */
};

/* -ENOMEM when the pool's settings cannot be held. */
int tiering_report_schedule(struct tierings *ts, struct pool *p,
			    struct tiering_schedule_report *out);
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

struct tiering_pins_report {
	struct state_pin *pins; /* in extent order */
	size_t nr;
	uint64_t extent_size;   /* a pin's bytes are its extents times this */
};

/* -ENOMEM, with *out empty (no pins, the extent size set). */
int tiering_report_pins(struct tierings *ts, struct pool *p, struct tiering_pins_report *out);
void tiering_pins_report_destroy(struct tiering_pins_report *r);

struct tiering_plan_move {
	uint32_t extent;
	uint64_t offset; /* bytes of the volume */
	double heat;     /* the extent's, a piece's too */
	bool to_ssd;
	int32_t piece;   /* the piece of the extent that moves; -1: the whole extent */
};

/* The volume's table when a plan was made: its targets and their limit (0: none). */
struct tiering_table {
	uint32_t targets, max_targets;
};

struct tiering_plan_report {
	char policy[POLICY_NAME_MAX];
	uint64_t promote_extents, demote_extents, promote_bytes, demote_bytes;
	double ssd_share_before, ssd_share_after;
	uint64_t moves_total;
	struct tiering_table table;
	uint64_t table_passed_over; /* extents the table's limit kept out of the plan */
	/* With pieces placed (piece_bytes > 0): those the plan brings home and sends out. */
	uint64_t pieces_home, pieces_out, piece_bytes;
	struct tiering_plan_move *moves; /* the first moves of the plan, at most the limit asked */
	size_t nr_moves;
};

/*
 * The plan a run would carry out now, its first limit moves listed. Errors
 * with err set: those of the pool's policy (-ENOENT none of that name,
 * -EINVAL its file does not parse), -ENOMEM; *out is empty then.
 */
int tiering_report_plan(struct tierings *ts, struct pool *p, uint64_t limit,
			struct tiering_plan_report *out, char *err, size_t err_len);
void tiering_plan_report_destroy(struct tiering_plan_report *r);

/*
 * Start a run. Returns 0 with *run set when it started, 1 when it ended at
 * once (nothing to move), -errno with err set otherwise: -EBUSY (a run or
 * another job is under way), -EAGAIN (paused), -EALREADY (an auto run with
 * nothing to move, which leaves no record), the policy's errors, those of
 * the state and the job engine. notify (may be NULL) gets progress, then
 * the finished run.
 */
int tiering_run_start(struct tierings *ts, struct pool *p, enum tiering_trigger trigger,
		      tiering_notify_fn notify, void *ctx, struct state_run *run, char *err,
		      size_t err_len);

struct tiering_runs_report {
	struct state_run *runs; /* newest first */
	size_t nr;
};

/* The state's errors, with err set and *out empty. */
int tiering_report_runs(struct tierings *ts, struct pool *p, unsigned limit,
			struct tiering_runs_report *out, char *err, size_t err_len);
void tiering_runs_report_destroy(struct tiering_runs_report *r);

/* docs/protocol.md, pool.stats; the tiers are the pool's to report. */
struct tiering_stats_report {
	uint64_t extent_size;
	bool migrating;                  /* a run or another long operation is under way */
	uint32_t window_seconds;
	struct state_tier_io io[2];      /* [METADATA_TIER_*] in the window, pending I/O included */
	struct state_moves moved;        /* every move since the pool was made */
	bool has_last_run;
	struct state_run last_run;
	struct tiering_schedule_report schedule;
	uint32_t step_seconds;
	struct state_interval *history;  /* oldest first, ending with the interval now running */
	size_t nr_history;               /* 0 when no history was asked for */
};

/*
 * -EINVAL (window or step under 60 seconds, more than 10000 intervals),
 * -ENOMEM, or the state's errors; err is set and *out empty then.
 */
int tiering_report_stats(struct tierings *ts, struct pool *p, uint32_t window_s,
			 uint32_t history_s, uint32_t step_s, struct tiering_stats_report *out,
			 char *err, size_t err_len);
void tiering_stats_report_destroy(struct tiering_stats_report *r);

/* docs/heat.md, "How big an SSD": the what-if curve of pool.advise. */
struct tiering_advice_point {
	uint64_t ssd_size;   /* bytes of SSD device, whole extents */
	double ssd_io_share; /* predicted share of the I/O it serves, 0..1 */
	double ssd_io_share_pieces; /* the same with pieces placed (piece_size set) */
	bool current;        /* the pool's SSD tier as it is */
};

struct tiering_advice_report {
	char policy[POLICY_NAME_MAX];
	bool heat_on;
	uint64_t extent_size;
	uint64_t ssd_size;                /* the pool's SSD tier, 0 without one */
	uint64_t all_hot_size;            /* the smallest SSD holding every extent it would take */
	double all_hot_share;             /* its share: the most any SSD size reaches */
	uint64_t piece_size;              /* pieces watched (piece-heat): their bytes; else 0 */
	uint64_t promote_bytes, demote_bytes; /* what a run would move now, toward the current point */
	uint32_t window_seconds;
	struct state_tier_io io[2];       /* [METADATA_TIER_*] served in the window, as pool.stats */
	struct tiering_advice_point *points; /* by size, the current size among them */
	size_t nr_points;
};

/*
 * The share of I/O an SSD tier of each of sizes[0..nr_sizes) (bytes,
 * rounded down to extents) would serve, plus the pool's own SSD size;
 * without sizes, a curve from 0 past the size that holds every hot extent.
 * Errors with err set: -EINVAL (a window under 60 s, more than
 * TIERING_ADVICE_POINTS sizes), those of the policy, the state, -ENOMEM.
 */
#define TIERING_ADVICE_POINTS 64
int tiering_report_advice(struct tierings *ts, struct pool *p, uint32_t window_s,
			  const uint64_t *sizes, size_t nr_sizes, struct tiering_advice_report *out,
			  char *err, size_t err_len);
void tiering_advice_report_destroy(struct tiering_advice_report *r);

#endif
