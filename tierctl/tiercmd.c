/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tiercmd.h"
#include "client.h"
#include "member.h"
#include "poolview.h"
#include "progress.h"
#include "redundancy.h"
#include "size.h"
#include "table.h"
#include "tierview.h"
#include "array.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Moves a dry run lists unless --limit says otherwise. */
#define TIERCMD_MOVES_DEFAULT 20
#define TIERCMD_MOVES_MAX 10000 /* tierd's bound on one list (docs/protocol.md) */

/* The pool after a change to ssd: as JSON, or "Attached SSD to pool ...", then after. */
static int tiercmd_print_changed(struct cli *cli, const char *verb, const char *ssd,
				 const char *preposition, struct json_object *result,
				 const char *after)
{
	struct json_object *pool = member_get(result, "pool");
	char *before;
	int r;

	if (cli->json)
		return cli_print_json(result);
	if (!json_object_is_type(pool, json_type_object))
		return cli_output_done(-EINVAL);
	if (asprintf(&before, "%s %s %s pool", verb, ssd, preposition) < 0)
		return cli_output_done(-ENOMEM);
	r = cli_output_done(poolview_print_change(stdout, before, pool, after));
	free(before);
	return r;
}

/* Both commands take NAME and a required --ssd DEV, which start the request's parameters. */
static int tiercmd_parse(struct cli *cli, const struct cli_command *cmd, int argc, char **argv,
			 const struct cli_option *options, size_t n_options, const char **ssd,
			 struct json_object **params)
{
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, n_options, 1, 1, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (!*ssd)
		return cli_usage(cmd->name, "--ssd DEV is required");
	*params = cli_params(args[0]);
	cli_param_path(params, "ssd", *ssd);
	return CLI_PROCEED;
}

static int tiercmd_attach(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *ssd = NULL;
	bool no_grow = false, wipe = false;
	const struct cli_option options[] = {
		CLI_VALUE("ssd", &ssd),
		CLI_FLAG("no-grow", &no_grow),
		CLI_FLAG("wipe-signatures", &wipe),
	};
	struct json_object *params = NULL, *result = NULL;
	int r;

	r = tiercmd_parse(cli, cmd, argc, argv, options, ARRAY_SIZE(options), &ssd, &params);
	if (r != CLI_PROCEED)
		return r;
	if (no_grow)
		cli_param_bool(&params, "grow", false);
	if (wipe)
		cli_param_bool(&params, "wipe_signatures", true);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (!r)
		r = tiercmd_print_changed(cli, "Attached", ssd, "to", result,
					  no_grow ? "\nThe volume kept its size: the SSD only holds hot extents"
						    " and can be detached at any time." :
						    "\nThe volume grew: grow its filesystem to use the space"
						    " (resize2fs for ext4, xfs_growfs for XFS).");
	if (!r)
		redundancy_warn_ssd(ssd);
	json_object_put(result);
	json_object_put(params);
	return r;
}

static int tiercmd_detach(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *ssd = NULL;
	bool shrink = false, yes = false;
	const struct cli_option options[] = {
		CLI_VALUE("ssd", &ssd),
		CLI_FLAG("shrink", &shrink),
		CLI_FLAG("yes", &yes),
	};
	struct json_object *params = NULL, *result = NULL;
	struct progress *progress = NULL;
	char *moved = NULL;
	const char *unit;
	uint64_t done;
	int r;

	r = tiercmd_parse(cli, cmd, argc, argv, options, ARRAY_SIZE(options), &ssd, &params);
	if (r != CLI_PROCEED)
		return r;
	/* Only shrinking loses data; a plain detach moves everything first. */
	if (shrink)
		r = cli_confirm(yes, "Detaching %s with --shrink cuts the volume by the SSD's"
				" capacity: whatever lies past its new end is lost", ssd);
	if (r != CLI_PROCEED)
		goto out;
	if (progress_new(stderr, isatty(STDERR_FILENO), &progress) < 0) {
		r = cli_output_done(-ENOMEM);
		goto out;
	}
	if (shrink)
		cli_param_bool(&params, "shrink", true);
	r = cli_call(cli, cmd->method, params, progress, &result);
	if (r)
		goto out;
	/* tierd reports the moves only as progress, so the last update is what moved. */
	if (!progress_last(progress, &done, &unit))
		moved = strdup("; nothing had to move");
	else if (asprintf(&moved, "; moved %" PRIu64 " %s to the HDD tier", done, unit) < 0)
		moved = NULL;
	r = moved ? tiercmd_print_changed(cli, "Detached", ssd, "from", result, moved) :
		    cli_output_done(-ENOMEM);
out:
	free(moved);
	progress_free(progress);
	json_object_put(result);
	json_object_put(params);
	return r;
}

