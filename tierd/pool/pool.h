/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pool: the daemon's pools: the registry, create, activate, import, attach,
 * destroy, heat, and typed reports of all of it. Moving extents is the move
 * layer's (tierd/move/job.h), which builds on pool-internal.h.
 */
#ifndef TIERD_POOL_H
#define TIERD_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metadata.h"
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
	bool wipe_signatures; /* overwrite filesystem, RAID, LVM and foreign tierd signatures */
};

/*
 * Load every pool of the state (none is activated yet); heat: the
 * parameters their stored heat decays with (pools_set_heat_params() later).
 */
int pools_open(struct pools **out, struct state *st, const struct heat_params *heat, char *err,
	       size_t err_len);
void pools_close(struct pools *ps);
/* Activate every pool whose wanted state is active; failures are logged. */
/* degraded: activate pools whose devices are not all present (pool_activate). */
void pools_activate_all(struct pools *ps, bool degraded);
/*
 * Try again the pools that should be active but are not (a device was
 * missing), whole or, with degraded, with devices missing; each that
 * activates is logged with why.  The number still waiting.
 */
unsigned pools_activate_waiting(struct pools *ps, bool degraded, const char *why);
/* How many pools should be active but are not (a device missing, say). */
unsigned pools_waiting(const struct pools *ps);
/* Log each pool still waiting, with what it waits for. */
void pools_report_waiting(struct pools *ps, unsigned waited_s);

/*
 * -ELOOP, err naming the pool, if the directory dir lives on an active
 * pool's volume or on a device built on it: its first commit would wait
 * for SQLite's fsync on a volume it holds suspended.
 */
int pools_check_state_dir(struct pools *ps, const char *dir, char *err, size_t err_len);

/*
 * Called with each pool that pool_destroy() is about to free, so that a
 * layer above keeping state per pool (tiering) drops it; one hook, NULL: none.
 */
typedef void (*pools_forget_fn)(struct pool *p, void *ctx);
void pools_set_forget_hook(struct pools *ps, pools_forget_fn fn, void *ctx);

struct pool *pools_find(struct pools *ps, const char *name);
const char *pool_name(const struct pool *p);
/* Call fn on every pool; -EIO if any call failed. */
int pools_for_each(struct pools *ps, int (*fn)(struct pool *p, void *ctx), void *ctx);

/*
 * Every operation returns 0 or -errno with err set to a sentence that names
 * the device or pool and the reason; on failure no device has been written.
 */
int pool_create(struct pools *ps, const struct pool_create_args *args, struct pool **out,
		char *err, size_t err_len);
/*
 * With degraded, a pool whose devices are not all present activates anyway
 * (one at least must be): the extents on the missing ones map to the error
 * target, so they fail every read and write, and the pool takes no moves,
 * attach or detach until it is activated again with every device.
 */
int pool_activate(struct pools *ps, struct pool *p, bool degraded, char *err, size_t err_len);
int pool_deactivate(struct pools *ps, struct pool *p, char *err, size_t err_len);
int pool_destroy(struct pools *ps, struct pool *p, bool force, char *err, size_t err_len);
/* degraded: the devices given may lack some the newest metadata names. */
int pool_import(struct pools *ps, const char *const *paths, size_t nr, bool degraded,
		struct pool **out, char *err, size_t err_len);
int pool_attach(struct pools *ps, struct pool *p, const char *ssd, bool grow, bool wipe_signatures,
		char *err, size_t err_len);

/*
 * Set err to "pool NAME: " and the sentence, and return r: the one way an
 * error about a pool names it.
 */
