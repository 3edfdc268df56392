/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wlog: dm-log-writes logs and the crash points they allow (docs/testing.md,
 * "Write-log replay"). Pure: takes the bytes of a log, never opens a file.
 *
 * The kernel logs a device's writes only once a flush made them durable: a
 * flush's entry comes right after the run of plain writes that completed
 * before it was issued (its group); a FUA write is logged when it completes;
 * a mark when it is sent. So every position right after a flush, FUA or mark
 * entry is a state the device could have been left in by a power cut, and
 * right before a flush, any subset of its group may have reached the media.
 *
 * Several devices have several logs and no common clock. The harness gives
 * them one: it suspends every device, marks each log "tick:N", and resumes;
 * nothing completes on any device while the marks go in. A crash point at a
 * flush of one device is then placed only where no other device completed a
 * flush between the same two ticks, so every device's state is one it had
 * at the same instant.
 */
#ifndef TIERD_WLOG_H
#define TIERD_WLOG_H

#include <stddef.h>
#include <stdint.h>

#define WLOG_MAGIC 0x6a736677736872ULL
#define WLOG_FLUSH (1u << 0)
#define WLOG_FUA (1u << 1)
#define WLOG_DISCARD (1u << 2)
#define WLOG_MARK (1u << 3)
#define WLOG_MAX_DEVS 4
#define WLOG_MARK_LEN 64

struct wlog_entry {
	uint64_t sector;     /* in the device's logical sectors */
	uint64_t nr_sectors;
	uint64_t flags;
	uint64_t data_off;   /* byte offset of the data in the log */
	char mark[WLOG_MARK_LEN];
};

struct wlog {
	uint32_t sectorsize;
	size_t nr;
	struct wlog_entry *e;
};

/* Parse a whole log; -EINVAL if it is not one, -EUCLEAN if it is cut short. */
int wlog_parse(struct wlog *log, const void *buf, size_t len);
void wlog_destroy(struct wlog *log);

/* A plain write or discard: one that waits for a flush to be durable. */
static inline int wlog_is_plain(const struct wlog_entry *e)
{
	return !(e->flags & (WLOG_FLUSH | WLOG_FUA | WLOG_MARK));
}

/* Index of the first entry of the group of the flush at index i. */
size_t wlog_group_start(const struct wlog *log, size_t i);

enum wlog_cut_kind {
	WLOG_CUT_TICK,   /* every device as it was at a tick */
	WLOG_CUT_AFTER,  /* right after a flush or FUA write completed */
	WLOG_CUT_BEFORE, /* right before a flush: part of its group on the media */
};

struct wlog_cut {
	enum wlog_cut_kind kind;
	unsigned dev;                    /* the device of AFTER/BEFORE */
	size_t entry;                    /* its flush/FUA entry */
	size_t prefix[WLOG_MAX_DEVS];    /* entries [0, prefix) are on the media */
	size_t group_end;                /* BEFORE: the group is [prefix[dev], group_end) */
	uint64_t acked;                  /* highest "ack:S" mark in any prefix */
	char phase[WLOG_MARK_LEN];       /* latest "phase:NAME" mark */
};

struct wlog_plan {
	size_t nr, skipped; /* skipped: flushes whose order against another device is unknown */
	struct wlog_cut *cut;
};

/*
 * Every crash point of nr logs, in time order, each device's prefix never
 * shrinking from one cut to the next. Cuts start at the first tick.
 */
int wlog_plan(const struct wlog *logs, unsigned nr, struct wlog_plan *plan);
void wlog_plan_destroy(struct wlog_plan *plan);

/*
 * Choose which writes of a BEFORE cut's group reach the media: keep[k] for
 * the k-th write of the group, at least one kept. Deterministic in seed.
 */
void wlog_subset(uint64_t seed, size_t n, unsigned char *keep);

#endif
