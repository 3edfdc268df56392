/* SPDX-License-Identifier: GPL-2.0-or-later */
/* planner: every plan replayed in order against the free space it was given. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "planner.h"
#include "policy.h"

#define EB (UINT64_C(1) << 30) /* extent bytes: any size, the budget counts in them */
#define NOW 1700000000u
#define HOUR 3600u

/* A pool in the making: extents plus the free space around them. */
struct pool {
	struct planner_extent *ext;
	uint32_t nr;
	struct planner_input in;
	struct policy policy;
};

static void pool_init(struct pool *p, uint32_t nr, const char *policy)
{
	*p = (struct pool){ .nr = nr };
	p->ext = calloc(nr ? nr : 1, sizeof(*p->ext));
	CHECK(p->ext != NULL);
	policy_default(&p->policy);
	if (!strcmp(policy, "highest")) {
		p->policy.promote = POLICY_PROMOTE_ALL;
		p->policy.ssd_headroom = 0;
	} else if (!strcmp(policy, "lowest")) {
		p->policy.promote = POLICY_PROMOTE_NONE;
		p->policy.demote = POLICY_DEMOTE_ALL;
		p->policy.min_residency_s = 0;
	} else {
		CHECK_STR(policy, "auto");
	}
	for (uint32_t i = 0; i < nr; i++)
		p->ext[i].tier = PLANNER_HDD;
	p->in = (struct planner_input){
		.ext = p->ext,
		.nr = nr,
		.extent_bytes = EB,
		.now = NOW,
		.policy = &p->policy,
	};
}

static void pool_destroy(struct pool *p)
{
	free(p->ext);
}

/* ssd_capacity and ssd_free from the extents placed on the SSD and what is left. */
static void pool_ssd(struct pool *p, uint32_t capacity, uint32_t hdd_free)
{
	uint32_t on_ssd = 0;

	for (uint32_t i = 0; i < p->nr; i++)
		on_ssd += p->ext[i].tier == PLANNER_SSD;
	CHECK(on_ssd <= capacity);
	p->in.ssd_capacity = capacity;
	p->in.ssd_free = capacity - on_ssd;
	p->in.hdd_free = hdd_free;
}

static bool settled(const struct planner_input *in, const struct planner_extent *e)
{
	uint32_t min = in->policy->min_residency_s;

	return !min || !e->moved_at || (in->now >= e->moved_at && in->now - e->moved_at >= min);
}

/*
 * Run the plan as the daemon would, one move after the other, and check
 * every rule that holds for any input: each move finds its destination
 * free, no extent moves twice or off its pin, the counters and the budget
 * add up, the shares match.  tiers_out (may be NULL) gets where each
 * extent ends up.
 */
static void check_plan(const struct planner_input *in, const struct plan *plan,
		       uint8_t *tiers_out)
{
	uint8_t *tier = malloc(in->nr ? in->nr : 1);
	bool *moved = calloc(in->nr ? in->nr : 1, sizeof(*moved));
	uint64_t ssd_free = in->ssd_free, hdd_free = in->hdd_free;
	uint64_t promoted = 0, demoted = 0;
	double heat = 0, ssd_heat_before = 0, ssd_heat_after = 0;
	bool pins_promoted = false, pins_demoted = false;

	CHECK(tier && moved);
	for (uint32_t i = 0; i < in->nr; i++)
		tier[i] = in->ext[i].tier;
	if (!in->ssd_capacity)
		CHECK_UINT(plan->nr, 0);
	for (size_t m = 0; m < plan->nr; m++) {
		const struct planner_move *mv = &plan->moves[m];

		CHECK(mv->le < in->nr);
		if (in->ext[mv->le].pin == PLANNER_SSD && mv->to == PLANNER_SSD)
			pins_promoted = true;
		if (in->ext[mv->le].pin == PLANNER_HDD && mv->to == PLANNER_HDD)
			pins_demoted = true;
	}
	for (size_t m = 0; m < plan->nr; m++) {
		const struct planner_move *mv = &plan->moves[m];
		const struct planner_extent *e = &in->ext[mv->le];

		CHECK(!moved[mv->le]);
		moved[mv->le] = true;
		CHECK(mv->to == PLANNER_HDD || mv->to == PLANNER_SSD);
		CHECK(tier[mv->le] != PLANNER_NONE && tier[mv->le] != mv->to);
		CHECK(e->pin == PLANNER_NONE || e->pin == mv->to);
		if (mv->to == PLANNER_SSD) {
			CHECK(ssd_free > 0);
			ssd_free--;
			hdd_free++;
			promoted++;
			if (e->pin == PLANNER_NONE)
				CHECK(in->policy->promote != POLICY_PROMOTE_NONE);
			/* Only a pin to a full HDD may promote what heat and residency would not. */
			if (e->pin == PLANNER_NONE && !pins_demoted) {
				CHECK(settled(in, e));
				if (in->policy->promote == POLICY_PROMOTE_HEAT)
					CHECK(e->heat >= in->policy->min_heat);
			}
		} else {
			CHECK(hdd_free > 0);
			hdd_free--;
			ssd_free++;
			demoted++;
			/* Only a pin may displace an extent that moved recently. */
			if (e->pin == PLANNER_NONE && !settled(in, e))
				CHECK(pins_promoted);
		}
		tier[mv->le] = mv->to;
	}
	CHECK(ssd_free <= in->ssd_capacity);
	CHECK_UINT(plan->promote_extents, promoted);
	CHECK_UINT(plan->demote_extents, demoted);
	CHECK_UINT(plan->promote_bytes, promoted * in->extent_bytes);
	CHECK_UINT(plan->demote_bytes, demoted * in->extent_bytes);
	if (in->max_bytes)
		CHECK((promoted + demoted) * in->extent_bytes <= in->max_bytes);

	for (uint32_t i = 0; i < in->nr; i++) {
		if (in->ext[i].tier == PLANNER_NONE)
			continue;
		heat += in->ext[i].heat;
		if (in->ext[i].tier == PLANNER_SSD)
			ssd_heat_before += in->ext[i].heat;
		if (tier[i] == PLANNER_SSD)
			ssd_heat_after += in->ext[i].heat;
	}
	if (heat > 0) {
		double tolerance = 1e-9;

		CHECK(plan->ssd_share_before > ssd_heat_before / heat - tolerance);
		CHECK(plan->ssd_share_before < ssd_heat_before / heat + tolerance);
		CHECK(plan->ssd_share_after > ssd_heat_after / heat - tolerance);
		CHECK(plan->ssd_share_after < ssd_heat_after / heat + tolerance);
	} else {
		CHECK(plan->ssd_share_before == 0 && plan->ssd_share_after == 0);
	}
	CHECK(plan->ssd_share_after >= 0 && plan->ssd_share_after <= 1);
	if (in->max_table_targets) {
		/*
		 * The table at its worst: every boundary beside a moved extent a
		 * target boundary, the others as they were.
		 */
		uint64_t worst = in->nr ? 1 : 0;

		for (uint32_t le = 1; le < in->nr; le++)
			worst += (in->ext[le].flags & PLANNER_STARTS_RUN) || moved[le - 1] || moved[le];
		CHECK(worst <= (in->max_table_targets > in->table_targets ? in->max_table_targets :
				in->table_targets));
	} else {
		CHECK_UINT(plan->table_skipped, 0);
	}
	if (tiers_out)
		memcpy(tiers_out, tier, in->nr);
	free(tier);
	free(moved);
}

