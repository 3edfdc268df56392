/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "schedule.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Offsets are read from tm_gmtoff, and times past 2038 must work. */
_Static_assert(sizeof(time_t) == 8, "schedule needs a 64-bit time_t");

#define DAY 86400

#define SCHEDULE_USAGE \
	"use manual, auto, every DURATION, daily HH:MM or cron \"MIN HOUR DOM MON DOW\""

/*
 * The instants whose local time is a given wall-clock time lie within a day
 * of it (UTC offsets run from -12 h to +14 h); probing two days either side
 * brackets them.  Assumed: at most one clock change in those four days,
 * which holds for every zone in use (changes are weeks apart at least).
 */
#define PROBE (2 * DAY)

/*
 * A never-matching cron expression is refused before searching, so the
 * bound only guards against a mistake in that check: 400 years is one
 * Gregorian cycle, in which every date falls on every weekday.
 */
#define CRON_SEARCH_DAYS (400 * 366)

/* A window whose opening falls in a DST gap opens the next day instead. */
#define WINDOW_SEARCH_DAYS 8

struct span {
	const char *p;
	size_t n;
};

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	if (err && err_len) {
		va_start(ap, fmt);
		vsnprintf(err, err_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Locale-independent: spec text is ASCII whatever LC_CTYPE says. */
static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static struct span trim(struct span s)
{
	while (s.n && is_space(*s.p)) {
		s.p++;
		s.n--;
	}
	while (s.n && is_space(s.p[s.n - 1]))
		s.n--;
	return s;
}

/* The next whitespace-separated word of *rest, which then points past it. */
static struct span next_word(struct span *rest)
{
	struct span w;

	*rest = trim(*rest);
	w.p = rest->p;
	for (w.n = 0; w.n < rest->n && !is_space(w.p[w.n]); w.n++)
		;
	rest->p += w.n;
	rest->n -= w.n;
	*rest = trim(*rest);
	return w;
}

/* For messages: a long argument is cut rather than quoted whole. */
static int clip(struct span s)
{
	return s.n < 40 ? (int)s.n : 40;
}

static bool span_is(struct span s, const char *word)
{
	size_t i;

	for (i = 0; i < s.n; i++)
		if (!word[i] || ascii_lower(s.p[i]) != word[i])
			return false;
	return !word[i];
}

/* ---- durations ---- */

static const struct {
	char unit;
	uint32_t seconds;
} duration_units[] = { { 'd', DAY }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };

#define NR_DURATION_UNITS (sizeof(duration_units) / sizeof(duration_units[0]))

/* what: how the messages name the text, e.g. "every 5x" or "duration \"5x\"". */
static int parse_duration_span(struct span s, uint32_t *seconds, const char *what, char *err,
			       size_t err_len)
{
	const char *usage = "use a number and a unit (d, h, m or s), e.g. 30m, 6h or 1h30m";
	uint64_t total = 0;
	size_t i = 0, next_unit = 0;

	if (!s.n)
		return fail(err, err_len, "%s: %s", what, usage);
	/* Zero is zero in any unit; demanding one would only annoy. */
	if (s.n == 1 && s.p[0] == '0') {
		*seconds = 0;
		return 0;
	}
	while (i < s.n) {
		uint64_t v = 0;
		size_t u;

		if (!is_digit(s.p[i]))
			return fail(err, err_len, "%s: %s", what, usage);
		for (; i < s.n && is_digit(s.p[i]); i++) {
			v = v * 10 + (uint64_t)(s.p[i] - '0');
			if (v > UINT32_MAX)
				goto range;
		}
		if (i == s.n)
			return fail(err, err_len,
				    "%s: a number needs a unit: d, h, m or s (e.g. 30m)", what);
		for (u = 0; u < NR_DURATION_UNITS; u++)
			if (s.p[i] == duration_units[u].unit)
				break;
		if (u == NR_DURATION_UNITS)
			return fail(err, err_len, "%s: %s", what, usage);
		/* "30m1h" and "1h1h" are more likely typos than sums. */
		if (u < next_unit)
			return fail(err, err_len,
				    "%s: put larger units first, each once (e.g. 1h30m)", what);
		next_unit = u + 1;
		i++;
		total += v * duration_units[u].seconds;
		if (total > UINT32_MAX)
			goto range;
	}
	*seconds = (uint32_t)total;
	return 0;
range:
	fail(err, err_len, "%s: too long", what);
	return -ERANGE;
}

int schedule_parse_duration(const char *text, uint32_t *seconds, char *err, size_t err_len)
{
	char what[64];
	struct span s;

	if (!text || !seconds)
		return fail(err, err_len, "no duration");
	s = (struct span){ text, strlen(text) };
	snprintf(what, sizeof(what), "duration \"%.40s\"", text);
	return parse_duration_span(s, seconds, what, err, err_len);
}

struct out {
	char *buf;
	size_t len, pos;
};

__attribute__((format(printf, 2, 3)))
static void out_add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->pos < o->len ? o->buf + o->pos : NULL,
		      o->pos < o->len ? o->len - o->pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

/* Done writing: -ENOSPC if something did not fit. */
static int out_end(struct out *o)
{
	if (o->len && o->pos == 0)
		o->buf[0] = '\0';
	return o->pos < o->len ? 0 : -ENOSPC;
}

static void out_duration(struct out *o, uint32_t seconds)
{
	if (!seconds) {
		out_add(o, "0s");
		return;
	}
	for (size_t u = 0; u < NR_DURATION_UNITS; u++) {
		uint32_t n = seconds / duration_units[u].seconds;

		if (n)
			out_add(o, "%u%c", n, duration_units[u].unit);
		seconds %= duration_units[u].seconds;
	}
}

int schedule_format_duration(uint32_t seconds, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };

	out_duration(&o, seconds);
	return out_end(&o);
}

/* ---- HH:MM ---- */

/* "H:MM" or "HH:MM", 00:00 to 23:59, as minutes after midnight. */
static int parse_hhmm(struct span s, uint16_t *minutes, const char *what, char *err,
		      size_t err_len)
{
	unsigned h, m;
	size_t hd;

	for (hd = 0; hd < s.n && is_digit(s.p[hd]); hd++)
		;
	if (hd < 1 || hd > 2 || s.n != hd + 3 || s.p[hd] != ':' || !is_digit(s.p[hd + 1]) ||
	    !is_digit(s.p[hd + 2]))
		return fail(err, err_len, "%s: bad time: use HH:MM, e.g. 01:00", what);
	h = (unsigned)(s.p[0] - '0');
	if (hd == 2)
		h = h * 10 + (unsigned)(s.p[1] - '0');
	m = (unsigned)(s.p[hd + 1] - '0') * 10 + (unsigned)(s.p[hd + 2] - '0');
	if (h > 23)
		return fail(err, err_len, "%s: hour %u is out of range 0-23", what, h);
	if (m > 59)
		return fail(err, err_len, "%s: minute %u is out of range 0-59", what, m);
	*minutes = (uint16_t)(h * 60 + m);
	return 0;
}

int schedule_parse_window(const char *text, struct schedule *s, char *err, size_t err_len)
{
	struct span all, a, b;
	const char *dash;
	uint16_t start, end;
	char what[64];
	int r;

	if (!text || !s)
		return fail(err, err_len, "no window");
	all = trim((struct span){ text, strlen(text) });
	snprintf(what, sizeof(what), "window %.*s", clip(all), all.p);
	dash = memchr(all.p, '-', all.n);
	if (!dash)
		return fail(err, err_len, "%s: use HH:MM-HH:MM, e.g. 22:00-06:00", what);
	a = trim((struct span){ all.p, (size_t)(dash - all.p) });
	b = trim((struct span){ dash + 1, (size_t)(all.p + all.n - dash - 1) });
	r = parse_hhmm(a, &start, what, err, err_len);
	if (!r)
		r = parse_hhmm(b, &end, what, err, err_len);
	if (r)
		return r;
	if (start == end)
		return fail(err, err_len,
			    "%s: start and end are equal; leave the window out to allow any time",
			    what);
	s->has_window = true;
	s->window_start = start;
	s->window_end = end;
	return 0;
}

int schedule_format_window(const struct schedule *s, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };

	if (!s || (s->has_window && (s->window_start >= 1440 || s->window_end >= 1440 ||
				     s->window_start == s->window_end)))
		return -EINVAL;
	if (s->has_window)
		out_add(&o, "%02u:%02u-%02u:%02u", s->window_start / 60u, s->window_start % 60u,
			s->window_end / 60u, s->window_end % 60u);
	return out_end(&o);
}

