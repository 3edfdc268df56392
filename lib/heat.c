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

/*
 * 2^40: forty half-lives of scaling (40 days at the default) before one
 * pass over the table; with any heat a disk can earn (under 1e12) the
 * scaled values stay far below float's 3.4e38.
 */
#define HEAT_SCALE_MAX 1099511627776.0

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

const struct heat_extent heat_extent_cold;

int heat_table_init(struct heat_table *t, uint32_t nr)
{
	int r;

	if (!t)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->scale = 1;
	r = heat_table_resize(t, nr);
	if (r == 0 && t->dirty)
		memset(t->dirty, 0, heat_nr_chunks(t));
	return r;
}

static struct heat_extent *heat_pg(const struct heat_table *t, uint32_t k)
{
	return pagedir_get(&t->pages, k);
}

static void heat_pages_free(struct heat_table *t, uint32_t from, uint32_t to)
{
	for (uint32_t k = pagedir_next(&t->pages, from, to); k < to;
	     k = pagedir_next(&t->pages, k + 1, to)) {
		free(heat_pg(t, k));
		pagedir_set(&t->pages, k, NULL); /* its leaf is made: cannot fail */
		t->nr_pages_used--;
	}
}

void heat_table_destroy(struct heat_table *t)
{
	if (!t)
		return;
	heat_pages_free(t, 0, t->pages.nr);
	pagedir_destroy(&t->pages);
	free(t->dirty);
	memset(t, 0, sizeof(*t));
}

uint64_t heat_table_bytes(const struct heat_table *t)
{
	return pagedir_bytes(&t->pages) + heat_nr_chunks(t) +
	       (uint64_t)t->nr_pages_used * HEAT_PAGE * sizeof(struct heat_extent);
}

static double heat_scale(const struct heat_table *t)
{
	return t->scale > 0 ? t->scale : 1.0;
}

static void heat_mark(struct heat_table *t, uint32_t first, uint32_t nr)
{
	if (!t->dirty || !nr)
		return;
	for (uint32_t k = first / HEAT_CHUNK; k <= (first + nr - 1) / HEAT_CHUNK; k++)
		t->dirty[k] = 1;
}

/* Page k of t, allocated (cold) if it was not; NULL without memory. */
static struct heat_extent *heat_page_get(struct heat_table *t, uint32_t k)
{
	struct heat_extent *pg = heat_pg(t, k);

	if (pg)
		return pg;
	pg = calloc(HEAT_PAGE, sizeof(*pg));
	if (!pg || pagedir_set(&t->pages, k, pg) < 0) {
		free(pg);
		return NULL;
	}
	t->nr_pages_used++;
	return pg;
}

struct heat_extent *heat_at_mut(struct heat_table *t, uint32_t i)
{
	struct heat_extent *pg;

	if (!t || i >= t->nr)
		return NULL;
	pg = heat_page_get(t, i / HEAT_PAGE);
	if (!pg)
		return NULL;
	heat_mark(t, i, 1);
	return &pg[i % HEAT_PAGE];
}

uint32_t heat_next_used(const struct heat_table *t, uint32_t i, uint32_t end)
{
	if (!t)
		return 0;
	if (end > t->nr)
		end = t->nr;
	if (i >= end)
		return end;
	if (heat_pg(t, i / HEAT_PAGE))
		return i;
	if ((uint64_t)(i / HEAT_PAGE + 1) * HEAT_PAGE < end) {
		uint32_t k = pagedir_next(&t->pages, i / HEAT_PAGE + 1, (end - 1) / HEAT_PAGE + 1);

		if ((uint64_t)k * HEAT_PAGE < end)
			return k * HEAT_PAGE;
	}
	return end;
}

int heat_set(struct heat_table *t, uint32_t i, double heat)
{
	struct heat_extent *e;

	if (!t || i >= t->nr)
		return -EINVAL;
	/* Cold where nothing is allocated already: no page for nothing. */
	if (heat == 0 && !heat_pg(t, i / HEAT_PAGE))
		return 0;
	e = heat_at_mut(t, i);
	if (!e)
		return -ENOMEM;
	e->heat = (float)(heat * heat_scale(t));
	return 0;
}

