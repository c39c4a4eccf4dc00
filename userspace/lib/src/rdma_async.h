// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The asynchronous RDMA calls (rdma_async.cpp) without their system
// calls: the checks the kernel would make of a transfer, the control
// messages of a submission, the error-queue read and its parsing, the
// asynchronous deregistration. sendmsg, recvmsg and ioctl are parameters
// so that host tests can play the kernel.
#ifndef SMBDIRECT_LIB_RDMA_ASYNC_H
#define SMBDIRECT_LIB_RDMA_ASYNC_H

#include "internal.h"
#include "rdma_register.h"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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


// sendmsg(msg, flags) -> bytes or -errno, of nr transfers (checked
// already), the message iov and the token.
template <class Send>
ssize_t send_transfers(Send &&send, const struct smbdirect_rdma_args *args, unsigned int nr,
		       const struct iovec *iov, int iov_count, const uint32_t *token,
		       int flags) noexcept
{
	// Every transfer and a token: about 5 KiB, on the stack.
	union {
		struct cmsghdr align;
		unsigned char bytes[CMSG_SPACE(sizeof(struct smbdirect_rdma_args)) *
					    SMBDIRECT_RDMA_CMSG_MAX +
				    CMSG_SPACE(sizeof(uint32_t))];
	} control;
	struct msghdr msg = {};
	msg.msg_iov = const_cast<struct iovec *>(iov);
	msg.msg_iovlen = static_cast<size_t>(iov_count);
	write_control(&msg, control.bytes, args, nr, token);
	return send(&msg, flags);
}

// recvmsg(msg, flags) -> bytes or -errno from the error queue, never
// blocking: how many completions (max, 1 .. 256, checked already), 0 when
// none waits, -EBADMSG for a success that brought none (the call means
// something else on other sockets: AF_UNIX ignores MSG_ERRQUEUE and reads
// data).
template <class Recv>
int reap_completions(Recv &&recv, struct smbdirect_rdma_completion *c, unsigned int max) noexcept
{
	union {
		struct cmsghdr align;
		unsigned char bytes[completion_space(completions_per_call)];
	} control;
	struct msghdr msg = {};
	msg.msg_control = control.bytes;
	msg.msg_controllen = completion_space(max);
	ssize_t r = recv(&msg, MSG_ERRQUEUE | MSG_DONTWAIT);
	if (r < 0)
		return r == -EAGAIN ? 0 : static_cast<int>(r);
	int n = parse_completions(&msg, c, max);
	return n == 0 ? -EBADMSG : n;
}

// ioctl(SMBDIRECT_IOC_DEREGISTER, struct smbdirect_deregister &) -> 0 or
// -errno, with SMBDIRECT_DEREG_ASYNC (reg->id not 0). As with
// smbdirect_rdma_v1_deregister(), *reg is freed and zeroed when the kernel
// took the registration (or has none by that id, -ENOENT) and left alone
// on any other error; the state bits or the error.
template <class Ioctl>
int deregister_async(Ioctl &&ioctl, struct smbdirect_rdma_v1_registration *reg,
		     uint64_t cookie) noexcept
{
	struct smbdirect_deregister d = {};
	d.size = sizeof(d);
	d.flags = SMBDIRECT_DEREG_ASYNC;
	d.id = reg->id;
	d.cookie = cookie;
	int err = ioctl(d);
	return deregistered(reg, err, d.state);
}

} // namespace sd::detail

#endif // SMBDIRECT_LIB_RDMA_ASYNC_H
