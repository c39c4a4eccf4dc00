// SPDX-License-Identifier: GPL-2.0
// Asynchronous RDMA in the C API without the module: the prepared
// transfers and their control messages byte for byte, the kernel's
// argument checks made before any system call (where the fd is a pipe, a
// call that reached the kernel would say ENOTSOCK), the error-queue read
// against a kernel played by the test (rdma_async.h takes the system
// calls as parameters), and parsing what such a read returns.
#include <gtest/gtest.h>

#include "rdma_async.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fcntl.h>
#include <smbdirect/smbdirect.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace
{

struct alignas(struct cmsghdr) Control {
	unsigned char bytes[8192];
};

const struct iovec iov2[2] = { { reinterpret_cast<void *>(0x1000), 4096 },
			       { reinterpret_cast<void *>(0x3000), 100 } };
const struct smbdirect_buffer_descriptor_v1 desc3[3] = {};

// struct cmsghdr: size_t len, int level, int type, then the data at hdr
// (16 bytes on 64-bit ABIs, 12 on 32-bit ones); one SMBDIRECT_CMSG_RDMA
// is CMSG_LEN(64) = CMSG_SPACE(64) = one bytes (80, or 76 on i386).
constexpr size_t word = sizeof(size_t);
constexpr size_t hdr = word + 8;
constexpr size_t one = hdr + sizeof(struct smbdirect_rdma_args);
static_assert(hdr == CMSG_LEN(0) && one == CMSG_SPACE(sizeof(struct smbdirect_rdma_args)));

template <class T> T at(const void *p, size_t offset)
{
	T v;
	memcpy(&v, static_cast<const unsigned char *>(p) + offset, sizeof(v));
	return v;
}

// --- the uapi structs this library puts into control messages ------------------

TEST(RdmaAsyncLayout, StructsAreFixed)
{
	// One layout for 64- and 32-bit processes: what the kernel reads.
	EXPECT_EQ(sizeof(struct smbdirect_rdma_args), 64u);
	EXPECT_EQ(offsetof(struct smbdirect_rdma_args, op), 8u);
	EXPECT_EQ(offsetof(struct smbdirect_rdma_args, desc), 16u);
	EXPECT_EQ(offsetof(struct smbdirect_rdma_args, iov), 32u);
	EXPECT_EQ(offsetof(struct smbdirect_rdma_args, fd), 40u);
	EXPECT_EQ(offsetof(struct smbdirect_rdma_args, offset), 48u);
	EXPECT_EQ(offsetof(struct smbdirect_rdma_args, length), 56u);
	EXPECT_EQ(sizeof(struct smbdirect_rdma_completion), 24u);
	EXPECT_EQ(offsetof(struct smbdirect_rdma_completion, status), 8u);
	EXPECT_EQ(offsetof(struct smbdirect_rdma_completion, bytes), 16u);
}

// --- prep ------------------------------------------------------------------------

TEST(RdmaAsyncPrep, WriteFillsEveryByte)
{
	struct smbdirect_rdma_args a;
	memset(&a, 0xa5, sizeof(a)); // whatever was there is overwritten
	smbdirect_rdma_prep_write(&a, 0x1122334455667788ull, iov2, 2, desc3, 3);
	EXPECT_EQ(at<uint64_t>(&a, 0), 0x1122334455667788ull);			 // cookie
	EXPECT_EQ(at<uint32_t>(&a, 8), uint32_t(SMBDIRECT_RDMA_WRITE));		 // op
	EXPECT_EQ(at<uint32_t>(&a, 12), 0u);					 // flags
	EXPECT_EQ(at<uint64_t>(&a, 16), reinterpret_cast<uintptr_t>(desc3));	 // desc
	EXPECT_EQ(at<uint32_t>(&a, 24), 3u);					 // desc_count
	EXPECT_EQ(at<uint32_t>(&a, 28), 2u);					 // iov_count
	EXPECT_EQ(at<uint64_t>(&a, 32), reinterpret_cast<uintptr_t>(iov2));	 // iov
	EXPECT_EQ(at<int32_t>(&a, 40), -1);					 // fd
	EXPECT_EQ(at<uint32_t>(&a, 44), 0u);					 // reserved
	EXPECT_EQ(at<uint64_t>(&a, 48), 0u);					 // offset
	EXPECT_EQ(at<uint64_t>(&a, 56), 0u);					 // length
}

TEST(RdmaAsyncPrep, ReadDiffersInOpOnly)
{
	struct smbdirect_rdma_args w, r;
	memset(&r, 0x5a, sizeof(r));
	smbdirect_rdma_prep_write(&w, 7, iov2, 1, desc3, 1);
	smbdirect_rdma_prep_read(&r, 7, iov2, 1, desc3, 1);
	EXPECT_EQ(r.op, uint32_t(SMBDIRECT_RDMA_READ));
	r.op = w.op;
	EXPECT_EQ(memcmp(&r, &w, sizeof(r)), 0);
}

TEST(RdmaAsyncPrep, WriteFileNamesTheFileRange)
{
	struct smbdirect_rdma_args a;
	memset(&a, 0xff, sizeof(a));
	smbdirect_rdma_prep_write_file(&a, 9, 42, 1ull << 40, 65536, desc3, 2);
	EXPECT_EQ(a.cookie, 9u);
	EXPECT_EQ(a.op, uint32_t(SMBDIRECT_RDMA_WRITE));
	EXPECT_EQ(a.flags, uint32_t(SMBDIRECT_RDMA_F_FILE));
	EXPECT_EQ(a.desc, reinterpret_cast<uintptr_t>(desc3));
	EXPECT_EQ(a.desc_count, 2u);
	EXPECT_EQ(a.iov, 0u);
	EXPECT_EQ(a.iov_count, 0u);
	EXPECT_EQ(a.fd, 42);
	EXPECT_EQ(a.reserved, 0u);
	EXPECT_EQ(a.offset, 1ull << 40);
	EXPECT_EQ(a.length, 65536u);
}

// --- prep_msghdr: the control messages ------------------------------------------

TEST(RdmaAsyncMsghdr, ControlSpaceIsCmsgSpacePerTransfer)
{
	EXPECT_EQ(smbdirect_rdma_control_space(0), 0u);
	EXPECT_EQ(smbdirect_rdma_control_space(1), CMSG_SPACE(sizeof(struct smbdirect_rdma_args)));
	EXPECT_EQ(smbdirect_rdma_control_space(1), one); // 80 on x86-64: 16-byte header + 64
	EXPECT_EQ(smbdirect_rdma_control_space(SMBDIRECT_RDMA_CMSG_MAX), one * 64);
	EXPECT_EQ(smbdirect_rdma_control_space(SMBDIRECT_RDMA_CMSG_MAX + 1), 0u);
	EXPECT_EQ(smbdirect_rdma_control_space(~0u), 0u);
}

TEST(RdmaAsyncMsghdr, ExactBytes)
{
	struct smbdirect_rdma_args a[2];
	smbdirect_rdma_prep_write(&a[0], 1, iov2, 2, desc3, 3);
	smbdirect_rdma_prep_read(&a[1], 2, iov2 + 1, 1, desc3, 1);
	Control c;
	memset(c.bytes, 0xee, sizeof(c.bytes));
	struct iovec data = { c.bytes, 1 };
	struct msghdr msg = {};
	msg.msg_iov = &data;
	msg.msg_iovlen = 1;
	msg.msg_flags = 0x40;
	ASSERT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes, 2 * one, a, 2), 0);
	EXPECT_EQ(msg.msg_control, c.bytes);
	EXPECT_EQ(msg.msg_controllen, 2 * one);
	EXPECT_EQ(msg.msg_iov, &data); // the message is the caller's
	EXPECT_EQ(msg.msg_iovlen, 1u);
	EXPECT_EQ(msg.msg_flags, 0x40);
	for (size_t i = 0; i < 2; i++) {
		const unsigned char *h = c.bytes + one * i;
		// CMSG_LEN(64): exactly, as the kernel wants
		EXPECT_EQ(at<size_t>(h, 0), one) << i;
		EXPECT_EQ(at<int>(h, word), 0x5344) << i;
		EXPECT_EQ(at<int>(h, word + 4), SMBDIRECT_CMSG_RDMA) << i;
		EXPECT_EQ(memcmp(h + hdr, &a[i], 64), 0) << i;
	}
	for (size_t i = 2 * one; i < sizeof(c.bytes); i++)
		ASSERT_EQ(c.bytes[i], 0xee) << "byte " << i << " written";
}

