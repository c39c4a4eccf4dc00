// SPDX-License-Identifier: GPL-2.0
/* What of a TCP socket's state its SMB-Direct replacement takes over. */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <climits>
#include <cstring>
#include <netinet/in.h>

#include "socket_state.hpp"

using namespace sd::preload;

namespace {

/* What a fresh TCP socket on Linux reads like. */
SocketState fresh_tcp()
{
	SocketState s;
	s.keepalive = 0;
	s.rcvbuf = 131072;
	s.sndbuf = 16384;
	Endpoint any;
	any.family = AF_INET;
	s.local = any;
	return s;
}

Endpoint endpoint4(const char *host, uint16_t port)
{
	struct sockaddr_in sin = {};
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	inet_pton(AF_INET, host, &sin.sin_addr);
	return *parse_endpoint(reinterpret_cast<struct sockaddr *>(&sin), sizeof(sin));
}

} // namespace

TEST(PreloadState, UntouchedSocketCarriesNothing)
{
	Carry c = carry_over(fresh_tcp(), fresh_tcp());
	EXPECT_FALSE(c.keepalive);
	EXPECT_FALSE(c.rcvbuf);
	EXPECT_FALSE(c.sndbuf);
	EXPECT_FALSE(c.rcvtimeo);
	EXPECT_FALSE(c.sndtimeo);
	EXPECT_FALSE(c.linger);
	EXPECT_FALSE(c.bind);
	EXPECT_FALSE(c.v6only_lost);
}

TEST(PreloadState, WhatTheProgramChangedIsCarried)
{
	SocketState p = fresh_tcp();
	p.keepalive = 1;
	p.rcvbuf = 2 * 1048576;
	p.sndbuf = 2 * 65536;
	p.rcvtimeo = {3, 500000};
	p.sndtimeo = {0, 250000};
	p.linger = {1, 7};
	Carry c = carry_over(p, fresh_tcp());
	ASSERT_TRUE(c.keepalive);
	EXPECT_EQ(*c.keepalive, 1);
	/* getsockopt reads twice what was set: set half to read the same. */
	ASSERT_TRUE(c.rcvbuf);
	EXPECT_EQ(*c.rcvbuf, 1048576);
	ASSERT_TRUE(c.sndbuf);
	EXPECT_EQ(*c.sndbuf, 65536);
	ASSERT_TRUE(c.rcvtimeo);
	EXPECT_EQ(c.rcvtimeo->tv_sec, 3);
	EXPECT_EQ(c.rcvtimeo->tv_usec, 500000);
	ASSERT_TRUE(c.sndtimeo);
	EXPECT_EQ(c.sndtimeo->tv_usec, 250000);
	ASSERT_TRUE(c.linger);
	EXPECT_EQ(c.linger->l_onoff, 1);
	EXPECT_EQ(c.linger->l_linger, 7);
}

TEST(PreloadState, KeepaliveOffIsCarriedWhenDefaultIsOn)
{
	/* Nothing to carry when the program left TCP's default: SMB-Direct keeps its own. */
	SocketState fresh = fresh_tcp();
	fresh.keepalive = 1;
	SocketState p = fresh;
	p.keepalive = 0;
	Carry c = carry_over(p, fresh);
	ASSERT_TRUE(c.keepalive);
	EXPECT_EQ(*c.keepalive, 0);
}

TEST(PreloadState, BoundAddressOrPortIsCarried)
{
	SocketState p = fresh_tcp();
	p.local = endpoint4("10.77.0.1", 0);
	Carry c = carry_over(p, fresh_tcp());
	ASSERT_TRUE(c.bind);
	char buf[64];
	format_endpoint(*c.bind, buf, sizeof(buf));
	EXPECT_STREQ(buf, "10.77.0.1:0");

	p.local = endpoint4("0.0.0.0", 40000);
	c = carry_over(p, fresh_tcp());
	ASSERT_TRUE(c.bind);
	EXPECT_EQ(c.bind->port, 40000);

	p.local.reset();
	EXPECT_FALSE(carry_over(p, fresh_tcp()).bind);
	EXPECT_FALSE(is_bound(endpoint4("0.0.0.0", 0)));
	EXPECT_TRUE(is_bound(endpoint4("127.0.0.1", 0)));
}

TEST(PreloadState, BoundV4MappedAddressIsUnmapped)
{
	struct sockaddr_in6 sin6 = {};
	sin6.sin6_family = AF_INET6;
	inet_pton(AF_INET6, "::ffff:10.77.0.2", &sin6.sin6_addr);
	SocketState p = fresh_tcp();
	p.local = parse_endpoint(reinterpret_cast<struct sockaddr *>(&sin6), sizeof(sin6));
	Carry c = carry_over(p, fresh_tcp());
	ASSERT_TRUE(c.bind);
	EXPECT_EQ(c.bind->family, AF_INET);
}

