// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA offload end to end: one side (A, the SMB client) registers memory
 * and sends the buffer descriptors in a message; the other (B, the server)
 * moves data with RDMA_WRITEV / RDMA_READV against them and answers; A
 * checks every byte and deregisters. Around that: what the peer may touch
 * (granted directions only, exactly the registered bytes, never after
 * DEREGISTER, close or remote invalidation), send-with-invalidate in the
 * SMB3 shape on both socket types, and no pinned page left behind when
 * registrations die while the peer is using them.
 *
 * Pinned pages are watched twice: VmPin of this process (the contract
 * says registrations count there, exactly the pages they span) and the
 * system-wide FOLL_PIN balance of /proc/vmstat.
 */
#include <stddef.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>

#include "kselftest_harness.h"
#include "sd_test.h"

#define PAGE 4096UL
#define MAXD 64			/* descriptors a test ever expects */
#define GUARD_SEED 0x6a11u	/* bytes around registrations: must not change */
#define OLD_SEED 0x01du		/* what a buffer held before the peer wrote */
#define MIB (1UL << 20)

FIXTURE(rdma) {
	int c, s;		/* c is A (registers), s is B (moves data) */
	pid_t child;
};

SD_TARGET_VARIANT(rdma);

SD_ADD_TARGET_VARIANTS(rdma);

FIXTURE_SETUP(rdma)
{
	self->c = self->s = -1;
	self->child = 0;
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(rdma)
{
	sd_teardown_pair(self->c, self->s, self->child);
}

#define UNPAIR() do {							\
	close(self->c);							\
	close(self->s);							\
	self->c = self->s = -1;						\
} while (0)

/*
 * The peer refused an access. RoCE (rxe) reports the responder's NAK as a
 * remote access error: EACCES exactly. iWARP (siw) has no such completion:
 * RDMA WRITEs are unacknowledged, and the responder answers a bad STag with
 * a TERMINATE message and drops the connection (siw_proc_terminate() only
 * logs the cause), so the requester's work requests are flushed and the
 * module may only be able to say ECONNRESET or EIO.
 */
static int refused(const struct sd_target *t, int err)
{
	if (err == -EACCES)
		return 1;
	return !strcmp(t->kind, "siw") && (err == -ECONNRESET || err == -EIO);
}

/*
 * A WRITEV the peer refused. iWARP does not acknowledge RDMA WRITE, so
 * there the call may succeed (the header says so); the peer then ends the
 * connection, which the callers check with expect_dead().
 */
static int write_refused(const struct sd_target *t, int err)
{
	return refused(t, err) || (!strcmp(t->kind, "siw") && err == 0);
}

/* An error that says the connection is over (or failed under the op). */
static int conn_err(int err)
{
	return err == -EACCES || err == -ECONNRESET || err == -ETIMEDOUT || err == -EIO ||
	       err == -EPIPE;
}

/*
 * A test buffer: an anonymous mapping whose every byte starts as the guard
 * pattern, and iovec segments inside it (sorted, not overlapping). The
 * segments get their own content; everything else is guard.
 */
struct buf {
	char *map;
	size_t maplen;
	struct iovec iov[40];
	int n;
	size_t len;		/* sum of the segments */
};

static int buf_map(struct buf *b, size_t span)
{
	memset(b, 0, sizeof(*b));
	b->maplen = PAGE + ((span + PAGE - 1) & ~(PAGE - 1)) + PAGE;
	b->map = mmap(NULL, b->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->map == MAP_FAILED)
		return -errno;
	sd_fill(b->map, b->maplen, GUARD_SEED);
	return 0;
}

/* One segment of len bytes at off bytes into the second page. */
static int buf_one(struct buf *b, size_t len, size_t off)
{
	int ret = buf_map(b, off + len);

	if (ret)
		return ret;
	b->iov[0].iov_base = b->map + PAGE + off;
	b->iov[0].iov_len = len;
	b->n = 1;
	b->len = len;
	return 0;
}

/*
 * len bytes as nseg unequal segments (pairs of base +- d) with 1..600-byte
 * gaps between them, so that no two meet at a page boundary: each must
 * become a descriptor of its own.
 */
static int buf_scattered(struct buf *b, size_t len, int nseg, unsigned int salt)
{
	size_t base = len / nseg, used = 0, off = 1 + salt % 123;
	char *p;
	int k, ret = buf_map(b, len + (size_t)nseg * 601 + 128);

	if (ret)
		return ret;
	p = b->map + PAGE + off;
	for (k = 0; k < nseg; k++) {
		size_t l = base, d = ((size_t)k * 7919 + salt) % 4001;

		if (k == nseg - 1)
			l = len - used;
		else if (k % 2 == 0 && k < nseg - 2)
			l = base + d;
		else if (k % 2 == 1)
			l = base - (((size_t)(k - 1) * 7919 + salt) % 4001);
		b->iov[k].iov_base = p;
		b->iov[k].iov_len = l;
		used += l;
		p += l + 1 + ((size_t)k * 131 + salt) % 600;
	}
	b->n = nseg;
	b->len = len;
	return 0;
}

static void buf_free(struct buf *b)
{
	if (b->map && b->map != MAP_FAILED)
		munmap(b->map, b->maplen);
	b->map = NULL;
}

static void buf_fill(struct buf *b, uint32_t seed)
{
	sd_fill_iov(b->iov, b->n, seed);
}

static long buf_check(const struct buf *b, uint32_t seed)
{
	return sd_check_iov(b->iov, b->n, seed);
}

/* Map offset of the first guard byte that changed, or -1. */
static long buf_guard_bad(const struct buf *b)
{
	size_t i = 0, end;
	int k;

	for (k = 0; k <= b->n; k++) {
		if (k < b->n && !b->iov[k].iov_len)
			continue;	/* skipped segments may have no address */
		end = k < b->n ? (size_t)((char *)b->iov[k].iov_base - b->map) : b->maplen;
		for (; i < end; i++)
			if ((unsigned char)b->map[i] != sd_pattern(GUARD_SEED, i))
				return (long)i;
		if (k < b->n)
			i = end + b->iov[k].iov_len;
	}
	return -1;
}

/* Offset of the first byte of p[0..len) that is not seed's pattern at start.., or -1. */
static long check_from(const void *p, size_t len, uint32_t seed, size_t start)
{
	const unsigned char *q = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (q[i] != sd_pattern(seed, start + i))
			return (long)(start + i);
	return -1;
}

/* VmPin a registration of b may add: [distinct pages, pages per segment] in kB. */
static void buf_pin_kb(const struct buf *b, long *lo, long *hi)
{
	uintptr_t last = 0;
	int k;

	*lo = *hi = 0;
	for (k = 0; k < b->n; k++) {
		uintptr_t first = (uintptr_t)b->iov[k].iov_base / PAGE;
		size_t pages = sd_pages_spanned(b->iov[k].iov_base, b->iov[k].iov_len);

		if (!pages)
			continue;
		*hi += pages * 4;
		*lo += (pages - (first == last && k ? 1 : 0)) * 4;
		last = first + pages - 1;
	}
}

/* The descriptors, raw, as one message of their own. */
static int send_descs(int fd, int type, const struct smbdirect_buffer_descriptor_v1 *d, __u32 n)
{
	char msg[8 + MAXD * sizeof(*d)];
	__u32 magic = 0x44455343;	/* "DESC" */

	if (n > MAXD)
		return -E2BIG;
	memcpy(msg, &magic, 4);
	memcpy(msg + 4, &n, 4);
	memcpy(msg + 8, d, n * sizeof(*d));
	return sd_msg_send(fd, type, msg, 8 + n * sizeof(*d));
}

static long recv_descs(int fd, int type, struct smbdirect_buffer_descriptor_v1 *d)
{
	char msg[8 + MAXD * sizeof(*d)];
	long len = sd_msg_recv(fd, type, msg, sizeof(msg));
	__u32 magic, n;

	if (len < 0)
		return len;
	if (len < 8)
		return -EBADMSG;
	memcpy(&magic, msg, 4);
	memcpy(&n, msg + 4, 4);
	if (magic != 0x44455343 || n > MAXD || (size_t)len != 8 + n * sizeof(*d))
		return -EBADMSG;
	memcpy(d, msg + 8, n * sizeof(*d));
	return n;
}

/* One-byte acknowledgement: B is done with the descriptors. */
static int ack(int from, int to, int type)
{
	char c = 0;
	int ret = sd_msg_send(from, type, "K", 1);

	if (ret)
		return ret;
	return sd_msg_recv(to, type, &c, 1) == 1 && c == 'K' ? 0 : -EBADMSG;
}

/*
 * After an RDMA operation failed, the connection ends: within a step B's
 * sends fail and A sees the end (EOF or an error, never B's data). That
 * B's very next call fails is rdma_failure_ends_connection_at_once.
 */
