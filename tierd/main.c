/* tierd: the tiering daemon. */
#include "config.h"
#include "dmctl.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_USAGE = 2 };

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: tierd [OPTION]...\n"
		"\n"
		"The tierd daemon: one device-mapper volume per pool over an SSD tier and an\n"
		"HDD tier, with hot extents moved to the SSD and cold ones to the HDD.\n"
		"\n"
		"Options:\n"
		"      --check-kernel   report the kernel's device-mapper driver and the\n"
		"                       targets tierd needs (linear for volumes, mirror for\n"
		"                       live migration), then exit; status 1 if one is missing\n"
		"  -h, --help           show this help and exit\n"
		"  -V, --version        show the version and exit\n"
		"\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n");
}

struct needed_target {
	const char *name;
	const char *why;
};

static int check_kernel(void)
{
	static const struct needed_target needed[] = {
		{ "linear", "pool volumes" },
		{ "mirror", "live migration" },
	};
	char driver[DMCTL_VERSION_MAX], library[DMCTL_VERSION_MAX];
	int missing = 0;
	int r;

	dmctl_init();
	if (dmctl_library_version(library, sizeof(library)) < 0)
		snprintf(library, sizeof(library), "unknown");
	r = dmctl_driver_version(driver, sizeof(driver));
	if (r < 0) {
		fprintf(stderr, "tierd: device-mapper is not available: %s\n",
			r == -ENODEV ? "no /dev/mapper/control (is dm-mod loaded?)" : strerror(-r));
		return EXIT_FAILURE;
	}
	printf("device-mapper driver %s, library %s\n", driver, library);
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		struct dmctl_version v;

		r = dmctl_target_version(needed[i].name, &v);
		if (r < 0) {
			printf("target %-8s missing (needed for %s)\n", needed[i].name, needed[i].why);
			missing++;
			continue;
		}
		printf("target %-8s v%u.%u.%u (%s)\n", needed[i].name, v.major, v.minor, v.patch,
		       needed[i].why);
	}
	return missing ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	enum { OPT_CHECK_KERNEL = 256 };
	static const struct option options[] = {
		{ "check-kernel", no_argument, NULL, OPT_CHECK_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "hV", options, NULL)) != -1) {
		switch (c) {
		case OPT_CHECK_KERNEL:
			return check_kernel();
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		case 'V':
			printf("tierd %s\n", TIERD_VERSION);
			return EXIT_SUCCESS;
		default:
			fprintf(stderr, "Try 'tierd --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tierd: unexpected argument '%s'\nTry 'tierd --help'.\n", argv[optind]);
		return EXIT_USAGE;
	}
	fprintf(stderr, "tierd: no action given\nTry 'tierd --help'.\n");
	return EXIT_USAGE;
}