TEST(RdmaAsyncMsghdr, ParsesBackWithTheCmsgMacros)
{
	struct smbdirect_rdma_args a[SMBDIRECT_RDMA_CMSG_MAX];
	for (unsigned int i = 0; i < SMBDIRECT_RDMA_CMSG_MAX; i++)
		smbdirect_rdma_prep_write_file(&a[i], 1000 + i, 3, i * 4096ull, 4096, desc3, 1);
	Control c;
	struct msghdr msg = {};
	size_t space = smbdirect_rdma_control_space(SMBDIRECT_RDMA_CMSG_MAX);
	ASSERT_LE(space, sizeof(c.bytes));
	ASSERT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes, space, a, SMBDIRECT_RDMA_CMSG_MAX), 0);
	unsigned int n = 0;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&msg); h; h = CMSG_NXTHDR(&msg, h), n++) {
		ASSERT_LT(n, unsigned(SMBDIRECT_RDMA_CMSG_MAX));
		EXPECT_EQ(h->cmsg_level, SOL_SMBDIRECT);
		EXPECT_EQ(h->cmsg_type, SMBDIRECT_CMSG_RDMA);
		struct smbdirect_rdma_args got;
		memcpy(&got, CMSG_DATA(h), sizeof(got));
		EXPECT_EQ(got.cookie, 1000u + n);
		EXPECT_EQ(got.offset, n * 4096ull);
	}
	EXPECT_EQ(n, unsigned(SMBDIRECT_RDMA_CMSG_MAX));
}

