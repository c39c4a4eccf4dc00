// SPDX-License-Identifier: GPL-2.0
/* The preload's configuration: SMBDIRECT_* variables, port lists. */
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "config.hpp"

using namespace sd::preload;

namespace {

struct FakeEnv {
	std::map<std::string, std::string> vars;
	const char *operator()(const char *name) const
	{
		auto it = vars.find(name);
		return it == vars.end() ? nullptr : it->second.c_str();
	}
};

std::string formatted(const PortList &p)
{
	char buf[256];
	format_ports(p, buf, sizeof(buf));
	return buf;
}

} // namespace

TEST(PreloadPorts, DefaultListIsSmbAndIwarpPorts)
{
	PortsResult r = parse_ports(default_ports);
	ASSERT_EQ(r.error, nullptr);
	EXPECT_TRUE(r.ports.contains(445));
	EXPECT_TRUE(r.ports.contains(5445));
	EXPECT_FALSE(r.ports.contains(80));
	EXPECT_FALSE(r.ports.contains(444));
	EXPECT_FALSE(r.ports.contains(0));
	EXPECT_EQ(formatted(r.ports), "445,5445");
}

TEST(PreloadPorts, RangesAndBlanks)
{
	PortsResult r = parse_ports(" 445 ,9000-9010,\t65535");
	ASSERT_EQ(r.error, nullptr);
	EXPECT_EQ(r.ports.count, 3u);
	EXPECT_TRUE(r.ports.contains(9000));
	EXPECT_TRUE(r.ports.contains(9005));
	EXPECT_TRUE(r.ports.contains(9010));
	EXPECT_FALSE(r.ports.contains(9011));
	EXPECT_FALSE(r.ports.contains(8999));
	EXPECT_TRUE(r.ports.contains(65535));
	EXPECT_EQ(formatted(r.ports), "445,9000-9010,65535");
}

TEST(PreloadPorts, SinglePortRange)
{
	PortsResult r = parse_ports("7000-7000");
	ASSERT_EQ(r.error, nullptr);
	EXPECT_TRUE(r.ports.contains(7000));
	EXPECT_FALSE(r.ports.contains(7001));
	EXPECT_EQ(formatted(r.ports), "7000");
}

TEST(PreloadPorts, Rejects)
{
	for (const char *bad : {"", " ", ",", "445,", ",445", "0", "65536", "99999999999999999999",
				"-1", "445-", "-445", "10-5", "abc", "44 5", "445;5445", "0-10",
				"1-65536", "+445", "4e2"}) {
		PortsResult r = parse_ports(bad);
		EXPECT_NE(r.error, nullptr) << "'" << bad << "' was accepted";
		EXPECT_EQ(r.ports.count, 0u) << bad;
	}
}

TEST(PreloadPorts, AtMost32Entries)
{
	std::string list;
	for (int i = 1; i <= 32; i++)
		list += (i > 1 ? "," : "") + std::to_string(1000 + i);
	PortsResult ok = parse_ports(list);
	ASSERT_EQ(ok.error, nullptr);
	EXPECT_EQ(ok.ports.count, 32u);
	EXPECT_TRUE(ok.ports.contains(1032));
	PortsResult too_many = parse_ports(list + ",2000");
	EXPECT_NE(too_many.error, nullptr);
}

TEST(PreloadPorts, FormatTruncatesSafely)
{
	PortsResult r = parse_ports("1000-2000,3000-4000,5000");
	ASSERT_EQ(r.error, nullptr);
	char buf[8];
	format_ports(r.ports, buf, sizeof(buf));
	EXPECT_EQ(std::string(buf), "1000-20");
	format_ports(r.ports, buf, 0); /* must not write */
}

TEST(PreloadConfig, Booleans)
{
	for (const char *t : {"1", "yes", "true", "on"})
		EXPECT_TRUE(parse_bool(t).value) << t;
	for (const char *f : {"", "0", "no", "false", "off"}) {
		EXPECT_FALSE(parse_bool(f).value) << f;
		EXPECT_EQ(parse_bool(f).error, nullptr) << f;
	}
	for (const char *bad : {"2", "Yes ", "enable", "y"})
		EXPECT_NE(parse_bool(bad).error, nullptr) << bad;
}

TEST(PreloadConfig, DefaultsWithEmptyEnvironment)
{
	Config c = parse_config(FakeEnv{});
	EXPECT_TRUE(c.enabled());
	EXPECT_FALSE(c.listen);
	EXPECT_TRUE(c.fallback);
	EXPECT_FALSE(c.debug);
	EXPECT_EQ(c.connect_timeout_ms, default_connect_timeout_ms);
	EXPECT_EQ(c.negative_cache_s, 60u);
	EXPECT_TRUE(c.ports.contains(445));
	EXPECT_TRUE(c.ports.contains(5445));
	EXPECT_EQ(c.ports.count, 2u);
}