/* ---- cron ---- */

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
};
static const char *const dow_names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat" };

struct cron_field {
	const char *name;
	unsigned lo, hi;          /* the values one may write */
	unsigned star_hi;         /* what "*" covers: day of week 7 is Sunday again */
	const char *const *names; /* names[i] is lo + i */
	unsigned nr_names;
	const char *name_hint;
};

static const struct cron_field cron_fields[5] = {
	{ "minute", 0, 59, 59, NULL, 0, NULL },
	{ "hour", 0, 23, 23, NULL, 0, NULL },
	{ "day of month", 1, 31, 31, NULL, 0, NULL },
	{ "month", 1, 12, 12, month_names, 12, "jan..dec" },
	{ "day of week", 0, 7, 6, dow_names, 7, "sun..sat" },
};

/* A number or, where the field has them, a name; *s advances past it. */
static int cron_value(const struct cron_field *f, struct span *s, unsigned *v, struct span elem,
		      char *err, size_t err_len)
{
	size_t n = 0;

	if (s->n && is_digit(*s->p)) {
		uint64_t x = 0;

		for (; n < s->n && is_digit(s->p[n]); n++)
			if (x <= 1000)
				x = x * 10 + (uint64_t)(s->p[n] - '0');
		if (x < f->lo || x > f->hi)
			return fail(err, err_len, "cron: %s %.*s is out of range %u-%u", f->name,
				    (int)n, s->p, f->lo, f->hi);
		*v = (unsigned)x;
	} else {
		for (; n < s->n && ascii_lower(s->p[n]) >= 'a' && ascii_lower(s->p[n]) <= 'z'; n++)
			;
		if (!n)
			return fail(err, err_len, "cron: bad %s \"%.*s\"", f->name, (int)elem.n,
				    elem.p);
		if (!f->names)
			return fail(err, err_len, "cron: %s \"%.*s\" is not a number", f->name,
				    (int)n, s->p);
		for (*v = 0; *v < f->nr_names; (*v)++)
			if (span_is((struct span){ s->p, n }, f->names[*v]))
				break;
		if (*v == f->nr_names)
			return fail(err, err_len, "cron: unknown %s name \"%.*s\": use %s", f->name,
				    (int)n, s->p, f->name_hint);
		*v += f->lo;
	}
	s->p += n;
	s->n -= n;
	return 0;
}

