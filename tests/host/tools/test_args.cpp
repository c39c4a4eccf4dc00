// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "args.hpp"

using namespace sd::tool;

namespace
{

constexpr OptionSpec specs[] = {
	{ "listen", 'l', false }, { "verbose", 'v', false }, { "size", 's', true },
	{ "send", 0, false },	  { "set", 'o', true },	     { "progress", 0, false },
};

/* argv as the kernel gives it: argv[0] is the subcommand. */
ParseResult parse(std::initializer_list<const char *> words)
{
	static std::vector<std::string> storage;
	static std::vector<char *> argv;
	storage.assign(words.begin(), words.end());
	storage.insert(storage.begin(), "cmd");
	argv.clear();
	for (auto &s : storage)
		argv.push_back(s.data());
	return parse_args(argv, specs);
}

} // namespace

TEST(ToolArgs, PositionalsAndFlagsInAnyOrder)
{
	auto r = parse({ "10.0.0.1", "-l", "7000", "--verbose" });
	ASSERT_TRUE(r.ok()) << r.error;
	EXPECT_TRUE(r.args.has("listen"));
	EXPECT_TRUE(r.args.has("verbose"));
	EXPECT_FALSE(r.args.has("send"));
	ASSERT_EQ(r.args.positionals.size(), 2u);
	EXPECT_EQ(r.args.positionals[0], "10.0.0.1");
	EXPECT_EQ(r.args.positionals[1], "7000");
}

TEST(ToolArgs, ValueForms)
{
	for (auto words :
	     { std::vector<const char *>{ "--size", "64M" },
	       std::vector<const char *>{ "--size=64M" }, std::vector<const char *>{ "-s", "64M" },
	       std::vector<const char *>{ "-s64M" } }) {
		ParseResult r =
			words.size() == 1 ? parse({ words[0] }) : parse({ words[0], words[1] });
		ASSERT_TRUE(r.ok()) << r.error;
		EXPECT_EQ(r.args.value("size"), "64M") << words[0];
		EXPECT_TRUE(r.args.positionals.empty());
	}
}

TEST(ToolArgs, GroupedShortFlagsAndTrailingValue)
{
	auto r = parse({ "-lvs", "4K", "x" });
	ASSERT_TRUE(r.ok()) << r.error;
	EXPECT_TRUE(r.args.has("listen"));
	EXPECT_TRUE(r.args.has("verbose"));
	EXPECT_EQ(r.args.value("size"), "4K");
	ASSERT_EQ(r.args.positionals.size(), 1u);
	EXPECT_EQ(r.args.positionals[0], "x");
}

TEST(ToolArgs, LastValueWinsAndAllAreKept)
{
	auto r = parse({ "-o", "a=1", "--set", "b=2", "--size=1", "--size=2" });
	ASSERT_TRUE(r.ok()) << r.error;
	EXPECT_EQ(r.args.value("size"), "2");
	EXPECT_EQ(r.args.values("set"), (std::vector<std::string>{ "a=1", "b=2" }));
	EXPECT_FALSE(r.args.value("listen").has_value());
}

TEST(ToolArgs, UniquePrefixOfALongName)
{
	auto r = parse({ "--prog", "--verb" });
	ASSERT_TRUE(r.ok()) << r.error;
	EXPECT_TRUE(r.args.has("progress"));
	EXPECT_TRUE(r.args.has("verbose"));
	/* "send" is exact although "set" shares its prefix "se". */
	r = parse({ "--send" });
	ASSERT_TRUE(r.ok()) << r.error;
	EXPECT_TRUE(r.args.has("send"));
	r = parse({ "--se" });
	EXPECT_FALSE(r.ok());
	EXPECT_NE(r.error.find("ambiguous"), std::string::npos) << r.error;
}

TEST(ToolArgs, Errors)
{
	auto r = parse({ "--nope" });
	EXPECT_FALSE(r.ok());
	EXPECT_NE(r.error.find("unknown option '--nope'"), std::string::npos) << r.error;
	r = parse({ "-x" });
	EXPECT_NE(r.error.find("unknown option '-x'"), std::string::npos) << r.error;
	r = parse({ "--size" });
	EXPECT_NE(r.error.find("needs a value"), std::string::npos) << r.error;
	r = parse({ "-s" });
	EXPECT_NE(r.error.find("needs a value"), std::string::npos) << r.error;
	r = parse({ "--listen=yes" });
	EXPECT_NE(r.error.find("takes no value"), std::string::npos) << r.error;
}

TEST(ToolArgs, DoubleDashEndsOptionsAndDashIsPositional)
{
	auto r = parse({ "-", "--", "-l", "--size" });
	ASSERT_TRUE(r.ok()) << r.error;
	EXPECT_FALSE(r.args.has("listen"));
	EXPECT_EQ(r.args.positionals, (std::vector<std::string>{ "-", "-l", "--size" }));
}

TEST(ToolArgs, EmptyCommandLine)
{
	auto r = parse({});
	ASSERT_TRUE(r.ok());
	EXPECT_TRUE(r.args.positionals.empty());
	EXPECT_TRUE(r.args.options.empty());
}
