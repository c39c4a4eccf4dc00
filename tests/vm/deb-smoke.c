// SPDX-License-Identifier: GPL-2.0
/*
 * The smoke test's C program for the installed Debian packages
 * (tests/vm/deb-vm.sh): built in the scratch root with nothing but
 *
 *	cc deb-smoke.c $(pkg-config --cflags --libs smbdirect)
 *
 * so that it sees what a C project sees: <smbdirect/smbdirect.h> from
 * libsmbdirect-dev, libsmbdirect.so.0 from libsmbdirect0.
 *
 *	deb-smoke HOST PORT MESSAGE
 *
 * listens on HOST:PORT, forks a child that connects to it and sends
 * MESSAGE as one SOCK_STREAM message (the 4-byte big-endian length prefix
 * of SMB over TCP, then the bytes), accepts, reads the message back and
 * compares it. Prints the library's version, the transport, the
 * negotiated sizes and how many RDMA-capable interfaces
 * smbdirect_interfaces() lists, or its error (libnl missing: "Can not
 * access a needed shared library"). Exit 0 when the message arrived
 * whole, 1 with the failing call and its error on stderr otherwise.
 */
#include <smbdirect/smbdirect.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "deb-smoke: %s: %s\n", what, strerror(-err));
	return 1;
}

/* The child: connect, send MESSAGE with its prefix, wait for the close. */
static int send_one(const struct sockaddr_storage *addr, socklen_t addr_len,
		    const char *message)
{
	uint32_t prefix = htonl((uint32_t)strlen(message));
	struct iovec iov[2] = {
		{ .iov_base = &prefix, .iov_len = sizeof(prefix) },
		{ .iov_base = (void *)message, .iov_len = strlen(message) },
	};
	size_t want = iov[0].iov_len + iov[1].iov_len;
	char byte;
	ssize_t n;
	int fd;

	fd = smbdirect_connect((const struct sockaddr *)addr, addr_len,
			       SOCK_STREAM, SOCK_CLOEXEC);
	if (fd < 0)
		return fail("child: smbdirect_connect", fd);
	n = writev(fd, iov, 2);
	if (n < 0)
		return fail("child: writev", -errno);
	if ((size_t)n != want) {
		fprintf(stderr, "deb-smoke: child: writev: %zd of %zu bytes\n",
			n, want);
		return 1;
	}
	/* The parent closes once it has read the message. */
	n = read(fd, &byte, 1);
	if (n < 0)
		return fail("child: read", -errno);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct smbdirect_interface *list;
	struct smbdirect_params params;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char why[256], *got;
	uint32_t prefix;
	size_t len;
	ssize_t n;
	int lfd, fd, ret, status;
	pid_t child;

	if (argc != 4) {
		fprintf(stderr, "usage: deb-smoke HOST PORT MESSAGE\n");
		return 2;
	}
	ret = smbdirect_available(why, sizeof(why));
	if (ret < 0) {
		fprintf(stderr, "deb-smoke: SMB-Direct unavailable: %s\n", why);
		return 1;
	}
	ret = smbdirect_parse_address(argv[1], argv[2], &addr, &addr_len);
	if (ret < 0)
		return fail("smbdirect_parse_address", ret);
	lfd = smbdirect_listen((struct sockaddr *)&addr, addr_len, SOCK_STREAM,
			       SOCK_CLOEXEC, 1);
	if (lfd < 0)
		return fail("smbdirect_listen", lfd);
	child = fork();
	if (child < 0)
		return fail("fork", -errno);
	if (child == 0) {
		close(lfd);
		_exit(send_one(&addr, addr_len, argv[3]));
	}
	fd = smbdirect_accept(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return fail("smbdirect_accept", fd);
	ret = smbdirect_connection_get_parameters(fd, &params);
	if (ret < 0)
		return fail("smbdirect_connection_get_parameters", ret);
	n = recv(fd, &prefix, sizeof(prefix), MSG_WAITALL);
	if (n != (ssize_t)sizeof(prefix))
		return fail("recv of the prefix", n < 0 ? -errno : -EPROTO);
	len = ntohl(prefix);
	if (len != strlen(argv[3])) {
		fprintf(stderr, "deb-smoke: a message of %zu bytes, want %zu\n",
			len, strlen(argv[3]));
		return 1;
	}
	got = malloc(len + 1);
	if (!got)
		return fail("malloc", -ENOMEM);
	n = recv(fd, got, len, MSG_WAITALL);
	if (n != (ssize_t)len)
		return fail("recv of the message", n < 0 ? -errno : -EPROTO);
	got[len] = '\0';
	close(fd);
	close(lfd);
	if (waitpid(child, &status, 0) != child)
		return fail("waitpid", -errno);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "deb-smoke: the connecting child failed (status %#x)\n",
			status);
		return 1;
	}
	if (strcmp(got, argv[3]) != 0) {
		fprintf(stderr, "deb-smoke: received '%s', sent '%s'\n", got, argv[3]);
		return 1;
	}
	printf("libsmbdirect %s, %s: %zu bytes through, max_send_size %u, max_receive_size %u",
	       smbdirect_version(), smbdirect_transport_name(params.transport),
	       len, params.max_send_size, params.max_receive_size);
	free(got);
	/* The one call that needs libnl, which the library loads now. */
	ret = smbdirect_interfaces(&list, 0);
	if (ret >= 0) {
		printf("; %d RDMA-capable interface(s)\n", ret);
		smbdirect_interfaces_free(list, ret);
	} else {
		printf("; interfaces: %s\n", strerror(-ret));
	}
	return 0;
}
