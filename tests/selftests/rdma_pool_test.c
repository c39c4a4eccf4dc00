// SPDX-License-Identifier: GPL-2.0
/*
 * Pooled, non-blocking registration (uapi/linux/smbdirect.h, REGISTER and
 * DEREGISTER): A (the SMB client) registers and deregisters, B (the
 * server) moves data against A's descriptors. A deregistered memory region
 * is reused by the next registration with a new key, and the old token
 * stays dead for the peer; 1000 round trips use one region and leave
 * nothing pinned; SMBDIRECT_DEREG_ASYNC completes exactly once on the
 * error queue, at once after a remote invalidation, with an error once
 * the connection is over, and close() with deregistrations outstanding
 * leaves nothing pinned. The benchmark case prints microseconds per
 * REGISTER + DEREGISTER pair.
 */
#include <poll.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "sd_test.h"

#define PAGE 4096UL
#define NREG 8

FIXTURE(pool) {
	int c, s;		/* c is A (registers), s is B (moves data) */
	pid_t child;
};

SD_TARGET_VARIANT(pool);

SD_ADD_TARGET_VARIANTS(pool);

FIXTURE_SETUP(pool)
{
	self->c = self->s = -1;
	self->child = 0;
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(pool)
{
	sd_teardown_pair(self->c, self->s, self->child);
}

static void *map_bytes(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* One registration of one descriptor. */
static int reg1(int fd, __u32 flags, void *buf, size_t len,
		struct smbdirect_buffer_descriptor_v1 *d, __u64 *id)
{
	__u32 n;
	int ret = sd_register_buf(fd, flags, buf, len, d, 1, &n, id);

	return ret ? ret : (n == 1 ? 0 : -EBADMSG);
}

static int dereg_async(int fd, __u64 id, __u64 cookie, __u32 *state)
{
	struct smbdirect_deregister d = {
		.size = sizeof(d), .flags = SMBDIRECT_DEREG_ASYNC, .id = id,
		.state = 0xdead, .cookie = cookie,
	};
	int ret = ioctl(fd, SMBDIRECT_IOC_DEREGISTER, &d) ? -errno : 0;

	if (state)
		*state = d.state;
	return ret;
}

/* One recvmsg(MSG_ERRQUEUE): completions reaped, or -errno. */
static int reap(int fd, struct smbdirect_rdma_completion *c, unsigned int max)
{
	char ctl[CMSG_SPACE(sizeof(*c) * 32)] __attribute__((aligned(8)));
	struct msghdr mh = { .msg_control = ctl };
	struct cmsghdr *cm;
	unsigned int n;

	if (max > 32)
		max = 32;
	mh.msg_controllen = CMSG_SPACE(sizeof(*c) * max);
	if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return -errno;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_level != SOL_SMBDIRECT ||
	    cm->cmsg_type != SMBDIRECT_CMSG_RDMA_COMPLETION)
		return -EBADMSG;
	n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(*c);
	if (n * sizeof(*c) != cm->cmsg_len - CMSG_LEN(0) || n > max)
		return -EBADMSG;
	memcpy(c, CMSG_DATA(cm), n * sizeof(*c));
	return n;
}

/* Reaps until want completions arrived or ms passed; how many, or -errno. */
static int reap_all(int fd, struct smbdirect_rdma_completion *c, unsigned int want, int ms)
{
	long end = sd_now_ms() + ms;
	unsigned int got = 0;
	int r;

	while (got < want && sd_now_ms() < end) {
		struct pollfd p = { .fd = fd, .events = 0 };

		r = poll(&p, 1, 50);
		if (r < 0)
			return -errno;
		r = reap(fd, c + got, want - got);
		if (r == -EAGAIN) {
			/* A closed connection polls POLLHUP: do not spin. */
			if (p.revents & ~POLLERR)
				sd_sleep_ms(10);
			continue;
		}
		if (r < 0)
			return r;
		got += r;
	}
	return got;
}

/* Every cookie base..base+n-1 exactly once among c[0..n). */
static int cookies_once(const struct smbdirect_rdma_completion *c, unsigned int n, __u64 base)
{
	unsigned char seen[64] = { 0 };
	unsigned int i;

	if (n > 64)
		return 0;
	for (i = 0; i < n; i++) {
		if (c[i].cookie < base || c[i].cookie >= base + n || seen[c[i].cookie - base])
			return 0;
		seen[c[i].cookie - base] = 1;
	}
	return 1;
}

/* The peer refused an access (see rdma_test.c's refused()). */
static int refused(const struct sd_target *t, int err)
{
	if (err == -EACCES)
		return 1;
	return !strcmp(t->kind, "siw") && (err == -ECONNRESET || err == -EIO || err == 0);
}

/* A sends d to B as a message of its own; B gets it back in got. */
static void offer(struct __test_metadata *_metadata, int a, int b,
		  const struct smbdirect_buffer_descriptor_v1 *d,
		  struct smbdirect_buffer_descriptor_v1 *got)
{
	ASSERT_EQ(0, sd_msg_send(a, SOCK_SEQPACKET, d, sizeof(*d)));
	ASSERT_EQ((long)sizeof(*got), sd_msg_recv(b, SOCK_SEQPACKET, got, sizeof(*got)));
}

/*
 * A deregistered region is reused by the next registration: its token
 * keeps the region's index (the upper 24 bits on rxe and siw, which give
 * a new region a new index) with a new key. The new token works; the old
 * one, sent to B, is refused, and A's memory keeps the new data.
 */
TEST_F(pool, reused_region_new_key_old_token_dead)
{
	struct smbdirect_buffer_descriptor_v1 d1, d2, g1, g2;
	long pin0 = sd_vm_pin_kb(getpid());
	char *a = map_bytes(16384), *b = map_bytes(16384);
	struct iovec iov;
	__u64 id1, id2, bytes;
	__u32 t1, t2;
	int ret;
	char k;

	ASSERT_TRUE(a && b);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg1(self->c, SMBDIRECT_ACCESS_PEER_WRITE, a, 16384, &d1, &id1));
	offer(_metadata, self->c, self->s, &d1, &g1);
	ASSERT_EQ(0, sd_deregister(self->c, id1, NULL));
	ASSERT_EQ(0, reg1(self->c, SMBDIRECT_ACCESS_PEER_WRITE, a, 16384, &d2, &id2));
	t1 = le32toh(d1.token);
	t2 = le32toh(d2.token);
	TH_LOG("token %#x, after DEREGISTER and REGISTER %#x", t1, t2);
	EXPECT_NE(t1, t2);
	EXPECT_EQ(t1 >> 8, t2 >> 8) TH_LOG("the second registration did not reuse the region");
	offer(_metadata, self->c, self->s, &d2, &g2);
	sd_fill(b, 16384, 7);
	iov = (struct iovec){ b, 16384 };
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, &g2, 1, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("WRITEV with the new token: %s", strerror(-ret));
	ASSERT_EQ(16384U, bytes);
	ASSERT_EQ(0, sd_msg_send(self->s, SOCK_SEQPACKET, "K", 1));
	ASSERT_EQ(1, sd_msg_recv(self->c, SOCK_SEQPACKET, &k, 1));
	EXPECT_EQ(-1, sd_check(a, 16384, 7));
	sd_fill(b, 16384, 8);
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, &g1, 1, &bytes);
	EXPECT_TRUE(refused(&variant->t, ret)) TH_LOG("WRITEV with the old token: %s",
						      ret ? strerror(-ret) : "succeeded");
	sd_sleep_ms(100);
	EXPECT_EQ(-1, sd_check(a, 16384, 7)) TH_LOG("the old token wrote A's memory");
	EXPECT_EQ(0, sd_deregister(self->c, id2, NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	munmap(a, 16384);
	munmap(b, 16384);
}

/*
 * 1000 REGISTER + DEREGISTER pairs, sync then async: one region serves
 * them all (its index never changes: no memory region is allocated), the
 * async completions arrive once each, and nothing stays pinned. Prints
 * microseconds per pair.
 */
TEST_F_TIMEOUT(pool, thousand_round_trips, 300)
{
	struct smbdirect_buffer_descriptor_v1 d;
	struct smbdirect_rdma_completion c[32];
	long pin0 = sd_vm_pin_kb(getpid()), fp0 = 0, fp;
	char *a = map_bytes(8192);
	__u32 first = 0, moved = 0, async_bad = 0;
	int i, ret = 0, r, fp_ok = !sd_foll_pins(&fp0);
	struct timespec t0, t1;
	__u64 id;
	double us;

	ASSERT_TRUE(a != NULL);
	PAIR(SOCK_SEQPACKET);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 1000 && !ret; i++) {
		ret = reg1(self->c, SMBDIRECT_ACCESS_PEER_WRITE, a, 8192, &d, &id);
		if (ret)
			break;
		if (!i)
			first = le32toh(d.token) >> 8;
		else if (le32toh(d.token) >> 8 != first)
			moved++;
		ret = sd_deregister(self->c, id, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ASSERT_EQ(0, ret) TH_LOG("pair %d: %s", i, strerror(-ret));
	us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / 1000;
	ksft_print_msg("%s: REGISTER + DEREGISTER: %.1f us per pair (1000)\n",
		       variant->t.kind, us);
	EXPECT_EQ(0U, moved) TH_LOG("%u registrations did not reuse the region", moved);
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 1000 && !ret; i++) {
		ret = reg1(self->c, SMBDIRECT_ACCESS_PEER_WRITE, a, 8192, &d, &id);
		if (ret)
			break;
		ret = dereg_async(self->c, id, i, NULL);
		if (ret)
			break;
		/* The memory is reused next: wait for its completion. */
		r = reap_all(self->c, c, 1, SD_STEP_MS);
		if (r != 1 || c[0].cookie != (__u64)i || c[0].status || c[0].bytes != 8192)
			async_bad++;
		if (r != 1)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ASSERT_EQ(0, ret) TH_LOG("async pair %d: %s", i, strerror(-ret));
	ASSERT_EQ(0U, async_bad);
	us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / 1000;
	ksft_print_msg("%s: REGISTER + DEREGISTER(ASYNC) + reap: %.1f us per pair (1000)\n",
		       variant->t.kind, us);
	EXPECT_EQ(-EAGAIN, reap(self->c, c, 32)) TH_LOG("a completion came twice");
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	if (fp_ok) {
		fp = sd_wait_foll_pins(fp0, SD_STEP_MS);
		EXPECT_EQ(fp0, fp) TH_LOG("FOLL_PIN pins leaked");
	}
	munmap(a, 8192);
}

/*
 * SMBDIRECT_DEREG_ASYNC after B used the token: the call returns, POLLERR
 * shows the completion, which comes exactly once with the cookie, status
 * 0 and the registered length; by then VmPin is back and the token is
 * dead for B.
 */
TEST_F(pool, async_deregister_completes_once)
{
	struct smbdirect_buffer_descriptor_v1 d, g;
	struct smbdirect_rdma_completion c[4];
	long pin0 = sd_vm_pin_kb(getpid());
	char *a = map_bytes(3 * PAGE), *b = map_bytes(3 * PAGE);
	struct iovec iov;
	__u64 id, bytes;
	__u32 state;
	int ret, r;
	char k;

	ASSERT_TRUE(a && b);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg1(self->c, SMBDIRECT_ACCESS_PEER_WRITE, a + 100, 2 * PAGE, &d, &id));
	EXPECT_EQ(pin0 + 12, sd_vm_pin_kb(getpid()));
	offer(_metadata, self->c, self->s, &d, &g);
	sd_fill(b, 2 * PAGE, 21);
	iov = (struct iovec){ b, 2 * PAGE };
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, &g, 1, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("WRITEV: %s", strerror(-ret));
	ASSERT_EQ(0, sd_msg_send(self->s, SOCK_SEQPACKET, "K", 1));
	ASSERT_EQ(1, sd_msg_recv(self->c, SOCK_SEQPACKET, &k, 1));
	EXPECT_EQ(-1, sd_check(a + 100, 2 * PAGE, 21));

	ASSERT_EQ(0, dereg_async(self->c, id, 0xc0ffee, &state));
	EXPECT_EQ(0U, state);
	EXPECT_EQ(-ENOENT, sd_deregister(self->c, id, NULL)) TH_LOG("the id is gone at once");
	r = sd_poll(self->c, POLLIN, SD_STEP_MS);
	EXPECT_TRUE(r > 0 && (r & POLLERR)) TH_LOG("poll: %#x", r);
	r = reap_all(self->c, c, 1, SD_STEP_MS);
	ASSERT_EQ(1, r) TH_LOG("%s", r < 0 ? strerror(-r) : "no completion");
	EXPECT_EQ(0xc0ffeeULL, c[0].cookie);
	EXPECT_EQ(0, c[0].status);
	EXPECT_EQ(2 * PAGE, c[0].bytes);
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid())) TH_LOG("pinned after the completion");
	EXPECT_EQ(-EAGAIN, reap(self->c, c, 4)) TH_LOG("a second completion");
	r = sd_poll(self->c, POLLIN, 0);
	EXPECT_FALSE(r > 0 && (r & POLLERR)) TH_LOG("POLLERR with nothing queued");

	sd_fill(b, 2 * PAGE, 22);
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, &g, 1, &bytes);
	EXPECT_TRUE(refused(&variant->t, ret)) TH_LOG("WRITEV after the completion: %s",
						      ret ? strerror(-ret) : "succeeded");
	sd_sleep_ms(100);
	EXPECT_EQ(-1, sd_check(a + 100, 2 * PAGE, 21)) TH_LOG("a dead token wrote A's memory");
	munmap(a, 3 * PAGE);
	munmap(b, 3 * PAGE);
}

