/* SPDX-License-Identifier: GPL-2.0-or-later */
/* offline: moves of an inactive pool, copied by tierd itself with io_uring. */
#include "job.h"

#include <errno.h>
#include <string.h>

#include <ev.h>

#include "job-internal.h"
#include "log.h"
#include "migrate.h"
#include "pool-internal.h"
#include "ucopy.h"

int job_offline_start(struct pool_job *job, char *err, size_t err_len)
{
	struct pool *p = job->p;
	int r;

	for (size_t i = 0; i < job->nr_items; i++) {
		const struct migrate_item *it = &job->items[i];
		struct extmap_loc src = extmap_get(&p->sp.map, it->le);

		job->copies[i] = (struct ucopy_job){
			.src_fd = p->fd[src.dev], .dst_fd = p->fd[it->dev],
			.src_off = pool_pe_offset(p, src.dev, src.pe),
			.dst_off = pool_pe_offset(p, it->dev, it->pe),
			.len = p->sp.meta.extent_size,
		};
	}
	job->verifying = 0;
	memset(job->copy_failed, 0, sizeof(job->copy_failed));
	r = ucopy_start(job->ucopy, UCOPY_COPY, job->copies, job->nr_items);
	if (r < 0) {
		for (size_t i = 0; i < job->nr_items; i++)
			extmap_release(&p->sp.map, job->items[i].dev, job->items[i].pe);
		return pool_fail(p, r, err, err_len, "cannot start copying: %s", strerror(-r));
	}
	job->copying = 1;
	ev_io_start(job->loop, &job->copy_watch);
	return 0;
}

/*
 * Every copy (and, with verification, every comparison) has ended: remap the
 * extents that copied, commit, and go on. The sources were not written
 * meanwhile (the pool has no volume), so the commit is all it takes.
 */
static void job_offline_commit(struct pool_job *job)
{
	struct pool *p = job->p;
	struct extmap_loc old[JOB_BATCH];
	uint32_t changed[JOB_BATCH];
	char err[POOL_ERR_MAX];
	size_t n = 0;
	int r;

	for (size_t i = 0; i < job->nr_items; i++) {
		struct migrate_item *it = &job->items[i];
		int cr = job->copies[i].result;

		if (cr == 0 && !job->copy_failed[i]) {
			old[n] = extmap_get(&p->sp.map, it->le);
			/* The reservation goes first: remap wants a free destination. */
			extmap_release(&p->sp.map, it->dev, it->pe);
			extmap_remap(&p->sp.map, it->le, it->dev, it->pe);
			changed[n++] = it->le;
			it->result = 0;
			continue;
		}
		if (cr == -EILSEQ)
			log_pool_err(p->sp.meta.name, "extent %u differs from its copy on %s at"
				     " byte %llu; the copy is dropped", it->le,
				     p->sp.paths[it->dev],
				     (unsigned long long)job->copies[i].diff_at);
		extmap_release(&p->sp.map, it->dev, it->pe);
		it->result = cr ? cr : -EIO;
	}
	r = n ? pool_commit(p, changed, n, err, sizeof(err)) : 0;
	if (r < 0) {
		char again[POOL_ERR_MAX];

		for (size_t i = n; i-- > 0;)
			extmap_remap(&p->sp.map, changed[i], old[i].dev, old[i].pe);
		for (size_t i = 0; i < job->nr_items; i++)
			job->items[i].result = -EIO;
		/*
		 * A device may hold the new generation already, naming the copies.
		 * Write the sources back as a newer one: an activation over them
		 * would otherwise take writes that the next start, adopting the
		 * devices' newest generation, maps away from. If that fails too the
		 * pool is broken and is not activated until tierd restarts.
		 */
		if (pool_commit(p, changed, n, again, sizeof(again)) < 0)
			pool_set_broken(p, err);
	}
	job_batch_done(NULL, r, err, job);
}

static void job_copy_ready(struct ev_loop *loop, ev_io *w, int revents)
{
	struct pool_job *job = w->data;
	int r = ucopy_poll(job->ucopy);

	(void)loop;
	(void)revents;
	if (r == 0)
		return;
	ev_io_stop(job->loop, &job->copy_watch);
	job->copying = 0;
	if (r < 0) {
		for (size_t i = 0; i < job->nr_items; i++)
			job->copies[i].result = r;
		job_offline_commit(job);
		return;
	}
	if (job->p->ps->verify && !job->verifying) {
		/* Compare only what copied; a failed copy keeps its result. */
		for (size_t i = 0; i < job->nr_items; i++) {
			job->copy_failed[i] = job->copies[i].result != 0;
			if (job->copy_failed[i])
				job->copies[i].len = 0;
		}
		job->verifying = 1;
		r = ucopy_start(job->ucopy, UCOPY_VERIFY, job->copies, job->nr_items);
		if (r == 0) {
			job->copying = 1;
			ev_io_start(job->loop, &job->copy_watch);
			return;
		}
		for (size_t i = 0; i < job->nr_items; i++)
			job->copies[i].result = r;
	}
	job_offline_commit(job);
}

/* An inactive pool moves by tierd's own copy: its devices open, and an io_uring engine. */
int job_offline_prepare(struct pool *p, struct pool_job *job, char *err, size_t err_len)
{
	int r;

	/* Not the state's map if the devices are newer: a crash between the commit's two halves. */
	r = pool_open_current(p, false, err, err_len);
	if (r < 0)
		return r;
	r = ucopy_open(&job->ucopy, 0, 0, pool_block_size(p));
	if (r < 0) {
		pool_close_devices(p);
		return errbuf_fail(r, err, err_len,
				   "pool %s is inactive, and moving its extents needs io_uring, which is not"
				   " available (%s); activate the pool first", p->sp.meta.name,
				   strerror(-r));
	}
	job->offline = 1;
	ev_io_init(&job->copy_watch, job_copy_ready, ucopy_fd(job->ucopy), EV_READ);
	job->copy_watch.data = job;
	return 0;
}
