/* SPDX-License-Identifier: GPL-2.0-or-later */
/* policies: the policy files of the policy folders, and the built-in auto. */
#include "tiering.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "tiering-internal.h"

/* A policy file is a few lines; anything larger is not one. */
#define TIERING_POLICY_FILE_MAX 65536

static int read_small_file(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;
	char *buf = NULL;
	size_t n = 0;
	ssize_t got;

	if (fd < 0)
		return -errno;
	buf = malloc(TIERING_POLICY_FILE_MAX + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	while ((got = read(fd, buf + n, TIERING_POLICY_FILE_MAX + 1 - n)) > 0) {
		n += (size_t)got;
		if (n > TIERING_POLICY_FILE_MAX) {
			r = -EFBIG;
			goto out;
		}
	}
	if (got < 0)
		r = -errno;
out:
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*text = buf;
	*len = n;
	return 0;
}

static int policy_load_file(const char *path, const char *name, struct policy *out, char *err,
			    size_t err_len)
{
	char why[256];
	char *text = NULL;
	size_t len = 0;
	int r = read_small_file(path, &text, &len);

	if (r < 0)
		return r == -ENOENT ? r :
				      errbuf_fail(r, err, err_len, "%s: %s", path,
						  r == -EFBIG ? "too large for a policy file" : strerror(-r));
	r = policy_parse(name, text, len, out, why, sizeof(why));
	free(text);
	if (r < 0)
		return errbuf_fail(r, err, err_len, "%s: %s", path, why);
	return 0;
}

int tierings_load_policy(struct tierings *ts, const char *name, struct policy *out, char *path,
			 size_t path_len, char *err, size_t err_len)
{
	char looked[512] = "";

	if (!policy_name_valid(name))
		return errbuf_fail(-EINVAL, err, err_len,
				   "bad policy name '%s': use 1 to 63 of a-z 0-9 _ -, not starting with -",
				   name);
	for (size_t i = 0; i < ts->nr_dirs; i++) {
		int r;

		snprintf(path, path_len, "%s/%s.policy", ts->dirs[i], name);
		r = policy_load_file(path, name, out, err, err_len);
		if (r != -ENOENT)
			return r;
		snprintf(looked + strlen(looked), sizeof(looked) - strlen(looked), "%s%s",
			 looked[0] ? ", " : "", ts->dirs[i]);
	}
	path[0] = '\0';
	if (strcmp(name, "auto") == 0) {
		policy_default(out);
		return 0;
	}
	return errbuf_fail(-ENOENT, err, err_len,
			   "no policy named %s (looked in %s); see tierctl policy list", name,
			   looked[0] ? looked : "no folder");
}

static int listed(const struct tiering_policies_report *r, const char *name)
{
	for (size_t i = 0; i < r->nr; i++)
		if (strcmp(r->v[i].policy.name, name) == 0)
			return 1;
	return 0;
}

static int policies_add(struct tiering_policies_report *r, size_t *cap, const struct policy *pol,
			const char *path)
{
	if (r->nr == *cap) {
		size_t want = *cap ? *cap * 2 : 8;
		struct tiering_policy_report *grown = realloc(r->v, want * sizeof(*r->v));

		if (!grown)
			return -ENOMEM;
		r->v = grown;
		*cap = want;
	}
	r->v[r->nr].policy = *pol;
	snprintf(r->v[r->nr].path, sizeof(r->v[r->nr].path), "%s", path);
	r->nr++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct tiering_policy_report *x = a, *y = b;

	return strcmp(x->policy.name, y->policy.name);
}

/* One folder's files, those of a name already listed left out: the folder order decides. */
static int policies_of_dir(struct tierings *ts, const char *dir, struct tiering_policies_report *r,
			   size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct policy pol;
	char path[PATH_MAX], err[512];
	int ret = 0;

	if (!d)
		return 0;
	while (ret == 0 && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char name[POLICY_NAME_MAX];

		if (len <= 7 || len - 7 >= sizeof(name) ||
		    strcmp(e->d_name + len - 7, ".policy") != 0)
			continue;
		memcpy(name, e->d_name, len - 7);
		name[len - 7] = '\0';
		if (!policy_name_valid(name) || listed(r, name))
			continue;
		/* The file in force may be another folder's, earlier in the order. */
		if (tierings_load_policy(ts, name, &pol, path, sizeof(path), err,
					 sizeof(err)) < 0) {
			log_warn("policy %s: %s", name, err);
			continue;
		}
		ret = policies_add(r, cap, &pol, path);
	}
	closedir(d);
	return ret;
}

int tierings_report_policies(struct tierings *ts, struct tiering_policies_report *out)
{
	struct tiering_policies_report r = { 0 };
	struct policy pol;
	size_t cap = 0;
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < ts->nr_dirs; i++)
		ret = policies_of_dir(ts, ts->dirs[i], &r, &cap);
	if (ret == 0 && !listed(&r, "auto")) {
		policy_default(&pol);
		ret = policies_add(&r, &cap, &pol, "");
	}
	if (ret < 0) {
		tiering_policies_report_destroy(&r);
		*out = r;
		return ret;
	}
	if (r.nr)
		qsort(r.v, r.nr, sizeof(*r.v), by_name);
	*out = r;
	return 0;
}

void tiering_policies_report_destroy(struct tiering_policies_report *r)
{
	if (!r)
		return;
	free(r->v);
	r->v = NULL;
	r->nr = 0;
}
