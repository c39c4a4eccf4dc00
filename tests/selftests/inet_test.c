// SPDX-License-Identifier: GPL-2.0
/*
 * The upstream-shaped entry point: socket(AF_INET[6], SOCK_STREAM,
 * IPPROTO_SMBDIRECT) is the same socket as AF_SMBDIRECT SOCK_STREAM (data,
 * options at SOL_SMBDIRECT and at level 289, ioctls, RDMA and upstream's
 * remote-invalidation cmsg) and looks like an inet stream socket of that
 * protocol (SO_DOMAIN, SO_PROTOCOL, getsockname/getpeername); IPv4-mapped
 * addresses and IPV6_V6ONLY behave as for TCP; sock_diag lists such
 * sockets as ss(8) asks for MPTCP's.
 */
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include "kselftest_harness.h"
#include "sd_test.h"

#define INET_PARAM "/sys/module/af_smbdirect/parameters/inet_protocol"
#define SOL_PARAM "/sys/module/af_smbdirect/parameters/sol_level"

static int inet_socket(int af)
{
	int fd = socket(af, SOCK_STREAM, IPPROTO_SMBDIRECT);

	return fd < 0 ? -errno : fd;
}

static int sockopt_int(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	if (getsockopt(fd, level, name, &v, &len))
		return -errno;
	return v;
}

/* Bound to addr:0 and listening; *port read back. */
static int inet_listen(int af, const struct sockaddr_storage *ss, socklen_t len,
		       int *port)
{
	struct sockaddr_storage got;
	socklen_t glen = sizeof(got);
	int fd = inet_socket(af), ret;

	if (fd < 0)
		return fd;
	if (bind(fd, (const struct sockaddr *)ss, len) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&got, &glen)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*port = sd_port_of(&got);
	return fd;
}

struct conn_job {
	int fd;
	struct sockaddr_storage ss;
	socklen_t len;
	int err;
	pthread_t thread;
};

static void *conn_thread(void *arg)
{
	struct conn_job *j = arg;

	j->err = connect(j->fd, (struct sockaddr *)&j->ss, j->len) ? -errno : 0;
	return NULL;
}

/* connect(fd, ss) in a thread while lfd accepts: *server or -errno. */
static int inet_connect_accept(int fd, const struct sockaddr_storage *ss, socklen_t len,
			       int lfd, int *server)
{
	struct conn_job j = { .fd = fd, .ss = *ss, .len = len };
	int s;

	*server = -1;
	if (pthread_create(&j.thread, NULL, conn_thread, &j))
		return -EAGAIN;
	s = sd_accept_ms(lfd, SD_STEP_MS);
	pthread_join(j.thread, NULL);
	if (j.err) {
		if (s >= 0)
			close(s);
		return j.err;
	}
	if (s < 0)
		return s;
	*server = s;
	return 0;
}

static void mapped(struct sockaddr_in6 *sin6, const char *v4, int port)
{
	memset(sin6, 0, sizeof(*sin6));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	sin6->sin6_addr.s6_addr[10] = 0xff;
	sin6->sin6_addr.s6_addr[11] = 0xff;
	inet_pton(AF_INET, v4, &sin6->sin6_addr.s6_addr[12]);
}

static int is_mapped(const struct sockaddr_storage *ss, const char *v4)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	struct in_addr a;

	inet_pton(AF_INET, v4, &a);
	return ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr) &&
	       !memcmp(&sin6->sin6_addr.s6_addr[12], &a, 4);
}

FIXTURE(inet) {
	int c, s, l;
};

SD_TARGET_VARIANT(inet);
SD_ADD_AF_TARGET_VARIANTS(inet);

FIXTURE_SETUP(inet)
{
	long proto = 0;

	self->c = self->s = self->l = -1;
	SD_SETUP_TARGET();
	ASSERT_EQ(0, sd_read_long(INET_PARAM, &proto));
	ASSERT_EQ(IPPROTO_SMBDIRECT, proto) TH_LOG("inet_protocol reads %ld", proto);
}

FIXTURE_TEARDOWN(inet)
{
	if (self->l >= 0)
		close(self->l);
	sd_teardown_pair(self->c, self->s, 0);
}

