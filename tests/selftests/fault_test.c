// SPDX-License-Identifier: GPL-2.0
/*
 * Systematic fault injection (issue #45): every UAPI entry point is
 * called with its 1st, 2nd, 3rd, ... fault point failing, until a call
 * runs without reaching the armed one. A fault point is any allocation of
 * the calling task (failslab, fail_page_alloc, order 0 included) and any
 * copy from or to user memory (fail_usercopy): the kernel's
 * /proc/thread-self/fail-nth, with the debugfs knobs set so that
 * GFP_KERNEL allocations may fail too. Each injected fault must end in a
 * clean error (ENOMEM, ENOBUFS, EFAULT) or be absorbed (the call
 * succeeds), and afterwards the socket is usable (the same call without a
 * fault succeeds, and the data it moves is exact) or cleanly dead; nothing
 * is lost (a message, a completion, a connection waiting in the accept
 * queue, a registration) and nothing stays behind (sockets, pinned pages,
 * file descriptors; kmemleak and KASAN judge the rest at the end of the
 * boot). Each sweep prints how many fault points it tried.
 *
 * The remote side: the receive path's allocations (in the completion
 * handler, not in any system call) fail while a peer streams, through
 * failslab and fail_page_alloc restricted by their stack-trace filter to
 * the module's text.
 *
 * Needs a kernel with CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC,
 * FAULT_INJECTION_USERCOPY, FAULT_INJECTION_DEBUG_FS and
 * FAULT_INJECTION_STACKTRACE_FILTER (tests/vm/kernel-light.config: the
 * 7.2 boots); skips elsewhere.
 */
#include <fcntl.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "kselftest_harness.h"
#include "sd_test.h"
#include "sd_genl_test.h"

#define DBG "/sys/kernel/debug/"
#define FAILSLAB DBG "failslab/"
#define FAILPAGE DBG "fail_page_alloc/"
#define FAILCOPY DBG "fail_usercopy/"
/* No call of ours reaches this many fault points: a sweep that does hangs. */
#define SWEEP_MAX 4000u
#define MSG_BYTES 3000		/* over max_send_size: three PDUs */
#define XFER_BYTES 16384
#define MAXD 16

/* ---- fail-nth -------------------------------------------------------- */

struct tally {
	unsigned int points;	/* fault points injected */
	unsigned int errors;	/* ... that the call reported */
	unsigned int absorbed;	/* ... after which the call succeeded */
};

static int nth_fd = -1;		/* /proc/thread-self/fail-nth of the test's thread */

/* Arms the nth fault point of this thread's next calls. */
static int arm(unsigned int n)
{
	char b[16];
	int l = snprintf(b, sizeof(b), "%u", n);

	return pwrite(nth_fd, b, l, 0) == l ? 0 : -errno;
}

/*
 * Whether the armed fault was injected, and disarms. The read reports the
 * count left before its own copy to user memory, which is a fault point
 * too: a read that fails with EFAULT took the last step itself, so the
 * call did not reach it. The write of 0 may take the last step as well;
 * the count is 0 afterwards either way.
 */
static int injected(void)
{
	char b[16];
	ssize_t n = pread(nth_fd, b, sizeof(b) - 1, 0);
	int hit = 0;

	if (n > 0) {
		b[n] = 0;
		hit = atoi(b) == 0;
	}
	if (pwrite(nth_fd, "0", 1, 0) != 1 && errno != EFAULT)
		hit = -errno;
	return hit;
}

/*
 * ENFILE: the VFS's answer when it cannot allocate a struct file (a new
 * socket's, socket() and accept()). EADDRINUSE: TCP's when it cannot
 * allocate a bind bucket (inet_csk_get_port()), which siw's listen()
 * meets binding its kernel TCP socket; the retry without a fault shows
 * the port was not held.
 */
static bool clean_errno(long ret)
{
	return ret == -ENOMEM || ret == -ENOBUFS || ret == -EFAULT || ret == -ENFILE ||
	       ret == -EADDRINUSE;
}

/*
 * Judges one call: without the fault it must have succeeded; with it, it
 * succeeded (absorbed) or failed cleanly. Prints why not.
 */
static bool judge(struct tally *t, const char *what, unsigned int n, int hit, long ret)
{
	if (hit < 0) {
		ksft_print_msg("%s: fail-nth: %s\n", what, strerror(-hit));
		return false;
	}
	if (!hit) {
		if (ret < 0)
			ksft_print_msg("%s: failed without a fault (point %u not reached): %s\n",
				       what, n, strerror(-ret));
		return ret >= 0;
	}
	t->points++;
	if (ret >= 0) {
		t->absorbed++;
		return true;
	}
	t->errors++;
	if (clean_errno(ret))
		return true;
	ksft_print_msg("%s: fault point %u gave %s, not a clean error\n", what, n, strerror(-ret));
	return false;
}

static void report(const struct tally *t, const char *what)
{
	ksft_print_msg("%s: %u fault points: %u failed cleanly, %u absorbed\n",
		       what, t->points, t->errors, t->absorbed);
}

static int write_dbg(const char *path, const char *v)
{
	return sd_write_str(path, v);
}

/*
 * The module's text as the stack-trace filter wants it: the lowest and
 * past the highest text symbol of af_smbdirect in /proc/kallsyms.
 */
static int module_text(unsigned long *lo, unsigned long *hi)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], type, name[256], mod[64];
	unsigned long a;

	*lo = ~0UL;
	*hi = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %255s [%63[^]]]", &a, &type, name, mod) != 4)
			continue;
		if (strcmp(mod, "af_smbdirect") || (type != 't' && type != 'T'))
			continue;
		if (a < *lo)
			*lo = a;
		if (a > *hi)
			*hi = a;
	}
	fclose(f);
	if (!*hi || *lo == ~0UL)
		return -ENOENT;
	*hi += 65536;	/* past the last function's end */
	return 0;
}

