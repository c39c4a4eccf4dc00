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

#define NCONN 64
#define ROUNDS 8
#define MSG 16384

FIXTURE(conc) {
	int unused;
};

FIXTURE_VARIANT(conc) {
	struct sd_target t;
};

SD_ADD_TARGET_VARIANTS(conc);

FIXTURE_SETUP(conc)
{
	const char *why = sd_target_unusable(&variant->t);

	if (why)
		SKIP(return, "%s", why);
	ASSERT_LT(0, sd_family()) TH_LOG("af_smbdirect is not loaded");
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
	fd = sd_connect_type(c->t, SOCK_STREAM, c->port);
	c->err = fd < 0 ? fd : 0;
	if (fd < 0)
		goto out;
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

	lfd = sd_listen_type(&variant->t, SOCK_STREAM, NCONN, &port);
	ASSERT_LE(0, lfd) TH_LOG("listen: %s", strerror(-lfd));
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

/* Both ends send and receive at full speed at the same time. */
static void full_duplex(struct __test_metadata *_metadata,
			const struct sd_target *t, int type)
{
	struct bulk b[4];
	const char *why = "";
	int c, s, i, r;

	r = sd_pair_type(t, type, &c, &s, &why);
	ASSERT_EQ(0, r) TH_LOG("%s: %s", why, strerror(-r));
	sd_set_timeouts(c, 60000);
	sd_set_timeouts(s, 60000);
	b[0] = (struct bulk){ .fd = c, .type = type, .count = 100, .len = 65536, .seed = 1 };
	b[1] = (struct bulk){ .fd = s, .type = type, .count = 100, .len = 65536, .seed = 1 };
	b[2] = (struct bulk){ .fd = s, .type = type, .count = 100, .len = 65536, .seed = 9000 };
	b[3] = (struct bulk){ .fd = c, .type = type, .count = 100, .len = 65536, .seed = 9000 };
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
