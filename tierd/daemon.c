/* SPDX-License-Identifier: GPL-2.0-or-later */
/* daemon: the event loop and every object of tierd, started in order, stopped in reverse. */
#include "daemon.h"

#include "config.h"

#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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
#include "fault.h"
#include "heat.h"
#include "log.h"
#include "methods.h"
#include "notify.h"
#include "pool.h"
#include "state.h"
#include "tiering.h"
#include "ueventmon.h"

struct daemon {
	struct settings s;
	const struct daemon_config *cfg;
	struct ev_loop *loop;
	struct state *state;
	int lock_fd;
	struct methods_ctx methods; /* holds the pools and the tiering */
	ev_timer sample, flush, flush_step, watchdog;
	/*
	 * Pools waiting for a device: retried when the kernel announces block
	 * devices, and every few seconds in case the announcement came before
	 * the device could be opened (or events cannot be had at all).
	 */
	struct ueventmon uevents;
	ev_io uevent_io;
	ev_timer uevent_settle, device_timeout, wait_retry;
	ev_tstamp waiting_since;
	unsigned waiting;
	char status[400]; /* the last status line sent */
	struct control *control;
	struct collector collector;
	struct exporter *exporter;
	ev_signal sigterm, sigint, sighup;
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct sample_ctx {
	uint64_t now_ns;
	struct tierings *tierings;
};

static int sample_one(struct pool *p, void *ctx)
{
	struct sample_ctx *sc = ctx;
	char err[POOL_ERR_MAX];
	int r = pool_sample(p, sc->now_ns, err, sizeof(err));

	if (r < 0)
		log_warn("%s", err);
	else
		tierings_heat_sampled(sc->tierings, p);
	return r;
}

static void daemon_update_status(struct daemon *d);

static void sample_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon *d = w->data;
	struct sample_ctx sc = { realtime_ns(), d->methods.tierings };

	(void)loop;
	(void)revents;
	pools_for_each(d->methods.pools, sample_one, &sc);
	daemon_update_status(d);
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
	int64_t keep_from = (int64_t)(time(NULL) / 60) - (int64_t)d->s.history_days * 24 * 60;

	(void)revents;
	if (state_tier_io_compact(d->state, keep_from) < 0)
		log_warn("cannot compact the I/O history: %s", state_last_error(d->state));
	ev_timer_again(loop, &d->flush_step);
}

struct pool_count {
	unsigned active, inactive;
	char jobs[200]; /* "; tank: WHAT" for each pool running a job */
};

static int count_one(struct pool *p, void *ctx)
{
	struct pool_count *c = ctx;
	const char *what = pool_job_what(p);
	size_t n = strlen(c->jobs);

	if (pool_is_active(p))
		c->active++;
	else
		c->inactive++;
	if (what)
		snprintf(c->jobs + n, sizeof(c->jobs) - n, "; %s: %s", pool_name(p), what);
	return 0;
}

/* What `systemctl status tierd` shows under "Status:". */
static void daemon_status_text(struct daemon *d, char *buf, size_t len)
{
	struct pool_count c = { 0 };

	pools_for_each(d->methods.pools, count_one, &c);
	if (!c.inactive)
		snprintf(buf, len, "%u pool%s active%s", c.active, c.active == 1 ? "" : "s", c.jobs);
	else
		snprintf(buf, len, "%u pool%s active, %u inactive (tierctl pool list says why)%s",
			 c.active, c.active == 1 ? "" : "s", c.inactive, c.jobs);
}

/* The status line again when it changed: pools came or went, a job started or ended. */
static void daemon_update_status(struct daemon *d)
{
	char status[sizeof(d->status)];

	daemon_status_text(d, status, sizeof(status));
	if (strcmp(status, d->status) == 0)
		return;
	memcpy(d->status, status, sizeof(status));
	notify_status("%s", status);
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

	r = state_open(&d->state, d->s.state_dir, err, sizeof(err));
	if (r < 0) {
		log_err("cannot open the state: %s", err);
		return r;
	}
	r = lock_state_dir(d->s.state_dir, &d->lock_fd);
	if (r < 0)
		log_err("%s", r == -EWOULDBLOCK ? "another tierd is running on this state directory" :
			"cannot lock the state directory");
	return r;
}

/* The setting's word, in the pool layer's terms. */
static enum pool_piece_copy piece_copy_of(const struct settings *s)
{
	return s->piece_copy == SETTINGS_PIECE_COPY_MIRROR ? POOL_PIECE_COPY_MIRROR :
							     POOL_PIECE_COPY_HELD;
}

