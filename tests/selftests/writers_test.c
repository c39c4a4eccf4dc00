// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads writing one SOCK_STREAM socket (issue #26): each sends
 * whole framed messages of 1 MiB, several times what SO_SNDBUF stages, so
 * that each waits for room and credits, with the socket lock released,
 * while the other is inside sendmsg(). A reader on the other end takes
 * every message whole and checks its length, its writer, its place in
 * that writer's sequence and every byte, and counts the bytes. Before the
 * fix the second writer went on with the first one's message from a
 * length read before its wait: the connection wedged or failed.
 */
#include "kselftest_harness.h"
#include "sd_test.h"

#define WRITERS 2
#define MSGS 4			/* per writer: 2 x 4 MiB in all */
#define MSG (1024 * 1024)	/* the default max_fragmented_size */
/*
 * The exchange must end within this; a TCG guest with KASAN moves a few
 * MB/s, so 8 MiB takes seconds. The writers' and the reader's own waits
 * give up after SD_STEP_MS of no progress.
 */
#define DEADLINE_MS 150000

FIXTURE(writers) {
	int c, s;
};

SD_TARGET_VARIANT(writers);

SD_ADD_TARGET_VARIANTS(writers);

FIXTURE_SETUP(writers)
{
	self->c = -1;
	self->s = -1;
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(writers)
{
	sd_teardown_pair(self->c, self->s, 0);
}

/* Message seq of writer id: its first 4 bytes say whose it is. */
static __u32 msg_seed(int id, int seq)
{
	return (__u32)id << 16 | (__u32)seq;
}

struct writer {
	int fd, id;
	int err;		/* 0 or -errno */
	int sent;		/* messages */
	long t0, ms;		/* start; when it finished, after t0 */
	pthread_t thread;
};

static void *writer_thread(void *arg)
{
	struct writer *w = arg;
	char *buf = malloc(MSG);
	__u32 seed;
	int i;

	w->err = -ENOMEM;
	if (!buf)
		goto out;
	w->err = 0;
	for (i = 0; i < MSGS && !w->err; i++) {
		seed = msg_seed(w->id, i);
		sd_fill(buf, MSG, seed);
		memcpy(buf, &seed, sizeof(seed));
		w->err = sd_stream_send(w->fd, buf, MSG);
		if (!w->err)
			w->sent++;
	}
	free(buf);
out:
	w->ms = sd_now_ms() - w->t0;
	return NULL;
}

struct reader {
	int fd;
	int err;
	const char *why;
	long bytes;		/* prefixes included: what the writers wrote */
	int msgs;
	int next[WRITERS];	/* each writer's next sequence number */
	long t0, ms;
	pthread_t thread;
};

static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	unsigned char *buf = malloc(MSG);
	__u32 seed, id, seq;
	long n, i;

	r->err = -ENOMEM;
	r->why = "malloc";
	if (!buf)
		goto out;
	r->err = 0;
	while (r->msgs < WRITERS * MSGS) {
		n = sd_stream_recv(r->fd, buf, MSG);
		if (n < 0) {
			r->err = n;
			r->why = "receive";
			break;
		}
		r->bytes += 4 + n;
		r->why = "a message of the wrong length";
		if (n != MSG)
			break;
		memcpy(&seed, buf, sizeof(seed));
		id = seed >> 16;
		seq = seed & 0xffff;
		r->why = "a message out of its writer's order";
		if (id >= WRITERS || seq != (__u32)r->next[id])
			break;
		r->why = "a wrong byte";
		for (i = sizeof(seed); i < n; i++)
			if (buf[i] != sd_pattern(seed, i))
				break;
		if (i < n)
			break;
		r->next[id]++;
		r->msgs++;
		r->why = NULL;
	}
	if (!r->err && r->why)
		r->err = -EBADMSG;
	free(buf);
out:
	r->ms = sd_now_ms() - r->t0;
	return NULL;
}

/*
 * Joins t by the deadline (ms since the epoch of sd_now_ms()); false if
 * it is still running then.
 */
static bool join_by(pthread_t t, long deadline)
{
	struct timespec ts;
	long left = deadline - sd_now_ms();

	clock_gettime(CLOCK_REALTIME, &ts);
	if (left < 0)
		left = 0;
	ts.tv_sec += left / 1000;
	ts.tv_nsec += (left % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(t, NULL, &ts) == 0;
}

TEST_F_TIMEOUT(writers, two_writers_one_stream, 240)
{
	struct writer w[WRITERS] = {};
	struct reader r = {};
	long t0, deadline;
	bool done[WRITERS + 1];
	char end[4];
	int i;

	PAIR(SOCK_STREAM);
	t0 = sd_now_ms();
	deadline = t0 + DEADLINE_MS;
	r.fd = self->s;
	r.t0 = t0;
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, reader_thread, &r));
	for (i = 0; i < WRITERS; i++) {
		w[i].fd = self->c;
		w[i].id = i;
		w[i].t0 = t0;
		ASSERT_EQ(0, pthread_create(&w[i].thread, NULL, writer_thread, &w[i]));
	}
	for (i = 0; i < WRITERS; i++)
		done[i] = join_by(w[i].thread, deadline);
	done[WRITERS] = join_by(r.thread, deadline);
	/* Past the deadline: end the connection so that the threads return. */
	for (i = 0; i <= WRITERS; i++) {
		if (done[i])
			continue;
		shutdown(self->c, SHUT_RDWR);
		shutdown(self->s, SHUT_RDWR);
		pthread_join(i < WRITERS ? w[i].thread : r.thread, NULL);
	}
	for (i = 0; i < WRITERS; i++) {
		EXPECT_TRUE(done[i]) TH_LOG("writer %d still writing after %d s", i,
					    DEADLINE_MS / 1000);
		EXPECT_EQ(0, w[i].err) TH_LOG("writer %d: %s after %d messages, at %ld ms",
					      i, strerror(-w[i].err), w[i].sent, w[i].ms);
		EXPECT_EQ(MSGS, w[i].sent);
	}
	EXPECT_TRUE(done[WRITERS]) TH_LOG("reader still reading after %d s",
					  DEADLINE_MS / 1000);
	EXPECT_EQ(0, r.err) TH_LOG("reader: %s (%s) after %d messages, %ld bytes, at %ld ms",
				   r.why ? r.why : "-", strerror(-r.err), r.msgs, r.bytes, r.ms);
	EXPECT_EQ(WRITERS * MSGS, r.msgs);
	EXPECT_EQ((long)WRITERS * MSGS * (4 + MSG), r.bytes);
	TH_LOG("writers done at %ld and %ld ms, reader at %ld ms", w[0].ms, w[1].ms, r.ms);
	/* The stream is still in step both ways. */
	ASSERT_EQ(0, sd_stream_send(self->c, "end", 3));
	ASSERT_EQ(3, sd_stream_recv(self->s, end, sizeof(end)));
	ASSERT_EQ(0, sd_stream_send(self->s, "end", 3));
	ASSERT_EQ(3, sd_stream_recv(self->c, end, sizeof(end)));
}

TEST_HARNESS_MAIN