TEST(PreloadConfig, EveryVariable)
{
	Config c = parse_config(FakeEnv{{{"SMBDIRECT_PORTS", "7000-7010"},
					 {"SMBDIRECT_LISTEN", "1"},
					 {"SMBDIRECT_NO_FALLBACK", "yes"},
					 {"SMBDIRECT_DEBUG", "on"},
					 {"SMBDIRECT_INET", "true"},
					 {"SMBDIRECT_CONNECT_TIMEOUT", "250"}}});
	EXPECT_TRUE(c.enabled());
	EXPECT_TRUE(c.inet);
	EXPECT_TRUE(c.listen);
	EXPECT_FALSE(c.fallback);
	EXPECT_TRUE(c.debug);
	EXPECT_EQ(c.connect_timeout_ms, 250u);
	EXPECT_TRUE(c.ports.contains(7005));
	EXPECT_FALSE(c.ports.contains(445));
}

TEST(PreloadConfig, NegativeCacheSeconds)
{
	EXPECT_EQ(parse_config(FakeEnv{{{"SMBDIRECT_NEGATIVE_CACHE", "0"}}}).negative_cache_s, 0u);
	EXPECT_EQ(parse_config(FakeEnv{{{"SMBDIRECT_NEGATIVE_CACHE", "5"}}}).negative_cache_s, 5u);
	Config c = parse_config(FakeEnv{{{"SMBDIRECT_NEGATIVE_CACHE", "86400"}}});
	EXPECT_TRUE(c.enabled());
	EXPECT_EQ(c.negative_cache_s, 86400u);
}

TEST(PreloadConfig, ExplicitNoes)
{
	Config c = parse_config(FakeEnv{{{"SMBDIRECT_LISTEN", "0"},
					 {"SMBDIRECT_NO_FALLBACK", "off"},
					 {"SMBDIRECT_DEBUG", ""}}});
	EXPECT_TRUE(c.enabled());
	EXPECT_FALSE(c.listen);
	EXPECT_TRUE(c.fallback);
	EXPECT_FALSE(c.debug);
	EXPECT_FALSE(c.inet);
}

TEST(PreloadConfig, BadValueDisablesAndNamesTheVariable)
{
	struct Case {
		const char *variable;
		const char *value;
	};
	for (Case k :
	     {Case{"SMBDIRECT_PORTS", "445,x"}, Case{"SMBDIRECT_LISTEN", "maybe"},
	      Case{"SMBDIRECT_NO_FALLBACK", "2"}, Case{"SMBDIRECT_INET", "257"},
	      Case{"SMBDIRECT_CONNECT_TIMEOUT", "0"}, Case{"SMBDIRECT_CONNECT_TIMEOUT", "5s"},
	      Case{"SMBDIRECT_CONNECT_TIMEOUT", "3600001"}, Case{"SMBDIRECT_NEGATIVE_CACHE", ""},
	      Case{"SMBDIRECT_NEGATIVE_CACHE", "-1"}, Case{"SMBDIRECT_NEGATIVE_CACHE", "60s"},
	      Case{"SMBDIRECT_NEGATIVE_CACHE", "86401"}}) {
		Config c = parse_config(FakeEnv{{{k.variable, k.value}}});
		EXPECT_FALSE(c.enabled()) << k.variable << "=" << k.value;
		ASSERT_NE(c.error_variable, nullptr);
		EXPECT_STREQ(c.error_variable, k.variable);
	}
}

TEST(PreloadConfig, FirstErrorWinsAndDebugSurvivesAMistake)
{
	Config c = parse_config(
		FakeEnv{{{"SMBDIRECT_DEBUG", "verbose"}, {"SMBDIRECT_PORTS", "nope"}}});
	EXPECT_TRUE(c.debug);
	EXPECT_FALSE(c.enabled());
	EXPECT_STREQ(c.error_variable, "SMBDIRECT_DEBUG");
}

TEST(PreloadConfig, FamilyFile)
{
	EXPECT_EQ(parse_protocol("257\n"), 257);
	EXPECT_EQ(parse_protocol("0\n"), 0);
	EXPECT_EQ(parse_protocol("65536"), -1);
	EXPECT_EQ(parse_protocol("x"), -1);
	EXPECT_EQ(parse_family("23\n"), 23);
	EXPECT_EQ(parse_family("4"), 4);
	EXPECT_EQ(parse_family(""), -1);
	EXPECT_EQ(parse_family("\n"), -1);
	EXPECT_EQ(parse_family("0\n"), -1);
	EXPECT_EQ(parse_family("-3"), -1);
	EXPECT_EQ(parse_family("x"), -1);
	EXPECT_EQ(parse_family("99999"), -1);
}
