/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "advisecmd.h"
#include "member.h"
#include "plot.h"
#include "size.h"
#include "table.h"
#include "timefmt.h"
#include "array.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADVISECMD_SIZES_MAX 64 /* tierd's bound (TIERING_ADVICE_POINTS) */

/* A share member as a number, -1 when missing or null. */
static double advisecmd_share(struct json_object *o, const char *key)
{
	struct json_object *v = member_get(o, key);

	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return -1;
	return json_object_get_double(v);
}

/* "12.3%" */
static const char *advisecmd_percent(double share, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f%%", share * 100);
	return buf;
}

/* --ssd-size's list into params; returns CLI_PROCEED or the usage error. */
static int advisecmd_sizes(const char *who, const char *list, struct json_object **params)
{
	struct json_object *a = json_object_new_array();
	char *copy = strdup(list), *save = NULL, *tok;
	int r = CLI_PROCEED, n = 0;

	if (!a || !copy) {
		r = cli_fail("%s", strerror(ENOMEM));
		goto out;
	}
	for (tok = strtok_r(copy, ",", &save); tok && r == CLI_PROCEED;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t size;

		if (size_parse(tok, &size) < 0)
			r = cli_usage(who, "--ssd-size takes sizes such as 64M or 1T, not '%s'", tok);
		else if (++n > ADVISECMD_SIZES_MAX)
			r = cli_usage(who, "--ssd-size takes at most %d sizes", ADVISECMD_SIZES_MAX);
		else
			json_object_array_add(a, json_object_new_uint64(size));
	}
	if (r == CLI_PROCEED && !n)
		r = cli_usage(who, "--ssd-size takes sizes such as 64M or 1T, not '%s'", list);
	if (r == CLI_PROCEED && *params &&
	    !json_object_object_add(*params, "ssd_sizes_bytes", a)) {
		a = NULL;
	} else if (r == CLI_PROCEED) {
		json_object_put(*params);
		*params = NULL; /* cli_call reports it */
	}
out:
	json_object_put(a);
	free(copy);
	return r;
}

struct advisecmd_plot {
	struct json_object *advice;
	bool svg;
};

/* The curve as gnuplot's program: a line through the points, the SSD now marked. */
static int advisecmd_plot_script(FILE *f, void *ctx)
{
	const struct advisecmd_plot *plot = ctx;
	struct json_object *points = member_get(plot->advice, "points");
	const char *name = member_string(plot->advice, "pool");
	uint64_t size;

	if (!json_object_is_type(points, json_type_array) || !name)
		return -EINVAL;
	fprintf(f, "$curve << EOD\n");
	for (size_t i = 0; i < json_object_array_length(points); i++) {
		struct json_object *pt = json_object_array_get_idx(points, i);
		double share = advisecmd_share(pt, "ssd_io_share");

		if (member_uint(pt, "ssd_size_bytes", &size) < 0 || share < 0)
			return -EINVAL;
		/* Columns: SSD size in GiB, share %, the same share again on the SSD now's row. */
		fprintf(f, "%.6f %.3f ", (double)size / 1073741824.0, share * 100);
		if (member_bool(pt, "current"))
			fprintf(f, "%.3f\n", share * 100);
		else
			fputs("NaN\n", f);
	}
	fprintf(f, "EOD\n");
	fputs(plot_terminal(plot->svg ? PLOT_SVG : PLOT_PNG), f);
	/* Pool names are [A-Za-z0-9_.+-]: nothing in them ends gnuplot's quotes. */
	fprintf(f,
		"set output\n"
		"set title \"Pool %s: predicted SSD share of I/O by SSD size\"\n"
		"set xlabel 'SSD size (GiB)'\n"
		"set ylabel 'SSD share of I/O (%%)'\n"
		"set yrange [0:100]\n"
		"set xrange [0:*]\n"
		"set grid\n"
		"set key bottom right\n"
		"plot $curve using 1:2 with linespoints pointtype 7 pointsize 0.5 title 'predicted', \\\n"
		"     $curve using 1:3 with points pointtype 9 pointsize 2 title 'the SSD now'\n",
		name);
	return ferror(f) ? -EIO : 0;
}

