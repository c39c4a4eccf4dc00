// SPDX-License-Identifier: GPL-2.0
/*
 * AF_SMBDIRECT sockets end to end, over each transport the guest offers
 * (rxe = RoCEv2, siw = iWARP) and each address family: connect/accept and
 * the addresses they report, echo, every message size that sits on a
 * fragmentation edge, the negotiated-size limit, GET_PARAMS, and the
 * SOL_SMBDIRECT options (before connect they shape the negotiation, after
 * it they are refused).
 */
#include <stddef.h>

#include "kselftest_harness.h"
#include "sd_test.h"

FIXTURE(sock) {
	int c, s;		/* connected client and accepted server */
	struct smbdirect_params cp, sp;
};

SD_TARGET_VARIANT(sock);

SD_ADD_TARGET_VARIANTS(sock);

FIXTURE_SETUP(sock)
{
	self->c = self->s = -1;
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(sock)
{
	sd_teardown_pair(self->c, self->s, 0);
}

#define PARAMS() do {							\
	ASSERT_EQ(0, sd_get_params(self->c, &self->cp));		\
	ASSERT_EQ(0, sd_get_params(self->s, &self->sp));		\
} while (0)

static int same_address(const struct sockaddr_storage *a,
			const struct sockaddr_storage *b, int with_port)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (with_port && sd_port_of(a) != sd_port_of(b))
		return 0;
	if (a->ss_family == AF_INET)
		return !memcmp(&((struct sockaddr_in *)a)->sin_addr,
			       &((struct sockaddr_in *)b)->sin_addr, 4);
	return !memcmp(&((struct sockaddr_in6 *)a)->sin6_addr,
		       &((struct sockaddr_in6 *)b)->sin6_addr, 16);
}

TEST_F(sock, connect_accept_addresses)
{
	struct sockaddr_storage want, cl, cp, sl, sp;
	socklen_t len;
	int v;

	PAIR(SOCK_STREAM);
	sd_addr(&variant->t, 0, &want);

	len = sizeof(cl);
	ASSERT_EQ(0, getsockname(self->c, (struct sockaddr *)&cl, &len));
	len = sizeof(cp);
	ASSERT_EQ(0, getpeername(self->c, (struct sockaddr *)&cp, &len));
	len = sizeof(sl);
	ASSERT_EQ(0, getsockname(self->s, (struct sockaddr *)&sl, &len));
	len = sizeof(sp);
	ASSERT_EQ(0, getpeername(self->s, (struct sockaddr *)&sp, &len));

	EXPECT_TRUE(same_address(&cp, &want, 0));
	EXPECT_TRUE(same_address(&cl, &want, 0));
	EXPECT_LT(0, sd_port_of(&cl));
	/* Each end sees the other's address and port. */
	EXPECT_TRUE(same_address(&cp, &sl, 1));
	EXPECT_TRUE(same_address(&sp, &cl, 1));

	len = sizeof(v);
	ASSERT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_TYPE, &v, &len));
	EXPECT_EQ(SOCK_STREAM, v);
	len = sizeof(v);
	ASSERT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_DOMAIN, &v, &len));
	EXPECT_EQ(sd_stream_domain(), v);
	len = sizeof(v);
	ASSERT_EQ(0, getsockopt(self->c, SOL_SOCKET, SO_ERROR, &v, &len));
	EXPECT_EQ(0, v);
}

TEST_F(sock, connect_without_listener_is_refused)
{
	int port, lfd, fd;
	long t0;

	/* A port that was free a moment ago and has no listener now. */
	lfd = sd_listen_type(&variant->t, SOCK_STREAM, 1, &port);
	ASSERT_LE(0, lfd) TH_LOG("listen: %s", strerror(-lfd));
	close(lfd);
	t0 = sd_now_ms();
	fd = sd_connect_type(&variant->t, SOCK_STREAM, port);
	EXPECT_EQ(-ECONNREFUSED, fd) TH_LOG("connect gave %s", fd < 0 ? strerror(-fd) : "a socket");
	EXPECT_GT(SD_STEP_MS, sd_now_ms() - t0);
	if (fd >= 0)
		close(fd);
}

/*
 * As TCP: a refused connect() leaves a socket that may connect again; a
 * non-blocking attempt that failed reports its error to the connect()
 * that follows EINPROGRESS, and the next one starts afresh.
 */
TEST_F(sock, failed_connect_can_be_retried)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int port, lfd, r, e;
	char buf[8];

	lfd = sd_listen_type(&variant->t, SOCK_STREAM, 1, &port);
	ASSERT_LE(0, lfd) TH_LOG("listen: %s", strerror(-lfd));
	close(lfd);
	len = sd_addr(&variant->t, port, &ss);
	self->c = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, self->c);
	sd_set_timeouts(self->c, SD_STEP_MS);
	r = connect(self->c, (struct sockaddr *)&ss, len);
	e = errno;
	EXPECT_EQ(-1, r);
	EXPECT_EQ(ECONNREFUSED, e) TH_LOG("first connect: %s", strerror(e));

	fcntl(self->c, F_SETFL, O_NONBLOCK);
	r = connect(self->c, (struct sockaddr *)&ss, len);
	e = errno;
	ASSERT_EQ(-1, r);
	if (e == EINPROGRESS) {
		EXPECT_LT(0, sd_poll(self->c, POLLOUT, SD_STEP_MS));
		r = connect(self->c, (struct sockaddr *)&ss, len);
		e = errno;
		EXPECT_EQ(-1, r);
	}
	EXPECT_EQ(ECONNREFUSED, e) TH_LOG("non-blocking attempt: %s", strerror(e));
	fcntl(self->c, F_SETFL, 0);

	/* A listener on that port now: the same socket connects. */
	lfd = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, bind(lfd, (struct sockaddr *)&ss, len)) TH_LOG("bind: %s", strerror(errno));
	ASSERT_EQ(0, listen(lfd, 1));
	r = connect(self->c, (struct sockaddr *)&ss, len);
	e = errno;
	EXPECT_EQ(0, r) TH_LOG("connect after the refusals: %s", strerror(e));
	self->s = sd_accept_ms(lfd, SD_STEP_MS);
	close(lfd);
	ASSERT_LE(0, self->s) TH_LOG("accept: %s", strerror(-self->s));
	ASSERT_EQ(0, sd_stream_send(self->c, "again", 5));
	EXPECT_EQ(5, sd_stream_recv(self->s, buf, sizeof(buf)));
}

/*
 * Closing a listener ends the connections still waiting in its queue:
 * their clients read the end (EOF, or ECONNRESET as TCP's RST) at once.
 * The children's teardown takes their socket locks inside the listener's,
 * which lockdep reported as recursive locking until it was annotated; the
 * VM run fails on any such report.
 */
