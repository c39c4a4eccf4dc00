// SPDX-License-Identifier: GPL-2.0
// The send-with-invalidate control message, byte for byte.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <smbdirect/smbdirect.h>
#include <sys/socket.h>

namespace
{

struct alignas(struct cmsghdr) Control {
	unsigned char bytes[64];
};

TEST(CmsgInvalidate, SpaceConstantIsCmsgSpace)
{
	EXPECT_EQ(SMBDIRECT_CMSG_INVALIDATE_SPACE, CMSG_SPACE(sizeof(uint32_t)));
}

TEST(CmsgInvalidate, ExactBytes)
{
	Control c;
	memset(c.bytes, 0xee, sizeof(c.bytes));
	struct msghdr msg = {};
	ASSERT_EQ(smbdirect_cmsg_invalidate(&msg, c.bytes, sizeof(c.bytes), 0x11223344u), 0);
	EXPECT_EQ(msg.msg_control, c.bytes);
	// struct cmsghdr: size_t len, int level, int type, then the data: 24
	// bytes in all on 64-bit ABIs, 16 on 32-bit ones (i386).
	constexpr size_t word = sizeof(size_t);
	constexpr size_t space = 2 * word + 8;
	static_assert(space == SMBDIRECT_CMSG_INVALIDATE_SPACE);
	EXPECT_EQ(msg.msg_controllen, space);

	unsigned char want[24] = {};
	size_t len = word + 12; // CMSG_LEN(4)
	int level = 0x5344, type = 1;
	uint32_t token = 0x11223344u;
	memcpy(want + 0, &len, word);
	memcpy(want + word, &level, 4);
	memcpy(want + word + 4, &type, 4);
	memcpy(want + word + 8, &token, 4);
	EXPECT_EQ(memcmp(c.bytes, want, space), 0);
	// Nothing beyond the control message was touched.
	for (size_t i = space; i < sizeof(c.bytes); i++)
		EXPECT_EQ(c.bytes[i], 0xee) << i;
}

TEST(CmsgInvalidate, ParsesBackWithTheCmsgMacros)
{
	Control c;
	struct msghdr msg = {};
	ASSERT_EQ(smbdirect_cmsg_invalidate(&msg, c.bytes, SMBDIRECT_CMSG_INVALIDATE_SPACE, 7), 0);
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(h->cmsg_level, SOL_SMBDIRECT);
	EXPECT_EQ(h->cmsg_type, SMBDIRECT_CMSG_SEND_INVALIDATE);
	EXPECT_EQ(h->cmsg_len, CMSG_LEN(sizeof(uint32_t)));
	uint32_t token;
	memcpy(&token, CMSG_DATA(h), sizeof(token));
	EXPECT_EQ(token, 7u);
	EXPECT_EQ(CMSG_NXTHDR(&msg, h), nullptr);
}

TEST(CmsgInvalidate, BadArguments)
{
	Control c;
	struct msghdr msg = {};
	EXPECT_EQ(smbdirect_cmsg_invalidate(nullptr, c.bytes, sizeof(c.bytes), 1), -EINVAL);
	EXPECT_EQ(smbdirect_cmsg_invalidate(&msg, nullptr, sizeof(c.bytes), 1), -EINVAL);
	EXPECT_EQ(smbdirect_cmsg_invalidate(&msg, c.bytes + 1, sizeof(c.bytes) - 1, 1), -EINVAL);
	EXPECT_EQ(smbdirect_cmsg_invalidate(&msg, c.bytes, SMBDIRECT_CMSG_INVALIDATE_SPACE - 1, 1),
		  -ENOSPC);
	EXPECT_EQ(msg.msg_control, nullptr);
	EXPECT_EQ(msg.msg_controllen, 0u);
}

TEST(CmsgInvalidate, KeepsTheRestOfTheMessage)
{
	Control c;
	char data[3];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg = {};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_flags = 0x40;
	ASSERT_EQ(smbdirect_cmsg_invalidate(&msg, c.bytes, sizeof(c.bytes), 1), 0);
	EXPECT_EQ(msg.msg_iov, &iov);
	EXPECT_EQ(msg.msg_iovlen, 1u);
	EXPECT_EQ(msg.msg_flags, 0x40);
}

} // namespace
