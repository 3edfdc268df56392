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


/* ---- heat (docs/heat.md) ---- */
struct heat_params;

void pools_set_heat_params(struct pools *ps, const struct heat_params *params);
/* Compare every copy with its source (io_uring, ucopy.c) before committing it. */
void pools_set_verify(struct pools *ps, bool verify);
bool pools_verify(const struct pools *ps);
/* Call fn on every pool; -EIO if any call failed. */
int pools_for_each(struct pools *ps, int (*fn)(struct pool *p, void *ctx), void *ctx);
/* Read the pool's dm-stats counters since the last sample into its heat and I/O history. */
int pool_sample(struct pool *p, uint64_t now_ns, char *err, size_t err_len);
/*
 * Store the I/O history and the next chunk of heat (all of it with all);
 * returns 1 when the heat is stored completely, 0 when chunks remain.
 */
int pool_flush_step(struct pool *p, int all, char *err, size_t err_len);
/* The top extents by heat: [{extent, offset, tier, heat, reads, writes}]. */
json_object *pool_heat_json(const struct pool *p, uint32_t top);

/* ---- long operations: moving extents, detaching the SSD ---- */

struct ev_loop;

/* Progress of a running operation: done of total extents. */
typedef void (*pool_progress_fn)(struct pool *p, const char *what, uint64_t done, uint64_t total,
				 void *ctx);
/* The operation ended: r is 0 or -errno with err set; moved/failed extents counted. */
typedef void (*pool_done_fn)(struct pool *p, int r, const char *err, uint64_t moved,
			     uint64_t failed, void *ctx);

/* What a running operation is doing ("" when idle). */
const char *pool_busy(const struct pool *p);

/*
 * Move the extents [first, first + count) to the tier's devices: live through
 * the kernel's mirror when the pool is active, by tierd's own io_uring copy
 * when it is not. Starts and returns; progress and done follow from the
 * event loop.
 */
struct pool_move_limits;
int pool_move_start(struct pool *p, struct ev_loop *loop, uint32_t first, uint32_t count,
		    bool to_ssd, const struct pool_move_limits *limits, pool_progress_fn progress,
		    pool_done_fn done, void *ctx, char *err, size_t err_len);

/*
 * Detach the SSD: with shrink, first drop the SSD's capacity from the end of
 * the volume; then move every extent still on the SSD to the HDD, live, and
 * release the SSD (its superblock wiped).
 */
int pool_detach_start(struct pool *p, struct ev_loop *loop, const char *ssd, bool shrink,
		      pool_progress_fn progress, pool_done_fn done, void *ctx, char *err,
		      size_t err_len);

/* Limits of a list of moves (docs/migration.md, docs/schedule.md). */
enum pool_io_awareness { POOL_IO_OFF, POOL_IO_THROTTLED, POOL_IO_IDLE };

struct pool_move_limits {
	uint64_t rate;              /* bytes per second, 0: no cap */
	enum pool_io_awareness io;
	int64_t deadline;           /* unix seconds: no batch starts after it; 0: none */
};

struct pool_move_req {
	uint32_t le;
	bool to_ssd;
};

/*
 * Move extents in the order given, in batches, within limits. A move whose
 * destination is full waits until a later batch frees room (a swap: the
 * demotion before it commits first). moved (may be NULL) counts what moved,
 * batch by batch, until done. done gets -ETIME when the deadline stopped the
 * job, -ECANCELED after pool_job_cancel(), -ENOSPC when moves were left
 * that could never find room.
 */
int pool_moves_start(struct pool *p, struct ev_loop *loop, const struct pool_move_req *moves,
		     size_t nr, const struct pool_move_limits *limits, const char *what,
		     struct state_moves *moved, pool_progress_fn progress, pool_done_fn done,
		     void *ctx, char *err, size_t err_len);
/* A paused job finishes its batch, then waits; nothing when the pool is idle. */
void pool_job_pause(struct pool *p, bool paused);
/* The job ends after its current batch. */
void pool_job_cancel(struct pool *p);
/* The running job: what, done, total, moved, failed, paused, waiting, batch [{extent, from, to}]; NULL when idle. */
json_object *pool_job_json(const struct pool *p);

/* ---- for tiering runs (tiering.c) ---- */
struct planner_extent;

int64_t pool_state_id(const struct pool *p);
uint64_t pool_extent_size(const struct pool *p);
uint32_t pool_nr_extents(const struct pool *p);
bool pool_is_active(const struct pool *p);
bool pool_job_paused(const struct pool *p);
/*
 * Per logical extent: tier, heat and last move (pins are the caller's), and
 * the room for moves: SSD extents usable for data (its swap reserve
 * excluded) and free of them, free HDD extents. Free *ext.
 */
int pool_planner_input(const struct pool *p, struct planner_extent **ext, uint32_t *ssd_capacity,
		       uint32_t *ssd_free, uint32_t *hdd_free);
/* I/O counted per tier since the last store to the state ([METADATA_TIER_*]). */
void pool_io_pending(const struct pool *p, struct state_tier_io io[2]);

/* ---- for the migration engine (migrate.c) ---- */
struct extmap;
struct dmtable;
struct dmtable_dev;

struct extmap *pool_extmap(struct pool *p);
uint64_t pool_extent_sectors(const struct pool *p);
/* Device numbers and data offsets of p's devices, for dmtable_build*(). */
int pool_dm_devs(const struct pool *p, struct dmtable_dev *devs, char *err, size_t err_len);
/* For comparing a copy with its source (ucopy): O_DIRECT fds while active, offsets, alignment. */
int pool_dev_fd(const struct pool *p, unsigned dev);
uint64_t pool_pe_offset(const struct pool *p, unsigned dev, uint32_t pe);
uint32_t pool_block_size(const struct pool *p);
bool pool_verify_moves(const struct pool *p);
/* Load t as p's inactive table (before a suspend). */
int pool_load_inactive(struct pool *p, const struct dmtable *t, char *err, size_t err_len);
/*
 * After a commit that could not be undone on the devices: the pool takes no
 * more moves until tierd restarts (activation adopts the newest generation).
 */
void pool_set_broken(struct pool *p, const char *why);
/*
 * Commit the in-memory map: the next generation to every device, then the
 * state, which rewrites only the changed extents when they are given
 * (changed = NULL: everything).
 */
int pool_commit(struct pool *p, const uint32_t *changed, size_t nr_changed, char *err,
		size_t err_len);
/* Bytes the last commit wrote to the devices, all of them together. */
size_t pool_commit_bytes(const struct pool *p);

#endif
