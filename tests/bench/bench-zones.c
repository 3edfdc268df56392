/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-zones: how well heat in zones finds the hot set, against heat at
 * full resolution on the same I/O.
 *
 * fio's own generator (ioengine=null, its I/O log read through a pipe)
 * draws 4 KiB random reads over a volume of --tib TiB in 4 MiB extents.
 * Every simulated sample interval (10 s) the reads of the interval are
 * counted per extent, as dm-stats would, and fed to two heat tables: one
 * with an area per extent (what tierd does when the budget allows it) and
 * one through lib/zone.c under the kernel-memory budget, with the zone
 * choice made at the daemon's cadence.  Every --report-s of simulated time
 * both tables' hottest --hot extents (the SSD's worth, 1/32 of the volume
 * by default, as tests/bench/bench-scale.sh sizes it) are taken, and the
 * reads of the next window are counted against them: the share of I/O
 * each would have served from the SSD.  Also: how many of the 1,000
 * extents hottest at full resolution the zoned table has in its top.
 *
 * --move shifts the generator by half the volume halfway through: the hot
 * set moves, and the report shows how long each table takes to follow.
 *
 * Not a meson test: it takes minutes and its numbers are results, not
 * pass/fail.  See README.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heat.h"
#include "zone.h"

#define EXTENT_BYTES (UINT64_C(4) << 20)
#define SAMPLE_S 10u
#define TRUE_TOP 1000u
/* dm-stats' area with two possible CPUs (tierd/kernel/iostats.c). */
#define AREA_BYTES_2CPU 328u

struct bench_opts {
	uint32_t tib;
	const char *dist;
	uint32_t iops;
	uint32_t hours;
	uint32_t report_s;
	double half_life_s;
	uint64_t budget_bytes;
	uint32_t area_bytes;
	uint32_t hot;
	int move;
};

struct bench {
	struct bench_opts o;
	uint32_t nr;
	struct zone_layout l;
	struct zone_choice choice;
	uint8_t *kind;
	double *zone_heat, *share;
	struct statsparse_area *fine;
	struct heat_table full, zoned;
	struct heat_params hp;
	uint32_t *count;   /* reads per extent in the current sample */
	uint32_t *touched; /* extents with count > 0, in order of first read */
	uint32_t nr_touched;
	uint32_t *zone_touched;
	uint32_t nr_zone_touched;
	uint8_t *zone_mark;
	uint32_t samples, choices;
	/* The current window: which extents each table would hold on the SSD. */
	uint8_t *in_top;   /* bit 0: full resolution's top, bit 1: the zoned one's */
	uint64_t win_reads, win_full, win_zoned;
	uint32_t *top;
	double true_found; /* of the full table's TRUE_TOP hottest, share in the zoned top */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench-zones [--tib N] [--dist D] [--iops N] [--hours N] [--report-s N]\n"
		"                   [--half-life-s N] [--budget-mib N] [--area-bytes N] [--hot N] [--move]\n"
		"  --tib N          volume size in TiB (default 16), 4 MiB extents\n"
		"  --dist D         fio random_distribution (default zipf:1.2; zoned:90/10:10/90, ...)\n"
		"  --iops N         4 KiB random reads per second (default 500)\n"
		"  --hours N        simulated time (default 24)\n"
		"  --report-s N     seconds per report window (default 3600)\n"
		"  --half-life-s N  heat half-life (default 86400, tierd's)\n"
		"  --budget-mib N   dm-stats kernel-memory budget (default 64)\n"
		"  --area-bytes N   kernel memory per area (default 328: two CPUs)\n"
		"  --hot N          extents on the SSD (default: a 32nd of the volume)\n"
		"  --move           shift the generator by half the volume halfway through\n");
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "tib", required_argument, NULL, 't' },
		{ "dist", required_argument, NULL, 'd' },
		{ "iops", required_argument, NULL, 'i' },
		{ "hours", required_argument, NULL, 'H' },
		{ "report-s", required_argument, NULL, 'r' },
		{ "half-life-s", required_argument, NULL, 'l' },
		{ "budget-mib", required_argument, NULL, 'b' },
		{ "area-bytes", required_argument, NULL, 'a' },
		{ "hot", required_argument, NULL, 'n' },
		{ "move", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint32_t v;
	int c;

	*o = (struct bench_opts){
		.tib = 16, .dist = "zipf:1.2", .iops = 500, .hours = 24, .report_s = 3600,
		.half_life_s = 86400, .budget_bytes = UINT64_C(64) << 20,
		.area_bytes = AREA_BYTES_2CPU,
	};
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == 'm') {
			o->move = 1;
			continue;
		}
		if (c == 'd') {
			o->dist = optarg;
			continue;
		}
		if (c == '?' || parse_u32(optarg, &v) < 0 || (v == 0 && c != 'n')) {
			if (c != '?')
				fprintf(stderr, "bench-zones: bad number '%s'\n", optarg);
			usage(stderr);
			return -EINVAL;
		}
		switch (c) {
		case 't':
			o->tib = v;
			break;
		case 'i':
			o->iops = v;
			break;
		case 'H':
			o->hours = v;
			break;
		case 'r':
			o->report_s = v;
			break;
		case 'l':
			o->half_life_s = v;
			break;
		case 'b':
			o->budget_bytes = (uint64_t)v << 20;
			break;
		case 'a':
			o->area_bytes = v;
			break;
		case 'n':
			o->hot = v;
			break;
		}
	}
	if (optind != argc || o->tib > 1024 || o->report_s % SAMPLE_S) {
		fprintf(stderr, "bench-zones: --tib up to 1024, --report-s a multiple of %u\n", SAMPLE_S);
		return -EINVAL;
	}
	return 0;
}

