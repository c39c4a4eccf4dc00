// SPDX-License-Identifier: GPL-2.0
/* The preload's per-process memory of connects: negative cache, pending table. */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>

#include "connect_memory.hpp"

using namespace sd::preload;

namespace {

Endpoint v4(const char *host, uint16_t port)
{
	struct sockaddr_in sin = {};
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	inet_pton(AF_INET, host, &sin.sin_addr);
	return *parse_endpoint(reinterpret_cast<struct sockaddr *>(&sin), sizeof(sin));
}

Endpoint v6(const char *host, uint16_t port, uint32_t scope = 0)
{
	struct sockaddr_in6 sin6 = {};
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(port);
	sin6.sin6_scope_id = scope;
	inet_pton(AF_INET6, host, &sin6.sin6_addr);
	return *parse_endpoint(reinterpret_cast<struct sockaddr *>(&sin6), sizeof(sin6));
}

PendingConnect pending(int fd, uint64_t ino, int tcp_fd, uint64_t started)
{
	PendingConnect e;
	e.fd = fd;
	e.dev = 8;
	e.ino = ino;
	e.tcp_fd = tcp_fd;
	e.started_ms = started;
	return e;
}

} // namespace

TEST(PreloadNegativeCache, NoRdmaPathCoversEveryPortUntilItExpires)
{
	NegativeCache c;
	c.remember(v4("127.0.0.1", 445), ErrorClass::no_rdma_path, 1000, 60);
	std::optional<NegativeCache::Hit> h = c.lookup(v4("127.0.0.1", 445), 4000);
	ASSERT_TRUE(h);
	EXPECT_EQ(h->why, ErrorClass::no_rdma_path);
	EXPECT_EQ(h->seconds_left, 57u);
	EXPECT_TRUE(c.lookup(v4("127.0.0.1", 5445), 4000));
	EXPECT_FALSE(c.lookup(v4("127.0.0.2", 445), 4000));
	/* Rounded up: 1 ms left is 1 s, none left is a miss. */
	EXPECT_EQ(c.lookup(v4("127.0.0.1", 445), 60999)->seconds_left, 1u);
	EXPECT_FALSE(c.lookup(v4("127.0.0.1", 445), 61000));
	EXPECT_EQ(c.live(61000), 0u);
}

TEST(PreloadNegativeCache, RefusedAndTimedOutAreKeptPerPort)
{
	NegativeCache c;
	c.remember(v4("10.0.0.1", 445), ErrorClass::refused, 0, 60);
	c.remember(v6("fd77::1", 5445), ErrorClass::timed_out, 0, 60);
	EXPECT_TRUE(c.lookup(v4("10.0.0.1", 445), 1));
	EXPECT_FALSE(c.lookup(v4("10.0.0.1", 5445), 1));
	EXPECT_TRUE(c.lookup(v6("fd77::1", 5445), 1));
	EXPECT_FALSE(c.lookup(v6("fd77::1", 445), 1));
	/* Another scope is another host; an IPv4 address is not its v6 twin. */
	EXPECT_FALSE(c.lookup(v6("fd77::1", 5445, 3), 1));
	EXPECT_FALSE(c.lookup(v6("::ffff:10.0.0.1", 445), 1));
}

TEST(PreloadNegativeCache, OnlyFailuresThatRepeatAreRemembered)
{
	NegativeCache c;
	for (ErrorClass why : {ErrorClass::broken, ErrorClass::unavailable, ErrorClass::resources,
			       ErrorClass::interrupted, ErrorClass::other}) {
		EXPECT_FALSE(NegativeCache::cacheable(why));
		c.remember(v4("10.0.0.9", 445), why, 0, 60);
	}
	EXPECT_FALSE(c.lookup(v4("10.0.0.9", 445), 1));
	/* A TTL of 0 is the cache switched off. */
	c.remember(v4("10.0.0.9", 445), ErrorClass::no_rdma_path, 0, 0);
	EXPECT_FALSE(c.lookup(v4("10.0.0.9", 445), 0));
}

TEST(PreloadNegativeCache, RenewedInPlaceAndForgottenOnSuccess)
{
	NegativeCache c;
	c.remember(v4("10.0.0.1", 445), ErrorClass::refused, 0, 10);
	c.remember(v4("10.0.0.1", 445), ErrorClass::refused, 5000, 10);
	EXPECT_EQ(c.live(5000), 1u);
	EXPECT_EQ(c.lookup(v4("10.0.0.1", 445), 5000)->seconds_left, 10u);
	c.remember(v4("10.0.0.1", 7), ErrorClass::no_rdma_path, 5000, 10);
	c.forget(v4("10.0.0.1", 445));
	EXPECT_EQ(c.live(5000), 0u);
}

