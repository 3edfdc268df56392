/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "jobcmd.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "bar.h"
#include "member.h"
#include "progress.h"
#include "size.h"
#include "table.h"
#include "tierview.h"
#include "timefmt.h"

/* The "job" member of a reply, or NULL when the reply has none. */
static struct json_object *jobcmd_job(struct json_object *result)
{
	struct json_object *job = member_get(result, "job");

	return json_object_is_type(job, json_type_object) ? job : NULL;
}

static uint64_t jobcmd_uint(struct json_object *job, const char *key)
{
	uint64_t v = 0;

	member_uint(job, key, &v);
	return v;
}

/* done of total in whole percent, 100 when there is nothing to do. */
static unsigned jobcmd_percent(uint64_t done, uint64_t total)
{
	return total ? (unsigned)(100.0 * (double)(done < total ? done : total) / (double)total) : 100u;
}

/* What the job's counts count: "extents", or "pieces" (older tierds say nothing: extents). */
static const char *jobcmd_units(struct json_object *job)
{
	const char *units = member_string(job, "units");

	return units ? units : "extents";
}

/* "48.0 MiB of 160.0 MiB (30%), 12 of 40 extents" */
static void jobcmd_amount(struct json_object *job, char *buf, size_t len)
{
	char done[SIZE_FORMAT_MAX], total[SIZE_FORMAT_MAX];
	uint64_t db = jobcmd_uint(job, "done_bytes"), tb = jobcmd_uint(job, "total_bytes");

	snprintf(buf, len, "%s of %s (%u%%), %" PRIu64 " of %" PRIu64 " %s",
		 size_format(db, done, sizeof(done)), size_format(tb, total, sizeof(total)),
		 jobcmd_percent(db, tb), jobcmd_uint(job, "done_extents"),
		 jobcmd_uint(job, "total_extents"), jobcmd_units(job));
}

static int jobcmd_print_show(FILE *out, struct json_object *job)
{
	static const struct table_column columns[] = {
		{ "Pool", "pool", TABLE_STRING },
		{ "Job", "what", TABLE_STRING },
		{ "Kind", "kind", TABLE_STRING },
		{ "Started", "started_at", TABLE_STRING },
		{ "Elapsed", "elapsed_seconds", TABLE_STRING },
		{ "Done", "done_bytes", TABLE_BYTES },
		{ "Total", "total_bytes", TABLE_BYTES },
		{ "Extents", "done_extents", TABLE_STRING },
		{ "Moved", "moved_extents", TABLE_UINT },
		{ "Failed", "failed_extents", TABLE_UINT },
		{ "Rate", "rate_bytes_per_second", TABLE_STRING },
		{ "Time left", "eta_seconds", TABLE_STRING },
		{ "Copying", "batch", TABLE_STRING },
		{ "Waiting for", "waiting", TABLE_STRING },
		{ "Rate limit", "rate_limit", TABLE_STRING },
		{ "I/O awareness", "io_awareness", TABLE_STRING },
		{ "Window ends", "window_ends_at", TABLE_STRING },
	};
	const char *from = member_string(job, "from"), *to = member_string(job, "to");
	const char *wait = bar_waiting_text(member_string(job, "waiting"));
	struct json_object *limits = member_get(job, "limits");
	char extents[64], when[TIERVIEW_TEXT_MAX], ends[TIERVIEW_TEXT_MAX], dur[TIMEFMT_MAX];
	char eta_text[TIMEFMT_MAX], rate[SIZE_FORMAT_MAX + 2], cap[SIZE_FORMAT_MAX + 2];
	char size[SIZE_FORMAT_MAX], copying[160];
	uint64_t v, extent;
	struct table *t;
	int r;

	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		return r;
	table_add_members(t, job, 3);
	table_add_string(t, tierview_time(job, "started_at", when));
	table_add_string(t, timefmt_duration(jobcmd_uint(job, "elapsed_seconds"), dur, sizeof(dur)));
	table_add_members(t, job, 2);
	snprintf(extents, sizeof(extents), "%" PRIu64 " of %" PRIu64 "%s (%u%%)",
		 jobcmd_uint(job, "done_extents"), jobcmd_uint(job, "total_extents"),
		 strcmp(jobcmd_units(job), "pieces") ? "" : " pieces",
		 jobcmd_percent(jobcmd_uint(job, "done_extents"), jobcmd_uint(job, "total_extents")));
	table_add_string(t, extents);
	table_add_members(t, job, 2);
	v = jobcmd_uint(job, "rate_bytes_per_second");
	snprintf(rate, sizeof(rate), "%s/s", size_format(v, size, sizeof(size)));
	table_add_string(t, v ? rate : "not known yet");
	table_add_string(t, member_uint(job, "eta_seconds", &v) == 0 ?
			    timefmt_duration(v, eta_text, sizeof(eta_text)) : "not known");
	if (member_uint(job, "extent", &extent) == 0 && from && to)
		snprintf(copying, sizeof(copying), "extent %" PRIu64 " %s -> %s, %zu in the batch,"
			 " %" PRIu64 " of %" PRIu64 " regions copied", extent, from, to,
			 json_object_array_length(member_get(job, "batch")),
			 jobcmd_uint(job, "batch_copied_regions"), jobcmd_uint(job, "batch_regions"));
	else
		snprintf(copying, sizeof(copying), "nothing now");
	table_add_string(t, copying);
	table_add_string(t, wait ? wait : member_bool(job, "aborting") ?
			    "the batch in flight, then it stops (aborting)" : "nothing");
	if (member_uint(limits, "rate_bytes_per_second", &v) == 0)
		snprintf(cap, sizeof(cap), "%s/s", size_format(v, size, sizeof(size)));
	else
		snprintf(cap, sizeof(cap), "none");
	table_add_string(t, cap);
	table_add_json(t, member_get(limits, "io_awareness"));
	table_add_string(t, tierview_time(limits, "window_ends_at", ends));
	r = table_print_fields(t, out);
	table_free(t);
	return r;
}

