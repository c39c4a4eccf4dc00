// SPDX-License-Identifier: GPL-2.0
// Byte-exact codec vectors and one rejection per validation rule.
#include <gtest/gtest.h>

#include "engine.h"

#include <set>
#include <vector>

#include "pdu.h"
#include "smbdirect_core.h"
#include "core_vectors.h"

using namespace sd;

namespace
{

std::vector<u8> encode_req(const NegotiateRequest &r)
{
	std::vector<u8> b(SD_CORE_NEGOTIATE_REQUEST_SIZE);
	auto n = encode_negotiate_request(r, MutByteSpan(b.data(), b.size()));
	EXPECT_TRUE(n.ok());
	return b;
}

template <usize N> std::vector<u8> vec(const unsigned char (&a)[N])
{
	return std::vector<u8>(a, a + N);
}

} // namespace

TEST(Le, StoresLittleEndian)
{
	Le16 a;
	Le32 b;
	Le64 c;
	a.set(0x1234);
	b.set(0x11223344u);
	c.set(0x0102030405060708ull);
	const u8 *pa = reinterpret_cast<const u8 *>(&a);
	const u8 *pb = reinterpret_cast<const u8 *>(&b);
	const u8 *pc = reinterpret_cast<const u8 *>(&c);
	EXPECT_EQ(pa[0], 0x34);
	EXPECT_EQ(pa[1], 0x12);
	EXPECT_EQ(pb[0], 0x44);
	EXPECT_EQ(pb[3], 0x11);
	EXPECT_EQ(pc[0], 0x08);
	EXPECT_EQ(pc[7], 0x01);
	EXPECT_EQ(a.get(), 0x1234);
	EXPECT_EQ(b.get(), 0x11223344u);
	EXPECT_EQ(c.get(), 0x0102030405060708ull);
}

TEST(NegotiateRequestCodec, EncodesWindowsClientDefaults)
{
	NegotiateRequest r{ version_1, version_1, 255, 1364, 8192, 1048576 };
	EXPECT_EQ(encode_req(r), vec(sd_vec_negotiate_request));
}

TEST(NegotiateRequestCodec, DecodesWindowsClientDefaults)
{
	auto r = decode_negotiate_request(
		ByteSpan(sd_vec_negotiate_request, sizeof(sd_vec_negotiate_request)));
	ASSERT_TRUE(r.ok()) << static_cast<int>(r.error());
	EXPECT_EQ(r.value().min_version, 0x0100);
	EXPECT_EQ(r.value().max_version, 0x0100);
	EXPECT_EQ(r.value().credits_requested, 255);
	EXPECT_EQ(r.value().preferred_send_size, 1364u);
	EXPECT_EQ(r.value().max_receive_size, 8192u);
	EXPECT_EQ(r.value().max_fragmented_size, 1048576u);
}

TEST(NegotiateRequestCodec, AcceptsWiderVersionRangeAndMinimumSizes)
{
	NegotiateRequest r{ 0x0001, 0x0300, 1, 0, 128, 131072 };
	auto b = encode_req(r);
	auto d = decode_negotiate_request(ByteSpan(b.data(), b.size()));
	ASSERT_TRUE(d.ok()) << static_cast<int>(d.error());
	EXPECT_EQ(d.value().max_version, 0x0300);
}

TEST(NegotiateRequestCodec, EncodeRejectsShortBuffer)
{
	u8 b[19];
	auto n = encode_negotiate_request(NegotiateRequest{}, MutByteSpan(b, sizeof(b)));
	EXPECT_EQ(n.error(), Errc::buffer_too_small);
}

TEST(NegotiateResponseCodec, EncodesFieldResponse)
{
	NegotiateResponse r{ version_1, version_1, version_1, 255,  15,
			     0,		8388608,   1364,      1364, 1048576 };
	std::vector<u8> b(SD_CORE_NEGOTIATE_RESPONSE_SIZE);
	auto n = encode_negotiate_response(r, MutByteSpan(b.data(), b.size()));
	ASSERT_TRUE(n.ok());
	EXPECT_EQ(n.value(), 32u);
	EXPECT_EQ(b, vec(sd_vec_negotiate_response));
}

TEST(NegotiateResponseCodec, DecodesFieldResponse)
{
	auto r = decode_negotiate_response(
		ByteSpan(sd_vec_negotiate_response, sizeof(sd_vec_negotiate_response)));
	ASSERT_TRUE(r.ok()) << static_cast<int>(r.error());
	EXPECT_EQ(r.value().negotiated_version, 0x0100);
	EXPECT_EQ(r.value().credits_requested, 255);
	EXPECT_EQ(r.value().credits_granted, 15);
	EXPECT_EQ(r.value().status, 0u);
	EXPECT_EQ(r.value().max_read_write_size, 8388608u);
	EXPECT_EQ(r.value().preferred_send_size, 1364u);
	EXPECT_EQ(r.value().max_receive_size, 1364u);
	EXPECT_EQ(r.value().max_fragmented_size, 1048576u);
}

