// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "wire.hpp"

using namespace sd::tool::wire;

TEST(ToolWire, TypesAreFourLittleEndianLetters)
{
	uint8_t h[header_size];
	put_header(h, Type::Hello);
	EXPECT_EQ(std::string(reinterpret_cast<char *>(h), 4), "HELO");
	put_header(h, Type::End);
	EXPECT_EQ(std::string(reinterpret_cast<char *>(h), 4), "END_");
	EXPECT_EQ(type_name(static_cast<uint32_t>(Type::Written)), "WRTN");
	EXPECT_EQ(type_name(0x01020304), "0x01020304");
}

TEST(ToolWire, FieldsAreLittleEndian)
{
	Writer w(Type::Buffer);
	w.u8(0xab).u16(0x1234).u32(0xdeadbeef).u64(0x0102030405060708ULL).text("hi");
	const std::vector<uint8_t> want = { 'B',  'U',	'F',  'R',  0xab, 0x34, 0x12,
					    0xef, 0xbe, 0xad, 0xde, 8,	  7,	6,
					    5,	  4,	3,    2,    1,	  'h',	'i' };
	EXPECT_EQ(w.bytes(), want);
}

TEST(ToolWire, RoundTrip)
{
	smbdirect_buffer_descriptor_v1 d[2] = { { 0x1000, 0x11, 4096 }, { 0x2000, 0x22, 8192 } };
	Writer w(Type::Buffer);
	w.u32(3).u32(12288).u32(2).descriptors(d);
	Reader r(w.bytes());
	EXPECT_TRUE(r.is(Type::Buffer));
	EXPECT_EQ(r.u32(), 3u);
	EXPECT_EQ(r.u32(), 12288u);
	uint32_t n = r.u32();
	auto got = r.descriptors(n);
	ASSERT_TRUE(r.ok_and_done());
	ASSERT_EQ(got.size(), 2u);
	EXPECT_EQ(got[1].offset, 0x2000u);
	EXPECT_EQ(got[1].token, 0x22u);
	EXPECT_EQ(got[1].length, 8192u);
}

TEST(ToolWire, ShortMessagesFailForGood)
{
	Writer w(Type::End);
	w.u32(7);
	Reader r(w.bytes());
	EXPECT_TRUE(r.is(Type::End));
	EXPECT_EQ(r.u64(), 0u); /* 4 bytes where 8 are needed */
	EXPECT_FALSE(r.ok());
	EXPECT_EQ(r.u8(), 0u); /* stays failed although a byte would be left */
	EXPECT_FALSE(r.ok_and_done());

	const uint8_t tiny[] = { 'E', 'N' };
	Reader t(tiny);
	EXPECT_EQ(t.type(), 0u);
	EXPECT_FALSE(t.ok());
}

TEST(ToolWire, LeftoverBytesAreNotDone)
{
	Writer w(Type::Grant);
	w.u32(1).u8(0);
	Reader r(w.bytes());
	EXPECT_EQ(r.u32(), 1u);
	EXPECT_TRUE(r.ok());
	EXPECT_FALSE(r.ok_and_done());
}

TEST(ToolWire, DescriptorCountBeyondTheMessageOrTheLimit)
{
	Writer w(Type::PerfReady);
	w.u32(5);
	Reader r(w.bytes());
	auto d = r.descriptors(r.u32());
	EXPECT_TRUE(d.empty());
	EXPECT_FALSE(r.ok());

	Writer big(Type::PerfReady);
	Reader r2(big.bytes());
	EXPECT_TRUE(r2.descriptors(SMBDIRECT_DESC_MAX + 1).empty());
	EXPECT_FALSE(r2.ok());
}

TEST(ToolWire, ErrorTextIsTheRest)
{
	Writer w(Type::Error);
	w.text("receiver: stdout: Broken pipe");
	Reader r(w.bytes());
	EXPECT_TRUE(r.is(Type::Error));
	EXPECT_EQ(r.rest_text(), "receiver: stdout: Broken pipe");
	EXPECT_TRUE(r.ok_and_done());
}

TEST(ToolWire, GrantBookOnlyTakesWhatWasGranted)
{
	GrantBook b(2, 4096);
	EXPECT_EQ(b.granted_count(), 2u);
	EXPECT_FALSE(b.written(2, 1));	  /* no such buffer */
	EXPECT_FALSE(b.written(0, 4097)); /* longer than the buffer */
	EXPECT_FALSE(b.written(0, 0));	  /* nothing written */
	EXPECT_TRUE(b.written(0, 4096));
	EXPECT_FALSE(b.written(0, 1)); /* not granted any more */
	EXPECT_EQ(b.granted_count(), 1u);
	EXPECT_FALSE(b.grant(1)); /* still granted */
	EXPECT_TRUE(b.grant(0));
	EXPECT_FALSE(b.grant(0));
	EXPECT_FALSE(b.grant(9));
	EXPECT_TRUE(b.written(0, 1));
}
