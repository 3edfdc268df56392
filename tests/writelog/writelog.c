/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * writelog: the write-log crash harness's tools (docs/testing.md, "Write-log
 * replay").
 *
 *   writelog tick --interval-ms MS DM...      the common clock: suspend every
 *                                             DM, mark each log tick:N, resume
 *   writelog write --device VOL --journal J   known data with a journal of what
 *                [--fill] [--blocks N] [--rate W/S] [--sync-every K]
 *                [--mark DM,...] [--seed S]   was written and acknowledged
 *   writelog replay --log L --image I ...     each crash point of the logs in
 *                --check CMD [--max N]        turn: the images brought to it,
 *                                             then CMD run to judge it
 *   writelog overlay --log L --from A --to B  the part of a flush's group that
 *                --seed S --target DEV        reached the media, onto DEV
 *   writelog check --device VOL --journal J   every block holds data written
 *                --acked S                    to it, none older than acked
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "dmctl.h"
#include "wlog.h"

#define BLOCK 4096
#define BLOCK_MAGIC 0x544c574452454954ULL /* "TIERDWLT" */
#define JOURNAL_MAGIC 0x314a4c57u         /* "WLJ1" */

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("writelog: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000u, .tv_nsec = ns % 1000000000u };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop_requested)
		;
}

static void catch_stop(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/* ---- tick ------------------------------------------------------------------------ */

static int cmd_tick(int argc, char **argv)
{
	unsigned long interval_ms = 20, n = 0;
	int c;

	static const struct option opts[] = { { "interval-ms", required_argument, NULL, 'i' },
					       { 0 } };
	while ((c = getopt_long(argc, argv, "i:", opts, NULL)) != -1) {
		if (c != 'i')
			return 2;
		interval_ms = strtoul(optarg, NULL, 10);
	}
	if (optind >= argc || argc - optind > WLOG_MAX_DEVS)
		die("tick: give 1 to %d device-mapper names", WLOG_MAX_DEVS);
	dmctl_init();
	catch_stop();
	while (!stop_requested) {
		char mark[32];
		int r = 0;

		snprintf(mark, sizeof(mark), "mark tick:%lu", n);
		/* While all are suspended nothing completes anywhere: one instant. */
		for (int i = optind; i < argc && r == 0; i++)
			r = dmctl_suspend(argv[i], 0);
		for (int i = optind; i < argc && r == 0; i++)
			r = dmctl_message(argv[i], 0, mark, NULL);
		for (int i = argc - 1; i >= optind; i--)
			dmctl_resume(argv[i]);
		if (r < 0)
			die("tick %lu: %s", n, dmctl_last_error());
		n++;
		sleep_ns(interval_ms * 1000000u);
	}
	printf("writelog: %lu ticks\n", n);
	return 0;
}

/* ---- block contents and the journal ----------------------------------------------- */

struct journal_head {
	uint32_t magic, blocks;
	uint64_t stride;
};

struct journal_rec {
	uint32_t kind; /* 'W' a write about to be issued, 'A' every write <= seq acknowledged */
	uint32_t block;
	uint64_t seq;
};

static void block_fill(unsigned char *buf, uint32_t block, uint64_t seq)
{
	uint64_t x = (uint64_t)block * 0x9e3779b97f4a7c15ULL ^ seq * 0xbf58476d1ce4e5b9ULL;
	uint64_t head[3] = { BLOCK_MAGIC, block, seq };

	memcpy(buf, head, sizeof(head));
	for (size_t i = sizeof(head); i < BLOCK; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + i, &x, 8);
	}
}

/* The seq a block holds if it is one of ours for that block, else 0. */
static uint64_t block_seq(const unsigned char *buf, uint32_t block)
{
	static unsigned char want[BLOCK] __attribute__((aligned(BLOCK)));
	uint64_t head[3];

	memcpy(head, buf, sizeof(head));
	if (head[0] != BLOCK_MAGIC || head[1] != block || head[2] == 0)
		return 0;
	block_fill(want, block, head[2]);
	return memcmp(want, buf, BLOCK) == 0 ? head[2] : 0;
}

