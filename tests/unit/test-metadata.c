/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "check.h"
#include "crc32c.h"
#include "metadata.h"

/* What decodes of records without pieces give: always empty, nothing to free. */
static struct piecemap decoded_pieces;
#include "slotsum.h"

/*
 * The byte offsets used here are the on-device format documented in
 * metadata.h: spelling them out pins the format, so an accidental change
 * to it fails a test instead of orphaning pools already formatted.
 */

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)
#define PiB (UINT64_C(1) << 50)

#define CRC_OFF 12
#define SLOT_LENGTH_OFF 24
#define SLOT_DEVS_OFF 152
#define DEV_BYTES 48

static const uint8_t pool_uuid[16] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
				       0x0f, 0xed, 0xcb, 0xa9, 0x87, 0x65, 0x43, 0x21 };

/* The low width bytes of a little-endian u64 are the little-endian field. */
static void put_le(unsigned char *p, uint64_t v, unsigned width)
{
	v = htole64(v);
	memcpy(p, &v, width);
}

static uint64_t get_le(const unsigned char *p, unsigned width)
{
	uint64_t v = 0;

	memcpy(&v, p, width);
	return le64toh(v);
}

/* Store a correct crc again after a deliberate edit, so the edit itself is what decode sees. */
static void reseal(unsigned char *buf, size_t len)
{
	put_le(buf + CRC_OFF, 0, 4);
	put_le(buf + CRC_OFF, crc32c(0, buf, len), 4);
}

/* A slot's crc covers its header and as much payload as its length field says. */
static void reseal_slot(unsigned char *buf)
{
	reseal(buf, 32 + get_le(buf + SLOT_LENGTH_OFF, 8));
}

/* xorshift: deterministic, so a failure reproduces. */
static uint32_t rnd(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

/* 1 GiB, 4 MiB extents, room for 65536: the numbers the layout tests check by hand. */
static void make_sb(struct metadata_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
	CHECK_OK(metadata_layout(sb, GiB, 512, 4 * MiB, 65536, 0));
	memcpy(sb->pool_uuid, pool_uuid, 16);
	memset(sb->dev_uuid, 0xd1, 16);
	strcpy(sb->pool_name, "tank");
}

static void check_sb_equal(const struct metadata_sb *a, const struct metadata_sb *b)
{
	CHECK_UINT(a->version, b->version);
	CHECK(!memcmp(a->pool_uuid, b->pool_uuid, 16));
	CHECK(!memcmp(a->dev_uuid, b->dev_uuid, 16));
	CHECK_STR(a->pool_name, b->pool_name);
	CHECK_UINT(a->logical_block_size, b->logical_block_size);
	CHECK_UINT(a->dev_size, b->dev_size);
	CHECK_UINT(a->extent_size, b->extent_size);
	CHECK_UINT(a->slot_offset[0], b->slot_offset[0]);
	CHECK_UINT(a->slot_offset[1], b->slot_offset[1]);
	CHECK_UINT(a->slot_bytes, b->slot_bytes);
	CHECK_UINT(a->data_start, b->data_start);
	CHECK_UINT(a->nr_pe, b->nr_pe);
}

static void test_slot_bytes(void)
{
	/* 160 fixed bytes and 16 device records of 48: 928 before the first map entry. */
	CHECK_UINT(metadata_pool_bytes(0, 0), 160);
	CHECK_UINT(metadata_pool_bytes(2, 100000), 160 + 2 * 48 + 800000);
	CHECK_UINT(metadata_slot_bytes(0), 4096);
	CHECK_UINT(metadata_slot_bytes(396), 4096);
	CHECK_UINT(metadata_slot_bytes(397), 8192);
	CHECK_UINT(metadata_slot_bytes(65536), 528384);
	CHECK_UINT(metadata_slot_max_logical(528384), (528384 - 928) / 8);
	CHECK_UINT(metadata_slot_bytes(metadata_slot_max_logical(528384)), 528384);
	CHECK_UINT(metadata_slot_max_logical(0), 0);
	CHECK_UINT(metadata_slot_max_logical(927), 0);
	CHECK_UINT(metadata_slot_max_logical(4096), 396);
	CHECK_UINT(metadata_slot_max_logical(UINT64_MAX), UINT32_MAX);

	/* Inverse at the extremes too: the largest map still has a slot size. */
	CHECK_UINT(metadata_slot_bytes(UINT32_MAX) % METADATA_BLOCK, 0);
	CHECK_UINT(metadata_slot_max_logical(metadata_slot_bytes(UINT32_MAX)), UINT32_MAX);
	for (uint32_t n = 1; n < 5000000; n = n * 3 + 1)
		CHECK(metadata_slot_max_logical(metadata_slot_bytes(n)) >= n);
}

static void test_layout(void)
{
	struct metadata_sb sb;
	char name_before[sizeof(sb.pool_name)];

	/* The uuids and name are the caller's: layout leaves them alone. */
	memset(&sb, 0x5a, sizeof(sb));
	memcpy(name_before, sb.pool_name, sizeof(name_before));
	CHECK_OK(metadata_layout(&sb, GiB, 4096, 4 * MiB, 65536, 0));
	CHECK_UINT(sb.version, METADATA_VERSION);
	CHECK_UINT(sb.logical_block_size, 4096);
	CHECK_UINT(sb.dev_size, GiB);
	CHECK_UINT(sb.extent_size, 4 * MiB);
	CHECK_UINT(sb.slot_bytes, 528384);
	CHECK_UINT(sb.slot_offset[0], 4096);
	CHECK_UINT(sb.slot_offset[1], 4096 + 528384);
	/* 4096 + 2 * 528384 = 1060864: just past 1 MiB, so data starts at 2 MiB. */
	CHECK_UINT(sb.data_start, 2 * MiB);
	CHECK_UINT(sb.data_start % METADATA_ALIGN, 0);
	CHECK(sb.slot_offset[1] - sb.slot_offset[0] >= sb.slot_bytes);
	CHECK(sb.slot_offset[1] + sb.slot_bytes <= sb.data_start);
	CHECK_UINT(sb.nr_pe, 255);
	CHECK(sb.data_start + sb.nr_pe * sb.extent_size <= sb.dev_size);
	CHECK(sb.data_start + (sb.nr_pe + 1) * sb.extent_size > sb.dev_size);
	CHECK_UINT(sb.pool_uuid[0], 0x5a);
	CHECK_UINT(sb.dev_uuid[15], 0x5a);
	CHECK(!memcmp(sb.pool_name, name_before, sizeof(name_before)));

	/* A 100 TiB array sized for a 128 TiB volume: slots of 256 MiB each. */
	CHECK_OK(metadata_layout(&sb, 100 * TiB, 4096, 4 * MiB, 32 * 1024 * 1024, 0));
	CHECK_UINT(sb.slot_bytes, 256 * MiB + 4096);
	CHECK_UINT(sb.data_start, 513 * MiB);
	CHECK_UINT(sb.nr_pe, (100 * TiB - 513 * MiB) / (4 * MiB));

	/* No slot room beyond the map: max_logical 0 still fits the device records. */
	CHECK_OK(metadata_layout(&sb, 64 * MiB, 512, MiB, 0, 0));
	CHECK_UINT(sb.slot_bytes, 4096);
	CHECK_UINT(sb.data_start, MiB);
	CHECK_UINT(sb.nr_pe, 63);
	CHECK_UINT(metadata_slot_max_logical(sb.slot_bytes), 396);
}

static void test_layout_limits(void)
{
	static const uint64_t bad_extents[] = { 0, 512 * KiB, MiB - 1, MiB + 1, 3 * MiB, 2 * GiB };
	static const uint32_t bad_lbs[] = { 0, 256, 1000, 2049, 8192 };
	struct metadata_sb sb, before;

	for (size_t i = 0; i < sizeof(bad_extents) / sizeof(bad_extents[0]); i++)
		CHECK_INT(metadata_layout(&sb, TiB, 512, bad_extents[i], 1000, 0), -EINVAL);
	for (size_t i = 0; i < sizeof(bad_lbs) / sizeof(bad_lbs[0]); i++)
		CHECK_INT(metadata_layout(&sb, TiB, bad_lbs[i], 4 * MiB, 1000, 0), -EINVAL);
	CHECK_INT(metadata_layout(NULL, TiB, 512, 4 * MiB, 1000, 0), -EINVAL);
	CHECK_OK(metadata_layout(&sb, TiB, 1024, MiB, 1000, 0));
	CHECK_OK(metadata_layout(&sb, TiB, 512, GiB, 1000, 0));

	/* Exactly METADATA_MIN_PE extents fit, then one byte fewer. */
	CHECK_OK(metadata_layout(&sb, MiB + 8 * 4 * MiB, 512, 4 * MiB, 1000, 0));
	CHECK_UINT(sb.nr_pe, METADATA_MIN_PE);
	memset(&before, 0x77, sizeof(before));
	sb = before;
	CHECK_INT(metadata_layout(&sb, MiB + 8 * 4 * MiB - 1, 512, 4 * MiB, 1000, 0), -ENOSPC);
	CHECK(!memcmp(&sb, &before, sizeof(sb)));
	CHECK_INT(metadata_layout(&sb, 0, 512, 4 * MiB, 1000, 0), -ENOSPC);
	CHECK_INT(metadata_layout(&sb, MiB, 512, 4 * MiB, 1000, 0), -ENOSPC);
	/* The metadata alone outgrows a small device when sized for a huge volume. */
	CHECK_INT(metadata_layout(&sb, GiB, 512, 4 * MiB, UINT32_MAX, 0), -ENOSPC);

	/* 2^34 one-MiB extents do not fit a u32 pe number; 1 GiB extents do. */
	CHECK_INT(metadata_layout(&sb, 16 * 1024 * TiB, 4096, MiB, 1000, 0), -EFBIG);
	CHECK_OK(metadata_layout(&sb, 16 * PiB - 1, 4096, GiB, 1000, 0));
	CHECK_UINT(sb.nr_pe, (16 * PiB - 1 - MiB) / GiB);
	/* The largest slots on the largest device: nothing may wrap on the way to -EFBIG. */
	CHECK_INT(metadata_layout(&sb, UINT64_MAX, 4096, GiB, UINT32_MAX, 0), -EFBIG);
}

/* Which stripe of stripe bytes holds the byte at off. */
static uint64_t stripe_of(uint64_t off, uint64_t stripe)
{
	return off / stripe;
}

static void test_layout_stripes(void)
{
	/* md RAID6 of 16 disks, 512 KiB chunks (7 MiB), and 6 disks of 64 KiB (256 KiB). */
	static const uint64_t stripes[] = { 14 * 512 * KiB, 4 * 64 * KiB, METADATA_STRIPE_MAX };
	unsigned char block[METADATA_BLOCK];
	struct metadata_sb sb, plain, back;

	CHECK_OK(metadata_layout(&plain, TiB, 4096, 4 * MiB, 65536, 0));
	for (size_t i = 0; i < sizeof(stripes) / sizeof(stripes[0]); i++) {
		uint64_t s = stripes[i];

		make_sb(&sb);
		CHECK_OK(metadata_layout(&sb, TiB, 4096, 4 * MiB, 65536, s));
		/* Superblock, slot A and slot B: three stripes, none shared. */
		CHECK_UINT(sb.slot_offset[0] % s, 0);
		CHECK_UINT(sb.slot_offset[1] % s, 0);
		CHECK(stripe_of(sb.slot_offset[0], s) > stripe_of(METADATA_BLOCK - 1, s));
		CHECK(stripe_of(sb.slot_offset[1], s) >
		      stripe_of(sb.slot_offset[0] + sb.slot_bytes - 1, s));
		CHECK(sb.data_start >= sb.slot_offset[1] + sb.slot_bytes);
		CHECK(stripe_of(sb.data_start, s) > stripe_of(sb.slot_offset[1] + sb.slot_bytes - 1, s));
		CHECK_UINT(sb.data_start % MiB, 0);
		CHECK_UINT(sb.slot_bytes, plain.slot_bytes);
		CHECK_UINT(sb.nr_pe, (TiB - sb.data_start) / (4 * MiB));
		/* Any placement the layout makes, the decoder takes: old tierd reads it too. */
		CHECK_OK(metadata_sb_encode(&sb, block));
		CHECK_OK(metadata_sb_decode(&back, block));
		CHECK_UINT(back.slot_offset[1], sb.slot_offset[1]);
	}
	/* What is no plausible stripe leaves the plain layout. */
	static const uint64_t odd[] = { 1, 512, 32 * MiB - 512, METADATA_STRIPE_MAX * 2 };

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		CHECK_OK(metadata_layout(&sb, TiB, 4096, 4 * MiB, 65536, odd[i]));
		CHECK_UINT(sb.slot_offset[0], plain.slot_offset[0]);
		CHECK_UINT(sb.slot_offset[1], plain.slot_offset[1]);
		CHECK_UINT(sb.data_start, plain.data_start);
	}
}