TEST(NegotiateResponseCodec, EncodeRejectsShortBuffer)
{
	u8 b[31];
	auto n = encode_negotiate_response(NegotiateResponse{}, MutByteSpan(b, sizeof(b)));
	EXPECT_EQ(n.error(), Errc::buffer_too_small);
}

TEST(DataTransferCodec, EncodesHeaderWithData)
{
	DataHeader h{ 255, 10, flag_response_requested, 4096, 24, 5 };
	std::vector<u8> b(32, 0);
	auto n = encode_data_header(h, MutByteSpan(b.data(), b.size()));
	ASSERT_TRUE(n.ok());
	EXPECT_EQ(n.value(), 24u);
	__builtin_memcpy(b.data() + 24, "hello", 5);
	EXPECT_EQ(b, vec(sd_vec_data_transfer));
}

TEST(DataTransferCodec, DecodesHeaderWithData)
{
	auto r = decode_data_header(ByteSpan(sd_vec_data_transfer, sizeof(sd_vec_data_transfer)));
	ASSERT_TRUE(r.ok()) << static_cast<int>(r.error());
	EXPECT_EQ(r.value().credits_requested, 255);
	EXPECT_EQ(r.value().credits_granted, 10);
	EXPECT_EQ(r.value().flags, SD_CORE_FLAG_RESPONSE_REQUESTED);
	EXPECT_EQ(r.value().remaining_data_length, 4096u);
	EXPECT_EQ(r.value().data_offset, 24u);
	EXPECT_EQ(r.value().data_length, 5u);
}

TEST(DataTransferCodec, CreditOnlyMessageIs20Bytes)
{
	DataHeader h{ 255, 3, 0, 0, 0, 0 };
	std::vector<u8> b(20);
	auto n = encode_data_header(h, MutByteSpan(b.data(), b.size()));
	ASSERT_TRUE(n.ok());
	EXPECT_EQ(n.value(), 20u);
	EXPECT_EQ(b, vec(sd_vec_credit_only));
	auto d = decode_data_header(ByteSpan(b.data(), b.size()));
	ASSERT_TRUE(d.ok());
	EXPECT_EQ(d.value().credits_granted, 3);
	EXPECT_EQ(d.value().data_length, 0u);
}

TEST(DataTransferCodec, EncodeRejectsShortBuffer)
{
	u8 b[23];
	DataHeader h{ 1, 1, 0, 0, 24, 1 };
	EXPECT_EQ(encode_data_header(h, MutByteSpan(b, sizeof(b))).error(), Errc::buffer_too_small);
	DataHeader e{ 1, 1, 0, 0, 0, 0 };
	EXPECT_EQ(encode_data_header(e, MutByteSpan(b, 19)).error(), Errc::buffer_too_small);
}

TEST(DataTransferCodec, AcceptsBoundaries)
{
	std::vector<u8> b(48, 0);
	// Data ending exactly at the last received byte.
	DataHeader h{ 1, 0, 0, 0, 24, 24 };
	ASSERT_TRUE(encode_data_header(h, MutByteSpan(b.data(), b.size())).ok());
	EXPECT_TRUE(decode_data_header(ByteSpan(b.data(), 48)).ok());
	EXPECT_EQ(decode_data_header(ByteSpan(b.data(), 47)).error(), Errc::data_out_of_bounds);
	// A later, still aligned offset is legal.
	DataHeader h2{ 1, 0, 0, 0, 32, 16 };
	ASSERT_TRUE(encode_data_header(h2, MutByteSpan(b.data(), b.size())).ok());
	auto d = decode_data_header(ByteSpan(b.data(), 48));
	ASSERT_TRUE(d.ok());
	EXPECT_EQ(d.value().data_offset, 32u);
	// Without data the offset is not looked at.
	DataHeader h3{ 1, 0, 0, 0, 13, 0 };
	ASSERT_TRUE(encode_data_header(h3, MutByteSpan(b.data(), b.size())).ok());
	EXPECT_TRUE(decode_data_header(ByteSpan(b.data(), 20)).ok());
}

