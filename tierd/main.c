/* tierd: the tiering daemon. */
#include "config.h"

#include <errno.h>
#include <ev.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <time.h>

#include "collector.h"
#include "control.h"
#include "heat.h"
#include "dmctl.h"
#include "exporter.h"
#include "log.h"
#include "methods.h"
#include "tiering.h"
#include "pool.h"
#include "state.h"

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
		"  -v, --verbose                log debug messages too\n"
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

struct options {
	const char *state_dir;
	const char *socket;
	unsigned sample_interval;
	unsigned flush_interval;
	unsigned history_days;
	unsigned half_life;
	const char *policy_dir; /* NULL: /etc/tierd/policies, then the installed ones */
	const char *metrics_listen; /* NULL: no metrics endpoint */
	bool verify_moves;
};

/* The daemon's periodic work: sampling heat, storing it, keeping history short. */
struct daemon {
	const struct options *o;
	struct pools *pools;
	struct state *state;
	ev_timer sample, flush, flush_step;
	struct pool *flushing; /* the pool whose heat the chunked flush is storing */
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int sample_one(struct pool *p, void *ctx)
{
	char err[POOL_ERR_MAX];
	int r = pool_sample(p, *(uint64_t *)ctx, err, sizeof(err));

	if (r < 0)
		log_warn("%s", err);
	return r;
}

static void sample_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon *d = w->data;
	uint64_t now = realtime_ns();

	(void)loop;
	(void)revents;
	pools_for_each(d->pools, sample_one, &now);
}

struct flush_ctx {
	int all;
	int pending; /* some pool still has heat to store */
};

static int flush_one(struct pool *p, void *ctx)
{
	struct flush_ctx *f = ctx;
	char err[POOL_ERR_MAX];
	int r;

	/* One chunk per pool per step, so no step holds the loop for long. */
	r = pool_flush_step(p, f->all, err, sizeof(err));
	if (r < 0) {
		log_warn("%s", err);
		return r;
	}
	if (r == 0)
		f->pending = 1;
	return 0;
}

static void flush_step_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon *d = w->data;
	struct flush_ctx f = { 0 };

	(void)revents;
	pools_for_each(d->pools, flush_one, &f);
	if (!f.pending)
		ev_timer_stop(loop, w);
}

static void flush_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon *d = w->data;
	int64_t keep_from = (int64_t)(time(NULL) / 60) - (int64_t)d->o->history_days * 24 * 60;

	(void)revents;
	if (state_tier_io_compact(d->state, keep_from) < 0)
		log_warn("cannot compact the I/O history: %s", state_last_error(d->state));
	ev_timer_again(loop, &d->flush_step);
}

static void stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)revents;
	log_info("signal %d: stopping (volumes stay active)", w->signum);
	ev_break(loop, EVBREAK_ALL);
}

/* /run/tierd: the socket's folder, readable by root's group only. */
static int make_socket_dir(const char *socket_path)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", socket_path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0750) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int lock_state_dir(const char *dir, int *fd_out)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/tierd.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	*fd_out = fd;
	return 0;
}

