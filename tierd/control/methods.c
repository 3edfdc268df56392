/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "methods.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "adviceview.h"
#include "array.h"
#include "config.h"
#include "job.h"
#include "jobview.h"
#include "locateview.h"
#include "log.h"
#include "poolview.h"
#include "tierview.h"


typedef void (*method_fn)(struct control_conn *conn, struct methods_ctx *m, json_object *params);

struct method {
	const char *name;
	int mutating; /* root only (SO_PEERCRED) */
	method_fn fn;
};

/* Validate params against spec; on failure the error reply is sent. */
static int take_params(struct control_conn *conn, json_object *params, const struct rpc_param *spec,
		       size_t nr)
{
	char err[256];
	int r = rpc_params(params, spec, nr, err, sizeof(err));

	if (r < 0)
		control_reply_error(conn, r, "%s", err);
	return r;
}

static struct pool *find_pool(struct control_conn *conn, struct methods_ctx *m, const char *name)
{
	struct pool *p = pools_find(m->pools, name);

	if (!p)
		control_reply_error(conn, ENOENT, "no pool named %s", name);
	return p;
}

/* A pool that a long operation is changing takes no other change meanwhile. */
static struct pool *find_idle_pool(struct control_conn *conn, struct methods_ctx *m,
				   const char *name)
{
	struct pool *p = find_pool(conn, m, name);

	if (p && pool_job_what(p)) {
		control_reply_error(conn, EBUSY, "pool %s is busy: %s", name, pool_job_what(p));
		return NULL;
	}
	return p;
}

/* The pins array: an empty one when they cannot be reported (out of memory). */
static json_object *pins_json(struct methods_ctx *m, struct pool *p)
{
	struct tiering_pins_report pins;
	json_object *a;

	tiering_report_pins(m->tierings, p, &pins);
	a = tierview_pins_json(&pins);
	tiering_pins_report_destroy(&pins);
	return a;
}

/* The schedule object, or JSON null when out of memory. */
static json_object *schedule_json(struct methods_ctx *m, struct pool *p)
{
	struct tiering_schedule_report sched;

	return tiering_report_schedule(m->tierings, p, &sched) == 0 ? tierview_schedule_json(&sched) :
								      NULL;
}

/* The pool object plus what tiering knows of it: pins and schedule. */
static json_object *pool_full_json(struct methods_ctx *m, struct pool *p)
{
	json_object *o = poolview_pool_json(p);

	if (m->tierings) {
		json_object_object_add(o, "pins", pins_json(m, p));
		json_object_object_add(o, "schedule", schedule_json(m, p));
	}
	return o;
}

static void reply_pool_or_error(struct control_conn *conn, struct methods_ctx *m, int r,
				struct pool *p, const char *err)
{
	if (r < 0)
		control_reply_error(conn, -r, "%s", err);
	else
		control_reply(conn, rpc_reply_ok(rpc_result("pool", pool_full_json(m, p))));
}

static json_object *methods_json(void);

static void daemon_version(struct control_conn *conn, struct methods_ctx *m, json_object *params)
{
	json_object *o;

	(void)m;
	if (take_params(conn, params, NULL, 0) < 0)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "version", json_object_new_string(TIERD_VERSION));
	json_object_object_add(o, "protocol", json_object_new_int(RPC_PROTOCOL));
	json_object_object_add(o, "methods", methods_json());
	control_reply(conn, rpc_reply_ok(rpc_result("daemon", o)));
}

static void pool_create_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	struct pool_create_args a = { 0 };
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &a.name },
		{ "hdd", RPC_STRING, true, &a.hdd },
		{ "ssd", RPC_STRING, false, &a.ssd },
		{ "extent_size_bytes", RPC_UINT64, false, &a.extent_size },
		{ "wipe_signatures", RPC_BOOL, false, &a.wipe_signatures },
	};
	char err[POOL_ERR_MAX];
	struct pool *p = NULL;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	r = pool_create(m->pools, &a, &p, err, sizeof(err));
	if (r == 0)
		log_about(LOG_INFO, a.name, "pool %s created", a.name);
	reply_pool_or_error(conn, m, r, p, err);
}

