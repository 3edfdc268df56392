/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmstatus: the parts of a device-mapper status (`dmsetup status`) tierd reads. */
#ifndef TIERD_DMSTATUS_H
#define TIERD_DMSTATUS_H

#include <stddef.h>
#include <stdint.h>

#define DMSTATUS_MAX_LEGS 8

/* One `mirror` target: "START LEN mirror 2 7:0 7:1 8/8 1 AA 1 core". */
struct dmstatus_mirror {
	uint64_t start, len; /* sectors */
	uint64_t in_sync, regions;
	unsigned nr_legs;
	/* Per leg: 'A' alive and in sync, 'D' dead (a write failed), 'S' sync
	 * failure, 'R' read failure, 'U' unclassified. */
	char health[DMSTATUS_MAX_LEGS + 1];
};

/*
 * The mirror targets of a status text, in order; other targets are skipped.
 * -EINVAL for a malformed mirror line, -ENOSPC for more than cap of them.
 */
int dmstatus_mirrors(const char *text, struct dmstatus_mirror *out, size_t cap, size_t *nr);

/* Copied completely: every region in sync and every leg alive. */
int dmstatus_mirror_synced(const struct dmstatus_mirror *m);
/* A leg failed: the copy cannot complete. */
int dmstatus_mirror_failed(const struct dmstatus_mirror *m);

#endif
