// SPDX-License-Identifier: GPL-2.0
/*
 * sd_bench: throughput and latency between two AF_SMBDIRECT SOCK_STREAM
 * sockets, to be compared with perftest on the same device in the same run.
 *
 *   sd_bench bw  server|client ADDR PORT SECONDS MSGSIZE
 *   sd_bench lat server|client ADDR PORT ITERATIONS MSGSIZE
 *
 * bw: the client sends length-prefixed messages of MSGSIZE bytes for
 * SECONDS; the server counts them and prints "bw_MBps <MB/s>" (10^6 bytes,
 * as perftest reports MB/sec). lat: ping-pong of MSGSIZE-byte messages;
 * the client prints "lat_us <average round trip / 2>" (perftest's t_avg is
 * also half a round trip).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/smbdirect.h>

static int family(void)
{
	FILE *f = fopen(SMBDIRECT_FAMILY_SYSFS, "r");
	int nr = -1;

	if (!f || fscanf(f, "%d", &nr) != 1) {
		perror(SMBDIRECT_FAMILY_SYSFS);
		exit(2);
	}
	fclose(f);
	return nr;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void io_all(int fd, void *buf, size_t len, int writing)
{
	char *p = buf;

	while (len) {
		ssize_t n = writing ? send(fd, p, len, 0) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				fprintf(stderr, "sd_bench: peer closed\n");
			die(writing ? "send" : "recv");
		}
		p += n;
		len -= (size_t)n;
	}
}

static int open_conn(int server, const char *addr, int port)
{
	struct sockaddr_storage ss = {};
	socklen_t sl;
	int fd, one = 1;

	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1)
			die("inet_pton");
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
			die("inet_pton");
		sl = sizeof(*s4);
	}
	fd = socket(family(), SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	if (!server) {
		if (connect(fd, (struct sockaddr *)&ss, sl))
			die("connect");
		return fd;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 1))
		die("bind/listen");
	printf("listening\n");
	fflush(stdout);
	int c = accept(fd, NULL, NULL);

	if (c < 0)
		die("accept");
	close(fd);
	return c;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: %s bw|lat server|client ADDR PORT N MSGSIZE\n", argv[0]);
		return 2;
	}
	int bw = !strcmp(argv[1], "bw");
	int server = !strcmp(argv[2], "server");
	long n = atol(argv[5]);
	size_t size = (size_t)atol(argv[6]);
	int fd = open_conn(server, argv[3], atoi(argv[4]));
	unsigned char *buf = calloc(1, size + 4);
	unsigned char hdr[4] = { size >> 24, size >> 16, size >> 8, size };

	if (!buf)
		die("calloc");
	if (bw && !server) {
		double end = now() + (double)n;

		while (now() < end) {
			io_all(fd, hdr, 4, 1);
			io_all(fd, buf, size, 1);
		}
		/* End marker: a 1-byte message (data messages are larger). */
		hdr[0] = hdr[1] = hdr[2] = 0;
		hdr[3] = 1;
		io_all(fd, hdr, 4, 1);
		io_all(fd, buf, 1, 1);
		io_all(fd, buf, 5, 0);				/* wait for the ack */
	} else if (bw) {
		double t0 = 0, bytes = 0;

		for (;;) {
			io_all(fd, hdr, 4, 0);
			if (t0 == 0)
				t0 = now();
			size_t len = (size_t)hdr[0] << 24 | hdr[1] << 16 | hdr[2] << 8 | hdr[3];

			if (len > size)
				die("message larger than expected");
			io_all(fd, buf, len, 0);
			if (len == 1)
				break;
			bytes += len + 4;
		}
		double secs = now() - t0;

		printf("bw_MBps %.2f\n", bytes / secs / 1e6);
		/* The ack is a 1-byte message of its own. */
		hdr[0] = hdr[1] = hdr[2] = 0;
		hdr[3] = 1;
		io_all(fd, hdr, 4, 1);
		io_all(fd, buf, 1, 1);
	} else {
		double t0 = now();

		for (long i = 0; i < n; i++) {
			if (!server) {
				io_all(fd, hdr, 4, 1);
				io_all(fd, buf, size, 1);
			}
			io_all(fd, buf, size + 4, 0);
			if (server) {
				io_all(fd, hdr, 4, 1);
				io_all(fd, buf, size, 1);
			}
		}
		if (!server)
			printf("lat_us %.2f\n", (now() - t0) / (double)n / 2 * 1e6);
	}
	close(fd);
	return 0;
}