static void pool_list_method(struct control_conn *conn, struct methods_ctx *m, json_object *params)
{
	json_object *o;

	if (take_params(conn, params, NULL, 0) < 0)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "pools", poolview_pools_json(m->pools));
	control_reply(conn, rpc_reply_ok(o));
}

/* Methods whose only parameter is the pool's name. */
typedef int (*pool_op)(struct pools *ps, struct pool *p, char *err, size_t err_len);

static void by_name(struct control_conn *conn, struct methods_ctx *m, json_object *params,
		    pool_op op)
{
	const char *name = NULL;
	const struct rpc_param spec[] = { { "name", RPC_STRING, true, &name } };
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r = 0;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = op ? find_idle_pool(conn, m, name) : find_pool(conn, m, name);
	if (!p)
		return;
	if (op)
		r = op(m->pools, p, err, sizeof(err));
	reply_pool_or_error(conn, m, r, p, err);
}

static void pool_show_method(struct control_conn *conn, struct methods_ctx *m, json_object *params)
{
	by_name(conn, m, params, NULL);
}

/* The idle pool params name, with one optional boolean param flag into *value. */
static struct pool *take_idle_pool(struct control_conn *conn, struct methods_ctx *m,
				   json_object *params, const char *flag, bool *value)
{
	const char *name = NULL;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ flag, RPC_BOOL, false, value },
	};

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return NULL;
	return find_idle_pool(conn, m, name);
}

static void pool_activate_method(struct control_conn *conn, struct methods_ctx *m,
				 json_object *params)
{
	bool degraded = false;
	struct pool *p = take_idle_pool(conn, m, params, "degraded", &degraded);
	char err[POOL_ERR_MAX];
	int r;

	if (!p)
		return;
	r = pool_activate(m->pools, p, degraded, err, sizeof(err));
	reply_pool_or_error(conn, m, r, p, err);
}

static void pool_deactivate_method(struct control_conn *conn, struct methods_ctx *m,
				   json_object *params)
{
	by_name(conn, m, params, pool_deactivate);
}

static void pool_destroy_method(struct control_conn *conn, struct methods_ctx *m,
				json_object *params)
{
	bool force = false;
	struct pool *p = take_idle_pool(conn, m, params, "force", &force);
	char err[POOL_ERR_MAX], name[METADATA_NAME_MAX + 1];
	int r;

	if (!p)
		return;
	snprintf(name, sizeof(name), "%s", pool_name(p)); /* p is gone once destroyed */
	r = pool_destroy(m->pools, p, force, err, sizeof(err));
	if (r < 0) {
		control_reply_error(conn, -r, "%s", err);
		return;
	}
	log_about(LOG_INFO, name, "pool %s destroyed", name);
	control_reply(conn, rpc_reply_ok(NULL));
}

static void pool_import_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	json_object *devices = NULL;
	bool degraded = false;
	const struct rpc_param spec[] = {
		{ "devices", RPC_STRING_ARRAY, true, &devices },
		{ "degraded", RPC_BOOL, false, &degraded },
	};
	const char *paths[16];
	char err[POOL_ERR_MAX];
	struct pool *p = NULL;
	size_t nr;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	nr = json_object_array_length(devices);
	if (nr == 0 || nr > ARRAY_SIZE(paths)) {
		control_reply_error(conn, EINVAL, "give 1 to %zu devices", ARRAY_SIZE(paths));
		return;
	}
	for (size_t i = 0; i < nr; i++)
		paths[i] = json_object_get_string(json_object_array_get_idx(devices, i));
	r = pool_import(m->pools, paths, nr, degraded, &p, err, sizeof(err));
	if (r == 0)
		log_about(LOG_INFO, pool_name(p), "pool %s imported", pool_name(p));
	reply_pool_or_error(conn, m, r, p, err);
}

static void tier_attach_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	const char *name = NULL, *ssd = NULL;
	bool grow = true, wipe = false;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "ssd", RPC_STRING, true, &ssd },
		{ "grow", RPC_BOOL, false, &grow },
		{ "wipe_signatures", RPC_BOOL, false, &wipe },
	};
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = find_idle_pool(conn, m, name);
	if (!p)
		return;
	r = pool_attach(m->pools, p, ssd, grow, wipe, err, sizeof(err));
	reply_pool_or_error(conn, m, r, p, err);
}

