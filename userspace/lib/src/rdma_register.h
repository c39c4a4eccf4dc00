// SPDX-License-Identifier: LGPL-2.1-or-later
//
// smbdirect_rdma_v1_register()'s logic without the system call: the
// kernel tells how many descriptors a registration needs only when the
// room given was too small (ENOSPC, desc_count = the number needed), so
// the library starts small and grows. The ioctl is a parameter so that
// host tests can play the kernel, including a kernel that misbehaves.
#ifndef SMBDIRECT_LIB_RDMA_REGISTER_H
#define SMBDIRECT_LIB_RDMA_REGISTER_H

#include "internal.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace sd::detail
{

// Room of the first attempt: enough for the common SMB2 READ/WRITE buffer
// (a few page-aligned segments), never more than a page of descriptors.
inline constexpr uint32_t register_min_descriptors = 4;
inline constexpr uint32_t register_first_max_descriptors = 256;
// Attempts in all: the count can change between two calls only when
// another thread remaps the memory meanwhile.
inline constexpr int register_attempts = 4;
// No registration needs more: one descriptor per page of the largest one
// and one more per segment. A kernel asking for more is not believed.
inline constexpr uint32_t register_max_descriptors =
	SMBDIRECT_REG_MAX_BYTES / 4096 + SMBDIRECT_IOV_MAX;

inline constexpr uint32_t register_flags =
	SMBDIRECT_ACCESS_PEER_READ | SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE;

// The checks smbdirect_rdma_v1_register() makes before any system call;
// the errors are the kernel's for the same mistakes.
inline int check_register_args(int fd, const struct iovec *iov, int iov_count, uint32_t flags,
			       const struct smbdirect_rdma_v1_registration *reg) noexcept
{
	if (!reg)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	if ((flags & ~register_flags) ||
	    !(flags & (SMBDIRECT_ACCESS_PEER_READ | SMBDIRECT_ACCESS_PEER_WRITE)))
		return -EINVAL;
	if (iov_count <= 0)
		return -EINVAL;
	if (iov_count > SMBDIRECT_IOV_MAX)
		return -EMSGSIZE;
	if (!iov)
		return -EFAULT;
	return 0;
}

inline uint32_t register_first_room(int iov_count) noexcept
{
	uint32_t n = static_cast<uint32_t>(iov_count);
	if (n < register_min_descriptors)
		return register_min_descriptors;
	return n > register_first_max_descriptors ? register_first_max_descriptors : n;
}

// Registers with ioctl(struct smbdirect_register &) -> 0 or -errno, growing
// the descriptor array on ENOSPC. The arguments are checked already. On
// success *reg owns a malloc'ed descriptor array; on failure *reg is
// zeroed and the ioctl's error returned (-ENOSPC if the kernel kept asking
// for more room, or for more than any registration can need).
template <class Ioctl> int register_growing(Ioctl &&ioctl, const struct iovec *iov, int iov_count,
					    uint32_t flags,
					    struct smbdirect_rdma_v1_registration *reg) noexcept
{
	std::memset(reg, 0, sizeof(*reg));
	uint32_t room = register_first_room(iov_count);
	for (int attempt = 0; attempt < register_attempts; attempt++) {
		auto *desc = static_cast<struct smbdirect_buffer_descriptor_v1 *>(
			std::calloc(room, sizeof(struct smbdirect_buffer_descriptor_v1)));
		if (!desc)
			return -ENOMEM;
		struct smbdirect_register r = {};
		r.size = sizeof(r);
		r.flags = flags;
		r.iov = reinterpret_cast<uintptr_t>(iov);
		r.iov_count = static_cast<uint32_t>(iov_count);
		r.desc_count = room;
		r.desc = reinterpret_cast<uintptr_t>(desc);
		int err = ioctl(r);
		if (err == 0 && r.desc_count <= room) {
			reg->id = r.id;
			reg->desc = desc;
			reg->desc_count = r.desc_count;
			reg->flags = flags;
			return 0;
		}
		std::free(desc);
		if (err == 0)
			return -EPROTO; // wrote past the room it was given: cannot happen
		if (err != -ENOSPC)
			return err;
		if (r.desc_count <= room || r.desc_count > register_max_descriptors)
			return -ENOSPC;
		room = r.desc_count;
	}
	return -ENOSPC;
}

// Frees the descriptor array and zeroes *reg: no registration any more.
inline void forget_registration(struct smbdirect_rdma_v1_registration *reg) noexcept
{
	std::free(reg->desc);
	std::memset(reg, 0, sizeof(*reg));
}

// The checks before SMBDIRECT_IOC_DEREGISTER: -EINVAL (no reg), -EBADF
// (*reg left alone: the registration lives on, to be ended on its
// socket), -ENOENT for a zeroed registration (ids are never 0; its array,
// if any, is freed).
inline int check_deregister_args(int fd, struct smbdirect_rdma_v1_registration *reg) noexcept
{
	if (!reg)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	if (reg->id == 0) {
		forget_registration(reg);
		return -ENOENT;
	}
	return 0;
}

// The result of SMBDIRECT_IOC_DEREGISTER (err: 0 or -errno; state as the
// kernel wrote it). sd_ioctl_deregister() takes the registration off the
// socket's list only after every check that can fail (the struct's size
// and flags, EFAULT reading it, ENOMEM for an asynchronous completion,
// ENOTCONN for a socket never connected) and cannot fail after that but
// in writing state back (EFAULT, impossible with the library's own
// struct). So: 0, the registration is gone; -ENOENT, the kernel has none
// by that id (deregistered already, or released with the RDMA device):
// gone as well. Any other error: the kernel did not take it, it is still
// registered, and *reg stays as it was so that the caller can retry.
inline int deregistered(struct smbdirect_rdma_v1_registration *reg, int err,
			uint32_t state) noexcept
{
	if (err && err != -ENOENT)
		return err;
	forget_registration(reg);
	return err ? err : static_cast<int>(state & 0x7fffffff);
}

} // namespace sd::detail

#endif // SMBDIRECT_LIB_RDMA_REGISTER_H
