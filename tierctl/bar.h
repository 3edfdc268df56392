/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bar: the text of a job's progress line, as a bar on a terminal and as a
 * plain line elsewhere: bytes, extents, rate, time left and what the job
 * waits for.  Nothing here does I/O.
 */
#ifndef TIERCTL_BAR_H
#define TIERCTL_BAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Cells of the bar itself, between its brackets. */
#define BAR_WIDTH 30
/* Enough for any line with a what of up to 200 bytes. */
#define BAR_TEXT_MAX 512

/* A job's progress line, as tierd's job object has it (docs/protocol.md). */
struct bar {
	const char *what;
	uint64_t done, total;             /* units; total 0: not known */
	const char *units;                /* "extents" (NULL) or "pieces" */
	uint64_t done_bytes, total_bytes; /* total_bytes 0: not known, shown in extents only */
	uint64_t rate;                    /* bytes per second; 0: not known yet */
	int64_t eta;                      /* seconds left; negative: not known */
	const char *waiting;              /* NULL or "" while batches run */
};

/*
 * "[#####.........]  1.0 GiB/4.0 GiB  10/40 extents  12.0 MiB/s  ETA 4m16s
 * evacuating /dev/vdb", the bar only when terminal, rate and ETA only when
 * known, "(waiting: ...)" when the job waits. Truncated to len. Returns buf.
 */
const char *bar_format(const struct bar *b, bool terminal, char *buf, size_t len);

/* What tierd's word for a wait means to a person: "rate" is "rate limit"; NULL when none. */
const char *bar_waiting_text(const char *waiting);

#endif
