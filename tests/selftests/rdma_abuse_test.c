// SPDX-License-Identifier: GPL-2.0
/*
 * The RDMA ioctls and SMBDIRECT_CMSG_SEND_INVALIDATE against bogus input:
 * each case gets exactly the errno uapi/linux/smbdirect.h gives it, nothing
 * stays pinned, and a call refused before any RDMA leaves the connection
 * working (only a failed RDMA operation ends it). Also RLIMIT_MEMLOCK for
 * an unprivileged caller. Argument checking does not depend on the
 * transport, so one connected target (rxe over IPv4) is enough.
 *
 * In these tests one process holds both ends: c (A) registers, s (B) uses
 * A's descriptors directly, without sending them.
 *
 * The same source is built twice: rdma_abuse_test and, with -m32,
 * rdma_abuse_test32, whose ioctls go through the module's compat_ioctl
 * (32-bit struct iovec arrays). all_ioctls_move_data checks every ioctl's
 * effect byte by byte in both widths; a few cases only a 32-bit caller
 * can make follow at the end.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <assert.h>
#include <grp.h>
#include <stddef.h>

#include "kselftest_harness.h"
#include "sd_test.h"

#define PAGE ((size_t)4096)
#define MAXD 64

/* One layout for 64-bit and 32-bit callers: i386 aligns u64 to 4 only. */
static_assert(sizeof(struct smbdirect_params) == 56, "params");
static_assert(sizeof(struct smbdirect_register) == 40 &&
	      offsetof(struct smbdirect_register, iov) == 8 &&
	      offsetof(struct smbdirect_register, desc) == 24 &&
	      offsetof(struct smbdirect_register, id) == 32, "register");
static_assert(sizeof(struct smbdirect_deregister) == 32 &&
	      offsetof(struct smbdirect_deregister, state) == 16 &&
	      offsetof(struct smbdirect_deregister, cookie) == 24, "deregister");
static_assert(sizeof(struct smbdirect_rdma_args) == 64 &&
	      offsetof(struct smbdirect_rdma_args, desc) == 16 &&
	      offsetof(struct smbdirect_rdma_args, iov) == 32 &&
	      offsetof(struct smbdirect_rdma_args, offset) == 48, "rdma_args");
static_assert(sizeof(struct smbdirect_rdma_completion) == 24, "completion");
static_assert(sizeof(struct smbdirect_rdma) == 40 &&
	      offsetof(struct smbdirect_rdma, iov) == 8 &&
	      offsetof(struct smbdirect_rdma, desc) == 24 &&
	      offsetof(struct smbdirect_rdma, bytes) == 32, "rdma");
static_assert(sizeof(struct smbdirect_buffer_descriptor_v1) == 16, "descriptor");

FIXTURE(abuse) {
	int c, s;
	pid_t child;
	char *noaccess;		/* a PROT_NONE page: every access faults */
};

SD_TARGET_VARIANT(abuse);

FIXTURE_VARIANT_ADD(abuse, rxe4) { .t = SD_TARGET_RXE4 };

FIXTURE_SETUP(abuse)
{
	self->c = -1;
	self->s = -1;
	self->child = 0;
	/*
	 * Kept mapped: an unmapped hole would soon hold a thread stack
	 * (sd_pair_type() starts a thread) and stop faulting.
	 */
	self->noaccess = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->noaccess);
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(abuse)
{
	sd_teardown_pair(self->c, self->s, self->child);
}

static const unsigned long cmds[4] = {
	SMBDIRECT_IOC_REGISTER, SMBDIRECT_IOC_DEREGISTER,
	SMBDIRECT_IOC_RDMA_READV, SMBDIRECT_IOC_RDMA_WRITEV,
};

static const char *const cmd_names[4] = {
	"REGISTER", "DEREGISTER", "RDMA_READV", "RDMA_WRITEV",
};

static char *map_rw(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * A registration of len bytes at buf for the peer to read and write (one
 * descriptor), as the peer would use it.
 */
struct reg {
	char *buf;
	size_t len;
	struct smbdirect_buffer_descriptor_v1 d;
	__u64 id;
};

static int reg_make(int fd, struct reg *r, size_t len, uint32_t seed)
{
	__u32 n = 1;
	struct iovec iov;
	int ret;

	r->len = len;
	r->buf = map_rw(len);
	if (!r->buf)
		return -ENOMEM;
	sd_fill(r->buf, len, seed);
	iov = (struct iovec){ r->buf, len };
	ret = sd_register(fd, SMBDIRECT_ACCESS_PEER_READ | SMBDIRECT_ACCESS_PEER_WRITE,
			  &iov, 1, &r->d, &n, &r->id);
	if (!ret && n != 1)
		ret = -EBADMSG;
	return ret;
}

/*
 * reg_make() on a, with the descriptor handed to b in a message, as a peer
 * learns it: REGISTER does not wait for REG_MR, and only a send posted
 * after it on a's queue orders the registration before b's use of it (rxe
 * fails an access that overtakes REG_MR, and the connection with it).
 */
static int reg_offer(int a, int b, struct reg *r, size_t len, uint32_t seed)
{
	struct smbdirect_buffer_descriptor_v1 got;
	int ret = reg_make(a, r, len, seed);
	long n;

	if (!ret)
		ret = sd_msg_send(a, SOCK_SEQPACKET, &r->d, sizeof(r->d));
	if (ret)
		return ret;
	n = sd_msg_recv(b, SOCK_SEQPACKET, &got, sizeof(got));
	if (n < 0)
		return (int)n;
	if (n != sizeof(got) || memcmp(&got, &r->d, sizeof(got)))
		return -EBADMSG;
	return 0;
}

/* The connection still works: messages both ways and a real WRITEV. */
static void expect_alive(struct __test_metadata *_metadata, int a, int b, struct reg *r)
{
	char msg[8], *src;
	struct iovec iov;
	__u64 bytes = 0;
	int ret;

	ASSERT_EQ(0, sd_msg_send(a, SOCK_SEQPACKET, "ping", 4));
	EXPECT_EQ(4, sd_msg_recv(b, SOCK_SEQPACKET, msg, sizeof(msg)))
		TH_LOG("A -> B after a refused call");
	ASSERT_EQ(0, sd_msg_send(b, SOCK_SEQPACKET, "pong", 4));
	EXPECT_EQ(4, sd_msg_recv(a, SOCK_SEQPACKET, msg, sizeof(msg)))
		TH_LOG("B -> A after a refused call");
	if (!r)
		return;
	src = map_rw(r->len);
	ASSERT_NE(NULL, src);
	sd_fill(src, r->len, 0xa11e);
	iov = (struct iovec){ src, r->len };
	ret = sd_rdma(b, SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, &r->d, 1, &bytes);
	EXPECT_EQ(0, ret) TH_LOG("WRITEV after a refused call: %s", strerror(-ret));
	EXPECT_EQ(r->len, bytes);
	EXPECT_EQ(-1, sd_check(r->buf, r->len, 0xa11e));
	munmap(src, r->len);
}

/* An ioctl's -errno. */
static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * Every ioctl doing its job, the data checked byte by byte: GET_PARAMS,
 * REGISTER of three segments that start and end inside pages, WRITEV and
 * READV between them and two differently cut local segments, DEREGISTER,
 * and SIOCINQ/SIOCOUTQ. In rdma_abuse_test32 this is what shows that
 * compat_ioctl reads the structs and the 32-bit iovec arrays right.
 */
TEST_F(abuse, all_ioctls_move_data)
{
	struct smbdirect_buffer_descriptor_v1 d[4], got[4];
	long pin0 = sd_vm_pin_kb(getpid()), t0;
	char *a = map_rw(4 * PAGE), *b = map_rw(3 * PAGE), msg[8];
	struct iovec ia[3], ib[2];
	struct smbdirect_params p;
	__u64 id = 0, bytes = 0;
	__u32 n = 4, state = 0xdead;
	size_t total;
	int inq = -1, outq = -1, ret;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	memset(a, 0x5a, 4 * PAGE);
	memset(b, 0, 3 * PAGE);
	ia[0] = (struct iovec){ a + 100, 1000 };
	ia[1] = (struct iovec){ a + PAGE + 200, PAGE - 200 };
	ia[2] = (struct iovec){ a + 3 * PAGE, 3000 };
	total = 1000 + (PAGE - 200) + 3000;
	ib[0] = (struct iovec){ b + 50, 5000 };
	ib[1] = (struct iovec){ b + 2 * PAGE + 7, total - 5000 };
	PAIR(SOCK_SEQPACKET);

	ASSERT_EQ(0, sd_get_params(self->s, &p));
	EXPECT_EQ(sizeof(p), p.size);
	EXPECT_EQ(0x100U, p.version);
	EXPECT_EQ((__u32)variant->t.transport, p.transport);
	EXPECT_LE(total, p.max_read_write_size);
	EXPECT_LT(0U, p.initiator_depth);

	ret = sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ | SMBDIRECT_ACCESS_PEER_WRITE,
			  ia, 3, d, &n, &id);
	ASSERT_EQ(0, ret) TH_LOG("REGISTER: %s", strerror(-ret));
	EXPECT_NE(0U, id);
	EXPECT_EQ(total, sd_desc_bytes(d, n)) TH_LOG("%u descriptors", n);
	EXPECT_EQ(pin0 + 12, sd_vm_pin_kb(getpid()));
	/* B learns the descriptors from A's message, as a peer does. */
	ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, d, n * sizeof(d[0])));
	ASSERT_EQ((long)(n * sizeof(d[0])), sd_msg_recv(self->s, SOCK_SEQPACKET, got, sizeof(got)));

	sd_fill_iov(ib, 2, 0xc0de);
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, ib, 2, got, n, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("WRITEV: %s", strerror(-ret));
	EXPECT_EQ(total, bytes);
	EXPECT_EQ(-1, sd_check_iov(ia, 3, 0xc0de)) TH_LOG("WRITEV: A's segments");
	EXPECT_EQ(0x5a, a[99]);
	EXPECT_EQ(0x5a, a[1100]);
	EXPECT_EQ(0x5a, a[PAGE + 199]);
	EXPECT_EQ(0x5a, a[3 * PAGE + 3000]);

	sd_fill_iov(ia, 3, 0xbeef);
	memset(b, 0, 3 * PAGE);
	bytes = 0;
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_READV, ib, 2, got, n, &bytes);
	ASSERT_EQ(0, ret) TH_LOG("READV: %s", strerror(-ret));
	EXPECT_EQ(total, bytes);
	EXPECT_EQ(-1, sd_check_iov(ib, 2, 0xbeef)) TH_LOG("READV: B's segments");
	EXPECT_EQ(0, b[49]);
	EXPECT_EQ(0, b[5050]);
	EXPECT_EQ(0, b[2 * PAGE + 6]);

	EXPECT_EQ(0, sd_deregister(self->c, id, &state));
	EXPECT_EQ(0U, state);
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));

	ASSERT_EQ(0, sd_msg_send(self->s, SOCK_SEQPACKET, "ping", 4));
	ASSERT_LT(0, sd_poll(self->c, POLLIN, SD_STEP_MS));
	t0 = sd_now_ms();
	do {
		ASSERT_EQ(0, ioctl(self->c, SIOCINQ, &inq)) TH_LOG("SIOCINQ: %s", strerror(errno));
	} while (inq != 4 && sd_now_ms() - t0 < SD_STEP_MS);
	EXPECT_EQ(4, inq);
	ASSERT_EQ(0, ioctl(self->c, SIOCOUTQ, &outq)) TH_LOG("SIOCOUTQ: %s", strerror(errno));
	EXPECT_LE(0, outq);
	EXPECT_EQ(4, sd_msg_recv(self->c, SOCK_SEQPACKET, msg, sizeof(msg)));
	munmap(a, 4 * PAGE);
	munmap(b, 3 * PAGE);
}