/* Long operations answer from the event loop: progress lines, then the pool. */
static void job_progress(struct pool *p, const struct job_report *now, void *ctx)
{
	control_progress(ctx, jobview_json(p, now, NULL));
}

/* A job's end to its caller; unit names what the job moved, extents or pieces. */
static void job_end(struct pool *p, int r, const char *err, uint64_t moved, uint64_t failed,
		    void *ctx, const char *unit)
{
	/* An abort asked for is no error of the pool's; err says what it left. */
	if (r == -ECANCELED)
		log_pool_info(pool_name(p), "%s", pool_error_sentence(p, err));
	else if (r < 0)
		log_pool_err(pool_name(p), "%s", pool_error_sentence(p, err));
	if (r < 0) {
		control_reply_error(ctx, -r, "%s", err);
		return;
	}
	log_pool_info(pool_name(p), "%llu %s moved, %llu failed", (unsigned long long)moved, unit,
		      (unsigned long long)failed);
	if (failed) {
		control_reply_error(ctx, EIO, "pool %s: %llu of %llu %s could not move (I/O"
				    " errors, see tierd's log); they stay where they were",
				    pool_name(p), (unsigned long long)failed,
				    (unsigned long long)(moved + failed), unit);
		return;
	}
	control_reply(ctx, rpc_reply_ok(rpc_result("pool", poolview_pool_json(p))));
}

static void job_done(struct pool *p, int r, const char *err, uint64_t moved, uint64_t failed,
		     void *ctx)
{
	job_end(p, r, err, moved, failed, ctx, "extents");
}

static void pieces_done(struct pool *p, int r, const char *err, uint64_t moved, uint64_t failed,
			void *ctx)
{
	job_end(p, r, err, moved, failed, ctx, "pieces");
}

static void tier_detach_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	const char *name = NULL, *ssd = NULL;
	bool shrink = false;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "ssd", RPC_STRING, true, &ssd },
		{ "shrink", RPC_BOOL, false, &shrink },
	};
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = find_pool(conn, m, name);
	if (!p)
		return;
	r = job_detach(p, m->loop, ssd, shrink, job_progress, job_done, conn, err, sizeof(err));
	if (r < 0)
		control_reply_error(conn, -r, "%s", err);
}

static void drop_done(struct pool *p, int r, const char *err, uint64_t zeroed, uint64_t failed,
		      void *ctx)
{
	(void)failed;
	if (r == -ECANCELED)
		log_pool_info(pool_name(p), "%s", pool_error_sentence(p, err));
	else if (r < 0)
		log_pool_err(pool_name(p), "%s", pool_error_sentence(p, err));
	if (r < 0) {
		control_reply_error(ctx, -r, "%s", err);
		return;
	}
	log_pool_info(pool_name(p), "its missing device is dropped; %llu lost extents now read as"
		      " zeros", (unsigned long long)zeroed);
	control_reply(ctx, rpc_reply_ok(rpc_result("pool", poolview_pool_json(p))));
}

static void pool_drop_missing_method(struct control_conn *conn, struct methods_ctx *m,
				     json_object *params)
{
	const char *name = NULL;
	const struct rpc_param spec[] = { { "name", RPC_STRING, true, &name } };
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = find_idle_pool(conn, m, name);
	if (!p)
		return;
	r = job_drop_missing(p, m->loop, job_progress, drop_done, conn, err, sizeof(err));
	if (r < 0)
		control_reply_error(conn, -r, "%s", err);
}

