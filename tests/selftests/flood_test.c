// SPDX-License-Identifier: GPL-2.0
/*
 * A connect-request flood (issue #26 item 3): a raw rdma_cm peer
 * (librdmacm, a real RC QP, never a byte of SMB-Direct) connects to our
 * listeners again and again and never sends the negotiate request. Each
 * request a listener answers costs a socket, a QP and its buffers before
 * any negotiation, so the module holds those half-open children below
 * the listen_half_open_max bound per listener and netns_half_open_max
 * per network namespace, rejects the requests beyond and counts them
 * (SMBDIRECT_A_STATS_LISTEN_HALF_OPEN_DROPS). The cases check the
 * bounds from the peer's side (how many connects were accepted and
 * rejected), from the module's counters and from the device's QP table,
 * that a real client still connects, and that every way out of the
 * half-open state (the peer's disconnect, the negotiation timeout, the
 * listener's close) gives its slot back exactly once.
 *
 * The test build's hook test_negotiate_timeout_ms holds the children as
 * long as a case needs them (or lets them time out sooner).
 */
#include "kselftest_harness.h"
#include "sd_flood.h"
#include "sd_genl_test.h"

#define PARAM_DIR "/sys/module/af_smbdirect/parameters/"
#define NEGOTIATE_HOOK "/sys/kernel/debug/af_smbdirect/test_negotiate_timeout_ms"

/* Small bounds, so that a flood of a few dozen requests meets both. */
#define LISTEN_MAX 8
#define NETNS_MAX 12

static int write_long(const char *path, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	return sd_write_str(path, buf);
}

/*
 * The RC QPs the kernel owns on the target's device (rdma res show: those
 * without a process), or -errno: the module's children and any
 * connection of ours.
 */