TEST_F(abuse, bad_struct_pointer_efault)
{
	int i;

	PAIR(SOCK_SEQPACKET);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(-EFAULT, ioc(self->c, cmds[i], self->noaccess))
			TH_LOG("%s", cmd_names[i]);
		EXPECT_EQ(-EFAULT, ioc(self->c, cmds[i], (void *)8)) TH_LOG("%s", cmd_names[i]);
	}
	expect_alive(_metadata, self->c, self->s, NULL);
}

/* size 0 or below the struct: EINVAL, before anything else happens. */
TEST_F(abuse, size_field_too_small_einval)
{
	static const __u32 small[3] = { 0, 4, 0 };
	struct smbdirect_buffer_descriptor_v1 d[4];
	long pin0 = sd_vm_pin_kb(getpid());
	struct reg r;
	struct iovec iov;
	int i;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, 8192, 1));
	iov = (struct iovec){ r.buf, 8192 };
	for (i = 0; i < 3; i++) {
		struct smbdirect_register rg = {
			.size = i == 2 ? sizeof(rg) - 1 : small[i],
			.flags = SMBDIRECT_ACCESS_PEER_READ,
			.iov = (uintptr_t)&iov, .iov_count = 1,
			.desc = (uintptr_t)d, .desc_count = 4,
		};
		/* DEREGISTER's first version ends at reserved (no cookie). */
		struct smbdirect_deregister dr = {
			.size = i == 2 ? offsetof(struct smbdirect_deregister, cookie) - 1 :
				small[i],
			.id = r.id,
		};
		struct smbdirect_rdma rw = {
			.size = i == 2 ? sizeof(rw) - 1 : small[i],
			.iov = (uintptr_t)&iov, .iov_count = 1,
			.desc = (uintptr_t)&r.d, .desc_count = 1,
		};

		EXPECT_EQ(-EINVAL, ioc(self->c, SMBDIRECT_IOC_REGISTER, &rg))
			TH_LOG("REGISTER size %u", rg.size);
		EXPECT_EQ(-EINVAL, ioc(self->c, SMBDIRECT_IOC_DEREGISTER, &dr))
			TH_LOG("DEREGISTER size %u", dr.size);
		EXPECT_EQ(-EINVAL, ioc(self->s, SMBDIRECT_IOC_RDMA_READV, &rw))
			TH_LOG("RDMA_READV size %u", rw.size);
		EXPECT_EQ(-EINVAL, ioc(self->s, SMBDIRECT_IOC_RDMA_WRITEV, &rw))
			TH_LOG("RDMA_WRITEV size %u", rw.size);
	}
	EXPECT_EQ(pin0 + 8, sd_vm_pin_kb(getpid())) TH_LOG("only the one registration is pinned");
	expect_alive(_metadata, self->c, self->s, &r);
	/* The refused DEREGISTERs left it registered. */
	EXPECT_EQ(0, sd_deregister(self->c, r.id, NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
}

/*
 * A struct longer than ours, as a newer caller's: each struct below is
 * ours followed by a tail. The tail all zero: accepted, and the call does
 * its job. One byte of it set: E2BIG, as copy_struct_from_user() gives
 * openat2() and clone3(), and nothing happens: the caller set a field we
 * do not know, and must not take our success for its meaning. A size
 * above a page: E2BIG, whatever follows. GET_PARAMS reads nothing but
 * size: a longer struct gets ours, its tail untouched.
 */
#define TAIL 16

struct reg_long {
	struct smbdirect_register r;
	unsigned char tail[TAIL];
};

struct dereg_long {
	struct smbdirect_deregister d;
	unsigned char tail[TAIL];
};

struct rdma_long {
	struct smbdirect_rdma r;
	unsigned char tail[TAIL];
};

struct params_long {
	struct smbdirect_params p;
	unsigned char tail[TAIL];
};

TEST_F(abuse, size_field_larger_tail_must_be_zero)
{
	struct smbdirect_buffer_descriptor_v1 d[4];
	long pin0 = sd_vm_pin_kb(getpid());
	char *src = map_rw(8192), *page2 = map_rw(2 * PAGE);
	struct reg_long rg;
	struct dereg_long dr;
	struct rdma_long rw;
	struct params_long gp;
	struct iovec iov, liov;
	struct reg r;
	__u64 id2;
	int i;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, page2);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, 8192, 1));
	iov = (struct iovec){ r.buf, 8192 };
	liov = (struct iovec){ src, 8192 };

	/* REGISTER: a second registration of the same buffer. */
	memset(&rg, 0, sizeof(rg));
	rg.r = (struct smbdirect_register){
		.size = sizeof(rg), .flags = SMBDIRECT_ACCESS_PEER_READ,
		.iov = (uintptr_t)&iov, .iov_count = 1,
		.desc = (uintptr_t)d, .desc_count = 4,
	};
	rg.tail[TAIL - 1] = 1;
	EXPECT_EQ(-E2BIG, ioc(self->c, SMBDIRECT_IOC_REGISTER, &rg));
	EXPECT_EQ(0U, rg.r.id);
	EXPECT_EQ(pin0 + 8, sd_vm_pin_kb(getpid())) TH_LOG("E2BIG pinned nothing");
	rg.tail[TAIL - 1] = 0;
	ASSERT_EQ(0, ioc(self->c, SMBDIRECT_IOC_REGISTER, &rg))
		TH_LOG("REGISTER, zero tail: %s", strerror(errno));
	EXPECT_NE(0U, rg.r.id);
	EXPECT_EQ(1U, rg.r.desc_count);
	EXPECT_EQ(pin0 + 16, sd_vm_pin_kb(getpid()));
	id2 = rg.r.id;

	/* RDMA_WRITEV and RDMA_READV into and from the first registration. */
	for (i = 0; i < 2; i++) {
		unsigned long cmd = i ? SMBDIRECT_IOC_RDMA_READV : SMBDIRECT_IOC_RDMA_WRITEV;

		sd_fill(src, 8192, 0x7a11 + i);
		sd_fill(r.buf, 8192, 0x7a11 + i + 100);
		memset(&rw, 0, sizeof(rw));
		rw.r = (struct smbdirect_rdma){
			.size = sizeof(rw),
			.iov = (uintptr_t)&liov, .iov_count = 1,
			.desc = (uintptr_t)&r.d, .desc_count = 1,
		};
		rw.tail[0] = 0x80;
		EXPECT_EQ(-E2BIG, ioc(self->s, cmd, &rw)) TH_LOG("%s", cmd_names[2 + !i]);
		EXPECT_EQ(0U, rw.r.bytes);
		EXPECT_EQ(-1, sd_check(i ? src : r.buf, 8192, 0x7a11 + i + (i ? 0 : 100)))
			TH_LOG("%s moved bytes after E2BIG", cmd_names[2 + !i]);
		rw.tail[0] = 0;
		ASSERT_EQ(0, ioc(self->s, cmd, &rw))
			TH_LOG("%s, zero tail: %s", cmd_names[2 + !i], strerror(errno));
		EXPECT_EQ(8192U, rw.r.bytes);
		EXPECT_EQ(-1, sd_check(i ? src : r.buf, 8192, 0x7a11 + i + (i ? 100 : 0)))
			TH_LOG("%s with a zero tail", cmd_names[2 + !i]);
	}

	/* DEREGISTER of the second registration. */
	memset(&dr, 0, sizeof(dr));
	dr.d = (struct smbdirect_deregister){ .size = sizeof(dr), .id = id2 };
	dr.tail[TAIL / 2] = 0xff;
	EXPECT_EQ(-E2BIG, ioc(self->c, SMBDIRECT_IOC_DEREGISTER, &dr));
	EXPECT_EQ(pin0 + 16, sd_vm_pin_kb(getpid())) TH_LOG("E2BIG deregistered");
	dr.tail[TAIL / 2] = 0;
	EXPECT_EQ(0, ioc(self->c, SMBDIRECT_IOC_DEREGISTER, &dr))
		TH_LOG("DEREGISTER, zero tail: %s", strerror(errno));
	EXPECT_EQ(pin0 + 8, sd_vm_pin_kb(getpid()));

	/* Above a page, zeros all the way: every ioctl refuses it. */
	memset(page2, 0, 2 * PAGE);
	for (i = 0; i < 4; i++) {
		*(__u32 *)page2 = PAGE + 8;
		EXPECT_EQ(-E2BIG, ioc(i < 2 ? self->c : self->s, cmds[i], page2))
			TH_LOG("%s, size %zu", cmd_names[i], PAGE + 8);
	}
	EXPECT_EQ(-E2BIG, ioc(self->c, SMBDIRECT_IOC_GET_PARAMS, page2));

	/* GET_PARAMS: ours, the tail left as it was. */
	memset(&gp, 0xa5, sizeof(gp));
	gp.p.size = sizeof(gp);
	ASSERT_EQ(0, ioc(self->c, SMBDIRECT_IOC_GET_PARAMS, &gp));
	EXPECT_EQ(sizeof(gp.p), gp.p.size);
	EXPECT_EQ(0x100U, gp.p.version);
	for (i = 0; i < TAIL && gp.tail[i] == 0xa5; i++)
		;
	EXPECT_EQ(TAIL, i) TH_LOG("GET_PARAMS wrote tail byte %d", i);

	expect_alive(_metadata, self->c, self->s, &r);
	EXPECT_EQ(0, sd_deregister(self->c, r.id, NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	munmap(src, 8192);
	munmap(page2, 2 * PAGE);
}

TEST_F(abuse, unknown_flags_einval)
{
	static const __u32 bad[3] = { 0x8, 0x100, 0x80000000 };
	struct smbdirect_buffer_descriptor_v1 d[4];
	long pin0 = sd_vm_pin_kb(getpid());
	struct reg r;
	struct iovec iov;
	__u32 n;
	int i;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, 4096, 2));
	iov = (struct iovec){ r.buf, 4096 };
	for (i = 0; i < 3; i++) {
		struct smbdirect_deregister dr = {
			.size = sizeof(dr), .flags = bad[i], .id = r.id,
		};
		struct smbdirect_rdma rw = {
			.size = sizeof(rw), .flags = bad[i],
			.iov = (uintptr_t)&iov, .iov_count = 1,
			.desc = (uintptr_t)&r.d, .desc_count = 1,
		};

		n = 4;
		EXPECT_EQ(-EINVAL, sd_register(self->c, SMBDIRECT_ACCESS_PEER_WRITE | bad[i],
					       &iov, 1, d, &n, NULL)) TH_LOG("flag %#x", bad[i]);
		EXPECT_EQ(-EINVAL, ioc(self->c, SMBDIRECT_IOC_DEREGISTER, &dr))
			TH_LOG("DEREGISTER flag %#x", bad[i]);
		EXPECT_EQ(-EINVAL, ioc(self->s, SMBDIRECT_IOC_RDMA_READV, &rw))
			TH_LOG("READV flag %#x", bad[i]);
		EXPECT_EQ(-EINVAL, ioc(self->s, SMBDIRECT_IOC_RDMA_WRITEV, &rw))
			TH_LOG("WRITEV flag %#x", bad[i]);
	}
	EXPECT_EQ(pin0 + 4, sd_vm_pin_kb(getpid()));
	expect_alive(_metadata, self->c, self->s, &r);
	EXPECT_EQ(0, sd_deregister(self->c, r.id, NULL));
}