static void extent_move_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	const char *name = NULL, *tier = NULL, *io = "off";
	uint64_t first = 0, count = 1, piece_first = 0, piece_count = 0;
	bool pieces = false;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "first", RPC_UINT64, true, &first },
		{ "count", RPC_UINT64, false, &count },
		{ "tier", RPC_STRING, true, &tier },
		{ "io_awareness", RPC_STRING, false, &io },
		{ "pieces", RPC_BOOL, false, &pieces },
		{ "piece_first", RPC_UINT64, false, &piece_first },
		{ "piece_count", RPC_UINT64, false, &piece_count },
	};
	struct job_limits limits = { 0 };
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	if (strcmp(tier, "ssd") && strcmp(tier, "hdd")) {
		control_reply_error(conn, EINVAL, "tier must be \"ssd\" or \"hdd\", not \"%.32s\"",
				    tier);
		return;
	}
	if (tiering_io_parse(io, &limits.io) < 0) {
		control_reply_error(conn, EINVAL, "io_awareness must be off, throttled or idle");
		return;
	}
	if (first > UINT32_MAX || count > UINT32_MAX) {
		control_reply_error(conn, EINVAL, "extent numbers are below 2^32");
		return;
	}
	if (piece_first > UINT32_MAX || piece_count > UINT32_MAX) {
		control_reply_error(conn, EINVAL, "piece numbers are below 2^32");
		return;
	}
	p = find_pool(conn, m, name);
	if (!p)
		return;
	if (pieces) {
		r = job_move_pieces(p, m->loop, (uint32_t)first, (uint32_t)count,
				    (uint32_t)piece_first, (uint32_t)piece_count,
				    strcmp(tier, "ssd") == 0, &limits, job_progress, pieces_done,
				    conn, err, sizeof(err));
	} else {
		r = job_move_range(p, m->loop, (uint32_t)first, (uint32_t)count,
				   strcmp(tier, "ssd") == 0, &limits, job_progress, job_done, conn,
				   err, sizeof(err));
	}
	if (r < 0)
		control_reply_error(conn, -r, "%s", err);
}

static void heat_top_method(struct control_conn *conn, struct methods_ctx *m, json_object *params)
{
	const char *name = NULL;
	uint64_t top = 20;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "top", RPC_UINT64, false, &top },
	};
	json_object *o;
	struct pool *p;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = find_pool(conn, m, name);
	if (!p)
		return;
	if (top == 0 || top > RPC_LIST_MAX) {
		control_reply_error(conn, EINVAL, "top must be 1 to %u", RPC_LIST_MAX);
		return;
	}
	{
		char err[POOL_ERR_MAX];

		if (pool_piece_heat_refresh(p, err, sizeof(err)) < 0)
			log_pool_warn(pool_name(p), "its heat shows the pieces as last read: %s", err);
	}
	o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(pool_name(p)));
	json_object_object_add(o, "extents", poolview_heat_json(p, (uint32_t)top));
	control_reply(conn, rpc_reply_ok(rpc_result("heat", o)));
}

/* ---- tiering: policies, pins, schedule, runs, statistics ---- */

static void policy_list_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	struct tiering_policies_report pols;
	json_object *o;
	int r;

	if (take_params(conn, params, NULL, 0) < 0)
		return;
	r = tierings_report_policies(m->tierings, &pols);
	if (r < 0) {
		control_reply_error(conn, -r, "out of memory");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "policies", tierview_policies_json(&pols));
	tiering_policies_report_destroy(&pols);
	control_reply(conn, rpc_reply_ok(o));
}

static void reply_schedule_or_error(struct control_conn *conn, struct methods_ctx *m, int r,
				    struct pool *p, const char *err)
{
	if (r < 0)
		control_reply_error(conn, -r, "%s", err);
	else
		control_reply(conn, rpc_reply_ok(rpc_result("schedule", schedule_json(m, p))));
}

static void policy_set_method(struct control_conn *conn, struct methods_ctx *m,
			      json_object *params)
{
	const char *name = NULL, *policy = NULL;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "policy", RPC_STRING, true, &policy },
	};
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = find_pool(conn, m, name);
	if (!p)
		return;
	r = tiering_set_policy(m->tierings, p, policy, err, sizeof(err));
	if (r == 0)
		log_pool_info(name, "policy %s", policy);
	reply_schedule_or_error(conn, m, r, p, err);
}

/*
 * One range as offset and length, or many as ranges: [[offset, length], ...],
 * which change together or not at all (a file's extents, say).
 */
