// SPDX-License-Identifier: GPL-2.0
/* `smbdirect run`: its command line, the environment it sets, where it finds the preload. */
#include <gtest/gtest.h>

#include <list>
#include <string>
#include <vector>

#include "run_options.hpp"

using namespace sd::preload;

namespace {

/* An argv that stays valid: RunOptions points into it. */
struct Argv {
	std::vector<std::string> s;
	std::vector<char *> p;
	explicit Argv(const std::vector<const char *> &args) : s(args.begin(), args.end())
	{
		for (std::string &a : s)
			p.push_back(a.data());
		p.push_back(nullptr);
	}
	Argv(const Argv &) = delete;
	Argv &operator=(const Argv &) = delete;
};

RunOptions parse(const std::vector<const char *> &args)
{
	static std::list<Argv> keep;
	Argv &a = keep.emplace_back(args);
	return parse_run_args(static_cast<int>(a.s.size()), a.p.data());
}

std::string env_of(const RunOptions &o)
{
	std::string out;
	for (const auto &[name, value] : run_environment(o))
		out += std::string(name) + "=" + value + " ";
	return out;
}

} // namespace

TEST(RunArgs, CommandAndItsArgumentsAreUntouched)
{
	RunOptions o = parse({"run", "socat", "-u", "--listen", "TCP:1.2.3.4:445"});
	EXPECT_TRUE(o.error.empty());
	EXPECT_EQ(o.command, 1);
	EXPECT_FALSE(o.listen); /* socat's --listen is socat's */
	EXPECT_EQ(env_of(o), "");
}

TEST(RunArgs, EveryOption)
{
	RunOptions o =
		parse({"run", "-l", "--no-fallback", "-d", "--inet", "--ports", "7000,7001", "-t",
		       "250", "prog"});
	ASSERT_TRUE(o.error.empty()) << o.error;
	EXPECT_TRUE(o.listen);
	EXPECT_TRUE(o.no_fallback);
	EXPECT_TRUE(o.debug);
	EXPECT_TRUE(o.inet);
	EXPECT_STREQ(o.ports, "7000,7001");
	EXPECT_STREQ(o.connect_timeout, "250");
	EXPECT_EQ(o.command, 9);
	EXPECT_EQ(env_of(o), "SMBDIRECT_PORTS=7000,7001 SMBDIRECT_LISTEN=1 "
			     "SMBDIRECT_NO_FALLBACK=1 SMBDIRECT_DEBUG=1 SMBDIRECT_INET=1 "
			     "SMBDIRECT_CONNECT_TIMEOUT=250 ");
}

TEST(RunArgs, LongFormsWithEquals)
{
	RunOptions o = parse({"run", "--ports=445", "--connect-timeout=10", "--listen", "--debug",
			      "x"});
	ASSERT_TRUE(o.error.empty()) << o.error;
	EXPECT_STREQ(o.ports, "445");
	EXPECT_STREQ(o.connect_timeout, "10");
	EXPECT_EQ(o.command, 5);
}

TEST(RunArgs, DoubleDashEndsOptions)
{
	RunOptions o = parse({"run", "-p", "445", "--", "-weird-program", "--ports"});
	ASSERT_TRUE(o.error.empty()) << o.error;
	EXPECT_EQ(o.command, 4);
}

TEST(RunArgs, Help)
{
	EXPECT_TRUE(parse({"run", "--help"}).help);
	EXPECT_TRUE(parse({"run", "-l", "-h", "prog"}).help);
	/* After the command, -h is the command's. */
	EXPECT_FALSE(parse({"run", "prog", "-h"}).help);
}

TEST(RunArgs, UsageErrors)
{
	for (const std::vector<const char *> &args : std::vector<std::vector<const char *>>{
		     {"run"},
		     {"run", "-l"},
		     {"run", "--"},
		     {"run", "--bogus", "x"},
		     {"run", "-x", "prog"},
		     {"run", "--ports"},
		     {"run", "-p", "0", "x"},
		     {"run", "--ports=", "x"},
		     {"run", "--ports", "445,abc", "x"},
		     {"run", "-t", "0", "x"},
		     {"run", "-t", "soon", "x"},
		     {"run", "--connect-timeout=99999999", "x"},
		     {"run", "--portsx=445", "x"}}) {
		RunOptions o = parse(args);
		EXPECT_FALSE(o.error.empty()) << args.size() << " args, second "
					      << (args.size() > 1 ? args[1] : "");
		EXPECT_EQ(o.command, -1);
	}
	EXPECT_EQ(parse({"run", "--ports", "x", "prog"}).error, "--ports 'x': not a decimal number");
	EXPECT_EQ(parse({"run"}).error, "no command to run");
}

TEST(RunEnv, PreloadGoesFirstAndKeepsTheRest)
{
	EXPECT_EQ(compose_ld_preload("/l/p.so", nullptr), "/l/p.so");
	EXPECT_EQ(compose_ld_preload("/l/p.so", ""), "/l/p.so");
	EXPECT_EQ(compose_ld_preload("/l/p.so", "/a.so"), "/l/p.so:/a.so");
	EXPECT_EQ(compose_ld_preload("/l/p.so", "/a.so /b.so:/c.so"), "/l/p.so:/a.so:/b.so:/c.so");
	/* Nested `smbdirect run`: ours is not listed twice. */
	EXPECT_EQ(compose_ld_preload("/l/p.so", "/l/p.so:/a.so"), "/l/p.so:/a.so");
	EXPECT_EQ(compose_ld_preload("/l/p.so", "::/a.so::"), "/l/p.so:/a.so");
}

TEST(RunEnv, PreloadSearchOrder)
{
	std::vector<std::string> c = preload_candidates(
		"/work/build/tools/smbdirect", "../preload/libsmbdirect-preload.so",
		"../lib/x86_64-linux-gnu/libsmbdirect-preload.so",
		"/usr/local/lib/x86_64-linux-gnu/libsmbdirect-preload.so");
	ASSERT_EQ(c.size(), 3u);
	EXPECT_EQ(c[0], "/work/build/tools/../preload/libsmbdirect-preload.so");
	EXPECT_EQ(c[1], "/work/build/tools/../lib/x86_64-linux-gnu/libsmbdirect-preload.so");
	EXPECT_EQ(c[2], "/usr/local/lib/x86_64-linux-gnu/libsmbdirect-preload.so");
	/* Without /proc/self/exe only the configured path remains. */
	c = preload_candidates("", "../preload/x.so", "../lib/x.so", "/usr/lib/x.so");
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0], "/usr/lib/x.so");
	EXPECT_EQ(dir_of("/smbdirect"), "/");
	EXPECT_EQ(dir_of("smbdirect"), ".");
}
