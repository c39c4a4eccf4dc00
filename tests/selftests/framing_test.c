// SPDX-License-Identifier: GPL-2.0
/*
 * Message framing. SOCK_STREAM takes 4-byte big-endian length-prefixed
 * messages split across send calls any way the writer likes (at every byte
 * boundary, the prefix included) and turns each into exactly one
 * SMB-Direct message; SOCK_SEQPACKET keeps message boundaries and reports
 * MSG_TRUNC. A SEQPACKET peer of a STREAM socket sees the wire's messages
 * directly, which proves the one-to-one mapping.
 */
#include "kselftest_harness.h"
#include "sd_test.h"

FIXTURE(framing) {
	int c, s;
};

SD_TARGET_VARIANT(framing);

SD_ADD_TARGET_VARIANTS(framing);

FIXTURE_SETUP(framing)
{
	self->c = self->s = -1;
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(framing)
{
	sd_teardown_pair(self->c, self->s, 0);
}

/* A framed message: prefix + len pattern bytes of seed, in buf. */
static size_t frame(char *buf, uint32_t len, uint32_t seed)
{
	uint32_t be = htonl(len);

	memcpy(buf, &be, 4);
	sd_fill(buf + 4, len, seed);
	return 4 + len;
}

static int send_exact(int fd, const void *buf, size_t len)
{
	return sd_write_all(fd, buf, len);
}

TEST_F_TIMEOUT(framing, stream_split_at_every_byte, 90)
{
	char msg[4 + 29], got[64];
	size_t total = frame(msg, 29, 5), k;
	long n;

	PAIR(SOCK_STREAM);
	for (k = 1; k < total; k++) {
		ASSERT_EQ(0, send_exact(self->c, msg, k)) TH_LOG("split %zu", k);
		/* An incomplete message is not a message: nothing may arrive yet. */
		EXPECT_EQ(0, sd_poll(self->s, POLLIN, 30)) TH_LOG("split %zu: early data", k);
		ASSERT_EQ(0, send_exact(self->c, msg + k, total - k)) TH_LOG("split %zu", k);
		memset(got, 0, sizeof(got));
		n = sd_stream_recv(self->s, got, sizeof(got));
		ASSERT_EQ(29, n) TH_LOG("split %zu: %ld", k, n);
		EXPECT_EQ(-1, sd_check(got, 29, 5)) TH_LOG("split %zu", k);
	}
}

TEST_F_TIMEOUT(framing, stream_byte_by_byte_both_ways, 90)
{
	char msg[4 + 40], got[sizeof(msg)];
	size_t total = frame(msg, 40, 9), k;
	ssize_t n;

	PAIR(SOCK_STREAM);
	for (k = 0; k < total; k++)
		ASSERT_EQ(0, send_exact(self->c, msg + k, 1)) TH_LOG("byte %zu", k);
	/* The reader may take the framing back in any pieces too. */
	for (k = 0; k < total; k++) {
		n = recv(self->s, got + k, 1, 0);
		ASSERT_EQ(1, n) TH_LOG("byte %zu: %s", k, strerror(errno));
	}
	EXPECT_EQ(0, memcmp(msg, got, total));
	EXPECT_EQ(0, sd_poll(self->s, POLLIN, 30));
}

/* Several messages in one send, and a send that ends inside a prefix. */
TEST_F(framing, stream_messages_across_sends)
{
	char buf[4 * (4 + 300)], got[300];
	size_t off = 0, lens[4] = { 300, 1, 77, 2 };
	int i;

	PAIR(SOCK_STREAM);
	for (i = 0; i < 4; i++)
		off += frame(buf + off, lens[i], 20 + i);
	/* Two and a half messages (ending two bytes into the third prefix), then the rest. */
	ASSERT_EQ(0, send_exact(self->c, buf, 4 + 300 + 4 + 1 + 2));
	ASSERT_EQ(0, send_exact(self->c, buf + 311, off - 311));
	for (i = 0; i < 4; i++) {
		long n = sd_stream_recv(self->s, got, sizeof(got));

		ASSERT_EQ((long)lens[i], n) TH_LOG("message %d", i);
		EXPECT_EQ(-1, sd_check(got, lens[i], 20 + i)) TH_LOG("message %d", i);
	}
}

/* A STREAM reader with MSG_WAITALL gets a whole multi-PDU message at once. */
TEST_F(framing, stream_waitall_large)
{
	size_t len = 200000;
	char *buf = malloc(len + 4), *got = malloc(len + 4);
	int status;
	ssize_t n;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, got);
	PAIR(SOCK_STREAM);
	frame(buf, len, 3);
	/* The writer may block on credits until the reader reads. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(send_exact(self->c, buf, len + 4) ? 1 : 0);
	n = recv(self->s, got, len + 4, MSG_WAITALL);
	EXPECT_EQ((ssize_t)len + 4, n) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, memcmp(buf, got, len + 4));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	free(buf);
	free(got);
}

TEST_F(framing, seqpacket_boundaries)
{
	size_t lens[] = { 10, 1, 5000, 3, 65536 };
	char *buf = malloc(70000);
	int i;

	ASSERT_NE(NULL, buf);
	PAIR(SOCK_SEQPACKET);
	/* All sent before any is read: the receiver must not merge them. */
	for (i = 0; i < 5; i++) {
		sd_fill(buf, lens[i], 40 + i);
		ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, buf, lens[i])) TH_LOG("message %d", i);
	}
	for (i = 0; i < 5; i++) {
		ssize_t n = recv(self->s, buf, 70000, 0);

		ASSERT_EQ((ssize_t)lens[i], n) TH_LOG("message %d", i);
		EXPECT_EQ(-1, sd_check(buf, lens[i], 40 + i));
	}
	free(buf);
}

