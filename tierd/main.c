/* SPDX-License-Identifier: GPL-2.0-or-later */
/* main: tierd's command line: options, --help, --check-kernel; daemon.c does the rest. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		"Options:\n"
		"      --state-dir DIR          where the state lives (default %s)\n"
		"      --socket PATH            control socket (default %s)\n"
		"      --sample-interval SECS   how often to sample the volumes' I/O statistics\n"
		"                               into extent heat (default 10)\n"
		"      --flush-interval SECS    how often to store heat and I/O history in the\n"
		"                               state (default 60; a crash loses at most this)\n"
		"      --heat-half-life SECS    how fast heat fades (default 86400: a day)\n"
		"      --history-days DAYS      keep per-minute I/O history this long, hourly\n"
		"                               beyond (default 30)\n"
		"      --policy-dir DIR         read tiering policies (NAME.policy) from DIR only,\n"
		"                               instead of /etc/tierd/policies, then %s\n"
		"      --metrics-listen ADDR:PORT\n"
		"                               serve Prometheus metrics at http://ADDR:PORT/metrics\n"
		"                               (127.0.0.1:9477, [::1]:9477: an IP address, no\n"
		"                               authentication, see docs/metrics.md; default off)\n"
		"      --verify-moves           compare every copy with its source before a move\n"
		"                               commits (io_uring reads of both; a difference\n"
		"                               keeps the extent where it was); default off\n"
		"      --client-timeout SECS    close a control client that has sent no whole\n"
		"                               request and read no reply for SECS, unless its\n"
		"                               request is still being answered (default 60;\n"
		"                               0: never)\n"
		"      --activate-degraded      at start, activate pools with a device missing:\n"
		"                               its extents read and write as I/O errors, the\n"
		"                               rest as usual (docs/pools.md); default off: such\n"
		"                               a pool stays inactive and says why\n"
		"  -v, --verbose                log debug messages too: each step of a live move\n"
		"                               (table loads, suspend, commit, resume) with its\n"
		"                               time in ms\n"
		"      --check-kernel           report the kernel's device-mapper driver and the\n"
		"                               targets tierd needs (linear for volumes, mirror\n"
		"                               for live migration), then exit; status 1 if one\n"
		"                               is missing\n"
		"  -h, --help                   show this help and exit\n"
		"  -V, --version                show the version and exit\n"
		"\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n"
		"See tierctl --help for the commands, docs/protocol.md for the socket protocol.\n",
		TIERD_DEFAULT_STATE_DIR, TIERD_DEFAULT_SOCKET, TIERD_POLICY_DIR);
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

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

int main(int argc, char **argv)
{
	enum {
		OPT_CHECK_KERNEL = 256,
		OPT_STATE_DIR,
		OPT_SOCKET,
		OPT_SAMPLE_INTERVAL,
		OPT_FLUSH_INTERVAL,
		OPT_HALF_LIFE,
		OPT_HISTORY_DAYS,
		OPT_CLIENT_TIMEOUT,
		OPT_POLICY_DIR,
		OPT_METRICS_LISTEN,
		OPT_VERIFY_MOVES,
		OPT_ACTIVATE_DEGRADED,
	};
	static const struct option options[] = {
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "sample-interval", required_argument, NULL, OPT_SAMPLE_INTERVAL },
		{ "flush-interval", required_argument, NULL, OPT_FLUSH_INTERVAL },
		{ "heat-half-life", required_argument, NULL, OPT_HALF_LIFE },
		{ "history-days", required_argument, NULL, OPT_HISTORY_DAYS },
		{ "client-timeout", required_argument, NULL, OPT_CLIENT_TIMEOUT },
		{ "policy-dir", required_argument, NULL, OPT_POLICY_DIR },
		{ "metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN },
		{ "verify-moves", no_argument, NULL, OPT_VERIFY_MOVES },
		{ "activate-degraded", no_argument, NULL, OPT_ACTIVATE_DEGRADED },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-kernel", no_argument, NULL, OPT_CHECK_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct daemon_options o = {
		.state_dir = TIERD_DEFAULT_STATE_DIR,
		.socket = TIERD_DEFAULT_SOCKET,
		.sample_interval = 10,
		.flush_interval = 60,
		.history_days = 30,
		.half_life = 86400,
		.client_timeout = 60,
	};
	const struct {
		int opt;
		const char *name;
		unsigned min, max;
		unsigned *out;
	} numbers[] = {
		{ OPT_SAMPLE_INTERVAL, "--sample-interval", 1, 86400, &o.sample_interval },
		{ OPT_FLUSH_INTERVAL, "--flush-interval", 1, 86400, &o.flush_interval },
		{ OPT_HALF_LIFE, "--heat-half-life", 60, 365 * 86400, &o.half_life },
		{ OPT_HISTORY_DAYS, "--history-days", 1, 3650, &o.history_days },
		{ OPT_CLIENT_TIMEOUT, "--client-timeout", 0, 86400, &o.client_timeout },
	};
	int c;

	while ((c = getopt_long(argc, argv, "vhV", options, NULL)) != -1) {
		switch (c) {
		case OPT_STATE_DIR:
			o.state_dir = optarg;
			break;
		case OPT_SOCKET:
			o.socket = optarg;
			break;
		case OPT_POLICY_DIR:
			o.policy_dir = optarg;
			break;
		case OPT_VERIFY_MOVES:
			o.verify_moves = true;
			break;
		case OPT_ACTIVATE_DEGRADED:
			o.activate_degraded = true;
			break;
		case OPT_METRICS_LISTEN: {
			struct sockaddr_storage addr;
			socklen_t len;

			if (exporter_parse_addr(optarg, &addr, &len) < 0) {
				fprintf(stderr, "tierd: --metrics-listen takes ADDRESS:PORT with an IP"
					" address (127.0.0.1:9477, [::1]:9477), not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			o.metrics_listen = optarg;
			break;
		}
		case OPT_SAMPLE_INTERVAL:
		case OPT_FLUSH_INTERVAL:
		case OPT_HALF_LIFE:
		case OPT_HISTORY_DAYS:
		case OPT_CLIENT_TIMEOUT:
			for (size_t i = 0; i < ARRAY_SIZE(numbers); i++) {
				if (numbers[i].opt != c)
					continue;
				if (parse_uint(optarg, numbers[i].min, numbers[i].max, numbers[i].out) < 0) {
					fprintf(stderr, "tierd: %s takes %u to %u, not '%s'\n",
						numbers[i].name, numbers[i].min, numbers[i].max, optarg);
					return EXIT_USAGE;
				}
			}
			break;
		case 'v':
			log_set_max_priority(LOG_DEBUG);
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
			fprintf(stderr, "Try 'tierd --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tierd: unexpected argument '%s'\nTry 'tierd --help'.\n", argv[optind]);
		return EXIT_USAGE;
	}
	return daemon_run(&o) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
