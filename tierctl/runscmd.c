/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "member.h"
#include "runscmd.h"
#include "tierview.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#define RUNSCMD_LIMIT_DEFAULT 20
#define RUNSCMD_LIMIT_MAX 10000 /* tierd's bound on one list (docs/protocol.md) */

int runscmd_run(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *limit_text = NULL;
	const struct cli_option options[] = { CLI_VALUE("limit", &limit_text) };
	struct json_object *params = NULL, *result = NULL, *runs;
	unsigned long long limit = RUNSCMD_LIMIT_DEFAULT;
	char **args, *end;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, 1, 1, 1, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (limit_text) {
		errno = 0;
		limit = strtoull(limit_text, &end, 10);
		if (errno || *end || limit_text[0] < '0' || limit_text[0] > '9' || !limit ||
		    limit > RUNSCMD_LIMIT_MAX)
			return cli_usage(cmd->name, "--limit takes 1 to %d, not '%s'",
					 RUNSCMD_LIMIT_MAX, limit_text);
	}
	params = cli_params(args[0]);
	cli_param_uint(&params, "limit", limit);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (r)
		goto out;
	runs = member_get(result, "runs");
	if (!json_object_is_type(runs, json_type_array))
		r = cli_output_done(-EINVAL);
	else if (cli->json)
		r = cli_print_json(result);
	else if (!json_object_array_length(runs))
		r = cli_output_done(printf("No tiering runs yet.\n") < 0 ? -EIO : 0);
	else
		r = cli_output_done(tierview_print_runs(stdout, runs));
out:
	json_object_put(result);
	json_object_put(params);
	return r;
}
