/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "member.h"
#include "size.h"
#include "table.h"
#include "tierview.h"
#include "timefmt.h"
#include "array.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>


const char *tierview_time(struct json_object *obj, const char *key,
			  char buf[TIERVIEW_TEXT_MAX])
{
	const char *iso = member_string(obj, key);
	time_t t;

	if (!iso)
		return "-";
	/* Better the daemon's own text than nothing when it is not the expected form. */
	if (timefmt_parse_iso(iso, &t) < 0)
		return iso;
	return timefmt_local(t, buf, TIERVIEW_TEXT_MAX);
}

const char *tierview_percent(struct json_object *obj, const char *key,
			     char buf[TIERVIEW_TEXT_MAX])
{
	struct json_object *v = member_get(obj, key);

	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return "-";
	snprintf(buf, TIERVIEW_TEXT_MAX, "%.1f%%", json_object_get_double(v) * 100.0);
	return buf;
}

const char *tierview_next_run(struct json_object *schedule, char buf[TIERVIEW_TEXT_MAX])
{
	struct json_object *paused = member_get(schedule, "paused");
	const char *iso = member_string(schedule, "next_run_at");
	char local[TIMEFMT_MAX], in[TIMEFMT_MAX];
	time_t t, now = time(NULL);

	if (!iso)
		return paused && json_object_get_boolean(paused) ? "none (paused)" : "-";
	if (timefmt_parse_iso(iso, &t) < 0)
		return iso;
	timefmt_local(t, local, sizeof(local));
	/* A run that is due waits only for the window or for the run before it. */
	if (t <= now)
		snprintf(buf, TIERVIEW_TEXT_MAX, "%s (due)", local);
	else
		snprintf(buf, TIERVIEW_TEXT_MAX, "%s (in %s)", local,
			 timefmt_duration((uint64_t)(t - now), in, sizeof(in)));
	return buf;
}

/* A byte count, or "no limit" for 0 as tierd means it; suffix follows the size. */
static const char *tierview_limit(struct json_object *obj, const char *key, const char *suffix,
				  char buf[TIERVIEW_TEXT_MAX])
{
	char size[SIZE_FORMAT_MAX];
	uint64_t v;

	if (member_uint(obj, key, &v) < 0)
		return "-";
	if (!v)
		return "no limit";
	snprintf(buf, TIERVIEW_TEXT_MAX, "%s%s", size_format(v, size, sizeof(size)), suffix);
	return buf;
}

int tierview_print_schedule(FILE *out, const char *name, struct json_object *schedule)
{
	static const struct table_column columns[] = {
		{ "Pool", "name", TABLE_STRING },
		{ "Schedule", "spec", TABLE_STRING },
		{ "Window", "window", TABLE_STRING },
		{ "Max per run", "max_bytes", TABLE_STRING },
		{ "Rate", "rate_bytes_per_second", TABLE_STRING },
		{ "I/O awareness", "io_awareness", TABLE_STRING },
		{ "Policy", "policy", TABLE_STRING },
		{ "Paused", "paused", TABLE_BOOL },
		{ "Running", "running", TABLE_BOOL },
		{ "Next run", "next_run_at", TABLE_STRING },
	};
	char max[TIERVIEW_TEXT_MAX], rate[TIERVIEW_TEXT_MAX], next[TIERVIEW_TEXT_MAX];
	const char *window = member_string(schedule, "window");
	struct table *t;
	int r;

	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		return r;
	table_add_string(t, name);
	table_add_members(t, schedule, 1);
	/* null is not "unknown" here: it is the absence of a window. */
	table_add_string(t, window && *window ? window : "any time");
	table_add_string(t, tierview_limit(schedule, "max_bytes", "", max));
	table_add_string(t, tierview_limit(schedule, "rate_bytes_per_second", "/s", rate));
	table_add_members(t, schedule, 4);
	table_add_string(t, tierview_next_run(schedule, next));
	r = table_print_fields(t, out);
	table_free(t);
	return r;
}

/* How long the run took, or has taken so far while it runs. */
static const char *tierview_run_duration(struct json_object *run, char buf[TIERVIEW_TEXT_MAX])
{
	const char *started = member_string(run, "started_at"), *finished;
	time_t from, to;

	if (!started || timefmt_parse_iso(started, &from) < 0)
		return "-";
	finished = member_string(run, "ended_at");
	if (!finished)
		to = time(NULL);
	else if (timefmt_parse_iso(finished, &to) < 0)
		return "-";
	return timefmt_duration(to > from ? (uint64_t)(to - from) : 0, buf, TIERVIEW_TEXT_MAX);
}

