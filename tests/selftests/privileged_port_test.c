// SPDX-License-Identifier: GPL-2.0
/*
 * bind() and the privileged ports (issue #26): as for TCP, a port below
 * net.ipv4.ip_unprivileged_port_start needs CAP_NET_BIND_SERVICE in the
 * socket's network namespace, and so does iWARP's SMB-Direct port, 5445,
 * always, on both entry points (the variants: AF_SMBDIRECT over rxe4 and
 * siw6, IPPROTO_SMBDIRECT over rxe6_inet and siw4_inet). A forked child
 * drops the capability with capset(2), root otherwise, and sends the
 * result of each step back through a pipe. Before the fix anyone could
 * bind 5445.
 */
#include <linux/capability.h>
#include <sched.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "sd_test.h"

#define PORT_UNPRIV_START "/proc/sys/net/ipv4/ip_unprivileged_port_start"

FIXTURE(privport) {
	int unused;
};

SD_TARGET_VARIANT(privport);

SD_ADD_TARGET_VARIANTS(privport);

FIXTURE_SETUP(privport)
{
	SD_SETUP_TARGET();
}

FIXTURE_TEARDOWN(privport)
{
}

/* Takes CAP_NET_BIND_SERVICE out of every set of this process; 0 or -errno. */
static int drop_bind_service(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	const __u32 bit = 1u << CAP_NET_BIND_SERVICE;

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[0].effective &= ~bit;
	d[0].permitted &= ~bit;
	d[0].inheritable &= ~bit;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * bind() of a new SOCK_STREAM socket of the variant's entry point to the
 * target's address (or the wildcard of its family) and port; 0 or -errno.
 */
static int try_bind(const struct sd_target *t, bool wildcard, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(t, port, &ss);
	int fd = sd_socket(SOCK_STREAM), ret;

	if (fd < 0)
		return fd;
	if (wildcard && ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (wildcard)
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_any;
	ret = bind(fd, (struct sockaddr *)&ss, len) ? -errno : 0;
	close(fd);
	return ret;
}

#define STEPS 16

struct step {
	const char *what;
	int want;		/* 0 or -errno */
};

/*
 * Runs fn in a child, which fills res[] with each step's 0 or -errno;
 * then checks them against want[] (n steps).
 */
static void in_child(struct __test_metadata *_metadata, const struct sd_target *t,
		     void (*fn)(const struct sd_target *t, int *res),
		     const struct step *want, int n)
{
	int res[STEPS], p[2], status, i;
	ssize_t got;
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (i = 0; i < STEPS; i++)
			res[i] = -ENODATA;
		fn(t, res);
		_exit(write(p[1], res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	close(p[1]);
	got = read(p[0], res, sizeof(res));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(sizeof(res), (size_t)got) TH_LOG("the child sent no results");
	for (i = 0; i < n; i++) {
		EXPECT_EQ(want[i].want, res[i]) TH_LOG("%s: %s, want %s", want[i].what,
						       strerror(-res[i]), strerror(-want[i].want));
	}
}

static void without_cap(const struct sd_target *t, int *res)
{
	res[0] = drop_bind_service();
	res[1] = try_bind(t, false, 5445);
	res[2] = try_bind(t, false, 445);
	res[3] = try_bind(t, false, 1023);
	res[4] = try_bind(t, false, 5446);
	res[5] = try_bind(t, false, 0);
	res[6] = try_bind(t, true, 5445);
}

/*
 * Without CAP_NET_BIND_SERVICE: 5445, 445 and 1023 are EACCES, on the
 * target's address and on the wildcard; 5446 and an ephemeral port bind.
 * With it (the test runs as root), 5445 and 445 bind.
 */
TEST_F(privport, smb_ports_need_cap_net_bind_service)
{
	static const struct step want[] = {
		{ "capset", 0 },
		{ "bind 5445", -EACCES },
		{ "bind 445", -EACCES },
		{ "bind 1023", -EACCES },
		{ "bind 5446", 0 },
		{ "bind 0", 0 },
		{ "bind the wildcard's 5445", -EACCES },
	};

	in_child(_metadata, &variant->t, without_cap, want, ARRAY_SIZE(want));
	EXPECT_EQ(0, try_bind(&variant->t, false, 5445));
	EXPECT_EQ(0, try_bind(&variant->t, false, 445));
}

static void in_netns(const struct sd_target *t, int *res)
{
	res[0] = unshare(CLONE_NEWNET) ? -errno : 0;
	if (res[0])
		return;
	res[1] = drop_bind_service();
	res[2] = try_bind(t, true, 5445);
	res[3] = try_bind(t, true, 5446);
	/* The namespace's own TCP rule; writing it takes CAP_NET_ADMIN only. */
	res[4] = sd_write_str(PORT_UNPRIV_START, "0");
	res[5] = try_bind(t, true, 5445);
	res[6] = try_bind(t, true, 445);
	res[7] = try_bind(t, true, 1024);
}

/*
 * In a network namespace of the child's own (the wildcard address: it has
 * no RDMA device), ip_unprivileged_port_start lowered to 0 frees no SMB
 * port: 5445 stays the module's to refuse, 445 rdma_cm's, which refuses
 * ports below 1024 without CAP_NET_BIND_SERVICE whatever the sysctl.
 */
TEST_F(privport, namespace_unprivileged_port_start)
{
	static const struct step want[] = {
		{ "unshare(CLONE_NEWNET)", 0 },
		{ "capset", 0 },
		{ "bind 5445", -EACCES },
		{ "bind 5446", 0 },
		{ "write ip_unprivileged_port_start 0", 0 },
		{ "bind 5445 (all unprivileged)", -EACCES },
		{ "bind 445 (all unprivileged: rdma_cm's rule)", -EACCES },
		{ "bind 1024 (all unprivileged)", 0 },
	};

	in_child(_metadata, &variant->t, in_netns, want, ARRAY_SIZE(want));
}

TEST_HARNESS_MAIN
