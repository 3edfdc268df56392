#include "tiercmd.h"
#include "poolview.h"
#include "progress.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TIERCMD_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The pool after a change to ssd: as JSON, or "Attached SSD to pool ...", then after. */
static int tiercmd_print_changed(struct cli *cli, const char *verb, const char *ssd,
				 const char *preposition, struct json_object *pool,
				 const char *after)
{
	char *before;
	int r;

	if (cli->json)
		return cli_print_json(pool);
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
	bool no_grow = false, force = false;
	const struct cli_option options[] = {
		CLI_VALUE("ssd", &ssd),
		CLI_FLAG("no-grow", &no_grow),
		CLI_FLAG("force", &force),
	};
	struct json_object *params = NULL, *result = NULL;
	int r;

	r = tiercmd_parse(cli, cmd, argc, argv, options, TIERCMD_ARRAY_SIZE(options), &ssd, &params);
	if (r != CLI_PROCEED)
		return r;
	if (no_grow)
		cli_param_bool(&params, "grow", false);
	if (force)
		cli_param_bool(&params, "force", true);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (!r)
		r = tiercmd_print_changed(cli, "Attached", ssd, "to", result,
					  no_grow ? "\nThe volume kept its size: the SSD only holds hot extents"
						    " and can be detached at any time." :
						    "\nThe volume grew: grow its filesystem to use the space"
						    " (resize2fs for ext4, xfs_growfs for XFS).");
	json_object_put(result);
	json_object_put(params);
	return r;
}

static int tiercmd_detach(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *ssd = NULL;
	bool shrink = false;
	const struct cli_option options[] = {
		CLI_VALUE("ssd", &ssd),
		CLI_FLAG("shrink", &shrink),
	};
	struct json_object *params = NULL, *result = NULL;
	struct progress *progress = NULL;
	char *moved = NULL;
	const char *unit;
	uint64_t done;
	int r;

	r = tiercmd_parse(cli, cmd, argc, argv, options, TIERCMD_ARRAY_SIZE(options), &ssd, &params);
	if (r != CLI_PROCEED)
		return r;
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

static const struct cli_command tiercmd_commands[] = {
	{
		.name = "tier attach",
		.synopsis = "NAME --ssd DEV [--no-grow] [--force]",
		.summary = "add an SSD tier to a live pool",
		.description =
			"Add an SSD tier to pool NAME while its volume is in use.  By default\n"
			"the volume grows by the SSD's usable capacity; grow the filesystem on\n"
			"it afterwards to use the space.  With --no-grow the volume keeps its\n"
			"size and the SSD only holds hot extents, so it can be detached again at\n"
			"any time without shrinking anything.  tierd writes its superblock to\n"
			"the SSD: what it held is lost.\n",
		.options =
			"      --ssd DEV           the SSD's block device (required)\n"
			"      --no-grow           keep the volume's size\n"
			"      --force             format the SSD even if it carries a filesystem,\n"
			"                          RAID or LVM signature\n",
		.examples =
			"  tierctl tier attach tank --ssd /dev/nvme0n1 && resize2fs /dev/mapper/tank\n"
			"  tierctl tier attach tank --ssd /dev/nvme0n1 --no-grow\n",
		.run = tiercmd_attach,
		.method = "tier.attach",
	},
	{
		.name = "tier detach",
		.synopsis = "NAME --ssd DEV [--shrink]",
		.summary = "move every extent off an SSD, then release it",
		.description =
			"Move every extent of pool NAME off the SSD to the HDD tier while the\n"
			"volume stays in use, then release the SSD.  On a terminal a progress\n"
			"bar shows the extents moved so far; otherwise a line is printed at most\n"
			"once a second.\n"
			"\n"
			"When the SSD's capacity is part of the volume's size (it was attached\n"
			"without --no-grow), the HDD tier cannot hold the whole volume: tierd\n"
			"refuses and names the size to shrink the filesystem to.  Shrink the\n"
			"filesystem to that size, then detach with --shrink.\n",
		.options =
			"      --ssd DEV           the SSD's block device (required)\n"
			"      --shrink            shrink the volume by the SSD's capacity; whatever\n"
			"                          lies beyond the new end of the volume is lost\n",
		.examples =
			"  tierctl tier detach tank --ssd /dev/nvme0n1\n"
			"  resize2fs /dev/mapper/tank 700G &&\n"
			"    tierctl tier detach tank --ssd /dev/nvme0n1 --shrink\n",
		.run = tiercmd_detach,
		.method = "tier.detach",
	},
	{ 0 },
};

const struct cli_group tiercmd_group = {
	.name = "tier",
	.description =
		"Tiers: add an SSD tier to a pool, or take it away again, while the\n"
		"pool's volume is in use.\n",
	.commands = tiercmd_commands,
};