int heat_set_moved(struct heat_table *t, uint32_t i, uint32_t when)
{
	struct heat_extent *e;

	if (!t || i >= t->nr)
		return -EINVAL;
	if (!when && !heat_pg(t, i / HEAT_PAGE))
		return 0;
	e = heat_at_mut(t, i);
	if (!e)
		return -ENOMEM;
	e->moved_at = when;
	return 0;
}

int heat_chunk_dirty(const struct heat_table *t, uint32_t k)
{
	return t->dirty && k < heat_nr_chunks(t) && t->dirty[k];
}

void heat_chunk_clean(struct heat_table *t, uint32_t k)
{
	if (t->dirty && k < heat_nr_chunks(t))
		t->dirty[k] = 0;
}

int heat_table_resize(struct heat_table *t, uint32_t nr)
{
	uint32_t old_chunks, chunks = (uint32_t)(((uint64_t)nr + HEAT_CHUNK - 1) / HEAT_CHUNK);
	uint32_t old_pages, pages = (uint32_t)(((uint64_t)nr + HEAT_PAGE - 1) / HEAT_PAGE);
	uint8_t *dirty;

	if (!t)
		return -EINVAL;
	old_pages = t->pages.nr;
	/* realloc(p, 0) may or may not free: keep "no extents" as NULL arrays. */
	if (!nr) {
		heat_pages_free(t, 0, old_pages);
		pagedir_destroy(&t->pages);
		free(t->dirty);
		t->dirty = NULL;
		t->nr = 0;
		return 0;
	}
	old_chunks = t->dirty ? heat_nr_chunks(t) : 0;
	dirty = realloc(t->dirty, chunks);
	if (!dirty)
		return -ENOMEM;
	t->dirty = dirty;
	if (pages > old_pages && pagedir_resize(&t->pages, pages) < 0)
		return -ENOMEM;
	if (pages < old_pages) {
		heat_pages_free(t, pages, old_pages);
		pagedir_resize(&t->pages, pages); /* a shrink: cannot fail */
	}
	/* Extents past the end of a page kept in part are cold, for when the table grows again. */
	if (nr < t->nr && nr % HEAT_PAGE && heat_pg(t, pages - 1))
		memset(&heat_pg(t, pages - 1)[nr % HEAT_PAGE], 0,
		       (HEAT_PAGE - nr % HEAT_PAGE) * sizeof(struct heat_extent));
	/* The last old chunk gains or loses extents: it changed too. */
	for (uint32_t k = old_chunks ? old_chunks - 1 : 0; k < chunks; k++)
		dirty[k] = 1;
	t->nr = nr;
	return 0;
}

/* Multiply every extent's heat by factor and bring the table to scale 1. */
static void heat_rescale(struct heat_table *t, double factor)
{
	double k = factor / heat_scale(t);

	for (uint32_t pg = pagedir_next(&t->pages, 0, t->pages.nr); pg < t->pages.nr;
	     pg = pagedir_next(&t->pages, pg + 1, t->pages.nr)) {
		struct heat_extent *e = heat_pg(t, pg);

		for (uint32_t i = 0; i < HEAT_PAGE; i++) {
			double heat = e[i].heat * k;

			/* Dirty or not: the store keeps what it had, which decays the same. */
			e[i].heat = heat < HEAT_COLD ? 0 : (float)heat;
		}
	}
	t->scale = 1;
}

int heat_sample_begin(struct heat_table *t, const struct heat_params *p, uint64_t now_ns)
{
	double decay;

	/* now_ns 0 would read back as "no sample yet". */
	if (!t || heat_params_valid(p) < 0 || !now_ns || now_ns < t->last_sample_ns)
		return -EINVAL;
	/* Double, not float: the same rounding of the factor, repeated 8640 times a day, would drift. */
	decay = t->last_sample_ns ? heat_decay_factor(p, now_ns - t->last_sample_ns) : 1.0;
	if (!(heat_scale(t) < HEAT_SCALE_MAX * decay))
		heat_rescale(t, decay); /* also when decay underflowed to 0 */
	else
		t->scale = heat_scale(t) / decay;
	t->last_sample_ns = now_ns;
	return 0;
}