static int daemon_open_pools(struct daemon *d)
{
	static const char *const defaults[] = { TIERD_SYSCONF_POLICY_DIR, TIERD_POLICY_DIR };
	const char *const given[] = { d->s.policy_dir };
	struct heat_params heat;
	char err[512];
	int r;

	/* Before the pools load: their stored heat decays with the configured half-life. */
	heat_params_default(&heat);
	heat.half_life_s = d->s.half_life;
	r = pools_open(&d->methods.pools, d->state, &heat, err, sizeof(err));
	if (r < 0) {
		log_err("%s", err);
		return r;
	}
	pools_set_heat_budget(d->methods.pools, d->s.heat_kernel_memory);
	pools_set_verify(d->methods.pools, d->s.verify_moves);
	pools_set_piece_copy(d->methods.pools, piece_copy_of(&d->s));
	pools_set_table_targets(d->methods.pools, d->s.table_targets);
	pools_set_piece_heat(d->methods.pools, d->s.piece_heat);
	pools_set_piece_size(d->methods.pools, d->s.piece_size);
	/* Degraded only once device-timeout has passed: boot brings devices in a few at a time. */
	pools_activate_all(d->methods.pools, d->s.activate_degraded && !d->s.device_timeout);
	d->waiting = pools_waiting(d->methods.pools);
	r = pools_check_state_dir(d->methods.pools, d->s.state_dir, err, sizeof(err));
	if (r < 0) {
		log_err("%s", err);
		return r;
	}
	r = d->s.policy_dir ?
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
	ev_timer_init(&d->sample, sample_cb, d->s.sample_interval, d->s.sample_interval);
	ev_timer_init(&d->flush, flush_cb, d->s.flush_interval, d->s.flush_interval);
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

/* socket-group: a name, else a number. -ENOENT if the system has no such group. */
static int socket_gid(const char *group, gid_t *gid)
{
	char buf[4096], *end;
	struct group gr, *found = NULL;
	unsigned long n;
	int e;

	e = getgrnam_r(group, &gr, buf, sizeof(buf), &found);
	if (e == 0 && found) {
		*gid = found->gr_gid;
		return 0;
	}
	errno = 0;
	n = strtoul(group, &end, 10);
	if (!errno && end != group && !*end && n < (gid_t)-1) {
		*gid = (gid_t)n;
		return 0;
	}
	return e ? -e : -ENOENT;
}

/*
 * The socket and its folder to socket-group, so that its members can read
 * (methods that change anything still check for root, SO_PEERCRED).
 */
static int give_socket_to_group(const char *socket_path, const char *group)
{
	char dir[PATH_MAX], *slash;
	gid_t gid = 0;
	int r;

	r = socket_gid(group, &gid);
	if (r < 0) {
		log_err("socket-group %s: %s", group,
			r == -ENOENT ? "no such group" : strerror(-r));
		return r;
	}
	snprintf(dir, sizeof(dir), "%s", socket_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	if (chown(socket_path, (uid_t)-1, gid) < 0 ||
	    (slash && slash != dir && chown(dir, (uid_t)-1, gid) < 0)) {
		r = -errno;
		log_err("cannot give %s to group %s: %s", socket_path, group, strerror(-r));
		return r;
	}
	return 0;
}

static int daemon_open_control(struct daemon *d)
{
	int r = make_socket_dir(d->s.socket);

	if (r == 0)
		r = control_open(&d->control, d->loop, d->s.socket, d->s.client_timeout, methods_handle, &d->methods);
	if (r < 0) {
		log_err("cannot listen on %s: %s", d->s.socket,
			r == -EADDRINUSE ? "another tierd is running" :
			r == -EEXIST ? "a file that is not a socket is in the way" : strerror(-r));
		return r;
	}
	return d->s.socket_group ? give_socket_to_group(d->s.socket, d->s.socket_group) : 0;
}

static int daemon_open_exporter(struct daemon *d)
{
	int r;

	if (!d->s.metrics_listen)
		return 0;
	d->collector = (struct collector){ d->methods.pools, d->methods.tierings, d->state };
	r = exporter_open(&d->exporter, d->loop, d->s.metrics_listen, collector_render,
			  &d->collector);
	if (r < 0) {
		log_err("cannot serve metrics on %s: %s", d->s.metrics_listen, strerror(-r));
		return r;
	}
	log_info("metrics on http://%s/metrics", d->s.metrics_listen);
	return 0;
}

/*
 * Often while a device may still come (boot, device-timeout), seldom after:
 * a retry opens every device the pools name.
 */
#define DAEMON_WAIT_RETRY_EARLY 5.
#define DAEMON_WAIT_RETRY_LATE 60.

static void daemon_retry_waiting(struct daemon *d, bool degraded, const char *why)
{
	ev_tstamp interval;

	d->waiting = pools_activate_waiting(d->methods.pools, degraded, why);
	if (!d->waiting) {
		ev_timer_stop(d->loop, &d->wait_retry);
	} else {
		interval = ev_now(d->loop) - d->waiting_since < d->s.device_timeout ?
				   DAEMON_WAIT_RETRY_EARLY :
				   DAEMON_WAIT_RETRY_LATE;
		ev_timer_stop(d->loop, &d->wait_retry);
		ev_timer_set(&d->wait_retry, interval, 0.);
		ev_timer_start(d->loop, &d->wait_retry);
	}
	daemon_update_status(d);
}

static void uevent_settle_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	daemon_retry_waiting(w->data, false, "its devices appeared");
}

static void wait_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	daemon_retry_waiting(w->data, false, "its devices appeared");
}