static void test_sb_round_trip(void)
{
	unsigned char block[METADATA_BLOCK];
	struct metadata_sb sb, got;

	make_sb(&sb);
	memset(block, 0xee, sizeof(block));
	CHECK_OK(metadata_sb_encode(&sb, block));
	memset(&got, 0, sizeof(got));
	CHECK_OK(metadata_sb_decode(&got, block));
	check_sb_equal(&got, &sb);

	/* The documented layout, byte for byte. */
	CHECK(!memcmp(block, "TIERDSB1", 8));
	CHECK_UINT(get_le(block + 8, 4), 1);
	CHECK(!memcmp(block + 16, pool_uuid, 16));
	CHECK_UINT(block[32], 0xd1);
	CHECK_STR((const char *)block + 48, "tank");
	CHECK_UINT(get_le(block + 120, 4), 512);
	CHECK_UINT(get_le(block + 128, 8), GiB);
	CHECK_UINT(get_le(block + 136, 8), 4 * MiB);
	CHECK_UINT(get_le(block + 144, 8), 4096);
	CHECK_UINT(get_le(block + 152, 8), 4096 + 528384);
	CHECK_UINT(get_le(block + 160, 8), 528384);
	CHECK_UINT(get_le(block + 168, 8), 2 * MiB);
	CHECK_UINT(get_le(block + 176, 4), 255);
	for (size_t i = 180; i < sizeof(block); i++)
		CHECK_UINT(block[i], 0);
	{
		uint32_t stored = (uint32_t)get_le(block + CRC_OFF, 4);

		reseal(block, sizeof(block));
		CHECK_UINT(get_le(block + CRC_OFF, 4), stored);
	}

	/* A 64-character name fills its field up to the NUL. */
	memset(sb.pool_name, 'n', METADATA_NAME_MAX);
	sb.pool_name[METADATA_NAME_MAX] = '\0';
	CHECK_OK(metadata_sb_encode(&sb, block));
	CHECK_OK(metadata_sb_decode(&got, block));
	check_sb_equal(&got, &sb);

	CHECK_INT(metadata_sb_encode(NULL, block), -EINVAL);
	CHECK_INT(metadata_sb_encode(&sb, NULL), -EINVAL);
	CHECK_INT(metadata_sb_decode(NULL, block), -EINVAL);
	CHECK_INT(metadata_sb_decode(&got, NULL), -EINVAL);
}

/* Encode refuses what decode would reject, so nothing unreadable reaches a device. */
static void test_sb_encode_refuses(void)
{
	unsigned char block[METADATA_BLOCK];
	struct metadata_sb sb;

	make_sb(&sb);
	sb.pool_name[0] = '\0';
	CHECK_INT(metadata_sb_encode(&sb, block), -EINVAL);
	make_sb(&sb);
	memset(sb.pool_name, 'x', sizeof(sb.pool_name));
	CHECK_INT(metadata_sb_encode(&sb, block), -EINVAL);
	make_sb(&sb);
	sb.nr_pe++;
	CHECK_INT(metadata_sb_encode(&sb, block), -EINVAL);
	make_sb(&sb);
	sb.slot_offset[1] = sb.slot_offset[0];
	CHECK_INT(metadata_sb_encode(&sb, block), -EINVAL);
	make_sb(&sb);
	sb.extent_size = 0;
	CHECK_INT(metadata_sb_encode(&sb, block), -EINVAL);
}

static void test_sb_damage(void)
{
	unsigned char block[METADATA_BLOCK], zero[METADATA_BLOCK] = { 0 };
	struct metadata_sb sb, got, untouched;

	make_sb(&sb);
	CHECK_OK(metadata_sb_encode(&sb, block));
	memset(&untouched, 0x33, sizeof(untouched));

	/* Any one byte changed: the magic says "not ours", anything else fails the crc. */
	for (size_t i = 0; i < sizeof(block); i++) {
		got = untouched;
		block[i] ^= 0xff;
		CHECK_INT(metadata_sb_decode(&got, block), i < 8 ? -ENOENT : -EBADMSG);
		CHECK(!memcmp(&got, &untouched, sizeof(got)));
		block[i] ^= 0xff;
	}
	CHECK_OK(metadata_sb_decode(&got, block));

	CHECK_INT(metadata_sb_decode(&got, zero), -ENOENT);
	memcpy(block, "TIERDMD1", 8);
	reseal(block, sizeof(block));
	CHECK_INT(metadata_sb_decode(&got, block), -ENOENT);

	/* A newer format with an intact crc: not damaged, just not understood. */
	CHECK_OK(metadata_sb_encode(&sb, block));
	put_le(block + 8, 2, 4);
	reseal(block, sizeof(block));
	CHECK_INT(metadata_sb_decode(&got, block), -EPROTONOSUPPORT);
	/* Version 0 no tierd wrote: broken, not newer. */
	put_le(block + 8, 0, 4);
	reseal(block, sizeof(block));
	CHECK_INT(metadata_sb_decode(&got, block), -EUCLEAN);
}

struct patch {
	size_t off;
	unsigned width; /* 0: unused */
	uint64_t value;
};

