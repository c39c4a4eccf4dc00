// SPDX-License-Identifier: LGPL-2.1-or-later
#include "framing.hpp"

#include <cerrno>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

namespace smb2 {

namespace {

/* Reads exactly n bytes; returns how many arrived before EOF, or -errno. */
ssize_t read_full(int fd, uint8_t *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = ::read(fd, buf + done, n - done);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		done += static_cast<size_t>(r);
	}
	return static_cast<ssize_t>(done);
}

} // namespace

bool is_end_of_stream(std::error_code ec)
{
	return ec == std::errc::not_connected;
}

Result<Bytes> read_message(int fd, size_t max_size)
{
	uint8_t prefix[4];
	ssize_t r = read_full(fd, prefix, sizeof(prefix));
	if (r < 0)
		return errno_code(r);
	if (r == 0)
		return std::make_error_code(std::errc::not_connected);
	if (r < 4)
		return std::make_error_code(std::errc::connection_aborted);
	uint32_t len = static_cast<uint32_t>(prefix[0]) << 24 | prefix[1] << 16 | prefix[2] << 8 |
		       prefix[3];
	if (len > max_size)
		return ParseError::too_large;
	Bytes message(len);
	r = read_full(fd, message.data(), len);
	if (r < 0)
		return errno_code(r);
	if (static_cast<size_t>(r) < len)
		return std::make_error_code(std::errc::connection_aborted);
	return message;
}

std::error_code write_message(int fd, ByteView message)
{
	uint32_t len = static_cast<uint32_t>(message.size());
	uint8_t prefix[4] = { static_cast<uint8_t>(len >> 24), static_cast<uint8_t>(len >> 16),
			      static_cast<uint8_t>(len >> 8), static_cast<uint8_t>(len) };
	iovec iov[2] = { { prefix, sizeof(prefix) },
			 { const_cast<uint8_t *>(message.data()), message.size() } };
	size_t total = sizeof(prefix) + message.size();
	size_t done = 0;
	while (done < total) {
		/* Skip what was written already. */
		iovec rest[2];
		int n = 0;
		size_t skip = done;
		for (auto &v : iov) {
			if (skip >= v.iov_len) {
				skip -= v.iov_len;
				continue;
			}
			rest[n].iov_base = static_cast<uint8_t *>(v.iov_base) + skip;
			rest[n].iov_len = v.iov_len - skip;
			skip = 0;
			n++;
		}
		msghdr msg{};
		msg.msg_iov = rest;
		msg.msg_iovlen = static_cast<size_t>(n);
		ssize_t w = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return { errno, std::system_category() };
		}
		done += static_cast<size_t>(w);
	}
	return {};
}

} // namespace smb2
