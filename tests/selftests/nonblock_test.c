// SPDX-License-Identifier: GPL-2.0
/*
 * Non-blocking use, the way event-driven servers use sockets: connect with
 * EINPROGRESS, POLLOUT and SO_ERROR; accept4 with flags and EAGAIN; an
 * epoll loop that moves data with EPOLLIN/EPOLLOUT only; MSG_DONTWAIT.
 */
#include <sys/epoll.h>

#include "kselftest_harness.h"
#include "sd_test.h"

FIXTURE(nb) {
	int l, c, s;
	int port;
};

SD_TARGET_VARIANT(nb);

SD_ADD_TARGET_VARIANTS(nb);

FIXTURE_SETUP(nb)
{
	self->l = self->c = self->s = -1;
	SD_SETUP_TARGET();
	self->l = sd_listen_type(&variant->t, SOCK_STREAM, 8, &self->port);
	ASSERT_LE(0, self->l) TH_LOG("listen: %s", strerror(-self->l));
}

FIXTURE_TEARDOWN(nb)
{
	if (self->l >= 0)
		close(self->l);
	if (self->c >= 0)
		close(self->c);
	if (self->s >= 0)
		close(self->s);
}

/* Starts a non-blocking connect; returns connect()'s errno (0 if it was immediate). */
static int nb_connect(const struct sd_target *t, int port, int *fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(t, port, &ss);

	*fd = sd_socket(SOCK_STREAM | SOCK_NONBLOCK);
	if (*fd < 0)
		return *fd;
	return connect(*fd, (struct sockaddr *)&ss, len) ? errno : 0;
}

static int so_error(int fd)
{
	int v = -1;
	socklen_t len = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &len) ? -errno : v;
}

TEST_F(nb, connect_einprogress_pollout_so_error)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int r, ev, fl;
	char buf[8];

	r = nb_connect(&variant->t, self->port, &self->c);
	ASSERT_LE(0, self->c) TH_LOG("socket: %s", strerror(-r));
	/* RDMA CM address and route resolution cannot complete inside connect(). */
	ASSERT_EQ(EINPROGRESS, r) TH_LOG("connect: %s", strerror(r));
	/* Not connected yet: a second connect says so, data calls fail. */
	ev = sd_poll(self->c, POLLOUT, SD_STEP_MS);
	EXPECT_TRUE(ev & POLLOUT) TH_LOG("revents 0x%x", ev);
	EXPECT_FALSE(ev & (POLLERR | POLLHUP)) TH_LOG("revents 0x%x", ev);
	EXPECT_EQ(0, so_error(self->c));
	EXPECT_EQ(0, getpeername(self->c, (struct sockaddr *)&ss, &len));
	EXPECT_EQ(self->port, sd_port_of(&ss));
	/*
	 * Connecting again: as for TCP, the first call after completion may
	 * report success once; from then on it is EISCONN.
	 */
	len = sd_addr(&variant->t, self->port, &ss);
	if (connect(self->c, (struct sockaddr *)&ss, len) == 0)
		errno = 0;
	EXPECT_EQ(-1, connect(self->c, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EISCONN, errno);

	self->s = sd_accept_ms(self->l, SD_STEP_MS);
	ASSERT_LE(0, self->s) TH_LOG("accept: %s", strerror(-self->s));
	fl = fcntl(self->c, F_GETFL);
	EXPECT_TRUE(fl & O_NONBLOCK);
	ASSERT_EQ(0, sd_stream_send(self->c, "ping", 4));
	sd_set_timeouts(self->s, SD_STEP_MS);
	EXPECT_EQ(4, sd_stream_recv(self->s, buf, sizeof(buf)));
}

