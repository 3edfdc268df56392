/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "decimal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define DECIMAL_DIGITS 4

/* "0.9300" -> "0.93", "12.000" -> "12"; text without a point stays. */
static void decimal_trim(char *buf)
{
	char *end;

	if (!strchr(buf, '.'))
		return;
	end = buf + strlen(buf);
	while (end > buf && end[-1] == '0')
		*--end = '\0';
	if (end > buf && end[-1] == '.')
		end[-1] = '\0';
}

const char *decimal_format(double v, char *buf, size_t len)
{
	double a = fabs(v);
	int decimals;

	if (!len)
		return buf;
	if (!isfinite(v) || a == 0.0) {
		snprintf(buf, len, "0");
		return buf;
	}
	if (a >= 1e15 || a < 1e-9) {
		snprintf(buf, len, "%.*g", DECIMAL_DIGITS, v);
		return buf;
	}
	/* Digits after the point that leave DECIMAL_DIGITS significant ones. */
	decimals = DECIMAL_DIGITS - 1 - (int)floor(log10(a));
	if (decimals < 0) {
		double scale = pow(10.0, -decimals);

		snprintf(buf, len, "%.0f", round(v / scale) * scale);
		return buf;
	}
	snprintf(buf, len, "%.*f", decimals, v);
	decimal_trim(buf);
	/* A value that rounds to zero must not print as "-0". */
	if (!strcmp(buf, "-0"))
		snprintf(buf, len, "0");
	return buf;
}
