/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "member.h"
#include "plot.h"
#include "size.h"
#include "statscmd.h"
#include "table.h"
#include "tierview.h"
#include "timefmt.h"
#include "array.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/* --plot without --history: a day shows the daily rhythm that tiering follows. */
#define STATSCMD_PLOT_HISTORY_DEFAULT 86400


struct statscmd_options {
	const char *window, *history, *step, *plot;
	uint64_t window_s, history_s, step_s;
	bool svg;
};

/* A duration option: > 0 seconds; returns CLI_PROCEED or the usage error. */
static int statscmd_duration(const char *who, const char *option, const char *text,
			     uint64_t *seconds)
{
	int r = timefmt_parse_duration(text, seconds);

	if (r < 0 || !*seconds || *seconds > UINT32_MAX)
		return cli_usage(who, "%s takes a duration such as 30m, 6h or 7d, not '%s'", option,
				 text);
	return CLI_PROCEED;
}

static int statscmd_check(const char *who, struct statscmd_options *o)
{
	int r = CLI_PROCEED;

	if (o->step && !o->history && !o->plot)
		return cli_usage(who, "--step goes with --history or --plot");
	if (o->plot) {
		o->svg = plot_format(o->plot) == PLOT_SVG;
		if (plot_format(o->plot) < 0)
			return cli_usage(who, "--plot needs a FILE ending in .svg or .png, not '%s'",
					 o->plot);
	}
	if (o->window)
		r = statscmd_duration(who, "--window", o->window, &o->window_s);
	if (r == CLI_PROCEED && o->history)
		r = statscmd_duration(who, "--history", o->history, &o->history_s);
	if (r == CLI_PROCEED && o->step)
		r = statscmd_duration(who, "--step", o->step, &o->step_s);
	if (r != CLI_PROCEED)
		return r;
	if (o->plot && !o->history)
		o->history_s = STATSCMD_PLOT_HISTORY_DEFAULT;
	if (o->step && o->step_s > o->history_s)
		return cli_usage(who, "--step %s is longer than the history of %s", o->step,
				 o->history ? o->history : "24h");
	return CLI_PROCEED;
}

/* "120 extents (480.0 MiB)" from KIND_extents and KIND_bytes. */
static const char *statscmd_moved(struct json_object *obj, const char *kind,
				  char buf[TIERVIEW_TEXT_MAX])
{
	char key[32], size[SIZE_FORMAT_MAX];
	uint64_t extents, bytes = 0;

	snprintf(key, sizeof(key), "%s_extents", kind);
	if (member_uint(obj, key, &extents) < 0)
		return "-";
	snprintf(key, sizeof(key), "%s_bytes", kind);
	member_uint(obj, key, &bytes);
	snprintf(buf, TIERVIEW_TEXT_MAX, "%" PRIu64 " extent%s (%s)", extents,
		 extents == 1 ? "" : "s", size_format(bytes, size, sizeof(size)));
	return buf;
}

/* "12 on-demand, done, started 2026-11-30 00:05:00", or "none yet". */
static const char *statscmd_last_run(struct json_object *run, char buf[2 * TIERVIEW_TEXT_MAX])
{
	char started[TIERVIEW_TEXT_MAX];
	const char *trigger = member_string(run, "trigger"), *result = member_string(run, "result");
	uint64_t id;

	if (!json_object_is_type(run, json_type_object))
		return "none yet";
	if (member_uint(run, "id", &id) < 0)
		return "-";
	snprintf(buf, 2 * TIERVIEW_TEXT_MAX, "%" PRIu64 " (%s, %s), started %s", id,
		 trigger ? trigger : "-", result ? result : "-",
		 tierview_time(run, "started_at", started));
	return buf;
}

/* "/dev/vdb, /dev/vdc": the paths of the tier's device objects. */
static char *statscmd_devices(struct json_object *tier)
{
	struct json_object *devices = member_get(tier, "devices");
	size_t n = json_object_is_type(devices, json_type_array) ?
			   json_object_array_length(devices) : 0;
	char *text = NULL, *longer;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *path = member_string(json_object_array_get_idx(devices, i), "path");

		fprintf(f, "%s%s", i ? ", " : "", path ? path : "-");
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	if (!n) {
		longer = strdup("-");
		free(text);
		text = longer;
	}
	return text;
}