TEST(RdmaAsyncMsghdr, BadArgumentsLeaveTheMessageAlone)
{
	struct smbdirect_rdma_args a;
	smbdirect_rdma_prep_write(&a, 1, iov2, 1, desc3, 1);
	Control c;
	struct msghdr msg = {};
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(nullptr, c.bytes, one, &a, 1), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(&msg, nullptr, one, &a, 1), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes, one, &a, 0), -EINVAL);
	// Misaligned for struct cmsghdr (8 on 64-bit ABIs, 4 on i386).
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes + alignof(struct cmsghdr) / 2, one, &a, 1),
		  -EINVAL);
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes, sizeof(c.bytes), &a,
					     SMBDIRECT_RDMA_CMSG_MAX + 1),
		  -EINVAL);
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes, one, nullptr, 1), -EFAULT);
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes, one - 1, &a, 1), -ENOSPC);
	a.op = 3;
	EXPECT_EQ(smbdirect_rdma_prep_msghdr(&msg, c.bytes, one, &a, 1), -EINVAL);
	EXPECT_EQ(msg.msg_control, nullptr);
	EXPECT_EQ(msg.msg_controllen, 0u);
}

// --- the kernel's checks of a transfer, in its order -----------------------------

struct Bad {
	const char *what;
	void (*spoil)(struct smbdirect_rdma_args &);
	int error;
};

const Bad bad_transfers[] = {
	{ "op 0", [](auto &a) { a.op = 0; }, -EINVAL },
	{ "op 3", [](auto &a) { a.op = 3; }, -EINVAL },
	{ "unknown flag", [](auto &a) { a.flags |= 0x2; }, -EINVAL },
	{ "reserved", [](auto &a) { a.reserved = 1; }, -EINVAL },
	{ "no descriptors", [](auto &a) { a.desc_count = 0; }, -EINVAL },
	{ "no segments", [](auto &a) { a.iov_count = 0; }, -EINVAL },
	{ "length without a file", [](auto &a) { a.length = 1; }, -EINVAL },
	{ "offset without a file", [](auto &a) { a.offset = 1; }, -EINVAL },
	{ "file flag with segments", [](auto &a) { a.flags = SMBDIRECT_RDMA_F_FILE; }, -EINVAL },
	{ "too many segments", [](auto &a) { a.iov_count = SMBDIRECT_IOV_MAX + 1; }, -EMSGSIZE },
	{ "too many descriptors", [](auto &a) { a.desc_count = SMBDIRECT_DESC_MAX + 1; },
	  -EMSGSIZE },
	{ "NULL segments", [](auto &a) { a.iov = 0; }, -EFAULT },
	{ "NULL descriptors", [](auto &a) { a.desc = 0; }, -EFAULT },
	// The order: EINVAL before EMSGSIZE before EFAULT.
	{ "op 0 and too many segments",
	  [](auto &a) {
		  a.op = 0;
		  a.iov_count = 5000;
	  },
	  -EINVAL },
	{ "too many descriptors and NULL",
	  [](auto &a) {
		  a.desc_count = 5000;
		  a.desc = 0;
	  },
	  -EMSGSIZE },
};

TEST(RdmaAsyncChecks, EveryMistakeOfAMemoryTransfer)
{
	struct smbdirect_rdma_args good;
	smbdirect_rdma_prep_write(&good, 1, iov2, 2, desc3, 3);
	EXPECT_EQ(sd::detail::check_transfer(good), 0);
	smbdirect_rdma_prep_read(&good, 1, iov2, SMBDIRECT_IOV_MAX, desc3, SMBDIRECT_DESC_MAX);
	EXPECT_EQ(sd::detail::check_transfer(good), 0);
	for (const Bad &b : bad_transfers) {
		struct smbdirect_rdma_args a = good;
		b.spoil(a);
		EXPECT_EQ(sd::detail::check_transfer(a), b.error) << b.what;
	}
}

