// SPDX-License-Identifier: GPL-2.0
/*
 * Containers (issue #45): root of a user namespace (uid 0 mapped to
 * 100000, every capability over its own namespaces and none over the
 * host's) against the module's privilege checks of round 3:
 *
 *   in the host's network namespace (a user namespace alone)
 *     - bind() of 445 and 5445: EACCES (CAP_NET_BIND_SERVICE over the
 *       network namespace's owner, the initial user namespace)
 *     - STATS_RESET: EPERM (CAP_NET_ADMIN over the namespace)
 *     - the SOCK_GET dump: its own sockets only, none of host root's
 *     - connection buffers beyond unpriv_mem_max: EPERM (CAP_NET_ADMIN in
 *       the initial user namespace, as SO_RCVBUFFORCE)
 *     - REGISTER beyond RLIMIT_MEMLOCK: ENOMEM (CAP_IPC_LOCK in the
 *       initial user namespace)
 *     - the module's parameters (the global limits): not writable
 *   in a network namespace of its own
 *     - STATS_RESET succeeds, and the host's counters are untouched
 *     - bind() of 5445 is not refused for want of a capability (445 is:
 *       rdma_cm asks CAP_NET_BIND_SERVICE of the initial namespace)
 *     - STATS_GET shows its own sockets, not the host's
 *
 * Each refusal has its control: host root, in the same test, gets what
 * the container is refused. Needs CONFIG_USER_NS (tests/vm/kernel-light.
 * config: the 7.2 boots); skips elsewhere.
 */
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sd_test.h"
#include "sd_genl_test.h"

#define CUID 100000
#define PARAM "/sys/module/af_smbdirect/parameters/unpriv_mem_max"

static int fails;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fails++;						\
		printf("# container: %s:%d: %s: ", __func__, __LINE__, #cond); \
		printf(__VA_ARGS__);					\
		printf("\n");						\
	}								\
} while (0)

/* bind() of port on the target's address: 0 or -errno. */
static int bind_port(const struct sd_target *t, int type, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(t, port, &ss);
	int fd = sd_socket(type), ret;

	if (fd < 0)
		return fd;
	ret = bind(fd, (struct sockaddr *)&ss, len) ? -errno : 0;
	close(fd);
	return ret;
}

/* Connection buffers of 64 MiB asked on an unconnected socket: 0 or -errno. */
static int ask_big_buffers(void)
{
	int fd = sd_socket(SOCK_SEQPACKET), ret;

	if (fd < 0)
		return fd;
	ret = sd_setopt(fd, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 1024);
	ret = ret ?: sd_setopt(fd, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, 65536);
	close(fd);
	return ret;
}

/*
 * REGISTER of 1 MiB on a connection over t with RLIMIT_MEMLOCK at 64 KiB:
 * 0 or -errno (of the registration; -EHOSTUNREACH when no pair was made).
 */
static int register_over_memlock(const struct sd_target *t)
{
	struct smbdirect_buffer_descriptor_v1 d[64];
	struct rlimit old, lim = { 64 << 10, 64 << 10 };
	const char *why = "";
	size_t len = 1 << 20;
	int c, s, ret;
	__u32 n;
	__u64 id;
	void *buf;

	if (sd_pair_type(t, SOCK_SEQPACKET, &c, &s, &why))
		return -EHOSTUNREACH;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		ret = -ENOMEM;
		goto out;
	}
	memset(buf, 1, len);
	getrlimit(RLIMIT_MEMLOCK, &old);
	if (old.rlim_max < lim.rlim_max)
		lim = old;
	if (setrlimit(RLIMIT_MEMLOCK, &lim)) {
		ret = -errno;
		goto unmap;
	}
	ret = sd_register_buf(c, SMBDIRECT_ACCESS_PEER_READ, buf, len, d, 64, &n, &id);
	if (!ret)
		sd_deregister(c, id, NULL);
	setrlimit(RLIMIT_MEMLOCK, &old);
unmap:
	munmap(buf, len);
out:
	close(c);
	close(s);
	return ret;
}

/* Maps the child's uid and gid 0 to CUID (from the parent, which may). */
static int map_ids(pid_t pid)
{
	char path[64], map[32];

	snprintf(map, sizeof(map), "0 %d 1", CUID);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	if (sd_write_str(path, map))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
	if (sd_write_str(path, "deny"))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	return sd_write_str(path, map) ? -1 : 0;
}

/*
 * Runs body in a child that is root of a new user namespace (and of a new
 * network namespace with own_net); returns the number of failed checks,
 * or -1 when the container could not be made.
 */
static int in_container(int own_net, int (*body)(const struct sd_target *),
			const struct sd_target *t)
{
	int go[2], ready[2], status;
	char b = 0;
	pid_t pid;

	if (pipe(go) || pipe(ready))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(go[1]);
		close(ready[0]);
		b = unshare(CLONE_NEWUSER | (own_net ? CLONE_NEWNET : 0)) ? 1 : 0;
		if (write(ready[1], &b, 1) != 1 || b)
			_exit(200);
		if (read(go[0], &b, 1) != 1 || b)
			_exit(201);
		if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
			_exit(202);
		fails = 0;
		body(t);
		fflush(stdout);
		_exit(fails > 100 ? 100 : fails);
	}
	close(go[0]);
	close(ready[1]);
	if (read(ready[0], &b, 1) != 1 || b)
		b = 1;
	else
		b = map_ids(pid) ? 1 : 0;
	if (write(go[1], &b, 1) != 1)
		b = 1;
	close(go[1]);
	close(ready[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status) >= 200 ? -1 : WEXITSTATUS(status);
}

