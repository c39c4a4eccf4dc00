// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the address-family slot choice (kernel/af_family.c), with a fake
 * registry standing in for sock_register().
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/net.h>

#include "uapi/linux/smbdirect.h"
#include "af_family.h"

struct fake_registry {
	DECLARE_BITMAP(taken, NPROTO);
	int fail_with;	/* error other than -EEXIST for one family, or 0 */
	int fail_family;
	int attempts;
};

static int fake_register(int family, void *ctx)
{
	struct fake_registry *r = ctx;

	r->attempts++;
	if (r->fail_with && family == r->fail_family)
		return r->fail_with;
	if (test_bit(family, r->taken))
		return -EEXIST;
	set_bit(family, r->taken);
	return 0;
}

static const int candidates[] = SMBDIRECT_FAMILY_CANDIDATES;

static void family_first_free_candidate(struct kunit *test)
{
	struct fake_registry r = {};

	KUNIT_EXPECT_EQ(test, af_smbdirect_family_pick(0, fake_register, &r),
			candidates[0]);
	KUNIT_EXPECT_EQ(test, r.attempts, 1);
}

static void family_skips_taken_slots(struct kunit *test)
{
	struct fake_registry r = {};

	set_bit(candidates[0], r.taken);
	set_bit(candidates[1], r.taken);
	KUNIT_EXPECT_EQ(test, af_smbdirect_family_pick(0, fake_register, &r),
			candidates[2]);
	KUNIT_EXPECT_EQ(test, r.attempts, 3);
}

static void family_all_taken_is_ebusy(struct kunit *test)
{
	struct fake_registry r = {};
	int i;

	for (i = 0; i < ARRAY_SIZE(candidates); i++)
		set_bit(candidates[i], r.taken);
	KUNIT_EXPECT_EQ(test, af_smbdirect_family_pick(0, fake_register, &r),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, r.attempts, (int)ARRAY_SIZE(candidates));
}

static void family_forced_free_and_taken(struct kunit *test)
{
	struct fake_registry r = {};

	KUNIT_EXPECT_EQ(test, af_smbdirect_family_pick(40, fake_register, &r), 40);
	/* A forced slot that is taken fails; no fallback to the candidates. */
	KUNIT_EXPECT_EQ(test, af_smbdirect_family_pick(40, fake_register, &r),
			-EEXIST);
	KUNIT_EXPECT_EQ(test, r.attempts, 2);
}

static void family_forced_out_of_range(struct kunit *test)
{
	struct fake_registry r = {};

	KUNIT_EXPECT_EQ(test, af_smbdirect_family_pick(-1, fake_register, &r), -EINVAL);
	KUNIT_EXPECT_EQ(test, af_smbdirect_family_pick(NPROTO, fake_register, &r),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, r.attempts, 0);
}

static void family_other_error_stops_search(struct kunit *test)
{
	struct fake_registry r = { .fail_with = -ENOMEM };

	r.fail_family = candidates[1];
	set_bit(candidates[0], r.taken);
	KUNIT_EXPECT_EQ(test, af_smbdirect_family_pick(0, fake_register, &r),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, r.attempts, 2);
}

static struct kunit_case family_cases[] = {
	KUNIT_CASE(family_first_free_candidate),
	KUNIT_CASE(family_skips_taken_slots),
	KUNIT_CASE(family_all_taken_is_ebusy),
	KUNIT_CASE(family_forced_free_and_taken),
	KUNIT_CASE(family_forced_out_of_range),
	KUNIT_CASE(family_other_error_stops_search),
	{}
};

static struct kunit_suite family_suite = {
	.name = "af_smbdirect_family",
	.test_cases = family_cases,
};

kunit_test_suite(family_suite);