/* "12 extents (48.0 MiB)" from KIND_extents and KIND_bytes of a plan. */
static const char *tiercmd_plan_moves(struct json_object *plan, const char *kind,
				      char buf[TIERVIEW_TEXT_MAX])
{
	char key[32], size[SIZE_FORMAT_MAX];
	uint64_t extents = 0, bytes = 0, pieces = 0;

	snprintf(key, sizeof(key), "%s_extents", kind);
	if (member_uint(plan, key, &extents) < 0)
		return "-";
	snprintf(key, sizeof(key), "%s_bytes", kind);
	member_uint(plan, key, &bytes);
	/* Pieces promoted go out to the SSD; demoted, they come home. */
	if (member_uint(plan, strcmp(kind, "promoted") == 0 ? "pieces_out" : "pieces_home",
			&pieces) == 0 && pieces)
		snprintf(buf, TIERVIEW_TEXT_MAX, "%" PRIu64 " extent%s and %" PRIu64 " piece%s (%s)",
			 extents, extents == 1 ? "" : "s", pieces, pieces == 1 ? "" : "s",
			 size_format(bytes, size, sizeof(size)));
	else
		snprintf(buf, TIERVIEW_TEXT_MAX, "%" PRIu64 " extent%s (%s)", extents,
			 extents == 1 ? "" : "s", size_format(bytes, size, sizeof(size)));
	return buf;
}

/* The extents the table's limit kept out of a plan, when there are any. */
static int tiercmd_print_passed_over(FILE *out, struct json_object *table)
{
	uint64_t passed = 0, targets = 0, max = 0;

	if (member_uint(table, "passed_over_extents", &passed) < 0 || !passed)
		return 0;
	member_uint(table, "targets", &targets);
	member_uint(table, "max_targets", &max);
	return fprintf(out, "\n%" PRIu64 " extents passed over: the volume's table (%" PRIu64
		       " targets) would pass its limit of %" PRIu64 " (tierd's table-targets"
		       " setting).\n", passed, targets, max) < 0 ? -EIO : 0;
}

