/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "metrics.h"
#include "array.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


struct metrics_buf {
	char *text;
	size_t len, cap;
};

struct metrics {
	const struct metrics_def *defs;
	size_t nr;
	struct metrics_buf *samples; /* one per family: its sample lines */
	int err;		     /* the first failure of an add */
};

static int buf_add(struct metrics_buf *b, const char *s, size_t n)
{
	if (b->cap - b->len <= n) {
		size_t cap = b->cap ? b->cap : 256;
		char *grown;

		while (cap - b->len <= n) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		grown = realloc(b->text, cap);
		if (!grown)
			return -ENOMEM;
		b->text = grown;
		b->cap = cap;
	}
	memcpy(b->text + b->len, s, n);
	b->len += n;
	b->text[b->len] = '\0';
	return 0;
}

static int buf_str(struct metrics_buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

/* Backslash and newline always; the double quote only inside a label value. */
static int buf_escaped(struct metrics_buf *b, const char *s, int quote)
{
	int r = 0;

	for (; *s && r == 0; s++) {
		if (*s == '\\')
			r = buf_str(b, "\\\\");
		else if (*s == '\n')
			r = buf_str(b, "\\n");
		else if (*s == '"' && quote)
			r = buf_str(b, "\\\"");
		else
			r = buf_add(b, s, 1);
	}
	return r;
}

/* ---- names ---- */

static const char *const metrics_base_units[] = {
	"seconds", "bytes", "ratio", "volts", "amperes", "joules", "grams", "meters", "celsius",
};

/* Scaled or abbreviated units: a dashboard would have to guess the factor. */
static const char *const metrics_other_units[] = {
	"milliseconds", "microseconds", "nanoseconds", "minutes", "hours", "days",
	"ms", "us", "ns", "sec", "secs", "msec", "usec", "nsec",
	"kilobytes", "megabytes", "gigabytes", "terabytes", "kib", "mib", "gib", "tib",
	"kb", "mb", "gb", "tb", "bits", "percent",
};

/* Histograms and summaries own these suffixes: a scraper would misread them. */
static const char *const metrics_reserved_suffixes[] = { "_sum", "_count", "_bucket" };

static int word_in(const char *word, size_t len, const char *const *list, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		if (strlen(list[i]) == len && !memcmp(word, list[i], len))
			return 1;
	}
	return 0;
}

static int ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

static int fail_why(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -EINVAL;
}

int metrics_check_name(const char *name, enum metrics_type type, const char **why)
{
	size_t len, base_len;
	const char *w;

	if (!name || !*name)
		return fail_why(why, "the name is empty");
	len = strlen(name);
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (c == ':')
			return fail_why(why, "colons are for recording rules, not exporters");
		if (c >= 'A' && c <= 'Z')
			return fail_why(why, "names are snake case, without capitals");
		if (!((c >= 'a' && c <= 'z') || c == '_' || (i && c >= '0' && c <= '9')))
			return fail_why(why, "a name is made of a-z, 0-9 and _, not starting"
					     " with a digit");
	}
	if (name[0] == '_' || name[len - 1] == '_' || strstr(name, "__"))
		return fail_why(why, "words are separated by single underscores");
	base_len = len;
	if (ends_with(name, len, "_total")) {
		if (type != METRICS_COUNTER)
			return fail_why(why, "only counters end in _total");
		base_len -= strlen("_total");
	} else if (type == METRICS_COUNTER) {
		return fail_why(why, "a counter's name ends in _total");
	}
	for (size_t i = 0; i < ARRAY_SIZE(metrics_reserved_suffixes); i++) {
		if (ends_with(name, base_len, metrics_reserved_suffixes[i]))
			return fail_why(why, "_sum, _count and _bucket belong to histograms and"
					     " summaries");
	}
	/* Walk the words before _total: a unit is the last of them, and a base one. */
	for (w = name; w < name + base_len;) {
		size_t n = strcspn(w, "_");
		int last = w + n >= name + base_len;

		if (word_in(w, n, metrics_other_units, ARRAY_SIZE(metrics_other_units)))
			return fail_why(why, "units are base units: seconds, bytes, ratio");
		if (!last && word_in(w, n, metrics_base_units, ARRAY_SIZE(metrics_base_units)))
			return fail_why(why, "the unit is the last word (before _total)");
		w += n + 1;
	}
	return 0;
}

int metrics_check_label(const char *name)
{
	if (!name || !*name || (name[0] == '_' && name[1] == '_'))
		return -EINVAL;
	for (size_t i = 0; name[i]; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		      (i && c >= '0' && c <= '9')))
			return -EINVAL;
	}
	return 0;
}

