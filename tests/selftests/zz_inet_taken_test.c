// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel that serves IPPROTO_SMBDIRECT itself (upstream's April 2026
 * series registers an in-kernel one at 257): af_smbdirect loaded after it
 * leaves socket(AF_INET[6], SOCK_STREAM, 257) alone, reads its
 * inet_protocol parameter back as 0, and AF_SMBDIRECT keeps working
 * (issue #26, upstream readiness). The owner is sd_stub_inet.ko
 * (tests/kmod/stub_inet.c, built beside the test module), whose sockets
 * are refused with EHOSTDOWN: the error tells whose entry socket()
 * reached, and a socket that fails there cannot be the module's.
 *
 * This unloads the module the other tests need, so it runs after them and
 * before zz_rmmod_test (glob order), and leaves af_smbdirect loaded
 * without the stub, as it found it, whatever happens.
 */
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "sd_test.h"

#define INET_PARAM "/sys/module/af_smbdirect/parameters/inet_protocol"
#define STUB "sd_stub_inet"

static pid_t harness_pid;

static bool loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

/*
 * delete_module(), retried for up to 30 s while the module is in use: the
 * tests before this one (zz_device_test) leave sockets whose teardown is
 * deferred, and each pins the module until it ends.
 */
static int unload(const char *name)
{
	long end = sd_now_ms() + 30000;
	int ret;

	for (;;) {
		if (!loaded(name))
			return 0;
		ret = syscall(__NR_delete_module, name, O_NONBLOCK) ? -errno : 0;
		if ((ret != -EWOULDBLOCK && ret != -EBUSY) || sd_now_ms() >= end)
			return ret;
		sd_sleep_ms(100);
	}
}

/* finit_module() of SD_MODULE_DIR/name.ko: no insmod process to start. */
static int load(const char *name)
{
	const char *dir = getenv("SD_MODULE_DIR");
	char path[512];
	int fd, ret;

	if (!dir || !*dir)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s.ko", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(__NR_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* errno of socket(af, SOCK_STREAM, 257), 0 if it made a socket. */
static int inet_socket_errno(int af)
{
	int fd = socket(af, SOCK_STREAM, SMBDIRECT_IPPROTO);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* One message over an AF_SMBDIRECT STREAM pair on rxe4; 0 or -errno. */
static int af_smbdirect_pair(void)
{
	const struct sd_target t = SD_TARGET_RXE4;
	int lfd, port = 0, ret;

	lfd = sd_listen_type(&t, SOCK_STREAM, 4, &port);
	if (lfd < 0)
		return lfd;
	ret = sd_stream_pair_once(&t, lfd, port, "taken");
	close(lfd);
	return ret;
}

static void __attribute__((constructor)) remember_harness(void)
{
	harness_pid = getpid();
}

/* As found: the stub gone, af_smbdirect loaded with its own inet entry. */
static void __attribute__((destructor)) put_back(void)
{
	if (getpid() != harness_pid)
		return;
	if (loaded(STUB)) {
		unload("af_smbdirect");
		unload(STUB);
	}
	if (!loaded("af_smbdirect") && load("af_smbdirect"))
		fprintf(stderr, "# zz_inet_taken_test: could not load af_smbdirect again\n");
}

FIXTURE(taken) {
	int unused;
};

FIXTURE_SETUP(taken)
{
}

FIXTURE_TEARDOWN(taken)
{
}

/*
 * Three loads of a test build. Each runs its KUnit suites (~25 s on 6.12's
 * debug kernel) unless kunit's filter_glob excludes them, as make check's
 * boots do after the first load (tests/vm/guest/check.sh).
 */
TEST_F_TIMEOUT(taken, kernel_owns_ipproto_smbdirect, 240)
{
	long proto = -1;

	ASSERT_TRUE(loaded("af_smbdirect")) TH_LOG("af_smbdirect is not loaded");
	if (!getenv("SD_MODULE_DIR"))
		SKIP(return, "no SD_MODULE_DIR: not the test VM");
	ASSERT_EQ(0, sd_read_long(INET_PARAM, &proto));
	ASSERT_EQ(SMBDIRECT_IPPROTO, proto) TH_LOG("the module was loaded without its inet entry");
	ASSERT_EQ(0, unload("af_smbdirect")) TH_LOG("af_smbdirect still in use");
	ASSERT_EQ(0, load(STUB)) TH_LOG("%s.ko not loaded: not a test build?", STUB);
	ASSERT_EQ(EHOSTDOWN, inet_socket_errno(AF_INET)) TH_LOG("the stub does not own 257");

	ASSERT_EQ(0, load("af_smbdirect"));
	/* Left to the kernel's owner, and said so. */
	ASSERT_EQ(0, sd_read_long(INET_PARAM, &proto));
	EXPECT_EQ(0, proto) TH_LOG("inet_protocol reads %ld with 257 taken", proto);
	EXPECT_EQ(EHOSTDOWN, inet_socket_errno(AF_INET))
		TH_LOG("socket(AF_INET, SOCK_STREAM, 257): %s, want the owner's EHOSTDOWN",
		       strerror(inet_socket_errno(AF_INET)));
	/* The owner has no AF_INET6 entry here; the module takes none either. */
	EXPECT_EQ(EPROTONOSUPPORT, inet_socket_errno(AF_INET6));
	/* AF_SMBDIRECT is unaffected. */
	EXPECT_EQ(0, af_smbdirect_pair());

	/* Without the owner, the module takes 257 again. */
	ASSERT_EQ(0, unload("af_smbdirect"));
	ASSERT_EQ(0, unload(STUB));
	ASSERT_EQ(0, load("af_smbdirect"));
	ASSERT_EQ(0, sd_read_long(INET_PARAM, &proto));
	EXPECT_EQ(SMBDIRECT_IPPROTO, proto);
	EXPECT_EQ(0, inet_socket_errno(AF_INET));
}

TEST_HARNESS_MAIN