static int tiercmd_print_plan(FILE *out, const char *name, struct json_object *plan)
{
	static const struct table_column summary_columns[] = {
		{ "Pool", "name", TABLE_STRING },
		{ "Policy", "policy", TABLE_STRING },
		{ "Promote", "promote", TABLE_STRING },
		{ "Demote", "demote", TABLE_STRING },
		{ "SSD share of I/O", "ssd_io_share", TABLE_STRING },
	};
	static const struct table_column move_columns[] = {
		{ "Extent", "extent", TABLE_UINT },
		{ "Offset", "offset_bytes", TABLE_BYTES },
		{ "Heat", "heat", TABLE_STRING },
		{ "To", "to", TABLE_STRING },
	};
	/* A plan that places pieces names the piece of each move that is one. */
	static const struct table_column piece_move_columns[] = {
		{ "Extent", "extent", TABLE_UINT },
		{ "Piece", "piece", TABLE_UINT },
		{ "Offset", "offset_bytes", TABLE_BYTES },
		{ "Heat", "heat", TABLE_STRING },
		{ "To", "to", TABLE_STRING },
	};
	uint64_t pieces_home = 0, pieces_out = 0, piece_bytes = 0;
	char promote[TIERVIEW_TEXT_MAX], demote[TIERVIEW_TEXT_MAX], share[2 * TIERVIEW_TEXT_MAX];
	char before[TIERVIEW_TEXT_MAX], after[TIERVIEW_TEXT_MAX];
	struct json_object *moves = member_get(plan, "moves");
	size_t n = json_object_is_type(moves, json_type_array) ? json_object_array_length(moves) : 0;
	uint64_t total = n;
	struct table *t = NULL;
	int r;

	snprintf(share, sizeof(share), "%s -> %s (expected)",
		 tierview_percent(plan, "ssd_io_share_before", before),
		 tierview_percent(plan, "ssd_io_share_after", after));
	r = table_new(summary_columns, ARRAY_SIZE(summary_columns), &t);
	if (r < 0)
		return r;
	table_add_string(t, name);
	table_add_members(t, plan, 1);
	table_add_string(t, tiercmd_plan_moves(plan, "promoted", promote));
	table_add_string(t, tiercmd_plan_moves(plan, "demoted", demote));
	table_add_string(t, share);
	r = table_print_fields(t, out);
	table_free(t);
	t = NULL;
	if (r < 0)
		return r;
	r = tiercmd_print_passed_over(out, member_get(plan, "table"));
	if (r < 0)
		return r;

	member_uint(plan, "planned_extents", &total);
	member_uint(plan, "pieces_home", &pieces_home);
	member_uint(plan, "pieces_out", &pieces_out);
	member_uint(plan, "piece_bytes", &piece_bytes);
	total += pieces_home + pieces_out;
	if (!total)
		return fprintf(out, "\nNothing to move.\n") < 0 ? -EIO : 0;
	if (!n)
		return fprintf(out, "\n%" PRIu64 " moves; --limit N lists the first N.\n", total) < 0 ?
			       -EIO : 0;
	r = piece_bytes ? table_new(piece_move_columns, ARRAY_SIZE(piece_move_columns), &t) :
			  table_new(move_columns, ARRAY_SIZE(move_columns), &t);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct json_object *move = json_object_array_get_idx(moves, i), *heat;
		char text[32];

		table_add_members(t, move, piece_bytes ? 3 : 2);
		heat = member_get(move, "heat");
		if (json_object_is_type(heat, json_type_double) || json_object_is_type(heat, json_type_int)) {
			snprintf(text, sizeof(text), "%.1f", json_object_get_double(heat));
			table_add_string(t, text);
		} else {
			table_add_absent(t);
		}
		table_add_members(t, move, 1);
	}
	table_gap(out);
	r = table_print(t, out);
	table_free(t);
	if (!r && total > n)
		r = fprintf(out, "The first %zu of %" PRIu64 " moves; --limit shows more.\n", n,
			    total) < 0 ? -EIO : 0;
	return r;
}

static int tiercmd_now(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *limit_text = NULL;
	bool wait = false, dry_run = false;
	const struct cli_option options[] = {
		CLI_FLAG("wait", &wait),
		CLI_FLAG("dry-run", &dry_run),
		CLI_VALUE("limit", &limit_text),
	};
	struct json_object *params = NULL, *result = NULL, *run, *plan;
	unsigned long long limit = TIERCMD_MOVES_DEFAULT;
	struct progress *progress = NULL;
	const char *outcome;
	uint64_t id;
	char **args, *end;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, ARRAY_SIZE(options), 1, 1, &args,
		      &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (wait && dry_run)
		return cli_usage(cmd->name, "--wait and --dry-run exclude each other: a dry run"
				 " moves nothing");
	if (limit_text && !dry_run)
		return cli_usage(cmd->name, "--limit goes with --dry-run");
	/* -o is checked against the tables printed: too late once a run has started. */
	if (cli->table_option && !dry_run)
		return cli_usage(cmd->name, "%s goes with --dry-run", cli->table_option);
	if (limit_text) {
		errno = 0;
		limit = strtoull(limit_text, &end, 10);
		if (errno || *end || limit_text[0] < '0' || limit_text[0] > '9' ||
		    limit > TIERCMD_MOVES_MAX)
			return cli_usage(cmd->name, "--limit takes 0 to %d, not '%s'",
					 TIERCMD_MOVES_MAX, limit_text);
	}
	params = cli_params(args[0]);
	if (dry_run) {
		cli_param_bool(&params, "dry_run", true);
		cli_param_uint(&params, "limit", limit);
	}
	if (wait) {
		cli_param_bool(&params, "wait", true);
		if (progress_new(stderr, isatty(STDERR_FILENO), &progress) < 0) {
			r = cli_output_done(-ENOMEM);
			goto out;
		}
	}
	r = cli_call(cli, cmd->method, params, progress, &result);
	if (r)
		goto out;

	if (dry_run) {
		plan = member_get(result, "plan");
		if (!json_object_is_type(plan, json_type_object))
			r = cli_output_done(-EINVAL);
		else if (cli->json)
			r = cli_print_json(result);
		else
			r = cli_output_done(tiercmd_print_plan(stdout, args[0], plan));
		goto out;
	}
	run = member_get(result, "run");
	if (!json_object_is_type(run, json_type_object) || member_uint(run, "id", &id) < 0) {
		r = cli_output_done(-EINVAL);
		goto out;
	}
	if (cli->json)
		r = cli_print_json(result);
	else if (!wait)
		r = cli_output_done(printf("Started tiering run %" PRIu64 " on pool %s.\n", id,
					   args[0]) < 0 ? -EIO : 0);
	else
		r = cli_output_done(tierview_print_run(stdout, run));
	/* The run's outcome is the command's: a script waiting on it must see failure. */
	outcome = member_string(run, "result");
	if (!r && wait && outcome && (!strcmp(outcome, "failed") || !strcmp(outcome, "partial")))
		r = CLI_EXIT_FAILURE;
	else if (!r && wait && outcome && !strcmp(outcome, "aborted"))
		r = CLI_EXIT_ABORTED;
out:
	progress_free(progress);
	json_object_put(result);
	json_object_put(params);
	return r;
}