TEST_F(sock, listener_close_ends_queued_connections)
{
	int port, lfd, i, e;
	int *fds[2] = { &self->c, &self->s };
	ssize_t n;
	char c;

	lfd = sd_listen_type(&variant->t, SOCK_SEQPACKET, 4, &port);
	ASSERT_LE(0, lfd) TH_LOG("listen: %s", strerror(-lfd));
	for (i = 0; i < 2; i++)
		*fds[i] = sd_connect_type(&variant->t, SOCK_SEQPACKET, port);
	/* Both negotiated; the listener has at least one ready for accept(). */
	e = sd_poll(lfd, POLLIN, SD_STEP_MS);
	close(lfd);
	EXPECT_TRUE(e > 0 && (e & POLLIN)) TH_LOG("listener revents %d", e);
	for (i = 0; i < 2; i++) {
		ASSERT_LE(0, *fds[i]) TH_LOG("connect %d: %s", i, strerror(-*fds[i]));
		sd_set_timeouts(*fds[i], SD_STEP_MS);
		n = recv(*fds[i], &c, 1, 0);
		e = errno;
		EXPECT_TRUE(n == 0 || (n < 0 && e == ECONNRESET))
			TH_LOG("client %d read %s", i, n < 0 ? strerror(e) : "data");
	}
}

#define PORT_RANGE "/proc/sys/net/ipv4/ip_local_port_range"

/* A plain TCP listener on the target's wildcard, no SO_REUSEADDR. */
static int tcp_listener(int af, int port)
{
	struct sockaddr_storage ss = { .ss_family = af };
	int fd = socket(af, SOCK_STREAM, 0);

	if (fd < 0)
		return -errno;
	if (af == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
	if (bind(fd, (struct sockaddr *)&ss, sizeof(ss)) || listen(fd, 1)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * bind(port 0) must give a port siw can listen on: rdma_cm picks it from
 * its own table, which does not see TCP sockets, and over iWARP the
 * listener is a TCP socket on that port. A port a TCP socket held made
 * listen() fail with EADDRINUSE (once in make check, beside a CPU hog).
 * The local port range shrinks to two ports, P held by a plain TCP
 * listener; rdma_cm never gives the port it gave last, so it alternates
 * and the second round at the latest gets P without the module's check.
 * Then, with the range back, a client connects to the last listener.
 */
TEST_F_TIMEOUT(sock, autobound_port_is_free_in_tcp, 60)
{
	struct sockaddr_storage ss;
	char saved[64] = "", range[64];
	int tcp = -1, probe, p = 0, port = 0, lfd = -1, i, ok = 1;
	FILE *f;
	socklen_t len;

	if (strcmp(variant->t.kind, "siw"))
		SKIP(return, "rdma_cm's ports meet TCP's over iWARP only");
	f = fopen(PORT_RANGE, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(saved, sizeof(saved), f));
	fclose(f);
	/* P from TCP itself, with P + 1 free too. */
	for (i = 0; i < 20 && tcp < 0; i++) {
		tcp = tcp_listener(variant->t.af, 0);
		ASSERT_LE(0, tcp) TH_LOG("tcp listen: %s", strerror(-tcp));
		len = sizeof(ss);
		ASSERT_EQ(0, getsockname(tcp, (struct sockaddr *)&ss, &len));
		p = sd_port_of(&ss);
		probe = p < 65535 ? tcp_listener(variant->t.af, p + 1) : -1;
		if (probe >= 0) {
			close(probe);
			continue;
		}
		close(tcp);
		tcp = -1;
	}
	ASSERT_LE(0, tcp);
	snprintf(range, sizeof(range), "%d %d", p, p + 1);
	ASSERT_EQ(0, sd_write_str(PORT_RANGE, range));
	for (i = 0; i < 4 && ok; i++) {
		if (lfd >= 0)
			close(lfd);
		lfd = sd_listen_type(&variant->t, SOCK_STREAM, 1, &port);
		ok = lfd >= 0 && port == p + 1;
	}
	sd_write_str(PORT_RANGE, saved);
	close(tcp);
	ASSERT_LE(0, lfd) TH_LOG("round %d: listen: %s", i, strerror(-lfd));
	ASSERT_EQ(p + 1, port) TH_LOG("round %d: the port TCP holds", i);
	self->c = sd_connect_type(&variant->t, SOCK_STREAM, port);
	if (self->c >= 0)
		self->s = sd_accept_ms(lfd, SD_STEP_MS);
	close(lfd);
	ASSERT_LE(0, self->c) TH_LOG("connect: %s", strerror(-self->c));
	ASSERT_LE(0, self->s) TH_LOG("accept: %s", strerror(-self->s));
}

TEST_F(sock, bind_conflict_and_foreign_family)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int port, lfd, fd;
	struct sockaddr bad = { .sa_family = AF_UNIX };

	lfd = sd_listen_type(&variant->t, SOCK_STREAM, 1, &port);
	ASSERT_LE(0, lfd) TH_LOG("listen: %s", strerror(-lfd));
	fd = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, fd);
	len = sd_addr(&variant->t, port, &ss);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EADDRINUSE, errno);
	/* Only sockaddr_in / sockaddr_in6 are addresses of this family. */
	errno = 0;
	EXPECT_EQ(-1, bind(fd, &bad, sizeof(bad)));
	EXPECT_TRUE(errno == EAFNOSUPPORT || errno == EINVAL) TH_LOG("errno %d", errno);
	close(fd);
	close(lfd);
}

struct echo_job {
	int fd, type;
	size_t cap;
	long messages;		/* out: messages echoed */
	int err;		/* out: -errno that ended it other than EOF */
	/*
	 * Messages longer than this (0: none) are not echoed but checked
	 * here against the pattern seeded with their length, and answered
	 * with a 4-byte int: the offset of the first wrong byte, or -1.
	 * The largest messages then cross the slow debug-kernel link once.
	 */
	size_t verify_over;
	pthread_t thread;
};

/* Echoes every message back until EOF. */
static void *echo_thread(void *arg)
{
	struct echo_job *j = arg;
	char *buf = malloc(j->cap);
	long n;

	if (!buf) {
		j->err = -ENOMEM;
		return NULL;
	}
	for (;;) {
		n = sd_msg_recv(j->fd, j->type, buf, j->cap);
		if (n == -ENODATA)
			break;
		if (n < 0) {
			j->err = n;
			break;
		}
		if (j->verify_over && (size_t)n > j->verify_over) {
			int32_t bad = (int32_t)sd_check(buf, n, (uint32_t)n);

			j->err = sd_msg_send(j->fd, j->type, &bad, sizeof(bad));
		} else {
			j->err = sd_msg_send(j->fd, j->type, buf, n);
		}
		if (j->err)
			break;
		j->messages++;
	}
	free(buf);
	return NULL;
}

/*
 * Sends each size to the echo thread and checks what comes back; returns
 * the number of sizes that came back intact. verify_over as in echo_job.
 */
