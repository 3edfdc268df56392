/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ucopy: io_uring copy and verify of O_DIRECT files on the host's filesystem. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ucopy.h"

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define SRC_SIZE (8 * MIB)
#define DST_SIZE (16 * MIB)
#define BENCH_SIZE (256 * MIB)

static char dir[] = "/var/tmp/test-ucopy.XXXXXX";

enum driver { DRIVE_RUN, DRIVE_POLL };

static const char *path_of(const char *name)
{
	static char buf[2][128];
	static int which;

	which ^= 1;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", dir, name);
	return buf[which];
}

static void cleanup(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static void skip(const char *why, int err)
{
	fprintf(stderr, "skip: %s: %s\n", why, strerror(err));
	cleanup();
	exit(77);
}

/* A byte that depends on the file's seed and the offset, so a copy to the wrong place shows. */
static uint8_t pattern(uint32_t seed, uint64_t off)
{
	uint64_t x = (off >> 3) * 0x9e3779b97f4a7c15ull ^ seed * 0xbf58476d1ce4e5b9ull;

	x ^= x >> 31;
	return (uint8_t)(x >> (8 * (off & 7)));
}

static void *aligned(size_t len)
{
	void *p = NULL;

	CHECK(posix_memalign(&p, 4096, len) == 0);
	return p;
}

/* Write the file through the page cache (seed 0: a sparse file of zeroes), open it O_DIRECT. */
static int make_file(const char *name, uint64_t size, uint32_t seed)
{
	uint8_t *buf = malloc(MIB);
	int fd;

	CHECK(buf != NULL);
	fd = open(path_of(name), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK_OK(ftruncate(fd, (off_t)size));
	for (uint64_t off = 0; seed && off < size; off += MIB) {
		for (uint64_t i = 0; i < MIB; i++)
			buf[i] = pattern(seed, off + i);
		CHECK(pwrite(fd, buf, MIB, (off_t)off) == (ssize_t)MIB);
	}
	CHECK_OK(fsync(fd));
	CHECK_OK(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
	close(fd);
	free(buf);
	fd = open(path_of(name), O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0 && errno == EINVAL)
		skip("O_DIRECT not supported under /var/tmp", errno);
	CHECK(fd >= 0);
	return fd;
}

/* Does [off, off + len) of fd hold seed's pattern as it was at pat_off? */
static void check_range(int fd, uint64_t off, uint64_t len, uint32_t seed, uint64_t pat_off)
{
	uint8_t *buf = aligned(64 * KIB);

	for (uint64_t done = 0; done < len; done += 64 * KIB) {
		size_t n = len - done < 64 * KIB ? len - done : 64 * KIB;

		CHECK(pread(fd, buf, n, (off_t)(off + done)) == (ssize_t)n);
		for (size_t i = 0; i < n; i++) {
			uint8_t want = seed ? pattern(seed, pat_off + done + i) : 0;

			if (buf[i] != want) {
				fprintf(stderr, "byte %ju: %#x != %#x\n",
					(uintmax_t)(off + done + i), buf[i], want);
				CHECK(!"data as expected");
			}
		}
	}
	free(buf);
}

static void poke(int fd, uint64_t off, uint8_t v)
{
	uint8_t *buf = aligned(4096);
	uint64_t base = off & ~4095ull;

	CHECK(pread(fd, buf, 4096, (off_t)base) == 4096);
	buf[off - base] = v;
	CHECK(pwrite(fd, buf, 4096, (off_t)base) == 4096);
	free(buf);
}

static int drive(struct ucopy *u, enum driver d, enum ucopy_mode mode, struct ucopy_job *jobs,
		 size_t nr)
{
	uint64_t done, total, last = 0;
	int r;

	if (d == DRIVE_RUN)
		return ucopy_run(u, mode, jobs, nr);
	r = ucopy_start(u, mode, jobs, nr);
	if (r < 0)
		return r;
	for (;;) {
		struct pollfd p = { .fd = ucopy_fd(u), .events = POLLIN };

		/* Nothing else may wake us: a lost wakeup hangs here and fails. */
		CHECK_INT(poll(&p, 1, 20000), 1);
		r = ucopy_poll(u);
		ucopy_progress(u, &done, &total);
		CHECK(done >= last && done <= total);
		last = done;
		if (r)
			break;
	}
	if (r == 1)
		CHECK_UINT(done, total);
	return r < 0 ? r : 0;
}

static void test_open_params(void)
{
	struct ucopy *u = (struct ucopy *)&u;

	CHECK_INT(ucopy_open(&u, 0, 0, 1000), -EINVAL); /* not a power of two */
	CHECK(u == NULL);
	CHECK_INT(ucopy_open(&u, 0, 0, 256), -EINVAL);
	CHECK_INT(ucopy_open(&u, 0, 4096, 512), -EINVAL); /* VERIFY could not halve it */
	CHECK_INT(ucopy_open(&u, 0, 12288, 0), -EINVAL);
	CHECK_INT(ucopy_open(&u, UCOPY_MAX_DEPTH + 1, 0, 0), -EINVAL);
	CHECK_INT(ucopy_open(&u, 0, UCOPY_MAX_CHUNK * 2, 0), -EINVAL);
	CHECK_INT(ucopy_open(&u, 0, 64 * KIB, 64 * KIB), -EINVAL);
	CHECK_OK(ucopy_open(&u, 0, 128 * KIB, 64 * KIB));
	ucopy_close(u);
	ucopy_close(NULL);
}

/* A piece of 4 KiB, or one of an odd block size, gets a chunk ucopy_open() takes. */
static void test_chunk_fit(void)
{
	static const size_t bytes[] = { 512, 4096, 8192, 12288, 16384, 64 * KIB, 1 };
	static const size_t align[] = { 512, 4096, 64 * KIB };
	struct ucopy *u;

	CHECK_UINT(ucopy_chunk_fit(4096, 512), 8192);
	CHECK_UINT(ucopy_chunk_fit(16384, 4096), 16384);
	CHECK_UINT(ucopy_chunk_fit(0, 0), 8192);
	for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
		for (size_t j = 0; j < sizeof(align) / sizeof(align[0]); j++) {
			size_t chunk = ucopy_chunk_fit(bytes[i], align[j]);
			int r;

			CHECK(chunk >= bytes[i]);
			r = ucopy_open(&u, 1, chunk, align[j]);
			if (r == -ENOSYS || r == -EPERM)
				skip("io_uring unavailable", -r);
			CHECK_OK(r);
			ucopy_close(u);
		}
	}
}

/*
 * Copy and verify a handful of jobs of odd sizes over two destination files,
 * with the data outside them untouched, then differences and failures.
 */
static void test_copy_verify(unsigned depth, size_t chunk, enum driver d)
{
	int src = make_file("src", SRC_SIZE, 1), dst = make_file("dst", DST_SIZE, 0);
	int dst2 = make_file("dst2", 2 * MIB, 0);
	struct ucopy_job jobs[] = {
		{ src, dst, 0, 0, MIB + 3 * 4096 },           /* not a multiple of the chunk */
		{ src, dst, 2 * MIB, 4 * MIB, 3 * MIB },      /* several chunks */
		{ src, dst, 5 * MIB, 9 * MIB, 0 },            /* nothing */
		{ src, dst, 7 * MIB, 10 * MIB, 4096 },        /* one block */
		{ src, dst2, 6 * MIB, 64 * KIB, MIB + 8192 }, /* a second destination */
	};
	size_t nr = sizeof(jobs) / sizeof(jobs[0]);
	uint64_t done, total, sum = 0;
	struct ucopy *u;
	int r;

	r = ucopy_open(&u, depth, chunk, 512);
	if (r == -ENOSYS || r == -EPERM)
		skip("io_uring unavailable", -r);
	CHECK_OK(r);

	for (size_t i = 0; i < nr; i++)
		jobs[i].result = 1;
	CHECK_OK(drive(u, d, UCOPY_COPY, jobs, nr));
	for (size_t i = 0; i < nr; i++) {
		CHECK_INT(jobs[i].result, 0);
		sum += jobs[i].len;
	}
	ucopy_progress(u, &done, &total);
	CHECK_UINT(total, sum);
	CHECK_UINT(done, sum);
	check_range(dst, 0, MIB + 3 * 4096, 1, 0);
	check_range(dst, MIB + 3 * 4096, 3 * MIB - 3 * 4096, 0, 0);
	check_range(dst, 4 * MIB, 3 * MIB, 1, 2 * MIB);
	check_range(dst, 7 * MIB, 3 * MIB, 0, 0);
	check_range(dst, 10 * MIB, 4096, 1, 7 * MIB);
	check_range(dst, 10 * MIB + 4096, DST_SIZE - 10 * MIB - 4096, 0, 0);
	check_range(dst2, 0, 64 * KIB, 0, 0);
	check_range(dst2, 64 * KIB, MIB + 8192, 1, 6 * MIB);

	/* The same jobs read back equal. */
	CHECK_OK(drive(u, d, UCOPY_VERIFY, jobs, nr));
	for (size_t i = 0; i < nr; i++)
		CHECK_INT(jobs[i].result, 0);

	/* Two differences in job 1, in different chunks: the first counts, whichever ends first. */
	poke(dst, 4 * MIB + 2 * MIB + 5, 0x5a ^ pattern(1, 2 * MIB + 2 * MIB + 5));
	poke(dst, 4 * MIB + MIB + MIB / 2 + 123, 0xa5 ^ pattern(1, 2 * MIB + MIB + MIB / 2 + 123));
	/* and one in the last byte of job 4 */
	poke(dst2, 64 * KIB + MIB + 8191, 0xff ^ pattern(1, 6 * MIB + MIB + 8191));
	CHECK_OK(drive(u, d, UCOPY_VERIFY, jobs, nr));
	CHECK_INT(jobs[0].result, 0);
	CHECK_INT(jobs[1].result, -EILSEQ);
	CHECK_UINT(jobs[1].diff_at, MIB + MIB / 2 + 123);
	CHECK_INT(jobs[2].result, 0);
	CHECK_INT(jobs[3].result, 0);
	CHECK_INT(jobs[4].result, -EILSEQ);
	CHECK_UINT(jobs[4].diff_at, MIB + 8191);
	ucopy_progress(u, &done, &total);
	CHECK_UINT(done, total);

	/*
	 * Reading past the end of a file is a short read, then 0: -EIO, as it is
	 * for a block device. The other jobs of the batch carry on.
	 */
	{
		struct ucopy_job bad[] = {
			{ src, dst, SRC_SIZE - 4096, 0, 64 * KIB }, /* runs off the end */
			{ src, dst, 100 * MIB, 0, 4096 },           /* starts beyond it */
			{ src, dst, 0, 0, 4096 + 512 },             /* fine: 512 is the alignment */
			{ src, dst, 0, 100, 4096 },                 /* misaligned */
			{ -1, dst, 0, 0, 4096 },
			{ src, dst, 3 * MIB, 12 * MIB, 2 * MIB },   /* fine */
		};

		CHECK_OK(drive(u, d, UCOPY_COPY, bad, 6));
		CHECK_INT(bad[0].result, -EIO);
		CHECK_INT(bad[1].result, -EIO);
		CHECK_INT(bad[2].result, 0);
		CHECK_INT(bad[3].result, -EINVAL);
		CHECK_INT(bad[4].result, -EBADF);
		CHECK_INT(bad[5].result, 0);
		check_range(dst, 12 * MIB, 2 * MIB, 1, 3 * MIB);
		ucopy_progress(u, &done, &total);
		CHECK_UINT(done, total);
		CHECK_OK(drive(u, d, UCOPY_VERIFY, bad, 6));
		CHECK_INT(bad[0].result, -EIO);
		CHECK_INT(bad[1].result, -EIO);
		CHECK_INT(bad[2].result, 0);
		CHECK_INT(bad[5].result, 0);
	}

	/* An empty batch ends at once, and still wakes a poller. */
	CHECK_OK(drive(u, d, UCOPY_COPY, NULL, 0));
	ucopy_close(u);
	close(src);
	close(dst);
	close(dst2);
}

/* More jobs than slots, scattered and in both directions of the file. */
static void test_many(unsigned depth, size_t chunk, enum driver d)
{
	enum { NR = 150 };
	int src = make_file("src", SRC_SIZE, 2), dst = make_file("dst", DST_SIZE, 0);
	struct ucopy_job *jobs = calloc(NR, sizeof(*jobs));
	uint64_t dst_off = 0;
	struct ucopy *u;

	CHECK(jobs != NULL);
	CHECK_OK(ucopy_open(&u, depth, chunk, 4096));
	for (size_t i = 0; i < NR; i++) {
		uint64_t len = (i % 7) * 4096 + (i % 3 ? 0 : 128 * KIB);

		jobs[i] = (struct ucopy_job){ src, dst, (i * 37 % 1500) * 4096, dst_off, len };
		dst_off += len + 4096;
	}
	CHECK(dst_off < DST_SIZE);
	CHECK_OK(drive(u, d, UCOPY_COPY, jobs, NR));
	for (size_t i = 0; i < NR; i++) {
		CHECK_INT(jobs[i].result, 0);
		check_range(dst, jobs[i].dst_off, jobs[i].len, 2, jobs[i].src_off);
		check_range(dst, jobs[i].dst_off + jobs[i].len, 4096, 0, 0);
	}
	CHECK_OK(drive(u, d, UCOPY_VERIFY, jobs, NR));
	for (size_t i = 0; i < NR; i++)
		CHECK_INT(jobs[i].result, 0);
	ucopy_close(u);
	free(jobs);
	close(src);
	close(dst);
}

static void test_busy(void)
{
	int src = make_file("src", SRC_SIZE, 3), dst = make_file("dst", DST_SIZE, 0);
	struct ucopy_job job = { src, dst, 0, 0, SRC_SIZE };
	struct ucopy *u;

	CHECK_OK(ucopy_open(&u, 4, 256 * KIB, 4096));
	CHECK_OK(ucopy_start(u, UCOPY_COPY, &job, 1));
	CHECK_INT(ucopy_start(u, UCOPY_COPY, &job, 1), -EBUSY);
	CHECK_INT(ucopy_run(u, UCOPY_VERIFY, &job, 1), -EBUSY);
	/* Closing with requests in flight waits for them. */
	ucopy_close(u);

	CHECK_OK(ucopy_open(&u, 4, 256 * KIB, 4096));
	CHECK_OK(ucopy_start(u, UCOPY_COPY, &job, 1));
	while (ucopy_poll(u) == 0) {
		struct pollfd p = { .fd = ucopy_fd(u), .events = POLLIN };

		CHECK_INT(poll(&p, 1, 20000), 1);
	}
	CHECK_INT(job.result, 0);
	CHECK_INT(ucopy_poll(u), 1); /* and stays done */
	CHECK_OK(ucopy_run(u, UCOPY_VERIFY, &job, 1));
	CHECK_INT(job.result, 0);
	ucopy_close(u);
	close(src);
	close(dst);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double mbps(double t)
{
	return (double)BENCH_SIZE / MIB / t;
}

static double time_ucopy(int src, int dst, enum ucopy_mode mode)
{
	struct ucopy_job job = { src, dst, 0, 0, BENCH_SIZE };
	struct ucopy *u;
	double t0;

	CHECK_OK(ucopy_open(&u, 0, 0, 0));
	t0 = now();
	CHECK_OK(ucopy_run(u, mode, &job, 1));
	t0 = now() - t0;
	CHECK_INT(job.result, 0);
	ucopy_close(u);
	return t0;
}

static double time_plain(int src, int dst)
{
	void *buf = aligned(MIB);
	double t0 = now();

	for (uint64_t off = 0; off < BENCH_SIZE; off += MIB) {
		CHECK(pread(src, buf, MIB, (off_t)off) == (ssize_t)MIB);
		CHECK(pwrite(dst, buf, MIB, (off_t)off) == (ssize_t)MIB);
	}
	CHECK_OK(fdatasync(dst));
	free(buf);
	return now() - t0;
}

/*
 * Not asserted: a shared disk's speed says nothing about the code. Into new
 * files every write allocates (ext4 runs those one at a time); overwriting
 * is what a block device sees.
 */
static void bench(void)
{
	int src = make_file("bsrc", BENCH_SIZE, 4);
	int d1 = make_file("b1", 0, 0), d2 = make_file("b2", 0, 0);
	double u_new, p_new, u_over, p_over, verify, cp;
	char cmd[512];
	double t0;

	u_new = time_ucopy(src, d1, UCOPY_COPY);
	p_new = time_plain(src, d2);
	u_over = time_ucopy(src, d1, UCOPY_COPY);
	p_over = time_plain(src, d2);
	verify = time_ucopy(src, d1, UCOPY_VERIFY);

	/* cp reads through the page cache: drop what the copies above left. */
	CHECK_OK(posix_fadvise(src, 0, 0, POSIX_FADV_DONTNEED));
	snprintf(cmd, sizeof(cmd), "cp --reflink=never %s %s/b3 && sync --data %s/b3",
		 path_of("bsrc"), dir, dir);
	t0 = now();
	CHECK_INT(system(cmd), 0);
	cp = now() - t0;

	fprintf(stderr,
		"bench 256 MiB, MB/s: new file: ucopy %.0f, O_DIRECT pread/pwrite %.0f (ucopy "
		"%.2fx), cp+sync %.0f (ucopy %.2fx); overwrite: ucopy %.0f, pread/pwrite %.0f "
		"(ucopy %.2fx); ucopy verify %.0f\n",
		mbps(u_new), mbps(p_new), p_new / u_new, mbps(cp), cp / u_new, mbps(u_over),
		mbps(p_over), p_over / u_over, mbps(verify));
	close(src);
	close(d1);
	close(d2);
}

int main(void)
{
	struct ucopy *u;
	int r;

	CHECK(mkdtemp(dir) != NULL);
	r = ucopy_open(&u, 1, 0, 0);
	if (r == -ENOSYS || r == -EPERM)
		skip("io_uring unavailable", -r);
	CHECK_OK(r);
	ucopy_close(u);

	test_open_params();
	test_chunk_fit();
	for (int d = DRIVE_RUN; d <= DRIVE_POLL; d++) {
		test_copy_verify(1, 0, (enum driver)d);
		test_copy_verify(16, 64 * KIB, (enum driver)d);
		test_copy_verify(0, 0, (enum driver)d);
		test_many(1, 64 * KIB, (enum driver)d);
		test_many(16, 64 * KIB, (enum driver)d);
	}
	test_busy();
	if (!getenv("UCOPY_NO_BENCH"))
		bench();
	cleanup();
	return 0;
}