/* Connected pair of IPPROTO_SMBDIRECT sockets over the target. */
static int inet_pair(const struct sd_target *t, int *c, int *s, int *l)
{
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(t, 0, &ss);
	int port, ret;

	*l = inet_listen(t->af, &ss, len, &port);
	if (*l < 0)
		return *l;
	*c = inet_socket(t->af);
	if (*c < 0)
		return *c;
	len = sd_addr(t, port, &ss);
	ret = inet_connect_accept(*c, &ss, len, *l, s);
	if (!ret) {
		sd_set_timeouts(*c, SD_STEP_MS);
		sd_set_timeouts(*s, SD_STEP_MS);
	}
	return ret;
}

TEST_F(inet, looks_like_an_inet_stream_socket)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = inet_socket(variant->t.af);

	ASSERT_LE(0, fd) TH_LOG("socket(%d, SOCK_STREAM, %d): %s", variant->t.af,
				IPPROTO_SMBDIRECT, strerror(-fd));
	EXPECT_EQ(variant->t.af, sockopt_int(fd, SOL_SOCKET, SO_DOMAIN));
	EXPECT_EQ(IPPROTO_SMBDIRECT, sockopt_int(fd, SOL_SOCKET, SO_PROTOCOL));
	EXPECT_EQ(SOCK_STREAM, sockopt_int(fd, SOL_SOCKET, SO_TYPE));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&ss, &len));
	EXPECT_EQ(variant->t.af, ss.ss_family);
	EXPECT_EQ(variant->t.af == AF_INET6 ? sizeof(struct sockaddr_in6) :
		  sizeof(struct sockaddr_in), len);
	/* Options answer at both levels, and are the same options. */
	ASSERT_EQ(0, setsockopt(fd, SMBDIRECT_SOL_IPPROTO, SMBDIRECT_OPT_SEND_CREDIT_TARGET,
				&(int){ 77 }, sizeof(int)));
	EXPECT_EQ(77, sockopt_int(fd, SOL_SMBDIRECT, SMBDIRECT_OPT_SEND_CREDIT_TARGET));
	EXPECT_EQ(77, sockopt_int(fd, SMBDIRECT_SOL_IPPROTO, SMBDIRECT_OPT_SEND_CREDIT_TARGET));
	EXPECT_EQ(-ENOPROTOOPT, sockopt_int(fd, 288, SMBDIRECT_OPT_SEND_CREDIT_TARGET));
	/* SEQPACKET stays AF_SMBDIRECT's. */
	EXPECT_EQ(-1, socket(variant->t.af, SOCK_SEQPACKET, IPPROTO_SMBDIRECT));
	/* Protocol numbers nobody serves stay EPROTONOSUPPORT beside ours. */
	errno = 0;
	EXPECT_EQ(-1, socket(variant->t.af, SOCK_STREAM, IPPROTO_SMBDIRECT + 1));
	EXPECT_EQ(EPROTONOSUPPORT, errno);
	errno = 0;
	EXPECT_EQ(-1, socket(variant->t.af, SOCK_STREAM, IPPROTO_SMBDIRECT + 3));
	EXPECT_EQ(EPROTONOSUPPORT, errno);
	close(fd);
}

TEST_F(inet, pair_moves_data_and_names_its_ends)
{
	static char out[100000], in[sizeof(out)];
	struct sockaddr_storage a, b;
	socklen_t alen = sizeof(a), blen = sizeof(b);
	struct smbdirect_params p;
	int ret;

	ret = inet_pair(&variant->t, &self->c, &self->s, &self->l);
	ASSERT_EQ(0, ret) TH_LOG("pair over %s %s: %s", variant->t.kind, variant->t.addr,
				 strerror(-ret));
	EXPECT_EQ(IPPROTO_SMBDIRECT, sockopt_int(self->s, SOL_SOCKET, SO_PROTOCOL));
	EXPECT_EQ(variant->t.af, sockopt_int(self->s, SOL_SOCKET, SO_DOMAIN));
	ASSERT_EQ(0, getsockname(self->c, (struct sockaddr *)&a, &alen));
	ASSERT_EQ(0, getpeername(self->s, (struct sockaddr *)&b, &blen));
	EXPECT_EQ(variant->t.af, a.ss_family);
	EXPECT_EQ(variant->t.af, b.ss_family);
	EXPECT_EQ(sd_port_of(&a), sd_port_of(&b));
	ASSERT_EQ(0, sd_get_params(self->c, &p));
	EXPECT_EQ(variant->t.transport, p.transport);
	sd_fill(out, sizeof(out), 11);
	ASSERT_EQ(0, sd_stream_send(self->c, out, sizeof(out)));
	ASSERT_EQ((long)sizeof(in), sd_stream_recv(self->s, in, sizeof(in)));
	EXPECT_EQ(-1, sd_check(in, sizeof(in), 11));
	sd_fill(out, 5000, 12);
	ASSERT_EQ(0, sd_stream_send(self->s, out, 5000));
	ASSERT_EQ(5000, sd_stream_recv(self->c, in, sizeof(in)));
	EXPECT_EQ(-1, sd_check(in, 5000, 12));
}