static void expect_dead(struct __test_metadata *_metadata, int a, int b)
{
	long end = sd_now_ms() + SD_STEP_MS;
	ssize_t n;
	char c;

	for (;;) {
		n = send(b, "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN)
			break;
		if (sd_now_ms() > end)
			break;
		sd_sleep_ms(20);
	}
	EXPECT_EQ(-1, n) TH_LOG("B can still send %d ms after the failed RDMA operation",
				SD_STEP_MS);
	errno = 0;
	n = recv(a, &c, 1, 0);
	EXPECT_TRUE(n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
		TH_LOG("A: recv %zd: %s (the connection should be over)", n, strerror(errno));
}

/*
 * The basic flow: A registers ra (PEER_WRITE for write, else PEER_READ),
 * sends the descriptors; B moves rb's bytes with one call; B acks; A
 * checks the data and the guard bytes and deregisters. want_desc is the
 * exact descriptor count the contract implies, or 0 for "at least one".
 */
static void exchange(struct __test_metadata *_metadata, int a, int b, int type, int write,
		     struct buf *ra, struct buf *rb, uint32_t seed, __u32 want_desc)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD], got[MAXD];
	long pin0 = sd_vm_pin_kb(getpid()), pin, lo, hi, r;
	__u32 n = MAXD, state = 0, i;
	__u64 id = 0, bytes = 0;
	int ret;
	char what[96];

	snprintf(what, sizeof(what), "%s %zu bytes, A %d seg +%zu, B %d seg +%zu",
		 write ? "WRITEV" : "READV", ra->len, ra->n,
		 (size_t)((char *)ra->iov[0].iov_base - ra->map - PAGE), rb->n,
		 (size_t)((char *)rb->iov[0].iov_base - rb->map - PAGE));
	buf_fill(ra, write ? seed ^ OLD_SEED : seed);
	buf_fill(rb, write ? seed : seed ^ OLD_SEED);
	ASSERT_LE(0, pin0);

	ret = sd_register(a, write ? SMBDIRECT_ACCESS_PEER_WRITE : SMBDIRECT_ACCESS_PEER_READ,
			  ra->iov, ra->n, d, &n, &id);
	ASSERT_EQ(0, ret) TH_LOG("%s: REGISTER: %s", what, strerror(-ret));
	ASSERT_NE(0U, id) TH_LOG("%s: registration id 0", what);
	if (want_desc)
		EXPECT_EQ(want_desc, n) TH_LOG("%s: descriptors", what);
	ASSERT_LE(1U, n);
	ASSERT_GE((__u32)MAXD, n);
	EXPECT_EQ(ra->len, sd_desc_bytes(d, n)) TH_LOG("%s: descriptor bytes", what);
	for (i = 0; i < n; i++)
		EXPECT_NE(0U, le32toh(d[i].length)) TH_LOG("%s: descriptor %u empty", what, i);
	if (want_desc == (__u32)ra->n)
		for (i = 0; i < n; i++)
			EXPECT_EQ(ra->iov[i].iov_len, le32toh(d[i].length))
				TH_LOG("%s: descriptor %u is not segment %u", what, i, i);
	buf_pin_kb(ra, &lo, &hi);
	pin = sd_vm_pin_kb(getpid());
	EXPECT_TRUE(pin - pin0 >= lo && pin - pin0 <= hi)
		TH_LOG("%s: VmPin rose by %ld kB, want %ld..%ld", what, pin - pin0, lo, hi);

	ASSERT_EQ(0, send_descs(a, type, d, n));
	r = recv_descs(b, type, got);
	ASSERT_EQ((long)n, r) TH_LOG("%s: descriptor message: %s", what,
				     r < 0 ? strerror(-r) : "wrong count");
	ret = sd_rdma(b, write ? SMBDIRECT_IOC_RDMA_WRITEV : SMBDIRECT_IOC_RDMA_READV,
		      rb->iov, rb->n, got, n, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", what, strerror(-ret));
	EXPECT_EQ(ra->len, bytes) TH_LOG("%s: bytes", what);
	ASSERT_EQ(0, ack(b, a, type)) TH_LOG("%s: ack", what);

	if (write) {
		r = buf_check(ra, seed);
		EXPECT_EQ(-1, r) TH_LOG("%s: A's byte %ld wrong", what, r);
	} else {
		r = buf_check(rb, seed);
		EXPECT_EQ(-1, r) TH_LOG("%s: B's byte %ld wrong", what, r);
		r = buf_check(ra, seed);
		EXPECT_EQ(-1, r) TH_LOG("%s: A's byte %ld changed by a peer read", what, r);
	}
	r = buf_guard_bad(ra);
	EXPECT_EQ(-1, r) TH_LOG("%s: A's guard byte at map offset %ld changed", what, r);
	r = buf_guard_bad(rb);
	EXPECT_EQ(-1, r) TH_LOG("%s: B's guard byte at map offset %ld changed", what, r);

	ret = sd_deregister(a, id, &state);
	ASSERT_EQ(0, ret) TH_LOG("%s: DEREGISTER: %s", what, strerror(-ret));
	EXPECT_EQ(0U, state) TH_LOG("%s: state after a plain DEREGISTER", what);
	EXPECT_EQ(-ENOENT, sd_deregister(a, id, NULL)) TH_LOG("%s: second DEREGISTER", what);
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid())) TH_LOG("%s: VmPin after DEREGISTER", what);
}

static const size_t sizes[] = { 1, 4095, 4096, 4097, 65536 + 3, MIB };

/* Every size, page-aligned and at odd offsets (+1..+123) on both sides. */
static void sizes_one_way(struct __test_metadata *_metadata, int a, int b, int write)
{
	struct buf ra, rb;
	long fp0 = 0, fp;
	unsigned int i, al;

	ASSERT_EQ(0, sd_foll_pins(&fp0));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (al = 0; al < 3; al++) {
			/* 0: both aligned; 1: both odd; 2: A odd, B aligned */
			size_t aoff = al ? 1 + (i * 41 + al) % 123 : 0;
			size_t boff = al == 1 ? 1 + (i * 67 + 5) % 123 : 0;

			ASSERT_EQ(0, buf_one(&ra, sizes[i], aoff));
			ASSERT_EQ(0, buf_one(&rb, sizes[i], boff));
			/* Under 64 KiB + 2 pages is within any page-list limit: one region. */
			exchange(_metadata, a, b, SOCK_SEQPACKET, write, &ra, &rb,
				 100 + i * 3 + al, sizes[i] <= 65536 + 3 ? 1 : 0);
			buf_free(&ra);
			buf_free(&rb);
		}
	}
	fp = sd_wait_foll_pins(fp0, 2000);
	EXPECT_EQ(fp0, fp) TH_LOG("FOLL_PIN pins held: %ld before, %ld after", fp0, fp);
}

TEST_F_TIMEOUT(rdma, writev_sizes, 120)
{
	PAIR(SOCK_SEQPACKET);
	sizes_one_way(_metadata, self->c, self->s, 1);
}

TEST_F_TIMEOUT(rdma, readv_sizes, 120)
{
	PAIR(SOCK_SEQPACKET);
	sizes_one_way(_metadata, self->c, self->s, 0);
}

/*
 * 8 MiB, the default max_read_write_size, each way in one call. Only on
 * rxe4 and siw6 (one per transport): the suite must stay fast under TCG.
 */
TEST_F_TIMEOUT(rdma, eight_mib_both_ways, 180)
{
	struct smbdirect_params p;
	struct buf ra, rb;
	long fp0 = 0, fp;

	if ((variant->t.af == AF_INET) != !strcmp(variant->t.kind, "rxe"))
		SKIP(return, "8 MiB runs on rxe4 and siw6 only");
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, sd_get_params(self->s, &p));
	ASSERT_LE(8 * MIB, p.max_read_write_size) TH_LOG("max_read_write_size %u", p.max_read_write_size);
	ASSERT_EQ(0, sd_foll_pins(&fp0));
	ASSERT_EQ(0, buf_one(&ra, 8 * MIB, 0));
	ASSERT_EQ(0, buf_one(&rb, 8 * MIB, 77));
	exchange(_metadata, self->c, self->s, SOCK_SEQPACKET, 1, &ra, &rb, 8, 0);
	buf_free(&ra);
	buf_free(&rb);
	ASSERT_EQ(0, buf_one(&ra, 8 * MIB, 77));
	ASSERT_EQ(0, buf_one(&rb, 8 * MIB, 0));
	exchange(_metadata, self->c, self->s, SOCK_SEQPACKET, 0, &ra, &rb, 9, 0);
	buf_free(&ra);
	buf_free(&rb);
	fp = sd_wait_foll_pins(fp0, 2000);
	EXPECT_EQ(fp0, fp) TH_LOG("FOLL_PIN pins held: %ld before, %ld after", fp0, fp);
}

/*
 * 1 MiB as 37 unequal segments with gaps on A (37 descriptors, one per
 * segment, in order) against 1 MiB as 29 other segments on B.
 */
TEST_F_TIMEOUT(rdma, many_segments_with_gaps, 120)
{
	struct buf ra, rb;
	int write;

	PAIR(SOCK_SEQPACKET);
	for (write = 1; write >= 0; write--) {
		ASSERT_EQ(0, buf_scattered(&ra, MIB, 37, 11 + write));
		ASSERT_EQ(0, buf_scattered(&rb, MIB, 29, 50 + write));
		exchange(_metadata, self->c, self->s, SOCK_SEQPACKET, write, &ra, &rb,
			 40 + write, 37);
		buf_free(&ra);
		buf_free(&rb);
	}
}

/*
 * Segments that meet at a page boundary make one region; zero-length
 * segments are skipped on both sides.
 */
