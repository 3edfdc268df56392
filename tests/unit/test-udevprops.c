/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * udevprops (udev/udevprops.c), then tierd-probe itself (its path is argv[1])
 * on superblock images written by metadata_sb_encode(): what it prints and
 * how it exits, as udev's IMPORT{program} sees it.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "crc32c.h"
#include "metadata.h"
#include "udevprops.h"

#define MiB (UINT64_C(1) << 20)

#define CRC_OFF 12
#define NAME_OFF 48

extern char **environ;

static const uint8_t pool_uuid[16] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
				       0x0f, 0xed, 0xcb, 0xa9, 0x87, 0x65, 0x43, 0x21 };

static const char tank_props[] =
	"ID_FS_TYPE=tierd_member\n"
	"ID_FS_USAGE=raid\n"
	"ID_FS_VERSION=1\n"
	"ID_FS_UUID=12345678-9abc-def0-0fed-cba987654321\n"
	"ID_FS_UUID_ENC=12345678-9abc-def0-0fed-cba987654321\n"
	"ID_FS_UUID_SUB=d1d1d1d1-d1d1-d1d1-d1d1-d1d1d1d1d1d1\n"
	"ID_FS_UUID_SUB_ENC=d1d1d1d1-d1d1-d1d1-d1d1-d1d1d1d1d1d1\n"
	"ID_FS_LABEL=tank\n"
	"ID_FS_LABEL_ENC=tank\n"
	"TIERD_POOL_NAME=tank\n";

static char dir[] = "/tmp/test-udevprops.XXXXXX";

static void make_sb(struct metadata_sb *sb, const char *name)
{
	memset(sb, 0, sizeof(*sb));
	CHECK_OK(metadata_layout(sb, 64 * MiB, 512, 4 * MiB, 1024, 0));
	memcpy(sb->pool_uuid, pool_uuid, 16);
	memset(sb->dev_uuid, 0xd1, 16);
	strcpy(sb->pool_name, name);
}

static void make_block(unsigned char block[METADATA_BLOCK], const char *name)
{
	struct metadata_sb sb;

	make_sb(&sb, name);
	CHECK_OK(metadata_sb_encode(&sb, block));
}

/* A correct crc again after a deliberate edit, so the edit is what decode sees. */
static void reseal(unsigned char block[METADATA_BLOCK])
{
	uint32_t crc;

	memset(block + CRC_OFF, 0, 4);
	crc = htole32(crc32c(0, block, METADATA_BLOCK));
	memcpy(block + CRC_OFF, &crc, 4);
}

static void test_encode(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "tank", "tank" },
		/* blkid's whitelist passes as it is. */
		{ "a#+-.:=@_Z9", "a#+-.:=@_Z9" },
		{ "my pool", "my\\x20pool" },
		{ "a\\b/c\n", "a\\x5cb\\x2fc\\x0a" },
		{ "\xc3\xa9", "\\xc3\\xa9" },
		{ "", "" },
	};
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(udevprops_encode(cases[i].in, out, sizeof(out)), (int)strlen(cases[i].out));
		CHECK_STR(out, cases[i].out);
	}

	/* Exactly enough room, then one byte less, for plain and escaped bytes. */
	CHECK_INT(udevprops_encode("ab", out, 3), 2);
	CHECK_INT(udevprops_encode("ab", out, 2), -ENOSPC);
	CHECK_INT(udevprops_encode("a b", out, 7), 6);
	CHECK_INT(udevprops_encode("a b", out, 6), -ENOSPC);
	CHECK_INT(udevprops_encode("", out, 0), -ENOSPC);
}

