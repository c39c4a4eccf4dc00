// SPDX-License-Identifier: GPL-2.0
/*
 * The module is pinned while any of its sockets exists (unconnected,
 * listening or connected): rmmod is refused as "in use". Once they are all
 * closed it unloads cleanly, and loads again.
 *
 * This unloads the module the other tests need, so it runs last (check.sh
 * runs the binaries in glob order) and loads it again from $SD_MODULE_DIR,
 * whatever happens, before it exits.
 */
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "sd_test.h"

#define REFCNT "/sys/module/af_smbdirect/refcnt"
#define INET_PARAM "/sys/module/af_smbdirect/parameters/inet_protocol"

static pid_t harness_pid;

static int module_loaded(void)
{
	return access("/sys/module/af_smbdirect", F_OK) == 0;
}

/* Loads the module again if a test left it unloaded; 0 if it is loaded. */
static int reload(void)
{
	const char *dir = getenv("SD_MODULE_DIR");
	char cmd[512];

	if (module_loaded())
		return 0;
	if (!dir || !*dir)
		return -ENOENT;
	/* Its KUnit suites run again unless filtered out (guest/check.sh); not collected. */
	snprintf(cmd, sizeof(cmd), "insmod '%s/af_smbdirect.ko'", dir);
	if (system(cmd) != 0)
		return -EIO;
	return module_loaded() ? 0 : -EIO;
}

static void __attribute__((constructor)) remember_harness(void)
{
	harness_pid = getpid();
}

static void __attribute__((destructor)) leave_it_loaded(void)
{
	if (getpid() == harness_pid && reload())
		fprintf(stderr, "# zz_rmmod_test: could not load af_smbdirect again\n");
}

static int try_unload(void)
{
	return syscall(__NR_delete_module, "af_smbdirect", O_NONBLOCK) ? -errno : 0;
}

FIXTURE(rmmod) {
	int fds[4];
};

FIXTURE_SETUP(rmmod)
{
	int i;

	for (i = 0; i < 4; i++)
		self->fds[i] = -1;
	ASSERT_EQ(0, reload()) TH_LOG("af_smbdirect is not loaded and SD_MODULE_DIR cannot load it");
}

FIXTURE_TEARDOWN(rmmod)
{
	int i;

	for (i = 0; i < 4; i++)
		if (self->fds[i] >= 0)
			close(self->fds[i]);
	reload();
}

static void expect_refused(struct __test_metadata *_metadata, const char *what)
{
	long refs = -1;
	int r;

	EXPECT_EQ(0, sd_read_long(REFCNT, &refs));
	EXPECT_LT(0, refs) TH_LOG("%s: refcnt %ld", what, refs);
	r = try_unload();
	EXPECT_TRUE(r == -EWOULDBLOCK || r == -EBUSY) TH_LOG("%s: delete_module gave %d", what, r);
	EXPECT_TRUE(module_loaded()) TH_LOG("%s: the module went away under its socket", what);
	r = system("rmmod af_smbdirect 2>/dev/null");
	EXPECT_NE(0, r) TH_LOG("%s: rmmod succeeded", what);
	EXPECT_TRUE(module_loaded());
}

/* After the last close, the reference goes away (teardown may be deferred). */
static int wait_unpinned(int ms)
{
	long end = sd_now_ms() + ms, refs = -1;

	while (sd_now_ms() < end) {
		if (sd_read_long(REFCNT, &refs) == 0 && refs == 0)
			return 0;
		sd_sleep_ms(100);
	}
	return (int)refs;
}