static int all_zero(const unsigned char *buf)
{
	for (size_t i = 0; i < BLOCK; i++)
		if (buf[i])
			return 0;
	return 1;
}

/* ---- write ----------------------------------------------------------------------- */

/*
 * How many crash points of each phase were judged, in the order the phases
 * came: "writelog: judged by phase: attach 3, promote-1 4, ...", so that a
 * run shows which steps of its scenario its sample reached.
 */
static void print_phases(const struct wlog_plan *plan, const unsigned char *use)
{
	const char *name[64];
	size_t count[64], nr = 0;

	for (size_t i = 0; i < plan->nr; i++) {
		const char *phase = plan->cut[i].phase[0] ? plan->cut[i].phase : "none";
		size_t k = 0;

		if (!use[i])
			continue;
		while (k < nr && strcmp(name[k], phase))
			k++;
		if (k == nr) {
			if (nr == sizeof(name) / sizeof(name[0]))
				continue;
			name[nr] = phase;
			count[nr++] = 0;
		}
		count[k]++;
	}
	printf("writelog: judged by phase:");
	for (size_t k = 0; k < nr; k++)
		printf("%s %s %zu", k ? "," : "", name[k], count[k]);
	printf("\n");
}

static void send_marks(char *names, const char *mark)
{
	char *save = NULL, *copy = strdup(names ? names : "");

	for (char *n = strtok_r(copy, ",", &save); n; n = strtok_r(NULL, ",", &save))
		if (dmctl_message(n, 0, mark, NULL) < 0)
			die("mark %s on %s: %s", mark, n, dmctl_last_error());
	free(copy);
}