static void bench_destroy(struct bench *b)
{
	heat_table_destroy(&b->full);
	heat_table_destroy(&b->zoned);
	free(b->kind);
	free(b->zone_heat);
	free(b->share);
	free(b->fine);
	free(b->count);
	free(b->touched);
	free(b->zone_touched);
	free(b->zone_mark);
	free(b->in_top);
	free(b->top);
}

static int bench_init(struct bench *b)
{
	uint64_t extents = ((uint64_t)b->o.tib << 40) / EXTENT_BYTES;
	int r;

	b->nr = (uint32_t)extents;
	if (!b->o.hot)
		b->o.hot = b->nr / 32;
	heat_params_default(&b->hp);
	b->hp.half_life_s = b->o.half_life_s;
	r = zone_layout_plan(&b->l, b->nr, b->o.area_bytes, b->o.budget_bytes);
	if (r < 0)
		return r;
	zone_choice_default(&b->choice, &b->l);
	r = heat_table_init(&b->full, b->nr);
	if (r == 0)
		r = heat_table_init(&b->zoned, b->nr);
	if (r < 0)
		return r;
	b->kind = calloc(b->l.nr_zones, 1);
	b->zone_heat = calloc(b->l.nr_zones, sizeof(*b->zone_heat));
	b->share = calloc(b->l.zone_extents, sizeof(*b->share));
	b->fine = calloc(b->l.zone_extents, sizeof(*b->fine));
	b->count = calloc(b->nr, sizeof(*b->count));
	b->touched = malloc((size_t)b->nr * sizeof(*b->touched));
	b->zone_touched = malloc((size_t)b->l.nr_zones * sizeof(*b->zone_touched));
	b->zone_mark = calloc(b->l.nr_zones, 1);
	b->in_top = calloc(b->nr, 1);
	b->top = malloc((size_t)(b->o.hot > TRUE_TOP ? b->o.hot : TRUE_TOP) * sizeof(*b->top));
	if (!b->kind || !b->zone_heat || !b->share || !b->fine || !b->count || !b->touched ||
	    !b->zone_touched || !b->zone_mark || !b->in_top || !b->top)
		return -ENOMEM;
	return 0;
}

static void bench_read(struct bench *b, uint64_t offset)
{
	uint32_t e = (uint32_t)(offset / EXTENT_BYTES), z;

	if (e >= b->nr)
		return;
	if (b->count[e]++ == 0)
		b->touched[b->nr_touched++] = e;
	z = b->l.zone_extents > 1 ? e / b->l.zone_extents : e;
	if (b->l.zone_extents > 1 && !b->zone_mark[z]) {
		b->zone_mark[z] = 1;
		b->zone_touched[b->nr_zone_touched++] = z;
	}
	b->win_reads++;
	b->win_full += b->in_top[e] & 1;
	b->win_zoned += (b->in_top[e] >> 1) & 1;
}

static struct statsparse_area area_of(uint32_t reads)
{
	return (struct statsparse_area){ .reads = reads, .sectors_read = (uint64_t)reads * 8 };
}