/*
 * sock_diag, as ss(8) asks for a protocol number above 255 (MPTCP's way):
 * SOCK_DIAG_BY_FAMILY with INET_DIAG_REQ_PROTOCOL. A dump (bc: optional
 * bytecode) or, with cookie, one socket. Up to max entries into out;
 * returns their number or -errno.
 */
static int diag_query(int af, const void *bc, int bclen, const __u32 *cookie,
		      struct inet_diag_msg *out, int max)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
		char attrs[128];
	} req = { 0 };
	static char buf[65536];
	struct nlattr *nla;
	int fd, n = 0, done = 0, len;

	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | (cookie ? 0 : NLM_F_DUMP);
	req.r.sdiag_family = af;
	req.r.sdiag_protocol = IPPROTO_TCP; /* a byte: the attribute says 257 */
	req.r.idiag_states = ~0u;
	if (cookie)
		memcpy(req.r.id.idiag_cookie, cookie, sizeof(req.r.id.idiag_cookie));
	len = NLMSG_LENGTH(sizeof(req.r));
	nla = (struct nlattr *)((char *)&req + NLMSG_ALIGN(len));
	nla->nla_type = INET_DIAG_REQ_PROTOCOL;
	nla->nla_len = NLA_HDRLEN + sizeof(__u32);
	*(__u32 *)((char *)nla + NLA_HDRLEN) = IPPROTO_SMBDIRECT;
	len = NLMSG_ALIGN(len) + NLA_ALIGN(nla->nla_len);
	if (bc) {
		nla = (struct nlattr *)((char *)&req + len);
		nla->nla_type = INET_DIAG_REQ_BYTECODE;
		nla->nla_len = NLA_HDRLEN + bclen;
		memcpy((char *)nla + NLA_HDRLEN, bc, bclen);
		len += NLA_ALIGN(nla->nla_len);
	}
	req.nlh.nlmsg_len = len;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, len, 0) != len) {
		n = -errno;
		goto out;
	}
	while (!done) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		int got = recv(fd, buf, sizeof(buf), 0);

		if (got <= 0) {
			n = got ? -errno : -EPIPE;
			goto out;
		}
		for (; NLMSG_OK(h, got); h = NLMSG_NEXT(h, got)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				n = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				goto out;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
				continue;
			if (n < max)
				out[n] = *(struct inet_diag_msg *)NLMSG_DATA(h);
			n++;
			if (cookie)
				done = 1;
		}
	}
out:
	close(fd);
	return n;
}

static ino_t inode_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* The entry for the socket with this inode, or NULL; *count: how many. */
static const struct inet_diag_msg *diag_find(const struct inet_diag_msg *m, int n,
					     ino_t ino, int *count)
{
	const struct inet_diag_msg *found = NULL;
	int i;

	*count = 0;
	for (i = 0; i < n; i++) {
		if (m[i].idiag_inode != ino)
			continue;
		found = &m[i];
		++*count;
	}
	return found;
}

/* The entry names the address and port of ss, in the socket's family. */
static int diag_addr_is(const __be32 *a, __be16 port, const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		return port == sin->sin_port && a[0] == sin->sin_addr.s_addr;
	}
	return port == ((const struct sockaddr_in6 *)ss)->sin6_port &&
	       !memcmp(a, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
}

#define DIAG_MAX 256