TEST_F(abuse, register_without_access_einval)
{
	struct smbdirect_buffer_descriptor_v1 d[4];
	long pin0 = sd_vm_pin_kb(getpid());
	char *buf = map_rw(PAGE);
	struct iovec iov = { buf, PAGE };
	__u32 n = 4;

	ASSERT_NE(NULL, buf);
	PAIR(SOCK_SEQPACKET);
	EXPECT_EQ(-EINVAL, sd_register(self->c, 0, &iov, 1, d, &n, NULL));
	n = 4;
	EXPECT_EQ(-EINVAL, sd_register(self->c, SMBDIRECT_REG_REMOTE_INVALIDATE, &iov, 1, d, &n,
				       NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	expect_alive(_metadata, self->c, self->s, NULL);
}

TEST_F(abuse, register_no_bytes_einval)
{
	struct smbdirect_buffer_descriptor_v1 d[4];
	char *buf = map_rw(PAGE);
	struct iovec iov[3] = { { buf, 0 }, { NULL, 0 }, { buf + 100, 0 } };
	__u32 n = 4;

	ASSERT_NE(NULL, buf);
	PAIR(SOCK_SEQPACKET);
	EXPECT_EQ(-EINVAL, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, iov, 0, d, &n, NULL))
		TH_LOG("iov_count 0");
	n = 4;
	EXPECT_EQ(-EINVAL, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, iov, 3, d, &n, NULL))
		TH_LOG("only zero-length segments");
	expect_alive(_metadata, self->c, self->s, NULL);
}