static int advisecmd_print(FILE *out, struct json_object *advice)
{
	static const struct table_column columns[] = {
		{ "SSD size", "ssd_size_bytes", TABLE_BYTES },
		{ "I/O share", "ssd_io_share", TABLE_STRING },
		{ "Note", "current", TABLE_STRING },
	};
	/* With pieces watched (tierd's piece-heat setting): what placing pieces would reach. */
	static const struct table_column piece_columns[] = {
		{ "SSD size", "ssd_size_bytes", TABLE_BYTES },
		{ "I/O share", "ssd_io_share", TABLE_STRING },
		{ "With pieces", "ssd_io_share_with_pieces", TABLE_STRING },
		{ "Note", "current", TABLE_STRING },
	};
	uint64_t piece_bytes = 0;
	bool pieces = member_uint(advice, "piece_bytes", &piece_bytes) == 0 && piece_bytes;
	struct json_object *points = member_get(advice, "points");
	uint64_t all_hot = 0, up = 0, down = 0, window = 0, ios = 0;
	char a[SIZE_FORMAT_MAX], b[SIZE_FORMAT_MAX], c[SIZE_FORMAT_MAX], pct[16], dur[32];
	double measured = advisecmd_share(advice, "measured_ssd_io_share");
	struct table *t = NULL;
	int r;

	if (!json_object_is_type(points, json_type_array) ||
	    member_uint(advice, "all_hot_ssd_size_bytes", &all_hot) < 0 ||
	    member_uint(advice, "promoted_bytes", &up) < 0 ||
	    member_uint(advice, "demoted_bytes", &down) < 0 ||
	    member_uint(advice, "window_seconds", &window) < 0 ||
	    member_uint(advice, "window_ios", &ios) < 0)
		return -EINVAL;
	if (!member_bool(advice, "heat_enabled"))
		fprintf(stderr, "tierctl: warning: heat is off for pool %s: the prediction rests on"
			" the heat it had (see 'tierctl pool show')\n", member_string(advice, "pool"));
	r = pieces ? table_new(piece_columns, ARRAY_SIZE(piece_columns), &t) :
		     table_new(columns, ARRAY_SIZE(columns), &t);
	for (size_t i = 0; r == 0 && i < json_object_array_length(points); i++) {
		struct json_object *pt = json_object_array_get_idx(points, i);
		double share = advisecmd_share(pt, "ssd_io_share");

		if (share < 0) {
			r = -EINVAL;
			break;
		}
		r = table_add_members(t, pt, 1);
		if (r == 0)
			r = table_add_string(t, advisecmd_percent(share, pct, sizeof(pct)));
		if (r == 0 && pieces)
			r = table_add_string(t, advisecmd_percent(advisecmd_share(
							pt, "ssd_io_share_with_pieces"), pct, sizeof(pct)));
		if (r == 0)
			r = table_add_string(t, member_bool(pt, "current") ? "<- the SSD now" : "");
	}
	if (r == 0 && fprintf(out, "Pool %s, policy %s: the SSD tier's predicted share of the"
			      " I/O by its size.\n\n", member_string(advice, "pool"),
			      member_string(advice, "policy")) < 0)
		r = -EIO;
	if (r == 0)
		r = table_print(t, out);
	table_free(t);
	if (r < 0)
		return r;
	fprintf(out, "\nAn SSD of %s holds all the policy would promote: %s of the I/O.\n",
		size_format(all_hot, a, sizeof(a)),
		advisecmd_percent(advisecmd_share(advice, "all_hot_ssd_io_share"), pct, sizeof(pct)));
	if (up || down)
		fprintf(out, "To reach the share of the SSD now, a run would move %s (%s up, %s"
			" down).\n", size_format(up + down, a, sizeof(a)),
			size_format(up, b, sizeof(b)), size_format(down, c, sizeof(c)));
	else
		fprintf(out, "The SSD now holds what the policy would put there: a run would move"
			" nothing.\n");
	timefmt_duration(window, dur, sizeof(dur));
	if (measured >= 0)
		fprintf(out, "Measured over the last %s: the SSD served %s of %" PRIu64 " I/Os.\n",
			dur, advisecmd_percent(measured, pct, sizeof(pct)), ios);
	else
		fprintf(out, "Measured over the last %s: no I/O.\n", dur);
	if (pieces)
		fprintf(out, "WITH PIECES: the same room spent on the hottest %s pieces of the"
			" extents instead\nof whole extents, as placement finer than an extent"
			" could (tiering runs do not\nplace pieces yet; the table's limit left out).\n",
			size_format(piece_bytes, a, sizeof(a)));
	return ferror(out) ? -EIO : 0;
}

int advisecmd_run(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *window = NULL, *sizes = NULL, *plot = NULL;
	const struct cli_option options[] = {
		CLI_VALUE("window", &window),
		CLI_VALUE("ssd-size", &sizes),
		CLI_VALUE("plot", &plot),
	};
	struct json_object *params = NULL, *result = NULL, *advice;
	uint64_t window_s = 0;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, ARRAY_SIZE(options), 1, 1, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (window && (timefmt_parse_duration(window, &window_s) < 0 || window_s < 60 ||
		       window_s > 366 * 86400ull))
		return cli_usage(cmd->name, "--window takes a duration of 1m to 366d such as 30m,"
				 " 6h or 7d, not '%s'", window);
	if (plot && plot_format(plot) < 0)
		return cli_usage(cmd->name, "--plot needs a FILE ending in .svg or .png, not '%s'",
				 plot);
	params = cli_params(args[0]);
	if (window)
		cli_param_uint(&params, "window_seconds", window_s);
	if (sizes) {
		r = advisecmd_sizes(cmd->name, sizes, &params);
		if (r != CLI_PROCEED)
			goto out;
	}
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (r)
		goto out;
	advice = member_get(result, "advice");
	if (!json_object_is_type(advice, json_type_object)) {
		r = cli_output_done(-EINVAL);
		goto out;
	}
	/* The picture first: the text below it should not claim a plot that failed. */
	if (plot) {
		struct advisecmd_plot ctx = { advice, plot_format(plot) == PLOT_SVG };

		r = plot_draw(plot, advisecmd_plot_script, &ctx);
		if (r)
			goto out;
	}
	if (cli->json)
		r = cli_print_json(result);
	else
		r = cli_output_done(advisecmd_print(stdout, advice));
	if (!r && plot && !cli->json)
		r = cli_output_done(printf("\nDrew the curve into %s.\n", plot) < 0 ? -EIO : 0);
out:
	json_object_put(result);
	json_object_put(params);
	return r;
}
