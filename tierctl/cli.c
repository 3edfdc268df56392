/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli.h"
#include "array.h"
#include "client.h"
#include "member.h"
#include "progress.h"
#include "table.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* getopt_long's returns: above ASCII for the common options, then the command's own. */
enum {
	CLI_OPT_JSON = 128,
	CLI_OPT_SOCKET,
	CLI_OPT_NOHEADINGS,
	CLI_OPT_RAW,
	CLI_OPT_BYTES,
	CLI_OPT_LIST_COLUMNS,
	CLI_OPTION_BASE = 256,
};

/* The options of commands that print tables, as lsblk has them. */
static const char cli_table_options[] =
	"  -o, --output LIST       the columns to show, comma-separated (+LIST: the default\n"
	"                          ones and these); --list-columns names them\n"
	"      --noheadings        leave out the line of column names\n"
	"      --raw               columns one space apart, blanks in values as \\x20\n"
	"      --bytes             sizes as a number of bytes\n"
	"      --list-columns      list the tables' columns instead of their rows\n";

/* The command whose tables cli_output_done checks against -o. */
static const char *cli_table_command;

static const char cli_common_options[] =
	"      --json              print the result as one JSON object (errors too)\n"
	"      --socket PATH       talk to tierd at PATH\n"
	"  -h, --help              show this help and exit\n";

void cli_done(struct cli *cli)
{
	client_close(cli->client);
	cli->client = NULL;
}

const char *cli_command_word(const struct cli_command *cmd)
{
	const char *space = strrchr(cmd->name, ' ');

	return space ? space + 1 : cmd->name;
}

void cli_print_help(const struct cli_command *cmd, FILE *out)
{
	fprintf(out, "Usage: tierctl %s%s%s\n\n%s\nOptions:\n%s%s%s", cmd->name,
		*cmd->synopsis ? " " : "", cmd->synopsis, cmd->description,
		cmd->options ? cmd->options : "", cmd->tables ? cli_table_options : "",
		cli_common_options);
	if (cmd->examples)
		fprintf(out, "\nExamples:\n%s", cmd->examples);
	fprintf(out, "\n" CLI_EXIT_STATUS_HELP);
}

void cli_print_group_help(const struct cli_group *group, FILE *out)
{
	fprintf(out, "Usage: tierctl %s COMMAND [ARG]...\n\n%s\nCommands:\n", group->name,
		group->description);
	for (const struct cli_command *cmd = group->commands; cmd->name; cmd++)
		fprintf(out, "  %s%s%s\n      %s\n", cmd->name, *cmd->synopsis ? " " : "",
			cmd->synopsis, cmd->summary);
	fprintf(out, "\nRun 'tierctl %s COMMAND --help' for a command's options and examples.\n\n"
		CLI_EXIT_STATUS_HELP, group->name);
}

/* Set once from the command line: errors then go to stdout as JSON. */
static bool cli_json_errors;

void cli_scan_json(int argc, char **argv)
{
	/* Before any parsing, so that an error in the options is JSON too. */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			cli_json_errors = true;
}

