/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "extentcmd.h"
#include "member.h"
#include "piecemap.h"
#include "poolview.h"
#include "progress.h"
#include "array.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static int extentcmd_number(const char *who, const char *what, const char *text, uint64_t *out)
{
	char *end;

	errno = 0;
	if (text[0] < '0' || text[0] > '9')
		return cli_usage(who, "%s '%s' is not an extent number", what, text);
	*out = strtoull(text, &end, 10);
	if (errno || *end || *out > UINT32_MAX)
		return cli_usage(who, "%s '%s' is not an extent number", what, text);
	return CLI_PROCEED;
}

/* --pieces: "all" (piece_count 0), "A" or "A-B". */
static int extentcmd_pieces(const char *who, const char *text, uint64_t *first, uint64_t *count)
{
	const char *dash = strchr(text, '-');
	char *end;
	uint64_t last;

	if (!strcmp(text, "all")) {
		*first = 0;
		*count = 0;
		return CLI_PROCEED;
	}
	errno = 0;
	if (text[0] < '0' || text[0] > '9')
		goto bad;
	*first = strtoull(text, &end, 10);
	if (errno || (dash ? end != dash : *end != '\0') || *first > UINT32_MAX)
		goto bad;
	last = *first;
	if (dash) {
		if (dash[1] < '0' || dash[1] > '9')
			goto bad;
		last = strtoull(dash + 1, &end, 10);
		if (errno || *end || last > UINT32_MAX || last < *first)
			goto bad;
	}
	*count = last - *first + 1;
	if (*count > PIECEMAP_MAX_PIECES_PER_EXTENT)
		return cli_usage(who, "--pieces: an extent has at most %u pieces, not %" PRIu64,
				 PIECEMAP_MAX_PIECES_PER_EXTENT, *count);
	return CLI_PROCEED;
bad:
	return cli_usage(who, "--pieces takes all, a piece number or a range A-B, not '%s'", text);
}

static int extentcmd_move(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *tier = NULL, *io = NULL, *pieces = NULL;
	const struct cli_option options[] = { CLI_VALUE("tier", &tier), CLI_VALUE("io-awareness", &io),
					      CLI_VALUE("pieces", &pieces) };
	struct json_object *params = NULL, *result = NULL;
	struct progress *progress = NULL;
	uint64_t first, count = 1, piece_first = 0, piece_count = 0;
	char **args, *after = NULL;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, ARRAY_SIZE(options), 2, 3, &args,
		      &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (!tier || (strcmp(tier, "ssd") && strcmp(tier, "hdd")))
		return cli_usage(cmd->name, "--tier ssd or --tier hdd is required");
	r = extentcmd_number(cmd->name, "FIRST", args[1], &first);
	if (r == CLI_PROCEED && n_args == 3)
		r = extentcmd_number(cmd->name, "COUNT", args[2], &count);
	if (r != CLI_PROCEED)
		return r;
	if (count == 0)
		return cli_usage(cmd->name, "COUNT must be at least 1");
	if (io && strcmp(io, "off") && strcmp(io, "throttled") && strcmp(io, "idle"))
		return cli_usage(cmd->name, "--io-awareness takes off, throttled or idle");
	if (pieces) {
		r = extentcmd_pieces(cmd->name, pieces, &piece_first, &piece_count);
		if (r != CLI_PROCEED)
			return r;
	}
	if (progress_new(stderr, isatty(STDERR_FILENO), &progress) < 0)
		return cli_output_done(-ENOMEM);
	params = cli_params(args[0]);
	cli_param_uint(&params, "first", first);
	cli_param_uint(&params, "count", count);
	cli_param_string(&params, "tier", tier);
	if (io)
		cli_param_string(&params, "io_awareness", io);
	if (pieces) {
		cli_param_bool(&params, "pieces", true);
		cli_param_uint(&params, "piece_first", piece_first);
		cli_param_uint(&params, "piece_count", piece_count);
	}
	r = cli_call(cli, cmd->method, params, progress, &result);
	if (r)
		goto out;
	if (cli->json) {
		r = cli_print_json(result);
		goto out;
	}
	if (pieces ? asprintf(&after, "; pieces %s of extents %" PRIu64 "-%" PRIu64 " are %s",
			      pieces, first, first + count - 1,
			      strcmp(tier, "ssd") ? "home" : "on the SSD tier") < 0 :
		     asprintf(&after, "; extents %" PRIu64 "-%" PRIu64 " are on the %s tier", first,
			      first + count - 1, strcmp(tier, "ssd") ? "HDD" : "SSD") < 0) {
		r = cli_output_done(-ENOMEM);
		goto out;
	}
	r = json_object_is_type(member_get(result, "pool"), json_type_object) ?
		    cli_output_done(poolview_print_change(stdout, pieces ? "Moved pieces of pool" :
								  "Moved extents of pool",
							  member_get(result, "pool"), after)) :
		    cli_output_done(-EINVAL);
out:
	free(after);
	progress_free(progress);
	json_object_put(result);
	json_object_put(params);
	return r;
}

static const struct cli_command extentcmd_commands[] = {
	{
		.name = "extent move",
		.synopsis = "NAME FIRST [COUNT] --tier ssd|hdd [--pieces all|A[-B]]",
		.summary = "move extents to a tier now, while the volume is in use",
		.description =
			"Move COUNT extents (default 1) of pool NAME, starting at extent FIRST,\n"
			"to the SSD or the HDD tier.  Extents are numbered from 0 at the start\n"
			"of the volume; 'tierctl pool show' gives the extent size.  The kernel\n"
			"copies each extent while it stays readable and writable; its new\n"
			"place is committed to the devices and tierd's state before the volume\n"
			"switches to it.  The tier's swap reserve is left free.  Extents\n"
			"already on the tier stay where they are.  By default the batches\n"
			"follow each other at full speed; --io-awareness throttled or idle\n"
			"makes them yield to the volume's own I/O as tiering runs do (see\n"
			"'tierctl schedule set --help').  On an inactive pool tierd copies\n"
			"the extents itself.\n"
			"\n"
			"With --pieces, parts of the extents move instead of whole extents:\n"
			"pieces A to B of each, numbered from 0 (16 KiB each unless tierd's\n"
			"piece-size says otherwise: 'pool show --json' gives the pool's in\n"
			"pieces.piece_bytes).  --tier ssd\n"
			"copies them into piece containers on the SSD tier, extents kept\n"
			"for pieces and made of free SSD extents as needed; the volume's\n"
			"table gets up to two more targets a piece.  --tier hdd brings them\n"
			"back to their extent's home.  An extent with pieces out moves\n"
			"whole only after they are home ('--pieces all --tier hdd').  Pieces\n"
			"move only while the pool is active.\n",
		.options = "      --tier ssd|hdd      the tier to move the extents to (required)\n"
			   "      --io-awareness off|throttled|idle\n"
			   "                          yield to foreground I/O (default off)\n"
			   "      --pieces all|A[-B]  move these pieces of each extent, not the\n"
			   "                          extents: to the SSD, or home with --tier hdd\n",
		.examples =
			"  tierctl extent move tank 0 16 --tier ssd\n"
			"  tierctl extent move tank 100 --tier hdd\n"
			"  tierctl extent move tank 40 --tier ssd --pieces 0-7\n"
			"  tierctl extent move tank 40 --tier hdd --pieces all\n",
		.run = extentcmd_move,
		.method = "extent.move",
	},
	{ 0 },
};

const struct cli_group extentcmd_group = {
	.name = "extent",
	.description = "Extents: place parts of a pool's volume on a tier by hand.\n",
	.commands = extentcmd_commands,
};
