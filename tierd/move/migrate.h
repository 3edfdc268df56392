/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * migrate: move a batch of extents of a live volume with the kernel's mirror
 * target, following the commit protocol (docs/migration.md): copy while src
 * stays authoritative, load the new table before suspending, commit the new
 * mapping to the devices and the state while suspended, resume.
 */
#ifndef TIERD_MIGRATE_H
#define TIERD_MIGRATE_H

#include <ev.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

struct pool;
struct migrate_batch;

/*
 * A move of an extent, or of one piece of a split extent (piece true):
 * then container and slot are its destination, a slot the caller reserved
 * with piecemap_alloc_slot(), or PIECEMAP_NO_CONTAINER for le's home; dev
 * is the destination's device, for the caller's reports.
 */
struct migrate_item {
	uint32_t le;
	unsigned dev; /* destination, reserved by the caller with extmap_alloc() */
	uint32_t pe;
	bool piece;
	uint32_t idx;
	uint32_t container;
	uint16_t slot;
	int result;   /* after the batch: 0 moved, -EIO a leg failed (old mapping kept) */
};

/* Called once when the batch has ended; r < 0 if it failed as a whole (err set). */
typedef void (*migrate_done_fn)(struct migrate_batch *b, int r, const char *err, void *ctx);

/*
 * Start moving items (up to MIGRATE_BATCH_MAX) of p's volume; the caller
 * keeps items alive until done is called. Every destination is released
 * again unless its extent moved there. Returns -errno (err set) if the batch
 * could not start; done is then not called. Only held copies of pieces
 * take that many (job.h): a batch of mirrors takes 64 at most.
 */
#define MIGRATE_BATCH_MAX 256
/*
 * Whether b copied its pieces while the volume was suspended (a held
 * copy), every one of them; then how many, in how long, and how long the
 * volume's I/O was held in all (the stall, copy included, --verify-moves'
 * comparison not: it grows with the batch). For done callbacks.
 */
bool migrate_batch_held_copy(const struct migrate_batch *b, size_t *copied, uint64_t *copy_ns,
			     uint64_t *stall_ns);
int migrate_batch_start(struct ev_loop *loop, struct pool *p, struct migrate_item *items,
			size_t nr, migrate_done_fn done, void *ctx, struct migrate_batch **out,
			char *err, size_t err_len);

/* Copy progress of the running batch: regions copied and in all. */
void migrate_batch_progress(const struct migrate_batch *b, uint64_t *copied, uint64_t *total);

#endif