/* {"schema_version": 1, "error": {"code": code, "message": message}} on stdout. */
static void cli_print_json_error(const char *code, const char *message)
{
	struct json_object *error = json_object_new_object(), *out = cli_json_document();

	if (!error || !out || json_object_object_add(error, "code", json_object_new_string(code)) ||
	    json_object_object_add(error, "message", json_object_new_string(message)) ||
	    json_object_object_add(out, "error", json_object_get(error))) {
		/* No memory for JSON: plain text is still better than silence. */
		fprintf(stderr, "tierctl: %s\n", message);
	} else {
		puts(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_SPACED |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
		fflush(stdout);
	}
	json_object_put(error);
	json_object_put(out);
}

__attribute__((format(printf, 2, 0)))
static int cli_vfail(const char *code, const char *fmt, va_list ap)
{
	char *message = NULL;

	if (!cli_json_errors) {
		fputs("tierctl: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		return CLI_EXIT_FAILURE;
	}
	if (vasprintf(&message, fmt, ap) < 0)
		message = NULL;
	cli_print_json_error(code, message ? message : strerror(ENOMEM));
	free(message);
	return CLI_EXIT_FAILURE;
}

int cli_usage(const char *who, const char *fmt, ...)
{
	const char *space = who ? " " : "";
	char *message = NULL;
	va_list ap;

	who = who ? who : "";
	if (cli_json_errors) {
		va_start(ap, fmt);
		if (vasprintf(&message, fmt, ap) < 0)
			message = NULL;
		va_end(ap);
		cli_print_json_error("EINVAL", message ? message : strerror(ENOMEM));
		free(message);
		return CLI_EXIT_USAGE;
	}
	fprintf(stderr, "tierctl%s%s: ", space, who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'tierctl%s%s --help'.\n", space, who);
	return CLI_EXIT_USAGE;
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = cli_vfail("EIO", fmt, ap);
	va_end(ap);
	return r;
}

int cli_fail_code(const char *code, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = cli_vfail(code, fmt, ap);
	va_end(ap);
	return r;
}

int cli_confirm(bool yes, const char *what, ...)
{
	char *question = NULL, *answer = NULL;
	size_t size = 0;
	ssize_t n;
	va_list ap;
	int r;

	if (yes)
		return CLI_PROCEED;
	va_start(ap, what);
	r = vasprintf(&question, what, ap);
	va_end(ap);
	if (r < 0)
		return cli_fail("%s", strerror(ENOMEM));
	/* A script or a pipe cannot answer: it must say --yes, in the open. */
	if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO)) {
		r = cli_fail_code("EPERM", "%s; without a terminal to ask on, give --yes to go on",
				  question);
		goto out;
	}
	fprintf(stderr, "%s.\nType 'yes' to go on: ", question);
	fflush(stderr);
	n = getline(&answer, &size, stdin);
	if (n > 0 && answer[n - 1] == '\n')
		answer[--n] = '\0';
	if (n >= 0 && !strcmp(answer, "yes"))
		r = CLI_PROCEED;
	else
		r = cli_fail_code("ECANCELED", "not confirmed; nothing changed");
out:
	free(answer);
	free(question);
	return r;
}

int cli_bad_option(const char *who, char **argv, int c)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		return cli_usage(who, "option '%s' needs an argument", arg);
	/* A short option may sit in a cluster such as -hx: name the letter, not the word. */
	if (optopt && optopt < CLI_OPTION_BASE && strncmp(arg, "--", 2))
		return cli_usage(who, "unknown option '-%c'", optopt);
	return cli_usage(who, "unknown option '%s'", arg);
}

/* The table options: NULL, or the first one given, for the message when --json has them too. */
static const char *cli_table_option(int c, struct table_format *format)
{
	switch (c) {
	case 'o':
		return "--output";
	case CLI_OPT_NOHEADINGS:
		format->noheadings = true;
		return "--noheadings";
	case CLI_OPT_RAW:
		format->raw = true;
		return "--raw";
	case CLI_OPT_BYTES:
		format->bytes = true;
		return "--bytes";
	case CLI_OPT_LIST_COLUMNS:
		format->list_columns = true;
		return "--list-columns";
	}
	return NULL;
}

static size_t cli_add_table_options(struct option *longopts)
{
	static const struct option table_longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "noheadings", no_argument, NULL, CLI_OPT_NOHEADINGS },
		{ "raw", no_argument, NULL, CLI_OPT_RAW },
		{ "bytes", no_argument, NULL, CLI_OPT_BYTES },
		{ "list-columns", no_argument, NULL, CLI_OPT_LIST_COLUMNS },
	};

	memcpy(longopts, table_longopts, sizeof(table_longopts));
	return ARRAY_SIZE(table_longopts);
}