TEST_F(inet, sock_diag_lists_them_as_ss_asks)
{
	static struct inet_diag_msg m[DIAG_MAX];
	const struct inet_diag_msg *e;
	struct sockaddr_storage cl, cp;
	socklen_t cll = sizeof(cl), cpl = sizeof(cp);
	struct {
		struct inet_diag_bc_op op, port;
	} bc;
	struct pollfd pfd;
	char out[3000];
	int n, count, ret, lport;
	__u32 cookie[2];

	ret = inet_pair(&variant->t, &self->c, &self->s, &self->l);
	ASSERT_EQ(0, ret) TH_LOG("pair over %s %s: %s", variant->t.kind, variant->t.addr,
				 strerror(-ret));
	ASSERT_EQ(0, getsockname(self->c, (struct sockaddr *)&cl, &cll));
	ASSERT_EQ(0, getpeername(self->c, (struct sockaddr *)&cp, &cpl));
	lport = sd_port_of(&cp);
	/* 3000 bytes wait unread at the server: its receive queue. */
	sd_fill(out, sizeof(out), 21);
	ASSERT_EQ(0, sd_stream_send(self->c, out, sizeof(out)));
	pfd = (struct pollfd){ .fd = self->s, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, SD_STEP_MS));

	n = diag_query(variant->t.af, NULL, 0, NULL, m, DIAG_MAX);
	ASSERT_LE(3, n) TH_LOG("dump: %s", n < 0 ? strerror(-n) : "fewer than 3 sockets");
	ASSERT_GE(DIAG_MAX, n);

	e = diag_find(m, n, inode_of(self->l), &count);
	ASSERT_EQ(1, count) TH_LOG("the listener is listed %d times", count);
	EXPECT_EQ(variant->t.af, e->idiag_family);
	EXPECT_EQ(10 /* TCP_LISTEN */, e->idiag_state);
	EXPECT_EQ(htons(lport), e->id.idiag_sport);
	EXPECT_EQ(getuid(), e->idiag_uid);

	e = diag_find(m, n, inode_of(self->c), &count);
	ASSERT_EQ(1, count) TH_LOG("the client is listed %d times", count);
	EXPECT_EQ(1 /* TCP_ESTABLISHED */, e->idiag_state);
	EXPECT_TRUE(diag_addr_is(e->id.idiag_src, e->id.idiag_sport, &cl))
		TH_LOG("client source port %u", ntohs(e->id.idiag_sport));
	EXPECT_TRUE(diag_addr_is(e->id.idiag_dst, e->id.idiag_dport, &cp))
		TH_LOG("client destination port %u", ntohs(e->id.idiag_dport));
	memcpy(cookie, e->id.idiag_cookie, sizeof(cookie));

	e = diag_find(m, n, inode_of(self->s), &count);
	ASSERT_EQ(1, count) TH_LOG("the accepted socket is listed %d times", count);
	EXPECT_EQ(1 /* TCP_ESTABLISHED */, e->idiag_state);
	EXPECT_TRUE(diag_addr_is(e->id.idiag_src, e->id.idiag_sport, &cp));
	EXPECT_TRUE(diag_addr_is(e->id.idiag_dst, e->id.idiag_dport, &cl));
	EXPECT_EQ(sizeof(out), e->idiag_rqueue);

	/* One socket by its cookie, as ss -K and monitors ask. */
	n = diag_query(variant->t.af, NULL, 0, cookie, m, DIAG_MAX);
	ASSERT_EQ(1, n) TH_LOG("by cookie: %s", n < 0 ? strerror(-n) : "not one socket");
	EXPECT_EQ(inode_of(self->c), m[0].idiag_inode);

	/* ss's "sport = :lport": the listener and the accepted end only. */
	bc.op = (struct inet_diag_bc_op){ INET_DIAG_BC_S_EQ, sizeof(bc), sizeof(bc) + 4 };
	bc.port = (struct inet_diag_bc_op){ 0, 0, lport };
	n = diag_query(variant->t.af, &bc, sizeof(bc), NULL, m, DIAG_MAX);
	ASSERT_LE(2, n) TH_LOG("filtered dump: %s", n < 0 ? strerror(-n) : "fewer than 2");
	diag_find(m, n, inode_of(self->l), &count);
	EXPECT_EQ(1, count);
	diag_find(m, n, inode_of(self->s), &count);
	EXPECT_EQ(1, count);
	diag_find(m, n, inode_of(self->c), &count);
	EXPECT_EQ(0, count) TH_LOG("the client passed a filter on the server's port");

	/* The other family's dump does not list them. */
	n = diag_query(variant->t.af == AF_INET ? AF_INET6 : AF_INET, NULL, 0, NULL,
		       m, DIAG_MAX);
	ASSERT_LE(0, n);
	diag_find(m, n, inode_of(self->c), &count);
	EXPECT_EQ(0, count);
}

