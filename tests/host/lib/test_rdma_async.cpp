// SPDX-License-Identifier: GPL-2.0
// Asynchronous RDMA in libsmbdirect without the module: the arguments
// the prep calls build, the control messages for sendmsg/io_uring, the
// parsing of completions, and the argument checks before any system call.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <smbdirect/smbdirect.h>
#include <sys/socket.h>
#include <unistd.h>

namespace
{

struct alignas(struct cmsghdr) Control {
	unsigned char bytes[CMSG_SPACE(sizeof(struct smbdirect_rdma_args)) * 4];
};

const struct smbdirect_buffer_descriptor_v1 kDesc[2] = {
	{ 0x1000, 7, 100 },
	{ 0x2000, 8, 200 },
};

TEST(RdmaAsync, PrepWriteAndRead)
{
	struct iovec iov[2] = {};
	struct smbdirect_rdma_args a;
	memset(&a, 0xee, sizeof(a));
	smbdirect_rdma_prep_write(&a, 42, iov, 2, kDesc, 2);
	EXPECT_EQ(a.cookie, 42u);
	EXPECT_EQ(a.op, (uint32_t)SMBDIRECT_RDMA_WRITE);
	EXPECT_EQ(a.flags, 0u);
	EXPECT_EQ(a.iov, (uint64_t)(uintptr_t)iov);
	EXPECT_EQ(a.iov_count, 2u);
	EXPECT_EQ(a.desc, (uint64_t)(uintptr_t)kDesc);
	EXPECT_EQ(a.desc_count, 2u);
	EXPECT_EQ(a.reserved, 0u);
	EXPECT_EQ(a.offset, 0u);
	EXPECT_EQ(a.length, 0u);
	smbdirect_rdma_prep_read(&a, 43, iov, 1, kDesc, 1);
	EXPECT_EQ(a.op, (uint32_t)SMBDIRECT_RDMA_READ);
	EXPECT_EQ(a.cookie, 43u);
	EXPECT_EQ(a.iov_count, 1u);
}

TEST(RdmaAsync, PrepWriteFile)
{
	struct smbdirect_rdma_args a;
	memset(&a, 0xee, sizeof(a));
	smbdirect_rdma_prep_write_file(&a, 7, 5, 4096, 300000, kDesc, 2);
	EXPECT_EQ(a.op, (uint32_t)SMBDIRECT_RDMA_WRITE);
	EXPECT_EQ(a.flags, (uint32_t)SMBDIRECT_RDMA_F_FILE);
	EXPECT_EQ(a.fd, 5);
	EXPECT_EQ(a.offset, 4096u);
	EXPECT_EQ(a.length, 300000u);
	EXPECT_EQ(a.iov, 0u);
	EXPECT_EQ(a.iov_count, 0u);
	EXPECT_EQ(a.reserved, 0u);
}

TEST(RdmaAsync, MsghdrCarriesEachTransferInOrder)
{
	struct smbdirect_rdma_args a[3];
	for (int i = 0; i < 3; i++)
		smbdirect_rdma_prep_write(&a[i], 100 + i, nullptr, 0, kDesc, 1);
	Control c;
	struct msghdr msg = {};
	EXPECT_EQ(smbdirect_rdma_control_space(3), 3 * CMSG_SPACE(sizeof(a[0])));
	ASSERT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes, sizeof(c.bytes), a, 3), 0);
	EXPECT_EQ(msg.msg_controllen, smbdirect_rdma_control_space(3));
	int i = 0;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&msg); h; h = CMSG_NXTHDR(&msg, h), i++) {
		EXPECT_EQ(h->cmsg_level, SOL_SMBDIRECT);
		EXPECT_EQ(h->cmsg_type, SMBDIRECT_CMSG_RDMA);
		EXPECT_EQ(h->cmsg_len, CMSG_LEN(sizeof(a[0])));
		struct smbdirect_rdma_args got;
		memcpy(&got, CMSG_DATA(h), sizeof(got));
		EXPECT_EQ(got.cookie, 100u + i);
	}
	EXPECT_EQ(i, 3);
}

