/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "member.h"
#include "poolcmd.h"
#include "poolview.h"
#include "progress.h"
#include "redundancy.h"
#include "size.h"
#include "array.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* The range docs/protocol.md allows; checked here too so a typo fails before any I/O. */
#define POOLCMD_EXTENT_MIN ((uint64_t)1 << 20)
#define POOLCMD_EXTENT_MAX ((uint64_t)1 << 30)

/* The pool object that a change returns: as JSON, or cmd's summary line. */
static int poolcmd_print_changed(struct cli *cli, const struct cli_command *cmd,
				 struct json_object *result)
{
	struct json_object *pool = member_get(result, "pool");

	if (cli->json)
		return cli_print_json(result);
	if (!json_object_is_type(pool, json_type_object))
		return cli_output_done(-EINVAL);
	return cli_output_done(poolview_print_change(stdout, cmd->done, pool, NULL));
}

static int poolcmd_create(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *hdd = NULL, *ssd = NULL, *extent_text = NULL;
	bool wipe = false;
	const struct cli_option options[] = {
		CLI_VALUE("hdd", &hdd),
		CLI_VALUE("ssd", &ssd),
		CLI_VALUE("extent-size", &extent_text),
		CLI_FLAG("wipe-signatures", &wipe),
	};
	struct json_object *params = NULL, *result = NULL;
	uint64_t extent = 0;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, ARRAY_SIZE(options), 1, 1, &args,
		      &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (!hdd)
		return cli_usage(cmd->name, "--hdd DEV is required");
	if (extent_text && (size_parse(extent_text, &extent) < 0 || extent < POOLCMD_EXTENT_MIN ||
			    extent > POOLCMD_EXTENT_MAX || (extent & (extent - 1))))
		return cli_usage(cmd->name,
				 "invalid extent size '%s': a power of two from 1M to 1G is needed",
				 extent_text);

	params = cli_params(args[0]);
	cli_param_path(&params, "hdd", hdd);
	if (ssd)
		cli_param_path(&params, "ssd", ssd);
	if (extent_text)
		cli_param_uint(&params, "extent_size_bytes", extent);
	if (wipe)
		cli_param_bool(&params, "wipe_signatures", true);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (!r)
		r = poolcmd_print_changed(cli, cmd, result);
	if (!r && ssd)
		redundancy_warn_ssd(ssd);
	json_object_put(result);
	json_object_put(params);
	return r;
}

static int poolcmd_list(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	struct json_object *params = NULL, *result = NULL, *pools;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, NULL, 0, 0, 0, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	params = cli_params(NULL);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (r)
		goto out;
	pools = member_get(result, "pools");
	if (!json_object_is_type(pools, json_type_array))
		r = cli_output_done(-EINVAL);
	else if (cli->json)
		r = cli_print_json(result);
	else if (!json_object_array_length(pools))
		r = cli_output_done(printf("No pools.\n") < 0 ? -EIO : 0);
	else
		r = cli_output_done(poolview_print_list(stdout, pools));
out:
	json_object_put(result);
	json_object_put(params);
	return r;
}