TEST_F(abuse, register_bad_pointers_efault)
{
	struct smbdirect_buffer_descriptor_v1 d[4];
	long pin0 = sd_vm_pin_kb(getpid()), fp0 = 0, fp;
	char *buf = map_rw(4 * PAGE);
	struct iovec iov;
	__u32 n;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, sd_foll_pins(&fp0));
	PAIR(SOCK_SEQPACKET);
	/* The iovec array itself. */
	n = 4;
	EXPECT_EQ(-EFAULT, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ,
				       (struct iovec *)self->noaccess, 1, d, &n, NULL));
	/* A segment in an inaccessible page, and one that runs into one. */
	iov = (struct iovec){ self->noaccess, 100 };
	n = 4;
	EXPECT_EQ(-EFAULT, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, &iov, 1, d, &n, NULL));
	ASSERT_EQ(0, mprotect(buf + 3 * PAGE, PAGE, PROT_NONE));
	iov = (struct iovec){ buf + 10, 3 * PAGE };
	n = 4;
	EXPECT_EQ(-EFAULT, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, &iov, 1, d, &n, NULL))
		TH_LOG("a range whose last page is PROT_NONE");
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid())) TH_LOG("the mapped part stayed pinned");
	/* The descriptor array: the registration must be undone. */
	iov = (struct iovec){ buf, 2 * PAGE };
	n = 4;
	EXPECT_EQ(-EFAULT, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, &iov, 1,
				       (void *)self->noaccess, &n, NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid())) TH_LOG("pinned after a bad desc pointer");
	fp = sd_wait_foll_pins(fp0, 2000);
	EXPECT_EQ(fp0, fp) TH_LOG("FOLL_PIN pins held: %ld before, %ld after", fp0, fp);
	expect_alive(_metadata, self->c, self->s, NULL);
}

/*
 * SMBDIRECT_IOV_MAX segments are fine (1024 pages back to back: they meet
 * at page boundaries, so few descriptors), one more is EMSGSIZE.
 */
TEST_F(abuse, register_iov_count_limit)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD];
	long pin0 = sd_vm_pin_kb(getpid());
	size_t len = (SMBDIRECT_IOV_MAX + 1) * PAGE;
	struct iovec *iov = calloc(SMBDIRECT_IOV_MAX + 1, sizeof(*iov));
	char *buf = map_rw(len);
	__u64 id = 0;
	__u32 n;
	int i, ret;

	ASSERT_NE(NULL, iov);
	ASSERT_NE(NULL, buf);
	for (i = 0; i <= SMBDIRECT_IOV_MAX; i++)
		iov[i] = (struct iovec){ buf + i * PAGE, PAGE };
	PAIR(SOCK_SEQPACKET);
	n = MAXD;
	EXPECT_EQ(-EMSGSIZE, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, iov,
					 SMBDIRECT_IOV_MAX + 1, d, &n, NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	n = MAXD;
	ret = sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, iov, SMBDIRECT_IOV_MAX, d, &n, &id);
	ASSERT_EQ(0, ret) TH_LOG("%d page segments: %s", SMBDIRECT_IOV_MAX, strerror(-ret));
	EXPECT_EQ((__u64)SMBDIRECT_IOV_MAX * PAGE, sd_desc_bytes(d, n));
	EXPECT_EQ(pin0 + SMBDIRECT_IOV_MAX * 4, sd_vm_pin_kb(getpid()));
	TH_LOG("%d page-joined segments: %u descriptors", SMBDIRECT_IOV_MAX, n);
	EXPECT_EQ(0, sd_deregister(self->c, id, NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	free(iov);
}

/*
 * More than SMBDIRECT_REG_MAX_BYTES: one segment a byte over, two
 * segments summing a byte over, and segments whose sum wraps 64 bits.
 * The memory is mapped but never touched: the size is refused first.
 */
TEST_F(abuse, register_too_many_bytes_emsgsize)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD];
	long pin0 = sd_vm_pin_kb(getpid());
	size_t len = SMBDIRECT_REG_MAX_BYTES + PAGE;
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct iovec iov[3];
	__u32 n;
	int ret;

	ASSERT_NE(MAP_FAILED, buf);
	PAIR(SOCK_SEQPACKET);
	iov[0] = (struct iovec){ buf, SMBDIRECT_REG_MAX_BYTES + 1 };
	n = MAXD;
	EXPECT_EQ(-EMSGSIZE, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, iov, 1, d, &n, NULL));
	iov[0] = (struct iovec){ buf, SMBDIRECT_REG_MAX_BYTES / 2 };
	iov[1] = (struct iovec){
		buf + SMBDIRECT_REG_MAX_BYTES / 2, SMBDIRECT_REG_MAX_BYTES / 2 + 1,
	};
	n = MAXD;
	EXPECT_EQ(-EMSGSIZE, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, iov, 2, d, &n, NULL));
	/* Each length fits ssize_t; the sum 3 * 0x6000... wraps to 0x2000...0. */
	iov[0] = (struct iovec){ buf, (SIZE_MAX / 8 + 1) * 3 };
	iov[1] = iov[0];
	iov[2] = iov[0];
	n = MAXD;
	EXPECT_EQ(-EMSGSIZE, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, iov, 3, d, &n, NULL))
		TH_LOG("a sum that wraps");
	/* Wraps to exactly PAGE: a sum kept in 64 bits would look small. */
	iov[0] = (struct iovec){ buf, SIZE_MAX / 2 };
	iov[1] = (struct iovec){ buf, SIZE_MAX / 2 };
	iov[2] = (struct iovec){ buf, PAGE + 2 };
	n = MAXD;
	EXPECT_EQ(-EMSGSIZE, sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, iov, 3, d, &n, NULL))
		TH_LOG("a sum that wraps to one page");
	/*
	 * A length that also runs past the end of the address space: too
	 * many bytes is EMSGSIZE before the bad range is EFAULT.
	 */
	iov[0] = (struct iovec){ buf, SIZE_MAX };
	n = MAXD;
	ret = sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, iov, 1, d, &n, NULL);
	EXPECT_EQ(-EMSGSIZE, ret)
		TH_LOG("SIZE_MAX segment: %s", ret ? strerror(-ret) : "registered");
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	expect_alive(_metadata, self->c, self->s, NULL);
	munmap(buf, len);
}

/*
 * Three segments with gaps need three descriptors: room for fewer is
 * ENOSPC with desc_count set to 3, nothing written past the room, nothing
 * pinned; with room for 3 it works.
 */