static int kernel_rc_qps(const char *link)
{
	char cmd[128], line[512];
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma res show qp link %s 2>/dev/null", link);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "type RC") && strstr(line, "comm [") && !strstr(line, " pid "))
			n++;
	return pclose(f) == 0 ? n : -EIO;
}

/* ---- the fixture ------------------------------------------------------- */

FIXTURE(flood) {
	int a, b;		/* two listeners */
	int port_a, port_b;
	long listen_max, netns_max, negotiate_ms;	/* to restore */
	struct flood f;
	char link[64];
};

SD_TARGET_VARIANT(flood);

FIXTURE_VARIANT_ADD(flood, rxe4) { .t = SD_TARGET_RXE4 };
FIXTURE_VARIANT_ADD(flood, siw6) { .t = SD_TARGET_SIW6 };

FIXTURE_SETUP(flood)
{
	int port;

	self->a = -1;
	self->b = -1;
	self->listen_max = -1;
	self->netns_max = -1;
	self->negotiate_ms = -1;
	/*
	 * siw before 7.2 (6.12.95's siw_cm.c) lets its CM work and a
	 * listener's teardown both release a pending connection's socket:
	 * KASAN slab-use-after-free in siw_socket_disassoc() from
	 * siw_cm_work_handler() under this flood, in make check on one CPU
	 * and on two (2026-11-27). 7.2's siw clears cep->sock before
	 * sock_release(). The iWARP flood runs where siw has that fix.
	 */
	if (variant->t.transport == SMBDIRECT_TRANSPORT_IWARP && sd_kernel_before(7, 2))
		SKIP(return, "siw before 7.2 frees a pending socket twice under a connect flood");
	SD_SETUP_TARGET();
	ASSERT_EQ(0, sd_target_link(&variant->t, self->link, sizeof(self->link)));
	/* The point of the test: without the bounds it must fail, not skip. */
	self->listen_max = sd_module_param("listen_half_open_max");
	self->netns_max = sd_module_param("netns_half_open_max");
	ASSERT_LE(0, self->listen_max) TH_LOG("no listen_half_open_max parameter");
	ASSERT_LE(0, self->netns_max) TH_LOG("no netns_half_open_max parameter");
	if (sd_read_long(NEGOTIATE_HOOK, &self->negotiate_ms))
		SKIP(return, "not a test build: no %s", NEGOTIATE_HOOK);
	ASSERT_EQ(0, write_long(PARAM_DIR "listen_half_open_max", LISTEN_MAX));
	ASSERT_EQ(0, write_long(PARAM_DIR "netns_half_open_max", NETNS_MAX));
	/* Held until the peer lets go, unless a case says otherwise. */
	ASSERT_EQ(0, write_long(NEGOTIATE_HOOK, 60000));
	/* A backlog well above the bounds: the bounds are what is tested. */
	self->a = sd_listen_type(&variant->t, SOCK_STREAM, 64, &port);
	ASSERT_LE(0, self->a);
	self->port_a = port;
	self->b = sd_listen_type(&variant->t, SOCK_STREAM, 64, &port);
	ASSERT_LE(0, self->b);
	self->port_b = port;
	ASSERT_EQ(0, flood_init(&self->f));
}

FIXTURE_TEARDOWN(flood)
{
	flood_free(&self->f);
	if (self->a >= 0)
		close(self->a);
	if (self->b >= 0)
		close(self->b);
	if (self->listen_max >= 0)
		write_long(PARAM_DIR "listen_half_open_max", self->listen_max);
	if (self->netns_max >= 0)
		write_long(PARAM_DIR "netns_half_open_max", self->netns_max);
	if (self->negotiate_ms >= 0)
		write_long(NEGOTIATE_HOOK, self->negotiate_ms);
}

/*
 * A real client connects to lfd's port: connect() negotiates, accept()
 * hands the connection over, one message crosses. 0 or -errno.
 */
static int legit_pair(const struct sd_target *t, int lfd, int port)
{
	return sd_stream_pair_once(t, lfd, port, "flood");
}

/* legit_pair() until it succeeds or ms pass: slots come back asynchronously. */
static int legit_pair_within(const struct sd_target *t, int lfd, int port, int ms)
{
	long end = sd_now_ms() + ms;
	int ret;

	do {
		ret = legit_pair(t, lfd, port);
		if (!ret || ret != -ECONNREFUSED)
			return ret;
		sd_sleep_ms(200);
	} while (sd_now_ms() < end);
	return ret;
}

/*
 * Waits until the kernel's RC QPs on the link are down to want (children
 * and their QPs go asynchronously after the peer's disconnect); the last
 * count.
 */
static int kernel_qps_down_to(const char *link, int want, int ms)
{
	long end = sd_now_ms() + ms;
	int n;

	do {
		n = kernel_rc_qps(link);
		if (n <= want)
			return n;
		sd_sleep_ms(100);
	} while (sd_now_ms() < end);
	return n;
}

#define FLOOD(port, n) do {						\
	int _n = (n), _r = flood_start(&self->f, &variant->t, (port), _n); \
									\
	ASSERT_EQ(0, _r) TH_LOG("starting %d connect requests: %s", _n, strerror(-_r)); \
	ASSERT_EQ(0, flood_run(&self->f, flood_settled, SD_STEP_MS))	\
		TH_LOG("connect requests still unanswered after %d ms", SD_STEP_MS); \
	ASSERT_EQ(0, self->f.failed)					\
		TH_LOG("%d connects failed otherwise (first error %s)",	\
		       self->f.failed, strerror(-self->f.err));	\
} while (0)

/*
 * 16 requests to one listener: 8 answered (its bound), 8 rejected and
 * counted. A real client still gets through to the other listener. 8 to
 * that one: 4 answered, the namespace's bound (12) full, 4 rejected. No
 * more than 12 of the module's QPs exist meanwhile. Once the peer lets
 * go, the real client gets through to the first listener, and a new
 * flood of it gets its 8 again: each disconnect gave its slot back once.
 */
