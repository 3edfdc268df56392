/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "member.h"
#include "policycmd.h"
#include "table.h"
#include "tierview.h"
#include "timefmt.h"
#include "array.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A number member, scaled, with decimals and a suffix: "10%", "1.5x"; "-" if not a number. */
static const char *policycmd_number(struct json_object *obj, const char *key, double scale,
				    int decimals, const char *suffix, char buf[TIERVIEW_TEXT_MAX])
{
	struct json_object *v = member_get(obj, key);

	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return "-";
	snprintf(buf, TIERVIEW_TEXT_MAX, "%.*f%s", decimals, json_object_get_double(v) * scale,
		 suffix);
	return buf;
}

static int policycmd_print_list(FILE *out, struct json_object *policies)
{
	static const struct table_column columns[] = {
		{ "Name", "name", TABLE_STRING },
		{ "Promote", "promote", TABLE_STRING },
		{ "Demote", "demote", TABLE_STRING },
		{ "Headroom", "ssd_headroom_share", TABLE_STRING },
		{ "Hysteresis", "hysteresis", TABLE_STRING },
		{ "Min residency", "min_residency_seconds", TABLE_STRING },
		{ "Description", "description", TABLE_STRING },
	};
	size_t n = json_object_array_length(policies);
	struct table *t;
	int r;

	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(policies, i);
		char headroom[TIERVIEW_TEXT_MAX], hysteresis[TIERVIEW_TEXT_MAX];
		char residency[TIMEFMT_MAX];
		uint64_t seconds;

		table_add_members(t, p, 3);
		table_add_string(t, policycmd_number(p, "ssd_headroom_share", 100.0, 0, "%",
						     headroom));
		table_add_string(t, policycmd_number(p, "hysteresis", 1.0, 1, "x", hysteresis));
		table_add_string(t, member_uint(p, "min_residency_seconds", &seconds) < 0 ? NULL :
				    timefmt_duration(seconds, residency, sizeof(residency)));
		table_add_members(t, p, 1);
	}
	r = table_print(t, out);
	table_free(t);
	return r;
}

static int policycmd_list(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	struct json_object *params = NULL, *result = NULL, *policies;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, NULL, 0, 0, 0, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	params = cli_params(NULL);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (r)
		goto out;
	policies = member_get(result, "policies");
	if (!json_object_is_type(policies, json_type_array))
		r = cli_output_done(-EINVAL);
	else if (cli->json)
		r = cli_print_json(result);
	else if (!json_object_array_length(policies))
		r = cli_output_done(printf("No policies.\n") < 0 ? -EIO : 0);
	else
		r = cli_output_done(policycmd_print_list(stdout, policies));
out:
	json_object_put(result);
	json_object_put(params);
	return r;
}

static int policycmd_set(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	struct json_object *params = NULL, *result = NULL;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, NULL, 0, 2, 2, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	params = cli_params(args[0]);
	cli_param_string(&params, "policy", args[1]);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (r)
		goto out;
	if (cli->json) {
		r = cli_print_json(result);
		goto out;
	}
	r = printf("Pool %s now tiers by policy %s.\n\n", args[0],
		   member_string(member_get(result, "schedule"), "policy") ?
			   member_string(member_get(result, "schedule"), "policy") : args[1]);
	r = cli_output_done(r < 0 ? -EIO : tierview_print_schedule(stdout, args[0], result));
out:
	json_object_put(result);
	json_object_put(params);
	return r;
}

static const struct cli_command policycmd_commands[] = {
	{
		.name = "policy list",
		.synopsis = "",
		.summary = "list the tiering policies tierd can apply",
		.description =
			"List the tiering policies tierd offers.  Each is a file in\n"
			TIERD_POLICY_DIR "; one of the same name in\n"
			TIERD_SYSCONF_POLICY_DIR " takes its place.  A policy decides what a\n"
			"tiering run moves:\n"
			"\n"
			"  PROMOTE        which extents go up to the SSD: 'heat' (the hottest that\n"
			"                 fit), 'all' (as many as fit) or 'none'\n"
			"  DEMOTE         which go down to the HDD: 'needed' (only to make room) or\n"
			"                 'all'\n"
			"  HEADROOM       the share of the SSD tier kept free for new hot data\n"
			"  HYSTERESIS     how many times hotter than the coldest extent on the SSD\n"
			"                 an extent must be to take its place, so that extents of\n"
			"                 about equal heat do not swap back and forth\n"
			"  MIN-RESIDENCY  how long an extent stays on a tier before it may move\n"
			"                 again\n"
			"\n"
			"--json adds each policy's file (path) and minimum heat for promotion\n"
			"(min_heat).\n",
		.examples =
			"  tierctl policy list\n"
			"  tierctl policy list --json | jq -r '.policies[].name'\n",
		.run = policycmd_list,
		.method = "policy.list",
		.tables = true,
	},
	{
		.name = "policy set",
		.synopsis = "NAME POLICY",
		.summary = "choose the policy of a pool's tiering runs",
		.description =
			"Make pool NAME's tiering runs, scheduled or started by hand, follow\n"
			"POLICY, one of those 'tierctl policy list' shows, from the next run\n"
			"on.  Prints the pool's schedule, which names the policy.\n",
		.examples =
			"  tierctl policy set tank auto\n",
		.run = policycmd_set,
		.method = "policy.set",
	},
	{ 0 },
};

const struct cli_group policycmd_group = {
	.name = "policy",
	.description =
		"Policies: the rules by which tierd's tiering runs choose the extents to\n"
		"promote to the SSD tier and to demote to the HDD tier.\n",
	.commands = policycmd_commands,
};