/* The commands that take only a pool's name: show, activate, deactivate, destroy. */
static int poolcmd_named(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	bool force = false, degraded = false, yes = false;
	const struct cli_option destroy_options[] = { CLI_FLAG("force", &force),
						      CLI_FLAG("yes", &yes) };
	const struct cli_option activate_options[] = { CLI_FLAG("degraded", &degraded) };
	/* Each option only where it means something; the others must not accept it silently. */
	const char *word = cli_command_word(cmd);
	bool destroy = !strcmp(word, "destroy");
	const struct cli_option *options = destroy		      ? destroy_options :
					   !strcmp(word, "activate") ? activate_options :
								       NULL;
	size_t n_options = destroy ? ARRAY_SIZE(destroy_options) : options ? 1 : 0;
	struct json_object *params, *result = NULL;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, n_options, 1, 1, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (destroy)
		r = cli_confirm(yes, "Destroying pool %s loses the data on its volume for good",
				args[0]);
	if (r != CLI_PROCEED)
		return r;
	params = cli_params(args[0]);
	if (force)
		cli_param_bool(&params, "force", true);
	if (degraded)
		cli_param_bool(&params, "degraded", true);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (r)
		goto out;
	if (cli->json)
		r = cli_print_json(result);
	else if (!strcmp(cli_command_word(cmd), "destroy"))
		r = cli_output_done(printf("Destroyed pool %s.\n", args[0]) < 0 ? -EIO : 0);
	else if (!cmd->done)
		r = json_object_is_type(member_get(result, "pool"), json_type_object) ?
			    cli_output_done(poolview_print_show(stdout, member_get(result, "pool"))) :
			    cli_output_done(-EINVAL);
	else
		r = poolcmd_print_changed(cli, cmd, result);
out:
	json_object_put(result);
	json_object_put(params);
	return r;
}

static int poolcmd_import(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	bool degraded = false;
	const struct cli_option options[] = { CLI_FLAG("degraded", &degraded) };
	struct json_object *params, *result = NULL;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, 1, 1, INT32_MAX, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	params = cli_params(NULL);
	cli_param_paths(&params, "devices", args, n_args);
	if (degraded)
		cli_param_bool(&params, "degraded", true);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (!r)
		r = poolcmd_print_changed(cli, cmd, result);
	json_object_put(result);
	json_object_put(params);
	return r;
}

static int poolcmd_drop_missing(struct cli *cli, const struct cli_command *cmd, int argc,
				char **argv)
{
	bool yes = false;
	const struct cli_option options[] = { CLI_FLAG("yes", &yes) };
	struct json_object *params = NULL, *result = NULL;
	struct progress *progress = NULL;
	char *after = NULL;
	const char *unit;
	uint64_t done = 0;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, ARRAY_SIZE(options), 1, 1, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	r = cli_confirm(yes, "Dropping the missing device of pool %s makes what it held"
			" unrecoverable, even if the device comes back", args[0]);
	if (r != CLI_PROCEED)
		return r;
	if (progress_new(stderr, isatty(STDERR_FILENO), &progress) < 0)
		return cli_output_done(-ENOMEM);
	params = cli_params(args[0]);
	r = cli_call(cli, cmd->method, params, progress, &result);
	if (r)
		goto out;
	if (cli->json) {
		r = cli_print_json(result);
		goto out;
	}
	/* tierd reports the zeroing only as progress: its last update is how many. */
	progress_last(progress, &done, &unit);
	if (asprintf(&after, "; %" PRIu64 " lost extents now read as zeros", done) < 0)
		after = NULL;
	if (!json_object_is_type(member_get(result, "pool"), json_type_object))
		r = cli_output_done(-EINVAL);
	else
		r = after ? cli_output_done(poolview_print_change(stdout, cmd->done,
								  member_get(result, "pool"), after)) :
			    cli_output_done(-ENOMEM);
out:
	free(after);
	progress_free(progress);
	json_object_put(result);
	json_object_put(params);
	return r;
}