static int echo_sizes(struct __test_metadata *_metadata, int fd, int type,
		      const size_t *sizes, int count, size_t cap, size_t verify_over)
{
	char *out = malloc(cap), *in = malloc(cap);
	int i, good = 0;
	long n, bad;

	if (!out || !in)
		goto done;
	for (i = 0; i < count; i++) {
		int one_way = verify_over && sizes[i] > verify_over;

		sd_fill(out, sizes[i], one_way ? (uint32_t)sizes[i] : (uint32_t)(1000 + i));
		n = sd_msg_send(fd, type, out, sizes[i]);
		EXPECT_EQ(0, n) TH_LOG("send %zu: %s", sizes[i], strerror(-n));
		if (n)
			break;
		if (one_way) {
			int32_t verdict = 0;

			n = sd_msg_recv(fd, type, &verdict, sizeof(verdict));
			EXPECT_EQ((long)sizeof(verdict), n) TH_LOG("verdict on %zu: %ld", sizes[i], n);
			EXPECT_EQ(-1, verdict) TH_LOG("%zu-byte message arrived wrong at %d",
						      sizes[i], verdict);
			good += n == sizeof(verdict) && verdict == -1;
			if (n != sizeof(verdict))
				break;
			continue;
		}
		memset(in, 0, sizes[i]);
		n = sd_msg_recv(fd, type, in, cap);
		EXPECT_EQ((long)sizes[i], n) TH_LOG("echo of %zu: %ld (%s)", sizes[i], n,
						    n < 0 ? strerror(-n) : "short");
		if (n != (long)sizes[i])
			break;
		bad = sd_check(in, sizes[i], 1000 + i);
		EXPECT_EQ(-1, bad) TH_LOG("%zu-byte message wrong at %ld", sizes[i], bad);
		good += bad == -1;
	}
done:
	free(out);
	free(in);
	return good;
}

/*
 * Many messages of scattered sizes, one to a dozen PDUs each (the edges
 * and the large sizes are message_sizes_*'s): kept to a volume the debug
 * kernel under TCG echoes in seconds.
 */
#define ECHO_COUNT 24

static void echo_many(struct __test_metadata *_metadata, int c, int s, int type)
{
	struct echo_job j = { .fd = s, .type = type, .cap = 65536 };
	size_t sizes[ECHO_COUNT];
	int i;

	for (i = 0; i < ECHO_COUNT; i++)
		sizes[i] = 1 + (i * 7919) % 16384;
	ASSERT_EQ(0, pthread_create(&j.thread, NULL, echo_thread, &j));
	EXPECT_EQ(ECHO_COUNT, echo_sizes(_metadata, c, type, sizes, ECHO_COUNT, 65536, 0));
	/* No half-close in SMB-Direct: the peer reads EOF once both are shut. */
	shutdown(c, SHUT_RDWR);
	pthread_join(j.thread, NULL);
	EXPECT_EQ(0, j.err) TH_LOG("echo side: %s", strerror(-j.err));
	EXPECT_EQ(ECHO_COUNT, j.messages);
}

TEST_F(sock, echo_stream)
{
	PAIR(SOCK_STREAM);
	echo_many(_metadata, self->c, self->s, SOCK_STREAM);
}

TEST_F(sock, echo_seqpacket)
{
	PAIR(SOCK_SEQPACKET);
	echo_many(_metadata, self->c, self->s, SOCK_SEQPACKET);
}

/*
 * The sizes on the edges of one PDU (max_send_size, and what is left of it
 * after the 24-byte data-transfer header), of pages, 1 MiB, and the
 * largest message the peer takes.
 */
static int edge_sizes(const struct smbdirect_params *p, size_t *sizes)
{
	size_t payload = p->max_send_size - 24;
	size_t list[] = {
		1, 2, 4095, 4096, 4097,
		payload - 1, payload, payload + 1,
		p->max_send_size - 1, p->max_send_size, p->max_send_size + 1,
		2 * payload, 2 * payload + 1,
		1 << 20, p->max_fragmented_send_size - 1, p->max_fragmented_send_size,
	};
	int i, k, n = 0;

	for (i = 0; i < (int)(sizeof(list) / sizeof(list[0])); i++) {
		if (list[i] == 0 || list[i] > p->max_fragmented_send_size)
			continue;
		/* 1 MiB is also the default largest: once is enough. */
		for (k = 0; k < n && sizes[k] != list[i]; k++)
			;
		if (k == n)
			sizes[n++] = list[i];
	}
	return n;
}

static void message_sizes(struct __test_metadata *_metadata,
			  FIXTURE_DATA(sock) *self, int type)
{
	/* Up to 64 KiB echoed whole; 1 MiB and the largest travel one way. */
	struct echo_job j = { .fd = self->s, .type = type, .verify_over = 65536 };
	size_t sizes[32];
	int n;

	ASSERT_EQ(0, sd_get_params(self->c, &self->cp));
	ASSERT_EQ(0, sd_get_params(self->s, &self->sp));
	ASSERT_LT(24U, self->cp.max_send_size);
	/* The echo goes back the other way: both directions' limits apply. */
	ASSERT_EQ(self->cp.max_fragmented_send_size, self->sp.max_fragmented_receive_size);
	n = edge_sizes(&self->cp, sizes);
	if (self->sp.max_fragmented_send_size < self->cp.max_fragmented_send_size)
		n = edge_sizes(&self->sp, sizes);
	TH_LOG("max_send_size %u, max_fragmented_send_size %u, %d sizes",
	       self->cp.max_send_size, self->cp.max_fragmented_send_size, n);
	j.cap = self->sp.max_fragmented_receive_size + 4;
	ASSERT_EQ(0, pthread_create(&j.thread, NULL, echo_thread, &j));
	EXPECT_EQ(n, echo_sizes(_metadata, self->c, type, sizes, n, j.cap, j.verify_over));
	shutdown(self->c, SHUT_RDWR);
	pthread_join(j.thread, NULL);
	EXPECT_EQ(0, j.err) TH_LOG("echo side: %s", strerror(-j.err));
}

TEST_F_TIMEOUT(sock, message_sizes_stream, 120)
{
	PAIR(SOCK_STREAM);
	message_sizes(_metadata, self, SOCK_STREAM);
}

TEST_F_TIMEOUT(sock, message_sizes_seqpacket, 120)
{
	PAIR(SOCK_SEQPACKET);
	message_sizes(_metadata, self, SOCK_SEQPACKET);
}

/*
 * An empty message cannot travel: a data-transfer PDU without data is a
 * credit grant or keepalive. The UAPI makes an empty SEQPACKET send and a
 * zero STREAM prefix EINVAL; nothing of it is taken, the peer sees no
 * phantom message and the stream stays in step.
 */
static void zero_length(struct __test_metadata *_metadata, int c, int s, int type)
{
	uint32_t zero = 0;
	char one = 'x', buf[16];
	ssize_t n;
	long got;

	if (type == SOCK_STREAM)
		n = send(c, &zero, 4, MSG_NOSIGNAL);
	else
		n = send(c, &one, 0, MSG_NOSIGNAL);
	EXPECT_EQ(-1, n) TH_LOG("empty send gave %zd", n);
	EXPECT_EQ(EINVAL, errno) TH_LOG("empty send: %s", strerror(errno));
	ASSERT_EQ(0, sd_msg_send(c, type, &one, 1));
	got = sd_msg_recv(s, type, buf, sizeof(buf));
	EXPECT_EQ(1, got);
	EXPECT_EQ('x', buf[0]);
}

