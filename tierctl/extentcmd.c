/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "extentcmd.h"
#include "member.h"
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

static int extentcmd_move(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *tier = NULL, *io = NULL;
	const struct cli_option options[] = { CLI_VALUE("tier", &tier), CLI_VALUE("io-awareness", &io) };
	struct json_object *params = NULL, *result = NULL;
	struct progress *progress = NULL;
	uint64_t first, count = 1;
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
	if (progress_new(stderr, isatty(STDERR_FILENO), &progress) < 0)
		return cli_output_done(-ENOMEM);
	params = cli_params(args[0]);
	cli_param_uint(&params, "first", first);
	cli_param_uint(&params, "count", count);
	cli_param_string(&params, "tier", tier);
	if (io)
		cli_param_string(&params, "io_awareness", io);
	r = cli_call(cli, cmd->method, params, progress, &result);
	if (r)
		goto out;
	if (cli->json) {
		r = cli_print_json(result);
		goto out;
	}
	if (asprintf(&after, "; extents %" PRIu64 "-%" PRIu64 " are on the %s tier", first,
		     first + count - 1, strcmp(tier, "ssd") ? "HDD" : "SSD") < 0) {
		r = cli_output_done(-ENOMEM);
		goto out;
	}
	r = json_object_is_type(member_get(result, "pool"), json_type_object) ?
		    cli_output_done(poolview_print_change(stdout, "Moved extents of pool",
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
		.synopsis = "NAME FIRST [COUNT] --tier ssd|hdd",
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
			"the extents itself.\n",
		.options = "      --tier ssd|hdd      the tier to move the extents to (required)\n"
			   "      --io-awareness off|throttled|idle\n"
			   "                          yield to foreground I/O (default off)\n",
		.examples =
			"  tierctl extent move tank 0 16 --tier ssd\n"
			"  tierctl extent move tank 100 --tier hdd\n",
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