/* Plan, check, and keep the plan for the caller's own checks. */
static void plan_checked(const struct pool *p, struct plan *plan)
{
	CHECK_OK(planner_plan(&p->in, plan));
	check_plan(&p->in, plan, NULL);
}

/* The plan is exactly these moves; le | SSD_MOVE promotes, a bare le demotes. */
#define TO_SSD 0x80000000u
static void check_moves_(const char *file, int line, const struct plan *plan, const uint32_t *want,
			 size_t nr)
{
	bool same = plan->nr == nr;

	for (size_t i = 0; same && i < nr; i++)
		same = plan->moves[i].le == (want[i] & ~TO_SSD) &&
		       plan->moves[i].to == (want[i] & TO_SSD ? PLANNER_SSD : PLANNER_HDD);
	if (same)
		return;
	fprintf(stderr, "%s:%d: check failed: plan is", file, line);
	for (size_t i = 0; i < plan->nr; i++)
		fprintf(stderr, " %s%u", plan->moves[i].to == PLANNER_SSD ? "+" : "-",
			plan->moves[i].le);
	fprintf(stderr, ", wanted");
	for (size_t i = 0; i < nr; i++)
		fprintf(stderr, " %s%u", want[i] & TO_SSD ? "+" : "-", want[i] & ~TO_SSD);
	fprintf(stderr, "\n");
	exit(1);
}
#define CHECK_MOVES(plan, ...)                                                               \
	do {                                                                                 \
		const uint32_t want_[] = { __VA_ARGS__ };                                    \
		check_moves_(__FILE__, __LINE__, (plan), want_, sizeof(want_) / sizeof(*want_)); \
	} while (0)
#define CHECK_NO_MOVES(plan) check_moves_(__FILE__, __LINE__, (plan), NULL, 0)
#define UP(le) ((le) | TO_SSD)

static void test_no_ssd(void)
{
	struct pool p;
	struct plan plan;

	pool_init(&p, 10, "auto");
	for (uint32_t i = 0; i < 10; i++)
		p.ext[i].heat = 100;
	p.ext[3].pin = PLANNER_SSD;
	pool_ssd(&p, 0, 100);
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	CHECK(plan.moves == NULL);
	plan_destroy(&plan);

	/* No extents at all. */
	p.in.nr = 0;
	p.in.ssd_capacity = 10;
	p.in.ssd_free = 10;
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	plan_destroy(&plan);
	p.in.ext = NULL;
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	plan_destroy(&plan);
	pool_destroy(&p);
}

static void test_bad_input(void)
{
	struct pool p;
	struct plan plan;
	struct planner_input in;

	pool_init(&p, 4, "auto");
	p.ext[0].tier = PLANNER_SSD;
	pool_ssd(&p, 2, 10);
	CHECK_OK(planner_plan(&p.in, &plan));
	plan_destroy(&plan);

#define CHECK_BAD(change)                                      \
	do {                                                   \
		in = p.in;                                     \
		change;                                        \
		memset(&plan, 0x5a, sizeof(plan));             \
		CHECK_INT(planner_plan(&in, &plan), -EINVAL);  \
		CHECK(plan.moves == NULL && plan.nr == 0);     \
		CHECK(plan.promote_extents == 0);              \
	} while (0)
	CHECK_BAD(in.ext = NULL);
	CHECK_BAD(in.extent_bytes = 0);
	CHECK_BAD(in.ssd_free = 3);
	CHECK_BAD(in.ssd_free = 2); /* the extent on the SSD uses one of the two */
	CHECK_BAD(in.policy = NULL);
	CHECK_BAD(p.policy.hysteresis = 0.5);
	p.policy.hysteresis = 1.5;
	CHECK_BAD(p.ext[1].tier = 3);
	p.ext[1].tier = PLANNER_HDD;
	CHECK_BAD(p.ext[1].pin = 3);
	p.ext[1].pin = PLANNER_NONE;
	CHECK_BAD(p.ext[2].heat = -1);
	CHECK_BAD(p.ext[2].heat = 0.0f / 0.0f);
	CHECK_BAD(p.ext[2].heat = 1.0f / 0.0f);
	p.ext[2].heat = 0;
	/* Out of range even without an SSD tier: the input is wrong either way. */
	CHECK_BAD(in.ssd_capacity = in.ssd_free = 0);
#undef CHECK_BAD
	CHECK_INT(planner_plan(NULL, &plan), -EINVAL);
	CHECK_INT(planner_plan(&p.in, NULL), -EINVAL);
	/* -0.0 is a heat of 0, not an error. */
	p.ext[2].heat = -0.0f;
	plan_checked(&p, &plan);
	plan_destroy(&plan);
	plan_destroy(&plan);
	plan_destroy(NULL);
	pool_destroy(&p);
}