TEST(PreloadNegativeCache, BoundedTheOldestGoes)
{
	NegativeCache c;
	for (uint16_t i = 0; i < NegativeCache::capacity; i++)
		c.remember(v4("10.1.0.1", static_cast<uint16_t>(1000 + i)), ErrorClass::refused, i,
			   60);
	EXPECT_EQ(c.live(100), NegativeCache::capacity);
	c.remember(v4("10.2.0.1", 445), ErrorClass::refused, 100, 60);
	EXPECT_EQ(c.live(100), NegativeCache::capacity);
	EXPECT_FALSE(c.lookup(v4("10.1.0.1", 1000), 100)); /* the oldest */
	EXPECT_TRUE(c.lookup(v4("10.1.0.1", 1001), 100));
	EXPECT_TRUE(c.lookup(v4("10.2.0.1", 445), 100));
	/* An expired entry is reused before a live one is pushed out. */
	NegativeCache d;
	d.remember(v4("10.3.0.1", 1), ErrorClass::refused, 0, 1);
	for (uint16_t i = 0; i < NegativeCache::capacity - 1; i++)
		d.remember(v4("10.4.0.1", static_cast<uint16_t>(i + 1)), ErrorClass::refused, 0,
			   60);
	d.remember(v4("10.5.0.1", 1), ErrorClass::refused, 2000, 60);
	EXPECT_TRUE(d.lookup(v4("10.4.0.1", 1), 2000));
	EXPECT_TRUE(d.lookup(v4("10.5.0.1", 1), 2000));
}

TEST(PreloadPending, FoundOnlyWithItsInode)
{
	PendingConnects t;
	EXPECT_FALSE(t.add(pending(5, 100, 105, 0)));
	EXPECT_TRUE(t.has_fd(5));
	EXPECT_FALSE(t.has_fd(6));
	EXPECT_TRUE(t.find(5, 8, 100));
	EXPECT_FALSE(t.find(5, 8, 101));
	EXPECT_FALSE(t.find(5, 9, 100));
	EXPECT_EQ(t.size(), 1u);
	std::optional<PendingConnect> stale;
	std::optional<PendingConnect> e = t.take(5, 8, 100, &stale);
	ASSERT_TRUE(e);
	EXPECT_EQ(e->tcp_fd, 105);
	EXPECT_FALSE(stale);
	EXPECT_EQ(t.size(), 0u);
	EXPECT_FALSE(t.take(5, 8, 100, &stale));
}

TEST(PreloadPending, AReusedFdNumberIsStale)
{
	PendingConnects t;
	(void)t.add(pending(5, 100, 105, 0));
	std::optional<PendingConnect> stale;
	/* fd 5 was closed and now holds another socket (inode 200). */
	EXPECT_FALSE(t.take(5, 8, 200, &stale));
	ASSERT_TRUE(stale);
	EXPECT_EQ(stale->tcp_fd, 105);
	EXPECT_EQ(t.size(), 0u);
}

TEST(PreloadPending, ANewAttemptOnTheSameFdReplacesTheOld)
{
	PendingConnects t;
	(void)t.add(pending(5, 100, 105, 0));
	std::optional<PendingConnect> old = t.add(pending(5, 200, 106, 1));
	ASSERT_TRUE(old);
	EXPECT_EQ(old->tcp_fd, 105);
	EXPECT_EQ(t.size(), 1u);
	EXPECT_TRUE(t.find(5, 8, 200));
}

TEST(PreloadPending, FullTablePushesOutTheOldest)
{
	PendingConnects t;
	for (int i = 0; i < static_cast<int>(PendingConnects::capacity); i++)
		EXPECT_FALSE(t.add(pending(10 + i, 1000 + static_cast<uint64_t>(i), 500 + i,
					   100 + static_cast<uint64_t>(i))));
	EXPECT_EQ(t.size(), PendingConnects::capacity);
	std::optional<PendingConnect> pushed = t.add(pending(9, 9, 499, 999));
	ASSERT_TRUE(pushed);
	EXPECT_EQ(pushed->fd, 10);
	EXPECT_EQ(pushed->tcp_fd, 500);
	EXPECT_EQ(t.size(), PendingConnects::capacity);
	EXPECT_TRUE(t.find(9, 8, 9));
	/* Sweeping by slot. */
	std::size_t seen = 0;
	for (std::size_t i = 0; i < PendingConnects::capacity; i++)
		if (t.slot(i)) {
			seen++;
			EXPECT_TRUE(t.remove_slot(i));
		}
	EXPECT_EQ(seen, PendingConnects::capacity);
	EXPECT_EQ(t.size(), 0u);
	EXPECT_FALSE(t.slot(0));
	EXPECT_FALSE(t.remove_slot(PendingConnects::capacity));
}
