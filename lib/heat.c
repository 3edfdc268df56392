/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "heat.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define HEAT_SECTOR_BYTES 512.0
#define HEAT_NS_PER_S 1e9

/*
 * Heat that has decayed below this is stored as 0: a trillionth of one
 * small random I/O ranks nothing worth moving, and it keeps heat out of
 * float's subnormal range, where x86 multiplies some hundred times
 * slower (extents idle for months would otherwise make every sample crawl).
 */
#define HEAT_COLD 1e-12f

/* A stream is expected to run at least this many bios between restarts. */
#define HEAT_STREAM_RUN 8.0

void heat_params_default(struct heat_params *p)
{
	*p = (struct heat_params){
		.half_life_s = 86400,
		.read_weight = 1.0,
		.write_weight = 1.0,
		.large_io_bytes = 65536,
		.scan_bytes = UINT64_C(64) << 20,
	};
}

/* False for NaN too. */
static bool heat_in(double v, double lo, double hi)
{
	return v >= lo && v <= hi;
}

int heat_params_valid(const struct heat_params *p)
{
	if (!p || !heat_in(p->half_life_s, 1, 10 * 365 * 86400.0) ||
	    !heat_in(p->read_weight, 0, 1000) || !heat_in(p->write_weight, 0, 1000) ||
	    (p->read_weight == 0 && p->write_weight == 0) ||
	    p->large_io_bytes < 512 || p->large_io_bytes > (UINT32_C(1) << 30) ||
	    p->scan_bytes < 512 || p->scan_bytes > (UINT64_C(1) << 50))
		return -EINVAL;
	return 0;
}

/*
 * One direction of one sample.  dm-stats gives only sums, so the average
 * size stands for every I/O of the sample: a mix of a few big and many
 * small I/Os is discounted as if all were average.
 *
 * Sequential I/O counts by the bytes it moves, not by its number: a pass
 * over an extent then adds extent / scan_bytes whether it reads 4 KiB or
 * 1 MiB at a time.  Counted per I/O, as random I/O is, a scan in small
 * I/Os would look hundreds of times hotter than the same scan in large
 * ones, and a backup in 64 KiB reads would fill an empty SSD tier.
 */
static double heat_direction(const struct heat_params *p, double weight, uint32_t ios,
			     uint32_t merged, uint64_t sectors)
{
	double avg_bytes, random_value = 1.0, sequential_value, sequential, random, restarts;

	if (!ios)
		return 0;
	/* Races in dm-stats can leave merged a little above ios. */
	sequential = merged < ios ? merged : ios;
	random = ios - sequential;
	/*
	 * dm-stats calls a bio merged when it starts where the previous bio of
	 * the same CPU ended, so a stream shows an unmerged bio each time its
	 * thread moves to another CPU or wraps around.  Up to one in eight of
	 * its merged bios, those restarts belong to the stream: counted as
	 * random they would lift every scanned extent over min_heat.  Random
	 * I/O beside a scan in the same sample loses as many.
	 */
	restarts = sequential / HEAT_STREAM_RUN;
	if (restarts > random)
		restarts = random;
	random -= restarts;
	sequential += restarts;
	avg_bytes = (double)sectors * HEAT_SECTOR_BYTES / ios;
	if (avg_bytes > p->large_io_bytes)
		random_value = p->large_io_bytes / avg_bytes;
	sequential_value = avg_bytes / (double)p->scan_bytes;
	/* A huge sequential I/O is no hotter than a huge random one: both stream. */
	if (sequential_value > random_value)
		sequential_value = random_value;
	return weight * (random * random_value + sequential * sequential_value);
}

double heat_score(const struct heat_params *p, const struct statsparse_area *a)
{
	return heat_direction(p, p->read_weight, a->reads, a->reads_merged, a->sectors_read) +
	       heat_direction(p, p->write_weight, a->writes, a->writes_merged, a->sectors_written);
}

