/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tierctl: the control tool of tierd. */
#include "cli.h"
#include "client.h"
#include "config.h"
#include "member.h"
#include "poolcmd.h"
#include "table.h"
#include "tiercmd.h"
#include "extentcmd.h"
#include "heatcmd.h"
#include "jobcmd.h"
#include "pincmd.h"
#include "policycmd.h"
#include "runscmd.h"
#include "schedulecmd.h"
#include "statscmd.h"
#include "advisecmd.h"
#include "locatecmd.h"
#include "array.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const struct cli_group *const main_groups[] = { &poolcmd_group, &tiercmd_group,
							      &extentcmd_group, &policycmd_group,
							      &schedulecmd_group, &jobcmd_group };

/*
 * Not through cli_call: an unreachable tierd is an answer here, not a
 * failure, and its reason goes on stderr without failing the command.
 */
static int main_version(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	static const struct table_column columns[] = {
		{ "Program", "program", TABLE_STRING },
		{ "Version", "version", TABLE_STRING },
		{ "Protocol", "protocol", TABLE_UINT },
	};
	struct client_error error = { 0 };
	struct json_object *params = NULL, *result = NULL, *json = NULL, *daemon, *self;
	struct client *client = NULL;
	struct table *t = NULL;
	char **args;
	int n_args, r;

	r = cli_parse(cli, cmd, argc, argv, NULL, 0, 0, 0, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	r = client_open(client_socket_path(cli->socket), &client, &error);
	if (!r) {
		params = cli_params(NULL);
		r = params ? client_call(client, cmd->method, params, NULL, NULL, &result, &error) :
			     -ENOMEM;
	}
	/* Under --json "daemon": null says it, and stdout is the whole answer. */
	if (r < 0 && !cli->json)
		fprintf(stderr, "tierctl: tierd's version is unknown: %s\n",
			error.message ? error.message : strerror(-r));

	daemon = member_get(result, "daemon");
	if (cli->json) {
		/* {"tierctl": {...}, "daemon": {...} or null}, the daemon's as daemon.version says. */
		json = json_object_new_object();
		self = json_object_new_object();
		r = -ENOMEM;
		if (json && self &&
		    !json_object_object_add(self, "version",
					    json_object_new_string(TIERD_VERSION)) &&
		    !json_object_object_add(self, "protocol",
					    json_object_new_int(CLIENT_PROTOCOL)) &&
		    !json_object_object_add(json, "tierctl", json_object_get(self)) &&
		    !json_object_object_add(json, "daemon", json_object_get(daemon)))
			r = 0;
		json_object_put(self);
		goto out;
	}
	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		goto out;
	table_add_string(t, "tierctl");
	table_add_string(t, TIERD_VERSION);
	table_add_uint(t, CLIENT_PROTOCOL);
	table_add_string(t, "tierd");
	table_add_members(t, daemon, 2);
	r = table_print(t, stdout);
out:
	table_free(t);
	json_object_put(result);
	json_object_put(params);
	client_close(client);
	client_error_clear(&error);
	r = json && !r ? cli_print_json(json) : cli_output_done(r);
	json_object_put(json);
	return r;
}

static const struct cli_command main_commands[] = {
	{
		.name = "version",
		.synopsis = "",
		.summary = "show the versions of tierctl and of the running tierd",
		.description =
			"Show tierctl's version and protocol and, if tierd can be reached, the\n"
			"daemon's.  When it cannot, its row shows '-', the reason goes to\n"
			"standard error and the exit status is still 0; --json gives\n"
			"{\"tierctl\": {...}, \"daemon\": null}.\n",
		.examples =
			"  tierctl version\n"
			"  tierctl version --json\n",
		.run = main_version,
		.method = "daemon.version",
		.tables = true,
	},
	HEATCMD_COMMAND,
	PINCMD_PIN_COMMAND,
	PINCMD_UNPIN_COMMAND,
	RUNSCMD_COMMAND,
	STATSCMD_COMMAND,
	ADVISECMD_COMMAND,
	LOCATECMD_COMMAND,
	{ 0 },
};

static void main_list_commands(const struct cli_command *commands, FILE *out)
{
	for (const struct cli_command *cmd = commands; cmd->name; cmd++)
		fprintf(out, "  %-18s %s\n", cmd->name, cmd->summary);
}

static void main_help(FILE *out)
{
	fprintf(out,
		"Usage: tierctl [OPTION]... COMMAND [ARG]...\n"
		"\n"
		"Control tierd, the hot/cold tiering daemon: make pools that join an HDD\n"
		"tier and an SSD tier into one device-mapper volume, keep each extent on\n"
		"the tier its use calls for, by schedule or by hand, and add or remove the\n"
		"SSD tier while the volume is in use.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(main_groups); i++)
		main_list_commands(main_groups[i]->commands, out);
	main_list_commands(main_commands, out);
	fprintf(out,
		"\n"
		"Options:\n"
		"      --socket PATH       talk to tierd at PATH; the default is\n"
		"                          $TIERD_SOCKET, else " TIERD_DEFAULT_SOCKET "\n"
		"      --json              print results as JSON (also accepted after the\n"
		"                          command)\n"
		"  -h, --help              show this help and exit\n"
		"  -V, --version           show tierctl's version and exit\n"
		"\n"
		"Read commands print tables for people and, with --json, what tierd\n"
		"replied.  Run 'tierctl COMMAND --help' (e.g. 'tierctl pool create --help')\n"
		"for a command's options and examples.\n"
		"\n" CLI_EXIT_STATUS_HELP);
}

/* "tierctl pool ...": argv[0] is the group's name. */
static int main_run_group(struct cli *cli, const struct cli_group *group, int argc, char **argv)
{
	if (argc < 2)
		return cli_usage(group->name, "no command given");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		cli_print_group_help(group, stdout);
		return cli_output_done(0);
	}
	for (const struct cli_command *cmd = group->commands; cmd->name; cmd++)
		if (!strcmp(argv[1], cli_command_word(cmd)))
			return cmd->run(cli, cmd, argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return cli_usage(group->name, "a command must come before '%s'", argv[1]);
	return cli_usage(group->name, "unknown command '%s'", argv[1]);
}

static int main_run(struct cli *cli, int argc, char **argv)
{
	if (!argc)
		return cli_usage(NULL, "no command given");
	for (size_t i = 0; i < ARRAY_SIZE(main_groups); i++)
		if (!strcmp(argv[0], main_groups[i]->name))
			return main_run_group(cli, main_groups[i], argc, argv);
	for (const struct cli_command *cmd = main_commands; cmd->name; cmd++)
		if (!strcmp(argv[0], cmd->name))
			return cmd->run(cli, cmd, argc, argv);
	return cli_usage(NULL, "unknown command '%s'", argv[0]);
}

int main(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_SOCKET };
	static const struct option options[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct cli cli = { 0 };
	int c, r;

	/*
	 * The tables show what the terminal can (UTF-8 device names) and escape
	 * the rest; only LC_CTYPE, so that numbers keep their '.' for scripts.
	 */
	setlocale(LC_CTYPE, "");
	cli_scan_json(argc, argv);
	/* '+': the options after the command are the command's. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hV", options, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			cli.json = true;
			break;
		case OPT_SOCKET:
			cli.socket = optarg;
			break;
		case 'h':
			main_help(stdout);
			return cli_output_done(0);
		case 'V':
			printf("tierctl %s\n", TIERD_VERSION);
			return cli_output_done(0);
		default:
			return cli_bad_option(NULL, argv, c);
		}
	}
	r = main_run(&cli, argc - optind, argv + optind);
	cli_done(&cli);
	return r;
}