TEST_F(abuse, register_desc_count_enospc)
{
	struct smbdirect_buffer_descriptor_v1 d[8];
	long pin0 = sd_vm_pin_kb(getpid());
	char *buf = map_rw(4 * PAGE);
	struct iovec iov[3];
	__u32 room, n;
	__u64 id;
	int i, ret;

	ASSERT_NE(NULL, buf);
	iov[0] = (struct iovec){ buf + 10, 1000 };
	iov[1] = (struct iovec){ buf + PAGE + 20, 2000 };
	iov[2] = (struct iovec){ buf + 3 * PAGE + 30, 3000 };
	PAIR(SOCK_SEQPACKET);
	for (room = 0; room < 3; room++) {
		memset(d, 0xee, sizeof(d));
		n = room;
		id = 0;
		ret = sd_register(self->c, SMBDIRECT_ACCESS_PEER_WRITE, iov, 3, d, &n, &id);
		EXPECT_EQ(-ENOSPC, ret) TH_LOG("room %u: %s", room, strerror(-ret));
		EXPECT_EQ(3U, n) TH_LOG("room %u: desc_count out", room);
		for (i = room; i < 8; i++) {
			unsigned char *p = (unsigned char *)&d[i];
			size_t j;

			for (j = 0; j < sizeof(d[i]); j++)
				if (p[j] != 0xee)
					break;
			EXPECT_EQ(sizeof(d[i]), j)
				TH_LOG("room %u: descriptor %d written", room, i);
		}
		EXPECT_EQ(pin0, sd_vm_pin_kb(getpid())) TH_LOG("room %u", room);
	}
	/* Descriptors sent with desc NULL and no room: still just the count. */
	n = 0;
	EXPECT_EQ(-ENOSPC,
		  sd_register(self->c, SMBDIRECT_ACCESS_PEER_WRITE, iov, 3, NULL, &n, NULL));
	EXPECT_EQ(3U, n);
	n = 3;
	ret = sd_register(self->c, SMBDIRECT_ACCESS_PEER_WRITE, iov, 3, d, &n, &id);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	EXPECT_EQ(3U, n);
	EXPECT_NE(0U, id);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(iov[i].iov_len, le32toh(d[i].length)) TH_LOG("descriptor %d", i);
	EXPECT_EQ(pin0 + 12, sd_vm_pin_kb(getpid()));
	EXPECT_EQ(0, sd_deregister(self->c, id, NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
}

/* Read-only memory cannot be offered for the peer to write. */
TEST_F(abuse, peer_write_of_readonly_memory_efault)
{
	struct smbdirect_buffer_descriptor_v1 d[4];
	long pin0 = sd_vm_pin_kb(getpid());
	char *ro = mmap(NULL, 2 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec iov = { ro, 2 * PAGE };
	__u64 id;
	__u32 n;
	int ret;

	ASSERT_NE(MAP_FAILED, ro);
	PAIR(SOCK_SEQPACKET);
	n = 4;
	EXPECT_EQ(-EFAULT, sd_register(self->c, SMBDIRECT_ACCESS_PEER_WRITE, &iov, 1, d, &n, NULL));
	n = 4;
	EXPECT_EQ(-EFAULT, sd_register(self->c, SMBDIRECT_ACCESS_PEER_WRITE |
				       SMBDIRECT_ACCESS_PEER_READ, &iov, 1, d, &n, NULL));
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	n = 4;
	ret = sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, &iov, 1, d, &n, &id);
	ASSERT_EQ(0, ret) TH_LOG("PEER_READ of read-only memory: %s", strerror(-ret));
	EXPECT_EQ(pin0 + 8, sd_vm_pin_kb(getpid()));
	EXPECT_EQ(0, sd_deregister(self->c, id, NULL));
	expect_alive(_metadata, self->c, self->s, NULL);
}

/* max_registrations live ones, then ENOBUFS; one freed makes room again. */
TEST_F_TIMEOUT(abuse, too_many_registrations_enobufs, 180)
{
	long cap = sd_module_param("max_registrations"), pin0 = sd_vm_pin_kb(getpid()), i;
	struct smbdirect_buffer_descriptor_v1 d[4];
	__u64 *ids, extra;
	char *buf;
	__u32 n;
	int ret;

	ASSERT_LT(0, cap) TH_LOG("max_registrations: %s", strerror(-cap));
	ASSERT_GE(16384, cap) TH_LOG("max_registrations %ld: too many to try", cap);
	ids = calloc(cap, sizeof(*ids));
	buf = map_rw((cap + 1) * PAGE);
	ASSERT_NE(NULL, ids);
	ASSERT_NE(NULL, buf);
	PAIR(SOCK_SEQPACKET);
	for (i = 0; i < cap; i++) {
		ret = sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_READ, buf + i * PAGE, 1, d, 4,
				      &n, &ids[i]);
		ASSERT_EQ(0, ret) TH_LOG("registration %ld of %ld: %s", i + 1, cap, strerror(-ret));
	}
	EXPECT_EQ(pin0 + cap * 4, sd_vm_pin_kb(getpid()));
	ret = sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_READ, buf + cap * PAGE, 1, d, 4,
			      &n, &extra);
	EXPECT_EQ(-ENOBUFS, ret) TH_LOG("registration %ld: %s", cap + 1, strerror(-ret));
	EXPECT_EQ(pin0 + cap * 4, sd_vm_pin_kb(getpid()));
	EXPECT_EQ(0, sd_deregister(self->c, ids[cap / 2], NULL));
	ret = sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_READ, buf + cap * PAGE, 1, d, 4,
			      &n, &ids[cap / 2]);
	EXPECT_EQ(0, ret) TH_LOG("after one DEREGISTER: %s", strerror(-ret));
	for (i = 0; i < cap; i++)
		EXPECT_EQ(0, sd_deregister(self->c, ids[i], NULL)) TH_LOG("registration %ld", i);
	EXPECT_EQ(pin0, sd_vm_pin_kb(getpid()));
	free(ids);
}

TEST_F(abuse, deregister_unknown_id_enoent)
{
	static const __u64 ids[4] = { 0, 1, 0x7fffffff, ~0ULL };
	struct reg r;
	__u32 state;
	int i;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, PAGE, 3));
	for (i = 0; i < 4; i++)
		if (ids[i] != r.id)
			EXPECT_EQ(-ENOENT, sd_deregister(self->c, ids[i], NULL))
				TH_LOG("id %#llx", (unsigned long long)ids[i]);
	/* Ids belong to the socket: the peer's socket does not hold A's. */
	EXPECT_EQ(-ENOENT, sd_deregister(self->s, r.id, NULL));
	EXPECT_EQ(0, sd_deregister(self->c, r.id, &state));
	EXPECT_EQ(0U, state);
	EXPECT_EQ(-ENOENT, sd_deregister(self->c, r.id, NULL));
	expect_alive(_metadata, self->c, self->s, NULL);
}

/* Bad pointers in READV/WRITEV: EFAULT, nothing moved, connection intact. */
TEST_F(abuse, rdma_bad_pointers_efault)
{
	struct reg r;
	struct iovec iov, bad_iov = { NULL, PAGE };
	char *rw = map_rw(PAGE);
	__u64 bytes;
	int k;

	ASSERT_NE(NULL, rw);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, PAGE, 4));
	bad_iov.iov_base = self->noaccess;
	iov = (struct iovec){ rw, PAGE };
	for (k = 0; k < 2; k++) {
		unsigned long cmd = k ? SMBDIRECT_IOC_RDMA_WRITEV : SMBDIRECT_IOC_RDMA_READV;
		const char *name = k ? "WRITEV" : "READV";

		EXPECT_EQ(-EFAULT, sd_rdma(self->s, cmd, (struct iovec *)self->noaccess, 1, &r.d, 1,
					   &bytes)) TH_LOG("%s: iov array", name);
		EXPECT_EQ(-EFAULT,
			  sd_rdma(self->s, cmd, &iov, 1, (void *)self->noaccess, 1, &bytes))
			TH_LOG("%s: desc array", name);
		EXPECT_EQ(-EFAULT, sd_rdma(self->s, cmd, &bad_iov, 1, &r.d, 1, &bytes))
			TH_LOG("%s: unmapped iov_base", name);
	}
	EXPECT_EQ(-1, sd_check(r.buf, PAGE, 4)) TH_LOG("A's memory changed");
	expect_alive(_metadata, self->c, self->s, &r);
	EXPECT_EQ(0, sd_deregister(self->c, r.id, NULL));
}

