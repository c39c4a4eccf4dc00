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

// A reader that stops reading holds back every buffer data took (the
// glue's flow control); buffers that carried no data go back at once.
// Keepalive on both sides must not kill the connection however long the
// pause: the writer keeps its last credit for answers, the reader does
// not count a probe the peer has no credit to answer. Nothing beyond what
// was granted for data piles up, and the message completes afterwards.
TEST(KeepaliveEngine, PausedReaderIsNotKilledByKeepalive)
{
	sd_core_config cc = ka(SD_CORE_ROLE_CLIENT), sc = ka(SD_CORE_ROLE_SERVER);
	cc.receive_credit_max = sc.receive_credit_max = 8;
	cc.send_credit_target = sc.send_credit_target = 8;
	Engine c(cc), s(sc);
	ASSERT_TRUE(negotiate(c, s));
	settle(c, s);
	Bytes msg = pattern(64 * 1340, 9);
	ASSERT_EQ(s.send(static_cast<unsigned>(msg.size())), SD_CORE_OK);
	unsigned most_held = 0;
	// 60 intervals of 1 s with a 300 ms answer window, in 50 ms steps.
	for (unsigned long long t = 0; t <= 60000; t += 50) {
		c.now = s.now = t;
		if (c.timer && c.timer <= t) {
			ASSERT_EQ(c.fire(), SD_CORE_OK);
		}
		if (s.timer && s.timer <= t) {
			ASSERT_EQ(s.fire(), SD_CORE_OK);
		}
		for (int round = 0; round < 4; round++) {
			c.pump();
			s.pump(msg);
			ASSERT_EQ(exchange(c, s), SD_CORE_OK);
			// The reader sleeps: only buffers without data go back.
			c.post(c.reposts_owed);
			c.reposts_owed = 0;
			s.post(s.reposts_owed + s.held);
			s.reposts_owed = s.held = 0;
		}
		ASSERT_FALSE(c.disconnected) << "reader killed at " << t << " ms";
		ASSERT_FALSE(s.disconnected) << "writer killed at " << t << " ms";
		most_held = std::max(most_held, c.held);
	}
	EXPECT_TRUE(c.messages.empty());
	EXPECT_LE(most_held, 8u) << "data beyond the credits granted for it";
	// The reader wakes up: everything arrives.
	for (int round = 0; round < 200 && c.messages.empty(); round++) {
		c.post(c.held + c.reposts_owed);
		c.held = c.reposts_owed = 0;
		c.pump();
		s.pump(msg);
		ASSERT_EQ(exchange(c, s), SD_CORE_OK);
		s.post(s.reposts_owed + s.held);
		s.reposts_owed = s.held = 0;
	}
	ASSERT_EQ(c.messages.size(), 1u);
	EXPECT_EQ(c.messages[0], msg);
}
