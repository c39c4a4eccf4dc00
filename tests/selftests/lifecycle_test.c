// SPDX-License-Identifier: GPL-2.0
/*
 * How connections end and survive: shutdown in each direction, close with
 * data still in flight, a peer killed mid-transfer, sockets shared across
 * fork() (the Samba model: the child keeps using the connection), a reader
 * that stops reading (credit starvation: the writer waits or gets EAGAIN,
 * and nothing is lost when the reader resumes), send and receive timeouts,
 * and signals interrupting blocked calls.
 */
#include "kselftest_harness.h"
#include "sd_test.h"

/*
 * The test build's hook: each receive completion waits this many ms before
 * it is processed, so rdma_cm's events overtake the data (test_hooks.h).
 */
#define RX_DELAY_HOOK "/sys/kernel/debug/af_smbdirect/test_rx_delay_ms"
/* The countdown of receive reposts, the last refused with ENOTCONN. */
#define REPOST_ENOTCONN_HOOK "/sys/kernel/debug/af_smbdirect/test_repost_enotconn"
/* ... and rdma_cm's DISCONNECTED event waits this many ms. */
#define DISCONNECT_DELAY_HOOK "/sys/kernel/debug/af_smbdirect/test_disconnect_delay_ms"

FIXTURE(life) {
	int c, s;
	pid_t child;
};

SD_TARGET_VARIANT(life);

SD_ADD_TARGET_VARIANTS(life);

