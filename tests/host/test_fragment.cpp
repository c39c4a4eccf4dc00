// SPDX-License-Identifier: GPL-2.0
// Fragmentation and reassembly: round trips at every size boundary, and the
// receive-side rules on RemainingDataLength and MaxFragmentedSize.
#include <gtest/gtest.h>

#include "engine.h"
#include "fragment.h"
#include "pdu.h"
#include "reassembly.h"

using namespace sdtest;
using sd::Errc;

namespace
{

constexpr unsigned kSend = 1364;
constexpr unsigned kRoom = kSend - SD_CORE_DATA_HEADER_SIZE; // payload per PDU
constexpr unsigned kFrag = 131072;

sd_core_config cfg(unsigned role)
{
	sd_core_config c = config(role);
	c.max_fragmented_size = kFrag;
	c.keepalive_interval_ms = 0;
	return c;
}

// Sends one message of n bytes client -> server, pumping credits both ways.
// Returns the number of data PDUs it took, or -errc if the send was refused.
int round_trip(unsigned n, Bytes *received)
{
	Engine c(cfg(SD_CORE_ROLE_CLIENT)), s(cfg(SD_CORE_ROLE_SERVER));
	EXPECT_TRUE(negotiate(c, s));
	Bytes msg = pattern(n, n);
	int rc = c.send(n);
	if (rc)
		return -rc;
	int data_pdus = 0;
	for (int guard = 0; guard < 100000 && s.messages.empty(); guard++) {
		sd_core_pdu info;
		while (c.produce(msg, &info) == SD_CORE_OK) {
			if (info.kind == SD_CORE_PDU_DATA) {
				data_pdus++;
				EXPECT_LE(info.length, kSend);
			}
		}
		while (!c.out.empty())
			EXPECT_EQ(transfer(c, s), SD_CORE_OK);
		s.post(s.reposts_owed + s.held);
		s.reposts_owed = s.held = 0;
		s.pump();
		while (!s.out.empty())
			EXPECT_EQ(transfer(s, c), SD_CORE_OK);
		c.post(c.reposts_owed);
		c.reposts_owed = 0;
	}
	EXPECT_EQ(s.messages.size(), 1u);
	if (!s.messages.empty())
		*received = s.messages[0];
	EXPECT_EQ(*received, msg);
	return data_pdus;
}

} // namespace

TEST(Fragmentation, ZeroLengthMessageCannotBeSent)
{
	Bytes got;
	EXPECT_EQ(round_trip(0, &got), -SD_CORE_E_EMPTY_MESSAGE);
}

TEST(Fragmentation, OneByte)
{
	Bytes got;
	EXPECT_EQ(round_trip(1, &got), 1);
}

TEST(Fragmentation, SendSizeMinusOne)
{
	Bytes got;
	EXPECT_EQ(round_trip(kRoom - 1, &got), 1);
}

TEST(Fragmentation, ExactlySendSize)
{
	Bytes got;
	EXPECT_EQ(round_trip(kRoom, &got), 1);
}

TEST(Fragmentation, SendSizePlusOne)
{
	Bytes got;
	EXPECT_EQ(round_trip(kRoom + 1, &got), 2);
}

TEST(Fragmentation, MaxFragmented)
{
	Bytes got;
	EXPECT_EQ(round_trip(kFrag, &got), static_cast<int>((kFrag + kRoom - 1) / kRoom));
}

TEST(Fragmentation, MaxFragmentedPlusOneIsRejected)
{
	Bytes got;
	EXPECT_EQ(round_trip(kFrag + 1, &got), -SD_CORE_E_MESSAGE_TOO_LONG);
}

TEST(Fragmentation, OneMessageAtATime)
{
	sd::Fragmenter f;
	f.init();
	ASSERT_EQ(f.begin(10, kFrag), Errc::ok);
	EXPECT_EQ(f.begin(10, kFrag), Errc::busy);
	auto p = f.next(4, 100);
	EXPECT_EQ(p.offset, 0u);
	EXPECT_EQ(p.length, 4u);
	EXPECT_EQ(p.remaining_after, 6u);
	f.advance(4);
	// The caller may have fewer bytes than room: fragments shrink.
	p = f.next(4, 1);
	EXPECT_EQ(p.offset, 4u);
	EXPECT_EQ(p.length, 1u);
	EXPECT_EQ(p.remaining_after, 5u);
	f.advance(1);
	p = f.next(100, 100);
	EXPECT_EQ(p.length, 5u);
	EXPECT_EQ(p.remaining_after, 0u);
	f.advance(5);
	EXPECT_FALSE(f.active());
	EXPECT_EQ(f.begin(3, kFrag), Errc::ok);
}

