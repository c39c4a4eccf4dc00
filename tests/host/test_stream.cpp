// SPDX-License-Identifier: GPL-2.0
// SOCK_STREAM framing: 4-byte big-endian prefixes found in a byte stream
// split at every possible point.
#include <gtest/gtest.h>

#include "engine.h"

using namespace sdtest;

namespace
{

Bytes framed(const std::vector<Bytes> &msgs)
{
	Bytes s;
	for (const auto &m : msgs) {
		unsigned char p[4];
		sd_core_stream_prefix(static_cast<unsigned>(m.size()), p);
		s.insert(s.end(), p, p + 4);
		s.insert(s.end(), m.begin(), m.end());
	}
	return s;
}

// Parses stream fed in pieces of at most step bytes; returns the messages.
std::vector<Bytes> parse(const Bytes &stream, size_t step, int *err)
{
	sd_core_stream_parser p;
	sd_core_stream_parser_init(&p, 1 << 20);
	std::vector<Bytes> out;
	Bytes cur;
	size_t pos = 0;
	*err = 0;
	while (pos < stream.size()) {
		size_t n = std::min(step, stream.size() - pos);
		size_t used = 0;
		while (used < n) {
			sd_core_stream_chunk ch;
			int rc = sd_core_stream_parse(&p, stream.data() + pos + used,
						      static_cast<unsigned>(n - used), &ch);
			if (rc) {
				*err = rc;
				return out;
			}
			EXPECT_GT(ch.consumed, 0u);
			if (ch.message_start)
				cur.clear();
			const uint8_t *base = stream.data() + pos + used;
			cur.insert(cur.end(), base + ch.payload_offset,
				   base + ch.payload_offset + ch.payload_length);
			if (ch.message_end) {
				out.push_back(cur);
				cur.clear();
			}
			used += ch.consumed;
		}
		pos += n;
	}
	return out;
}

} // namespace

TEST(Stream, PrefixIsBigEndian)
{
	unsigned char p[4];
	sd_core_stream_prefix(0x00012345, p);
	EXPECT_EQ(p[0], 0x00);
	EXPECT_EQ(p[1], 0x01);
	EXPECT_EQ(p[2], 0x23);
	EXPECT_EQ(p[3], 0x45);
}

TEST(Stream, SplitsAtEveryPosition)
{
	std::vector<Bytes> msgs = { pattern(1, 1), pattern(5, 2), pattern(300, 3), pattern(2, 4) };
	Bytes s = framed(msgs);
	for (size_t step = 1; step <= s.size(); step++) {
		int err;
		EXPECT_EQ(parse(s, step, &err), msgs) << "step " << step;
		EXPECT_EQ(err, 0);
	}
}

TEST(Stream, ZeroLengthMessageRejected)
{
	Bytes s = { 0, 0, 0, 0, 1 };
	int err;
	parse(s, 100, &err);
	EXPECT_EQ(err, SD_CORE_E_EMPTY_MESSAGE);
}

TEST(Stream, OverlongMessageRejected)
{
	sd_core_stream_parser p;
	sd_core_stream_parser_init(&p, 1000);
	const unsigned char s[] = { 0, 0, 0x03, 0xe9 };
	sd_core_stream_chunk ch;
	EXPECT_EQ(sd_core_stream_parse(&p, s, 4, &ch), SD_CORE_E_MESSAGE_TOO_LONG);
	const unsigned char ok[] = { 0, 0, 0x03, 0xe8 };
	sd_core_stream_parser_init(&p, 1000);
	EXPECT_EQ(sd_core_stream_parse(&p, ok, 4, &ch), SD_CORE_OK);
	EXPECT_EQ(ch.message_length, 1000u);
	EXPECT_EQ(ch.message_end, 0u);
}

// The stream view end to end: user bytes -> parser -> engine -> peer ->
// prefix -> identical byte stream.
TEST(Stream, EndToEndThroughEngines)
{
	sd_core_config cc = config(SD_CORE_ROLE_CLIENT), sc = config(SD_CORE_ROLE_SERVER);
	Engine c(cc), s(sc);
	ASSERT_TRUE(negotiate(c, s));
	std::vector<Bytes> msgs = { pattern(3000, 1), pattern(1, 2), pattern(1340, 3),
				    pattern(77, 4) };
	Bytes in = framed(msgs);
	sd_core_stream_parser p;
	sd_core_stream_parser_init(&p, c.params().max_fragmented_send_size);
	size_t pos = 0;
	Bytes cur;
	while (pos < in.size()) {
		sd_core_stream_chunk ch;
		// Feed in 700-byte writes, as a user might.
		unsigned n = static_cast<unsigned>(std::min<size_t>(700, in.size() - pos));
		ASSERT_EQ(sd_core_stream_parse(&p, in.data() + pos, n, &ch), SD_CORE_OK);
		if (ch.message_start) {
			ASSERT_EQ(c.send(ch.message_length), SD_CORE_OK);
			cur.clear();
		}
		cur.insert(cur.end(), in.begin() + static_cast<long>(pos + ch.payload_offset),
			   in.begin() +
				   static_cast<long>(pos + ch.payload_offset + ch.payload_length));
		pos += ch.consumed;
		// Send what we have of the message so far.
		while (c.produce(cur) == SD_CORE_OK) {
		}
		while (!c.out.empty())
			ASSERT_EQ(transfer(c, s), SD_CORE_OK);
		s.post(s.reposts_owed + s.held);
		s.reposts_owed = s.held = 0;
		s.pump();
		while (!s.out.empty())
			ASSERT_EQ(transfer(s, c), SD_CORE_OK);
		c.post(c.reposts_owed);
		c.reposts_owed = 0;
		while (c.produce(cur) == SD_CORE_OK) {
		}
		while (!c.out.empty())
			ASSERT_EQ(transfer(c, s), SD_CORE_OK);
	}
	EXPECT_EQ(framed(s.messages), in);
}
