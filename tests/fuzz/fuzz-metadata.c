/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-metadata: arbitrary bytes as a superblock or a metadata slot read
 * from a device, through the decoders activation and `pool import` trust.
 * The first byte chooses which, and whether to seal the rest first (magic,
 * version, length and checksum made right), so that the fields behind the
 * checksum are fuzzed too. Whatever decodes must encode back to bytes that
 * decode to the same. A crash, a leak or a broken invariant is a finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "crc32c.h"
#include "extmap.h"
#include "metadata.h"


static void put_le(unsigned char *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* The on-device seal: magic, version, crc32c over the record with its crc field zero. */
static void seal(unsigned char *buf, size_t len, const char *magic, uint32_t version)
{
	memcpy(buf, magic, 8);
	put_le(buf + 8, version, 4);
	put_le(buf + 12, 0, 4);
	put_le(buf + 12, crc32c(0, buf, len), 4);
}

static void fuzz_sb(const uint8_t *data, size_t size, int sealed)
{
	static unsigned char block[METADATA_BLOCK], again[METADATA_BLOCK], third[METADATA_BLOCK];
	struct metadata_sb sb, back;

	memset(block, 0, sizeof(block));
	memcpy(block, data, size < sizeof(block) ? size : sizeof(block));
	if (sealed)
		seal(block, sizeof(block), "TIERDSB1", METADATA_VERSION);
	if (metadata_sb_decode(&sb, block) != 0)
		return;
	FUZZ_ASSERT(metadata_sb_encode(&sb, again) == 0);
	FUZZ_ASSERT(metadata_sb_decode(&back, again) == 0);
	FUZZ_ASSERT(metadata_sb_encode(&back, third) == 0);
	FUZZ_ASSERT(memcmp(again, third, sizeof(again)) == 0);
}

/* version: what a sealed record claims (2: one with split extents' pieces). */
static void fuzz_slot(const uint8_t *data, size_t size, int sealed, uint32_t version)
{
	unsigned char *buf = malloc(size ? size : 1), *again;
	struct metadata_pool p, back;
	struct extmap m, back_m;
	struct piecemap pm, back_pm;
	uint64_t gen, bytes;
	size_t len;

	FUZZ_ASSERT(buf);
	memcpy(buf, data, size);
	if (sealed && size >= 32) {
		put_le(buf + 24, size - 32, 8);
		seal(buf, size, "TIERDMD1", version);
	}
	metadata_pool_peek(buf, size, &gen, &bytes);
	if (metadata_pool_decode(&p, &m, &pm, buf, size) != 0) {
		free(buf);
		return;
	}
	len = metadata_pool_bytes(p.nr_devs, m.nr_logical) + metadata_pieces_bytes(&pm);
	again = calloc(1, len);
	FUZZ_ASSERT(again);
	FUZZ_ASSERT(metadata_pool_encode(&p, &m, &pm, again, len) == 0);
	FUZZ_ASSERT(metadata_pool_decode(&back, &back_m, &back_pm, again, len) == 0);
	FUZZ_ASSERT(back.generation == p.generation && back.nr_devs == p.nr_devs);
	FUZZ_ASSERT(extmap_same_mapping(&m, &back_m));
	FUZZ_ASSERT(back_pm.nr_pieces == pm.nr_pieces && back_pm.nr_containers == pm.nr_containers);
	FUZZ_ASSERT(!pm.nr_pieces ||
		    !memcmp(back_pm.pieces, pm.pieces, pm.nr_pieces * sizeof(*pm.pieces)));
	for (uint32_t i = 0; i < pm.nr_containers; i++)
		FUZZ_ASSERT(back_pm.containers[i].dev == pm.containers[i].dev &&
			    back_pm.containers[i].pe == pm.containers[i].pe &&
			    back_pm.containers[i].nr_used == pm.containers[i].nr_used);
	extmap_destroy(&m);
	extmap_destroy(&back_m);
	piecemap_destroy(&pm);
	piecemap_destroy(&back_pm);
	free(again);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		fuzz_sb(data + 1, size - 1, data[0] & 2);
	else
		fuzz_slot(data + 1, size - 1, data[0] & 2,
			  data[0] & 4 ? METADATA_VERSION_PIECES : METADATA_VERSION);
	return 0;
}
