// SPDX-License-Identifier: GPL-2.0
/* `smbdirect ss -p`: sockets to processes from a /proc of the test's own. */
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

#include "proc_users.hpp"

namespace fs = std::filesystem;
using namespace sd::tool;

namespace
{

class FakeProc : public ::testing::Test {
    protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/sd_proc_users.XXXXXX";
		ASSERT_NE(mkdtemp(tmpl), nullptr);
		root_ = tmpl;
	}
	void TearDown() override
	{
		fs::remove_all(root_);
	}
	void process(int pid, const std::string &comm)
	{
		fs::create_directories(root_ / std::to_string(pid) / "fd");
		std::ofstream(root_ / std::to_string(pid) / "comm") << comm << "\n";
	}
	void fd(int pid, int n, const std::string &target)
	{
		fs::create_symlink(target, root_ / std::to_string(pid) / "fd" / std::to_string(n));
	}
	fs::path root_;
};

} // namespace

TEST_F(FakeProc, SocketsToProcesses)
{
	process(12, "smbd");
	fd(12, 0, "/dev/null");
	fd(12, 3, "socket:[4242]");
	fd(12, 9, "socket:[4243]");
	fd(12, 5, "socket:[4242]"); /* dup'd */
	process(7, "python3");
	fd(7, 4, "socket:[4242]"); /* inherited */
	fd(7, 6, "pipe:[4242]");
	process(30, "other");
	fd(30, 3, "socket:[9999]");
	fs::create_directories(root_ / "self"); /* not a pid */
	fs::create_directories(root_ / "99");	/* no fd directory: skipped */
	std::ofstream(root_ / "net") << "x";

	ProcUsers all = scan_proc_users(root_.string());
	ASSERT_EQ(all.size(), 3u);
	ASSERT_EQ(all[4242].size(), 3u);
	EXPECT_EQ(format_users(all[4242]),
		  "users:((\"python3\",pid=7,fd=4),(\"smbd\",pid=12,fd=3),(\"smbd\",pid=12,fd=5))");
	EXPECT_EQ(format_users(all[4243]), "users:((\"smbd\",pid=12,fd=9))");
	EXPECT_EQ(format_users(all[9999]), "users:((\"other\",pid=30,fd=3))");

	ProcUsers some = scan_proc_users(root_.string(), { 4243, 1 });
	ASSERT_EQ(some.size(), 1u);
	EXPECT_EQ(some.begin()->first, 4243u);
	EXPECT_EQ(some.begin()->second[0].comm, "smbd");
}

TEST_F(FakeProc, MissingRootAndEmptyList)
{
	EXPECT_TRUE(scan_proc_users((root_ / "nonexistent").string()).empty());
	EXPECT_EQ(format_users({}), "");
}

TEST(ToolProcUsers, SocketInode)
{
	EXPECT_EQ(socket_inode("socket:[123]"), 123u);
	EXPECT_EQ(socket_inode("socket:[18446744073709551615]"), 18446744073709551615ULL);
	EXPECT_EQ(socket_inode("socket:[]"), 0u);
	EXPECT_EQ(socket_inode("socket:[12x]"), 0u);
	EXPECT_EQ(socket_inode("pipe:[123]"), 0u);
	EXPECT_EQ(socket_inode("socket:[123"), 0u);
	EXPECT_EQ(socket_inode("anon_inode:[eventpoll]"), 0u);
}
