/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ucopy.h"

#include <errno.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

/*
 * A request's user_data: a slot's I/O is its index * 2 + side; an fdatasync
 * sets this bit over its index into fds[], so both fit one 64-bit value.
 */
#define UCOPY_TAG_SYNC (1ull << 63)
/* A kernel that keeps answering EINTR/EAGAIN to the same request will not change its mind. */
#define UCOPY_MAX_RETRIES 100u
/* O_DIRECT transfers stop off a sector boundary only where the file ends. */
#define UCOPY_SECTOR 512u

enum ucopy_phase { UCOPY_IDLE, UCOPY_RUNNING, UCOPY_SYNCING, UCOPY_DONE, UCOPY_BROKEN };
enum ucopy_stage { UCOPY_READ, UCOPY_WRITE };

/* One chunk in flight: its reads, then (COPY) its write, all in one registered buffer. */
struct ucopy_slot {
	char *buf;
	size_t job;
	uint64_t off; /* into the job */
	uint32_t len;
	/* Bytes so far; side 0: the source read, then the write; side 1: the destination read. */
	uint32_t done[2];
	unsigned retries[2];
	unsigned pending; /* requests of this slot in the kernel */
	int err;
	enum ucopy_stage stage;
};

struct ucopy {
	struct io_uring ring;
	bool ring_ok;
	int efd;
	unsigned depth;
	size_t chunk;
	size_t align;
	char *mem;
	struct ucopy_slot *slots;
	unsigned *free_slots;
	unsigned nr_free;

	/* The batch. */
	enum ucopy_phase phase;
	int err; /* UCOPY_BROKEN's cause */
	enum ucopy_mode mode;
	struct ucopy_job *jobs;
	size_t nr;
	size_t step; /* bytes per slot and side */
	size_t cur_job;
	uint64_t cur_off;
	int *fds; /* destinations to fdatasync, sorted, each once */
	size_t fds_cap, nr_fds, next_fd;
	unsigned syncs; /* in the kernel */
	unsigned sync_retries;
	uint64_t done, total;
};

size_t ucopy_chunk_fit(size_t bytes, size_t align)
{
	size_t unit = 2 * (align > UCOPY_MIN_ALIGN ? align : UCOPY_MIN_ALIGN);

	return bytes ? (bytes + unit - 1) / unit * unit : unit;
}

int ucopy_open(struct ucopy **out, unsigned depth, size_t chunk, size_t align)
{
	struct iovec *iov = NULL;
	struct ucopy *u;
	size_t balign;
	int r;

	*out = NULL;
	depth = depth ? depth : UCOPY_DEFAULT_DEPTH;
	chunk = chunk ? chunk : UCOPY_DEFAULT_CHUNK;
	align = align ? align : UCOPY_MIN_ALIGN;
	if (align < UCOPY_SECTOR || (align & (align - 1)))
		return -EINVAL;
	balign = align > UCOPY_MIN_ALIGN ? align : UCOPY_MIN_ALIGN;
	if (depth > UCOPY_MAX_DEPTH || chunk > UCOPY_MAX_CHUNK || chunk % (2 * balign))
		return -EINVAL;

	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->efd = -1;
	u->depth = depth;
	u->chunk = chunk;
	u->align = align;

	/* Room for both reads of every VERIFY slot, so a full queue never stops a refill. */
	r = io_uring_queue_init(2 * depth, &u->ring, 0);
	if (r < 0)
		goto err;
	u->ring_ok = true;

	u->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->efd < 0) {
		r = -errno;
		goto err;
	}
	r = io_uring_register_eventfd(&u->ring, u->efd);
	if (r < 0)
		goto err;

	r = -posix_memalign((void **)&u->mem, balign, depth * chunk);
	if (r < 0) {
		u->mem = NULL;
		goto err;
	}
	u->slots = calloc(depth, sizeof(*u->slots));
	u->free_slots = calloc(depth, sizeof(*u->free_slots));
	iov = calloc(depth, sizeof(*iov));
	/*
	 * Room to sync the destinations of depth jobs: a COPY of no more jobs
	 * than that allocates nothing, so it may run while a volume is
	 * suspended (migrate.c's held copies).
	 */
	u->fds = calloc(depth, sizeof(*u->fds));
	u->fds_cap = depth;
	if (!u->slots || !u->free_slots || !iov || !u->fds) {
		r = -ENOMEM;
		goto err;
	}
	for (unsigned i = 0; i < depth; i++) {
		u->slots[i].buf = u->mem + i * chunk;
		iov[i].iov_base = u->slots[i].buf;
		iov[i].iov_len = chunk;
		u->free_slots[u->nr_free++] = depth - 1 - i;
	}
	/* Pinned once here instead of on every request. */
	r = io_uring_register_buffers(&u->ring, iov, depth);
	if (r < 0)
		goto err;
	free(iov);
	*out = u;
	return 0;