TEST_F(nb, connect_refused_reports_so_error)
{
	int port, lfd, r, ev;

	lfd = sd_listen_type(&variant->t, SOCK_STREAM, 1, &port);
	ASSERT_LE(0, lfd);
	close(lfd);
	r = nb_connect(&variant->t, port, &self->c);
	ASSERT_LE(0, self->c);
	if (r == ECONNREFUSED)
		return;	/* refused at once is fine too */
	ASSERT_EQ(EINPROGRESS, r) TH_LOG("connect: %s", strerror(r));
	ev = sd_poll(self->c, POLLOUT, SD_STEP_MS);
	EXPECT_TRUE(ev & (POLLERR | POLLHUP)) TH_LOG("revents 0x%x", ev);
	EXPECT_EQ(ECONNREFUSED, so_error(self->c));
	/* SO_ERROR is read once. */
	EXPECT_EQ(0, so_error(self->c));
}

TEST_F(nb, accept4_flags_and_eagain)
{
	int lfl, fd, r, a;
	char b;

	lfl = fcntl(self->l, F_GETFL);
	ASSERT_EQ(0, fcntl(self->l, F_SETFL, lfl | O_NONBLOCK));
	EXPECT_EQ(-1, accept(self->l, NULL, NULL));
	EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK) TH_LOG("errno %d", errno);
	EXPECT_EQ(0, sd_poll(self->l, POLLIN, 200));

	r = nb_connect(&variant->t, self->port, &self->c);
	ASSERT_TRUE(r == EINPROGRESS || r == 0) TH_LOG("connect: %s", strerror(r));
	EXPECT_TRUE(sd_poll(self->l, POLLIN, SD_STEP_MS) & POLLIN);
	fd = accept4(self->l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("accept4: %s", strerror(errno));
	self->s = fd;
	EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	/* Nothing to read yet on a non-blocking socket. */
	EXPECT_EQ(-1, recv(fd, &b, 1, 0));
	EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
	/* accept4 without flags on a blocking-mode copy: blocking. */
	r = nb_connect(&variant->t, self->port, &fd);
	ASSERT_TRUE(r == EINPROGRESS || r == 0);
	a = sd_accept_ms(self->l, SD_STEP_MS);
	ASSERT_LE(0, a);
	EXPECT_FALSE(fcntl(a, F_GETFL) & O_NONBLOCK);
	EXPECT_FALSE(fcntl(a, F_GETFD) & FD_CLOEXEC);
	close(a);
	close(fd);
}

TEST_F(nb, msg_dontwait_on_blocking_socket)
{
	const char *why = "";
	char b;
	int r;

	close(self->l);
	self->l = -1;
	r = sd_pair_type(&variant->t, SOCK_STREAM, &self->c, &self->s, &why);
	ASSERT_EQ(0, r) TH_LOG("%s: %s", why, strerror(-r));
	EXPECT_EQ(-1, recv(self->s, &b, 1, MSG_DONTWAIT));
	EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
	EXPECT_EQ(0, sd_poll(self->s, POLLIN, 100));
	EXPECT_TRUE(sd_poll(self->c, POLLOUT, 100) & POLLOUT);
}

/*
 * One thread, one epoll set, everything non-blocking: the client pushes
 * NMSG framed messages, the server echoes each, the client checks what
 * comes back. Progress comes only from readiness events, so a missing
 * wake-up (EPOLLIN after data or EPOLLOUT after credits return) stalls the
 * loop and fails the test.
 */
#define NMSG 100	/* 300 KB each way: more than the credits and SO_SNDBUF cover */
#define LEN 3000

struct nbstream {
	int fd;
	char out[(4 + LEN) * 4];	/* pending bytes to write */
	size_t out_len, out_off;
	char in[4 + LEN];
	size_t in_len;
};

