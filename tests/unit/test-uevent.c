/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernel uevents (lib/uevent.c) as the kernel's netlink socket delivers them. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "uevent.h"

/* sizeof includes the final NUL, which every message ends with. */
#define MSG(s) s, sizeof(s)

static void test_disk_add(void)
{
	static const char msg[] = "add@/devices/pci0000:00/0000:00:04.0/virtio1/block/vdb\0"
				  "ACTION=add\0DEVPATH=/devices/pci0000:00/0000:00:04.0/virtio1/block/vdb\0"
				  "SUBSYSTEM=block\0MAJOR=254\0MINOR=16\0DEVNAME=vdb\0DEVTYPE=disk\0"
				  "DISKSEQ=3\0SEQNUM=1234";
	struct uevent ev;

	CHECK_OK(uevent_parse(MSG(msg), &ev));
	CHECK_STR(ev.action, "add");
	CHECK_STR(ev.subsystem, "block");
	CHECK_STR(ev.devname, "vdb");
	CHECK_STR(ev.devtype, "disk");
	CHECK_STR(ev.devpath, "/devices/pci0000:00/0000:00:04.0/virtio1/block/vdb");
}

static void test_md_change(void)
{
	/* An array becomes usable when assembled: a "change", not an "add". */
	static const char msg[] = "change@/devices/virtual/block/md0\0ACTION=change\0"
				  "DEVPATH=/devices/virtual/block/md0\0SUBSYSTEM=block\0"
				  "DEVNAME=md0\0DEVTYPE=disk\0SEQNUM=77";
	struct uevent ev;

	CHECK_OK(uevent_parse(MSG(msg), &ev));
	CHECK_STR(ev.action, "change");
	CHECK_STR(ev.devname, "md0");
}

static void test_missing_keys(void)
{
	static const char msg[] = "remove@/module/dm_mirror\0ACTION=remove\0DEVPATH=/module/dm_mirror\0"
				  "SUBSYSTEM=module\0SEQNUM=9";
	struct uevent ev;

	CHECK_OK(uevent_parse(MSG(msg), &ev));
	CHECK_STR(ev.subsystem, "module");
	CHECK_STR(ev.devname, "");
	CHECK_STR(ev.devtype, "");
}

static void test_rejected(void)
{
	/* udev's own messages start with "libudev" and a binary header. */
	static const char udev[] = "libudev\0\xfe\xed\xca\xfe";
	static const char no_at[] = "add/devices/x\0ACTION=add\0DEVPATH=/devices/x";
	static const char no_action[] = "add@/devices/x\0DEVPATH=/devices/x\0SUBSYSTEM=block";
	static const char unterminated[] = "add@/devices/x\0ACTION=add\0DEVPATH=/d";
	struct uevent ev;

	CHECK_INT(uevent_parse(MSG(udev), &ev), -EINVAL);
	CHECK_INT(uevent_parse(MSG(no_at), &ev), -EINVAL);
	CHECK_INT(uevent_parse(MSG(no_action), &ev), -EINVAL);
	CHECK_INT(uevent_parse(unterminated, sizeof(unterminated) - 1, &ev), -EINVAL);
	CHECK_INT(uevent_parse("", 0, &ev), -EINVAL);
	CHECK_INT(uevent_parse(MSG("@/x\0ACTION=add\0DEVPATH=/x"), &ev), -EINVAL);
}

int main(void)
{
	test_disk_add();
	test_md_change();
	test_missing_keys();
	test_rejected();
	return 0;
}