err:
	free(iov);
	ucopy_close(u);
	return r;
}

void ucopy_close(struct ucopy *u)
{
	if (!u)
		return;
	/* Before the buffers go: it waits for requests that may still be writing into them. */
	if (u->ring_ok)
		io_uring_queue_exit(&u->ring);
	if (u->efd >= 0)
		close(u->efd);
	free(u->fds);
	free(u->free_slots);
	free(u->slots);
	free(u->mem);
	free(u);
}

int ucopy_fd(const struct ucopy *u)
{
	return u->efd;
}

void ucopy_progress(const struct ucopy *u, uint64_t *done, uint64_t *total)
{
	*done = u->done;
	*total = u->total;
}

static void ucopy_nudge(struct ucopy *u)
{
	uint64_t one = 1;
	ssize_t n = write(u->efd, &one, sizeof(one));

	(void)n; /* only fails if the counter is already huge, i.e. readable anyway */
}

static void ucopy_drain(struct ucopy *u)
{
	uint64_t v;
	ssize_t n = read(u->efd, &v, sizeof(v));

	(void)n; /* EAGAIN: nothing to drain */
}

static int ucopy_get_sqe(struct ucopy *u, struct io_uring_sqe **out)
{
	int r;

	*out = io_uring_get_sqe(&u->ring);
	if (*out)
		return 0;
	/* The ring is sized so this should not happen; make room rather than fail if it does. */
	r = io_uring_submit(&u->ring);
	if (r < 0 && r != -EAGAIN && r != -EBUSY)
		return r;
	*out = io_uring_get_sqe(&u->ring);
	return *out ? 0 : -EBUSY;
}

static int ucopy_submit(struct ucopy *u)
{
	int r;

	if (!io_uring_sq_ready(&u->ring))
		return 0;
	r = io_uring_submit(&u->ring);
	if (r >= 0)
		return 0;
	if (r != -EAGAIN && r != -EBUSY && r != -EINTR)
		return r;
	/* The requests stay queued; with nothing in flight no completion would bring us back. */
	ucopy_nudge(u);
	return 0;
}

/* Queue what is left of one side of a slot's current stage. */
static int ucopy_queue(struct ucopy *u, struct ucopy_slot *s, unsigned side)
{
	const struct ucopy_job *j = &u->jobs[s->job];
	unsigned idx = (unsigned)(s - u->slots);
	char *buf = s->buf + side * u->step + s->done[side];
	unsigned n = s->len - s->done[side];
	uint64_t at = s->off + s->done[side];
	struct io_uring_sqe *sqe;
	int r;

	r = ucopy_get_sqe(u, &sqe);
	if (r < 0)
		return r;
	if (s->stage == UCOPY_WRITE)
		io_uring_prep_write_fixed(sqe, j->dst_fd, buf, n, j->dst_off + at, (int)idx);
	else if (side)
		io_uring_prep_read_fixed(sqe, j->dst_fd, buf, n, j->dst_off + at, (int)idx);
	else
		io_uring_prep_read_fixed(sqe, j->src_fd, buf, n, j->src_off + at, (int)idx);
	io_uring_sqe_set_data64(sqe, (uint64_t)idx << 1 | side);
	s->pending++;
	return 0;
}

