// SPDX-License-Identifier: GPL-2.0
/*
 * Many connections at once: 64 clients connect to one listener at the same
 * time and each moves data both ways with its own pattern, so that a
 * message delivered on the wrong connection, lost or corrupted under load
 * is caught. And full-duplex bulk traffic on one connection, where both
 * sides spend credits at the same time ([MS-SMBD] 3.1.5.1: the last credit
 * must also grant one, or both sides stall).
 */
#include "kselftest_harness.h"
#include "sd_test.h"

/*
 * 64 connections at once, each moving data both ways. Under the debug
 * kernel in TCG, RDMA moves a few MB/s, so what each connection moves is
 * kept small: enough rounds that both directions of every connection are
 * in use at the same time, and messages of several PDUs (1364-byte PDUs by
 * default) so that fragmentation and credits are exercised on all of them.
 */
#define NCONN 64
#define ROUNDS 2
#define MSG 5000
/*
 * Receive buffers (= credits) per connection, both ends: the default 255
 * makes 128 sockets allocate, map and post 65,000 buffers, which is most
 * of this test's time under TCG. 16 still lets several PDUs of a message
 * be in flight, and makes the credit loop turn over many times.
 */
#define CREDITS 16

FIXTURE(conc) {
	int unused;
};

SD_TARGET_VARIANT(conc);

SD_ADD_TARGET_VARIANTS(conc);

