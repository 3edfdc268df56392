/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "heatcmd.h"
#include "member.h"
#include "table.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEATCMD_TOP_MAX 10000 /* tierd's bound on one list (docs/protocol.md) */

/* "2 of 256 pieces": the fewest pieces that took 90% of the extent's I/O; "-" unknown. */
static const char *pieces_text(struct json_object *pieces, char *buf, size_t len)
{
	struct json_object *held = member_get(pieces, "holding_90_percent");
	struct json_object *count = member_get(pieces, "count");

	if (!held || !count)
		return "-";
	snprintf(buf, len, "%" PRId64 " of %" PRId64, json_object_get_int64(held),
		 json_object_get_int64(count));
	return buf;
}

int heatcmd_run(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	static const struct table_column columns[] = {
		{ "Extent", "extent", TABLE_UINT },
		{ "Offset", "offset_bytes", TABLE_BYTES },
		{ "Tier", "tier", TABLE_STRING },
		{ "Heat", "heat", TABLE_STRING },
		{ "Reads", "reads", TABLE_UINT },
		{ "Writes", "writes", TABLE_UINT },
		{ "90% in", "pieces", TABLE_STRING },
	};
	const char *top_text = NULL;
	const struct cli_option options[] = { CLI_VALUE("top", &top_text) };
	struct json_object *params = NULL, *result = NULL, *extents;
	struct table *t = NULL;
	unsigned long long top = 20;
	char **args, *end;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, 1, 1, 1, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (top_text) {
		errno = 0;
		top = strtoull(top_text, &end, 10);
		if (errno || *end || top_text[0] < '0' || top_text[0] > '9' || top == 0 ||
		    top > HEATCMD_TOP_MAX)
			return cli_usage(cmd->name, "--top takes 1 to %d, not '%s'", HEATCMD_TOP_MAX,
					 top_text);
	}
	params = cli_params(args[0]);
	cli_param_uint(&params, "top", top);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (r)
		goto out;
	extents = member_get(member_get(result, "heat"), "extents");
	if (!extents || !json_object_is_type(extents, json_type_array)) {
		r = cli_fail("tierd's reply has no extents");
		goto out;
	}
	if (cli->json) {
		r = cli_print_json(result);
		goto out;
	}
	r = table_new(columns, sizeof(columns) / sizeof(columns[0]), &t);
	for (size_t i = 0; r == 0 && i < json_object_array_length(extents); i++) {
		struct json_object *e = json_object_array_get_idx(extents, i), *heat;
		char text[32];

		table_add_members(t, e, 3);
		heat = member_get(e, "heat");
		snprintf(text, sizeof(text), "%.1f", heat ? json_object_get_double(heat) : 0.0);
		table_add_string(t, text);
		table_add_members(t, e, 2);
		table_add_string(t, pieces_text(member_get(e, "pieces"), text, sizeof(text)));
	}
	if (r == 0)
		r = json_object_array_length(extents) ? table_print(t, stdout) :
			(printf("No heat yet.\n") < 0 ? -EIO : 0);
	r = cli_output_done(r);
out:
	table_free(t);
	json_object_put(result);
	json_object_put(params);
	return r;
}