/* Fields that each pass the crc but together cannot describe a device (make_sb numbers). */
static void test_sb_inconsistent(void)
{
	static const struct {
		const char *what;
		struct patch p[2];
	} cases[] = {
		{ "slot A over the superblock", { { 144, 8, 0 } } },
		{ "slot A not block aligned", { { 144, 8, 4096 + 512 } } },
		{ "slot B over slot A", { { 152, 8, 4096 + 528384 - 4096 } } },
		{ "slots on top of each other", { { 152, 8, 4096 } } },
		{ "slot B over the data", { { 152, 8, 2 * MiB - 4096 } } },
		{ "slot B past the end", { { 152, 8, UINT64_MAX - 4095 } } },
		{ "slots larger than their room", { { 160, 8, MiB } } },
		{ "slot size not whole blocks", { { 160, 8, 528384 - 8 } } },
		{ "slot size zero", { { 160, 8, 0 } } },
		{ "slot A moved, B in its place", { { 144, 8, 4096 + 528384 }, { 152, 8, 4096 + 4096 } } },
		{ "data_start not 1 MiB aligned", { { 168, 8, 2 * MiB + 4096 } } },
		{ "data_start past the end", { { 168, 8, 2 * GiB } } },
		{ "nr_pe one too many", { { 176, 4, 256 } } },
		{ "nr_pe one too few", { { 176, 4, 254 } } },
		{ "dev_size halved", { { 128, 8, GiB / 2 } } },
		{ "too few extents", { { 128, 8, 2 * MiB + 7 * 4 * MiB }, { 176, 4, 7 } } },
		{ "extent size not a power of two", { { 136, 8, 3 * MiB } } },
		{ "extent size too small", { { 136, 8, 512 * KiB }, { 176, 4, 2044 } } },
		{ "extent size zero", { { 136, 8, 0 } } },
		{ "logical block size 1000", { { 120, 4, 1000 } } },
		{ "logical block size 8192", { { 120, 4, 8192 } } },
		{ "empty name", { { 48, 1, 0 } } },
		{ "name starting with a dot", { { 48, 1, '.' } } },
		{ "name with a slash", { { 49, 1, '/' } } },
		{ "name with a space", { { 50, 1, ' ' } } },
	};
	unsigned char block[METADATA_BLOCK];
	struct metadata_sb sb, got;

	make_sb(&sb);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_OK(metadata_sb_encode(&sb, block));
		for (size_t j = 0; j < 2 && cases[i].p[j].width; j++)
			put_le(block + cases[i].p[j].off, cases[i].p[j].value, cases[i].p[j].width);
		reseal(block, sizeof(block));
		if (metadata_sb_decode(&got, block) != -EUCLEAN)
			fprintf(stderr, "not caught: %s\n", cases[i].what);
		CHECK_INT(metadata_sb_decode(&got, block), -EUCLEAN);
	}

	/* A name field without its NUL: decode must not read past it. */
	CHECK_OK(metadata_sb_encode(&sb, block));
	memset(block + 48, 'a', METADATA_NAME_MAX + 1);
	reseal(block, sizeof(block));
	CHECK_INT(metadata_sb_decode(&got, block), -EUCLEAN);
	/* Bytes past the NUL and reserved bytes are ignored: a future use of them stays readable. */
	CHECK_OK(metadata_sb_encode(&sb, block));
	block[48 + 70] = 'z';
	block[124] = 1;
	block[4000] = 1;
	reseal(block, sizeof(block));
	CHECK_OK(metadata_sb_decode(&got, block));
	check_sb_equal(&got, &sb);
}

/* Two devices sized for a map of nr_pe0 and nr_pe1 extents of 4 MiB after 2 MiB of metadata. */
static void make_pool(struct metadata_pool *p, uint32_t nr_pe0, uint32_t nr_pe1)
{
	const uint32_t nr_pe[2] = { nr_pe0, nr_pe1 };

	memset(p, 0, sizeof(*p));
	p->generation = 7;
	memcpy(p->uuid, pool_uuid, 16);
	strcpy(p->name, "tank");
	p->extent_size = 4 * MiB;
	p->flags = METADATA_POOL_SSD_GROWS;
	p->created = 1700000000;
	p->nr_devs = 2;
	for (unsigned i = 0; i < 2; i++) {
		struct metadata_dev *d = &p->devs[i];

		/* Only the first byte differs: one patched byte makes them equal. */
		memset(d->uuid, 0xa0, 16);
		d->uuid[0] = (uint8_t)(0xa0 + i);
		d->tier = i ? METADATA_TIER_SSD : METADATA_TIER_HDD;
		d->nr_pe = nr_pe[i];
		d->reserve_pe = nr_pe[i] / 10;
		d->logical_block_size = i ? 4096 : 512;
		d->data_start = 2 * MiB;
		d->size_bytes = 2 * MiB + nr_pe[i] * 4 * MiB + 123;
	}
}

static void init_map(struct extmap *m, const struct metadata_pool *p, uint32_t nr_logical)
{
	CHECK_OK(extmap_init(m, nr_logical));
	for (unsigned i = 0; i < p->nr_devs; i++)
		CHECK_OK(extmap_add_dev(m, p->devs[i].nr_pe, NULL));
}

/*
 * Scatter the extents: every (dev, pe) in a shuffled order, every 17th le
 * left unmapped, so runs are short and both devices are interleaved.
 */