/* Free SSD space goes to the hottest, never beyond capacity or into the headroom. */
static void test_capacity_and_headroom(void)
{
	static const float heats[] = { 5, 50, 0.5, 20, 20, 7, 1, 0, 30, 2 };
	struct pool p;
	struct plan plan;

	pool_init(&p, 10, "auto");
	for (uint32_t i = 0; i < 10; i++)
		p.ext[i].heat = heats[i];
	p.policy.ssd_headroom = 0;
	pool_ssd(&p, 4, 100);
	plan_checked(&p, &plan);
	/* Equal heat: lower le first. */
	CHECK_MOVES(&plan, UP(1), UP(8), UP(3), UP(4));
	CHECK_UINT(plan.promote_bytes, 4 * EB);
	CHECK_UINT(plan.demote_extents, 0);
	CHECK(plan.ssd_share_before == 0);
	CHECK(plan.ssd_share_after > 0.88 && plan.ssd_share_after < 0.89); /* 120 of 135.5 */
	plan_destroy(&plan);

	/* min_heat 1: with room for all, 0.5 and 0 stay down. */
	pool_ssd(&p, 20, 100);
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(1), UP(8), UP(3), UP(4), UP(5), UP(0), UP(9), UP(6));
	plan_destroy(&plan);

	/* 10 % of 20 kept free: two fewer. */
	p.policy.ssd_headroom = 0.1;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(1), UP(8), UP(3), UP(4), UP(5), UP(0), UP(9), UP(6));
	p.in.ssd_capacity = 10;
	p.in.ssd_free = 10;
	plan_destroy(&plan);
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(1), UP(8), UP(3), UP(4), UP(5), UP(0), UP(9), UP(6));
	p.policy.ssd_headroom = 0.25; /* 2.5 rounds down to 2 */
	plan_destroy(&plan);
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(1), UP(8), UP(3), UP(4), UP(5), UP(0), UP(9), UP(6));
	p.policy.ssd_headroom = 0.5;
	plan_destroy(&plan);
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(1), UP(8), UP(3), UP(4), UP(5));
	plan_destroy(&plan);

	/* A full SSD with hotter data waiting and no HDD room: nothing can move. */
	p.policy.ssd_headroom = 0;
	for (uint32_t i = 0; i < 4; i++)
		p.ext[i + 6].tier = PLANNER_SSD;
	pool_ssd(&p, 4, 0);
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	plan_destroy(&plan);
	pool_destroy(&p);
}

/* An SSD fuller than its headroom allows gives back its coldest extents. */
static void test_restore_headroom(void)
{
	struct pool p;
	struct plan plan;

	pool_init(&p, 12, "auto");
	for (uint32_t i = 0; i < 10; i++) {
		p.ext[i].tier = PLANNER_SSD;
		p.ext[i].heat = (float)(10 + i);
	}
	p.ext[4].heat = 1;
	p.ext[7].heat = 2;
	p.ext[10].heat = 5; /* waiting, but not 1.5 times as hot as what stays */
	p.ext[11].heat = 9;
	p.policy.ssd_headroom = 0.2;
	pool_ssd(&p, 10, 5);
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 4, 7);
	plan_destroy(&plan);

	/* With as much hotter data waiting, the headroom comes first, then swaps. */
	p.ext[10].heat = 100;
	p.ext[11].heat = 90;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 4, 7, 0, UP(10), 1, UP(11));
	plan_destroy(&plan);

	/* The HDD's room bounds it. */
	p.in.hdd_free = 1;
	plan_checked(&p, &plan);
	/* Then swaps borrow the SSD's one free extent: promotion first. */
	CHECK_MOVES(&plan, 4, UP(10), 7, UP(11), 0);
	plan_destroy(&plan);

	/* promote = none keeps the headroom too, and promotes nothing. */
	p.in.hdd_free = 5;
	p.policy.promote = POLICY_PROMOTE_NONE;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 4, 7);
	plan_destroy(&plan);
	pool_destroy(&p);
}

static void test_hysteresis(void)
{
	struct pool p;
	struct plan plan;

	pool_init(&p, 2, "auto");
	p.ext[0].tier = PLANNER_SSD;
	p.ext[0].heat = 10;
	p.policy.ssd_headroom = 0;
	pool_ssd(&p, 1, 1);

	p.ext[1].heat = 14; /* 1.4 times */
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	plan_destroy(&plan);
	p.ext[1].heat = 15; /* exactly 1.5 times is not more */
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	plan_destroy(&plan);
	p.ext[1].heat = 15.01f;
	plan_checked(&p, &plan);
	/* Demotion first: the SSD has no free extent until it is done. */
	CHECK_MOVES(&plan, 0, UP(1));
	CHECK(plan.ssd_share_before < 0.4 && plan.ssd_share_after > 0.6);
	plan_destroy(&plan);

	/* Hysteresis 1: any hotter extent wins, an equal one does not. */
	p.policy.hysteresis = 1;
	p.ext[1].heat = 10;
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	plan_destroy(&plan);
	p.ext[1].heat = 10.001f;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 0, UP(1));
	plan_destroy(&plan);

	/* A cold SSD extent gives way to anything warm enough to promote. */
	p.policy.hysteresis = 100;
	p.ext[0].heat = 0;
	p.ext[1].heat = 1;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 0, UP(1));
	plan_destroy(&plan);
	pool_destroy(&p);
}

