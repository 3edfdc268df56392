/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "piecewatch.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

int piecewatch_init(struct piecewatch *w, uint32_t nr_windows, uint32_t dwell, uint32_t nr_recent)
{
	if (!w || !nr_windows || !dwell || !nr_recent)
		return -EINVAL;
	*w = (struct piecewatch){ .nr_windows = nr_windows, .dwell = dwell, .nr_recent = nr_recent };
	w->le = malloc((size_t)nr_windows * sizeof(*w->le));
	w->age = calloc(nr_windows, sizeof(*w->age));
	w->recent = malloc((size_t)nr_recent * sizeof(*w->recent));
	if (!w->le || !w->age || !w->recent) {
		piecewatch_destroy(w);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nr_windows; i++)
		w->le[i] = PIECEWATCH_IDLE;
	return 0;
}

void piecewatch_destroy(struct piecewatch *w)
{
	if (!w)
		return;
	free(w->le);
	free(w->age);
	free(w->recent);
	*w = (struct piecewatch){ 0 };
}

static bool piecewatch_watching(const struct piecewatch *w, uint32_t le)
{
	for (uint32_t i = 0; i < w->nr_windows; i++)
		if (w->le[i] == le)
			return true;
	return false;
}

static bool piecewatch_was_recent(const struct piecewatch *w, uint32_t le)
{
	for (uint32_t i = 0; i < w->recent_have; i++)
		if (w->recent[i] == le)
			return true;
	return false;
}

static void piecewatch_remember(struct piecewatch *w, uint32_t le)
{
	w->recent[w->recent_next] = le;
	w->recent_next = (w->recent_next + 1) % w->nr_recent;
	if (w->recent_have < w->nr_recent)
		w->recent_have++;
}

/*
 * The window to move next: an idle one (it gives up no region), else of
 * those that have stayed `dwell` choices the one on its extent longest;
 * nr_windows when none may move.
 */
static uint32_t piecewatch_free_window(const struct piecewatch *w)
{
	uint32_t best = w->nr_windows;

	for (uint32_t i = 0; i < w->nr_windows; i++) {
		if (w->le[i] == PIECEWATCH_IDLE)
			return i;
		if (w->age[i] >= w->dwell && (best == w->nr_windows || w->age[i] > w->age[best]))
			best = i;
	}
	return best;
}

int piecewatch_choose(struct piecewatch *w, const uint32_t *cand, const uint8_t *known,
		      uint32_t nr, uint8_t *changed)
{
	uint32_t moved = 0;

	if (!w || !w->le || !changed || (nr && (!cand || !known)))
		return -EINVAL;
	for (uint32_t i = 0; i < w->nr_windows; i++) {
		changed[i] = 0;
		if (w->le[i] != PIECEWATCH_IDLE && w->age[i] < UINT32_MAX)
			w->age[i]++;
	}
	/* The extents whose shares are not known first, then the others again. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t c = 0; c < nr; c++) {
			uint32_t le = cand[c], win;

			if (le == PIECEWATCH_IDLE || (pass == 0) == (known[c] != 0) ||
			    piecewatch_watching(w, le) || piecewatch_was_recent(w, le))
				continue;
			win = piecewatch_free_window(w);
			if (win == w->nr_windows)
				return (int)moved;
			if (w->le[win] != PIECEWATCH_IDLE)
				piecewatch_remember(w, w->le[win]);
			w->le[win] = le;
			w->age[win] = 0;
			changed[win] = 1;
			moved++;
			w->moves++;
		}
	}
	return (int)moved;
}

void piecewatch_idle(struct piecewatch *w, uint32_t i)
{
	if (!w || i >= w->nr_windows)
		return;
	if (w->le[i] != PIECEWATCH_IDLE)
		piecewatch_remember(w, w->le[i]);
	w->le[i] = PIECEWATCH_IDLE;
	w->age[i] = 0;
}

uint32_t piecewatch_busy(const struct piecewatch *w)
{
	uint32_t n = 0;

	for (uint32_t i = 0; w && i < w->nr_windows; i++)
		n += w->le[i] != PIECEWATCH_IDLE;
	return n;
}