/* The table options, once parsed: the format of the tables to come. */
static int cli_set_table_format(struct cli *cli, const struct cli_command *cmd,
				const struct table_format *format, const char *given)
{
	int r;

	if (given && cli->json)
		return cli_usage(cmd->name, "%s shapes tables; --json prints tierd's reply whole",
				 given);
	cli->table_option = given;
	r = table_set_format(format);
	if (r == -EINVAL)
		return cli_usage(cmd->name, "--output takes column names apart by commas, not '%s'",
				 format->columns);
	if (r < 0)
		return cli_fail("%s", strerror(-r));
	cli_table_command = cmd->name;
	return CLI_PROCEED;
}

int cli_parse(struct cli *cli, const struct cli_command *cmd, int argc, char **argv,
	      const struct cli_option *options, size_t n_options, int min_args, int max_args,
	      char ***args, int *n_args)
{
	struct table_format format = { 0 };
	const char *table_given = NULL, *given;
	struct option *longopts;
	const char *optstring;
	/* -y is short for --yes, for the commands that take it. */
	size_t n = 0, yes = n_options;
	int c, r = CLI_PROCEED;

	longopts = calloc(n_options + 9, sizeof(*longopts));
	if (!longopts)
		return cli_fail("%s", strerror(ENOMEM));
	for (size_t i = 0; i < n_options; i++) {
		longopts[n++] = (struct option){ options[i].name,
						 options[i].value ? required_argument : no_argument,
						 NULL, CLI_OPTION_BASE + (int)i };
		if (!strcmp(options[i].name, "yes"))
			yes = i;
	}
	longopts[n++] = (struct option){ "json", no_argument, NULL, CLI_OPT_JSON };
	longopts[n++] = (struct option){ "socket", required_argument, NULL, CLI_OPT_SOCKET };
	longopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	if (cmd->tables)
		n += cli_add_table_options(&longopts[n]);
	if (cmd->tables)
		optstring = yes < n_options ? ":hyo:" : ":ho:";
	else
		optstring = yes < n_options ? ":hy" : ":h";

	/* 0 restarts getopt for this argv; opterr 0 because the messages are ours. */
	optind = 0;
	opterr = 0;
	while (r == CLI_PROCEED && (c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		const struct cli_option *opt;

		if (c == 'y')
			c = CLI_OPTION_BASE + (int)yes;
		given = cli_table_option(c, &format);
		if (given && !table_given)
			table_given = given;
		switch (c) {
		case 'h':
			cli_print_help(cmd, stdout);
			r = cli_output_done(0);
			break;
		case CLI_OPT_JSON:
			cli->json = true;
			cli_json_errors = true;
			break;
		case CLI_OPT_SOCKET:
			cli->socket = optarg;
			break;
		case 'o':
			if (format.columns)
				r = cli_usage(cmd->name, "--output given twice");
			format.columns = optarg;
			break;
		case CLI_OPT_NOHEADINGS:
		case CLI_OPT_RAW:
		case CLI_OPT_BYTES:
		case CLI_OPT_LIST_COLUMNS:
			break;
		case ':':
		case '?':
			r = cli_bad_option(cmd->name, argv, c);
			break;
		default:
			opt = &options[c - CLI_OPTION_BASE];
			if (opt->flag)
				*opt->flag = true;
			/* Taking the last of two would silently drop what was meant first. */
			else if (*opt->value)
				r = cli_usage(cmd->name, "--%s given twice", opt->name);
			else
				*opt->value = optarg;
			break;
		}
	}
	if (r == CLI_PROCEED && cmd->tables)
		r = cli_set_table_format(cli, cmd, &format, table_given);
	if (r != CLI_PROCEED)
		goto out;
	*args = argv + optind;
	*n_args = argc - optind;
	/* The synopsis starts with the operands: "NAME --hdd DEV" is missing "NAME". */
	if (*n_args < min_args)
		r = cli_usage(cmd->name, "missing %.*s", (int)strcspn(cmd->synopsis, " "),
			      cmd->synopsis);
	else if (*n_args > max_args)
		r = cli_usage(cmd->name, "unexpected argument '%s'", (*args)[max_args]);
out:
	free(longopts);
	return r;
}

/* Takes value, which is NULL when making it ran out of memory. */
static int cli_param(struct json_object **params, const char *key, struct json_object *value)
{
	if (*params && value && !json_object_object_add(*params, key, value))
		return 0;
	json_object_put(value);
	json_object_put(*params);
	*params = NULL;
	return -ENOMEM;
}

struct json_object *cli_params(const char *name)
{
	struct json_object *params = json_object_new_object();

	if (name)
		cli_param_string(&params, "name", name);
	return params;
}

int cli_param_string(struct json_object **params, const char *key, const char *value)
{
	return cli_param(params, key, json_object_new_string(value));
}

int cli_param_uint(struct json_object **params, const char *key, uint64_t value)
{
	return cli_param(params, key, json_object_new_uint64(value));
}

int cli_param_bool(struct json_object **params, const char *key, bool value)
{
	return cli_param(params, key, json_object_new_boolean(value));
}

/*
 * Not realpath(): /dev/mapper/NAME and /dev/disk/by-id/... are links whose
 * names mean more to tierd's messages and metadata than their targets do.
 */
static struct json_object *cli_absolute_path(const char *path)
{
	struct json_object *v = NULL;
	char *cwd, *abs;

	if (path[0] == '/')
		return json_object_new_string(path);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	if (asprintf(&abs, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path) >= 0) {
		v = json_object_new_string(abs);
		free(abs);
	}
	free(cwd);
	return v;
}

int cli_param_path(struct json_object **params, const char *key, const char *path)
{
	return cli_param(params, key, cli_absolute_path(path));
}

int cli_param_paths(struct json_object **params, const char *key, char **paths, int n)
{
	struct json_object *array = json_object_new_array();

	for (int i = 0; array && i < n; i++) {
		struct json_object *v = cli_absolute_path(paths[i]);

		if (!v || json_object_array_add(array, v)) {
			json_object_put(v);
			json_object_put(array);
			array = NULL;
		}
	}
	return cli_param(params, key, array);
}

static struct json_object *cli_range_pair(const struct range *r)
{
	struct json_object *pair = json_object_new_array();
	struct json_object *start = json_object_new_uint64(r->start);
	struct json_object *length = json_object_new_uint64(r->length);

	if (!pair || !start || json_object_array_add(pair, start)) {
		json_object_put(start);
		json_object_put(length);
		json_object_put(pair);
		return NULL;
	}
	if (!length || json_object_array_add(pair, length)) {
		json_object_put(length);
		json_object_put(pair);
		return NULL;
	}
	return pair;
}

int cli_param_ranges(struct json_object **params, const char *key, const struct range *ranges,
		     size_t n)
{
	struct json_object *array = json_object_new_array();

	for (size_t i = 0; array && i < n; i++) {
		struct json_object *pair = cli_range_pair(&ranges[i]);

		if (!pair || json_object_array_add(array, pair)) {
			json_object_put(pair);
			json_object_put(array);
			array = NULL;
		}
	}
	return cli_param(params, key, array);
}

void cli_on_progress(struct json_object *update, void *userdata)
{
	const char *what = member_string(update, "what"), *from = member_string(update, "from");
	const char *to = member_string(update, "to");
	struct bar b = { .what = what, .waiting = member_string(update, "waiting"), .eta = -1,
			 .units = member_string(update, "units") };
	uint64_t eta, extent;
	char text[256];

	/* A progress line is worth showing even when some of it is missing. */
	member_uint(update, "done_extents", &b.done);
	member_uint(update, "total_extents", &b.total);
	member_uint(update, "done_bytes", &b.done_bytes);
	member_uint(update, "total_bytes", &b.total_bytes);
	member_uint(update, "rate_bytes_per_second", &b.rate);
	if (member_uint(update, "eta_seconds", &eta) == 0 && eta <= INT64_MAX)
		b.eta = (int64_t)eta;
	/* The extent being copied, as the batch in flight's first. */
	if (what && from && to && member_uint(update, "extent", &extent) == 0) {
		snprintf(text, sizeof(text), "%s: extent %" PRIu64 " %s -> %s", what, extent, from,
			 to);
		b.what = text;
	}
	/* Out of memory only costs a progress line; the operation goes on regardless. */
	progress_update(userdata, &b);
}

int cli_call(struct cli *cli, const char *method, struct json_object *params,
	     struct progress *progress, struct json_object **result)
{
	struct client_error error = { 0 };
	int r = 0;

	if (!params) {
		progress_end(progress);
		return cli_fail("%s", strerror(ENOMEM));
	}
	if (!cli->client)
		r = client_open(client_socket_path(cli->socket), &cli->client, &error);
	if (r >= 0)
		r = client_call(cli->client, method, params, progress ? cli_on_progress : NULL,
				progress, result, &error);
	/* Before the error, so that it does not land on the bar's line. */
	progress_end(progress);
	r = cli_call_failed(r, &error);
	client_error_clear(&error);
	return r;
}

int cli_call_failed(int r, const struct client_error *error)
{
	const char *code;

	if (r >= 0)
		return 0;
	code = error->name[0] ? error->name : strerrorname_np(-r);
	cli_fail_code(code ? code : "EIO", "%s", error->message ? error->message : strerror(-r));
	/* tierd found the request itself wrong: a usage error, as if tierctl had seen it. */
	if (error->name[0] && !strcmp(error->name, "EINVAL"))
		return CLI_EXIT_USAGE;
	/* tierd's word for a job that `tierctl job abort` stopped. */
	if (error->name[0] && !strcmp(error->name, "ECANCELED"))
		return CLI_EXIT_ABORTED;
	return CLI_EXIT_FAILURE;
}

struct json_object *cli_json_document(void)
{
	struct json_object *doc = json_object_new_object();

	if (doc && json_object_object_add(doc, "schema_version",
					  json_object_new_int(CLI_SCHEMA_VERSION))) {
		json_object_put(doc);
		doc = NULL;
	}
	return doc;
}

int cli_print_json(struct json_object *result)
{
	struct json_object *doc;
	const char *text;
	int r = 0;

	if (!json_object_is_type(result, json_type_object))
		return cli_output_done(-EINVAL);
	doc = cli_json_document();
	if (!doc)
		return cli_output_done(-ENOMEM);
	json_object_object_foreach(result, key, value) {
		if (!strcmp(key, "schema_version") ||
		    json_object_object_add(doc, key, json_object_get(value))) {
			r = !strcmp(key, "schema_version") ? -EINVAL : -ENOMEM;
			break;
		}
	}
	text = r ? NULL : json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
							   JSON_C_TO_STRING_SPACED |
							   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text)
		puts(text);
	else if (!r)
		r = -ENOMEM;
	json_object_put(doc);
	return cli_output_done(r);
}

/* Whether -o fitted the tables the command printed; an exit status or CLI_PROCEED. */
static int cli_check_table_format(void)
{
	char *message = NULL;
	int r;

	if (!table_check_format(&message))
		return CLI_PROCEED;
	r = cli_usage(cli_table_command, "%s", message ? message : strerror(ENOMEM));
	free(message);
	return r;
}

int cli_output_done(int r)
{
	if (!r && (fflush(stdout) || ferror(stdout)))
		r = -EIO;
	if (!r && cli_check_table_format() != CLI_PROCEED)
		return CLI_EXIT_USAGE;
	switch (r) {
	case 0:
		return EXIT_SUCCESS;
	case -EINVAL:
		return cli_fail("tierd's reply is not what protocol %d describes", CLIENT_PROTOCOL);
	case -EIO:
		return cli_fail("cannot write to standard output");
	default:
		return cli_fail("%s", strerror(-r));
	}
}