/* With no HDD room but some SSD headroom, a swap promotes first. */
static void test_swap_order(void)
{
	struct pool p;
	struct plan plan;

	pool_init(&p, 20, "auto");
	for (uint32_t i = 0; i < 9; i++) {
		p.ext[i].tier = PLANNER_SSD;
		p.ext[i].heat = (float)(i + 1);
	}
	for (uint32_t i = 9; i < 20; i++)
		p.ext[i].heat = (float)(100 + i);
	pool_ssd(&p, 10, 0); /* one free, the 10 % headroom */
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(19), 0, UP(18), 1, UP(17), 2, UP(16), 3, UP(15), 4, UP(14), 5,
		    UP(13), 6, UP(12), 7, UP(11), 8);
	plan_destroy(&plan);

	/* One HDD extent free: demotions lead, each promotion freeing the next one's room. */
	p.in.hdd_free = 1;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 0, UP(19), 1, UP(18), 2, UP(17), 3, UP(16), 4, UP(15), 5, UP(14), 6,
		    UP(13), 7, UP(12), 8, UP(11));
	plan_destroy(&plan);
	pool_destroy(&p);
}

static void test_residency(void)
{
	struct pool p;
	struct plan plan;

	pool_init(&p, 6, "auto");
	p.policy.ssd_headroom = 0;
	p.ext[0] = (struct planner_extent){ .tier = PLANNER_SSD, .heat = 1, .moved_at = NOW - 10 };
	p.ext[1] = (struct planner_extent){ .tier = PLANNER_SSD, .heat = 2,
					    .moved_at = NOW - HOUR };
	p.ext[2] = (struct planner_extent){ .tier = PLANNER_SSD, .heat = 3 };
	p.ext[3].heat = 100;
	p.ext[3].moved_at = NOW - HOUR + 1; /* demoted just under an hour ago */
	p.ext[4].heat = 90;
	p.ext[4].moved_at = NOW - 2 * HOUR;
	p.ext[5].heat = 80;
	p.ext[5].moved_at = NOW + 100; /* a clock that went back: as if just moved */
	pool_ssd(&p, 3, 10);
	plan_checked(&p, &plan);
	/* 0 is the coldest but moved 10 s ago; 1 moved exactly an hour ago and may go. */
	CHECK_MOVES(&plan, 1, UP(4));
	plan_destroy(&plan);

	p.policy.min_residency_s = 0;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 0, UP(3), 1, UP(4), 2, UP(5));
	plan_destroy(&plan);
	pool_destroy(&p);
}

static void test_pins(void)
{
	struct pool p;
	struct plan plan;

	pool_init(&p, 8, "auto");
	p.policy.ssd_headroom = 0;
	/* The SSD is full of hot extents; a cold HDD extent is pinned to it. */
	for (uint32_t i = 0; i < 4; i++) {
		p.ext[i].tier = PLANNER_SSD;
		p.ext[i].heat = (float)(50 - i);
		p.ext[i].moved_at = NOW - 1; /* residency does not protect against pins */
	}
	p.ext[5].pin = PLANNER_SSD;
	p.ext[5].heat = 0;
	p.ext[5].moved_at = NOW - 1;
	pool_ssd(&p, 4, 10);
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 3, UP(5));
	plan_destroy(&plan);

	/* Pinned to the HDD: a hot extent leaves the SSD, and its room goes to the pin. */
	p.ext[0].pin = PLANNER_HDD;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 0, UP(5));
	plan_destroy(&plan);

	/* Pins stay where they are pinned, whatever their heat. */
	p.ext[0].pin = PLANNER_SSD;
	p.ext[0].heat = 0;
	p.ext[5].pin = PLANNER_HDD;
	p.ext[5].heat = 1000;
	p.ext[6].heat = 100;
	p.policy.min_residency_s = 0;
	plan_checked(&p, &plan);
	/* 6 displaces 3, not 0, though 0 is colder. */
	CHECK_MOVES(&plan, 3, UP(6));
	plan_destroy(&plan);
	pool_destroy(&p);

	/* More pins than SSD: the hottest pins, after the unpinned extents made way. */
	pool_init(&p, 10, "auto");
	for (uint32_t i = 0; i < 5; i++) {
		p.ext[i].pin = PLANNER_SSD;
		p.ext[i].heat = (float)i;
	}
	p.ext[9].tier = PLANNER_SSD;
	p.ext[9].heat = 100;
	pool_ssd(&p, 3, 10);
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(4), UP(3), 9, UP(2));
	plan_destroy(&plan);

	/* Making room for a pin needs HDD room. */
	p.ext[9].tier = PLANNER_HDD;
	p.ext[8].tier = PLANNER_SSD;
	pool_ssd(&p, 1, 0);
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	plan_destroy(&plan);
	pool_destroy(&p);

	/*
	 * Pins to a full HDD trade places with unpinned HDD extents, hottest
	 * first, a candidate before a cold one: a pin beats heat and residency.
	 */
	pool_init(&p, 8, "auto");
	p.policy.ssd_headroom = 0;
	p.policy.promote = POLICY_PROMOTE_HEAT;
	p.policy.min_heat = 10;
	for (uint32_t i = 0; i < 3; i++) {
		p.ext[i].tier = PLANNER_SSD;
		p.ext[i].pin = PLANNER_HDD;
		p.ext[i].heat = 100;
	}
	p.ext[4].heat = 50; /* a candidate */
	p.ext[5].heat = 5;  /* below min_heat: no candidate, but it may make room */
	p.ext[6].heat = 7;
	p.ext[6].moved_at = NOW - 1;
	p.ext[7].pin = PLANNER_HDD; /* already where it is pinned */
	pool_ssd(&p, 4, 0);
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(4), 0, UP(6), 1, UP(5), 2);
	plan_destroy(&plan);
	/* Budget for one whole swap only. */
	p.in.max_bytes = 3 * EB;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(4), 0);
	plan_destroy(&plan);
	p.in.max_bytes = 0;
	/* Without free SSD space there is nowhere to put the first move. */
	p.ext[3].tier = PLANNER_SSD;
	pool_ssd(&p, 4, 0);
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	plan_destroy(&plan);
	/* A policy that never promotes leaves them waiting for HDD room. */
	p.ext[3].tier = PLANNER_HDD;
	pool_ssd(&p, 4, 0);
	p.policy.promote = POLICY_PROMOTE_NONE;
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	plan_destroy(&plan);
	pool_destroy(&p);

	/* An SSD pin's promotion frees the HDD room an HDD pin waits for. */
	pool_init(&p, 4, "auto");
	p.ext[0].tier = PLANNER_SSD;
	p.ext[0].pin = PLANNER_HDD;
	p.ext[1].pin = PLANNER_SSD;
	pool_ssd(&p, 2, 0);
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(1), 0);
	plan_destroy(&plan);
	/* Pinned extents that are unmapped are left alone. */
	p.ext[2].tier = PLANNER_NONE;
	p.ext[2].pin = PLANNER_SSD;
	p.ext[2].heat = 1000;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(1), 0);
	plan_destroy(&plan);
	pool_destroy(&p);
}