static void uevent_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct daemon *d = w->data;
	bool block = false;
	struct uevent ev;
	int r;

	(void)revents;
	while ((r = ueventmon_read(&d->uevents, &ev)) != -EAGAIN) {
		if (r == -ENOBUFS) {
			block = true; /* events were lost: one of them may have been ours */
		} else if (r == 0 && strcmp(ev.subsystem, "block") == 0 &&
			   (strcmp(ev.action, "add") == 0 || strcmp(ev.action, "change") == 0)) {
			/* md announces an assembled array as "change", a disk as "add". */
			block = true;
		} else if (r < 0 && r != -EINVAL) {
			log_warn("cannot read kernel device events: %s", strerror(-r));
			break;
		}
	}
	/* One retry for a burst (an array's members, a disk's partitions), half a second after its first event. */
	if (block && d->waiting && !ev_is_active(&d->uevent_settle)) {
		ev_timer_set(&d->uevent_settle, 0.5, 0.);
		ev_timer_start(loop, &d->uevent_settle);
	}
}

static void device_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon *d = w->data;

	(void)loop;
	(void)revents;
	daemon_retry_waiting(d, false, "its devices appeared");
	if (!d->waiting)
		return;
	pools_report_waiting(d->methods.pools, d->s.device_timeout);
	if (d->s.activate_degraded)
		daemon_retry_waiting(d, true, "activate-degraded, after device-timeout");
}

/* Without the kernel's events a missing device is only found by a restart or `pool activate`. */
static void daemon_start_uevents(struct daemon *d, int r)
{
	ev_timer_init(&d->uevent_settle, uevent_settle_cb, 0.5, 0.);
	ev_timer_init(&d->device_timeout, device_timeout_cb, d->s.device_timeout, 0.);
	ev_timer_init(&d->wait_retry, wait_retry_cb, DAEMON_WAIT_RETRY_EARLY, 0.);
	d->uevent_settle.data = d->device_timeout.data = d->wait_retry.data = d;
	d->waiting_since = ev_now(d->loop);
	if (r < 0) {
		log_warn("cannot listen to the kernel's device events (%s): a pool whose device"
			 " appears later is found by a retry every %.0f s", strerror(-r),
			 DAEMON_WAIT_RETRY_EARLY);
	} else {
		ev_io_init(&d->uevent_io, uevent_cb, d->uevents.fd, EV_READ);
		d->uevent_io.data = d;
		ev_io_start(d->loop, &d->uevent_io);
	}
	if (d->waiting) {
		log_info("%u pool%s waiting for devices (device-timeout %u s)", d->waiting,
			 d->waiting == 1 ? "" : "s", d->s.device_timeout);
		ev_timer_start(d->loop, &d->device_timeout);
		ev_timer_start(d->loop, &d->wait_retry);
	}
}

static void daemon_stop_uevents(struct daemon *d)
{
	ev_timer_stop(d->loop, &d->device_timeout);
	ev_timer_stop(d->loop, &d->wait_retry);
	ev_timer_stop(d->loop, &d->uevent_settle);
	ev_io_stop(d->loop, &d->uevent_io);
	ueventmon_close(&d->uevents);
}

static void restart_timer(struct ev_loop *loop, ev_timer *w, unsigned seconds)
{
	if (w->repeat == seconds)
		return;
	ev_timer_stop(loop, w);
	ev_timer_set(w, seconds, seconds);
	ev_timer_start(loop, w);
}

