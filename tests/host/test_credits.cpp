// SPDX-License-Identifier: GPL-2.0
// Credit rules, alone and in engines: the scenarios where a naive
// implementation deadlocks, underflows or lets the peer overrun us.
#include <gtest/gtest.h>

#include "credits.h"
#include "engine.h"
#include "pdu.h"

using namespace sdtest;
using sd::Credits;
using sd::Errc;

TEST(CreditsUnit, GrantNeverExceedsPosted)
{
	Credits c;
	c.init(10, 10);
	EXPECT_EQ(c.grantable(), 0);
	EXPECT_EQ(c.probe_grantable(), 0);
	ASSERT_EQ(c.on_receives_posted(3), Errc::ok);
	// One posted receive stays in reserve; only a probe may grant it.
	EXPECT_EQ(c.grantable(), 2);
	EXPECT_EQ(c.probe_grantable(), 3);
	ASSERT_EQ(c.on_granted(1), Errc::ok);
	c.on_sent(2);
	EXPECT_EQ(c.peer_credits(), 2);
	EXPECT_EQ(c.grantable(), 0);
	EXPECT_EQ(c.probe_grantable(), 1);
	ASSERT_EQ(c.on_receives_posted(2), Errc::ok);
	EXPECT_EQ(c.grantable(), 2);
}

// Issue #26 item 5: the reserve exists only where it leaves the peer two
// credits (data never takes the last one), and a single posted receive is
// always grantable, so a server with one receive can still answer the
// negotiate request.
TEST(CreditsUnit, ReserveOnlyWhereItFits)
{
	Credits two, ten;
	two.init(2, 2);
	ASSERT_EQ(two.on_receives_posted(2), Errc::ok);
	EXPECT_EQ(two.grantable(), 2);
	ten.init(10, 10);
	ASSERT_EQ(ten.on_receives_posted(1), Errc::ok);
	EXPECT_EQ(ten.grantable(), 1);
	ten.on_granted_without_send(1);
	ASSERT_EQ(ten.on_receives_posted(1), Errc::ok);
	// The peer holds one, one more is posted: that one is the reserve.
	EXPECT_EQ(ten.grantable(), 0);
	EXPECT_EQ(ten.probe_grantable(), 1);
}

TEST(CreditsUnit, GrantBoundedByPeerRequest)
{
	Credits c;
	c.init(10, 10);
	ASSERT_EQ(c.on_receives_posted(10), Errc::ok);
	c.set_receive_target(4);
	EXPECT_EQ(c.grantable(), 4);
	c.on_granted_without_send(4);
	EXPECT_EQ(c.grantable(), 0);
	// The peer asking for fewer than it holds: no grant, no underflow.
	c.set_receive_target(1);
	EXPECT_EQ(c.grantable(), 0);
	c.set_receive_target(1000);
	EXPECT_EQ(c.receive_target(), 10);
	EXPECT_EQ(c.grantable(), 5); // 10 posted, one in reserve
	EXPECT_EQ(c.probe_grantable(), 6);
}

TEST(CreditsUnit, PostingMoreThanOwnedIsRejected)
{
	Credits c;
	c.init(4, 1);
	ASSERT_EQ(c.on_receives_posted(4), Errc::ok);
	EXPECT_EQ(c.on_receives_posted(1), Errc::too_many_receives);
	EXPECT_EQ(c.on_receives_posted(0xffffffffu), Errc::too_many_receives);
	EXPECT_EQ(c.posted(), 4);
}

TEST(CreditsUnit, PeerSendingWithoutCreditIsCaught)
{
	Credits c;
	c.init(4, 1);
	EXPECT_EQ(c.on_receive_completed(false), Errc::no_receive_posted);
	ASSERT_EQ(c.on_receives_posted(2), Errc::ok);
	// Posted but never granted: the peer had no right to send.
	EXPECT_EQ(c.on_receive_completed(true), Errc::no_credit);
	c.on_granted_without_send(1);
	EXPECT_EQ(c.on_receive_completed(true), Errc::ok);
	EXPECT_EQ(c.peer_credits(), 0);
	EXPECT_EQ(c.on_receive_completed(true), Errc::no_credit);
}

TEST(CreditsUnit, GrantOverflowIsCaught)
{
	Credits c;
	c.init(4, 1);
	ASSERT_EQ(c.on_granted(65535), Errc::ok);
	EXPECT_EQ(c.on_granted(1), Errc::credit_overflow);
	EXPECT_EQ(c.send_credits(), 65535);
	EXPECT_EQ(c.on_granted(0), Errc::ok);
}

TEST(CreditsUnit, LastCreditOnlyOnAGrantingPdu)
{
	Credits c;
	c.init(4, 2);
	EXPECT_FALSE(c.can_send(1)); // no credit at all
	ASSERT_EQ(c.on_granted(1), Errc::ok);
	EXPECT_FALSE(c.can_send(0)); // would strand the peer
	EXPECT_TRUE(c.can_send(1));  // the PDU itself gives it one
	// Credits the peer already holds do not count: it may be spending
	// them at this very moment.
	c.on_granted_without_send(3);
	EXPECT_FALSE(c.can_send(0));
	ASSERT_EQ(c.on_granted(1), Errc::ok);
	EXPECT_TRUE(c.can_send(0));
}