TEST_F(rdma, zero_length_and_page_joined_segments)
{
	struct buf ra, rb;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, buf_map(&ra, 3 * PAGE));
	ra.iov[0] = (struct iovec){ ra.map + PAGE + 100, PAGE - 100 };
	ra.iov[1] = (struct iovec){ NULL, 0 };
	ra.iov[2] = (struct iovec){ ra.map + 2 * PAGE, 2 * PAGE + 7 };
	ra.n = 3;
	ra.len = 3 * PAGE - 93;
	ASSERT_EQ(0, buf_map(&rb, 3 * PAGE));
	rb.iov[0] = (struct iovec){ rb.map + PAGE + 1, 5000 };
	rb.iov[1] = (struct iovec){ NULL, 0 };
	rb.iov[2] = (struct iovec){ rb.map + PAGE + 6000, ra.len - 5000 };
	rb.n = 3;
	rb.len = ra.len;
	exchange(_metadata, self->c, self->s, SOCK_SEQPACKET, 1, &ra, &rb, 61, 1);
	exchange(_metadata, self->c, self->s, SOCK_SEQPACKET, 0, &ra, &rb, 62, 1);
	buf_free(&ra);
	buf_free(&rb);
}

/*
 * Five registrations, all their descriptors in one call: the bytes flow
 * through the descriptors in order, each registration gets its slice.
 */
TEST_F_TIMEOUT(rdma, many_descriptors_one_call, 120)
{
	static const size_t lens[5] = { 1, 4097, 65536 + 3, 3000, 200000 };
	struct smbdirect_buffer_descriptor_v1 d[MAXD], got[MAXD];
	struct buf ra[5], rb;
	__u64 id[5], bytes;
	size_t total = 0, off;
	long r, pin0 = sd_vm_pin_kb(getpid());
	__u32 n = 0, k, i;
	int write, ret;

	PAIR(SOCK_SEQPACKET);
	for (i = 0; i < 5; i++)
		total += lens[i];
	for (write = 1; write >= 0; write--) {
		uint32_t seed = 70 + write;

		n = 0;
		ASSERT_EQ(0, buf_one(&rb, total, 3));
		sd_fill(rb.iov[0].iov_base, total, write ? seed : OLD_SEED);
		for (i = 0, off = 0; i < 5; i++) {
			ASSERT_EQ(0, buf_one(&ra[i], lens[i], (i * 29) % 123));
			/* For READV, A offers seed's stream across the five buffers. */
			for (k = 0; k < lens[i]; k++)
				((unsigned char *)ra[i].iov[0].iov_base)[k] =
					write ? sd_pattern(OLD_SEED, k) : sd_pattern(seed, off + k);
			k = MAXD - n;
			ret = sd_register(self->c, write ? SMBDIRECT_ACCESS_PEER_WRITE :
					  SMBDIRECT_ACCESS_PEER_READ, ra[i].iov, 1, d + n, &k, &id[i]);
			ASSERT_EQ(0, ret) TH_LOG("REGISTER %zu: %s", lens[i], strerror(-ret));
			EXPECT_EQ(1U, k);
			n += k;
			off += lens[i];
		}
		ASSERT_EQ(0, send_descs(self->c, SOCK_SEQPACKET, d, n));
		r = recv_descs(self->s, SOCK_SEQPACKET, got);
		ASSERT_EQ((long)n, r);
		ret = sd_rdma(self->s, write ? SMBDIRECT_IOC_RDMA_WRITEV : SMBDIRECT_IOC_RDMA_READV,
			      rb.iov, 1, got, n, &bytes);
		ASSERT_EQ(0, ret) TH_LOG("%s over %u descriptors: %s", write ? "WRITEV" : "READV",
					 n, strerror(-ret));
		EXPECT_EQ(total, bytes);
		ASSERT_EQ(0, ack(self->s, self->c, SOCK_SEQPACKET));
		if (!write) {
			r = sd_check(rb.iov[0].iov_base, total, seed);
			EXPECT_EQ(-1, r) TH_LOG("READV: B's byte %ld", r);
		}
		for (i = 0, off = 0; i < 5; off += lens[i], i++) {
			r = check_from(ra[i].iov[0].iov_base, lens[i], seed, off);
			EXPECT_EQ(-1, r) TH_LOG("%s: registration %u, stream byte %ld",
						write ? "WRITEV" : "READV", i, r);
			EXPECT_EQ(-1, buf_guard_bad(&ra[i])) TH_LOG("registration %u guard", i);
			EXPECT_EQ(0, sd_deregister(self->c, id[i], NULL));
			buf_free(&ra[i]);
		}
		EXPECT_EQ(-1, buf_guard_bad(&rb));
		buf_free(&rb);
		EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	}
}

/* min(local bytes, descriptor bytes) move, and not one byte more. */
TEST_F(rdma, partial_lengths_move_the_minimum)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD], got[MAXD];
	struct buf ra, rb;
	struct iovec iov;
	__u64 id, bytes;
	__u32 n;
	long r;
	int ret;

	PAIR(SOCK_SEQPACKET);
	/* More local bytes than the peer registered. */
	ASSERT_EQ(0, buf_one(&ra, 4096, 10));
	ASSERT_EQ(0, buf_one(&rb, 10000, 0));
	sd_fill(ra.iov[0].iov_base, 4096, OLD_SEED);
	sd_fill(rb.iov[0].iov_base, 10000, 81);
	ASSERT_EQ(0, sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_ACCESS_PEER_READ,
				     ra.iov[0].iov_base, 4096, d, MAXD, &n, &id));
	ASSERT_EQ(0, send_descs(self->c, SOCK_SEQPACKET, d, n));
	ASSERT_EQ((long)n, recv_descs(self->s, SOCK_SEQPACKET, got));
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, rb.iov, 1, got, n, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	EXPECT_EQ(4096U, bytes);
	ASSERT_EQ(0, ack(self->s, self->c, SOCK_SEQPACKET));
	EXPECT_EQ(-1, sd_check(ra.iov[0].iov_base, 4096, 81));
	EXPECT_EQ(-1, buf_guard_bad(&ra));

	/* Fewer local bytes: READV of 100 bytes into a 10000-byte buffer's start. */
	sd_fill(rb.iov[0].iov_base, 10000, OLD_SEED);
	iov = (struct iovec){ rb.iov[0].iov_base, 100 };
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_READV, &iov, 1, got, n, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	EXPECT_EQ(100U, bytes);
	EXPECT_EQ(-1, sd_check(rb.iov[0].iov_base, 100, 81));
	r = check_from((char *)rb.iov[0].iov_base + 100, 9900, OLD_SEED, 100);
	EXPECT_EQ(-1, r) TH_LOG("READV of 100 bytes wrote byte %ld beyond them", r);

	/* Fewer local bytes: WRITEV of 100 bytes touches only the first 100. */
	sd_fill(rb.iov[0].iov_base, 100, 82);
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, got, n, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	EXPECT_EQ(100U, bytes);
	ASSERT_EQ(0, ack(self->s, self->c, SOCK_SEQPACKET));
	EXPECT_EQ(-1, sd_check(ra.iov[0].iov_base, 100, 82));
	r = check_from((char *)ra.iov[0].iov_base + 100, 3996, 81, 100);
	EXPECT_EQ(-1, r) TH_LOG("WRITEV of 100 bytes changed A's byte %ld", r);
	EXPECT_EQ(0, sd_deregister(self->c, id, NULL));
	buf_free(&ra);
	buf_free(&rb);
}

/*
 * B tries a direction A did not grant: the operation fails, A's memory is
 * as it was, and the connection is over.
 */
static void refused_direction(struct __test_metadata *_metadata, const struct sd_target *t,
			      int a, int b, int write)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD], got[MAXD];
	struct buf ra, rb;
	__u64 id, bytes;
	__u32 n;
	long r;
	int ret;

	ASSERT_EQ(0, buf_one(&ra, 65536, 0));
	ASSERT_EQ(0, buf_one(&rb, 65536, 0));
	buf_fill(&ra, 91);
	buf_fill(&rb, 92);
	ret = sd_register_buf(a, write ? SMBDIRECT_ACCESS_PEER_READ : SMBDIRECT_ACCESS_PEER_WRITE,
			      ra.iov[0].iov_base, 65536, d, MAXD, &n, &id);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER: %s", strerror(-ret));
	ASSERT_EQ(0, send_descs(a, SOCK_SEQPACKET, d, n));
	ASSERT_EQ((long)n, recv_descs(b, SOCK_SEQPACKET, got));
	ret = sd_rdma(b, write ? SMBDIRECT_IOC_RDMA_WRITEV : SMBDIRECT_IOC_RDMA_READV,
		      rb.iov, 1, got, n, &bytes);
	EXPECT_TRUE(write ? write_refused(t, ret) : refused(t, ret)) TH_LOG("%s against a %s registration: %s",
					    write ? "WRITEV" : "READV",
					    write ? "PEER_READ" : "PEER_WRITE",
					    ret ? strerror(-ret) : "succeeded");
	r = buf_check(&ra, 91);
	EXPECT_EQ(-1, r) TH_LOG("A's byte %ld changed", r);
	EXPECT_EQ(-1, buf_guard_bad(&ra));
	expect_dead(_metadata, a, b);
	buf_free(&ra);
	buf_free(&rb);
}

TEST_F(rdma, writev_into_peer_read_registration_refused)
{
	PAIR(SOCK_SEQPACKET);
	refused_direction(_metadata, &variant->t, self->c, self->s, 1);
}

TEST_F(rdma, readv_from_peer_write_registration_refused)
{
	/*
	 * Soft-iWARP serves RDMA READ from any valid STag: siw_qp_sq_proc_tx()
	 * checks a READ_RESPONSE's source with no permission bits ("LOCAL_READ
	 * ... not defined in RDMA core"), so IB_ACCESS_REMOTE_READ is not
	 * enforced and no module can refuse this read on siw.
	 */
	if (!strcmp(variant->t.kind, "siw"))
		SKIP(return, "siw does not enforce IB_ACCESS_REMOTE_READ");
	PAIR(SOCK_SEQPACKET);
	refused_direction(_metadata, &variant->t, self->c, self->s, 0);
}

