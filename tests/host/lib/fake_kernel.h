/* SPDX-License-Identifier: GPL-2.0 */
// A kernel that answers SMBDIRECT_IOC_DEREGISTER, and recvmsg() of the
// error queue, on one fd as a test says, through an ioctl() and a
// recvmsg() that lib_tests defines in place of libc's (the library is
// linked in statically, so its calls reach these); every other call goes
// to the real system call.
#ifndef SD_TEST_FAKE_KERNEL_H
#define SD_TEST_FAKE_KERNEL_H

#include <cstdint>
#include <smbdirect/smbdirect.h>
#include <vector>

namespace sdtest
{

// The fake of kind T that is installed: the one that lives (one a kind).
template <class T> class Installed {
    public:
	Installed(const Installed &) = delete;
	Installed &operator=(const Installed &) = delete;
	static inline T *current = nullptr;

    protected:
	Installed()
	{
		current = static_cast<T *>(this);
	}
	~Installed()
	{
		current = nullptr;
	}
};

// While one lives, DEREGISTER on fd fails with the errno values of
// `errors`, one a call and in turn, and then succeeds with `state`. Each
// call's struct is kept in `calls`.
struct FakeDeregister : Installed<FakeDeregister> {
	explicit FakeDeregister(int fd_) : fd(fd_)
	{
	}
	int fd;
	std::vector<int> errors;
	uint32_t state = 0;
	std::vector<struct smbdirect_deregister> calls;
};

// While one lives, recvmsg(fd, MSG_ERRQUEUE) returns the completions
// waiting, as many as fit, in one SMBDIRECT_CMSG_RDMA_COMPLETION (EAGAIN
// when none waits).
struct FakeErrorQueue : Installed<FakeErrorQueue> {
	explicit FakeErrorQueue(int fd_) : fd(fd_)
	{
	}
	int fd;
	std::vector<struct smbdirect_rdma_completion> waiting;
};

} // namespace sdtest

#endif // SD_TEST_FAKE_KERNEL_H