/*
 * B answers with SEND_WITH_INVALIDATE of A's token; A's async DEREGISTER
 * then posts nothing: state says REMOTE_INVALIDATED and the completion is
 * already queued when the call returns, with the pages unpinned.
 */
TEST_F(pool, async_after_remote_invalidation_at_once)
{
	struct smbdirect_buffer_descriptor_v1 d, g;
	struct smbdirect_rdma_completion c[4];
	long pin0 = sd_vm_pin_kb(getpid());
	char *a = map_bytes(4 * PAGE), *b = map_bytes(4 * PAGE);
	struct iovec iov;
	__u64 id, bytes;
	__u32 state;
	char ans[8];
	int ret, r;

	ASSERT_TRUE(a && b);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg1(self->c, SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE,
			  a, 4 * PAGE, &d, &id));
	offer(_metadata, self->c, self->s, &d, &g);
	sd_fill(b, 4 * PAGE, 31);
	iov = (struct iovec){ b, 4 * PAGE };
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, &g, 1, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("WRITEV: %s", strerror(-ret));
	ASSERT_EQ(0, sd_send_invalidate(self->s, SOCK_SEQPACKET, "answer", 6,
					le32toh(g.token)));
	ASSERT_EQ(6, sd_msg_recv(self->c, SOCK_SEQPACKET, ans, sizeof(ans)));
	EXPECT_EQ(-1, sd_check(a, 4 * PAGE, 31));

	ASSERT_EQ(0, dereg_async(self->c, id, 77, &state));
	EXPECT_EQ((__u32)SMBDIRECT_REG_STATE_REMOTE_INVALIDATED, state);
	r = reap(self->c, c, 4);
	ASSERT_EQ(1, r) TH_LOG("no completion queued by the call: %s",
			       r < 0 ? strerror(-r) : "several");
	EXPECT_EQ(77ULL, c[0].cookie);
	EXPECT_EQ(0, c[0].status);
	EXPECT_EQ(4 * PAGE, c[0].bytes);
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	/* The connection is fine: a new registration works. */
	ASSERT_EQ(0, reg1(self->c, SMBDIRECT_ACCESS_PEER_WRITE, a, PAGE, &d, &id));
	EXPECT_EQ(0, sd_deregister(self->c, id, &state));
	EXPECT_EQ(0U, state);
	munmap(a, 4 * PAGE);
	munmap(b, 4 * PAGE);
}