TEST(PreloadState, V6OnlyIsReportedLost)
{
	SocketState p = fresh_tcp();
	p.v6only = 1;
	EXPECT_TRUE(carry_over(p, fresh_tcp()).v6only_lost);
	EXPECT_FALSE(carry_over(p, fresh_tcp()).v6only);
}

TEST(PreloadState, V6OnlyIsCarriedToAnInet6Replacement)
{
	SocketState p = fresh_tcp();
	p.v6only = 1;
	Carry c = carry_over(p, fresh_tcp(), true);
	ASSERT_TRUE(c.v6only);
	EXPECT_EQ(*c.v6only, 1);
	EXPECT_FALSE(c.v6only_lost);
	/* Not set: nothing to set (the default is the sysctl's, as for TCP). */
	EXPECT_FALSE(carry_over(fresh_tcp(), fresh_tcp(), true).v6only);
}

TEST(PreloadState, MoreSolSocketOptionsAreCarried)
{
	SocketState p = fresh_tcp();
	EXPECT_FALSE(carry_over(p, fresh_tcp()).priority);
	EXPECT_FALSE(carry_over(p, fresh_tcp()).rcvlowat);
	EXPECT_FALSE(carry_over(p, fresh_tcp()).reuseaddr);
	EXPECT_FALSE(carry_over(p, fresh_tcp()).mark);
	p.priority = 4;
	p.rcvlowat = 512;
	p.reuseaddr = 1;
	p.mark = 0x77;
	Carry c = carry_over(p, fresh_tcp());
	ASSERT_TRUE(c.priority && c.rcvlowat && c.reuseaddr && c.mark);
	EXPECT_EQ(*c.priority, 4);
	EXPECT_EQ(*c.rcvlowat, 512);
	EXPECT_EQ(*c.reuseaddr, 1);
	EXPECT_EQ(*c.mark, 0x77);
}

TEST(PreloadState, Milliseconds)
{
	EXPECT_EQ(timeval_ms({0, 0}), 0u);
	EXPECT_EQ(timeval_ms({2, 500000}), 2500u);
	EXPECT_EQ(timeval_ms({-1, 0}), 0u);
	EXPECT_EQ(timeval_ms({LONG_MAX, 0}), ULONG_MAX);
	struct timeval tv = ms_timeval(1234);
	EXPECT_EQ(tv.tv_sec, 1);
	EXPECT_EQ(tv.tv_usec, 234000);
}

TEST(PreloadState, AttemptBound)
{
	Config cfg;
	cfg.connect_timeout_ms = 5000;
	SocketState p = fresh_tcp();
	EXPECT_EQ(attempt_timeout_ms(cfg, p), 5000u);
	/* A blocking program's shorter SO_SNDTIMEO bounds the attempt. */
	p.sndtimeo = {1, 0};
	EXPECT_EQ(attempt_timeout_ms(cfg, p), 1000u);
	p.sndtimeo = {0, 10};
	EXPECT_EQ(attempt_timeout_ms(cfg, p), 1u);
	p.sndtimeo = {60, 0};
	EXPECT_EQ(attempt_timeout_ms(cfg, p), 5000u);
	/* A non-blocking program's connect never waits: its SO_SNDTIMEO is no bound. */
	p.sndtimeo = {1, 0};
	p.nonblocking = true;
	EXPECT_EQ(attempt_timeout_ms(cfg, p), 5000u);
}

TEST(PreloadState, MaxFragmentedSizeRaisedForSmbMessages)
{
	/* The module's default (1 MiB) cannot take a 4 MiB SMB2 READ response. */
	std::optional<int> v = raised_max_fragmented_size(1048576);
	ASSERT_TRUE(v);
	EXPECT_EQ(*v, 16 * 1048576);
	/* Anything SMB2 over TCP frames (24-bit length) fits, within the UAPI's range. */
	EXPECT_GT(*v, 0xffffff);
	EXPECT_LE(*v, 16 * 1048576);
	EXPECT_GE(*v, 131072);
	/* An 8 MiB READ response (Samba's and Windows' MaxReadSize) with its headers. */
	EXPECT_GT(*v, 8 * 1048576 + 64 + 16 + 52);
	/* Unreadable: set it anyway. */
	ASSERT_TRUE(raised_max_fragmented_size(-1));
	EXPECT_EQ(*raised_max_fragmented_size(-1), 16 * 1048576);
	/* Already large enough (modprobe af_smbdirect max_fragmented_size=...): left alone. */
	EXPECT_FALSE(raised_max_fragmented_size(16 * 1048576));
	EXPECT_TRUE(raised_max_fragmented_size(16 * 1048576 - 1));
}