/* The knobs every case starts from: fail-nth only, anything may fail. */
static int faults_reset(void)
{
	static const char *const both[] = { FAILSLAB, FAILPAGE };
	/* SD_FAULT_VERBOSE=2: a stack trace of every fault injected (dmesg). */
	const char *verbose = getenv("SD_FAULT_VERBOSE") ?: "0";
	char p[128];
	unsigned int i;
	int ret = 0;

	for (i = 0; i < 2; i++) {
#define SET(file, v) do {						\
		snprintf(p, sizeof(p), "%s%s", both[i], file);		\
		ret = ret ?: write_dbg(p, v);				\
	} while (0)
		SET("probability", "0");
		SET("times", "1");
		SET("space", "0");
		SET("verbose", verbose);
		SET("task-filter", "N");
		SET("ignore-gfp-wait", "N");
		SET("require-start", "0");
		SET("require-end", "18446744073709551615");
#undef SET
	}
	/*
	 * Order 0 too; not user pages (highmem-capable), whose failure
	 * would kill the test in a page fault, not fail a call.
	 */
	ret = ret ?: write_dbg(FAILPAGE "min-order", "0");
	ret = ret ?: write_dbg(FAILPAGE "ignore-gfp-highmem", "Y");
	ret = ret ?: write_dbg(FAILCOPY "verbose", verbose);
	return ret;
}

/* Sockets of this namespace alive now (the module's gauge), or -1. */
static long sockets_alive(void)
{
	__u64 v = 0;

	return sd_stats_get(SMBDIRECT_A_STATS_SOCKETS, &v) ? -1 : (long)v;
}

/*
 * Waits up to ms for the gauge to be at most want (an earlier test's
 * socket still draining in the background may go meanwhile); the last
 * value seen.
 */
static long sockets_back_to(long want, int ms)
{
	long end = sd_now_ms() + ms, v;

	for (;;) {
		v = sockets_alive();
		if ((v >= 0 && v <= want) || sd_now_ms() >= end)
			return v;
		sd_sleep_ms(100);
	}
}

static int fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* ---- the fixture ----------------------------------------------------- */

FIXTURE(fault) {
	int c, s;		/* a SOCK_SEQPACKET pair, where a case makes one */
	long sockets0, pin0;
	int fds0;
	int dom_stream, proto_stream, fam;
	struct tally t;
};

SD_TARGET_VARIANT(fault);
SD_ADD_TARGET_VARIANTS(fault);

FIXTURE_SETUP(fault)
{
	self->c = self->s = -1;
	memset(&self->t, 0, sizeof(self->t));
	if (access("/proc/thread-self/fail-nth", F_OK) || access(FAILSLAB, F_OK) ||
	    access(FAILPAGE, F_OK) || access(FAILCOPY, F_OK))
		SKIP(return, "no fault injection in this kernel (fail-nth, failslab, "
		     "fail_page_alloc, fail_usercopy)");
	SD_SETUP_TARGET();
	ASSERT_EQ(0, faults_reset());
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nth_fd);
	self->fam = sd_family();
	if (variant->t.inet) {
		self->dom_stream = variant->t.af;
		self->proto_stream = sd_inet_protocol();
	} else {
		self->dom_stream = self->fam;
		self->proto_stream = 0;
	}
	self->sockets0 = sockets_alive();
	ASSERT_LE(0, self->sockets0);
	self->pin0 = sd_vm_pin_kb(getpid());
	self->fds0 = fds_open();
}

FIXTURE_TEARDOWN(fault)
{
	sd_teardown_pair(self->c, self->s, 0);
	if (nth_fd >= 0) {
		injected();
		close(nth_fd);
	}
	faults_reset();
}

/*
 * What every case ends with: the sockets it made are gone, nothing of
 * this process stays pinned, no descriptor leaked; and a new connection
 * moves a message exactly.
 */
static void leave_clean(struct __test_metadata *_metadata, FIXTURE_DATA(fault) *self,
			const FIXTURE_VARIANT(fault) *variant)
{
	char out[64], in[64];
	long n;

	sd_teardown_pair(self->c, self->s, 0);
	self->c = self->s = -1;
	EXPECT_GE(self->sockets0, sockets_back_to(self->sockets0, 15000))
		TH_LOG("sockets left behind");
	EXPECT_EQ(self->pin0, sd_wait_vm_pin_kb(getpid(), self->pin0, 10000))
		TH_LOG("pages left pinned");
	EXPECT_EQ(self->fds0, fds_open());
	PAIR(SOCK_SEQPACKET);
	sd_fill(out, sizeof(out), 77);
	ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, out, sizeof(out)));
	n = sd_msg_recv(self->s, SOCK_SEQPACKET, in, sizeof(in));
	ASSERT_EQ((long)sizeof(in), n);
	ASSERT_EQ(-1, sd_check(in, sizeof(in), 77));
}

#define SWEEP_END(what, n) do {						\
	report(&self->t, what);						\
	ASSERT_LT(n, SWEEP_MAX) TH_LOG("%s: no call without a fault", what); \
	ASSERT_LT(0u, self->t.points) TH_LOG("%s: no fault point reached", what); \
	memset(&self->t, 0, sizeof(self->t));				\
} while (0)

/* socket(), bind() and listen(), each of both socket types. */
TEST_F_TIMEOUT(fault, socket_bind_listen, 300)
{
	static const int types[] = { SOCK_STREAM, SOCK_SEQPACKET };
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(&variant->t, 0, &ss);
	unsigned int i, n;
	int hit, fd;
	long ret;

	for (i = 0; i < 2; i++) {
		int dom = types[i] == SOCK_STREAM ? self->dom_stream : self->fam;
		int proto = types[i] == SOCK_STREAM ? self->proto_stream : 0;

		for (n = 1; n < SWEEP_MAX; n++) {
			ASSERT_EQ(0, arm(n));
			fd = socket(dom, types[i], proto);
			ret = fd < 0 ? -errno : fd;
			hit = injected();
			ASSERT_TRUE(judge(&self->t, "socket", n, hit, ret));
			if (fd >= 0)
				close(fd);
			if (!hit)
				break;
		}
		SWEEP_END(types[i] == SOCK_STREAM ? "socket(SOCK_STREAM)" :
			  "socket(SOCK_SEQPACKET)", n);

		for (n = 1; n < SWEEP_MAX; n++) {
			fd = socket(dom, types[i], proto);
			ASSERT_LE(0, fd);
			ASSERT_EQ(0, arm(n));
			ret = bind(fd, (struct sockaddr *)&ss, len) ? -errno : 0;
			hit = injected();
			ASSERT_TRUE(judge(&self->t, "bind", n, hit, ret));
			/* Usable: the same bind without a fault. */
			if (ret)
				EXPECT_EQ(0, bind(fd, (struct sockaddr *)&ss, len))
					TH_LOG("bind after fault point %u: %s", n, strerror(errno));
			close(fd);
			if (!hit)
				break;
		}
		SWEEP_END("bind", n);

		for (n = 1; n < SWEEP_MAX; n++) {
			fd = socket(dom, types[i], proto);
			ASSERT_LE(0, fd);
			ASSERT_EQ(0, bind(fd, (struct sockaddr *)&ss, len));
			ASSERT_EQ(0, arm(n));
			ret = listen(fd, 4) ? -errno : 0;
			hit = injected();
			ASSERT_TRUE(judge(&self->t, "listen", n, hit, ret));
			if (ret)
				EXPECT_EQ(0, listen(fd, 4))
					TH_LOG("listen after fault point %u: %s", n, strerror(errno));
			close(fd);
			if (!hit)
				break;
		}
		SWEEP_END("listen", n);
	}
	leave_clean(_metadata, self, variant);
}

