/* SPDX-License-Identifier: GPL-2.0-or-later */
/* main: tierd's command line: options, --help, --check-kernel; daemon.c does the rest. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "daemon.h"
#include "dmctl.h"
#include "exporter.h"
#include "log.h"

enum { EXIT_USAGE = 2 };

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: tierd [OPTION]...\n"
		"\n"
		"The tierd daemon. Each pool is one device-mapper volume, /dev/mapper/NAME,\n"
		"over an HDD tier and an optional SSD tier; tierd keeps the pools' state in\n"
		"SQLite, activates every pool at start, and answers tierctl on a Unix socket.\n"
		"It runs in the foreground (for systemd) and logs to standard error.\n"
		"Stopping it leaves the volumes working with their last table.\n"
		"\n"
		"Every option but --config, --check-config, --check-kernel, --help and\n"
		"--version is also a setting of the configuration file, under the option's\n"
		"name (tierd.conf(5));\n"
		"an option given here wins over the file.  SIGHUP reads the file again.\n"
		"\n"
		"Options:\n"
		"      --config FILE            read the settings from FILE (default\n"
		"                               %s; if that is\n"
		"                               missing, every setting has its default)\n"
		"      --state-dir DIR          where the state lives, created if missing\n"
		"                               (default %s)\n"
		"      --socket PATH            control socket (default %s)\n"
		"      --socket-group GROUP     give the socket and its folder to GROUP: its\n"
		"                               members can run every read command (tierctl\n"
		"                               show, list, stats...); changes stay root's\n"
		"                               (default: root's group only)\n"
		"      --sample-interval SECS   how often to sample the volumes' I/O statistics\n"
		"                               into extent heat (default 10)\n"
		"      --flush-interval SECS    how often to store heat and I/O history in the\n"
		"                               state (default 60; a crash loses at most this)\n"
		"      --heat-half-life SECS    how fast heat fades (default 86400: a day)\n"
		"      --history-days DAYS      keep per-minute I/O history this long, hourly\n"
		"                               beyond (default 30)\n"
		"      --policy-dir DIR         read tiering policies (NAME.policy) from DIR only,\n"
		"                               instead of %s, then\n"
		"                               %s\n"
		"      --metrics-listen ADDR:PORT\n"
		"                               serve Prometheus metrics at http://ADDR:PORT/metrics\n"
		"                               (127.0.0.1:9477, [::1]:9477: an IP address, no\n"
		"                               authentication, see metrics.md in the docs;\n"
		"                               default off)\n"
		"      --verify-moves[=no]      compare every copy with its source before a move\n"
		"                               commits (io_uring reads of both; a difference\n"
		"                               keeps the extent where it was); default off\n"
		"      --client-timeout SECS    close a control client that has sent no whole\n"
		"                               request and read no reply for SECS, unless its\n"
		"                               request is still being answered (default 60;\n"
		"                               0: never)\n"
		"      --device-timeout SECS    how long a pool with a device missing waits for\n"
		"                               it before tierd reports it (and, with\n"
		"                               --activate-degraded, activates it degraded);\n"
		"                               a pool activates as soon as its last device\n"
		"                               appears, also after that (default 30)\n"
		"      --heat-kernel-memory SIZE  kernel memory all pools' dm-stats regions may\n"
		"                               take (auto: the smaller of 64 MiB and 1/64 of\n"
		"                               RAM); a pool whose extents do not all fit tracks\n"
		"                               heat in zones, finely where it is hot (heat.md);\n"
		"                               a new value applies as pools next start\n"
		"      --table-targets N        the most linear targets a move may leave a\n"
		"                               volume's table (64 to 524288, default 65536):\n"
		"                               each takes some 100 bytes of kernel memory and\n"
		"                               time of every table swap; a move that would\n"
		"                               pass it waits (moves that add none go on),\n"
		"                               and tiering runs plan only moves that fit\n"
		"      --piece-heat[=no]        also watch how each extent's I/O spreads over its\n"
		"                               pieces: over the whole volume where the\n"
		"                               heat budget has room for an area per piece,\n"
		"                               else through 16 windows of an extent each that\n"
		"                               go round the hottest extents; 'tierctl heat'\n"
		"                               then says how few pieces hold 90%% of an\n"
		"                               extent's I/O, and runs under a heat policy\n"
		"                               send hot pieces out instead of whole extents\n"
		"                               where that serves more (heat.md); default on,\n"
		"                               =no: extents only, one region less for every\n"
		"                               I/O to count\n"
		"      --piece-size SIZE        the pieces a pool without any splits its extents\n"
		"                               into: a power of two from 4K to 64K, below the\n"
		"                               extent size (default 16K); the resolution of\n"
		"                               piece heat, an area of dm-stats each; a pool\n"
		"                               that has pieces keeps their size (heat.md)\n"
		"      --piece-copy held|mirror how a batch of pieces is copied: held, while\n"
		"                               the volume is suspended (I/O waits for the\n"
		"                               copy, some 20 ms for 64 pieces); mirror,\n"
		"                               through dm-mirror as whole extents are (a\n"
		"                               mirror per piece to set up and tear down);\n"
		"                               default held (migration.md)\n"
		"      --activate-degraded[=no] activate a pool still missing a device after\n"
		"                               --device-timeout: its extents read and write as\n"
		"                               I/O errors, the rest as usual (pools.md);\n"
		"                               default off: such a pool stays inactive, says\n"
		"                               why, and activates when the device appears\n"
		"  -v, --verbose                log debug messages too: each batch of a move and\n"
		"                               each step of it (table loads, suspend, commit,\n"
		"                               resume) with its time in ms\n"
		"      --check-config           read the configuration file and the options,\n"
		"                               say whether they are valid, then exit; status 1\n"
		"                               naming the line if not\n"
		"      --check-kernel           report the kernel's device-mapper driver and the\n"
		"                               targets tierd needs (linear for volumes, mirror\n"
		"                               for live migration), then exit; status 1 if one\n"
		"                               is missing\n"
		"  -h, --help                   show this help and exit\n"
		"  -V, --version                show the version and exit\n"
		"\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n"
		"See tierctl --help for the commands; the docs, protocol.md (the socket\n"
		"protocol) among them, are in %s.\n",
		TIERD_DEFAULT_CONFIG, TIERD_DEFAULT_STATE_DIR, TIERD_DEFAULT_SOCKET,
		TIERD_SYSCONF_POLICY_DIR, TIERD_POLICY_DIR, TIERD_DOCDIR);
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
	for (size_t i = 0; i < ARRAY_SIZE(needed); i++) {
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

/* Long options that set a setting of the same name (settings.h); -v sets verbose. */
static const char *const setting_options[] = {
	"state-dir", "socket", "sample-interval", "flush-interval", "heat-half-life",
	"history-days", "client-timeout", "device-timeout", "policy-dir", "metrics-listen",
	"socket-group", "heat-kernel-memory", "table-targets",
	"verify-moves", "activate-degraded", "piece-heat", "piece-copy", "piece-size",
};

