// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Asynchronous RDMA: transfers submitted as SMBDIRECT_CMSG_RDMA control
// messages of sendmsg(), completions read from the error queue as one
// SMBDIRECT_CMSG_RDMA_COMPLETION, and deregistration without waiting
// (SMBDIRECT_DEREG_ASYNC). The contract is in <linux/smbdirect.h>.
//
// 32-bit processes: the kernel translates their control messages (12-byte
// headers, 4-byte alignment) to and from its own, so everything here uses
// the CMSG_* macros of the process and copies the payloads with memcpy
// (CMSG_DATA is only 4-aligned there, the structs hold __u64).
#include "internal.h"
#include "rdma_async.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

using namespace sd::detail;

static_assert(sizeof(struct smbdirect_rdma_args) == 64, "one layout on every ABI");
static_assert(sizeof(struct smbdirect_rdma_completion) == 24, "one layout on every ABI");
static_assert(sizeof(struct smbdirect_deregister) == 32, "size covers cookie");

namespace
{

void prep(struct smbdirect_rdma_args *a, uint64_t cookie, uint32_t op, const struct iovec *iov,
	  unsigned int iov_count, const struct smbdirect_buffer_descriptor_v1 *desc,
	  uint32_t desc_count) noexcept
{
	std::memset(a, 0, sizeof(*a));
	a->cookie = cookie;
	a->op = op;
	a->desc = reinterpret_cast<uintptr_t>(desc);
	a->desc_count = desc_count;
	a->iov = reinterpret_cast<uintptr_t>(iov);
	a->iov_count = iov_count;
	a->fd = -1;
}

ssize_t sendmsg_errno(int fd, struct msghdr *msg, int flags) noexcept
{
	ssize_t n = ::sendmsg(fd, msg, flags);
	return n >= 0 ? n : neg_errno();
}

} // namespace

namespace sd::detail
{

int check_transfer(const struct smbdirect_rdma_args &a) noexcept
{
	bool file = a.flags & SMBDIRECT_RDMA_F_FILE;
	if ((a.op != SMBDIRECT_RDMA_READ && a.op != SMBDIRECT_RDMA_WRITE) ||
	    (a.flags & ~uint32_t(SMBDIRECT_RDMA_F_FILE)) || a.reserved || !a.desc_count)
		return -EINVAL;
	if (file ? (a.op == SMBDIRECT_RDMA_READ || a.iov || a.iov_count || !a.length)
		 : (!a.iov_count || a.length || a.offset))
		return -EINVAL;
	if (a.iov_count > SMBDIRECT_IOV_MAX || a.desc_count > SMBDIRECT_DESC_MAX)
		return -EMSGSIZE;
	if ((!file && !a.iov) || !a.desc)
		return -EFAULT;
	// A file descriptor is checked by the kernel (EBADF), a cookie by no one.
	return 0;
}

int check_transfers(const struct smbdirect_rdma_args *args, unsigned int nr) noexcept
{
	if (nr > SMBDIRECT_RDMA_CMSG_MAX)
		return -EINVAL;
	if (nr && !args)
		return -EFAULT;
	for (unsigned int i = 0; i < nr; i++) {
		int err = check_transfer(args[i]);
		if (err)
			return err;
	}
	return 0;
}

size_t control_space(unsigned int nr, bool token) noexcept
{
	return nr * CMSG_SPACE(sizeof(struct smbdirect_rdma_args)) +
	       (token ? CMSG_SPACE(sizeof(uint32_t)) : 0);
}

void write_control(struct msghdr *msg, void *control, const struct smbdirect_rdma_args *args,
		   unsigned int nr, const uint32_t *token) noexcept
{
	size_t len = control_space(nr, token);
	if (!len) {
		msg->msg_control = nullptr;
		msg->msg_controllen = 0;
		return;
	}
	// Zeroed: the padding the CMSG macros skip goes out as zeros.
	std::memset(control, 0, len);
	msg->msg_control = control;
	msg->msg_controllen = len;
	struct cmsghdr *c = CMSG_FIRSTHDR(msg);
	for (unsigned int i = 0; i < nr; i++) {
		c->cmsg_level = SMBDIRECT_SOL;
		c->cmsg_type = SMBDIRECT_CMSG_RDMA;
		c->cmsg_len = CMSG_LEN(sizeof(args[i]));
		std::memcpy(CMSG_DATA(c), &args[i], sizeof(args[i]));
		c = CMSG_NXTHDR(msg, c);
	}
	if (token) {
		c->cmsg_level = SMBDIRECT_SOL;
		c->cmsg_type = SMBDIRECT_CMSG_SEND_INVALIDATE;
		c->cmsg_len = CMSG_LEN(sizeof(*token));
		std::memcpy(CMSG_DATA(c), token, sizeof(*token));
	}
}


namespace
{

// Calls f(payload, count) for each SMBDIRECT_CMSG_RDMA_COMPLETION of msg;
// 0, or -EBADMSG for a control message cut short or not whole completions.
template <class F> int each_completion_cmsg(struct msghdr *m, F &&f) noexcept
{
	const size_t one = sizeof(struct smbdirect_rdma_completion);
	const auto *end = static_cast<const unsigned char *>(m->msg_control) + m->msg_controllen;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h)) {
		const auto *start = reinterpret_cast<const unsigned char *>(h);
		if (h->cmsg_len < CMSG_LEN(0) || h->cmsg_len > static_cast<size_t>(end - start))
			return -EBADMSG;
		if (h->cmsg_level != SMBDIRECT_SOL || h->cmsg_type != SMBDIRECT_CMSG_RDMA_COMPLETION)
			continue;
		size_t bytes = h->cmsg_len - CMSG_LEN(0);
		if (bytes % one)
			return -EBADMSG;
		f(CMSG_DATA(h), bytes / one);
	}
	return 0;
}

} // namespace