/* An AF_SMBDIRECT client and an IPPROTO_SMBDIRECT server: one protocol. */
/*
 * self->c connects to the listener lfd on port; *s is the accepted end.
 * Both get SD_STEP_MS timeouts and a "hello" goes from client to server.
 */
static void connect_and_greet(struct __test_metadata *_metadata, const struct sd_target *t,
			      int c, int lfd, int port, int *s)
{
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(t, port, &ss);
	char in[64];
	int ret;

	ret = inet_connect_accept(c, &ss, len, lfd, s);
	ASSERT_EQ(0, ret) TH_LOG("connect/accept: %s", strerror(-ret));
	sd_set_timeouts(c, SD_STEP_MS);
	sd_set_timeouts(*s, SD_STEP_MS);
	ASSERT_EQ(0, sd_stream_send(c, "hello", 5));
	ASSERT_EQ(5, sd_stream_recv(*s, in, sizeof(in)));
	EXPECT_EQ(0, memcmp(in, "hello", 5));
}

TEST_F(inet, af_smbdirect_client_meets_inet_server)
{
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(&variant->t, 0, &ss);
	int port;

	self->l = inet_listen(variant->t.af, &ss, len, &port);
	ASSERT_LE(0, self->l) TH_LOG("listen: %s", strerror(-self->l));
	self->c = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, self->c);
	connect_and_greet(_metadata, &variant->t, self->c, self->l, port, &self->s);
}

/* The reverse: an IPPROTO_SMBDIRECT client, an AF_SMBDIRECT listener. */
TEST_F(inet, inet_client_meets_af_smbdirect_server)
{
	char in[64];
	int port = 0;

	self->l = sd_listen_type(&variant->t, SOCK_STREAM, 4, &port);
	ASSERT_LE(0, self->l) TH_LOG("listen: %s", strerror(-self->l));
	EXPECT_EQ(sd_family(), sockopt_int(self->l, SOL_SOCKET, SO_DOMAIN));
	self->c = inet_socket(variant->t.af);
	ASSERT_LE(0, self->c);
	connect_and_greet(_metadata, &variant->t, self->c, self->l, port, &self->s);
	ASSERT_EQ(0, sd_stream_send(self->s, "back", 4));
	ASSERT_EQ(4, sd_stream_recv(self->c, in, sizeof(in)));
}

/*
 * Plain TCP on the same address is untouched while the module serves
 * IPPROTO_SMBDIRECT and such a pair is open: 64 KiB each way, SO_PROTOCOL
 * IPPROTO_TCP.
 */
TEST_F(inet, tcp_untouched_beside_inet_sockets)
{
	const size_t n = 64 << 10;	/* fits TCP's default buffers: one thread writes, then reads */
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(&variant->t, 0, &ss);
	char *out = malloc(n), *in = malloc(n);
	int tl, tc, ts = -1, port, ret;

	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, in);
	ret = inet_pair(&variant->t, &self->c, &self->s, &self->l);
	ASSERT_EQ(0, ret) TH_LOG("IPPROTO_SMBDIRECT pair: %s", strerror(-ret));

	tl = socket(variant->t.af, SOCK_STREAM, 0);
	ASSERT_LE(0, tl);
	ASSERT_EQ(0, bind(tl, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, listen(tl, 1));
	len = sizeof(ss);
	ASSERT_EQ(0, getsockname(tl, (struct sockaddr *)&ss, &len));
	port = sd_port_of(&ss);
	tc = socket(variant->t.af, SOCK_STREAM, 0);
	ASSERT_LE(0, tc);
	EXPECT_EQ(IPPROTO_TCP, sockopt_int(tc, SOL_SOCKET, SO_PROTOCOL));
	len = sd_addr(&variant->t, port, &ss);
	ret = inet_connect_accept(tc, &ss, len, tl, &ts);
	ASSERT_EQ(0, ret) TH_LOG("TCP connect/accept: %s", strerror(-ret));
	EXPECT_EQ(IPPROTO_TCP, sockopt_int(ts, SOL_SOCKET, SO_PROTOCOL));
	sd_set_timeouts(tc, SD_STEP_MS);
	sd_set_timeouts(ts, SD_STEP_MS);
	sd_fill(out, n, 7);
	ASSERT_EQ(0, sd_write_all(tc, out, n));
	ASSERT_EQ(0, sd_read_all(ts, in, n));
	EXPECT_EQ(-1, sd_check(in, n, 7));
	ASSERT_EQ(0, sd_write_all(ts, in, n));
	ASSERT_EQ(0, sd_read_all(tc, out, n));
	EXPECT_EQ(-1, sd_check(out, n, 7));
	/* And the SMB-Direct pair still works. */
	ASSERT_EQ(0, sd_stream_send(self->c, "hello", 5));
	EXPECT_EQ(5, sd_stream_recv(self->s, in, 64));
	close(tc);
	close(ts);
	close(tl);
	free(out);
	free(in);
}