TEST_F(sock, zero_length_stream)
{
	PAIR(SOCK_STREAM);
	zero_length(_metadata, self->c, self->s, SOCK_STREAM);
}

TEST_F(sock, zero_length_seqpacket)
{
	PAIR(SOCK_SEQPACKET);
	zero_length(_metadata, self->c, self->s, SOCK_SEQPACKET);
}

/* One byte above the peer's MaxFragmentedSize is EMSGSIZE, and harmless. */
static void oversized(struct __test_metadata *_metadata, FIXTURE_DATA(sock) *self, int type)
{
	size_t big;
	char *buf, small[8];
	ssize_t n;

	ASSERT_EQ(0, sd_get_params(self->c, &self->cp));
	big = (size_t)self->cp.max_fragmented_send_size + 1;
	buf = calloc(1, big + 4);
	ASSERT_NE(NULL, buf);
	if (type == SOCK_STREAM) {
		uint32_t be = htonl(big);

		memcpy(buf, &be, 4);
		n = send(self->c, buf, big + 4, MSG_NOSIGNAL | MSG_DONTWAIT);
	} else {
		n = send(self->c, buf, big, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	EXPECT_EQ(-1, n);
	EXPECT_EQ(EMSGSIZE, errno);
	free(buf);
	/* Nothing of it was taken: the next message goes through as usual. */
	ASSERT_EQ(0, sd_msg_send(self->c, type, "after", 5));
	n = sd_msg_recv(self->s, type, small, sizeof(small));
	EXPECT_EQ(5, n);
	EXPECT_EQ(0, memcmp(small, "after", 5));
}

TEST_F(sock, oversized_stream_emsgsize)
{
	PAIR(SOCK_STREAM);
	oversized(_metadata, self, SOCK_STREAM);
}

TEST_F(sock, oversized_seqpacket_emsgsize)
{
	PAIR(SOCK_SEQPACKET);
	oversized(_metadata, self, SOCK_SEQPACKET);
}

static long module_param(const char *name)
{
	char path[128];
	long v = -1;

	snprintf(path, sizeof(path), "/sys/module/af_smbdirect/parameters/%s", name);
	return sd_read_long(path, &v) ? -1 : v;
}

TEST_F(sock, get_params_sane)
{
	const struct smbdirect_params *c = &self->cp, *s = &self->sp;
	long def;

	PAIR(SOCK_STREAM);
	PARAMS();
	EXPECT_EQ(sizeof(struct smbdirect_params), c->size);
	EXPECT_EQ(0x100U, c->version);
	EXPECT_EQ(0x100U, s->version);
	EXPECT_EQ(variant->t.transport, c->transport);
	EXPECT_EQ(variant->t.transport, s->transport);
	/* Effective send size: ours bounded by what the peer receives. */
	EXPECT_LT(24U, c->max_send_size);
	EXPECT_LT(24U, s->max_send_size);
	EXPECT_GE(s->max_receive_size, c->max_send_size);
	EXPECT_GE(c->max_receive_size, s->max_send_size);
	/* What one side may send in one message is what the other reassembles. */
	EXPECT_EQ(s->max_fragmented_receive_size, c->max_fragmented_send_size);
	EXPECT_EQ(c->max_fragmented_receive_size, s->max_fragmented_send_size);
	EXPECT_LE(131072U, c->max_fragmented_receive_size);
	EXPECT_LE(131072U, s->max_fragmented_receive_size);
	EXPECT_LT(0U, c->max_read_write_size);
	EXPECT_LT(0U, c->receive_credit_max);
	EXPECT_LT(0U, s->receive_credit_max);
	EXPECT_LT(0U, c->send_credit_target);
	/* Both ends negotiated with the same module defaults. */
	EXPECT_EQ(c->keepalive_interval, s->keepalive_interval);
	def = module_param("max_receive_size");
	if (def > 0) {
		EXPECT_EQ((__u32)def, c->max_receive_size);
		EXPECT_EQ((__u32)def, s->max_receive_size);
	}
	def = module_param("max_fragmented_size");
	if (def > 0)
		EXPECT_EQ((__u32)def, c->max_fragmented_receive_size);
	def = module_param("receive_credit_max");
	if (def > 0)
		EXPECT_EQ((__u32)def, c->receive_credit_max);
	def = module_param("keepalive_interval");
	if (def >= 0)
		EXPECT_EQ((__u32)def, c->keepalive_interval);
	TH_LOG("client: send %u recv %u frag send %u recv %u rw %u credits target %u max %u ird %u ord %u ka %u",
	       c->max_send_size, c->max_receive_size, c->max_fragmented_send_size,
	       c->max_fragmented_receive_size, c->max_read_write_size,
	       c->send_credit_target, c->receive_credit_max, c->initiator_depth,
	       c->responder_resources, c->keepalive_interval);
}

TEST_F(sock, get_params_requires_connection_and_size)
{
	struct smbdirect_params p;
	int fd = sd_socket(SOCK_STREAM);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTCONN, sd_get_params(fd, &p));
	close(fd);

	PAIR(SOCK_SEQPACKET);
	memset(&p, 0, sizeof(p));
	p.size = 0;
	EXPECT_EQ(-1, ioctl(self->c, SMBDIRECT_IOC_GET_PARAMS, &p));
	EXPECT_EQ(EINVAL, errno);
	p.size = 4;
	EXPECT_EQ(-1, ioctl(self->c, SMBDIRECT_IOC_GET_PARAMS, &p));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, sd_get_params(self->c, &p));
	EXPECT_EQ(0x100U, p.version);
	/*
	 * After the peer closed, what was negotiated stays readable (as
	 * getpeername): a server that answers and then asks must not race
	 * the client's close.
	 */
	close(self->c);
	self->c = -1;
	{
		char b[8];

		EXPECT_EQ(0, recv(self->s, b, sizeof(b), 0));
	}
	memset(&p, 0, sizeof(p));
	EXPECT_EQ(0, sd_get_params(self->s, &p));
	EXPECT_EQ(0x100U, p.version);
	EXPECT_EQ(variant->t.transport, p.transport);
}

/*
 * Options set before listen() and connect() decide the negotiation: the
 * accepted socket inherits the listener's, and each side's limits show up
 * on the other side.
 */