FIXTURE_SETUP(life)
{
	self->c = self->s = -1;
	self->child = 0;
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(life)
{
	sd_teardown_pair(self->c, self->s, self->child);
	/* A test that failed half-way must not slow down the rest. */
	if (!access(RX_DELAY_HOOK, W_OK))
		sd_write_str(RX_DELAY_HOOK, "0");
	if (!access(DISCONNECT_DELAY_HOOK, W_OK))
		sd_write_str(DISCONNECT_DELAY_HOOK, "0");
	if (!access(REPOST_ENOTCONN_HOOK, W_OK))
		sd_write_str(REPOST_ENOTCONN_HOOK, "0");
}

/* Waits for a child with a deadline; returns its exit code, or -1. */
static int reap(pid_t pid, int ms)
{
	long end = sd_now_ms() + ms;
	int status;

	while (sd_now_ms() < end) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (r < 0)
			return -1;
		sd_sleep_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/*
 * SMB-Direct has no half-close on the wire, so SHUT_WR is local: our sends
 * fail with EPIPE, while the peer still reads what we sent before, sees no
 * EOF, and may go on sending to us. Once we shut the other direction too,
 * the connection drains and disconnects, and the peer reads EOF and sees
 * POLLRDHUP.
 */
TEST_F(life, shutdown_wr_is_local_until_rd)
{
	char buf[64];
	int ev;

	PAIR(SOCK_STREAM);
	ASSERT_EQ(0, sd_stream_send(self->s, "from server", 11));
	/* Make sure it reached the client before the client shuts down. */
	ASSERT_TRUE(sd_poll(self->c, POLLIN, SD_STEP_MS) & POLLIN);
	ASSERT_EQ(0, sd_stream_send(self->c, "last words", 10));
	ASSERT_EQ(0, shutdown(self->c, SHUT_WR));
	EXPECT_EQ(-1, send(self->c, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	/* As for TCP: writable, in that a send no longer blocks (it fails). */
	ev = sd_poll(self->c, POLLOUT, 0);
	EXPECT_TRUE(ev & POLLOUT) TH_LOG("revents 0x%x", ev);

	EXPECT_EQ(10, sd_stream_recv(self->s, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "last words", 10));
	/* Nothing told the peer: no EOF, and it can still send. */
	ev = sd_poll(self->s, POLLIN | POLLRDHUP, 300);
	EXPECT_EQ(0, ev) TH_LOG("revents 0x%x after the peer's SHUT_WR", ev);
	ASSERT_EQ(0, sd_stream_send(self->s, "still here", 10));

	/* What had arrived, and what came after SHUT_WR, are still ours to read. */
	EXPECT_EQ(11, sd_stream_recv(self->c, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "from server", 11));
	EXPECT_EQ(10, sd_stream_recv(self->c, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "still here", 10));

	/* Both directions shut: now the peer hears of it. */
	ASSERT_EQ(0, shutdown(self->c, SHUT_RD));
	ev = sd_poll(self->s, POLLIN | POLLRDHUP, SD_STEP_MS);
	EXPECT_TRUE(ev & POLLIN) TH_LOG("revents 0x%x", ev);
	EXPECT_TRUE(ev & POLLRDHUP) TH_LOG("revents 0x%x", ev);
	EXPECT_EQ(0, recv(self->s, buf, sizeof(buf), 0));
}

TEST_F(life, shutdown_rd_reads_eof_at_once)
{
	char buf[8];
	long t0;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, shutdown(self->c, SHUT_RD));
	t0 = sd_now_ms();
	EXPECT_EQ(0, recv(self->c, buf, sizeof(buf), 0));
	EXPECT_GT(1000, sd_now_ms() - t0);
	EXPECT_TRUE(sd_poll(self->c, POLLIN, 0) & POLLIN);
}

/*
 * One round: a server that accepts and closes at once, its client's
 * connect() succeeds and reads EOF. *c holds the client until it is
 * closed (the fixture's teardown closes it after a failure).
 */
static void accept_close_reads_eof(struct __test_metadata *_metadata,
				   const struct sd_target *t, int round, int *c)
{
	struct sd_connect_job j = { .t = t, .type = SOCK_SEQPACKET };
	int lfd, sfd, e;
	ssize_t r;
	char ch;

	lfd = sd_listen_type(t, SOCK_SEQPACKET, 4, &j.port);
	ASSERT_LE(0, lfd) TH_LOG("listen: %s", strerror(-lfd));
	ASSERT_EQ(0, pthread_create(&j.thread, NULL, sd_connect_thread, &j));
	sfd = sd_accept_ms(lfd, SD_STEP_MS);
	if (sfd >= 0)
		close(sfd);
	pthread_join(j.thread, NULL);
	close(lfd);
	ASSERT_LE(0, sfd) TH_LOG("round %d: accept: %s", round, strerror(-sfd));
	ASSERT_LE(0, j.fd) TH_LOG("round %d: connect: %s", round, strerror(-j.fd));
	*c = j.fd;
	sd_set_timeouts(*c, SD_STEP_MS);
	r = recv(*c, &ch, 1, 0);
	e = errno;
	ASSERT_EQ(0, r) TH_LOG("round %d: the peer's close read as %s", round,
			       r < 0 ? strerror(e) : "data");
	close(*c);
	*c = -1;
}

/*
 * accept() hands over a connection rdma_cm has established too, so closing
 * it at once is an orderly end that the peer reads as EOF. The peer's
 * negotiate request can overtake the IB CM's RTU; a child closed before
 * its CM saw the RTU used to send a REJ instead of a DREQ, and the peer,
 * connected already, read ECONNREFUSED. And the DREQ can overtake the
 * completion of the negotiate response: connect() must still succeed (as
 * TCP's does when the peer closes at once), not lose that response and
 * report ECONNREFUSED. Races, so many rounds; in the last four the test
 * build's hook delays our receive completions, so the disconnect always
 * comes first.
 */
TEST_F_TIMEOUT(life, close_right_after_accept_reads_eof, 240)
{
	int i, hook = !access(RX_DELAY_HOOK, W_OK);

	for (i = 0; i < 24; i++) {
		if (i == 20 && hook)
			ASSERT_EQ(0, sd_write_str(RX_DELAY_HOOK, "300"));
		accept_close_reads_eof(_metadata, &variant->t, i, &self->c);
	}
	if (hook)
		ASSERT_EQ(0, sd_write_str(RX_DELAY_HOOK, "0"));
}

/*
 * The server accepts and closes at once, and the peer's close reaches the
 * client's QP before the client reposts the receive of the negotiate
 * response: siw refuses that post with ENOTCONN (seen over siw on two
 * CPUs). The client must still connect and read EOF, as with TCP; it used
 * to fail connect() with EIO. The test build's hook refuses exactly that
 * repost (the second from now: the server's after the request comes
 * first), on every transport.
 */
TEST_F_TIMEOUT(life, connect_survives_repost_refused_by_closing_qp, 120)
{
	if (access(REPOST_ENOTCONN_HOOK, W_OK))
		SKIP(return, "needs the test build's %s", REPOST_ENOTCONN_HOOK);
	ASSERT_EQ(0, sd_write_str(REPOST_ENOTCONN_HOOK, "2"));
	accept_close_reads_eof(_metadata, &variant->t, 0, &self->c);
}

/*
 * A client that sends its request and closes before the server gets to
 * accept(): as with TCP, accept() still hands the connection out, with
 * the data and then EOF. Such a child used to be dropped from the queue
 * once its disconnect came, and accept() waited for good ("smbdirect
 * params -l --once" hung so). The pause before accept() lets the
 * disconnect reach the queued child first; where it comes later, the
 * round proves less but passes all the same.
 */
TEST_F_TIMEOUT(life, closed_before_accept_still_accepted, 150)
{
	char msg[100], buf[128];
	int i, port, lfd, e;
	long n;

	for (i = 0; i < 4; i++) {
		lfd = sd_listen_type(&variant->t, SOCK_STREAM, 4, &port);
		ASSERT_LE(0, lfd) TH_LOG("listen: %s", strerror(-lfd));
		self->c = sd_connect_type(&variant->t, SOCK_STREAM, port);
		if (self->c < 0)
			close(lfd);
		ASSERT_LE(0, self->c) TH_LOG("round %d: connect: %s", i, strerror(-self->c));
		sd_fill(msg, sizeof(msg), i);
		e = sd_stream_send(self->c, msg, sizeof(msg));
		close(self->c);
		self->c = -1;
		if (e)
			close(lfd);
		ASSERT_EQ(0, e) TH_LOG("round %d: send: %s", i, strerror(-e));
		e = sd_poll(lfd, POLLIN, SD_STEP_MS);
		if (e == POLLIN) {
			sd_sleep_ms(500);
			e = fcntl(lfd, F_SETFL, O_NONBLOCK) ? -errno : 0;
			self->s = e ? e : accept(lfd, NULL, NULL);
			e = self->s < 0 && !e ? -errno : e;
		} else if (e >= 0) {
			e = 1;
		}
		close(lfd);
		ASSERT_EQ(0, e) TH_LOG("round %d: listener: %s", i,
				       e > 0 ? "no connection queued in time" : strerror(-e));
		sd_set_timeouts(self->s, SD_STEP_MS);
		n = sd_stream_recv(self->s, buf, sizeof(buf));
		ASSERT_EQ((long)sizeof(msg), n) TH_LOG("round %d: read %s", i,
						       n < 0 ? strerror(-n) : "a short message");
		ASSERT_EQ(-1, sd_check(buf, sizeof(msg), i)) TH_LOG("round %d", i);
		n = sd_stream_recv(self->s, buf, sizeof(buf));
		EXPECT_EQ(-ENODATA, n) TH_LOG("round %d: after the message: %s", i,
					      n < 0 ? strerror(-n) : "more data");
		close(self->s);
		self->s = -1;
	}
}

TEST_F(life, shutdown_rdwr_both_sides_see_it)
{
	char buf[8];
	int ev;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, shutdown(self->c, SHUT_RDWR));
	EXPECT_EQ(0, recv(self->c, buf, sizeof(buf), 0));
	EXPECT_EQ(-1, send(self->c, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(0, recv(self->s, buf, sizeof(buf), 0));
	ev = sd_poll(self->s, POLLIN | POLLRDHUP, 1000);
	EXPECT_TRUE(ev & POLLRDHUP) TH_LOG("revents 0x%x", ev);
	/* The peer's sends fail too, once the disconnect has arrived. */
	EXPECT_EQ(-1, send(self->s, "x", 1, MSG_NOSIGNAL));
	EXPECT_TRUE(errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)
		TH_LOG("errno %d", errno);
}

/*
 * The peer's disconnect must not overtake the data it sent before. With
 * the test build's hook each receive completion waits 300 ms, so the
 * disconnect, which rdma_cm reports on another path, comes while three
 * messages still wait in the CQ. They were lost (EOF at once) until the
 * disconnect learned to drain the receive queue first.
 */
TEST_F_TIMEOUT(life, disconnect_never_overtakes_data, 60)
{
	static const char *const msgs[3] = { "one", "two", "three" };
	char got[4][8] = {};
	ssize_t n[4];
	int i, e[4];

	if (access(RX_DELAY_HOOK, W_OK))
		SKIP(return, "needs the test build's %s", RX_DELAY_HOOK);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, sd_write_str(RX_DELAY_HOOK, "300"));
	for (i = 0; i < 3; i++)
		n[i] = send(self->s, msgs[i], strlen(msgs[i]) + 1, MSG_NOSIGNAL);
	/* close() waits until the peer's device has everything. */
	close(self->s);
	self->s = -1;
	for (i = 0; i < 4; i++) {
		n[i] = recv(self->c, got[i], sizeof(got[i]), 0);
		e[i] = errno;
	}
	ASSERT_EQ(0, sd_write_str(RX_DELAY_HOOK, "0"));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ((ssize_t)strlen(msgs[i]) + 1, n[i])
			TH_LOG("message %d: %s", i, n[i] < 0 ? strerror(e[i]) : "short or EOF");
		EXPECT_STREQ(msgs[i], got[i]);
	}
	EXPECT_EQ(0, n[3]) TH_LOG("after the messages: %s",
				   n[3] < 0 ? strerror(e[3]) : "more data");
}

/*
 * The peer's orderly close reaches the survivor as EOF even when rdma_cm's
 * DISCONNECTED is slow to come. Over iWARP the peer's TCP close flushes
 * the survivor's receives at once and the event that says "orderly"
 * follows through iw_cm's one ordered workqueue, behind every other
 * connection's close: with 64 connections closed together over siw,
 * the survivors that waited longest read ECONNRESET (the flush's 2 s grace
 * ran out). The test build's hook holds the event back 4 s here. Over
 * RoCE nothing is flushed before the event: EOF too, 4 s later.
 */
TEST_F_TIMEOUT(life, orderly_close_behind_slow_disconnect_event, 60)
{
	char got[8];
	ssize_t n;
	int e;

	if (access(DISCONNECT_DELAY_HOOK, W_OK))
		SKIP(return, "needs the test build's %s", DISCONNECT_DELAY_HOOK);
	PAIR(SOCK_SEQPACKET);
	sd_set_timeouts(self->c, 30000);
	ASSERT_EQ(0, sd_write_str(DISCONNECT_DELAY_HOOK, "4000"));
	ASSERT_EQ(4, send(self->s, "bye", 4, MSG_NOSIGNAL));
	close(self->s);
	self->s = -1;
	n = recv(self->c, got, sizeof(got), 0);
	EXPECT_EQ(4, n) TH_LOG("the last message: %s", n < 0 ? strerror(errno) : "short or EOF");
	n = recv(self->c, got, sizeof(got), 0);
	e = errno;
	/* Before the event is handled: later tests must not wait for it. */
	sd_write_str(DISCONNECT_DELAY_HOOK, "0");
	EXPECT_EQ(0, n) TH_LOG("after the peer's orderly close: %s",
			       n < 0 ? strerror(e) : "more data");
}

/* close() is orderly: what was sent before it all arrives, then EOF. */
#define CLOSE_MSGS 12	/* 768 KiB: over 255 credits x 1340 bytes + SO_SNDBUF */
TEST_F_TIMEOUT(life, close_delivers_pending_data, 60)
{
	char *buf = malloc(65536);
	int i, status;
	long n;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	PAIR(SOCK_STREAM);
	/*
	 * More than the credits and the send buffer cover, so some is still
	 * queued at close().
	 */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(self->s);
		for (i = 0; i < CLOSE_MSGS; i++) {
			sd_fill(buf, 65536, i);
			if (sd_stream_send(self->c, buf, 65536))
				_exit(1);
		}
		close(self->c);
		_exit(0);
	}
	close(self->c);
	self->c = -1;
	for (i = 0; i < CLOSE_MSGS; i++) {
		n = sd_stream_recv(self->s, buf, 65536);
		ASSERT_EQ(65536, n) TH_LOG("message %d: %s", i, n < 0 ? strerror(-n) : "short");
		ASSERT_EQ(-1, sd_check(buf, 65536, i)) TH_LOG("message %d", i);
	}
	EXPECT_EQ(-ENODATA, sd_stream_recv(self->s, buf, 65536));
	status = reap(pid, SD_STEP_MS);
	EXPECT_EQ(0, status);
	free(buf);
}

/*
 * A peer killed mid-transfer: the survivor's blocked receive returns EOF
 * or an error (no hang), its sends fail, and every message it did get was
 * intact.
 */
#define KILL_LEN 100000	/* 75 PDUs of the default size */

TEST_F_TIMEOUT(life, peer_killed_while_sending, 90)
{
	char *buf = malloc(KILL_LEN);
	long n, t0;
	int i = 0;

	ASSERT_NE(NULL, buf);
	PAIR(SOCK_STREAM);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		for (i = 0;; i++) {
			sd_fill(buf, KILL_LEN, i);
			if (sd_stream_send(self->c, buf, KILL_LEN))
				_exit(1);
		}
	}
	close(self->c);
	self->c = -1;
	for (i = 0; i < 2; i++) {
		n = sd_stream_recv(self->s, buf, KILL_LEN);
		ASSERT_EQ(KILL_LEN, n);
		ASSERT_EQ(-1, sd_check(buf, KILL_LEN, i));
	}
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->child = 0;
	t0 = sd_now_ms();
	for (;; i++) {
		n = sd_stream_recv(self->s, buf, KILL_LEN);
		if (n != KILL_LEN)
			break;
		EXPECT_EQ(-1, sd_check(buf, KILL_LEN, i)) TH_LOG("message %d", i);
	}
	TH_LOG("after %d messages: %s, %ld ms", i, n < 0 ? strerror(-n) : "short", sd_now_ms() - t0);
	EXPECT_NE(-ETIMEDOUT, n);
	EXPECT_NE(-EAGAIN, n);
	EXPECT_TRUE(n == -ENODATA || n == -ECONNRESET || n == -ECONNABORTED || n == -EPIPE ||
		    n == -ENOTCONN) TH_LOG("%ld", n);
	/* No half-close in SMB-Direct: once the end was seen, sending fails too (unlike TCP). */
	EXPECT_EQ(-1, send(self->s, "xxxxx", 5, MSG_NOSIGNAL));
}

