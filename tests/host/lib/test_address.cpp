// SPDX-License-Identifier: GPL-2.0
// smbdirect_parse_address(): numeric hosts and ports only.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cerrno>
#include <net/if.h>
#include <smbdirect/smbdirect.h>

namespace
{

struct Parsed {
	int ret = 0;
	struct sockaddr_storage ss = {};
	socklen_t len = 0;
};

Parsed parse(const char *host, const char *port)
{
	Parsed p;
	memset(&p.ss, 0xab, sizeof(p.ss));
	p.ret = smbdirect_parse_address(host, port, &p.ss, &p.len);
	return p;
}

std::string text(const Parsed &p)
{
	char buf[INET6_ADDRSTRLEN] = "";
	if (p.ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(&p.ss)->sin_addr, buf,
			  sizeof(buf));
	else
		inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 *>(&p.ss)->sin6_addr, buf,
			  sizeof(buf));
	return buf;
}

TEST(ParseAddress, Ipv4)
{
	Parsed p = parse("10.77.0.1", "445");
	ASSERT_EQ(p.ret, 0);
	EXPECT_EQ(p.len, sizeof(struct sockaddr_in));
	auto *sin = reinterpret_cast<struct sockaddr_in *>(&p.ss);
	EXPECT_EQ(sin->sin_family, AF_INET);
	EXPECT_EQ(ntohs(sin->sin_port), 445);
	EXPECT_EQ(text(p), "10.77.0.1");
	// The rest of sockaddr_in is zeroed (sin_zero).
	for (unsigned char b : sin->sin_zero)
		EXPECT_EQ(b, 0);
}

TEST(ParseAddress, Ipv6AndBrackets)
{
	for (const char *host : { "fd77::2", "[fd77::2]" }) {
		Parsed p = parse(host, "5445");
		ASSERT_EQ(p.ret, 0) << host;
		EXPECT_EQ(p.len, sizeof(struct sockaddr_in6));
		auto *sin6 = reinterpret_cast<struct sockaddr_in6 *>(&p.ss);
		EXPECT_EQ(sin6->sin6_family, AF_INET6);
		EXPECT_EQ(ntohs(sin6->sin6_port), 5445);
		EXPECT_EQ(sin6->sin6_scope_id, 0u);
		EXPECT_EQ(sin6->sin6_flowinfo, 0u);
		EXPECT_EQ(text(p), "fd77::2");
	}
}

TEST(ParseAddress, NullHostIsTheIpv6Wildcard)
{
	Parsed p = parse(nullptr, "0");
	ASSERT_EQ(p.ret, 0);
	EXPECT_EQ(p.ss.ss_family, AF_INET6);
	EXPECT_EQ(text(p), "::");
	EXPECT_EQ(ntohs(reinterpret_cast<sockaddr_in6 *>(&p.ss)->sin6_port), 0);
}

TEST(ParseAddress, Scopes)
{
	Parsed p = parse("fe80::1%7", "445");
	ASSERT_EQ(p.ret, 0);
	EXPECT_EQ(reinterpret_cast<sockaddr_in6 *>(&p.ss)->sin6_scope_id, 7u);
	EXPECT_EQ(text(p), "fe80::1");
	Parsed lo = parse("[fe80::1%lo]", "445");
	ASSERT_EQ(lo.ret, 0);
	EXPECT_EQ(reinterpret_cast<sockaddr_in6 *>(&lo.ss)->sin6_scope_id, if_nametoindex("lo"));
	EXPECT_EQ(parse("fe80::1%nosuchif0", "445").ret, -ENODEV);
	EXPECT_EQ(parse("fe80::1%", "445").ret, -EINVAL);
	EXPECT_EQ(parse("10.0.0.1%1", "445").ret, -EINVAL);
}

TEST(ParseAddress, PortsAreDecimalAndInRange)
{
	EXPECT_EQ(parse("10.0.0.1", "65535").ret, 0);
	EXPECT_EQ(parse("10.0.0.1", "65536").ret, -EINVAL);
	EXPECT_EQ(parse("10.0.0.1", "").ret, -EINVAL);
	EXPECT_EQ(parse("10.0.0.1", nullptr).ret, -EINVAL);
	EXPECT_EQ(parse("10.0.0.1", "-1").ret, -EINVAL);
	EXPECT_EQ(parse("10.0.0.1", "0x1bd").ret, -EINVAL);
	EXPECT_EQ(parse("10.0.0.1", "microsoft-ds").ret, -EINVAL);
	EXPECT_EQ(parse("10.0.0.1", "99999999999999999999").ret, -EINVAL);
}

TEST(ParseAddress, NoNamesNoGarbage)
{
	for (const char *host : { "", "localhost", "server.example", "10.0.0", "10.0.0.256",
				  "[10.0.0.1]", "[fd77::1", "fd77::1]", "[]", "::g", "1.2.3.4.5" })
		EXPECT_EQ(parse(host, "445").ret, -EINVAL) << host;
	std::string longer(200, '1');
	EXPECT_EQ(parse(longer.c_str(), "445").ret, -EINVAL);
}

TEST(ParseAddress, OutputsUntouchedOnError)
{
	Parsed p = parse("nope", "445");
	EXPECT_EQ(p.ret, -EINVAL);
	EXPECT_EQ(p.len, 0u);
	EXPECT_EQ(reinterpret_cast<unsigned char *>(&p.ss)[0], 0xab);
	struct sockaddr_storage ss;
	socklen_t len;
	EXPECT_EQ(smbdirect_parse_address("1.2.3.4", "1", nullptr, &len), -EINVAL);
	EXPECT_EQ(smbdirect_parse_address("1.2.3.4", "1", &ss, nullptr), -EINVAL);
}

} // namespace
