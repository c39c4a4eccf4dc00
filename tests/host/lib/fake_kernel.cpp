// SPDX-License-Identifier: GPL-2.0
// ioctl() and recvmsg() for lib_tests: see fake_kernel.h.
#include "fake_kernel.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

extern "C" int ioctl(int fd, unsigned long request, ...) noexcept
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	auto *fake = sdtest::FakeDeregister::current;
	if (fake && fd == fake->fd && request == SMBDIRECT_IOC_DEREGISTER) {
		auto *d = static_cast<struct smbdirect_deregister *>(arg);
		fake->calls.push_back(*d);
		size_t call = fake->calls.size() - 1;
		if (call < fake->errors.size()) {
			errno = fake->errors[call];
			return -1;
		}
		d->state = fake->state;
		return 0;
	}
	return static_cast<int>(syscall(SYS_ioctl, fd, request, arg));
}

extern "C" ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	auto *queue = sdtest::FakeErrorQueue::current;
	if (!queue || fd != queue->fd || !(flags & MSG_ERRQUEUE))
		return syscall(SYS_recvmsg, fd, msg, flags);
	auto &w = queue->waiting;
	if (w.empty()) {
		errno = EAGAIN;
		return -1;
	}
	size_t room = msg->msg_controllen < CMSG_LEN(0) ? 0 : msg->msg_controllen - CMSG_LEN(0);
	size_t n = std::min(w.size(), room / sizeof(w[0]));
	if (n == 0) {
		errno = EINVAL;
		return -1;
	}
	struct cmsghdr *cm = CMSG_FIRSTHDR(msg);
	cm->cmsg_level = SMBDIRECT_SOL;
	cm->cmsg_type = SMBDIRECT_CMSG_RDMA_COMPLETION;
	cm->cmsg_len = CMSG_LEN(n * sizeof(w[0]));
	std::memcpy(CMSG_DATA(cm), w.data(), n * sizeof(w[0]));
	msg->msg_controllen = CMSG_SPACE(n * sizeof(w[0]));
	msg->msg_flags = n < w.size() ? MSG_CTRUNC : 0;
	w.erase(w.begin(), w.begin() + static_cast<long>(n));
	return 0;
}
