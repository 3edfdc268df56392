/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "dmctl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <linux/dm-ioctl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Flags of dmctl_simple(). */
enum {
	DMCTL_SKIP_LOCKFS = 1 << 0,
	DMCTL_NOFLUSH = 1 << 1,
	DMCTL_DEFERRED = 1 << 2,
};

static char last_error[256];

__attribute__((format(printf, 1, 0)))
static void dmctl_vset_error(const char *fmt, va_list ap)
{
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
}

/* For failures libdevmapper does not report itself, or reports misleadingly. */
__attribute__((format(printf, 1, 2)))
static void dmctl_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dmctl_vset_error(fmt, ap);
	va_end(ap);
}

/* libdevmapper reports failures only through its log hook. */
__attribute__((format(printf, 5, 0)))
static void dmctl_log(int level, const char *file, int line, int dm_errno_or_class,
		      const char *fmt, ...)
{
	va_list ap;

	if ((level & 7) > 3) /* keep errors, drop warnings, notices and debug */
		return;
	va_start(ap, fmt);
	dmctl_vset_error(fmt, ap);
	va_end(ap);
}

void dmctl_init(void)
{
	last_error[0] = '\0';
	dm_log_with_errno_init(dmctl_log);
	/*
	 * Sync with udev when it runs (libdevmapper checks, and
	 * DM_DISABLE_UDEV=1 turns it off): its rules then make
	 * /dev/mapper/NAME and the /dev/disk links. Without udev libdevmapper
	 * makes the node itself. Either way a create (its resume) or a remove
	 * returns once the node is there (or gone).
	 */
	dm_udev_set_sync_support(1);
}

const char *dmctl_last_error(void)
{
	return last_error;
}

const char *dmctl_error_text(int r)
{
	return *dmctl_last_error() ? dmctl_last_error() : strerror(-r);
}

static int dmctl_available(void)
{
	/* Without this check libdevmapper tries to create the node itself. */
	if (access("/dev/mapper/control", R_OK | W_OK) != 0)
		return errno == ENOENT ? -ENODEV : -errno;
	return 0;
}

/* A task of TYPE for NAME (a device, or a target type for versions). */
static int dmctl_task(int type, const char *name, struct dm_task **dmt_out)
{
	struct dm_task *dmt;
	int r = dmctl_available();

	if (r < 0)
		return r;
	dmt = dm_task_create(type);
	if (!dmt)
		return -ENOMEM;
	if (!dm_task_set_name(dmt, name)) {
		dm_task_destroy(dmt);
		return -EINVAL;
	}
	*dmt_out = dmt;
	return 0;
}

/* The kernel's errno on failure; -EIO if libdevmapper gave up before the ioctl. */
static int dmctl_task_errno(struct dm_task *dmt)
{
	int e = dm_task_get_errno(dmt);

	return e > 0 ? -e : -EIO;
}

static int dmctl_run(struct dm_task *dmt)
{
	if (dm_task_run(dmt)) {
		/*
		 * With udev sync, a create's node waits for the resume's
		 * dm_udev_wait(): made now, it would be there before udev's
		 * link and keep udev from making it.
		 */
		if (!dm_udev_get_sync_support())
			dm_task_update_nodes();
		return 0;
	}
	return dmctl_task_errno(dmt);
}

/*
 * Run a resume or a remove, the tasks whose uevent udev's rules make or
 * remove /dev/mapper/NAME on, with a udev cookie: with udev sync on, wait for
 * the rules to have run; otherwise libdevmapper makes or removes the node.
 * Not a create: the kernel sends no uevent for it, and the cookie would
 * never complete.
 */
static int dmctl_run_nodes(struct dm_task *dmt)
{
	uint32_t cookie = 0;
	int r = 0;

	if (!dm_task_set_cookie(dmt, &cookie, 0))
		return -EIO;
	if (!dm_task_run(dmt))
		r = dmctl_task_errno(dmt);
	/*
	 * This also applies libdevmapper's own node changes, after udev's: not
	 * before, or it would make the node udev is about to link. After a
	 * failure too: libdevmapper has completed the cookie then.
	 */
	if (!dm_udev_wait(cookie) && r == 0)
		r = -EIO;
	return r;
}