/* One comma-separated element: "*", "*" + "/n", "a", "a-b" or "a-b/n". */
static int cron_element(const struct cron_field *f, struct span elem, uint64_t *bits, char *err,
			size_t err_len)
{
	struct span s = elem;
	unsigned a, b, step = 1;
	bool range;
	int r;

	if (!elem.n)
		return fail(err, err_len, "cron: empty list element in the %s field", f->name);
	if (*s.p == '*') {
		a = f->lo;
		b = f->star_hi;
		range = true;
		s.p++;
		s.n--;
	} else {
		r = cron_value(f, &s, &a, elem, err, err_len);
		if (r)
			return r;
		b = a;
		range = s.n && *s.p == '-';
		if (range) {
			s.p++;
			s.n--;
			r = cron_value(f, &s, &b, elem, err, err_len);
			if (r)
				return r;
			if (a > b)
				return fail(err, err_len, "cron: bad range %.*s in the %s field: "
					    "the start is after the end%s",
					    (int)(s.p - elem.p), elem.p, f->name,
					    f->names == dow_names ? " (Sunday is 0 or 7)" : "");
		}
	}
	if (s.n && *s.p == '/') {
		uint64_t x = 0;
		size_t n;

		if (!range)
			return fail(err, err_len,
				    "cron: bad step \"%.*s\" in the %s field: use */n or a-b/n",
				    (int)elem.n, elem.p, f->name);
		s.p++;
		s.n--;
		for (n = 0; n < s.n && is_digit(s.p[n]); n++)
			if (x <= 1000)
				x = x * 10 + (uint64_t)(s.p[n] - '0');
		if (!n || n != s.n)
			return fail(err, err_len, "cron: bad step \"%.*s\" in the %s field",
				    (int)elem.n, elem.p, f->name);
		if (x < 1 || x > f->hi)
			return fail(err, err_len, "cron: bad step \"%.*s\" in the %s field: "
				    "the step must be 1-%u", (int)elem.n, elem.p, f->name, f->hi);
		step = (unsigned)x;
		s.p += n;
		s.n -= n;
	}
	if (s.n)
		return fail(err, err_len, "cron: bad %s \"%.*s\"", f->name, (int)elem.n, elem.p);
	for (unsigned v = a; v <= b; v += step)
		*bits |= UINT64_C(1) << (v == 7 && f->names == dow_names ? 0 : v);
	return 0;
}