/*
 * close() right after NREG async deregistrations, none reaped: VmPin and
 * the system's FOLL_PIN balance come back.
 */
/*
 * A process that deregisters asynchronously and never reaps: each
 * completion keeps its registration's max_registrations slot until it is
 * reaped, so REGISTER fails with ENOBUFS once max_registrations of them
 * wait (before, the slots came free as the pages were unpinned and the
 * error queue grew without bound); reaping them all makes room again, and
 * each cookie comes exactly once.
 */
TEST_F_TIMEOUT(pool, unreaped_async_completions_hold_their_slots, 240)
{
	long cap = sd_module_param("max_registrations"), pin0 = sd_vm_pin_kb(getpid()), i;
	struct smbdirect_rdma_completion *c;
	struct smbdirect_buffer_descriptor_v1 d;
	char *a = map_bytes(PAGE), *seen;
	__u64 id;
	int ret, got = 0;

	ASSERT_LT(0, cap) TH_LOG("max_registrations: %s", strerror(-cap));
	ASSERT_GE(4096, cap) TH_LOG("max_registrations %ld: too many to try", cap);
	c = calloc(cap, sizeof(*c));
	seen = calloc(cap, 1);
	ASSERT_TRUE(a && c && seen);
	PAIR(SOCK_SEQPACKET);
	for (i = 0; i < cap; i++) {
		ret = reg1(self->c, SMBDIRECT_ACCESS_PEER_READ, a, PAGE, &d, &id);
		ASSERT_EQ(0, ret) TH_LOG("registration %ld of %ld: %s", i + 1, cap, strerror(-ret));
		ret = dereg_async(self->c, id, 0x5000 + i, NULL);
		ASSERT_EQ(0, ret) TH_LOG("DEREGISTER_ASYNC %ld: %s", i + 1, strerror(-ret));
	}
	/* Every LOCAL_INV completed and every page unpinned: all are queued. */
	EXPECT_EQ(pin0, sd_wait_vm_pin_kb(getpid(), pin0, SD_STEP_MS));
	sd_sleep_ms(50);
	ret = reg1(self->c, SMBDIRECT_ACCESS_PEER_READ, a, PAGE, &d, &id);
	EXPECT_EQ(-ENOBUFS, ret) TH_LOG("REGISTER with %ld completions unreaped: %s", cap,
					ret ? strerror(-ret) : "succeeded");
	if (!ret)
		EXPECT_EQ(0, sd_deregister(self->c, id, NULL));
	while (got < cap) {
		ret = reap_all(self->c, c + got, cap - got > 32 ? 32 : cap - got, SD_STEP_MS);
		ASSERT_LT(0, ret) TH_LOG("reaped %d of %ld: %s", got, cap,
					 ret < 0 ? strerror(-ret) : "nothing more");
		got += ret;
	}
	for (i = 0; i < cap; i++) {
		ASSERT_TRUE(c[i].cookie >= 0x5000 && c[i].cookie < 0x5000 + (__u64)cap &&
			    !seen[c[i].cookie - 0x5000])
			TH_LOG("completion %ld: cookie %#llx", i, (unsigned long long)c[i].cookie);
		seen[c[i].cookie - 0x5000] = 1;
		EXPECT_EQ(0, c[i].status);
	}
	EXPECT_EQ(-EAGAIN, reap(self->c, c, 1)) TH_LOG("more completions than deregistrations");
	ret = reg1(self->c, SMBDIRECT_ACCESS_PEER_READ, a, PAGE, &d, &id);
	EXPECT_EQ(0, ret) TH_LOG("REGISTER after reaping: %s", strerror(-ret));
	if (!ret)
		EXPECT_EQ(0, sd_deregister(self->c, id, NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	free(c);
	free(seen);
	munmap(a, PAGE);
}

TEST_F(pool, close_with_async_outstanding)
{
	struct smbdirect_buffer_descriptor_v1 d;
	long pin0 = sd_vm_pin_kb(getpid()), fp0 = 0, fp;
	char *a = map_bytes(NREG * 2 * PAGE);
	int i, fp_ok = !sd_foll_pins(&fp0);
	__u64 id[NREG];

	ASSERT_TRUE(a != NULL);
	PAIR(SOCK_SEQPACKET);
	for (i = 0; i < NREG; i++)
		ASSERT_EQ(0, reg1(self->c, SMBDIRECT_ACCESS_PEER_READ, a + i * 2 * PAGE,
				  2 * PAGE, &d, &id[i]));
	EXPECT_EQ(pin0 + NREG * 8, sd_vm_pin_kb(getpid()));
	for (i = 0; i < NREG; i++)
		ASSERT_EQ(0, dereg_async(self->c, id[i], i, NULL));
	close(self->c);
	self->c = -1;
	EXPECT_EQ(pin0, sd_wait_vm_pin_kb(getpid(), pin0, SD_STEP_MS));
	if (fp_ok) {
		fp = sd_wait_foll_pins(fp0, SD_STEP_MS);
		EXPECT_EQ(fp0, fp) TH_LOG("FOLL_PIN pins leaked");
	}
	munmap(a, NREG * 2 * PAGE);
}

/*
 * B goes away with A's registrations live; A's async deregistrations
 * still complete, each cookie once, with an error (the connection is
 * over: nothing could be posted), and nothing stays pinned.
 */
TEST_F(pool, async_after_peer_disconnect)
{
	struct smbdirect_buffer_descriptor_v1 d;
	struct smbdirect_rdma_completion c[NREG];
	long pin0 = sd_vm_pin_kb(getpid());
	char *a = map_bytes(NREG * PAGE);
	__u64 id[NREG];
	int i, r;
	char k;

	ASSERT_TRUE(a != NULL);
	PAIR(SOCK_SEQPACKET);
	for (i = 0; i < NREG; i++)
		ASSERT_EQ(0, reg1(self->c, SMBDIRECT_ACCESS_PEER_WRITE, a + i * PAGE, PAGE,
				  &d, &id[i]));
	close(self->s);
	self->s = -1;
	r = sd_msg_recv(self->c, SOCK_SEQPACKET, &k, 1);
	EXPECT_TRUE(r == -ENODATA || r == -ECONNRESET || r == -EPIPE)
		TH_LOG("A: %s (the end expected)", r < 0 ? strerror(-r) : "data");
	for (i = 0; i < NREG; i++)
		ASSERT_EQ(0, dereg_async(self->c, id[i], 100 + i, NULL));
	r = reap_all(self->c, c, NREG, SD_STEP_MS);
	ASSERT_EQ(NREG, r) TH_LOG("%s", r < 0 ? strerror(-r) : "completions missing");
	EXPECT_TRUE(cookies_once(c, NREG, 100));
	for (i = 0; i < NREG; i++) {
		EXPECT_GT(0, c[i].status) TH_LOG("cookie %llu: status %d",
						 (unsigned long long)c[i].cookie, c[i].status);
		EXPECT_EQ(PAGE, c[i].bytes);
	}
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	munmap(a, NREG * PAGE);
}

TEST_HARNESS_MAIN
