// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The pure parts of the asynchronous RDMA calls (rdma_async.cpp): the
// checks the kernel would make of a transfer, the control messages of a
// submission, and the parsing of an error-queue read.
#ifndef SMBDIRECT_LIB_RDMA_ASYNC_H
#define SMBDIRECT_LIB_RDMA_ASYNC_H

#include "internal.h"

#include <cstddef>
#include <cstdint>
#include <sys/socket.h>

namespace sd::detail
{

// What one recvmsg(MSG_ERRQUEUE) returns at most.
inline constexpr unsigned int completions_per_call = 256;

// The kernel sizes its answer with its own struct cmsghdr, 16 bytes on a
// 64-bit kernel, also for a 32-bit process whose header is 12: such a
// process adds the difference, or the kernel returns one completion fewer
// than fit (and EINVAL instead of the only one).
inline constexpr size_t kernel_cmsg_header = 16;
static_assert(CMSG_LEN(0) <= kernel_cmsg_header, "no ABI has a larger header");

constexpr size_t completion_space(unsigned int max) noexcept
{
	return CMSG_SPACE(max * sizeof(struct smbdirect_rdma_completion)) +
	       (kernel_cmsg_header - CMSG_LEN(0));
}

// The kernel's checks of one transfer, in its order: -EINVAL, -EMSGSIZE,
// -EFAULT (NULL arrays), else 0.
int check_transfer(const struct smbdirect_rdma_args &a) noexcept;
// nr <= SMBDIRECT_RDMA_CMSG_MAX (-EINVAL), args there (-EFAULT), each one.
int check_transfers(const struct smbdirect_rdma_args *args, unsigned int nr) noexcept;

// Bytes of control messages for nr transfers and, with token, a
// SMBDIRECT_CMSG_SEND_INVALIDATE.
size_t control_space(unsigned int nr, bool token) noexcept;
// Writes them into control (control_space() bytes, aligned for struct
// cmsghdr) and points msg at them; no control at all when there is none.
void write_control(struct msghdr *msg, void *control, const struct smbdirect_rdma_args *args,
		   unsigned int nr, const uint32_t *token) noexcept;

// The completions of msg's SMBDIRECT_CMSG_RDMA_COMPLETION control messages
// into c: how many, -ENOSPC (nothing copied) for more than max, -EBADMSG
// for a control message that is cut short or not whole completions.
int parse_completions(const struct msghdr *msg, struct smbdirect_rdma_completion *c,
		      unsigned int max) noexcept;

} // namespace sd::detail

#endif // SMBDIRECT_LIB_RDMA_ASYNC_H
