/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "iostats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dmctl.h"

/* Measured in drivers/md/dm-stats.c (6.1): struct dm_stat_shared plus one
 * struct dm_stat_percpu per possible CPU, rounded up. */
#define IOSTATS_SHARED_BYTES 120u
#define IOSTATS_PERCPU_BYTES 104u

static unsigned possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned first, last, n = 0;
	char sep;
	int r;

	if (!f)
		return (unsigned)sysconf(_SC_NPROCESSORS_CONF);
	/* A list of ranges: "0-3", "0", "0-1,4-7". */
	while ((r = fscanf(f, "%u", &first)) == 1) {
		last = first;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
			if (fscanf(f, "%u", &last) != 1)
				break;
			if (fscanf(f, "%c", &sep) != 1)
				sep = '\n';
		}
		n += last - first + 1;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n ? n : (unsigned)sysconf(_SC_NPROCESSORS_CONF);
}

uint64_t iostats_kernel_bytes_per_area(void)
{
	return IOSTATS_SHARED_BYTES + (uint64_t)IOSTATS_PERCPU_BYTES * possible_cpus();
}

int iostats_region_delete(const char *name, uint64_t region_id)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "@stats_delete %" PRIu64, region_id);
	return dmctl_message(name, 0, msg, NULL);
}

/* Send a @stats_create; the reply is the new region's id. */
static int region_create(const char *name, const char *msg, uint64_t *region_id)
{
	char *reply = NULL;
	int r = dmctl_message(name, 0, msg, &reply);

	if (r == 0 && sscanf(reply, "%" SCNu64, region_id) != 1)
		r = -EIO;
	free(reply);
	return r;
}

/*
 * Delete tierd's regions on name but the first over [0, size_sectors) with
 * areas of area_sectors (none for size_sectors 0): 1 and its id in *kept
 * when there was one, else 0; -errno when they cannot be listed.
 */
static int regions_delete_but(const char *name, uint64_t size_sectors, uint64_t area_sectors,
			      uint64_t *kept)
{
	char *list = NULL, *line, *save = NULL;
	int found = 0, r;

	r = dmctl_message(name, 0, "@stats_list " IOSTATS_PROGRAM_ID, &list);
	if (r < 0)
		return r;
	/* "ID: START+LEN STEP PROGRAM AUX", one line per region of ours. */
	for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t id, start, len, step;

		if (sscanf(line, "%" SCNu64 ": %" SCNu64 "+%" SCNu64 " %" SCNu64, &id, &start, &len,
			   &step) != 4)
			continue;
		if (!found && size_sectors && start == 0 && len == size_sectors &&
		    step == area_sectors) {
			*kept = id;
			found = 1;
		} else {
			iostats_region_delete(name, id);
		}
	}
	free(list);
	return found;
}

int iostats_region_open(const char *name, uint64_t size_sectors, uint64_t area_sectors,
			uint64_t *region_id)
{
	char msg[96];
	int r = regions_delete_but(name, size_sectors, area_sectors, region_id);

	if (r != 0)
		return r < 0 ? r : 0;
	snprintf(msg, sizeof(msg), "@stats_create - %" PRIu64 " " IOSTATS_PROGRAM_ID, area_sectors);
	return region_create(name, msg, region_id);
}

int iostats_regions_delete(const char *name)
{
	int r = regions_delete_but(name, 0, 0, NULL);

	return r < 0 ? r : 0;
}

int iostats_region_create(const char *name, uint64_t start, uint64_t len, uint64_t area_sectors,
			  uint64_t *region_id)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "@stats_create %" PRIu64 "+%" PRIu64 " %" PRIu64 " "
		 IOSTATS_PROGRAM_ID, start, len, area_sectors);
	return region_create(name, msg, region_id);
}

int iostats_sample(const char *name, uint64_t region_id, uint32_t first, uint32_t count,
		   char **text, size_t *len)
{
	char msg[96];
	int r;

	snprintf(msg, sizeof(msg), "@stats_print_clear %" PRIu64 " %" PRIu32 " %" PRIu32, region_id,
		 first, count);
	r = dmctl_message(name, 0, msg, text);
	if (r == 0)
		*len = strlen(*text);
	return r;
}
