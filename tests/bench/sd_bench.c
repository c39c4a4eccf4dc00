// SPDX-License-Identifier: GPL-2.0
/*
 * sd_bench: throughput and latency between two AF_SMBDIRECT sockets, to be
 * compared with perftest on the same device in the same run.
 *
 *   sd_bench bw     server|client ADDR PORT SECONDS    MSGSIZE
 *   sd_bench lat    server|client ADDR PORT ITERATIONS MSGSIZE
 *   sd_bench readv  server|client ADDR PORT N          SIZE
 *   sd_bench writev server|client ADDR PORT N          SIZE
 *   sd_bench reg    server|client ADDR PORT ITERATIONS SIZE
 *
 * Units. Throughput is printed twice: "<name>_MBps" in MB/s (10^6 bytes)
 * and "<name>_MiBps" in MiB/s (2^20 bytes). perftest's "BW average[MB/sec]"
 * column is MiB/s (it divides by 0x100000; its --help says so), so ratios
 * against perftest must use the _MiBps figure.
 *
 * bw (SOCK_STREAM): the client sends length-prefixed messages of MSGSIZE
 * bytes for SECONDS; the server counts them and prints bw_MBps/bw_MiBps.
 *
 * lat (SOCK_STREAM): ping-pong of MSGSIZE-byte messages; the client prints
 * "lat_us <average round trip / 2>" (perftest's t_avg is also half a round
 * trip).
 *
 * readv / writev (SOCK_SEQPACKET): the SMB3 READ/WRITE offload. The client
 * mmaps SIZE bytes, fills them, registers them once (SMBDIRECT_IOC_REGISTER,
 * PEER_READ|PEER_WRITE) and sends the descriptors in one message. The
 * server moves SIZE bytes per SMBDIRECT_IOC_RDMA_READV (from the client's
 * buffer) or SMBDIRECT_IOC_RDMA_WRITEV (into it) in a loop, one call after
 * the other, and prints rdma_read_MBps / rdma_write_MBps (and _MiBps). N is
 * seconds ("5" or "5s") or a number of calls ("200i"). One untimed call
 * comes first; it also checks the data (READV: the server compares what it
 * read; WRITEV: the client compares its buffer at the end). The server then
 * sends an end message, the client deregisters, reports, and closes.
 *
 * reg (SOCK_SEQPACKET): on a connected socket the client registers
 * (PEER_WRITE) and deregisters a resident SIZE-byte buffer ITERATIONS times
 * (after 10 untimed pairs) and prints reg_dereg_us (mean per pair), reg_us
 * and dereg_us (mean per call) and reg_dereg_min_us.
 *
 * Errors of the ioctls are printed as "sd_bench: <ioctl>: <strerror>" and
 * the program exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
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
	fprintf(stderr, "sd_bench: %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static void fail(const char *msg)
{
	fprintf(stderr, "sd_bench: %s\n", msg);
	fflush(stdout);
	exit(1);
}

static void io_all(int fd, void *buf, size_t len, int writing)
{
	char *p = buf;

	while (len) {
		ssize_t n = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				fail("peer closed");
			die(writing ? "send" : "recv");
		}
		p += n;
		len -= (size_t)n;
	}
}

static int open_conn(int server, const char *addr, int port, int type)
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
	fd = socket(family(), type, 0);
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

/* ---- SOCK_STREAM: bw and lat ---- */

static void stream_bench(int fd, int bw, int server, long n, size_t size)
{
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
				fail("message larger than expected");
			io_all(fd, buf, len, 0);
			if (len == 1)
				break;
			bytes += len + 4;
		}
		double secs = now() - t0;

		printf("bw_MBps %.2f\n", bytes / secs / 1e6);
		printf("bw_MiBps %.2f\n", bytes / secs / 1048576);
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
	free(buf);
}

/* ---- SOCK_SEQPACKET: readv, writev, reg ---- */