static int cron_field_parse(const struct cron_field *f, struct span text, uint64_t *bits,
			    bool *star, char *err, size_t err_len)
{
	const char *end = text.p + text.n, *p = text.p;
	int r;

	*bits = 0;
	/* As in Vixie cron and cronie: "*" + "/2" does not restrict the day for the OR rule. */
	*star = text.n && *text.p == '*' && !memchr(text.p, ',', text.n);
	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;

		r = cron_element(f, (struct span){ p, (size_t)(e - p) }, bits, err, err_len);
		if (r)
			return r;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static bool bit(uint64_t bits, unsigned i)
{
	return bits >> i & 1;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
	static const unsigned char days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return days[m - 1] + (m == 2 && leap);
}

/* Whether any date has a matching month and day at all: "0 0 30 2 *" never runs. */
static bool cron_can_match(const struct schedule *s)
{
	/* The OR rule: every month has every weekday. */
	if (!s->cron_dom_star && !s->cron_dow_star)
		return true;
	/* Otherwise a matching date will fall on a matching weekday within 400 years. */
	for (unsigned m = 1; m <= 12; m++)
		for (unsigned d = 1; d <= days_in_month(2000, m); d++)
			if (bit(s->cron_month, m) && bit(s->cron_dom, d))
				return true;
	return false;
}

static const uint64_t cron_masks[5] = {
	(UINT64_C(1) << 60) - 1,
	(UINT64_C(1) << 24) - 1,
	((UINT64_C(1) << 32) - 1) & ~UINT64_C(1),
	((UINT64_C(1) << 13) - 1) & ~UINT64_C(1),
	(UINT64_C(1) << 7) - 1,
};

static void cron_get(const struct schedule *s, uint64_t bits[5])
{
	bits[0] = s->cron_minute;
	bits[1] = s->cron_hour;
	bits[2] = s->cron_dom;
	bits[3] = s->cron_month;
	bits[4] = s->cron_dow;
}

static int parse_cron(struct span rest, struct schedule *out, char *err, size_t err_len)
{
	struct span fields[5], w;
	uint64_t bits[5];
	bool star[5];
	int nr = 0, r;

	rest = trim(rest);
	if (rest.n && (*rest.p == '"' || *rest.p == '\'')) {
		if (rest.n < 2 || rest.p[rest.n - 1] != *rest.p)
			return fail(err, err_len, "cron: unbalanced quote in %.*s", (int)rest.n,
				    rest.p);
		rest.p++;
		rest.n -= 2;
	}
	while ((w = next_word(&rest)).n) {
		if (nr < 5)
			fields[nr] = w;
		nr++;
	}
	if (nr != 5)
		return fail(err, err_len, "cron needs 5 fields (MIN HOUR DOM MON DOW), got %d", nr);
	for (int i = 0; i < 5; i++) {
		r = cron_field_parse(&cron_fields[i], fields[i], &bits[i], &star[i], err, err_len);
		if (r)
			return r;
	}
	out->cron_minute = bits[0];
	out->cron_hour = (uint32_t)bits[1];
	out->cron_dom = (uint32_t)bits[2];
	out->cron_month = (uint16_t)bits[3];
	out->cron_dow = (uint8_t)bits[4];
	out->cron_dom_star = star[2];
	out->cron_dow_star = star[4];
	if (!cron_can_match(out))
		return fail(err, err_len, "cron: day of month %.*s never occurs in month %.*s",
			    (int)fields[2].n, fields[2].p, (int)fields[3].n, fields[3].p);
	return 0;
}

int schedule_parse(const char *spec, struct schedule *out, char *err, size_t err_len)
{
	struct schedule s;
	struct span rest, word;
	char what[64];
	int r;

	if (!spec || !out)
		return fail(err, err_len, "no schedule");
	memset(&s, 0, sizeof(s));
	rest = (struct span){ spec, strlen(spec) };
	word = next_word(&rest);
	if (!word.n)
		return fail(err, err_len, "empty schedule: " SCHEDULE_USAGE);

	if (span_is(word, "manual") || span_is(word, "auto")) {
		s.kind = span_is(word, "auto") ? SCHEDULE_AUTO : SCHEDULE_MANUAL;
		if (rest.n)
			return fail(err, err_len, "%s takes no argument (got \"%.*s\")",
				    schedule_kind_name(s.kind), (int)rest.n, rest.p);
	} else if (span_is(word, "every")) {
		s.kind = SCHEDULE_EVERY;
		if (!rest.n)
			return fail(err, err_len, "every needs a duration, e.g. every 6h");
		snprintf(what, sizeof(what), "every %.*s", clip(rest), rest.p);
		r = parse_duration_span(rest, &s.every_s, what, err, err_len);
		if (r == -ERANGE)
			s.every_s = UINT32_MAX;
		else if (r)
			return r;
		if (s.every_s < SCHEDULE_EVERY_MIN)
			return fail(err, err_len, "%s: the interval must be at least 1m", what);
		if (s.every_s > SCHEDULE_EVERY_MAX)
			return fail(err, err_len, "%s: the interval must be at most 31d", what);
	} else if (span_is(word, "daily")) {
		s.kind = SCHEDULE_DAILY;
		if (!rest.n)
			return fail(err, err_len, "daily needs a time, e.g. daily 01:00");
		snprintf(what, sizeof(what), "daily %.*s", clip(rest), rest.p);
		r = parse_hhmm(rest, &s.daily_minute, what, err, err_len);
		if (r)
			return r;
	} else if (span_is(word, "cron")) {
		s.kind = SCHEDULE_CRON;
		r = parse_cron(rest, &s, err, err_len);
		if (r)
			return r;
	} else {
		return fail(err, err_len, "unknown schedule \"%.*s\": " SCHEDULE_USAGE, clip(word),
			    word.p);
	}
	*out = s;
	return 0;
}

static bool schedule_valid(const struct schedule *s)
{
	uint64_t bits[5];

	if (s->has_window && (s->window_start >= 1440 || s->window_end >= 1440 ||
			      s->window_start == s->window_end))
		return false;
	switch (s->kind) {
	case SCHEDULE_MANUAL:
	case SCHEDULE_AUTO:
		return true;
	case SCHEDULE_EVERY:
		return s->every_s >= SCHEDULE_EVERY_MIN && s->every_s <= SCHEDULE_EVERY_MAX;
	case SCHEDULE_DAILY:
		return s->daily_minute < 1440;
	case SCHEDULE_CRON:
		cron_get(s, bits);
		for (int i = 0; i < 5; i++)
			if (!bits[i] || (bits[i] & ~cron_masks[i]))
				return false;
		return true;
	}
	return false;
}

/* The set that "*" with a step of n stands for. */
static uint64_t cron_star_step(const struct cron_field *f, unsigned n)
{
	uint64_t bits = 0;

	for (unsigned v = f->lo; v <= f->star_hi; v += n)
		bits |= UINT64_C(1) << v;
	return bits;
}

/*
 * Normalised text for a field.  A day field keeps its "*" (it changes what
 * the other day field means), so it must be a star form exactly when
 * star says so; the others print as "*" forms whenever the set is one.
 */
static int cron_field_format(struct out *o, const struct cron_field *f, uint64_t bits,
			     bool has_star, bool star)
{
	unsigned n, v, end;
	bool first = true;

	for (n = 1; n <= f->hi; n++) {
		if (bits != cron_star_step(f, n))
			continue;
		/* A lone value reads better as itself, where that means the same. */
		if ((has_star && star) || (!has_star && bits & (bits - 1))) {
			if (n == 1)
				out_add(o, "*");
			else
				out_add(o, "*/%u", n);
			return 0;
		}
		break;
	}
	if (has_star && star)
		return -EINVAL;
	for (v = f->lo; v <= f->star_hi; v = end + 1) {
		if (!bit(bits, v)) {
			end = v;
			continue;
		}
		for (end = v; end + 1 <= f->star_hi && bit(bits, end + 1); end++)
			;
		if (end - v >= 2) {
			out_add(o, "%s%u-%u", first ? "" : ",", v, end);
		} else {
			out_add(o, "%s%u", first ? "" : ",", v);
			if (end != v)
				out_add(o, ",%u", end);
		}
		first = false;
	}
	return 0;
}

int schedule_format(const struct schedule *s, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	uint64_t bits[5];

	if (!s || !schedule_valid(s)) {
		if (len)
			buf[0] = '\0';
		return -EINVAL;
	}
	out_add(&o, "%s", schedule_kind_name(s->kind));
	switch (s->kind) {
	case SCHEDULE_MANUAL:
	case SCHEDULE_AUTO:
		break;
	case SCHEDULE_EVERY:
		out_add(&o, " ");
		out_duration(&o, s->every_s);
		break;
	case SCHEDULE_DAILY:
		out_add(&o, " %02u:%02u", s->daily_minute / 60u, s->daily_minute % 60u);
		break;
	case SCHEDULE_CRON:
		cron_get(s, bits);
		for (int i = 0; i < 5; i++) {
			bool has_star = i == 2 || i == 4;
			bool star = i == 2 ? s->cron_dom_star : s->cron_dow_star;

			out_add(&o, " ");
			if (cron_field_format(&o, &cron_fields[i], bits[i], has_star, star)) {
				if (len)
					buf[0] = '\0';
				return -EINVAL;
			}
		}
		break;
	}
	return out_end(&o);
}

const char *schedule_kind_name(enum schedule_kind kind)
{
	switch (kind) {
	case SCHEDULE_MANUAL:
		return "manual";
	case SCHEDULE_AUTO:
		return "auto";
	case SCHEDULE_EVERY:
		return "every";
	case SCHEDULE_DAILY:
		return "daily";
	case SCHEDULE_CRON:
		return "cron";
	}
	return NULL;
}

bool schedule_equal(const struct schedule *a, const struct schedule *b)
{
	if (a->kind != b->kind || a->has_window != b->has_window)
		return false;
	if (a->has_window &&
	    (a->window_start != b->window_start || a->window_end != b->window_end))
		return false;
	switch (a->kind) {
	case SCHEDULE_MANUAL:
	case SCHEDULE_AUTO:
		return true;
	case SCHEDULE_EVERY:
		return a->every_s == b->every_s;
	case SCHEDULE_DAILY:
		return a->daily_minute == b->daily_minute;
	case SCHEDULE_CRON:
		return a->cron_minute == b->cron_minute && a->cron_hour == b->cron_hour &&
		       a->cron_dom == b->cron_dom && a->cron_month == b->cron_month &&
		       a->cron_dow == b->cron_dow && a->cron_dom_star == b->cron_dom_star &&
		       a->cron_dow_star == b->cron_dow_star;
	}
	return false;
}

/* ---- local time ---- */

/*
 * "Local seconds": a wall-clock time counted as if it were UTC, so that
 * dates are plain arithmetic and a wall-clock time is one number.
 */

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/* A calendar day, walked forward one at a time by the cron search. */
struct date {
	int64_t day; /* days since 1970-01-01 */
	int64_t year;
	unsigned month, mday, wday;
};

static void date_init(struct date *dt, int64_t day)
{
	time_t t = (time_t)(day * DAY);
	struct tm tm;

	/* UTC, not local: the day is already a local date. */
	if (!gmtime_r(&t, &tm))
		memset(&tm, 0, sizeof(tm));
	dt->day = day;
	dt->year = (int64_t)tm.tm_year + 1900;
	dt->month = (unsigned)tm.tm_mon + 1;
	dt->mday = (unsigned)tm.tm_mday;
	dt->wday = (unsigned)tm.tm_wday;
}

static void date_next(struct date *dt)
{
	dt->day++;
	dt->wday = (dt->wday + 1) % 7;
	if (++dt->mday <= days_in_month(dt->year, dt->month))
		return;
	dt->mday = 1;
	if (++dt->month <= 12)
		return;
	dt->month = 1;
	dt->year++;
}

/*
 * Seconds east of UTC at t.  localtime_r cannot fail for the times used
 * here (years 1969 to about 10400 with a 64-bit time_t); UTC is the
 * least surprising answer if it ever did.
 */
static int64_t utc_offset(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm))
		return 0;
	return tm.tm_gmtoff;
}