/*
 * A registration in the middle of a mapping whose other bytes are a guard
 * pattern; B's descriptor is tampered to reach one byte beyond it. The
 * operation fails, no guard byte changes, the connection is over.
 */
TEST_F_TIMEOUT(rdma, tampered_descriptor_leaves_guard_bytes, 120)
{
	static const char *const kinds[] = {
		"WRITEV length+1", "WRITEV offset-1", "WRITEV just past the end",
		"READV length+1",
	};
	struct smbdirect_buffer_descriptor_v1 d[MAXD], got[MAXD];
	struct buf ra, rb;
	size_t len = 3 * PAGE + 50;
	__u64 id, bytes;
	unsigned int k;
	__u32 n;
	long r;
	int ret;

	for (k = 0; k < 4; k++) {
		PAIR(SOCK_SEQPACKET);
		ASSERT_EQ(0, buf_one(&ra, len, 700));
		ASSERT_EQ(0, buf_one(&rb, len + 1, 0));
		buf_fill(&ra, 95);
		buf_fill(&rb, 96);
		ret = sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_WRITE |
				      SMBDIRECT_ACCESS_PEER_READ, ra.iov[0].iov_base, len,
				      d, MAXD, &n, &id);
		ASSERT_EQ(0, ret) TH_LOG("REGISTER: %s", strerror(-ret));
		ASSERT_EQ(1U, n);
		ASSERT_EQ(0, send_descs(self->c, SOCK_SEQPACKET, d, n));
		ASSERT_EQ(1, recv_descs(self->s, SOCK_SEQPACKET, got));
		switch (k) {
		case 0:
		case 3:
			got[0].length = htole32(le32toh(got[0].length) + 1);
			break;
		case 1:
			got[0].offset = htole64(le64toh(got[0].offset) - 1);
			break;
		case 2:
			got[0].offset = htole64(le64toh(got[0].offset) + len);
			got[0].length = htole32(1);
			break;
		}
		ret = sd_rdma(self->s, k == 3 ? SMBDIRECT_IOC_RDMA_READV : SMBDIRECT_IOC_RDMA_WRITEV,
			      rb.iov, 1, got, 1, &bytes);
		EXPECT_TRUE(k == 3 ? refused(&variant->t, ret) : write_refused(&variant->t, ret))
			TH_LOG("%s: %s", kinds[k], ret ? strerror(-ret) : "succeeded");
		r = buf_guard_bad(&ra);
		EXPECT_EQ(-1, r) TH_LOG("%s: A's guard byte at map offset %ld changed", kinds[k], r);
		if (k == 3)
			EXPECT_EQ(-1, buf_check(&ra, 95)) TH_LOG("a peer read changed A's memory");
		expect_dead(_metadata, self->c, self->s);
		UNPAIR();
		buf_free(&ra);
		buf_free(&rb);
	}
}

/* A registers for the peer to write and sends the descriptor; B has it in got. */
static void offer(struct __test_metadata *_metadata, int a, int b, struct buf *ra, __u32 flags,
		  uint32_t seed, struct smbdirect_buffer_descriptor_v1 *got, __u64 *id)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD];
	__u32 n;
	int ret;

	buf_fill(ra, seed);
	ret = sd_register_buf(a, flags, ra->iov[0].iov_base, ra->len, d, MAXD, &n, id);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER: %s", strerror(-ret));
	ASSERT_EQ(1U, n);
	ASSERT_EQ(0, send_descs(a, SOCK_SEQPACKET, d, n));
	ASSERT_EQ(1, recv_descs(b, SOCK_SEQPACKET, got));
}

TEST_F(rdma, dead_token_after_deregister)
{
	struct smbdirect_buffer_descriptor_v1 got[MAXD];
	long pin0 = sd_vm_pin_kb(getpid());
	struct buf ra, rb;
	__u64 id, bytes;
	__u32 state = 7;
	int ret;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, buf_one(&ra, 16384, 33));
	ASSERT_EQ(0, buf_one(&rb, 16384, 0));
	buf_fill(&rb, 102);
	offer(_metadata, self->c, self->s, &ra, SMBDIRECT_ACCESS_PEER_WRITE, 101, got, &id);
	ASSERT_EQ(0, sd_deregister(self->c, id, &state));
	EXPECT_EQ(0U, state);
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, rb.iov, 1, got, 1, &bytes);
	EXPECT_TRUE(write_refused(&variant->t, ret)) TH_LOG("WRITEV after DEREGISTER: %s",
						     ret ? strerror(-ret) : "succeeded");
	EXPECT_EQ(-1, buf_check(&ra, 101)) TH_LOG("a dead token wrote A's memory");
	EXPECT_EQ(-1, buf_guard_bad(&ra));
	expect_dead(_metadata, self->c, self->s);
	buf_free(&ra);
	buf_free(&rb);
}

/*
 * "Any failure of an RDMA operation ends the connection: later calls fail
 * with the connection's error (ECONNRESET)." B reads from a token A has
 * deregistered (refused on every transport: a READ needs the responder's
 * answer); B's very next call gets ECONNRESET. The error is reported once
 * (as for TCP): when the READV itself already returned ECONNRESET (siw:
 * the refusal arrives as a TERMINATE and flushes the READ), the next call
 * may say EPIPE instead.
 */
TEST_F(rdma, rdma_failure_ends_connection_at_once)
{
	struct smbdirect_buffer_descriptor_v1 got[MAXD];
	struct buf ra, rb;
	__u64 id, bytes;
	ssize_t n;
	int ret;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, buf_one(&ra, 8192, 0));
	ASSERT_EQ(0, buf_one(&rb, 8192, 0));
	offer(_metadata, self->c, self->s, &ra, SMBDIRECT_ACCESS_PEER_READ, 171, got, &id);
	ASSERT_EQ(0, sd_deregister(self->c, id, NULL));
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_READV, rb.iov, 1, got, 1, &bytes);
	ASSERT_TRUE(refused(&variant->t, ret)) TH_LOG("READV of a dead token: %s",
						     ret ? strerror(-ret) : "succeeded");
	TH_LOG("READV of a dead token: %s", strerror(-ret));
	errno = 0;
	n = send(self->s, "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	EXPECT_EQ(-1, n) TH_LOG("send right after the failed READV was taken");
	EXPECT_TRUE(errno == ECONNRESET || (ret == -ECONNRESET && errno == EPIPE))
		TH_LOG("send right after: %s", strerror(errno));
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_READV, rb.iov, 1, got, 1, &bytes);
	EXPECT_TRUE(ret == -ECONNRESET || ret == -EPIPE) TH_LOG("READV after that: %s",
							       ret ? strerror(-ret) : "ok");
	expect_dead(_metadata, self->c, self->s);
	buf_free(&ra);
	buf_free(&rb);
}

/*
 * close() of A invalidates and unpins; once B has seen the orderly end,
 * its RDMA calls fail with EPIPE like its sends. A's memory, still mapped,
 * is untouched.
 */
TEST_F(rdma, dead_token_after_close)
{
	struct smbdirect_buffer_descriptor_v1 got[MAXD];
	long pin0 = sd_vm_pin_kb(getpid()), pin;
	struct buf ra, rb;
	__u64 id, bytes;
	char c;
	long n;
	int ret;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, buf_one(&ra, 16384, 0));
	ASSERT_EQ(0, buf_one(&rb, 16384, 0));
	buf_fill(&rb, 112);
	offer(_metadata, self->c, self->s, &ra, SMBDIRECT_ACCESS_PEER_WRITE, 111, got, &id);
	EXPECT_EQ(pin0 + 16, sd_vm_pin_kb(getpid()));
	close(self->c);
	self->c = -1;
	pin = sd_wait_vm_pin_kb(getpid(), pin0, SD_STEP_MS);
	EXPECT_EQ(pin0, pin) TH_LOG("VmPin after close()");
	n = recv(self->s, &c, 1, 0);
	ASSERT_EQ(0, n) TH_LOG("B: %s", n < 0 ? strerror(errno) : "data");
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, rb.iov, 1, got, 1, &bytes);
	EXPECT_EQ(-EPIPE, ret) TH_LOG("WRITEV after the peer closed: %s",
				      ret ? strerror(-ret) : "succeeded");
	EXPECT_EQ(-1, buf_check(&ra, 111)) TH_LOG("a dead token wrote A's memory");
	EXPECT_EQ(-1, buf_guard_bad(&ra));
	buf_free(&ra);
	buf_free(&rb);
}

/*
 * Just enough of SMB2 READ ([MS-SMB2] 2.2.19, 2.2.20) to carry a
 * descriptor with SMB2_CHANNEL_RDMA_V1_INVALIDATE, and the answer.
 */
#define SMB2_READ 0x0008
#define SMB2_CHANNEL_RDMA_V1_INVALIDATE 0x00000002

struct fake_smb2_hdr {
	__u8 protocol[4];
	__le16 structure_size;
	__le16 credit_charge;
	__le32 status;
	__le16 command;
	__le16 credits;
	__le32 flags;
	__le32 next_command;
	__le64 message_id;
	__le32 reserved;
	__le32 tree_id;
	__le64 session_id;
	__u8 signature[16];
} __attribute__((packed));

struct fake_smb2_read_req {
	struct fake_smb2_hdr hdr;
	__le16 structure_size;	/* 49 */
	__u8 padding;
	__u8 flags;
	__le32 length;
	__le64 offset;
	__u8 file_id[16];
	__le32 minimum_count;
	__le32 channel;
	__le32 remaining_bytes;
	__le16 channel_info_offset;
	__le16 channel_info_length;
	struct smbdirect_buffer_descriptor_v1 desc;
} __attribute__((packed));