/*
 * Record a job's failure. An I/O error outranks a difference (diff_at could
 * be wrong if part of the job was not compared); of several differences the
 * first counts, whatever order the chunks completed in.
 */
static void ucopy_job_fail(struct ucopy *u, size_t idx, int err, uint64_t at)
{
	struct ucopy_job *j = &u->jobs[idx];

	if (!j->result) {
		/* What will not be issued now is done as far as progress goes. */
		if (u->cur_job == idx) {
			u->done += j->len - u->cur_off;
			u->cur_off = j->len;
		}
		j->result = err;
		j->diff_at = at;
	} else if (j->result == -EILSEQ && err != -EILSEQ) {
		j->result = err;
		j->diff_at = 0;
	} else if (j->result == -EILSEQ && at < j->diff_at) {
		j->diff_at = at;
	}
}

static void ucopy_compare(struct ucopy *u, const struct ucopy_slot *s)
{
	const char *a = s->buf, *b = s->buf + u->step;
	uint32_t i = 0;

	if (!memcmp(a, b, s->len))
		return;
	while (a[i] == b[i])
		i++;
	ucopy_job_fail(u, s->job, -EILSEQ, s->off + i);
}

/* Every request of the slot's stage has ended: write, compare or give the slot back. */
static int ucopy_slot_next(struct ucopy *u, struct ucopy_slot *s)
{
	const struct ucopy_job *j = &u->jobs[s->job];

	if (s->err) {
		ucopy_job_fail(u, s->job, s->err, 0);
	} else if (u->mode == UCOPY_COPY) {
		/* No point writing the rest of a job that already failed. */
		if (s->stage == UCOPY_READ && !j->result) {
			s->stage = UCOPY_WRITE;
			s->done[0] = 0;
			s->retries[0] = 0;
			return ucopy_queue(u, s, 0);
		}
	} else if (!j->result || j->result == -EILSEQ) {
		/* Even after a difference: this chunk may hold an earlier one. */
		ucopy_compare(u, s);
	}
	u->done += s->len;
	u->free_slots[u->nr_free++] = (unsigned)(s - u->slots);
	return 0;
}

static int ucopy_slot_complete(struct ucopy *u, struct ucopy_slot *s, unsigned side, int res)
{
	int err = 0;

	s->pending--;
	if (res > 0) {
		s->done[side] += (uint32_t)res;
		s->retries[side] = 0;
		if (s->done[side] < s->len) {
			if (s->stage == UCOPY_READ && res % UCOPY_SECTOR)
				err = -EIO;
			else if (!s->err)
				return ucopy_queue(u, s, side);
		}
	} else if ((res == -EINTR || res == -EAGAIN) && ++s->retries[side] <= UCOPY_MAX_RETRIES) {
		if (!s->err)
			return ucopy_queue(u, s, side);
	} else {
		/* 0: a read at the end of the file or device, or a write that made no progress. */
		err = res ? res : -EIO;
	}
	if (err && !s->err)
		s->err = err;
	/* The other side still uses the buffer. */
	if (s->pending)
		return 0;
	return ucopy_slot_next(u, s);
}

