/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-size: what the pure core costs as a pool grows, 1 to 200 TiB of
 * 4 MiB extents, with the same hot set at every size.
 *
 * For each size: the extent map of a new pool (one HDD filled in order, an
 * SSD of 1/32 its size), HOT extents scattered over it moved to the SSD,
 * the map's side of a decode (the runs of that map into a new one, as
 * metadata_map_decode makes them, then extmap_check), a heat table with I/O on those extents and on as many others,
 * heat_top(20), a tiering plan as tierd makes one (a list of the
 * extents that matter, built a run and a heat page at a time, then the
 * planner), and the count of the volume table's targets (extmap_runs, made
 * before every batch and by pool show). Memory is what the map and the table hold; times are process
 * CPU time, best of three.
 *
 * What should not grow with the pool: the move's cost, heat_top's and the
 * plan's (the list they read grows with the hot set); what does, and by
 * how much: the map's and table's pointers (8 bytes per 64 and per 256
 * extents), the bitmaps (a bit per extent), the decoder's pass (an entry
 * per extent, which is what the device holds).
 *
 * Not a meson test: timings depend on the machine.  See README.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "extmap.h"
#include "heat.h"
#include "planner.h"
#include "policy.h"

#define BENCH_EXTENT_MIB 4u
#define BENCH_HOT 16384u /* 64 GiB of hot extents, the same at every size */
#define BENCH_RUNS 3
#define BENCH_T0 (UINT64_C(1000) * 1000000000)

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void die(const char *what, int r)
{
	fprintf(stderr, "bench-size: %s failed (%d)\n", what, r);
	exit(1);
}

/* The hot set: BENCH_HOT extents spread evenly, each in a group of its own. */
static uint32_t hot_le(uint32_t nr, uint32_t i)
{
	return (uint32_t)((uint64_t)i * nr / BENCH_HOT);
}

struct sizes {
	uint32_t nr;
	double fill_ms, move_ms, decode_ms, top_ms, plan_ms, runs_ms;
	uint32_t runs;
	uint64_t map_bytes, heat_bytes;
	size_t moves;
};

/* A new pool's map: the HDD in le order, an empty SSD; the hot set moved to the SSD. */
static void make_map(struct extmap *m, uint32_t nr, struct sizes *out)
{
	uint32_t pe;
	double t;
	int r;

	r = extmap_init(m, nr);
	if (r == 0)
		r = extmap_add_dev(m, nr, NULL);
	if (r == 0)
		r = extmap_add_dev(m, nr / 32 + BENCH_HOT, NULL);
	if (r < 0)
		die("extmap_init", r);
	t = cpu_ms();
	r = extmap_fill_linear(m, 0);
	if (r != (int)nr)
		die("extmap_fill_linear", r);
	out->fill_ms = cpu_ms() - t;
	t = cpu_ms();
	for (uint32_t i = 0; i < BENCH_HOT; i++) {
		uint32_t le = hot_le(nr, i);

		r = extmap_alloc(m, 1, &pe);
		if (r == 0)
			r = extmap_hold(m, le);
		if (r == 0)
			r = extmap_release(m, 1, pe);
		if (r == 0)
			r = extmap_remap(m, le, 1, pe);
		if (r < 0)
			die("a move", r);
	}
	out->move_ms = (cpu_ms() - t) / BENCH_HOT * 1000; /* per thousand moves */
	out->map_bytes = extmap_bytes(m);
}

/* Every entry of m again, in le order, as activation rebuilds the map from a slot. */
static double decode(const struct extmap *m)
{
	struct extmap back;
	struct extmap_loc loc;
	uint32_t span;
	double t = cpu_ms();
	int r = extmap_init(&back, m->nr_logical);

	for (unsigned d = 0; r == 0 && d < m->nr_devs; d++)
		r = extmap_add_dev(&back, m->nr_pe[d], NULL);
	/* As metadata_map_decode: entries that continue each other go in as one run. */
	for (uint32_t le = 0; r == 0 && le < m->nr_logical; le += span) {
		span = extmap_span(m, le, UINT32_MAX, &loc);
		if (loc.dev != EXTMAP_NO_DEV)
			r = extmap_map_run(&back, le, loc.dev, loc.pe, span);
	}
	if (r == 0)
		r = extmap_check(&back, NULL);
	if (r < 0)
		die("decode", r);
	t = cpu_ms() - t;
	extmap_destroy(&back);
	return t;
}

/* I/O on the hot set, and on as many extents between them that stay on the HDD. */
static void make_heat(struct heat_table *h, uint32_t nr, struct sizes *out)
{
	struct heat_params p;
	struct statsparse_area a = { .reads = 100, .sectors_read = 800 };
	int r;

	heat_params_default(&p);
	r = heat_table_init(h, nr);
	if (r == 0)
		r = heat_sample_begin(h, &p, BENCH_T0);
	for (uint32_t i = 0; r == 0 && i < BENCH_HOT; i++) {
		r = heat_apply_range(h, &p, &a, hot_le(nr, i), 1);
		a.reads = 2; /* two 4 KiB reads: above min_heat, below the hysteresis */
		a.sectors_read = 16;
		if (r == 0)
			r = heat_apply_range(h, &p, &a, hot_le(nr, i) + 1, 1);
		a.reads = 100;
		a.sectors_read = 800;
	}
	if (r < 0)
		die("heat", r);
	out->heat_bytes = heat_table_bytes(h);
}

struct listing {
	const struct extmap *m;
	struct planner_listed *list;
	uint32_t nr_list, nr_unlisted;
};

