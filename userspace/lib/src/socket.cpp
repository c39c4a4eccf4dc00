// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Creating, connecting, listening and accepting SMB-Direct sockets.
// Arguments are checked before any system call, so a wrong call fails the
// same way whether the module is loaded or not.
#include "internal.h"
#include "family.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace sd::detail;

namespace
{

constexpr int socket_flags = SOCK_CLOEXEC | SOCK_NONBLOCK;
constexpr int create_flags = socket_flags | SMBDIRECT_SOCKET_IPPROTO;
// Protocol numbers are below IPPROTO_MAX (263 in Linux 7.2).
constexpr long protocol_limit = 65536;

// domain/type/flags as smbdirect_socket() takes them; 0 or -errno.
int check_socket_args(int domain, int type, int flags) noexcept
{
	if (domain != AF_INET && domain != AF_INET6 && domain != AF_UNSPEC)
		return -EAFNOSUPPORT;
	if (flags & ~create_flags)
		return -EINVAL;
	int base = type & ~socket_flags;
	if (base != SOCK_STREAM && base != SOCK_SEQPACKET)
		return -ESOCKTNOSUPPORT;
	// Upstream's shape is a stream socket only.
	if ((flags & SMBDIRECT_SOCKET_IPPROTO) && base != SOCK_STREAM)
		return -ESOCKTNOSUPPORT;
	return 0;
}

// The address's family, or -errno for an address no SMB-Direct socket takes.
int address_domain(const struct sockaddr *addr, socklen_t addr_len) noexcept
{
	if (!addr)
		return -EINVAL;
	if (addr->sa_family == AF_INET && addr_len >= sizeof(struct sockaddr_in))
		return AF_INET;
	if (addr->sa_family == AF_INET6 && addr_len >= sizeof(struct sockaddr_in6))
		return AF_INET6;
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	return -EINVAL;
}

} // namespace

extern "C" {

int smbdirect_socket(int domain, int type, int flags)
{
	int err = check_socket_args(domain, type, flags);
	if (err)
		return err;
	if (flags & SMBDIRECT_SOCKET_IPPROTO) {
		// -ENOENT: not loaded; 0 in the file: loaded without it.
		int protocol = read_number_file(SMBDIRECT_INET_PROTOCOL_SYSFS, protocol_limit);
		if (protocol == -ENOENT && smbdirect_family() > 0)
			return -EPROTONOSUPPORT;
		if (protocol < 0)
			return protocol;
		int fd = ::socket(domain == AF_UNSPEC ? AF_INET6 : domain,
				  type | (flags & socket_flags), protocol);
		return fd >= 0 ? fd : neg_errno();
	}
	int family = smbdirect_family();
	if (family < 0)
		return family;
	int fd = ::socket(family, type | flags, 0);
	if (fd >= 0)
		return fd;
	err = neg_errno();
	if (err != -EAFNOSUPPORT)
		return err;
	// The module may have been reloaded into another slot: look once more.
	int again = refresh_family();
	if (again < 0)
		return again;
	if (again == family)
		return err;
	fd = ::socket(again, type | flags, 0);
	return fd >= 0 ? fd : neg_errno();
}

int smbdirect_connect(const struct sockaddr *addr, socklen_t addr_len, int type, int flags)
{
	int domain = address_domain(addr, addr_len);
	if (domain < 0)
		return domain;
	int fd = smbdirect_socket(domain, type, flags);
	if (fd < 0)
		return fd;
	if (::connect(fd, addr, addr_len) == 0)
		return fd;
	int err = neg_errno();
	bool nonblock = (type | flags) & SOCK_NONBLOCK;
	if (err == -EINPROGRESS && nonblock)
		return fd;
	close_quietly(fd);
	return err;
}

int smbdirect_listen(const struct sockaddr *addr, socklen_t addr_len, int type, int flags,
		     int backlog)
{
	int domain = address_domain(addr, addr_len);
	if (domain < 0)
		return domain;
	int fd = smbdirect_socket(domain, type, flags);
	if (fd < 0)
		return fd;
	if (::bind(fd, addr, addr_len) == 0 && ::listen(fd, backlog) == 0)
		return fd;
	int err = neg_errno();
	close_quietly(fd);
	return err;
}

int smbdirect_accept(int listen_fd, struct sockaddr *addr, socklen_t *addr_len, int flags)
{
	if (listen_fd < 0)
		return -EBADF;
	if (flags & ~socket_flags)
		return -EINVAL;
	if (addr && !addr_len)
		return -EINVAL;
	int fd = ::accept4(listen_fd, addr, addr ? addr_len : nullptr, flags);
	return fd >= 0 ? fd : neg_errno();
}

} // extern "C"
