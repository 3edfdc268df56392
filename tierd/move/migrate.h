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

struct migrate_item {
	uint32_t le;
	unsigned dev; /* destination, reserved by the caller with extmap_alloc() */
	uint32_t pe;
	int result;   /* after the batch: 0 moved, -EIO a leg failed (old mapping kept) */
};

/* Called once when the batch has ended; r < 0 if it failed as a whole (err set). */
typedef void (*migrate_done_fn)(struct migrate_batch *b, int r, const char *err, void *ctx);

/*
 * Start moving items (up to MIGRATE_BATCH_MAX) of p's volume; the caller
 * keeps items alive until done is called. Every destination is released
 * again unless its extent moved there. Returns -errno (err set) if the batch
 * could not start; done is then not called.
 */
#define MIGRATE_BATCH_MAX 64
int migrate_batch_start(struct ev_loop *loop, struct pool *p, struct migrate_item *items,
			size_t nr, migrate_done_fn done, void *ctx, struct migrate_batch **out,
			char *err, size_t err_len);

/* Copy progress of the running batch: regions copied and in all. */
void migrate_batch_progress(const struct migrate_batch *b, uint64_t *copied, uint64_t *total);

/*
 * Where a batch's time went (CLOCK_MONOTONIC, ns). A stall is how long the
 * volume's I/O was held for a table swap: from the suspend's start to the
 * resume's end. Complete in done, which may read it until it returns.
 */
struct migrate_timing {
	uint64_t stall_ns;        /* the longest swap after the copy: normally the commit's */
	uint64_t commit_ns;       /* of which writing the devices and the state, */
	uint64_t commit_bytes;    /* (the bytes written to the devices, all together) */
	uint64_t suspend_ns;      /* the suspend itself (in-flight I/O, mirrors stopping) */
	uint64_t resume_ns;       /* and the resume (the swap, the mirrors torn down) */
	uint64_t mirror_stall_ns; /* the swap into the mirrors, before the copy */
	uint64_t copy_ns;         /* mirrors live until every copy was in sync or failed */
	bool in_sync_by_event;    /* a device-mapper event, not the safety poll, saw that */
};

void migrate_batch_timing(const struct migrate_batch *b, struct migrate_timing *t);
/* Shorthand for the timing's stall_ns. */
uint64_t migrate_batch_stall_ns(const struct migrate_batch *b);

#endif