static int cmd_write(int argc, char **argv)
{
	const char *device = NULL, *journal = NULL;
	char *marks = NULL;
	unsigned long blocks = 4096, rate = 0, sync_every = 8, seed = 1;
	int fill = 0, c, fd, jfd;
	struct journal_head jh;
	uint64_t seq = 0, since_sync = 0, next_sync, writes = 0, syncs = 0, t0;
	unsigned char *buf;
	struct stat st;

	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "journal", required_argument, NULL, 'j' },
		{ "fill", no_argument, NULL, 'f' },
		{ "blocks", required_argument, NULL, 'b' },
		{ "rate", required_argument, NULL, 'r' },
		{ "sync-every", required_argument, NULL, 'k' },
		{ "mark", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ 0 }
	};
	while ((c = getopt_long(argc, argv, "d:j:fb:r:k:m:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': device = optarg; break;
		case 'j': journal = optarg; break;
		case 'f': fill = 1; break;
		case 'b': blocks = strtoul(optarg, NULL, 10); break;
		case 'r': rate = strtoul(optarg, NULL, 10); break;
		case 'k': sync_every = strtoul(optarg, NULL, 10); break;
		case 'm': marks = optarg; break;
		case 's': seed = strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (!device || !journal || blocks == 0 || sync_every == 0)
		die("write: --device and --journal are needed");
	dmctl_init();
	catch_stop();
	fd = open(device, O_RDWR | O_DIRECT);
	jfd = open(journal, O_RDWR | O_CREAT | O_APPEND, 0644);
	if (fd < 0 || jfd < 0)
		die("write: cannot open %s or %s: %s", device, journal, strerror(errno));
	if (fstat(jfd, &st) < 0)
		die("write: %s: %s", journal, strerror(errno));
	if (st.st_size == 0) {
		uint64_t size;

		if (ioctl(fd, BLKGETSIZE64, &size) < 0)
			die("write: %s: %s", device, strerror(errno));
		jh = (struct journal_head){ .magic = JOURNAL_MAGIC, .blocks = (uint32_t)blocks,
					    .stride = size / blocks / BLOCK * BLOCK };
		if (jh.stride == 0)
			die("write: %s is too small for %lu blocks", device, blocks);
		if (write(jfd, &jh, sizeof(jh)) != sizeof(jh))
			die("write: %s: %s", journal, strerror(errno));
	} else {
		struct journal_rec rec;

		if (pread(jfd, &jh, sizeof(jh), 0) != sizeof(jh) || jh.magic != JOURNAL_MAGIC)
			die("write: %s is not a journal", journal);
		/* Go on from the journal's last seq. */
		for (off_t off = sizeof(jh); pread(jfd, &rec, sizeof(rec), off) == sizeof(rec);
		     off += sizeof(rec))
			if (rec.seq > seq)
				seq = rec.seq;
	}
	if (posix_memalign((void **)&buf, BLOCK, BLOCK))
		die("write: out of memory");
	srandom((unsigned)seed);
	next_sync = 1 + (uint64_t)random() % sync_every;
	t0 = now_ns();
	for (uint64_t i = 0; !stop_requested && (!fill || i < jh.blocks); i++) {
		uint32_t block = fill ? (uint32_t)i : (uint32_t)(random() % jh.blocks);
		struct journal_rec rec = { 'W', block, ++seq };

		if (write(jfd, &rec, sizeof(rec)) != sizeof(rec))
			die("write: journal: %s", strerror(errno));
		block_fill(buf, block, seq);
		if (pwrite(fd, buf, BLOCK, (off_t)(block * jh.stride)) != BLOCK)
			die("write: block %u: %s", block, strerror(errno));
		writes++;
		if (fill ? i + 1 == jh.blocks : ++since_sync >= next_sync) {
			char mark[48];

			if (fdatasync(fd) < 0)
				die("write: fdatasync: %s", strerror(errno));
			rec = (struct journal_rec){ 'A', 0, seq };
			if (write(jfd, &rec, sizeof(rec)) != sizeof(rec))
				die("write: journal: %s", strerror(errno));
			snprintf(mark, sizeof(mark), "mark ack:%llu", (unsigned long long)seq);
			send_marks(marks, mark);
			since_sync = 0;
			next_sync = 1 + (uint64_t)random() % sync_every;
			syncs++;
		}
		if (rate && !fill) {
			uint64_t due = t0 + writes * 1000000000u / rate, now = now_ns();

			if (due > now)
				sleep_ns(due - now);
		}
	}
	printf("writelog: %llu writes, %llu acknowledged flushes, last seq %llu\n",
	       (unsigned long long)writes, (unsigned long long)syncs, (unsigned long long)seq);
	free(buf);
	close(fd);
	close(jfd);
	return 0;
}

/* ---- check ----------------------------------------------------------------------- */

struct history {
	uint64_t *seq; /* every seq written to the block, ascending */
	size_t nr, cap;
};

static int cmd_check(int argc, char **argv)
{
	const char *device = NULL, *journal = NULL;
	unsigned long long acked = 0;
	struct journal_head jh;
	struct journal_rec rec;
	struct history *h;
	unsigned char *buf;
	size_t bad = 0, zero = 0, newer = 0;
	int c, fd, jfd;

	static const struct option opts[] = { { "device", required_argument, NULL, 'd' },
					       { "journal", required_argument, NULL, 'j' },
					       { "acked", required_argument, NULL, 'a' },
					       { 0 } };
	while ((c = getopt_long(argc, argv, "d:j:a:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': device = optarg; break;
		case 'j': journal = optarg; break;
		case 'a': acked = strtoull(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (!device || !journal)
		die("check: --device and --journal are needed");
	jfd = open(journal, O_RDONLY);
	if (jfd < 0 || pread(jfd, &jh, sizeof(jh), 0) != sizeof(jh) || jh.magic != JOURNAL_MAGIC)
		die("check: %s is not a journal", journal);
	h = calloc(jh.blocks, sizeof(*h));
	if (!h || posix_memalign((void **)&buf, BLOCK, BLOCK))
		die("check: out of memory");
	for (off_t off = sizeof(jh); pread(jfd, &rec, sizeof(rec), off) == sizeof(rec);
	     off += sizeof(rec)) {
		struct history *b = &h[rec.block];

		if (rec.kind != 'W' || rec.block >= jh.blocks)
			continue;
		if (b->nr == b->cap) {
			b->cap = b->cap ? b->cap * 2 : 4;
			b->seq = realloc(b->seq, b->cap * sizeof(uint64_t));
			if (!b->seq)
				die("check: out of memory");
		}
		b->seq[b->nr++] = rec.seq;
	}
	close(jfd);
	fd = open(device, O_RDONLY | O_DIRECT);
	if (fd < 0)
		die("check: %s: %s", device, strerror(errno));
	for (uint32_t i = 0; i < jh.blocks; i++) {
		uint64_t last_acked = 0, found;
		int known = 0;

		if (pread(fd, buf, BLOCK, (off_t)(i * jh.stride)) != BLOCK) {
			if (bad++ < 10)
				printf("block %u (byte %llu): read failed: %s\n", i,
				       (unsigned long long)(i * jh.stride), strerror(errno));
			continue;
		}
		for (size_t k = 0; k < h[i].nr; k++)
			if (h[i].seq[k] <= acked)
				last_acked = h[i].seq[k];
		found = block_seq(buf, i);
		for (size_t k = 0; k < h[i].nr && !known; k++)
			known = h[i].seq[k] == found;
		if (found && known && found >= last_acked) {
			newer += found > last_acked;
			continue;
		}
		if (!found && last_acked == 0 && all_zero(buf)) {
			zero++;
			continue;
		}
		if (bad++ < 10)
			printf("block %u (byte %llu): holds %s, acknowledged seq %llu\n", i,
			       (unsigned long long)(i * jh.stride),
			       found ? (known ? "an older seq" : "a seq never written there") :
				       all_zero(buf) ? "zeros" : "foreign data",
			       (unsigned long long)last_acked);
		if (found && bad <= 10)
			printf("  it holds seq %llu\n", (unsigned long long)found);
	}
	close(fd);
	printf("writelog: %u blocks checked against ack %llu: %zu bad, %zu newer than acked, "
	       "%zu never acked and empty\n",
	       jh.blocks, acked, bad, newer, zero);
	for (uint32_t i = 0; i < jh.blocks; i++)
		free(h[i].seq);
	free(h);
	free(buf);
	return bad ? 1 : 0;
}

/* ---- replay and overlay ---------------------------------------------------------- */

struct mapped_log {
	struct wlog log;
	const unsigned char *base;
	size_t len;
};

static void map_log(struct mapped_log *m, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY), r;

	if (fd < 0 || fstat(fd, &st) < 0)
		die("%s: %s", path, strerror(errno));
	m->len = (size_t)st.st_size;
	m->base = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m->base == MAP_FAILED)
		die("%s: %s", path, strerror(errno));
	r = wlog_parse(&m->log, m->base, m->len);
	if (r < 0)
		die("%s: %s", path, r == -EINVAL ? "not a dm-log-writes log" : "log cut short");
}

/* Write entries [from, to) of a log onto fd, those with keep[k - from] only. */
static void apply(const struct mapped_log *m, int fd, size_t from, size_t to,
		  const unsigned char *keep)
{
	static unsigned char zeros[1 << 16];

	for (size_t i = from; i < to; i++) {
		const struct wlog_entry *e = &m->log.e[i];
		uint64_t off = e->sector * m->log.sectorsize, len = e->nr_sectors * m->log.sectorsize;

		if ((keep && !keep[i - from]) || (e->flags & WLOG_MARK) || len == 0)
			continue;
		if (e->flags & WLOG_DISCARD) {
			for (uint64_t done = 0; done < len;) {
				size_t n = len - done < sizeof(zeros) ? len - done : sizeof(zeros);

				if (pwrite(fd, zeros, n, (off_t)(off + done)) != (ssize_t)n)
					die("apply: %s", strerror(errno));
				done += n;
			}
			continue;
		}
		if (pwrite(fd, m->base + e->data_off, len, (off_t)off) != (ssize_t)len)
			die("apply entry %zu: %s", i, strerror(errno));
	}
}

static const char *kind_name(enum wlog_cut_kind k)
{
	return k == WLOG_CUT_TICK ? "tick" : k == WLOG_CUT_AFTER ? "after-flush" : "before-flush";
}

/* Keep max cuts (half at flushes, half at ticks when both are there), in time order. */
static void choose(const struct wlog_plan *plan, size_t max, uint64_t seed, unsigned char *use)
{
	size_t flushes = 0, ticks = 0, want_f, want_t;

	for (size_t i = 0; i < plan->nr; i++) {
		use[i] = 1;
		if (plan->cut[i].kind == WLOG_CUT_TICK)
			ticks++;
		else
			flushes++;
	}
	if (max == 0 || plan->nr <= max)
		return;
	want_f = flushes < max / 2 ? flushes : max / 2;
	want_t = max - want_f < ticks ? max - want_f : ticks;
	if (want_t < max - want_f)
		want_f = max - want_t;
	/* Selection sampling: each cut of a kind kept with the chance still needed. */
	srandom((unsigned)seed);
	for (size_t i = 0; i < plan->nr; i++) {
		int tick = plan->cut[i].kind == WLOG_CUT_TICK;
		size_t *left = tick ? &ticks : &flushes, *want = tick ? &want_t : &want_f;

		use[i] = (size_t)random() % *left < *want;
		*want -= use[i];
		(*left)--;
	}
}

static int cmd_replay(int argc, char **argv)
{
	struct mapped_log logs[WLOG_MAX_DEVS];
	struct wlog raw[WLOG_MAX_DEVS];
	const char *log_path[WLOG_MAX_DEVS], *image[WLOG_MAX_DEVS], *check = NULL;
	unsigned nr_logs = 0, nr_images = 0;
	unsigned long max = 0, seed = 1;
	size_t applied[WLOG_MAX_DEVS] = { 0 }, run = 0, failed = 0, first_failed = (size_t)-1;
	int fds[WLOG_MAX_DEVS], c, r;
	struct wlog_plan plan;
	unsigned char *use;
	uint64_t t0;

	static const struct option opts[] = { { "log", required_argument, NULL, 'l' },
					       { "image", required_argument, NULL, 'i' },
					       { "check", required_argument, NULL, 'c' },
					       { "max", required_argument, NULL, 'n' },
					       { "seed", required_argument, NULL, 's' },
					       { 0 } };
	while ((c = getopt_long(argc, argv, "l:i:c:n:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (nr_logs == WLOG_MAX_DEVS)
				die("replay: at most %d logs", WLOG_MAX_DEVS);
			log_path[nr_logs++] = optarg;
			break;
		case 'i':
			if (nr_images == WLOG_MAX_DEVS)
				die("replay: at most %d images", WLOG_MAX_DEVS);
			image[nr_images++] = optarg;
			break;
		case 'c': check = optarg; break;
		case 'n': max = strtoul(optarg, NULL, 10); break;
		case 's': seed = strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (nr_logs == 0 || nr_logs != nr_images || !check)
		die("replay: give each --log its --image, and --check");
	for (unsigned d = 0; d < nr_logs; d++) {
		map_log(&logs[d], log_path[d]);
		raw[d] = logs[d].log;
		fds[d] = open(image[d], O_WRONLY);
		if (fds[d] < 0)
			die("%s: %s", image[d], strerror(errno));
	}
	r = wlog_plan(raw, nr_logs, &plan);
	if (r < 0)
		die("replay: cannot plan: %s", r == -ENOENT ? "no tick marks in every log" :
								  strerror(-r));
	use = calloc(plan.nr ? plan.nr : 1, 1);
	if (!use)
		die("replay: out of memory");
	choose(&plan, max, seed, use);
	for (unsigned d = 0; d < nr_logs; d++)
		printf("writelog: %s: %zu entries\n", log_path[d], raw[d].nr);
	printf("writelog: %zu crash points (%zu flushes not ordered against another device's "
	       "and skipped)\n",
	       plan.nr, plan.skipped);
	fflush(stdout);
	t0 = now_ns();
	for (size_t i = 0; i < plan.nr; i++) {
		const struct wlog_cut *cut = &plan.cut[i];
		char env[8][96];
		int status;
		pid_t pid;

		if (!use[i])
			continue;
		for (unsigned d = 0; d < nr_logs; d++) {
			if (cut->prefix[d] < applied[d])
				die("replay: cut %zu goes back in time on log %u", i, d);
			apply(&logs[d], fds[d], applied[d], cut->prefix[d], NULL);
			if (fdatasync(fds[d]) < 0)
				die("%s: %s", image[d], strerror(errno));
			applied[d] = cut->prefix[d];
		}
		snprintf(env[0], sizeof(env[0]), "WL_CUT=%zu", i);
		snprintf(env[1], sizeof(env[1]), "WL_KIND=%s", kind_name(cut->kind));
		snprintf(env[2], sizeof(env[2]), "WL_ACKED=%llu", (unsigned long long)cut->acked);
		snprintf(env[3], sizeof(env[3]), "WL_PHASE=%s", cut->phase);
		snprintf(env[4], sizeof(env[4]), "WL_DEV=%u", cut->dev);
		snprintf(env[5], sizeof(env[5]), "WL_FROM=%zu", cut->prefix[cut->dev]);
		snprintf(env[6], sizeof(env[6]), "WL_TO=%zu",
			 cut->kind == WLOG_CUT_BEFORE ? cut->group_end : cut->prefix[cut->dev]);
		snprintf(env[7], sizeof(env[7]), "WL_SEED=%llu",
			 (unsigned long long)(seed * 1000003u + i));
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			die("replay: fork: %s", strerror(errno));
		if (pid == 0) {
			for (unsigned k = 0; k < 8; k++)
				putenv(env[k]);
			execl("/bin/sh", "sh", "-c", check, (char *)NULL);
			_exit(127);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		run++;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			failed++;
			if (first_failed == (size_t)-1)
				first_failed = i;
			printf("writelog: FAILED at crash point %zu (%s of log %u entry %zu, phase %s)\n",
			       i, kind_name(cut->kind), cut->dev, cut->entry, cut->phase);
		}
	}
	printf("writelog: %zu crash points replayed in %.1f s (%.2f per second), %zu failed",
	       run, (double)(now_ns() - t0) / 1e9,
	       run ? (double)run / ((double)(now_ns() - t0) / 1e9) : 0.0, failed);
	if (failed)
		printf(", the first at %zu", first_failed);
	printf("\n");
	print_phases(&plan, use);
	for (unsigned d = 0; d < nr_logs; d++) {
		close(fds[d]);
		wlog_destroy(&logs[d].log);
	}
	wlog_plan_destroy(&plan);
	free(use);
	return failed ? 1 : 0;
}

static int cmd_overlay(int argc, char **argv)
{
	const char *log = NULL, *target = NULL;
	unsigned long long from = 0, to = 0, seed = 1;
	struct mapped_log m;
	unsigned char *keep;
	size_t kept = 0;
	int c, fd;

	static const struct option opts[] = { { "log", required_argument, NULL, 'l' },
					       { "from", required_argument, NULL, 'f' },
					       { "to", required_argument, NULL, 't' },
					       { "seed", required_argument, NULL, 's' },
					       { "target", required_argument, NULL, 'o' },
					       { 0 } };
	while ((c = getopt_long(argc, argv, "l:f:t:s:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'l': log = optarg; break;
		case 'f': from = strtoull(optarg, NULL, 10); break;
		case 't': to = strtoull(optarg, NULL, 10); break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 'o': target = optarg; break;
		default: return 2;
		}
	}
	if (!log || !target)
		die("overlay: --log and --target are needed");
	map_log(&m, log);
	if (from > to || to > m.log.nr)
		die("overlay: entries %llu..%llu are not in the log", from, to);
	keep = calloc(to - from + 1, 1);
	if (!keep)
		die("overlay: out of memory");
	/* Buffered: the log's data is not aligned in memory as O_DIRECT wants. */
	fd = open(target, O_WRONLY);
	if (fd < 0)
		die("overlay: %s: %s", target, strerror(errno));
	wlog_subset(seed, to - from, keep);
	apply(&m, fd, from, to, keep);
	if (fsync(fd) < 0)
		die("overlay: %s: %s", target, strerror(errno));
	for (size_t k = 0; k < to - from; k++)
		kept += keep[k];
	printf("writelog: %zu of %llu writes of the group reached the media\n", kept, to - from);
	close(fd);
	free(keep);
	wlog_destroy(&m.log);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = { { "tick", cmd_tick },     { "write", cmd_write },	   { "check", cmd_check },
		     { "replay", cmd_replay }, { "overlay", cmd_overlay } };

	if (argc < 2)
		die("usage: writelog tick|write|check|replay|overlay [OPTION]...");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	die("unknown command %s", argv[1]);
}