/* pause and resume: the schedule object back, and a line saying what it means. */
static int tiercmd_pause(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	struct json_object *params = NULL, *result = NULL;
	char next[TIERVIEW_TEXT_MAX];
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, NULL, 0, 1, 1, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	params = cli_params(args[0]);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (r)
		goto out;
	if (cli->json)
		r = cli_print_json(result);
	else if (!strcmp(cli_command_word(cmd), "pause"))
		r = cli_output_done(printf("Paused tiering of pool %s: no run starts until 'tierctl"
					   " tier resume %s'.\n", args[0], args[0]) < 0 ? -EIO : 0);
	else
		r = cli_output_done(printf("Resumed tiering of pool %s; next run: %s.\n", args[0],
					   tierview_next_run(member_get(result, "schedule"), next)) <
				    0 ? -EIO : 0);
out:
	json_object_put(result);
	json_object_put(params);
	return r;
}

static const struct cli_command tiercmd_commands[] = {
	{
		.name = "tier attach",
		.synopsis = "NAME --ssd DEV [--no-grow] [--wipe-signatures]",
		.summary = "add an SSD tier to a live pool",
		.description =
			"Add an SSD tier to pool NAME while its volume is in use.  By default\n"
			"the volume grows by the SSD's usable capacity; grow the filesystem on\n"
			"it afterwards to use the space.  With --no-grow the volume keeps its\n"
			"size and the SSD only holds hot extents, so it can be detached again at\n"
			"any time without shrinking anything.  tierd writes its superblock to\n"
			"the SSD: what it held is lost.\n"
			"\n"
			"The SSD tier holds the only copy of every extent tierd moves to it:\n"
			"put md RAID1 or RAID10 under it.  tierctl warns when the device has no\n"
			"redundancy.\n",
		.options =
			"      --ssd DEV           the SSD's block device (required)\n"
			"      --no-grow           keep the volume's size\n"
			"      --wipe-signatures   format the SSD even if it carries a filesystem,\n"
			"                          RAID, LVM or tierd signature\n",
		.examples =
			"  tierctl tier attach tank --ssd /dev/nvme0n1 && resize2fs /dev/mapper/tank\n"
			"  tierctl tier attach tank --ssd /dev/nvme0n1 --no-grow\n",
		.run = tiercmd_attach,
		.method = "tier.attach",
	},
	{
		.name = "tier detach",
		.synopsis = "NAME --ssd DEV [--shrink [--yes]]",
		.summary = "move every extent off an SSD, then release it",
		.description =
			"Move every extent of pool NAME off the SSD to the HDD tier while the\n"
			"volume stays in use, then release the SSD.  Pieces of extents out on\n"
			"the SSD (runs with tierd's piece heat place them) come home first.  On a\n"
			"terminal a progress bar shows the pieces, then the extents moved so\n"
			"far; otherwise a line is printed at most once a second.\n"
			"\n"
			"When the SSD's capacity is part of the volume's size (it was attached\n"
			"without --no-grow), the HDD tier cannot hold the whole volume: tierd\n"
			"refuses and names the size to shrink the filesystem to.  Shrink the\n"
			"filesystem to that size, then detach with --shrink.  What lies past\n"
			"the volume's new end is lost, so tierctl asks first (type 'yes'), and\n"
			"without a terminal refuses unless --yes is given.\n",
		.options =
			"      --ssd DEV           the SSD's block device (required)\n"
			"      --shrink            shrink the volume by the SSD's capacity; whatever\n"
			"                          lies beyond the new end of the volume is lost\n"
			"  -y, --yes               with --shrink: do not ask\n",
		.examples =
			"  tierctl tier detach tank --ssd /dev/nvme0n1\n"
			"  resize2fs /dev/mapper/tank 700G &&\n"
			"    tierctl tier detach tank --ssd /dev/nvme0n1 --shrink --yes\n",
		.run = tiercmd_detach,
		.method = "tier.detach",
	},
	{
		.name = "tier now",
		.synopsis = "NAME [--wait] [--dry-run [--limit N]]",
		.summary = "start a tiering run now, or show what one would move",
		.description =
			"Start a tiering run of pool NAME now instead of waiting for its\n"
			"schedule: tierd plans the moves by the pool's policy (see 'tierctl\n"
			"policy list') and copies the extents while the volume stays in use.\n"
			"Without --wait, print the run's ID and return at once; 'tierctl runs\n"
			"NAME' shows how it went.\n"
			"\n"
			"With --wait, show the extents copied so far (a progress bar on a\n"
			"terminal, otherwise a line at most once a second) and, when the run\n"
			"ends, a summary of it; the exit status is 1 if the run failed or some\n"
			"extents could not move (result 'failed' or 'partial').\n"
			"Interrupting tierctl does not stop the run.\n"
			"\n"
			"With --dry-run, move nothing: show how many extents and bytes the run\n"
			"would promote to the SSD and demote to the HDD, the share of the\n"
			"volume's recent I/O that the SSD served before and would serve after,\n"
			"and the first moves in the order the run makes them. Where tierd\n"
			"places pieces of extents (tierd's piece heat, a heat policy), the\n"
			"counts include pieces and a Piece column names each piece that moves:\n"
			"pieces come home first, then whole extents move, then pieces go out.\n"
			"\n"
			"--json prints {\"run\": {...}} or, with --dry-run, {\"plan\": {...}}.\n",
		.options =
			"      --wait              follow the run until it ends\n"
			"      --dry-run           plan a run but move nothing\n"
			"      --limit N           with --dry-run: list the first N moves (default\n"
			"                          20; 0 for none)\n",
		.examples =
			"  tierctl tier now tank --dry-run\n"
			"  tierctl tier now tank --wait\n"
			"  tierctl tier now tank --json | jq .run.id\n",
		.run = tiercmd_now,
		.method = "tier.now",
		.tables = true,
	},
	{
		.name = "tier pause",
		.synopsis = "NAME",
		.summary = "hold a pool's tiering: no runs start, a running one waits",
		.description =
			"Hold pool NAME's tiering until 'tierctl tier resume': its schedule\n"
			"starts no runs, 'tierctl tier now' is refused, and a run under way\n"
			"finishes the batch it is copying, then waits.  The pause survives\n"
			"restarts of tierd.  'tierctl schedule show' says whether a pool is\n"
			"paused.\n",
		.examples = "  tierctl tier pause tank\n",
		.run = tiercmd_pause,
		.method = "tier.pause",
	},
	{
		.name = "tier resume",
		.synopsis = "NAME",
		.summary = "let a pool's schedule start tiering runs again",
		.description =
			"Undo 'tierctl tier pause': a held run goes on, and pool NAME's\n"
			"schedule starts tiering runs again, the next one when it is due.\n"
			"Prints when that is.\n",
		.examples = "  tierctl tier resume tank\n",
		.run = tiercmd_pause,
		.method = "tier.resume",
	},
	{ 0 },
};

const struct cli_group tiercmd_group = {
	.name = "tier",
	.description =
		"Tiers: add an SSD tier to a pool, or take it away again, while the\n"
		"pool's volume is in use; start, pause and resume the tiering runs that\n"
		"move extents between the tiers.\n",
	.commands = tiercmd_commands,
};