TEST_F(framing, seqpacket_msg_trunc)
{
	char msg[100], got[100] = {};
	struct iovec iov = { got, 10 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	PAIR(SOCK_SEQPACKET);
	sd_fill(msg, sizeof(msg), 60);
	ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, msg, 100));
	ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, "next", 4));
	n = recvmsg(self->s, &mh, 0);
	EXPECT_EQ(10, n);
	EXPECT_TRUE(mh.msg_flags & MSG_TRUNC);
	EXPECT_EQ(0, memcmp(msg, got, 10));
	/* The rest of a truncated message is gone; the next read is the next message. */
	n = recv(self->s, got, sizeof(got), 0);
	EXPECT_EQ(4, n);
	EXPECT_EQ(0, memcmp("next", got, 4));
}

/* As for other packet sockets: recv(MSG_TRUNC) returns the real length. */
TEST_F(framing, seqpacket_msg_trunc_flag_returns_real_length)
{
	char msg[100], got[10];
	ssize_t n;

	PAIR(SOCK_SEQPACKET);
	sd_fill(msg, sizeof(msg), 61);
	ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, msg, 100));
	n = recv(self->s, got, sizeof(got), MSG_TRUNC);
	EXPECT_EQ(100, n);
	EXPECT_EQ(0, memcmp(msg, got, 10));
}

TEST_F(framing, seqpacket_iovecs)
{
	char a[1000], b[1], c[2999], all[4000], got[4000];
	char r1[1500], r2[1000], r3[2000];
	struct iovec out[3] = { { a, sizeof(a) }, { b, sizeof(b) }, { c, sizeof(c) } };
	struct iovec in[3] = { { r1, sizeof(r1) }, { r2, sizeof(r2) }, { r3, sizeof(r3) } };
	struct msghdr mo = { .msg_iov = out, .msg_iovlen = 3 };
	struct msghdr mi = { .msg_iov = in, .msg_iovlen = 3 };
	ssize_t n;

	PAIR(SOCK_SEQPACKET);
	sd_fill(all, sizeof(all), 62);
	memcpy(a, all, 1000);
	memcpy(b, all + 1000, 1);
	memcpy(c, all + 1001, 2999);
	n = sendmsg(self->c, &mo, MSG_NOSIGNAL);
	ASSERT_EQ(4000, n) TH_LOG("%s", strerror(errno));
	n = recvmsg(self->s, &mi, 0);
	ASSERT_EQ(4000, n);
	EXPECT_FALSE(mi.msg_flags & MSG_TRUNC);
	memcpy(got, r1, 1500);
	memcpy(got + 1500, r2, 1000);
	memcpy(got + 2500, r3, 1500);
	EXPECT_EQ(0, memcmp(all, got, 4000));
}

/*
 * The two types differ only in how the application sees messages; the
 * wire is the same. A STREAM writer's framed message reaches a SEQPACKET
 * reader as exactly one message without the prefix, and back.
 */
TEST_F(framing, stream_to_seqpacket_one_message_each)
{
	struct sd_connect_job j = { .t = &variant->t, .type = SOCK_STREAM };
	char msg[4 + 3000], got[4000];
	int lfd, i;
	ssize_t n;

	lfd = sd_listen_type(&variant->t, SOCK_SEQPACKET, 1, &j.port);
	ASSERT_LE(0, lfd) TH_LOG("listen: %s", strerror(-lfd));
	ASSERT_EQ(0, pthread_create(&j.thread, NULL, sd_connect_thread, &j));
	self->s = sd_accept_ms(lfd, SD_STEP_MS);
	pthread_join(j.thread, NULL);
	close(lfd);
	self->c = j.fd;
	ASSERT_LE(0, self->c) TH_LOG("connect: %s", strerror(-self->c));
	ASSERT_LE(0, self->s) TH_LOG("accept: %s", strerror(-self->s));
	sd_set_timeouts(self->c, SD_STEP_MS);
	sd_set_timeouts(self->s, SD_STEP_MS);

	for (i = 0; i < 3; i++) {
		size_t len = i == 0 ? 3000 : i == 1 ? 1 : 1500;

		frame(msg, len, 70 + i);
		ASSERT_EQ(0, send_exact(self->c, msg, 4 + len));
		n = recv(self->s, got, sizeof(got), 0);
		ASSERT_EQ((ssize_t)len, n) TH_LOG("message %d", i);
		EXPECT_EQ(-1, sd_check(got, len, 70 + i));
	}
	sd_fill(msg, 2500, 80);
	ASSERT_EQ(2500, send(self->s, msg, 2500, MSG_NOSIGNAL));
	n = sd_stream_recv(self->c, got, sizeof(got));
	ASSERT_EQ(2500, n);
	EXPECT_EQ(-1, sd_check(got, 2500, 80));
}

TEST_HARNESS_MAIN