struct fake_smb2_read_rsp {
	struct fake_smb2_hdr hdr;
	__le16 structure_size;	/* 17 */
	__u8 data_offset;
	__u8 reserved;
	__le32 data_length;
	__le32 data_remaining;
	__le32 flags;
} __attribute__((packed));

static void fake_hdr(struct fake_smb2_hdr *h, __u64 mid, int response)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->protocol, "\xfeSMB", 4);
	h->structure_size = htole16(64);
	h->command = htole16(SMB2_READ);
	h->credits = htole16(1);
	h->flags = htole32(response ? 1 : 0);
	h->message_id = htole64(mid);
}

/*
 * A asks B for len bytes into ra (registered with flags); B reads the
 * request, RDMA-writes seed's pattern and answers with SEND_WITH_INVALIDATE
 * of A's token. SOCK_STREAM: the control message rides on a sendmsg that
 * carries only two bytes of the prefix, and a second one on the same
 * message is EINVAL. Returns with A holding the answer; *token is A's.
 */
static void smb2_read(struct __test_metadata *_metadata, int a, int b, int type,
		      struct buf *ra, struct buf *rb, __u32 flags, uint32_t seed, __u64 *id,
		      struct smbdirect_buffer_descriptor_v1 *peer_desc)
{
	struct smbdirect_buffer_descriptor_v1 desc;
	struct fake_smb2_read_req req, in;
	struct fake_smb2_read_rsp rsp, out;
	__u32 n = 1, token;
	__u64 bytes;
	long r;
	int ret;

	buf_fill(ra, OLD_SEED);
	buf_fill(rb, seed);
	memset(&req, 0, sizeof(req));
	fake_hdr(&req.hdr, 5, 0);
	req.structure_size = htole16(49);
	req.length = htole32(ra->len);
	req.channel = htole32(SMB2_CHANNEL_RDMA_V1_INVALIDATE);
	req.channel_info_offset = htole16(offsetof(struct fake_smb2_read_req, desc));
	req.channel_info_length = htole16(sizeof(req.desc));
	ret = sd_register(a, flags, ra->iov, ra->n, &desc, &n, id);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER: %s", strerror(-ret));
	ASSERT_EQ(1U, n);
	memcpy(&req.desc, &desc, sizeof(desc));
	ASSERT_EQ(0, sd_msg_send(a, type, &req, sizeof(req)));

	r = sd_msg_recv(b, type, &in, sizeof(in));
	ASSERT_EQ((long)sizeof(in), r);
	ASSERT_EQ((__u32)SMB2_CHANNEL_RDMA_V1_INVALIDATE, le32toh(in.channel));
	memcpy(&desc, &in.desc, sizeof(desc));
	*peer_desc = desc;
	ret = sd_rdma(b, SMBDIRECT_IOC_RDMA_WRITEV, rb->iov, rb->n, &desc, 1, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("WRITEV: %s", strerror(-ret));
	ASSERT_EQ(le32toh(in.length), bytes);

	memset(&rsp, 0, sizeof(rsp));
	fake_hdr(&rsp.hdr, 5, 1);
	rsp.structure_size = htole16(17);
	rsp.data_length = htole32(bytes);
	token = le32toh(desc.token);
	if (type == SOCK_SEQPACKET) {
		ret = sd_send_invalidate(b, type, &rsp, sizeof(rsp), token);
		ASSERT_EQ(0, ret) TH_LOG("sendmsg with SEND_INVALIDATE: %s", strerror(-ret));
	} else {
		/* The prefix's first two bytes start the message the token goes with. */
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(4)];
		} ctl;
		char framed[4 + sizeof(rsp)];
		__u32 be = htonl(sizeof(rsp));
		struct iovec iov = { framed, 2 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		struct cmsghdr *c;
		ssize_t s;

		memcpy(framed, &be, 4);
		memcpy(framed + 4, &rsp, sizeof(rsp));
		memset(&ctl, 0, sizeof(ctl));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SMBDIRECT;
		c->cmsg_type = SMBDIRECT_CMSG_SEND_INVALIDATE;
		c->cmsg_len = CMSG_LEN(4);
		memcpy(CMSG_DATA(c), &token, 4);
		s = sendmsg(b, &mh, MSG_NOSIGNAL);
		ASSERT_EQ(2, s) TH_LOG("STREAM sendmsg with SEND_INVALIDATE: %s", strerror(errno));
		iov = (struct iovec){ framed + 2, sizeof(framed) - 2 };
		s = sendmsg(b, &mh, MSG_NOSIGNAL);
		EXPECT_EQ(-1, s) TH_LOG("a second token for the same message was taken");
		EXPECT_EQ(EINVAL, errno);
		ASSERT_EQ(0, sd_write_all(b, framed + 2, sizeof(framed) - 2));
	}

	r = sd_msg_recv(a, type, &out, sizeof(out));
	ASSERT_EQ((long)sizeof(out), r) TH_LOG("A: the answer: %s", r < 0 ? strerror(-r) : "size");
	EXPECT_EQ(0, memcmp(&out, &rsp, sizeof(rsp)));
	r = buf_check(ra, seed);
	EXPECT_EQ(-1, r) TH_LOG("A's byte %ld", r);
	EXPECT_EQ(-1, buf_guard_bad(ra));
}

/* The connection still carries messages both ways. */
static void expect_alive(struct __test_metadata *_metadata, int a, int b, int type)
{
	EXPECT_EQ(0, ack(a, b, type)) TH_LOG("A -> B");
	EXPECT_EQ(0, ack(b, a, type)) TH_LOG("B -> A");
}

static void send_invalidate(struct __test_metadata *_metadata, int a, int b, int type)
{
	struct smbdirect_buffer_descriptor_v1 pd;
	long pin0 = sd_vm_pin_kb(getpid()), fp0 = 0;
	struct buf ra, rb;
	__u32 state = 0;
	__u64 id;
	int ret;

	ASSERT_EQ(0, sd_foll_pins(&fp0));
	ASSERT_EQ(0, buf_one(&ra, 65536 + 3, 5));
	ASSERT_EQ(0, buf_one(&rb, 65536 + 3, 0));
	smb2_read(_metadata, a, b, type, &ra, &rb, SMBDIRECT_ACCESS_PEER_WRITE |
		  SMBDIRECT_REG_REMOTE_INVALIDATE, 121, &id, &pd);
	ret = sd_deregister(a, id, &state);
	ASSERT_EQ(0, ret) TH_LOG("DEREGISTER: %s", strerror(-ret));
	EXPECT_EQ((__u32)SMBDIRECT_REG_STATE_REMOTE_INVALIDATED, state);
	EXPECT_EQ(-ENOENT, sd_deregister(a, id, NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	expect_alive(_metadata, a, b, type);
	/* And it all works again on the same connection. */
	smb2_read(_metadata, a, b, type, &ra, &rb, SMBDIRECT_ACCESS_PEER_WRITE |
		  SMBDIRECT_REG_REMOTE_INVALIDATE, 122, &id, &pd);
	ASSERT_EQ(0, sd_deregister(a, id, &state));
	EXPECT_EQ((__u32)SMBDIRECT_REG_STATE_REMOTE_INVALIDATED, state);
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	EXPECT_EQ(fp0, sd_wait_foll_pins(fp0, 2000));
	buf_free(&ra);
	buf_free(&rb);
}

TEST_F(rdma, send_invalidate_seqpacket)
{
	PAIR(SOCK_SEQPACKET);
	send_invalidate(_metadata, self->c, self->s, SOCK_SEQPACKET);
}

TEST_F(rdma, send_invalidate_stream)
{
	PAIR(SOCK_STREAM);
	send_invalidate(_metadata, self->c, self->s, SOCK_STREAM);
}

/*
 * By the time A reads the answer the token is dead: B's second WRITEV with
 * it fails and A's memory keeps the first data.
 */
TEST_F(rdma, remote_invalidated_token_is_dead)
{
	struct smbdirect_buffer_descriptor_v1 pd;
	long pin0 = sd_vm_pin_kb(getpid()), pin;
	struct buf ra, rb;
	__u32 state = 0;
	__u64 id, bytes;
	int ret;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, buf_one(&ra, 8192, 0));
	ASSERT_EQ(0, buf_one(&rb, 8192, 0));
	smb2_read(_metadata, self->c, self->s, SOCK_SEQPACKET, &ra, &rb,
		  SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE, 131, &id, &pd);
	buf_fill(&rb, 132);
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, rb.iov, 1, &pd, 1, &bytes);
	EXPECT_TRUE(write_refused(&variant->t, ret)) TH_LOG("WRITEV after remote invalidation: %s",
						     ret ? strerror(-ret) : "succeeded");
	EXPECT_EQ(-1, buf_check(&ra, 131)) TH_LOG("an invalidated token wrote A's memory");
	EXPECT_EQ(-1, buf_guard_bad(&ra));
	expect_dead(_metadata, self->c, self->s);
	/* DEREGISTER works on the dead connection and still tells what happened. */
	ret = sd_deregister(self->c, id, &state);
	EXPECT_EQ(0, ret) TH_LOG("DEREGISTER on the dead connection: %s", strerror(-ret));
	EXPECT_EQ((__u32)SMBDIRECT_REG_STATE_REMOTE_INVALIDATED, state);
	pin = sd_vm_pin_kb(getpid());
	EXPECT_EQ(pin0, pin);
	buf_free(&ra);
	buf_free(&rb);
}

