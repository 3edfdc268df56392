/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-pieceplan: what choosing the SSD's content in whole extents and
 * pieces (lib/pieceplan.c) costs as the hot extents and the extents watched
 * at piece resolution grow.
 *
 * HOT extents with zipf-like heat (heat 1/rank^1.2, ranks scattered), one
 * in ten watched at 256 pieces with a few hot pieces among cold ones, an
 * SSD of an eighth of the hot extents, and a budget of pieces: none (whole
 * extents only, as `highest` places them), the default table's (32,768) and
 * a tight one (HOT / 20) that makes the search price pieces too. Prints the
 * share of the heat each placement puts on the SSD and its CPU time, best
 * of three.
 *
 * Not a meson test: timings depend on the machine.  See README.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pieceplan.h"

#define BENCH_PPE 256u
#define BENCH_RUNS 3

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One watched extent in ten: a hot piece or two over cold ones. */
static int bench_shares(void *ctx, uint32_t i, double *out)
{
	(void)ctx;
	if (i % 10)
		return 0;
	for (uint32_t k = 0; k < BENCH_PPE; k++)
		out[k] = 1.0 / (1 + (k * 7919u + i) % BENCH_PPE);
	out[i % BENCH_PPE] += 20;
	out[(i * 31) % BENCH_PPE] += 5;
	return 1;
}

static int bench_one(uint32_t hot, uint64_t max_pieces)
{
	struct pieceplan_extent *ext = malloc((size_t)hot * sizeof(*ext));
	struct pieceplan_input in;
	struct pieceplan pp = { 0 };
	double best = 0;

	if (!ext)
		return -1;
	for (uint32_t i = 0; i < hot; i++)
		ext[i] = (struct pieceplan_extent){
			.le = i * 8, .heat = 1.0 / pow(1 + (i * 2654435761u % hot), 1.2) };
	in = (struct pieceplan_input){ .ext = ext, .nr = hot, .pieces_per_extent = BENCH_PPE,
				       .room = (uint64_t)hot / 8 * BENCH_PPE,
				       .max_pieces = max_pieces, .max_entries = UINT64_MAX,
				       .shares = bench_shares };
	for (int run = 0; run < BENCH_RUNS; run++) {
		double t = cpu_ms();

		pieceplan_destroy(&pp);
		if (pieceplan_select(&in, &pp) < 0) {
			free(ext);
			return -1;
		}
		t = cpu_ms() - t;
		if (!run || t < best)
			best = t;
	}
	printf("%9u %8u %11llu %10.1f %8llu %9zu %8.1f%%\n", hot, hot / 10,
	       (unsigned long long)max_pieces, best, (unsigned long long)pp.whole, pp.nr_pieces,
	       100 * pp.heat_placed / pp.heat_total);
	pieceplan_destroy(&pp);
	free(ext);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t max_hot = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 400000;

	printf("%9s %8s %11s %10s %8s %9s %9s\n", "hot", "watched", "piece limit", "ms", "whole",
	       "pieces", "heat");
	for (uint32_t hot = 4000; hot <= max_hot; hot *= 10)
		if (bench_one(hot, 0) < 0 || bench_one(hot, 32768) < 0 ||
		    bench_one(hot, hot / 20) < 0)
			return 1;
	return 0;
}