static int64_t to_local(int64_t t)
{
	return t + utc_offset(t);
}

/* The first instant in (lo, hi] with hi's offset, given lo's differs: one clock change. */
static int64_t find_change(int64_t lo, int64_t hi)
{
	int64_t o = utc_offset(lo);

	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;

		if (utc_offset(mid) == o)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/*
 * The instants at which the clock reads `local`, ascending:
 * two in a fall-back overlap, none in a gap.
 */
static int wall_occurrences(int64_t local, int64_t out[2])
{
	int64_t oa = utc_offset(local - PROBE), ob = utc_offset(local + PROBE);
	int64_t hi = oa > ob ? oa : ob, lo = oa > ob ? ob : oa;
	int n = 0;

	if (utc_offset(local - hi) == hi)
		out[n++] = local - hi;
	if (lo != hi && utc_offset(local - lo) == lo)
		out[n++] = local - lo;
	return n;
}

/*
 * When a run planned for wall-clock time `local` starts: the first time the
 * clock reads it, or, if a clock change skips it, the end of the gap.
 * Either way the first instant at which the clock shows `local` or later,
 * which keeps the mapping monotonic: later wall-clock times never start
 * earlier.
 */
static int64_t wall_to_instant(int64_t local)
{
	int64_t occ[2];

	if (wall_occurrences(local, occ))
		return occ[0];
	if (utc_offset(local - PROBE) == utc_offset(local + PROBE))
		return local - utc_offset(local); /* not a gap after all: more than one change */
	return find_change(local - PROBE, local + PROBE);
}

static bool cron_day_matches(const struct schedule *s, const struct date *dt)
{
	bool dom, dow;

	if (!bit(s->cron_month, dt->month))
		return false;
	dom = bit(s->cron_dom, dt->mday);
	dow = bit(s->cron_dow, dt->wday);
	return s->cron_dom_star || s->cron_dow_star ? dom && dow : dom || dow;
}

static int cron_next(const struct schedule *s, int64_t lo, int64_t *next)
{
	struct date dt;

	if (!cron_can_match(s))
		return -ENOENT;
	/* A day early: cheap insurance for zones whose clocks change at midnight. */
	date_init(&dt, floor_div(to_local(lo), DAY) - 1);
	for (int i = 0; i < CRON_SEARCH_DAYS; i++, date_next(&dt)) {
		if (!cron_day_matches(s, &dt))
			continue;
		for (unsigned h = 0; h < 24; h++) {
			int64_t base = dt.day * DAY + h * 3600;

			if (!bit(s->cron_hour, h))
				continue;
			/* Monotonic: if the hour's last minute is too early, all of it is. */
			if (wall_to_instant(base + 59 * 60) < lo)
				continue;
			for (unsigned m = 0; m < 60; m++) {
				int64_t t;

				if (!bit(s->cron_minute, m))
					continue;
				t = wall_to_instant(base + m * 60);
				if (t >= lo) {
					*next = t;
					return 0;
				}
			}
		}
	}
	return -ENOENT;
}

static int daily_next(const struct schedule *s, int64_t lo, int64_t *next)
{
	/* A day early, as for cron; three days always hold the answer. */
	int64_t first = floor_div(to_local(lo), DAY) - 1;

	for (int64_t day = first; day < first + 4; day++) {
		int64_t t = wall_to_instant(day * DAY + s->daily_minute * 60);

		if (t >= lo) {
			*next = t;
			return 0;
		}
	}
	return -ENOENT;
}

static unsigned minute_of_day(int64_t t)
{
	int64_t local = to_local(t);

	return (unsigned)((local - floor_div(local, DAY) * DAY) / 60);
}

bool schedule_in_window(const struct schedule *s, int64_t t)
{
	unsigned m;

	if (!s->has_window)
		return true;
	m = minute_of_day(t);
	if (s->window_start < s->window_end)
		return m >= s->window_start && m < s->window_end;
	return m >= s->window_start || m < s->window_end;
}

bool schedule_catch_up(const struct schedule *s, int64_t due, int64_t now)
{
	bool interval = s->kind == SCHEDULE_EVERY || s->kind == SCHEDULE_AUTO;

	return due <= now && (interval || now - due <= SCHEDULE_CATCH_UP_MAX) &&
	       schedule_in_window(s, now);
}

/*
 * The first instant >= t at which schedule_in_window() is `want`, given it
 * is not at t.  Whether the clock is in the window changes only where it
 * reads the window's boundary or where it jumps (a DST change can jump it
 * into or out of the window), so those are the only candidates.  Scanned a
 * day at a time: a candidate found in [a, b] cannot be beaten by a later day.
 */
static int64_t window_change(const struct schedule *s, int64_t t, bool want)
{
	uint16_t boundary = want ? s->window_start : s->window_end;
	int64_t best = INT64_MAX, a = t;

	for (int i = 0; i < WINDOW_SEARCH_DAYS; i++) {
		int64_t b = a + DAY, day = floor_div(to_local(a), DAY);

		for (int64_t d = day - 1; d <= day + 2; d++) {
			int64_t occ[2];
			int n = wall_occurrences(d * DAY + boundary * 60, occ);

			for (int k = 0; k < n; k++)
				if (occ[k] >= t && occ[k] < best &&
				    schedule_in_window(s, occ[k]) == want)
					best = occ[k];
		}
		if (utc_offset(a) != utc_offset(b)) {
			int64_t c = find_change(a, b);

			if (c >= t && c < best && schedule_in_window(s, c) == want)
				best = c;
		}
		if (best <= b)
			return best;
		a = b;
	}
	return best;
}

int64_t schedule_window_end(const struct schedule *s, int64_t t)
{
	if (!s->has_window)
		return INT64_MAX;
	if (!schedule_in_window(s, t))
		return t;
	return window_change(s, t, false);
}

int64_t schedule_window_next_open(const struct schedule *s, int64_t t)
{
	if (schedule_in_window(s, t))
		return t;
	return window_change(s, t, true);
}

/* auto and every: at most one interval from `after`, so that a clock set back cannot stall it. */
static int64_t interval_next(int64_t after, int64_t last_start, uint32_t interval)
{
	int64_t t = last_start + interval;

	if (!last_start || t < after)
		return after;
	return t < after + interval ? t : after + interval;
}

int schedule_young_next(int64_t heat_since, int64_t planned_at, int64_t now, int64_t *next)
{
	int64_t age;

	if (!next || heat_since < 0 || planned_at < heat_since || now < 0 ||
	    planned_at > SCHEDULE_TIME_MAX || now > SCHEDULE_TIME_MAX)
		return -EINVAL;
	age = planned_at - heat_since;
	if (age < 1)
		age = 1;
	if (age * SCHEDULE_YOUNG_FACTOR > SCHEDULE_AUTO_INTERVAL)
		return -ERANGE;
	*next = heat_since + age * SCHEDULE_YOUNG_FACTOR;
	if (*next <= now)
		*next = now + 1;
	return 0;
}

int schedule_next(const struct schedule *s, int64_t after, int64_t last_start, int64_t *next)
{
	int64_t t = after, lo = after;
	int r = 0;

	if (!s || !next || !schedule_valid(s) || after < 0 || last_start < 0)
		return -EINVAL;
	if (after > SCHEDULE_TIME_MAX || last_start > SCHEDULE_TIME_MAX)
		return -ERANGE;
	switch (s->kind) {
	case SCHEDULE_MANUAL:
		return -ENOENT;
	case SCHEDULE_AUTO:
		t = interval_next(after, last_start, SCHEDULE_AUTO_INTERVAL);
		break;
	case SCHEDULE_EVERY:
		t = interval_next(after, last_start, s->every_s);
		break;
	case SCHEDULE_DAILY:
	case SCHEDULE_CRON:
		/* After an NTP step back the minute that just ran must not run again. */
		if (last_start && last_start >= after && last_start - after <= DAY)
			lo = last_start + 1;
		r = s->kind == SCHEDULE_DAILY ? daily_next(s, lo, &t) : cron_next(s, lo, &t);
		break;
	}
	if (r)
		return r;
	if (s->has_window && !schedule_in_window(s, t)) {
		t = window_change(s, t, true);
		if (t == INT64_MAX)
			return -ENOENT;
	}
	*next = t;
	return 0;
}