/*
 * The error A's connection ends with after B's answer, which itself may or
 * may not be delivered first: recv()'s errno, else SO_ERROR (0: none).
 */
static int error_after_answer(struct __test_metadata *_metadata, int fd)
{
	socklen_t len = sizeof(int);
	char msg[64];
	ssize_t n = 0;
	int i, err = 0;

	for (i = 0; i < 2; i++) {
		n = recv(fd, msg, sizeof(msg), 0);
		if (n <= 0)
			break;
		TH_LOG("A received the %zd-byte answer before the error", n);
	}
	if (n < 0)
		return errno;
	EXPECT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
	TH_LOG("recv returned %zd; SO_ERROR %d", n, err);
	return err;
}

#define LIVE_KEY_UNMAPS "/sys/kernel/debug/af_smbdirect/test_live_key_unmaps"

/*
 * SEND_WITH_INVALIDATE of a token registered without
 * SMBDIRECT_REG_REMOTE_INVALIDATE: A's connection fails with EPROTO.
 * A second registration, deregistered after the failure, gets no
 * LOCAL_INV (the QP takes no more work requests): its pages are unmapped
 * only after its MR went back to the device (the test build counts
 * unmaps before that: there were, before the fix).
 */
TEST_F(rdma, remote_invalidate_not_granted_is_eproto)
{
	struct smbdirect_buffer_descriptor_v1 got[MAXD], d2[MAXD];
	long pin0 = sd_vm_pin_kb(getpid()), pin, unmaps0 = 0, unmaps = 0;
	int err, ret, hooks = !access(LIVE_KEY_UNMAPS, R_OK);
	struct buf ra, rb, r2;
	__u64 id, id2, bytes;
	char msg[64];
	ssize_t n;
	__u32 n2;

	PAIR(SOCK_SEQPACKET);
	if (hooks)
		ASSERT_EQ(0, sd_read_long(LIVE_KEY_UNMAPS, &unmaps0));
	ASSERT_EQ(0, buf_one(&ra, 8192, 0));
	ASSERT_EQ(0, buf_one(&rb, 8192, 0));
	ASSERT_EQ(0, buf_one(&r2, 8192, 0));
	buf_fill(&rb, 142);
	ret = sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_WRITE, r2.iov[0].iov_base, 8192,
			      d2, MAXD, &n2, &id2);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER: %s", strerror(-ret));
	offer(_metadata, self->c, self->s, &ra, SMBDIRECT_ACCESS_PEER_WRITE, 141, got, &id);
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, rb.iov, 1, got, 1, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("WRITEV: %s", strerror(-ret));
	ret = sd_send_invalidate(self->s, SOCK_SEQPACKET, "answer", 6, le32toh(got[0].token));
	ASSERT_EQ(0, ret) TH_LOG("B cannot know A's policy: %s", strerror(-ret));
	err = error_after_answer(_metadata, self->c);
	EXPECT_EQ(EPROTO, err) TH_LOG("A: %s", strerror(err));
	n = recv(self->s, msg, sizeof(msg), 0);
	EXPECT_TRUE(n == 0 || (n < 0 && errno != EAGAIN)) TH_LOG("B: %zd %s", n, strerror(errno));
	ret = sd_deregister(self->c, id, NULL);
	EXPECT_EQ(0, ret) TH_LOG("DEREGISTER after the failure: %s", strerror(-ret));
	ret = sd_deregister(self->c, id2, NULL);
	EXPECT_EQ(0, ret) TH_LOG("second DEREGISTER after the failure: %s", strerror(-ret));
	pin = sd_vm_pin_kb(getpid());
	EXPECT_EQ(pin0, pin);
	if (hooks) {
		ASSERT_EQ(0, sd_read_long(LIVE_KEY_UNMAPS, &unmaps));
		EXPECT_EQ(unmaps0, unmaps) TH_LOG("pages unmapped while their MR held a key");
	}
	buf_free(&ra);
	buf_free(&rb);
	buf_free(&r2);
}

struct readv_job {
	int fd;
	struct iovec iov;
	struct smbdirect_buffer_descriptor_v1 d[MAXD];
	__u32 n;
	int ret;
	__u64 bytes;
	pthread_t thread;
};

static void *readv_thread(void *arg)
{
	struct readv_job *j = arg;

	j->ret = sd_rdma(j->fd, SMBDIRECT_IOC_RDMA_READV, &j->iov, 1, j->d, j->n, &j->bytes);
	return NULL;
}

/* pthread_join with a deadline: 0, or ETIMEDOUT when the thread hangs. */
static int join_ms(pthread_t t, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	return pthread_timedjoin_np(t, NULL, &ts);
}

#define RACE_LEN (4 * MIB)
/*
 * The bound on an RDMA ioctl whose peer went away: at once when the
 * module learns the connection ended, else its stall detection
 * (SD_RW_STALL, 30 s without a completing chunk) flushes the QP. A busy
 * TCG host can delay the first, so the deadline is the second, with slack.
 */
#define SD_RW_BOUND_MS 40000

/*
 * A registers 4 MiB for B to read; B's READV runs in a thread while A
 * pulls the registration away (DEREGISTER or close). Either B got all of
 * it, intact, or its READV failed; nothing stays pinned.
 */
static void pull_during_readv(struct __test_metadata *_metadata, const struct sd_target *t,
			      int *a, int b, int by_close)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD];
	long pin0 = sd_vm_pin_kb(getpid()), fp0 = 0, pin, fp;
	struct readv_job j = { .fd = b };
	struct buf ra, rb;
	__u32 n, state;
	__u64 id;
	long r;
	int ret;

	ASSERT_EQ(0, sd_foll_pins(&fp0));
	ASSERT_EQ(0, buf_one(&ra, RACE_LEN, 0));
	ASSERT_EQ(0, buf_one(&rb, RACE_LEN, 0));
	buf_fill(&ra, 151);
	buf_fill(&rb, OLD_SEED);
	ret = sd_register_buf(*a, SMBDIRECT_ACCESS_PEER_READ, ra.iov[0].iov_base, RACE_LEN,
			      d, MAXD, &n, &id);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER: %s", strerror(-ret));
	ASSERT_EQ(0, send_descs(*a, SOCK_SEQPACKET, d, n));
	ASSERT_EQ((long)n, recv_descs(b, SOCK_SEQPACKET, j.d));
	j.n = n;
	j.iov = rb.iov[0];
	ASSERT_EQ(0, pthread_create(&j.thread, NULL, readv_thread, &j));
	sd_sleep_ms(2);
	if (by_close) {
		close(*a);
		*a = -1;
	} else {
		/* Works even if the refused READ has already ended the connection. */
		ret = sd_deregister(*a, id, &state);
		EXPECT_EQ(0, ret) TH_LOG("DEREGISTER during READV: %s", strerror(-ret));
		EXPECT_EQ(0U, state);
		/*
		 * A's pages are unpinned; B's READV (this process too) may
		 * still hold rb's until it returns, checked below.
		 */
		pin = sd_vm_pin_kb(getpid());
		EXPECT_TRUE(pin >= pin0 && pin <= pin0 + (long)(RACE_LEN >> 10))
			TH_LOG("VmPin after DEREGISTER: %ld, before %ld", pin, pin0);
	}
	ret = join_ms(j.thread, SD_RW_BOUND_MS);
	ASSERT_EQ(0, ret) TH_LOG("B's READV did not return");
	if (j.ret == 0) {
		EXPECT_EQ(RACE_LEN, j.bytes);
		r = buf_check(&rb, 151);
		EXPECT_EQ(-1, r) TH_LOG("READV succeeded, but byte %ld is wrong", r);
		TH_LOG("B's READV finished first");
	} else {
		EXPECT_TRUE(refused(t, j.ret) || conn_err(j.ret)) TH_LOG("READV: %s",
									 strerror(-j.ret));
		TH_LOG("B's READV failed: %s", strerror(-j.ret));
	}
	if (*a >= 0) {
		close(*a);
		*a = -1;
	}
	pin = sd_wait_vm_pin_kb(getpid(), pin0, SD_STEP_MS);
	EXPECT_EQ(pin0, pin) TH_LOG("VmPin");
	fp = sd_wait_foll_pins(fp0, SD_STEP_MS);
	EXPECT_EQ(fp0, fp) TH_LOG("FOLL_PIN pins held: %ld before, %ld after", fp0, fp);
	buf_free(&ra);
	buf_free(&rb);
}

/*
 * SEND_WITH_INVALIDATE of a token A never issued (B offers the token of a
 * registration on another connection, which rxe would invalidate across
 * PDs): A's connection fails, with EPROTO when the device delivered the
 * receive; the message is not delivered as if nothing happened.
 */