static void test_format(void)
{
	struct metadata_sb sb;
	char out[UDEVPROPS_MAX];

	make_sb(&sb, "tank");
	CHECK_INT(udevprops_format(&sb, out, sizeof(out)), (int)strlen(tank_props));
	CHECK_STR(out, tank_props);
	/* One byte short of the text and its NUL. */
	CHECK_INT(udevprops_format(&sb, out, strlen(tank_props)), -ENOSPC);
	CHECK_INT(udevprops_format(&sb, out, strlen(tank_props) + 1), (int)strlen(tank_props));

	/* The longest name fits UDEVPROPS_MAX. */
	memset(sb.pool_name, 'n', METADATA_NAME_MAX);
	sb.pool_name[METADATA_NAME_MAX] = '\0';
	CHECK(udevprops_format(&sb, out, sizeof(out)) > 0);

	/* A newline in a name would be a property of its own: refused. */
	strcpy(sb.pool_name, "tank\nSYSTEMD_WANTS=x");
	CHECK_INT(udevprops_format(&sb, out, sizeof(out)), -EINVAL);
	strcpy(sb.pool_name, "my pool");
	CHECK_INT(udevprops_format(&sb, out, sizeof(out)), -EINVAL);
}

static void test_probe_block(void)
{
	static const char newer[] = "ID_FS_TYPE=tierd_member\nID_FS_USAGE=raid\nID_FS_VERSION=7\n";
	unsigned char block[METADATA_BLOCK];
	char out[UDEVPROPS_MAX];

	make_block(block, "tank");
	CHECK_INT(udevprops_probe(block, sizeof(block), out, sizeof(out)), (int)strlen(tank_props));
	CHECK_STR(out, tank_props);
	CHECK_INT(udevprops_probe(block, sizeof(block) - 1, out, sizeof(out)), -ENODATA);
	block[100] ^= 1;
	CHECK_INT(udevprops_probe(block, sizeof(block), out, sizeof(out)), -EBADMSG);
	make_block(block, "tank");
	block[0] = 'X';
	CHECK_INT(udevprops_probe(block, sizeof(block), out, sizeof(out)), -ENOENT);
	/* A newer tierd's superblock, intact: a member, of a version this one cannot read. */
	make_block(block, "tank");
	block[8] = 7;
	reseal(block);
	CHECK_INT(udevprops_probe(block, sizeof(block), out, sizeof(out)), (int)strlen(newer));
	CHECK_STR(out, newer);
	/* A damaged version field is damage, not a newer tierd. */
	block[8] = 1;
	CHECK_INT(udevprops_probe(block, sizeof(block), out, sizeof(out)), -EBADMSG);
}

/* ---- the program ---------------------------------------------------------- */

static const char *probe_path;

struct run {
	int status; /* exit status; -1 if it did not exit */
	char out[4096], err[4096];
};

static void slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	CHECK(fd >= 0);
	n = read(fd, buf, cap - 1);
	CHECK(n >= 0);
	buf[n] = '\0';
	close(fd);
}

/* Run tierd-probe with args (NULL-terminated), its stdout and stderr kept. */
static void run_probe(struct run *r, const char *const *args)
{
	char out_path[64], err_path[64];
	const char *argv[8] = { probe_path };
	posix_spawn_file_actions_t fa;
	int status;
	pid_t pid;

	for (unsigned i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	snprintf(out_path, sizeof(out_path), "%s/stdout", dir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
	CHECK_OK(posix_spawn_file_actions_init(&fa));
	CHECK_OK(posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600));
	CHECK_OK(posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600));
	CHECK_OK(posix_spawn(&pid, probe_path, &fa, NULL, (char **)argv, environ));
	posix_spawn_file_actions_destroy(&fa);
	CHECK_INT(waitpid(pid, &status, 0), pid);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	slurp(out_path, r->out, sizeof(r->out));
	slurp(err_path, r->err, sizeof(r->err));
}