/*
 * Upstream's cmsg shape (level 289, _IOW('S', 0x20, __u32)): the client's
 * registration is invalidated by the server's answer. The server takes the
 * token from the client's message, as an SMB2 server does: REGISTER does
 * not wait for REG_MR, and only a send posted after it on the client's
 * queue orders the registration before the server's use (rxe fails an
 * invalidation that overtakes REG_MR: the connection is reset).
 */
TEST_F(inet, upstream_remote_invalidate_cmsg)
{
	struct smbdirect_buffer_descriptor_v1 d[4], got;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct smbdirect_cmsg_remote_invalidate))];
	} ctl;
	struct smbdirect_cmsg_remote_invalidate ri;
	uint32_t be = htonl(6);
	struct iovec iov[2] = { { &be, 4 }, { "answer", 6 } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm;
	static char buf[8192];
	char in[64];
	__u32 n = 0, state = 7;
	__u64 id = 0;
	int ret;

	ret = inet_pair(&variant->t, &self->c, &self->s, &self->l);
	ASSERT_EQ(0, ret) TH_LOG("pair: %s", strerror(-ret));
	ret = sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE,
			      buf, sizeof(buf), d, 4, &n, &id);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER: %s", strerror(-ret));
	ASSERT_LE(1U, n);
	ASSERT_EQ(0, sd_stream_send(self->c, &d[0], sizeof(d[0])));
	ASSERT_EQ((long)sizeof(got), sd_stream_recv(self->s, &got, sizeof(got)));
	memset(&ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SMBDIRECT_SOL_IPPROTO;
	cm->cmsg_type = SMBDIRECT_CMSG_IPPROTO_REMOTE_INVALIDATE;
	cm->cmsg_len = CMSG_LEN(sizeof(ri));
	ri.remote_token = le32toh(got.token);
	memcpy(CMSG_DATA(cm), &ri, sizeof(ri));
	ASSERT_EQ(10, sendmsg(self->s, &mh, MSG_NOSIGNAL)) TH_LOG("sendmsg: %s", strerror(errno));
	ASSERT_EQ(6, sd_stream_recv(self->c, in, sizeof(in)));
	ASSERT_EQ(0, sd_deregister(self->c, id, &state));
	EXPECT_EQ((__u32)SMBDIRECT_REG_STATE_REMOTE_INVALIDATED, state);
	/* A level-289 cmsg of another type is refused. */
	cm->cmsg_type = SMBDIRECT_CMSG_IPPROTO_REMOTE_INVALIDATE + 1;
	EXPECT_EQ(-1, sendmsg(self->s, &mh, MSG_NOSIGNAL));
	EXPECT_EQ(EINVAL, errno);
}

/* Each family takes its own addresses only, as TCP. */
TEST_F(inet, other_family_address_is_eafnosupport)
{
	struct sockaddr_storage ss;
	const struct sd_target other = variant->t.af == AF_INET ?
		(struct sd_target)SD_TARGET_RXE6 : (struct sd_target)SD_TARGET_RXE4;
	socklen_t len = sd_addr(&other, 0, &ss);
	int fd = inet_socket(variant->t.af);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	len = sd_addr(&other, 445, &ss);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	close(fd);
}

FIXTURE(dual) {
	int c, s, l;
};