TEST_F_TIMEOUT(life, peer_killed_while_receiving, 90)
{
	char *buf = malloc(KILL_LEN);
	int err = 0, i;
	long t0;

	ASSERT_NE(NULL, buf);
	PAIR(SOCK_STREAM);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		/* Reads one message, then just sits there. */
		sd_stream_recv(self->c, buf, KILL_LEN);
		pause();
		_exit(0);
	}
	close(self->c);
	self->c = -1;
	ASSERT_EQ(0, sd_stream_send(self->s, buf, 1000));
	sd_sleep_ms(200);
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->child = 0;
	/* With no reader left, sending must fail rather than block forever. */
	t0 = sd_now_ms();
	for (i = 0; i < 1000 && !err; i++)
		err = sd_stream_send(self->s, buf, KILL_LEN);
	TH_LOG("send failed after %d messages, %ld ms: %s", i, sd_now_ms() - t0, strerror(-err));
	EXPECT_NE(0, err);
	EXPECT_NE(-ETIMEDOUT, err);
	EXPECT_NE(-EAGAIN, err);
	EXPECT_TRUE(err == -EPIPE || err == -ECONNRESET || err == -ECONNABORTED ||
		    err == -ENOTCONN) TH_LOG("%d", err);
}

/* Samba: accept in the parent, serve in a forked child, parent closes its copy. */
TEST_F_TIMEOUT(life, fork_after_accept_child_serves, 60)
{
	char buf[256];
	int i;
	long n;

	PAIR(SOCK_STREAM);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		close(self->c);
		for (;;) {
			n = sd_stream_recv(self->s, buf, sizeof(buf));
			if (n == -ENODATA)
				_exit(0);
			if (n < 0 || sd_stream_send(self->s, buf, n))
				_exit(1);
		}
	}
	/* The parent's close must not end the connection the child still holds. */
	close(self->s);
	self->s = -1;
	sd_sleep_ms(300);
	for (i = 0; i < 20; i++) {
		sd_fill(buf, 200, i);
		ASSERT_EQ(0, sd_stream_send(self->c, buf, 200)) TH_LOG("message %d", i);
		n = sd_stream_recv(self->c, buf, sizeof(buf));
		ASSERT_EQ(200, n) TH_LOG("message %d: %s", i, n < 0 ? strerror(-n) : "short");
		EXPECT_EQ(-1, sd_check(buf, 200, i));
	}
	close(self->c);
	self->c = -1;
	EXPECT_EQ(0, reap(self->child, SD_STEP_MS));
	self->child = 0;
}