static int dmctl_simple(int type, const char *name, unsigned int flags)
{
	struct dm_task *dmt = NULL;
	int r = dmctl_task(type, name, &dmt);

	if (r < 0)
		return r;
	if (flags & DMCTL_SKIP_LOCKFS)
		dm_task_skip_lockfs(dmt);
	if (flags & DMCTL_NOFLUSH)
		dm_task_no_flush(dmt);
	if (flags & DMCTL_DEFERRED)
		dm_task_deferred_remove(dmt);
	if (type == DM_DEVICE_RESUME || type == DM_DEVICE_REMOVE)
		r = dmctl_run_nodes(dmt);
	else
		r = dmctl_run(dmt);
	dm_task_destroy(dmt);
	return r;
}

/* 4.37 is the interface version that brought DM_DEV_ARM_POLL. */
#define DMCTL_ARM_POLL_MINOR 37

int dmctl_events_arm(int fd)
{
	struct dm_ioctl dmi = {
		.version = { DM_VERSION_MAJOR, DMCTL_ARM_POLL_MINOR, 0 },
		.data_size = sizeof(dmi),
		.data_start = sizeof(dmi),
	};

	return ioctl(fd, DM_DEV_ARM_POLL, &dmi) < 0 ? -errno : 0;
}

int dmctl_events_open(int *fd)
{
	int r;

	*fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
	if (*fd < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	r = dmctl_events_arm(*fd);
	if (r < 0) {
		close(*fd);
		*fd = -1;
	}
	return r;
}

int dmctl_driver_version(char *buf, size_t len)
{
	int r = dmctl_available();

	if (r < 0)
		return r;
	if (!dm_driver_version(buf, len))
		return -ENODEV;
	return 0;
}

int dmctl_library_version(char *buf, size_t len)
{
	return dm_get_library_version(buf, len) ? 0 : -EIO;
}

int dmctl_target_version(const char *target, struct dmctl_version *out)
{
	struct dm_task *dmt = NULL;
	struct dm_versions *v;
	int r = dmctl_task(DM_DEVICE_GET_TARGET_VERSION, target, &dmt);

	if (r < 0)
		return r;
	r = -ENOENT;
	if (!dm_task_run(dmt))
		goto out;
	v = dm_task_get_versions(dmt);
	if (!v || strcmp(v->name, target) != 0)
		goto out;
	out->major = v->version[0];
	out->minor = v->version[1];
	out->patch = v->version[2];
	r = 0;
out:
	dm_task_destroy(dmt);
	return r;
}

/*
 * A reload fails with ENXIO both for a missing volume and for a missing
 * device named in the table, and with assorted codes for a table the kernel
 * cannot build: keep what a caller can act on, call the rest -EINVAL.
 */
static int dmctl_load_error(const char *name, int r)
{
	struct dmctl_info info;

	switch (r) {
	case 0:
	case -EBUSY:
	case -ENOMEM:
	case -EPERM:
	case -EACCES:
		return r;
	case -ENXIO:
		if (dmctl_info(name, &info) == 0 && !info.exists)
			return -ENXIO;
		break;
	}
	return -EINVAL;
}

/*
 * The most a buffer of tierd's own ioctls may hold: the kernel copies it into
 * one kvmalloc(), which warns and fails above INT_MAX (Linux 6.1).
 */
#define DMCTL_IOCTL_MAX ((size_t)1 << 30)

/*
 * Start one of tierd's own ioctls on NAME: *fd the control device, *out a
 * zeroed buffer of len bytes with its header set. On failure neither is left
 * to close or free.
 */
static int dmctl_ioctl_start(const char *name, size_t len, uint32_t flags, int *fd,
			     struct dm_ioctl **out)
{
	struct dm_ioctl *dmi;
	int e;

	*out = NULL;
	if (strlen(name) >= sizeof(dmi->name)) {
		dmctl_set_error("device-mapper: device name %s is too long", name);
		return -EINVAL;
	}
	/* No dmctl_available() first: that is for libdevmapper, which would make the node. */
	*fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
	if (*fd < 0) {
		e = errno;
		dmctl_set_error("device-mapper: cannot open /dev/mapper/control: %s", strerror(e));
		return e == ENOENT ? -ENODEV : -e;
	}
	dmi = calloc(1, len);
	if (!dmi) {
		close(*fd);
		*fd = -1;
		return -ENOMEM;
	}
	*dmi = (struct dm_ioctl){
		/* Major only: the kernel answers with the minor it has. */
		.version = { DM_VERSION_MAJOR, 0, 0 },
		.data_size = (uint32_t)len,
		.data_start = sizeof(*dmi),
		.flags = flags,
	};
	memcpy(dmi->name, name, strlen(name) + 1);
	*out = dmi;
	return 0;
}

/*
 * The load is tierd's own ioctl, with a buffer of the table's size.
 * libdevmapper sizes every ioctl's buffer by the most doublings any status,
 * table or message read of the process has needed (its
 * _ioctl_buffer_double_factor, never reset): once a table of tens of
 * thousands of targets had been read back, each load asked for that
 * table's size times 2^8 (a gigabyte at 65,536 targets), zeroed, copied
 * into the kernel and back, and failed.
 */
#define DMCTL_SPEC_ALIGN 8u
int dmctl_load(const char *name, const struct dmctl_target *t, size_t nr)
{
	size_t len = sizeof(struct dm_ioctl);
	struct dm_ioctl *dmi;
	char *at;
	int fd, r;

	last_error[0] = '\0';
	for (size_t i = 0; i < nr; i++) {
		size_t params = strlen(t[i].params ? t[i].params : "") + 1;

		if (strlen(t[i].type) >= DM_MAX_TYPE_NAME) {
			dmctl_set_error("device-mapper: target type %s is too long", t[i].type);
			return -EINVAL;
		}
		len += sizeof(struct dm_target_spec) +
		       (params + DMCTL_SPEC_ALIGN - 1) / DMCTL_SPEC_ALIGN * DMCTL_SPEC_ALIGN;
		/* Checked as it grows: this also keeps nr within target_count's 32 bits. */
		if (len > DMCTL_IOCTL_MAX) {
			dmctl_set_error("device-mapper: the table of %zu targets for %s is over "
					"the %zu MiB an ioctl may carry", nr, name,
					DMCTL_IOCTL_MAX >> 20);
			return -E2BIG;
		}
	}
	r = dmctl_ioctl_start(name, len, 0, &fd, &dmi);
	if (r < 0)
		return r;
	dmi->target_count = (uint32_t)nr;
	at = (char *)dmi + sizeof(*dmi);
	for (size_t i = 0; i < nr; i++) {
		struct dm_target_spec *spec = (struct dm_target_spec *)(void *)at;
		const char *params = t[i].params ? t[i].params : "";
		size_t size = strlen(params) + 1;

		size = sizeof(*spec) + (size + DMCTL_SPEC_ALIGN - 1) / DMCTL_SPEC_ALIGN *
					       DMCTL_SPEC_ALIGN;
		spec->sector_start = t[i].start;
		spec->length = t[i].len;
		/* The kernel finds each spec this far from the one before. */
		spec->next = (uint32_t)size;
		memcpy(spec->target_type, t[i].type, strlen(t[i].type) + 1);
		/*
		 * As is: the kernel takes a backslash as escaping the next
		 * character. libdevmapper doubled them; tierd's params have
		 * none, so a caller must not pass one unless already escaped.
		 */
		memcpy(spec + 1, params, strlen(params) + 1);
		at += size;
	}
	r = ioctl(fd, DM_TABLE_LOAD, dmi) < 0 ? -errno : 0;
	close(fd);
	free(dmi);
	if (r < 0)
		dmctl_set_error("device-mapper: reload ioctl on %s failed: %s", name, strerror(-r));
	return dmctl_load_error(name, r);
}

int dmctl_clear(const char *name)
{
	return dmctl_simple(DM_DEVICE_CLEAR, name, 0);
}

int dmctl_suspend(const char *name, int flush)
{
	return dmctl_simple(DM_DEVICE_SUSPEND, name, DMCTL_SKIP_LOCKFS | (flush ? 0 : DMCTL_NOFLUSH));
}

int dmctl_resume(const char *name)
{
	/*
	 * Swapping tables suspends first if needed: that must not freeze
	 * filesystems either, nor fail the writes a mirror holds (noflush
	 * pushes them back to be issued to the new table).
	 */
	return dmctl_simple(DM_DEVICE_RESUME, name, DMCTL_SKIP_LOCKFS | DMCTL_NOFLUSH);
}

/* Remove a device dmctl_create() made, keeping the reason it failed. */
static void dmctl_undo_create(const char *name)
{
	char why[sizeof(last_error)];

	memcpy(why, last_error, sizeof(why));
	(void)dmctl_simple(DM_DEVICE_REMOVE, name, 0);
	memcpy(last_error, why, sizeof(why));
}

int dmctl_create(const char *name, const char *uuid, const struct dmctl_target *t, size_t nr)
{
	struct dm_task *dmt = NULL;
	int r = dmctl_task(DM_DEVICE_CREATE, name, &dmt);

	if (r < 0)
		return r;
	r = -EINVAL;
	if (uuid && !dm_task_set_uuid(dmt, uuid))
		goto out;
	r = dmctl_run(dmt);
	if (r == -EBUSY) {
		dmctl_set_error("device-mapper: a device named %s%s%s already exists", name,
				uuid && *uuid ? " or with uuid " : "", uuid ? uuid : "");
		r = -EEXIST;
	}
	if (r < 0)
		goto out;
	r = dmctl_load(name, t, nr);
	if (r == 0)
		r = dmctl_resume(name);
	if (r < 0)
		dmctl_undo_create(name);
out:
	dm_task_destroy(dmt);
	return r;
}

/*
 * Swap in an `error` table, the core of a forced remove. The swap suspends
 * without flushing: I/O held by the old table (a dead device below, a
 * suspended one) is requeued onto `error` and fails instead of hanging.
 */
static int dmctl_fail_io(const char *name, uint64_t sectors)
{
	const struct dmctl_target error = { .start = 0, .len = sectors, .type = "error" };
	int r = dmctl_load(name, &error, 1);

	if (r < 0)
		return r;
	r = dmctl_resume(name);
	if (r < 0)
		(void)dmctl_clear(name);
	return r;
}

int dmctl_remove(const char *name, int force)
{
	struct dmctl_info info;
	int r;

	if (!force)
		return dmctl_simple(DM_DEVICE_REMOVE, name, 0);
	r = dmctl_info(name, &info);
	if (r < 0)
		return r;
	if (info.live_table && (info.open_count > 0 || info.suspended)) {
		r = dmctl_fail_io(name, info.size_sectors);
		if (r < 0)
			return r;
	}
	return dmctl_simple(DM_DEVICE_REMOVE, name, DMCTL_DEFERRED);
}

/* Run a TABLE or STATUS query: on success *dmt_out holds the targets, di the device. */
static int dmctl_query(int type, const char *name, struct dm_task **dmt_out, struct dm_info *di)
{
	struct dm_task *dmt = NULL;
	int r = dmctl_task(type, name, &dmt);

	if (r < 0)
		return r;
	/* Status would make thin and cache targets commit metadata first. */
	dm_task_no_flush(dmt);
	r = dmctl_run(dmt);
	if (r == 0 && !dm_task_get_info(dmt, di))
		r = -EIO;
	if (r < 0) {
		dm_task_destroy(dmt);
		return r;
	}
	*dmt_out = dmt;
	return 0;
}

int dmctl_info(const char *name, struct dmctl_info *info)
{
	struct dm_task *dmt = NULL;
	struct dm_info di;
	void *next = NULL;
	uint64_t start, len;
	char *type, *params;
	/* STATUS, not INFO: the same ioctl also gives the live table's size. */
	int r = dmctl_query(DM_DEVICE_STATUS, name, &dmt, &di);

	memset(info, 0, sizeof(*info));
	if (r < 0)
		return r;
	if (di.exists) {
		info->exists = 1;
		info->suspended = di.suspended;
		info->live_table = di.live_table;
		info->inactive_table = di.inactive_table;
		info->open_count = di.open_count > 0 ? (uint32_t)di.open_count : 0;
		info->major = di.major;
		info->minor = (uint32_t)di.minor;
		do {
			next = dm_get_next_target(dmt, next, &start, &len, &type, &params);
			if (type)
				info->size_sectors = start + len;
		} while (next);
	}
	dm_task_destroy(dmt);
	return 0;
}

/* libdevmapper treats a status query of a missing device as a success. */
static int dmctl_no_device(const char *name)
{
	dmctl_set_error("device-mapper: no device named %s", name);
	return -ENXIO;
}

int dmctl_uuid(const char *name, char *buf, size_t len)
{
	struct dm_task *dmt = NULL;
	struct dm_info di;
	const char *uuid;
	int r = dmctl_query(DM_DEVICE_STATUS, name, &dmt, &di);

	if (r < 0)
		return r;
	uuid = dm_task_get_uuid(dmt);
	if (!di.exists)
		r = dmctl_no_device(name);
	else if (!uuid)
		r = -EIO;
	else if (strlen(uuid) >= len)
		r = -ERANGE;
	else
		memcpy(buf, uuid, strlen(uuid) + 1);
	dm_task_destroy(dmt);
	return r;
}

/*
 * DM_TABLE_STATUS, tierd's own ioctl like the load (see dmctl_load): a read
 * of a long table through libdevmapper would grow the buffer of every later
 * ioctl of the process, and copy each target into a list of its own. The
 * buffer starts at the power of two the last read needed: a small pool read
 * after a big one does not zero and copy the big one's buffer again.
 */
#define DMCTL_READ_MIN ((size_t)16384)
static size_t dmctl_read_bytes = DMCTL_READ_MIN;

static int dmctl_read_targets(const char *name, bool table, struct dm_ioctl **out)
{
	/* Status would make thin and cache targets commit metadata first. */
	uint32_t flags = DM_NOFLUSH_FLAG | (table ? DM_STATUS_TABLE_FLAG : 0);
	struct dm_ioctl *dmi = NULL;
	size_t len = dmctl_read_bytes, next = DMCTL_READ_MIN;
	int fd, r;

	*out = NULL;
	last_error[0] = '\0';
	for (;;) {
		/* The kernel rewrites the header: each try starts from a new one. */
		r = dmctl_ioctl_start(name, len, flags, &fd, &dmi);
		if (r < 0)
			return r;
		r = ioctl(fd, DM_TABLE_STATUS, dmi) < 0 ? -errno : 0;
		close(fd);
		if (r < 0 || !(dmi->flags & DM_BUFFER_FULL_FLAG))
			break;
		free(dmi);
		dmi = NULL;
		if (len >= DMCTL_IOCTL_MAX) {
			r = -E2BIG;
			break;
		}
		len *= 2;
	}
	if (r < 0) {
		free(dmi);
		if (r == -ENXIO)
			return dmctl_no_device(name);
		dmctl_set_error("device-mapper: %s ioctl on %s failed: %s", table ? "table" :
				"status", name, strerror(-r));
		return r;
	}
	/* On success data_size is what the kernel filled: the header, then the targets. */
	while (next < dmi->data_size && next < DMCTL_IOCTL_MAX)
		next *= 2;
	dmctl_read_bytes = next;
	*out = dmi;
	return 0;
}

/* only: the targets of that type, or NULL for all. */
static int dmctl_targets_text(bool table, const char *name, const char *only, char **text)
{
	struct dm_ioctl *dmi;
	char *buf = NULL;
	size_t size = 0, at;
	FILE *f;
	int r = dmctl_read_targets(name, table, &dmi);

	*text = NULL;
	if (r < 0)
		return r;
	r = -ENOMEM;
	f = open_memstream(&buf, &size);
	if (!f)
		goto out;
	/* Each spec's next is its successor's offset from data_start. */
	at = dmi->data_start;
	r = 0;
	for (uint32_t i = 0; i < dmi->target_count; i++) {
		const struct dm_target_spec *spec;
		const char *params;

		if (at + sizeof(*spec) >= dmi->data_size || at + sizeof(*spec) < at) {
			r = -EIO;
			break;
		}
		spec = (const struct dm_target_spec *)(const void *)((const char *)dmi + at);
		params = (const char *)(spec + 1);
		if (!memchr(params, '\0', dmi->data_size - at - sizeof(*spec)) ||
		    !memchr(spec->target_type, '\0', sizeof(spec->target_type))) {
			r = -EIO;
			break;
		}
		if (!only || strcmp(spec->target_type, only) == 0)
			fprintf(f, "%llu %llu %s %s\n", (unsigned long long)spec->sector_start,
				(unsigned long long)spec->length, spec->target_type, params);
		at = (size_t)dmi->data_start + spec->next;
	}
	/* A memstream's only failure is memory: then buf lacks some of the text. */
	if (ferror(f) && r == 0)
		r = -ENOMEM;
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0) {
		*text = buf;
		buf = NULL;
	} else if (r == -EIO) {
		dmctl_set_error("device-mapper: the kernel's answer for %s does not parse", name);
	}
out:
	free(buf);
	free(dmi);
	return r;
}

int dmctl_table(const char *name, char **text)
{
	return dmctl_targets_text(true, name, NULL, text);
}

int dmctl_status(const char *name, char **text)
{
	return dmctl_targets_text(false, name, NULL, text);
}

int dmctl_status_of(const char *name, const char *target, char **text)
{
	return dmctl_targets_text(false, name, target, text);
}

int dmctl_message(const char *name, uint64_t sector, const char *msg, char **response)
{
	struct dm_task *dmt = NULL;
	const char *answer;
	int r;

	if (response)
		*response = NULL;
	r = dmctl_task(DM_DEVICE_TARGET_MSG, name, &dmt);
	if (r < 0)
		return r;
	r = -ENOMEM;
	if (!dm_task_set_sector(dmt, sector) || !dm_task_set_message(dmt, msg))
		goto out;
	r = dmctl_run(dmt);
	if (r < 0 || !response)
		goto out;
	answer = dm_task_get_message_response(dmt);
	*response = strdup(answer ? answer : "");
	if (!*response)
		r = -ENOMEM;
out:
	dm_task_destroy(dmt);
	return r;
}