TEST(BufferDescriptorCodec, RoundTripsVector)
{
	BufferDescriptor d{ 0x1122334455667788ull, 0xaabbccddu, 0x10000u };
	std::vector<u8> b(16);
	auto n = encode_buffer_descriptor(d, MutByteSpan(b.data(), b.size()));
	ASSERT_TRUE(n.ok());
	EXPECT_EQ(b, vec(sd_vec_buffer_descriptor));
	auto r = decode_buffer_descriptor(ByteSpan(b.data(), b.size()));
	ASSERT_TRUE(r.ok());
	EXPECT_EQ(r.value().offset, d.offset);
	EXPECT_EQ(r.value().token, d.token);
	EXPECT_EQ(r.value().length, d.length);
	EXPECT_EQ(decode_buffer_descriptor(ByteSpan(b.data(), 15)).error(), Errc::truncated);
	EXPECT_EQ(encode_buffer_descriptor(d, MutByteSpan(b.data(), 15)).error(),
		  Errc::buffer_too_small);
}

TEST(ByteSpanBounds, RejectsOverflowingRanges)
{
	u8 b[8] = {};
	ByteSpan s(b, sizeof(b));
	EXPECT_TRUE(s.has(0, 8));
	EXPECT_TRUE(s.has(8, 0));
	EXPECT_FALSE(s.has(9, 0));
	EXPECT_FALSE(s.has(1, 8));
	EXPECT_FALSE(s.has(4, ~usize(0)));
	EXPECT_EQ(s.sub(4, ~usize(0)).size(), 0u);
	EXPECT_EQ(s.sub(2, 3).data(), b + 2);
	MutByteSpan m(b, sizeof(b));
	EXPECT_EQ(m.copy_in(6, s.sub(0, 3)), Errc::buffer_too_small);
	EXPECT_EQ(m.sub(9, 0).size(), 0u);
	EXPECT_EQ(ByteSpan(nullptr, 5).size(), 0u);
}

class InvalidVector : public ::testing::TestWithParam<sd_vec_case> {};

TEST_P(InvalidVector, RejectedWithItsOwnError)
{
	const sd_vec_case &v = GetParam();
	ByteSpan in(v.bytes, v.len);
	Errc got = Errc::ok;
	switch (v.kind) {
	case SD_VEC_KIND_REQUEST:
		got = decode_negotiate_request(in).error();
		break;
	case SD_VEC_KIND_RESPONSE:
		got = decode_negotiate_response(in).error();
		break;
	case SD_VEC_KIND_DATA:
		got = decode_data_header(in).error();
		break;
	}
	EXPECT_EQ(static_cast<int>(got), v.expect) << v.name;
}

INSTANTIATE_TEST_SUITE_P(Vectors, InvalidVector, ::testing::ValuesIn(sd_vec_invalid),
			 [](const ::testing::TestParamInfo<sd_vec_case> &i) {
				 return std::string(i.param.name);
			 });

// Each decoder rule must have its own vector, or a removed rule could hide.
TEST(InvalidVectors, CoverEveryDecoderRule)
{
	std::set<int> seen;
	for (const auto &v : sd_vec_invalid)
		seen.insert(v.expect);
	for (int e : { SD_CORE_E_TRUNCATED, SD_CORE_E_VERSION, SD_CORE_E_ZERO_CREDITS_REQUESTED,
		       SD_CORE_E_ZERO_CREDITS_GRANTED, SD_CORE_E_FRAGMENTED_SIZE_TOO_SMALL,
		       SD_CORE_E_RECEIVE_SIZE_TOO_SMALL, SD_CORE_E_PEER_STATUS,
		       SD_CORE_E_DATA_OFFSET_ALIGNMENT, SD_CORE_E_DATA_OFFSET_RANGE,
		       SD_CORE_E_DATA_OUT_OF_BOUNDS, SD_CORE_E_EMPTY_FRAGMENT })
		EXPECT_TRUE(seen.count(e)) << "no vector for errc " << e;
}

// The valid vectors must stay valid when shortened by nothing but padding.
TEST(InvalidVectors, ValidVectorsDecodeClean)
{
	EXPECT_TRUE(decode_negotiate_request(ByteSpan(sd_vec_negotiate_request, 20)).ok());
	EXPECT_TRUE(decode_negotiate_response(ByteSpan(sd_vec_negotiate_response, 32)).ok());
	EXPECT_TRUE(decode_data_header(ByteSpan(sd_vec_data_transfer, 29)).ok());
	EXPECT_EQ(decode_data_header(ByteSpan(sd_vec_data_transfer, 28)).error(),
		  Errc::data_out_of_bounds);
	EXPECT_TRUE(decode_data_header(ByteSpan(sd_vec_credit_only, 20)).ok());
}