/* A client that connects, then hands the connection to a child. */
TEST_F_TIMEOUT(life, fork_after_connect_child_uses_socket, 60)
{
	char buf[256];
	int i;
	long n;

	PAIR(SOCK_SEQPACKET);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		close(self->s);
		for (i = 0; i < 20; i++) {
			sd_fill(buf, 100 + i, i);
			if (sd_msg_send(self->c, SOCK_SEQPACKET, buf, 100 + i))
				_exit(1);
			n = sd_msg_recv(self->c, SOCK_SEQPACKET, buf, sizeof(buf));
			if (n != 100 + i || sd_check(buf, n, 1000 + i) != -1)
				_exit(2);
		}
		_exit(0);
	}
	close(self->c);
	self->c = -1;
	for (i = 0; i < 20; i++) {
		n = sd_msg_recv(self->s, SOCK_SEQPACKET, buf, sizeof(buf));
		ASSERT_EQ(100 + i, n) TH_LOG("message %d: %s", i, n < 0 ? strerror(-n) : "short");
		EXPECT_EQ(-1, sd_check(buf, n, i));
		sd_fill(buf, n, 1000 + i);
		ASSERT_EQ(0, sd_msg_send(self->s, SOCK_SEQPACKET, buf, n));
	}
	EXPECT_EQ(0, reap(self->child, SD_STEP_MS));
	self->child = 0;
	/* The child exited holding the last reference: that closed the connection. */
	EXPECT_EQ(-ENODATA, sd_msg_recv(self->s, SOCK_SEQPACKET, buf, sizeof(buf)));
}

#define SLOW_CREDITS 8	/* receive buffers each way: starved after ~10 KiB */

/*
 * A pair that reaches back-pressure after little data: 8 credits each way
 * (set before listen() and connect()) instead of 255, keepalive every
 * keepalive s (0: the default). Into *c and *s, 0 or -errno.
 */
static int slow_pair(const struct sd_target *t, int type, int keepalive, int *c, int *s)
{
	struct sd_connect_job j = { .t = t, .type = type, .preset = 1 };
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(t, 0, &ss);
	int lfd = sd_socket(type), fd, i, ret = 0;

	if (lfd < 0)
		return lfd;
	j.fd = sd_socket(type);
	for (i = 0, fd = lfd; i < 2 && !ret; i++, fd = j.fd) {
		ret = fd < 0 ? fd : sd_setopt(fd, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, SLOW_CREDITS);
		if (!ret)
			ret = sd_setopt(fd, SMBDIRECT_OPT_SEND_CREDIT_TARGET, SLOW_CREDITS);
		if (!ret && keepalive)
			ret = sd_setopt(fd, SMBDIRECT_OPT_KEEPALIVE_INTERVAL, keepalive);
	}
	if (!ret && (bind(lfd, (struct sockaddr *)&ss, len) || listen(lfd, 1)))
		ret = -errno;
	len = sizeof(ss);
	if (!ret && getsockname(lfd, (struct sockaddr *)&ss, &len))
		ret = -errno;
	if (!ret) {
		j.port = sd_port_of(&ss);
		ret = -pthread_create(&j.thread, NULL, sd_connect_thread, &j);
	}
	if (!ret) {
		*s = sd_accept_ms(lfd, SD_STEP_MS);
		pthread_join(j.thread, NULL);
		ret = j.err ? j.err : *s < 0 ? *s : 0;
	}
	close(lfd);
	*c = j.fd;
	if (!ret) {
		sd_set_timeouts(*c, SD_STEP_MS);
		sd_set_timeouts(*s, SD_STEP_MS);
	}
	return ret;
}

