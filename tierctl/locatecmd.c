/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "filemap.h"
#include "fileplace.h"
#include "locatecmd.h"
#include "member.h"
#include "ranges.h"
#include "size.h"
#include "table.h"
#include "array.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Ranges per request, as for pins: 1024 pairs stay well under tierd's 64 KiB request limit. */
#define LOCATECMD_RANGES_PER_REQUEST 1024

static const char *const locatecmd_tiers[] = { "hdd", "ssd" };

/* The active pool whose volume is dev, into *pool, borrowed from *pools (the caller puts it). */
static int locatecmd_find_pool(struct cli *cli, const char *path, dev_t dev,
			       struct json_object **pools, struct json_object **pool)
{
	struct json_object *list, *params = cli_params(NULL);
	int r = cli_call(cli, "pool.list", params, NULL, pools);

	json_object_put(params);
	if (r)
		return r;
	list = member_get(*pools, "pools");
	if (!json_object_is_type(list, json_type_array))
		return cli_output_done(-EINVAL);
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		struct json_object *p = json_object_array_get_idx(list, i);
		const char *volume = member_string(p, "dm_device");
		struct stat st;

		if (volume && stat(volume, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev) {
			*pool = p;
			return 0;
		}
	}
	return cli_fail("%s is on device %u:%u, which is no active pool's volume: the file must be"
			" on a filesystem made directly on the volume", path, major(dev), minor(dev));
}

/* The runs of the reply into runs (room for all), borrowing its strings. */
static int locatecmd_take_runs(struct json_object *result, struct fileplace_run **runs,
			       size_t *nr)
{
	struct json_object *list = member_get(member_get(result, "locate"), "runs");
	size_t n = json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
	struct fileplace_run *v;

	if (!list || !json_object_is_type(list, json_type_array))
		return -EINVAL;
	v = reallocarray(*runs, *nr + n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	*runs = v;
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(list, i);
		struct fileplace_run *run = &v[(*nr)++];
		const char *tier = member_string(o, "tier");

		*run = (struct fileplace_run){ .tier = FILEPLACE_NOWHERE };
		if (member_uint(o, "offset_bytes", &run->offset) < 0 ||
		    member_uint(o, "size_bytes", &run->length) < 0)
			return -EINVAL;
		if (!tier)
			continue;
		run->tier = !strcmp(tier, "ssd") ? FILEPLACE_SSD : FILEPLACE_HDD;
		run->device = member_string(o, "device");
		if (!run->device || member_uint(o, "device_offset_bytes", &run->device_offset) < 0)
			return -EINVAL;
	}
	return 0;
}

/* Where the ranges lie, asked in requests of at most LOCATECMD_RANGES_PER_REQUEST. */
static int locatecmd_runs(struct cli *cli, const char *name, const struct range *ranges, size_t n,
			  struct json_object *replies, struct fileplace_run **runs, size_t *nr)
{
	int r = 0;

	for (size_t i = 0; !r && i < n; i += LOCATECMD_RANGES_PER_REQUEST) {
		size_t k = n - i < LOCATECMD_RANGES_PER_REQUEST ? n - i : LOCATECMD_RANGES_PER_REQUEST;
		struct json_object *params = cli_params(name), *result = NULL;

		cli_param_ranges(&params, "ranges", &ranges[i], k);
		r = cli_call(cli, "pool.locate", params, NULL, &result);
		json_object_put(params);
		if (r)
			break;
		json_object_array_add(replies, result);
		r = locatecmd_take_runs(result, runs, nr);
		if (r < 0)
			r = cli_output_done(r);
	}
	return r;
}

static struct json_object *locatecmd_row_json(const struct fileplace_row *row)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "file_offset_bytes", json_object_new_uint64(row->file_offset));
	json_object_object_add(o, "size_bytes", json_object_new_uint64(row->length));
	json_object_object_add(o, "volume_offset_bytes", json_object_new_uint64(row->volume_offset));
	json_object_object_add(o, "tier", row->tier == FILEPLACE_NOWHERE ? NULL :
			       json_object_new_string(locatecmd_tiers[row->tier]));
	json_object_object_add(o, "device", row->device ? json_object_new_string(row->device) : NULL);
	json_object_object_add(o, "device_offset_bytes", row->tier == FILEPLACE_NOWHERE ? NULL :
			       json_object_new_uint64(row->device_offset));
	return o;
}

/* The locate object: the file, its pool, its rows and its bytes per tier. */
static struct json_object *locatecmd_json(const char *path, const char *pool,
					  const struct filemap *map,
					  const struct fileplace_row *rows, long n)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	struct json_object *tiers = json_object_new_object();
	uint64_t bytes[3] = { 0 }; /* hdd, ssd, nowhere */

	for (long i = 0; i < n; i++) {
		json_object_array_add(a, locatecmd_row_json(&rows[i]));
		bytes[rows[i].tier == FILEPLACE_NOWHERE ? 2 : rows[i].tier] += rows[i].length;
	}
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "pool", json_object_new_string(pool));
	json_object_object_add(o, "pieces", a);
	json_object_object_add(tiers, "ssd_bytes", json_object_new_uint64(bytes[FILEPLACE_SSD]));
	json_object_object_add(tiers, "hdd_bytes", json_object_new_uint64(bytes[FILEPLACE_HDD]));
	json_object_object_add(tiers, "unmapped_bytes", json_object_new_uint64(bytes[2]));
	json_object_object_add(o, "tiers", tiers);
	json_object_object_add(o, "unplaced_bytes",
			       json_object_new_uint64(map->nowhere_bytes + map->packed_bytes));
	return o;
}