static const struct cli_command poolcmd_commands[] = {
	{
		.name = "pool create",
		.synopsis = "NAME --hdd DEV [--ssd DEV] [--extent-size SIZE] [--wipe-signatures]",
		.summary = "make a pool of an HDD and an optional SSD, and its volume",
		.description =
			"Create a pool over an HDD device and, optionally, an SSD device, and\n"
			"its volume /dev/mapper/NAME, whose size is the usable capacity of both\n"
			"tiers together.  tierd writes its superblock and metadata to every\n"
			"device: what the devices held is lost.  Devices that carry a filesystem,\n"
			"RAID, LVM or another pool's signature are refused unless\n"
			"--wipe-signatures is given.\n"
			"\n"
			"This is tiering, not caching: the SSD tier holds the only copy of\n"
			"every extent tierd moves to it.  Put md RAID1 or RAID10 under the SSD\n"
			"tier, as RAID6 protects the HDD tier; tierctl warns when the SSD device\n"
			"has no redundancy.\n"
			"\n"
			"NAME is 1 to 64 of A-Z a-z 0-9 _ . + -, not starting with '.' or '-'.\n",
		.options =
			"      --hdd DEV           the HDD tier's block device, e.g. an md RAID6\n"
			"                          array (required)\n"
			"      --ssd DEV           the SSD tier's block device; without it the pool\n"
			"                          has an HDD tier only until 'tierctl tier attach'\n"
			"      --extent-size SIZE  the unit of placement and migration: a power of\n"
			"                          two from 1M to 1G, with a K, M, G or T suffix\n"
			"                          (default 4M); fixed for the pool's life\n"
			"      --wipe-signatures   format devices even if they carry a filesystem,\n"
			"                          RAID, LVM or tierd signature\n",
		.examples =
			"  tierctl pool create tank --hdd /dev/md0 --ssd /dev/nvme0n1\n"
			"  tierctl pool create archive --hdd /dev/sdb --extent-size 16M\n",
		.run = poolcmd_create,
		.method = "pool.create",
		.done = "Created pool",
	},
	{
		.name = "pool list",
		.synopsis = "",
		.summary = "list the pools with their size and tiers",
		.description =
			"List every pool tierd knows, active or not: its state, the volume's\n"
			"size, each tier's usable size ('-' when the pool has no such tier) and\n"
			"the extent size.  Sizes use binary units (1 GiB = 1024 MiB); --json\n"
			"gives {\"pools\": [...]} as tierd describes them, sizes in bytes.\n",
		.examples =
			"  tierctl pool list\n"
			"  tierctl pool list --json | jq -r '.pools[].name'\n",
		.run = poolcmd_list,
		.method = "pool.list",
		.tables = true,
	},
	{
		.name = "pool show",
		.synopsis = "NAME",
		.summary = "show a pool's state, size and devices",
		.description =
			"Show one pool: its UUID, state and volume, size in extents, whether an\n"
			"attached SSD grew the volume, and the metadata generation (one more on\n"
			"every committed change).  Then a line per device: its tier, size, and\n"
			"extents in total, in use, free, and reserved for migration, which do\n"
			"not count towards the volume's size.  Then tiering: the policy, the\n"
			"schedule and its next run, and the pins if there are any.  While a move\n"
			"or tiering run is under way, --json shows it under \"job\": progress,\n"
			"the extents being copied, from and to which tier, and why it waits.\n",
		.examples =
			"  tierctl pool show tank\n"
			"  tierctl pool show tank --json\n",
		.run = poolcmd_named,
		.method = "pool.show",
		.tables = true,
	},
	{
		.name = "pool activate",
		.synopsis = "NAME [--degraded]",
		.summary = "create the volume of an inactive pool",
		.description =
			"Create the pool's volume /dev/mapper/NAME again from tierd's state.\n"
			"tierd activates every pool when it starts, so this is for pools\n"
			"deactivated by hand, and for pools that could not be activated:\n"
			"'tierctl pool show' says why.\n"
			"\n"
			"A pool one of whose devices is missing (a dead SSD, say) stays\n"
			"inactive unless --degraded is given.  Then the extents that lived on\n"
			"the missing device map to the kernel's error target, so every read or\n"
			"write of them fails with EIO and never returns other data, and the\n"
			"rest of the volume works as usual.  'tierctl pool show' lists the lost\n"
			"ranges.  A degraded pool takes no moves, attach or detach; with the\n"
			"device back, deactivate and activate it again; with it gone for good,\n"
			"'tierctl pool drop-missing' gives its extents zeroed HDD extents.\n",
		.options = "      --degraded          activate even with a device missing\n",
		.examples =
			"  tierctl pool activate tank\n"
			"  tierctl pool activate tank --degraded\n",
		.run = poolcmd_named,
		.method = "pool.activate",
		.done = "Activated pool",
	},
	{
		.name = "pool deactivate",
		.synopsis = "NAME",
		.summary = "remove a pool's volume, keeping the pool",
		.description =
			"Remove the pool's volume /dev/mapper/NAME.  The pool and its data stay,\n"
			"and 'tierctl pool activate' brings the volume back; until then the pool\n"
			"stays inactive, also across restarts of tierd.  Refused while the volume\n"
			"is open: unmount it first.\n",
		.examples = "  umount /srv && tierctl pool deactivate tank\n",
		.run = poolcmd_named,
		.method = "pool.deactivate",
		.done = "Deactivated pool",
	},
	{
		.name = "pool destroy",
		.synopsis = "NAME [--yes] [--force]",
		.summary = "remove a pool and wipe tierd's metadata from its devices",
		.description =
			"Remove the pool's volume, wipe tierd's superblocks from its devices and\n"
			"forget the pool.  The data on the volume is lost for good, so tierctl\n"
			"asks first: type 'yes' to go on.  Without a terminal to ask on it\n"
			"refuses unless --yes is given.  tierd refuses while the volume is\n"
			"open, unless --force.\n",
		.options = "  -y, --yes               destroy without asking\n"
			   "      --force             destroy the pool even while its volume is open\n",
		.examples = "  tierctl pool destroy tank\n"
			    "  tierctl pool destroy tank --yes\n",
		.run = poolcmd_named,
		.method = "pool.destroy",
	},
	{
		.name = "pool import",
		.synopsis = "DEV... [--degraded]",
		.summary = "rebuild a pool from its devices and activate it",
		.description =
			"Rebuild a pool from the newest valid metadata on its devices and\n"
			"activate it: after moving the devices to another machine, or losing\n"
			"tierd's state directory.  Name every device of the pool; with\n"
			"--degraded, the devices named may lack some of the pool's, whose\n"
			"extents then fail every read and write (see 'pool activate').\n",
		.options = "      --degraded          import even with a device missing\n",
		.examples =
			"  tierctl pool import /dev/md0 /dev/nvme0n1\n"
			"  tierctl pool import /dev/md0 --degraded\n",
		.run = poolcmd_import,
		.method = "pool.import",
		.done = "Imported pool",
	},
	{
		.name = "pool drop-missing",
		.synopsis = "NAME [--yes]",
		.summary = "drop a dead device from a degraded pool for good",
		.description =
			"Leave a pool's missing device out for good, when it is not coming\n"
			"back: every extent that lived on it gets a free extent of the HDD\n"
			"tier, which tierd zeroes first, then one commit writes the pool\n"
			"without the device to the remaining ones and the volume's table loses\n"
			"its error targets.  The pool is then whole and no longer degraded; the\n"
			"lost ranges read as zeros and take writes.  A filesystem on the volume\n"
			"still lost what was there: run its check (e2fsck -f, xfs_repair).\n"
			"\n"
			"An inactive pool whose device is missing is activated degraded first.\n"
			"Refused, with nothing changed, when the HDD is the missing device, or\n"
			"when the HDD lacks free extents for all the lost ones (a volume grown\n"
			"by the SSD): the error says how many are needed and free.  What the\n"
			"device held cannot be had back afterwards, even if it returns: tierctl\n"
			"asks first (type 'yes'), and without a terminal refuses unless --yes.\n",
		.options = "  -y, --yes               drop it without asking: the lost extents become\n"
			   "                          zeros for good\n",
		.examples =
			"  tierctl pool activate tank --degraded\n"
			"  tierctl pool drop-missing tank --yes\n",
		.run = poolcmd_drop_missing,
		.method = "pool.drop",
		.done = "Dropped the missing device from pool",
	},
	{ 0 },
};

const struct cli_group poolcmd_group = {
	.name = "pool",
	.description =
		"Pools: each joins an HDD tier and an optional SSD tier into one volume,\n"
		"/dev/mapper/NAME, whose hot extents tierd keeps on the SSD.\n",
	.commands = poolcmd_commands,
};