/* One message each way over a fresh pair: both ends usable. */
static int both_ways(int c, int s, int type, uint32_t seed)
{
	char out[200], in[200];
	long n;

	sd_fill(out, sizeof(out), seed);
	if (sd_msg_send(c, type, out, sizeof(out)))
		return -EIO;
	n = sd_msg_recv(s, type, in, sizeof(in));
	if (n != (long)sizeof(in) || sd_check(in, sizeof(in), seed) != -1)
		return -EPROTO;
	if (sd_msg_send(s, type, out, sizeof(out)))
		return -EIO;
	n = sd_msg_recv(c, type, in, sizeof(in));
	if (n != (long)sizeof(in) || sd_check(in, sizeof(in), seed) != -1)
		return -EPROTO;
	return 0;
}

/*
 * connect() (SOCK_STREAM, the variant's entry point) against a listener
 * of ours: a call that fails leaves a socket that is closed, and the
 * listener's side of it, if one was answered, goes away; one that
 * succeeds is a connection that works.
 */
TEST_F_TIMEOUT(fault, connect, 600)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lfd, port, fd, sfd, hit;
	unsigned int n;
	long ret;

	lfd = sd_listen_type(&variant->t, SOCK_STREAM, 16, &port);
	ASSERT_LE(0, lfd);
	len = sd_addr(&variant->t, port, &ss);
	for (n = 1; n < SWEEP_MAX; n++) {
		fd = socket(self->dom_stream, SOCK_STREAM, self->proto_stream);
		ASSERT_LE(0, fd);
		sd_set_timeouts(fd, SD_STEP_MS);
		ASSERT_EQ(0, arm(n));
		ret = connect(fd, (struct sockaddr *)&ss, len) ? -errno : 0;
		hit = injected();
		ASSERT_TRUE(judge(&self->t, "connect", n, hit, ret));
		if (!ret) {
			sfd = sd_accept_ms(lfd, SD_STEP_MS);
			ASSERT_LE(0, sfd) TH_LOG("accept after fault point %u", n);
			sd_set_timeouts(sfd, SD_STEP_MS);
			EXPECT_EQ(0, both_ways(fd, sfd, SOCK_STREAM, n))
				TH_LOG("connection after fault point %u", n);
			close(sfd);
		}
		close(fd);
		/* A child answered for a client that gave up: accepted and dropped. */
		while ((sfd = sd_accept_ms(lfd, 0)) >= 0)
			close(sfd);
		if (!hit)
			break;
	}
	close(lfd);
	SWEEP_END("connect", n);
	leave_clean(_metadata, self, variant);
}

/*
 * accept(): the connection waiting in the queue is not lost by an accept
 * that failed; the next accept returns it, and it works.
 */
TEST_F_TIMEOUT(fault, accept, 600)
{
	struct sd_connect_job j = { .t = &variant->t, .type = SOCK_STREAM };
	int lfd, sfd, hit;
	unsigned int n;
	long ret;

	lfd = sd_listen_type(&variant->t, SOCK_STREAM, 4, &j.port);
	ASSERT_LE(0, lfd);
	for (n = 1; n < SWEEP_MAX; n++) {
		j.fd = -1;
		j.thread = 0;
		ASSERT_EQ(0, pthread_create(&j.thread, NULL, sd_connect_thread, &j));
		ASSERT_EQ(POLLIN, sd_poll(lfd, POLLIN, SD_STEP_MS));
		ASSERT_EQ(0, arm(n));
		sfd = accept(lfd, NULL, NULL);
		ret = sfd < 0 ? -errno : sfd;
		hit = injected();
		pthread_join(j.thread, NULL);
		ASSERT_TRUE(judge(&self->t, "accept", n, hit, ret));
		ASSERT_LE(0, j.fd);
		if (sfd < 0) {
			sfd = sd_accept_ms(lfd, SD_STEP_MS);
			EXPECT_LE(0, sfd) TH_LOG("the connection was lost with fault point %u", n);
		}
		if (sfd >= 0) {
			sd_set_timeouts(sfd, SD_STEP_MS);
			sd_set_timeouts(j.fd, SD_STEP_MS);
			EXPECT_EQ(0, both_ways(j.fd, sfd, SOCK_STREAM, n))
				TH_LOG("connection after fault point %u", n);
			close(sfd);
		}
		close(j.fd);
		if (!hit)
			break;
	}
	close(lfd);
	SWEEP_END("accept", n);
	leave_clean(_metadata, self, variant);
}

static const struct {
	int opt;
	const char *name;
	bool set;	/* settable on an unconnected socket */
} opts[] = {
	{ SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, "RECEIVE_CREDIT_MAX", true },
	{ SMBDIRECT_OPT_SEND_CREDIT_TARGET, "SEND_CREDIT_TARGET", true },
	{ SMBDIRECT_OPT_MAX_SEND_SIZE, "MAX_SEND_SIZE", true },
	{ SMBDIRECT_OPT_MAX_RECEIVE_SIZE, "MAX_RECEIVE_SIZE", true },
	{ SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, "MAX_FRAGMENTED_SIZE", true },
	{ SMBDIRECT_OPT_MAX_READ_WRITE_SIZE, "MAX_READ_WRITE_SIZE", true },
	{ SMBDIRECT_OPT_KEEPALIVE_INTERVAL, "KEEPALIVE_INTERVAL", true },
	{ SMBDIRECT_OPT_RDMA_INFLIGHT, "RDMA_INFLIGHT", true },
	{ SMBDIRECT_OPT_RDMA_EVENTS, "RDMA_EVENTS", true },
	{ SMBDIRECT_OPT_INFO, "INFO", false },
};