static void fill_fragmented(struct extmap *m)
{
	uint32_t total = m->nr_pe[0] + m->nr_pe[1], seed = 0x2545f491u;
	uint32_t *order = malloc(total * sizeof(*order));

	CHECK(order != NULL);
	for (uint32_t i = 0; i < total; i++)
		order[i] = i;
	for (uint32_t i = total - 1; i > 0; i--) {
		uint32_t j = rnd(&seed) % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (uint32_t le = 0; le < m->nr_logical && le < total; le++) {
		uint32_t x = order[le];

		if (le % 17 == 5)
			continue;
		if (x < m->nr_pe[0])
			CHECK_OK(extmap_map(m, le, 0, x));
		else
			CHECK_OK(extmap_map(m, le, 1, x - m->nr_pe[0]));
	}
	free(order);
	CHECK_OK(extmap_check(m, NULL));
}

static void check_pool_equal(const struct metadata_pool *a, const struct metadata_pool *b)
{
	CHECK_UINT(a->generation, b->generation);
	CHECK(!memcmp(a->uuid, b->uuid, 16));
	CHECK_STR(a->name, b->name);
	CHECK_UINT(a->extent_size, b->extent_size);
	CHECK_UINT(a->flags, b->flags);
	CHECK_UINT(a->created, b->created);
	CHECK_UINT(a->nr_devs, b->nr_devs);
	for (unsigned i = 0; i < a->nr_devs; i++) {
		const struct metadata_dev *x = &a->devs[i], *y = &b->devs[i];

		CHECK(!memcmp(x->uuid, y->uuid, 16));
		CHECK_UINT(x->tier, y->tier);
		CHECK_UINT(x->nr_pe, y->nr_pe);
		CHECK_UINT(x->reserve_pe, y->reserve_pe);
		CHECK_UINT(x->logical_block_size, y->logical_block_size);
		CHECK_UINT(x->data_start, y->data_start);
		CHECK_UINT(x->size_bytes, y->size_bytes);
	}
}

static void check_map_equal(const struct extmap *a, const struct extmap *b)
{
	CHECK_UINT(a->nr_logical, b->nr_logical);
	CHECK_UINT(a->nr_devs, b->nr_devs);
	for (unsigned i = 0; i < a->nr_devs; i++) {
		CHECK_UINT(a->nr_pe[i], b->nr_pe[i]);
		CHECK_UINT(a->nr_free[i], b->nr_free[i]);
	}
	for (uint32_t le = 0; le < a->nr_logical; le++) {
		CHECK_UINT(extmap_get(a, le).dev, extmap_get(b, le).dev);
		CHECK_UINT(extmap_get(a, le).pe, extmap_get(b, le).pe);
	}
	CHECK_OK(extmap_check(b, NULL));
}

/* A failed decode leaves nothing behind to free or to mistake for a pool. */
static void expect_decode_fails(const void *buf, size_t len, int err)
{
	struct metadata_pool p;
	struct extmap m;

	CHECK_INT(metadata_pool_decode(&p, &m, &decoded_pieces, buf, len), err);
	CHECK(m.pages.leaf == NULL && m.runs == NULL);
	CHECK_UINT(m.nr_devs, 0);
	CHECK_UINT(p.generation, 0);
	CHECK_UINT(p.nr_devs, 0);
	extmap_destroy(&m);
}

static void test_pool_round_trip(void)
{
	const uint32_t nr = 100000;
	struct metadata_pool p, got;
	struct extmap m, back;
	unsigned char *buf;
	size_t bytes, cap;

	make_pool(&p, 70000, 40000);
	init_map(&m, &p, nr);
	fill_fragmented(&m);
	bytes = metadata_pool_bytes(2, nr);
	CHECK_UINT(bytes, 800256);
	/* A whole number of blocks, as a slot is written, with junk past the record. */
	cap = (bytes + METADATA_BLOCK - 1) / METADATA_BLOCK * METADATA_BLOCK;
	buf = malloc(cap);
	CHECK(buf != NULL);
	memset(buf, 0xaa, cap);

	CHECK_OK(metadata_pool_encode(&p, &m, NULL, buf, cap));
	CHECK(!memcmp(buf, "TIERDMD1", 8));
	CHECK_UINT(get_le(buf + 16, 8), 7);
	CHECK_UINT(get_le(buf + SLOT_LENGTH_OFF, 8), bytes - 32);
	CHECK_UINT(get_le(buf + SLOT_DEVS_OFF + DEV_BYTES + 16, 1), METADATA_TIER_SSD);
	CHECK_UINT(get_le(buf + SLOT_DEVS_OFF + 2 * DEV_BYTES, 4), nr);
	CHECK_UINT(buf[bytes], 0xaa);

	/* What a reader learns from the first block: how much more to read. */
	{
		uint64_t gen = 0, span = 0;

		CHECK_OK(metadata_pool_peek(buf, METADATA_BLOCK, &gen, &span));
		CHECK_UINT(gen, 7);
		CHECK_UINT(span, bytes);
		CHECK_OK(metadata_pool_peek(buf, 32, NULL, NULL));
	}

	CHECK_OK(metadata_pool_decode(&got, &back, &decoded_pieces, buf, cap));
	check_pool_equal(&got, &p);
	check_map_equal(&m, &back);
	extmap_destroy(&back);
	CHECK_OK(metadata_pool_decode(&got, &back, &decoded_pieces, buf, bytes));
	check_map_equal(&m, &back);
	extmap_destroy(&back);

	/* Truncated: the record says it is longer than what was read. */
	expect_decode_fails(buf, bytes - 1, -EUCLEAN);
	expect_decode_fails(buf, 31, -EUCLEAN);
	expect_decode_fails(buf, 8, -EUCLEAN);
	expect_decode_fails(buf, 7, -ENOENT);
	expect_decode_fails(buf, 0, -ENOENT);

	/* One bit of one map entry, then a sample (test_pool_damage tries every byte). */
	{
		size_t entry = SLOT_DEVS_OFF + 2 * DEV_BYTES + 8 + 54321 * 8;

		buf[entry + 4] ^= 0x01;
		expect_decode_fails(buf, cap, -EBADMSG);
		buf[entry + 4] ^= 0x01;
	}
	for (size_t off = 32; off < bytes; off += 7919) {
		buf[off] ^= 0x80;
		expect_decode_fails(buf, cap, -EBADMSG);
		buf[off] ^= 0x80;
	}
	CHECK_OK(metadata_pool_decode(&got, &back, &decoded_pieces, buf, cap));
	extmap_destroy(&back);

	free(buf);
	extmap_destroy(&m);
}

/* A slot of 2 devices (5 and 6 pe) and 8 extents, all mapped but le 3. */
static size_t small_slot(unsigned char *buf, size_t cap)
{
	struct metadata_pool p;
	struct extmap m;

	make_pool(&p, 5, 6);
	init_map(&m, &p, 8);
	for (uint32_t le = 0; le < 8; le++)
		if (le != 3)
			CHECK_OK(extmap_map(&m, le, le % 2, le / 2));
	CHECK_OK(metadata_pool_encode(&p, &m, NULL, buf, cap));
	extmap_destroy(&m);
	return metadata_pool_bytes(2, 8);
}

static void test_pool_damage(void)
{
#define DEV(i, off) (SLOT_DEVS_OFF + (i) * DEV_BYTES + (off))
#define LE(n, off) (SLOT_DEVS_OFF + 2 * DEV_BYTES + 8 + (n) * 8 + (off))
	/* Each resealed, so only the consistency checks can catch it. */
	static const struct {
		const char *what;
		struct patch p;
		int err;
	} cases[] = {
		{ "two le on one pe", { LE(2, 4), 4, 0 }, -EUCLEAN },
		{ "dev out of range", { LE(1, 0), 2, 2 }, -EUCLEAN },
		{ "pe out of range", { LE(1, 4), 4, 6 }, -EUCLEAN },
		{ "pe of an unmapped le", { LE(3, 4), 4, 1 }, -EUCLEAN },
		{ "version 3", { 8, 4, 3 }, -EPROTONOSUPPORT },
		{ "version 0", { 8, 4, 0 }, -EUCLEAN },
		{ "version 2 without its pieces", { 8, 4, 2 }, -EUCLEAN },
		{ "generation 0", { 16, 8, 0 }, -EUCLEAN },
		{ "payload one entry short", { SLOT_LENGTH_OFF, 8, 160 + 96 + 7 * 8 - 32 }, -EUCLEAN },
		{ "payload cut in the devices", { SLOT_LENGTH_OFF, 8, 150 }, -EUCLEAN },
		{ "payload empty", { SLOT_LENGTH_OFF, 8, 0 }, -EUCLEAN },
		{ "empty name", { 48, 1, 0 }, -EUCLEAN },
		{ "extent size 3 MiB", { 120, 8, 3 * MiB }, -EUCLEAN },
		{ "unknown flag", { 128, 4, 2 }, -EUCLEAN },
		{ "no devices", { 144, 4, 0 }, -EUCLEAN },
		{ "one device fewer", { 144, 4, 1 }, -EUCLEAN },
		{ "more devices than fit", { 144, 4, METADATA_MAX_DEVS + 1 }, -EUCLEAN },
		{ "device count huge", { 144, 4, UINT32_MAX }, -EUCLEAN },
		{ "nr_logical one more", { LE(0, -8), 4, 9 }, -EUCLEAN },
		{ "nr_logical one less", { LE(0, -8), 4, 7 }, -EUCLEAN },
		{ "same uuid twice", { DEV(1, 0), 1, 0xa0 }, -EUCLEAN },
		{ "tier 2", { DEV(1, 16), 1, 2 }, -EUCLEAN },
		{ "no extents", { DEV(0, 20), 4, 0 }, -EUCLEAN },
		{ "reserve beyond the device", { DEV(0, 24), 4, 6 }, -EUCLEAN },
		{ "logical block size 1000", { DEV(1, 28), 4, 1000 }, -EUCLEAN },
		{ "data_start 0", { DEV(0, 32), 8, 0 }, -EUCLEAN },
		{ "data_start unaligned", { DEV(0, 32), 8, 2 * MiB + 512 }, -EUCLEAN },
		{ "extents past the end", { DEV(1, 40), 8, 2 * MiB + 6 * 4 * MiB - 1 }, -EUCLEAN },
	};
	const uint64_t longest = metadata_pool_bytes(METADATA_MAX_DEVS, UINT32_MAX) + 16 +
				 (uint64_t)UINT32_MAX * (8 + 12);
	unsigned char buf[4096], copy[4096];
	size_t bytes = small_slot(buf, sizeof(buf));
	struct metadata_pool p;
	struct extmap m;

	CHECK_UINT(get_le(buf + LE(2, 0), 2), 0);
	CHECK_UINT(get_le(buf + LE(3, 0), 2), EXTMAP_NO_DEV);
	CHECK_OK(metadata_pool_decode(&p, &m, &decoded_pieces, buf, bytes));
	CHECK_UINT(extmap_get(&m, 7).dev, 1);
	CHECK_UINT(extmap_get(&m, 7).pe, 3);
	extmap_destroy(&m);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(copy, buf, bytes);
		put_le(copy + cases[i].p.off, cases[i].p.value, cases[i].p.width);
		reseal_slot(copy);
		if (metadata_pool_decode(&p, &m, &decoded_pieces, copy, bytes) != cases[i].err)
			fprintf(stderr, "not caught: %s\n", cases[i].what);
		expect_decode_fails(copy, bytes, cases[i].err);
	}

	/* One byte changed anywhere but the magic and the length fails the crc. */
	for (size_t off = 8; off < bytes; off++) {
		if (off >= SLOT_LENGTH_OFF && off < SLOT_LENGTH_OFF + 8)
			continue;
		memcpy(copy, buf, bytes);
		copy[off] ^= 0xff;
		expect_decode_fails(copy, bytes, -EBADMSG);
	}

	/* Reserved bytes are ignored, like the superblock's. */
	memcpy(copy, buf, bytes);
	copy[LE(5, 2)] = 0x7f;
	copy[DEV(1, 17)] = 1;
	reseal_slot(copy);
	CHECK_OK(metadata_pool_decode(&p, &m, &decoded_pieces, copy, bytes));
	extmap_destroy(&m);

	/* A length no slot could hold, resealed or not, must not wrap a bound check. */
	memcpy(copy, buf, bytes);
	put_le(copy + SLOT_LENGTH_OFF, UINT64_MAX - 16, 8);
	CHECK_INT(metadata_pool_peek(copy, bytes, NULL, NULL), -EUCLEAN);
	expect_decode_fails(copy, bytes, -EUCLEAN);
	/* The longest: every extent and as many containers and pieces as a count holds. */
	put_le(copy + SLOT_LENGTH_OFF, longest - 32, 8);
	CHECK_OK(metadata_pool_peek(copy, bytes, NULL, NULL));
	expect_decode_fails(copy, bytes, -EUCLEAN);
	put_le(copy + SLOT_LENGTH_OFF, longest - 31, 8);
	CHECK_INT(metadata_pool_peek(copy, bytes, NULL, NULL), -EUCLEAN);

	/* An empty slot, and one holding a superblock. */
	memset(copy, 0, sizeof(copy));
	expect_decode_fails(copy, sizeof(copy), -ENOENT);
	memcpy(copy, buf, bytes);
	memcpy(copy, "TIERDSB1", 8);
	expect_decode_fails(copy, bytes, -ENOENT);

	CHECK_INT(metadata_pool_peek(copy, 32, NULL, NULL), -ENOENT);
	memset(copy, 0, sizeof(copy));
	CHECK_INT(metadata_pool_peek(copy, sizeof(copy), NULL, NULL), -ENOENT);
	CHECK_INT(metadata_pool_peek(buf, 31, NULL, NULL), -EUCLEAN);
	CHECK_INT(metadata_pool_peek(buf, 7, NULL, NULL), -ENOENT);
	CHECK_INT(metadata_pool_peek(NULL, 32, NULL, NULL), -EINVAL);

	CHECK_INT(metadata_pool_decode(NULL, &m, &decoded_pieces, buf, bytes), -EINVAL);
	CHECK_INT(metadata_pool_decode(&p, NULL, &decoded_pieces, buf, bytes), -EINVAL);
	CHECK_INT(metadata_pool_decode(&p, &m, NULL, buf, bytes), -EINVAL);
	CHECK_INT(metadata_pool_decode(&p, &m, &decoded_pieces, NULL, bytes), -EINVAL);
#undef DEV
#undef LE
}

