// SPDX-License-Identifier: GPL-2.0
/* `smbdirect ss` filters: address and port forms, expressions, matching. */
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <linux/smbdirect.h>

#include "ss_filter.hpp"

using namespace sd::tool;

namespace
{

nl::Address addr(const char *text)
{
	nl::Address a;
	a.family = inet_pton(AF_INET, text, a.bytes.data()) == 1 ? AF_INET : AF_INET6;
	if (a.family == AF_INET6) {
		EXPECT_EQ(inet_pton(AF_INET6, text, a.bytes.data()), 1) << text;
	}
	return a;
}

nl::SockInfo sock(const char *local, uint16_t lport, const char *peer, uint16_t pport,
		  uint8_t state = SMBDIRECT_STATE_CONNECTED)
{
	nl::SockInfo s;
	s.state = state;
	s.local_addr = addr(local);
	s.addr_family = s.local_addr->family;
	s.local_port = lport;
	if (peer) {
		s.peer_addr = addr(peer);
		s.peer_port = pport;
	}
	return s;
}

AddrMatch parse_ok(const char *text)
{
	std::string error;
	auto m = parse_addr_match(text, error);
	EXPECT_TRUE(m) << text << ": " << error;
	return m.value_or(AddrMatch{});
}

} // namespace

TEST(ToolSsFilter, AddressForms)
{
	AddrMatch m = parse_ok("10.77.0.1");
	ASSERT_TRUE(m.addr);
	EXPECT_EQ(m.addr->family, AF_INET);
	EXPECT_EQ(m.prefix, 32u);
	EXPECT_FALSE(m.port);

	m = parse_ok("10.77.0.1:445");
	EXPECT_EQ(m.port, 445);
	m = parse_ok("10.77.0.0/24:5445");
	EXPECT_EQ(m.prefix, 24u);
	EXPECT_EQ(m.port, 5445);

	m = parse_ok("fd77::2");
	ASSERT_TRUE(m.addr);
	EXPECT_EQ(m.addr->family, AF_INET6);
	EXPECT_EQ(m.prefix, 128u);
	EXPECT_FALSE(m.port);
	m = parse_ok("[fd77::2]:445");
	EXPECT_EQ(m.addr->family, AF_INET6);
	EXPECT_EQ(m.port, 445);
	m = parse_ok("[fd77::/16]:445");
	EXPECT_EQ(m.prefix, 16u);
	m = parse_ok("[fd77::2]");
	EXPECT_FALSE(m.port);

	for (const char *any_addr : { "*:445", ":445" }) {
		m = parse_ok(any_addr);
		EXPECT_FALSE(m.addr) << any_addr;
		EXPECT_EQ(m.port, 445) << any_addr;
	}
	m = parse_ok("*");
	EXPECT_FALSE(m.addr);
	EXPECT_FALSE(m.port);
	m = parse_ok("10.77.0.1:*");
	EXPECT_TRUE(m.addr);
	EXPECT_FALSE(m.port);
}

TEST(ToolSsFilter, BadAddressesAreRejected)
{
	for (const char *bad :
	     { "", "300.1.1.1", "10.77.0.1:", "10.77.0.1:0", "10.77.0.1:65536", "10.0.0.0/33",
	       "fd77::/129", "[fd77::2", "[fd77::2]445", "[10.0.0.1]:445", "host.example:445",
	       "fd77::2:445x", "10.0.0.1/:1" }) {
		std::string error;
		EXPECT_FALSE(parse_addr_match(bad, error)) << "'" << bad << "' was accepted";
		EXPECT_NE(error.find("is not an address"), std::string::npos) << bad;
	}
}

