// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect: a command-line tool over AF_SMBDIRECT sockets.
 *
 *   smbdirect family                      print the address family in use
 *   smbdirect recv ADDR PORT FILE         accept one connection, write what
 *                                         arrives to FILE
 *   smbdirect send ADDR PORT FILE         connect and send FILE
 *
 * The transfer uses SOCK_SEQPACKET: the first message carries the file size
 * (8 bytes, little-endian), then the file in messages of up to 64 KiB, and
 * the receiver answers "OK" once it has everything. Both sides print the
 * negotiated SMB-Direct parameters.
 */
#include <arpa/inet.h>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include <linux/smbdirect.h>

namespace {

[[noreturn]] void die(const char *what)
{
	std::fprintf(stderr, "smbdirect: %s: %s\n", what, std::strerror(errno));
	std::exit(1);
}

int family()
{
	FILE *f = std::fopen(SMBDIRECT_FAMILY_SYSFS, "r");
	int nr = -1;

	if (!f)
		die(SMBDIRECT_FAMILY_SYSFS " (is af_smbdirect loaded?)");
	if (std::fscanf(f, "%d", &nr) != 1)
		nr = -1;
	std::fclose(f);
	return nr;
}

socklen_t make_addr(const char *addr, int port, sockaddr_storage *ss)
{
	std::memset(ss, 0, sizeof(*ss));
	if (std::strchr(addr, ':')) {
		auto *s6 = reinterpret_cast<sockaddr_in6 *>(ss);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1)
			die("bad IPv6 address");
		return sizeof(*s6);
	}
	auto *s4 = reinterpret_cast<sockaddr_in *>(ss);
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
		die("bad IPv4 address");
	return sizeof(*s4);
}

void print_params(int fd, const char *who)
{
	smbdirect_params p{};
	p.size = sizeof(p);
	if (ioctl(fd, SMBDIRECT_IOC_GET_PARAMS, &p))
		die("SMBDIRECT_IOC_GET_PARAMS");
	static const char *const kinds[] = { "?", "InfiniBand", "RoCE", "iWARP" };
	std::printf("%s: negotiated SMB-Direct %u.%u over %s: send %u, receive %u, "
		    "fragmented %u/%u, read/write %u, credits %u/%u, rd depth %u/%u\n",
		    who, p.version >> 8, p.version & 0xff, kinds[p.transport < 4 ? p.transport : 0],
		    p.max_send_size, p.max_receive_size, p.max_fragmented_send_size,
		    p.max_fragmented_receive_size, p.max_read_write_size, p.send_credit_target,
		    p.receive_credit_max, p.initiator_depth, p.responder_resources);
}

int cmd_recv(const char *addr, int port, const char *path)
{
	sockaddr_storage ss;
	socklen_t sl = make_addr(addr, port, &ss);
	int one = 1;
	int lfd = socket(family(), SOCK_SEQPACKET, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, reinterpret_cast<sockaddr *>(&ss), sl) || listen(lfd, 1))
		die("bind/listen");
	std::printf("recv: listening on %s port %d\n", addr, port);
	std::fflush(stdout);
	int fd = accept(lfd, nullptr, nullptr);
	if (fd < 0)
		die("accept");
	print_params(fd, "recv");
	uint8_t hdr[8];
	if (recv(fd, hdr, sizeof(hdr), 0) != sizeof(hdr))
		die("size message");
	uint64_t size = 0;
	for (int i = 7; i >= 0; i--)
		size = size << 8 | hdr[i];
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		die(path);
	std::vector<char> buf(1 << 16);
	for (uint64_t got = 0; got < size;) {
		ssize_t n = recv(fd, buf.data(), buf.size(), 0);
		if (n <= 0)
			die("recv");
		if (write(out, buf.data(), n) != n)
			die("write");
		got += n;
	}
	close(out);
	if (send(fd, "OK", 2, 0) != 2)
		die("send OK");
	std::printf("recv: %llu bytes written to %s\n", (unsigned long long)size, path);
	close(fd);
	close(lfd);
	return 0;
}

int cmd_send(const char *addr, int port, const char *path)
{
	sockaddr_storage ss;
	socklen_t sl = make_addr(addr, port, &ss);
	int in = open(path, O_RDONLY);
	if (in < 0)
		die(path);
	off_t end = lseek(in, 0, SEEK_END);
	lseek(in, 0, SEEK_SET);
	int fd = socket(family(), SOCK_SEQPACKET, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, reinterpret_cast<sockaddr *>(&ss), sl))
		die("connect");
	print_params(fd, "send");
	uint8_t hdr[8];
	for (int i = 0; i < 8; i++)
		hdr[i] = (uint64_t)end >> (8 * i);
	if (send(fd, hdr, sizeof(hdr), 0) != sizeof(hdr))
		die("send size");
	std::vector<char> buf(1 << 16);
	for (;;) {
		ssize_t n = read(in, buf.data(), buf.size());
		if (n < 0)
			die("read");
		if (n == 0)
			break;
		if (send(fd, buf.data(), n, 0) != n)
			die("send");
	}
	char ok[2];
	if (recv(fd, ok, sizeof(ok), 0) != 2 || std::memcmp(ok, "OK", 2))
		die("no OK from the receiver");
	std::printf("send: %lld bytes sent from %s\n", (long long)end, path);
	close(fd);
	close(in);
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 2 && !std::strcmp(argv[1], "family")) {
		std::printf("%d\n", family());
		return 0;
	}
	if (argc == 5 && !std::strcmp(argv[1], "recv"))
		return cmd_recv(argv[2], std::atoi(argv[3]), argv[4]);
	if (argc == 5 && !std::strcmp(argv[1], "send"))
		return cmd_send(argv[2], std::atoi(argv[3]), argv[4]);
	std::fprintf(stderr, "usage: smbdirect family | recv ADDR PORT FILE | send ADDR PORT FILE\n");
	return 2;
}