TEST(RdmaAsyncChecks, EveryMistakeOfAFileTransfer)
{
	struct smbdirect_rdma_args good;
	smbdirect_rdma_prep_write_file(&good, 1, 5, 0, 1, desc3, 1);
	EXPECT_EQ(sd::detail::check_transfer(good), 0);
	// The fd is the kernel's to check (EBADF), as is the range (EINVAL).
	struct smbdirect_rdma_args a = good;
	a.fd = -1;
	a.offset = ~0ull;
	EXPECT_EQ(sd::detail::check_transfer(a), 0);
	const Bad bad[] = {
		{ "a READ", [](auto &x) { x.op = SMBDIRECT_RDMA_READ; }, -EINVAL },
		{ "segments too", [](auto &x) { x.iov_count = 1; }, -EINVAL },
		{ "a segment pointer", [](auto &x) { x.iov = 0x1000; }, -EINVAL },
		{ "no length", [](auto &x) { x.length = 0; }, -EINVAL },
		{ "too many descriptors", [](auto &x) { x.desc_count = SMBDIRECT_DESC_MAX + 1; },
		  -EMSGSIZE },
		{ "NULL descriptors", [](auto &x) { x.desc = 0; }, -EFAULT },
	};
	for (const Bad &b : bad) {
		a = good;
		b.spoil(a);
		EXPECT_EQ(sd::detail::check_transfer(a), b.error) << b.what;
	}
}

// --- submit: checked before the system call, then the kernel's answer -------------

class SubmitOnPipe : public ::testing::Test {
    protected:
	void SetUp() override
	{
		ASSERT_EQ(pipe2(fds_, O_CLOEXEC), 0);
		smbdirect_rdma_prep_write(&good_, 1, iov2, 1, desc3, 1);
	}
	void TearDown() override
	{
		close(fds_[0]);
		close(fds_[1]);
	}
	int fd() const
	{
		return fds_[1];
	}
	int fds_[2] = { -1, -1 };
	struct smbdirect_rdma_args good_;
};

TEST_F(SubmitOnPipe, SubmitChecksBeforeTheKernel)
{
	struct smbdirect_rdma_args many[SMBDIRECT_RDMA_CMSG_MAX + 1];
	for (auto &a : many)
		a = good_;
	EXPECT_EQ(smbdirect_rdma_submit(-1, &good_, 1, 0), -EBADF);
	EXPECT_EQ(smbdirect_rdma_submit(fd(), &good_, 0, 0), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_submit(fd(), many, SMBDIRECT_RDMA_CMSG_MAX + 1, 0), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_submit(fd(), nullptr, 1, 0), -EFAULT);
	// The second transfer is wrong: none goes.
	many[1].desc_count = SMBDIRECT_DESC_MAX + 1;
	EXPECT_EQ(smbdirect_rdma_submit(fd(), many, 2, 0), -EMSGSIZE);
	many[1] = good_;
	// Valid arguments reach the kernel, which knows a pipe is no socket.
	EXPECT_EQ(smbdirect_rdma_submit(fd(), many, 1, MSG_DONTWAIT), -ENOTSOCK);
	EXPECT_EQ(smbdirect_rdma_submit(fd(), many, SMBDIRECT_RDMA_CMSG_MAX, 0), -ENOTSOCK);
}

TEST_F(SubmitOnPipe, SubmitMsgChecksBeforeTheKernel)
{
	char b[4];
	struct iovec msg = { b, sizeof(b) };
	uint32_t token = 5;
	EXPECT_EQ(smbdirect_rdma_submit_msg(-1, &good_, 1, &msg, 1, &token, 0), -EBADF);
	EXPECT_EQ(smbdirect_rdma_submit_msg(fd(), &good_, 1, &msg, -1, &token, 0), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_submit_msg(fd(), &good_, SMBDIRECT_RDMA_CMSG_MAX + 1, &msg, 1,
					    nullptr, 0),
		  -EINVAL);
	EXPECT_EQ(smbdirect_rdma_submit_msg(fd(), nullptr, 1, &msg, 1, nullptr, 0), -EFAULT);
	EXPECT_EQ(smbdirect_rdma_submit_msg(fd(), &good_, 1, nullptr, 1, nullptr, 0), -EFAULT);
	good_.reserved = 1;
	EXPECT_EQ(smbdirect_rdma_submit_msg(fd(), &good_, 1, &msg, 1, &token, 0), -EINVAL);
	good_.reserved = 0;
	EXPECT_EQ(smbdirect_rdma_submit_msg(fd(), &good_, 1, &msg, 1, &token, 0), -ENOTSOCK);
	// No transfers: a message (with invalidation) alone is fine.
	EXPECT_EQ(smbdirect_rdma_submit_msg(fd(), nullptr, 0, &msg, 1, &token, 0), -ENOTSOCK);
}

// AF_UNIX ignores control messages of other levels: the message itself
// arrives, which shows what the call sends besides them.
TEST(RdmaAsyncSubmit, MessageBytesGoOutAfterTheTransfers)
{
	int p[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p), 0);
	struct smbdirect_rdma_args a[3];
	for (int i = 0; i < 3; i++)
		smbdirect_rdma_prep_write(&a[i], i, iov2, 1, desc3, 1);
	char hdr[] = "head", body[] = "body";
	struct iovec msg[2] = { { hdr, 4 }, { body, 4 } };
	uint32_t token = 77;
	EXPECT_EQ(smbdirect_rdma_submit_msg(p[0], a, 3, msg, 2, &token, MSG_NOSIGNAL), 8);
	char got[16] = {};
	EXPECT_EQ(recv(p[1], got, sizeof(got), MSG_DONTWAIT), 8);
	EXPECT_STREQ(got, "headbody");
	EXPECT_EQ(smbdirect_rdma_submit(p[0], a, 3, MSG_DONTWAIT), 0);
	close(p[0]);
	close(p[1]);
}

