// SPDX-License-Identifier: GPL-2.0
// Ownership across a failed deregistration: the caller keeps a
// registration until the kernel has taken it. The kernel is played by
// FakeDeregister (fake_kernel.h): it fails DEREGISTER as the kernel fails
// before taking the registration (ENOMEM, EFAULT, EINTR, ...), then
// succeeds.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <smbdirect/smbdirect.h>
#include <unistd.h>

#include "fake_kernel.h"

namespace
{

class Deregister : public ::testing::Test {
    protected:
	void SetUp() override
	{
		ASSERT_EQ(pipe2(fds_, O_CLOEXEC), 0);
		reg_.id = 0x1234;
		reg_.desc_count = 2;
		reg_.flags = SMBDIRECT_ACCESS_PEER_WRITE;
		reg_.desc = static_cast<smbdirect_buffer_descriptor_v1 *>(
			calloc(2, sizeof(*reg_.desc)));
		reg_.desc[1].token = 77;
		desc_ = reg_.desc;
	}
	void TearDown() override
	{
		free(reg_.desc);
		close(fds_[0]);
		close(fds_[1]);
	}
	int fd() const
	{
		return fds_[0];
	}
	// *reg as it was registered.
	void expect_intact() const
	{
		EXPECT_EQ(reg_.id, 0x1234u);
		EXPECT_EQ(reg_.desc, desc_);
		EXPECT_EQ(reg_.desc_count, 2u);
		EXPECT_EQ(reg_.flags, uint32_t(SMBDIRECT_ACCESS_PEER_WRITE));
		if (reg_.desc == desc_) {
			EXPECT_EQ(reg_.desc[1].token, 77u);
		}
	}
	void expect_gone() const
	{
		EXPECT_EQ(reg_.id, 0u);
		EXPECT_EQ(reg_.desc, nullptr); // freed: ASan reports a leak otherwise
		EXPECT_EQ(reg_.desc_count, 0u);
	}

	int fds_[2] = { -1, -1 };
	smbdirect_rdma_v1_registration reg_ = {};
	smbdirect_buffer_descriptor_v1 *desc_ = nullptr;
};

TEST_F(Deregister, FailedBeforeTheKernelTookItKeepsTheRegistration)
{
	sdtest::FakeDeregister k(fd());
	k.errors = { ENOMEM };
	k.state = SMBDIRECT_REG_STATE_REMOTE_INVALIDATED;
	EXPECT_EQ(smbdirect_rdma_v1_deregister(fd(), &reg_), -ENOMEM);
	expect_intact();
	// The retry names the same id, and succeeds.
	EXPECT_EQ(smbdirect_rdma_v1_deregister(fd(), &reg_), SMBDIRECT_REG_STATE_REMOTE_INVALIDATED);
	expect_gone();
	ASSERT_EQ(k.calls.size(), 2u);
	EXPECT_EQ(k.calls[0].id, 0x1234u);
	EXPECT_EQ(k.calls[1].id, 0x1234u);
	EXPECT_EQ(k.calls[1].flags, 0u);
}

TEST_F(Deregister, EveryErrorButENOENTLeavesItToRetry)
{
	sdtest::FakeDeregister k(fd());
	k.errors = { EFAULT, EINTR, EINVAL, ENOTCONN, ENOTTY, EIO };
	for (int e : k.errors) {
		EXPECT_EQ(smbdirect_rdma_v1_deregister(fd(), &reg_), -e);
		expect_intact();
	}
	EXPECT_EQ(smbdirect_rdma_v1_deregister(fd(), &reg_), 0);
	expect_gone();
}

// ENOENT: the kernel has no registration by that id (deregistered
// already, or released with the RDMA device): nothing left to retry.
TEST_F(Deregister, ENOENTMeansGone)
{
	sdtest::FakeDeregister k(fd());
	k.errors = { ENOENT };
	EXPECT_EQ(smbdirect_rdma_v1_deregister(fd(), &reg_), -ENOENT);
	expect_gone();
	k.errors = { ENOENT, ENOENT };
	reg_.id = 5;
	reg_.desc = static_cast<smbdirect_buffer_descriptor_v1 *>(calloc(1, sizeof(*reg_.desc)));
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(fd(), &reg_, 9), -ENOENT);
	expect_gone();
}

// A wrong descriptor: the registration lives on, on its own socket.
TEST_F(Deregister, BadFdLeavesItAlone)
{
	EXPECT_EQ(smbdirect_rdma_v1_deregister(-1, &reg_), -EBADF);
	expect_intact();
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(-1, &reg_, 1), -EBADF);
	expect_intact();
}

TEST_F(Deregister, AsyncFailedBeforeTheKernelTookItKeepsTheRegistration)
{
	sdtest::FakeDeregister k(fd());
	k.errors = { ENOMEM }; // the kernel could not allocate the completion
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(fd(), &reg_, 0xc0ffee), -ENOMEM);
	expect_intact();
	EXPECT_EQ(smbdirect_rdma_v1_deregister_async(fd(), &reg_, 0xc0ffee), 0);
	expect_gone();
	ASSERT_EQ(k.calls.size(), 2u);
	EXPECT_EQ(k.calls[1].id, 0x1234u);
	EXPECT_EQ(k.calls[1].flags, uint32_t(SMBDIRECT_DEREG_ASYNC));
	EXPECT_EQ(k.calls[1].cookie, 0xc0ffeeu);
}

} // namespace
