/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * progress: how far a long operation has got, as a redrawn bar on a terminal
 * and as plain lines (at most one a second, and the last) for logs and pipes.
 */
#ifndef TIERCTL_PROGRESS_H
#define TIERCTL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bar.h"

struct progress;

/* Report to out (borrowed), redrawing one line if terminal. */
int progress_new(FILE *out, bool terminal, struct progress **progress);
void progress_free(struct progress *p);

/* Where the job stands now (b and its strings borrowed); -ENOMEM. */
int progress_update(struct progress *p, const struct bar *b);

/* Show an update held back by the rate limit and end the bar's line. */
void progress_end(struct progress *p);

/* The last update's count of extents and their unit, "extents"; false before the first. */
bool progress_last(const struct progress *p, uint64_t *done, const char **unit);

#endif