// --- the control messages sendmsg gets, from a kernel the test plays -------------

struct Sent {
	std::vector<unsigned char> control;
	std::vector<struct iovec> iov;
	int flags = -1;
	int calls = 0;
};

ssize_t capture(Sent &s, struct msghdr *m, int flags)
{
	s.calls++;
	s.flags = flags;
	auto *c = static_cast<unsigned char *>(m->msg_control);
	s.control.assign(c, c + m->msg_controllen);
	s.iov.assign(m->msg_iov, m->msg_iov + m->msg_iovlen);
	return 8;
}

TEST(RdmaAsyncSubmit, TransfersThenTheToken)
{
	struct smbdirect_rdma_args a[2];
	smbdirect_rdma_prep_write(&a[0], 1, iov2, 2, desc3, 3);
	smbdirect_rdma_prep_write_file(&a[1], 2, 4, 0, 100, desc3, 1);
	uint32_t token = 0xabcdef01;
	Sent s;
	ssize_t n = sd::detail::send_transfers(
		[&](struct msghdr *m, int f) { return capture(s, m, f); }, a, 2, iov2, 2, &token,
		MSG_DONTWAIT);
	EXPECT_EQ(n, 8);
	EXPECT_EQ(s.calls, 1);
	EXPECT_EQ(s.flags, MSG_DONTWAIT);
	ASSERT_EQ(s.iov.size(), 2u);
	EXPECT_EQ(s.iov[1].iov_base, iov2[1].iov_base);
	ASSERT_EQ(s.control.size(), 2 * one + SMBDIRECT_CMSG_INVALIDATE_SPACE);
	for (size_t i = 0; i < 2; i++) {
		const unsigned char *h = s.control.data() + one * i;
		EXPECT_EQ(at<size_t>(h, 0), one);
		EXPECT_EQ(at<int>(h, word), SMBDIRECT_SOL);
		EXPECT_EQ(at<int>(h, word + 4), SMBDIRECT_CMSG_RDMA);
		EXPECT_EQ(memcmp(h + hdr, &a[i], 64), 0) << i;
	}
	const unsigned char *t = s.control.data() + 2 * one;
	EXPECT_EQ(at<size_t>(t, 0), hdr + 4); // CMSG_LEN(4)
	EXPECT_EQ(at<int>(t, word), SMBDIRECT_SOL);
	EXPECT_EQ(at<int>(t, word + 4), SMBDIRECT_CMSG_SEND_INVALIDATE);
	EXPECT_EQ(at<uint32_t>(t, hdr), 0xabcdef01u);
	if (word == 8) {
		EXPECT_EQ(at<uint32_t>(t, hdr + 4), 0u); // padding zeroed
	}
}

TEST(RdmaAsyncSubmit, NothingButTheMessage)
{
	char b[3];
	struct iovec msg = { b, 3 };
	Sent s;
	s.control.assign(1, 0xff);
	EXPECT_EQ(sd::detail::send_transfers(
			  [&](struct msghdr *m, int f) {
				  EXPECT_EQ(m->msg_control, nullptr);
				  return capture(s, m, f);
			  },
			  nullptr, 0, &msg, 1, nullptr, 0),
		  8);
	EXPECT_TRUE(s.control.empty());
	EXPECT_EQ(s.iov.size(), 1u);
}

// --- reaping: what the kernel returns, parsed ------------------------------------

// The kernel's answer: one SMBDIRECT_CMSG_RDMA_COMPLETION with n
// completions, as put_cmsg() writes it, into msg's control area.
ssize_t kernel_answer(struct msghdr *m, const std::vector<smbdirect_rdma_completion> &c)
{
	size_t bytes = c.size() * sizeof(c[0]);
	if (m->msg_controllen < CMSG_LEN(bytes))
		return -EINVAL;
	struct cmsghdr *h = CMSG_FIRSTHDR(m);
	h->cmsg_level = SMBDIRECT_SOL; // the kernel's level, whatever SOL_SMBDIRECT is
	h->cmsg_type = SMBDIRECT_CMSG_RDMA_COMPLETION;
	h->cmsg_len = CMSG_LEN(bytes);
	memcpy(CMSG_DATA(h), c.data(), bytes);
	m->msg_controllen = CMSG_SPACE(bytes);
	return 0;
}