static void pin_change(struct control_conn *conn, struct methods_ctx *m, json_object *params,
		       bool add)
{
	const char *name = NULL, *tier = NULL;
	uint64_t offset = UINT64_MAX, length = UINT64_MAX;
	json_object *list = NULL, *o;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "offset_bytes", RPC_UINT64, false, &offset },
		{ "size_bytes", RPC_UINT64, false, &length },
		{ "ranges", RPC_RANGES, false, &list },
		{ "tier", RPC_STRING, true, &tier },
	};
	struct tiering_range one, *ranges = &one;
	size_t nr = 1;
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	/* pin.remove takes no tier: the same spec without its last entry. */
	if (take_params(conn, params, spec, ARRAY_SIZE(spec) - !add) < 0)
		return;
	if (list ? offset != UINT64_MAX || length != UINT64_MAX
		 : offset == UINT64_MAX || length == UINT64_MAX) {
		control_reply_error(conn, EINVAL, "give either offset_bytes and size_bytes, or ranges");
		return;
	}
	p = find_pool(conn, m, name);
	if (!p)
		return;
	if (list) {
		nr = json_object_array_length(list);
		ranges = calloc(nr ? nr : 1, sizeof(*ranges));
		if (!ranges) {
			control_reply_error(conn, ENOMEM, "out of memory");
			return;
		}
		for (size_t i = 0; i < nr; i++)
			rpc_range_get(list, i, &ranges[i].offset, &ranges[i].length);
	} else {
		one = (struct tiering_range){ offset, length };
	}
	r = tiering_pin(m->tierings, p, ranges, nr, add ? tier : NULL, err, sizeof(err));
	if (ranges != &one)
		free(ranges);
	if (r < 0) {
		control_reply_error(conn, -r, "%s", err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "pins", pins_json(m, p));
	control_reply(conn, rpc_reply_ok(o));
}

static void pin_add_method(struct control_conn *conn, struct methods_ctx *m, json_object *params)
{
	pin_change(conn, m, params, true);
}

static void pin_remove_method(struct control_conn *conn, struct methods_ctx *m,
			      json_object *params)
{
	pin_change(conn, m, params, false);
}

static void schedule_set_method(struct control_conn *conn, struct methods_ctx *m,
				json_object *params)
{
	const char *name = NULL, *spec_text = NULL, *window = NULL, *io = NULL;
	uint64_t max_bytes = 0, rate = 0;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "spec", RPC_STRING, false, &spec_text },
		{ "window", RPC_STRING, false, &window },
		{ "max_bytes", RPC_UINT64, false, &max_bytes },
		{ "rate_bytes_per_second", RPC_UINT64, false, &rate },
		{ "io_awareness", RPC_STRING, false, &io },
	};
	struct tiering_schedule_args a = { 0 };
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = find_pool(conn, m, name);
	if (!p)
		return;
	a.spec = spec_text;
	a.window = window;
	a.io_awareness = io;
	a.max_bytes = json_object_object_get_ex(params, "max_bytes", NULL) ? &max_bytes : NULL;
	a.rate = json_object_object_get_ex(params, "rate_bytes_per_second", NULL) ? &rate : NULL;
	r = tiering_set_schedule(m->tierings, p, &a, err, sizeof(err));
	if (r == 0)
		log_pool_info(name, "schedule changed");
	reply_schedule_or_error(conn, m, r, p, err);
}

static void schedule_show_method(struct control_conn *conn, struct methods_ctx *m,
				 json_object *params)
{
	const char *name = NULL;
	const struct rpc_param spec[] = { { "name", RPC_STRING, true, &name } };
	struct pool *p;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = find_pool(conn, m, name);
	if (p)
		reply_schedule_or_error(conn, m, 0, p, NULL);
}

static void tier_pause_or_resume(struct control_conn *conn, struct methods_ctx *m,
				 json_object *params, bool pause)
{
	const char *name = NULL;
	const struct rpc_param spec[] = { { "name", RPC_STRING, true, &name } };
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = find_pool(conn, m, name);
	if (!p)
		return;
	r = tiering_pause(m->tierings, p, pause, err, sizeof(err));
	reply_schedule_or_error(conn, m, r, p, err);
}

static void tier_pause_method(struct control_conn *conn, struct methods_ctx *m,
			      json_object *params)
{
	tier_pause_or_resume(conn, m, params, true);
}