/* READV into read-only local memory is EFAULT (WRITEV from it is fine). */
TEST_F(abuse, readv_into_readonly_memory_efault)
{
	char *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec iov = { ro, PAGE };
	struct reg r;
	__u64 bytes;
	int ret;

	ASSERT_NE(MAP_FAILED, ro);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, PAGE, 5));
	ret = sd_rdma(self->s, SMBDIRECT_IOC_RDMA_READV, &iov, 1, &r.d, 1, &bytes);
	EXPECT_EQ(-EFAULT, ret) TH_LOG("READV into PROT_READ: %s", ret ? strerror(-ret) : "ok");
	EXPECT_EQ(0, sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, &r.d, 1, &bytes));
	EXPECT_EQ(PAGE, bytes);
	EXPECT_EQ(0, r.buf[0]) TH_LOG("WRITEV of a zero page");
	expect_alive(_metadata, self->c, self->s, &r);
	EXPECT_EQ(0, sd_deregister(self->c, r.id, NULL));
}

/* No local bytes, no descriptors: EINVAL; A's memory untouched. */
TEST_F(abuse, rdma_empty_lists_einval)
{
	char *buf = map_rw(PAGE);
	struct iovec iov = { buf, PAGE }, zero[2] = { { buf, 0 }, { NULL, 0 } };
	struct reg r;
	int k, ret;

	ASSERT_NE(NULL, buf);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, PAGE, 6));
	for (k = 0; k < 2; k++) {
		unsigned long cmd = k ? SMBDIRECT_IOC_RDMA_WRITEV : SMBDIRECT_IOC_RDMA_READV;
		const char *name = k ? "WRITEV" : "READV";

		EXPECT_EQ(-EINVAL, sd_rdma(self->s, cmd, &iov, 0, &r.d, 1, NULL))
			TH_LOG("%s: iov_count 0", name);
		EXPECT_EQ(-EINVAL, sd_rdma(self->s, cmd, zero, 2, &r.d, 1, NULL))
			TH_LOG("%s: zero-length segments only", name);
		/* Not spelled out in the header: no descriptors is a malformed list. */
		ret = sd_rdma(self->s, cmd, &iov, 1, &r.d, 0, NULL);
		EXPECT_EQ(-EINVAL, ret) TH_LOG("%s: desc_count 0: %s", name,
					       ret ? strerror(-ret) : "ok");
	}
	EXPECT_EQ(-1, sd_check(r.buf, PAGE, 6));
	expect_alive(_metadata, self->c, self->s, &r);
}

/*
 * A bad descriptor anywhere in the list (length 0, or offset + length
 * wrapping 64 bits) refuses the whole call before any RDMA: the valid
 * descriptor ahead of it is not written.
 */
TEST_F(abuse, rdma_bad_descriptor_einval)
{
	struct smbdirect_buffer_descriptor_v1 d2[2];
	char *src = map_rw(2 * PAGE);
	struct iovec iov = { src, 2 * PAGE };
	struct reg r;
	int k, bad;

	ASSERT_NE(NULL, src);
	sd_fill(src, 2 * PAGE, 66);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, 2 * PAGE, 7));
	for (bad = 0; bad < 3; bad++) {
		d2[0] = r.d;
		d2[0].length = htole32(PAGE);
		d2[1] = r.d;
		if (bad == 0) {
			d2[1].length = 0;
		} else if (bad == 1) {
			d2[1].offset = htole64(~0ULL - 100);
			d2[1].length = htole32(PAGE);
		} else {
			d2[1].offset = htole64(~0ULL);
			d2[1].length = htole32(1);
		}
		for (k = 0; k < 2; k++) {
			unsigned long cmd = k ? SMBDIRECT_IOC_RDMA_WRITEV :
						SMBDIRECT_IOC_RDMA_READV;
			int ret = sd_rdma(self->s, cmd, &iov, 1, d2, 2, NULL);

			EXPECT_EQ(-EINVAL, ret) TH_LOG("%s, %s: %s", k ? "WRITEV" : "READV",
						       bad == 0 ? "length 0" : bad == 1 ?
						       "offset+length wraps" : "offset ~0 + 1",
						       ret ? strerror(-ret) : "ok");
		}
		EXPECT_EQ(-1, sd_check(r.buf, 2 * PAGE, 7)) TH_LOG("case %d: A written", bad);
	}
	expect_alive(_metadata, self->c, self->s, &r);
}

/*
 * More than SMBDIRECT_IOV_MAX local segments or SMBDIRECT_DESC_MAX
 * descriptors, or more than max_read_write_size bytes to move (local and
 * descriptor bytes both above it): EMSGSIZE, nothing moved.
 */
TEST_F(abuse, rdma_too_much_emsgsize)
{
	struct smbdirect_buffer_descriptor_v1 *dm = calloc(SMBDIRECT_DESC_MAX + 1, sizeof(*dm));
	struct iovec *im = calloc(SMBDIRECT_IOV_MAX + 1, sizeof(*im)), big;
	struct smbdirect_params p;
	struct reg r;
	char *buf = NULL;
	size_t max;
	int i, k, ret;

	ASSERT_NE(NULL, dm);
	ASSERT_NE(NULL, im);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, sd_get_params(self->s, &p));
	max = p.max_read_write_size;
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, 2 * PAGE, 8));
	buf = mmap(NULL, max + PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	for (i = 0; i <= SMBDIRECT_IOV_MAX; i++)
		im[i] = (struct iovec){ buf + i, 1 };
	for (i = 0; i <= SMBDIRECT_DESC_MAX; i++) {
		dm[i] = r.d;
		dm[i].offset = htole64(le64toh(r.d.offset) + i);
		dm[i].length = htole32(1);
	}
	big = (struct iovec){ buf, max + PAGE };
	for (k = 0; k < 2; k++) {
		unsigned long cmd = k ? SMBDIRECT_IOC_RDMA_WRITEV : SMBDIRECT_IOC_RDMA_READV;
		const char *name = k ? "WRITEV" : "READV";

		ret = sd_rdma(self->s, cmd, im, SMBDIRECT_IOV_MAX + 1, &r.d, 1, NULL);
		EXPECT_EQ(-EMSGSIZE, ret) TH_LOG("%s: %d segments: %s", name,
						 SMBDIRECT_IOV_MAX + 1, strerror(-ret));
		ret = sd_rdma(self->s, cmd, im, SMBDIRECT_IOV_MAX + 1, dm,
			      SMBDIRECT_DESC_MAX + 1, NULL);
		EXPECT_EQ(-EMSGSIZE, ret) TH_LOG("%s: %d descriptors: %s", name,
						 SMBDIRECT_DESC_MAX + 1, strerror(-ret));
		/* Descriptors (fabricated around A's token) add up to max + PAGE. */
		dm[0] = r.d;
		dm[0].length = htole32(max);
		dm[1] = r.d;
		dm[1].length = htole32(PAGE);
		ret = sd_rdma(self->s, cmd, &big, 1, dm, 2, NULL);
		EXPECT_EQ(-EMSGSIZE, ret) TH_LOG("%s: %zu bytes, max_read_write_size %zu: %s", name,
						 max + PAGE, max, strerror(-ret));
		for (i = 0; i < 2; i++) {
			dm[i].offset = htole64(le64toh(r.d.offset) + i);
			dm[i].length = htole32(1);
		}
	}
	EXPECT_EQ(-1, sd_check(r.buf, 2 * PAGE, 8)) TH_LOG("A written");
	expect_alive(_metadata, self->c, self->s, &r);
	munmap(buf, max + PAGE);
	free(dm);
	free(im);
}

/*
 * Local segment lengths whose sum wraps 64 bits (to exactly one page): a
 * malformed list (EINVAL, like readv(2)) or too much (EMSGSIZE); the
 * header does not say which. What must not happen is a transfer.
 */
TEST_F(abuse, rdma_overflowing_iov_sum)
{
	char *buf = map_rw(2 * PAGE);
	struct iovec iov[3] = {
		{ buf, SIZE_MAX / 2 }, { buf, SIZE_MAX / 2 }, { buf, PAGE + 2 },
	};
	struct reg r;
	__u64 bytes = 0;
	int k, ret;

	ASSERT_NE(NULL, buf);
	sd_fill(buf, 2 * PAGE, 67);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, PAGE, 9));
	for (k = 0; k < 2; k++) {
		ret = sd_rdma(self->s, k ? SMBDIRECT_IOC_RDMA_WRITEV : SMBDIRECT_IOC_RDMA_READV,
			      iov, 3, &r.d, 1, &bytes);
		EXPECT_TRUE(ret == -EINVAL || ret == -EMSGSIZE)
			TH_LOG("%s: %s (bytes %llu)", k ? "WRITEV" : "READV",
			       ret ? strerror(-ret) : "moved data", (unsigned long long)bytes);
	}
	EXPECT_EQ(-1, sd_check(r.buf, PAGE, 9));
	EXPECT_EQ(-1, sd_check(buf, 2 * PAGE, 67));
	expect_alive(_metadata, self->c, self->s, &r);
}