std::vector<smbdirect_rdma_completion> completions(unsigned int n)
{
	std::vector<smbdirect_rdma_completion> c(n);
	for (unsigned int i = 0; i < n; i++) {
		c[i].cookie = 0x100000000ull + i;
		c[i].status = i % 3 ? 0 : -ECONNRESET;
		c[i].bytes = 4096ull * i;
	}
	return c;
}

TEST(RdmaAsyncReap, AsksForAtMostMaxAndNeverBlocks)
{
	auto want = completions(5);
	smbdirect_rdma_completion got[8];
	int flags = 0;
	size_t room = 0;
	int n = sd::detail::reap_completions(
		[&](struct msghdr *m, int f) -> ssize_t {
			flags = f;
			room = m->msg_controllen;
			// The kernel's own sizing: (controllen - 16) / 24 completions,
			// with its own 16-byte header also for a 32-bit process.
			size_t fit = (m->msg_controllen - 16) / sizeof(want[0]);
			std::vector<smbdirect_rdma_completion> some(want.begin(),
								    want.begin() + std::min<size_t>(fit, 5));
			return kernel_answer(m, some);
		},
		got, 3);
	EXPECT_EQ(flags, MSG_ERRQUEUE | MSG_DONTWAIT);
	// A 32-bit process asks for the 4 bytes its shorter header leaves out.
	EXPECT_EQ(room, CMSG_SPACE(3 * sizeof(got[0])) + (16 - hdr));
	ASSERT_EQ(n, 3);
	EXPECT_EQ(memcmp(got, want.data(), 3 * sizeof(got[0])), 0);
}

TEST(RdmaAsyncReap, NoneWaitingIsZeroOtherErrorsPassOn)
{
	smbdirect_rdma_completion got[1];
	EXPECT_EQ(sd::detail::reap_completions([](struct msghdr *, int) { return -EAGAIN; }, got, 1),
		  0);
	EXPECT_EQ(sd::detail::reap_completions([](struct msghdr *, int) { return -EBADF; }, got, 1),
		  -EBADF);
	// A success without completions is not an SMB-Direct socket's answer.
	EXPECT_EQ(sd::detail::reap_completions(
			  [](struct msghdr *m, int) -> ssize_t {
				  m->msg_controllen = 0;
				  return 0;
			  },
			  got, 1),
		  -EBADMSG);
}

TEST(RdmaAsyncReap, CompletionSpaceFitsTheKernelsSizing)
{
	// The kernel returns (controllen - its 16-byte header) / 24: exactly max
	// (its own header, also for a 32-bit process, whose header is 12).
	for (unsigned int max : { 1u, 2u, 7u, 64u, 256u }) {
		size_t space = smbdirect_rdma_completion_space(max);
		EXPECT_GE(space, CMSG_SPACE(max * sizeof(smbdirect_rdma_completion))) << max;
		EXPECT_EQ((space - 16) / sizeof(smbdirect_rdma_completion), max) << max;
	}
	EXPECT_EQ(smbdirect_rdma_completion_space(1000), smbdirect_rdma_completion_space(256));
}

TEST(RdmaAsyncReap, CallChecks)
{
	smbdirect_rdma_completion c[1];
	EXPECT_EQ(smbdirect_rdma_reap(-1, c, 1), -EBADF);
	EXPECT_EQ(smbdirect_rdma_reap(0, nullptr, 1), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_reap(0, c, 0), -EINVAL);
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	EXPECT_EQ(smbdirect_rdma_reap(p[0], c, 1), -ENOTSOCK);
	close(p[0]);
	close(p[1]);
}

TEST(RdmaAsyncReap, PlainSocketHasNothingWaiting)
{
	int p[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p), 0);
	smbdirect_rdma_completion c[4];
	// recvmsg(MSG_ERRQUEUE | MSG_DONTWAIT) with nothing queued: EAGAIN.
	EXPECT_EQ(smbdirect_rdma_reap(p[0], c, 4), 0);
	// With data queued, AF_UNIX reads it despite MSG_ERRQUEUE: no completions.
	ASSERT_EQ(send(p[1], "x", 1, 0), 1);
	EXPECT_EQ(smbdirect_rdma_reap(p[0], c, 4), -EBADMSG);
	close(p[0]);
	close(p[1]);
}

// --- smbdirect_rdma_completions(): parsing a recvmsg's answer --------------------

struct Answer {
	Control c;
	struct msghdr msg = {};
	explicit Answer(const std::vector<smbdirect_rdma_completion> &v)
	{
		memset(c.bytes, 0xcc, sizeof(c.bytes));
		msg.msg_control = c.bytes;
		msg.msg_controllen = sizeof(c.bytes);
		EXPECT_EQ(kernel_answer(&msg, v), 0);
	}
};