/*
 * getsockopt() of every SOL_SMBDIRECT option on a connection, and
 * setsockopt() of each settable one on an unconnected socket (to the value
 * it has): a failed call changes nothing.
 */
TEST_F_TIMEOUT(fault, sockopts, 300)
{
	struct smbdirect_info want, got;
	unsigned int i, n;
	socklen_t olen;
	int fd, v0, v, hit;
	long ret;

	PAIR(SOCK_SEQPACKET);
	fd = socket(self->fam, SOCK_SEQPACKET, 0);
	ASSERT_LE(0, fd);
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		bool info = opts[i].opt == SMBDIRECT_OPT_INFO;

		for (n = 1; n < SWEEP_MAX; n++) {
			olen = info ? sizeof(want) : sizeof(v0);
			ASSERT_EQ(0, getsockopt(self->c, SOL_SMBDIRECT, opts[i].opt,
						info ? (void *)&want : (void *)&v0, &olen));
			olen = info ? sizeof(got) : sizeof(v);
			memset(&got, 0xa5, sizeof(got));
			v = -12345;
			ASSERT_EQ(0, arm(n));
			ret = getsockopt(self->c, SOL_SMBDIRECT, opts[i].opt,
					 info ? (void *)&got : (void *)&v, &olen) ? -errno : 0;
			hit = injected();
			ASSERT_TRUE(judge(&self->t, opts[i].name, n, hit, ret));
			if (!ret && !info)
				EXPECT_EQ(v0, v) TH_LOG("get %s at fault point %u", opts[i].name, n);
			if (!ret && info)
				EXPECT_EQ(want.state, got.state);
			if (!hit)
				break;
		}
		SWEEP_END(opts[i].name, n);
		if (!opts[i].set)
			continue;
		for (n = 1; n < SWEEP_MAX; n++) {
			ASSERT_EQ(0, sd_getopt(fd, opts[i].opt, &v0));
			ASSERT_EQ(0, arm(n));
			ret = setsockopt(fd, SOL_SMBDIRECT, opts[i].opt, &v0, sizeof(v0)) ? -errno : 0;
			hit = injected();
			ASSERT_TRUE(judge(&self->t, opts[i].name, n, hit, ret));
			ASSERT_EQ(0, sd_getopt(fd, opts[i].opt, &v));
			EXPECT_EQ(v0, v) TH_LOG("set %s at fault point %u changed it", opts[i].name, n);
			if (!hit)
				break;
		}
		SWEEP_END(opts[i].name, n);
	}
	close(fd);
	leave_clean(_metadata, self, variant);
}

/* ---- messages, transfers and their completions ----------------------- */

static void *map_bytes(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);	/* faulted in: no page fault inside a swept call */
	return p;
}

/* A case's two message buffers and two transfer buffers, faulted in. */
static bool map_case_buffers(char **out, char **in, unsigned char **peer,
			     unsigned char **local)
{
	*out = map_bytes(MSG_BYTES);
	*in = map_bytes(MSG_BYTES);
	*peer = map_bytes(XFER_BYTES);
	*local = map_bytes(XFER_BYTES);
	return *out && *in && *peer && *local;
}

/* One SOCK_SEQPACKET sendmsg of msg (len may be 0) with a transfer and/or a token. */
static long send_ctl(int fd, const void *msg, size_t len, const struct smbdirect_rdma_args *a,
		     const __u32 *token, char *ctl, size_t room)
{
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = len ? 1 : 0 };
	ssize_t r;

	mh.msg_control = ctl;
	mh.msg_controllen = sd_rdma_ctl(ctl, room, a, a ? 1 : 0, token);
	r = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	return r < 0 ? -errno : r;
}

/* One recvmsg(MSG_ERRQUEUE): completions into c, their number, or -errno. */
static int reap(int fd, struct smbdirect_rdma_completion *c, unsigned int max)
{
	char ctl[CMSG_SPACE(sizeof(*c) * 8)] __attribute__((aligned(8)));
	struct msghdr mh = { .msg_control = ctl, .msg_controllen = CMSG_SPACE(sizeof(*c) * max) };
	struct cmsghdr *cm;
	unsigned int n;

	if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return -errno;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SMBDIRECT_CMSG_RDMA_COMPLETION)
		return -EBADMSG;
	n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(*c);
	memcpy(c, CMSG_DATA(cm), n * sizeof(*c));
	return n;
}

/* Waits up to ms for one completion; 1, 0 (none came) or -errno. */
static int reap_one(int fd, struct smbdirect_rdma_completion *c, int ms)
{
	long end = sd_now_ms() + ms;
	int r;

	for (;;) {
		r = reap(fd, c, 1);
		if (r != -EAGAIN)
			return r;
		if (sd_now_ms() >= end)
			return 0;
		sd_poll(fd, POLLPRI, 50);
	}
}

static long offer(int a, int b, void *buf, size_t len, __u32 flags,
		  struct smbdirect_buffer_descriptor_v1 *got, __u64 *id)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD];
	__u32 n;
	int ret = sd_register_buf(a, flags, buf, len, d, MAXD, &n, id);
	long r;

	if (ret)
		return ret;
	ret = sd_msg_send(a, SOCK_SEQPACKET, d, n * sizeof(*d));
	if (ret)
		return ret;
	r = sd_msg_recv(b, SOCK_SEQPACKET, got, MAXD * sizeof(*got));
	return r < 0 ? r : r / (long)sizeof(*got);
}

/*
 * sendmsg: a plain message, one with SMBDIRECT_CMSG_SEND_INVALIDATE and
 * transfers (SMBDIRECT_CMSG_RDMA: READ, WRITE and WRITE from a file). A
 * call that failed sent nothing and took no transfer: the peer's next
 * message is the marker sent after it, no completion comes, the peer's
 * registration is not invalidated.
 */
