/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "policy.h"
#include "array.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * Numbers are parsed by hand: strtod() would also take signs, blanks,
 * exponents, "inf", "nan", hex and a locale's decimal comma, and a policy
 * file must mean the same thing on every machine.
 */

/* 15 digits fit a double exactly, so mantissa / 10^k is one correctly rounded division. */
#define POLICY_DIGITS_MAX 15

enum policy_key {
	POLICY_KEY_DESCRIPTION,
	POLICY_KEY_PROMOTE,
	POLICY_KEY_DEMOTE,
	POLICY_KEY_SSD_HEADROOM,
	POLICY_KEY_HYSTERESIS,
	POLICY_KEY_MIN_RESIDENCY,
	POLICY_KEY_MIN_HEAT,
	POLICY_KEY_COUNT,
};

static const char *const policy_keys[POLICY_KEY_COUNT] = {
	[POLICY_KEY_DESCRIPTION] = "description",
	[POLICY_KEY_PROMOTE] = "promote",
	[POLICY_KEY_DEMOTE] = "demote",
	[POLICY_KEY_SSD_HEADROOM] = "ssd_headroom",
	[POLICY_KEY_HYSTERESIS] = "hysteresis",
	[POLICY_KEY_MIN_RESIDENCY] = "min_residency",
	[POLICY_KEY_MIN_HEAT] = "min_heat",
};

static const char *const policy_promote_names[] = {
	[POLICY_PROMOTE_HEAT] = "heat",
	[POLICY_PROMOTE_ALL] = "all",
	[POLICY_PROMOTE_NONE] = "none",
};

static const char *const policy_demote_names[] = {
	[POLICY_DEMOTE_NEEDED] = "needed",
	[POLICY_DEMOTE_ALL] = "all",
};


void policy_default(struct policy *p)
{
	*p = (struct policy){
		.name = "auto",
		.description = "Hot data on the SSD, cold data on the HDD, by heat",
		.promote = POLICY_PROMOTE_HEAT,
		.demote = POLICY_DEMOTE_NEEDED,
		.ssd_headroom = 0.10,
		.hysteresis = 1.5,
		.min_residency_s = 3600,
		/* About one small random I/O a day: anything colder gains nothing on the SSD. */
		.min_heat = 1.0,
	};
}

