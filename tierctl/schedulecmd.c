/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "member.h"
#include "schedulecmd.h"
#include "size.h"
#include "tierview.h"
#include "array.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* "HH:MM", 00:00 to 23:59, at text; returns how many characters it took, or 0. */
static size_t schedulecmd_clock(const char *text)
{
	for (size_t i = 0; i < 5; i++)
		if (i == 2 ? text[i] != ':' : (text[i] < '0' || text[i] > '9'))
			return 0;
	if ((text[0] - '0') * 10 + (text[1] - '0') > 23 || text[3] > '5')
		return 0;
	return 5;
}

/* "HH:MM-HH:MM", or "" to clear; tierd checks it again, this only fails a typo early. */
static bool schedulecmd_window_valid(const char *text)
{
	return !*text || (schedulecmd_clock(text) && text[5] == '-' &&
			  schedulecmd_clock(text + 6) && !text[11]);
}

/* A size for --max-bytes or --rate, which may end in "/s". */
static int schedulecmd_size(const char *who, const char *option, const char *text, bool rate,
			    uint64_t *out)
{
	size_t len = strlen(text);
	char *copy;
	int r;

	copy = strdup(text);
	if (!copy)
		return cli_fail("%s", strerror(ENOMEM));
	if (rate && len > 2 && !strcmp(copy + len - 2, "/s"))
		copy[len - 2] = '\0';
	r = size_parse(copy, out);
	free(copy);
	if (r < 0)
		return cli_usage(who, "%s takes a size such as 0, 512M or 1.5G%s, not '%s'", option,
				 rate ? " (per second)" : "", text);
	return CLI_PROCEED;
}

/* args joined by single spaces, which the caller frees; NULL if out of memory. */
static char *schedulecmd_join(char **args, int n)
{
	size_t len = 1;
	char *text, *p;

	for (int i = 0; i < n; i++)
		len += strlen(args[i]) + 1;
	text = malloc(len);
	if (!text)
		return NULL;
	p = text;
	*p = '\0';
	for (int i = 0; i < n; i++)
		p += sprintf(p, "%s%s", i ? " " : "", args[i]);
	return text;
}

static int schedulecmd_set(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *window = NULL, *max_text = NULL, *rate_text = NULL, *io = NULL;
	const struct cli_option options[] = {
		CLI_VALUE("window", &window),
		CLI_VALUE("max-bytes", &max_text),
		CLI_VALUE("rate", &rate_text),
		CLI_VALUE("io-awareness", &io),
	};
	struct json_object *params = NULL, *result = NULL;
	uint64_t max_bytes = 0, rate = 0;
	char **args, *spec = NULL;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, options, ARRAY_SIZE(options), 1, INT32_MAX,
		      &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (n_args == 1 && !window && !max_text && !rate_text && !io)
		return cli_usage(cmd->name, "nothing to set: give a SPEC or an option");
	if (window && !schedulecmd_window_valid(window))
		return cli_usage(cmd->name, "--window takes HH:MM-HH:MM, such as 22:00-06:00, or ''"
				 " for none; not '%s'", window);
	if (io && strcmp(io, "off") && strcmp(io, "throttled") && strcmp(io, "idle"))
		return cli_usage(cmd->name, "--io-awareness takes off, throttled or idle, not '%s'", io);
	if (max_text)
		r = schedulecmd_size(cmd->name, "--max-bytes", max_text, false, &max_bytes);
	if (r == CLI_PROCEED && rate_text)
		r = schedulecmd_size(cmd->name, "--rate", rate_text, true, &rate);
	if (r != CLI_PROCEED)
		return r;

	params = cli_params(args[0]);
	if (n_args > 1) {
		spec = schedulecmd_join(args + 1, n_args - 1);
		if (spec) {
			cli_param_string(&params, "spec", spec);
		} else {
			/* cli_call takes NULL parameters as running out of memory. */
			json_object_put(params);
			params = NULL;
		}
	}
	if (window)
		cli_param_string(&params, "window", window);
	if (max_text)
		cli_param_uint(&params, "max_bytes", max_bytes);
	if (rate_text)
		cli_param_uint(&params, "rate_bytes_per_second", rate);
	if (io)
		cli_param_string(&params, "io_awareness", io);
	r = cli_call(cli, cmd->method, params, NULL, &result);
	if (r)
		goto out;
	if (cli->json) {
		r = cli_print_json(result);
		goto out;
	}
	if (!json_object_is_type(member_get(result, "schedule"), json_type_object)) {
		r = cli_output_done(-EINVAL);
		goto out;
	}
	r = printf("Set the schedule of pool %s.\n\n", args[0]);
	r = cli_output_done(r < 0 ? -EIO : tierview_print_schedule(stdout, args[0],
								     member_get(result, "schedule")));
out:
	free(spec);
	json_object_put(result);
	json_object_put(params);
	return r;
}

