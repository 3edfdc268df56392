/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "filemap.h"
#include "member.h"
#include "pincmd.h"
#include "ranges.h"
#include "size.h"
#include "tierview.h"
#include "array.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>


/* Ranges per pin request: 1024 pairs of 20-digit numbers stay under tierd's 64 KiB request limit. */
#define PINCMD_RANGES_PER_REQUEST 1024

struct pincmd_file {
	const char *path;
	struct range *ranges;
	size_t n, cap;
};

static int pincmd_add_range(struct pincmd_file *f, uint64_t start, uint64_t length)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct range *ranges = reallocarray(f->ranges, cap, sizeof(*ranges));

		if (!ranges)
			return -ENOMEM;
		f->ranges = ranges;
		f->cap = cap;
	}
	f->ranges[f->n++] = (struct range){ start, length };
	return 0;
}

/*
 * The pool's volume and extent size, checked to be where path lies: FIEMAP
 * reports places on the filesystem's own device, which are the volume's
 * offsets only when that device is the volume.
 */
static int pincmd_check_volume(struct cli *cli, const char *name, const char *path,
			       const struct stat *file, uint64_t *extent_size)
{
	struct json_object *params, *result = NULL, *pool;
	const char *volume;
	struct stat st;
	int r;

	params = cli_params(name);
	r = cli_call(cli, "pool.show", params, NULL, &result);
	json_object_put(params);
	if (r)
		return r;
	pool = member_get(result, "pool");
	volume = member_string(pool, "dm_device");
	if (member_uint(pool, "extent_size_bytes", extent_size) < 0 || !*extent_size)
		r = cli_output_done(-EINVAL);
	else if (!volume || strcmp(member_string(pool, "state") ? member_string(pool, "state") : "",
				   "active"))
		r = cli_fail("pool %s is not active: no file can be on its volume", name);
	else if (stat(volume, &st) < 0)
		r = cli_fail("%s: %s", volume, strerror(errno));
	else if (!S_ISBLK(st.st_mode) || st.st_rdev != file->st_dev)
		r = cli_fail("%s is on device %u:%u, not on pool %s's volume %s (%u:%u): the file"
			     " must be on a filesystem made directly on the volume", path,
			     major(file->st_dev), minor(file->st_dev), name, volume,
			     major(st.st_rdev), minor(st.st_rdev));
	json_object_put(result);
	return r;
}

