// SPDX-License-Identifier: LGPL-2.1-or-later
//
// What every source file of libsmbdirect shares: the public header with
// default visibility (everything else is built -fvisibility=hidden and the
// version script exports only smbdirect_*), and the errno helpers. The
// library is built -fno-exceptions -fno-rtti and needs no C++ runtime:
// failures are -errno all the way to the extern "C" boundary.
#ifndef SMBDIRECT_LIB_INTERNAL_H
#define SMBDIRECT_LIB_INTERNAL_H

#pragma GCC visibility push(default)
#include <smbdirect/smbdirect.h>
#pragma GCC visibility pop

#include <cerrno>

namespace sd::detail
{

// -errno of the last failed system call. Never 0: a call that failed
// without setting errno still reports a failure.
inline int neg_errno() noexcept
{
	return errno > 0 ? -errno : -EIO;
}

// Restores errno on scope exit: the library never changes errno as a side
// effect callers could mistake for a result (close() in error paths).
class ErrnoGuard {
    public:
	ErrnoGuard() noexcept : saved_(errno)
	{
	}
	~ErrnoGuard()
	{
		errno = saved_;
	}
	ErrnoGuard(const ErrnoGuard &) = delete;
	ErrnoGuard &operator=(const ErrnoGuard &) = delete;

    private:
	int saved_;
};

// close() for error paths, keeping errno.
void close_quietly(int fd) noexcept;

} // namespace sd::detail

#endif // SMBDIRECT_LIB_INTERNAL_H