#define SLOW_PAIR(type, keepalive) do {					\
	int _r = slow_pair(&variant->t, (type), (keepalive), &self->c, &self->s); \
	ASSERT_EQ(0, _r) TH_LOG("pair: %s", strerror(-_r));		\
} while (0)

/*
 * Credit starvation, non-blocking writer: with the reader not reading,
 * sends must eventually say EAGAIN (back-pressure, not unbounded kernel
 * buffering) and POLLOUT must clear; after the reader resumes, every
 * message arrives intact and in order, and POLLOUT comes back.
 */
#define STARVE_LEN 32768
#define STARVE_CAP (64 << 20)
#define STARVE_MORE 8		/* messages written after the reader resumes */
#define STARVE_WAIT_MS 60000	/* bound of the wait for POLLOUT or the starved state */

/*
 * Small socket buffers on the writer and the reader: back-pressure then
 * sets in after little data, which the debug kernel moves slowly. What
 * the reader's credits let through beyond its buffer still comes on top.
 */
static void sd_small_buffers(struct __test_metadata *_metadata, int writer, int reader)
{
	int small = 16384;	/* the kernel doubles it */

	ASSERT_EQ(0, setsockopt(writer, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)));
	ASSERT_EQ(0, setsockopt(reader, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)));
}

TEST_F_TIMEOUT(life, credit_starvation_nonblocking, 180)
{
	char *buf = malloc(STARVE_LEN + 4);
	long queued = 0, n;
	size_t off = 0;		/* bytes of the current framed message taken */
	int sent = 0, got = 0, ev, status;
	pid_t reader;

	ASSERT_NE(NULL, buf);
	SLOW_PAIR(SOCK_STREAM, 0);
	sd_small_buffers(_metadata, self->c, self->s);
	fcntl(self->c, F_SETFL, O_NONBLOCK);
	/*
	 * Write as an event loop would: on EAGAIN wait for POLLOUT. While
	 * the data still moves towards the peer's credits and receive buffer
	 * POLLOUT comes back; once everything between here and the sleeping
	 * reader is full, it must stay away.
	 */
	for (;;) {
		if (!off) {
			uint32_t be = htonl(STARVE_LEN);

			memcpy(buf, &be, 4);
			sd_fill(buf + 4, STARVE_LEN, sent);
		}
		n = send(self->c, buf + off, STARVE_LEN + 4 - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN) {
			/*
			 * Back-pressure is a state, not a quiet spell: wait
			 * (bounded) for POLLOUT or for both ends to show it.
			 */
			int waited = 0;

			while (!(ev = sd_poll(self->c, POLLOUT, 100)) &&
			       !sd_starved(self->c, self->s) && waited < STARVE_WAIT_MS)
				waited += 100;
			if (ev & POLLOUT)
				continue;
			ASSERT_TRUE(sd_starved(self->c, self->s))
				TH_LOG("neither POLLOUT nor the starved state in %d ms", waited);
			break;
		}
		ASSERT_LT(0, n) TH_LOG("send: %s", strerror(errno));
		off += n;
		queued += n;
		if (off == STARVE_LEN + 4) {
			sent++;
			off = 0;
		}
		ASSERT_GT(STARVE_CAP, queued) TH_LOG("%ld bytes taken and no back-pressure", queued);
	}
	TH_LOG("%d messages and %zu bytes (%ld bytes) queued before back-pressure",
	       sent, off, queued);
	ev = sd_poll(self->c, POLLOUT, 100);
	EXPECT_FALSE(ev & POLLOUT) TH_LOG("revents 0x%x", ev);
	sd_sleep_ms(1500);
	ev = sd_poll(self->c, POLLOUT, 0);
	EXPECT_FALSE(ev & POLLOUT) TH_LOG("POLLOUT while the peer reads nothing");
	EXPECT_TRUE(sd_starved(self->c, self->s)) TH_LOG("the starved state did not last");

	/* Resume: a reader process checks everything, the writer finishes the rest. */
	reader = fork();
	ASSERT_LE(0, reader);
	if (reader == 0) {
		char *in = malloc(STARVE_LEN);
		int i;

		for (i = 0; i < sent + (off ? 1 : 0) + STARVE_MORE; i++) {
			n = sd_stream_recv(self->s, in, STARVE_LEN);
			if (n != STARVE_LEN || sd_check(in, STARVE_LEN, i) != -1)
				_exit(10 + i % 100);
		}
		_exit(0);
	}
	if (off) {
		ASSERT_EQ(0, sd_write_all(self->c, buf + off, STARVE_LEN + 4 - off));
		sent++;
	}
	ev = sd_poll(self->c, POLLOUT, SD_STEP_MS);
	EXPECT_TRUE(ev & POLLOUT) TH_LOG("no POLLOUT after the reader resumed");
	for (got = sent; got < sent + STARVE_MORE; got++) {
		sd_fill(buf, STARVE_LEN, got);
		ASSERT_EQ(0, sd_stream_send(self->c, buf, STARVE_LEN));
	}
	status = reap(reader, 120000);
	EXPECT_EQ(0, status) TH_LOG("reader: 0 ok, -1 hung, 10+ message index mod 100 wrong");
	free(buf);
}

struct blocked_writer {
	int fd, count, err, done;
	pthread_t thread;
};