static int schedulecmd_show(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	struct json_object *params = NULL, *result = NULL;
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
	else if (!json_object_is_type(member_get(result, "schedule"), json_type_object))
		r = cli_output_done(-EINVAL);
	else
		r = cli_output_done(tierview_print_schedule(stdout, args[0],
							    member_get(result, "schedule")));
out:
	json_object_put(result);
	json_object_put(params);
	return r;
}

static const struct cli_command schedulecmd_commands[] = {
	{
		.name = "schedule set",
		.synopsis = "NAME [SPEC...] [OPTION]...",
		.summary = "set when a pool's tiering runs start and how much they move",
		.description =
			"Change the schedule of pool NAME's tiering runs: what is given changes,\n"
			"the rest stays.  SPEC is the rest of the operands, joined by spaces,\n"
			"so a cron expression may be quoted or not:\n"
			"\n"
			"  manual               only 'tierctl tier now' starts a run (the default)\n"
			"  auto                 a small run every 30 seconds, when there is\n"
			"                       something to move (16 extents at most)\n"
			"  every DURATION       a run every DURATION, 1m to 31d: 30m, 6h, 1h30m\n"
			"  daily HH:MM          a run a day at that local time\n"
			"  cron MIN HOUR DOM MON DOW\n"
			"                       when the five cron fields match, in local time\n"
			"\n"
			"A run due outside the window starts when the window next opens.  At\n"
			"least one of SPEC and the options is needed.\n",
		.options =
			"      --window HH:MM-HH:MM\n"
			"                          start runs only in this daily window, which may\n"
			"                          cross midnight (22:00-06:00); '' removes it\n"
			"      --max-bytes SIZE    move at most SIZE per run; 0 for no limit\n"
			"      --rate SIZE         copy at most SIZE per second (100M is 100 MiB/s,\n"
			"                          '/s' may follow); 0 for no cap\n"
			"      --io-awareness off|throttled|idle\n"
			"                          how runs yield to the volume's own I/O: not at\n"
			"                          all, by slowing down while it is busy, or by\n"
			"                          copying only while it is idle\n",
		.examples =
			"  tierctl schedule set tank every 30m\n"
			"  tierctl schedule set tank cron '0 1 * * *' --window 00:30-05:00\n"
			"  tierctl schedule set tank daily 02:00 --rate 200M --max-bytes 50G\n"
			"  tierctl schedule set tank --window '' --io-awareness idle\n",
		.run = schedulecmd_set,
		.method = "schedule.set",
	},
	{
		.name = "schedule show",
		.synopsis = "NAME",
		.summary = "show a pool's schedule, policy and next run",
		.description =
			"Show when pool NAME's tiering runs start (the schedule and its window),\n"
			"the limits on a run's bytes and copy rate, how runs yield to the\n"
			"volume's I/O, the policy, whether runs are paused or one is running,\n"
			"and when the next run is due, in local time.  --json gives\n"
			"{\"schedule\": {...}}, times in UTC.\n",
		.examples =
			"  tierctl schedule show tank\n"
			"  tierctl schedule show tank --json | jq -r .schedule.next_run_at\n",
		.run = schedulecmd_show,
		.method = "schedule.show",
	},
	{ 0 },
};

const struct cli_group schedulecmd_group = {
	.name = "schedule",
	.description =
		"Schedules: when tierd starts a pool's tiering runs, which move hot\n"
		"extents to the SSD tier and cold ones to the HDD tier by the pool's\n"
		"policy, and how fast and how much they may copy.\n",
	.commands = schedulecmd_commands,
};
