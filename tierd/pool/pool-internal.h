/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pool-internal: what the pool layer's files share, and the primitives the
 * move layer (tierd/move/) builds its commits on. Nothing above the move
 * layer includes this: they see pool.h only (tests/layers/check-layers).
 */
#ifndef TIERD_POOL_INTERNAL_H
#define TIERD_POOL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "blockdev.h"
#include "dmtable.h"
#include "errbuf.h"
#include "extmap.h"
#include "heat.h"
#include "pieceheat.h"
#include "piecewatch.h"
#include "slotsum.h"
#include "zone.h"
#include "metadata.h"
#include "pool.h"
#include "state.h"
#include "statsparse.h"


#define SECTOR 512u
/* Keep at least this many free extents per device for migration (docs/pools.md). */
#define POOL_RESERVE_MIN 2u
#define POOL_RESERVE_MAX 64u
/* Room in every metadata slot: a pool may grow to twice its size (attach). */
#define POOL_SLOT_MIN_EXTENTS 65536u

struct pool_job;

struct pool {
	struct state_pool sp;
	struct pools *ps;
	struct pool *next;
	int active;
	struct pool_job *job; /* the move layer's, opaque here: a long operation in progress */
	/*
	 * The move layer's, opaque here: mirrors a failed move had to leave in
	 * the live table, and the timer that retries removing them. Destroyed
	 * with the volume or the pool.
	 */
	void *leftover;
	void (*leftover_destroy)(void *leftover);
	const char *job_what; /* what it is doing, for "pool NAME is busy: ..." */
	/*
	 * The move layer's: the most pieces the next held copy may take, as
	 * the last ones timed on these devices (0: none timed yet).
	 */
	uint32_t held_pieces;
	uint32_t dm_major, dm_minor; /* the volume's, while active */
	char broken[POOL_ERR_MAX]; /* why the pool takes no more moves, "" if it does */
	/*
	 * The move layer's: the volume stays suspended until a table the map
	 * names resumes (its leftover retries); no move may start meanwhile.
	 * Cleared when the leftover is replaced or dropped.
	 */
	bool io_held;
	/*
	 * A save to the state failed: SQLite may hold an older map, or one
	 * without a device memory has, so the next save writes everything.
	 */
	bool state_stale;
	/*
	 * Active without every device (pool_activate with degraded): the
	 * missing ones have fd -1 and their extents map to the error target.
	 * Nothing that writes metadata runs until every device is back.
	 */
	bool degraded;
	bool allow_missing; /* the activation under way may leave devices out */
	bool probe_missing; /* opening degraded only to look at the newest metadata: no warnings */
	char inactive_why[POOL_ERR_MAX]; /* why the last activation failed, "" if it did not */
	char waiting_logged[POOL_ERR_MAX]; /* the reason a retry last logged */
	/* Heat (docs/heat.md): the volume's dm-stats region and what it told. */
	struct heat_table heat;
	struct statsparse_area *sample; /* one per extent, reused by every sample */
	uint64_t heat_region;
	int heat_on;
	char heat_off[POOL_ERR_MAX];
	uint64_t heat_kernel_bytes, heat_limit_bytes;
	uint64_t heat_reserved_bytes; /* of the budget: what the pool's regions may grow to */
	/*
	 * Heat at two resolutions (lib/zone.h) when an area per extent is over
	 * the budget; zone_kind is NULL at full resolution.
	 */
	struct zone_layout zones;
	struct zone_choice zone_choice;
	uint8_t *zone_kind;
	uint64_t *zone_region;             /* a fine zone's dm-stats region */
	struct statsparse_area *zone_fine; /* one fine zone's areas, reused */
	double *zone_share, *zone_heat;
	uint32_t zone_samples, zone_choices; /* since the last choice; choices made */
	uint32_t nr_fine;
	/*
	 * The guard: a region of an area per POOL_GUARD_STEP of the heat
	 * region's, read first, so that a sample reads only the parts of the
	 * volume that had I/O (POOL_NO_REGION: none, every area is read).
	 */
	uint64_t guard_region;
	uint32_t guard_areas;
	struct statsparse_area *guard;
	uint32_t sample_areas; /* areas the last sample read, of every region */
	/*
	 * Pieces (lib/pieceheat.h): with the piece-heat setting, a region with an
	 * area per piece (pool_piece_ppe) over the whole volume when the pool is at
	 * full resolution and the budget has room for it; else windows, regions
	 * of piece areas over one extent each that go round the hottest extents
	 * (lib/piecewatch.h; piece_watch.nr_windows is 0 with the whole region).
	 * pieces.v is NULL when pieces are not watched.
	 */
	uint64_t piece_region;
	uint32_t piece_areas; /* of the regions there are now */
	struct piecewatch piece_watch;
	uint64_t *piece_window_region; /* a window's dm-stats region */
	uint32_t piece_window_samples;  /* since the windows were last chosen */
	struct pieceheat pieces;
	struct statsparse_area *piece_sample; /* one extent's pieces, reused */
	/*
	 * With the whole region: a bit per extent whose own area had I/O since
	 * its piece areas were last read. Their counts wait in the kernel, read
	 * every POOL_PIECE_READ_S (a sample reads an area per piece of every
	 * busy extent: at a sample a second, and later every 10 s at 4 KiB
	 * pieces, that was most of tierd's CPU) or when a plan or a report
	 * wants them (pool_piece_heat_refresh).
	 */
	uint64_t *piece_unread;
	uint32_t piece_unread_words; /* its size: the extents when heat last started */
	uint64_t piece_read_ns; /* when the piece areas were last read */
	/* When the state last had the weights: pieces.changes, sp.pieces.changes, the sample time. */
	uint64_t piece_heat_saved, piece_heat_saved_map, piece_heat_saved_ns;
	struct state_tier_io io[2]; /* not yet stored: [METADATA_TIER_*] */
	int64_t io_minute;
	uint32_t heat_flushed; /* the chunked flush has stored extents below this */
	/* Per device, while the pool is open: O_DIRECT fd, superblock, slot generations. */
	int fd[METADATA_MAX_DEVS];
	struct metadata_sb sb[METADATA_MAX_DEVS];
	uint64_t slot_gen[METADATA_MAX_DEVS][2];
	/*
	 * As pool_read_slots() found them: the slot held the very bytes the map
	 * encodes, so activation need not read and decode it again to compare.
	 */
	bool slot_is_map[METADATA_MAX_DEVS][2];
	/*
	 * What this process knows of the slots' bytes, so that a commit writes
	 * the blocks that differ rather than a generation (420 MB a device at
	 * 200 TiB), for 4 bytes per 512 extents rather than a copy of the last
	 * generations: the block sums of generation gen (the current one, of
	 * nr_devs devices and nr_logical extents, as encoded from the map) and,
	 * for each slot read or written since, whether its bytes are known and
	 * the blocks in which they differ from generation gen. The map's dirty
	 * groups are what changed since gen. Forgotten (pool_known_drop) when a
	 * write fails, the devices close or the map is replaced.
	 */
	struct pool_known {
		uint64_t gen; /* 0: nothing known */
		unsigned nr_devs;
		uint32_t nr_logical;
		/* The pieces' change count the sums are of (struct piecemap's changes). */
		uint64_t pieces_changes;
		struct slotsum sum;
		bool slot[METADATA_MAX_DEVS][2];
		struct slotsum_set differs[METADATA_MAX_DEVS][2];
	} known;
	size_t commit_bytes; /* written to the devices by the last metadata write */
	uint64_t commit_state_ns; /* the last commit's save of the state */
};