TEST(RdmaAsyncCompletions, CopiesEveryByte)
{
	auto want = completions(4);
	Answer a(want);
	smbdirect_rdma_completion got[5];
	memset(got, 0x77, sizeof(got));
	ASSERT_EQ(smbdirect_rdma_completions(&a.msg, got, 5), 4);
	EXPECT_EQ(memcmp(got, want.data(), 4 * sizeof(got[0])), 0);
	EXPECT_EQ(got[3].cookie, 0x100000003ull);
	EXPECT_EQ(got[3].status, -ECONNRESET);
	EXPECT_EQ(got[3].bytes, 3 * 4096u);
	unsigned char rest[sizeof(got[0])];
	memset(rest, 0x77, sizeof(rest));
	EXPECT_EQ(memcmp(&got[4], rest, sizeof(rest)), 0); // untouched
	// Exactly as many as there are fit too.
	EXPECT_EQ(smbdirect_rdma_completions(&a.msg, got, 4), 4);
}

TEST(RdmaAsyncCompletions, TooManyCopiesNothing)
{
	Answer a(completions(3));
	smbdirect_rdma_completion got[2];
	memset(got, 0x77, sizeof(got));
	EXPECT_EQ(smbdirect_rdma_completions(&a.msg, got, 2), -ENOSPC);
	for (size_t i = 0; i < sizeof(got); i++)
		ASSERT_EQ(reinterpret_cast<unsigned char *>(got)[i], 0x77) << i;
}

TEST(RdmaAsyncCompletions, OtherControlMessagesAreSkipped)
{
	Control c;
	struct msghdr msg = {};
	msg.msg_control = c.bytes;
	msg.msg_controllen = CMSG_SPACE(sizeof(int)) + CMSG_SPACE(2 * 24);
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	h = CMSG_NXTHDR(&msg, h);
	ASSERT_NE(h, nullptr);
	auto want = completions(2);
	h->cmsg_level = SOL_SMBDIRECT;
	h->cmsg_type = SMBDIRECT_CMSG_RDMA_COMPLETION;
	h->cmsg_len = CMSG_LEN(48);
	memcpy(CMSG_DATA(h), want.data(), 48);
	smbdirect_rdma_completion got[2];
	ASSERT_EQ(smbdirect_rdma_completions(&msg, got, 2), 2);
	EXPECT_EQ(memcmp(got, want.data(), 48), 0);
	// The same type at another level is not ours.
	h->cmsg_level = SOL_SOCKET;
	EXPECT_EQ(smbdirect_rdma_completions(&msg, got, 2), 0);
}

TEST(RdmaAsyncCompletions, DamagedAnswers)
{
	Answer cut(completions(2));
	smbdirect_rdma_completion got[4];
	// The control message claims more than the area holds (MSG_CTRUNC).
	cut.msg.msg_controllen = CMSG_LEN(24);
	EXPECT_EQ(smbdirect_rdma_completions(&cut.msg, got, 4), -EBADMSG);
	// Not whole completions.
	Answer odd(completions(1));
	CMSG_FIRSTHDR(&odd.msg)->cmsg_len = CMSG_LEN(23);
	EXPECT_EQ(smbdirect_rdma_completions(&odd.msg, got, 4), -EBADMSG);
	// A header shorter than a header.
	CMSG_FIRSTHDR(&odd.msg)->cmsg_len = 4;
	EXPECT_EQ(smbdirect_rdma_completions(&odd.msg, got, 4), -EBADMSG);
}

TEST(RdmaAsyncCompletions, EmptyAndBadArguments)
{
	smbdirect_rdma_completion got[1];
	struct msghdr msg = {};
	EXPECT_EQ(smbdirect_rdma_completions(&msg, got, 1), 0); // no control area
	Control c;
	msg.msg_control = c.bytes;
	msg.msg_controllen = 0; // the kernel wrote nothing
	EXPECT_EQ(smbdirect_rdma_completions(&msg, got, 1), 0);
	EXPECT_EQ(smbdirect_rdma_completions(nullptr, got, 1), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_completions(&msg, nullptr, 1), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_completions(&msg, nullptr, 0), 0);
	Answer one(completions(1));
	EXPECT_EQ(smbdirect_rdma_completions(&one.msg, nullptr, 0), -ENOSPC);
}

// A real kernel's control message (SCM_RIGHTS over AF_UNIX) is walked and skipped.
TEST(RdmaAsyncCompletions, RealRecvmsgWithoutCompletions)
{
	int p[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, p), 0);
	Control c;
	struct msghdr msg = {};
	char byte = 'x';
	struct iovec iov = { &byte, 1 };
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = c.bytes;
	msg.msg_controllen = CMSG_SPACE(sizeof(int));
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &p[0], sizeof(int));
	ASSERT_EQ(sendmsg(p[0], &msg, 0), 1);
	Control r;
	struct msghdr in = {};
	in.msg_iov = &iov;
	in.msg_iovlen = 1;
	in.msg_control = r.bytes;
	in.msg_controllen = sizeof(r.bytes);
	ASSERT_EQ(recvmsg(p[1], &in, MSG_CMSG_CLOEXEC), 1);
	ASSERT_GT(in.msg_controllen, 0u);
	int passed;
	memcpy(&passed, CMSG_DATA(CMSG_FIRSTHDR(&in)), sizeof(int));
	smbdirect_rdma_completion got[1];
	EXPECT_EQ(smbdirect_rdma_completions(&in, got, 1), 0);
	close(passed);
	close(p[0]);
	close(p[1]);
}