static int host_netns_body(const struct sd_target *t)
{
	int ret, n, mine;

	CHECK(geteuid() == 0, "not root of the container");
	ret = bind_port(t, SOCK_STREAM, 445);
	CHECK(ret == -EACCES, "bind 445: %s", strerror(-ret));
	ret = bind_port(t, SOCK_SEQPACKET, 445);
	CHECK(ret == -EACCES, "bind 445 (SOCK_SEQPACKET): %s", strerror(-ret));
	ret = bind_port(t, SOCK_STREAM, 5445);
	CHECK(ret == -EACCES, "bind 5445: %s", strerror(-ret));
	ret = sd_stats_reset();
	CHECK(ret == -EPERM, "STATS_RESET of the host's namespace: %s", strerror(-ret));
	ret = ask_big_buffers();
	CHECK(ret == -EPERM, "buffers beyond unpriv_mem_max: %s", strerror(-ret));
	ret = register_over_memlock(t);
	CHECK(ret == -ENOMEM, "REGISTER beyond RLIMIT_MEMLOCK: %s", strerror(-ret));
	ret = sd_write_str(PARAM, "0");
	CHECK(ret == -EACCES || ret == -EPERM, "write %s: %s", PARAM, strerror(-ret));
	n = sd_socket(SOCK_STREAM);
	CHECK(n >= 0, "socket: %s", strerror(-n));
	ret = sd_sock_dump_count(0, &mine);
	/* Its own socket, as uid 0; host root's (uid 0 outside) unseen. */
	CHECK(ret == 1 && mine == 1, "SOCK_GET: %d sockets, %d of uid 0", ret, mine);
	if (n >= 0)
		close(n);
	return 0;
}

static int own_netns_body(const struct sd_target *t)
{
	__u64 v = ~0ULL;
	int ret, fd;

	CHECK(geteuid() == 0, "not root of the container");
	ret = sd_stats_reset();
	CHECK(ret == 0, "STATS_RESET of its own namespace: %s", strerror(-ret));
	fd = sd_socket(SOCK_STREAM);
	CHECK(fd >= 0, "socket: %s", strerror(-fd));
	ret = sd_stats_get(SMBDIRECT_A_STATS_SOCKETS, &v);
	CHECK(ret == 0 && v == 1, "STATS_GET: %s, %llu sockets (its one)", strerror(-ret),
	      (unsigned long long)v);
	if (fd >= 0)
		close(fd);
	/*
	 * 5445, the module's own rule (ns_capable()); 445 stays refused by
	 * rdma_cm's, which asks capable() (privileged_port_test).
	 */
	ret = bind_port(&(struct sd_target){ .af = AF_INET, .addr = "0.0.0.0" }, SOCK_STREAM, 5445);
	CHECK(ret != -EACCES, "bind 5445 in its own namespace: EACCES");
	return 0;
}

FIXTURE(userns) {
	int l;
};

SD_TARGET_VARIANT(userns);
FIXTURE_VARIANT_ADD(userns, rxe4) { .t = SD_TARGET_RXE4 };

FIXTURE_SETUP(userns)
{
	self->l = -1;
	if (access("/proc/self/ns/user", F_OK))
		SKIP(return, "no user namespaces in this kernel (CONFIG_USER_NS)");
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(userns)
{
	if (self->l >= 0)
		close(self->l);
}

/* The refusals in the host's network namespace, with host root's controls. */
TEST_F_TIMEOUT(userns, host_netns, 120)
{
	int ret, n, mine;
	long cap;

	/* Controls: host root may do what the container may not. */
	ret = bind_port(&variant->t, SOCK_STREAM, 445);
	ASSERT_TRUE(ret == 0 || ret == -EADDRINUSE) TH_LOG("root: bind 445: %s", strerror(-ret));
	ret = bind_port(&variant->t, SOCK_STREAM, 5445);
	ASSERT_TRUE(ret == 0 || ret == -EADDRINUSE) TH_LOG("root: bind 5445: %s", strerror(-ret));
	cap = sd_module_param("unpriv_mem_max");
	ASSERT_LT(0, cap) TH_LOG("unpriv_mem_max is 0: no cap to be refused");
	ASSERT_EQ(0, ask_big_buffers());
	ASSERT_EQ(0, register_over_memlock(&variant->t));
	/* A socket of host root's, which the container must not see. */
	self->l = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, self->l);
	n = sd_sock_dump_count(0, &mine);
	ASSERT_LE(1, mine) TH_LOG("root: %d sockets in the dump", n);

	ret = in_container(0, host_netns_body, &variant->t);
	ASSERT_EQ(0, ret) TH_LOG("%d checks failed in the container", ret);
	EXPECT_EQ(cap, sd_module_param("unpriv_mem_max"));
}

/* A network namespace of its own: its counters, not the host's. */
TEST_F_TIMEOUT(userns, own_netns, 120)
{
	const char *why = "";
	__u64 conn0 = 0, conn1 = 0;
	int c, s, ret;

	/* The host has counted a connection, which the container's reset must not zero. */
	ASSERT_EQ(0, sd_pair_type(&variant->t, SOCK_SEQPACKET, &c, &s, &why)) TH_LOG("%s", why);
	close(c);
	close(s);
	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_CONNECTIONS, &conn0));
	ASSERT_LT(0u, conn0);
	ret = in_container(1, own_netns_body, &variant->t);
	ASSERT_EQ(0, ret) TH_LOG("%d checks failed in the container", ret);
	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_CONNECTIONS, &conn1));
	EXPECT_LE(conn0, conn1) TH_LOG("the container's reset zeroed the host's counters");
}

TEST_HARNESS_MAIN
