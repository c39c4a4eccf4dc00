// SPDX-License-Identifier: GPL-2.0
// smbdirect_rdma_v1_register()'s descriptor growth, against a fake kernel.
#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

#include "rdma_register.h"

namespace
{

using sd::detail::register_growing;

// A kernel that needs `needed` descriptors and says so on ENOSPC.
struct FakeKernel {
	uint32_t needed = 1;
	uint64_t id = 42;
	int fail_with = 0;	      // after the room is right: this error
	std::vector<uint32_t> rooms;  // desc_count of every call
	std::vector<uint32_t> answer; // desc_count to claim on ENOSPC, per call (overrides)

	int operator()(struct smbdirect_register &r)
	{
		EXPECT_EQ(r.size, sizeof(r));
		rooms.push_back(r.desc_count);
		size_t call = rooms.size() - 1;
		if (call < answer.size()) {
			r.desc_count = answer[call];
			return -ENOSPC;
		}
		if (r.desc_count < needed) {
			r.desc_count = needed;
			return -ENOSPC;
		}
		if (fail_with)
			return fail_with;
		auto *d = reinterpret_cast<struct smbdirect_buffer_descriptor_v1 *>(
			static_cast<uintptr_t>(r.desc));
		for (uint32_t i = 0; i < needed; i++) {
			d[i].offset = 0x1000 * (i + 1);
			d[i].token = 0x100 + i;
			d[i].length = 4096;
		}
		r.desc_count = needed;
		r.id = id;
		return 0;
	}
};

struct Registered {
	struct smbdirect_rdma_v1_registration reg = {};
	~Registered()
	{
		free(reg.desc);
	}
};

const struct iovec one_iov[1] = {};
constexpr uint32_t rw = SMBDIRECT_ACCESS_PEER_READ | SMBDIRECT_ACCESS_PEER_WRITE;

TEST(RegisterGrowth, SmallRegistrationFitsTheFirstTime)
{
	FakeKernel k;
	k.needed = 2;
	Registered r;
	ASSERT_EQ(register_growing(k, one_iov, 1, rw, &r.reg), 0);
	ASSERT_EQ(k.rooms.size(), 1u);
	EXPECT_EQ(k.rooms[0], sd::detail::register_min_descriptors);
	EXPECT_EQ(r.reg.id, 42u);
	EXPECT_EQ(r.reg.desc_count, 2u);
	EXPECT_EQ(r.reg.flags, rw);
	EXPECT_EQ(r.reg.desc[1].token, 0x101u);
}

TEST(RegisterGrowth, TooSmallGrowsToWhatTheKernelAsks)
{
	FakeKernel k;
	k.needed = 37;
	Registered r;
	ASSERT_EQ(register_growing(k, one_iov, 1, rw, &r.reg), 0);
	ASSERT_EQ(k.rooms.size(), 2u);
	EXPECT_EQ(k.rooms[1], 37u);
	EXPECT_EQ(r.reg.desc_count, 37u);
	// Every descriptor the kernel wrote is in the array the caller got.
	EXPECT_EQ(r.reg.desc[36].token, 0x100u + 36);
}

TEST(RegisterGrowth, FirstRoomFollowsTheSegments)
{
	FakeKernel k;
	k.needed = 1;
	std::vector<struct iovec> iov(100);
	Registered r;
	ASSERT_EQ(register_growing(k, iov.data(), 100, rw, &r.reg), 0);
	EXPECT_EQ(k.rooms[0], 100u);
	FakeKernel big;
	std::vector<struct iovec> many(1000);
	Registered r2;
	ASSERT_EQ(register_growing(big, many.data(), 1000, rw, &r2.reg), 0);
	EXPECT_EQ(big.rooms[0], sd::detail::register_first_max_descriptors);
}

TEST(RegisterGrowth, AbsurdCountIsNotBelieved)
{
	FakeKernel k;
	k.needed = sd::detail::register_max_descriptors + 1;
	struct smbdirect_rdma_v1_registration reg;
	memset(&reg, 0x77, sizeof(reg));
	EXPECT_EQ(register_growing(k, one_iov, 1, rw, &reg), -ENOSPC);
	EXPECT_EQ(k.rooms.size(), 1u);
	EXPECT_EQ(reg.desc, nullptr);
	EXPECT_EQ(reg.id, 0u);
}

TEST(RegisterGrowth, LargestSaneCountIsBelieved)
{
	FakeKernel k;
	k.needed = sd::detail::register_max_descriptors;
	Registered r;
	EXPECT_EQ(register_growing(k, one_iov, 1, rw, &r.reg), 0);
	EXPECT_EQ(r.reg.desc_count, sd::detail::register_max_descriptors);
}

TEST(RegisterGrowth, KernelThatKeepsAskingForMoreIsBounded)
{
	FakeKernel k;
	k.answer = { 10, 20, 40, 80, 160, 320 };
	struct smbdirect_rdma_v1_registration reg;
	EXPECT_EQ(register_growing(k, one_iov, 1, rw, &reg), -ENOSPC);
	EXPECT_EQ(k.rooms.size(), static_cast<size_t>(sd::detail::register_attempts));
	EXPECT_EQ(reg.desc, nullptr);
}

TEST(RegisterGrowth, EnospcWithoutAskingForMoreStops)
{
	// ENOSPC but a count that already fitted: believing it would loop.
	FakeKernel k;
	k.answer = { 2 };
	struct smbdirect_rdma_v1_registration reg;
	EXPECT_EQ(register_growing(k, one_iov, 1, rw, &reg), -ENOSPC);
	EXPECT_EQ(k.rooms.size(), 1u);
}

TEST(RegisterGrowth, OtherErrorsPassThroughUnchanged)
{
	for (int err : { -ENOMEM, -EFAULT, -ENOBUFS, -ENOTCONN, -EPIPE, -EMSGSIZE }) {
		FakeKernel k;
		k.needed = 9;
		k.fail_with = err;
		struct smbdirect_rdma_v1_registration reg;
		memset(&reg, 0x33, sizeof(reg));
		EXPECT_EQ(register_growing(k, one_iov, 1, rw, &reg), err);
		EXPECT_EQ(k.rooms.size(), 2u); // grew once, then the error
		EXPECT_EQ(reg.desc, nullptr);
		EXPECT_EQ(reg.desc_count, 0u);
	}
}

TEST(RegisterGrowth, KernelClaimingMoreThanTheRoomIsAnError)
{
	auto liar = [](struct smbdirect_register &r) {
		r.desc_count = r.desc_count + 1;
		r.id = 5;
		return 0;
	};
	struct smbdirect_rdma_v1_registration reg;
	EXPECT_EQ(register_growing(liar, one_iov, 1, rw, &reg), -EPROTO);
	EXPECT_EQ(reg.desc, nullptr);
}

TEST(RegisterGrowth, PassesTheCallersArguments)
{
	struct iovec iov[3] = {};
	auto check = [&](struct smbdirect_register &r) {
		EXPECT_EQ(r.flags, rw | SMBDIRECT_REG_REMOTE_INVALIDATE);
		EXPECT_EQ(r.iov, reinterpret_cast<uintptr_t>(iov));
		EXPECT_EQ(r.iov_count, 3u);
		EXPECT_NE(r.desc, 0u);
		EXPECT_EQ(r.id, 0u);
		r.id = 9;
		r.desc_count = 1;
		return 0;
	};
	Registered r;
	ASSERT_EQ(register_growing(check, iov, 3, rw | SMBDIRECT_REG_REMOTE_INVALIDATE, &r.reg), 0);
	EXPECT_EQ(r.reg.id, 9u);
	EXPECT_EQ(r.reg.flags, rw | SMBDIRECT_REG_REMOTE_INVALIDATE);
}

} // namespace