int parse_completions(const struct msghdr *msg, struct smbdirect_rdma_completion *c,
		      unsigned int max) noexcept
{
	if (!msg->msg_control)
		return 0;
	// CMSG_NXTHDR takes a non-const msghdr; it only reads it.
	struct msghdr *m = const_cast<struct msghdr *>(msg);
	// Counted first: nothing is copied when they do not fit.
	size_t total = 0;
	int err = each_completion_cmsg(m, [&](const unsigned char *, size_t n) { total += n; });
	if (err)
		return err;
	if (total > max)
		return -ENOSPC;
	size_t got = 0;
	each_completion_cmsg(m, [&](const unsigned char *data, size_t n) {
		if (n)
			std::memcpy(c + got, data, n * sizeof(*c));
		got += n;
	});
	return static_cast<int>(got);
}

} // namespace sd::detail

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

int smbdirect_rdma_submit(int fd, const struct smbdirect_rdma_args *args, unsigned int nr,
			  int flags)
{
	if (fd < 0)
		return -EBADF;
	if (nr == 0)
		return -EINVAL;
	int err = check_transfers(args, nr);
	if (err)
		return err;
	ssize_t n = send_transfers(
		[fd](struct msghdr *msg, int f) noexcept { return sendmsg_errno(fd, msg, f); },
		args, nr, nullptr, 0, nullptr, flags);
	return n < 0 ? static_cast<int>(n) : 0;
}

ssize_t smbdirect_rdma_submit_msg(int fd, const struct smbdirect_rdma_args *args,
				  unsigned int nr, const struct iovec *msg, int msg_iovcnt,
				  const uint32_t *invalidate_token, int flags)
{
	if (fd < 0)
		return -EBADF;
	if (msg_iovcnt < 0)
		return -EINVAL;
	int err = check_transfers(args, nr);
	if (err)
		return err;
	if (msg_iovcnt > 0 && !msg)
		return -EFAULT;
	return send_transfers(
		[fd](struct msghdr *m, int f) noexcept { return sendmsg_errno(fd, m, f); }, args,
		nr, msg, msg_iovcnt, invalidate_token, flags);
}

size_t smbdirect_rdma_control_space(unsigned int nr)
{
	return nr > SMBDIRECT_RDMA_CMSG_MAX ? 0 : control_space(nr, false);
}

int smbdirect_rdma_prep_msghdr(struct msghdr *msg, void *control, size_t control_len,
			       const struct smbdirect_rdma_args *args, unsigned int nr)
{
	if (!msg || !control || nr == 0)
		return -EINVAL;
	if (reinterpret_cast<uintptr_t>(control) % alignof(struct cmsghdr))
		return -EINVAL;
	int err = check_transfers(args, nr);
	if (err)
		return err;
	if (control_len < control_space(nr, false))
		return -ENOSPC;
	write_control(msg, control, args, nr, nullptr);
	return 0;
}

size_t smbdirect_rdma_completion_space(unsigned int max)
{
	if (max > completions_per_call)
		max = completions_per_call;
	return completion_space(max);
}

int smbdirect_rdma_completions(const struct msghdr *msg, struct smbdirect_rdma_completion *c,
			       unsigned int max)
{
	if (!msg || (max && !c))
		return -EINVAL;
	return parse_completions(msg, c, max);
}

int smbdirect_rdma_reap(int fd, struct smbdirect_rdma_completion *c, unsigned int max)
{
	if (fd < 0)
		return -EBADF;
	if (!c || max == 0)
		return -EINVAL;
	if (max > completions_per_call)
		max = completions_per_call;
	return reap_completions(
		[fd](struct msghdr *msg, int flags) noexcept -> ssize_t {
			ssize_t n = ::recvmsg(fd, msg, flags);
			return n >= 0 ? n : neg_errno();
		},
		c, max);
}

int smbdirect_rdma_v1_deregister_async(int fd, struct smbdirect_rdma_v1_registration *reg,
				       uint64_t cookie)
{
	if (int err = check_deregister_args(fd, reg))
		return err;
	return deregister_async(
		[fd](struct smbdirect_deregister &d) noexcept {
			return ::ioctl(fd, SMBDIRECT_IOC_DEREGISTER, &d) ? neg_errno() : 0;
		},
		reg, cookie);
}

} // extern "C"

int smbdirect_rdma_completion_fd(int fd)
{
	if (fd < 0)
		return -EBADF;
	uint32_t events = 0;
	int err = smbdirect_get_option(fd, SMBDIRECT_OPT_RDMA_EVENTS, &events);
	if (err)
		return err;
	if (!(events & SMBDIRECT_RDMA_EVENTS_PRI)) {
		err = smbdirect_set_option(fd, SMBDIRECT_OPT_RDMA_EVENTS,
					   events | SMBDIRECT_RDMA_EVENTS_PRI);
		if (err)
			return err;
	}
	// Level-triggered: readable while the socket reports EPOLLPRI (or
	// its end, EPOLLERR/EPOLLHUP, which epoll always passes on).
	int ep = ::epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return neg_errno();
	struct epoll_event ev = {};
	ev.events = EPOLLPRI;
	ev.data.fd = fd;
	if (::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		err = neg_errno();
		::close(ep);
		return err;
	}
	return ep;
}