TEST_F(flood, bounded)
{
	__u64 drops0, drops1, over0, over1;
	int qps0, qps, est, rej;

	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_LISTEN_HALF_OPEN_DROPS, &drops0))
		TH_LOG("no listen_half_open_drops counter");
	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_LISTEN_OVERFLOWS, &over0));
	qps0 = kernel_rc_qps(self->link);
	ASSERT_LE(0, qps0) TH_LOG("rdma res show qp: %s", strerror(-qps0));

	FLOOD(self->port_a, 16);
	flood_count(&self->f, self->port_a, &est, &rej);
	TH_LOG("listener A: %d answered, %d rejected", est, rej);
	EXPECT_EQ(LISTEN_MAX, est);
	EXPECT_EQ(16 - LISTEN_MAX, rej);

	/* A real client, to the other listener, during the flood. */
	ASSERT_EQ(0, legit_pair(&variant->t, self->b, self->port_b));
	/* Its two QPs go once both ends closed; the flood's 8 stay. */
	EXPECT_EQ(qps0 + LISTEN_MAX, kernel_qps_down_to(self->link, qps0 + LISTEN_MAX,
							SD_STEP_MS));

	FLOOD(self->port_b, 8);
	flood_count(&self->f, self->port_b, &est, &rej);
	TH_LOG("listener B: %d answered, %d rejected", est, rej);
	EXPECT_EQ(NETNS_MAX - LISTEN_MAX, est);
	EXPECT_EQ(8 - (NETNS_MAX - LISTEN_MAX), rej);
	EXPECT_EQ(NETNS_MAX, self->f.live_max);

	qps = kernel_rc_qps(self->link);
	TH_LOG("the kernel's RC QPs: %d before, %d during the flood", qps0, qps);
	EXPECT_GE(qps0 + NETNS_MAX, qps);

	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_LISTEN_HALF_OPEN_DROPS, &drops1));
	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_LISTEN_OVERFLOWS, &over1));
	EXPECT_EQ(16 - LISTEN_MAX + 8 - (NETNS_MAX - LISTEN_MAX), (int)(drops1 - drops0));
	EXPECT_EQ(0, (int)(over1 - over0));

	/* The peer lets go: every slot comes back, once. */
	flood_release(&self->f);
	EXPECT_EQ(qps0, kernel_qps_down_to(self->link, qps0, SD_STEP_MS));
	ASSERT_EQ(0, legit_pair_within(&variant->t, self->a, self->port_a, SD_STEP_MS));
	FLOOD(self->port_a, 10);
	flood_count(&self->f, self->port_a, &est, &rej);
	EXPECT_EQ(LISTEN_MAX, est);
	EXPECT_EQ(10 - LISTEN_MAX, rej);
}

/*
 * Children that time out in the negotiation give their slots back: a
 * second flood after the first timed out gets the whole bound again.
 */
TEST_F(flood, negotiation_timeout)
{
	int est, rej, qps0 = kernel_rc_qps(self->link);

	ASSERT_LE(0, qps0);
	/*
	 * [MS-SMBD]'s 5 s: long enough for the whole flood to be answered
	 * before the first child times out, even under TCG.
	 */
	ASSERT_EQ(0, write_long(NEGOTIATE_HOOK, 5000));
	FLOOD(self->port_a, LISTEN_MAX + 2);
	flood_count(&self->f, self->port_a, &est, &rej);
	EXPECT_EQ(LISTEN_MAX, est);
	EXPECT_EQ(2, rej);
	/* The module drops them (the peer sees it disconnect). */
	ASSERT_EQ(0, flood_run(&self->f, flood_all_closed, SD_STEP_MS))
		TH_LOG("%d of the half-open connections still up", self->f.live);
	EXPECT_EQ(qps0, kernel_qps_down_to(self->link, qps0, SD_STEP_MS));
	flood_release(&self->f);
	FLOOD(self->port_a, LISTEN_MAX + 2);
	flood_count(&self->f, self->port_a, &est, &rej);
	EXPECT_EQ(LISTEN_MAX, est);
	EXPECT_EQ(2, rej);
}