/* The ranges of path's data on pool name's volume, whole extents, into f. */
static int pincmd_file_ranges(struct cli *cli, const char *name, struct pincmd_file *f)
{
	struct filemap map = { .path = f->path };
	uint64_t extent_size;
	struct stat st;
	int fd, r;

	fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return cli_fail("%s: %s", f->path, strerror(errno));
	if (fstat(fd, &st) < 0)
		r = cli_fail("%s: %s", f->path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		r = cli_fail("%s is not a regular file", f->path);
	else
		r = pincmd_check_volume(cli, name, f->path, &st, &extent_size);
	if (!r)
		r = filemap_read(&map, fd);
	close(fd);
	for (size_t i = 0; !r && i < map.n; i++)
		if (pincmd_add_range(f, map.v[i].physical, map.v[i].length) < 0)
			r = cli_fail("%s", strerror(ENOMEM));
	if (!r)
		filemap_warn(&map);
	filemap_free(&map);
	if (r)
		return r;
	f->n = ranges_coalesce(f->ranges, f->n, extent_size);
	if (!f->n)
		return cli_fail("%s has no data on the volume", f->path);
	return 0;
}

static int pincmd_parse_size(const char *who, const char *what, const char *text,
			     uint64_t *out)
{
	int r = size_parse(text, out);

	if (r == -ERANGE)
		return cli_usage(who, "%s '%s' is too large", what, text);
	if (r < 0)
		return cli_usage(who, "%s '%s' is not a size such as 4096, 64M, 1.5G or 1T", what,
				 text);
	return CLI_PROCEED;
}

/* The pins after the change: as JSON, or a line saying what changed and the table. */
static int pincmd_print(struct cli *cli, struct json_object *result, const char *done)
{
	struct json_object *pins = member_get(result, "pins");

	if (!json_object_is_type(pins, json_type_array))
		return cli_output_done(-EINVAL);
	if (cli->json)
		return cli_print_json(result);
	if (printf("%s\n\n", done) < 0)
		return cli_output_done(-EIO);
	if (!json_object_array_length(pins))
		return cli_output_done(printf("No pins.\n") < 0 ? -EIO : 0);
	return cli_output_done(tierview_print_pins(stdout, pins));
}

int pincmd_run(struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	const char *tier = NULL, *file = NULL;
	const struct cli_option options[] = {
		CLI_VALUE("file", &file),
		CLI_VALUE("tier", &tier),
	};
	bool pin = !strcmp(cmd->method, "pin.add");
	/* Only pin has --tier: unpin must not take it and ignore it. */
	size_t n_options = pin ? 2 : 1;
	struct pincmd_file f = { 0 };
	struct json_object *result = NULL;
	char size[SIZE_FORMAT_MAX];
	const char *where = "";
	char *done = NULL;
	uint64_t bytes = 0;
	char **args;
	int n_args, r;
	size_t i;

	r = cli_parse(cli, cmd, argc, argv, options, n_options, 1, 3, &args, &n_args);
	if (r != CLI_PROCEED)
		return r;
	if (pin && (!tier || (strcmp(tier, "ssd") && strcmp(tier, "hdd"))))
		return cli_usage(cmd->name, "--tier ssd or --tier hdd is required");
	if (file && n_args > 1)
		return cli_usage(cmd->name, "give either OFFSET LENGTH or --file PATH, not both");
	if (!file && n_args < 3)
		return cli_usage(cmd->name, "missing %s (or --file PATH)",
				 n_args == 1 ? "OFFSET LENGTH" : "LENGTH");

	if (file) {
		f.path = file;
		r = pincmd_file_ranges(cli, args[0], &f);
		if (r)
			goto out;
	} else {
		uint64_t offset, length;

		r = pincmd_parse_size(cmd->name, "OFFSET", args[1], &offset);
		if (r == CLI_PROCEED)
			r = pincmd_parse_size(cmd->name, "LENGTH", args[2], &length);
		if (r != CLI_PROCEED)
			return r;
		if (!length)
			return cli_usage(cmd->name, "LENGTH must be more than 0");
		if (offset + length < offset)
			return cli_usage(cmd->name, "OFFSET + LENGTH is beyond any volume");
		/* tierd rounds out to extents itself; the range goes as typed. */
		r = pincmd_add_range(&f, offset, length);
		if (r < 0) {
			r = cli_fail("%s", strerror(ENOMEM));
			goto out;
		}
	}

	/* One request takes all the ranges or none; only a file in more pieces takes several. */
	for (i = 0; i < f.n; i += PINCMD_RANGES_PER_REQUEST) {
		size_t n = f.n - i < PINCMD_RANGES_PER_REQUEST ? f.n - i : PINCMD_RANGES_PER_REQUEST;
		struct json_object *params = cli_params(args[0]);

		/* One range goes as offset_bytes and size_bytes, the plainer request. */
		if (n == 1) {
			cli_param_uint(&params, "offset_bytes", f.ranges[i].start);
			cli_param_uint(&params, "size_bytes", f.ranges[i].length);
		} else {
			cli_param_ranges(&params, "ranges", &f.ranges[i], n);
		}
		if (pin)
			cli_param_string(&params, "tier", tier);
		json_object_put(result);
		result = NULL;
		r = cli_call(cli, cmd->method, params, NULL, &result);
		json_object_put(params);
		if (r)
			break;
		for (size_t k = i; k < i + n; k++)
			bytes += f.ranges[k].length;
	}
	if (r) {
		/* The earlier requests took effect: say so, so that nobody assumes none did. */
		if (i)
			fprintf(stderr, "tierctl: %s %zu of the %zu ranges of %s before that\n",
				pin ? "pinned" : "unpinned", i, f.n, file);
		goto out;
	}

	if (pin)
		where = strcmp(tier, "ssd") ? " to the HDD tier" : " to the SSD tier";
	if (file)
		r = asprintf(&done, "%s %s of pool %s%s: %zu range%s, %s.",
			     pin ? "Pinned" : "Unpinned", file, args[0], where, f.n,
			     f.n == 1 ? "" : "s",
			     size_format(bytes, size, sizeof(size)));
	else
		r = asprintf(&done, "%s %s at offset %s of pool %s%s.",
			     pin ? "Pinned" : "Unpinned", args[2], args[1], args[0], where);
	if (r < 0) {
		done = NULL;
		r = cli_output_done(-ENOMEM);
		goto out;
	}
	r = pincmd_print(cli, result, done);
out:
	free(done);
	free(f.ranges);
	json_object_put(result);
	return r;
}