int policy_name_valid(const char *name)
{
	size_t i;

	if (!name || !name[0] || name[0] == '-')
		return 0;
	for (i = 0; name[i]; i++) {
		char c = name[i];

		if (i >= POLICY_NAME_MAX - 1)
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* False for NaN too. */
static bool policy_in(double v, double lo, double hi)
{
	return v >= lo && v <= hi;
}

static bool policy_combination_valid(enum policy_promote promote, enum policy_demote demote)
{
	/* Emptying the SSD while filling it would undo each run's moves in the next one. */
	return demote != POLICY_DEMOTE_ALL || promote == POLICY_PROMOTE_NONE;
}

int policy_valid(const struct policy *p)
{
	if (!p || !policy_name_valid(p->name) ||
	    !memchr(p->description, '\0', sizeof(p->description)) ||
	    (unsigned)p->promote >= ARRAY_SIZE(policy_promote_names) ||
	    (unsigned)p->demote >= ARRAY_SIZE(policy_demote_names) ||
	    !policy_combination_valid(p->promote, p->demote) ||
	    !policy_in(p->ssd_headroom, 0, POLICY_HEADROOM_MAX) ||
	    !policy_in(p->hysteresis, POLICY_HYSTERESIS_MIN, POLICY_HYSTERESIS_MAX) ||
	    p->min_residency_s > POLICY_RESIDENCY_MAX_S ||
	    !policy_in(p->min_heat, 0, POLICY_MIN_HEAT_MAX))
		return -EINVAL;
	return 0;
}

double policy_promote_min_heat(const struct policy *p)
{
	return p->promote == POLICY_PROMOTE_HEAT ? p->min_heat : 0;
}

const char *policy_promote_name(enum policy_promote v)
{
	if ((unsigned)v >= ARRAY_SIZE(policy_promote_names))
		return "?";
	return policy_promote_names[v];
}

const char *policy_demote_name(enum policy_demote v)
{
	if ((unsigned)v >= ARRAY_SIZE(policy_demote_names))
		return "?";
	return policy_demote_names[v];
}

/* A value or key as the slice [s, end) of the text. */
struct policy_slice {
	const char *s;
	const char *end;
};

static size_t policy_slice_len(struct policy_slice v)
{
	return (size_t)(v.end - v.s);
}

static bool policy_slice_is(struct policy_slice v, const char *word)
{
	size_t n = strlen(word);

	return policy_slice_len(v) == n && !memcmp(v.s, word, n);
}

static bool policy_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

/*
 * Plain decimal: digits, optionally '.' and more digits; no sign, no
 * exponent.  *p is left after the number, so a caller can look for a
 * suffix.  The value is mantissa / 10^decimals.
 */
static bool policy_decimal(const char **p, const char *end, uint64_t *mantissa,
			   unsigned *decimals)
{
	const char *s = *p;
	unsigned digits = 0;
	uint64_t m = 0;

	*decimals = 0;
	if (s == end || !policy_digit(*s))
		return false;
	for (; s != end && policy_digit(*s); s++) {
		/* Leading zeros carry no precision: "0.0001" is fine. */
		if (m || *s != '0')
			digits++;
		m = m * 10 + (uint64_t)(*s - '0');
		if (digits > POLICY_DIGITS_MAX)
			return false;
	}
	if (s != end && *s == '.') {
		s++;
		if (s == end || !policy_digit(*s))
			return false;
		for (; s != end && policy_digit(*s); s++) {
			if (m || *s != '0')
				digits++;
			m = m * 10 + (uint64_t)(*s - '0');
			if (digits > POLICY_DIGITS_MAX || ++*decimals > POLICY_DIGITS_MAX)
				return false;
		}
	}
	*p = s;
	*mantissa = m;
	return true;
}

static double policy_pow10(unsigned n)
{
	double v = 1;

	/* Exact up to 10^22, and n stays below 18. */
	while (n--)
		v *= 10;
	return v;
}

/* The whole slice is a number; scale_digits shifts the decimal point left (2 for a percent). */
static bool policy_number(struct policy_slice v, unsigned scale_digits, double *out)
{
	const char *p = v.s;
	uint64_t m;
	unsigned decimals;

	if (!policy_decimal(&p, v.end, &m, &decimals) || p != v.end)
		return false;
	*out = (double)m / policy_pow10(decimals + scale_digits);
	return true;
}

static bool policy_headroom(struct policy_slice v, double *out)
{
	bool percent = v.end > v.s && v.end[-1] == '%';

	if (percent)
		v.end--;
	return policy_number(v, percent ? 2 : 0, out) && policy_in(*out, 0, POLICY_HEADROOM_MAX);
}

/*
 * "0", or amounts with units in falling order, each at most once: "1d",
 * "6h", "1h30m", "90s".  A bare number other than 0 is refused: seconds
 * or minutes would be a guess.
 */
static bool policy_duration(struct policy_slice v, uint32_t *out)
{
	static const char units[] = "dhms";
	static const uint32_t unit_s[] = { 86400, 3600, 60, 1 };
	const char *p = v.s;
	size_t next_unit = 0;
	uint64_t total = 0;

	if (policy_slice_is(v, "0")) {
		*out = 0;
		return true;
	}
	if (p == v.end)
		return false;
	while (p != v.end) {
		uint64_t n = 0;
		const char *unit;
		unsigned digits = 0;

		for (; p != v.end && policy_digit(*p); p++) {
			n = n * 10 + (uint64_t)(*p - '0');
			/* Beyond any accepted duration, and far from overflowing. */
			if (++digits > 9)
				return false;
		}
		if (!digits || p == v.end)
			return false;
		unit = memchr(units + next_unit, *p, sizeof(units) - 1 - next_unit);
		if (!unit)
			return false;
		total += n * unit_s[unit - units];
		next_unit = (size_t)(unit - units) + 1;
		p++;
	}
	if (total > POLICY_RESIDENCY_MAX_S)
		return false;
	*out = (uint32_t)total;
	return true;
}

/* The parse of one file: what was read so far and where errors go. */
struct policy_parser {
	struct policy p;
	unsigned line;
	unsigned key_line[POLICY_KEY_COUNT]; /* 0: not seen */
	char *err;
	size_t err_len;
};

__attribute__((format(printf, 2, 3))) static int policy_error(struct policy_parser *ps,
							     const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!ps->err || !ps->err_len)
		return -EINVAL;
	n = snprintf(ps->err, ps->err_len, "line %u: ", ps->line);
	if (n >= 0 && (size_t)n < ps->err_len) {
		va_start(ap, fmt);
		vsnprintf(ps->err + n, ps->err_len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool policy_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int policy_value(struct policy_parser *ps, enum policy_key key, struct policy_slice v)
{
	struct policy *p = &ps->p;
	size_t i;

	switch (key) {
	case POLICY_KEY_DESCRIPTION:
		if (policy_slice_len(v) >= sizeof(p->description))
			return policy_error(ps, "description must be at most %zu bytes",
					    sizeof(p->description) - 1);
		memcpy(p->description, v.s, policy_slice_len(v));
		p->description[policy_slice_len(v)] = '\0';
		return 0;
	case POLICY_KEY_PROMOTE:
		for (i = 0; i < ARRAY_SIZE(policy_promote_names); i++)
			if (policy_slice_is(v, policy_promote_names[i])) {
				p->promote = (enum policy_promote)i;
				return 0;
			}
		return policy_error(ps, "promote must be heat, all or none");
	case POLICY_KEY_DEMOTE:
		for (i = 0; i < ARRAY_SIZE(policy_demote_names); i++)
			if (policy_slice_is(v, policy_demote_names[i])) {
				p->demote = (enum policy_demote)i;
				return 0;
			}
		return policy_error(ps, "demote must be needed or all");
	case POLICY_KEY_SSD_HEADROOM:
		if (!policy_headroom(v, &p->ssd_headroom))
			return policy_error(ps, "ssd_headroom must be a percentage from 0%% to "
						"50%% or a fraction from 0 to 0.5");
		return 0;
	case POLICY_KEY_HYSTERESIS:
		if (!policy_number(v, 0, &p->hysteresis) ||
		    !policy_in(p->hysteresis, POLICY_HYSTERESIS_MIN, POLICY_HYSTERESIS_MAX))
			return policy_error(ps, "hysteresis must be a number from 1 to 100");
		return 0;
	case POLICY_KEY_MIN_RESIDENCY:
		if (!policy_duration(v, &p->min_residency_s))
			return policy_error(ps, "min_residency must be a duration from 0 to 365d, "
						"like 30m, 6h, 1d or 1h30m");
		return 0;
	case POLICY_KEY_MIN_HEAT:
		if (!policy_number(v, 0, &p->min_heat) ||
		    !policy_in(p->min_heat, 0, POLICY_MIN_HEAT_MAX))
			return policy_error(ps, "min_heat must be a number from 0 to 1000000000");
		return 0;
	case POLICY_KEY_COUNT:
		break;
	}
	return policy_error(ps, "internal error");
}

/* One line, without its '\n'. */
static int policy_line(struct policy_parser *ps, const char *s, const char *end)
{
	struct policy_slice key, value;
	const char *c;
	unsigned k;

	for (c = s; c != end; c++) {
		if (*c == '\0')
			return policy_error(ps, "NUL byte");
		/* A control character means a damaged file, and must not reach a log or a tty. */
		if (((unsigned char)*c < 0x20 && *c != '\t' && !(*c == '\r' && c + 1 == end)) ||
		    *c == 0x7f)
			return policy_error(ps, "control character 0x%02x", (unsigned char)*c);
	}
	/* Blanks around the line, and a CR of a file written on Windows, are not content. */
	while (s != end && policy_blank(*s))
		s++;
	while (end != s && (policy_blank(end[-1]) || end[-1] == '\r'))
		end--;
	if (s == end || *s == '#')
		return 0;

	key.s = s;
	while (s != end && !policy_blank(*s) && *s != '=')
		s++;
	key.end = s;
	while (s != end && policy_blank(*s))
		s++;
	if (key.s == key.end || s == end || *s != '=')
		return policy_error(ps, "expected \"key = value\"");
	s++;
	while (s != end && policy_blank(*s))
		s++;
	value = (struct policy_slice){ s, end };

	for (k = 0; k < POLICY_KEY_COUNT; k++)
		if (policy_slice_is(key, policy_keys[k]))
			break;
	if (k == POLICY_KEY_COUNT) {
		/* Keys are short: a long one is garbage, and the log can do without most of it. */
		int shown = policy_slice_len(key) > 40 ? 40 : (int)policy_slice_len(key);

		return policy_error(ps, "unknown key \"%.*s\"", shown, key.s);
	}
	if (ps->key_line[k])
		return policy_error(ps, "duplicate key \"%s\" (first on line %u)", policy_keys[k],
				    ps->key_line[k]);
	ps->key_line[k] = ps->line;
	return policy_value(ps, (enum policy_key)k, value);
}

int policy_parse(const char *name, const char *text, size_t len, struct policy *out, char *err,
		 size_t err_len)
{
	struct policy_parser ps = { .line = 0, .err = err, .err_len = err_len };
	const char *s = text, *end = text + len;
	int r;

	if (err && err_len)
		err[0] = '\0';
	if (!out || (!text && len))
		return -EINVAL;
	if (!policy_name_valid(name)) {
		if (err && err_len)
			snprintf(err, err_len, "invalid policy name");
		return -EINVAL;
	}
	policy_default(&ps.p);
	strcpy(ps.p.name, name);
	/* A custom policy without a description must not borrow auto's. */
	ps.p.description[0] = '\0';

	while (s != end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));

		if (!eol)
			eol = end;
		ps.line++;
		r = policy_line(&ps, s, eol);
		if (r < 0)
			return r;
		s = eol == end ? end : eol + 1;
	}
	if (!policy_combination_valid(ps.p.promote, ps.p.demote)) {
		unsigned a = ps.key_line[POLICY_KEY_PROMOTE], b = ps.key_line[POLICY_KEY_DEMOTE];

		/* Blame the line that made the pair wrong: the later of the two. */
		ps.line = a > b ? a : b;
		return policy_error(&ps, "demote = all needs promote = none");
	}
	*out = ps.p;
	return 0;
}