/*
 * A peer that never completes the connection (IB/RoCE: no RTU after our
 * REP) is dropped at the deadline counted from the answered request, not
 * once ib_cm gave up retrying the REP (over a minute with rdma_cm's
 * values, hours with those a raw peer may put in its REQ): the listener
 * gets its slots back and a real client gets through.
 */
TEST_F(flood, no_rtu_dropped_at_deadline)
{
	int est, rej, ret, qps0 = kernel_rc_qps(self->link);
	long t0;

	if (variant->t.transport == SMBDIRECT_TRANSPORT_IWARP)
		SKIP(return, "iWARP has no RTU: our MPA reply completes the connection");
	ASSERT_LE(0, qps0);
	/* Long enough for the whole flood to be answered first, as above. */
	ASSERT_EQ(0, write_long(NEGOTIATE_HOOK, 5000));
	self->f.no_rtu = true;
	FLOOD(self->port_a, LISTEN_MAX + 2);
	flood_count(&self->f, self->port_a, &est, &rej);
	EXPECT_EQ(LISTEN_MAX, est);
	EXPECT_EQ(2, rej);
	t0 = sd_now_ms();
	ret = legit_pair_within(&variant->t, self->a, self->port_a, 20000);
	EXPECT_EQ(0, ret) TH_LOG("the listener stayed full: %s", strerror(-ret));
	TH_LOG("a real client got through %ld ms after the answers", sd_now_ms() - t0);
	EXPECT_EQ(qps0, kernel_qps_down_to(self->link, qps0, SD_STEP_MS));
}

/*
 * A listener closed with half-open children gives the namespace their
 * slots back: the other listener then gets its whole bound.
 */
TEST_F(flood, listener_close)
{
	int est, rej;

	FLOOD(self->port_a, LISTEN_MAX);
	flood_count(&self->f, self->port_a, &est, &rej);
	EXPECT_EQ(LISTEN_MAX, est);
	close(self->a);
	self->a = -1;
	/* The peer learns of the close when its connections are dropped. */
	ASSERT_EQ(0, flood_run(&self->f, flood_all_closed, SD_STEP_MS));
	FLOOD(self->port_b, LISTEN_MAX + 2);
	flood_count(&self->f, self->port_b, &est, &rej);
	EXPECT_EQ(LISTEN_MAX, est);
	EXPECT_EQ(2, rej);
	flood_release(&self->f);
	ASSERT_EQ(0, legit_pair_within(&variant->t, self->b, self->port_b, SD_STEP_MS));
}

/*
 * Below the half-open bounds the backlog still holds: a listener with a
 * backlog of 2 answers 2 of 4 requests and counts the others as
 * listen_overflows, not as half-open drops. Over iWARP the layers below
 * get listen()'s backlog too (rdma_listen(): iw_cm, siw's TCP listener)
 * and may refuse a request before it reaches us: seen once on siw6, 2
 * rejected and 1 counted.
 */
TEST_F(flood, backlog_overflow)
{
	__u64 drops0, drops1, over0, over1;
	int fd, port, est, rej;

	fd = sd_listen_type(&variant->t, SOCK_STREAM, 2, &port);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_LISTEN_HALF_OPEN_DROPS, &drops0))
		TH_LOG("no listen_half_open_drops counter");
	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_LISTEN_OVERFLOWS, &over0));
	FLOOD(port, 4);
	flood_count(&self->f, port, &est, &rej);
	EXPECT_EQ(2, est);
	EXPECT_EQ(2, rej);
	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_LISTEN_HALF_OPEN_DROPS, &drops1));
	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_LISTEN_OVERFLOWS, &over1));
	EXPECT_LE(1, (int)(over1 - over0));
	EXPECT_GE(rej, (int)(over1 - over0));
	if (variant->t.transport != SMBDIRECT_TRANSPORT_IWARP)
		EXPECT_EQ(2, (int)(over1 - over0));
	EXPECT_EQ(0, (int)(drops1 - drops0));
	flood_release(&self->f);
	close(fd);
}

TEST_HARNESS_MAIN
