// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Asynchronous RDMA transfers: SMBDIRECT_CMSG_RDMA control messages on
// sendmsg, completions from the error queue (uapi/linux/smbdirect.h).
#include "internal.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/ioctl.h>
#include <sys/socket.h>

using namespace sd::detail;

static_assert(sizeof(struct smbdirect_rdma_args) == 64, "struct smbdirect_rdma_args");
static_assert(sizeof(struct smbdirect_rdma_completion) == 24, "struct smbdirect_rdma_completion");

namespace
{

void prep(struct smbdirect_rdma_args *a, uint64_t cookie, uint32_t op, const struct iovec *iov,
	  unsigned int iov_count, const struct smbdirect_buffer_descriptor_v1 *desc,
	  uint32_t desc_count) noexcept
{
	std::memset(a, 0, sizeof(*a));
	a->cookie = cookie;
	a->op = op;
	a->iov = reinterpret_cast<uintptr_t>(iov);
	a->iov_count = iov_count;
	a->desc = reinterpret_cast<uintptr_t>(desc);
	a->desc_count = desc_count;
	a->fd = -1;
}

// The control messages of nr transfers and, when token is set, the
// remote invalidation, into control (aligned for struct cmsghdr).
int build(struct msghdr *msg, void *control, size_t control_len,
	  const struct smbdirect_rdma_args *args, unsigned int nr, const uint32_t *token) noexcept
{
	if (!msg || (!control && control_len) || (nr && !args))
		return -EINVAL;
	if (nr > SMBDIRECT_RDMA_CMSG_MAX)
		return -EINVAL;
	if (reinterpret_cast<uintptr_t>(control) % alignof(struct cmsghdr))
		return -EINVAL;
	size_t need = smbdirect_rdma_control_space(nr) +
		      (token ? CMSG_SPACE(sizeof(uint32_t)) : 0);
	if (control_len < need)
		return -ENOSPC;
	if (!need) {
		msg->msg_control = nullptr;
		msg->msg_controllen = 0;
		return 0;
	}
	std::memset(control, 0, need);
	msg->msg_control = control;
	msg->msg_controllen = need;
	struct cmsghdr *c = CMSG_FIRSTHDR(msg);
	for (unsigned int i = 0; i < nr; i++) {
		c->cmsg_level = SOL_SMBDIRECT;
		c->cmsg_type = SMBDIRECT_CMSG_RDMA;
		c->cmsg_len = CMSG_LEN(sizeof(args[i]));
		std::memcpy(CMSG_DATA(c), &args[i], sizeof(args[i]));
		c = CMSG_NXTHDR(msg, c);
	}
	if (token) {
		c->cmsg_level = SOL_SMBDIRECT;
		c->cmsg_type = SMBDIRECT_CMSG_SEND_INVALIDATE;
		c->cmsg_len = CMSG_LEN(sizeof(*token));
		std::memcpy(CMSG_DATA(c), token, sizeof(*token));
	}
	return 0;
}

ssize_t send(int fd, const struct smbdirect_rdma_args *args, unsigned int nr,
	     const struct iovec *iov, int iov_count, const uint32_t *token, int flags) noexcept
{
	if (fd < 0)
		return -EBADF;
	if (iov_count < 0 || (iov_count && !iov))
		return -EINVAL;
	if (nr > SMBDIRECT_RDMA_CMSG_MAX)
		return -EINVAL;
	// 64 transfers and a token: a little over 5 KiB, on the stack.
	union {
		struct cmsghdr align;
		unsigned char bytes[CMSG_SPACE(sizeof(struct smbdirect_rdma_args)) *
					    SMBDIRECT_RDMA_CMSG_MAX +
				    CMSG_SPACE(sizeof(uint32_t))];
	} control;
	struct msghdr msg = {};
	msg.msg_iov = const_cast<struct iovec *>(iov);
	msg.msg_iovlen = static_cast<size_t>(iov_count);
	int err = build(&msg, control.bytes, sizeof(control.bytes), args, nr, token);
	if (err)
		return err;
	ssize_t n = ::sendmsg(fd, &msg, flags);
	return n >= 0 ? n : neg_errno();
}

} // namespace

