/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "statsparse.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/*
 * A million areas are ~45 MB of text every sample, so this is a hand
 * written scanner over [p, end): no sscanf, no strtoull (which would also
 * accept signs, blanks and locales), nothing allocated.  The kernel prints
 * single spaces and no leading blanks (dm-stats.c, dm_stats_print), so
 * anything else is rejected rather than guessed at.
 */

#define STATSPARSE_COLUMNS 11

/* Column 9 (I/Os in flight) is printed with %d; the rest are unsigned. */
#define STATSPARSE_SIGNED_COLUMN 8

/*
 * Most areas of a big volume are idle in any 10 s: their eleven counters
 * are all "0".  Comparing them as one block makes such a line about a
 * third of the cost of a busy one (tests/bench/bench-heat).
 */
static const char statsparse_idle[] = " 0 0 0 0 0 0 0 0 0 0 0";
#define STATSPARSE_IDLE_LEN (sizeof(statsparse_idle) - 1)

static bool statsparse_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

static bool statsparse_eol(const char *p, const char *end)
{
	return p == end || *p == '\n';
}

static bool statsparse_idle_area(const char *p, const char *end)
{
	size_t left = (size_t)(end - p);

	return left >= STATSPARSE_IDLE_LEN && !memcmp(p, statsparse_idle, STATSPARSE_IDLE_LEN) &&
	       (left == STATSPARSE_IDLE_LEN || !statsparse_digit(p[STATSPARSE_IDLE_LEN]));
}

/* One run of decimal digits; -ERANGE past 64 bits, -EINVAL if there is none. */
static int statsparse_number(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	/* 19 digits cannot overflow 64 bits: only longer numbers pay for checks. */
	const char *unchecked = end - p > 19 ? p + 19 : end;
	uint64_t v = 0;

	while (p != unchecked && statsparse_digit(*p))
		v = v * 10 + (uint64_t)(*p++ - '0');
	if (p == *pp)
		return -EINVAL;
	while (p != end && statsparse_digit(*p)) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return -ERANGE;
		p++;
	}
	*pp = p;
	*out = v;
	return 0;
}

static int statsparse_u32(uint64_t v, uint32_t *out)
{
	if (v > UINT32_MAX)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

/* The eleven counters after "START+LEN", for an area that saw I/O. */
static int statsparse_counters(const char **pp, const char *end, struct statsparse_area *a)
{
	uint64_t c[STATSPARSE_COLUMNS];
	const char *p = *pp;
	int r;

	for (unsigned i = 0; i < STATSPARSE_COLUMNS; i++) {
		if (p == end || *p++ != ' ')
			return -EINVAL;
		/* A negative in-flight count is the kernel's to explain; it is ignored here. */
		if (i == STATSPARSE_SIGNED_COLUMN && p != end && *p == '-')
			p++;
		r = statsparse_number(&p, end, &c[i]);
		if (r < 0)
			return r;
	}
	/* Columns 4, 8, 10 and 11 are times: heat counts I/Os, not how slow they were. */
	if ((r = statsparse_u32(c[0], &a->reads)) < 0 ||
	    (r = statsparse_u32(c[1], &a->reads_merged)) < 0 ||
	    (r = statsparse_u32(c[4], &a->writes)) < 0 ||
	    (r = statsparse_u32(c[5], &a->writes_merged)) < 0)
		return r;
	a->sectors_read = c[2];
	a->sectors_written = c[6];
	*pp = p;
	return 0;
}

/*
 * Columns past the eleventh: " N" (read and write ticks) and " N:N:..:N"
 * (a histogram).  Their meaning varies with kernel and region options;
 * only their shape is checked, so that junk is still caught.
 */
static int statsparse_skip_extra(const char **pp, const char *end)
{
	const char *p = *pp;

	while (p != end && *p == ' ') {
		const char *field = ++p;

		while (p != end && (statsparse_digit(*p) || *p == ':'))
			p++;
		if (p == field)
			return -EINVAL;
	}
	if (!statsparse_eol(p, end))
		return -EINVAL;
	*pp = p;
	return 0;
}

/* "START+LEN" */
static int statsparse_range(const char **pp, const char *end, uint64_t *start, uint64_t *len)
{
	int r = statsparse_number(pp, end, start);

	if (r < 0)
		return r;
	if (*pp == end || **pp != '+')
		return -EINVAL;
	(*pp)++;
	return statsparse_number(pp, end, len);
}

int statsparse_areas(const char *text, size_t len, uint64_t area_sectors,
		     struct statsparse_area *out, size_t nr_areas)
{
	const char *p = text, *end;
	uint64_t next_start = 0;
	size_t i;

	if ((!text && len) || (!out && nr_areas) || !area_sectors)
		return -EINVAL;
	if (!text)
		return nr_areas ? -EINVAL : 0;
	end = text + len;
	for (i = 0; p != end; i++) {
		uint64_t start, area_len, area_end;
		int r;

		if (i == nr_areas)
			return -EINVAL;
		r = statsparse_range(&p, end, &start, &area_len);
		if (r < 0)
			return r;
		if ((i && start != next_start) || !area_len || area_len > area_sectors ||
		    (area_len < area_sectors && i + 1 != nr_areas) ||
		    __builtin_add_overflow(start, area_len, &area_end))
			return -EINVAL;
		next_start = area_end;

		if (statsparse_idle_area(p, end)) {
			memset(&out[i], 0, sizeof(out[i]));
			p += STATSPARSE_IDLE_LEN;
		} else {
			r = statsparse_counters(&p, end, &out[i]);
			if (r < 0)
				return r;
		}
		r = statsparse_skip_extra(&p, end);
		if (r < 0)
			return r;
		if (p != end)
			p++; /* the newline */
	}
	return i == nr_areas ? 0 : -EINVAL;
}