static void tier_resume_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	tier_pause_or_resume(conn, m, params, false);
}

static void reply_run(struct control_conn *conn, const struct state_run *run)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "run", tierview_run_json(run));
	control_reply(conn, rpc_reply_ok(o));
}

/* A waiting `tier now`: progress lines, then the finished run as the reply. */
static void tier_now_notify(const struct tiering_progress *progress,
			    const struct state_run *run_done, void *ctx)
{
	struct control_conn *conn = ctx;

	if (progress)
		control_progress(conn, jobview_json(progress->pool, progress->job, NULL));
	if (run_done)
		reply_run(conn, run_done);
}

static void tier_now_method(struct control_conn *conn, struct methods_ctx *m, json_object *params)
{
	const char *name = NULL;
	bool dry_run = false, wait = false;
	uint64_t limit = 100;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "dry_run", RPC_BOOL, false, &dry_run },
		{ "wait", RPC_BOOL, false, &wait },
		{ "limit", RPC_UINT64, false, &limit },
	};
	char err[POOL_ERR_MAX];
	struct tiering_plan_report plan;
	struct state_run run;
	json_object *o;
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	if (limit == 0 || limit > RPC_LIST_MAX) {
		control_reply_error(conn, EINVAL, "limit must be 1 to %u", RPC_LIST_MAX);
		return;
	}
	p = find_pool(conn, m, name);
	if (!p)
		return;
	if (dry_run) {
		r = tiering_report_plan(m->tierings, p, limit, &plan, err, sizeof(err));
		if (r < 0) {
			control_reply_error(conn, -r, "%s", err);
			return;
		}
		o = json_object_new_object();
		json_object_object_add(o, "plan", tierview_plan_json(&plan));
		tiering_plan_report_destroy(&plan);
		control_reply(conn, rpc_reply_ok(o));
		return;
	}
	r = tiering_run_start(m->tierings, p, TIERING_ON_DEMAND, wait ? tier_now_notify : NULL,
			      wait ? conn : NULL, &run, err, sizeof(err));
	if (r < 0) {
		control_reply_error(conn, -r, "%s", err);
		return;
	}
	/* Waiting for a run in progress: the reply comes when it ends. */
	if (wait && r == 0)
		return;
	reply_run(conn, &run);
}

static void runs_list_method(struct control_conn *conn, struct methods_ctx *m,
			     json_object *params)
{
	const char *name = NULL;
	uint64_t limit = 20;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "limit", RPC_UINT64, false, &limit },
	};
	struct tiering_runs_report runs;
	char err[POOL_ERR_MAX];
	json_object *o;
	struct pool *p;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	if (limit == 0 || limit > RPC_LIST_MAX) {
		control_reply_error(conn, EINVAL, "limit must be 1 to %u", RPC_LIST_MAX);
		return;
	}
	p = find_pool(conn, m, name);
	if (!p)
		return;
	/* A list that cannot be read answers empty: runs are history, not state to act on. */
	if (tiering_report_runs(m->tierings, p, (unsigned)limit, &runs, err, sizeof(err)) < 0)
		log_warn("%s", err);
	o = json_object_new_object();
	json_object_object_add(o, "runs", tierview_runs_json(&runs));
	tiering_runs_report_destroy(&runs);
	control_reply(conn, rpc_reply_ok(o));
}

static void pool_stats_method(struct control_conn *conn, struct methods_ctx *m,
			      json_object *params)
{
	const char *name = NULL;
	uint64_t window = 3600, history = 0, step = 0;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "window_seconds", RPC_UINT64, false, &window },
		{ "history_seconds", RPC_UINT64, false, &history },
		{ "step_seconds", RPC_UINT64, false, &step },
	};
	struct tiering_stats_report stats;
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	if (window > 366 * 86400u || history > 366 * 86400u || step > 366 * 86400u) {
		control_reply_error(conn, EINVAL, "window_seconds, history_seconds and step_seconds are at most 366 days");
		return;
	}
	if (history && !step) {
		/* About 24 points whatever the span, in whole minutes. */
		step = history / 24 / 60 * 60;
		if (step < 60)
			step = 60;
	}
	p = find_pool(conn, m, name);
	if (!p)
		return;
	r = tiering_report_stats(m->tierings, p, (uint32_t)window, (uint32_t)history,
				 (uint32_t)step, &stats, err, sizeof(err));
	if (r < 0) {
		control_reply_error(conn, -r, "%s", err);
		return;
	}
	control_reply(conn, rpc_reply_ok(rpc_result("stats", tierview_stats_json(p, &stats))));
	tiering_stats_report_destroy(&stats);
}