/* Add heat to extent e of t, scaled. */
static void heat_add(struct heat_table *t, struct heat_extent *e, double heat)
{
	double scaled = e->heat + heat * heat_scale(t);

	e->heat = scaled < HEAT_COLD * heat_scale(t) ? 0 : (float)scaled;
}

int heat_apply_range(struct heat_table *t, const struct heat_params *p,
		     const struct statsparse_area *a, uint32_t first, uint32_t nr)
{
	if (!t || (!a && nr) || first > t->nr || nr > t->nr - first)
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++) {
		struct heat_extent *e;

		/* Most extents are idle in a sample: nothing to do for them. */
		if (!(a[i].reads | a[i].writes))
			continue;
		e = heat_at_mut(t, first + i);
		if (!e)
			return -ENOMEM;
		heat_add(t, e, heat_score(p, &a[i]));
		e->reads += a[i].reads;
		e->writes += a[i].writes;
	}
	return 0;
}

/* The scaled heat of extents [first, first + nr), in range. */
static double heat_sum_scaled(const struct heat_table *t, uint32_t first, uint32_t nr)
{
	uint32_t end = first + nr, i = heat_next_used(t, first, end);
	double sum = 0;

	while (i < end) {
		const struct heat_extent *pg = heat_pg(t, i / HEAT_PAGE);
		uint32_t stop = (i / HEAT_PAGE + 1) * HEAT_PAGE;

		for (stop = stop < end ? stop : end; i < stop; i++)
			sum += pg[i % HEAT_PAGE].heat;
		i = heat_next_used(t, i, end);
	}
	return sum;
}

double heat_sum(const struct heat_table *t, uint32_t first, uint32_t nr)
{
	if (!t || first > t->nr || nr > t->nr - first)
		return 0;
	return heat_sum_scaled(t, first, nr) / heat_scale(t);
}

/* Add the next part of total to *given so that the parts so far add up to cum, rounded. */
static uint64_t heat_round_part(double cum, uint64_t *given)
{
	uint64_t upto = (uint64_t)(cum + 0.5), part = upto > *given ? upto - *given : 0;

	*given += part;
	return part;
}

int heat_apply_shared(struct heat_table *t, const struct heat_params *p,
		      const struct statsparse_area *a, uint32_t first, uint32_t nr, double *share)
{
	double sum, score, w, cum_r = 0, cum_w = 0;
	uint64_t given_r = 0, given_w = 0;

	if (!t || !a || !nr || first > t->nr || nr > t->nr - first)
		return -EINVAL;
	/* A coarse zone nobody used costs nothing: most of a big pool, most of the time. */
	if (!(a->reads | a->writes))
		return 0;
	/* Every extent gets a part: all their pages first, so no failure leaves a part given. */
	for (uint32_t k = first / HEAT_PAGE; k <= (first + nr - 1) / HEAT_PAGE; k++)
		if (!heat_page_get(t, k))
			return -ENOMEM;
	sum = heat_sum_scaled(t, first, nr);
	score = heat_score(p, a);
	for (uint32_t i = 0; i < nr; i++) {
		struct heat_extent *e = &heat_pg(t, (first + i) / HEAT_PAGE)[(first + i) % HEAT_PAGE];

		w = sum > 0 ? e->heat / (2 * sum) + 0.5 / nr : 1.0 / nr;
		if (share)
			share[i] = w;
		heat_add(t, e, score * w);
		cum_r += a->reads * w;
		cum_w += a->writes * w;
		/* The last extent takes what rounding left, so the parts add up. */
		e->reads += i + 1 < nr ? heat_round_part(cum_r, &given_r) :
					 a->reads > given_r ? a->reads - given_r : 0;
		e->writes += i + 1 < nr ? heat_round_part(cum_w, &given_w) :
					  a->writes > given_w ? a->writes - given_w : 0;
	}
	heat_mark(t, first, nr);
	return 0;
}

int heat_apply(struct heat_table *t, const struct heat_params *p,
	       const struct statsparse_area *a, uint32_t nr, uint64_t now_ns)
{
	int r;

	if (!t || nr != t->nr || (!a && nr) || heat_params_valid(p) < 0 || !now_ns ||
	    now_ns < t->last_sample_ns)
		return -EINVAL;
	r = heat_sample_begin(t, p, now_ns);
	if (r == 0)
		r = heat_apply_range(t, p, a, 0, nr);
	return r;
}

