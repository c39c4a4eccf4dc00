// SPDX-License-Identifier: GPL-2.0
// The install test's C program: built against the installed tree only.
// Accepts one SMB-Direct connection, answers "ping" with "pong", prints
// the negotiated parameters.
#include <smbdirect/smbdirect.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct smbdirect_params p;
	socklen_t len;
	char buf[64], why[160];
	if (argc != 3) {
		fprintf(stderr, "usage: %s ADDR PORT\n", argv[0]);
		return 2;
	}
	if (smbdirect_available(why, sizeof(why)) < 0) {
		fprintf(stderr, "%s\n", why);
		return 1;
	}
	int lfd = smbdirect_parse_address(argv[1], argv[2], &ss, &len);
	if (lfd == 0)
		lfd = smbdirect_listen((struct sockaddr *)&ss, len, SOCK_SEQPACKET, SOCK_CLOEXEC,
				       1);
	if (lfd < 0) {
		fprintf(stderr, "listen on %s port %s: %s\n", argv[1], argv[2], strerror(-lfd));
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	int fd = smbdirect_accept(lfd, NULL, NULL, SOCK_CLOEXEC);
	ssize_t n = fd < 0 ? fd : recv(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0 || send(fd, "pong", 4, 0) != 4 || smbdirect_connection_get_parameters(fd, &p)) {
		fprintf(stderr, "server: the exchange failed\n");
		return 1;
	}
	buf[n] = '\0';
	printf("server got \"%s\" over %s: version %#x, max_send_size %u, max_read_write_size %u\n",
	       buf, smbdirect_transport_name(p.transport), p.version, p.max_send_size,
	       p.max_read_write_size);
	close(fd);
	close(lfd);
	return 0;
}
