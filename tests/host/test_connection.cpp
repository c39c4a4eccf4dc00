// SPDX-License-Identifier: GPL-2.0
// The state machine's handling of events in the wrong state and of misuse,
// and the exact actions it asks of the glue.
#include <gtest/gtest.h>

#include "engine.h"
#include "pdu.h"

using namespace sdtest;

TEST(Connection, NothingBeforeEstablished)
{
	Engine c(config(SD_CORE_ROLE_CLIENT));
	ASSERT_EQ(c.init(), SD_CORE_OK);
	EXPECT_EQ(c.send(10), SD_CORE_E_BAD_STATE);
	EXPECT_EQ(c.produce(), SD_CORE_E_AGAIN);
	EXPECT_EQ(c.fire(), SD_CORE_OK);
	EXPECT_EQ(c.last.flags, 0u);
	sd_core_params p;
	EXPECT_EQ(sd_core_get_params(&c.conn, &p), SD_CORE_E_BAD_STATE);
	ASSERT_EQ(c.connected(), SD_CORE_OK);
	EXPECT_EQ(c.connected(), SD_CORE_E_BAD_STATE);
	EXPECT_EQ(c.send(10), SD_CORE_E_BAD_STATE);
}

TEST(Connection, ReceiveWithoutPostedBufferIsAProtocolError)
{
	Engine s(config(SD_CORE_ROLE_SERVER));
	ASSERT_EQ(s.init(), SD_CORE_OK);
	ASSERT_EQ(s.connected(), SD_CORE_OK);
	EXPECT_EQ(s.recv(Bytes(sd_vec_negotiate_request, sd_vec_negotiate_request + 20)),
		  SD_CORE_E_NO_RECEIVE_POSTED);
	EXPECT_TRUE(s.disconnected);
}

TEST(Connection, TooManyPostsRejected)
{
	sd_core_config cfg = config(SD_CORE_ROLE_SERVER);
	cfg.receive_credit_max = 4;
	Engine s(cfg);
	ASSERT_EQ(s.init(), SD_CORE_OK);
	ASSERT_EQ(s.post(4), SD_CORE_OK);
	EXPECT_EQ(s.post(1), SD_CORE_E_TOO_MANY_RECEIVES);
}

TEST(Connection, NegotiatePduLongerThanReceiveBufferRejected)
{
	Engine s(config(SD_CORE_ROLE_SERVER));
	ASSERT_EQ(s.init(), SD_CORE_OK);
	ASSERT_EQ(s.post(4), SD_CORE_OK);
	Bytes big(s.cfg.max_receive_size + 1);
	EXPECT_EQ(s.recv(big), SD_CORE_E_PDU_TOO_LONG);
}

TEST(Connection, BusyWhileAMessageIsInFlight)
{
	Engine c(config(SD_CORE_ROLE_CLIENT)), s(config(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.send(5000), SD_CORE_OK);
	EXPECT_TRUE(c.last.flags & SD_CORE_ACT_SEND);
	EXPECT_EQ(c.send(1), SD_CORE_E_BUSY);
	EXPECT_EQ(c.stats().message_pending, 5000u);
	Bytes msg = pattern(5000, 1);
	c.pump(msg);
	EXPECT_EQ(c.stats().message_pending, 0u);
	EXPECT_EQ(c.send(1), SD_CORE_OK);
}

TEST(Connection, DeliverPointsIntoTheReceiveBuffer)
{
	Engine c(config(SD_CORE_ROLE_CLIENT)), s(config(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	c.pump();
	while (!c.out.empty())
		ASSERT_EQ(transfer(c, s), SD_CORE_OK);
	Bytes msg = pattern(2000, 5);
	ASSERT_EQ(s.send(2000), SD_CORE_OK);
	ASSERT_EQ(s.pump(msg), 2u);
	ASSERT_EQ(transfer(s, c), SD_CORE_OK);
	EXPECT_EQ(c.last.flags & (SD_CORE_ACT_DELIVER | SD_CORE_ACT_REPOST), SD_CORE_ACT_DELIVER);
	EXPECT_EQ(c.last.deliver_offset, 24u);
	EXPECT_EQ(c.last.deliver_length, 1340u);
	EXPECT_EQ(c.last.deliver_flags, static_cast<unsigned>(SD_CORE_DELIVER_FIRST));
	EXPECT_EQ(c.last.message_length, 2000u);
	ASSERT_EQ(transfer(s, c), SD_CORE_OK);
	EXPECT_EQ(c.last.deliver_length, 660u);
	EXPECT_EQ(c.last.deliver_flags, static_cast<unsigned>(SD_CORE_DELIVER_LAST));
	ASSERT_EQ(c.messages.size(), 1u);
	EXPECT_EQ(c.messages[0], msg);
}

TEST(Connection, SendCompletionsAreCounted)
{
	Engine c(config(SD_CORE_ROLE_CLIENT)), s(config(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	EXPECT_EQ(c.stats().sends_in_flight, 1u); // the negotiate request
	EXPECT_EQ(c.completed(2), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(c.completed(1), SD_CORE_OK);
	EXPECT_EQ(c.stats().sends_in_flight, 0u);
	EXPECT_FALSE(c.disconnected);
}

TEST(Connection, LocalDisconnectEndsEverything)
{
	Engine c(config(SD_CORE_ROLE_CLIENT)), s(config(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	sd_core_actions a;
	ASSERT_EQ(sd_core_disconnect(&c.conn, SD_CORE_REASON_LOCAL, &a), SD_CORE_OK);
	EXPECT_EQ(a.flags, static_cast<unsigned>(SD_CORE_ACT_DISCONNECT));
	EXPECT_EQ(a.disconnect_reason, SD_CORE_REASON_LOCAL);
	EXPECT_EQ(a.error, 0);
	EXPECT_EQ(sd_core_disconnect(&c.conn, SD_CORE_REASON_LOCAL, &a), SD_CORE_E_BAD_STATE);
	EXPECT_EQ(c.send(1), SD_CORE_E_BAD_STATE);
	EXPECT_EQ(c.post(1), SD_CORE_E_BAD_STATE);
	EXPECT_EQ(c.produce(), SD_CORE_E_BAD_STATE);
	EXPECT_EQ(c.recv(Bytes(20)), SD_CORE_E_BAD_STATE);
	EXPECT_EQ(c.fire(), SD_CORE_OK);
	EXPECT_EQ(c.last.flags, 0u);
}

TEST(Connection, ServerDataBeforeResponseIsQueued)
{
	Engine s(config(SD_CORE_ROLE_SERVER));
	ASSERT_EQ(s.init(), SD_CORE_OK);
	ASSERT_EQ(s.post(4), SD_CORE_OK);
	ASSERT_EQ(s.connected(), SD_CORE_OK);
	ASSERT_EQ(s.recv(Bytes(sd_vec_negotiate_request, sd_vec_negotiate_request + 20)),
		  SD_CORE_OK);
	ASSERT_EQ(s.send(10), SD_CORE_OK);
	sd_core_pdu info;
	ASSERT_EQ(s.produce(pattern(10, 1), &info), SD_CORE_OK);
	EXPECT_EQ(info.kind, SD_CORE_PDU_NEGOTIATE_RESPONSE);
	// No credits until the client grants some.
	EXPECT_EQ(s.produce(pattern(10, 1)), SD_CORE_E_AGAIN);
}
