/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stats: a pool's I/O per tier, its moves and its last run, over a window and as a history. */
#include "tiering.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "tiering-internal.h"

#define TIERING_RUNS_KEPT_IN_STATS 1

static void add_io(struct state_tier_io *to, const struct state_tier_io *from)
{
	to->reads += from->reads;
	to->writes += from->writes;
}

int tiering_report_stats(struct tierings *ts, struct pool *p, uint32_t window_s,
			 uint32_t history_s, uint32_t step_s, struct tiering_stats_report *out,
			 char *err, size_t err_len)
{
	struct tiering_pool *tp;
	struct state_interval win = { 0 }, *hist = NULL;
	struct state_tier_io pending[2];
	struct state_moves total;
	struct state_run *runs = NULL;
	int64_t now = time(NULL), minute_now = now / 60 * 60;
	size_t nr_runs = 0, nr_hist = 0;
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	*out = (struct tiering_stats_report){ 0 };
	if (r < 0)
		return r;
	if (window_s < 60 || (history_s && step_s < 60))
		return errbuf_fail(-EINVAL, err, err_len,
				   "window and step are at least 60 seconds");
	if (history_s) {
		nr_hist = (history_s + step_s - 1) / step_s;
		if (nr_hist > 10000)
			return errbuf_fail(-EINVAL, err, err_len,
					   "at most 10000 intervals: use a larger step");
		hist = calloc(nr_hist, sizeof(*hist));
		if (!hist)
			return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	}
	/* The minute now running is not stored yet: pending covers it. */
	r = state_history(ts->st, pool_state_id(p), minute_now + 60 - (int64_t)window_s / 60 * 60,
			  window_s / 60 * 60, 1, &win);
	if (r == 0 && hist)
		r = state_history(ts->st, pool_state_id(p),
				  minute_now + 60 - (int64_t)nr_hist * step_s, step_s, nr_hist, hist);
	if (r == 0)
		r = state_moves_total(ts->st, pool_state_id(p), &total);
	if (r == 0)
		r = state_runs_list(ts->st, pool_state_id(p), TIERING_RUNS_KEPT_IN_STATS, &runs,
				    &nr_runs);
	if (r < 0) {
		free(hist);
		return errbuf_fail(r, err, err_len, "cannot read the statistics of pool %s: %s",
				   pool_name(p), state_last_error(ts->st));
	}
	pool_io_pending(p, pending);
	for (int t = 0; t < 2; t++) {
		add_io(&win.io[t], &pending[t]);
		if (hist)
			add_io(&hist[nr_hist - 1].io[t], &pending[t]);
	}
	out->extent_size = pool_extent_size(p);
	out->migrating = pool_job_what(p) != NULL;
	out->window_seconds = window_s / 60 * 60;
	out->io[0] = win.io[0];
	out->io[1] = win.io[1];
	out->moved = total;
	if (nr_runs) {
		out->has_last_run = true;
		out->last_run = *tiering_live_run(tp, &runs[0]);
	}
	tiering_fill_schedule(tp, now, &out->schedule);
	out->step_seconds = step_s;
	out->history = hist;
	out->nr_history = nr_hist;
	free(runs);
	return 0;
}

void tiering_stats_report_destroy(struct tiering_stats_report *r)
{
	if (!r)
		return;
	free(r->history);
	r->history = NULL;
	r->nr_history = 0;
}