FIXTURE_SETUP(dual)
{
	const struct sd_target t = SD_TARGET_RXE4;
	const char *why = sd_target_unusable(&t);

	self->c = self->s = self->l = -1;
	if (why)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(dual)
{
	if (self->l >= 0)
		close(self->l);
	sd_teardown_pair(self->c, self->s, 0);
}

/* An AF_INET6 listener on :: takes IPv4 clients: their names are mapped. */
TEST_F(dual, v6_wildcard_listener_takes_ipv4)
{
	struct sockaddr_in6 any = { .sin6_family = AF_INET6 }, to6;
	struct sockaddr_storage ss, got;
	socklen_t glen = sizeof(got);
	const struct sd_target t4 = SD_TARGET_RXE4;
	int port, ret;

	self->l = inet_listen(AF_INET6, (struct sockaddr_storage *)&any, sizeof(any), &port);
	ASSERT_LE(0, self->l) TH_LOG("listen on [::]: %s", strerror(-self->l));
	EXPECT_EQ(0, sockopt_int(self->l, IPPROTO_IPV6, IPV6_V6ONLY));
	/* An AF_INET client. */
	self->c = inet_socket(AF_INET);
	ASSERT_LE(0, self->c);
	ret = inet_connect_accept(self->c, &ss, sd_addr(&t4, port, &ss), self->l, &self->s);
	ASSERT_EQ(0, ret) TH_LOG("IPv4 to [::]:%d: %s", port, strerror(-ret));
	ASSERT_EQ(0, getpeername(self->s, (struct sockaddr *)&got, &glen));
	EXPECT_TRUE(is_mapped(&got, t4.addr)) TH_LOG("peer family %d", got.ss_family);
	close(self->c);
	close(self->s);
	self->c = self->s = -1;
	/* An AF_INET6 client to the mapped address. */
	self->c = inet_socket(AF_INET6);
	ASSERT_LE(0, self->c);
	mapped(&to6, t4.addr, port);
	memcpy(&ss, &to6, sizeof(to6));
	ret = inet_connect_accept(self->c, &ss, sizeof(to6), self->l, &self->s);
	ASSERT_EQ(0, ret) TH_LOG("::ffff:%s: %s", t4.addr, strerror(-ret));
	glen = sizeof(got);
	ASSERT_EQ(0, getpeername(self->c, (struct sockaddr *)&got, &glen));
	EXPECT_TRUE(is_mapped(&got, t4.addr));
	EXPECT_EQ(port, sd_port_of(&got));
	ASSERT_EQ(0, sd_stream_send(self->c, "x", 1));
	EXPECT_EQ(1, sd_stream_recv(self->s, (char[8]){ 0 }, 8));
}

/* IPV6_V6ONLY: the :: listener takes no IPv4, mapped connects fail. */
TEST_F(dual, v6only)
{
	struct sockaddr_in6 any = { .sin6_family = AF_INET6 }, to6;
	struct sockaddr_storage ss;
	const struct sd_target t4 = SD_TARGET_RXE4, t6 = SD_TARGET_RXE6;
	int port, fd, ret;

	fd = inet_socket(AF_INET6);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &(int){ 1 }, sizeof(int)));
	EXPECT_EQ(1, sockopt_int(fd, IPPROTO_IPV6, IPV6_V6ONLY));
	mapped(&to6, t4.addr, 445);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&to6, sizeof(to6)));
	EXPECT_EQ(ENETUNREACH, errno);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&any, sizeof(any)));
	/* Too late once bound, as TCP. */
	EXPECT_EQ(-1, setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &(int){ 0 }, sizeof(int)));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, listen(fd, 4));
	self->l = fd;
	{
		struct sockaddr_storage got;
		socklen_t glen = sizeof(got);

		ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&got, &glen));
		port = sd_port_of(&got);
	}
	self->c = inet_socket(AF_INET);
	ASSERT_LE(0, self->c);
	sd_set_timeouts(self->c, SD_STEP_MS);
	ret = connect(self->c, (struct sockaddr *)&ss, sd_addr(&t4, port, &ss)) ? -errno : 0;
	EXPECT_NE(0, ret) TH_LOG("IPv4 reached a V6ONLY listener");
	close(self->c);
	self->c = inet_socket(AF_INET6);
	ASSERT_LE(0, self->c);
	ret = inet_connect_accept(self->c, &ss, sd_addr(&t6, port, &ss), self->l, &self->s);
	EXPECT_EQ(0, ret) TH_LOG("IPv6 to the V6ONLY listener: %s", strerror(-ret));
}

TEST(sol_level_param)
{
	long v = 0;

	if (sd_family() < 0)
		SKIP(return, "af_smbdirect is not loaded");
	ASSERT_EQ(0, sd_read_long(SOL_PARAM, &v));
	EXPECT_EQ(SMBDIRECT_SOL_IPPROTO, v);
}

TEST_HARNESS_MAIN
