#include "dmctl.h"

#include <errno.h>
#include <libdevmapper.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char last_error[256];

/* libdevmapper reports failures only through its log hook. */
__attribute__((format(printf, 5, 0)))
static void dmctl_log(int level, const char *file, int line, int dm_errno_or_class,
		      const char *fmt, ...)
{
	va_list ap;

	if ((level & 7) > 3) /* keep errors, drop warnings, notices and debug */
		return;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

void dmctl_init(void)
{
	last_error[0] = '\0';
	dm_log_with_errno_init(dmctl_log);
}

const char *dmctl_last_error(void)
{
	return last_error;
}

static int dmctl_available(void)
{
	/* Without this check libdevmapper tries to create the node itself. */
	if (access("/dev/mapper/control", R_OK | W_OK) != 0)
		return errno == ENOENT ? -ENODEV : -errno;
	return 0;
}

int dmctl_driver_version(char *buf, size_t len)
{
	int r = dmctl_available();

	if (r < 0)
		return r;
	if (!dm_driver_version(buf, len))
		return -ENODEV;
	return 0;
}

int dmctl_library_version(char *buf, size_t len)
{
	return dm_get_library_version(buf, len) ? 0 : -EIO;
}

int dmctl_target_version(const char *target, struct dmctl_version *out)
{
	struct dm_task *dmt = NULL;
	struct dm_versions *v;
	int r = dmctl_available();

	if (r < 0)
		return r;
	dmt = dm_task_create(DM_DEVICE_GET_TARGET_VERSION);
	if (!dmt)
		return -ENOMEM;
	r = -EINVAL;
	if (!dm_task_set_name(dmt, target))
		goto out;
	r = -ENOENT;
	if (!dm_task_run(dmt))
		goto out;
	v = dm_task_get_versions(dmt);
	if (!v || strcmp(v->name, target) != 0)
		goto out;
	out->major = v->version[0];
	out->minor = v->version[1];
	out->patch = v->version[2];
	r = 0;
out:
	dm_task_destroy(dmt);
	return r;
}