TEST(CreditsUnit, PeerLowThreshold)
{
	Credits c;
	c.init(16, 16);
	EXPECT_TRUE(c.peer_low());
	c.on_granted_without_send(4);
	EXPECT_TRUE(c.peer_low());
	c.on_granted_without_send(1);
	EXPECT_FALSE(c.peer_low());
}

namespace
{

sd_core_config small(unsigned role, unsigned credits)
{
	sd_core_config c = config(role);
	c.receive_credit_max = credits;
	c.send_credit_target = credits;
	c.keepalive_interval_ms = 0;
	return c;
}

void flush(Engine &from, Engine &to)
{
	while (!from.out.empty())
		ASSERT_EQ(transfer(from, to), SD_CORE_OK);
}

} // namespace

// Both peers spending their last credits at the same time must not leave
// both with none, and a peer whose reader stops must still be able to
// answer a keepalive probe: the last credit never carries data, and goes
// out only with a grant.
TEST(CreditsEngine, LastCreditNeverCarriesData)
{
	Engine c(small(SD_CORE_ROLE_CLIENT, 2)), s(small(SD_CORE_ROLE_SERVER, 2));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.stats().send_credits, 2u);
	// First PDU grants both our receives and asks for an answer: we are
	// down to the reserved credit.
	ASSERT_EQ(c.send(600), SD_CORE_OK);
	sd_core_pdu info;
	ASSERT_EQ(c.produce(pattern(600, 2), &info), SD_CORE_OK);
	EXPECT_EQ(info.credits_granted, 2u);
	EXPECT_EQ(info.flags, SD_CORE_FLAG_RESPONSE_REQUESTED);
	EXPECT_EQ(c.stats().send_credits, 1u);
	// The server holds all we could grant: the last credit stays home.
	ASSERT_EQ(c.send(1), SD_CORE_OK);
	EXPECT_EQ(c.produce(pattern(1, 3)), SD_CORE_E_AGAIN);
	flush(c, s);
	EXPECT_TRUE(s.last.flags & SD_CORE_ACT_DELIVER);
	// RESPONSE_REQUESTED is answered at once, even with nothing to grant
	// (it is also the keepalive probe).
	EXPECT_TRUE(s.last.flags & SD_CORE_ACT_SEND);
	ASSERT_EQ(s.produce({}, &info), SD_CORE_OK);
	EXPECT_EQ(info.kind, SD_CORE_PDU_CREDIT);
	EXPECT_EQ(info.credits_granted, 0u);
	flush(s, c);
	// The answer used one of our receives; reposting it gives us something
	// to grant, but data still does not take the last credit.
	ASSERT_EQ(c.post(c.reposts_owed), SD_CORE_OK);
	c.reposts_owed = 0;
	EXPECT_FALSE(c.last.flags & SD_CORE_ACT_SEND);
	EXPECT_EQ(c.produce(pattern(1, 3)), SD_CORE_E_AGAIN);
	// The server reposts what our data took: a peer down to one credit
	// after data is starved, so it gets the grant at once.
	ASSERT_EQ(s.held, 1u);
	ASSERT_EQ(s.post(s.held), SD_CORE_OK);
	s.held = 0;
	EXPECT_TRUE(s.last.flags & SD_CORE_ACT_SEND);
	ASSERT_EQ(s.produce({}, &info), SD_CORE_OK);
	EXPECT_EQ(info.kind, SD_CORE_PDU_CREDIT);
	EXPECT_EQ(info.credits_granted, 1u);
	flush(s, c);
	ASSERT_EQ(c.stats().send_credits, 2u);
	ASSERT_EQ(c.produce(pattern(1, 3), &info), SD_CORE_OK);
	EXPECT_EQ(info.payload_length, 1u);
	EXPECT_EQ(info.credits_granted, 1u);
	EXPECT_EQ(c.stats().send_credits, 1u);
}