/* Ranks extent i above extent j: hotter, or as hot and earlier. */
static bool heat_above(const struct heat_table *t, uint32_t i, uint32_t j)
{
	float hi = heat_at(t, i)->heat, hj = heat_at(t, j)->heat;

	return hi > hj || (hi == hj && i < j);
}

/* Restore the heap h[0..n) below slot k; the root is the lowest ranked. */
static void heat_sift_down(const struct heat_table *t, uint32_t *h, size_t n, size_t k)
{
	for (;;) {
		size_t low = k, child = 2 * k + 1;

		for (size_t c = child; c < child + 2 && c < n; c++)
			if (heat_above(t, h[low], h[c]))
				low = c;
		if (low == k)
			return;
		uint32_t tmp = h[k];
		h[k] = h[low];
		h[low] = tmp;
		k = low;
	}
}

/*
 * Extent i, in index order, against the best m so far in out: appended
 * while there are fewer (a heap from the m-th on), else in place of the
 * worst if strictly hotter (i is the highest index yet, so only more heat
 * ranks it above).
 */
static void heat_top_offer(const struct heat_table *t, uint32_t *out, size_t m, size_t *have,
			   uint32_t i)
{
	if (*have < m) {
		out[(*have)++] = i;
		if (*have == m)
			for (size_t k = m / 2; k-- > 0;)
				heat_sift_down(t, out, m, k);
		return;
	}
	if (heat_at(t, i)->heat > heat_at(t, out[0])->heat) {
		out[0] = i;
		heat_sift_down(t, out, m, 0);
	}
}

int heat_top_ranges(const struct heat_table *t, const uint32_t *first, const uint32_t *count,
		    uint32_t nr_ranges, uint32_t n, uint32_t *out, uint32_t *nr_out)
{
	uint64_t total = 0;
	size_t m, have = 0;
	float root = 0;

	if (!t || !nr_out || (!out && n) || (nr_ranges && (!first || !count)))
		return -EINVAL;
	for (uint32_t k = 0; k < nr_ranges; k++) {
		if ((uint64_t)first[k] + count[k] > t->nr ||
		    (k && first[k] < (uint64_t)first[k - 1] + count[k - 1]))
			return -EINVAL;
		total += count[k];
	}
	/*
	 * Keep the best m seen so far in a heap whose root is the worst of
	 * them, so each further extent costs one comparison, and log m only
	 * when it gets in.  A page that is not allocated is all cold: its
	 * extents can only fill places no warmer extent has taken yet, so
	 * once the heap is full such pages are skipped whole.
	 */
	m = n < total ? n : (size_t)total;
	*nr_out = (uint32_t)m;
	if (!m)
		return 0;
	for (uint32_t k = 0; k < nr_ranges; k++) {
		uint32_t i = first[k], stop = first[k] + count[k];

		while (i < stop) {
			const struct heat_extent *pg = heat_pg(t, i / HEAT_PAGE);
			uint32_t end = (i / HEAT_PAGE + 1) * HEAT_PAGE;

			if (have == m && !pg) {
				i = heat_next_used(t, i, stop);
				continue;
			}
			/* A page at a time, its extents against the root's heat, looked up once. */
			for (end = end < stop ? end : stop; i < end; i++) {
				if (have == m && !(pg && pg[i % HEAT_PAGE].heat > root))
					continue;
				heat_top_offer(t, out, m, &have, i);
				if (have == m)
					root = heat_at(t, out[0])->heat;
			}
		}
	}
	/* Heapsort: moving the root to the back leaves the hottest in front. */
	for (size_t k = m; k > 1; k--) {
		uint32_t tmp = out[0];

		out[0] = out[k - 1];
		out[k - 1] = tmp;
		heat_sift_down(t, out, k - 1, 0);
	}
	return 0;
}

int heat_top(const struct heat_table *t, uint32_t n, uint32_t *out, uint32_t *nr_out)
{
	uint32_t first = 0;

	if (!t)
		return -EINVAL;
	return heat_top_ranges(t, &first, &t->nr, 1, n, out, nr_out);
}