TEST_F_TIMEOUT(sock, options_before_connect_take_effect, 60)
{
	struct sd_connect_job j = { .t = &variant->t, .type = SOCK_SEQPACKET };
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(&variant->t, 0, &ss);
	int lfd = sd_socket(SOCK_SEQPACKET), v = 0;
	struct echo_job e = { .type = SOCK_SEQPACKET, .cap = 262144, .verify_over = 65536 };
	size_t size = 262144;
	char *buf;
	ssize_t n;

	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, sd_setopt(lfd, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, 2048));
	ASSERT_EQ(0, sd_setopt(lfd, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, 262144));
	ASSERT_EQ(0, sd_setopt(lfd, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 16));
	ASSERT_EQ(0, sd_setopt(lfd, SMBDIRECT_OPT_KEEPALIVE_INTERVAL, 0));
	ASSERT_EQ(0, sd_getopt(lfd, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, &v));
	EXPECT_EQ(262144, v);
	ASSERT_EQ(0, bind(lfd, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, listen(lfd, 1));
	len = sizeof(ss);
	ASSERT_EQ(0, getsockname(lfd, (struct sockaddr *)&ss, &len));
	j.port = sd_port_of(&ss);

	/* The client would send more per PDU than the server receives. */
	j.fd = sd_socket(SOCK_SEQPACKET);
	ASSERT_LE(0, j.fd);
	ASSERT_EQ(0, sd_setopt(j.fd, SMBDIRECT_OPT_MAX_SEND_SIZE, 4096));
	ASSERT_EQ(0, sd_setopt(j.fd, SMBDIRECT_OPT_SEND_CREDIT_TARGET, 32));
	self->c = j.fd;
	j.preset = 1;
	ASSERT_EQ(0, pthread_create(&j.thread, NULL, sd_connect_thread, &j));
	self->s = sd_accept_ms(lfd, SD_STEP_MS);
	pthread_join(j.thread, NULL);
	close(lfd);
	ASSERT_EQ(0, j.err) TH_LOG("connect: %s", strerror(-j.err));
	ASSERT_LE(0, self->s) TH_LOG("accept: %s", strerror(-self->s));
	sd_set_timeouts(self->c, SD_STEP_MS);
	sd_set_timeouts(self->s, SD_STEP_MS);
	PARAMS();

	/* Effective sizes: min(sender's send size, receiver's receive size). */
	EXPECT_EQ(2048U, self->cp.max_send_size);
	EXPECT_EQ(262144U, self->cp.max_fragmented_send_size);
	EXPECT_EQ(2048U, self->sp.max_receive_size);
	/* What the client asked of the server. */
	EXPECT_EQ(32U, self->sp.send_credit_target);
	EXPECT_EQ(262144U, self->sp.max_fragmented_receive_size);
	EXPECT_EQ(16U, self->sp.receive_credit_max);
	EXPECT_EQ(0U, self->sp.keepalive_interval);
	/* The server's send size is bounded by the client's receive size. */
	EXPECT_GE(self->cp.max_receive_size, self->sp.max_send_size);
	/* The accepted socket reports the listener's options. */
	v = 0;
	EXPECT_EQ(0, sd_getopt(self->s, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, &v));
	EXPECT_EQ(2048, v);

	/* And the limit is enforced: 256 KiB passes, one more byte does not. */
	buf = malloc(262145);
	ASSERT_NE(NULL, buf);
	sd_fill(buf, 262145, 7);
	e.fd = self->s;
	n = send(self->c, buf, 262145, MSG_NOSIGNAL | MSG_DONTWAIT);
	EXPECT_EQ(-1, n);
	EXPECT_EQ(EMSGSIZE, errno);
	ASSERT_EQ(0, pthread_create(&e.thread, NULL, echo_thread, &e));
	EXPECT_EQ(1, echo_sizes(_metadata, self->c, SOCK_SEQPACKET, &size, 1, 262145, 65536));
	shutdown(self->c, SHUT_RDWR);
	pthread_join(e.thread, NULL);
	EXPECT_EQ(0, e.err);
	free(buf);
}

TEST_F(sock, options_after_connect_eisconn)
{
	int opt, v = 0;

	PAIR(SOCK_STREAM);
	for (opt = SMBDIRECT_OPT_RECEIVE_CREDIT_MAX; opt <= SMBDIRECT_OPT_KEEPALIVE_INTERVAL; opt++) {
		/* Reading them stays allowed; writing even the same value back is not. */
		EXPECT_EQ(0, sd_getopt(self->c, opt, &v)) TH_LOG("option %d", opt);
		EXPECT_EQ(-EISCONN, sd_setopt(self->c, opt, v)) TH_LOG("option %d", opt);
		EXPECT_EQ(0, sd_getopt(self->s, opt, &v)) TH_LOG("option %d", opt);
		EXPECT_EQ(-EISCONN, sd_setopt(self->s, opt, v)) TH_LOG("option %d", opt);
	}
}

TEST_F(sock, options_nonsense_einval)
{
	int fd = sd_socket(SOCK_STREAM), v = 0;
	char byte = 1;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, sd_setopt(fd, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 0));
	EXPECT_EQ(-EINVAL, sd_setopt(fd, SMBDIRECT_OPT_SEND_CREDIT_TARGET, 0));
	EXPECT_EQ(-EINVAL, sd_setopt(fd, SMBDIRECT_OPT_MAX_SEND_SIZE, 0));
	EXPECT_EQ(-EINVAL, sd_setopt(fd, SMBDIRECT_OPT_MAX_SEND_SIZE, -1));
	EXPECT_EQ(-EINVAL, sd_setopt(fd, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, 0));
	/* [MS-SMBD]: MaxFragmentedSize is at least 131072. */
	EXPECT_EQ(-EINVAL, sd_setopt(fd, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, 131071));
	EXPECT_EQ(-EINVAL, sd_setopt(fd, SMBDIRECT_OPT_MAX_READ_WRITE_SIZE, 0));
	EXPECT_EQ(-EINVAL, sd_setopt(fd, SMBDIRECT_OPT_KEEPALIVE_INTERVAL, -1));
	EXPECT_EQ(-1, setsockopt(fd, SOL_SMBDIRECT, SMBDIRECT_OPT_MAX_SEND_SIZE, &byte, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-ENOPROTOOPT, sd_setopt(fd, 99, 1));
	/* A refused value leaves the option as it was, and it still takes a good one. */
	EXPECT_EQ(0, sd_setopt(fd, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, 131072));
	EXPECT_EQ(0, sd_getopt(fd, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, &v));
	EXPECT_EQ(131072, v);
	close(fd);
}

/*
 * SMBDIRECT_OPT_INFO, the TCP_INFO of the socket: the state in every
 * phase, credits that add up once connected, the queues as SIOCINQ and
 * SIOCOUTQ see them, truncation to a short buffer, and read-only.
 */