/*
 * 2^-y for y >= 0.  The core library links nothing, not even libm, so
 * this splits y into whole halvings (exact) and a fraction f < 1, whose
 * e^(-f ln 2) comes from its Taylor series: with |x| < 0.7, twenty terms
 * leave an error near 1e-23, far below double rounding.
 */
static double heat_exp2_neg(double y)
{
	double x, term = 1.0, sum = 1.0;
	unsigned whole;

	/* 2^-1075 is below the smallest double; this also catches infinity. */
	if (!(y < 1075))
		return 0;
	whole = (unsigned)y;
	x = (y - whole) * M_LN2;
	for (unsigned i = 1; i <= 20; i++) {
		term *= -x / i;
		sum += term;
	}
	while (whole--)
		sum *= 0.5;
	return sum;
}

double heat_decay_factor(const struct heat_params *p, uint64_t elapsed_ns)
{
	return heat_exp2_neg((double)elapsed_ns / HEAT_NS_PER_S / p->half_life_s);
}

int heat_table_init(struct heat_table *t, uint32_t nr)
{
	if (!t)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	return heat_table_resize(t, nr);
}

void heat_table_destroy(struct heat_table *t)
{
	if (!t)
		return;
	free(t->e);
	memset(t, 0, sizeof(*t));
}

int heat_table_resize(struct heat_table *t, uint32_t nr)
{
	struct heat_extent *e;
	size_t bytes;

	if (!t)
		return -EINVAL;
	/* realloc(p, 0) may or may not free: keep "no extents" as a NULL array. */
	if (!nr) {
		free(t->e);
		t->e = NULL;
		t->nr = 0;
		return 0;
	}
	/* Only a 32-bit size_t can overflow here. */
	if (__builtin_mul_overflow((size_t)nr, sizeof(*e), &bytes))
		return -ENOMEM;
	e = realloc(t->e, bytes);
	if (!e)
		return -ENOMEM;
	if (nr > t->nr)
		memset(&e[t->nr], 0, (size_t)(nr - t->nr) * sizeof(*e));
	t->e = e;
	t->nr = nr;
	return 0;
}

int heat_sample_begin(const struct heat_table *t, const struct heat_params *p, uint64_t now_ns,
		      double *decay)
{
	/* now_ns 0 would read back as "no sample yet". */
	if (!t || !decay || heat_params_valid(p) < 0 || !now_ns || now_ns < t->last_sample_ns)
		return -EINVAL;
	/* Double, not float: the same rounding of the factor, repeated 8640 times a day, would drift. */
	*decay = t->last_sample_ns ? heat_decay_factor(p, now_ns - t->last_sample_ns) : 1.0;
	return 0;
}

int heat_apply_range(struct heat_table *t, const struct heat_params *p,
		     const struct statsparse_area *a, uint32_t first, uint32_t nr, double decay)
{
	if (!t || (!a && nr) || first > t->nr || nr > t->nr - first || !(decay >= 0 && decay <= 1))
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++) {
		struct heat_extent *e = &t->e[first + i];
		double heat = e->heat * decay;

		/* Most extents are idle in a sample: only decay them. */
		if (a[i].reads | a[i].writes) {
			heat += heat_score(p, &a[i]);
			e->reads += a[i].reads;
			e->writes += a[i].writes;
		}
		e->heat = heat < HEAT_COLD ? 0 : (float)heat;
	}
	return 0;
}

double heat_sum(const struct heat_table *t, uint32_t first, uint32_t nr)
{
	double sum = 0;

	if (!t || first > t->nr || nr > t->nr - first)
		return 0;
	for (uint32_t i = 0; i < nr; i++)
		sum += t->e[first + i].heat;
	return sum;
}

/* Add the next part of total to *given so that the parts so far add up to cum, rounded. */
static uint64_t heat_round_part(double cum, uint64_t *given)
{
	uint64_t upto = (uint64_t)(cum + 0.5), part = upto > *given ? upto - *given : 0;

	*given += part;
	return part;
}

