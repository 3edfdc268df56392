/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wlog: parse dm-log-writes logs and plan crash points (wlog.h says how). */
#include "wlog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The log is little-endian whatever the machine. */
static uint64_t le64_at(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32_at(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int wlog_parse(struct wlog *log, const void *buf, size_t len)
{
	const unsigned char *b = buf;
	uint64_t nr, pos;

	memset(log, 0, sizeof(*log));
	if (len < 28 || le64_at(b) != WLOG_MAGIC || le64_at(b + 8) != 1)
		return -EINVAL;
	nr = le64_at(b + 16);
	log->sectorsize = le32_at(b + 24);
	if (log->sectorsize < 512 || log->sectorsize > 65536 ||
	    (log->sectorsize & (log->sectorsize - 1)))
		return -EINVAL;
	if (nr > len / log->sectorsize)
		return -EUCLEAN;
	log->e = calloc(nr ? nr : 1, sizeof(*log->e));
	if (!log->e)
		return -ENOMEM;
	pos = log->sectorsize;
	for (uint64_t i = 0; i < nr; i++) {
		struct wlog_entry *e = &log->e[i];
		uint64_t data_len, span;

		if (pos > len || len - pos < log->sectorsize)
			goto short_log;
		e->sector = le64_at(b + pos);
		e->nr_sectors = le64_at(b + pos + 8);
		e->flags = le64_at(b + pos + 16);
		data_len = le64_at(b + pos + 24);
		e->data_off = pos + log->sectorsize;
		if (e->flags & WLOG_MARK) {
			size_t n = data_len < WLOG_MARK_LEN - 1 ? data_len : WLOG_MARK_LEN - 1;

			if (data_len > log->sectorsize - 32)
				goto short_log;
			memcpy(e->mark, b + pos + 32, n);
			e->mark[n] = '\0';
		}
		span = e->flags & WLOG_DISCARD ? 0 : e->nr_sectors;
		if (span > (len - e->data_off) / log->sectorsize)
			goto short_log;
		pos = e->data_off + span * log->sectorsize;
		log->nr = i + 1;
	}
	return 0;
short_log:
	wlog_destroy(log);
	return -EUCLEAN;
}

void wlog_destroy(struct wlog *log)
{
	if (!log)
		return;
	free(log->e);
	log->e = NULL;
	log->nr = 0;
}

size_t wlog_group_start(const struct wlog *log, size_t i)
{
	while (i > 0 && wlog_is_plain(&log->e[i - 1]))
		i--;
	return i;
}

static int is_durable_point(const struct wlog_entry *e)
{
	return (e->flags & (WLOG_FLUSH | WLOG_FUA)) != 0;
}

/* Index of the mark "tick:n" in log, searching from *from; -1 if none. */
static long find_tick(const struct wlog *log, size_t from, unsigned long n)
{
	for (size_t i = from; i < log->nr; i++) {
		char *end;

		if (!(log->e[i].flags & WLOG_MARK) || strncmp(log->e[i].mark, "tick:", 5))
			continue;
		if (strtoul(log->e[i].mark + 5, &end, 10) == n && *end == '\0')
			return (long)i;
	}
	return -1;
}

struct dev_index {
	size_t *tick;     /* index of each tick's mark */
	uint64_t *acked;  /* acked[p]: highest ack mark in [0, p) */
	size_t *phase;    /* phase[p]: index + 1 of the latest phase mark in [0, p), 0 if none */
};

static int add_cut(struct wlog_plan *plan, size_t *cap, const struct wlog_cut *c)
{
	if (plan->nr == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct wlog_cut *grown = realloc(plan->cut, n * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		plan->cut = grown;
		*cap = n;
	}
	plan->cut[plan->nr++] = *c;
	return 0;
}

static void fill_labels(const struct wlog *logs, unsigned nr, const struct dev_index *ix,
			struct wlog_cut *c)
{
	size_t ph = ix[0].phase[c->prefix[0]];

	c->acked = 0;
	for (unsigned d = 0; d < nr; d++)
		if (ix[d].acked[c->prefix[d]] > c->acked)
			c->acked = ix[d].acked[c->prefix[d]];
	snprintf(c->phase, sizeof(c->phase), "%s", ph ? logs[0].e[ph - 1].mark + 6 : "");
}

int wlog_plan(const struct wlog *logs, unsigned nr, struct wlog_plan *plan)
{
	struct dev_index ix[WLOG_MAX_DEVS] = { 0 };
	size_t ticks = (size_t)-1, cap = 0;
	int r = -ENOMEM;

	memset(plan, 0, sizeof(*plan));
	if (nr == 0 || nr > WLOG_MAX_DEVS)
		return -EINVAL;
	for (unsigned d = 0; d < nr; d++) {
		const struct wlog *log = &logs[d];
		size_t n = 0, cap_t = 64;
		long at = 0;

		ix[d].tick = malloc(cap_t * sizeof(size_t));
		ix[d].acked = calloc(log->nr + 1, sizeof(uint64_t));
		ix[d].phase = calloc(log->nr + 1, sizeof(size_t));
		if (!ix[d].tick || !ix[d].acked || !ix[d].phase)
			goto out;
		while ((at = find_tick(log, (size_t)at, n)) >= 0) {
			if (n == cap_t) {
				size_t *grown = realloc(ix[d].tick, 2 * cap_t * sizeof(size_t));

				if (!grown)
					goto out;
				ix[d].tick = grown;
				cap_t *= 2;
			}
			ix[d].tick[n++] = (size_t)at;
		}
		if (n < ticks)
			ticks = n;
		for (size_t i = 0; i < log->nr; i++) {
			const struct wlog_entry *e = &log->e[i];

			ix[d].acked[i + 1] = ix[d].acked[i];
			ix[d].phase[i + 1] = ix[d].phase[i];
			if (!(e->flags & WLOG_MARK))
				continue;
			if (!strncmp(e->mark, "ack:", 4)) {
				uint64_t s = strtoull(e->mark + 4, NULL, 10);

				if (s > ix[d].acked[i + 1])
					ix[d].acked[i + 1] = s;
			} else if (!strncmp(e->mark, "phase:", 6)) {
				ix[d].phase[i + 1] = i + 1;
			}
		}
	}
	if (ticks == 0) {
		r = -ENOENT; /* no common clock: no crash point can be placed */
		goto out;
	}
	for (size_t t = 0; t < ticks; t++) {
		size_t lo[WLOG_MAX_DEVS], hi[WLOG_MAX_DEVS];
		unsigned flushing = 0, who = 0;
		struct wlog_cut c = { .kind = WLOG_CUT_TICK };

		for (unsigned d = 0; d < nr; d++) {
			lo[d] = ix[d].tick[t] + 1;
			hi[d] = t + 1 < ticks ? ix[d].tick[t + 1] : logs[d].nr;
			c.prefix[d] = lo[d];
			for (size_t i = lo[d]; i < hi[d]; i++) {
				if (is_durable_point(&logs[d].e[i])) {
					flushing++;
					who = d;
					break;
				}
			}
		}
		fill_labels(logs, nr, ix, &c);
		r = add_cut(plan, &cap, &c);
		if (r < 0)
			goto out;
		if (flushing > 1) {
			for (unsigned d = 0; d < nr; d++)
				for (size_t i = lo[d]; i < hi[d]; i++)
					plan->skipped += is_durable_point(&logs[d].e[i]);
			continue;
		}
		if (flushing == 0)
			continue;
		for (size_t i = lo[who]; i < hi[who]; i++) {
			const struct wlog_entry *e = &logs[who].e[i];
			size_t g = wlog_group_start(&logs[who], i);

			if (!is_durable_point(e))
				continue;
			if ((e->flags & WLOG_FLUSH) && g < i) {
				struct wlog_cut b = c;

				b.kind = WLOG_CUT_BEFORE;
				b.dev = who;
				b.entry = i;
				b.prefix[who] = g;
				b.group_end = i;
				fill_labels(logs, nr, ix, &b);
				r = add_cut(plan, &cap, &b);
				if (r < 0)
					goto out;
			}
			c.kind = WLOG_CUT_AFTER;
			c.dev = who;
			c.entry = i;
			c.prefix[who] = i + 1;
			fill_labels(logs, nr, ix, &c);
			r = add_cut(plan, &cap, &c);
			if (r < 0)
				goto out;
		}
	}
	r = 0;
out:
	for (unsigned d = 0; d < nr; d++) {
		free(ix[d].tick);
		free(ix[d].acked);
		free(ix[d].phase);
	}
	if (r < 0)
		wlog_plan_destroy(plan);
	return r;
}

void wlog_plan_destroy(struct wlog_plan *plan)
{
	if (!plan)
		return;
	free(plan->cut);
	plan->cut = NULL;
	plan->nr = 0;
}

void wlog_subset(uint64_t seed, size_t n, unsigned char *keep)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t kept = 0;

	for (size_t k = 0; k < n; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		keep[k] = x >> 63;
		kept += keep[k];
	}
	if (n && !kept)
		keep[x % n] = 1;
}