struct pools {
	struct state *state;
	struct pool *list;
	struct heat_params heat;
	uint64_t heat_budget; /* dm-stats memory of all pools; 0: the default */
	bool verify; /* compare every copy with its source before committing it */
	enum pool_piece_copy piece_copy; /* how batches of pieces copy (the piece-copy setting) */
	bool piece_heat; /* watch pieces' heat where the budget has room (the piece-heat setting) */
	uint64_t piece_bytes; /* the pieces of a pool without any (the piece-size setting) */
	uint32_t table_targets; /* the most targets a move may leave a table; 0: no limit */
	pools_forget_fn forget;
	void *forget_ctx;
};

/* A device being added (create, attach): checked, laid out, opened exclusively. */
struct pool_new_dev {
	const char *path;
	struct blockdev_info info;
	int fd; /* exclusive while formatting */
	struct metadata_sb sb;
};

/* lifecycle.c */
int pool_check_idle(const struct pool *p, bool need_active, char *err, size_t err_len);
/*
 * Open the devices and take the newest metadata on them when it is newer
 * than memory's (a commit that reached the devices and not the state),
 * then check the map and the pieces: what anything that writes to the
 * devices must do first, activation and offline moves alike. On error
 * nothing stays open.
 */
int pool_open_current(struct pool *p, bool degraded, char *err, size_t err_len);

