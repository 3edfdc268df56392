/* SPDX-License-Identifier: GPL-2.0-or-later */
/* daemon: the event loop and every object of tierd, started in order, stopped in reverse. */
#include "daemon.h"

#include "config.h"

#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "collector.h"
#include "control.h"
#include "dmctl.h"
#include "exporter.h"
#include "heat.h"
#include "log.h"
#include "methods.h"
#include "notify.h"
#include "pool.h"
#include "state.h"
#include "tiering.h"

struct daemon {
	const struct daemon_options *o;
	struct ev_loop *loop;
	struct state *state;
	int lock_fd;
	struct methods_ctx methods; /* holds the pools and the tiering */
	ev_timer sample, flush, flush_step, watchdog;
	struct control *control;
	struct collector collector;
	struct exporter *exporter;
	ev_signal sigterm, sigint;
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
	pools_for_each(d->methods.pools, sample_one, &now);
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
	pools_for_each(d->methods.pools, flush_one, &f);
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

struct pool_count {
	unsigned active, inactive;
};

static int count_one(struct pool *p, void *ctx)
{
	struct pool_count *c = ctx;

	if (pool_is_active(p))
		c->active++;
	else
		c->inactive++;
	return 0;
}

/* What `systemctl status tierd` shows under "Status:". */
static void daemon_status_text(struct daemon *d, char *buf, size_t len)
{
	struct pool_count c = { 0 };

	pools_for_each(d->methods.pools, count_one, &c);
	if (!c.inactive)
		snprintf(buf, len, "%u pool%s active", c.active, c.active == 1 ? "" : "s");
	else
		snprintf(buf, len, "%u pool%s active, %u inactive (tierctl pool list says why)",
			 c.active, c.active == 1 ? "" : "s", c.inactive);
}

static void watchdog_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	notify_watchdog();
}

/* Pings at half the interval systemd asked for, from the loop: a loop that hangs stops them. */
static void daemon_start_watchdog(struct daemon *d)
{
	uint64_t usec = notify_watchdog_usec();

	ev_timer_init(&d->watchdog, watchdog_cb, 0., usec / 2e6);
	if (usec)
		ev_timer_again(d->loop, &d->watchdog);
}

static void stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)revents;
	log_info("signal %d: stopping (volumes stay active)", w->signum);
	notify_stopping();
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

/* The state, and its lock: taken before touching any volume, or two tierds fight over tables. */
static int daemon_open_state(struct daemon *d)
{
	char err[512];
	int r;

	r = state_open(&d->state, d->o->state_dir, err, sizeof(err));
	if (r < 0) {
		log_err("cannot open the state: %s", err);
		return r;
	}
	r = lock_state_dir(d->o->state_dir, &d->lock_fd);
	if (r < 0)
		log_err("%s", r == -EWOULDBLOCK ? "another tierd is running on this state directory" :
			"cannot lock the state directory");
	return r;
}

static int daemon_open_pools(struct daemon *d)
{
	static const char *const defaults[] = { "/etc/tierd/policies", TIERD_POLICY_DIR };
	const char *const given[] = { d->o->policy_dir };
	struct heat_params heat;
	char err[512];
	int r;

	r = pools_open(&d->methods.pools, d->state, err, sizeof(err));
	if (r < 0) {
		log_err("%s", err);
		return r;
	}
	heat_params_default(&heat);
	heat.half_life_s = d->o->half_life;
	pools_set_heat_params(d->methods.pools, &heat);
	pools_set_verify(d->methods.pools, d->o->verify_moves);
	pools_activate_all(d->methods.pools, d->o->activate_degraded);
	r = pools_check_state_dir(d->methods.pools, d->o->state_dir, err, sizeof(err));
	if (r < 0) {
		log_err("%s", err);
		return r;
	}
	r = d->o->policy_dir ?
		    tierings_open(&d->methods.tierings, d->loop, d->methods.pools, d->state, given,
				  ARRAY_SIZE(given), err, sizeof(err)) :
		    tierings_open(&d->methods.tierings, d->loop, d->methods.pools, d->state, defaults,
				  ARRAY_SIZE(defaults), err, sizeof(err));
	if (r < 0)
		log_err("%s", err);
	return r;
}

