/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "timefmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct timefmt_unit {
	char letter;
	uint64_t seconds;
};

/* Largest first, the order they must be typed in; the units of tierd's schedules. */
static const struct timefmt_unit timefmt_units[] = {
	{ 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 },
};

#define TIMEFMT_N_UNITS (sizeof(timefmt_units) / sizeof(timefmt_units[0]))

int timefmt_parse_iso(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	const char *p;
	time_t t;

	if (!s)
		return -EINVAL;
	/* strptime accepts blanks and short fields; tierd's form has neither. */
	if (strlen(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
	    s[16] != ':')
		return -EINVAL;
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p || p != s + 19)
		return -EINVAL;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	}
	if (strcmp(p, "Z"))
		return -EINVAL;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = t;
	return 0;
}

const char *timefmt_local(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "@%jd", (intmax_t)t);
	return buf;
}

int timefmt_parse_duration(const char *s, uint64_t *seconds)
{
	uint64_t total = 0;
	const char *p = s;
	size_t next = 0;

	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "0")) {
		*seconds = 0;
		return 0;
	}
	while (*p) {
		uint64_t n = 0;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (n > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
				return -ERANGE;
			n = n * 10 + (uint64_t)(*p - '0');
		}
		/* Each unit at most once and larger first, so "1m1h" is a typo, not 61 minutes. */
		while (next < TIMEFMT_N_UNITS && timefmt_units[next].letter != *p)
			next++;
		if (next == TIMEFMT_N_UNITS)
			return -EINVAL;
		if (n > UINT64_MAX / timefmt_units[next].seconds ||
		    total > UINT64_MAX - n * timefmt_units[next].seconds)
			return -ERANGE;
		total += n * timefmt_units[next++].seconds;
		p++;
	}
	*seconds = total;
	return 0;
}

const char *timefmt_duration(uint64_t seconds, char *buf, size_t len)
{
	size_t i = 0;

	while (i + 1 < TIMEFMT_N_UNITS && seconds < timefmt_units[i].seconds)
		i++;
	if (i + 1 == TIMEFMT_N_UNITS) {
		snprintf(buf, len, "%" PRIu64 "s", seconds);
		return buf;
	}
	{
		const struct timefmt_unit *big = &timefmt_units[i], *small = &timefmt_units[i + 1];
		uint64_t rest = (seconds % big->seconds) / small->seconds;

		if (rest)
			snprintf(buf, len, "%" PRIu64 "%c%" PRIu64 "%c", seconds / big->seconds,
				 big->letter, rest, small->letter);
		else
			snprintf(buf, len, "%" PRIu64 "%c", seconds / big->seconds, big->letter);
	}
	return buf;
}