/* table.c */
int pool_table(const struct pool *p, struct dmtable *t, char *err, size_t err_len);
/*
 * Create the volume or swap the map's table in; if the swap fails the live
 * table runs again: after an attach, a shrink or a drop, the data that
 * stays is where both tables have it.
 */
int pool_load_table(struct pool *p, int create, char *err, size_t err_len);
/*
 * The map's table in place of a live one that differs from it (found at
 * activation: it may name places a commit freed). If the swap fails the
 * volume stays suspended, never on the live table.
 */
int pool_load_map_table(struct pool *p, char *err, size_t err_len);

/* ondisk.c */
int pool_read_sb(int fd, struct metadata_sb *sb);
int pool_read_slot(int fd, const struct metadata_sb *sb, unsigned slot, uint64_t *gen,
		   struct metadata_pool *p, struct extmap *m, struct piecemap *pm);
/* What a failed pool_read_slot() of the newest generation means to the user. */
const char *pool_slot_error(int r);
/*
 * Every open device's slot generations (0: nothing valid; a slot this tierd
 * cannot use still gives its generation, see read_slot in ondisk.c), and
 * what is known of their bytes against the map (struct pool_known).
 */
void pool_read_slots(struct pool *p);
int pool_flush_devices(struct pool *p, char *err, size_t err_len);
int pool_write_metadata(struct pool *p, char *err, size_t err_len);
/* One device's changed blocks of a prepared commit: [off, off + len) of its slot, from buf + src. */
struct pool_write_run {
	unsigned dev;
	size_t off, src, len;
};
/*
 * The piece-size setting's default: the resolution of piece heat, and of the
 * pieces a pool without any is split into first (a 4 MiB extent in 256). A
 * pool with pieces keeps theirs (pool_piece_ppe).
 */
#define POOL_PIECE_BYTES 16384u
/*
 * Pieces per extent of the pool's pieces: those it has out, else those its
 * heat watches, else the piece-size setting's; 0 when its extents cannot be
 * split into those (metadata_piece_size_valid).
 */
uint32_t pool_piece_ppe(const struct pool *p);
/* The weights of split extents are stored at least this often while they change (heat.c). */
#define POOL_PIECE_HEAT_SAVE_S 600u
/*
 * The piece areas of busy extents are read at least this often (heat.c).
 * Plans and reports read them first, so this only bounds what waits in
 * the kernel: reading them every 10 s was most of tierd's CPU at 4 KiB
 * pieces, whose text the kernel formats an area at a time.
 */
#define POOL_PIECE_READ_S 60u

