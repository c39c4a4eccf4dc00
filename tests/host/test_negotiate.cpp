// SPDX-License-Identifier: GPL-2.0
// Negotiation for both roles, through the C interface, across a matrix of
// local settings; and every way a negotiation can be refused.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine.h"
#include "negotiate.h"
#include "pdu.h"

using namespace sdtest;

namespace
{

struct Sizes {
	const char *name;
	unsigned credits;
	unsigned send;
	unsigned recv;
	unsigned frag;
	unsigned rw;
};

const Sizes kSizes[] = {
	{ "minimum", 2, 128, 128, 131072, 0 },
	{ "field", 255, 1364, 1364, 1048576, 8388608 },
	{ "windows_client", 255, 1364, 8192, 1048576, 1048576 },
	{ "odd", 7, 1001, 4097, 131073, 12345 },
	{ "large", 65535, 65536, 65536, 0xffffffffu, 0xffffffffu },
};

sd_core_config make(unsigned role, const Sizes &s)
{
	sd_core_config c = config(role);
	c.receive_credit_max = std::min(s.credits, 512u);
	c.send_credit_target = s.credits;
	c.max_send_size = s.send;
	c.max_receive_size = s.recv;
	c.max_fragmented_size = s.frag;
	c.max_read_write_size = s.rw;
	return c;
}

Bytes bytes_of(const unsigned char *p, size_t n)
{
	return Bytes(p, p + n);
}

} // namespace