static void test_budget(void)
{
	struct pool p;
	struct plan plan;

	pool_init(&p, 10, "auto");
	p.policy.ssd_headroom = 0;
	for (uint32_t i = 0; i < 10; i++)
		p.ext[i].heat = (float)(10 + i);
	pool_ssd(&p, 10, 0);
	p.in.max_bytes = 4 * EB;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(9), UP(8), UP(7), UP(6));
	CHECK(plan.budget_exhausted);
	plan_destroy(&plan);
	p.in.max_bytes = 10 * EB;
	plan_checked(&p, &plan);
	CHECK_UINT(plan.nr, 10);
	CHECK(!plan.budget_exhausted); /* all ten fitted: nothing was left */
	plan_destroy(&plan);
	p.in.max_bytes = 4 * EB - 1;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(9), UP(8), UP(7));
	plan_destroy(&plan);
	p.in.max_bytes = EB - 1;
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	plan_destroy(&plan);
	pool_destroy(&p);

	/* Swaps: three moves of budget make one swap, never a swap and a half. */
	pool_init(&p, 6, "auto");
	for (uint32_t i = 0; i < 3; i++) {
		p.ext[i].tier = PLANNER_SSD;
		p.ext[i + 3].heat = 100;
	}
	p.policy.ssd_headroom = 0;
	pool_ssd(&p, 3, 3);
	p.in.max_bytes = 3 * EB;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 0, UP(3));
	CHECK_UINT(plan.promote_bytes + plan.demote_bytes, 2 * EB);
	CHECK(plan.budget_exhausted); /* a move of budget left, but a swap takes two */
	plan_destroy(&plan);
	p.in.max_bytes = 4 * EB;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 0, UP(3), 1, UP(4));
	plan_destroy(&plan);
	p.in.max_bytes = 0;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 0, UP(3), 1, UP(4), 2, UP(5));
	CHECK(!plan.budget_exhausted);
	plan_destroy(&plan);
	pool_destroy(&p);
}

static void test_highest(void)
{
	struct pool p;
	struct plan plan;

	pool_init(&p, 8, "highest");
	p.ext[5].heat = 3;
	p.ext[6].unwritten = 1;
	p.ext[7].heat = 0.25f;
	pool_ssd(&p, 5, 0);
	plan_checked(&p, &plan);
	/* Heat 0 too; among equals unwritten first, then lower le. */
	CHECK_MOVES(&plan, UP(5), UP(7), UP(6), UP(0), UP(1));
	plan_destroy(&plan);

	/* Once full, only clearly hotter extents displace others. */
	p.ext[0].tier = p.ext[1].tier = p.ext[5].tier = p.ext[6].tier = p.ext[7].tier = PLANNER_SSD;
	p.ext[2].heat = 0.1f;
	p.ext[3].heat = 4;
	pool_ssd(&p, 5, 2);
	plan_checked(&p, &plan);
	/* 3 beats 1.5 x 0 (0 and 6 are the coldest; 6, unwritten, goes first); 2 beats 0 too. */
	CHECK_MOVES(&plan, 6, UP(3), 0, UP(2));
	plan_destroy(&plan);
	pool_destroy(&p);
}

static void test_lowest(void)
{
	struct pool p;
	struct plan plan;

	pool_init(&p, 10, "lowest");
	for (uint32_t i = 0; i < 6; i++) {
		p.ext[i].tier = PLANNER_SSD;
		p.ext[i].heat = (float)(60 - 10 * i);
		p.ext[i].moved_at = NOW - 1;
	}
	p.ext[2].pin = PLANNER_SSD;
	p.ext[8].heat = 1000; /* hot on the HDD, and staying there */
	pool_ssd(&p, 8, 3);
	plan_checked(&p, &plan);
	/* Coldest first, as far as the HDD has room; the pin stays. */
	CHECK_MOVES(&plan, 5, 4, 3);
	plan_destroy(&plan);

	p.in.hdd_free = 100;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 5, 4, 3, 1, 0);
	CHECK(plan.ssd_share_after > 0.033 && plan.ssd_share_after < 0.0331); /* 40 of 1210 */
	plan_destroy(&plan);

	/* A residency of its own applies to demote = all too. */
	p.policy.min_residency_s = HOUR;
	p.ext[4].moved_at = 0;
	p.ext[0].moved_at = NOW - HOUR;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 4, 0);
	plan_destroy(&plan);
	pool_destroy(&p);
}

/* xorshift64*: the same cases on every machine. */
/*
 * A limit on the volume's table: a move costs a target for each boundary
 * beside it that joins two extents and no earlier move touched; one that
 * does not fit gives its turn to the next.
 */