/* "Pool tank: tiering run 12 aborted after 1m20s: 48.0 MiB of 160.0 MiB (30%), 12 of 40 extents." */
static int jobcmd_print_end(FILE *out, struct json_object *job)
{
	const char *pool = member_string(job, "pool"), *what = member_string(job, "what");
	const char *result = member_string(job, "result"), *message = member_string(job, "message");
	char amount[160], dur[TIMEFMT_MAX];

	jobcmd_amount(job, amount, sizeof(amount));
	timefmt_duration(jobcmd_uint(job, "elapsed_seconds"), dur, sizeof(dur));
	fprintf(out, "Pool %s: %s %s after %s: %s.\n", pool ? pool : "?", what ? what : "job",
		result ? result : "ended", dur, amount);
	if (message)
		fprintf(out, "%s\n", message);
	return ferror(out) ? -EIO : 0;
}

/* The exit status of a job's result: what tier now --wait gives a run that ended so. */
static int jobcmd_status(struct json_object *job)
{
	const char *result = member_string(job, "result");

	if (!result)
		return CLI_EXIT_FAILURE;
	if (!strcmp(result, "aborted"))
		return CLI_EXIT_ABORTED;
	if (!strcmp(result, "done") || !strcmp(result, "cancelled"))
		return 0;
	return CLI_EXIT_FAILURE;
}

/* job show, job wait and job abort: the same call, each its own output and status. */
static int jobcmd_run(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	bool follow = !strcmp(cmd->method, "job.wait"), show = !strcmp(cmd->method, "job.show");
	struct json_object *params = NULL, *result = NULL, *job;
	struct progress *progress = NULL;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, NULL, 0, 1, 1, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (follow && progress_new(stderr, isatty(STDERR_FILENO), &progress) < 0)
		return cli_output_done(-ENOMEM);
	params = cli_params(args[0]);
	r = cli_call(cli, cmd->method, params, progress, &result);
	if (r)
		goto out;
	job = jobcmd_job(result);
	if (!job)
		r = cli_output_done(-EINVAL);
	else if (cli->json)
		r = cli_print_json(result);
	else
		r = cli_output_done(show ? jobcmd_print_show(stdout, job) : jobcmd_print_end(stdout, job));
	/* A script waiting on the job must see how it ended; an abort asked for is a success. */
	if (!r && follow)
		r = jobcmd_status(job);
out:
	progress_free(progress);
	json_object_put(result);
	json_object_put(params);
	return r;
}

static const struct cli_command jobcmd_commands[] = {
	{
		.name = "job show",
		.synopsis = "NAME",
		.summary = "show the job running on a pool: progress, rate, time left",
		.description =
			"Show the long operation running on pool NAME: a tiering run, a\n"
			"'tier detach', an 'extent move' or a 'pool drop-missing', whichever\n"
			"terminal started it.  It shows the bytes and extents done of the\n"
			"total, the rate over about the last minute, the time left at that\n"
			"rate, the extent being copied now, and what the job waits for\n"
			"between batches: 'paused' (tierctl tier pause), 'rate limit' (the\n"
			"schedule's --rate), or I/O awareness (the volume is busy, or not yet\n"
			"idle); and the limits it runs under, with the end of the tiering\n"
			"window for a scheduled run.  Fails when the pool runs no job.\n",
		.examples = "  tierctl job show tank\n"
			    "  tierctl job show tank --json\n",
		.run = jobcmd_run,
		.method = "job.show",
		.tables = true,
	},
	{
		.name = "job wait",
		.synopsis = "NAME",
		.summary = "follow the job running on a pool until it ends",
		.description =
			"Follow the job running on pool NAME from this terminal, with the same\n"
			"progress bar as the command that started it (bytes, extents, rate\n"
			"and time left on standard error; plain lines, one a second, when it\n"
			"is not a terminal), until the job ends; then say how it ended.\n"
			"Interrupting 'job wait' leaves the job running.  The exit status is\n"
			"the job's: 0 done (or a scheduled run stopped by its window's end),\n"
			"1 failed or partial (some extents could not move), 3 aborted by\n"
			"'tierctl job abort'.  Fails when the pool runs no job.\n",
		.examples = "  tierctl job wait tank\n"
			    "  tierctl job wait tank --json > job.json\n",
		.run = jobcmd_run,
		.method = "job.wait",
	},
	{
		.name = "job abort",
		.synopsis = "NAME",
		.summary = "stop the job running on a pool after its current batch",
		.description =
			"Stop the job running on pool NAME at its next batch boundary: the\n"
			"batch being copied finishes and commits, no further batch starts.\n"
			"Whatever moved stays moved, and the volume stays consistent and in\n"
			"use throughout.  A tiering run is recorded as 'aborted' in 'tierctl\n"
			"runs'; an aborted 'tier detach' leaves the SSD attached, holding the\n"
			"extents that did not move yet (a --shrink already done stays done);\n"
			"an aborted 'pool drop-missing' drops nothing.  The command that\n"
			"started the job, and any 'tierctl job wait', exit with status 3.\n"
			"'job abort' returns once the job has stopped.  Needs root.\n",
		.examples = "  tierctl job abort tank\n",
		.run = jobcmd_run,
		.method = "job.abort",
	},
	{ 0 },
};

const struct cli_group jobcmd_group = {
	.name = "job",
	.description = "Jobs: follow or stop the long operation running on a pool, from any\n"
		       "terminal.\n",
	.commands = jobcmd_commands,
};