FIXTURE_SETUP(conc)
{
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(conc)
{
}

struct client {
	const struct sd_target *t;
	int port, id;
	int err;		/* 0 or -errno */
	const char *step;
	pthread_t thread;
};

struct server {
	int fd;
	int id;			/* learnt from the first message */
	int err;
	const char *step;
	pthread_t thread;
};

/*
 * Client: says who it is, then ROUNDS times sends a message of its own
 * pattern and expects the server's answer with the server pattern of the
 * same id and round.
 */
static void *client_thread(void *arg)
{
	struct client *c = arg;
	char *buf = malloc(MSG);
	int fd, r;
	long n;

	c->step = "malloc";
	c->err = -ENOMEM;
	if (!buf)
		return NULL;
	c->step = "connect";
	fd = sd_socket(SOCK_STREAM);
	c->err = fd < 0 ? fd : 0;
	if (fd < 0)
		goto out;
	c->step = "setsockopt";
	c->err = sd_setopt(fd, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, CREDITS);
	if (!c->err)
		c->err = sd_setopt(fd, SMBDIRECT_OPT_SEND_CREDIT_TARGET, CREDITS);
	if (!c->err) {
		struct sockaddr_storage ss;
		socklen_t len = sd_addr(c->t, c->port, &ss);

		c->step = "connect";
		c->err = connect(fd, (struct sockaddr *)&ss, len) ? -errno : 0;
	}
	if (c->err) {
		close(fd);
		goto out;
	}
	sd_set_timeouts(fd, 60000);
	c->step = "hello";
	c->err = sd_stream_send(fd, &c->id, sizeof(c->id));
	for (r = 0; r < ROUNDS && !c->err; r++) {
		sd_fill(buf, MSG, c->id * 1000 + r);
		c->step = "send";
		c->err = sd_stream_send(fd, buf, MSG);
		if (c->err)
			break;
		c->step = "receive";
		n = sd_stream_recv(fd, buf, MSG);
		if (n != MSG) {
			c->err = n < 0 ? n : -EIO;
			break;
		}
		c->step = "verify";
		if (sd_check(buf, MSG, 500000 + c->id * 1000 + r) != -1)
			c->err = -EBADMSG;
	}
	close(fd);
out:
	free(buf);
	return NULL;
}

static void *server_thread(void *arg)
{
	struct server *s = arg;
	char *buf = malloc(MSG);
	long n;
	int r;

	s->step = "malloc";
	s->err = -ENOMEM;
	if (!buf)
		return NULL;
	s->step = "hello";
	n = sd_stream_recv(s->fd, &s->id, sizeof(s->id));
	s->err = n == sizeof(s->id) ? 0 : n < 0 ? n : -EIO;
	for (r = 0; r < ROUNDS && !s->err; r++) {
		s->step = "receive";
		n = sd_stream_recv(s->fd, buf, MSG);
		if (n != MSG) {
			s->err = n < 0 ? n : -EIO;
			break;
		}
		s->step = "verify";
		if (sd_check(buf, MSG, s->id * 1000 + r) != -1) {
			s->err = -EBADMSG;
			break;
		}
		sd_fill(buf, MSG, 500000 + s->id * 1000 + r);
		s->step = "send";
		s->err = sd_stream_send(s->fd, buf, MSG);
	}
	/* Wait for the client's close so that our close loses nothing of it. */
	if (!s->err) {
		s->step = "eof";
		n = sd_stream_recv(s->fd, buf, MSG);
		if (n != -ENODATA)
			s->err = n < 0 ? n : -EPROTO;
	}
	free(buf);
	return NULL;
}

TEST_F_TIMEOUT(conc, connections_64_both_ways, 300)
{
	static struct client cl[NCONN];
	static struct server sv[NCONN];
	int lfd, port, i, accepted = 0, good = 0;
	char seen[NCONN] = {};

	struct sockaddr_storage ss;
	socklen_t len = sd_addr(&variant->t, 0, &ss);

	lfd = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, lfd) TH_LOG("socket: %s", strerror(-lfd));
	ASSERT_EQ(0, sd_setopt(lfd, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, CREDITS));
	ASSERT_EQ(0, sd_setopt(lfd, SMBDIRECT_OPT_SEND_CREDIT_TARGET, CREDITS));
	ASSERT_EQ(0, bind(lfd, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, listen(lfd, NCONN));
	len = sizeof(ss);
	ASSERT_EQ(0, getsockname(lfd, (struct sockaddr *)&ss, &len));
	port = sd_port_of(&ss);
	for (i = 0; i < NCONN; i++) {
		cl[i] = (struct client){ .t = &variant->t, .port = port, .id = i };
		ASSERT_EQ(0, pthread_create(&cl[i].thread, NULL, client_thread, &cl[i]));
	}
	for (i = 0; i < NCONN; i++) {
		int fd = sd_accept_ms(lfd, 60000);

		EXPECT_LE(0, fd) TH_LOG("accept %d: %s", i, strerror(-fd));
		if (fd < 0)
			break;
		sd_set_timeouts(fd, 60000);
		sv[i] = (struct server){ .fd = fd, .id = -1 };
		ASSERT_EQ(0, pthread_create(&sv[i].thread, NULL, server_thread, &sv[i]));
		accepted++;
	}
	for (i = 0; i < NCONN; i++) {
		pthread_join(cl[i].thread, NULL);
		EXPECT_EQ(0, cl[i].err) TH_LOG("client %d at %s: %s", i, cl[i].step,
					      strerror(-cl[i].err));
		good += !cl[i].err;
	}
	for (i = 0; i < accepted; i++) {
		pthread_join(sv[i].thread, NULL);
		EXPECT_EQ(0, sv[i].err) TH_LOG("server %d at %s: %s", i, sv[i].step,
					      strerror(-sv[i].err));
		if (sv[i].id >= 0 && sv[i].id < NCONN) {
			EXPECT_FALSE(seen[sv[i].id]) TH_LOG("client %d accepted twice", sv[i].id);
			seen[sv[i].id] = 1;
		}
		close(sv[i].fd);
	}
	close(lfd);
	EXPECT_EQ(NCONN, accepted);
	EXPECT_EQ(NCONN, good);
}

struct bulk {
	int fd, type, count;
	size_t len;
	uint32_t seed;
	int err;
	pthread_t thread;
};

static void *bulk_send(void *arg)
{
	struct bulk *b = arg;
	char *buf = malloc(b->len);
	int i;

	b->err = buf ? 0 : -ENOMEM;
	for (i = 0; i < b->count && !b->err; i++) {
		sd_fill(buf, b->len, b->seed + i);
		b->err = sd_msg_send(b->fd, b->type, buf, b->len);
	}
	free(buf);
	return NULL;
}

static void *bulk_recv(void *arg)
{
	struct bulk *b = arg;
	char *buf = malloc(b->len);
	int i;
	long n;

	b->err = buf ? 0 : -ENOMEM;
	for (i = 0; i < b->count && !b->err; i++) {
		n = sd_msg_recv(b->fd, b->type, buf, b->len);
		if (n != (long)b->len)
			b->err = n < 0 ? n : -EIO;
		else if (sd_check(buf, b->len, b->seed + i) != -1)
			b->err = -EBADMSG;
	}
	free(buf);
	return NULL;
}

/*
 * Both ends send and receive at full speed at the same time. Small socket
 * buffers on both ends make each direction run into back-pressure (full
 * send queue, receiver holding back credits) many times over with a
 * volume the debug kernel moves in seconds.
 */
#define DUPLEX_COUNT 8	/* 512 KiB each way: 16 times the socket buffers */
#define DUPLEX_LEN 65536
#define DUPLEX_BUF 16384	/* the kernel doubles it */

static void full_duplex(struct __test_metadata *_metadata,
			const struct sd_target *t, int type)
{
	struct bulk b[4];
	const char *why = "";
	int c, s, i, r, v = DUPLEX_BUF;

	r = sd_pair_type(t, type, &c, &s, &why);
	ASSERT_EQ(0, r) TH_LOG("%s: %s", why, strerror(-r));
	sd_set_timeouts(c, 60000);
	sd_set_timeouts(s, 60000);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, setsockopt(i ? s : c, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
		ASSERT_EQ(0, setsockopt(i ? s : c, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)));
	}
	b[0] = (struct bulk){ .fd = c, .type = type, .count = DUPLEX_COUNT,
			      .len = DUPLEX_LEN, .seed = 1 };
	b[1] = (struct bulk){ .fd = s, .type = type, .count = DUPLEX_COUNT,
			      .len = DUPLEX_LEN, .seed = 1 };
	b[2] = (struct bulk){ .fd = s, .type = type, .count = DUPLEX_COUNT,
			      .len = DUPLEX_LEN, .seed = 9000 };
	b[3] = (struct bulk){ .fd = c, .type = type, .count = DUPLEX_COUNT,
			      .len = DUPLEX_LEN, .seed = 9000 };
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&b[i].thread, NULL,
					    i % 2 ? bulk_recv : bulk_send, &b[i]));
	for (i = 0; i < 4; i++) {
		pthread_join(b[i].thread, NULL);
		EXPECT_EQ(0, b[i].err) TH_LOG("%s %s: %s", i < 2 ? "c->s" : "s->c",
					     i % 2 ? "receive" : "send", strerror(-b[i].err));
	}
	close(c);
	close(s);
}

TEST_F_TIMEOUT(conc, full_duplex_stream, 240)
{
	full_duplex(_metadata, &variant->t, SOCK_STREAM);
}

TEST_F_TIMEOUT(conc, full_duplex_seqpacket, 240)
{
	full_duplex(_metadata, &variant->t, SOCK_SEQPACKET);
}

TEST_HARNESS_MAIN
