// SPDX-License-Identifier: GPL-2.0
/*
 * Memory a user may make the module allocate (issue #13 item 1): the
 * unpriv_mem_max cap on what SOL_SMBDIRECT options ask for without
 * CAP_NET_ADMIN, and the charging of every connection's buffers to the
 * socket owner's memory cgroup, the listener's children included (their
 * buffers are allocated in rdma_cm's context). As uid 65534 in a cgroup
 * with memory.max 64M, socket pairs of ~8 MiB a socket (under the cap)
 * connect until the cgroup is full, then fail with ENOMEM (a connect whose
 * own buffers do not fit) or ECONNREFUSED (the listener's child did not
 * fit); memory.current shows the pairs charged, memory.events the limit
 * reached, and nothing is OOM-killed. A good connection works afterwards.
 *
 * And what send() stages (item 1's SO_SNDBUF): a STREAM writer charged to
 * a cgroup, SO_SNDBUF 64 KiB, writes a 2 MiB message to a reader that holds
 * its receive buffers back. The writer's tx_queued stays within SO_SNDBUF
 * and memory.current grows by at most about that, not by the message, when a
 * non-blocking writer gets a partial count and EAGAIN and while a blocking
 * one waits inside its one send(); then the message arrives whole.
 */
#include <grp.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "sd_test.h"

#define CG_ROOT "/sys/fs/cgroup"
#define CG_LIMIT (64L << 20)
#define CAP_PARAM "/sys/module/af_smbdirect/parameters/unpriv_mem_max"
#define CAP_DEFAULT (16L << 20)	/* the parameter's default */

/* Per socket: 8 MiB of receive buffers, under the default cap with the send buffers. */
#define MC_CREDITS 255
#define MC_RECV_SIZE 32768
#define MC_RX_BYTES ((long)MC_CREDITS * MC_RECV_SIZE)
/* Three times what memory.max holds if nothing were charged. */
#define MC_PAIRS 12
/* Attempts after the first failure: each fails the same clean way. */
#define MC_MORE 2

static int drop_to_nobody(void)
{
	return setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	       setresuid(65534, 65534, 65534);
}

/* The module's unpriv_mem_max; CAP_DEFAULT if it has none (an old module). */
static long mem_cap(void)
{
	long v = CAP_DEFAULT;

	if (sd_read_long(CAP_PARAM, &v))
		fprintf(stderr, "# %s: not there (a module without the cap)\n", CAP_PARAM);
	return v;
}

/*
 * Sets receive_credit_max 1024, then max_receive_size 64 KiB: 64 MiB of
 * receive buffers. Returns the second setsockopt's -errno (0 if taken)
 * and checks the refused value did not stick; <-1000 on a setup error.
 */
static int ask_64m(void)
{
	int fd = sd_socket(SOCK_SEQPACKET), before = 0, after = 0, ret;

	if (fd < 0)
		return -1000 + fd;
	if (sd_setopt(fd, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 1024) ||
	    sd_getopt(fd, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, &before)) {
		close(fd);
		return -2000;
	}
	ret = sd_setopt(fd, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, 65536);
	if (sd_getopt(fd, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, &after) ||
	    after != (ret ? before : 65536))
		ret = -3000;
	/* Lowering is always allowed. */
	else if (sd_setopt(fd, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 2))
		ret = -4000;
	close(fd);
	return ret;
}