static void *blocked_writer_thread(void *arg)
{
	struct blocked_writer *w = arg;
	char *buf = malloc(STARVE_LEN);
	int i;

	for (i = 0; i < w->count && !w->err; i++) {
		sd_fill(buf, STARVE_LEN, i);
		w->err = sd_stream_send(w->fd, buf, STARVE_LEN);
	}
	free(buf);
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * Blocking writer: it blocks while the reader sleeps, then finishes. What
 * the kernel may hold for a reader that does not read is the writer's send
 * buffer, the reader's receive buffer, and the PDUs the reader's credits
 * let through beyond it; the writer offers twice all of that, at least
 * 1 MiB.
 */
TEST_F_TIMEOUT(life, credit_starvation_blocking, 180)
{
	struct blocked_writer w = {};
	struct smbdirect_params p;
	char *buf = malloc(STARVE_LEN);
	int i, snd = 0, rcv = 0;
	socklen_t len = sizeof(int);
	long n, hold, t0;

	ASSERT_NE(NULL, buf);
	SLOW_PAIR(SOCK_STREAM, 0);
	sd_small_buffers(_metadata, self->c, self->s);
	ASSERT_EQ(0, getsockopt(self->c, SOL_SOCKET, SO_SNDBUF, &snd, &len));
	len = sizeof(int);
	ASSERT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_RCVBUF, &rcv, &len));
	ASSERT_EQ(0, sd_get_params(self->s, &p));
	hold = (long)snd + rcv + (long)p.receive_credit_max * p.max_receive_size + STARVE_LEN;
	w.count = 2 * hold / STARVE_LEN + 1;
	if (w.count < 32)
		w.count = 32;
	sd_set_timeouts(self->c, 0);	/* no send timeout: it must block */
	w.fd = self->c;
	ASSERT_EQ(0, pthread_create(&w.thread, NULL, blocked_writer_thread, &w));
	/* Until both ends show the starved state (bounded), or the writer ends. */
	t0 = sd_now_ms();
	while (!__atomic_load_n(&w.done, __ATOMIC_SEQ_CST) && !sd_starved(self->c, self->s) &&
	       sd_now_ms() - t0 < STARVE_WAIT_MS)
		sd_sleep_ms(100);
	EXPECT_FALSE(__atomic_load_n(&w.done, __ATOMIC_SEQ_CST))
		TH_LOG("%d KiB went out with nobody reading (err %d)", w.count * STARVE_LEN / 1024,
		       w.err);
	EXPECT_TRUE(sd_starved(self->c, self->s))
		TH_LOG("the writer blocks, but the ends do not show the starved state");
	for (i = 0; i < w.count; i++) {
		n = sd_stream_recv(self->s, buf, STARVE_LEN);
		ASSERT_EQ(STARVE_LEN, n) TH_LOG("message %d: %s", i, n < 0 ? strerror(-n) : "short");
		ASSERT_EQ(-1, sd_check(buf, STARVE_LEN, i)) TH_LOG("message %d", i);
	}
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, w.err);
	free(buf);
}

