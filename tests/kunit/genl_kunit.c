// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the pure helpers behind the af_smbdirect generic netlink family
 * (kernel/sd_genl.c): which error counter a connection's failure goes
 * to, which states a dump's state mask wants, and the UAPI's name of
 * each state that mask is made of.
 */
#include <kunit/test.h>
#include <linux/errno.h>

#include "uapi/linux/smbdirect.h"
#include "uapi/linux/smbdirect_genl.h"
#include "sd_sock.h"

static void genl_errno_counters(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(-EPROTO), SD_STAT_ERR_PROTOCOL);
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(-ETIMEDOUT), SD_STAT_ERR_TIMEOUT);
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(-ECONNREFUSED), SD_STAT_ERR_REFUSED);
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(-ECONNRESET), SD_STAT_ERR_TRANSPORT);
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(-ENETDOWN), SD_STAT_ERR_DEVICE);
}

static void genl_errno_not_counted(struct kunit *test)
{
	/* An orderly end, and failures that are no connection's fault. */
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(0), SD_STAT_NR);
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(-EHOSTUNREACH), SD_STAT_NR);
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(-ENETUNREACH), SD_STAT_NR);
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(-EIO), SD_STAT_NR);
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(-ENOMEM), SD_STAT_NR);
	/* Positive values are no -errno. */
	KUNIT_EXPECT_EQ(test, sd_stat_of_errno(EPROTO), SD_STAT_NR);
}

static void genl_stats_match_attributes(struct kunit *test)
{
	/* Entry i of struct sd_stats is attribute MSGS_TX + i. */
	KUNIT_EXPECT_EQ(test, SMBDIRECT_A_STATS_MSGS_TX + SD_STAT_MSGS_TX,
			SMBDIRECT_A_STATS_MSGS_TX);
	KUNIT_EXPECT_EQ(test, SMBDIRECT_A_STATS_MSGS_TX + SD_STAT_BYTES_RX,
			SMBDIRECT_A_STATS_BYTES_RX);
	KUNIT_EXPECT_EQ(test, SMBDIRECT_A_STATS_MSGS_TX + SD_STAT_KEEPALIVES_TX,
			SMBDIRECT_A_STATS_KEEPALIVES_TX);
	KUNIT_EXPECT_EQ(test, SMBDIRECT_A_STATS_MSGS_TX + SD_STAT_ERR_DEVICE,
			SMBDIRECT_A_STATS_ERR_DEVICE);
	KUNIT_EXPECT_EQ(test, SMBDIRECT_A_STATS_MSGS_TX + SD_STAT_ERR_RDMA,
			SMBDIRECT_A_STATS_ERR_RDMA);
}

static void genl_state_mask(struct kunit *test)
{
	u32 all = BIT(SMBDIRECT_STATE_CLOSED + 1) - 1;

	/* No mask: every state. */
	KUNIT_EXPECT_TRUE(test, sd_genl_state_wanted(false, 0, SMBDIRECT_STATE_CLOSED));
	/* A mask: its bits only; 0 wants none. */
	KUNIT_EXPECT_FALSE(test, sd_genl_state_wanted(true, 0, SMBDIRECT_STATE_UNCONNECTED));
	KUNIT_EXPECT_TRUE(test, sd_genl_state_wanted(true, BIT(SMBDIRECT_STATE_LISTENING),
						     SMBDIRECT_STATE_LISTENING));
	KUNIT_EXPECT_FALSE(test, sd_genl_state_wanted(true, BIT(SMBDIRECT_STATE_LISTENING),
						      SMBDIRECT_STATE_CONNECTED));
	KUNIT_EXPECT_TRUE(test, sd_genl_state_wanted(true, all, SMBDIRECT_STATE_CONNECTING));
	/* Bits of states this module does not know are ignored, not refused. */
	KUNIT_EXPECT_TRUE(test, sd_genl_state_wanted(true, U32_MAX, SMBDIRECT_STATE_CLOSED));
	/* A state beyond the mask's 32 bits is never wanted. */
	KUNIT_EXPECT_FALSE(test, sd_genl_state_wanted(true, U32_MAX, 32));
}

static void genl_uapi_states(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sd_uapi_state(SD_UNCONNECTED), SMBDIRECT_STATE_UNCONNECTED);
	KUNIT_EXPECT_EQ(test, sd_uapi_state(SD_LISTENING), SMBDIRECT_STATE_LISTENING);
	KUNIT_EXPECT_EQ(test, sd_uapi_state(SD_CONNECTING), SMBDIRECT_STATE_CONNECTING);
	KUNIT_EXPECT_EQ(test, sd_uapi_state(SD_CONNECTED), SMBDIRECT_STATE_CONNECTED);
	KUNIT_EXPECT_EQ(test, sd_uapi_state(SD_CLOSED), SMBDIRECT_STATE_CLOSED);
}

static struct kunit_case genl_cases[] = {
	KUNIT_CASE(genl_errno_counters),
	KUNIT_CASE(genl_errno_not_counted),
	KUNIT_CASE(genl_stats_match_attributes),
	KUNIT_CASE(genl_state_mask),
	KUNIT_CASE(genl_uapi_states),
	{}
};

static struct kunit_suite genl_suite = {
	.name = "af_smbdirect_genl",
	.test_cases = genl_cases,
};

kunit_test_suite(genl_suite);