/* What the daemon does every few samples: the zones' heat, then the choice. */
static int bench_choose(struct bench *b)
{
	uint32_t first, n;

	for (uint32_t z = 0; z < b->l.nr_zones; z++) {
		n = zone_extents_of(&b->l, z, &first);
		b->zone_heat[z] = heat_sum(&b->zoned, first, n);
	}
	b->choice.max_new = ZONE_MAX_NEW;
	b->choice.advance_survey = b->choices++ % ZONE_SURVEY_CHOICES == 0;
	return zone_choose(&b->l, &b->choice, b->zone_heat, b->kind);
}

/* The sample that ends at now_ns: both tables get the same counts. */
static int bench_sample(struct bench *b, uint64_t now_ns)
{
	int r = heat_sample_begin(&b->full, &b->hp, now_ns);

	if (r == 0)
		r = heat_sample_begin(&b->zoned, &b->hp, now_ns);
	for (uint32_t i = 0; r == 0 && i < b->nr_touched; i++) {
		struct statsparse_area a = area_of(b->count[b->touched[i]]);

		r = heat_apply_range(&b->full, &b->hp, &a, b->touched[i], 1);
		if (r == 0 && b->l.zone_extents == 1)
			r = heat_apply_range(&b->zoned, &b->hp, &a, b->touched[i], 1);
	}
	for (uint32_t i = 0; r >= 0 && i < b->nr_zone_touched; i++) {
		uint32_t z = b->zone_touched[i], first, n = zone_extents_of(&b->l, z, &first);
		uint32_t reads = 0;
		struct statsparse_area coarse;

		for (uint32_t k = 0; k < n; k++) {
			b->fine[k] = area_of(b->count[first + k]);
			reads += b->count[first + k];
		}
		coarse = area_of(reads);
		r = zone_apply(&b->l, b->kind, z, &b->zoned, &b->hp, &coarse, b->fine, b->share);
		b->zone_mark[z] = 0;
	}
	for (uint32_t i = 0; i < b->nr_touched; i++)
		b->count[b->touched[i]] = 0;
	b->nr_touched = b->nr_zone_touched = 0;
	if (r >= 0 && b->l.zone_extents > 1 && ++b->samples % ZONE_CHOOSE_SAMPLES == 0)
		r = bench_choose(b);
	return r < 0 ? r : 0;
}

/* A new window: each table's hottest o.hot extents are what the SSD holds. */
static int bench_window(struct bench *b)
{
	uint32_t got, found = 0;
	int r;

	memset(b->in_top, 0, b->nr);
	r = heat_top(&b->zoned, b->o.hot, b->top, &got);
	for (uint32_t i = 0; r == 0 && i < got; i++)
		b->in_top[b->top[i]] |= 2;
	if (r == 0)
		r = heat_top(&b->full, TRUE_TOP, b->top, &got);
	/* Only extents with heat rank: before any I/O both tops are the first indices. */
	while (got && heat_value(&b->full, b->top[got - 1]) <= 0)
		got--;
	for (uint32_t i = 0; r == 0 && i < got; i++)
		found += (b->in_top[b->top[i]] >> 1) & 1;
	b->true_found = got ? (double)found / got : NAN;
	if (r == 0)
		r = heat_top(&b->full, b->o.hot, b->top, &got);
	for (uint32_t i = 0; r == 0 && i < got; i++)
		b->in_top[b->top[i]] |= 1;
	b->win_reads = b->win_full = b->win_zoned = 0;
	return r;
}