/* Puts the reloadable settings in d->s to work. */
static void daemon_apply_settings(struct daemon *d)
{
	struct heat_params heat;

	log_set_max_priority(d->s.verbose ? LOG_DEBUG : LOG_INFO);
	restart_timer(d->loop, &d->sample, d->s.sample_interval);
	restart_timer(d->loop, &d->flush, d->s.flush_interval);
	heat_params_default(&heat);
	heat.half_life_s = d->s.half_life;
	pools_set_heat_params(d->methods.pools, &heat);
	pools_set_verify(d->methods.pools, d->s.verify_moves);
	pools_set_piece_copy(d->methods.pools, piece_copy_of(&d->s));
	pools_set_table_targets(d->methods.pools, d->s.table_targets);
	control_set_client_timeout(d->control, d->s.client_timeout);
}

static void log_change(const char *name, const char *was, const char *now, bool reloadable,
		       void *ctx)
{
	unsigned *changes = ctx;

	(*changes)++;
	if (reloadable)
		log_info("reload: %s %s -> %s", name, was, now);
	else
		log_warn("reload: %s %s -> %s takes effect when tierd restarts", name, was, now);
}

static void reload_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct daemon *d = w->data;
	struct settings next;
	unsigned changes = 0;
	char err[1024];

	(void)loop;
	(void)revents;
	notify_reloading();
	if (settings_load(&next, d->cfg->path, d->cfg->must_exist, d->cfg->ov, err,
			  sizeof(err)) < 0) {
		log_err("reload refused, the settings in use stay: %s", err);
	} else {
		settings_diff(&d->s, &next, log_change, &changes);
		if (!changes)
			log_info("reload: %s: nothing changed", d->cfg->path);
		d->s.sample_interval = next.sample_interval;
		d->s.flush_interval = next.flush_interval;
		d->s.history_days = next.history_days;
		d->s.half_life = next.half_life;
		d->s.client_timeout = next.client_timeout;
		d->s.table_targets = next.table_targets;
		d->s.verify_moves = next.verify_moves;
		d->s.piece_copy = next.piece_copy;
		d->s.activate_degraded = next.activate_degraded;
		d->s.verbose = next.verbose;
		daemon_apply_settings(d);
	}
	settings_free(&next);
	daemon_status_text(d, d->status, sizeof(d->status));
	notify_reloaded(d->status);
}

static void daemon_start_signals(struct daemon *d)
{
	ev_signal_init(&d->sigterm, stop_cb, SIGTERM);
	ev_signal_init(&d->sigint, stop_cb, SIGINT);
	ev_signal_init(&d->sighup, reload_cb, SIGHUP);
	d->sighup.data = d;
	ev_signal_start(d->loop, &d->sigterm);
	ev_signal_start(d->loop, &d->sigint);
	ev_signal_start(d->loop, &d->sighup);
}

static void daemon_stop_signals(struct daemon *d)
{
	ev_signal_stop(d->loop, &d->sighup);
	ev_signal_stop(d->loop, &d->sigint);
	ev_signal_stop(d->loop, &d->sigterm);
}

int daemon_run(struct settings *s, const struct daemon_config *cfg)
{
	struct daemon d = { .s = *s, .cfg = cfg, .lock_fd = -1, .uevents.fd = -1 };
	int uevents_r, r;

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
	log_set_max_priority(d.s.verbose ? LOG_DEBUG : LOG_INFO);
	signal(SIGPIPE, SIG_IGN);
	/* While a volume is suspended for a remap, a page fault that needs I/O
	 * could wait on that very volume: keep everything in memory (as LVM does). */
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		log_warn("cannot lock tierd's memory (%s); a remap could stall on paging",
			 strerror(errno));
	dmctl_init();
	notify_status("opening the state and activating pools");
	/* Before the first activation, so that no device that appears after it goes unheard. */
	uevents_r = fault_fail("uevent-listen") ?: ueventmon_open(&d.uevents);
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
	daemon_start_uevents(&d, uevents_r);
	log_info("tierd %s ready on %s (state in %s)", TIERD_VERSION, d.s.socket, d.s.state_dir);
	daemon_status_text(&d, d.status, sizeof(d.status));
	notify_ready(d.status);
	ev_run(d.loop, 0);
	/* What the last interval learnt is stored before leaving. */
	{
		struct flush_ctx f = { .all = 1 };

		pools_for_each(d.methods.pools, flush_one, &f);
	}
out:
	/* In the reverse order of the start; each step copes with what never started. */
	daemon_stop_uevents(&d);
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
	settings_free(&d.s);
	return r;
}
