/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ucopy: the userspace copy/verify engine on io_uring, for data tierd moves or
 * checks itself rather than through the kernel's mirror target: verifying a
 * finished copy while the volume is suspended, moving extents of a
 * deactivated pool. O_DIRECT with registered buffers and several chunks in
 * flight; a copy is only reported done once every destination written was
 * fdatasync()ed.
 */
#ifndef TIERD_UCOPY_H
#define TIERD_UCOPY_H

#include <stddef.h>
#include <stdint.h>

#define UCOPY_DEFAULT_DEPTH 8u
#define UCOPY_DEFAULT_CHUNK (1u << 20)
#define UCOPY_MIN_ALIGN 4096u
#define UCOPY_MAX_DEPTH 256u
#define UCOPY_MAX_CHUNK (64u << 20)

enum ucopy_mode { UCOPY_COPY, UCOPY_VERIFY };

struct ucopy_job {
	int src_fd, dst_fd;                /* opened O_DIRECT by the caller */
	uint64_t src_off, dst_off, len;    /* bytes, multiples of the alignment */
	/*
	 * Out: 0; -EINVAL misaligned; -EBADF negative fd; -EIO a read found the
	 * end of the file or device (short read) or a write made no progress;
	 * another -errno from the kernel (a failed fdatasync lands on every job
	 * that wrote to that fd); -EILSEQ when VERIFY found a difference, the
	 * first one diff_at bytes into the job (src_off + diff_at on the source).
	 */
	int result;
	uint64_t diff_at;
};

struct ucopy;

/*
 * Set up a ring and depth buffers of chunk bytes, registered with it (pinned:
 * depth * chunk counts against RLIMIT_MEMLOCK without CAP_IPC_LOCK, -ENOMEM).
 * 0 takes the default for each (align: UCOPY_MIN_ALIGN). align is the devices'
 * logical block size (a power of two, at least 512): job offsets and lengths
 * must be multiples of it; buffers are aligned to it but at least to
 * UCOPY_MIN_ALIGN. chunk must be a multiple of twice the buffer alignment
 * (VERIFY reads half a chunk from each side into one buffer).
 * -EINVAL bad parameters, -ENOSYS/-EPERM io_uring unavailable (kernel,
 * io_uring_disabled sysctl, seccomp).
 */
int ucopy_open(struct ucopy **out, unsigned depth, size_t chunk, size_t align);
/*
 * The smallest chunk ucopy_open() takes for align that holds bytes in one
 * read: a 4 KiB piece needs a buffer of 8 KiB, so that VERIFY can halve it.
 */
size_t ucopy_chunk_fit(size_t bytes, size_t align);
void ucopy_close(struct ucopy *u);

/*
 * Blocking: run every job to completion. 0 if the engine ran (results in
 * jobs[i].result), -EBUSY if a batch from ucopy_start() is still running,
 * -errno if the engine itself failed (the ucopy is then only good for
 * ucopy_close()). For at most ucopy_open's depth jobs it allocates nothing,
 * nor does ucopy_start(): it may run while a volume is suspended.
 */
int ucopy_run(struct ucopy *u, enum ucopy_mode mode, struct ucopy_job *jobs, size_t nr);

/*
 * Non-blocking, for an event loop: start the jobs (kept alive by the caller
 * until ucopy_poll() returned 1). ucopy_fd() is a non-blocking eventfd that
 * becomes readable when completions are ready (also once after a start that
 * had nothing to submit); call ucopy_poll() then: it reaps, submits more and
 * returns 1 when every job and the final fdatasyncs are done, 0 while work
 * remains, -errno if the engine failed (as for ucopy_run). One batch at a
 * time: ucopy_start() while one runs is -EBUSY.
 */
int ucopy_start(struct ucopy *u, enum ucopy_mode mode, struct ucopy_job *jobs, size_t nr);
int ucopy_fd(const struct ucopy *u);
int ucopy_poll(struct ucopy *u);

/*
 * Bytes of the current (or last) batch done and in all. A failed job counts
 * as done with what it did not get to, so done reaches total at the end.
 */
void ucopy_progress(const struct ucopy *u, uint64_t *done, uint64_t *total);

#endif