/* "120 extents (480.0 MiB)" from the members KIND_extents and KIND_bytes. */
static const char *tierview_moved(struct json_object *run, const char *kind,
				  char buf[TIERVIEW_TEXT_MAX])
{
	char key[32], size[SIZE_FORMAT_MAX], pieces[48] = "";
	uint64_t extents, bytes, nr_pieces;

	snprintf(key, sizeof(key), "%s_extents", kind);
	if (member_uint(run, key, &extents) < 0)
		return "-";
	snprintf(key, sizeof(key), "%s_pieces", kind);
	if (member_uint(run, key, &nr_pieces) == 0 && nr_pieces)
		snprintf(pieces, sizeof(pieces), ", %" PRIu64 " piece%s", nr_pieces,
			 nr_pieces == 1 ? "" : "s");
	snprintf(key, sizeof(key), "%s_bytes", kind);
	if (member_uint(run, key, &bytes) < 0)
		snprintf(buf, TIERVIEW_TEXT_MAX, "%" PRIu64 " extents%s", extents, pieces);
	else
		snprintf(buf, TIERVIEW_TEXT_MAX, "%" PRIu64 " extent%s%s (%s)", extents,
			 extents == 1 ? "" : "s", pieces, size_format(bytes, size, sizeof(size)));
	return buf;
}

int tierview_print_run(FILE *out, struct json_object *run)
{
	static const struct table_column columns[] = {
		{ "Run", "id", TABLE_UINT },
		{ "Trigger", "trigger", TABLE_STRING },
		{ "Policy", "policy", TABLE_STRING },
		{ "Started", "started_at", TABLE_STRING },
		{ "Ended", "ended_at", TABLE_STRING },
		{ "Duration", "duration_seconds", TABLE_STRING },
		{ "Planned", "planned_extents", TABLE_UINT },
		{ "Promoted", "promoted", TABLE_STRING },
		{ "Demoted", "demoted", TABLE_STRING },
		{ "Failed", "failed_extents", TABLE_UINT },
		{ "Result", "result", TABLE_STRING },
		{ "Message", "message", TABLE_STRING },
	};
	char started[TIERVIEW_TEXT_MAX], finished[TIERVIEW_TEXT_MAX], duration[TIERVIEW_TEXT_MAX];
	char promoted[TIERVIEW_TEXT_MAX], demoted[TIERVIEW_TEXT_MAX];
	struct table *t;
	int r;

	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		return r;
	table_add_members(t, run, 3);
	table_add_string(t, tierview_time(run, "started_at", started));
	table_add_string(t, tierview_time(run, "ended_at", finished));
	table_add_string(t, tierview_run_duration(run, duration));
	table_add_members(t, run, 1);
	table_add_string(t, tierview_moved(run, "promoted", promoted));
	table_add_string(t, tierview_moved(run, "demoted", demoted));
	table_add_members(t, run, 3);
	r = table_print_fields(t, out);
	table_free(t);
	return r;
}

int tierview_print_runs(FILE *out, struct json_object *runs)
{
	static const struct table_column columns[] = {
		{ "ID", "id", TABLE_UINT },
		{ "Trigger", "trigger", TABLE_STRING },
		{ "Started", "started_at", TABLE_STRING },
		{ "Duration", "duration_seconds", TABLE_STRING },
		{ "Promoted", "promoted_extents", TABLE_UINT },
		{ "Demoted", "demoted_extents", TABLE_UINT },
		{ "Moved", "moved_bytes", TABLE_BYTES },
		{ "Pieces", "moved_pieces", TABLE_UINT },
		{ "Failed", "failed_extents", TABLE_UINT },
		{ "Result", "result", TABLE_STRING },
	};
	size_t n = json_object_array_length(runs);
	struct table *t;
	int r;

	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct json_object *run = json_object_array_get_idx(runs, i);
		char started[TIERVIEW_TEXT_MAX], duration[TIERVIEW_TEXT_MAX];

		table_add_members(t, run, 2);
		table_add_string(t, tierview_time(run, "started_at", started));
		table_add_string(t, tierview_run_duration(run, duration));
		table_add_members(t, run, 6);
	}
	r = table_print(t, out);
	table_free(t);
	return r;
}

int tierview_print_pins(FILE *out, struct json_object *pins)
{
	static const struct table_column columns[] = {
		{ "First extent", "first_extent", TABLE_UINT },
		{ "Extents", "extents", TABLE_UINT },
		{ "Offset", "offset_bytes", TABLE_BYTES },
		{ "Length", "size_bytes", TABLE_BYTES },
		{ "Tier", "tier", TABLE_STRING },
	};
	size_t n = json_object_array_length(pins);
	struct table *t;
	int r;

	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		table_add_members(t, json_object_array_get_idx(pins, i),
				  ARRAY_SIZE(columns));
	r = table_print(t, out);
	table_free(t);
	return r;
}