static void test_table_limit(void)
{
	struct pool p;
	struct plan plan;

	/* Ten extents in one run, three hot; room for three on the SSD. */
	pool_init(&p, 10, "highest");
	p.ext[2].heat = 9;
	p.ext[7].heat = 8;
	p.ext[8].heat = 7;
	pool_ssd(&p, 3, 0);
	p.in.table_targets = 1;

	/* 2 splits the run (+2); 7 and 8 would too, the cold 0 and 1 beside 2 cost 1 and 0. */
	p.in.max_table_targets = 4;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(2), UP(0), UP(1));
	CHECK_UINT(plan.table_skipped, 2);
	plan_destroy(&plan);

	/*
	 * One target more: 7 fits, 8 beside it would still add (8, 9); nothing
	 * cold fits either, and each of the eight had its turn for the last place.
	 */
	p.in.max_table_targets = 5;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(2), UP(7));
	CHECK_UINT(plan.table_skipped, 8);
	plan_destroy(&plan);

	/* 8 starts a run of its own: 7 costs one target, then 8 one. */
	p.ext[8].flags = PLANNER_STARTS_RUN;
	p.in.table_targets = 2;
	p.in.max_table_targets = 6;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(2), UP(7), UP(8));
	plan_destroy(&plan);

	/* Without a limit the hottest three, as always. */
	p.in.max_table_targets = 0;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, UP(2), UP(7), UP(8));
	CHECK_UINT(plan.table_skipped, 0);
	plan_destroy(&plan);
	pool_destroy(&p);

	/*
	 * A swap at the limit: the cold 5 sits alone on the SSD (demoting it
	 * costs nothing), the hot 1 inside the HDD's run would add two.
	 */
	pool_init(&p, 8, "auto");
	p.ext[5] = (struct planner_extent){ .tier = PLANNER_SSD, .flags = PLANNER_STARTS_RUN };
	p.ext[6].flags = PLANNER_STARTS_RUN;
	p.ext[1].heat = 50;
	p.ext[6].heat = 40;
	pool_ssd(&p, 1, 4);
	p.in.table_targets = 3;
	p.in.max_table_targets = 3;
	plan_checked(&p, &plan);
	CHECK_NO_MOVES(&plan);
	CHECK_UINT(plan.table_skipped, 2);
	plan_destroy(&plan);
	/* 6 beside the SSD extent joins its run at worst as a target of its own: + 1 at most. */
	p.in.max_table_targets = 4;
	plan_checked(&p, &plan);
	CHECK_MOVES(&plan, 5, UP(6));
	CHECK_UINT(plan.table_skipped, 1);
	plan_destroy(&plan);
	pool_destroy(&p);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t rng_below(uint32_t n)
{
	return n ? (uint32_t)(rng() % n) : 0;
}

/* Runs of the table as flags, and a limit of targets near what it has. */
static void random_table(struct pool *p)
{
	uint32_t runs = p->nr ? 1 : 0;

	for (uint32_t le = 1; le < p->nr; le++) {
		if (rng_below(100) < 30)
			p->ext[le].flags |= PLANNER_STARTS_RUN;
		runs += p->ext[le].flags & PLANNER_STARTS_RUN;
	}
	p->in.table_targets = runs;
	p->in.max_table_targets = rng_below(4) ? runs + rng_below(12) : 1 + rng_below(runs + 1);
}

static void random_pool(struct pool *p, bool with_pins)
{
	static const char *const policies[] = { "auto", "highest", "lowest" };
	uint32_t nr = rng_below(300), on_ssd = 0, capacity, slack;
	uint32_t pin_percent = with_pins ? rng_below(30) : 0;
	/* Half the pools look like a big one: most extents plain, cold HDD ones. */
	uint32_t plain_percent = rng_below(2) ? 50 + rng_below(50) : 0;

	pool_init(p, nr, policies[rng_below(3)]);
	if (p->policy.promote != POLICY_PROMOTE_NONE) {
		p->policy.ssd_headroom = rng_below(4) ? rng_below(51) / 100.0 : 0;
		p->policy.hysteresis = 1 + rng_below(4) / 2.0;
		p->policy.min_heat = rng_below(3);
	}
	if (rng_below(2))
		p->policy.min_residency_s = rng_below(3) * HOUR;
	for (uint32_t i = 0; i < nr; i++) {
		struct planner_extent *e = &p->ext[i];
		uint32_t r = rng_below(100);

		e->tier = r < 5 ? PLANNER_NONE : r < 40 ? PLANNER_SSD : PLANNER_HDD;
		on_ssd += e->tier == PLANNER_SSD;
		/* Few distinct heats, so that ties are common. */
		e->heat = rng_below(3) ? (float)rng_below(8) : (float)rng_below(1000) / 7;
		e->moved_at = rng_below(2) ? 0 : NOW - rng_below(3 * HOUR);
		if (rng_below(100) < pin_percent)
			e->pin = (uint8_t)(1 + rng_below(2));
		e->unwritten = rng_below(5) == 0;
		if (e->tier == PLANNER_HDD && rng_below(100) < plain_percent)
			*e = (struct planner_extent){ .tier = PLANNER_HDD };
	}
	slack = rng_below(4) ? rng_below(nr / 4 + 2) : 0;
	capacity = on_ssd + slack;
	if (rng_below(20) == 0 && !on_ssd)
		capacity = 0;
	pool_ssd(p, capacity, rng_below(4) ? rng_below(nr / 3 + 2) : 0);
	if (rng_below(3) == 0)
		p->in.max_bytes = rng_below(40) * EB + rng_below(2) * (EB / 2);
	if (rng_below(3) == 0)
		random_table(p);
}

/* Any input: a feasible plan, the same plan twice. */
static void test_random(void)
{
	for (int n = 0; n < 600; n++) {
		struct pool p;
		struct plan a, b;

		random_pool(&p, true);
		plan_checked(&p, &a);
		CHECK_OK(planner_plan(&p.in, &b));
		CHECK_UINT(a.nr, b.nr);
		/* Field by field: the padding of a move is not part of it. */
		for (size_t i = 0; i < a.nr; i++)
			CHECK(a.moves[i].le == b.moves[i].le && a.moves[i].to == b.moves[i].to);
		plan_destroy(&a);
		plan_destroy(&b);
		/* A limit that never binds changes nothing. */
		if (p.in.max_table_targets) {
			p.in.max_table_targets = UINT32_MAX;
			plan_checked(&p, &a);
			p.in.max_table_targets = 0;
			plan_checked(&p, &b);
			CHECK_UINT(a.nr, b.nr);
			CHECK_UINT(a.table_skipped, 0);
			for (size_t i = 0; i < a.nr; i++)
				CHECK(a.moves[i].le == b.moves[i].le && a.moves[i].to == b.moves[i].to);
			plan_destroy(&a);
			plan_destroy(&b);
		}
		pool_destroy(&p);
	}
}