TEST_F(rdma, remote_invalidate_foreign_token_fails)
{
	struct smbdirect_buffer_descriptor_v1 other[MAXD];
	int c2 = -1, s2 = -1, err, ret;
	const char *why = "";
	struct buf r2;
	__u64 id2;

	PAIR(SOCK_SEQPACKET);
	ret = sd_pair_type(&variant->t, SOCK_SEQPACKET, &c2, &s2, &why);
	ASSERT_EQ(0, ret) TH_LOG("second pair: %s: %s", why, strerror(-ret));
	sd_set_timeouts(c2, SD_STEP_MS);
	sd_set_timeouts(s2, SD_STEP_MS);
	ASSERT_EQ(0, buf_one(&r2, 8192, 0));
	offer(_metadata, c2, s2, &r2, SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE,
	      151, other, &id2);
	ret = sd_send_invalidate(self->s, SOCK_SEQPACKET, "answer", 6, le32toh(other[0].token));
	ASSERT_EQ(0, ret) TH_LOG("B cannot know which tokens A issued: %s", strerror(-ret));
	err = error_after_answer(_metadata, self->c);
	EXPECT_NE(0, err) TH_LOG("A's connection went on after a foreign token's invalidation");
	EXPECT_NE(EAGAIN, err) TH_LOG("A: nothing happened");
	TH_LOG("A: %s", strerror(err));
	if (!strcmp(variant->t.kind, "rxe"))
		EXPECT_EQ(EPROTO, err) TH_LOG("A: %s", strerror(err));
	sd_deregister(c2, id2, NULL);
	sd_teardown_pair(c2, s2, 0);
	buf_free(&r2);
}

#define DEREG_DELAY_HOOK "/sys/kernel/debug/af_smbdirect/test_dereg_delay_ms"
#define DEREG_DELAYED "/sys/kernel/debug/af_smbdirect/test_dereg_delayed"

struct dereg_job {
	int fd;
	__u64 id;
	__u32 state;
	int ret;
	pthread_t thread;
};

static void *dereg_thread(void *arg)
{
	struct dereg_job *j = arg;

	j->ret = sd_deregister(j->fd, j->id, &j->state);
	return NULL;
}

/*
 * A's DEREGISTER and B's legitimate SEND_WITH_INVALIDATE of the same token
 * cross: the test build's hook holds DEREGISTER between taking the
 * registration off the live list and posting its LOCAL_INV, and B's
 * answer arrives then. The token was A's and granted: the answer is
 * delivered, DEREGISTER succeeds, the connection lives (it failed with
 * EPROTO, "a token this connection did not issue", before the fix).
 */
TEST_F_TIMEOUT(rdma, send_invalidate_crossing_deregister, 60)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD], peer[MAXD];
	long pin0 = sd_vm_pin_kb(getpid()), before = 0, now, pin;
	struct dereg_job j = { .ret = 1 };
	char answer[64] = "the answer", got[64];
	struct buf ra;
	int i, ret;
	long r;
	__u32 n;

	if (access(DEREG_DELAY_HOOK, W_OK))
		SKIP(return, "needs the test build's %s", DEREG_DELAY_HOOK);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, buf_one(&ra, 8192, 0));
	ret = sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE,
			      ra.iov[0].iov_base, 8192, d, MAXD, &n, &j.id);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER: %s", strerror(-ret));
	ASSERT_EQ(1U, n);
	ASSERT_EQ(0, send_descs(self->c, SOCK_SEQPACKET, d, n));
	ASSERT_EQ(1, recv_descs(self->s, SOCK_SEQPACKET, peer));
	ASSERT_EQ(0, sd_read_long(DEREG_DELAYED, &before));
	now = before;
	ASSERT_EQ(0, sd_write_str(DEREG_DELAY_HOOK, "1500"));
	j.fd = self->c;
	ASSERT_EQ(0, pthread_create(&j.thread, NULL, dereg_thread, &j));
	/* B answers once DEREGISTER holds in the hook. */
	for (i = 0; i < 500 && now == before; i++) {
		sd_sleep_ms(10);
		ASSERT_EQ(0, sd_read_long(DEREG_DELAYED, &now));
	}
	sd_write_str(DEREG_DELAY_HOOK, "0");
	EXPECT_EQ(before + 1, now) TH_LOG("DEREGISTER never reached the hook");
	ret = sd_send_invalidate(self->s, SOCK_SEQPACKET, answer, sizeof(answer),
				 le32toh(peer[0].token));
	EXPECT_EQ(0, ret) TH_LOG("B's SEND_WITH_INVALIDATE: %s", strerror(-ret));
	r = sd_msg_recv(self->c, SOCK_SEQPACKET, got, sizeof(got));
	EXPECT_EQ((long)sizeof(answer), r) TH_LOG("A's receive: %s", r < 0 ? strerror(-r) : "size");
	ASSERT_EQ(0, join_ms(j.thread, SD_STEP_MS)) TH_LOG("DEREGISTER did not return");
	EXPECT_EQ(0, j.ret) TH_LOG("DEREGISTER: %s", strerror(-j.ret));
	expect_alive(_metadata, self->c, self->s, SOCK_SEQPACKET);
	pin = sd_wait_vm_pin_kb(getpid(), pin0, SD_STEP_MS);
	EXPECT_EQ(pin0, pin) TH_LOG("VmPin");
	buf_free(&ra);
}

/*
 * A's DEREGISTER has returned (the LOCAL_INV done, the registration
 * released, its MR idle in the pool) when B's legitimate
 * SEND_WITH_INVALIDATE of the token arrives: the peer could not know.
 * The answer is delivered and the connection lives (EPROTO, "a token
 * this connection did not issue", before the fix), and the token counts
 * as invalidated once only: a second invalidation of it fails A.
 */
TEST_F_TIMEOUT(rdma, send_invalidate_after_deregister_returned, 60)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD], peer[MAXD];
	char answer[64] = "the answer", got[64];
	long pin0 = sd_vm_pin_kb(getpid()), pin, r;
	struct buf ra;
	int ret, err;
	__u64 id;
	__u32 n;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, buf_one(&ra, 8192, 0));
	ret = sd_register_buf(self->c,
			      SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE,
			      ra.iov[0].iov_base, 8192, d, MAXD, &n, &id);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER: %s", strerror(-ret));
	ASSERT_EQ(1U, n);
	ASSERT_EQ(0, send_descs(self->c, SOCK_SEQPACKET, d, n));
	ASSERT_EQ(1, recv_descs(self->s, SOCK_SEQPACKET, peer));
	ASSERT_EQ(0, sd_deregister(self->c, id, NULL));
	pin = sd_wait_vm_pin_kb(getpid(), pin0, SD_STEP_MS);
	EXPECT_EQ(pin0, pin) TH_LOG("VmPin: the registration was not released");
	ret = sd_send_invalidate(self->s, SOCK_SEQPACKET, answer, sizeof(answer),
				 le32toh(peer[0].token));
	EXPECT_EQ(0, ret) TH_LOG("B's SEND_WITH_INVALIDATE: %s", strerror(-ret));
	r = sd_msg_recv(self->c, SOCK_SEQPACKET, got, sizeof(got));
	EXPECT_EQ((long)sizeof(answer), r) TH_LOG("A's receive: %s", r < 0 ? strerror(-r) : "size");
	expect_alive(_metadata, self->c, self->s, SOCK_SEQPACKET);
	/* Once is a crossing; twice is a token A no longer holds. */
	ret = sd_send_invalidate(self->s, SOCK_SEQPACKET, answer, sizeof(answer),
				 le32toh(peer[0].token));
	EXPECT_EQ(0, ret) TH_LOG("B's second SEND_WITH_INVALIDATE: %s", strerror(-ret));
	err = error_after_answer(_metadata, self->c);
	EXPECT_NE(0, err) TH_LOG("A's connection went on after a second invalidation");
	buf_free(&ra);
}

#define RELEASE_DELAY_HOOK "/sys/kernel/debug/af_smbdirect/test_release_delay_ms"
#define RELEASE_DELAYED "/sys/kernel/debug/af_smbdirect/test_release_delayed"

/* Waits up to 5 s for the counter at path to pass before; 0 when it did. */
static int hook_entered(const char *path, long before)
{
	long now = before;
	int i;

	for (i = 0; i < 500 && now == before; i++) {
		sd_sleep_ms(10);
		if (sd_read_long(path, &now))
			return -1;
	}
	return now == before + 1 ? 0 : -1;
}

/*
 * Two deregistrations of A in flight, the peer's SEND_WITH_INVALIDATE of
 * the second one's token arriving while the first is being released: the
 * receive walks A's dying registrations past the first. X (the peer may
 * not invalidate it) is held by the test build's hook in its release,
 * its MR already back in the socket's pool; Z takes that MR from the
 * pool (its key + 1) and is offered to B with remote invalidation, then
 * held in DEREGISTER. B invalidates Z's token. Before the fix the walk
 * read X's MR, found Z's key there and failed the connection with EPROTO
 * ("a token it was not allowed to"); with an MR that went back to the
 * device, the same read was a use-after-free. Now the answer is
 * delivered, both DEREGISTERs succeed and the connection lives.
 */
