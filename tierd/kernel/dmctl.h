/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmctl: the kernel's device-mapper, through libdevmapper. */
#ifndef TIERD_DMCTL_H
#define TIERD_DMCTL_H

#include <stddef.h>
#include <stdint.h>

#define DMCTL_VERSION_MAX 64

struct dmctl_version {
	uint32_t major, minor, patch;
};

/* One line of a table. Positions and lengths are 512-byte sectors. */
struct dmctl_target {
	uint64_t start, len;
	const char *type;   /* "linear", "mirror", "error", ... */
	const char *params; /* as `dmsetup table` shows them; NULL means "" */
};

struct dmctl_info {
	int exists;
	int suspended;
	int live_table;
	int inactive_table;
	uint32_t open_count;
	uint32_t major, minor;
	uint64_t size_sectors; /* of the live table, 0 without one */
};

/*
 * Route libdevmapper's messages into dmctl_last_error() instead of stderr,
 * and turn udev synchronisation off: libdevmapper then creates and removes
 * the /dev/mapper nodes itself (tierd does not depend on udev rules).
 */
void dmctl_init(void);

/* The last error libdevmapper (or dmctl) reported, or "" if none since dmctl_init(). */
const char *dmctl_last_error(void);
/* The reason to give for r: what libdevmapper said if anything, else strerror(-r). */
const char *dmctl_error_text(int r);

/*
 * Device-mapper events without a waiting thread: *fd polls readable once any
 * device raised an event (a mirror got in sync or lost a leg, ...) since the
 * descriptor was last armed.  dmctl_events_open() arms it; after it polls
 * readable, dmctl_events_arm() again *before* looking at what changed, so
 * an event in between is not lost.  Close it with close().  -ENODEV without
 * device-mapper; -ENOTTY from a kernel without DM_DEV_ARM_POLL (before 4.13).
 */
int dmctl_events_open(int *fd);
int dmctl_events_arm(int fd);

/* Kernel driver version as text ("4.47.0"). -ENODEV without device-mapper. */
int dmctl_driver_version(char *buf, size_t len);

/* libdevmapper's own version as text. */
int dmctl_library_version(char *buf, size_t len);

/*
 * Version of one target type. Asking loads the target's module if the kernel
 * can (DM_GET_TARGET_VERSION); -ENOENT if the kernel has no such target.
 */
int dmctl_target_version(const char *target, struct dmctl_version *out);

/*
 * Errors of the device functions below, besides those listed with each:
 * -ENODEV without device-mapper, -ENXIO if there is no device NAME, -EINVAL
 * for a name, uuid or target type libdevmapper refuses (too long...).
 */

/*
 * Create NAME (uuid may be NULL), load the table and resume: the device and
 * /dev/mapper/NAME exist on return. On failure nothing is left behind.
 * -EEXIST if the name or uuid is taken, -EINVAL if the kernel rejects the
 * table, -EBUSY if a device in it is held exclusively by someone else,
 * -E2BIG if the table takes over 1 GiB in the ioctl.
 */
int dmctl_create(const char *name, const char *uuid, const struct dmctl_target *t, size_t nr);

/*
 * Load a table into the inactive slot; I/O keeps using the live one until
 * dmctl_resume(). Errors as for dmctl_create().
 */
int dmctl_load(const char *name, const struct dmctl_target *t, size_t nr);

/* Drop the inactive table, if any. */
int dmctl_clear(const char *name);

/*
 * Suspend: queue new I/O and wait for I/O in flight. flush == 0 is noflush
 * (I/O the target holds, e.g. a mirror in recovery, is requeued rather than
 * completed). Filesystems are never frozen: a remap needs no fs freeze.
 */
int dmctl_suspend(const char *name, int flush);

/*
 * Swap in the inactive table, if any, and resume I/O. -EINVAL if the kernel
 * rejects the new table at the swap (e.g. a device shorter than its target);
 * the old table then stays live.
 */
int dmctl_resume(const char *name);

/*
 * Remove NAME. -EBUSY while it is open, unless force: then, as dmsetup
 * remove --force does, the table is first replaced with `error` (pending
 * and new I/O fail, the devices it mapped are released), and if it is still
 * open the kernel removes it at the last close (the name stays taken until
 * then).
 */
int dmctl_remove(const char *name, int force);

/* info->exists = 0 and 0 returned if there is no device NAME. */
int dmctl_info(const char *name, struct dmctl_info *info);

/* The device's uuid, "" if it has none. -ERANGE if len is too small. */
int dmctl_uuid(const char *name, char *buf, size_t len);

/*
 * The live table / status as `dmsetup table` / `dmsetup status` print them:
 * "START LEN TYPE PARAMS\n" per target, "" without a live table. free() *text.
 * -E2BIG if the kernel's answer would take over 1 GiB.
 */
int dmctl_table(const char *name, char **text);
int dmctl_status(const char *name, char **text);
/*
 * The status of NAME's targets of one type only: the kernel still reports
 * them all, but a table of thousands of linear targets and a few mirrors
 * is not formatted and parsed whole to find the mirrors.
 */
int dmctl_status_of(const char *name, const char *target, char **text);

/*
 * Send a target message (e.g. "@stats_list") to the target at sector. If
 * response is not NULL, *response is the kernel's answer ("" if none);
 * free() it. -EINVAL if the target refuses the message.
 */
int dmctl_message(const char *name, uint64_t sector, const char *msg, char **response);

#endif