TEST(Fragmentation, NoPayloadAvailableMeansNoDataPdu)
{
	Engine c(cfg(SD_CORE_ROLE_CLIENT)), s(cfg(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.pump(), 1u); // the initial credit grant
	ASSERT_EQ(c.send(100), SD_CORE_OK);
	Bytes buf(kSend);
	sd_core_pdu pdu;
	EXPECT_EQ(sd_core_next_pdu(&c.conn, buf.data(), kSend, 0, &pdu), SD_CORE_E_AGAIN);
	ASSERT_EQ(sd_core_next_pdu(&c.conn, buf.data(), kSend, 40, &pdu), SD_CORE_OK);
	EXPECT_EQ(pdu.payload_length, 40u);
	EXPECT_EQ(pdu.message_offset, 0u);
	EXPECT_EQ(pdu.message_last, 0u);
	ASSERT_EQ(sd_core_next_pdu(&c.conn, buf.data(), kSend, 60, &pdu), SD_CORE_OK);
	EXPECT_EQ(pdu.message_offset, 40u);
	EXPECT_EQ(pdu.message_last, 1u);
	// The send buffer must hold header + payload.
	ASSERT_EQ(c.send(100), SD_CORE_OK);
	EXPECT_EQ(sd_core_next_pdu(&c.conn, buf.data(), 50, 100, &pdu), SD_CORE_E_BUFFER_TOO_SMALL);
}

namespace
{

sd::DataHeader frag(uint32_t len, uint32_t remaining)
{
	return sd::DataHeader{ 1, 0, 0, remaining, 24, len };
}

} // namespace

TEST(Reassembly, ConsistentFragmentsMakeOneMessage)
{
	sd::Reassembly r;
	r.init(kFrag);
	auto a = r.on_fragment(frag(10, 20));
	ASSERT_TRUE(a.ok());
	EXPECT_EQ(a.value().flags, static_cast<uint32_t>(SD_CORE_DELIVER_FIRST));
	EXPECT_EQ(a.value().message_length, 30u);
	auto b = r.on_fragment(frag(15, 5));
	ASSERT_TRUE(b.ok());
	EXPECT_EQ(b.value().flags, 0u);
	auto c = r.on_fragment(frag(5, 0));
	ASSERT_TRUE(c.ok());
	EXPECT_EQ(c.value().flags, static_cast<uint32_t>(SD_CORE_DELIVER_LAST));
	EXPECT_FALSE(r.in_progress());
	auto d = r.on_fragment(frag(7, 0));
	ASSERT_TRUE(d.ok());
	EXPECT_EQ(d.value().flags,
		  static_cast<uint32_t>(SD_CORE_DELIVER_FIRST | SD_CORE_DELIVER_LAST));
}

TEST(Reassembly, RemainingThatGrowsIsRejected)
{
	sd::Reassembly r;
	r.init(kFrag);
	ASSERT_TRUE(r.on_fragment(frag(10, 20)).ok());
	EXPECT_EQ(r.on_fragment(frag(10, 11)).error(), Errc::remaining_mismatch);
}

TEST(Reassembly, FragmentLongerThanPromisedIsRejected)
{
	sd::Reassembly r;
	r.init(kFrag);
	ASSERT_TRUE(r.on_fragment(frag(10, 20)).ok());
	EXPECT_EQ(r.on_fragment(frag(21, 0)).error(), Errc::remaining_mismatch);
}

TEST(Reassembly, ShortLastFragmentIsRejected)
{
	sd::Reassembly r;
	r.init(kFrag);
	ASSERT_TRUE(r.on_fragment(frag(10, 20)).ok());
	EXPECT_EQ(r.on_fragment(frag(19, 0)).error(), Errc::remaining_mismatch);
}

TEST(Reassembly, MaxFragmentedBoundary)
{
	sd::Reassembly r;
	r.init(kFrag);
	EXPECT_TRUE(r.on_fragment(frag(1000, kFrag - 1000)).ok());
	sd::Reassembly r2;
	r2.init(kFrag);
	EXPECT_EQ(r2.on_fragment(frag(1000, kFrag - 999)).error(), Errc::message_too_long);
	// The sum must not wrap around 32 bits into something small.
	sd::Reassembly r3;
	r3.init(kFrag);
	EXPECT_EQ(r3.on_fragment(frag(16, 0xfffffff8u)).error(), Errc::message_too_long);
}

namespace
{

Bytes data_pdu(uint16_t granted, uint32_t remaining, const Bytes &payload)
{
	Bytes b(24 + payload.size());
	sd::DataHeader h{ 1, granted, 0, remaining, 24, static_cast<uint32_t>(payload.size()) };
	EXPECT_TRUE(sd::encode_data_header(h, sd::MutByteSpan(b.data(), b.size())).ok());
	std::copy(payload.begin(), payload.end(), b.begin() + 24);
	return b;
}

} // namespace

// Through an engine: violations disconnect with the rule's own error, and a
// credit-only PDU between fragments does not disturb reassembly.
TEST(ReassemblyEngine, CreditOnlyBetweenFragmentsIsTransparent)
{
	Engine c(cfg(SD_CORE_ROLE_CLIENT)), s(cfg(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.pump(), 1u); // grants the (simulated) server its credits
	ASSERT_EQ(c.recv(data_pdu(0, 3, pattern(2, 9))), SD_CORE_OK);
	Bytes credit(20);
	sd::DataHeader h{ 1, 1, 0, 0, 0, 0 };
	ASSERT_TRUE(sd::encode_data_header(h, sd::MutByteSpan(credit.data(), 20)).ok());
	ASSERT_EQ(c.recv(credit), SD_CORE_OK);
	EXPECT_EQ(c.last.repost, 1u);
	ASSERT_EQ(c.recv(data_pdu(0, 0, pattern(3, 9))), SD_CORE_OK);
	ASSERT_EQ(c.messages.size(), 1u);
	EXPECT_EQ(c.messages[0].size(), 5u);
	EXPECT_EQ(c.last.message_length, 5u);
}

TEST(ReassemblyEngine, OversizedMessageFromPeerDisconnects)
{
	Engine c(cfg(SD_CORE_ROLE_CLIENT)), s(cfg(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.pump(), 1u);
	EXPECT_EQ(c.recv(data_pdu(0, kFrag - 9, pattern(10, 1))), SD_CORE_E_MESSAGE_TOO_LONG);
	EXPECT_TRUE(c.disconnected);
	EXPECT_EQ(c.disconnect_error, SD_CORE_E_MESSAGE_TOO_LONG);
}

TEST(ReassemblyEngine, InconsistentRemainingFromPeerDisconnects)
{
	Engine c(cfg(SD_CORE_ROLE_CLIENT)), s(cfg(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.pump(), 1u); // grants the (simulated) server its credits
	ASSERT_EQ(c.recv(data_pdu(0, 100, pattern(10, 1))), SD_CORE_OK);
	EXPECT_EQ(c.recv(data_pdu(0, 100, pattern(10, 1))), SD_CORE_E_REMAINING_MISMATCH);
	EXPECT_EQ(c.disconnect_reason, SD_CORE_REASON_PROTOCOL_ERROR);
}

TEST(ReassemblyEngine, PduLongerThanNegotiatedReceiveSizeDisconnects)
{
	Engine c(cfg(SD_CORE_ROLE_CLIENT)), s(cfg(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.pump(), 1u);
	EXPECT_EQ(c.recv(data_pdu(0, 0, pattern(kSend - 23, 1))), SD_CORE_E_PDU_TOO_LONG);
	EXPECT_EQ(c.disconnect_error, SD_CORE_E_PDU_TOO_LONG);
}

TEST(ReassemblyEngine, MalformedHeaderFromPeerDisconnects)
{
	Engine c(cfg(SD_CORE_ROLE_CLIENT)), s(cfg(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.pump(), 1u);
	Bytes b = data_pdu(0, 0, pattern(8, 1));
	b[12] = 20; // DataOffset 20: inside the header and unaligned
	EXPECT_EQ(c.recv(b), SD_CORE_E_DATA_OFFSET_ALIGNMENT);
	EXPECT_EQ(c.disconnect_reason, SD_CORE_REASON_PROTOCOL_ERROR);
}

// Found by fuzz_connection: an empty PDU produced while a message is only
// partly available carried the message's RemainingDataLength, which the
// peer rightly rejects as an empty fragment.
TEST(Fragmentation, EmptyPduBetweenFragmentsCarriesNoRemaining)
{
	Engine c(cfg(SD_CORE_ROLE_CLIENT)), s(cfg(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	ASSERT_EQ(c.pump(), 1u);
	while (!c.out.empty())
		ASSERT_EQ(transfer(c, s), SD_CORE_OK);
	ASSERT_EQ(c.send(5000), SD_CORE_OK);
	Bytes msg = pattern(5000, 4);
	Bytes part(msg.begin(), msg.begin() + 100);
	ASSERT_EQ(c.produce(part), SD_CORE_OK);
	// The server asks for an answer while the rest of the message is not
	// yet available to the client's glue.
	s.post(s.reposts_owed);
	Bytes probe(20);
	sd::DataHeader h{ 1, 0, SD_CORE_FLAG_RESPONSE_REQUESTED, 0, 0, 0 };
	ASSERT_TRUE(sd::encode_data_header(h, sd::MutByteSpan(probe.data(), 20)).ok());
	ASSERT_EQ(c.recv(probe), SD_CORE_OK);
	sd_core_pdu info;
	ASSERT_EQ(c.produce(part, &info), SD_CORE_OK);
	EXPECT_EQ(info.kind, SD_CORE_PDU_CREDIT);
	auto d = sd::decode_data_header(sd::ByteSpan(c.out.back().data(), c.out.back().size()));
	ASSERT_TRUE(d.ok()) << static_cast<int>(d.error());
	EXPECT_EQ(d.value().remaining_data_length, 0u);
	c.pump(msg);
	while (!c.out.empty())
		ASSERT_EQ(transfer(c, s), SD_CORE_OK);
	ASSERT_EQ(s.messages.size(), 1u);
	EXPECT_EQ(s.messages[0], msg);
}
