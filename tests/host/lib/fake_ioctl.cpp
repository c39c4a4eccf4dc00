// SPDX-License-Identifier: GPL-2.0
// ioctl() for lib_tests: see fake_ioctl.h.
#include "fake_ioctl.h"

#include <cerrno>
#include <cstdarg>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace
{
sdtest::FakeDeregister *fake;
}

namespace sdtest
{

FakeDeregister::FakeDeregister(int fd_) : fd(fd_)
{
	fake = this;
}

FakeDeregister::~FakeDeregister()
{
	fake = nullptr;
}

} // namespace sdtest

extern "C" int ioctl(int fd, unsigned long request, ...) noexcept
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
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
