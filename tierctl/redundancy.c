/* SPDX-License-Identifier: GPL-2.0-or-later */
/* redundancy: whether an SSD tier's device has redundancy (redundancy.h). */
#include "redundancy.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

enum redundancy redundancy_of_md_level(const char *level)
{
	static const char *const redundant[] = { "raid1", "raid4", "raid5", "raid6", "raid10" };
	static const char *const not_redundant[] = { "raid0", "linear" };
	size_t n = strcspn(level, "\n");

	for (size_t i = 0; i < sizeof(redundant) / sizeof(redundant[0]); i++)
		if (strlen(redundant[i]) == n && !strncmp(level, redundant[i], n))
			return REDUNDANCY_YES;
	for (size_t i = 0; i < sizeof(not_redundant) / sizeof(not_redundant[0]); i++)
		if (strlen(not_redundant[i]) == n && !strncmp(level, not_redundant[i], n))
			return REDUNDANCY_NONE;
	return REDUNDANCY_UNKNOWN;
}

static bool has_slaves(const char *sysfs)
{
	char path[PATH_MAX + 8];
	struct dirent *e;
	bool any = false;
	DIR *d;

	snprintf(path, sizeof(path), "%s/slaves", sysfs);
	d = opendir(path);
	if (!d)
		return false;
	while (!any && (e = readdir(d)))
		any = e->d_name[0] != '.';
	closedir(d);
	return any;
}

enum redundancy redundancy_of(const char *path)
{
	char sysfs[PATH_MAX], level_path[PATH_MAX + 16], level[32];
	struct stat st;
	FILE *f;

	if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode))
		return REDUNDANCY_UNKNOWN;
	snprintf(sysfs, sizeof(sysfs), "/sys/dev/block/%u:%u", major(st.st_rdev),
		 minor(st.st_rdev));
	snprintf(level_path, sizeof(level_path), "%s/md/level", sysfs);
	f = fopen(level_path, "re");
	if (f) {
		enum redundancy r = fgets(level, sizeof(level), f) ? redundancy_of_md_level(level) :
								       REDUNDANCY_UNKNOWN;

		fclose(f);
		return r;
	}
	/* A disk or a partition is one device; anything built on others may mirror them. */
	return has_slaves(sysfs) ? REDUNDANCY_UNKNOWN : REDUNDANCY_NONE;
}

void redundancy_warn_ssd(const char *ssd)
{
	switch (redundancy_of(ssd)) {
	case REDUNDANCY_YES:
		return;
	case REDUNDANCY_NONE:
		fprintf(stderr,
			"tierctl: warning: the SSD tier holds the only copy of the extents tierd moves to"
			" it, and %s has no redundancy: if it fails, they are lost (the rest of the"
			" volume stays readable, see 'tierctl pool activate --help'). Put md RAID1 or"
			" RAID10 under the SSD tier to keep them.\n",
			ssd);
		return;
	case REDUNDANCY_UNKNOWN:
		fprintf(stderr,
			"tierctl: note: the SSD tier holds the only copy of the extents tierd moves to"
			" it; tierctl cannot tell whether %s has redundancy. md RAID1 or RAID10 under"
			" the SSD tier keeps a failed SSD from losing them.\n",
			ssd);
		return;
	}
}
