// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which epoll sets watch a socket, read from /proc: the parsing half, pure.
 *
 * Replacing a socket with dup3() drops it from every epoll set it was in:
 * an epoll registration belongs to the open file (and the fd number it was
 * added under), and the old file goes away with its registrations. A
 * program that registered its socket before connect() (Boost.Asio, tevent,
 * most event loops) would never hear from it again. Linux has no call that
 * lists the epoll sets of a file, but /proc/self/fdinfo/<epfd> of every
 * epoll descriptor ("anon_inode:[eventpoll]" in /proc/self/fd) lists its
 * registrations, one line each (fs/eventpoll.c, ep_show_fdinfo):
 *
 *   tfd:        5 events:       19 data:     7f0000000005  pos:0 ino:2f4b sdev:8
 *
 * tfd is the fd number given to EPOLL_CTL_ADD, events and data what was
 * registered (hexadecimal), ino the watched file's inode (hexadecimal). A
 * registration belongs to our socket when tfd is its fd AND ino its inode:
 * the fd number alone could name a registration of an older file that
 * another descriptor keeps open. interpose.cpp deletes each registration
 * found before dup3 and adds it again, same events and data, after it.
 */
#ifndef SMBDIRECT_PRELOAD_EPOLL_FDINFO_HPP
#define SMBDIRECT_PRELOAD_EPOLL_FDINFO_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sd::preload {

/* One "tfd:" line of an epoll descriptor's fdinfo. */
struct FdinfoWatch {
	int tfd = -1;
	uint32_t events = 0;
	uint64_t data = 0;
	std::optional<uint64_t> ino; /* absent on kernels before 3.x */
};

/* The registration a "tfd:" line describes; nullopt for any other line. */
[[nodiscard]] std::optional<FdinfoWatch> parse_fdinfo_watch(std::string_view line);

/* Whether a registration is of the socket (fd, ino). */
[[nodiscard]] bool watches_socket(const FdinfoWatch &w, int fd, uint64_t ino);

/* readlink of /proc/self/fd/N says this for an epoll descriptor. */
[[nodiscard]] bool is_eventpoll_link(std::string_view target);

struct FdinfoScan {
	std::size_t consumed = 0; /* bytes of whole lines read */
	std::size_t found = 0; /* matching registrations (may exceed max) */
};

/*
 * The registrations of (fd, ino) in text, into out[0..max). Only whole
 * lines are read: consumed says up to where, so a caller reading the file in
 * pieces keeps the rest for the next piece. With at_end the last line
 * counts even without its newline.
 */
[[nodiscard]] FdinfoScan scan_epoll_fdinfo(std::string_view text, bool at_end, int fd, uint64_t ino,
					   FdinfoWatch *out, std::size_t max);

} // namespace sd::preload

#endif