TEST_F_TIMEOUT(fault, sendmsg, 600)
{
	static char ctl[512] __attribute__((aligned(8)));
	struct smbdirect_buffer_descriptor_v1 dw[MAXD], dr[MAXD], di[MAXD];
	struct smbdirect_rdma_completion cq;
	struct smbdirect_rdma_args a;
	char *out, *in, path[] = "/tmp/sd_fault_XXXXXX";
	unsigned char *peer, *local;
	struct iovec liov;
	__u64 idw, idi;
	__u32 token, state;
	int hit, kind, ffd;
	unsigned int n;
	long ret, nd;

	PAIR(SOCK_SEQPACKET);
	ASSERT_TRUE(map_case_buffers(&out, &in, &peer, &local));
	ASSERT_EQ(0, sd_setopt(self->s, SMBDIRECT_OPT_RDMA_EVENTS, SMBDIRECT_RDMA_EVENTS_PRI));

	/* The plain message. */
	for (n = 1; n < SWEEP_MAX; n++) {
		sd_fill(out, MSG_BYTES, n);
		ASSERT_EQ(0, arm(n));
		ret = send(self->c, out, MSG_BYTES, MSG_NOSIGNAL | MSG_DONTWAIT);
		ret = ret < 0 ? -errno : ret;
		hit = injected();
		ASSERT_TRUE(judge(&self->t, "sendmsg", n, hit, ret));
		if (ret < 0) {
			/* The marker: what the peer reads next. */
			sd_fill(out, MSG_BYTES, n + 100000);
			ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, out, MSG_BYTES));
		}
		ASSERT_EQ(MSG_BYTES, sd_msg_recv(self->s, SOCK_SEQPACKET, in, MSG_BYTES));
		EXPECT_EQ(-1, sd_check(in, MSG_BYTES, ret < 0 ? n + 100000 : n))
			TH_LOG("the peer read the wrong message after fault point %u", n);
		if (!hit)
			break;
	}
	SWEEP_END("sendmsg", n);

	/* SEND_INVALIDATE of a registration of c's. */
	for (n = 1; n < SWEEP_MAX; n++) {
		nd = offer(self->c, self->s, peer, 4096,
			   SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE, di, &idi);
		ASSERT_EQ(1, nd);
		token = le32toh(di[0].token);
		sd_fill(out, 100, n);
		ASSERT_EQ(0, arm(n));
		ret = send_ctl(self->s, out, 100, NULL, &token, ctl, sizeof(ctl));
		hit = injected();
		ASSERT_TRUE(judge(&self->t, "sendmsg SEND_INVALIDATE", n, hit, ret));
		if (ret < 0) {
			sd_fill(out, 100, n + 100000);
			ASSERT_EQ(0, sd_msg_send(self->s, SOCK_SEQPACKET, out, 100));
		}
		ASSERT_EQ(100, sd_msg_recv(self->c, SOCK_SEQPACKET, in, 100));
		EXPECT_EQ(-1, sd_check(in, 100, ret < 0 ? n + 100000 : n));
		ASSERT_EQ(0, sd_deregister(self->c, idi, &state));
		EXPECT_EQ(ret < 0 ? 0u : SMBDIRECT_REG_STATE_REMOTE_INVALIDATED,
			  state & SMBDIRECT_REG_STATE_REMOTE_INVALIDATED)
			TH_LOG("invalidation state after fault point %u", n);
		if (!hit)
			break;
	}
	SWEEP_END("sendmsg SEND_INVALIDATE", n);

	/* Transfers against c's buffer. */
	nd = offer(self->c, self->s, peer, XFER_BYTES,
		   SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_ACCESS_PEER_READ, dw, &idw);
	ASSERT_LT(0, nd);
	memcpy(dr, dw, sizeof(dr));
	ffd = mkstemp(path);
	ASSERT_LE(0, ffd);
	unlink(path);
	sd_fill(local, XFER_BYTES, 5);
	ASSERT_EQ(XFER_BYTES, write(ffd, local, XFER_BYTES));
	for (kind = 0; kind < 3; kind++) {
		static const char *const what[] = {
			"sendmsg RDMA WRITE", "sendmsg RDMA READ", "sendmsg RDMA WRITE F_FILE",
		};

		for (n = 1; n < SWEEP_MAX; n++) {
			memset(&a, 0, sizeof(a));
			a.cookie = n;
			a.op = kind == 1 ? SMBDIRECT_RDMA_READ : SMBDIRECT_RDMA_WRITE;
			a.desc = (__u64)(uintptr_t)(kind == 1 ? dr : dw);
			a.desc_count = nd;
			a.fd = -1;
			if (kind == 2) {
				a.flags = SMBDIRECT_RDMA_F_FILE;
				a.fd = ffd;
				a.length = XFER_BYTES;
			} else {
				liov.iov_base = local;
				liov.iov_len = XFER_BYTES;
				a.iov = (__u64)(uintptr_t)&liov;
				a.iov_count = 1;
				sd_fill(kind == 1 ? peer : local, XFER_BYTES, n);
			}
			ASSERT_EQ(0, arm(n));
			ret = send_ctl(self->s, NULL, 0, &a, NULL, ctl, sizeof(ctl));
			hit = injected();
			ASSERT_TRUE(judge(&self->t, what[kind], n, hit, ret));
			memset(&cq, 0, sizeof(cq));
			if (ret < 0) {
				/* Not taken: no completion, ever. */
				EXPECT_EQ(0, reap_one(self->s, &cq, 300))
					TH_LOG("%s: a completion (cookie %llu) of a failed call",
					       what[kind], (unsigned long long)cq.cookie);
			} else {
				ASSERT_EQ(1, reap_one(self->s, &cq, SD_STEP_MS));
				EXPECT_EQ((__u64)n, cq.cookie);
				EXPECT_EQ(0, cq.status);
				EXPECT_EQ((__u64)XFER_BYTES, cq.bytes);
				EXPECT_EQ(-1, sd_check(kind == 1 ? local : peer, XFER_BYTES,
						       kind == 2 ? 5 : n));
			}
			if (!hit)
				break;
		}
		SWEEP_END(what[kind], n);
	}
	close(ffd);
	ASSERT_EQ(0, sd_deregister(self->c, idw, NULL));
	leave_clean(_metadata, self, variant);
}