int pool_fail(const struct pool *p, int r, char *err, size_t err_len, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* What the pool's running job is doing, NULL when it runs none. */
const char *pool_job_what(const struct pool *p);

/* ---- reports: what the views and the exporter show, as plain values ---- */

/*
 * Pointers in a report point into the pool: valid until the pool next
 * changes, so use a report before returning to the event loop.
 */
struct pool_dev_report {
	const char *path;
	uint8_t uuid[16];
	enum metadata_tier tier;
	uint64_t size_bytes;
	uint32_t logical_block_size;
	uint64_t data_offset;
	/* used: mapped to a logical extent, or a piece container */
	uint32_t total_extents, used_extents, reserved_extents;
	bool missing; /* a degraded pool's device that is not there */
};

/* A tier: its devices' extents added up. */
struct pool_tier_report {
	bool present;                     /* the pool has a device of this tier */
	uint64_t size_bytes;              /* of its extents */
	uint32_t total_extents, used_extents;
};

struct pool_heat_report {
	bool enabled;
	uint32_t areas;                   /* dm-stats areas, 0 while heat is off */
	/* Zones (lib/zone.h): at full resolution one per extent, none fine. */
	uint64_t zone_bytes;
	uint32_t zones, fine_zones, max_fine_zones;
	uint64_t kernel_bytes_per_area;
	uint64_t kernel_bytes, limit_bytes;
	uint64_t table_bytes;             /* tierd's own memory for the pool's heat */
	uint32_t sample_areas;            /* dm-stats areas the last sample read */
	uint32_t piece_areas;             /* of areas, those of pieces (piece-heat setting) */
	uint32_t piece_windows;           /* regions of pieces over an extent each; 0: over the volume */
	uint32_t piece_windows_busy;      /* of them, those watching an extent now */
	uint64_t half_life_s;
	const char *reason;               /* why heat is off, "" when on or not known */
};

/* The pieces of split extents out of their homes (docs/design.md). */
struct pool_pieces_report {
	uint64_t piece_bytes;             /* its pieces', or its first's; 0: cannot split */
	uint32_t containers, pieces, split_extents;
};

struct pool_report {
	const char *name;
	uint8_t uuid[16];
	bool active;
	uint32_t dm_major, dm_minor;      /* the volume's, 0:0 while none is known */
	uint64_t extent_size;
	uint32_t extents;                 /* of the volume */
	bool ssd_grows_volume;
	uint64_t generation;              /* of the metadata */
	uint32_t max_table_targets;       /* the table-targets setting; pool_table_targets */
	unsigned nr_devs;
	struct pool_dev_report devs[METADATA_MAX_DEVS];
	struct pool_tier_report tiers[2]; /* [METADATA_TIER_*] */
	struct pool_heat_report heat;
	struct pool_pieces_report pieces;
	const char *job_what;             /* NULL when idle */
	bool degraded;                    /* active without every device */
	uint32_t lost_extents;            /* of the volume, on missing devices or with a piece there */
	const char *inactive_reason;      /* why the last activation failed, "" if none */
	const char *moves_refused;        /* why moves are refused until tierd restarts, "" if not */
};

void pool_get_report(const struct pool *p, struct pool_report *out);

/* err without a leading "pool NAME: " of this pool, for a log line that names it already. */
const char *pool_error_sentence(const struct pool *p, const char *err);

/* A run of logical extents [first, first + count). */
struct pool_range {
	uint32_t first, count;
};

/*
 * The runs of extents a degraded pool lost (on missing devices), in order:
 * the first max into out, the number of runs returned.
 */
size_t pool_lost_ranges(const struct pool *p, struct pool_range *out, size_t max);

/* Where a logical extent's data lies: its device and the byte offset on it. */
struct pool_place {
	int tier;               /* enum metadata_tier, -1: unmapped (or past the volume's end) */
	const char *device;     /* the device's path, NULL when unmapped; valid as a report's */
	uint64_t device_offset; /* bytes from the start of the device */
	bool missing;           /* a degraded pool's device that is not there */
};

void pool_extent_place(const struct pool *p, uint32_t le, struct pool_place *out);
/*
 * Where piece idx of le lies (its slot, or its place at home), and the
 * piece's bytes in *piece_bytes; 0 when le has no piece out, then out is
 * untouched.
 */
int pool_piece_place(const struct pool *p, uint32_t le, uint32_t idx, struct pool_place *out,
		     uint64_t *piece_bytes);

/* ---- heat (docs/heat.md) ---- */
struct heat_params;

void pools_set_heat_params(struct pools *ps, const struct heat_params *params);
/*
 * The kernel memory all pools' dm-stats regions may take (0: the default,
 * the smaller of 64 MiB and 1/64 of RAM); a pool started after this uses it.
 */
void pools_set_heat_budget(struct pools *ps, uint64_t bytes);
/* The budget in force: bytes, or the default for 0. */
uint64_t pools_heat_budget(const struct pools *ps);
/* Compare every copy with its source (io_uring, ucopy.c) before committing it. */
void pools_set_verify(struct pools *ps, bool verify);
/*
 * How batches of pieces copy (docs/migration.md, "Held copies of pieces"):
 * held, while the volume is suspended, or through dm-mirror as extents do.
 */
enum pool_piece_copy { POOL_PIECE_COPY_HELD, POOL_PIECE_COPY_MIRROR };
void pools_set_piece_copy(struct pools *ps, enum pool_piece_copy how);
/* The most targets a move may leave a volume's table (0: no limit); see lib/batch.h. */
void pools_set_table_targets(struct pools *ps, uint32_t max);
/* Watch pieces' heat too (the piece-heat setting) in pools whose heat starts from now on. */
void pools_set_piece_heat(struct pools *ps, bool on);
/*
 * The size of the pieces a pool without any is split into (the piece-size
 * setting), before pools activate: a pool's heat and its piece map must
 * agree on it, so it does not change while tierd runs. A pool with pieces
 * keeps the size they have.
 */
void pools_set_piece_size(struct pools *ps, uint64_t bytes);
uint32_t pool_table_targets_max(const struct pool *p);
/*
 * The linear targets of the volume's table with every device present: a walk
 * of the map's spans (milliseconds at 200 TiB), so not in pool_get_report.
 * Each piece of a split extent counts two more, which is exact for a piece
 * with no piece out beside it and an upper bound otherwise.
 */
uint32_t pool_table_targets(const struct pool *p);
/* Read the pool's dm-stats counters since the last sample into its heat and I/O history. */
int pool_sample(struct pool *p, uint64_t now_ns, char *err, size_t err_len);
/*
 * Store the I/O history and the next chunk of heat (all of it with all);
 * returns 1 when the heat is stored completely, 0 when chunks remain.
 */
int pool_flush_step(struct pool *p, int all, char *err, size_t err_len);

struct pool_hot_extent {
	uint32_t le;
	int tier; /* enum metadata_tier, -1 where the extent is not mapped */
	float heat;
	uint64_t reads, writes;
	/*
	 * With pieces watched (the piece-heat setting): its pieces, and the
	 * fewest of them that took 90% of its I/O (0: none seen yet); else 0, 0.
	 */
	uint32_t pieces, pieces_for_90;
};

/*
 * Pieces watched (the piece-heat setting): pieces per extent, 0 when not.
 * pool_piece_shares fills out[0..that) with how extent le's heat divides
 * among its pieces for a plan (even when none is read beyond chance:
 * pieceheat_plan_shares) and returns PIECEPLAN_SHARES_ALL, or 0 where it
 * is not known. With wait_young, an extent whose pieces are measured now
 * and have had fewer reads than pieces, none beyond chance, gets
 * PIECEPLAN_SHARES_PART with every share 0: it waits for the reads.
 */
uint32_t pool_pieces_per_extent(const struct pool *p);
int pool_piece_shares(const struct pool *p, uint32_t le, bool wait_young, double *out);
/*
 * The counts of the piece areas not read since the last sample took them
 * into the weights (a sample reads them every POOL_PIECE_READ_S): before a
 * plan or a report reads the weights. A failed read starts the heat again.
 */
int pool_piece_heat_refresh(struct pool *p, char *err, size_t err_len);

/*
 * Whether any extent has heat of at least min_heat (and above 0): the
 * extents of the heat's allocated pages, stopping at the first.
 */
bool pool_has_heat(const struct pool *p, double min_heat);
/* The top extents by heat, hottest first, only those with any (free *out). */
int pool_heat_top(const struct pool *p, uint32_t top, struct pool_hot_extent **out,
		  uint32_t *nr);
/* A move of le committed at unix time now: its residency clock restarts. */
void pool_heat_moved(struct pool *p, uint32_t le, int64_t now);

/* ---- for tiering runs (tiering.c) ---- */
struct planner_extent;
struct planner_input;
struct planner_listed;
struct pieceplan_extent;
struct pieceplan_input;

int64_t pool_state_id(const struct pool *p);
uint64_t pool_extent_size(const struct pool *p);
uint32_t pool_nr_extents(const struct pool *p);
bool pool_is_active(const struct pool *p);
/*
 * The planner's input as a list (lib/planner.h) and the room for moves (SSD
 * extents usable for data, its swap reserve excluded, and free of them;
 * free HDD extents): listed are the extents with heat or a
 * move, those on the SSD and those pinned to it; the rest are unmapped,
 * plain HDD extents (counted) or HDD extents pinned to the HDD (which never
 * move: neither listed nor counted). pins: by increasing first, not
 * overlapping. Fill a planner_input with pool_planner_list_use(); the list
 * names its unlisted HDD extents through the pool, so it is good until the
 * map changes.
 */
struct pool_planner_list {
	const struct pool *p;
	const struct state_pin *pins;
	size_t nr_pins;
	struct planner_listed *list;
	uint32_t nr_list, nr_unlisted_hdd;
	uint32_t ssd_capacity, ssd_free, hdd_free;
};
int pool_planner_list(const struct pool *p, const struct state_pin *pins, size_t nr_pins,
		      struct pool_planner_list *out);
void pool_planner_list_use(const struct pool_planner_list *l, struct planner_input *in);
/* Accepts NULL and a zeroed or already destroyed list. */
void pool_planner_list_destroy(struct pool_planner_list *l);

/*
 * What a placement with pieces (lib/pieceplan.h) sees of the extents of a
 * planner list (pool_planner_list): each extent's heat, its pin, whether
 * it is whole on the SSD or which of its pieces are out; the SSD tier's
 * room in slots (the holes of containers not counted, one container's
 * worth kept for their fill, the headroom left free; room_whole without
 * that worth while no container is in use) and the entries the
 * table can afford: the pieces out now and half its targets left, for
 * pieces out and whole extents brought in alike (pieceplan max_entries).
 * Extents on the HDD colder than min_heat count as cold; an extent moved
 * whole less than min_residency seconds before now stays where it is. The
 * pieces out of an extent whose weights are not known (none stored)
 * are taken to hold its heat.
 */
struct pool_piece_input {
	const struct pool *p;
	struct pieceplan_extent *ext;
	uint32_t nr;
	uint16_t *out; /* the pieces out, each extent's from its ext.out */
	uint32_t pieces_per_extent;
	uint64_t room, max_pieces;
	/*
	 * The room for a plan of whole extents alone while no piece is out:
	 * without the container's worth kept for the one being filled, as the
	 * whole planner's room (room when pieces are out).
	 */
	uint64_t room_whole;
};
/*
 * -ENOENT when pieces are not watched (the piece-heat setting) or the
 * pool's pieces are of another size than those watched, -ENODEV without
 * an SSD tier, -ENOMEM.
 */
int pool_piece_input(const struct pool *p, const struct pool_planner_list *l, double min_heat,
		     double headroom, uint32_t now, uint32_t min_residency,
		     struct pool_piece_input *out);
void pool_piece_input_use(const struct pool_piece_input *pi, struct pieceplan_input *in);
/*
 * Give the piece containers that hold no piece back to the extent map, as
 * free extents: in memory, for the next commit to record (a crash before
 * it leaves them empty containers on the devices, which is as good).
 */
void pool_drop_empty_containers(struct pool *p);
/* Accepts NULL and a zeroed or already destroyed one. */
void pool_piece_input_destroy(struct pool_piece_input *pi);

/* Extent le's heat now (0 out of the volume or with heat off). */
double pool_extent_heat(const struct pool *p, uint32_t le);
/* The swap reserve of an SSD device of nr_pe extents: free extents promotions leave alone. */
uint32_t pool_reserve_for(uint32_t nr_pe);
/* I/O counted per tier since the last store to the state ([METADATA_TIER_*]). */
void pool_io_pending(const struct pool *p, struct state_tier_io io[2]);

#endif