static int statscmd_print_tiers(FILE *out, struct json_object *tiers)
{
	static const struct table_column columns[] = {
		{ "Tier", "name", TABLE_STRING },
		{ "Class", "class", TABLE_STRING },
		{ "Devices", "devices", TABLE_STRING },
		{ "Usable", "usable_bytes", TABLE_BYTES },
		{ "Extents", "total_extents", TABLE_UINT },
		{ "Used", "used_extents", TABLE_UINT },
		{ "Free", "free_extents", TABLE_UINT },
	};
	size_t n = json_object_array_length(tiers);
	struct table *t;
	int r;

	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct json_object *tier = json_object_array_get_idx(tiers, i);
		char *devices = statscmd_devices(tier);

		table_add_members(t, tier, 2);
		r = devices ? table_add_string(t, devices) : -ENOMEM;
		free(devices);
		if (r < 0)
			break;
		table_add_members(t, tier, 4);
	}
	if (!r)
		r = table_print(t, out);
	table_free(t);
	return r;
}

static int statscmd_print_history(FILE *out, struct json_object *history)
{
	static const struct table_column columns[] = {
		{ "Start", "started_at", TABLE_STRING },
		{ "Reads", "reads", TABLE_UINT },
		{ "Writes", "writes", TABLE_UINT },
		{ "SSD share", "ssd_io_share", TABLE_STRING },
		{ "Promoted", "promoted_bytes", TABLE_BYTES },
		{ "Demoted", "demoted_bytes", TABLE_BYTES },
	};
	size_t n = json_object_array_length(history);
	struct table *t;
	int r;

	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct json_object *row = json_object_array_get_idx(history, i);
		char start[TIERVIEW_TEXT_MAX], share[TIERVIEW_TEXT_MAX], padded[TIERVIEW_TEXT_MAX + 8];

		table_add_string(t, tierview_time(row, "started_at", start));
		table_add_members(t, row, 2);
		/* Padded to "100.0%": a column of numbers reads best right-aligned. */
		snprintf(padded, sizeof(padded), "%6s", tierview_percent(row, "ssd_io_share", share));
		table_add_string(t, padded);
		table_add_members(t, row, 2);
	}
	r = table_print(t, out);
	table_free(t);
	return r;
}

