/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-heat: the CPU cost of one heat sample of a 4 TiB volume.
 *
 * A million 4 MiB extents is what tierd parses and scores every sample
 * interval (10 s by default) on the largest pools it is meant for; it has
 * to stay a small share of one core.  This generates the `@stats_print`
 * text the kernel would return for such a volume, then times
 * statsparse_areas() + heat_apply() over it in process CPU time.
 *
 * Not a meson test: timings depend on the machine.  See README.md.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heat.h"
#include "statsparse.h"

#define BENCH_AREAS 1000000u
#define BENCH_AREA_SECTORS 8192u  /* 4 MiB extents, the pool default */
#define BENCH_LINE_MAX 192        /* longest generated line, with room */
#define BENCH_RUNS 11             /* odd, so the median is one run */
#define BENCH_TARGET_MS 100.0     /* docs/heat.md */
#define BENCH_INTERVAL_NS (UINT64_C(10) * 1000000000)

/* xorshift32: reproducible input without libc's rand state. */
static uint32_t bench_random(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

/*
 * A realistic 10 s: 90% of extents idle, 8% with a few random 4 KiB
 * reads and writes, 2% streaming 1 MiB I/O (backup, scrub, large files).
 * idle_pct 0 gives the worst case: no line takes the parser's idle path.
 */
static int bench_line(char *buf, uint64_t start, uint32_t idle_pct, uint32_t *rng)
{
	uint32_t kind = bench_random(rng) % 100, r = bench_random(rng);
	uint64_t rd = 0, rd_merged = 0, rd_sectors = 0, wr = 0, wr_merged = 0, wr_sectors = 0;

	if (kind >= 98) {
		rd = 40 + r % 200;
		rd_merged = rd - 1;
		rd_sectors = rd * 2048;
		wr = r % 16;
		wr_merged = wr / 2;
		wr_sectors = wr * 2048;
	} else if (kind >= idle_pct) {
		rd = 1 + r % 24;
		rd_sectors = rd * 8;
		wr = (r >> 8) % 8;
		wr_sectors = wr * 8;
	}
	return snprintf(buf, BENCH_LINE_MAX,
			"%" PRIu64 "+%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %" PRIu64 " %" PRIu64 " %" PRIu64 " 0 %" PRIu64 " %" PRIu64 " %" PRIu64
			" %" PRIu64 "\n",
			start, BENCH_AREA_SECTORS, rd, rd_merged, rd_sectors, rd * 3, wr, wr_merged,
			wr_sectors, wr * 2, (rd + wr) * 2, (rd + wr) * 3, rd * 3, wr * 2);
}

static size_t bench_text(char *text, uint32_t idle_pct)
{
	uint32_t rng = 2463534242u;
	size_t len = 0;

	for (uint32_t i = 0; i < BENCH_AREAS; i++)
		len += (size_t)bench_line(text + len, (uint64_t)i * BENCH_AREA_SECTORS, idle_pct, &rng);
	return len;
}

static double bench_ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct bench_result {
	double min, median;               /* parse + apply */
	double parse_median, apply_median;
};

static double bench_median(double *v)
{
	qsort(v, BENCH_RUNS, sizeof(v[0]), bench_cmp);
	return v[BENCH_RUNS / 2];
}

/* One sample every 10 s of simulated time, the same text each time. */
static int bench_run(const char *text, size_t len, struct statsparse_area *areas,
		     struct heat_table *table, struct bench_result *res)
{
	double total[BENCH_RUNS], parse[BENCH_RUNS], apply[BENCH_RUNS];
	struct heat_params params;
	struct timespec t0, t1, t2;

	heat_params_default(&params);
	/* One untimed run: page faults and the first sample's missing decay are not the steady state. */
	for (int run = -1; run < BENCH_RUNS; run++) {
		uint64_t now = table->last_sample_ns + BENCH_INTERVAL_NS;
		int r;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		r = statsparse_areas(text, len, BENCH_AREA_SECTORS, areas, BENCH_AREAS);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
		if (r == 0)
			r = heat_apply(table, &params, areas, BENCH_AREAS, now);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t2);
		if (r < 0)
			return r;
		if (run >= 0) {
			parse[run] = bench_ms(&t0, &t1);
			apply[run] = bench_ms(&t1, &t2);
			total[run] = bench_ms(&t0, &t2);
		}
	}
	res->median = bench_median(total);
	res->min = total[0];
	res->parse_median = bench_median(parse);
	res->apply_median = bench_median(apply);
	return 0;
}

static void bench_print(const char *what, size_t len, const struct bench_result *res)
{
	printf("%-12s %5.1f MB   parse+apply min %5.1f ms, median %5.1f ms "
	       "(parse %5.1f, apply %4.1f)\n",
	       what, (double)len / 1e6, res->min, res->median, res->parse_median, res->apply_median);
}

int main(void)
{
	struct bench_result mix, busy;
	struct statsparse_area *areas;
	struct heat_table table;
	struct timespec t0, t1;
	uint32_t top[1000], nr_top;
	size_t mix_len, busy_len;
	char *text;
	int r;

	text = malloc((size_t)BENCH_AREAS * BENCH_LINE_MAX);
	areas = malloc(BENCH_AREAS * sizeof(*areas));
	if (!text || !areas || heat_table_init(&table, BENCH_AREAS) < 0) {
		fprintf(stderr, "bench-heat: out of memory\n");
		return 1;
	}
	table.last_sample_ns = BENCH_INTERVAL_NS; /* any start; 0 would mean "no sample yet" */

	busy_len = bench_text(text, 0);
	r = bench_run(text, busy_len, areas, &table, &busy);
	mix_len = bench_text(text, 90);
	if (r == 0)
		r = bench_run(text, mix_len, areas, &table, &mix);
	if (r < 0) {
		fprintf(stderr, "bench-heat: %s\n", strerror(-r));
		return 1;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	heat_top(&table, 1000, top, &nr_top);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);

	printf("%u areas of %u sectors, %d runs each, CPU time of this process\n",
	       BENCH_AREAS, BENCH_AREA_SECTORS, BENCH_RUNS);
	bench_print("mix", mix_len, &mix);
	bench_print("all busy", busy_len, &busy);
	printf("top 1000     %.1f ms\n", bench_ms(&t0, &t1));
	printf("memory       %zu B heat_extent + %zu B statsparse_area = %zu B per extent "
	       "(+ ~%zu B of reply text)\n",
	       sizeof(struct heat_extent), sizeof(struct statsparse_area),
	       sizeof(struct heat_extent) + sizeof(struct statsparse_area), mix_len / BENCH_AREAS);
	printf("target       mix median < %.0f ms: %s\n", BENCH_TARGET_MS,
	       mix.median < BENCH_TARGET_MS ? "met" : "MISSED");

	heat_table_destroy(&table);
	free(areas);
	free(text);
	return mix.median >= BENCH_TARGET_MS;
}
