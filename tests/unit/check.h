/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_TESTS_CHECK_H
#define TIERD_TESTS_CHECK_H

/*
 * Assertions for the unit tests.  A failure prints where and what, then
 * exits 1: later checks usually build on the state the failed one was
 * about, so carrying on would only bury the first message.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void check_fail_(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	exit(1);
}

/* One comparison for both signs: equality survives the round trip through uintmax_t. */
static inline void check_num_(const char *file, int line, const char *a_text,
			      const char *b_text, int is_signed, uintmax_t a, uintmax_t b)
{
	if (a == b)
		return;
	fprintf(stderr, "%s:%d: check failed: %s == %s (", file, line, a_text, b_text);
	if (is_signed)
		fprintf(stderr, "%jd != %jd)\n", (intmax_t)a, (intmax_t)b);
	else
		fprintf(stderr, "%ju / %#jx != %ju / %#jx)\n", a, a, b, b);
	exit(1);
}

static inline void check_str_(const char *file, int line, const char *a_text,
			      const char *b_text, const char *a, const char *b)
{
	if (a && b && !strcmp(a, b))
		return;
	fprintf(stderr, "%s:%d: check failed: %s == %s (\"%s\" != \"%s\")\n",
		file, line, a_text, b_text, a ? a : "(null)", b ? b : "(null)");
	exit(1);
}

static inline void check_near_(const char *file, int line, const char *what, double a,
			       double b, double tolerance)
{
	if ((a > b ? a - b : b - a) <= tolerance)
		return;
	fprintf(stderr, "%s:%d: check failed: %s == %.17g (got %.17g)\n", file, line, what, b, a);
	exit(1);
}

#define CHECK(e) ((e) ? (void)0 : check_fail_(__FILE__, __LINE__, #e))
/* Signed: return codes, negative errnos, counts. */
#define CHECK_INT(a, b) \
	check_num_(__FILE__, __LINE__, #a, #b, 1, (uintmax_t)(intmax_t)(a), (uintmax_t)(intmax_t)(b))
/* Unsigned: sizes, sectors, checksums (also printed in hex). */
#define CHECK_UINT(a, b) check_num_(__FILE__, __LINE__, #a, #b, 0, (uintmax_t)(a), (uintmax_t)(b))
#define CHECK_STR(a, b) check_str_(__FILE__, __LINE__, #a, #b, (a), (b))
#define CHECK_OK(e) CHECK_INT(e, 0)
/* Doubles: a within tolerance of b (0: exactly). */
#define CHECK_NEAR(a, b, tol) check_near_(__FILE__, __LINE__, #a, (a), (b), (tol))

/* A row of the tables of malformed input that the parser tests walk. */
struct check_bad_input {
	const char *text;
	int err;
};

#endif
