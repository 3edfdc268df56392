/* tierctl: the control tool of tierd. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

enum { EXIT_USAGE = 2 };

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: tierctl [OPTION]... COMMAND [ARG]...\n"
		"\n"
		"Control the tierd daemon: pools, tiers, schedules and statistics.\n"
		"\n"
		"Options:\n"
		"  -h, --help      show this help and exit\n"
		"  -V, --version   show the version and exit\n"
		"\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+hV", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		case 'V':
			printf("tierctl %s\n", TIERD_VERSION);
			return EXIT_SUCCESS;
		default:
			fprintf(stderr, "Try 'tierctl --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		fprintf(stderr, "tierctl: no command given\nTry 'tierctl --help'.\n");
	else
		fprintf(stderr, "tierctl: unknown command '%s'\nTry 'tierctl --help'.\n", argv[optind]);
	return EXIT_USAGE;
}