static int statscmd_print(FILE *out, struct json_object *stats)
{
	static const struct table_column head_columns[] = {
		{ "Pool", "name", TABLE_STRING },
		{ "Extent size", "extent_size_bytes", TABLE_BYTES },
		{ "State", "state", TABLE_STRING },
	};
	static const struct table_column body_columns[] = {
		{ "I/O window", "window", TABLE_STRING },
		{ "Reads", "reads", TABLE_UINT },
		{ "Writes", "writes", TABLE_UINT },
		{ "SSD share of I/O", "ssd_io_share", TABLE_STRING },
		{ "Promoted in total", "promoted", TABLE_STRING },
		{ "Demoted in total", "demoted", TABLE_STRING },
		{ "Failed moves", "failed_extents", TABLE_UINT },
		{ "Last run", "last_run", TABLE_STRING },
		{ "Schedule", "spec", TABLE_STRING },
		{ "Next run", "next_run_at", TABLE_STRING },
	};
	struct json_object *io = member_get(stats, "io"), *migration = member_get(stats, "migration");
	struct json_object *schedule = member_get(stats, "schedule");
	struct json_object *tiers = member_get(stats, "tiers"), *history = member_get(stats, "history");
	char window[TIMEFMT_MAX], share[TIERVIEW_TEXT_MAX], promoted[TIERVIEW_TEXT_MAX];
	char demoted[TIERVIEW_TEXT_MAX], last[2 * TIERVIEW_TEXT_MAX], next[TIERVIEW_TEXT_MAX];
	struct table *t;
	uint64_t seconds;
	int r;

	r = table_new(head_columns, ARRAY_SIZE(head_columns), &t);
	if (r < 0)
		return r;
	table_add_members(t, stats, ARRAY_SIZE(head_columns));
	r = table_print_fields(t, out);
	table_free(t);
	if (r < 0)
		return r;

	if (json_object_is_type(tiers, json_type_array)) {
		table_gap(out);
		r = statscmd_print_tiers(out, tiers);
		if (r < 0)
			return r;
	}

	r = table_new(body_columns, ARRAY_SIZE(body_columns), &t);
	if (r < 0)
		return r;
	table_add_string(t, member_uint(io, "window_seconds", &seconds) < 0 ? NULL :
			    timefmt_duration(seconds, window, sizeof(window)));
	table_add_members(t, io, 2);
	table_add_string(t, tierview_percent(io, "ssd_io_share", share));
	table_add_string(t, statscmd_moved(migration, "promoted", promoted));
	table_add_string(t, statscmd_moved(migration, "demoted", demoted));
	table_add_members(t, migration, 1);
	table_add_string(t, statscmd_last_run(member_get(stats, "last_run"), last));
	table_add_members(t, schedule, 1);
	/* The next run in stats has no "paused" beside it: the state says so instead. */
	table_add_string(t, tierview_next_run(schedule, next));
	table_gap(out);
	r = table_print_fields(t, out);
	table_free(t);
	if (r < 0 || !json_object_is_type(history, json_type_array))
		return r;
	table_gap(out);
	if (!json_object_array_length(history))
		return fprintf(out, "No history yet.\n") < 0 ? -EIO : 0;
	return statscmd_print_history(out, history);
}

/* A time as gnuplot's time axis shows it: local wall-clock seconds, which it takes for UTC. */
static int64_t statscmd_plot_time(time_t t)
{
	struct tm tm;

	return localtime_r(&t, &tm) ? (int64_t)t + tm.tm_gmtoff : (int64_t)t;
}

/*
 * The gnuplot program that draws history: the data inline as a datablock, so
 * that no data file needs a place on disk or cleaning up afterwards.
 */