/* The what-if curve of SSD sizes (docs/heat.md, "How big an SSD"); reads only. */
static void pool_advise_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	const char *name = NULL;
	uint64_t window = 3600, sizes[TIERING_ADVICE_POINTS];
	json_object *list = NULL, *o;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "window_seconds", RPC_UINT64, false, &window },
		{ "ssd_sizes_bytes", RPC_UINT64_ARRAY, false, &list },
	};
	struct tiering_advice_report adv;
	char err[POOL_ERR_MAX];
	size_t nr = 0;
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	if (window > 366 * 86400u) {
		control_reply_error(conn, EINVAL, "the window is at most 366 days");
		return;
	}
	if (list) {
		nr = json_object_array_length(list);
		if (nr > TIERING_ADVICE_POINTS) {
			control_reply_error(conn, EINVAL, "at most %d SSD sizes", TIERING_ADVICE_POINTS);
			return;
		}
		for (size_t i = 0; i < nr; i++)
			sizes[i] = json_object_get_uint64(json_object_array_get_idx(list, i));
	}
	p = find_pool(conn, m, name);
	if (!p)
		return;
	if (pool_piece_heat_refresh(p, err, sizeof(err)) < 0)
		log_pool_warn(pool_name(p), "advice on the pieces' heat as last read: %s", err);
	r = tiering_report_advice(m->tierings, p, (uint32_t)window, sizes, nr, &adv, err,
				  sizeof(err));
	if (r < 0) {
		control_reply_error(conn, -r, "%s", err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "advice", adviceview_json(name, &adv));
	tiering_advice_report_destroy(&adv);
	control_reply(conn, rpc_reply_ok(o));
}

