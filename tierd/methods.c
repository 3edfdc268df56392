#include "methods.h"

#include <errno.h>
#include <string.h>

#include "config.h"
#include "log.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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

	if (p && *pool_busy(p)) {
		control_reply_error(conn, EBUSY, "pool %s is busy: %s", name, pool_busy(p));
		return NULL;
	}
	return p;
}

static void reply_pool_or_error(struct control_conn *conn, int r, struct pool *p, const char *err)
{
	if (r < 0)
		control_reply_error(conn, -r, "%s", err);
	else
		control_reply(conn, rpc_reply_ok(pool_to_json(p)));
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
	control_reply(conn, rpc_reply_ok(o));
}

static void pool_create_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	struct pool_create_args a = { 0 };
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &a.name },
		{ "hdd", RPC_STRING, true, &a.hdd },
		{ "ssd", RPC_STRING, false, &a.ssd },
		{ "extent_size", RPC_UINT64, false, &a.extent_size },
		{ "force", RPC_BOOL, false, &a.force },
	};
	char err[POOL_ERR_MAX];
	struct pool *p = NULL;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	r = pool_create(m->pools, &a, &p, err, sizeof(err));
	if (r == 0)
		log_info("pool %s created", a.name);
	reply_pool_or_error(conn, r, p, err);
}

static void pool_list_method(struct control_conn *conn, struct methods_ctx *m, json_object *params)
{
	json_object *o;

	if (take_params(conn, params, NULL, 0) < 0)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "pools", pools_to_json(m->pools));
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
	reply_pool_or_error(conn, r, p, err);
}

static void pool_show_method(struct control_conn *conn, struct methods_ctx *m, json_object *params)
{
	by_name(conn, m, params, NULL);
}

static void pool_activate_method(struct control_conn *conn, struct methods_ctx *m,
				 json_object *params)
{
	by_name(conn, m, params, pool_activate);
}

static void pool_deactivate_method(struct control_conn *conn, struct methods_ctx *m,
				   json_object *params)
{
	by_name(conn, m, params, pool_deactivate);
}

static void pool_destroy_method(struct control_conn *conn, struct methods_ctx *m,
				json_object *params)
{
	const char *name = NULL;
	bool force = false;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "force", RPC_BOOL, false, &force },
	};
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = find_idle_pool(conn, m, name);
	if (!p)
		return;
	r = pool_destroy(m->pools, p, force, err, sizeof(err));
	if (r < 0) {
		control_reply_error(conn, -r, "%s", err);
		return;
	}
	log_info("pool %s destroyed", name);
	control_reply(conn, rpc_reply_ok(NULL));
}

static void pool_import_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	json_object *devices = NULL;
	const struct rpc_param spec[] = { { "devices", RPC_STRING_ARRAY, true, &devices } };
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
	r = pool_import(m->pools, paths, nr, &p, err, sizeof(err));
	if (r == 0)
		log_info("pool %s imported", pool_name(p));
	reply_pool_or_error(conn, r, p, err);
}

static void tier_attach_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	const char *name = NULL, *ssd = NULL;
	bool grow = true, force = false;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "ssd", RPC_STRING, true, &ssd },
		{ "grow", RPC_BOOL, false, &grow },
		{ "force", RPC_BOOL, false, &force },
	};
	char err[POOL_ERR_MAX];
	struct pool *p;
	int r;

	if (take_params(conn, params, spec, ARRAY_SIZE(spec)) < 0)
		return;
	p = find_idle_pool(conn, m, name);
	if (!p)
		return;
	r = pool_attach(m->pools, p, ssd, grow, force, err, sizeof(err));
	reply_pool_or_error(conn, r, p, err);
}

/* Long operations answer from the event loop: progress lines, then the pool. */
static void job_progress(struct pool *p, const char *what, uint64_t done, uint64_t total,
			 void *ctx)
{
	json_object *o = json_object_new_object();

	(void)p;
	json_object_object_add(o, "what", json_object_new_string(what));
	json_object_object_add(o, "done", json_object_new_uint64(done));
	json_object_object_add(o, "total", json_object_new_uint64(total));
	json_object_object_add(o, "unit", json_object_new_string("extents"));
	control_progress(ctx, o);
}

static void job_done(struct pool *p, int r, const char *err, uint64_t moved, uint64_t failed,
		     void *ctx)
{
	if (r < 0) {
		log_err("pool %s: %s", pool_name(p), err);
		control_reply_error(ctx, -r, "%s", err);
		return;
	}
	log_info("pool %s: %llu extents moved, %llu failed", pool_name(p),
		 (unsigned long long)moved, (unsigned long long)failed);
	if (failed) {
		control_reply_error(ctx, EIO, "pool %s: %llu of %llu extents could not move (I/O"
				    " errors, see tierd's log); they stay where they were",
				    pool_name(p), (unsigned long long)failed,
				    (unsigned long long)(moved + failed));
		return;
	}
	control_reply(ctx, rpc_reply_ok(pool_to_json(p)));
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
	r = pool_detach_start(p, m->loop, ssd, shrink, job_progress, job_done, conn, err,
			      sizeof(err));
	if (r < 0)
		control_reply_error(conn, -r, "%s", err);
}

static void extent_move_method(struct control_conn *conn, struct methods_ctx *m,
			       json_object *params)
{
	const char *name = NULL, *tier = NULL;
	uint64_t first = 0, count = 1;
	const struct rpc_param spec[] = {
		{ "name", RPC_STRING, true, &name },
		{ "first", RPC_UINT64, true, &first },
		{ "count", RPC_UINT64, false, &count },
		{ "tier", RPC_STRING, true, &tier },
	};
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
	if (first > UINT32_MAX || count > UINT32_MAX) {
		control_reply_error(conn, EINVAL, "extent numbers are below 2^32");
		return;
	}
	p = find_pool(conn, m, name);
	if (!p)
		return;
	r = pool_move_start(p, m->loop, (uint32_t)first, (uint32_t)count, strcmp(tier, "ssd") == 0,
			    job_progress, job_done, conn, err, sizeof(err));
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
	if (top == 0 || top > 1000000) {
		control_reply_error(conn, EINVAL, "top must be 1 to 1000000");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "extents", pool_heat_json(p, (uint32_t)top));
	control_reply(conn, rpc_reply_ok(o));
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
	{ "tier.attach", 1, tier_attach_method },
	{ "tier.detach", 1, tier_detach_method },
	{ "extent.move", 1, extent_move_method },
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