/* Above the cap: EPERM without CAP_NET_ADMIN, taken with it (root). */
TEST(unpriv_cap)
{
	int *res, status, ret;
	pid_t pid;

	ASSERT_LT(0, sd_family()) TH_LOG("af_smbdirect is not loaded");
	if (!mem_cap())
		SKIP(return, "unpriv_mem_max is 0: no cap");
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	*res = 1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (drop_to_nobody())
			_exit(2);
		*res = ask_64m();
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(-EPERM, *res)
		TH_LOG("uid 65534 asked for 64 MiB of receive buffers: %s, want EPERM",
		       *res ? strerror(-*res) : "taken");
	ret = ask_64m();
	EXPECT_EQ(0, ret) TH_LOG("root (CAP_NET_ADMIN) asked for the same: %d", ret);
	munmap(res, sizeof(*res));
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

/* The value of key in a flat-keyed cgroup file (memory.events), or -1. */
static long cg_key(const char *dir, const char *file, const char *key)
{
	char path[256], k[64];
	long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", k, &v) == 2)
		if (!strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

static long cg_long(const char *dir, const char *file)
{
	char path[256];
	long v = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return sd_read_long(path, &v) ? -1 : v;
}

/* A cgroup2 hierarchy with the memory controller for children; or why not. */
static const char *cg_ready(void)
{
	if (access(CG_ROOT "/cgroup.controllers", R_OK) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL))
		return "no cgroup2 at " CG_ROOT;
	if (write_file(CG_ROOT "/cgroup.subtree_control", "+memory"))
		return "the memory controller cannot be enabled";
	return NULL;
}

struct mc_result {
	int step;		/* 0 done; else the step that went wrong */
	int pairs;		/* connected and accepted */
	int fails;		/* attempts that failed cleanly */
	int errs[1 + MC_MORE];	/* their errnos */
	int bad_err;		/* an attempt's unexpected -errno */
	long current;		/* memory.current holding every pair */
	long max_current;	/* highest memory.current seen */
};

static int mc_opts(int fd)
{
	if (sd_setopt(fd, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, MC_CREDITS) ||
	    sd_setopt(fd, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, MC_RECV_SIZE))
		return -errno;
	sd_set_timeouts(fd, SD_STEP_MS);
	return 0;
}

/* A listener with the options (its children take them), as sd_listen_type(). */
static int mc_listen(const struct sd_target *t, int *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(t, 0, &ss);
	int fd = sd_socket(SOCK_STREAM), ret;

	if (fd < 0)
		return fd;
	ret = mc_opts(fd);
	if (!ret && (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, MC_PAIRS)))
		ret = -errno;
	len = sizeof(ss);
	if (!ret && getsockname(fd, (struct sockaddr *)&ss, &len))
		ret = -errno;
	if (!ret && sd_port_of(&ss) <= 0)
		ret = -EADDRNOTAVAIL;
	if (ret) {
		close(fd);
		return ret;
	}
	*port = sd_port_of(&ss);
	return fd;
}

/*
 * The unprivileged child in the cgroup: pairs until MC_PAIRS or the first
 * failure plus MC_MORE attempts, every pair held open.
 */
static void mc_child(const struct sd_target *t, const char *cg, struct mc_result *r)
{
	int fds[2 * MC_PAIRS], nfd = 0, lfd, port = 0, c, s, i, err;
	struct sockaddr_storage ss;
	socklen_t len;
	long cur;

	r->step = 1;
	if (drop_to_nobody())
		return;
	r->step = 2;
	lfd = mc_listen(t, &port);
	if (lfd < 0) {
		r->bad_err = lfd;
		return;
	}
	r->step = 3;
	for (i = 0; i < MC_PAIRS && r->fails <= MC_MORE; i++) {
		c = sd_socket(SOCK_STREAM);
		if (c < 0 || mc_opts(c)) {
			r->bad_err = c < 0 ? c : -errno;
			return;
		}
		len = sd_addr(t, port, &ss);
		err = connect(c, (struct sockaddr *)&ss, len) ? -errno : 0;
		if (err) {
			close(c);
			if (err != -ENOMEM && err != -ENOBUFS && err != -ECONNREFUSED) {
				r->bad_err = err;
				return;
			}
			r->errs[r->fails++] = -err;
			continue;
		}
		s = sd_accept_ms(lfd, SD_STEP_MS);
		if (s < 0) {
			r->bad_err = s;
			close(c);
			return;
		}
		fds[nfd++] = c;
		fds[nfd++] = s;
		r->pairs++;
		cur = cg_long(cg, "memory.current");
		if (cur > r->max_current)
			r->max_current = cur;
	}
	r->current = cg_long(cg, "memory.current");
	if (r->current > r->max_current)
		r->max_current = r->current;
	while (nfd)
		close(fds[--nfd]);
	close(lfd);
	r->step = 0;
}

FIXTURE(memcg) {
	int c, s;
	char cg[128];
};

SD_TARGET_VARIANT(memcg);

SD_ADD_TARGET_VARIANTS(memcg);

FIXTURE_SETUP(memcg)
{
	const char *why;

	self->c = self->s = -1;
	self->cg[0] = 0;
	SD_SETUP_TARGET();
	why = cg_ready();
	if (why)
		SKIP(return, "%s", why);
	snprintf(self->cg, sizeof(self->cg), CG_ROOT "/sd_memcg_%d", getpid());
	ASSERT_EQ(0, mkdir(self->cg, 0755)) TH_LOG("mkdir %s: %s", self->cg, strerror(errno));
}

FIXTURE_TEARDOWN(memcg)
{
	sd_teardown_pair(self->c, self->s, 0);
	if (self->cg[0])
		rmdir(self->cg);
}

/*
 * Large-option pairs of an unprivileged user fill its cgroup's memory.max
 * and then fail cleanly; the module does not grow beyond it.
 */
TEST_F(memcg, pairs_fill_memory_max)
{
	struct mc_result *r;
	long cost, events0, events1, oom, per_pair;
	char path[192], buf[64];
	int status, i;
	pid_t pid;

	/* What one socket's options cost (sd_opts_mem), with the defaults. */
	cost = MC_RX_BYTES + 255L * 1364;
	if (mem_cap() && cost > mem_cap())
		SKIP(return, "unpriv_mem_max %ld is below one socket's %ld", mem_cap(), cost);
	snprintf(path, sizeof(path), "%s/memory.max", self->cg);
	snprintf(buf, sizeof(buf), "%ld", CG_LIMIT);
	ASSERT_EQ(0, write_file(path, buf));
	events0 = cg_key(self->cg, "memory.events", "max");
	ASSERT_LE(0, events0);
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	memset(r, 0, sizeof(*r));
	r->step = -1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", self->cg);
		/*
		 * Kernel allocations of the child's own syscalls (a socket,
		 * a file) at memory.max would call the OOM killer; -1000
		 * makes it a clean ENOMEM there too. The module's buffers
		 * never ask it (__GFP_RETRY_MAYFAIL).
		 */
		if (write_file("/proc/self/oom_score_adj", "-1000") || write_file(path, "0"))
			_exit(3);
		mc_child(&variant->t, self->cg, r);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child %s %d", WIFEXITED(status) ? "exited" : "was killed by signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	TH_LOG("%d pairs connected, then %d failed (%s); memory.current %ld holding them (max seen %ld), memory.max %ld",
	       r->pairs, r->fails, r->fails ? strerror(r->errs[0]) : "none",
	       r->current, r->max_current, CG_LIMIT);
	ASSERT_EQ(0, r->step) TH_LOG("child step %d: %s", r->step, strerror(-r->bad_err));
	/* A pair holds two sockets' receive buffers; one pair fits. */
	per_pair = 2 * MC_RX_BYTES;
	EXPECT_LE(1, r->pairs);
	EXPECT_LE(1, r->fails)
		TH_LOG("%d pairs of %ld MiB each connected in a %ld MiB cgroup: not charged",
		       r->pairs, per_pair >> 20, CG_LIMIT >> 20);
	EXPECT_GE((long)r->pairs * per_pair, CG_LIMIT - 2 * per_pair);
	for (i = 0; i < r->fails; i++)
		EXPECT_TRUE(r->errs[i] == ENOMEM || r->errs[i] == ENOBUFS ||
			    r->errs[i] == ECONNREFUSED);
	/* The pairs' buffers are in memory.current: both ends are charged. */
	EXPECT_LE((long)r->pairs * per_pair * 9 / 10, r->current)
		TH_LOG("memory.current %ld for %d pairs of %ld bytes", r->current,
		       r->pairs, per_pair);
	EXPECT_GE(CG_LIMIT, r->max_current);
	events1 = cg_key(self->cg, "memory.events", "max");
	EXPECT_LT(events0, events1) TH_LOG("memory.events max stayed %ld", events1);
	oom = cg_key(self->cg, "memory.events", "oom_kill");
	EXPECT_EQ(0, oom) TH_LOG("memory.events oom_kill %ld", oom);
	munmap(r, sizeof(*r));

	/* Outside the cgroup, a good connection still works. */
	{
		static const char msg[] = "still works";
		char in[sizeof(msg)];
		const char *why = "";
		int ret = sd_pair_type(&variant->t, SOCK_STREAM, &self->c, &self->s, &why);

		ASSERT_EQ(0, ret) TH_LOG("%s: %s", why, strerror(-ret));
		sd_set_timeouts(self->c, SD_STEP_MS);
		sd_set_timeouts(self->s, SD_STEP_MS);
		ASSERT_EQ(0, sd_stream_send(self->c, msg, sizeof(msg)));
		ASSERT_EQ((long)sizeof(msg), sd_stream_recv(self->s, in, sizeof(in)));
		EXPECT_EQ(0, memcmp(msg, in, sizeof(msg)));
	}
}

/*
 * SO_SNDBUF bounds what a STREAM send() stages, however long the message
 * its prefix announces. The writer (c) is charged to self->cg, the reader
 * (s, accepted by a listener outside it) to the root. The reader first gets
 * one small message it leaves unread: beyond SO_RCVBUF it holds its receive
 * buffers back, so the writer is starved once SB_CREDITS PDUs are out, and
 * what it takes after that stays staged in the kernel.
 */
#define SB_PDU 32768		/* send and receive size: few PDUs to move */
#define SB_CREDITS 8
#define SB_MSG (2u << 20)	/* the message: 16 times SO_SNDBUF */
#define SB_SNDBUF 65536		/* the kernel doubles it */
#define SB_RCVBUF 4096
#define SB_FIRST 16384		/* the unread message: beyond SO_RCVBUF */
#define SB_CHUNK 65536		/* the reader's recv() size */
/* memory.current beyond SO_SNDBUF: per-CPU charge batches, slab, headers */
#define SB_SLACK (768L << 10)
#define SB_WAIT_MS 60000	/* bound of the waits for the starved state */
#define SB_SEED 7

FIXTURE(sndbuf) {
	int c, s;
	int sndbuf;		/* the writer's SO_SNDBUF as the kernel keeps it */
	long base;		/* memory.current before the message */
	char cg[128];
	char *buf;		/* prefix + message */
};

SD_TARGET_VARIANT(sndbuf);

/* Both transports and both entry points; the other two cost guest time. */
FIXTURE_VARIANT_ADD(sndbuf, rxe4) { .t = SD_TARGET_RXE4 };
FIXTURE_VARIANT_ADD(sndbuf, siw4_inet) { .t = SD_TARGET_SIW4_INET };

static int sb_opts(int fd)
{
	if (sd_setopt(fd, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, SB_CREDITS) ||
	    sd_setopt(fd, SMBDIRECT_OPT_SEND_CREDIT_TARGET, SB_CREDITS) ||
	    sd_setopt(fd, SMBDIRECT_OPT_MAX_SEND_SIZE, SB_PDU) ||
	    sd_setopt(fd, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, SB_PDU) ||
	    sd_setopt(fd, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, SB_MSG))
		return -errno;
	return 0;
}

/* Moves this process into the cgroup dir. */
static int cg_enter(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	return write_file(path, "0");
}

/* This process's cgroup directory, from /proc/self/cgroup ("0::/path"). */
static int cg_self(char *dir, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "0::", 3)) {
			snprintf(dir, len, "%s%s", CG_ROOT, line + 3);
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

/*
 * The pair: c created inside cg (a socket is charged to its creator's
 * cgroup, and the process goes back where it was), s accepted by a
 * listener outside it; both with sb_opts().
 */
static int sb_pair(const struct sd_target *t, const char *cg, int *c, int *s,
		   const char **why)
{
	struct sd_connect_job j = { .t = t, .type = SOCK_STREAM, .preset = 1, .fd = -1 };
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(t, 0, &ss);
	int lfd = sd_socket(SOCK_STREAM), ret;
	char home[300];

	*why = "listener";
	if (lfd < 0)
		return lfd;
	ret = sb_opts(lfd);
	if (!ret)
		ret = cg_self(home, sizeof(home));
	if (!ret && (bind(lfd, (struct sockaddr *)&ss, len) || listen(lfd, 1)))
		ret = -errno;
	len = sizeof(ss);
	if (!ret && getsockname(lfd, (struct sockaddr *)&ss, &len))
		ret = -errno;
	if (!ret) {
		*why = "socket in the cgroup";
		ret = cg_enter(cg);
		if (!ret) {
			j.fd = sd_socket(SOCK_STREAM);
			ret = cg_enter(home);
			if (j.fd < 0)
				ret = j.fd;
		}
	}
	if (!ret)
		ret = sb_opts(j.fd);
	if (!ret) {
		*why = "connect";
		j.port = sd_port_of(&ss);
		ret = -pthread_create(&j.thread, NULL, sd_connect_thread, &j);
	}
	if (!ret) {
		*s = sd_accept_ms(lfd, SD_STEP_MS);
		pthread_join(j.thread, NULL);
		ret = j.err ? j.err : *s < 0 ? *s : 0;
	}
	close(lfd);
	if (ret && j.fd >= 0)
		close(j.fd);
	if (!ret)
		*c = j.fd;
	return ret;
}

FIXTURE_SETUP(sndbuf)
{
	int snd = SB_SNDBUF, rcv = SB_RCVBUF, ret;
	uint32_t be = htonl(SB_MSG);
	socklen_t len = sizeof(self->sndbuf);
	const char *why;

	self->c = self->s = -1;
	self->cg[0] = 0;
	self->buf = NULL;
	SD_SETUP_TARGET();
	why = cg_ready();
	if (why)
		SKIP(return, "%s", why);
	snprintf(self->cg, sizeof(self->cg), CG_ROOT "/sd_sndbuf_%d", getpid());
	ASSERT_EQ(0, mkdir(self->cg, 0755)) TH_LOG("mkdir %s: %s", self->cg, strerror(errno));
	ret = sb_pair(&variant->t, self->cg, &self->c, &self->s, &why);
	ASSERT_EQ(0, ret) TH_LOG("%s over %s %s: %s", why, variant->t.kind,
				 variant->t.addr, strerror(-ret));
	sd_set_timeouts(self->c, SD_STEP_MS);
	sd_set_timeouts(self->s, SD_STEP_MS);
	ASSERT_EQ(0, setsockopt(self->c, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd)));
	ASSERT_EQ(0, getsockopt(self->c, SOL_SOCKET, SO_SNDBUF, &self->sndbuf, &len));
	ASSERT_EQ(0, setsockopt(self->s, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)));
	self->buf = malloc(4 + SB_MSG);
	ASSERT_NE(NULL, self->buf);
	memcpy(self->buf, &be, 4);
	sd_fill(self->buf + 4, SB_MSG, SB_SEED);
	/* The message the reader leaves unread: it holds its buffers back. */
	ASSERT_EQ(0, sd_stream_send(self->c, self->buf + 4, SB_FIRST));
	ASSERT_LT(0, sd_poll(self->s, POLLIN, SD_STEP_MS));
	self->base = cg_long(self->cg, "memory.current");
	ASSERT_LT(0, self->base);
}