static int run_daemon(const struct options *o)
{
	/*
	 * No timerfd: libev's timerfd path sees a clock step without resetting
	 * its idea of the monotonic offset, and a schedule stepped back could
	 * fire at once.  Steps are then found by comparing the clocks at each
	 * wakeup instead, at least once a minute.
	 */
	struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO | EVFLAG_NOTIMERFD);
	struct methods_ctx ctx = { .loop = loop };
	struct daemon d = { .o = o };
	int lock_fd = -1;
	struct heat_params heat;
	struct state *st = NULL;
	struct control *control = NULL;
	struct exporter *exporter = NULL;
	struct collector collector = { 0 };
	ev_signal sigterm, sigint;
	char err[512];
	int r;

	if (!loop) {
		log_err("cannot start the event loop");
		return EXIT_FAILURE;
	}
	signal(SIGPIPE, SIG_IGN);
	/* While a volume is suspended for a remap, a page fault that needs I/O
	 * could wait on that very volume: keep everything in memory (as LVM does). */
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		log_warn("cannot lock tierd's memory (%s); a remap could stall on paging",
			 strerror(errno));
	dmctl_init();
	r = state_open(&st, o->state_dir, err, sizeof(err));
	if (r < 0) {
		log_err("cannot open the state: %s", err);
		goto out;
	}
	/* Before touching any volume: a second tierd would fight the first over its tables. */
	r = lock_state_dir(o->state_dir, &lock_fd);
	if (r < 0) {
		log_err("%s", r == -EWOULDBLOCK ? "another tierd is running on this state directory" :
			"cannot lock the state directory");
		goto out;
	}
	r = pools_open(&ctx.pools, st, err, sizeof(err));
	if (r < 0) {
		log_err("%s", err);
		goto out;
	}
	heat_params_default(&heat);
	heat.half_life_s = o->half_life;
	pools_set_heat_params(ctx.pools, &heat);
	pools_set_verify(ctx.pools, o->verify_moves);
	pools_activate_all(ctx.pools);
	{
		const char *defaults[] = { "/etc/tierd/policies", TIERD_POLICY_DIR };
		const char *given[] = { o->policy_dir };

		r = o->policy_dir ? tierings_open(&ctx.tierings, loop, ctx.pools, st, given, 1, err,
						  sizeof(err)) :
				    tierings_open(&ctx.tierings, loop, ctx.pools, st, defaults, 2, err,
						  sizeof(err));
	}
	if (r < 0) {
		log_err("%s", err);
		goto out;
	}
	d.pools = ctx.pools;
	d.state = st;
	ev_timer_init(&d.sample, sample_cb, o->sample_interval, o->sample_interval);
	ev_timer_init(&d.flush, flush_cb, o->flush_interval, o->flush_interval);
	ev_timer_init(&d.flush_step, flush_step_cb, 0., 0.001);
	d.sample.data = d.flush.data = d.flush_step.data = &d;
	ev_timer_start(loop, &d.sample);
	ev_timer_start(loop, &d.flush);
	r = make_socket_dir(o->socket);
	if (r == 0)
		r = control_open(&control, loop, o->socket, methods_handle, &ctx);
	if (r < 0) {
		log_err("cannot listen on %s: %s", o->socket,
			r == -EADDRINUSE ? "another tierd is running" :
			r == -EEXIST ? "a file that is not a socket is in the way" : strerror(-r));
		goto out;
	}
	if (o->metrics_listen) {
		collector = (struct collector){ ctx.pools, ctx.tierings, st };
		r = exporter_open(&exporter, loop, o->metrics_listen, collector_render, &collector);
		if (r < 0) {
			log_err("cannot serve metrics on %s: %s", o->metrics_listen, strerror(-r));
			goto out;
		}
		log_info("metrics on http://%s/metrics", o->metrics_listen);
	}
	ev_signal_init(&sigterm, stop_cb, SIGTERM);
	ev_signal_init(&sigint, stop_cb, SIGINT);
	ev_signal_start(loop, &sigterm);
	ev_signal_start(loop, &sigint);
	log_info("tierd %s ready on %s (state in %s)", TIERD_VERSION, o->socket, o->state_dir);
	ev_run(loop, 0);
	r = 0;
	/* What the last interval learnt is stored before leaving. */
	{
		struct flush_ctx f = { .all = 1 };

		pools_for_each(ctx.pools, flush_one, &f);
	}
out:
	exporter_close(exporter);
	control_close(control);
	tierings_close(ctx.tierings);
	pools_close(ctx.pools);
	state_close(st);
	if (lock_fd >= 0)
		close(lock_fd);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
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
		OPT_POLICY_DIR,
		OPT_METRICS_LISTEN,
		OPT_VERIFY_MOVES,
	};
	static const struct option options[] = {
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "sample-interval", required_argument, NULL, OPT_SAMPLE_INTERVAL },
		{ "flush-interval", required_argument, NULL, OPT_FLUSH_INTERVAL },
		{ "heat-half-life", required_argument, NULL, OPT_HALF_LIFE },
		{ "history-days", required_argument, NULL, OPT_HISTORY_DAYS },
		{ "policy-dir", required_argument, NULL, OPT_POLICY_DIR },
		{ "metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN },
		{ "verify-moves", no_argument, NULL, OPT_VERIFY_MOVES },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-kernel", no_argument, NULL, OPT_CHECK_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct options o = {
		.state_dir = TIERD_DEFAULT_STATE_DIR,
		.socket = TIERD_DEFAULT_SOCKET,
		.sample_interval = 10,
		.flush_interval = 60,
		.history_days = 30,
		.half_life = 86400,
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
			for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
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
	return run_daemon(&o);
}