/* ---- the exposition ---- */

int metrics_new(struct metrics **out, const struct metrics_def *defs, size_t nr)
{
	struct metrics *m;

	for (size_t i = 0; i < nr; i++) {
		if (metrics_check_name(defs[i].name, defs[i].type, NULL) < 0 || !defs[i].help)
			return -EINVAL;
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(defs[i].name, defs[j].name))
				return -EINVAL;
		}
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->samples = calloc(nr ? nr : 1, sizeof(*m->samples));
	if (!m->samples) {
		free(m);
		return -ENOMEM;
	}
	m->defs = defs;
	m->nr = nr;
	*out = m;
	return 0;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr; i++)
		free(m->samples[i].text);
	free(m->samples);
	free(m);
}

static int metrics_add_text(struct metrics *m, size_t family, const struct metrics_label *labels,
			    size_t nr_labels, const char *value)
{
	struct metrics_buf *b;
	size_t undo;
	int r = 0;

	if (m->err)
		return m->err;
	if (family >= m->nr)
		return m->err = -EINVAL;
	for (size_t i = 0; i < nr_labels; i++) {
		if (metrics_check_label(labels[i].name) < 0 || !labels[i].value)
			return m->err = -EINVAL;
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(labels[i].name, labels[j].name))
				return m->err = -EINVAL;
		}
	}
	b = &m->samples[family];
	undo = b->len;
	r = buf_str(b, m->defs[family].name);
	for (size_t i = 0; i < nr_labels && r == 0; i++) {
		r = buf_str(b, i ? "," : "{");
		if (r == 0)
			r = buf_str(b, labels[i].name);
		if (r == 0)
			r = buf_str(b, "=\"");
		if (r == 0)
			r = buf_escaped(b, labels[i].value, 1);
		if (r == 0)
			r = buf_str(b, "\"");
	}
	if (r == 0 && nr_labels)
		r = buf_str(b, "}");
	if (r == 0)
		r = buf_str(b, " ");
	if (r == 0)
		r = buf_str(b, value);
	if (r == 0)
		r = buf_str(b, "\n");
	if (r < 0) {
		/* No half line: the text rendered so far stays parseable. */
		b->len = undo;
		if (b->text)
			b->text[undo] = '\0';
		m->err = r;
	}
	return r;
}

int metrics_add(struct metrics *m, size_t family, const struct metrics_label *labels,
		size_t nr_labels, uint64_t value)
{
	char text[24];

	snprintf(text, sizeof(text), "%" PRIu64, value);
	return metrics_add_text(m, family, labels, nr_labels, text);
}

int metrics_add_double(struct metrics *m, size_t family, const struct metrics_label *labels,
		       size_t nr_labels, double value)
{
	char text[32];

	if (isnan(value)) {
		snprintf(text, sizeof(text), "NaN");
	} else if (isinf(value)) {
		snprintf(text, sizeof(text), "%s", value > 0 ? "+Inf" : "-Inf");
	} else {
		/* The shortest form that reads back as the same double. Assumes the C
		 * locale's decimal point, as every program of this project runs in. */
		snprintf(text, sizeof(text), "%.15g", value);
		if (strtod(text, NULL) != value)
			snprintf(text, sizeof(text), "%.17g", value);
	}
	return metrics_add_text(m, family, labels, nr_labels, text);
}

int metrics_render(struct metrics *m, char **text, size_t *len)
{
	struct metrics_buf out = { 0 };
	int r = m->err;

	for (size_t i = 0; i < m->nr && r == 0; i++) {
		const struct metrics_def *d = &m->defs[i];

		r = buf_str(&out, "# HELP ");
		if (r == 0)
			r = buf_str(&out, d->name);
		if (r == 0)
			r = buf_str(&out, " ");
		if (r == 0)
			r = buf_escaped(&out, d->help, 0);
		if (r == 0)
			r = buf_str(&out, "\n# TYPE ");
		if (r == 0)
			r = buf_str(&out, d->name);
		if (r == 0)
			r = buf_str(&out, d->type == METRICS_COUNTER ? " counter\n" : " gauge\n");
		if (r == 0 && m->samples[i].len)
			r = buf_add(&out, m->samples[i].text, m->samples[i].len);
	}
	/* No family at all is an empty but valid exposition. */
	if (r == 0 && !out.text)
		r = buf_add(&out, "", 0);
	if (r < 0) {
		free(out.text);
		return r;
	}
	*text = out.text;
	*len = out.len;
	return 0;
}