TEST_F_TIMEOUT(rdma, send_invalidate_walks_past_released_registration, 60)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD], peer[MAXD];
	struct dereg_job jx = { .ret = 1 }, jz = { .ret = 1 };
	long pin0 = sd_vm_pin_kb(getpid()), rel0 = 0, dereg0 = 0, pin;
	char answer[64] = "the answer", got[64];
	int ret, hx, hz;
	__u64 idx, idz;
	struct buf ra;
	long r;
	__u32 n;

	if (access(RELEASE_DELAY_HOOK, W_OK) || access(DEREG_DELAY_HOOK, W_OK))
		SKIP(return, "needs the test build's %s", RELEASE_DELAY_HOOK);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, buf_map(&ra, 2 * PAGE));
	ret = sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_WRITE, ra.map + PAGE, PAGE,
			      d, MAXD, &n, &idx);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER X: %s", strerror(-ret));

	ASSERT_EQ(0, sd_read_long(RELEASE_DELAYED, &rel0));
	ASSERT_EQ(0, sd_read_long(DEREG_DELAYED, &dereg0));
	ASSERT_EQ(0, sd_write_str(RELEASE_DELAY_HOOK, "4000"));
	jx.fd = self->c;
	jx.id = idx;
	ASSERT_EQ(0, pthread_create(&jx.thread, NULL, dereg_thread, &jx));
	hx = hook_entered(RELEASE_DELAYED, rel0);
	sd_write_str(RELEASE_DELAY_HOOK, "0");
	ASSERT_EQ(0, hx) TH_LOG("X's release never reached the hook");
	/* X's MR is idle in the pool now: Z gets it. */
	ret = sd_register_buf(self->c,
			      SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE,
			      ra.map + 2 * PAGE, PAGE, d, MAXD, &n, &idz);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER Z: %s", strerror(-ret));
	ASSERT_EQ(1U, n);
	ASSERT_EQ(0, send_descs(self->c, SOCK_SEQPACKET, d, n));
	ASSERT_EQ(1, recv_descs(self->s, SOCK_SEQPACKET, peer));
	ASSERT_EQ(0, sd_write_str(DEREG_DELAY_HOOK, "1000"));
	jz.fd = self->c;
	jz.id = idz;
	ASSERT_EQ(0, pthread_create(&jz.thread, NULL, dereg_thread, &jz));
	hz = hook_entered(DEREG_DELAYED, dereg0);
	sd_write_str(DEREG_DELAY_HOOK, "0");
	EXPECT_EQ(0, hz) TH_LOG("Z's DEREGISTER never reached the hook");
	/* X still held in its release, Z dying behind it: the walk. */
	ret = sd_send_invalidate(self->s, SOCK_SEQPACKET, answer, sizeof(answer),
				 le32toh(peer[0].token));
	EXPECT_EQ(0, ret) TH_LOG("B's SEND_WITH_INVALIDATE: %s", strerror(-ret));
	r = sd_msg_recv(self->c, SOCK_SEQPACKET, got, sizeof(got));
	EXPECT_EQ((long)sizeof(answer), r) TH_LOG("A's receive: %s", r < 0 ? strerror(-r) : "size");
	ASSERT_EQ(0, join_ms(jx.thread, SD_STEP_MS)) TH_LOG("X's DEREGISTER did not return");
	ASSERT_EQ(0, join_ms(jz.thread, SD_STEP_MS)) TH_LOG("Z's DEREGISTER did not return");
	EXPECT_EQ(0, jx.ret) TH_LOG("X's DEREGISTER: %s", strerror(-jx.ret));
	EXPECT_EQ(0, jz.ret) TH_LOG("Z's DEREGISTER: %s", strerror(-jz.ret));
	expect_alive(_metadata, self->c, self->s, SOCK_SEQPACKET);
	pin = sd_wait_vm_pin_kb(getpid(), pin0, SD_STEP_MS);
	EXPECT_EQ(pin0, pin) TH_LOG("VmPin");
	buf_free(&ra);
}

TEST_F_TIMEOUT(rdma, deregister_during_peer_readv, 60)
{
	PAIR(SOCK_SEQPACKET);
	pull_during_readv(_metadata, &variant->t, &self->c, self->s, 0);
}

TEST_F_TIMEOUT(rdma, close_during_peer_readv, 60)
{
	PAIR(SOCK_SEQPACKET);
	pull_during_readv(_metadata, &variant->t, &self->c, self->s, 1);
}

/*
 * A child owns A's end (the parent closed its copy), registers 1 MiB,
 * sends the descriptors and is SIGKILLed. Its exit closes the socket: B
 * reads the end, its WRITEV with the dead descriptors fails with EPIPE,
 * and no FOLL_PIN pin is left in the system.
 */
TEST_F_TIMEOUT(rdma, child_registers_then_is_killed, 120)
{
	struct smbdirect_buffer_descriptor_v1 got[MAXD];
	struct buf rb;
	int ready[2], ret;
	long fp0 = 0, fp, vmpin, r, nd;
	__u64 bytes;
	char c;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, sd_foll_pins(&fp0));
	ASSERT_EQ(0, pipe(ready));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		struct smbdirect_buffer_descriptor_v1 d[MAXD];
		char *p = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		__u32 n;
		__u64 id;

		if (p == MAP_FAILED)
			_exit(1);
		sd_fill(p, MIB, 161);
		if (sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_ACCESS_PEER_READ,
				    p, MIB, d, MAXD, &n, &id))
			_exit(2);
		if (send_descs(self->c, SOCK_SEQPACKET, d, n))
			_exit(3);
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		pause();
		_exit(0);
	}
	close(ready[1]);
	close(self->c);
	self->c = -1;
	nd = recv_descs(self->s, SOCK_SEQPACKET, got);
	ASSERT_LT(0, nd) TH_LOG("the child's descriptors: %s", strerror(-nd));
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	/* The child's fresh mm pins exactly what it registered. */
	vmpin = sd_vm_pin_kb(self->child);
	EXPECT_EQ(1024, vmpin) TH_LOG("child's VmPin");
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->child = 0;

	r = recv(self->s, &c, 1, 0);
	ASSERT_EQ(0, r) TH_LOG("B: %s", r < 0 ? strerror(errno) : "data");
	ASSERT_EQ(0, buf_one(&rb, MIB, 0));
	buf_fill(&rb, 162);
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, rb.iov, 1, got, nd, &bytes);
	EXPECT_EQ(-EPIPE, ret) TH_LOG("WRITEV to a killed peer: %s",
				      ret ? strerror(-ret) : "succeeded");
	fp = sd_wait_foll_pins(fp0, SD_STEP_MS);
	EXPECT_EQ(fp0, fp) TH_LOG("FOLL_PIN pins held: %ld before, %ld after", fp0, fp);
	buf_free(&rb);
}

/*
 * Over iWARP an RDMA Read Request carries, in the clear, where the reader's
 * data lands: the sink STag and tagged offset of an MR that rdma_rw
 * registers over the reader's buffer, at its DMA address, a kernel virtual
 * address under siw. The peer must not learn kernel addresses. A packet
 * socket on lo (siw's traffic to its own addresses goes there) sees every
 * byte; each Read Request is found by its source STag and tagged offset,
 * which are the token and offset of the descriptor B read from, and its
 * sink offset must not have bit 63 set, as every kernel address does.
 * (RoCE Read Requests carry no sink address, and rxe hands its own
 * traffic back without a packet.)
 */
static __u64 be64_at(const unsigned char *p)
{
	__u64 v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static __u32 be32_at(const unsigned char *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

TEST_F_TIMEOUT(rdma, iwarp_read_request_carries_no_kernel_address, 60)
{
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct smbdirect_buffer_descriptor_v1 d[MAXD], got[MAXD];
	static unsigned char frame[65536 + 256];
	int ps, found = 0, kernel = 0, rcv = 4 << 20;
	struct buf ra, rb;
	__u64 id = 0, bytes = 0, src_to, sink_to = 0;
	__u32 n = MAXD, token;
	ssize_t len;
	long i;

	if (variant->t.transport != SMBDIRECT_TRANSPORT_IWARP)
		SKIP(return, "RoCE Read Requests carry no sink address");
	PAIR(SOCK_SEQPACKET);
	ps = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	ASSERT_LE(0, ps) TH_LOG("packet socket: %s", strerror(errno));
	ll.sll_ifindex = if_nametoindex("lo");
	ASSERT_LT(0, ll.sll_ifindex);
	ASSERT_EQ(0, setsockopt(ps, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)));
	ASSERT_EQ(0, bind(ps, (struct sockaddr *)&ll, sizeof(ll)));

	/* Page-aligned and unaligned sinks, one read each. */
	ASSERT_EQ(0, buf_one(&ra, 3 * PAGE, 0));
	ASSERT_EQ(0, buf_one(&rb, 3 * PAGE, 123));
	buf_fill(&ra, 0x5eed);
	ASSERT_EQ(0, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, ra.iov, ra.n, d, &n, &id));
	ASSERT_EQ(0, send_descs(self->c, SOCK_SEQPACKET, d, n));
	ASSERT_EQ((long)n, recv_descs(self->s, SOCK_SEQPACKET, got));
	ASSERT_EQ(0, sd_rdma(self->s, SMBDIRECT_IOC_RDMA_READV, rb.iov, rb.n, got, n, &bytes));
	EXPECT_EQ(ra.len, bytes);
	EXPECT_EQ(-1, buf_check(&rb, 0x5eed));

	token = le32toh(d[0].token);
	src_to = le64toh(d[0].offset);
	/* Read Request: sink STag, sink TO, size, source STag, source TO. */
	while ((len = recv(ps, frame, sizeof(frame), MSG_DONTWAIT)) > 0) {
		for (i = 16; i + 12 <= len; i++) {
			if (be32_at(frame + i) != token || be64_at(frame + i + 4) != src_to)
				continue;
			found++;
			sink_to = be64_at(frame + i - 12);
			if (sink_to >> 63)
				kernel++;
		}
	}
	close(ps);
	/* Each frame is seen twice on lo, leaving and arriving. */
	ASSERT_LT(0, found) TH_LOG("no Read Request for token %#x offset %#llx seen on lo",
				   token, (unsigned long long)src_to);
	EXPECT_EQ(0, kernel) TH_LOG("%d of %d Read Requests name a kernel address as sink, "
				    "e.g. %#llx", kernel, found, (unsigned long long)sink_to);
	ASSERT_EQ(0, sd_deregister(self->c, id, NULL));
	buf_free(&ra);
	buf_free(&rb);
}

TEST_HARNESS_MAIN