// The reader holding every buffer: credits come back when it lets go, and
// meanwhile the writer keeps its last credit for the answers.
TEST(CreditsEngine, CreditsReturnWhenReceivesAreReposted)
{
	Engine c(small(SD_CORE_ROLE_CLIENT, 4)), s(small(SD_CORE_ROLE_SERVER, 4));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.pump(), 1u); // the server gets 3 credits, one receive in reserve
	flush(c, s);
	s.post(s.reposts_owed);
	s.reposts_owed = 0;
	Bytes msg = pattern(4 * 1340, 7);
	ASSERT_EQ(s.send(static_cast<unsigned>(msg.size())), SD_CORE_OK);
	// 3 credits: two PDUs, the last credit kept.
	EXPECT_EQ(s.pump(msg), 2u);
	flush(s, c);
	EXPECT_EQ(c.held, 2u);
	EXPECT_EQ(c.pump(), 1u); // the answer to RESPONSE_REQUESTED, no grant yet
	flush(c, s);
	s.post(s.reposts_owed);
	s.reposts_owed = 0;
	// Its receives reposted, the server still keeps its last credit: the
	// rest of the message waits for the client's reader.
	sd_core_pdu info;
	EXPECT_EQ(s.produce(msg, &info), SD_CORE_E_AGAIN);
	EXPECT_EQ(s.stats().send_credits, 1u);
	EXPECT_TRUE(c.messages.empty());
	// The client's reader lets go of the buffers and the reposts go
	// straight back as credits; the message completes.
	ASSERT_EQ(c.post(c.held), SD_CORE_OK);
	EXPECT_TRUE(c.last.flags & SD_CORE_ACT_SEND);
	ASSERT_EQ(c.produce({}, &info), SD_CORE_OK);
	EXPECT_EQ(info.kind, SD_CORE_PDU_CREDIT);
	EXPECT_GE(info.credits_granted, 2u);
	flush(c, s);
	ASSERT_EQ(s.produce(msg, &info), SD_CORE_OK);
	ASSERT_EQ(s.produce(msg, &info), SD_CORE_OK);
	EXPECT_EQ(info.message_last, 1u);
	flush(s, c);
	ASSERT_EQ(c.messages.size(), 1u);
	EXPECT_EQ(c.messages[0], msg);
}

// Two idle peers must fall silent: empty PDUs do not trigger empty PDUs.
TEST(CreditsEngine, IdlePeersDoNotPingPong)
{
	for (unsigned credits : { 2u, 3u, 4u, 255u }) {
		Engine c(small(SD_CORE_ROLE_CLIENT, credits)),
			s(small(SD_CORE_ROLE_SERVER, credits));
		ASSERT_TRUE(negotiate(c, s));
		unsigned pdus = 0;
		for (int round = 0; round < 50; round++) {
			pdus += c.pump() + s.pump();
			ASSERT_EQ(exchange(c, s), SD_CORE_OK);
			c.post(c.reposts_owed);
			c.reposts_owed = 0;
			s.post(s.reposts_owed);
			s.reposts_owed = 0;
		}
		EXPECT_LE(pdus, 2u) << "credits " << credits;
		EXPECT_GE(s.stats().send_credits, 1u) << "server never got credits";
	}
}

TEST(CreditsEngine, PeerOverrunningCreditsIsDisconnected)
{
	Engine c(small(SD_CORE_ROLE_CLIENT, 2)), s(small(SD_CORE_ROLE_SERVER, 2));
	ASSERT_TRUE(negotiate(c, s));
	// The server has no credit yet: any data PDU from it is an overrun.
	Bytes pdu(20);
	sd::DataHeader h{ 1, 0, 0, 0, 0, 0 };
	ASSERT_TRUE(sd::encode_data_header(h, sd::MutByteSpan(pdu.data(), pdu.size())).ok());
	EXPECT_EQ(c.recv(pdu), SD_CORE_E_NO_CREDIT);
	EXPECT_TRUE(c.disconnected);
	EXPECT_EQ(c.disconnect_reason, SD_CORE_REASON_PROTOCOL_ERROR);
	EXPECT_EQ(c.disconnect_error, SD_CORE_E_NO_CREDIT);
}

TEST(CreditsEngine, PeerGrantingPast65535IsDisconnected)
{
	Engine c(small(SD_CORE_ROLE_CLIENT, 2)), s(small(SD_CORE_ROLE_SERVER, 2));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.pump(), 1u);
	flush(c, s); // server now holds credits
	Bytes pdu(20);
	sd::DataHeader h{ 1, 65535, 0, 0, 0, 0 };
	ASSERT_TRUE(sd::encode_data_header(h, sd::MutByteSpan(pdu.data(), pdu.size())).ok());
	EXPECT_EQ(c.recv(pdu), SD_CORE_E_CREDIT_OVERFLOW);
	EXPECT_EQ(c.disconnect_error, SD_CORE_E_CREDIT_OVERFLOW);
}

TEST(CreditsEngine, ZeroCreditsRequestedStillLeavesOne)
{
	Engine c(small(SD_CORE_ROLE_CLIENT, 4)), s(small(SD_CORE_ROLE_SERVER, 4));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.pump(), 1u);
	flush(c, s);
	s.post(s.reposts_owed);
	Bytes pdu(20);
	sd::DataHeader h{ 0, 0, 0, 0, 0, 0 };
	ASSERT_TRUE(sd::encode_data_header(h, sd::MutByteSpan(pdu.data(), pdu.size())).ok());
	ASSERT_EQ(c.recv(pdu), SD_CORE_OK);
	sd_core_params p = c.params();
	EXPECT_EQ(p.receive_credit_target, 1u);
}