/* The dense pool p as a list that leaves out some of the extents it may leave out. */
struct sparse {
	const struct pool *p;
	struct planner_listed *list;
	bool *listed;
};

static bool plain_hdd(const struct planner_extent *e)
{
	/* A list names every extent that starts a run (pool_planner_list). */
	return e->tier == PLANNER_HDD && !e->pin && e->heat == 0 && !e->moved_at && !e->unwritten &&
	       !(e->flags & PLANNER_STARTS_RUN);
}

static uint32_t sparse_unlisted(const void *ctx, uint32_t *out, uint32_t max)
{
	const struct sparse *s = ctx;
	uint32_t n = 0;

	for (uint32_t le = 0; le < s->p->nr && n < max; le++)
		if (!s->listed[le] && s->p->ext[le].tier == PLANNER_HDD)
			out[n++] = le;
	return n;
}

/* An empty list, to be filled: in is p's input but for its extents. */
static void sparse_empty(struct sparse *s, const struct pool *p, struct planner_input *in)
{
	*s = (struct sparse){ .p = p };
	s->list = calloc(p->nr + 1, sizeof(*s->list));
	s->listed = calloc(p->nr + 1, sizeof(*s->listed));
	CHECK(s->list && s->listed);
	*in = p->in;
	in->ext = NULL;
	in->list = s->list;
	in->unlisted_hdd = sparse_unlisted;
	in->unlisted_ctx = s;
}

static void sparse_init(struct sparse *s, const struct pool *p, struct planner_input *in)
{
	sparse_empty(s, p, in);
	for (uint32_t le = 0; le < p->nr; le++) {
		const struct planner_extent *e = &p->ext[le];
		bool may_leave = plain_hdd(e) ||
				 (e->tier == PLANNER_NONE && !(e->flags & PLANNER_STARTS_RUN));

		if (may_leave && rng_below(4)) {
			in->nr_unlisted_hdd += e->tier == PLANNER_HDD;
			continue;
		}
		s->listed[le] = true;
		s->list[in->nr_list++] = (struct planner_listed){ .le = le, .e = *e };
	}
}

static void sparse_destroy(struct sparse *s)
{
	free(s->list);
	free(s->listed);
}

/* Whether the policy would promote an extent that is cold, never moved and not pinned. */
static bool promotes_plain(const struct policy *pol)
{
	return pol->promote == POLICY_PROMOTE_ALL ||
	       (pol->promote == POLICY_PROMOTE_HEAT && pol->min_heat <= 0);
}

/*
 * Leaving plain extents out of the list changes nothing: the same moves in
 * the same order, the same counts and shares. Except where a table's limit
 * passes over candidates and plain ones are candidates: then, as without a
 * limit, only the lowest plain ones that one run could take are queued,
 * while a dense input queues them all; both plans must still hold.
 */
static void test_random_sparse(void)
{
	for (int n = 0; n < 1000; n++) {
		struct planner_input in;
		struct plan dense, listed;
		struct sparse s;
		struct pool p;

		random_pool(&p, rng_below(2));
		sparse_init(&s, &p, &in);
		CHECK_OK(planner_plan(&p.in, &dense));
		CHECK_OK(planner_plan(&in, &listed));
		if (p.in.max_table_targets && promotes_plain(&p.policy)) {
			check_plan(&p.in, &dense, NULL);
			check_plan(&p.in, &listed, NULL);
			plan_destroy(&dense);
			plan_destroy(&listed);
			sparse_destroy(&s);
			pool_destroy(&p);
			continue;
		}
		CHECK_UINT(listed.nr, dense.nr);
		for (size_t i = 0; i < dense.nr && i < listed.nr; i++)
			CHECK(listed.moves[i].le == dense.moves[i].le &&
			      listed.moves[i].to == dense.moves[i].to);
		CHECK_UINT(listed.promote_extents, dense.promote_extents);
		CHECK_UINT(listed.demote_extents, dense.demote_extents);
		CHECK_NEAR(listed.ssd_share_before, dense.ssd_share_before, 1e-12);
		CHECK_NEAR(listed.ssd_share_after, dense.ssd_share_after, 1e-9);
		check_plan(&p.in, &listed, NULL);
		plan_destroy(&dense);
		plan_destroy(&listed);
		sparse_destroy(&s);
		pool_destroy(&p);
	}
}

/*
 * An HDD pin on a full SSD, with the HDD full too and nothing hot enough
 * to promote: it trades places with the lowest plain extent, listed or not.
 */
static void test_unlisted_fillers(void)
{
	struct planner_input in;
	struct sparse s;
	struct plan plan;
	struct pool p;

	pool_init(&p, 6, "auto");
	p.ext[3].tier = PLANNER_SSD;
	p.ext[3].pin = PLANNER_HDD;
	p.ext[0].heat = 0.5; /* below min_heat 1, listed */
	pool_ssd(&p, 2, 0);
	sparse_empty(&s, &p, &in);
	s.list[in.nr_list++] = (struct planner_listed){ .le = 0, .e = p.ext[0] };
	s.list[in.nr_list++] = (struct planner_listed){ .le = 3, .e = p.ext[3] };
	s.listed[0] = s.listed[3] = true;
	in.nr_unlisted_hdd = 4;
	CHECK_OK(planner_plan(&in, &plan));
	CHECK_MOVES(&plan, UP(0), 3);
	plan_destroy(&plan);
	/* Without the warm one, the lowest plain extent: one the list left out. */
	s.list[0] = s.list[1];
	in.nr_list = 1;
	s.listed[0] = false;
	in.nr_unlisted_hdd = 5;
	CHECK_OK(planner_plan(&in, &plan));
	CHECK_MOVES(&plan, UP(0), 3);
	plan_destroy(&plan);
	s.listed[0] = true; /* the function's lowest is now 1 */
	in.nr_unlisted_hdd = 4;
	CHECK_OK(planner_plan(&in, &plan));
	CHECK_MOVES(&plan, UP(1), 3);
	plan_destroy(&plan);
	sparse_destroy(&s);
	pool_destroy(&p);
}

