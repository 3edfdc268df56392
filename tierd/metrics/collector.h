/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collector: the daemon's metrics (docs/metrics.md), gathered at each scrape
 * from what the pools, the tiering runs and the state already expose.
 */
#ifndef TIERD_COLLECTOR_H
#define TIERD_COLLECTOR_H

#include <stddef.h>

#include "metrics.h"
#include "pool.h"
#include "state.h"
#include "tiering.h"

struct collector {
	struct pools *pools;
	struct tierings *tierings;
	struct state *state;
};

/* An exporter_body_fn; ctx is a struct collector. Failures are logged. */
int collector_render(void *ctx, char **text, size_t *len);
/* Every family the collector exposes (so a test can hold the names to the rules). */
const struct metrics_def *collector_families(size_t *nr);

#endif
