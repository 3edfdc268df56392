/* pool: the daemon's pools: create, activate, import, attach, detach, destroy. */
#ifndef TIERD_POOL_H
#define TIERD_POOL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

#define POOL_DEFAULT_EXTENT_SIZE (UINT64_C(4) << 20)
#define POOL_ERR_MAX 512

struct pool;
struct pools;

struct pool_create_args {
	const char *name;
	const char *hdd;
	const char *ssd;      /* NULL: an HDD-only pool */
	uint64_t extent_size; /* 0: POOL_DEFAULT_EXTENT_SIZE */
	bool force;           /* overwrite filesystem, RAID, LVM and foreign tierd signatures */
};

/* Load every pool of the state (none is activated yet). */
int pools_open(struct pools **out, struct state *st, char *err, size_t err_len);
void pools_close(struct pools *ps);
/* Activate every pool whose wanted state is active; failures are logged. */
void pools_activate_all(struct pools *ps);

struct pool *pools_find(struct pools *ps, const char *name);
const char *pool_name(const struct pool *p);
/* JSON array of every pool object (docs/protocol.md). */
json_object *pools_to_json(struct pools *ps);
json_object *pool_to_json(const struct pool *p);

/*
 * Every operation returns 0 or -errno with err set to a sentence that names
 * the device or pool and the reason; on failure no device has been written.
 */
int pool_create(struct pools *ps, const struct pool_create_args *args, struct pool **out,
		char *err, size_t err_len);
int pool_activate(struct pools *ps, struct pool *p, char *err, size_t err_len);
int pool_deactivate(struct pools *ps, struct pool *p, char *err, size_t err_len);
int pool_destroy(struct pools *ps, struct pool *p, bool force, char *err, size_t err_len);
int pool_import(struct pools *ps, const char *const *paths, size_t nr, struct pool **out,
		char *err, size_t err_len);
int pool_attach(struct pools *ps, struct pool *p, const char *ssd, bool grow, bool force,
		char *err, size_t err_len);

#endif
