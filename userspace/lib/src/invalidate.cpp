// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Sending with remote invalidation: the SMBDIRECT_CMSG_SEND_INVALIDATE
// control message (level SOL_SMBDIRECT, data the peer's __u32 token).
#include "internal.h"

#include <cstdint>
#include <cstring>
#include <sys/socket.h>

using namespace sd::detail;

static_assert(CMSG_SPACE(sizeof(uint32_t)) == SMBDIRECT_CMSG_INVALIDATE_SPACE,
	      "SMBDIRECT_CMSG_INVALIDATE_SPACE must be CMSG_SPACE(sizeof(uint32_t))");

extern "C" {

int smbdirect_cmsg_invalidate(struct msghdr *msg, void *control, size_t control_len, uint32_t token)
{
	if (!msg || !control)
		return -EINVAL;
	if (reinterpret_cast<uintptr_t>(control) % alignof(struct cmsghdr))
		return -EINVAL;
	if (control_len < CMSG_SPACE(sizeof(token)))
		return -ENOSPC;
	std::memset(control, 0, CMSG_SPACE(sizeof(token)));
	msg->msg_control = control;
	msg->msg_controllen = CMSG_SPACE(sizeof(token));
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(msg);
	cmsg->cmsg_level = SMBDIRECT_SOL;
	cmsg->cmsg_type = SMBDIRECT_CMSG_SEND_INVALIDATE;
	cmsg->cmsg_len = CMSG_LEN(sizeof(token));
	std::memcpy(CMSG_DATA(cmsg), &token, sizeof(token));
	return 0;
}

ssize_t smbdirect_send_with_invalidate(int fd, const struct iovec *iov, int iov_count,
				       uint32_t token, int msg_flags)
{
	if (fd < 0)
		return -EBADF;
	if (iov_count < 0)
		return -EINVAL;
	if (iov_count > 0 && !iov)
		return -EFAULT;
	union {
		struct cmsghdr align;
		unsigned char bytes[SMBDIRECT_CMSG_INVALIDATE_SPACE];
	} control;
	struct msghdr msg = {};
	msg.msg_iov = const_cast<struct iovec *>(iov);
	msg.msg_iovlen = static_cast<size_t>(iov_count);
	int err = smbdirect_cmsg_invalidate(&msg, control.bytes, sizeof(control.bytes), token);
	if (err)
		return err;
	ssize_t n = ::sendmsg(fd, &msg, msg_flags);
	return n >= 0 ? n : neg_errno();
}

} // extern "C"