/*
 * recvmsg: a message and a completion waiting are not lost by a receive
 * that failed; the next receive returns them whole.
 */
TEST_F_TIMEOUT(fault, recvmsg, 600)
{
	static char ctl[512] __attribute__((aligned(8)));
	struct smbdirect_buffer_descriptor_v1 d[MAXD];
	struct smbdirect_rdma_completion cq;
	struct smbdirect_rdma_args a;
	unsigned char *peer, *local;
	char *out, *in;
	struct iovec liov;
	unsigned int n;
	int hit;
	long ret, nd;
	__u64 id;

	PAIR(SOCK_SEQPACKET);
	ASSERT_TRUE(map_case_buffers(&out, &in, &peer, &local));
	for (n = 1; n < SWEEP_MAX; n++) {
		sd_fill(out, MSG_BYTES, n);
		ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, out, MSG_BYTES));
		ASSERT_EQ(POLLIN, sd_poll(self->s, POLLIN, SD_STEP_MS) & POLLIN);
		memset(in, 0, MSG_BYTES);
		ASSERT_EQ(0, arm(n));
		ret = recv(self->s, in, MSG_BYTES, MSG_DONTWAIT);
		ret = ret < 0 ? -errno : ret;
		hit = injected();
		ASSERT_TRUE(judge(&self->t, "recvmsg", n, hit, ret));
		if (ret < 0)
			ret = sd_msg_recv(self->s, SOCK_SEQPACKET, in, MSG_BYTES);
		EXPECT_EQ(MSG_BYTES, ret) TH_LOG("the message after fault point %u", n);
		EXPECT_EQ(-1, sd_check(in, MSG_BYTES, n));
		if (!hit)
			break;
	}
	SWEEP_END("recvmsg", n);

	nd = offer(self->c, self->s, peer, XFER_BYTES, SMBDIRECT_ACCESS_PEER_WRITE, d, &id);
	ASSERT_LT(0, nd);
	liov.iov_base = local;
	liov.iov_len = XFER_BYTES;
	for (n = 1; n < SWEEP_MAX; n++) {
		memset(&a, 0, sizeof(a));
		a.cookie = 1000 + n;
		a.op = SMBDIRECT_RDMA_WRITE;
		a.desc = (__u64)(uintptr_t)d;
		a.desc_count = nd;
		a.iov = (__u64)(uintptr_t)&liov;
		a.iov_count = 1;
		a.fd = -1;
		ASSERT_EQ(0, send_ctl(self->s, NULL, 0, &a, NULL, ctl, sizeof(ctl)));
		ASSERT_LT(0, sd_poll(self->s, POLLERR, SD_STEP_MS));
		memset(&cq, 0, sizeof(cq));
		ASSERT_EQ(0, arm(n));
		ret = reap(self->s, &cq, 1);
		hit = injected();
		ASSERT_TRUE(judge(&self->t, "recvmsg MSG_ERRQUEUE", n, hit, ret));
		if (ret < 0)
			ret = reap_one(self->s, &cq, SD_STEP_MS);
		EXPECT_EQ(1, ret) TH_LOG("the completion after fault point %u", n);
		EXPECT_EQ(1000 + n, cq.cookie);
		EXPECT_EQ(0, cq.status);
		if (!hit)
			break;
	}
	SWEEP_END("recvmsg MSG_ERRQUEUE", n);
	ASSERT_EQ(0, sd_deregister(self->c, id, NULL));
	leave_clean(_metadata, self, variant);
}

/*
 * The ioctls: GET_PARAMS, REGISTER (a failure pins nothing), DEREGISTER
 * and its asynchronous form (a failure keeps the registration: the same
 * id deregisters afterwards), RDMA_READV and RDMA_WRITEV (a failure
 * leaves the connection usable: the same call succeeds and moves exact
 * data).
 */
