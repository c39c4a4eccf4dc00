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

namespace
{

// Both ends write and neither reads: each holds back every buffer that
// carried data (the glue's flow control), buffers without data go back at
// once. Runs from `from` to `until` ms of virtual time in `step` ms steps,
// firing each timer when due; s_silent: the server is gone (its PDUs are
// lost, it never fires again). Returns the PDUs both produced.
unsigned both_paused(Engine &c, Engine &s, const Bytes &cm, const Bytes &sm,
		     unsigned long long from, unsigned long long until, bool s_silent = false)
{
	unsigned pdus = 0;
	for (unsigned long long t = from; t <= until && !c.disconnected && !s.disconnected;
	     t += 50) {
		c.now = s.now = t;
		if (c.timer && c.timer <= t) {
			EXPECT_EQ(c.fire(), SD_CORE_OK);
		}
		if (!s_silent && s.timer && s.timer <= t) {
			EXPECT_EQ(s.fire(), SD_CORE_OK);
		}
		for (int round = 0; round < 4; round++) {
			pdus += c.pump(cm);
			if (s_silent) {
				c.out.clear();
				continue;
			}
			pdus += s.pump(sm);
			EXPECT_EQ(exchange(c, s), SD_CORE_OK);
			c.post(c.reposts_owed);
			c.reposts_owed = 0;
			s.post(s.reposts_owed);
			s.reposts_owed = 0;
		}
	}
	return pdus;
}

struct PausedPair {
	Engine c, s;
	Bytes cm = pattern(64 * 1340, 4), sm = pattern(64 * 1340, 5);

	PausedPair(unsigned interval_ms, unsigned timeout_ms, unsigned credits)
	    : c(paused_config(SD_CORE_ROLE_CLIENT, interval_ms, timeout_ms, credits)),
	      s(paused_config(SD_CORE_ROLE_SERVER, interval_ms, timeout_ms, credits))
	{
	}

	static sd_core_config paused_config(unsigned role, unsigned interval_ms,
					    unsigned timeout_ms, unsigned credits)
	{
		sd_core_config cfg = config(role);
		cfg.keepalive_interval_ms = interval_ms;
		cfg.keepalive_timeout_ms = timeout_ms;
		cfg.receive_credit_max = credits;
		cfg.send_credit_target = credits;
		return cfg;
	}

	// Connects, and both ends start a message the other never reads.
	void start()
	{
		ASSERT_TRUE(negotiate(c, s));
		settle(c, s);
		ASSERT_EQ(c.send(static_cast<unsigned>(cm.size())), SD_CORE_OK);
		ASSERT_EQ(s.send(static_cast<unsigned>(sm.size())), SD_CORE_OK);
	}

	// Both readers wake up: both messages arrive whole.
	void resume()
	{
		for (int round = 0; round < 400 && (c.messages.empty() || s.messages.empty());
		     round++) {
			c.post(c.held + c.reposts_owed);
			c.held = c.reposts_owed = 0;
			s.post(s.held + s.reposts_owed);
			s.held = s.reposts_owed = 0;
			c.pump(cm);
			s.pump(sm);
			ASSERT_EQ(exchange(c, s), SD_CORE_OK);
		}
		ASSERT_EQ(c.messages.size(), 1u);
		ASSERT_EQ(s.messages.size(), 1u);
		EXPECT_EQ(c.messages[0], sm);
		EXPECT_EQ(s.messages[0], cm);
	}
};

// Issue #26 item 5: with both readers paused each end holds its last
// credit, and before the reserve neither had anything to grant, so no
// probe could go out either way and both ended after one interval plus
// the timeout. TCP keeps such a connection (zero-window probes); so must
// we, for 300 s of virtual time: no disconnect, probes answered, no PDU
// storm, no data beyond what was granted for it, and everything arrives
// once the readers wake up.
void both_readers_paused_for_300s(unsigned interval_ms, unsigned timeout_ms)
{
	const unsigned credits = 8;
	PausedPair p(interval_ms, timeout_ms, credits);
	p.start();
	if (testing::Test::HasFatalFailure())
		return;
	const unsigned pdus = both_paused(p.c, p.s, p.cm, p.sm, 0, 300000);
	EXPECT_FALSE(p.c.disconnected)
		<< "client ended at " << p.c.now << " ms, reason " << p.c.disconnect_reason;
	EXPECT_FALSE(p.s.disconnected)
		<< "server ended at " << p.s.now << " ms, reason " << p.s.disconnect_reason;
	if (testing::Test::HasFailure())
		return;
	// Data until both hold their last credit, then a probe and its answer
	// per interval each way: nothing bounces.
	EXPECT_LE(pdus, 2 * credits + 4 * (300000 / interval_ms + 1));
	EXPECT_TRUE(p.c.messages.empty());
	EXPECT_TRUE(p.s.messages.empty());
	EXPECT_LE(p.c.held, credits - 1) << "data beyond the credits granted for it";
	EXPECT_LE(p.s.held, credits - 1) << "data beyond the credits granted for it";
	p.resume();
}

} // namespace

TEST(KeepaliveEngine, BothReadersPausedFor300sDefaultKeepalive)
{
	both_readers_paused_for_300s(120000, 5000); // the module's defaults
}

TEST(KeepaliveEngine, BothReadersPausedFor300sShortKeepalive)
{
	both_readers_paused_for_300s(1000, 300);
}

// The other half of the rule: a peer that stops answering while both
// readers are paused still ends the connection, one interval plus the
// timeout after it went silent.
TEST(KeepaliveEngine, BothReadersPausedThenPeerGoneEnds)
{
	PausedPair p(1000, 300, 8);
	p.start();
	ASSERT_FALSE(HasFatalFailure());
	both_paused(p.c, p.s, p.cm, p.sm, 0, 10000);
	ASSERT_FALSE(p.c.disconnected);
	ASSERT_FALSE(p.s.disconnected);
	both_paused(p.c, p.s, p.cm, p.sm, 10050, 20000, true);
	EXPECT_TRUE(p.c.disconnected);
	EXPECT_EQ(p.c.disconnect_reason, SD_CORE_REASON_KEEPALIVE_TIMEOUT);
	EXPECT_LE(p.c.now, 10000u + 1000 + 300 + 1000) << "ended late";
}