/* A list the planner must refuse, rather than move an extent twice. */
static void test_bad_list(void)
{
	struct planner_listed list[3] = {
		{ .le = 1, .e = { .tier = PLANNER_SSD } },
		{ .le = 4, .e = { .tier = PLANNER_HDD, .heat = 9 } },
		{ .le = 6, .e = { .tier = PLANNER_HDD } },
	};
	struct planner_input in;
	struct sparse s;
	struct plan plan;
	struct pool p;

	pool_init(&p, 8, "auto");
	p.ext[1].tier = PLANNER_SSD;
	p.ext[4].heat = 9;
	pool_ssd(&p, 2, 1);
	sparse_init(&s, &p, &in);
	in.list = list;
	in.nr_list = 3;
	in.nr_unlisted_hdd = 5;
	for (uint32_t le = 0; le < 8; le++)
		s.listed[le] = le == 1 || le == 4 || le == 6;
	CHECK_OK(planner_plan(&in, &plan));
	CHECK_UINT(plan.nr, 1);
	CHECK_UINT(plan.moves[0].le, 4);
	plan_destroy(&plan);
	list[2].le = 4; /* twice */
	CHECK_INT(planner_plan(&in, &plan), -EINVAL);
	list[2].le = 8; /* past the volume */
	CHECK_INT(planner_plan(&in, &plan), -EINVAL);
	list[2].le = 6;
	in.nr_unlisted_hdd = 6; /* more than the 5 not listed */
	CHECK_INT(planner_plan(&in, &plan), -EINVAL);
	in.nr_unlisted_hdd = 5;
	in.unlisted_hdd = NULL;
	CHECK_INT(planner_plan(&in, &plan), -EINVAL);
	in.unlisted_hdd = sparse_unlisted;
	in.ext = p.ext; /* both forms */
	CHECK_INT(planner_plan(&in, &plan), -EINVAL);
	in.ext = NULL;
	/* A function that names a listed extent as plain (4, before 5 and 7). */
	s.listed[0] = s.listed[2] = s.listed[3] = true;
	s.listed[4] = false;
	p.policy.promote = POLICY_PROMOTE_ALL;
	CHECK_INT(planner_plan(&in, &plan), -EINVAL);
	sparse_destroy(&s);
	pool_destroy(&p);
}

/*
 * Without pins, residency, a budget or a table's limit, a plan leaves
 * nothing to do: run on the pool as the plan left it, the planner plans
 * nothing.
 */
static void test_random_stable(void)
{
	for (int n = 0; n < 300; n++) {
		struct pool p;
		struct plan plan, again;
		uint8_t *tier;

		random_pool(&p, false);
		p.policy.min_residency_s = 0;
		p.in.max_bytes = 0;
		p.in.max_table_targets = 0;
		tier = malloc(p.nr ? p.nr : 1);
		CHECK(tier != NULL);
		plan_checked(&p, &plan);
		check_plan(&p.in, &plan, tier);
		for (uint32_t i = 0; i < p.nr; i++)
			p.ext[i].tier = tier[i];
		p.in.ssd_free += (uint32_t)plan.demote_extents - (uint32_t)plan.promote_extents;
		p.in.hdd_free += (uint32_t)plan.promote_extents - (uint32_t)plan.demote_extents;
		plan_checked(&p, &again);
		CHECK_NO_MOVES(&again);
		plan_destroy(&plan);
		plan_destroy(&again);
		free(tier);
		pool_destroy(&p);
	}
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A large pool, for the time it takes: printed, not checked (sanitizers distort it). */
static void test_scale(const char *policy, uint64_t max_bytes)
{
	const uint32_t nr = 4000000, capacity = nr / 10;
	struct timespec t0;
	struct plan plan;
	struct pool p;
	uint32_t on_ssd = 0;

	pool_init(&p, nr, policy);
	p.policy.min_residency_s = 0;
	for (uint32_t i = 0; i < nr; i++) {
		struct planner_extent *e = &p.ext[i];

		/* Mostly cold, a long tail of warm ones, as heat looks after a day. */
		e->heat = rng_below(4) ? 0 : (float)(rng_below(1u << 20)) / (float)(1u << 14);
		if (on_ssd < capacity - capacity / 20 && rng_below(10) == 0) {
			e->tier = PLANNER_SSD;
			on_ssd++;
		}
	}
	pool_ssd(&p, capacity, nr / 5);
	p.in.max_bytes = max_bytes;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_OK(planner_plan(&p.in, &plan));
	printf("planner: %u extents, policy %s, budget %" PRIu64 " extents: %zu moves in %.3f s\n",
	       nr, policy, max_bytes / EB, plan.nr, seconds_since(&t0));
	check_plan(&p.in, &plan, NULL);
	plan_destroy(&plan);
	pool_destroy(&p);
}

int main(int argc, char **argv)
{
	test_no_ssd();
	test_bad_input();
	test_capacity_and_headroom();
	test_restore_headroom();
	test_hysteresis();
	test_swap_order();
	test_residency();
	test_pins();
	test_budget();
	test_table_limit();
	test_highest();
	test_lowest();
	test_random();
	test_random_sparse();
	test_bad_list();
	test_unlisted_fillers();
	test_random_stable();
	/* "--no-scale" keeps a quick run quick. */
	if (argc < 2 || strcmp(argv[1], "--no-scale")) {
		test_scale("auto", 0);
		test_scale("auto", 10000 * EB);
		test_scale("highest", 0);
		test_scale("lowest", 0);
	}
	return 0;
}
