// SPDX-License-Identifier: GPL-2.0
/*
 * What a netlink request costs the module (issue #45 items 7d and 7j),
 * counted by the test build's test_sockets_walked hook: the sockets a
 * request visits under a lock shared by a whole namespace (or by all).
 *
 *   - a SOCK_GET dump visits the caller's namespace's sockets once each,
 *     never another namespace's, and resumes each batch where the last
 *     one ended (before: each batch of 16 rescanned every namespace's
 *     sockets from the start under one global lock with bottom halves
 *     off: O(N^2) for an unprivileged user);
 *   - STATS_GET and STATS_RESET visit no socket (before: every socket of
 *     the namespace, under the global stats lock with bottom halves off).
 *
 * The sockets are plain socket()s: no device, no connection.
 */
#include <sched.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sd_test.h"
#include "sd_genl_test.h"

#define WALKED "/sys/kernel/debug/af_smbdirect/test_sockets_walked"
#define OURS 200
#define THEIRS 200

static long walked(void)
{
	long v = -1;

	return sd_read_long(WALKED, &v) ? -1 : v;
}

FIXTURE(cost) {
	int fd[OURS];
	pid_t other;
	int hold[2];
};

FIXTURE_SETUP(cost)
{
	int i, ready[2];
	char b;

	self->other = 0;
	self->hold[0] = self->hold[1] = -1;
	for (i = 0; i < OURS; i++)
		self->fd[i] = -1;
	ASSERT_LT(0, sd_family()) TH_LOG("af_smbdirect is not loaded");
	if (access(WALKED, F_OK))
		SKIP(return, "not a test build (no %s)", WALKED);
	/* Another namespace's sockets, held by a child until teardown. */
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(self->hold));
	self->other = fork();
	ASSERT_LE(0, self->other);
	if (!self->other) {
		int n = 0;

		close(ready[0]);
		close(self->hold[1]);
		if (!unshare(CLONE_NEWNET))
			for (n = 0; n < THEIRS; n++)
				if (sd_socket(SOCK_STREAM) < 0)
					break;
		b = n == THEIRS;
		if (write(ready[1], &b, 1) != 1)
			_exit(1);
		/* Until the parent closes its end. */
		if (read(self->hold[0], &b, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(self->hold[0]);
	self->hold[0] = -1;
	ASSERT_EQ(1, read(ready[0], &b, 1));
	close(ready[0]);
	ASSERT_EQ(1, b) TH_LOG("the other namespace's sockets");
	for (i = 0; i < OURS; i++) {
		self->fd[i] = sd_socket(i % 2 ? SOCK_SEQPACKET : SOCK_STREAM);
		ASSERT_LE(0, self->fd[i]);
	}
}

FIXTURE_TEARDOWN(cost)
{
	int i;

	for (i = 0; i < OURS; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
	if (self->hold[1] >= 0)
		close(self->hold[1]);
	if (self->other > 0)
		waitpid(self->other, NULL, 0);
}

TEST_F(cost, dump_visits_each_own_socket_once)
{
	int n, mine;
	long w;

	ASSERT_EQ(0, sd_write_str(WALKED, "0"));
	n = sd_sock_dump_count(0, &mine);
	w = walked();
	ksft_print_msg("SOCK_GET: %d sockets shown, %ld visited (%d ours, %d in another namespace)\n",
		       n, w, OURS, THEIRS);
	ASSERT_LE(OURS, n);
	/*
	 * Linear: each socket once, and again those of a batch that did
	 * not fit in the reply's skb (the next recv() resumes at them).
	 */
	EXPECT_GE(2 * n, w);
}

TEST_F(cost, stats_visit_no_socket)
{
	__u64 v = 0;
	long w;

	ASSERT_EQ(0, sd_write_str(WALKED, "0"));
	ASSERT_EQ(0, sd_stats_get(SMBDIRECT_A_STATS_SOCKETS, &v));
	w = walked();
	ksft_print_msg("STATS_GET: %llu sockets counted, %ld visited\n", (unsigned long long)v, w);
	EXPECT_LE((__u64)OURS, v);
	EXPECT_EQ(0, w);
	ASSERT_EQ(0, sd_write_str(WALKED, "0"));
	ASSERT_EQ(0, sd_stats_reset());
	w = walked();
	ksft_print_msg("STATS_RESET: %ld visited\n", w);
	EXPECT_EQ(0, w);
}

TEST_HARNESS_MAIN