/* An image file of len bytes: block, then zeros. */
static const char *image(const char *name, const unsigned char *block, size_t len)
{
	static char path[128];
	static const unsigned char zero[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	for (size_t off = 0; off < len;) {
		size_t n = len - off < 4096 ? len - off : 4096;

		CHECK_INT(write(fd, off < METADATA_BLOCK ? block + off : zero, n), (ssize_t)n);
		off += n;
	}
	CHECK_OK(close(fd));
	return path;
}

/* Not a member: nothing on either stream, exit 1. */
static void check_not_member(const char *what, const char *path)
{
	struct run r;

	run_probe(&r, (const char *[]){ path, NULL });
	if (r.status != 1 || r.out[0] || r.err[0]) {
		fprintf(stderr, "%s: status %d, stdout '%s', stderr '%s'\n", what, r.status,
			r.out, r.err);
		CHECK(!"a non-member is silent and exits 1");
	}
}

static void test_program(void)
{
	unsigned char block[METADATA_BLOCK];
	struct run r;

	/* A valid superblock with the rest of a device behind it. */
	make_block(block, "tank");
	run_probe(&r, (const char *[]){ image("member", block, 2 * MiB), NULL });
	CHECK_INT(r.status, 0);
	CHECK_STR(r.out, tank_props);
	CHECK_STR(r.err, "");

	/* Every character a name may have needs no escaping. */
	make_block(block, "a+b.c_d-E9");
	run_probe(&r, (const char *[]){ image("specials", block, METADATA_BLOCK), NULL });
	CHECK_INT(r.status, 0);
	CHECK(strstr(r.out, "\nID_FS_LABEL=a+b.c_d-E9\nID_FS_LABEL_ENC=a+b.c_d-E9\n"));
	CHECK(strstr(r.out, "\nTIERD_POOL_NAME=a+b.c_d-E9\n"));

	make_block(block, "tank");
	block[200] ^= 0x80;
	check_not_member("bad crc", image("badcrc", block, METADATA_BLOCK));

	make_block(block, "tank");
	memcpy(block, "TIERDSB2", 8);
	reseal(block);
	check_not_member("bad magic", image("badmagic", block, METADATA_BLOCK));

	make_block(block, "tank");
	check_not_member("truncated", image("truncated", block, METADATA_BLOCK - 1));
	check_not_member("empty", image("empty", block, 0));

	/* A name with a space, sealed: the decoder calls it inconsistent, not a member. */
	make_block(block, "tank");
	memcpy(block + NAME_OFF, "my pool", 8);
	reseal(block);
	check_not_member("name with a space", image("spacename", block, METADATA_BLOCK));

	/* I/O errors: said on stderr, exit 1, nothing for udev to import. */
	run_probe(&r, (const char *[]){ "/nonexistent/dev", NULL });
	CHECK_INT(r.status, 1);
	CHECK_STR(r.out, "");
	CHECK_STR(r.err, "tierd-probe: /nonexistent/dev: No such file or directory\n");
	run_probe(&r, (const char *[]){ dir, NULL });
	CHECK_INT(r.status, 1);
	CHECK_STR(r.out, "");
	CHECK(strstr(r.err, "Is a directory"));

	/* Usage. */
	run_probe(&r, (const char *[]){ NULL });
	CHECK_INT(r.status, 2);
	CHECK_STR(r.out, "");
	CHECK_STR(r.err, "usage: tierd-probe DEVNODE\n");
	run_probe(&r, (const char *[]){ "a", "b", NULL });
	CHECK_INT(r.status, 2);
	run_probe(&r, (const char *[]){ "--help", NULL });
	CHECK_INT(r.status, 2);
}

static void cleanup(void)
{
	static const char *const names[] = { "member", "specials", "badcrc", "badmagic",
					     "truncated", "empty", "spacename", "stdout",
					     "stderr" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test-udevprops PATH-OF-TIERD-PROBE\n");
		return 1;
	}
	probe_path = argv[1];
	test_encode();
	test_format();
	test_probe_block();
	CHECK(mkdtemp(dir));
	test_program();
	cleanup();
	return 0;
}