static void test_pool_encode_refuses(void)
{
	unsigned char buf[4096];
	struct metadata_pool p;
	struct extmap m, other;

	make_pool(&p, 5, 6);
	init_map(&m, &p, 8);
	CHECK_INT(metadata_pool_encode(&p, &m, NULL, buf, metadata_pool_bytes(2, 8) - 1), -ENOSPC);
	CHECK_OK(metadata_pool_encode(&p, &m, NULL, buf, metadata_pool_bytes(2, 8)));
	CHECK_INT(metadata_pool_encode(NULL, &m, NULL, buf, sizeof(buf)), -EINVAL);
	CHECK_INT(metadata_pool_encode(&p, NULL, NULL, buf, sizeof(buf)), -EINVAL);
	CHECK_INT(metadata_pool_encode(&p, &m, NULL, NULL, sizeof(buf)), -EINVAL);

	/* The map's devices must be p's devices. */
	CHECK_OK(extmap_init(&other, 8));
	CHECK_OK(extmap_add_dev(&other, 5, NULL));
	CHECK_INT(metadata_pool_encode(&p, &other, NULL, buf, sizeof(buf)), -EINVAL);
	CHECK_OK(extmap_add_dev(&other, 7, NULL));
	CHECK_INT(metadata_pool_encode(&p, &other, NULL, buf, sizeof(buf)), -EINVAL);
	CHECK_OK(extmap_remove_dev(&other, 1));
	CHECK_OK(extmap_add_dev(&other, 6, NULL));
	CHECK_OK(metadata_pool_encode(&p, &other, NULL, buf, sizeof(buf)));
	CHECK_OK(extmap_add_dev(&other, 9, NULL));
	CHECK_INT(metadata_pool_encode(&p, &other, NULL, buf, sizeof(buf)), -EINVAL);
	extmap_destroy(&other);

	/* An entry no decoder would accept is refused, not written. */
	*extmap_raw(&m, 2) = (struct extmap_loc){ .dev = 1, .pe = 6 };
	CHECK_INT(metadata_pool_encode(&p, &m, NULL, buf, sizeof(buf)), -EINVAL);
	*extmap_raw(&m, 2) = (struct extmap_loc){ .dev = 2, .pe = 0 };
	CHECK_INT(metadata_pool_encode(&p, &m, NULL, buf, sizeof(buf)), -EINVAL);
	/* An unmapped entry's stray pe is written as 0. */
	*extmap_raw(&m, 2) = (struct extmap_loc){ .dev = EXTMAP_NO_DEV, .pe = 3 };
	CHECK_OK(metadata_pool_encode(&p, &m, NULL, buf, sizeof(buf)));
	CHECK_UINT(get_le(buf + SLOT_DEVS_OFF + 2 * DEV_BYTES + 8 + 2 * 8 + 4, 4), 0);

	p.generation = 0;
	CHECK_INT(metadata_pool_encode(&p, &m, NULL, buf, sizeof(buf)), -EINVAL);
	make_pool(&p, 5, 6);
	strcpy(p.name, "-tank");
	CHECK_INT(metadata_pool_encode(&p, &m, NULL, buf, sizeof(buf)), -EINVAL);
	make_pool(&p, 5, 6);
	p.nr_devs = 0;
	CHECK_INT(metadata_pool_encode(&p, &m, NULL, buf, sizeof(buf)), -EINVAL);
	make_pool(&p, 5, 6);
	p.devs[1].size_bytes = 2 * MiB;
	CHECK_INT(metadata_pool_encode(&p, &m, NULL, buf, sizeof(buf)), -EINVAL);
	extmap_destroy(&m);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A million extents (4 TiB at 4 MiB): a commit must not stall a migration batch. */
static void test_large(void)
{
	const uint32_t nr = 1000000;
	struct metadata_pool p, got;
	struct extmap m, back;
	unsigned char *buf;
	double t0, elapsed;
	size_t bytes;

	make_pool(&p, 800000, 300000);
	init_map(&m, &p, nr);
	CHECK_INT(extmap_fill_linear(&m, 1), 300000);
	CHECK_INT(extmap_fill_linear(&m, 0), 700000);
	bytes = metadata_pool_bytes(2, nr);
	buf = malloc(bytes);
	CHECK(buf != NULL);

	t0 = now();
	CHECK_OK(metadata_pool_encode(&p, &m, NULL, buf, bytes));
	CHECK_OK(metadata_pool_decode(&got, &back, &decoded_pieces, buf, bytes));
	elapsed = now() - t0;
	printf("1,000,000 extents encoded and decoded: %.3f s\n", elapsed);
	CHECK(elapsed < 2.0);

	check_map_equal(&m, &back);
	extmap_destroy(&back);
	extmap_destroy(&m);
	free(buf);
}

/* The record as metadata_pool_encode writes it, and its length. */
static unsigned char *encode_whole(const struct metadata_pool *p, const struct extmap *m,
				   size_t *len)
{
	size_t bytes = metadata_pool_bytes(p->nr_devs, m->nr_logical);
	unsigned char *buf = malloc(bytes);

	CHECK(buf != NULL);
	CHECK_OK(metadata_pool_encode(p, m, NULL, buf, bytes));
	*len = bytes;
	return buf;
}

/*
 * A commit by blocks: the groups the map marks dirty give the blocks to
 * encode again; the rest must be byte for byte what the last whole record
 * held, and the crc from the block sums what a whole encode stores.
 */
static void test_blocks_and_sums(void)
{
	const uint32_t nr = 100003;
	struct metadata_pool p;
	struct slotsum sum;
	struct extmap m;
	unsigned char block[METADATA_BLOCK], *whole, *next;
	uint32_t seed = 12345;
	size_t len, n;

	make_pool(&p, 70000, 40000);
	init_map(&m, &p, nr);
	fill_fragmented(&m);
	whole = encode_whole(&p, &m, &len);
	CHECK_OK(slotsum_init(&sum, len));
	CHECK_UINT(sum.nr_blocks, (len + METADATA_BLOCK - 1) / METADATA_BLOCK);
	for (size_t blk = 0; blk < sum.nr_blocks; blk++) {
		CHECK_OK(metadata_pool_encode_block(&p, &m, NULL, blk, block, &n));
		CHECK_UINT(n, slotsum_block_len(&sum, blk));
		if (blk == 0) {
			/* Only the crc field differs from the sealed record. */
			CHECK(!memcmp(block, whole, 12));
			CHECK(!memcmp(block + 16, whole + 16, n - 16));
			CHECK_UINT(get_le(block + 12, 4), 0);
		} else {
			CHECK(!memcmp(block, whole + blk * METADATA_BLOCK, n));
		}
		for (size_t i = n; i < METADATA_BLOCK; i++)
			CHECK_UINT(block[i], 0);
		sum.crc[blk] = slotsum_of(&sum, blk, block);
	}
	CHECK_UINT(slotsum_total(&sum), get_le(whole + 12, 4));
	CHECK_INT(metadata_pool_encode_block(&p, &m, NULL, sum.nr_blocks, block, &n), -EINVAL);
	CHECK_UINT(metadata_pool_entry_offset(2, 0), metadata_pool_bytes(2, 0));

	for (int round = 0; round < 40; round++) {
		struct slotsum_set changed = { 0 };
		uint32_t *sums;

		extmap_dirty_clear(&m);
		p.generation++;
		/* A batch: a few extents moved to free pe, some unmapped and mapped again. */
		for (int k = 0; k < 1 + round % 7; k++) {
			uint32_t le = rnd(&seed) % nr, pe;
			unsigned dev = rnd(&seed) % 2;

			if (extmap_get(&m, le).dev == EXTMAP_NO_DEV)
				continue;
			if (round % 5 == 4) {
				CHECK_OK(extmap_unmap(&m, le));
				continue;
			}
			if (extmap_alloc(&m, dev, &pe) < 0)
				continue;
			CHECK_OK(extmap_release(&m, dev, pe));
			CHECK_OK(extmap_remap(&m, le, dev, pe));
		}
		CHECK_OK(slotsum_set_add(&changed, 0));
		for (uint32_t g = extmap_next_dirty(&m, 0); g != UINT32_MAX;
		     g = extmap_next_dirty(&m, g + 1)) {
			uint32_t first = g * EXTMAP_DIRTY_GROUP, count = EXTMAP_DIRTY_GROUP;

			if (count > nr - first)
				count = nr - first;
			CHECK_OK(slotsum_set_add_entries(&changed, p.nr_devs, first, count));
		}
		next = encode_whole(&p, &m, &len);
		/* Outside the changed blocks nothing moved. */
		for (size_t blk = 1; blk < sum.nr_blocks; blk++)
			if (!slotsum_set_has(&changed, (uint32_t)blk))
				CHECK(!memcmp(whole + blk * METADATA_BLOCK, next + blk * METADATA_BLOCK,
					      slotsum_block_len(&sum, blk)));
		sums = malloc(changed.nr * sizeof(*sums));
		CHECK(sums != NULL);
		for (size_t i = 0; i < changed.nr; i++) {
			CHECK_OK(metadata_pool_encode_block(&p, &m, NULL, changed.blk[i], block, &n));
			sums[i] = slotsum_of(&sum, changed.blk[i], block);
		}
		/* What a slot read against the old sums must carry to be whole: next's crc. */
		CHECK_UINT(metadata_pool_crc(next), get_le(next + 12, 4));
		CHECK_UINT(slotsum_total_with(&sum, &changed, sums), metadata_pool_crc(next));
		for (size_t i = 0; i < changed.nr; i++)
			sum.crc[changed.blk[i]] = sums[i];
		CHECK_UINT(slotsum_total(&sum), get_le(next + 12, 4));
		free(sums);
		free(whole);
		whole = next;
		slotsum_set_free(&changed);
	}
	free(whole);
	slotsum_destroy(&sum);
	extmap_destroy(&m);
}

static void test_slotsum_sets(void)
{
	struct slotsum_set a = { 0 }, b = { 0 };

	CHECK_OK(slotsum_set_add(&a, 3));
	CHECK_OK(slotsum_set_add(&a, 3));
	CHECK_INT(slotsum_set_add(&a, 2), -EINVAL);
	CHECK_OK(slotsum_set_add(&a, 9));
	for (uint32_t i = 0; i < 40; i += 2)
		CHECK_OK(slotsum_set_add(&b, i));
	CHECK_OK(slotsum_set_union(&a, &b));
	CHECK_UINT(a.nr, 22);
	CHECK(slotsum_set_has(&a, 3) && slotsum_set_has(&a, 9) && slotsum_set_has(&a, 38));
	CHECK(!slotsum_set_has(&a, 5) && !slotsum_set_has(&a, 40));
	for (size_t i = 1; i < a.nr; i++)
		CHECK(a.blk[i - 1] < a.blk[i]);
	CHECK_OK(slotsum_set_add(&a, 41));
	CHECK_UINT(a.nr, 23);
	slotsum_set_clear(&b);
	CHECK_OK(slotsum_set_union(&a, &b));
	CHECK_UINT(a.nr, 23);
	/* An entry's 8 bytes never straddle two blocks; a run of them spans what it covers. */
	slotsum_set_clear(&b);
	CHECK_OK(slotsum_set_add_entries(&b, 2, 0, 1));
	CHECK_UINT(b.nr, 1);
	CHECK_UINT(b.blk[0], 0);
	CHECK_OK(slotsum_set_add_entries(&b, 2, 500, 400));
	CHECK_UINT(b.nr, 2);
	CHECK_UINT(b.blk[1], 1);
	CHECK_OK(slotsum_set_add_entries(&b, 2, 1012, 1));
	CHECK_UINT(b.nr, 3);
	CHECK_UINT(b.blk[2], 2);
	slotsum_set_free(&a);
	slotsum_set_free(&b);
	slotsum_set_free(NULL);
}

static void test_next_slot(void)
{
	static const struct {
		uint64_t gens[2];
		unsigned slot;
	} cases[] = {
		{ { 0, 0 }, 0 },	   /* fresh device: A first */
		{ { 1, 0 }, 1 },	   /* then B */
		{ { 1, 2 }, 0 },	   /* then A again */
		{ { 3, 2 }, 1 },
		{ { 0, 5 }, 0 },	   /* A torn or damaged: rewrite it */
		{ { 5, 0 }, 1 },
		{ { 4, 4 }, 0 },	   /* a tie keeps one copy either way */
		{ { UINT64_MAX, 1 }, 1 },
		{ { 1, UINT64_MAX }, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_UINT(metadata_next_slot(cases[i].gens), cases[i].slot);
}

/* Every run of metadata_next_change() from the start, as "first:count" block pairs. */
static void change_runs(const void *old, size_t old_len, const void *cur, size_t len, char *out,
			size_t out_len)
{
	size_t off = 0, run = 0;
	int n = 0;

	out[0] = 0;
	while (metadata_next_change(old, old_len, cur, len, &off, &run)) {
		CHECK(off % METADATA_BLOCK == 0 && run > 0 && off + run <= len);
		n += snprintf(out + n, out_len - (size_t)n, "%s%zu:%zu", n ? " " : "",
			      off / METADATA_BLOCK, (run + METADATA_BLOCK - 1) / METADATA_BLOCK);
		off += run;
	}
}

static void test_next_change(void)
{
	enum { BLOCKS = 10, LEN = BLOCKS * METADATA_BLOCK + 100 };
	unsigned char *old = calloc(1, LEN), *cur = calloc(1, LEN), *disk = malloc(LEN);
	char runs[256];
	size_t off, run;
	unsigned seed = 1;

	CHECK(old && cur && disk);
	change_runs(old, LEN, cur, LEN, runs, sizeof(runs));
	CHECK_STR(runs, "");
	cur[3 * METADATA_BLOCK + 5]++;
	cur[5 * METADATA_BLOCK - 1]++;
	cur[7 * METADATA_BLOCK]++;
	change_runs(old, LEN, cur, LEN, runs, sizeof(runs));
	CHECK_STR(runs, "3:2 7:1");
	/* The short last block counts as a block. */
	cur[LEN - 1]++;
	change_runs(old, LEN, cur, LEN, runs, sizeof(runs));
	CHECK_STR(runs, "3:2 7:1 10:1");
	off = 0;
	CHECK_INT(metadata_next_change(old, LEN, cur, LEN, &off, &run), 1);
	CHECK_UINT(run, 2 * METADATA_BLOCK);
	off = 10 * METADATA_BLOCK;
	CHECK_INT(metadata_next_change(old, LEN, cur, LEN, &off, &run), 1);
	CHECK_UINT(run, 100);
	/* Unknown content, or a record that was shorter: all of it, or its tail. */
	change_runs(NULL, 0, cur, LEN, runs, sizeof(runs));
	CHECK_STR(runs, "0:11");
	change_runs(old, 6 * METADATA_BLOCK + 1, cur, LEN, runs, sizeof(runs));
	CHECK_STR(runs, "3:2 6:5");
	/* A shorter record: nothing past it is compared or written. */
	change_runs(old, LEN, cur, 4 * METADATA_BLOCK, runs, sizeof(runs));
	CHECK_STR(runs, "3:1");

	/* Writing the runs over what old holds gives cur, whatever changed. */
	for (int round = 0; round < 200; round++) {
		size_t written = 0, differing = 0;

		for (size_t i = 0; i < LEN; i++)
			old[i] = cur[i] = (unsigned char)rand_r(&seed);
		for (int k = rand_r(&seed) % 6; k > 0; k--)
			cur[(size_t)rand_r(&seed) % LEN] ^= 1 + rand_r(&seed) % 255;
		for (size_t b = 0; b < LEN; b += METADATA_BLOCK) {
			size_t n = LEN - b < METADATA_BLOCK ? LEN - b : METADATA_BLOCK;

			differing += memcmp(old + b, cur + b, n) != 0;
		}
		memcpy(disk, old, LEN);
		off = 0;
		while (metadata_next_change(old, LEN, cur, LEN, &off, &run)) {
			memcpy(disk + off, cur + off, run);
			written += (run + METADATA_BLOCK - 1) / METADATA_BLOCK;
			off += run;
		}
		CHECK(memcmp(disk, cur, LEN) == 0);
		CHECK_UINT(written, differing);
	}
	free(old);
	free(cur);
	free(disk);
}

static void test_uuid(void)
{
	static const char *const bad[] = {
		"",
		"12345678-9abc-def0-0fed-cba98765432",
		"12345678-9abc-def0-0fed-cba9876543210",
		"123456789abcdef00fedcba987654321",
		"12345678-9abc-def0-0fed-cba98765432g",
		"1234567-89abc-def0-0fed-cba987654321",
		"12345678-9abc-def0-0fedc-ba987654321",
		"12345678 9abc-def0-0fed-cba987654321",
		"12345678-9abc-def0-0fed-cba98765432 ",
		"+2345678-9abc-def0-0fed-cba987654321",
		"{2345678-9abc-def0-0fed-cba98765432}",
	};
	uint8_t uuid[16], all[16];
	char text[37];

	metadata_uuid_format(pool_uuid, text);
	CHECK_STR(text, "12345678-9abc-def0-0fed-cba987654321");
	CHECK_OK(metadata_uuid_parse(uuid, text));
	CHECK(!memcmp(uuid, pool_uuid, 16));
	memset(uuid, 0, 16);
	CHECK_OK(metadata_uuid_parse(uuid, "12345678-9ABC-DEF0-0FED-CBA987654321"));
	CHECK(!memcmp(uuid, pool_uuid, 16));

	/* Every byte value survives the round trip. */
	for (unsigned v = 0; v < 256; v += 16) {
		for (unsigned i = 0; i < 16; i++)
			all[i] = (uint8_t)(v + i);
		metadata_uuid_format(all, text);
		CHECK_UINT(strlen(text), 36);
		CHECK_OK(metadata_uuid_parse(uuid, text));
		CHECK(!memcmp(uuid, all, 16));
	}

	memset(uuid, 0x42, 16);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (metadata_uuid_parse(uuid, bad[i]) != -EINVAL)
			fprintf(stderr, "accepted: \"%s\"\n", bad[i]);
		CHECK_INT(metadata_uuid_parse(uuid, bad[i]), -EINVAL);
	}
	CHECK_INT(metadata_uuid_parse(uuid, NULL), -EINVAL);
	CHECK_INT(metadata_uuid_parse(NULL, text), -EINVAL);
	for (unsigned i = 0; i < 16; i++)
		CHECK_UINT(uuid[i], 0x42);
}

static void test_name(void)
{
	static const char *const good[] = { "a", "tank", "Pool_0", "v1.2+ssd-hdd", "0", "_x" };
	static const char *const bad[] = { "", ".hidden", "-rf", "a b", "a/b", "a\\b", "caf\xc3\xa9",
					   "a\tb", "a:b", "a*", "x\n" };
	char name[METADATA_NAME_MAX + 2];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK_OK(metadata_name_valid(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (metadata_name_valid(bad[i]) != -EINVAL)
			fprintf(stderr, "accepted: \"%s\"\n", bad[i]);
		CHECK_INT(metadata_name_valid(bad[i]), -EINVAL);
	}
	CHECK_INT(metadata_name_valid(NULL), -EINVAL);

	memset(name, 'n', METADATA_NAME_MAX);
	name[METADATA_NAME_MAX] = '\0';
	CHECK_OK(metadata_name_valid(name));
	name[METADATA_NAME_MAX] = 'n';
	name[METADATA_NAME_MAX + 1] = '\0';
	CHECK_INT(metadata_name_valid(name), -EINVAL);
}

/*
 * small_slot()'s pool with split extents: containers at dev 1 pe 4 and 5,
 * pieces of 16 KiB (256 to an extent): le 0's pieces 5 and 6 in slots 0
 * and 1 of the first, le 7's last in slot 0 of the second.
 */
#define PIECES_AT 320 /* metadata_pool_bytes(2, 8): the section follows the map */
#define PIECES_CONTAINERS (PIECES_AT + 16)
#define PIECES_PIECES (PIECES_CONTAINERS + 2 * 8)
#define PIECES_END (PIECES_PIECES + 3 * 12)

static void small_pieces(struct metadata_pool *p, struct extmap *m, struct piecemap *pm)
{
	static const uint32_t where[3][2] = { { 0, 5 }, { 0, 6 }, { 7, 255 } };
	uint32_t c;
	uint16_t s;

	make_pool(p, 5, 6);
	init_map(m, p, 8);
	for (uint32_t le = 0; le < 8; le++)
		if (le != 3)
			CHECK_OK(extmap_map(m, le, le % 2, le / 2));
	CHECK_OK(piecemap_init(pm, 256));
	for (uint32_t pe = 4; pe <= 5; pe++) {
		CHECK_OK(extmap_claim(m, 1, pe));
		CHECK_OK(piecemap_add_container(pm, 1, pe, NULL));
	}
	for (unsigned i = 0; i < 3; i++) {
		CHECK_OK(piecemap_alloc_slot(pm, 1, &c, &s));
		if (i == 2) {
			/* Into the second container: give the first's slot back. */
			CHECK_OK(piecemap_release_slot(pm, c, s));
			CHECK_OK(piecemap_claim_slot(pm, 1, 0));
			c = 1;
			s = 0;
		}
		CHECK_OK(piecemap_place(pm, where[i][0], where[i][1], c, s));
	}
}

static void test_pieces_round_trip(void)
{
	unsigned char buf[4096], plain[4096];
	struct metadata_pool p, got;
	struct piecemap pm, back_pm, empty;
	struct extmap m, back;
	uint32_t pe;

	small_pieces(&p, &m, &pm);
	CHECK_UINT(metadata_pieces_bytes(&pm), PIECES_END - PIECES_AT);
	CHECK_UINT(metadata_pieces_bytes(NULL), 0);
	CHECK_INT(metadata_pool_encode(&p, &m, &pm, buf, PIECES_END - 1), -ENOSPC);
	memset(buf, 0xee, sizeof(buf));
	CHECK_OK(metadata_pool_encode(&p, &m, &pm, buf, sizeof(buf)));
	/* The format, pinned. */
	CHECK_UINT(get_le(buf + 8, 4), METADATA_VERSION_PIECES);
	CHECK_UINT(get_le(buf + SLOT_LENGTH_OFF, 8), PIECES_END - 32);
	CHECK_UINT(get_le(buf + PIECES_AT, 4), 256);
	CHECK_UINT(get_le(buf + PIECES_AT + 4, 4), 2);
	CHECK_UINT(get_le(buf + PIECES_AT + 8, 4), 3);
	CHECK_UINT(get_le(buf + PIECES_AT + 12, 4), 0);
	CHECK_UINT(get_le(buf + PIECES_CONTAINERS, 2), 1);
	CHECK_UINT(get_le(buf + PIECES_CONTAINERS + 4, 4), 4);
	CHECK_UINT(get_le(buf + PIECES_CONTAINERS + 12, 4), 5);
	CHECK_UINT(get_le(buf + PIECES_PIECES + 24, 4), 7);
	CHECK_UINT(get_le(buf + PIECES_PIECES + 28, 2), 255);
	CHECK_UINT(get_le(buf + PIECES_PIECES + 30, 2), 0);
	CHECK_UINT(get_le(buf + PIECES_PIECES + 32, 4), 1);
	CHECK_UINT(get_le(buf + PIECES_PIECES + 12 + 6, 2), 1);

	CHECK_OK(metadata_pool_decode(&got, &back, &back_pm, buf, sizeof(buf)));
	check_map_equal(&m, &back);
	CHECK_UINT(back_pm.pieces_per_extent, 256);
	CHECK_UINT(back_pm.nr_containers, 2);
	CHECK_UINT(back_pm.nr_pieces, 3);
	CHECK(!memcmp(back_pm.pieces, pm.pieces, 3 * sizeof(*pm.pieces)));
	CHECK_UINT(back_pm.containers[1].pe, 5);
	CHECK_UINT(back_pm.containers[0].nr_used, 2);
	/* The containers are used in the decoded map: the next free pe of dev 1 is 1. */
	CHECK_OK(extmap_alloc(&back, 1, &pe));
	CHECK_UINT(pe, 1);
	CHECK_INT(extmap_alloc(&back, 1, &pe), -ENOSPC);
	piecemap_destroy(&back_pm);
	extmap_destroy(&back);

	/* No containers: version 1, byte for byte what a pool without pieces writes. */
	CHECK_OK(piecemap_init(&empty, 256));
	memset(plain, 0, sizeof(plain));
	CHECK_OK(metadata_pool_encode(&p, &m, &empty, plain, sizeof(plain)));
	CHECK_UINT(get_le(plain + 8, 4), METADATA_VERSION);
	CHECK_UINT(get_le(plain + SLOT_LENGTH_OFF, 8), PIECES_AT - 32);
	memset(buf, 0, sizeof(buf));
	CHECK_OK(metadata_pool_encode(&p, &m, NULL, buf, sizeof(buf)));
	CHECK(!memcmp(buf, plain, sizeof(buf)));
	CHECK_OK(metadata_pool_decode(&got, &back, &back_pm, buf, sizeof(buf)));
	CHECK_UINT(back_pm.pieces_per_extent, 0);
	CHECK_UINT(back_pm.nr_containers, 0);
	extmap_destroy(&back);

	/* What encode refuses. */
	pm.pieces_per_extent = 2048; /* 2 KiB pieces */
	CHECK_INT(metadata_pool_encode(&p, &m, &pm, buf, sizeof(buf)), -EINVAL);
	pm.pieces_per_extent = 256;
	pm.containers[1].pe = 6;
	CHECK_INT(metadata_pool_encode(&p, &m, &pm, buf, sizeof(buf)), -EINVAL);
	pm.containers[1].pe = 5;
	pm.pieces[2].le = 8;
	CHECK_INT(metadata_pool_encode(&p, &m, &pm, buf, sizeof(buf)), -EINVAL);
	pm.pieces[2].le = 3; /* unmapped */
	CHECK_INT(metadata_pool_encode(&p, &m, &pm, buf, sizeof(buf)), -EINVAL);
	pm.pieces[2].le = 7;
	pm.pieces[2].idx = 256;
	CHECK_INT(metadata_pool_encode(&p, &m, &pm, buf, sizeof(buf)), -EINVAL);
	pm.pieces[2].idx = 255;
	pm.pieces[2].slot = 256;
	CHECK_INT(metadata_pool_encode(&p, &m, &pm, buf, sizeof(buf)), -EINVAL);
	pm.pieces[2].slot = 0;
	CHECK_OK(extmap_release(&m, 1, 5)); /* a container the map does not hold used */
	CHECK_INT(metadata_pool_encode(&p, &m, &pm, buf, sizeof(buf)), -EINVAL);
	CHECK_OK(extmap_claim(&m, 1, 5));
	CHECK_OK(metadata_pool_encode(&p, &m, &pm, buf, sizeof(buf)));
	piecemap_destroy(&empty);
	piecemap_destroy(&pm);
	extmap_destroy(&m);
}

static void test_pieces_damage(void)
{
#define CONT(i, off) (PIECES_CONTAINERS + (i) * 8 + (off))
#define PIECE(i, off) (PIECES_PIECES + (i) * 12 + (off))
	static const struct {
		const char *what;
		struct patch p;
		int err;
	} cases[] = {
		{ "version 1 with pieces", { 8, 4, 1 }, -EUCLEAN },
		{ "3 pieces to an extent", { PIECES_AT, 4, 3 }, -EUCLEAN },
		{ "1 piece to an extent", { PIECES_AT, 4, 1 }, -EUCLEAN },
		{ "pieces of 2 KiB", { PIECES_AT, 4, 2048 }, -EUCLEAN },
		{ "no containers", { PIECES_AT + 4, 4, 0 }, -EUCLEAN },
		{ "a container more than written", { PIECES_AT + 4, 4, 3 }, -EUCLEAN },
		{ "a piece fewer than written", { PIECES_AT + 8, 4, 2 }, -EUCLEAN },
		{ "a piece count huge", { PIECES_AT + 8, 4, UINT32_MAX }, -EUCLEAN },
		{ "container on no device", { CONT(0, 0), 2, 2 }, -EUCLEAN },
		{ "container past its device", { CONT(1, 4), 4, 6 }, -EUCLEAN },
		{ "container on a mapped pe", { CONT(1, 4), 4, 0 }, -EUCLEAN },
		{ "container twice", { CONT(1, 4), 4, 4 }, -EUCLEAN },
		{ "piece of an unmapped le", { PIECE(2, 0), 4, 3 }, -EUCLEAN },
		{ "piece past the map", { PIECE(2, 0), 4, 8 }, -EUCLEAN },
		{ "piece past its extent", { PIECE(2, 4), 2, 256 }, -EUCLEAN },
		{ "piece twice", { PIECE(1, 4), 2, 5 }, -EUCLEAN },
		{ "pieces out of order", { PIECE(1, 4), 2, 4 }, -EUCLEAN },
		{ "two pieces, one slot", { PIECE(1, 6), 2, 0 }, -EUCLEAN },
		{ "slot past its container", { PIECE(1, 6), 2, 256 }, -EUCLEAN },
		{ "piece in no container", { PIECE(2, 8), 4, 2 }, -EUCLEAN },
	};
	unsigned char buf[4096], copy[4096];
	struct metadata_pool p;
	struct piecemap pm;
	struct extmap m;

	small_pieces(&p, &m, &pm);
	CHECK_OK(metadata_pool_encode(&p, &m, &pm, buf, sizeof(buf)));
	piecemap_destroy(&pm);
	extmap_destroy(&m);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct piecemap got;

		memcpy(copy, buf, PIECES_END);
		put_le(copy + cases[i].p.off, cases[i].p.value, cases[i].p.width);
		reseal_slot(copy);
		if (metadata_pool_decode(&p, &m, &got, copy, PIECES_END) != cases[i].err)
			fprintf(stderr, "not caught: %s\n", cases[i].what);
		CHECK_INT(metadata_pool_decode(&p, &m, &got, copy, PIECES_END), cases[i].err);
		CHECK(got.pieces == NULL && got.containers == NULL);
		CHECK(m.pages.leaf == NULL && m.runs == NULL);
	}
	/* A record cut short in the pieces. */
	memcpy(copy, buf, PIECES_END);
	put_le(copy + SLOT_LENGTH_OFF, PIECES_END - 32 - 12, 8);
	reseal_slot(copy);
	expect_decode_fails(copy, PIECES_END, -EUCLEAN);
#undef CONT
#undef PIECE
}

/*
 * Tens of thousands of containers decode in linear time or near it: a
 * record read from a device must not stall an import (a check of every
 * pair took 2.5 s at 80,000).
 */
static void test_pieces_many_containers(void)
{
	const uint32_t nr_c = 80000;
	struct metadata_pool p, got;
	struct extmap m, back;
	struct piecemap pm, back_pm;
	unsigned char *buf;
	size_t len;
	double t0, elapsed;

	make_pool(&p, 800, nr_c + 10);
	init_map(&m, &p, 800);
	CHECK_INT(extmap_fill_linear(&m, 0), 800);
	CHECK_OK(piecemap_init(&pm, 256));
	for (uint32_t pe = 0; pe < nr_c; pe++) {
		CHECK_OK(extmap_claim(&m, 1, pe));
		CHECK_OK(piecemap_append_container(&pm, 1, pe, NULL));
	}
	len = metadata_pool_bytes(2, 800) + metadata_pieces_bytes(&pm);
	buf = malloc(len);
	CHECK(buf != NULL);
	CHECK_OK(metadata_pool_encode(&p, &m, &pm, buf, len));
	t0 = now();
	CHECK_OK(metadata_pool_decode(&got, &back, &back_pm, buf, len));
	elapsed = now() - t0;
	printf("%u piece containers decoded: %.3f s\n", nr_c, elapsed);
	CHECK(elapsed < 1.0);
	CHECK_UINT(back_pm.nr_containers, nr_c);
	CHECK_UINT(back.nr_free[1], 10);
	/* A container twice is refused, found by the claim. */
	put_le(buf + metadata_pool_bytes(2, 800) + 16 + 8 + 4, 0, 4);
	reseal_slot(buf);
	expect_decode_fails(buf, len, -EUCLEAN);
	piecemap_destroy(&back_pm);
	extmap_destroy(&back);
	free(buf);
	piecemap_destroy(&pm);
	extmap_destroy(&m);
}

/*
 * A record with thousands of pieces, over several blocks: each block as
 * encode_block writes it is that block of the whole record, 12-byte pieces
 * straddling block boundaries included, and the block sums give its crc.
 */
static void test_pieces_blocks(void)
{
	const uint32_t nr = 1000;
	unsigned char block[METADATA_BLOCK], *whole;
	struct metadata_pool p, got;
	struct extmap m, back;
	struct piecemap pm, back_pm;
	struct slotsum sum;
	uint32_t seed = 99, c;
	uint16_t s;
	size_t len, n;

	make_pool(&p, 800, 400);
	init_map(&m, &p, nr);
	CHECK_INT(extmap_fill_linear(&m, 0), 800);
	CHECK_INT(extmap_fill_linear(&m, 1), 200);
	CHECK_OK(piecemap_init(&pm, 256));
	for (unsigned i = 0; i < 50; i++) {
		uint32_t pe;

		CHECK_OK(extmap_alloc(&m, 1, &pe));
		CHECK_OK(piecemap_add_container(&pm, 1, pe, NULL));
	}
	while (pm.nr_pieces < 3000) {
		uint32_t le = rnd(&seed) % nr, idx = rnd(&seed) % 256;

		if (piecemap_find(&pm, le, idx, NULL, NULL) == 0)
			continue;
		CHECK_OK(piecemap_alloc_slot(&pm, 1, &c, &s));
		CHECK_OK(piecemap_place(&pm, le, idx, c, s));
	}
	len = metadata_pool_bytes(2, nr) + metadata_pieces_bytes(&pm);
	whole = malloc(len);
	CHECK(whole != NULL);
	CHECK_OK(metadata_pool_encode(&p, &m, &pm, whole, len));
	CHECK_OK(slotsum_init(&sum, len));
	CHECK(sum.nr_blocks >= 10);
	for (size_t blk = 0; blk < sum.nr_blocks; blk++) {
		CHECK_OK(metadata_pool_encode_block(&p, &m, &pm, blk, block, &n));
		CHECK_UINT(n, slotsum_block_len(&sum, blk));
		if (blk == 0) {
			CHECK(!memcmp(block, whole, 12));
			CHECK(!memcmp(block + 16, whole + 16, n - 16));
		} else {
			CHECK(!memcmp(block, whole + blk * METADATA_BLOCK, n));
		}
		sum.crc[blk] = slotsum_of(&sum, blk, block);
	}
	CHECK_UINT(slotsum_total(&sum), get_le(whole + 12, 4));
	CHECK_OK(metadata_pool_decode(&got, &back, &back_pm, whole, len));
	CHECK_UINT(back_pm.nr_pieces, 3000);
	CHECK(!memcmp(back_pm.pieces, pm.pieces, 3000 * sizeof(*pm.pieces)));
	check_map_equal(&m, &back);
	piecemap_destroy(&back_pm);
	extmap_destroy(&back);
	slotsum_destroy(&sum);
	free(whole);
	piecemap_destroy(&pm);
	extmap_destroy(&m);
}

int main(void)
{
	test_pieces_round_trip();
	test_pieces_damage();
	test_pieces_blocks();
	test_pieces_many_containers();
	test_blocks_and_sums();
	test_slotsum_sets();
	test_slot_bytes();
	test_layout();
	test_layout_limits();
	test_layout_stripes();
	test_sb_round_trip();
	test_sb_encode_refuses();
	test_sb_damage();
	test_sb_inconsistent();
	test_pool_round_trip();
	test_pool_damage();
	test_pool_encode_refuses();
	test_large();
	test_next_slot();
	test_next_change();
	test_uuid();
	test_name();
	return 0;
}