static void daemon_start_timers(struct daemon *d)
{
	ev_timer_init(&d->sample, sample_cb, d->o->sample_interval, d->o->sample_interval);
	ev_timer_init(&d->flush, flush_cb, d->o->flush_interval, d->o->flush_interval);
	ev_timer_init(&d->flush_step, flush_step_cb, 0., 0.001);
	d->sample.data = d->flush.data = d->flush_step.data = d;
	ev_timer_start(d->loop, &d->sample);
	ev_timer_start(d->loop, &d->flush);
}

static void daemon_stop_timers(struct daemon *d)
{
	ev_timer_stop(d->loop, &d->flush_step);
	ev_timer_stop(d->loop, &d->flush);
	ev_timer_stop(d->loop, &d->sample);
}

static int daemon_open_control(struct daemon *d)
{
	int r = make_socket_dir(d->o->socket);

	if (r == 0)
		r = control_open(&d->control, d->loop, d->o->socket, d->o->client_timeout, methods_handle, &d->methods);
	if (r < 0)
		log_err("cannot listen on %s: %s", d->o->socket,
			r == -EADDRINUSE ? "another tierd is running" :
			r == -EEXIST ? "a file that is not a socket is in the way" : strerror(-r));
	return r;
}

static int daemon_open_exporter(struct daemon *d)
{
	int r;

	if (!d->o->metrics_listen)
		return 0;
	d->collector = (struct collector){ d->methods.pools, d->methods.tierings, d->state };
	r = exporter_open(&d->exporter, d->loop, d->o->metrics_listen, collector_render,
			  &d->collector);
	if (r < 0) {
		log_err("cannot serve metrics on %s: %s", d->o->metrics_listen, strerror(-r));
		return r;
	}
	log_info("metrics on http://%s/metrics", d->o->metrics_listen);
	return 0;
}

static void daemon_start_signals(struct daemon *d)
{
	ev_signal_init(&d->sigterm, stop_cb, SIGTERM);
	ev_signal_init(&d->sigint, stop_cb, SIGINT);
	ev_signal_start(d->loop, &d->sigterm);
	ev_signal_start(d->loop, &d->sigint);
}

static void daemon_stop_signals(struct daemon *d)
{
	ev_signal_stop(d->loop, &d->sigint);
	ev_signal_stop(d->loop, &d->sigterm);
}

int daemon_run(const struct daemon_options *o)
{
	struct daemon d = { .o = o, .lock_fd = -1 };
	int r;

	/*
	 * No timerfd: libev's timerfd path sees a clock step without resetting
	 * its idea of the monotonic offset, and a schedule stepped back could
	 * fire at once.  Steps are then found by comparing the clocks at each
	 * wakeup instead, at least once a minute.
	 */
	d.loop = ev_default_loop(EVFLAG_AUTO | EVFLAG_NOTIMERFD);
	if (!d.loop) {
		log_err("cannot start the event loop");
		return -ENOMEM;
	}
	d.methods.loop = d.loop;
	signal(SIGPIPE, SIG_IGN);
	/* While a volume is suspended for a remap, a page fault that needs I/O
	 * could wait on that very volume: keep everything in memory (as LVM does). */
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		log_warn("cannot lock tierd's memory (%s); a remap could stall on paging",
			 strerror(errno));
	dmctl_init();
	notify_status("opening the state and activating pools");
	r = daemon_open_state(&d);
	if (r == 0)
		r = daemon_open_pools(&d);
	if (r < 0)
		goto out;
	daemon_start_timers(&d);
	r = daemon_open_control(&d);
	if (r == 0)
		r = daemon_open_exporter(&d);
	if (r < 0)
		goto out;
	daemon_start_signals(&d);
	daemon_start_watchdog(&d);
	log_info("tierd %s ready on %s (state in %s)", TIERD_VERSION, o->socket, o->state_dir);
	{
		char status[200];

		daemon_status_text(&d, status, sizeof(status));
		notify_ready(status);
	}
	ev_run(d.loop, 0);
	/* What the last interval learnt is stored before leaving. */
	{
		struct flush_ctx f = { .all = 1 };

		pools_for_each(d.methods.pools, flush_one, &f);
	}
out:
	/* In the reverse order of the start; each step copes with what never started. */
	ev_timer_stop(d.loop, &d.watchdog);
	daemon_stop_signals(&d);
	exporter_close(d.exporter);
	control_close(d.control);
	daemon_stop_timers(&d);
	tierings_close(d.methods.tierings);
	pools_close(d.methods.pools);
	if (d.lock_fd >= 0)
		close(d.lock_fd);
	state_close(d.state);
	return r;
}