static int ucopy_queue_sync(struct ucopy *u, size_t i)
{
	struct io_uring_sqe *sqe;
	int r;

	r = ucopy_get_sqe(u, &sqe);
	if (r < 0)
		return r;
	io_uring_prep_fsync(sqe, u->fds[i], IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_data64(sqe, UCOPY_TAG_SYNC | i);
	u->syncs++;
	return 0;
}

static int ucopy_sync_complete(struct ucopy *u, size_t i, int res)
{
	u->syncs--;
	if ((res == -EINTR || res == -EAGAIN) && ++u->sync_retries <= UCOPY_MAX_RETRIES)
		return ucopy_queue_sync(u, i);
	if (res >= 0)
		return 0;
	/* The data of every job that wrote to this fd may be lost. */
	for (size_t k = 0; k < u->nr; k++) {
		struct ucopy_job *j = &u->jobs[k];

		if (j->dst_fd == u->fds[i] && j->len && !j->result)
			j->result = res;
	}
	return 0;
}

static int ucopy_complete(struct ucopy *u, uint64_t data, int res)
{
	if (data & UCOPY_TAG_SYNC)
		return ucopy_sync_complete(u, (size_t)(data & ~UCOPY_TAG_SYNC), res);
	if ((data >> 1) >= u->depth)
		return -EPROTO;
	return ucopy_slot_complete(u, &u->slots[data >> 1], (unsigned)(data & 1), res);
}

static int ucopy_reap(struct ucopy *u)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;
	int r = 0;

	io_uring_for_each_cqe(&u->ring, head, cqe) {
		n++;
		r = ucopy_complete(u, io_uring_cqe_get_data64(cqe), cqe->res);
		if (r < 0)
			break;
	}
	io_uring_cq_advance(&u->ring, n);
	return r;
}

/* Moves the cursor past finished and failed jobs; false once nothing is left to issue. */
static bool ucopy_next_chunk(struct ucopy *u)
{
	for (; u->cur_job < u->nr; u->cur_job++, u->cur_off = 0) {
		const struct ucopy_job *j = &u->jobs[u->cur_job];

		if (!j->result && u->cur_off < j->len)
			return true;
	}
	return false;
}

static int ucopy_fill(struct ucopy *u)
{
	int r;

	while (u->nr_free && ucopy_next_chunk(u)) {
		const struct ucopy_job *j = &u->jobs[u->cur_job];
		struct ucopy_slot *s = &u->slots[u->free_slots[--u->nr_free]];
		uint64_t left = j->len - u->cur_off;

		s->job = u->cur_job;
		s->off = u->cur_off;
		s->len = (uint32_t)(left < u->step ? left : u->step);
		memset(s->done, 0, sizeof(s->done));
		memset(s->retries, 0, sizeof(s->retries));
		s->pending = 0;
		s->err = 0;
		s->stage = UCOPY_READ;
		u->cur_off += s->len;
		r = ucopy_queue(u, s, 0);
		if (r == 0 && u->mode == UCOPY_VERIFY)
			r = ucopy_queue(u, s, 1);
		if (r < 0)
			return r;
	}
	return 0;
}

static int ucopy_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void ucopy_sync_begin(struct ucopy *u)
{
	size_t n = 0;

	for (size_t i = 0; i < u->nr; i++)
		if (!u->jobs[i].result && u->jobs[i].len)
			u->fds[n++] = u->jobs[i].dst_fd;
	qsort(u->fds, n, sizeof(*u->fds), ucopy_cmp_int);
	u->nr_fds = 0;
	for (size_t i = 0; i < n; i++)
		if (!u->nr_fds || u->fds[u->nr_fds - 1] != u->fds[i])
			u->fds[u->nr_fds++] = u->fds[i];
	u->next_fd = 0;
	u->phase = UCOPY_SYNCING;
}

/* Issue what can be issued and move the batch on; any error here is the engine's. */
static int ucopy_advance(struct ucopy *u)
{
	int r = 0;

	if (u->phase == UCOPY_RUNNING) {
		r = ucopy_fill(u);
		if (r == 0 && u->nr_free == u->depth && !ucopy_next_chunk(u)) {
			if (u->mode == UCOPY_COPY)
				ucopy_sync_begin(u);
			else
				u->phase = UCOPY_DONE;
		}
	}
	if (r == 0 && u->phase == UCOPY_SYNCING) {
		while (r == 0 && u->syncs < 2 * u->depth && u->next_fd < u->nr_fds)
			r = ucopy_queue_sync(u, u->next_fd++);
		if (r == 0 && !u->syncs)
			u->phase = UCOPY_DONE;
	}
	if (r == 0)
		r = ucopy_submit(u);
	return r;
}