static int pump_out(struct nbstream *st)
{
	while (st->out_off < st->out_len) {
		ssize_t n = send(st->fd, st->out + st->out_off,
				 st->out_len - st->out_off, MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		st->out_off += n;
	}
	st->out_len = st->out_off = 0;
	return 0;
}

/* Reads what is there; returns 1 when st->in holds a whole message. */
static int pump_in(struct nbstream *st)
{
	for (;;) {
		size_t want = 4;
		ssize_t n;

		if (st->in_len >= 4) {
			uint32_t be;

			memcpy(&be, st->in, 4);
			want = 4 + ntohl(be);
			if (want > sizeof(st->in))
				return -EMSGSIZE;
		}
		if (st->in_len == want && want > 4)
			return 1;
		n = recv(st->fd, st->in + st->in_len, want - st->in_len, 0);
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return -ENODATA;
		st->in_len += n;
	}
}

static void queue(struct nbstream *st, const void *msg, uint32_t len)
{
	uint32_t be = htonl(len);

	memcpy(st->out + st->out_len, &be, 4);
	memcpy(st->out + st->out_len + 4, msg, len);
	st->out_len += 4 + len;
}

TEST_F_TIMEOUT(nb, epoll_driven_echo, 180)
{
	static struct nbstream cli, srv;
	struct epoll_event ev, evs[4];
	int ep, r, sent = 0, echoed = 0, checked = 0, idle = 0;
	char msg[LEN];

	r = nb_connect(&variant->t, self->port, &self->c);
	ASSERT_TRUE(r == EINPROGRESS || r == 0) TH_LOG("connect: %s", strerror(r));
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ev.events = EPOLLIN;
	ev.data.fd = self->l;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->l, &ev));
	ev.events = EPOLLIN | EPOLLOUT;
	ev.data.fd = self->c;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->c, &ev));
	cli.fd = self->c;

	while (checked < NMSG) {
		int n = epoll_wait(ep, evs, 4, 5000), i;

		ASSERT_LE(0, n);
		if (n == 0) {
			ASSERT_GT(3, ++idle) TH_LOG("no events for 15 s: sent %d echoed %d checked %d",
						    sent, echoed, checked);
			continue;
		}
		idle = 0;
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			ASSERT_EQ(0U, evs[i].events & EPOLLERR) TH_LOG("EPOLLERR on %d", fd);
			if (fd == self->l) {
				self->s = accept4(self->l, NULL, NULL, SOCK_NONBLOCK);
				ASSERT_LE(0, self->s);
				srv.fd = self->s;
				ev.events = EPOLLIN | EPOLLOUT;
				ev.data.fd = self->s;
				ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->s, &ev));
				ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_DEL, self->l, NULL));
				continue;
			}
			if (fd == self->c) {
				if (evs[i].events & EPOLLOUT) {
					ASSERT_EQ(0, so_error(self->c));
					if (!cli.out_len && sent < NMSG) {
						sd_fill(msg, LEN, sent);
						queue(&cli, msg, LEN);
						sent++;
					}
					ASSERT_EQ(0, pump_out(&cli));
				}
				while ((r = pump_in(&cli)) == 1) {
					ASSERT_EQ(-1, sd_check(cli.in + 4, LEN, checked))
						TH_LOG("echo %d", checked);
					checked++;
					cli.in_len = 0;
				}
				ASSERT_EQ(0, r) TH_LOG("client read: %s", strerror(-r));
			}
			if (fd == self->s) {
				r = 0;
				if (!srv.out_len) {
					while (srv.out_len + 4 + LEN <= sizeof(srv.out) &&
					       (r = pump_in(&srv)) == 1) {
						queue(&srv, srv.in + 4, LEN);
						srv.in_len = 0;
						echoed++;
					}
					ASSERT_LE(0, r) TH_LOG("server read: %s", strerror(-r));
				}
				ASSERT_EQ(0, pump_out(&srv));
			}
		}
		/* Only ask for EPOLLOUT while there is something to write. */
		ev.events = EPOLLIN | (cli.out_len || sent < NMSG ? EPOLLOUT : 0);
		ev.data.fd = self->c;
		ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_MOD, self->c, &ev));
		if (self->s >= 0) {
			ev.events = EPOLLIN | (srv.out_len ? EPOLLOUT : 0);
			ev.data.fd = self->s;
			ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_MOD, self->s, &ev));
		}
	}
	EXPECT_EQ(NMSG, sent);
	EXPECT_EQ(NMSG, echoed);
	close(ep);
}

TEST_HARNESS_MAIN