TEST_F(sock, info_states_credits_queues_acceptconn)
{
	struct smbdirect_info ci, si, small;
	struct smbdirect_params p;
	socklen_t len;
	int fd, lfd, port, inq = -1, v = 1;
	long t0;

	fd = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sd_info(fd, &ci));
	EXPECT_EQ(SMBDIRECT_STATE_UNCONNECTED, (int)ci.state);
	EXPECT_EQ(0U, ci.send_credits);
	EXPECT_EQ(0U, ci.receives_posted);
	EXPECT_EQ(-1, setsockopt(fd, SOL_SMBDIRECT, SMBDIRECT_OPT_INFO, &v, sizeof(v)));
	EXPECT_EQ(ENOPROTOOPT, errno);
	len = (socklen_t)-1;
	EXPECT_EQ(-1, getsockopt(fd, SOL_SMBDIRECT, SMBDIRECT_OPT_INFO, &ci, &len));
	EXPECT_EQ(EINVAL, errno);
	close(fd);

	lfd = sd_listen_type(&variant->t, SOCK_STREAM, 4, &port);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, sd_info(lfd, &ci));
	EXPECT_EQ(SMBDIRECT_STATE_LISTENING, (int)ci.state);
	/* As for TCP: SO_ACCEPTCONN is 1 on a listener only. */
	len = sizeof(v);
	ASSERT_EQ(0, getsockopt(lfd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len));
	EXPECT_EQ(1, v);
	close(lfd);

	PAIR(SOCK_STREAM);
	ASSERT_EQ(0, sd_get_params(self->c, &p));
	ASSERT_EQ(0, sd_info(self->c, &ci));
	/*
	 * The server's first credits come in the client's first PDU after
	 * the negotiation (the request grants none): wait for them, bounded.
	 */
	t0 = sd_now_ms();
	do {
		ASSERT_EQ(0, sd_info(self->s, &si));
	} while (!si.send_credits && sd_now_ms() - t0 < SD_STEP_MS);
	EXPECT_EQ(SMBDIRECT_STATE_CONNECTED, (int)ci.state);
	EXPECT_EQ(SMBDIRECT_STATE_CONNECTED, (int)si.state);
	EXPECT_LE(1U, ci.send_credits);
	EXPECT_LE(1U, si.send_credits);
	/* What we posted is at most what we keep posted; grants never exceed it. */
	EXPECT_GE(p.receive_credit_max, ci.receives_posted);
	EXPECT_GE(ci.receives_posted, ci.peer_credits);
	EXPECT_EQ(0U, ci.receives_held);
	EXPECT_EQ(0U, ci.rx_queued);
	len = sizeof(v);
	ASSERT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_ACCEPTCONN, &v, &len));
	EXPECT_EQ(0, v);

	/* A short buffer gets the first bytes: the state. */
	len = 4;
	memset(&small, 0xff, sizeof(small));
	ASSERT_EQ(0, getsockopt(self->c, SOL_SMBDIRECT, SMBDIRECT_OPT_INFO, &small, &len));
	EXPECT_EQ(4U, len);
	EXPECT_EQ(SMBDIRECT_STATE_CONNECTED, (int)small.state);
	EXPECT_EQ(0xffffffffU, small.send_credits);

	/* Received, not yet read: rx_queued is SIOCINQ. */
	ASSERT_EQ(0, sd_stream_send(self->c, "hello", 5));
	ASSERT_LT(0, sd_poll(self->s, POLLIN, SD_STEP_MS));
	t0 = sd_now_ms();
	do {
		ASSERT_EQ(0, sd_info(self->s, &si));
	} while (!si.rx_queued && sd_now_ms() - t0 < SD_STEP_MS);
	/* SIOCINQ is what read() returns: the message with its prefix. */
	ASSERT_EQ(0, ioctl(self->s, SIOCINQ, &inq));
	EXPECT_EQ((__u32)inq, si.rx_queued + 4);
	EXPECT_LT(0U, si.rx_queued);

	close(self->c);
	self->c = -1;
	t0 = sd_now_ms();
	do {
		ASSERT_EQ(0, sd_info(self->s, &si));
	} while (si.state != SMBDIRECT_STATE_CLOSED && sd_now_ms() - t0 < SD_STEP_MS);
	EXPECT_EQ(SMBDIRECT_STATE_CLOSED, (int)si.state);
}

/*
 * The kernel's struct tcp_info: glibc's <netinet/tcp.h> (which sd_test.h
 * needs, and which <linux/tcp.h> cannot join) ends at tcpi_total_retrans,
 * 104 bytes; the fields after it as <linux/tcp.h> lays them out.
 */
struct sd_tcp_info {
	struct tcp_info b;
	uint64_t tcpi_pacing_rate;
	uint64_t tcpi_max_pacing_rate;
	uint64_t tcpi_bytes_acked;
	uint64_t tcpi_bytes_received;
	uint32_t tcpi_segs_out;
	uint32_t tcpi_segs_in;
	uint32_t tcpi_notsent_bytes;
	uint32_t tcpi_min_rtt;
	uint32_t tcpi_data_segs_in;
	uint32_t tcpi_data_segs_out;
};
_Static_assert(offsetof(struct sd_tcp_info, tcpi_pacing_rate) == 104, "glibc's tcp_info");
_Static_assert(offsetof(struct sd_tcp_info, tcpi_notsent_bytes) == 144, "linux/tcp.h");

/* IPPROTO_TCP TCP_INFO of fd, its length in *len (in: the buffer's). */
static int tcp_info_of(int fd, struct sd_tcp_info *ti, socklen_t *len)
{
	memset(ti, 0xa5, sizeof(*ti));
	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, len) ? -errno : 0;
}

/*
 * TCP_INFO, SIOCINQ and SIOCOUTQ read as a TCP program expects (issue
 * #23: smbd's oplock break reads tcpi_rto, then waits for SIOCOUTQ to
 * show its break acknowledged, and ends the client's connection if either
 * fails): the state in every phase, an RTO inside TCP's bounds and an
 * RTT once sends completed, the PDU sizes as MSS, the byte counts; FIONREAD
 * counts the 4-byte prefixes read() returns; SIOCOUTQ never counts more
 * than the program wrote and reaches 0 once the peer has everything.
 */
