/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iostats: a pool volume's dm-stats regions (one over the whole volume, and
 * for heat at two resolutions more over parts of it), created
 * with tierd's own program_id so other users of dm-stats (dmstats) neither
 * see nor clear its counters.
 */
#ifndef TIERD_IOSTATS_H
#define TIERD_IOSTATS_H

#include <stddef.h>
#include <stdint.h>

#define IOSTATS_PROGRAM_ID "tierd"

/*
 * Reuse tierd's region over the whole of dm device name if it has area_sectors
 * areas and covers size_sectors; otherwise delete tierd's regions and create
 * one. Regions survive table reloads but not resizes.
 */
int iostats_region_open(const char *name, uint64_t size_sectors, uint64_t area_sectors,
			uint64_t *region_id);
int iostats_region_delete(const char *name, uint64_t region_id);
/* Delete every region of tierd's on dm device name (its heat is off). */
int iostats_regions_delete(const char *name);
/*
 * A further region of tierd's over sectors [start, start + len) with areas
 * of area_sectors, beside the one iostats_region_open() keeps: dm-stats
 * counts an I/O in every region it falls in.
 */
int iostats_region_create(const char *name, uint64_t start, uint64_t len, uint64_t area_sectors,
			  uint64_t *region_id);
/*
 * The counters of areas [first, first + count) since the previous call
 * (@stats_print_clear clears just those); free() *text. Reading a big region
 * in parts keeps the reply, and tierd's memory, small.
 */
int iostats_sample(const char *name, uint64_t region_id, uint32_t first, uint32_t count,
		   char **text, size_t *len);

/*
 * Kernel memory a region of nr_areas takes: dm-stats keeps per area a shared
 * part and one set of counters per possible CPU (drivers/md/dm-stats.c).
 */
uint64_t iostats_kernel_bytes_per_area(void);

#endif