/* The next generation's blocks, and what each device must be written (pool_commit_prepare). */
struct pool_prepared {
	void *buf;	   /* whole: the record; else the blocks of blocks[], in order */
	size_t len;
	bool whole;
	struct slotsum_set blocks; /* what buf holds when not whole */
	uint64_t gen;
	unsigned slot[METADATA_MAX_DEVS];
	struct pool_write_run *runs; /* in order of device */
	size_t nr_runs;
	struct slotsum sum;	   /* the block sums of generation gen */
	/* The blocks gen changes, when known; each unwritten slot's differences after it. */
	bool changed_known;
	struct slotsum_set changed;
	bool other_known[METADATA_MAX_DEVS];
	struct slotsum_set other[METADATA_MAX_DEVS];
	struct state *staged; /* pool_commit_stage left its transaction open here */
};
/*
 * Before pool_commit_prepare, while the volume runs: copy the current
 * generation into each device's next slot where a diff against that slot
 * would be the whole generation. Returns the bytes written, or -errno.
 */
ssize_t pool_commit_fill(struct pool *p, char *err, size_t err_len);
/*
 * Encode the in-memory map as the next generation and find the blocks
 * each device needs, allocating all the commit needs: done before the
 * volume is suspended, so that the commit while it is costs only the
 * writes (and nothing allocates while I/O is held). The map must not
 * change until the commit; a generation written since makes it -ESTALE.
 */
int pool_commit_prepare(struct pool *p, struct pool_prepared *c, char *err, size_t err_len);
/* Bytes c writes to the devices, all of them together. */
size_t pool_prepared_bytes(const struct pool_prepared *c);
/* Accepts NULL and a released one. */
void pool_prepared_release(struct pool_prepared *c);
/* Write c to the devices, flushed; c then holds what to release (see ondisk.c). */
int pool_commit_write(struct pool *p, struct pool_prepared *c, char *err, size_t err_len);
int pool_save_state(struct pool *p, const uint32_t *changed, size_t nr_changed);
int pool_format_device(int fd, const struct metadata_sb *sb, char *err, size_t err_len,
		       const char *path);
int pool_wipe_device(int fd, const struct metadata_sb *sb);

/* registry.c */
struct pool *pool_new(void);
void pool_known_drop(struct pool *p);
void pool_close_devices(struct pool *p);
void pool_free(struct pool *p);
void pools_link(struct pools *ps, struct pool *p);
void pools_unlink(struct pools *ps, struct pool *p);
struct pool *pools_find_uuid(struct pools *ps, const uint8_t uuid[16]);
/* The index of the pool's SSD device, -1 when it has none. */
int pool_ssd_dev(const struct pool *p);
void pool_dm_uuid(const struct pool *p, char out[64]);

/* devices.c */
int pool_open_direct(const char *path, int *fd);
/* With degraded, missing devices are left out (fd -1), as long as one is there. */
int pool_open_devices(struct pool *p, bool degraded, char *err, size_t err_len);
int pool_adopt_newer_metadata(struct pool *p, char *err, size_t err_len);
/*
 * Whether the devices open hold a generation newer than p's that names none
 * of the missing ones: a drop (drop.c) that reached the devices, not the state.
 */
bool pool_newest_leaves_out_missing(const struct pool *p);
void pool_new_dev_close(struct pool_new_dev *nd);
int pool_check_new_device(struct pools *ps, const char *path, bool wipe_signatures,
			  const struct pool *attach_to, struct pool_new_dev *nd, char *err,
			  size_t err_len);
int pool_same_device(const char *a, const char *b);
int pool_layout_new_device(struct pool_new_dev *nd, uint64_t extent_size, uint32_t max_logical,
			   char *err, size_t err_len);
void pool_fill_dev(struct metadata_dev *d, const struct pool_new_dev *nd, enum metadata_tier tier);
int pool_random_uuid(uint8_t uuid[16]);
int pool_map_run(struct extmap *m, uint32_t le, unsigned dev, uint32_t count);
int pool_reopen_device(struct pool *p, unsigned dev, struct pool_new_dev *nd, char *err,
		       size_t err_len);

/* attach.c */
int pool_release_device(struct pool *p, unsigned dev, char *err, size_t err_len);
int pool_shrink_by(struct pool *p, unsigned ssd, char *err, size_t err_len);