TEST_F_TIMEOUT(rmmod, refused_while_sockets_exist_then_clean, 120)
{
	static const struct sd_target rxe = SD_TARGET_RXE4;
	const char *why = "";
	int port, r;

	if (!getenv("SD_MODULE_DIR"))
		SKIP(return, "SD_MODULE_DIR is not set: could not load the module again");

	/* An unconnected socket. */
	self->fds[0] = sd_socket(SOCK_STREAM);
	ASSERT_LE(0, self->fds[0]) TH_LOG("socket: %s", strerror(-self->fds[0]));
	expect_refused(_metadata, "unconnected socket");
	close(self->fds[0]);
	self->fds[0] = -1;
	EXPECT_EQ(0, wait_unpinned(10000)) TH_LOG("a closed socket still pins the module");

	/* An IPPROTO_SMBDIRECT socket of each inet family. */
	self->fds[0] = socket(AF_INET, SOCK_STREAM, IPPROTO_SMBDIRECT);
	self->fds[3] = socket(AF_INET6, SOCK_STREAM, IPPROTO_SMBDIRECT);
	ASSERT_LE(0, self->fds[0]) TH_LOG("AF_INET socket: %s", strerror(errno));
	ASSERT_LE(0, self->fds[3]) TH_LOG("AF_INET6 socket: %s", strerror(errno));
	expect_refused(_metadata, "IPPROTO_SMBDIRECT sockets");
	close(self->fds[0]);
	close(self->fds[3]);
	self->fds[0] = self->fds[3] = -1;
	EXPECT_EQ(0, wait_unpinned(10000)) TH_LOG("closed inet sockets still pin the module");

	if (sd_have_device(&rxe)) {
		/* A listener. */
		self->fds[0] = sd_listen_type(&rxe, SOCK_SEQPACKET, 1, &port);
		ASSERT_LE(0, self->fds[0]) TH_LOG("listen: %s", strerror(-self->fds[0]));
		expect_refused(_metadata, "listener");
		close(self->fds[0]);
		self->fds[0] = -1;

		/* A connected pair, the peer of each in this same process. */
		r = sd_pair_type(&rxe, SOCK_STREAM, &self->fds[1], &self->fds[2], &why);
		ASSERT_EQ(0, r) TH_LOG("%s: %s", why, strerror(-r));
		ASSERT_EQ(0, sd_stream_send(self->fds[1], "pin", 3));
		expect_refused(_metadata, "connected pair");
		close(self->fds[1]);
		close(self->fds[2]);
		self->fds[1] = self->fds[2] = -1;
	} else {
		TH_LOG("no rxe0: listener and connected cases not run");
	}

	r = wait_unpinned(30000);
	ASSERT_EQ(0, r) TH_LOG("refcnt still %d 30 s after the last close", r);
	r = system("rmmod af_smbdirect");
	EXPECT_EQ(0, r);
	EXPECT_FALSE(module_loaded());
	/* The family slot is free again: nothing answers for it. */
	EXPECT_EQ(-ENOENT, sd_family());
	/* Neither does the protocol number. */
	r = socket(AF_INET, SOCK_STREAM, IPPROTO_SMBDIRECT);
	EXPECT_EQ(-1, r);
	EXPECT_EQ(EPROTONOSUPPORT, errno);
	if (r >= 0)
		close(r);

	ASSERT_EQ(0, reload());
	self->fds[0] = sd_socket(SOCK_SEQPACKET);
	EXPECT_LE(0, self->fds[0]) TH_LOG("socket after reload: %s", strerror(-self->fds[0]));
	if (sd_have_device(&rxe)) {
		r = sd_pair_type(&rxe, SOCK_STREAM, &self->fds[1], &self->fds[2], &why);
		EXPECT_EQ(0, r) TH_LOG("after reload, %s: %s", why, strerror(-r));
	}
}

#define SERVED_LINE "socket(AF_INET, SOCK_STREAM, 6) is already served by the running kernel"

/* How many lines of dmesg contain text. */
static int dmesg_count(const char *text)
{
	char cmd[256], buf[32] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "dmesg | grep -c -F '%s'", text);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	pclose(f);
	return atoi(buf);
}

/*
 * A kernel that already serves the protocol number keeps it: the module
 * loads without its inet entry point (inet_protocol reads 0, one line in
 * dmesg) and AF_SMBDIRECT works. Shown with TCP's number, which every
 * kernel serves for SOCK_STREAM.
 */
TEST_F_TIMEOUT(rmmod, protocol_already_served_is_left_alone, 60)
{
	const char *dir = getenv("SD_MODULE_DIR");
	char cmd[512];
	long v = -1;
	int fd, before;

	if (!dir)
		SKIP(return, "SD_MODULE_DIR is not set: could not load the module again");
	ASSERT_EQ(0, wait_unpinned(30000));
	ASSERT_EQ(0, system("rmmod af_smbdirect"));
	before = dmesg_count(SERVED_LINE);
	snprintf(cmd, sizeof(cmd), "insmod '%s/af_smbdirect.ko' inet_protocol=%d", dir,
		 IPPROTO_TCP);
	ASSERT_EQ(0, system(cmd));
	EXPECT_EQ(0, sd_read_long(INET_PARAM, &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(before + 1, dmesg_count(SERVED_LINE))
		TH_LOG("no (single) dmesg line saying the protocol was left alone");
	/* TCP still answers it, not us. */
	fd = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, getsockopt(fd, SOL_SMBDIRECT, SMBDIRECT_OPT_SEND_CREDIT_TARGET,
				 &(int){ 0 }, &(socklen_t){ sizeof(int) }));
	close(fd);
	self->fds[0] = sd_socket(SOCK_STREAM);
	EXPECT_LE(0, self->fds[0]) TH_LOG("AF_SMBDIRECT: %s", strerror(-self->fds[0]));
	close(self->fds[0]);
	self->fds[0] = -1;
	ASSERT_EQ(0, wait_unpinned(10000));
	ASSERT_EQ(0, system("rmmod af_smbdirect"));
	/* The teardown loads it again with the defaults. */
}

TEST_HARNESS_MAIN
