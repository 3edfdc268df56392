/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tierview: tierd's tiering objects (the schedule, runs, pins; see
 * docs/protocol.md) as text for people, through the table formatter.
 */
#ifndef TIERCTL_TIERVIEW_H
#define TIERCTL_TIERVIEW_H

#include <stdio.h>

struct json_object;

/* Enough for any cell text below. */
#define TIERVIEW_TEXT_MAX 96

/* A member holding tierd's ISO 8601 UTC time, in local time; "-" when null or missing. */
const char *tierview_time(struct json_object *obj, const char *key,
			  char buf[TIERVIEW_TEXT_MAX]);

/* A fraction from 0 to 1 (a member) as "78.5%"; "-" when null or missing. */
const char *tierview_percent(struct json_object *obj, const char *key,
			     char buf[TIERVIEW_TEXT_MAX]);

/* "2026-11-30 01:00:00 (in 25m)", or what stands in for a time when there is none. */
const char *tierview_next_run(struct json_object *schedule, char buf[TIERVIEW_TEXT_MAX]);

/* Pool NAME's schedule object as "Field:  value" lines. */
int tierview_print_schedule(FILE *out, const char *name, struct json_object *schedule);

/* A run object as "Field:  value" lines. */
int tierview_print_run(FILE *out, struct json_object *run);

/* A line per run: ID TRIGGER STARTED DURATION PROMOTED DEMOTED MOVED FAILED RESULT. */
int tierview_print_runs(FILE *out, struct json_object *runs);

/* A line per pinned range: FIRST EXTENT, EXTENTS, OFFSET, LENGTH, TIER. */
int tierview_print_pins(FILE *out, struct json_object *pins);

#endif