extern "C" {

void smbdirect_rdma_prep_write(struct smbdirect_rdma_args *a, uint64_t cookie,
			       const struct iovec *iov, unsigned int iov_count,
			       const struct smbdirect_buffer_descriptor_v1 *desc,
			       uint32_t desc_count)
{
	prep(a, cookie, SMBDIRECT_RDMA_WRITE, iov, iov_count, desc, desc_count);
}

void smbdirect_rdma_prep_read(struct smbdirect_rdma_args *a, uint64_t cookie,
			      const struct iovec *iov, unsigned int iov_count,
			      const struct smbdirect_buffer_descriptor_v1 *desc,
			      uint32_t desc_count)
{
	prep(a, cookie, SMBDIRECT_RDMA_READ, iov, iov_count, desc, desc_count);
}

void smbdirect_rdma_prep_write_file(struct smbdirect_rdma_args *a, uint64_t cookie, int fd,
				    uint64_t offset, uint64_t length,
				    const struct smbdirect_buffer_descriptor_v1 *desc,
				    uint32_t desc_count)
{
	prep(a, cookie, SMBDIRECT_RDMA_WRITE, nullptr, 0, desc, desc_count);
	a->flags = SMBDIRECT_RDMA_F_FILE;
	a->fd = fd;
	a->offset = offset;
	a->length = length;
}

size_t smbdirect_rdma_control_space(unsigned int nr)
{
	return nr * CMSG_SPACE(sizeof(struct smbdirect_rdma_args));
}

int smbdirect_rdma_prep_msghdr(struct msghdr *msg, void *control, size_t control_len,
			       const struct smbdirect_rdma_args *args, unsigned int nr)
{
	return build(msg, control, control_len, args, nr, nullptr);
}

int smbdirect_rdma_submit(int fd, const struct smbdirect_rdma_args *args, unsigned int nr,
			  int flags)
{
	if (!nr || !args)
		return -EINVAL;
	ssize_t n = send(fd, args, nr, nullptr, 0, nullptr, flags);
	return n < 0 ? static_cast<int>(n) : 0;
}

ssize_t smbdirect_rdma_submit_msg(int fd, const struct smbdirect_rdma_args *args,
				  unsigned int nr, const struct iovec *msg, int msg_iovcnt,
				  const uint32_t *invalidate_token, int flags)
{
	return send(fd, args, nr, msg, msg_iovcnt, invalidate_token, flags);
}

int smbdirect_rdma_completions(const struct msghdr *msg, struct smbdirect_rdma_completion *c,
			       unsigned int max)
{
	if (!msg || (max && !c))
		return -EINVAL;
	unsigned int got = 0;
	// CMSG_NXTHDR takes a non-const msghdr; it does not change it.
	struct msghdr *m = const_cast<struct msghdr *>(msg);
	for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h)) {
		if (h->cmsg_level != SOL_SMBDIRECT || h->cmsg_type != SMBDIRECT_CMSG_RDMA_COMPLETION)
			continue;
		size_t bytes = h->cmsg_len - CMSG_LEN(0);
		if (bytes % sizeof(*c))
			return -EBADMSG;
		size_t n = bytes / sizeof(*c);
		if (n > max - got)
			return -ENOSPC;
		std::memcpy(c + got, CMSG_DATA(h), n * sizeof(*c));
		got += static_cast<unsigned int>(n);
	}
	return static_cast<int>(got);
}

int smbdirect_rdma_reap(int fd, struct smbdirect_rdma_completion *c, unsigned int max)
{
	if (fd < 0)
		return -EBADF;
	if (!max || !c)
		return -EINVAL;
	if (max > 256)
		max = 256;	// what the kernel returns per call
	union {
		struct cmsghdr align;
		unsigned char bytes[CMSG_SPACE(256 * sizeof(struct smbdirect_rdma_completion))];
	} control;
	struct msghdr msg = {};
	msg.msg_control = control.bytes;
	msg.msg_controllen = CMSG_SPACE(max * sizeof(*c));
	if (::recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
		int err = neg_errno();
		return err == -EAGAIN || err == -EWOULDBLOCK ? 0 : err;
	}
	return smbdirect_rdma_completions(&msg, c, max);
}

int smbdirect_rdma_v1_deregister_async(int fd, struct smbdirect_rdma_v1_registration *reg,
				       uint64_t cookie)
{
	if (!reg)
		return -EINVAL;
	uint64_t id = reg->id;
	std::free(reg->desc);
	std::memset(reg, 0, sizeof(*reg));
	if (fd < 0)
		return -EBADF;
	if (id == 0)
		return -ENOENT;
	struct smbdirect_deregister d = {};
	d.size = sizeof(d);
	d.flags = SMBDIRECT_DEREG_ASYNC;
	d.id = id;
	d.cookie = cookie;
	if (::ioctl(fd, SMBDIRECT_IOC_DEREGISTER, &d))
		return neg_errno();
	return static_cast<int>(d.state & 0x7fffffff);
}

} // extern "C"