static int locatecmd_print(FILE *out, struct json_object *loc)
{
	static const struct table_column columns[] = {
		{ "File offset", "file_offset_bytes", TABLE_BYTES },
		{ "Length", "size_bytes", TABLE_BYTES },
		{ "Volume offset", "volume_offset_bytes", TABLE_BYTES },
		{ "Tier", "tier", TABLE_STRING },
		{ "Device", "device", TABLE_STRING },
		{ "Device offset", "device_offset_bytes", TABLE_BYTES },
	};
	struct json_object *rows = member_get(loc, "pieces"), *tiers = member_get(loc, "tiers");
	static const char *const keys[] = { "ssd_bytes", "hdd_bytes", "unmapped_bytes" };
	static const char *const names[] = { "SSD", "HDD", "unmapped" };
	uint64_t bytes[3] = { 0 }, all = 0;
	char size[SIZE_FORMAT_MAX];
	struct table *t = NULL;
	int r;

	for (int i = 0; i < 3; i++) {
		member_uint(tiers, keys[i], &bytes[i]);
		all += bytes[i];
	}
	if (fprintf(out, "%s on pool %s: %s in %zu piece%s.\n\n", member_string(loc, "path"),
		    member_string(loc, "pool"), size_format(all, size, sizeof(size)),
		    json_object_array_length(rows), json_object_array_length(rows) == 1 ? "" : "s") < 0)
		return -EIO;
	r = table_new(columns, ARRAY_SIZE(columns), &t);
	for (size_t i = 0; r == 0 && i < json_object_array_length(rows); i++)
		r = table_add_members(t, json_object_array_get_idx(rows, i), ARRAY_SIZE(columns));
	if (r == 0 && json_object_array_length(rows))
		r = table_print(t, out);
	table_free(t);
	if (r < 0)
		return r;
	fputc('\n', out);
	for (int i = 0; i < 3; i++)
		if (i < 2 || bytes[i])
			fprintf(out, "%-9s %s (%.1f%%)\n", names[i],
				size_format(bytes[i], size, sizeof(size)),
				all ? 100.0 * (double)bytes[i] / (double)all : 0.0);
	return ferror(out) ? -EIO : 0;
}

int locatecmd_run(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	struct json_object *pools = NULL, *pool = NULL, *replies = json_object_new_array();
	struct json_object *result = NULL;
	struct fileplace_run *runs = NULL;
	struct fileplace_row *rows = NULL;
	struct range *ranges = NULL;
	struct filemap map = { 0 };
	uint64_t extent_size = 0;
	size_t nr_runs = 0;
	struct stat st;
	char **args;
	int n_args, fd = -1, r;
	long n = 0;

	r = cli_parse(cli, cmd, argc, argv, NULL, 0, 1, 1, &args, &n_args);
	if (r != CLI_PROCEED)
		goto out;
	r = 0;
	map.path = args[0];
	fd = open(args[0], O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = cli_fail("%s: %s", args[0], strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0)
		r = cli_fail("%s: %s", args[0], strerror(errno));
	else if (!S_ISREG(st.st_mode))
		r = cli_fail("%s is not a regular file", args[0]);
	if (!r)
		r = locatecmd_find_pool(cli, args[0], st.st_dev, &pools, &pool);
	/* The name the JSON contract gives it, or the one before. */
	if (!r && member_uint(pool, "extent_size_bytes", &extent_size) < 0)
		member_uint(pool, "extent_size", &extent_size);
	if (!r && !extent_size)
		r = cli_output_done(-EINVAL);
	if (!r)
		r = filemap_read(&map, fd);
	if (r)
		goto out;
	filemap_warn(&map);
	ranges = calloc(map.n ? map.n : 1, sizeof(*ranges));
	if (!ranges || !replies) {
		r = cli_fail("%s", strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < map.n; i++)
		ranges[i] = (struct range){ map.v[i].physical, map.v[i].length };
	r = locatecmd_runs(cli, member_string(pool, "name"), ranges,
			   ranges_coalesce(ranges, map.n, extent_size), replies, &runs, &nr_runs);
	if (r)
		goto out;
	n = fileplace_rows(map.v, map.n, runs, nr_runs, &rows);
	if (n < 0) {
		r = cli_fail("%s", strerror(ENOMEM));
		goto out;
	}
	result = json_object_new_object();
	json_object_object_add(result, "locate", locatecmd_json(args[0], member_string(pool, "name"),
								 &map, rows, n));
	if (cli->json)
		r = cli_print_json(result);
	else
		r = cli_output_done(locatecmd_print(stdout, member_get(result, "locate")));
out:
	if (fd >= 0)
		close(fd);
	free(rows);
	free(runs);
	free(ranges);
	filemap_free(&map);
	json_object_put(result);
	json_object_put(replies);
	json_object_put(pools);
	return r;
}
