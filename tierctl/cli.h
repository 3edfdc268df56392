/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli: what tierctl's commands share: their descriptions and help, option
 * parsing, usage errors, calls to tierd and JSON output.  Unlike the client
 * and table modules this is program code: it prints, and its handlers return
 * exit statuses.
 */
#ifndef TIERCTL_CLI_H
#define TIERCTL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ranges.h"

struct client;
struct client_error;
struct json_object;
struct progress;

enum {
	CLI_EXIT_FAILURE = 1,
	CLI_EXIT_USAGE = 2,
	/* The job the command ran or waited for was aborted (tierctl job abort). */
	CLI_EXIT_ABORTED = 3,
	/* From cli_parse: the command may go on. */
	CLI_PROCEED = -1,
};

#define CLI_EXIT_STATUS_HELP \
	"Exit status: 0 success; 1 failure (tierd refused the request or could not be\n" \
	"reached); 2 usage error, whether tierctl or tierd (EINVAL) found it; 3 the job\n" \
	"the command ran or waited for was aborted (tierctl job abort).\n"

/* The "schema_version" of every --json document (docs/protocol.md). */
#define CLI_SCHEMA_VERSION 1

struct cli {
	/* --socket, or NULL for the default. */
	const char *socket;
	bool json;
	/* Opened by the first call, closed by cli_done. */
	struct client *client;
	/* The first table option given (--output, --raw, ...), or NULL. */
	const char *table_option;
};

struct cli_command;

/* Runs a command with argv[0] its last word; returns an exit status. */
typedef int cli_run_fn(struct cli *cli, const struct cli_command *cmd, int argc, char **argv);

struct cli_command {
	/* As typed: "pool create". */
	const char *name;
	/* Arguments after the name, for the usage line. */
	const char *synopsis;
	/* One line, for the command lists. */
	const char *summary;
	/* The help: paragraphs, the command's own option lines, example lines. */
	const char *description;
	const char *options;
	const char *examples;
	cli_run_fn *run;
	/* The protocol method, so one handler can serve several commands. */
	const char *method;
	/* What a change prints before the pool's summary: "Activated pool". */
	const char *done;
	/* It prints tables: it takes -o, --noheadings, --raw, --bytes, --list-columns. */
	bool tables;
};

/* A command word such as "pool" and the commands under it, ended by a NULL name. */
struct cli_group {
	const char *name;
	const char *description;
	const struct cli_command *commands;
};

/* An option of a command: a value (--hdd DEV) when value is set, else a flag. */
struct cli_option {
	const char *name;
	const char **value;
	bool *flag;
};

#define CLI_VALUE(n, v) { .name = (n), .value = (v) }
#define CLI_FLAG(n, f) { .name = (n), .flag = (f) }

void cli_done(struct cli *cli);

/* The last word of cmd's name: what is typed after the group. */
const char *cli_command_word(const struct cli_command *cmd);

void cli_print_help(const struct cli_command *cmd, FILE *out);
void cli_print_group_help(const struct cli_group *group, FILE *out);

/*
 * Print "tierctl WHO: MESSAGE" and the hint at 'tierctl WHO --help' (WHO may
 * be NULL: tierctl itself); returns CLI_EXIT_USAGE.
 */
__attribute__((format(printf, 2, 3)))
int cli_usage(const char *who, const char *fmt, ...);

/*
 * After getopt_long (opterr 0, optstring starting with ':') returned c, ':'
 * or '?', say what was wrong with the option for WHO; returns CLI_EXIT_USAGE.
 */
int cli_bad_option(const char *who, char **argv, int c);

/* Print "tierctl: MESSAGE"; returns CLI_EXIT_FAILURE. */
__attribute__((format(printf, 1, 2)))
int cli_fail(const char *fmt, ...);

/* cli_fail with the symbolic errno that --json's error object names ("ENOENT"). */
__attribute__((format(printf, 2, 3)))
int cli_fail_code(const char *code, const char *fmt, ...);

/*
 * Note a --json anywhere on the command line, before parsing, so that every
 * error, even one in the options, is printed as JSON on stdout: {"schema_version":
 * 1, "error": {"code": "EINVAL", "message": "..."}}, and nothing on stderr.
 */
void cli_scan_json(int argc, char **argv);

/* A new {"schema_version": 1}, to which a command adds its nouns; NULL if out of memory. */
struct json_object *cli_json_document(void);

/*
 * After a client_* call returned r: 0 if it succeeded, else prints error
 * and returns the exit status: CLI_EXIT_USAGE when tierd refused the request
 * as invalid (EINVAL), CLI_EXIT_ABORTED when the job was aborted (ECANCELED),
 * else CLI_EXIT_FAILURE.
 */
int cli_call_failed(int r, const struct client_error *error);

/*
 * Before a command that loses data: CLI_PROCEED when yes (--yes) was given or
 * the person at the terminal types "yes" to "WHAT.  Type 'yes' to go on: ";
 * else it prints why not and returns CLI_EXIT_FAILURE: not confirmed, or no
 * terminal to ask on (standard input and standard error), which the message
 * says --yes answers.  what is a sentence without its final stop.
 */
__attribute__((format(printf, 2, 3)))
int cli_confirm(bool yes, const char *what, ...);

/*
 * Parse cmd's options (and the common --json, --socket, --help, and the table
 * options when cmd prints tables, which it sets as the table format) and check it
 * got min_args to max_args operands, which *args then points to.  Returns
 * CLI_PROCEED, or the exit status when help was printed or usage was wrong.
 */
int cli_parse(struct cli *cli, const struct cli_command *cmd, int argc, char **argv,
	      const struct cli_option *options, size_t n_options, int min_args, int max_args,
	      char ***args, int *n_args);

/*
 * Request parameters: a new object, with "name" unless name is NULL, then one
 * member per cli_param_* call.  Running out of memory puts the object and
 * leaves *params NULL, which later calls and cli_call take as that failure, so
 * a command checks once.  Each returns 0 or -ENOMEM.
 */
struct json_object *cli_params(const char *name);
int cli_param_string(struct json_object **params, const char *key, const char *value);
int cli_param_uint(struct json_object **params, const char *key, uint64_t value);
int cli_param_bool(struct json_object **params, const char *key, bool value);
/* A device path as typed, made absolute against the working directory. */
int cli_param_path(struct json_object **params, const char *key, const char *path);
/* Several device paths as an array. */
int cli_param_paths(struct json_object **params, const char *key, char **paths, int n);
/* n ranges as an array of [start, length] pairs. */
int cli_param_ranges(struct json_object **params, const char *key, const struct range *ranges,
		     size_t n);

/*
 * A progress line (the job object, docs/protocol.md) onto the struct
 * progress userdata: the client_progress_fn of every long command.
 */
void cli_on_progress(struct json_object *update, void *userdata);

/*
 * Call method on tierd with params (borrowed; NULL: out of memory building
 * them), showing progress lines on progress (may be NULL).  Returns 0 with
 * *result, which the caller puts, or CLI_EXIT_FAILURE after printing why.
 */
int cli_call(struct cli *cli, const char *method, struct json_object *params,
	     struct progress *progress, struct json_object **result);

/*
 * tierd's result object (its members the nouns: {"pool": ...}) as the --json
 * document: pretty, with "schema_version" first; returns an exit status.
 */
int cli_print_json(struct json_object *result);

/*
 * The exit status once output is done: a rendering error (tierd's reply does
 * not look as the protocol says) or a failed write to stdout is a failure,
 * and -o naming columns the tables printed lack is a usage error.
 */
int cli_output_done(int r);

#endif