// --- asynchronous deregistration -------------------------------------------------

smbdirect_rdma_v1_registration heap_registration(uint64_t id)
{
	smbdirect_rdma_v1_registration reg = {};
	reg.id = id;
	reg.desc_count = 1;
	reg.flags = SMBDIRECT_ACCESS_PEER_WRITE;
	reg.desc = static_cast<smbdirect_buffer_descriptor_v1 *>(calloc(1, sizeof(*reg.desc)));
	return reg;
}

TEST(RdmaAsyncDeregister, AsksForAsyncWithTheCookie)
{
	auto reg = heap_registration(0x42);
	struct smbdirect_deregister seen = {};
	int r = sd::detail::deregister_async(
		[&](struct smbdirect_deregister &d) {
			seen = d;
			d.state = SMBDIRECT_REG_STATE_REMOTE_INVALIDATED;
			return 0;
		},
		&reg, 0xfeedface12345678ull);
	EXPECT_EQ(r, SMBDIRECT_REG_STATE_REMOTE_INVALIDATED);
	EXPECT_EQ(seen.size, 32u); // covers cookie
	EXPECT_EQ(seen.flags, uint32_t(SMBDIRECT_DEREG_ASYNC));
	EXPECT_EQ(seen.id, 0x42u);
	EXPECT_EQ(seen.cookie, 0xfeedface12345678ull);
	EXPECT_EQ(reg.id, 0u); // freed (ASan would report a leak otherwise) and zeroed
	EXPECT_EQ(reg.desc, nullptr);
	EXPECT_EQ(reg.desc_count, 0u);
}

// As the synchronous call: an error before the kernel took the
// registration leaves *reg to the caller, to retry.
TEST(RdmaAsyncDeregister, FailureKeepsItAsTheSynchronousCall)
{
	auto reg = heap_registration(7);
	EXPECT_EQ(sd::detail::deregister_async([](struct smbdirect_deregister &) { return -EINVAL; },
					       &reg, 1),
		  -EINVAL);
	EXPECT_EQ(reg.id, 7u);
	EXPECT_NE(reg.desc, nullptr);
	// From the kernel too: a pipe has no such ioctl.
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(p[0], &reg, 1), -ENOTTY);
	EXPECT_EQ(reg.id, 7u);
	EXPECT_NE(reg.desc, nullptr);
	EXPECT_EQ(reg.desc_count, 1u);
	// ENOENT: the kernel has none by that id; freed (or ASan reports a leak).
	EXPECT_EQ(sd::detail::deregister_async([](struct smbdirect_deregister &) { return -ENOENT; },
					       &reg, 1),
		  -ENOENT);
	EXPECT_EQ(reg.id, 0u);
	EXPECT_EQ(reg.desc, nullptr);
	close(p[0]);
	close(p[1]);
}

TEST(RdmaAsyncDeregister, CallChecks)
{
	auto reg = heap_registration(7);
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(0, nullptr, 1), -EINVAL);
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(-1, &reg, 1), -EBADF);
	EXPECT_EQ(reg.id, 7u); // still the caller's, for its own socket
	free(reg.desc);
	// A zeroed registration fails without a system call (a pipe would say ENOTTY).
	smbdirect_rdma_v1_registration none = {};
	none.desc = static_cast<smbdirect_buffer_descriptor_v1 *>(calloc(1, sizeof(*none.desc)));
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(p[0], &none, 1), -ENOENT);
	EXPECT_EQ(none.desc, nullptr);
	close(p[0]);
	close(p[1]);
}

} // namespace

// smbdirect_rdma_completion_fd(): the option's errors pass through, and
// nothing is left open when it fails.
TEST(RdmaAsyncCompletionFd, ErrorsPassThrough)
{
	EXPECT_EQ(smbdirect_rdma_completion_fd(-1), -EBADF);
	int sv[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	int before = dup(0);
	ASSERT_GE(before, 0);
	close(before);
	// SOL_SMBDIRECT is not AF_UNIX's level.
	int r = smbdirect_rdma_completion_fd(sv[0]);
	EXPECT_TRUE(r == -ENOPROTOOPT || r == -EOPNOTSUPP) << r;
	int after = dup(0);
	EXPECT_EQ(after, before) << "a descriptor leaked";
	close(after);
	close(sv[0]);
	close(sv[1]);
}