/* A socket that never connected, one that is bound, one that listens. */
TEST_F(abuse, unconnected_and_listening_enotconn)
{
	struct smbdirect_buffer_descriptor_v1 d[4] = {
		{ .offset = htole64(0x10000), .token = htole32(0x1234), .length = htole32(16) },
	};
	char *buf = map_rw(PAGE);
	struct iovec iov = { buf, PAGE };
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(&variant->t, 0, &ss);
	int fds[3], port = 0, i;
	__u32 n;

	ASSERT_NE(NULL, buf);
	fds[0] = sd_socket(SOCK_SEQPACKET);
	fds[1] = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, fds[0]);
	ASSERT_LE(0, fds[1]);
	ASSERT_EQ(0, bind(fds[1], (struct sockaddr *)&ss, len));
	fds[2] = sd_listen_type(&variant->t, SOCK_SEQPACKET, 2, &port);
	ASSERT_LE(0, fds[2]) TH_LOG("listen: %s", strerror(-fds[2]));
	for (i = 0; i < 3; i++) {
		const char *what = i == 0 ? "new" : i == 1 ? "bound" : "listening";

		n = 4;
		EXPECT_EQ(-ENOTCONN, sd_register(fds[i], SMBDIRECT_ACCESS_PEER_READ, &iov, 1, d, &n,
						 NULL)) TH_LOG("REGISTER on a %s socket", what);
		EXPECT_EQ(-ENOTCONN, sd_deregister(fds[i], 1, NULL))
			TH_LOG("DEREGISTER on a %s socket", what);
		EXPECT_EQ(-ENOTCONN, sd_rdma(fds[i], SMBDIRECT_IOC_RDMA_READV, &iov, 1, d, 1, NULL))
			TH_LOG("READV on a %s socket", what);
		EXPECT_EQ(-ENOTCONN,
			  sd_rdma(fds[i], SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, d, 1, NULL))
			TH_LOG("WRITEV on a %s socket", what);
		close(fds[i]);
	}
}

/*
 * After the peer's orderly close, REGISTER, READV and WRITEV report the
 * end of the connection: EPIPE, as send does. DEREGISTER still works, so
 * the pins go without closing the socket.
 */
TEST_F(abuse, after_peer_close_epipe)
{
	long pin0 = sd_vm_pin_kb(getpid()), pin;
	struct reg r, r2;
	struct iovec iov;
	__u32 n = 1;
	char c;
	int ret;

	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_make(self->c, &r, PAGE, 10));
	r2.buf = map_rw(PAGE);
	ASSERT_NE(NULL, r2.buf);
	close(self->s);
	self->s = -1;
	ASSERT_EQ(0, recv(self->c, &c, 1, 0)) TH_LOG("no EOF: %s", strerror(errno));
	iov = (struct iovec){ r2.buf, PAGE };
	ret = sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, &iov, 1, &r2.d, &n, &r2.id);
	EXPECT_EQ(-EPIPE, ret) TH_LOG("REGISTER: %s", ret ? strerror(-ret) : "ok");
	ret = sd_rdma(self->c, SMBDIRECT_IOC_RDMA_READV, &iov, 1, &r.d, 1, NULL);
	EXPECT_EQ(-EPIPE, ret) TH_LOG("READV: %s", ret ? strerror(-ret) : "ok");
	ret = sd_rdma(self->c, SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, &r.d, 1, NULL);
	EXPECT_EQ(-EPIPE, ret) TH_LOG("WRITEV: %s", ret ? strerror(-ret) : "ok");
	EXPECT_EQ(pin0 + 4, sd_vm_pin_kb(getpid()));
	ret = sd_deregister(self->c, r.id, NULL);
	EXPECT_EQ(0, ret) TH_LOG("DEREGISTER: %s", strerror(-ret));
	pin = sd_vm_pin_kb(getpid());
	EXPECT_EQ(pin0, pin) TH_LOG("VmPin after DEREGISTER on the ended connection");
	EXPECT_EQ(-ENOENT, sd_deregister(self->c, r.id, NULL));
}