static uint32_t unlisted(const void *ctx, uint32_t *le_out, uint32_t max)
{
	const struct listing *l = ctx;
	uint32_t n = 0, next = 0;

	for (uint32_t le = 0; le < l->m->nr_logical && n < max; le++) {
		while (next < l->nr_list && l->list[next].le < le)
			next++;
		if (next < l->nr_list && l->list[next].le == le)
			continue;
		if (extmap_get(l->m, le).dev == 0)
			le_out[n++] = le;
	}
	return n;
}

/* The list tierd builds (pool_planner_list, without pins), then the plan. */
static double plan(const struct extmap *m, const struct heat_table *h, size_t *moves)
{
	struct listing l = { .m = m };
	struct planner_input in = { 0 };
	struct policy pol;
	struct plan out;
	uint32_t cap = 0, end = 0, span_start = 0;
	struct extmap_loc loc = { 0 };
	bool starts = false;
	double t = cpu_ms();
	int r;

	for (uint32_t le = 0; le < m->nr_logical;) {
		bool run_start;
		uint32_t stop;

		if (le == end) {
			end = le + extmap_span(m, le, UINT32_MAX, &loc);
			span_start = le;
			starts = le > 0 && !extmap_loc_follows(extmap_get(m, le - 1), loc);
		}
		run_start = starts && le == span_start;
		if (run_start) {
			/* Listed, as every run's first extent. */
		} else if (loc.dev != 1 && heat_next_used(h, le, le + 1) == le && heat_value(h, le) == 0 &&
			   !heat_at(h, le)->moved_at) {
			l.nr_unlisted += loc.dev == 0;
			le++;
			continue;
		} else if (loc.dev != 1 && heat_next_used(h, le, le + 1) != le) {
			stop = heat_next_used(h, le, end);
			stop = stop > le && stop < end ? stop : end;
			l.nr_unlisted += loc.dev == 0 ? stop - le : 0;
			le = stop;
			continue;
		}
		if (l.nr_list == cap) {
			cap = cap ? 2 * cap : 4096;
			l.list = realloc(l.list, cap * sizeof(*l.list));
			if (!l.list)
				die("list", -12);
		}
		l.list[l.nr_list++] = (struct planner_listed){
			.le = le,
			.e = { .heat = (float)heat_value(h, le), .moved_at = heat_at(h, le)->moved_at,
			       .tier = loc.dev == 1 ? PLANNER_SSD : PLANNER_HDD,
			       .flags = run_start ? PLANNER_STARTS_RUN : 0 },
		};
		le++;
	}
	policy_default(&pol);
	pol.min_residency_s = 0;
	in = (struct planner_input){
		.list = l.list,
		.nr_list = l.nr_list,
		.nr_unlisted_hdd = l.nr_unlisted,
		.unlisted_hdd = unlisted,
		.unlisted_ctx = &l,
		.nr = m->nr_logical,
		.ssd_capacity = m->nr_pe[1],
		.ssd_free = m->nr_free[1],
		.hdd_free = m->nr_free[0],
		.extent_bytes = (uint64_t)BENCH_EXTENT_MIB << 20,
		.now = 1700000000u,
		.policy = &pol,
		/* tierd's default limit, which the lone hot extents bring within reach. */
		.table_targets = extmap_runs(m),
		.max_table_targets = 65536,
	};
	r = planner_plan(&in, &out);
	if (r < 0)
		die("planner_plan", r);
	t = cpu_ms() - t;
	*moves = out.nr;
	plan_destroy(&out);
	free(l.list);
	return t;
}

static double best(double a, double b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	static const unsigned tib[] = { 1, 16, 100, 200 };

	printf("bench-size: %u MiB extents, %u hot extents moved to the SSD at every size;"
	       " CPU ms, best of %d\n", BENCH_EXTENT_MIB, BENCH_HOT, BENCH_RUNS);
	printf("%5s %10s %10s %10s %9s %12s %9s %9s %8s %8s %8s %8s\n", "TiB", "extents",
	       "map_MiB", "heat_MiB", "fill_ms", "move_ms/1k", "decode_ms", "top20_ms", "plan_ms",
	       "moves", "targets", "count_ms");
	for (size_t s = 0; s < sizeof(tib) / sizeof(tib[0]); s++) {
		struct sizes z = { .nr = (uint32_t)((uint64_t)tib[s] << 20) / BENCH_EXTENT_MIB };
		struct extmap m;
		struct heat_table h;
		uint32_t top[20], nr_top;
		double t;

		if (argc > 1 && (unsigned)atoi(argv[1]) < tib[s])
			break;
		make_map(&m, z.nr, &z);
		make_heat(&h, z.nr, &z);
		z.decode_ms = z.top_ms = z.plan_ms = z.runs_ms = 1e300;
		for (int run = 0; run < BENCH_RUNS; run++) {
			z.decode_ms = best(z.decode_ms, decode(&m));
			t = cpu_ms();
			if (heat_top(&h, 20, top, &nr_top) < 0)
				die("heat_top", -1);
			z.top_ms = best(z.top_ms, cpu_ms() - t);
			z.plan_ms = best(z.plan_ms, plan(&m, &h, &z.moves));
			t = cpu_ms();
			z.runs = extmap_runs(&m);
			z.runs_ms = best(z.runs_ms, cpu_ms() - t);
		}
		printf("%5u %10u %10.1f %10.1f %9.0f %12.2f %9.0f %9.2f %8.1f %8zu %8u %8.2f\n",
		       tib[s], z.nr, z.map_bytes / 1048576.0, z.heat_bytes / 1048576.0, z.fill_ms,
		       z.move_ms, z.decode_ms, z.top_ms, z.plan_ms, z.moves, z.runs, z.runs_ms);
		fflush(stdout);
		heat_table_destroy(&h);
		extmap_destroy(&m);
	}
	return 0;
}