TEST_F_TIMEOUT(fault, ioctls, 600)
{
	struct smbdirect_buffer_descriptor_v1 d[MAXD], pd[MAXD];
	struct smbdirect_deregister dreg;
	struct smbdirect_rdma_completion cq;
	struct smbdirect_params p;
	unsigned char *buf, *peer;
	struct iovec iov;
	unsigned int n, k;
	__u32 nd;
	__u64 id, bytes;
	long ret, pin, npd;
	int hit;

	PAIR(SOCK_SEQPACKET);
	buf = map_bytes(XFER_BYTES * 4);
	peer = map_bytes(XFER_BYTES);
	ASSERT_TRUE(buf && peer);
	ASSERT_EQ(0, sd_setopt(self->c, SMBDIRECT_OPT_RDMA_EVENTS, SMBDIRECT_RDMA_EVENTS_PRI));

	for (n = 1; n < SWEEP_MAX; n++) {
		memset(&p, 0, sizeof(p));
		p.size = sizeof(p);
		ASSERT_EQ(0, arm(n));
		ret = ioctl(self->c, SMBDIRECT_IOC_GET_PARAMS, &p) ? -errno : 0;
		hit = injected();
		ASSERT_TRUE(judge(&self->t, "GET_PARAMS", n, hit, ret));
		if (!hit)
			break;
	}
	SWEEP_END("GET_PARAMS", n);

	pin = sd_vm_pin_kb(getpid());
	for (n = 1; n < SWEEP_MAX; n++) {
		iov.iov_base = buf;
		iov.iov_len = XFER_BYTES * 4;
		nd = MAXD;
		ASSERT_EQ(0, arm(n));
		ret = sd_register(self->c, SMBDIRECT_ACCESS_PEER_READ, &iov, 1, d, &nd, &id);
		hit = injected();
		ASSERT_TRUE(judge(&self->t, "REGISTER", n, hit, ret));
		if (ret) {
			EXPECT_EQ(pin, sd_vm_pin_kb(getpid()))
				TH_LOG("pages pinned by a failed REGISTER (fault point %u)", n);
		} else {
			ASSERT_EQ(0, sd_deregister(self->c, id, NULL));
		}
		if (!hit)
			break;
	}
	SWEEP_END("REGISTER", n);

	for (k = 0; k < 2; k++) {
		const char *what = k ? "DEREGISTER_ASYNC" : "DEREGISTER";

		for (n = 1; n < SWEEP_MAX; n++) {
			ASSERT_EQ(0, sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_WRITE, buf,
						     XFER_BYTES, d, MAXD, &nd, &id));
			memset(&dreg, 0, sizeof(dreg));
			dreg.size = sizeof(dreg);
			dreg.id = id;
			dreg.flags = k ? SMBDIRECT_DEREG_ASYNC : 0;
			dreg.cookie = 5000 + n;
			ASSERT_EQ(0, arm(n));
			ret = ioctl(self->c, SMBDIRECT_IOC_DEREGISTER, &dreg) ? -errno : 0;
			hit = injected();
			ASSERT_TRUE(judge(&self->t, what, n, hit, ret));
			if (ret) {
				/* Kept: the same id again, without a fault. */
				ret = ioctl(self->c, SMBDIRECT_IOC_DEREGISTER, &dreg) ? -errno : 0;
				EXPECT_EQ(0, ret) TH_LOG("%s after fault point %u: %s", what, n,
							 strerror(-ret));
			}
			if (k && !ret) {
				memset(&cq, 0, sizeof(cq));
				EXPECT_EQ(1, reap_one(self->c, &cq, SD_STEP_MS));
				EXPECT_EQ(5000 + n, cq.cookie);
			}
			if (!hit)
				break;
		}
		SWEEP_END(what, n);
	}
	EXPECT_EQ(pin, sd_wait_vm_pin_kb(getpid(), pin, 5000));

	npd = offer(self->s, self->c, peer, XFER_BYTES,
		    SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_ACCESS_PEER_READ, pd, &id);
	ASSERT_LT(0, npd);
	for (k = 0; k < 2; k++) {
		unsigned long cmd = k ? SMBDIRECT_IOC_RDMA_WRITEV : SMBDIRECT_IOC_RDMA_READV;
		const char *what = k ? "RDMA_WRITEV" : "RDMA_READV";

		iov.iov_base = buf;
		iov.iov_len = XFER_BYTES;
		for (n = 1; n < SWEEP_MAX; n++) {
			sd_fill(k ? buf : peer, XFER_BYTES, n);
			memset(k ? peer : buf, 0, XFER_BYTES);
			ASSERT_EQ(0, arm(n));
			ret = sd_rdma(self->c, cmd, &iov, 1, pd, npd, &bytes);
			hit = injected();
			ASSERT_TRUE(judge(&self->t, what, n, hit, ret));
			if (ret) {
				ret = sd_rdma(self->c, cmd, &iov, 1, pd, npd, &bytes);
				EXPECT_EQ(0, ret) TH_LOG("%s after fault point %u: %s", what, n,
							 strerror(-ret));
			}
			EXPECT_EQ((__u64)XFER_BYTES, bytes);
			EXPECT_EQ(-1, sd_check(k ? peer : buf, XFER_BYTES, n))
				TH_LOG("%s data after fault point %u", what, n);
			if (!hit)
				break;
		}
		SWEEP_END(what, n);
	}
	ASSERT_EQ(0, sd_deregister(self->s, id, NULL));
	leave_clean(_metadata, self, variant);
}

/*
 * close() of a connection holding a registration: whatever fails inside,
 * nothing stays pinned, no socket is left, and the peer learns of the
 * end. Not always at once: the disconnect request itself may be what
 * failed (ib_cm's DREQ, rdma_create_ah() or ib_create_send_mad() in
 * ib_send_cm_dreq(); iw_cm's for iWARP), and no retry exists below us, so
 * the peer learns it from its keepalive (1 s here; the module's default
 * is 120 s), as TCP's peer learns of a FIN it never got from its own
 * timers. The peer's recv() ends within the step timeout either way.
 */
TEST_F_TIMEOUT(fault, close, 600)
{
	struct sd_connect_job j = { .t = &variant->t, .type = SOCK_SEQPACKET };
	struct smbdirect_buffer_descriptor_v1 d[MAXD];
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(&variant->t, 0, &ss);
	unsigned char *buf;
	unsigned int n;
	int lfd, hit;
	char b[16];
	__u32 nd;
	__u64 id;
	long ret;

	buf = map_bytes(XFER_BYTES);
	ASSERT_TRUE(buf != NULL);
	lfd = socket(self->fam, SOCK_SEQPACKET, 0);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, sd_setopt(lfd, SMBDIRECT_OPT_KEEPALIVE_INTERVAL, 1));
	ASSERT_EQ(0, bind(lfd, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, listen(lfd, 4));
	len = sizeof(ss);
	ASSERT_EQ(0, getsockname(lfd, (struct sockaddr *)&ss, &len));
	j.port = sd_port_of(&ss);
	for (n = 1; n < SWEEP_MAX; n++) {
		ASSERT_EQ(0, pthread_create(&j.thread, NULL, sd_connect_thread, &j));
		self->s = sd_accept_ms(lfd, SD_STEP_MS);
		pthread_join(j.thread, NULL);
		self->c = j.fd;
		ASSERT_LE(0, self->s);
		ASSERT_LE(0, self->c);
		sd_set_timeouts(self->s, SD_STEP_MS);
		ASSERT_EQ(0, sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_WRITE, buf,
					     XFER_BYTES, d, MAXD, &nd, &id));
		ASSERT_EQ(0, arm(n));
		ret = close(self->c) ? -errno : 0;
		hit = injected();
		self->c = -1;
		/*
		 * close() itself cannot fail: every fault point is absorbed,
		 * and what it does inside must not leak.
		 */
		ASSERT_TRUE(judge(&self->t, "close", n, hit, ret));
		ret = recv(self->s, b, sizeof(b), 0);
		EXPECT_TRUE(ret == 0 || (ret < 0 && errno != EAGAIN))
			TH_LOG("the peer did not see close with fault point %u", n);
		close(self->s);
		self->s = -1;
		if (!hit)
			break;
	}
	close(lfd);
	SWEEP_END("close", n);
	leave_clean(_metadata, self, variant);
}

/*
 * The reply to one request: 0, or the error it met (an NLMSG_ERROR, in
 * any message of a dump), or -errno of recv().
 */