static int statscmd_plot_script(FILE *f, const char *name, bool svg, struct json_object *history)
{
	size_t n = json_object_array_length(history);
	int64_t first = INT64_MAX, last = INT64_MIN;
	bool plain_name = true;

	/* Pool names are plain; anything else stays out of gnuplot's quotes. */
	for (const char *p = name; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-", *p))
			plain_name = false;

	fprintf(f, "$history << EOD\n");
	for (size_t i = 0; i < n; i++) {
		struct json_object *row = json_object_array_get_idx(history, i);
		struct json_object *fraction = member_get(row, "ssd_io_share");
		const char *start = member_string(row, "started_at");
		uint64_t seconds = 0, promoted = 0, demoted = 0;
		time_t t;

		if (!start || timefmt_parse_iso(start, &t) < 0)
			return -EINVAL;
		member_uint(row, "duration_seconds", &seconds);
		member_uint(row, "promoted_bytes", &promoted);
		member_uint(row, "demoted_bytes", &demoted);
		/* Columns: interval start, its middle (where it is drawn), share %, MiB up, down, length. */
		fprintf(f, "%" PRId64 " %" PRId64 " ", statscmd_plot_time(t),
			statscmd_plot_time(t) + (int64_t)seconds / 2);
		if (statscmd_plot_time(t) < first)
			first = statscmd_plot_time(t);
		if (statscmd_plot_time(t) + (int64_t)seconds > last)
			last = statscmd_plot_time(t) + (int64_t)seconds;
		if (json_object_is_type(fraction, json_type_double) ||
		    json_object_is_type(fraction, json_type_int))
			fprintf(f, "%.3f", json_object_get_double(fraction) * 100.0);
		else
			fputs("NaN", f);
		fprintf(f, " %.3f %.3f %" PRIu64 "\n", (double)promoted / 1048576.0,
			-(double)demoted / 1048576.0, seconds);
	}
	fprintf(f, "EOD\n");
	/* A single point of no length still needs an axis gnuplot can draw. */
	if (last <= first)
		last = first + 60;
	fputs(plot_terminal(svg ? PLOT_SVG : PLOT_PNG), f);
	/* No file name: the output is gnuplot's stdout, which is FILE already. */
	fprintf(f,
		"set output\n"
		"set xdata time\n"
		"set timefmt '%%s'\n"
		"set format x \"%%d %%b\\n%%H:%%M\"\n"
		"set xrange [%" PRId64 ":%" PRId64 "]\n"
		"set grid\n"
		"set key outside top center horizontal\n"
		"set lmargin 12\n"
		"set rmargin 4\n"
		"set tmargin 3\n"
		"set multiplot layout 2,1 title \"%s%s%s\"\n",
		first, last,
		plain_name ? "Pool " : "", plain_name ? name : "", plain_name ? ", local time" : "Local time");
	/* Both panels place an interval at its middle, so that points and bars line up. */
	fprintf(f,
		"set ylabel 'SSD share of I/O (%%)'\n"
		"set yrange [0:100]\n"
		"plot $history using 2:3 with linespoints pointtype 7 pointsize 0.5 title 'SSD share of I/O'\n"
		"set ylabel 'MiB moved per interval'\n"
		"set yrange [*:*]\n"
		"set xzeroaxis\n"
		"set style fill solid 0.7 noborder\n"
		"plot $history using 2:4:($6*0.8) with boxes title 'promoted to SSD', \\\n"
		"     $history using 2:5:($6*0.8) with boxes title 'demoted to HDD'\n"
		"unset multiplot\n");
	return ferror(f) ? -EIO : 0;
}

struct statscmd_plot_ctx {
	const char *name;
	bool svg;
	struct json_object *history;
};

static int statscmd_plot_write(FILE *f, void *ctx)
{
	const struct statscmd_plot_ctx *c = ctx;

	return statscmd_plot_script(f, c->name, c->svg, c->history);
}

/* Draw history into file; returns 0 or CLI_EXIT_FAILURE. */
static int statscmd_plot(const char *file, bool svg, const char *name, struct json_object *history)
{
	struct statscmd_plot_ctx c = { name, svg, history };

	if (!json_object_is_type(history, json_type_array))
		return cli_output_done(-EINVAL);
	if (!json_object_array_length(history))
		return cli_fail("pool %s has no history to plot yet", name);
	return plot_draw(file, statscmd_plot_write, &c);
}

int statscmd_run(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	struct statscmd_options o = { 0 };
	const struct cli_option options[] = {
		CLI_VALUE("window", &o.window),
		CLI_VALUE("history", &o.history),
		CLI_VALUE("step", &o.step),
		CLI_VALUE("plot", &o.plot),
	};
	struct json_object *params = NULL, *result = NULL, *stats;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, ARRAY_SIZE(options), 1, 1, &args,
		      &n_args);
	if (r != CLI_PROCEED)
		return r;
	r = statscmd_check(cmd->name, &o);
	if (r != CLI_PROCEED)
		return r;
	params = cli_params(args[0]);
	if (o.window)
		cli_param_uint(&params, "window_seconds", o.window_s);
	if (o.history_s)
		cli_param_uint(&params, "history_seconds", o.history_s);
	if (o.step)
		cli_param_uint(&params, "step_seconds", o.step_s);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (r)
		goto out;
	stats = member_get(result, "stats");
	if (!json_object_is_type(stats, json_type_object)) {
		r = cli_output_done(-EINVAL);
		goto out;
	}
	/* The picture first: the text below it should not claim a plot that failed. */
	if (o.plot) {
		r = statscmd_plot(o.plot, o.svg, args[0], member_get(stats, "history"));
		if (r)
			goto out;
	}
	if (cli->json)
		r = cli_print_json(result);
	else
		r = cli_output_done(statscmd_print(stdout, stats));
	if (!r && o.plot && !cli->json)
		r = cli_output_done(printf("\nDrew the history into %s.\n", o.plot) < 0 ? -EIO : 0);
out:
	json_object_put(result);
	json_object_put(params);
	return r;
}
