/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "size.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Multiplier letters in order: the n-th one (from 1) scales by 2^(10*n). */
static const char size_multipliers[] = "kmgtp";

/* Locale-independent: the suffixes are ASCII and must not depend on LC_CTYPE. */
static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Digits after the point that are kept: 10^19 still fits 64 bits. */
#define SIZE_FRACTION_DIGITS 19

int size_parse(const char *s, uint64_t *out)
{
	const char *p = s;
	unsigned shift = 0, fraction_digits = 0;
	uint64_t v = 0, fraction = 0, scale = 1;
	unsigned __int128 part;

	if (!s || !out)
		return -EINVAL;
	/* Also rejects "", "-1", " 1", ".5" and a bare suffix. */
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (*p == '.') {
		p++;
		/* "1." is a typo or a cut-off number, not 1. */
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			/* Digits past the 19th can only be zeros in a whole number of bytes. */
			if (fraction_digits == SIZE_FRACTION_DIGITS) {
				if (*p != '0')
					return -EINVAL;
				continue;
			}
			fraction = fraction * 10 + (uint64_t)(*p - '0');
			scale *= 10;
			fraction_digits++;
		}
	}

	if (*p) {
		const char *mult = strchr(size_multipliers, ascii_lower(*p));
		if (mult) {
			shift = 10 * (unsigned)(mult - size_multipliers + 1);
			p++;
			/* "Ki" alone is neither a unit nor a typo worth guessing at. */
			if (ascii_lower(*p) == 'i' && ascii_lower(*++p) != 'b')
				return -EINVAL;
		}
		if (ascii_lower(*p) == 'b')
			p++;
		if (*p)
			return -EINVAL;
	}
	if (shift && v > UINT64_MAX >> shift)
		return -ERANGE;
	/* The fraction's bytes, exactly: a part of a byte is refused. */
	part = ((unsigned __int128)fraction << shift);
	if (part % scale)
		return -EINVAL;
	/* Below one unit, so the sum stays below 2^64 whenever v << shift fits. */
	part /= scale;
	*out = (v << shift) + (uint64_t)part;
	return 0;
}

const char *size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	const unsigned nr_units = sizeof(units) / sizeof(units[0]);
	unsigned i = 0, shift;
	uint64_t whole, tenths;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return buf;
	}
	while (i + 1 < nr_units && bytes >> (10 * (i + 2)))
		i++;
	shift = 10 * (i + 1);
	whole = bytes >> shift;
	/* Cannot overflow: the remainder is below 2^60 even for EiB. */
	tenths = ((bytes & ((UINT64_C(1) << shift) - 1)) * 10 + (UINT64_C(1) << (shift - 1))) >> shift;
	if (tenths == 10) {
		whole++;
		tenths = 0;
	}
	/* Rounding 1023.95+ up must not print "1024.0 KiB". */
	if (whole == 1024 && i + 1 < nr_units) {
		whole = 1;
		i++;
	}
	snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " %s", whole, tenths, units[i]);
	return buf;
}