int heat_apply_shared(struct heat_table *t, const struct heat_params *p,
		      const struct statsparse_area *a, uint32_t first, uint32_t nr, double decay,
		      double *share)
{
	double sum, score, w, cum_r = 0, cum_w = 0;
	uint64_t given_r = 0, given_w = 0;

	if (!t || !a || !nr || first > t->nr || nr > t->nr - first || !(decay >= 0 && decay <= 1))
		return -EINVAL;
	sum = heat_sum(t, first, nr);
	score = a->reads | a->writes ? heat_score(p, a) : 0;
	for (uint32_t i = 0; i < nr; i++) {
		struct heat_extent *e = &t->e[first + i];
		double heat;

		w = sum > 0 ? e->heat / (2 * sum) + 0.5 / nr : 1.0 / nr;
		if (share)
			share[i] = w;
		heat = e->heat * decay + score * w;
		cum_r += a->reads * w;
		cum_w += a->writes * w;
		/* The last extent takes what rounding left, so the parts add up. */
		e->reads += i + 1 < nr ? heat_round_part(cum_r, &given_r) :
					 a->reads > given_r ? a->reads - given_r : 0;
		e->writes += i + 1 < nr ? heat_round_part(cum_w, &given_w) :
					  a->writes > given_w ? a->writes - given_w : 0;
		e->heat = heat < HEAT_COLD ? 0 : (float)heat;
	}
	return 0;
}

void heat_sample_end(struct heat_table *t, uint64_t now_ns)
{
	t->last_sample_ns = now_ns;
}

int heat_apply(struct heat_table *t, const struct heat_params *p,
	       const struct statsparse_area *a, uint32_t nr, uint64_t now_ns)
{
	double decay;
	int r;

	if (!t || nr != t->nr)
		return -EINVAL;
	r = heat_sample_begin(t, p, now_ns, &decay);
	if (r == 0)
		r = heat_apply_range(t, p, a, 0, nr, decay);
	if (r == 0)
		heat_sample_end(t, now_ns);
	return r;
}

/* Ranks extent i above extent j: hotter, or as hot and earlier. */
static bool heat_above(const struct heat_extent *e, uint32_t i, uint32_t j)
{
	return e[i].heat > e[j].heat || (e[i].heat == e[j].heat && i < j);
}

/* Restore the heap h[0..n) below slot k; the root is the lowest ranked. */
static void heat_sift_down(const struct heat_extent *e, uint32_t *h, size_t n, size_t k)
{
	for (;;) {
		size_t low = k, child = 2 * k + 1;

		for (size_t c = child; c < child + 2 && c < n; c++)
			if (heat_above(e, h[low], h[c]))
				low = c;
		if (low == k)
			return;
		uint32_t tmp = h[k];
		h[k] = h[low];
		h[low] = tmp;
		k = low;
	}
}

int heat_top(const struct heat_table *t, uint32_t n, uint32_t *out, uint32_t *nr_out)
{
	size_t m;

	if (!t || !nr_out || (!out && n))
		return -EINVAL;
	/*
	 * Keep the best m seen so far in a heap whose root is the worst of
	 * them, so each further extent costs one comparison, and log m only
	 * when it gets in.
	 */
	m = n < t->nr ? n : t->nr;
	*nr_out = (uint32_t)m;
	if (!m)
		return 0;
	for (size_t i = 0; i < m; i++)
		out[i] = (uint32_t)i;
	for (size_t k = m / 2; k-- > 0;)
		heat_sift_down(t->e, out, m, k);
	for (uint32_t i = (uint32_t)m; i < t->nr; i++) {
		/* i is the highest index yet, so it must be strictly hotter to rank above. */
		if (t->e[i].heat > t->e[out[0]].heat) {
			out[0] = i;
			heat_sift_down(t->e, out, m, 0);
		}
	}
	/* Heapsort: moving the root to the back leaves the hottest in front. */
	for (size_t k = m; k > 1; k--) {
		uint32_t tmp = out[0];

		out[0] = out[k - 1];
		out[k - 1] = tmp;
		heat_sift_down(t->e, out, k - 1, 0);
	}
	return 0;
}
