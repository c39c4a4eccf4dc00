// SPDX-License-Identifier: GPL-2.0
/*
 * The module's load-time state, as uapi/linux/smbdirect.h documents it:
 * the module is live, the address family it took is published read-only,
 * is one of the documented candidates (or the forced one), and sockets of
 * that family reach this module.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/smbdirect.h>

#include "kselftest_harness.h"
#include "sd_test.h"

static int read_int_file(const char *path, int *value)
{
	long v = -1;
	int ret = sd_read_long(path, &v);

	*value = (int)v;
	return ret;
}

TEST(module_is_live)
{
	char buf[32] = {};
	int fd = open("/sys/module/af_smbdirect/initstate", O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_LT(0, read(fd, buf, sizeof(buf) - 1));
	close(fd);
	EXPECT_STREQ("live\n", buf);
}

TEST(family_is_a_documented_candidate)
{
	static const int candidates[] = SMBDIRECT_FAMILY_CANDIDATES;
	int family = -1, i, found = 0;

	ASSERT_EQ(0, read_int_file(SMBDIRECT_FAMILY_SYSFS, &family));
	for (i = 0; i < SMBDIRECT_FAMILY_NR_CANDIDATES; i++)
		found |= candidates[i] == family;
	EXPECT_TRUE(found) TH_LOG("family %d is not in SMBDIRECT_FAMILY_CANDIDATES", family);
}

TEST(family_parameter_is_read_only)
{
	int fd = open(SMBDIRECT_FAMILY_SYSFS, O_WRONLY);

	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EACCES, errno);
	if (fd >= 0)
		close(fd);
}

TEST(family_reaches_this_module)
{
	int family = -1;
	int fd;

	ASSERT_EQ(0, read_int_file(SMBDIRECT_FAMILY_SYSFS, &family));
	/*
	 * An unregistered family gives EAFNOSUPPORT; ours answers for itself.
	 * Socket types it does not implement are refused by the module.
	 */
	fd = socket(family, SOCK_RAW, 0);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(ESOCKTNOSUPPORT, errno);
	if (fd >= 0)
		close(fd);
	fd = socket(family, SOCK_DGRAM, 0);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(ESOCKTNOSUPPORT, errno);
	if (fd >= 0)
		close(fd);
}

/* The two types of uapi/linux/smbdirect.h open, with their flags. */
TEST(stream_and_seqpacket_sockets_open)
{
	static const int types[] = { SOCK_STREAM, SOCK_SEQPACKET };
	int family = -1, i, fd, v;
	socklen_t len;

	ASSERT_EQ(0, read_int_file(SMBDIRECT_FAMILY_SYSFS, &family));
	for (i = 0; i < 2; i++) {
		fd = socket(family, types[i] | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		ASSERT_LE(0, fd) TH_LOG("type %d: %s", types[i], strerror(errno));
		len = sizeof(v);
		EXPECT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len));
		EXPECT_EQ(types[i], v);
		EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
		EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		close(fd);
	}
	/* Protocol 0 is the only one. */
	fd = socket(family, SOCK_STREAM, 6);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EPROTONOSUPPORT, errno);
	if (fd >= 0)
		close(fd);
}

/*
 * Linux 7.x has an in-tree module named smbdirect (cifs and ksmbd use it);
 * ours is named af_smbdirect so both can be loaded at once.
 */
TEST(coexists_with_in_tree_smbdirect)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	int in_tree = 0, ours = 0;

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, " smbdirect_socket_create_kern") &&
		    !strstr(line, "[af_smbdirect]"))
			in_tree = 1;
		if (strstr(line, " af_smbdirect_family_pick\t[af_smbdirect]") ||
		    strstr(line, " af_smbdirect_family_pick [af_smbdirect]"))
			ours = 1;
	}
	fclose(f);
	if (!in_tree)
		SKIP(return, "this kernel has no in-tree smbdirect");
	EXPECT_TRUE(ours);
}

TEST_HARNESS_MAIN
