/* dmctl: the kernel's device-mapper, through libdevmapper. */
#ifndef TIERD_DMCTL_H
#define TIERD_DMCTL_H

#include <stddef.h>
#include <stdint.h>

#define DMCTL_VERSION_MAX 64

struct dmctl_version {
	uint32_t major, minor, patch;
};

/* Route libdevmapper's messages into dmctl_last_error() instead of stderr. */
void dmctl_init(void);

/* The last error libdevmapper reported, or "" if none since dmctl_init(). */
const char *dmctl_last_error(void);

/* Kernel driver version as text ("4.47.0"). -ENODEV without device-mapper. */
int dmctl_driver_version(char *buf, size_t len);

/* libdevmapper's own version as text. */
int dmctl_library_version(char *buf, size_t len);

/*
 * Version of one target type. Asking loads the target's module if the kernel
 * can (DM_GET_TARGET_VERSION); -ENOENT if the kernel has no such target.
 */
int dmctl_target_version(const char *target, struct dmctl_version *out);

#endif