/* The message that carries the client's registration to the server. */
struct desc_msg {
	char magic[4];			/* "SDBD" */
	uint32_t count;			/* descriptors that follow */
	uint64_t size;			/* bytes registered */
	struct smbdirect_buffer_descriptor_v1 desc[];
};

#define END_MSG "end"
#define DONE_MSG "done"

static void send_msg(int fd, const void *buf, size_t len)
{
	ssize_t n;

	do
		n = send(fd, buf, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		die("send");
	if ((size_t)n != len)
		fail("short SEQPACKET send");
}

/* One message; 0 on EOF. */
static size_t recv_msg(int fd, void *buf, size_t cap)
{
	struct iovec iov = { buf, cap };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	do
		n = recvmsg(fd, &mh, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		die("recv");
	if (mh.msg_flags & MSG_TRUNC)
		fail("message truncated");
	return (size_t)n;
}

static void *map_buf(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* A pattern of 64-bit words that differs per word and per seed. */
static uint64_t pattern(size_t word, unsigned seed)
{
	return (word + 1) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)seed << 56;
}

static void fill(void *p, size_t size, unsigned seed)
{
	uint64_t *w = p;

	for (size_t i = 0; i < size / 8; i++)
		w[i] = pattern(i, seed);
}

/* Byte offset of the first differing word, or -1. */
static long check(const void *p, size_t size, unsigned seed)
{
	const uint64_t *w = p;

	for (size_t i = 0; i < size / 8; i++)
		if (w[i] != pattern(i, seed))
			return (long)(i * 8);
	return -1;
}

static struct smbdirect_params get_params(int fd)
{
	struct smbdirect_params p = { .size = sizeof(p) };

	if (ioctl(fd, SMBDIRECT_IOC_GET_PARAMS, &p))
		die("SMBDIRECT_IOC_GET_PARAMS");
	return p;
}

/* Registers [buf, buf + size); the descriptors are left in *msg. */
static uint64_t do_register(int fd, void *buf, size_t size, uint32_t flags,
			    struct desc_msg **msg)
{
	struct iovec iov = { buf, size };
	uint32_t room = 64;

	for (;;) {
		struct desc_msg *m = realloc(*msg, sizeof(*m) + room * sizeof(m->desc[0]));
		struct smbdirect_register r = {
			.size = sizeof(r),
			.flags = flags,
			.iov = (uintptr_t)&iov,
			.iov_count = 1,
			.desc_count = room,
		};

		if (!m)
			die("realloc");
		*msg = m;
		r.desc = (uintptr_t)m->desc;
		if (ioctl(fd, SMBDIRECT_IOC_REGISTER, &r) == 0) {
			memcpy(m->magic, "SDBD", 4);
			m->count = r.desc_count;
			m->size = size;
			return r.id;
		}
		if (errno != ENOSPC || r.desc_count <= room)
			die("SMBDIRECT_IOC_REGISTER");
		room = r.desc_count;
	}
}

static uint32_t do_deregister(int fd, uint64_t id)
{
	struct smbdirect_deregister d = { .size = sizeof(d), .id = id };

	if (ioctl(fd, SMBDIRECT_IOC_DEREGISTER, &d))
		die("SMBDIRECT_IOC_DEREGISTER");
	return d.state;
}

/* "5" or "5s": seconds; "200i": calls. */
static void parse_n(const char *s, double *secs, long *iters)
{
	char *end;
	double v = strtod(s, &end);

	*secs = 0;
	*iters = 0;
	if (v <= 0 || (*end && strcmp(end, "s") && strcmp(end, "i")))
		fail("N must be SECONDS, SECONDSs or ITERATIONSi");
	if (*end == 'i')
		*iters = (long)v;
	else
		*secs = v;
}

static void rdma_client(int fd, int reading, size_t size)
{
	struct desc_msg *msg = NULL;
	void *buf = map_buf(size);
	char end[16];

	/* READV: the server reads this; WRITEV: it is overwritten. */
	fill(buf, size, reading ? 1 : 0x55);
	uint64_t id = do_register(fd, buf, size, SMBDIRECT_ACCESS_PEER_READ |
				  SMBDIRECT_ACCESS_PEER_WRITE, &msg);

	printf("registered %zu bytes in %u descriptor(s)\n", size, msg->count);
	fflush(stdout);
	send_msg(fd, msg, sizeof(*msg) + msg->count * sizeof(msg->desc[0]));
	size_t n = recv_msg(fd, end, sizeof(end));

	if (n != sizeof(END_MSG) || memcmp(end, END_MSG, n))
		fail(n ? "unexpected message instead of the end message" :
			 "peer closed before the end message");
	uint32_t state = do_deregister(fd, id);

	printf("deregistered, state %#x\n", state);
	if (!reading) {
		long bad = check(buf, size, 2);

		if (bad >= 0)
			printf("verify FAILED: client buffer differs at offset %ld\n", bad);
		else
			printf("verify ok (client buffer holds what the server wrote)\n");
	}
	send_msg(fd, DONE_MSG, sizeof(DONE_MSG));
	/* Wait for the server to close: the connection outlives our calls. */
	recv_msg(fd, end, sizeof(end));
	munmap(buf, size);
	free(msg);
}

static void rdma_server(int fd, int reading, size_t size, const char *nspec)
{
	struct smbdirect_params p = get_params(fd);
	size_t cap = sizeof(struct desc_msg) +
		     SMBDIRECT_DESC_MAX * sizeof(struct smbdirect_buffer_descriptor_v1);
	struct desc_msg *msg = malloc(cap);
	void *buf = map_buf(size);
	const char *name = reading ? "SMBDIRECT_IOC_RDMA_READV" :
				     "SMBDIRECT_IOC_RDMA_WRITEV";
	unsigned long cmd = reading ? SMBDIRECT_IOC_RDMA_READV :
				      SMBDIRECT_IOC_RDMA_WRITEV;
	double secs, t0 = 0, t = 0;
	long iters, done = 0;

	parse_n(nspec, &secs, &iters);
	printf("params: max_read_write_size %u initiator_depth %u responder_resources %u transport %u\n",
	       p.max_read_write_size, p.initiator_depth, p.responder_resources,
	       p.transport);
	if (size > p.max_read_write_size)
		fprintf(stderr, "sd_bench: warning: %zu bytes per call > max_read_write_size %u (EMSGSIZE expected)\n",
			size, p.max_read_write_size);
	if (!msg)
		die("malloc");
	size_t n = recv_msg(fd, msg, cap);

	if (n == 0)
		fail("peer closed before sending its descriptors");
	if (n < sizeof(*msg) || memcmp(msg->magic, "SDBD", 4) ||
	    n != sizeof(*msg) + msg->count * sizeof(msg->desc[0]))
		fail("bad descriptor message");
	if (msg->size != size)
		fail("client registered a different size");
	printf("peer buffer: %zu bytes in %u descriptor(s)\n", size, msg->count);
	fill(buf, size, reading ? 0x55 : 2);

	struct iovec iov = { buf, size };
	struct smbdirect_rdma r;
	/* One call, untimed, that also checks the data for READV. */
	for (long i = -1; ; i++) {
		if (i == 0) {
			if (reading) {
				long bad = check(buf, size, 1);

				if (bad >= 0)
					printf("verify FAILED: read data differ at offset %ld\n", bad);
				else
					printf("verify ok (read data match the client's)\n");
			}
			fflush(stdout);
			t0 = now();
		}
		if (i >= 0) {
			t = now();
			if (iters ? i >= iters : t - t0 >= secs)
				break;
		}
		r = (struct smbdirect_rdma){
			.size = sizeof(r),
			.iov = (uintptr_t)&iov,
			.iov_count = 1,
			.desc_count = msg->count,
			.desc = (uintptr_t)msg->desc,
		};
		if (ioctl(fd, cmd, &r)) {
			if (errno == EINTR) {
				i--;
				continue;
			}
			die(name);
		}
		if (r.bytes != size) {
			fprintf(stderr, "sd_bench: %s moved %llu bytes, not %zu\n",
				name, (unsigned long long)r.bytes, size);
			exit(1);
		}
		if (i >= 0)
			done++;
	}
	double el = t - t0, bytes = (double)done * (double)size;
	const char *what = reading ? "rdma_read" : "rdma_write";

	printf("%s_calls %ld in %.3f s, %.1f us per call\n", what, done, el,
	       el / (double)done * 1e6);
	printf("%s_MBps %.2f\n", what, bytes / el / 1e6);
	printf("%s_MiBps %.2f\n", what, bytes / el / 1048576);
	fflush(stdout);
	send_msg(fd, END_MSG, sizeof(END_MSG));
	char done_msg[16];

	n = recv_msg(fd, done_msg, sizeof(done_msg));
	if (n != sizeof(DONE_MSG) || memcmp(done_msg, DONE_MSG, n))
		fail("no done message from the client");
	munmap(buf, size);
	free(msg);
}

static void reg_client(int fd, long n, size_t size)
{
	struct desc_msg *msg = NULL;
	void *buf = map_buf(size);
	double reg = 0, dereg = 0, min = 1e9;

	fill(buf, size, 3);
	for (long i = -10; i < n; i++) {
		double t0 = now();
		uint64_t id = do_register(fd, buf, size, SMBDIRECT_ACCESS_PEER_WRITE, &msg);
		double t1 = now();

		do_deregister(fd, id);
		double t2 = now();

		if (i < 0)
			continue;
		reg += t1 - t0;
		dereg += t2 - t1;
		if (t2 - t0 < min)
			min = t2 - t0;
	}
	printf("reg: %ld pairs of %zu bytes, %u descriptor(s)\n", n, size, msg->count);
	printf("reg_dereg_us %.2f\n", (reg + dereg) / (double)n * 1e6);
	printf("reg_us %.2f\n", reg / (double)n * 1e6);
	printf("dereg_us %.2f\n", dereg / (double)n * 1e6);
	printf("reg_dereg_min_us %.2f\n", min * 1e6);
	fflush(stdout);
	send_msg(fd, END_MSG, sizeof(END_MSG));
	free(msg);
	munmap(buf, size);
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: %s bw|lat|readv|writev|reg server|client ADDR PORT N SIZE\n",
			argv[0]);
		return 2;
	}
	const char *mode = argv[1];
	int server = !strcmp(argv[2], "server");
	long n = atol(argv[5]);
	size_t size = (size_t)atol(argv[6]);
	int stream = !strcmp(mode, "bw") || !strcmp(mode, "lat");
	int rdma = !strcmp(mode, "readv") || !strcmp(mode, "writev");

	if (!stream && !rdma && strcmp(mode, "reg"))
		fail("unknown mode");
	if (!size || (!rdma && n <= 0))
		fail("bad N or SIZE");
	setvbuf(stdout, NULL, _IOLBF, 0);
	int fd = open_conn(server, argv[3], atoi(argv[4]),
			   stream ? SOCK_STREAM : SOCK_SEQPACKET);

	if (stream) {
		stream_bench(fd, !strcmp(mode, "bw"), server, n, size);
	} else if (rdma) {
		if (server)
			rdma_server(fd, !strcmp(mode, "readv"), size, argv[5]);
		else
			rdma_client(fd, !strcmp(mode, "readv"), size);
	} else if (server) {
		char end[16];

		if (recv_msg(fd, end, sizeof(end)) == 0)
			fail("peer closed before the end message");
	} else {
		reg_client(fd, n, size);
	}
	close(fd);
	return 0;
}
