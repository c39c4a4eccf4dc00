// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Is the module there: the library's version, the family number (the one
// piece of cached state), and smbdirect_available()'s advice.
#include "internal.h"
#include "family.h"

#include <string_view>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>

namespace sd::detail
{

namespace
{

// 0: not read yet (or the last read failed).
std::atomic<int> cached_family{ 0 };

// Address families are below AF_MAX (46 in Linux 7.2); leave room to grow.
constexpr long family_limit = 256;

} // namespace

void close_quietly(int fd) noexcept
{
	ErrnoGuard keep;
	if (fd >= 0)
		::close(fd);
}

int read_family_file(const char *path) noexcept
{
	return read_number_file(path, family_limit);
}

int read_number_file(const char *path, long limit) noexcept
{
	char buf[32];
	int fd = ::open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return neg_errno();
	ssize_t n;
	do {
		n = ::read(fd, buf, sizeof(buf) - 1);
	} while (n < 0 && errno == EINTR);
	int err = n < 0 ? neg_errno() : 0;
	close_quietly(fd);
	if (err)
		return err;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n == 0)
		return -EINVAL;
	long value = 0;
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -EINVAL;
		value = value * 10 + (buf[i] - '0');
		if (value >= limit)
			return -ERANGE;
	}
	return value == 0 ? -ENOENT : static_cast<int>(value);
}

int refresh_family() noexcept
{
	int family = read_family_file(SMBDIRECT_FAMILY_SYSFS);
	cached_family.store(family > 0 ? family : 0, std::memory_order_relaxed);
	return family;
}

} // namespace sd::detail

using namespace sd::detail;

extern "C" {

#define SD_STR2(x) #x
#define SD_STR(x) SD_STR2(x)
static_assert(std::string_view(SMBDIRECT_VERSION_STRING) ==
		      SD_STR(SMBDIRECT_VERSION_MAJOR) "." SD_STR(SMBDIRECT_VERSION_MINOR) "." SD_STR(
			      SMBDIRECT_VERSION_PATCH),
	      "SMBDIRECT_VERSION_STRING is not MAJOR.MINOR.PATCH");
#undef SD_STR
#undef SD_STR2

const char *smbdirect_version(void)
{
	return SMBDIRECT_VERSION_STRING;
}

int smbdirect_family(void)
{
	int family = cached_family.load(std::memory_order_relaxed);
	return family > 0 ? family : refresh_family();
}

} // extern "C"

namespace
{

// snprintf into why, if the caller gave room.
template <class... Args> void explain(char *why, size_t why_len, const char *fmt, Args... args)
{
	if (!why || !why_len)
		return;
	// A message without arguments is text, never a format (-Wformat-security).
	if constexpr (sizeof...(Args) == 0)
		std::snprintf(why, why_len, "%s", fmt);
	else
		std::snprintf(why, why_len, fmt, args...);
}

// True when /sys/class/infiniband lists at least one device.
bool have_rdma_device()
{
	DIR *d = ::opendir("/sys/class/infiniband");
	if (!d)
		return false;
	bool found = false;
	while (struct dirent *e = ::readdir(d)) {
		if (e->d_name[0] != '.') {
			found = true;
			break;
		}
	}
	::closedir(d);
	return found;
}

} // namespace

extern "C" int smbdirect_available(char *why, size_t why_len)
{
	ErrnoGuard keep;
	int family = refresh_family();
	if (family == -ENOENT) {
		explain(why, why_len, "af_smbdirect is not loaded: modprobe af_smbdirect");
		return family;
	}
	if (family < 0) {
		explain(why, why_len, "cannot read %s: %s", SMBDIRECT_FAMILY_SYSFS,
			std::strerror(-family));
		return family;
	}
	int fd = smbdirect_socket(AF_UNSPEC, SOCK_STREAM, SOCK_CLOEXEC);
	if (fd == -EAFNOSUPPORT) {
		explain(why, why_len,
			"af_smbdirect publishes address family %d but the kernel has no such "
			"family: reload it (rmmod af_smbdirect; modprobe af_smbdirect)",
			family);
		return fd;
	}
	if (fd == -EACCES || fd == -EPERM) {
		explain(why, why_len,
			"socket(AF_SMBDIRECT) was refused: %s (a security module's policy?)",
			std::strerror(-fd));
		return fd;
	}
	if (fd < 0) {
		explain(why, why_len, "socket(AF_SMBDIRECT) failed: %s", std::strerror(-fd));
		return fd;
	}
	close_quietly(fd);
	if (!have_rdma_device())
		explain(why, why_len,
			"af_smbdirect is loaded (address family %d), but there is no RDMA device: "
			"add one, e.g. rdma link add rxe0 type rxe netdev eth0",
			family);
	else
		explain(why, why_len, "af_smbdirect is loaded (address family %d)", family);
	return 0;
}