/* sendmsg with one control message (or two) of the given shapes. */
static int send_cmsgs(int fd, const int (*shape)[3], int count)
{
	union {
		struct cmsghdr h;
		char buf[4 * CMSG_SPACE(8)];
	} ctl;
	struct iovec iov = { "request", 7 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf };
	struct cmsghdr *c;
	size_t used = 0;
	int i, fd0 = 0;

	memset(&ctl, 0, sizeof(ctl));
	mh.msg_controllen = sizeof(ctl.buf);
	c = CMSG_FIRSTHDR(&mh);
	for (i = 0; i < count; i++) {
		/* shape: level, type, data length */
		c->cmsg_level = shape[i][0];
		c->cmsg_type = shape[i][1];
		c->cmsg_len = CMSG_LEN(shape[i][2]);
		if (shape[i][0] == SOL_SOCKET && shape[i][1] == SCM_RIGHTS)
			memcpy(CMSG_DATA(c), &fd0, sizeof(fd0));
		else
			memset(CMSG_DATA(c), 0x11, shape[i][2]);
		used += CMSG_SPACE(shape[i][2]);
		c = (struct cmsghdr *)((char *)c + CMSG_SPACE(shape[i][2]));
	}
	mh.msg_controllen = used;
	return sendmsg(fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/*
 * Malformed SMBDIRECT_CMSG_SEND_INVALIDATE, or any other control message:
 * EINVAL, and nothing of the message is taken (the peer's next message is
 * the one sent afterwards). Checked on both socket types.
 */
TEST_F(abuse, cmsg_errors_einval)
{
	static const int shapes[][2][3] = {
		{ { SOL_SMBDIRECT, SMBDIRECT_CMSG_SEND_INVALIDATE, 8 } },
		{ { SOL_SMBDIRECT, SMBDIRECT_CMSG_SEND_INVALIDATE, 2 } },
		{ { SOL_SMBDIRECT, SMBDIRECT_CMSG_SEND_INVALIDATE, 0 } },
		{ { SOL_SMBDIRECT, 2, 4 } },
		{ { SOL_SMBDIRECT, 0, 4 } },
		{ { SOL_SOCKET, SCM_RIGHTS, 4 } },
		{ { SOL_SMBDIRECT, SMBDIRECT_CMSG_SEND_INVALIDATE, 4 },
		  { SOL_SMBDIRECT, SMBDIRECT_CMSG_SEND_INVALIDATE, 4 } },
	};
	static const char *const names[] = {
		"length 8", "length 2", "length 0", "type 2", "type 0", "SCM_RIGHTS", "two tokens",
	};
	unsigned int i;
	char got[16];
	int type, ret;
	long n;

	for (type = SOCK_SEQPACKET; type; type = type == SOCK_SEQPACKET ? SOCK_STREAM : 0) {
		PAIR(type);
		for (i = 0; i < ARRAY_SIZE(shapes); i++) {
			if (type == SOCK_STREAM && i != 0 && i != 3 && i != 6)
				continue;
			ret = send_cmsgs(self->s, shapes[i], i == 6 ? 2 : 1);
			EXPECT_EQ(-EINVAL, ret) TH_LOG("%s: %s", names[i],
						       ret ? strerror(-ret) : "sent");
		}
		ASSERT_EQ(0, sd_msg_send(self->s, type, "after", 5));
		n = sd_msg_recv(self->c, type, got, sizeof(got));
		EXPECT_EQ(5, n) TH_LOG("%s: the first message A reads",
				       type == SOCK_STREAM ? "STREAM" : "SEQPACKET");
		EXPECT_EQ(0, memcmp(got, "after", 5));
		EXPECT_EQ(0, sd_poll(self->c, POLLIN, 100)) TH_LOG("more arrived");
		close(self->c);
		close(self->s);
		self->c = -1;
	self->s = -1;
	}
}

/*
 * RLIMIT_MEMLOCK applies to a caller without CAP_IPC_LOCK: a child
 * (connected as root) lowers it to 64 KiB and becomes nobody. Exit codes
 * say which step went wrong.
 */
static int memlock_child(int fd)
{
	rlim_t limit = 65536;
	struct smbdirect_buffer_descriptor_v1 d[4];
	char *buf = map_rw(2 * 1024 * 1024);
	__u64 id16, id48, id;
	__u32 n;
	int ret;

	if (!buf)
		return 2;
	if (sd_become_nobody(limit))
		return 3;
	ret = sd_register_buf(fd, SMBDIRECT_ACCESS_PEER_WRITE, buf, 1024 * 1024, d, 4, &n, &id);
	if (ret != -ENOMEM) {
		fprintf(stderr, "# 1 MiB over a 64 KiB limit: %s\n", ret ? strerror(-ret) : "ok");
		return 10;
	}
	if (sd_vm_pin_kb(getpid()) != 0)
		return 11;
	ret = sd_register_buf(fd, SMBDIRECT_ACCESS_PEER_WRITE, buf, 16384, d, 4, &n, &id16);
	if (ret) {
		fprintf(stderr, "# 16 KiB under a 64 KiB limit: %s\n", strerror(-ret));
		return 12;
	}
	if (sd_vm_pin_kb(getpid()) != 16)
		return 13;
	ret = sd_register_buf(fd, SMBDIRECT_ACCESS_PEER_WRITE, buf + 65536, 65536, d, 4, &n, &id);
	if (ret != -ENOMEM) {
		fprintf(stderr, "# 16 + 64 KiB: %s\n", ret ? strerror(-ret) : "ok");
		return 14;
	}
	/* Up to the limit exactly is allowed. */
	ret = sd_register_buf(fd, SMBDIRECT_ACCESS_PEER_WRITE, buf + 65536, 49152, d, 4, &n, &id48);
	if (ret) {
		fprintf(stderr, "# 16 + 48 KiB, exactly the limit: %s\n", strerror(-ret));
		return 15;
	}
	if (sd_vm_pin_kb(getpid()) != 64)
		return 16;
	if (sd_deregister(fd, id16, NULL) || sd_deregister(fd, id48, NULL))
		return 17;
	if (sd_vm_pin_kb(getpid()) != 0)
		return 18;
	ret = sd_register_buf(fd, SMBDIRECT_ACCESS_PEER_WRITE, buf, 1024 * 1024, d, 4, &n, &id);
	if (ret != -ENOMEM)
		return 19;
	return 0;
}

TEST_F(abuse, rlimit_memlock_unprivileged)
{
	int status = -1;

	PAIR(SOCK_SEQPACKET);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0)
		_exit(memlock_child(self->c));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child died: status %#x", status);
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("step %d failed (%s %s %s)", WEXITSTATUS(status),
		       "10: 1 MiB not ENOMEM, 11/13/16/18: VmPin, 12: 16 KiB refused,",
		       "14: 80 KiB not ENOMEM, 15: 64 KiB refused, 17: DEREGISTER,",
		       "19: 1 MiB not ENOMEM again");
	expect_alive(_metadata, self->c, self->s, NULL);
}

/*
 * The limit is per user, not per process: a registration lives on the
 * socket, so a child that registers and exits without DEREGISTER leaves
 * the pages pinned for the parent's fd. With a per-process charge every
 * new child could pin up to its limit again. Eight children of one user
 * (nobody) with a 1 MiB limit each try 1 MiB on the parent's socket: only
 * the first succeeds. Exit codes: 0 registered, 1 ENOMEM, others: a step
 * failed.
 */
static int pin_child(int fd)
{
	rlim_t limit = 1024 * 1024;
	struct smbdirect_buffer_descriptor_v1 d[4];
	char *buf = map_rw(1024 * 1024);
	__u64 id;
	__u32 n;
	int ret;

	if (!buf)
		return 2;
	if (sd_become_nobody(limit))
		return 3;
	ret = sd_register_buf(fd, SMBDIRECT_ACCESS_PEER_WRITE, buf, 1024 * 1024, d, 4, &n, &id);
	if (ret && ret != -ENOMEM) {
		fprintf(stderr, "# REGISTER of 1 MiB: %s\n", strerror(-ret));
		return 4;
	}
	return ret ? 1 : 0;
}

static int run_pin_child(int fd)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0)
		_exit(pin_child(fd));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F(abuse, rlimit_memlock_per_user_across_children)
{
	int i, ret, registered = 0, refused = 0;

	PAIR(SOCK_SEQPACKET);
	for (i = 0; i < 8; i++) {
		ret = run_pin_child(self->c);
		ASSERT_TRUE(ret == 0 || ret == 1) TH_LOG("child %d: step %d failed", i, ret);
		registered += ret == 0;
		refused += ret == 1;
	}
	EXPECT_EQ(1, registered)
		TH_LOG("1 MiB registrations left pinned by 8 children of a user limited to 1 MiB");
	EXPECT_EQ(7, refused);
	expect_alive(_metadata, self->c, self->s, NULL);
	/* Closing the socket unpins and uncharges: nobody may pin 1 MiB again. */
	close(self->c);
	close(self->s);
	self->c = -1;
	self->s = -1;
	PAIR(SOCK_SEQPACKET);
	EXPECT_EQ(0, run_pin_child(self->c))
		TH_LOG("1 MiB after the socket holding the first was closed");
}

#if UINTPTR_MAX == 0xffffffffU
/*
 * A 32-bit caller only: a segment that runs past the end of its 4 GiB
 * address space (pointer + length wraps 32 bits) is EFAULT, as one that
 * wraps 64 bits is for a 64-bit caller, even where only its mapped start
 * would be moved; a REGISTER that long may be EMSGSIZE first. Nothing is
 * pinned or moved and the connection stays usable.
 */
TEST_F(abuse, segment_wraps_32_bits_efault)
{
	struct smbdirect_buffer_descriptor_v1 d[4];
	long pin0 = sd_vm_pin_kb(getpid());
	char *buf = map_rw(2 * PAGE);
	struct iovec iov;
	struct reg r;
	__u64 bytes = 0;
	__u32 n = 4;
	int k, ret, want;

	ASSERT_NE(NULL, buf);
	sd_fill(buf, 2 * PAGE, 68);
	iov = (struct iovec){ buf, (size_t)0 - (uintptr_t)buf + PAGE };
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, reg_offer(self->c, self->s, &r, PAGE, 11));
	want = iov.iov_len > SMBDIRECT_REG_MAX_BYTES ? -EMSGSIZE : -EFAULT;
	ret = sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, &iov, 1, d, &n, NULL);
	EXPECT_EQ(want, ret) TH_LOG("REGISTER of %p + %zu: %s", (void *)buf, iov.iov_len,
				    ret ? strerror(-ret) : "registered");
	for (k = 0; k < 2; k++) {
		ret = sd_rdma(self->s, k ? SMBDIRECT_IOC_RDMA_WRITEV : SMBDIRECT_IOC_RDMA_READV,
			      &iov, 1, &r.d, 1, &bytes);
		EXPECT_EQ(-EFAULT, ret) TH_LOG("%s: %s (bytes %llu)", k ? "WRITEV" : "READV",
					       ret ? strerror(-ret) : "moved data",
					       (unsigned long long)bytes);
	}
	EXPECT_EQ(-1, sd_check(r.buf, PAGE, 11));
	EXPECT_EQ(-1, sd_check(buf, 2 * PAGE, 68));
	EXPECT_EQ(pin0 + 4, sd_vm_pin_kb(getpid()));
	expect_alive(_metadata, self->c, self->s, &r);
	EXPECT_EQ(0, sd_deregister(self->c, r.id, NULL));
}
#endif

TEST_HARNESS_MAIN