TEST(ToolSsFilter, PrefixesAndMappedAddresses)
{
	auto s4 = sock("10.77.0.1", 445, "10.77.0.9", 40000);
	EXPECT_TRUE(addr_matches(parse_ok("10.77.0.0/24"), s4.local_addr, s4.local_port));
	EXPECT_TRUE(addr_matches(parse_ok("10.77.0.0/31:445"), s4.local_addr, s4.local_port));
	EXPECT_FALSE(addr_matches(parse_ok("10.77.0.2/31"), s4.local_addr, s4.local_port));
	EXPECT_FALSE(addr_matches(parse_ok("10.77.0.1:446"), s4.local_addr, s4.local_port));
	EXPECT_TRUE(addr_matches(parse_ok("0.0.0.0/0"), s4.local_addr, s4.local_port));
	EXPECT_FALSE(addr_matches(parse_ok("fd77::/16"), s4.local_addr, s4.local_port));

	/* A dual-stack listener's IPv4 client appears as ::ffff:10.77.0.9. */
	auto mapped = sock("::ffff:10.77.0.1", 445, "::ffff:10.77.0.9", 40000);
	EXPECT_TRUE(addr_matches(parse_ok("10.77.0.9"), mapped.peer_addr, mapped.peer_port));
	EXPECT_TRUE(addr_matches(parse_ok("10.77.0.0/24"), mapped.peer_addr, mapped.peer_port));
	EXPECT_FALSE(addr_matches(parse_ok("10.77.0.8"), mapped.peer_addr, mapped.peer_port));

	auto s6 = sock("fd77::2", 5445, "fd77::1", 40000);
	EXPECT_TRUE(addr_matches(parse_ok("fd77::/16"), s6.local_addr, s6.local_port));
	EXPECT_TRUE(addr_matches(parse_ok("[fd77::2]:5445"), s6.local_addr, s6.local_port));
	EXPECT_FALSE(addr_matches(parse_ok("[fd77::1]:5445"), s6.local_addr, s6.local_port));
	EXPECT_FALSE(addr_matches(parse_ok("fd77::2"), std::nullopt, std::nullopt));
	EXPECT_TRUE(addr_matches(parse_ok("*"), std::nullopt, std::nullopt));
	EXPECT_FALSE(addr_matches(parse_ok("*:445"), std::nullopt, std::nullopt));
}

TEST(ToolSsFilter, ExpressionWords)
{
	SockFilter f;
	std::string error;
	ASSERT_TRUE(
		parse_expression({ "src", "10.77.0.1", "dport", "=", ":445", "sport", "eq", "40000",
				   "dst", "[fd77::1]:445", "dev", "rxe0", "src", "10.77.0.2" },
				 f, error))
		<< error;
	EXPECT_EQ(f.src.size(), 2u);
	EXPECT_EQ(f.dst.size(), 1u);
	EXPECT_EQ(f.dport, std::vector<uint16_t>{ 445 });
	EXPECT_EQ(f.sport, std::vector<uint16_t>{ 40000 });
	EXPECT_EQ(f.dev, "rxe0");

	const std::vector<std::vector<std::string>> bad = {
		{ "src" },	     { "bogus", "x" },		 { "sport", "0" },
		{ "dport", "==" },   { "dev", "a", "dev", "b" }, { "dst", "nope" },
		{ "sport", "http" },
	};
	for (const auto &words : bad) {
		SockFilter g;
		error.clear();
		EXPECT_FALSE(parse_expression(words, g, error)) << words[0];
		EXPECT_FALSE(error.empty()) << words[0];
	}
}

TEST(ToolSsFilter, MatchingCombinesWords)
{
	auto a = sock("10.77.0.1", 445, "10.77.0.9", 40000);
	auto b = sock("10.77.0.1", 445, "10.77.0.8", 40001);
	auto c = sock("fd77::2", 5445, "fd77::1", 40000);
	a.dev_name = "rxe0";
	c.dev_name = "siw1";

	SockFilter all;
	EXPECT_TRUE(all.matches(a) && all.matches(b) && all.matches(c));

	SockFilter f;
	std::string error;
	/* Either dst, and the source port. */
	ASSERT_TRUE(parse_expression({ "dst", "10.77.0.9", "dst", "fd77::1", "sport", "445" }, f,
				     error));
	EXPECT_TRUE(f.matches(a));
	EXPECT_FALSE(f.matches(b));
	EXPECT_FALSE(f.matches(c)); /* dst matches, sport does not */

	SockFilter d;
	d.dev = "siw1";
	EXPECT_FALSE(d.matches(a));
	EXPECT_TRUE(d.matches(c));

	SockFilter v6;
	v6.addr_family = AF_INET6;
	EXPECT_FALSE(v6.matches(a));
	EXPECT_TRUE(v6.matches(c));

	SockFilter listening;
	listening.state_mask = 1U << SMBDIRECT_STATE_LISTENING;
	auto l = sock("10.77.0.1", 445, nullptr, 0, SMBDIRECT_STATE_LISTENING);
	EXPECT_TRUE(listening.matches(l));
	EXPECT_FALSE(listening.matches(a));

	SockFilter dport;
	ASSERT_TRUE(parse_expression({ "dport", "40000" }, dport, error));
	EXPECT_TRUE(dport.matches(a));
	EXPECT_FALSE(dport.matches(b));
	EXPECT_FALSE(dport.matches(l)); /* no peer */
}