static int ucopy_broken(struct ucopy *u, int err)
{
	u->phase = UCOPY_BROKEN;
	u->err = err;
	return err;
}

static int ucopy_check_job(const struct ucopy *u, const struct ucopy_job *j)
{
	uint64_t mask = u->align - 1;

	if (j->src_fd < 0 || j->dst_fd < 0)
		return -EBADF;
	if ((j->src_off | j->dst_off | j->len) & mask)
		return -EINVAL;
	/* Both ends must fit the kernel's loff_t. */
	if (j->len > INT64_MAX || j->src_off > INT64_MAX - j->len ||
	    j->dst_off > INT64_MAX - j->len)
		return -EINVAL;
	return 0;
}

int ucopy_start(struct ucopy *u, enum ucopy_mode mode, struct ucopy_job *jobs, size_t nr)
{
	int r;

	if (u->phase == UCOPY_BROKEN)
		return u->err;
	if (u->phase == UCOPY_RUNNING || u->phase == UCOPY_SYNCING)
		return -EBUSY;
	if ((mode != UCOPY_COPY && mode != UCOPY_VERIFY) || (nr && !jobs))
		return -EINVAL;
	if (mode == UCOPY_COPY && nr > u->fds_cap) {
		int *fds = realloc(u->fds, nr * sizeof(*fds));

		if (!fds)
			return -ENOMEM;
		u->fds = fds;
		u->fds_cap = nr;
	}

	/* Left over from the last batch: would make the caller poll for nothing. */
	ucopy_drain(u);
	u->mode = mode;
	u->jobs = jobs;
	u->nr = nr;
	u->step = mode == UCOPY_VERIFY ? u->chunk / 2 : u->chunk;
	u->cur_job = 0;
	u->cur_off = 0;
	u->nr_fds = 0;
	u->next_fd = 0;
	u->syncs = 0;
	u->sync_retries = 0;
	u->done = 0;
	u->total = 0;
	for (size_t i = 0; i < nr; i++) {
		jobs[i].result = ucopy_check_job(u, &jobs[i]);
		jobs[i].diff_at = 0;
		u->total += jobs[i].len;
		if (jobs[i].result)
			u->done += jobs[i].len;
	}
	u->phase = UCOPY_RUNNING;
	r = ucopy_advance(u);
	if (r < 0)
		return ucopy_broken(u, r);
	if (u->phase == UCOPY_DONE)
		ucopy_nudge(u);
	return 0;
}

int ucopy_poll(struct ucopy *u)
{
	int r;

	if (u->phase == UCOPY_BROKEN)
		return u->err;
	if (u->phase == UCOPY_IDLE || u->phase == UCOPY_DONE)
		return 1;
	/* Drained before reaping: a completion after the reap leaves the fd readable again. */
	ucopy_drain(u);
	r = ucopy_reap(u);
	if (r == 0)
		r = ucopy_advance(u);
	if (r < 0)
		return ucopy_broken(u, r);
	return u->phase == UCOPY_DONE;
}

int ucopy_run(struct ucopy *u, enum ucopy_mode mode, struct ucopy_job *jobs, size_t nr)
{
	int r;

	r = ucopy_start(u, mode, jobs, nr);
	while (r == 0) {
		r = ucopy_poll(u);
		if (r)
			break;
		r = io_uring_submit_and_wait(&u->ring, 1);
		if (r >= 0 || r == -EINTR || r == -EAGAIN || r == -EBUSY)
			r = 0;
		else
			ucopy_broken(u, r);
	}
	return r < 0 ? r : 0;
}
