/* SPDX-License-Identifier: GPL-2.0-or-later */
/* policy: what a placement policy asks of the planner, and its file format. */
#ifndef TIERD_POLICY_H
#define TIERD_POLICY_H

#include <stddef.h>
#include <stdint.h>

/*
 * A policy is data, one file per policy (docs/policies.md): the planner
 * (planner.h) is the only code that interprets it.
 */

enum policy_promote {
	POLICY_PROMOTE_HEAT, /* hottest first, only extents at least min_heat hot */
	POLICY_PROMOTE_ALL,  /* fill the SSD, hottest first, cold extents too */
	POLICY_PROMOTE_NONE,
};

enum policy_demote {
	POLICY_DEMOTE_NEEDED, /* only to make room for hotter data or keep the headroom */
	POLICY_DEMOTE_ALL,    /* empty the SSD as far as the HDD has room */
};

#define POLICY_NAME_MAX 64
#define POLICY_DESCRIPTION_MAX 256

/* The ranges policy_valid() and policy_parse() accept. */
#define POLICY_HEADROOM_MAX 0.5
#define POLICY_HYSTERESIS_MIN 1.0
#define POLICY_HYSTERESIS_MAX 100.0
#define POLICY_RESIDENCY_MAX_S (365u * 86400u)
#define POLICY_MIN_HEAT_MAX 1e9

struct policy {
	char name[POLICY_NAME_MAX];
	char description[POLICY_DESCRIPTION_MAX];
	enum policy_promote promote;
	enum policy_demote demote;      /* POLICY_DEMOTE_ALL only with POLICY_PROMOTE_NONE */
	double ssd_headroom;            /* 0..0.5 of the SSD tier kept free for new hot data */
	double hysteresis;              /* 1..100: how many times hotter a waiting extent must be
					   than the SSD extent it would displace */
	uint32_t min_residency_s;       /* an extent moved less than this ago stays (not pins) */
	double min_heat;                /* never promote a colder extent (promote = heat only) */
};

/* The built-in "auto": what a pool uses until told otherwise. */
void policy_default(struct policy *p);

/* 1 if name is [a-z0-9_-]{1,63} and does not start with '-' (it names a file), else 0. */
int policy_name_valid(const char *name);

/* 0 if every field is in range and promote/demote go together, else -EINVAL. */
int policy_valid(const struct policy *p);

/* "heat", "all", "none"; "needed", "all": the words of the file format.  "?" if out of range. */
const char *policy_promote_name(enum policy_promote v);
/* The least heat an extent needs for p to promote it: min_heat under promote = heat, else 0. */
double policy_promote_min_heat(const struct policy *p);
const char *policy_demote_name(enum policy_demote v);

/*
 * Parse the text of a policy file (len bytes, no NUL needed at the end;
 * a NUL inside is an error).  name is the file's base name without
 * ".policy" and becomes p->name.  Keys missing from the file keep their
 * policy_default() value, except description, which is then empty.
 * Returns 0, or -EINVAL with a message such as
 * "line 3: unknown key \"foo\"" in err (truncated to err_len; err may be
 * NULL).  *out is written only on success.
 */
int policy_parse(const char *name, const char *text, size_t len, struct policy *out, char *err,
		 size_t err_len);

#endif