static long reply(int fd, struct sd_genl_msg *r, size_t room, bool dump)
{
	struct nlmsghdr *h;
	int left;
	ssize_t got;

	for (;;) {
		got = recv(fd, r, room, 0);
		if (got < 0)
			return -errno;
		left = (int)got;
		for (h = &r->n; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (!dump || h->nlmsg_type == NLMSG_DONE)
				return 0;
		}
	}
}

/*
 * The generic netlink family: STATS_GET, STATS_RESET and the SOCK_GET
 * dump. A request that failed gets an error (or no reply), and the next
 * one works.
 */
TEST_F_TIMEOUT(fault, netlink, 300)
{
	static const struct {
		int cmd, flags;
		const char *name;
	} cmds[] = {
		{ SMBDIRECT_CMD_STATS_GET, 0, "STATS_GET" },
		{ SMBDIRECT_CMD_STATS_RESET, NLM_F_ACK, "STATS_RESET" },
		{ SMBDIRECT_CMD_SOCK_GET, NLM_F_DUMP, "SOCK_GET" },
	};
	static struct sd_genl_msg m, r[8];
	int fd, family, hit;
	unsigned int i, n;
	long ret;

	PAIR(SOCK_SEQPACKET);	/* sockets for the dump to show */
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	ASSERT_LE(0, fd);
	sd_set_timeouts(fd, 2000);
	family = sd_genl_family(fd);
	ASSERT_LT(0, family);
	for (i = 0; i < 3; i++) {
		for (n = 1; n < SWEEP_MAX; n++) {
			sd_genl_request(&m, family, cmds[i].cmd, cmds[i].flags);
			ASSERT_EQ(0, arm(n));
			ret = send(fd, &m, m.n.nlmsg_len, 0);
			ret = ret < 0 ? -errno : 0;
			hit = injected();
			if (!ret)
				ret = reply(fd, r, sizeof(r), cmds[i].flags & NLM_F_DUMP);
			ASSERT_TRUE(judge(&self->t, cmds[i].name, n, hit, ret));
			if (!hit)
				break;
			/* The socket goes on: the controller still answers. */
			ASSERT_EQ(family, sd_genl_family(fd));
		}
		SWEEP_END(cmds[i].name, n);
	}
	close(fd);
	leave_clean(_metadata, self, variant);
}

/* ---- the remote side ------------------------------------------------- */

#define RMSGS 12
#define RLEN 20000

/*
 * The receive path's allocations (reassembly of a message, in the
 * completion handler, no system call) fail while the peer streams: the
 * sender queues RMSGS messages (SO_SNDBUF holds them all, so its
 * sendmsg calls are over), the receiver's SO_RCVBUF at its minimum holds
 * the rest back at the sender, and only then is the 1st, 2nd, ...
 * allocation of the module's code armed (failslab or fail_page_alloc,
 * any context, the stack-trace filter confined to the module's text):
 * what arrives as the receiver reads is reassembled by the completion
 * handler. Either every message arrives exact (a failure absorbed), or
 * the connection ends with an error on both sides; never a hang, a wrong
 * byte, a leak or a report.
 */
TEST_F_TIMEOUT(fault, remote_receive, 600)
{
	static const char *const both[] = { FAILSLAB, FAILPAGE };
	unsigned int k, round, hits = 0, broken = 0;
	int i, one = 1, big = 8 << 20;
	unsigned long lo, hi;
	char v[32], p[128], *in, *out;
	long r, err, times;

	ASSERT_EQ(0, module_text(&lo, &hi));
	in = map_bytes(RLEN);
	out = map_bytes(RLEN);
	ASSERT_TRUE(in && out);
	for (round = 0; round < 12; round++) {
		k = round % 2;
		PAIR(SOCK_SEQPACKET);
		ASSERT_EQ(0, setsockopt(self->c, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)));
		ASSERT_EQ(0, setsockopt(self->s, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)));
		for (i = 0; i < RMSGS; i++) {
			sd_fill(out, RLEN, i);
			ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, out, RLEN));
		}
		/* The (round/2 + 1)th allocation of the module's code fails. */
#define KNOB(file, fmt, val) do {							snprintf(p, sizeof(p), "%s%s", both[k], file);				snprintf(v, sizeof(v), fmt, val);					ASSERT_EQ(0, write_dbg(p, v));					} while (0)
		KNOB("require-start", "%lu", lo);
		KNOB("require-end", "%lu", hi);
		KNOB("interval", "%u", round / 2 + 1);
		KNOB("times", "%d", 1);
		KNOB("probability", "%d", 100);
		err = 0;
		for (i = 0; i < RMSGS; i++) {
			r = sd_msg_recv(self->s, SOCK_SEQPACKET, in, RLEN);
			if (r < 0) {
				err = r;
				break;
			}
			ASSERT_EQ((long)RLEN, r);
			ASSERT_EQ(-1, sd_check(in, RLEN, i)) TH_LOG("message %d of round %u", i, round);
		}
		KNOB("probability", "%d", 0);
#undef KNOB
		snprintf(p, sizeof(p), "%stimes", both[k]);
		times = -1;
		ASSERT_EQ(0, sd_read_long(p, &times));
		hits += times == 0;
		if (err) {
			char b[8];

			broken++;
			/* Not a timeout: the connection ended. And the peer knows. */
			EXPECT_NE(-ETIMEDOUT, err);
			EXPECT_NE(-EAGAIN, err);
			r = recv(self->c, b, sizeof(b), 0);
			EXPECT_TRUE(r == 0 || (r < 0 && errno != EAGAIN))
				TH_LOG("the sender did not see the end of round %u", round);
			ksft_print_msg("round %u (%s, allocation %u): the connection ended at "
				       "message %d: %s\n", round, k ? "page" : "slab",
				       round / 2 + 1, i, strerror((int)-err));
		}
		sd_teardown_pair(self->c, self->s, 0);
		self->c = self->s = -1;
		ASSERT_EQ(0, faults_reset());
	}
	ksft_print_msg("remote: %u of 12 rounds injected a fault, %u connections ended\n",
		       hits, broken);
	EXPECT_LT(0u, hits);
	leave_clean(_metadata, self, variant);
}

TEST_HARNESS_MAIN