class NegotiateMatrix : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(NegotiateMatrix, BothRolesAgreeOnEffectiveParameters)
{
	const Sizes &cs = kSizes[std::get<0>(GetParam())];
	const Sizes &ss = kSizes[std::get<1>(GetParam())];
	Engine c(make(SD_CORE_ROLE_CLIENT, cs)), s(make(SD_CORE_ROLE_SERVER, ss));
	ASSERT_TRUE(negotiate(c, s))
		<< "client err " << c.disconnect_error << " server err " << s.disconnect_error;
	sd_core_params cp = c.params(), sp = s.params();
	EXPECT_EQ(cp.version, 0x0100u);
	EXPECT_EQ(sp.version, 0x0100u);
	// Effective send size: own max send vs the peer's MaxReceiveSize.
	EXPECT_EQ(cp.max_send_size, std::min(cs.send, ss.recv));
	EXPECT_EQ(sp.max_send_size, std::min(ss.send, cs.recv));
	// Each side expects what the other will send.
	EXPECT_EQ(cp.max_receive_size, sp.max_send_size);
	EXPECT_LE(sp.max_receive_size, ss.recv);
	// What the peer accepts, capped locally (a peer may say 0xFFFFFFFF).
	EXPECT_EQ(cp.max_fragmented_send_size, std::min(ss.frag, SD_CORE_MAX_FRAGMENTED_SEND_SIZE));
	EXPECT_EQ(sp.max_fragmented_send_size, std::min(cs.frag, SD_CORE_MAX_FRAGMENTED_SEND_SIZE));
	EXPECT_EQ(cp.max_fragmented_receive_size, cs.frag);
	EXPECT_EQ(cp.max_read_write_size, std::min(cs.rw, ss.rw));
	EXPECT_EQ(sp.max_read_write_size, ss.rw);
	EXPECT_EQ(cp.peer_credit_target, ss.credits);
	EXPECT_EQ(sp.peer_credit_target, cs.credits);
	EXPECT_EQ(sp.receive_credit_target, std::min({ ss.credits, 512u, cs.credits }));
	// Client got the server's grant, which never exceeds what it posted.
	EXPECT_GE(c.stats().send_credits, 1u);
	EXPECT_LE(c.stats().send_credits, s.stats().receives_posted);
	EXPECT_EQ(s.stats().send_credits, 0u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, NegotiateMatrix,
			 ::testing::Combine(::testing::Range(0, 5), ::testing::Range(0, 5)),
			 [](const ::testing::TestParamInfo<std::tuple<int, int>> &i) {
				 return std::string(kSizes[std::get<0>(i.param)].name) + "_to_" +
					kSizes[std::get<1>(i.param)].name;
			 });

TEST(Negotiate, ClientRequestCarriesLocalSettings)
{
	sd_core_config cfg = config(SD_CORE_ROLE_CLIENT);
	cfg.max_receive_size = 8192;
	Engine c(cfg);
	ASSERT_EQ(c.init(), SD_CORE_OK);
	ASSERT_EQ(c.post(1), SD_CORE_OK);
	ASSERT_EQ(c.connected(), SD_CORE_OK);
	EXPECT_TRUE(c.last.flags & SD_CORE_ACT_SEND);
	EXPECT_TRUE(c.last.flags & SD_CORE_ACT_ARM_TIMER);
	EXPECT_EQ(c.last.timer_deadline_ms, cfg.negotiate_timeout_ms);
	sd_core_pdu info;
	ASSERT_EQ(c.produce({}, &info), SD_CORE_OK);
	EXPECT_EQ(info.kind, SD_CORE_PDU_NEGOTIATE_REQUEST);
	EXPECT_EQ(c.out.front(), bytes_of(sd_vec_negotiate_request, 20));
	EXPECT_EQ(c.produce(), SD_CORE_E_AGAIN);
}

TEST(Negotiate, ServerAnswersFieldRequest)
{
	Engine s(config(SD_CORE_ROLE_SERVER));
	ASSERT_EQ(s.init(), SD_CORE_OK);
	ASSERT_EQ(s.post(16), SD_CORE_OK);
	ASSERT_EQ(s.connected(), SD_CORE_OK);
	EXPECT_EQ(s.produce(), SD_CORE_E_AGAIN);
	ASSERT_EQ(s.recv(bytes_of(sd_vec_negotiate_request, 20)), SD_CORE_OK);
	EXPECT_TRUE(s.established);
	EXPECT_EQ(s.last.repost, 1u);
	sd_core_pdu info;
	ASSERT_EQ(s.produce({}, &info), SD_CORE_OK);
	EXPECT_EQ(info.kind, SD_CORE_PDU_NEGOTIATE_RESPONSE);
	auto r = sd::decode_negotiate_response(
		sd::ByteSpan(s.out.front().data(), s.out.front().size()));
	ASSERT_TRUE(r.ok());
	// 15 posted after the request consumed one: all but the one kept in
	// reserve for keepalive probes granted.
	EXPECT_EQ(r.value().credits_granted, 14);
	EXPECT_EQ(r.value().preferred_send_size, 1364u);
	EXPECT_EQ(r.value().max_receive_size, 1364u);
	EXPECT_EQ(r.value().max_read_write_size, 8388608u);
	EXPECT_EQ(r.value().max_fragmented_size, 1048576u);
	EXPECT_EQ(s.stats().peer_credits, 14u);
}

TEST(Negotiate, ClientAcceptsFieldResponse)
{
	Engine c(config(SD_CORE_ROLE_CLIENT));
	ASSERT_EQ(c.init(), SD_CORE_OK);
	ASSERT_EQ(c.post(255), SD_CORE_OK);
	ASSERT_EQ(c.connected(), SD_CORE_OK);
	ASSERT_EQ(c.pump(), 1u);
	ASSERT_EQ(c.recv(bytes_of(sd_vec_negotiate_response, 32)), SD_CORE_OK);
	EXPECT_TRUE(c.established);
	EXPECT_EQ(c.stats().send_credits, 15u);
	EXPECT_EQ(c.params().max_send_size, 1364u);
	EXPECT_EQ(c.params().max_read_write_size, 8388608u);
}

TEST(Negotiate, ServerWaitsForAPostedReceiveBeforeGranting)
{
	Engine s(config(SD_CORE_ROLE_SERVER));
	ASSERT_EQ(s.init(), SD_CORE_OK);
	ASSERT_EQ(s.post(1), SD_CORE_OK);
	ASSERT_EQ(s.connected(), SD_CORE_OK);
	ASSERT_EQ(s.recv(bytes_of(sd_vec_negotiate_request, 20)), SD_CORE_OK);
	EXPECT_FALSE(s.last.flags & SD_CORE_ACT_SEND);
	EXPECT_EQ(s.produce(), SD_CORE_E_AGAIN); // CreditsGranted 0 is illegal
	ASSERT_EQ(s.post(1), SD_CORE_OK);
	EXPECT_TRUE(s.last.flags & SD_CORE_ACT_SEND);
	sd_core_pdu info;
	ASSERT_EQ(s.produce({}, &info), SD_CORE_OK);
	EXPECT_EQ(info.credits_granted, 1u);
}

TEST(Negotiate, ServerAcceptsRequestBeforeConnectedEvent)
{
	Engine s(config(SD_CORE_ROLE_SERVER));
	ASSERT_EQ(s.init(), SD_CORE_OK);
	ASSERT_EQ(s.post(4), SD_CORE_OK);
	ASSERT_EQ(s.recv(bytes_of(sd_vec_negotiate_request, 20)), SD_CORE_OK);
	EXPECT_TRUE(s.established);
	EXPECT_EQ(s.connected(), SD_CORE_OK);
	EXPECT_EQ(s.pump(), 1u);
}

namespace
{

// Feeds req to a fresh server and returns the refusal it sends.
sd::NegotiateResponse refusal_for(const Bytes &req, int expect_rc)
{
	Engine s(config(SD_CORE_ROLE_SERVER));
	EXPECT_EQ(s.init(), SD_CORE_OK);
	EXPECT_EQ(s.post(4), SD_CORE_OK);
	EXPECT_EQ(s.connected(), SD_CORE_OK);
	EXPECT_EQ(s.recv(req), expect_rc);
	EXPECT_TRUE(s.last.flags & SD_CORE_ACT_SEND);
	EXPECT_FALSE(s.last.flags & SD_CORE_ACT_DISCONNECT);
	EXPECT_EQ(s.pump(), 1u);
	EXPECT_EQ(s.out.front().size(), 32u);
	// Nothing else may follow a refusal; the disconnect waits for it.
	EXPECT_EQ(s.send(10), SD_CORE_E_BAD_STATE);
	EXPECT_EQ(s.completed(1), SD_CORE_OK);
	EXPECT_TRUE(s.disconnected);
	EXPECT_EQ(s.disconnect_reason, SD_CORE_REASON_NEGOTIATE_REJECTED);
	EXPECT_EQ(s.disconnect_error, expect_rc);
	sd::NegotiateResponse r{};
	const Bytes &b = s.out.front();
	r.negotiated_version = static_cast<uint16_t>(b[4] | b[5] << 8);
	r.status = static_cast<uint32_t>(b[12] | b[13] << 8 | b[14] << 16 | b[15] << 24);
	return r;
}

Bytes request(uint16_t min, uint16_t max, uint16_t credits, uint32_t recv, uint32_t frag)
{
	Bytes b(20);
	sd::NegotiateRequest r{ min, max, credits, 1364, recv, frag };
	EXPECT_TRUE(sd::encode_negotiate_request(r, sd::MutByteSpan(b.data(), b.size())).ok());
	return b;
}

} // namespace

TEST(NegotiateRefusal, VersionMismatchGetsStatusNotSupported)
{
	auto r = refusal_for(request(0x0200, 0x0300, 255, 8192, 1 << 20), SD_CORE_E_VERSION);
	EXPECT_EQ(r.status, SD_CORE_STATUS_NOT_SUPPORTED);
	EXPECT_EQ(r.negotiated_version, 0);
}

TEST(NegotiateRefusal, ZeroCreditsGetsInvalidParameter)
{
	auto r = refusal_for(request(0x0100, 0x0100, 0, 8192, 1 << 20),
			     SD_CORE_E_ZERO_CREDITS_REQUESTED);
	EXPECT_EQ(r.status, SD_CORE_STATUS_INVALID_PARAMETER);
}

TEST(NegotiateRefusal, SmallFragmentedSizeGetsInvalidParameter)
{
	auto r = refusal_for(request(0x0100, 0x0100, 1, 8192, 131071),
			     SD_CORE_E_FRAGMENTED_SIZE_TOO_SMALL);
	EXPECT_EQ(r.status, SD_CORE_STATUS_INVALID_PARAMETER);
}

TEST(NegotiateRefusal, TruncatedRequestGetsInvalidParameter)
{
	Bytes req = request(0x0100, 0x0100, 1, 8192, 1 << 20);
	req.resize(19);
	auto r = refusal_for(req, SD_CORE_E_TRUNCATED);
	EXPECT_EQ(r.status, SD_CORE_STATUS_INVALID_PARAMETER);
}

TEST(NegotiateRefusal, RefusalTimesOutIfSendNeverCompletes)
{
	Engine s(config(SD_CORE_ROLE_SERVER));
	ASSERT_EQ(s.init(), SD_CORE_OK);
	ASSERT_EQ(s.post(2), SD_CORE_OK);
	ASSERT_EQ(s.recv(request(0x0200, 0x0200, 1, 8192, 1 << 20)), SD_CORE_E_VERSION);
	EXPECT_EQ(s.connected(), SD_CORE_OK);
	ASSERT_EQ(s.pump(), 1u);
	s.now = 1;
	ASSERT_EQ(s.fire(), SD_CORE_OK);
	EXPECT_FALSE(s.disconnected);
	s.now = s.cfg.negotiate_timeout_ms;
	ASSERT_EQ(s.fire(), SD_CORE_OK);
	EXPECT_TRUE(s.disconnected);
	EXPECT_EQ(s.disconnect_reason, SD_CORE_REASON_NEGOTIATE_REJECTED);
}

namespace
{

// A client that sent its request and gets resp back.
Engine client_gets(const Bytes &resp, int expect_rc,
		   sd_core_config cfg = config(SD_CORE_ROLE_CLIENT))
{
	Engine c(cfg);
	EXPECT_EQ(c.init(), SD_CORE_OK);
	EXPECT_EQ(c.post(4), SD_CORE_OK);
	EXPECT_EQ(c.connected(), SD_CORE_OK);
	EXPECT_EQ(c.pump(), 1u);
	EXPECT_EQ(c.recv(resp), expect_rc);
	return c;
}

Bytes response(uint32_t status, uint16_t version, uint16_t granted, uint32_t pref_send)
{
	Bytes b(32);
	sd::NegotiateResponse r{ 0x0100, 0x0100,  version,   255,  granted,
				 status, 1 << 20, pref_send, 1364, 1 << 20 };
	EXPECT_TRUE(sd::encode_negotiate_response(r, sd::MutByteSpan(b.data(), b.size())).ok());
	return b;
}

} // namespace

TEST(NegotiateClient, RefusedByServerStatus)
{
	Engine c =
		client_gets(response(SD_CORE_STATUS_NOT_SUPPORTED, 0, 0, 0), SD_CORE_E_PEER_STATUS);
	EXPECT_TRUE(c.disconnected);
	EXPECT_EQ(c.disconnect_reason, SD_CORE_REASON_NEGOTIATE_REJECTED);
	EXPECT_EQ(c.disconnect_error, SD_CORE_E_PEER_STATUS);
}

TEST(NegotiateClient, RejectsWrongNegotiatedVersion)
{
	Engine c = client_gets(response(0, 0x0200, 1, 1364), SD_CORE_E_VERSION);
	EXPECT_TRUE(c.disconnected);
}

TEST(NegotiateClient, RejectsZeroGrant)
{
	Engine c = client_gets(response(0, 0x0100, 0, 1364), SD_CORE_E_ZERO_CREDITS_GRANTED);
	EXPECT_TRUE(c.disconnected);
}

TEST(NegotiateClient, RejectsPreferredSendAboveOurReceiveSize)
{
	// Our MaxReceiveSize is 1364: one byte more cannot be received.
	Engine c = client_gets(response(0, 0x0100, 1, 1365), SD_CORE_E_SEND_SIZE_EXCEEDS_RECEIVE);
	EXPECT_TRUE(c.disconnected);
	Engine ok = client_gets(response(0, 0x0100, 1, 1364), SD_CORE_OK);
	EXPECT_TRUE(ok.established);
}

// A hostile server advertising MaxFragmentedSize 0xFFFFFFFF: we still send
// no message above SD_CORE_MAX_FRAGMENTED_SEND_SIZE, and a stream prefix of
// 0x80000001 (which the kernel would otherwise try to stage, a 2 GiB
// kvmalloc that WARNs) is EMSGSIZE at once.
TEST(NegotiateClient, PeerMaxFragmentedSizeIsCappedLocally)
{
	Bytes b(32);
	sd::NegotiateResponse r{
		0x0100, 0x0100, 0x0100, 255, 1, 0, 1 << 20, 1364, 1364, 0xffffffffu
	};
	ASSERT_TRUE(sd::encode_negotiate_response(r, sd::MutByteSpan(b.data(), b.size())).ok());
	Engine c = client_gets(b, SD_CORE_OK);
	ASSERT_TRUE(c.established);
	EXPECT_EQ(c.params().max_fragmented_send_size, SD_CORE_MAX_FRAGMENTED_SEND_SIZE);

	sd_core_stream_parser p;
	sd_core_stream_chunk ch;
	sd_core_stream_parser_init(&p, c.params().max_fragmented_send_size);
	const unsigned char prefix[4] = { 0x80, 0x00, 0x00, 0x01 };
	EXPECT_EQ(sd_core_stream_parse(&p, prefix, sizeof(prefix), &ch),
		  SD_CORE_E_MESSAGE_TOO_LONG);
	// One message of exactly the cap is still fine.
	const unsigned char at_cap[4] = { 0x01, 0x00, 0x00, 0x00 };
	sd_core_stream_parser_init(&p, c.params().max_fragmented_send_size);
	ASSERT_EQ(sd_core_stream_parse(&p, at_cap, sizeof(at_cap), &ch), SD_CORE_OK);
	EXPECT_EQ(ch.message_length, SD_CORE_MAX_FRAGMENTED_SEND_SIZE);
}

TEST(NegotiateClient, ResponseBeforeRequestIsAProtocolError)
{
	Engine c(config(SD_CORE_ROLE_CLIENT));
	ASSERT_EQ(c.init(), SD_CORE_OK);
	ASSERT_EQ(c.post(4), SD_CORE_OK);
	EXPECT_EQ(c.recv(response(0, 0x0100, 1, 1364)), SD_CORE_E_BAD_STATE);
	ASSERT_EQ(c.connected(), SD_CORE_OK);
	EXPECT_EQ(c.recv(response(0, 0x0100, 1, 1364)), SD_CORE_E_BAD_STATE);
	EXPECT_TRUE(c.disconnected);
}

TEST(NegotiateClient, TimesOutWithoutResponse)
{
	Engine c(config(SD_CORE_ROLE_CLIENT));
	ASSERT_EQ(c.init(), SD_CORE_OK);
	ASSERT_EQ(c.post(4), SD_CORE_OK);
	c.now = 1000;
	ASSERT_EQ(c.connected(), SD_CORE_OK);
	ASSERT_EQ(c.timer, 1000u + c.cfg.negotiate_timeout_ms);
	c.now = c.timer - 1;
	ASSERT_EQ(c.fire(), SD_CORE_OK); // early: re-armed, still alive
	EXPECT_FALSE(c.disconnected);
	EXPECT_TRUE(c.last.flags & SD_CORE_ACT_ARM_TIMER);
	c.now = c.timer;
	ASSERT_EQ(c.fire(), SD_CORE_OK);
	EXPECT_TRUE(c.disconnected);
	EXPECT_EQ(c.disconnect_reason, SD_CORE_REASON_NEGOTIATE_TIMEOUT);
}

TEST(NegotiateConfig, RejectsEachOutOfRangeSetting)
{
	struct Case {
		const char *what;
		void (*mutate)(sd_core_config &);
	} cases[] = {
		{ "role", [](sd_core_config &c) { c.role = 2; } },
		{ "receive_credit_max 0", [](sd_core_config &c) { c.receive_credit_max = 0; } },
		{ "receive_credit_max 65536",
		  [](sd_core_config &c) { c.receive_credit_max = 65536; } },
		{ "send_credit_target 0", [](sd_core_config &c) { c.send_credit_target = 0; } },
		{ "send_credit_target 65536",
		  [](sd_core_config &c) { c.send_credit_target = 65536; } },
		{ "max_send_size 127", [](sd_core_config &c) { c.max_send_size = 127; } },
		{ "max_receive_size 127", [](sd_core_config &c) { c.max_receive_size = 127; } },
		{ "max_fragmented_size",
		  [](sd_core_config &c) { c.max_fragmented_size = 131071; } },
		{ "keepalive timeout", [](sd_core_config &c) { c.keepalive_timeout_ms = 0; } },
		{ "negotiate timeout", [](sd_core_config &c) { c.negotiate_timeout_ms = 0; } },
	};
	for (const auto &k : cases) {
		sd_core_config cfg = config(SD_CORE_ROLE_CLIENT);
		sd_core_conn conn;
		ASSERT_EQ(sd_core_conn_init(&conn, &cfg), SD_CORE_OK);
		k.mutate(cfg);
		EXPECT_EQ(sd_core_conn_init(&conn, &cfg), SD_CORE_E_CONFIG) << k.what;
	}
	sd_core_config off = config(SD_CORE_ROLE_SERVER);
	off.keepalive_interval_ms = 0;
	off.keepalive_timeout_ms = 0;
	sd_core_conn conn;
	EXPECT_EQ(sd_core_conn_init(&conn, &off), SD_CORE_OK);
}
