/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "dmstatus.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Parse one mirror line (after "START LEN mirror "). */
static int dmstatus_parse_mirror(const char *args, struct dmstatus_mirror *m)
{
	unsigned nr_legs, nr_health;
	int used;

	if (sscanf(args, "%u%n", &nr_legs, &used) != 1 || nr_legs < 1 || nr_legs > DMSTATUS_MAX_LEGS)
		return -EINVAL;
	args += used;
	for (unsigned i = 0; i < nr_legs; i++) {
		unsigned major, minor;

		if (sscanf(args, " %u:%u%n", &major, &minor, &used) != 2)
			return -EINVAL;
		args += used;
	}
	if (sscanf(args, " %" SCNu64 "/%" SCNu64 " %u%n", &m->in_sync, &m->regions, &nr_health,
		   &used) != 3 || nr_health != 1 || m->in_sync > m->regions)
		return -EINVAL;
	args += used;
	while (*args == ' ')
		args++;
	if (strspn(args, "ADSRU") != nr_legs || (args[nr_legs] != ' ' && args[nr_legs] != '\0' &&
						 args[nr_legs] != '\n'))
		return -EINVAL;
	memcpy(m->health, args, nr_legs);
	m->health[nr_legs] = '\0';
	m->nr_legs = nr_legs;
	return 0;
}

int dmstatus_mirrors(const char *text, struct dmstatus_mirror *out, size_t cap, size_t *nr)
{
	size_t n = 0;

	if (!text || !nr)
		return -EINVAL;
	while (*text) {
		const char *eol = strchrnul(text, '\n');
		char type[32];
		uint64_t start, len;
		int used, r;

		if (sscanf(text, "%" SCNu64 " %" SCNu64 " %31s%n", &start, &len, type, &used) != 3)
			return -EINVAL;
		if (strcmp(type, "mirror") == 0) {
			char line[512];

			if (n == cap)
				return -ENOSPC;
			if ((size_t)(eol - text) >= sizeof(line))
				return -EINVAL;
			memcpy(line, text, (size_t)(eol - text));
			line[eol - text] = '\0';
			memset(&out[n], 0, sizeof(out[n]));
			out[n].start = start;
			out[n].len = len;
			r = dmstatus_parse_mirror(line + used, &out[n]);
			if (r < 0)
				return r;
			n++;
		}
		text = *eol ? eol + 1 : eol;
	}
	*nr = n;
	return 0;
}

int dmstatus_mirror_synced(const struct dmstatus_mirror *m)
{
	return m->in_sync == m->regions && strspn(m->health, "A") == m->nr_legs;
}

int dmstatus_mirror_failed(const struct dmstatus_mirror *m)
{
	return strspn(m->health, "A") != m->nr_legs;
}