int main(int argc, char **argv)
{
	enum {
		OPT_CHECK_KERNEL = 256,
		OPT_CHECK_CONFIG,
		OPT_CONFIG,
		OPT_SETTING, /* + the index in setting_options */
	};
	struct option options[ARRAY_SIZE(setting_options) + 7] = {
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-kernel", no_argument, NULL, OPT_CHECK_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
	};
	static struct settings_overrides ov;
	struct daemon_config cfg = { .path = TIERD_DEFAULT_CONFIG, .ov = &ov };
	bool check_config = false;
	struct settings s;
	char err[1024];
	int c;

	for (size_t i = 0; i < ARRAY_SIZE(setting_options); i++) {
		bool is_flag = strcmp(setting_options[i], "verify-moves") == 0 ||
			       strcmp(setting_options[i], "activate-degraded") == 0 ||
			       strcmp(setting_options[i], "piece-heat") == 0;

		/* A flag alone says yes; --flag=no says no (piece-heat is on by default). */
		options[6 + i] = (struct option){ setting_options[i],
						  is_flag ? optional_argument : required_argument, NULL,
						  OPT_SETTING + (int)i };
	}
	while ((c = getopt_long(argc, argv, "vhV", options, NULL)) != -1) {
		const char *name = NULL, *value = optarg;

		switch (c) {
		case OPT_CONFIG:
			cfg.path = optarg;
			cfg.must_exist = true;
			continue;
		case OPT_CHECK_CONFIG:
			check_config = true;
			continue;
		case 'v':
			name = "verbose";
			value = "yes";
			break;
		case OPT_CHECK_KERNEL:
			return check_kernel();
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		case 'V':
			printf("tierd %s\n", TIERD_VERSION);
			return EXIT_SUCCESS;
		default:
			if (c < OPT_SETTING || c >= OPT_SETTING + (int)ARRAY_SIZE(setting_options)) {
				fprintf(stderr, "Try 'tierd --help'.\n");
				return EXIT_USAGE;
			}
			name = setting_options[c - OPT_SETTING];
			if (!value)
				value = "yes";
			break;
		}
		/* Checked here too, so a bad option is a usage error before any file is read. */
		if (settings_init(&s) < 0)
			return EXIT_FAILURE;
		if (settings_set(&s, name, value, err, sizeof(err)) < 0) {
			settings_free(&s);
			fprintf(stderr, "tierd: --%s\n", err);
			return EXIT_USAGE;
		}
		settings_free(&s);
		if (ov.nr == ARRAY_SIZE(ov.v)) {
			fprintf(stderr, "tierd: too many options\n");
			return EXIT_USAGE;
		}
		ov.v[ov.nr].name = name;
		ov.v[ov.nr].value = value;
		ov.nr++;
	}
	if (optind < argc) {
		fprintf(stderr, "tierd: unexpected argument '%s'\nTry 'tierd --help'.\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (settings_load(&s, cfg.path, cfg.must_exist, &ov, err, sizeof(err)) < 0) {
		settings_free(&s);
		fprintf(stderr, "tierd: %s\n", err);
		return EXIT_FAILURE;
	}
	if (check_config) {
		settings_free(&s);
		printf("%s: %s\n", cfg.path, access(cfg.path, F_OK) == 0 ? "ok" :
		       "missing; every setting has its default");
		return EXIT_SUCCESS;
	}
	return daemon_run(&s, &cfg) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
