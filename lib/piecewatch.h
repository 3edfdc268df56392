/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_PIECEWATCH_H
#define TIERD_PIECEWATCH_H

#include <stdint.h>

/*
 * piecewatch: which extents the piece windows watch.
 *
 * An area per 16 KiB piece of the whole volume costs 256 times the kernel
 * memory of an area per 4 MiB extent (4 KiB pieces 1,024 times): a few GiB
 * of volume at the default heat budget, nothing like a NAS's 100 TiB.  Such
 * a pool watches its pieces through a few windows instead, each a dm-stats
 * region with an area per piece over one extent, moved from extent to
 * extent.  How an extent's I/O divides among its pieces changes slowly (the
 * weights decay with the heat's half-life, their shares not at all), so a
 * minute's watch of a hot extent tells it for hours: the windows go round
 * the hottest extents, and the shares they learn stay with the extents
 * after the windows move on (lib/pieceheat.h).
 *
 * A window stays on its extent for at least `dwell` choices, then moves
 * to the hottest candidate neither watched now nor among the last
 * `nr_recent` extents watched: first one whose shares are not known, then
 * one whose shares are (to learn them again). With no such candidate it
 * stays: every window move costs a region deleted and one made, and the
 * kernel suspends the device's I/O for a moment to make one.
 *
 * Pure: no I/O.  Functions that can fail return 0 or a negative errno.
 */

#define PIECEWATCH_IDLE UINT32_MAX

struct piecewatch {
	uint32_t nr_windows;
	uint32_t dwell;    /* choices a window stays on its extent at least */
	uint32_t *le;      /* per window: the extent it watches, or PIECEWATCH_IDLE */
	uint32_t *age;     /* per window: choices since it took le */
	uint32_t *recent;  /* the extents watched lately, oldest overwritten first */
	uint32_t nr_recent, recent_have, recent_next;
	uint64_t moves;    /* windows moved to another extent, ever */
};

/* All windows idle.  -EINVAL for no windows, a dwell of 0 or no memory of recent ones; -ENOMEM. */
int piecewatch_init(struct piecewatch *w, uint32_t nr_windows, uint32_t dwell, uint32_t nr_recent);
/* Accepts NULL and a zeroed or already destroyed one. */
void piecewatch_destroy(struct piecewatch *w);

/*
 * Choose again from cand[0..nr), extents hottest first, known[i] whether
 * cand[i]'s pieces have weights.  Windows that take another extent get it
 * in w->le[i] and changed[i] = 1 (the caller deletes the region over the
 * old one and makes one over the new); the others changed[i] = 0.  Returns
 * how many changed, or -EINVAL.
 */
int piecewatch_choose(struct piecewatch *w, const uint32_t *cand, const uint8_t *known,
		      uint32_t nr, uint8_t *changed);
/*
 * Window i lost its extent (its region could not be made): idle, free to
 * move at once, and the extent counted as watched lately so the next
 * choice tries another.
 */
void piecewatch_idle(struct piecewatch *w, uint32_t i);
/* Windows watching an extent now. */
uint32_t piecewatch_busy(const struct piecewatch *w);

#endif