/* Where ranges of the volume lie: tier, device and offset on it, per run of extents; reads only. */
static void pool_locate_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	const char *name = NULL;
	json_object *list = NULL, *o, *loc;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "ranges", RPC_RANGES, true, &list },
	};
	struct locateview_range *ranges;
	char err[POOL_ERR_MAX];
	struct pool *p;
	size_t nr;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	nr = json_object_array_length(list);
	if (!nr || nr > RPC_LIST_MAX) {
		control_reply_error(conn, EINVAL, "ranges holds 1 to %u ranges", RPC_LIST_MAX);
		return;
	}
	p = find_pool(conn, m, name);
	if (!p)
		return;
	ranges = calloc(nr, sizeof(*ranges));
	if (!ranges) {
		control_reply_error(conn, ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < nr; i++)
		rpc_range_get(list, i, &ranges[i].offset, &ranges[i].length);
	loc = locateview_json(p, ranges, nr, err, sizeof(err));
	free(ranges);
	if (!loc) {
		control_reply_error(conn, EINVAL, "%s", err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "locate", loc);
	control_reply(conn, rpc_reply_ok(o));
}

/* ---- jobs: follow or stop any pool's running job, from any client ---- */

/* The pool params name, and the job it runs; NULL after the error reply. */
static struct pool *take_busy_pool(struct control_conn *conn, struct methods_ctx *m,
				   json_object *params, struct job_report *job)
{
	const char *name = NULL;
	const struct rpc_param spec[] = { { "name", RPC_STRING, true, &name } };
	struct pool *p;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return NULL;
	p = find_pool(conn, m, name);
	if (p && job_get_report(p, job) < 0) {
		control_reply_error(conn, ENOENT, "pool %s runs no job", name);
		return NULL;
	}
	return p;
}

static void reply_job(struct control_conn *conn, const struct pool *p, const struct job_report *j,
		      const struct job_end *end)
{
	control_reply(conn, rpc_reply_ok(rpc_result("job", jobview_json(p, j, end))));
}

static void job_show_method(struct control_conn *conn, struct methods_ctx *m, json_object *params)
{
	struct job_report j;
	struct pool *p = take_busy_pool(conn, m, params, &j);

	if (p)
		reply_job(conn, p, &j, NULL);
}

/* A job.wait or job.abort: progress lines (for job.wait), then the ended job as the reply. */
static void job_follow(struct pool *p, const struct job_report *now, const struct job_end *end,
		       void *ctx)
{
	if (end)
		reply_job(ctx, p, now, end);
	else
		control_progress(ctx, jobview_json(p, now, NULL));
}

static void job_end_only(struct pool *p, const struct job_report *now, const struct job_end *end,
			 void *ctx)
{
	if (end)
		reply_job(ctx, p, now, end);
}

static void job_wait_method(struct control_conn *conn, struct methods_ctx *m, json_object *params)
{
	struct job_report j;
	struct pool *p = take_busy_pool(conn, m, params, &j);

	if (!p)
		return;
	if (job_watch(p, job_follow, conn) < 0) {
		control_reply_error(conn, ENOMEM, "out of memory");
		return;
	}
	/* Where the job stands now, so that the bar shows before the next batch. */
	control_progress(conn, jobview_json(p, &j, NULL));
}

static void job_abort_method(struct control_conn *conn, struct methods_ctx *m,
			     json_object *params)
{
	struct job_report j;
	struct pool *p = take_busy_pool(conn, m, params, &j);

	if (!p)
		return;
	if (job_abort(p, job_end_only, conn) < 0) {
		control_reply_error(conn, ENOMEM, "out of memory");
		return;
	}
	log_pool_info(pool_name(p), "%s: abort requested", j.what);
}

static const struct method methods[] = {
	{ "daemon.version", 0, daemon_version },
	{ "pool.create", 1, pool_create_method },
	{ "pool.list", 0, pool_list_method },
	{ "heat.top", 0, heat_top_method },
	{ "pool.show", 0, pool_show_method },
	{ "pool.activate", 1, pool_activate_method },
	{ "pool.deactivate", 1, pool_deactivate_method },
	{ "pool.destroy", 1, pool_destroy_method },
	{ "pool.import", 1, pool_import_method },
	{ "pool.drop", 1, pool_drop_missing_method },
	{ "tier.attach", 1, tier_attach_method },
	{ "tier.detach", 1, tier_detach_method },
	{ "extent.move", 1, extent_move_method },
	{ "policy.list", 0, policy_list_method },
	{ "policy.set", 1, policy_set_method },
	{ "pin.add", 1, pin_add_method },
	{ "pin.remove", 1, pin_remove_method },
	{ "schedule.set", 1, schedule_set_method },
	{ "schedule.show", 0, schedule_show_method },
	{ "tier.now", 1, tier_now_method },
	{ "tier.pause", 1, tier_pause_method },
	{ "tier.resume", 1, tier_resume_method },
	{ "runs.list", 0, runs_list_method },
	{ "pool.stats", 0, pool_stats_method },
	{ "pool.advise", 0, pool_advise_method },
	{ "pool.locate", 0, pool_locate_method },
	{ "job.show", 0, job_show_method },
	{ "job.wait", 0, job_wait_method },
	{ "job.abort", 1, job_abort_method },
};

/* What a client (or a test checking every mutating method) can call. */
static json_object *methods_json(void)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < ARRAY_SIZE(methods); i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(methods[i].name));
		json_object_object_add(o, "mutating", json_object_new_boolean(methods[i].mutating));
		json_object_array_add(a, o);
	}
	return a;
}

void methods_handle(struct control_conn *conn, const struct rpc_request *req, void *ctx)
{
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++) {
		if (strcmp(methods[i].name, req->method) != 0)
			continue;
		if (methods[i].mutating && control_conn_uid(conn) != 0) {
			control_reply_error(conn, EPERM, "%s changes state: only root may call it",
					    req->method);
			return;
		}
		methods[i].fn(conn, ctx, req->params);
		return;
	}
	control_reply_error(conn, EINVAL, "unknown method %s", req->method);
}