TEST_F_TIMEOUT(life, so_sndtimeo_when_peer_does_not_read, 120)
{
	struct timeval tv = { 0, 500000 };
	char *buf = malloc(STARVE_LEN);
	long total = 0, t0 = 0;
	int err = 0;

	ASSERT_NE(NULL, buf);
	SLOW_PAIR(SOCK_SEQPACKET, 0);
	sd_small_buffers(_metadata, self->c, self->s);
	ASSERT_EQ(0, setsockopt(self->c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	while (total < STARVE_CAP) {
		ssize_t n;

		t0 = sd_now_ms();
		n = send(self->c, buf, STARVE_LEN, MSG_NOSIGNAL);
		if (n < 0) {
			err = errno;
			break;
		}
		total += n;
	}
	EXPECT_EQ(EAGAIN, err) TH_LOG("after %ld bytes: %s", total, strerror(err));
	EXPECT_LE(400, sd_now_ms() - t0);
	EXPECT_GT(10000, sd_now_ms() - t0);
	free(buf);
	/*
	 * The reader goes first: the writer's queue would otherwise drain in
	 * the background (up to 10 s) into a peer that never reads.
	 */
	close(self->s);
	self->s = -1;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal without SA_RESTART interrupts a blocked receive with EINTR. */
TEST_F(life, signal_interrupts_blocked_recv)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval it = { .it_value = { 0, 300000 } };
	char b, two[4];
	ssize_t n;

	PAIR(SOCK_STREAM);
	sd_set_timeouts(self->c, 0);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	n = recv(self->c, &b, 1, 0);
	EXPECT_EQ(-1, n);
	EXPECT_EQ(EINTR, errno);
	/* And the connection is unharmed. */
	ASSERT_EQ(0, sd_stream_send(self->s, "ok", 2));
	EXPECT_EQ(2, sd_stream_recv(self->c, two, sizeof(two)));
}

/*
 * A reader that does not read, on the four targets (make check runs two on
 * each kernel: tests/vm/check-vm.sh). close() with data the peer has not
 * taken yet, as TCP: without SO_LINGER it returns at once
 * (blocking or not) and the data still arrives in the background;
 * SO_LINGER {1, N} waits up to N s; {1, 0} drops what is queued. Each case
 * first starves the writer, so its queue is known to hold data at close().
 * And a paused reader outlives both sides' keepalive.
 */
FIXTURE(slow_reader) {
	int c, s;
	pid_t child;
};

SD_TARGET_VARIANT(slow_reader);

SD_ADD_TARGET_VARIANTS(slow_reader);

FIXTURE_SETUP(slow_reader)
{
	self->c = self->s = -1;
	self->child = 0;
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(slow_reader)
{
	sd_teardown_pair(self->c, self->s, self->child);
}

/* What close() may take when it must not wait: far below the 10 s bound. */
#define CLOSE_AT_ONCE_MS 5000

/*
 * Non-blocking SEQPACKET writer c sends messages seeded 0, 1, ... until it
 * is starved by the sleeping reader s; returns how many it sent.
 */
static int send_until_starved(struct __test_metadata *_metadata, int c, int s)
{
	char *buf = malloc(STARVE_LEN);
	int sent = 0, waited, ev;
	ssize_t n;

	sd_small_buffers(_metadata, c, s);
	fcntl(c, F_SETFL, O_NONBLOCK);
	while (buf && (long)sent * STARVE_LEN < STARVE_CAP) {
		sd_fill(buf, STARVE_LEN, sent);
		n = send(c, buf, STARVE_LEN, MSG_NOSIGNAL);
		if (n == STARVE_LEN) {
			sent++;
			continue;
		}
		if (n >= 0 || errno != EAGAIN)
			break;
		waited = 0;
		while (!(ev = sd_poll(c, POLLOUT, 100)) && !sd_starved(c, s) &&
		       waited < STARVE_WAIT_MS)
			waited += 100;
		if (!(ev & POLLOUT))
			break;
	}
	free(buf);
	EXPECT_TRUE(sd_starved(c, s)) TH_LOG("after %d messages: not starved", sent);
	return sent;
}

/* The reader's view: messages intact in order, then the end; how many. */
static int read_until_end(struct __test_metadata *_metadata, int s, int *end)
{
	char *buf = malloc(STARVE_LEN);
	int got = 0;
	long n;

	sd_set_timeouts(s, SD_STEP_MS);
	for (;;) {
		n = sd_msg_recv(s, SOCK_SEQPACKET, buf, STARVE_LEN);
		if (n != STARVE_LEN)
			break;
		EXPECT_EQ(-1, sd_check(buf, STARVE_LEN, got)) TH_LOG("message %d", got);
		got++;
	}
	*end = n;
	free(buf);
	return got;
}

/*
 * Starves the writer (self->c) of an 8-credit SEQPACKET pair, sets its
 * SO_LINGER (onoff < 0: none), closes it; returns how long close() took
 * and what had been sent, and reads what the reader gets.
 */
struct close_outcome {
	long ms;
	int sent, got, end;
};

static struct close_outcome starve_then_close(struct __test_metadata *_metadata,
					      int *c, int s, int onoff, int secs)
{
	struct linger lg = { onoff, secs };
	struct close_outcome o = { 0 };
	long t0;

	o.sent = send_until_starved(_metadata, *c, s);
	if (onoff >= 0)
		EXPECT_EQ(0, setsockopt(*c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	t0 = sd_now_ms();
	close(*c);
	o.ms = sd_now_ms() - t0;
	*c = -1;
	o.got = read_until_end(_metadata, s, &o.end);
	return o;
}

TEST_F_TIMEOUT(slow_reader, without_linger_returns_at_once_and_drains, 180)
{
	struct close_outcome o;

	SLOW_PAIR(SOCK_SEQPACKET, 0);
	o = starve_then_close(_metadata, &self->c, self->s, -1, 0);
	EXPECT_GT(CLOSE_AT_ONCE_MS, o.ms) TH_LOG("close() of a non-blocking socket took %ld ms",
						 o.ms);
	EXPECT_EQ(o.sent, o.got) TH_LOG("the reader got %d of %d messages", o.got, o.sent);
	EXPECT_EQ(-ENODATA, o.end) TH_LOG("after the messages: %s", strerror(-o.end));
}

TEST_F_TIMEOUT(slow_reader, linger_n_waits_then_drops, 180)
{
	struct close_outcome o;

	SLOW_PAIR(SOCK_SEQPACKET, 0);
	o = starve_then_close(_metadata, &self->c, self->s, 1, 1);
	/* The reader sleeps: the whole second passes, and no more. */
	EXPECT_LE(900, o.ms);
	EXPECT_GT(CLOSE_AT_ONCE_MS, o.ms);
	EXPECT_GT(o.sent, o.got) TH_LOG("all %d messages arrived after the linger time", o.sent);
	EXPECT_TRUE(o.end == -ENODATA || o.end == -ECONNRESET) TH_LOG("end: %s", strerror(-o.end));
}

TEST_F_TIMEOUT(slow_reader, linger_zero_drops_at_once, 180)
{
	struct close_outcome o;

	SLOW_PAIR(SOCK_SEQPACKET, 0);
	o = starve_then_close(_metadata, &self->c, self->s, 1, 0);
	EXPECT_GT(CLOSE_AT_ONCE_MS, o.ms);
	EXPECT_GT(o.sent, o.got) TH_LOG("all %d messages arrived after an abortive close", o.sent);
	EXPECT_TRUE(o.end == -ENODATA || o.end == -ECONNRESET) TH_LOG("end: %s", strerror(-o.end));
}

/*
 * A paused reader is not killed by keepalive, on either side: the reader
 * holds back every receive buffer (SO_RCVBUF 4096), the writer (SO_SNDBUF
 * 16384, 8 credits) is starved,
 * both sides probe every second (a probe nobody answers kills after 5 s),
 * and the reader process is stopped (SIGSTOP: to the kernel the same as a
 * reader that sleeps) for 10 s. TCP waits forever; so must we. Then the
 * reader reads everything, intact.
 */
#define PAUSE_MSGS 8	/* of STARVE_LEN: 256 KiB, far more than 8 credits and buffers hold */
#define PAUSE_MS 10000

static void *pause_writer(void *arg)
{
	struct blocked_writer *w = arg;
	char *buf = malloc(STARVE_LEN);
	int i;

	for (i = 0; i < w->count && !w->err && buf; i++) {
		sd_fill(buf, STARVE_LEN, i);
		w->err = sd_stream_send(w->fd, buf, STARVE_LEN);
	}
	free(buf);
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST_F_TIMEOUT(slow_reader, paused_reader_outlives_keepalive, 180)
{
	struct blocked_writer w = { .count = PAUSE_MSGS };
	int rcv = 4096, snd = 16384, err = 0, status;
	socklen_t len;
	long t0;

	SLOW_PAIR(SOCK_STREAM, 1);
	ASSERT_EQ(0, setsockopt(self->s, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)));
	ASSERT_EQ(0, setsockopt(self->c, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd)));

	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		char *in = malloc(STARVE_LEN);
		long n;
		int i;

		raise(SIGSTOP);
		for (i = 0; i < PAUSE_MSGS; i++) {
			n = sd_stream_recv(self->s, in, STARVE_LEN);
			if (n != STARVE_LEN) {
				fprintf(stderr, "# message %d: %s\n", i,
					n < 0 ? strerror(-n) : "short");
				_exit(10);
			}
			if (sd_check(in, STARVE_LEN, i) != -1)
				_exit(11);
		}
		_exit(0);
	}
	ASSERT_EQ(self->child, waitpid(self->child, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));
	sd_set_timeouts(self->c, 0);	/* the writer blocks as long as it takes */
	w.fd = self->c;
	ASSERT_EQ(0, pthread_create(&w.thread, NULL, pause_writer, &w));
	t0 = sd_now_ms();
	while (!sd_starved(self->c, self->s) && !__atomic_load_n(&w.done, __ATOMIC_SEQ_CST) &&
	       sd_now_ms() - t0 < STARVE_WAIT_MS)
		sd_sleep_ms(100);
	ASSERT_TRUE(sd_starved(self->c, self->s)) TH_LOG("the writer is not starved");
	sd_sleep_ms(PAUSE_MS);
	len = sizeof(err);
	EXPECT_EQ(0, getsockopt(self->s, SOL_SOCKET, SO_ERROR, &err, &len));
	EXPECT_EQ(0, err) TH_LOG("the paused reader's connection failed: %s", strerror(err));
	len = sizeof(err);
	EXPECT_EQ(0, getsockopt(self->c, SOL_SOCKET, SO_ERROR, &err, &len));
	EXPECT_EQ(0, err) TH_LOG("the writer's connection failed: %s", strerror(err));
	EXPECT_TRUE(sd_starved(self->c, self->s)) TH_LOG("data moved while the reader was stopped");
	ASSERT_EQ(0, kill(self->child, SIGCONT));
	status = reap(self->child, 120000);
	self->child = 0;
	EXPECT_EQ(0, status) TH_LOG("reader: 0 all read, 10 a read failed, 11 data wrong");
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, w.err) TH_LOG("writer: %s", strerror(-w.err));
}

/*
 * Both readers paused (issue #26 item 5): both ends write PAUSE_MSGS
 * messages and neither reads, so each end holds back the receives data
 * took and keeps its last credit; both sides probe every second (5 s to
 * answer). Before the core kept a receive in reserve for probes, neither
 * end could send one and both ended with ETIMEDOUT about 6 s in (TCP keeps
 * such a connection as long as both windows stay closed). The pause lasts
 * PAUSE_MS; then both read everything, intact.
 */
struct pause_reader {
	int fd, count, err;
	pthread_t thread;
};

static void *pause_reader_thread(void *arg)
{
	struct pause_reader *r = arg;
	char *in = malloc(STARVE_LEN);
	long n;
	int i;

	for (i = 0; i < r->count && !r->err && in; i++) {
		n = sd_stream_recv(r->fd, in, STARVE_LEN);
		if (n != STARVE_LEN)
			r->err = n < 0 ? (int)n : -EPROTO;
		else if (sd_check(in, STARVE_LEN, i) != -1)
			r->err = -EILSEQ;
	}
	if (!in)
		r->err = -ENOMEM;
	free(in);
	return NULL;
}

static bool both_starved(int c, int s)
{
	return sd_starved(c, s) && sd_starved(s, c);
}

TEST_F_TIMEOUT(slow_reader, both_readers_paused_outlive_keepalive, 180)
{
	struct blocked_writer wc = { .count = PAUSE_MSGS }, ws = { .count = PAUSE_MSGS };
	struct pause_reader rc = { .count = PAUSE_MSGS }, rs = { .count = PAUSE_MSGS };
	struct smbdirect_info ci, si;
	int rcv = 4096, snd = 16384, err, fd, i;
	socklen_t len;
	long t0;

	SLOW_PAIR(SOCK_STREAM, 1);
	for (i = 0; i < 2; i++) {
		fd = i ? self->s : self->c;
		ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)));
		ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd)));
		sd_set_timeouts(fd, 0);	/* writers and readers block as long as it takes */
	}
	wc.fd = self->c;
	ws.fd = self->s;
	ASSERT_EQ(0, pthread_create(&wc.thread, NULL, pause_writer, &wc));
	ASSERT_EQ(0, pthread_create(&ws.thread, NULL, pause_writer, &ws));
	t0 = sd_now_ms();
	while (!both_starved(self->c, self->s) && sd_now_ms() - t0 < STARVE_WAIT_MS)
		sd_sleep_ms(100);
	ASSERT_TRUE(both_starved(self->c, self->s)) TH_LOG("the writers are not starved");
	ASSERT_EQ(0, sd_info(self->c, &ci));
	ASSERT_EQ(0, sd_info(self->s, &si));
	sd_sleep_ms(PAUSE_MS);
	/*
	 * A connection that ended shows CLOSED and wakes its blocked writer
	 * (EPIPE, which also takes the socket error SO_ERROR would show).
	 */
	EXPECT_FALSE(__atomic_load_n(&wc.done, __ATOMIC_SEQ_CST))
		TH_LOG("the client's writer returned during the pause: %s", strerror(-wc.err));
	EXPECT_FALSE(__atomic_load_n(&ws.done, __ATOMIC_SEQ_CST))
		TH_LOG("the server's writer returned during the pause: %s", strerror(-ws.err));
	for (i = 0; i < 2; i++) {
		struct smbdirect_info now;

		err = 0;
		len = sizeof(err);
		fd = i ? self->s : self->c;
		EXPECT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
		EXPECT_EQ(0, err) TH_LOG("%s's connection failed: %s", i ? "server" : "client",
					 strerror(err));
		ASSERT_EQ(0, sd_info(fd, &now));
		EXPECT_EQ((__u32)SMBDIRECT_STATE_CONNECTED, now.state)
			TH_LOG("the %s's connection ended during the pause", i ? "server" : "client");
	}
	/* Probes and their answers may be on the wire: wait for the state. */
	t0 = sd_now_ms();
	while (!both_starved(self->c, self->s) && sd_now_ms() - t0 < 5000)
		sd_sleep_ms(50);
	EXPECT_TRUE(both_starved(self->c, self->s)) TH_LOG("data moved while both slept");
	{
		struct smbdirect_info c2, s2;

		ASSERT_EQ(0, sd_info(self->c, &c2));
		ASSERT_EQ(0, sd_info(self->s, &s2));
		EXPECT_EQ(ci.rx_queued, c2.rx_queued);
		EXPECT_EQ(si.rx_queued, s2.rx_queued);
	}
	rc.fd = self->c;
	rs.fd = self->s;
	ASSERT_EQ(0, pthread_create(&rc.thread, NULL, pause_reader_thread, &rc));
	ASSERT_EQ(0, pthread_create(&rs.thread, NULL, pause_reader_thread, &rs));
	pthread_join(rc.thread, NULL);
	pthread_join(rs.thread, NULL);
	pthread_join(wc.thread, NULL);
	pthread_join(ws.thread, NULL);
	EXPECT_EQ(0, rc.err) TH_LOG("client reader: %s", strerror(-rc.err));
	EXPECT_EQ(0, rs.err) TH_LOG("server reader: %s", strerror(-rs.err));
	EXPECT_EQ(0, wc.err) TH_LOG("client writer: %s", strerror(-wc.err));
	EXPECT_EQ(0, ws.err) TH_LOG("server writer: %s", strerror(-ws.err));
}

TEST_HARNESS_MAIN
