/* SPDX-License-Identifier: GPL-2.0 */
// A kernel that answers SMBDIRECT_IOC_DEREGISTER on one fd as a test says,
// through an ioctl() that lib_tests defines in place of libc's (the
// library is linked in statically, so its calls reach this one); every
// other ioctl() goes to the real system call.
#ifndef SD_TEST_FAKE_IOCTL_H
#define SD_TEST_FAKE_IOCTL_H

#include <cstdint>
#include <smbdirect/smbdirect.h>
#include <vector>

namespace sdtest
{

// While one lives, DEREGISTER on fd fails with the errno values of
// `errors`, one a call and in turn, and then succeeds with `state`. Each
// call's struct is kept in `calls`.
struct FakeDeregister {
	explicit FakeDeregister(int fd);
	~FakeDeregister();
	FakeDeregister(const FakeDeregister &) = delete;
	FakeDeregister &operator=(const FakeDeregister &) = delete;

	int fd;
	std::vector<int> errors;
	uint32_t state = 0;
	std::vector<struct smbdirect_deregister> calls;
};

} // namespace sdtest

#endif // SD_TEST_FAKE_IOCTL_H
