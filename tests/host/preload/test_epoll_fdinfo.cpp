// SPDX-License-Identifier: GPL-2.0
/* Finding a socket's epoll registrations in /proc/self/fdinfo (parsing). */
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "epoll_fdinfo.hpp"

using namespace sd::preload;

namespace {

/* As fs/eventpoll.c (ep_show_fdinfo) prints them, after the file's header. */
const char *const sample =
	"pos:\t0\n"
	"flags:\t02000002\n"
	"mnt_id:\t15\n"
	"ino:\t1057\n"
	"tfd:        5 events: 80000019 data: 5d00c0ffee000001  pos:0 ino:2f4b sdev:8\n"
	"tfd:       12 events:       19 data:                c  pos:0 ino:2f50 sdev:8\n"
	"tfd:        5 events:        1 data:                5  pos:0 ino:1a sdev:8\n";

} // namespace

TEST(PreloadFdinfo, ParsesARegistrationLine)
{
	std::optional<FdinfoWatch> w = parse_fdinfo_watch(
		"tfd:        5 events: 80000019 data: 5d00c0ffee000001  pos:0 ino:2f4b sdev:8");
	ASSERT_TRUE(w);
	EXPECT_EQ(w->tfd, 5);
	EXPECT_EQ(w->events, 0x80000019u); /* EPOLLET|EPOLLHUP|EPOLLERR|EPOLLIN */
	EXPECT_EQ(w->data, 0x5d00c0ffee000001ull);
	ASSERT_TRUE(w->ino);
	EXPECT_EQ(*w->ino, 0x2f4bu);
}

TEST(PreloadFdinfo, OtherLinesAndDamagedOnesAreNotRegistrations)
{
	EXPECT_FALSE(parse_fdinfo_watch("pos:\t0"));
	EXPECT_FALSE(parse_fdinfo_watch("ino:\t1057"));
	EXPECT_FALSE(parse_fdinfo_watch(""));
	EXPECT_FALSE(parse_fdinfo_watch("tfd: x events: 1 data: 2"));
	EXPECT_FALSE(parse_fdinfo_watch("tfd: 5 events: 1"));
	EXPECT_FALSE(parse_fdinfo_watch("tfd: 5 events: 100000000 data: 1"));
	EXPECT_FALSE(parse_fdinfo_watch("tfd: 99999999999 events: 1 data: 1"));
	EXPECT_FALSE(parse_fdinfo_watch("tfd: 5 events: 1 data: 11111111111111111"));
	/* "ino:" of the watch, not a longer key that ends like it. */
	std::optional<FdinfoWatch> w = parse_fdinfo_watch("tfd: 5 events: 1 data: 2 xino:7");
	ASSERT_TRUE(w);
	EXPECT_FALSE(w->ino);
}

TEST(PreloadFdinfo, OldKernelsWithoutInoMatchByFdAlone)
{
	std::optional<FdinfoWatch> w =
		parse_fdinfo_watch("tfd:        7 events:       19 data:  7");
	ASSERT_TRUE(w);
	EXPECT_FALSE(w->ino);
	EXPECT_TRUE(watches_socket(*w, 7, 12345));
	EXPECT_FALSE(watches_socket(*w, 8, 12345));
}

TEST(PreloadFdinfo, MatchesFdAndInode)
{
	FdinfoWatch out[4];
	FdinfoScan r = scan_epoll_fdinfo(sample, true, 5, 0x2f4b, out, 4);
	EXPECT_EQ(r.consumed, std::strlen(sample));
	ASSERT_EQ(r.found, 1u);
	EXPECT_EQ(out[0].data, 0x5d00c0ffee000001ull);
	/* fd 5's other registration is of an older file (ino 1a). */
	r = scan_epoll_fdinfo(sample, true, 5, 0x1a, out, 4);
	ASSERT_EQ(r.found, 1u);
	EXPECT_EQ(out[0].events, 1u);
	EXPECT_EQ(scan_epoll_fdinfo(sample, true, 12, 0x2f4b, out, 4).found, 0u);
	EXPECT_EQ(scan_epoll_fdinfo(sample, true, 6, 0x2f4b, out, 4).found, 0u);
}

