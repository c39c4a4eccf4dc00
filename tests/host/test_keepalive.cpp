// SPDX-License-Identifier: GPL-2.0
// Idle -> probe -> answer / timeout, with time passed in.
#include <gtest/gtest.h>

#include "engine.h"
#include "keepalive.h"

using namespace sdtest;
using sd::Keepalive;

TEST(KeepaliveUnit, ProbeThenDeadWithoutAnswer)
{
	Keepalive k;
	k.init(1000, 100);
	EXPECT_EQ(k.start(50), 1050u);
	EXPECT_EQ(k.on_timer(1049), Keepalive::Fire::rearm);
	EXPECT_EQ(k.on_timer(1050), Keepalive::Fire::send_probe);
	EXPECT_TRUE(k.probe_due());
	EXPECT_EQ(k.deadline(), 1150u);
	k.on_probe_sent();
	EXPECT_EQ(k.state(), Keepalive::State::probe_sent);
	EXPECT_EQ(k.on_timer(1149), Keepalive::Fire::rearm);
	EXPECT_EQ(k.on_timer(1150), Keepalive::Fire::dead);
	EXPECT_EQ(k.on_timer(99999), Keepalive::Fire::none);
	k.on_activity(99999); // too late: dead stays dead
	EXPECT_EQ(k.state(), Keepalive::State::dead);
}

TEST(KeepaliveUnit, ActivityDefersTheProbe)
{
	Keepalive k;
	k.init(1000, 100);
	k.start(0);
	k.on_activity(700);
	EXPECT_EQ(k.on_timer(1000), Keepalive::Fire::rearm);
	EXPECT_EQ(k.deadline(), 1700u);
	EXPECT_EQ(k.on_timer(1700), Keepalive::Fire::send_probe);
	k.on_probe_sent();
	k.on_activity(1750); // the answer
	EXPECT_EQ(k.state(), Keepalive::State::idle);
	EXPECT_EQ(k.on_timer(1800), Keepalive::Fire::rearm);
	EXPECT_EQ(k.deadline(), 2750u);
}

TEST(KeepaliveUnit, DisabledNeverFires)
{
	Keepalive k;
	k.init(0, 0);
	EXPECT_EQ(k.start(5), 0u);
	EXPECT_EQ(k.on_timer(1u << 30), Keepalive::Fire::none);
	k.on_activity(10);
	EXPECT_EQ(k.state(), Keepalive::State::off);
}

namespace
{

sd_core_config ka(unsigned role)
{
	sd_core_config c = config(role);
	c.keepalive_interval_ms = 1000;
	c.keepalive_timeout_ms = 300;
	return c;
}

void settle(Engine &c, Engine &s)
{
	c.pump();
	while (!c.out.empty())
		ASSERT_EQ(transfer(c, s), SD_CORE_OK);
	s.post(s.reposts_owed);
	s.reposts_owed = 0;
}

} // namespace

TEST(KeepaliveEngine, IdleConnectionProbesAndPeerAnswers)
{
	Engine c(ka(SD_CORE_ROLE_CLIENT)), s(ka(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	settle(c, s);
	ASSERT_EQ(c.timer, 1000u);
	c.now = s.now = 1000;
	ASSERT_EQ(c.fire(), SD_CORE_OK);
	EXPECT_TRUE(c.last.flags & SD_CORE_ACT_SEND);
	EXPECT_EQ(c.timer, 1300u);
	sd_core_pdu info;
	ASSERT_EQ(c.produce({}, &info), SD_CORE_OK);
	EXPECT_EQ(info.kind, SD_CORE_PDU_KEEPALIVE);
	EXPECT_EQ(info.flags, SD_CORE_FLAG_RESPONSE_REQUESTED);
	EXPECT_EQ(c.produce(), SD_CORE_E_AGAIN); // one probe only
	ASSERT_EQ(transfer(c, s), SD_CORE_OK);
	EXPECT_TRUE(s.last.flags & SD_CORE_ACT_SEND);
	ASSERT_EQ(s.produce({}, &info), SD_CORE_OK);
	EXPECT_EQ(info.flags, 0u); // an answer never asks for an answer
	c.now = 1100;
	ASSERT_EQ(transfer(s, c), SD_CORE_OK);
	c.now = 1300;
	ASSERT_EQ(c.fire(), SD_CORE_OK);
	EXPECT_FALSE(c.disconnected);
	EXPECT_EQ(c.timer, 2100u);
}

TEST(KeepaliveEngine, SilentPeerIsDeclaredDead)
{
	Engine c(ka(SD_CORE_ROLE_CLIENT)), s(ka(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	settle(c, s);
	c.now = 1000;
	ASSERT_EQ(c.fire(), SD_CORE_OK);
	ASSERT_EQ(c.pump(), 1u);
	c.now = 1299;
	ASSERT_EQ(c.fire(), SD_CORE_OK);
	EXPECT_FALSE(c.disconnected);
	c.now = 1300;
	ASSERT_EQ(c.fire(), SD_CORE_OK);
	EXPECT_TRUE(c.disconnected);
	EXPECT_EQ(c.disconnect_reason, SD_CORE_REASON_KEEPALIVE_TIMEOUT);
	EXPECT_EQ(c.produce(), SD_CORE_E_BAD_STATE);
}

TEST(KeepaliveEngine, ProbeRidesOnDataWhenThereIsSome)
{
	Engine c(ka(SD_CORE_ROLE_CLIENT)), s(ka(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	settle(c, s);
	c.now = 1000;
	ASSERT_EQ(c.fire(), SD_CORE_OK);
	Bytes msg = pattern(10, 3);
	ASSERT_EQ(c.send(10), SD_CORE_OK);
	sd_core_pdu info;
	ASSERT_EQ(c.produce(msg, &info), SD_CORE_OK);
	EXPECT_EQ(info.kind, SD_CORE_PDU_DATA);
	EXPECT_EQ(info.flags, SD_CORE_FLAG_RESPONSE_REQUESTED);
	EXPECT_EQ(c.produce(msg), SD_CORE_E_AGAIN);
}

TEST(KeepaliveEngine, StaleTimerAfterDisableIsHarmless)
{
	sd_core_config cc = ka(SD_CORE_ROLE_CLIENT);
	cc.keepalive_interval_ms = 0;
	Engine c(cc), s(ka(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	c.now = 1u << 30;
	ASSERT_EQ(c.fire(), SD_CORE_OK);
	EXPECT_EQ(c.last.flags, 0u);
	EXPECT_FALSE(c.disconnected);
}