FIXTURE_TEARDOWN(sndbuf)
{
	sd_teardown_pair(self->c, self->s, 0);
	free(self->buf);
	if (self->cg[0])
		rmdir(self->cg);
}

struct sb_writer {
	int fd;
	const char *p;
	size_t len;
	int one_call;		/* one send(); else sd_write_all() */
	long ret;		/* send()'s count or -errno; sd_write_all()'s */
	int done;
	pthread_t thread;
};

static void *sb_write(void *arg)
{
	struct sb_writer *w = arg;
	ssize_t n;

	if (w->one_call) {
		n = send(w->fd, w->p, w->len, MSG_NOSIGNAL);
		w->ret = n < 0 ? -errno : n;
	} else {
		w->ret = sd_write_all(w->fd, w->p, w->len);
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Until the writer is starved (true) or done or SB_WAIT_MS passed. */
static bool sb_wait_starved(int c, int s, const int *done)
{
	long t0 = sd_now_ms();

	while (!sd_starved(c, s) && !(done && __atomic_load_n(done, __ATOMIC_SEQ_CST)) &&
	       sd_now_ms() - t0 < SB_WAIT_MS)
		sd_sleep_ms(50);
	return sd_starved(c, s);
}

/* The message the reader left unread. */
static void sb_read_first(struct __test_metadata *_metadata, int s)
{
	char in[SB_FIRST];

	ASSERT_EQ(SB_FIRST, sd_stream_recv(s, in, SB_FIRST));
	EXPECT_EQ(-1, sd_check(in, SB_FIRST, SB_SEED));
}

/* The long one, in SB_CHUNK reads: one message, intact. */
static void sb_read_long(struct __test_metadata *_metadata, int s)
{
	char *in = malloc(SB_MSG);
	size_t got = 0, n;
	uint32_t be = 0;

	ASSERT_NE(NULL, in);
	ASSERT_EQ(0, sd_read_all(s, &be, 4));
	ASSERT_EQ(SB_MSG, ntohl(be)) TH_LOG("a message of %u bytes, not one of %u",
					    ntohl(be), SB_MSG);
	while (got < SB_MSG) {
		n = SB_MSG - got < SB_CHUNK ? SB_MSG - got : SB_CHUNK;
		ASSERT_EQ(0, sd_read_all(s, in + got, n)) TH_LOG("at byte %zu", got);
		got += n;
	}
	EXPECT_EQ(-1, sd_check(in, SB_MSG, SB_SEED));
	free(in);
}

/*
 * Non-blocking: sends take the message piece by piece, then EAGAIN once
 * the writer is starved with SO_SNDBUF staged; POLLOUT is then clear.
 */
TEST_F_TIMEOUT(sndbuf, nonblocking_send_stages_sndbuf, 120)
{
	struct sb_writer w = { .fd = self->c };
	size_t total = 4 + SB_MSG, off = 0;
	struct smbdirect_info info;
	int waited, ev;
	ssize_t n;
	long cur;

	while (off < total) {
		n = send(self->c, self->buf + off, total - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += n;
			continue;
		}
		ASSERT_TRUE(n < 0 && errno == EAGAIN) TH_LOG("send: %zd, %s", n, strerror(errno));
		waited = 0;
		while (!(ev = sd_poll(self->c, POLLOUT, 100)) &&
		       !sd_starved(self->c, self->s) && waited < SB_WAIT_MS)
			waited += 100;
		if (ev & POLLOUT)
			continue;
		ASSERT_TRUE(sd_starved(self->c, self->s))
			TH_LOG("neither POLLOUT nor the starved state in %d ms", waited);
		break;
	}
	cur = cg_long(self->cg, "memory.current");
	ASSERT_EQ(0, sd_info(self->c, &info));
	TH_LOG("took %zu of %zu bytes: tx_queued %u, SO_SNDBUF %d, memory.current +%ld",
	       off, total, info.tx_queued, self->sndbuf, cur - self->base);
	EXPECT_GT(total, off) TH_LOG("non-blocking sends took the whole message");
	EXPECT_GE((unsigned int)self->sndbuf, info.tx_queued);
	EXPECT_GE(self->sndbuf + SB_SLACK, cur - self->base)
		TH_LOG("the kernel holds %ld bytes for the writer", cur - self->base);
	if (off < total) {
		EXPECT_EQ(0, sd_poll(self->c, POLLOUT, 0)) TH_LOG("POLLOUT while starved");
		EXPECT_EQ(-1, send(self->c, self->buf + off, total - off,
				   MSG_DONTWAIT | MSG_NOSIGNAL));
		EXPECT_EQ(EAGAIN, errno);
	}
	/* The rest from a blocking writer while the reader reads. */
	w.p = self->buf + off;
	w.len = total - off;
	ASSERT_EQ(0, pthread_create(&w.thread, NULL, sb_write, &w));
	sb_read_first(_metadata, self->s);
	sb_read_long(_metadata, self->s);
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, w.ret) TH_LOG("the rest: %s", strerror(-w.ret));
}

/*
 * Blocking: one send() of the whole message waits for room inside the
 * call with SO_SNDBUF staged, and keeps within it while the reader drains.
 */
TEST_F_TIMEOUT(sndbuf, blocking_send_stages_sndbuf, 120)
{
	struct sb_writer w = { .fd = self->c, .p = self->buf, .len = 4 + SB_MSG,
			       .one_call = 1 };
	long cur, max_cur = 0;
	unsigned int max_q = 0;
	struct smbdirect_info info;
	bool starved;

	sd_set_timeouts(self->c, 0);	/* the writer blocks as long as it takes */
	ASSERT_EQ(0, pthread_create(&w.thread, NULL, sb_write, &w));
	starved = sb_wait_starved(self->c, self->s, &w.done);
	cur = cg_long(self->cg, "memory.current");
	ASSERT_EQ(0, sd_info(self->c, &info));
	TH_LOG("%s: tx_queued %u, SO_SNDBUF %d, memory.current +%ld",
	       starved ? "starved" : "not starved", info.tx_queued, self->sndbuf,
	       cur - self->base);
	/* The reader holds its buffers back: the message cannot all be out. */
	EXPECT_EQ(0, __atomic_load_n(&w.done, __ATOMIC_SEQ_CST))
		TH_LOG("send() returned: the kernel took the whole message");
	EXPECT_TRUE(starved);
	EXPECT_GE((unsigned int)self->sndbuf, info.tx_queued);
	EXPECT_GE(self->sndbuf + SB_SLACK, cur - self->base)
		TH_LOG("the kernel holds %ld bytes for the writer", cur - self->base);
	/* Reading the first message gives the buffers back: the rest flows. */
	sb_read_first(_metadata, self->s);
	while (!__atomic_load_n(&w.done, __ATOMIC_SEQ_CST)) {
		if (!sd_info(self->c, &info) && info.tx_queued > max_q)
			max_q = info.tx_queued;
		cur = cg_long(self->cg, "memory.current");
		if (cur > max_cur)
			max_cur = cur;
		sd_sleep_ms(20);
	}
	pthread_join(w.thread, NULL);
	TH_LOG("while it drained: tx_queued up to %u, memory.current up to +%ld",
	       max_q, max_cur - self->base);
	EXPECT_EQ(4 + SB_MSG, w.ret) TH_LOG("send: %s", w.ret < 0 ? strerror(-w.ret) : "short");
	EXPECT_GE((unsigned int)self->sndbuf, max_q);
	EXPECT_GE(self->sndbuf + SB_SLACK, max_cur - self->base);
	sb_read_long(_metadata, self->s);
}

TEST_HARNESS_MAIN