TEST_F(sock, tcp_info_inq_outq_as_tcp)
{
	static char buf[65536 + 4];
	struct smbdirect_params p;
	struct sd_tcp_info ti;
	socklen_t len;
	int fd, lfd, port, inq, outq, small = 16384;
	long t0, written = 0, n;
	char rd[16];

	fd = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, fd);
	len = sizeof(ti);
	ASSERT_EQ(0, tcp_info_of(fd, &ti, &len));
	EXPECT_EQ((socklen_t)sizeof(ti), len);
	EXPECT_EQ(TCP_CLOSE, ti.b.tcpi_state);
	/* No sample yet: RFC 6298's 1 s, what Samba assumes without TCP_INFO. */
	EXPECT_EQ(1000000U, ti.b.tcpi_rto);
	EXPECT_EQ(0U, ti.b.tcpi_rtt);
	len = (socklen_t)-1;
	EXPECT_EQ(-EINVAL, tcp_info_of(fd, &ti, &len));
	close(fd);

	lfd = sd_listen_type(&variant->t, SOCK_STREAM, 4, &port);
	ASSERT_LE(0, lfd);
	len = sizeof(ti);
	ASSERT_EQ(0, tcp_info_of(lfd, &ti, &len));
	EXPECT_EQ(TCP_LISTEN, ti.b.tcpi_state);
	close(lfd);

	PAIR(SOCK_STREAM);
	ASSERT_EQ(0, sd_get_params(self->c, &p));
	ASSERT_EQ(0, sd_stream_send(self->c, "hello", 5));
	ASSERT_LT(0, sd_poll(self->s, POLLIN, SD_STEP_MS));
	/* The reader's view: 4 + 5 bytes, less what it took. */
	ASSERT_EQ(0, ioctl(self->s, SIOCINQ, &inq));
	EXPECT_EQ(9, inq);
	EXPECT_EQ(2, recv(self->s, rd, 2, 0));
	ASSERT_EQ(0, ioctl(self->s, SIOCINQ, &inq));
	EXPECT_EQ(7, inq);
	EXPECT_EQ(7, recv(self->s, rd, sizeof(rd), 0));
	ASSERT_EQ(0, ioctl(self->s, SIOCINQ, &inq));
	EXPECT_EQ(0, inq);

	/* The writer's: everything acknowledged, bounded wait. */
	t0 = sd_now_ms();
	do {
		ASSERT_EQ(0, ioctl(self->c, SIOCOUTQ, &outq));
	} while (outq && sd_now_ms() - t0 < SD_STEP_MS);
	EXPECT_EQ(0, outq);
	len = sizeof(ti);
	ASSERT_EQ(0, tcp_info_of(self->c, &ti, &len));
	EXPECT_EQ(TCP_ESTABLISHED, ti.b.tcpi_state);
	EXPECT_LT(0U, ti.b.tcpi_rtt);
	EXPECT_LE(200000U, ti.b.tcpi_rto);
	EXPECT_GE(120000000U, ti.b.tcpi_rto);
	EXPECT_EQ(p.max_send_size, ti.b.tcpi_snd_mss);
	EXPECT_EQ(p.max_receive_size, ti.b.tcpi_rcv_mss);
	EXPECT_LE(9ULL, (unsigned long long)ti.tcpi_bytes_acked);
	EXPECT_LE(1U, ti.tcpi_segs_out);
	EXPECT_EQ(0U, ti.tcpi_notsent_bytes);
	len = sizeof(ti);
	ASSERT_EQ(0, tcp_info_of(self->s, &ti, &len));
	EXPECT_EQ(TCP_ESTABLISHED, ti.b.tcpi_state);
	EXPECT_LE(5ULL, (unsigned long long)ti.tcpi_bytes_received);
	/* A short buffer gets the first byte, the state, as TCP's. */
	len = 1;
	ASSERT_EQ(0, tcp_info_of(self->c, &ti, &len));
	EXPECT_EQ(1U, len);
	EXPECT_EQ(TCP_ESTABLISHED, ti.b.tcpi_state);
	EXPECT_EQ(0xa5, ti.b.tcpi_ca_state);

	/*
	 * A reader that does not read: the writer's non-blocking sends stop
	 * with EAGAIN, and SIOCOUTQ then shows bytes, never more than were
	 * written; once the reader has read everything it reaches 0.
	 */
	ASSERT_EQ(0, setsockopt(self->c, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)));
	ASSERT_EQ(0, setsockopt(self->s, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)));
	fcntl(self->c, F_SETFL, O_NONBLOCK);
	*(uint32_t *)buf = htonl(sizeof(buf) - 4);
	for (;;) {
		n = send(self->c, buf + written % sizeof(buf),
			 sizeof(buf) - written % sizeof(buf), MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN)
			break;
		ASSERT_LT(0, n) TH_LOG("send: %s", strerror(errno));
		written += n;
		ASSERT_EQ(0, ioctl(self->c, SIOCOUTQ, &outq));
		EXPECT_GE(written, outq);
		ASSERT_GT(64L << 20, written) TH_LOG("64 MiB taken without back-pressure");
	}
	ASSERT_EQ(0, ioctl(self->c, SIOCOUTQ, &outq));
	EXPECT_LT(0, outq);
	EXPECT_GE(written, outq);
	len = sizeof(ti);
	ASSERT_EQ(0, tcp_info_of(self->c, &ti, &len));
	EXPECT_LT(0U, ti.tcpi_notsent_bytes);
	/* Only whole messages can be read back: finish the last one. */
	fcntl(self->c, F_SETFL, 0);
	if (written % sizeof(buf)) {
		ASSERT_EQ(0, sd_write_all(self->c, buf + written % sizeof(buf),
					  sizeof(buf) - written % sizeof(buf)));
		written += sizeof(buf) - written % sizeof(buf);
	}
	while (written > 0) {
		n = recv(self->s, buf, written < (long)sizeof(buf) ? written : (long)sizeof(buf), 0);
		ASSERT_LT(0, n) TH_LOG("recv: %s", strerror(errno));
		written -= n;
	}
	t0 = sd_now_ms();
	do {
		ASSERT_EQ(0, ioctl(self->c, SIOCOUTQ, &outq));
	} while (outq && sd_now_ms() - t0 < SD_STEP_MS);
	EXPECT_EQ(0, outq);
}

/*
 * As TCP's: an accepted socket starts with its listener's SO_RCVBUF,
 * SO_SNDBUF, SO_LINGER, SO_RCVTIMEO, SO_SNDTIMEO and SO_KEEPALIVE.
 */
/*
 * The server end from the listener, the client end from the connect job's
 * thread; the listener is closed. Either end is -errno on failure.
 */
static void accept_and_join(int lfd, struct sd_connect_job *j, int *s, int *c)
{
	*s = sd_accept_ms(lfd, SD_STEP_MS);
	pthread_join(j->thread, NULL);
	*c = j->fd;
	close(lfd);
}