TEST(PreloadFdinfo, PiecesLeaveTheUnfinishedLine)
{
	std::string text = sample;
	for (std::size_t cut = 0; cut <= text.size(); cut++) {
		FdinfoWatch out[2];
		FdinfoScan a = scan_epoll_fdinfo(std::string_view(text).substr(0, cut), false, 12,
						 0x2f50, out, 2);
		ASSERT_LE(a.consumed, cut);
		/* Only whole lines were taken. */
		ASSERT_TRUE(a.consumed == 0 || text[a.consumed - 1] == '\n') << cut;
		FdinfoScan b = scan_epoll_fdinfo(std::string_view(text).substr(a.consumed), true,
						 12, 0x2f50, out + a.found, 2 - a.found);
		EXPECT_EQ(a.found + b.found, 1u) << cut;
		EXPECT_EQ(out[0].data, 0xcu) << cut;
	}
	/* At the end a last line without a newline counts. */
	FdinfoWatch out[1];
	EXPECT_EQ(scan_epoll_fdinfo("tfd: 3 events: 4 data: 5 ino:6", true, 3, 6, out, 1).found,
		  1u);
	EXPECT_EQ(scan_epoll_fdinfo("tfd: 3 events: 4 data: 5 ino:6", false, 3, 6, out, 1).found,
		  0u);
}

TEST(PreloadFdinfo, MoreThanRoomIsCounted)
{
	std::string text;
	for (int i = 0; i < 5; i++)
		text += "tfd: 9 events: 1 data: " + std::to_string(i) + " pos:0 ino:a sdev:8\n";
	FdinfoWatch out[2];
	FdinfoScan r = scan_epoll_fdinfo(text, true, 9, 0xa, out, 2);
	EXPECT_EQ(r.found, 5u);
	EXPECT_EQ(out[0].data, 0u);
	EXPECT_EQ(out[1].data, 1u);
}

TEST(PreloadFdinfo, EventpollLink)
{
	EXPECT_TRUE(is_eventpoll_link("anon_inode:[eventpoll]"));
	EXPECT_FALSE(is_eventpoll_link("anon_inode:[eventfd]"));
	EXPECT_FALSE(is_eventpoll_link("socket:[1234]"));
	EXPECT_FALSE(is_eventpoll_link("anon_inode:[eventpoll"));
}

/* The format as this kernel prints it: a real epoll set, a real socket. */
TEST(PreloadFdinfo, ThisKernelsFormat)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_GE(ep, 0);
	ASSERT_GE(s, 0);
	struct epoll_event ev = {};
	ev.events = EPOLLIN | EPOLLOUT | EPOLLET;
	ev.data.u64 = 0x1234567890abcdefull;
	ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev), 0);
	struct stat st;
	ASSERT_EQ(fstat(s, &st), 0);
	char path[64], link[64] = {};
	std::snprintf(path, sizeof(path), "/proc/self/fd/%d", ep);
	ssize_t l = readlink(path, link, sizeof(link) - 1);
	ASSERT_GT(l, 0);
	EXPECT_TRUE(is_eventpoll_link(std::string_view(link, static_cast<std::size_t>(l))));
	std::snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
	FILE *f = std::fopen(path, "r");
	ASSERT_NE(f, nullptr);
	char buf[4096];
	std::size_t n = std::fread(buf, 1, sizeof(buf), f);
	std::fclose(f);
	FdinfoWatch out[1];
	FdinfoScan r = scan_epoll_fdinfo(std::string_view(buf, n), true, s, st.st_ino, out, 1);
	ASSERT_EQ(r.found, 1u) << std::string(buf, n);
	/* The kernel adds EPOLLERR|EPOLLHUP to every registration. */
	EXPECT_EQ(out[0].events, ev.events | EPOLLERR | EPOLLHUP);
	EXPECT_EQ(out[0].data, ev.data.u64);
	close(s);
	close(ep);
}
