/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metrics: the Prometheus text exposition format, version 0.0.4, and the
 * naming rules its users expect (docs/metrics.md). Pure: the caller declares
 * its families up front, adds samples in any order, and renders the text,
 * each family's samples together under its HELP and TYPE lines.
 */
#ifndef TIERD_METRICS_H
#define TIERD_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

enum metrics_type {
	METRICS_COUNTER,
	METRICS_GAUGE,
};

struct metrics_def {
	const char *name;
	enum metrics_type type;
	const char *help;
};

struct metrics_label {
	const char *name;
	const char *value;
};

struct metrics;

/*
 * 0 when name is a valid metric name that follows the conventions for its
 * type, else -EINVAL with *why (may be NULL) saying which rule it breaks:
 * [a-z_][a-z0-9_]* (snake case; colons are for recording rules), counters
 * and only counters end in _total, base units only (bytes, seconds, not
 * milliseconds or kib) and a unit only as the last word before _total, no
 * _sum/_count/_bucket suffix (histograms' and summaries'). That a gauge of
 * bytes names its unit is the caller's to know.
 */
int metrics_check_name(const char *name, enum metrics_type type, const char **why);
/* 0 for [a-zA-Z_][a-zA-Z0-9_]* not starting with "__" (reserved), else -EINVAL. */
int metrics_check_label(const char *name);

/*
 * An exposition of the families defs[0..nr) (kept by reference: they must
 * outlive it). -EINVAL when a name breaks metrics_check_name() or appears
 * twice, -ENOMEM.
 */
int metrics_new(struct metrics **out, const struct metrics_def *defs, size_t nr);
void metrics_free(struct metrics *m);

/*
 * Add a sample to the family defs[family]. Label values are escaped;
 * label names are checked (and must not repeat within the sample). A
 * failure is returned and also kept: metrics_render() fails with the first
 * one, so a collector may add many samples and check once.
 */
int metrics_add(struct metrics *m, size_t family, const struct metrics_label *labels,
		size_t nr_labels, uint64_t value);
/* The same for a value that is not a whole number (NaN and infinities too). */
int metrics_add_double(struct metrics *m, size_t family, const struct metrics_label *labels,
		       size_t nr_labels, double value);

/*
 * The exposition text, NUL-terminated, *len bytes without the NUL; the
 * caller frees *text. Families come in defs order, samples in the order
 * added; a family without samples still has its HELP and TYPE.
 */
int metrics_render(struct metrics *m, char **text, size_t *len);

#endif