/* fio writes its log to our pipe: on any failure of fio's the pipe ends, and so does the run. */
static FILE *fio_start(const struct bench *b, uint64_t reads, pid_t *pid)
{
	char size[32], io_size[32], dist[128];
	int fds[2];
	FILE *f;

	snprintf(size, sizeof(size), "--size=%" PRIu32 "T", b->o.tib);
	snprintf(io_size, sizeof(io_size), "--io_size=%" PRIu64, reads * 4096);
	snprintf(dist, sizeof(dist), "--random_distribution=%s", b->o.dist);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return NULL;
	*pid = fork();
	if (*pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return NULL;
	}
	if (*pid == 0) {
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(127);
		execlp("fio", "fio", "--name=bench", "--ioengine=null", size, "--rw=randread",
		       "--bs=4k", dist, "--norandommap", io_size, "--write_iolog=/dev/stdout",
		       "--output=/dev/null", (char *)NULL);
		fprintf(stderr, "bench-zones: fio: %s\n", strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f)
		close(fds[0]);
	return f;
}

static int bench_run(struct bench *b)
{
	uint64_t per_sample = (uint64_t)b->o.iops * SAMPLE_S;
	uint64_t samples = (uint64_t)b->o.hours * 3600 / SAMPLE_S, s = 0, in_sample = 0;
	uint64_t shift = b->o.move ? ((uint64_t)b->o.tib << 40) / 2 : 0;
	uint64_t volume = (uint64_t)b->o.tib << 40, off, len;
	uint32_t per_window = b->o.report_s / SAMPLE_S;
	char line[256], op[16];
	pid_t pid;
	int r = 0, status;
	FILE *f = fio_start(b, per_sample * samples, &pid);

	if (!f)
		return -errno;
	printf("%8s %10s %10s %8s %10s %10s\n", "hours", "full", "zoned", "ratio", "top-1000", "fine");
	r = bench_window(b);
	while (r == 0 && s < samples && fgets(line, sizeof(line), f)) {
		/* Version 3 logs: "TIME FILE read OFFSET LENGTH". */
		if (sscanf(line, "%*s %*s %15s %" SCNu64 " %" SCNu64, op, &off, &len) != 3 ||
		    strcmp(op, "read"))
			continue;
		if (s >= samples / 2)
			off = (off + shift) % volume;
		bench_read(b, off);
		if (++in_sample < per_sample)
			continue;
		in_sample = 0;
		r = bench_sample(b, ++s * SAMPLE_S * UINT64_C(1000000000));
		if (r == 0 && s % per_window == 0) {
			uint32_t fine = 0;

			for (uint32_t z = 0; z < b->l.nr_zones; z++)
				fine += b->kind[z] != ZONE_COARSE;
			char found[16] = "-";

			if (!isnan(b->true_found))
				snprintf(found, sizeof(found), "%.1f%%", 100.0 * b->true_found);
			printf("%8.1f %9.1f%% %9.1f%% %7.2fx %10s %10" PRIu32 "%s\n",
			       (double)s * SAMPLE_S / 3600,
			       100.0 * (double)b->win_full / (double)b->win_reads,
			       100.0 * (double)b->win_zoned / (double)b->win_reads,
			       b->win_full ? (double)b->win_zoned / (double)b->win_full : 0.0,
			       found, fine,
			       b->o.move && s > samples / 2 && s - per_window <= samples / 2 ?
				       "  (the hot set moved in this window)" : "");
			fflush(stdout);
			r = bench_window(b);
		}
	}
	fclose(f);
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	if (r == 0 && s < samples) {
		fprintf(stderr,
			"bench-zones: fio's log ended after %" PRIu64 " of %" PRIu64
			" samples (fio %s %d)\n",
			s, samples, WIFEXITED(status) ? "exited with" : "killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		r = -EIO;
	}
	return r;
}

int main(int argc, char **argv)
{
	struct bench b = { 0 };
	int r;

	if (parse_opts(argc, argv, &b.o) < 0)
		return 2;
	r = bench_init(&b);
	if (r < 0) {
		fprintf(stderr, "bench-zones: %s\n", strerror(-r));
		goto out;
	}
	printf("%" PRIu32 " TiB, %" PRIu32 " extents, %s, %" PRIu32 " IOPS for %" PRIu32
	       " h, half-life %.0f s, SSD %" PRIu32 " extents%s\n",
	       b.o.tib, b.nr, b.o.dist, b.o.iops, b.o.hours, b.o.half_life_s, b.o.hot,
	       b.o.move ? ", the hot set moving halfway" : "");
	printf("zones of %" PRIu32 " extents, %" PRIu32 " zones, up to %" PRIu32
	       " fine (budget %" PRIu64 " MiB, %" PRIu32 " B per area)\n",
	       b.l.zone_extents, b.l.nr_zones, b.l.max_fine, b.o.budget_bytes >> 20, b.o.area_bytes);
	printf("full, zoned: the share of each window's reads that the SSD would serve with the\n"
	       "hottest extents of each table at the window's start; top-1000: of the 1,000\n"
	       "hottest at full resolution, the share in the zoned table's SSD set\n");
	r = bench_run(&b);
	if (r < 0)
		fprintf(stderr, "bench-zones: %s\n", strerror(-r));
out:
	bench_destroy(&b);
	return r < 0 ? 1 : 0;
}