TEST_F(sock, accepted_inherits_listener_settings)
{
	struct sd_connect_job j = { .t = &variant->t, .type = SOCK_STREAM };
	struct linger lg = { 1, 3 }, lg2;
	struct timeval rt = { 1, 500000 }, st = { 2, 250000 }, tv, lrt, lst;
	int lfd, v, rcv = 12345, snd = 23456, ka = 1, lrcv, lsnd;
	socklen_t len;

	lfd = sd_listen_type(&variant->t, SOCK_STREAM, 4, &j.port);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)));
	ASSERT_EQ(0, setsockopt(lfd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd)));
	ASSERT_EQ(0, setsockopt(lfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	ASSERT_EQ(0, setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof(rt)));
	ASSERT_EQ(0, setsockopt(lfd, SOL_SOCKET, SO_SNDTIMEO, &st, sizeof(st)));
	ASSERT_EQ(0, setsockopt(lfd, SOL_SOCKET, SO_KEEPALIVE, &ka, sizeof(ka)));
	len = sizeof(lrcv);
	ASSERT_EQ(0, getsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &lrcv, &len));
	len = sizeof(lsnd);
	ASSERT_EQ(0, getsockopt(lfd, SOL_SOCKET, SO_SNDBUF, &lsnd, &len));
	len = sizeof(lrt);
	ASSERT_EQ(0, getsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &lrt, &len));
	len = sizeof(lst);
	ASSERT_EQ(0, getsockopt(lfd, SOL_SOCKET, SO_SNDTIMEO, &lst, &len));
	ASSERT_EQ(0, pthread_create(&j.thread, NULL, sd_connect_thread, &j));
	accept_and_join(lfd, &j, &self->s, &self->c);
	ASSERT_LE(0, self->s) TH_LOG("accept: %s", strerror(-self->s));
	ASSERT_LE(0, self->c) TH_LOG("connect: %s", strerror(-self->c));

	len = sizeof(v);
	ASSERT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_RCVBUF, &v, &len));
	EXPECT_EQ(lrcv, v);
	ASSERT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_SNDBUF, &v, &len));
	EXPECT_EQ(lsnd, v);
	ASSERT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_KEEPALIVE, &v, &len));
	EXPECT_EQ(1, v);
	len = sizeof(lg2);
	ASSERT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_LINGER, &lg2, &len));
	EXPECT_EQ(1, lg2.l_onoff);
	EXPECT_EQ(3, lg2.l_linger);
	/* Timeouts are kept in jiffies: compare with what the listener reports. */
	len = sizeof(tv);
	ASSERT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_RCVTIMEO, &tv, &len));
	EXPECT_EQ(lrt.tv_sec, tv.tv_sec);
	EXPECT_EQ(lrt.tv_usec, tv.tv_usec);
	len = sizeof(tv);
	ASSERT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_SNDTIMEO, &tv, &len));
	EXPECT_EQ(lst.tv_sec, tv.tv_sec);
	EXPECT_EQ(lst.tv_usec, tv.tv_usec);
	EXPECT_EQ(2, tv.tv_sec);
	/* The client's are its own. */
	len = sizeof(lg2);
	ASSERT_EQ(0, getsockopt(self->c, SOL_SOCKET, SO_LINGER, &lg2, &len));
	EXPECT_EQ(0, lg2.l_onoff);
	/* The accepted socket's linger must not stall the teardown. */
	lg2.l_onoff = 0;
	ASSERT_EQ(0, setsockopt(self->s, SOL_SOCKET, SO_LINGER, &lg2, sizeof(lg2)));
}

/*
 * IPPROTO_TCP options a TCP program sets (Samba: TCP_NODELAY, keepalive
 * knobs) are accepted and read back, as TCP's, before and after connect;
 * TCP options without a meaning here stay ENOPROTOOPT.
 */
TEST_F(sock, tcp_level_options_accepted)
{
	int fd, v, one = 1, idle = 30, bad = 0;
	socklen_t len = sizeof(v);
	char buf[8];

	fd = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
	EXPECT_EQ(0, getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len));
	EXPECT_EQ(1, v);
	EXPECT_EQ(0, setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)));
	len = sizeof(v);
	EXPECT_EQ(0, getsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &v, &len));
	EXPECT_EQ(30, v);
	EXPECT_EQ(-1, setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &bad, sizeof(bad)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &one, sizeof(one)));
	EXPECT_EQ(ENOPROTOOPT, errno);
	close(fd);

	PAIR(SOCK_STREAM);
	EXPECT_EQ(0, setsockopt(self->c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
	EXPECT_EQ(0, setsockopt(self->s, IPPROTO_TCP, TCP_CORK, &one, sizeof(one)));
	/* Read as SMB-Direct behaves: nothing is corked. */
	len = sizeof(v);
	EXPECT_EQ(0, getsockopt(self->s, IPPROTO_TCP, TCP_CORK, &v, &len));
	EXPECT_EQ(0, v);
	/* Without effect: a message still goes at once. */
	ASSERT_EQ(0, sd_stream_send(self->s, "corked", 6));
	EXPECT_EQ(6, sd_stream_recv(self->c, buf, sizeof(buf)));
}

TEST_F(sock, so_rcvtimeo)
{
	struct timeval tv = { 0, 300000 };
	char buf[8];
	long t0, dt;
	ssize_t n;

	PAIR(SOCK_STREAM);
	ASSERT_EQ(0, setsockopt(self->c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	t0 = sd_now_ms();
	n = recv(self->c, buf, sizeof(buf), 0);
	dt = sd_now_ms() - t0;
	EXPECT_EQ(-1, n);
	EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK) TH_LOG("errno %d", errno);
	EXPECT_LE(250, dt);
	EXPECT_GT(10000, dt);
	/* Data that arrives within the timeout is returned. */
	tv.tv_sec = 10;
	ASSERT_EQ(0, setsockopt(self->c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, sd_stream_send(self->s, "hi", 2));
	EXPECT_EQ(2, sd_stream_recv(self->c, buf, sizeof(buf)));
}

/* SIGIO is blocked while these run: sigtimedwait() takes it. */
static int sigio_within(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	return sigtimedwait(&set, NULL, &ts) == SIGIO;
}

static int set_async(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETOWN, getpid()))
		return -errno;
	return fcntl(fd, F_SETFL, fl | O_ASYNC) ? -errno : 0;
}

/*
 * O_ASYNC as on TCP: SIGIO to the owner for a connection to accept, for
 * data, and for the end of the stream. Before the socket raised it, only
 * an SO_ERROR-level failure did.
 */
TEST_F(sock, sigio_for_accept_data_and_end)
{
	struct sd_connect_job j = { .t = &variant->t, .type = SOCK_STREAM };
	sigset_t set, old;
	char buf[8];
	int lfd;

	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	/* Before any thread starts, so every thread blocks it. */
	ASSERT_EQ(0, pthread_sigmask(SIG_BLOCK, &set, &old));
	lfd = sd_listen_type(&variant->t, SOCK_STREAM, 4, &j.port);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, set_async(lfd));
	ASSERT_EQ(0, pthread_create(&j.thread, NULL, sd_connect_thread, &j));
	EXPECT_TRUE(sigio_within(SD_STEP_MS)) TH_LOG("no SIGIO for a connection to accept");
	accept_and_join(lfd, &j, &self->s, &self->c);
	ASSERT_LE(0, self->s) TH_LOG("accept: %s", strerror(-self->s));
	ASSERT_LE(0, self->c) TH_LOG("connect: %s", strerror(-self->c));
	while (sigio_within(0))
		;
	ASSERT_EQ(0, set_async(self->c));
	ASSERT_EQ(0, sd_stream_send(self->s, "data", 4));
	EXPECT_TRUE(sigio_within(SD_STEP_MS)) TH_LOG("no SIGIO for data");
	EXPECT_EQ(4, sd_stream_recv(self->c, buf, sizeof(buf)));
	while (sigio_within(0))
		;
	close(self->s);
	self->s = -1;
	EXPECT_TRUE(sigio_within(SD_STEP_MS)) TH_LOG("no SIGIO for the end of the stream");
	sd_set_timeouts(self->c, SD_STEP_MS);
	EXPECT_EQ(0, recv(self->c, buf, sizeof(buf), 0));
	while (sigio_within(0))
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

TEST_HARNESS_MAIN