TEST(RdmaAsync, MsghdrRefusals)
{
	struct smbdirect_rdma_args a[2];
	smbdirect_rdma_prep_write(&a[0], 1, nullptr, 0, kDesc, 1);
	smbdirect_rdma_prep_write(&a[1], 2, nullptr, 0, kDesc, 1);
	Control c;
	struct msghdr msg = {};
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes, smbdirect_rdma_control_space(2) - 1, a, 2),
		  -ENOSPC);
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes + 1, sizeof(c.bytes) - 1, a, 2), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(nullptr, c.bytes, sizeof(c.bytes), a, 2), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes, sizeof(c.bytes), a,
					     SMBDIRECT_RDMA_CMSG_MAX + 1), -EINVAL);
}

// What recvmsg(MSG_ERRQUEUE) returns, parsed back.
TEST(RdmaAsync, CompletionsParsed)
{
	struct smbdirect_rdma_completion in[3] = { { 1, 0, 0, 4096 }, { 2, -EACCES, 0, 0 },
						    { 3, 0, 0, 1 } };
	alignas(struct cmsghdr) unsigned char buf[CMSG_SPACE(sizeof(in))] = {};
	struct msghdr msg = {};
	msg.msg_control = buf;
	msg.msg_controllen = sizeof(buf);
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	h->cmsg_level = SOL_SMBDIRECT;
	h->cmsg_type = SMBDIRECT_CMSG_RDMA_COMPLETION;
	h->cmsg_len = CMSG_LEN(sizeof(in));
	memcpy(CMSG_DATA(h), in, sizeof(in));
	struct smbdirect_rdma_completion out[3] = {};
	ASSERT_EQ(smbdirect_rdma_completions(&msg, out, 3), 3);
	EXPECT_EQ(memcmp(in, out, sizeof(in)), 0);
	EXPECT_EQ(smbdirect_rdma_completions(&msg, out, 2), -ENOSPC);
	h->cmsg_len = CMSG_LEN(sizeof(in) - 1);
	EXPECT_EQ(smbdirect_rdma_completions(&msg, out, 3), -EBADMSG);
	// Another level's control message is not ours.
	h->cmsg_len = CMSG_LEN(sizeof(in));
	h->cmsg_level = SOL_SOCKET;
	EXPECT_EQ(smbdirect_rdma_completions(&msg, out, 3), 0);
}

TEST(RdmaAsync, ArgumentChecks)
{
	struct smbdirect_rdma_args a;
	struct smbdirect_rdma_completion c[2];
	smbdirect_rdma_prep_write(&a, 1, nullptr, 0, kDesc, 1);
	EXPECT_EQ(smbdirect_rdma_submit(-1, &a, 1, 0), -EBADF);
	EXPECT_EQ(smbdirect_rdma_submit(0, &a, 0, 0), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_submit(0, nullptr, 1, 0), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_submit(0, &a, SMBDIRECT_RDMA_CMSG_MAX + 1, 0), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_submit_msg(-1, &a, 1, nullptr, 0, nullptr, 0), -EBADF);
	EXPECT_EQ(smbdirect_rdma_submit_msg(0, &a, 1, nullptr, 1, nullptr, 0), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_reap(-1, c, 2), -EBADF);
	EXPECT_EQ(smbdirect_rdma_reap(0, nullptr, 2), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_reap(0, c, 0), -EINVAL);
}

// A socket with nothing on its error queue: 0 reaped, and the call does
// not block (the socket is blocking). A closed fd: EBADF.
TEST(RdmaAsync, OnAPlainSocket)
{
	int sv[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	struct smbdirect_rdma_completion c[4];
	EXPECT_EQ(smbdirect_rdma_reap(sv[0], c, 4), 0);
	close(sv[0]);
	close(sv[1]);
	int fd = ::dup(0);
	ASSERT_GE(fd, 0);
	close(fd);
	EXPECT_EQ(smbdirect_rdma_reap(fd, c, 4), -EBADF);
}

TEST(RdmaAsync, DeregisterAsyncFreesAndZeroes)
{
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(3, nullptr, 1), -EINVAL);
	struct smbdirect_rdma_v1_registration reg = {};
	reg.id = 9;
	reg.desc = static_cast<struct smbdirect_buffer_descriptor_v1 *>(
		malloc(sizeof(struct smbdirect_buffer_descriptor_v1)));
	reg.desc_count = 1;
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(-1, &reg, 1), -EBADF);
	EXPECT_EQ(reg.id, 0u);
	EXPECT_EQ(reg.desc, nullptr);
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(0, &reg, 1), -ENOENT);
}

} // namespace