/* drop.c: a dead device out of a degraded pool (pool_drop_plan, zero each, commit). */
/* A piece whose slot is lost with a dead device: its home range, zeroed before the commit. */
struct pool_drop_piece {
	uint32_t le, idx;
	unsigned dev;  /* where its extent lives, which survives */
	uint32_t pe;
};

struct pool_drop {
	struct extmap_dest *dest; /* per lost extent, its new home: reserved, not yet zeroed */
	uint32_t nr;
	/* Pieces lost whose extent survives: they read as zeros, as lost extents do. */
	struct pool_drop_piece *pieces;
	uint32_t nr_pieces;
	uint32_t *scratch; /* a word per piece container, for the commit */
};

/* Check, and reserve free extents on the remaining devices for the lost ones. */
int pool_drop_plan(struct pool *p, struct pool_drop **out, char *err, size_t err_len);
/* Zero dest[i] on its device; i from nr on: the home of pieces[i - nr]. */
int pool_drop_zero(struct pool *p, const struct pool_drop *d, uint32_t i, char *err,
		   size_t err_len);
/*
 * Map the lost extents to their zeroed homes, forget the missing devices,
 * commit and reload the table. Whether it fails or not, d's destinations
 * are the map's: pool_drop_free(d) gives back only what no commit took.
 */
int pool_drop_commit(struct pool *p, struct pool_drop *d, char *err, size_t err_len);
void pool_drop_free(struct pool *p, struct pool_drop *d);

/* heat.c */
void pool_heat_start(struct pool *p);
/* Forget the zones and their regions' ids (the regions go with the volume or the next start). */
void pool_heat_stop(struct pool *p);

/* ---- for the move layer (tierd/move/) ---- */
struct dmtable_dev;

struct extmap *pool_extmap(struct pool *p);
/* The pieces of split extents out of their homes (zeroed: none). */
const struct piecemap *pool_pieces(const struct pool *p);
uint64_t pool_extent_sectors(const struct pool *p);
/* Device numbers and data offsets of p's devices, for dmtable_build*(). */
int pool_dm_devs(const struct pool *p, struct dmtable_dev *devs, char *err, size_t err_len);
/* For comparing a copy with its source (ucopy): O_DIRECT fds while open, offsets, alignment. */
int pool_dev_fd(const struct pool *p, unsigned dev);
uint64_t pool_pe_offset(const struct pool *p, unsigned dev, uint32_t pe);
uint32_t pool_block_size(const struct pool *p);
bool pool_verify_moves(const struct pool *p);
enum pool_piece_copy pool_piece_copy(const struct pool *p);
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
/*
 * After pool_commit_prepare, still before the suspend: write the state's
 * rows of the commit (those pool_commit_prepared would save) in a
 * transaction left open, so that the commit while I/O is held only
 * commits it. No other save of the state until the commit or the release.
 */
int pool_commit_stage(struct pool *p, struct pool_prepared *c, const uint32_t *changed,
		      size_t nr_changed, char *err, size_t err_len);
/*
 * pool_commit of a prepared generation (and of its staged state, if any).
 * Either way c is left holding memory to release with
 * pool_prepared_release once the volume runs again; the release rolls
 * back a stage not committed.
 */
int pool_commit_prepared(struct pool *p, struct pool_prepared *c, const uint32_t *changed,
			 size_t nr_changed, char *err, size_t err_len);
/* Bytes the last commit wrote to the devices, all of them together. */
size_t pool_commit_bytes(const struct pool *p);
/* How long the last pool_commit_prepared took to save the state (ns). */
uint64_t pool_commit_state_ns(const struct pool *p);
/*
 * Give p an object of the move layer's to destroy with the volume (NULL:
 * none); destroys the one it had. pool_drop_leftover destroys it now.
 */
void pool_set_leftover(struct pool *p, void *leftover, void (*destroy)(void *leftover));
void pool_drop_leftover(struct pool *p);
/* The job now running on p (NULL: none), and what it does (see pool_job_what). */
void pool_set_job(struct pool *p, struct pool_job *job, const char *what);

#endif
