// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "units.hpp"

using namespace sd::tool;

TEST(ToolUnits, SizesBinaryAndDecimal)
{
	EXPECT_EQ(parse_size("0"), 0u);
	EXPECT_EQ(parse_size("4096"), 4096u);
	EXPECT_EQ(parse_size("12B"), 12u);
	EXPECT_EQ(parse_size("4K"), 4096u);
	EXPECT_EQ(parse_size("4k"), 4096u);
	EXPECT_EQ(parse_size("64M"), 64u << 20);
	EXPECT_EQ(parse_size("64MiB"), 64u << 20);
	EXPECT_EQ(parse_size("1MiB"), 1u << 20);
	EXPECT_EQ(parse_size("2G"), 2ULL << 30);
	EXPECT_EQ(parse_size("1TiB"), 1ULL << 40);
	EXPECT_EQ(parse_size("1kB"), 1000u);
	EXPECT_EQ(parse_size("1MB"), 1000000u);
	EXPECT_EQ(parse_size("3GB"), 3000000000ULL);
}

TEST(ToolUnits, SizesRejected)
{
	for (const char *bad : { "", "M", "-1", "1.5M", "1 M", "1Mi", "1MiBs", "0x10", "1e6", "K1",
				 "18446744073709551616", "16777216T", "64M " })
		EXPECT_FALSE(parse_size(bad).has_value()) << bad;
	/* The largest that fits still parses. */
	EXPECT_EQ(parse_size("18446744073709551615"), 18446744073709551615ULL);
	EXPECT_EQ(parse_size("16777215T"), 16777215ULL << 40);
}

TEST(ToolUnits, Uint)
{
	EXPECT_EQ(parse_uint("445", 1, 65535), 445u);
	EXPECT_FALSE(parse_uint("0", 1, 65535).has_value());
	EXPECT_FALSE(parse_uint("65536", 1, 65535).has_value());
	EXPECT_FALSE(parse_uint("44x", 1, 65535).has_value());
	EXPECT_FALSE(parse_uint("", 0, 10).has_value());
	EXPECT_FALSE(parse_uint("+1", 0, 10).has_value());
}

TEST(ToolUnits, Durations)
{
	EXPECT_DOUBLE_EQ(*parse_duration("5"), 5);
	EXPECT_DOUBLE_EQ(*parse_duration("2.5s"), 2.5);
	EXPECT_DOUBLE_EQ(*parse_duration("500ms"), 0.5);
	EXPECT_DOUBLE_EQ(*parse_duration("1m"), 60);
	EXPECT_DOUBLE_EQ(*parse_duration(".5"), 0.5);
	for (const char *bad : { "", "s", "inf", "nan", "1e3", "0x5", "1.2.3", "5h", "-1", "5 s" })
		EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
}

TEST(ToolUnits, FormatBytes)
{
	EXPECT_EQ(format_bytes(0), "0 B");
	EXPECT_EQ(format_bytes(1023), "1023 B");
	EXPECT_EQ(format_bytes(1024), "1.00 KiB");
	EXPECT_EQ(format_bytes(1536), "1.50 KiB");
	EXPECT_EQ(format_bytes(64ULL << 20), "64.0 MiB");
	EXPECT_EQ(format_bytes(512ULL << 20), "512 MiB");
	EXPECT_EQ(format_bytes(2ULL << 30), "2.00 GiB");
	EXPECT_EQ(format_bytes(18446744073709551615ULL), "16.0 EiB");
}

TEST(ToolUnits, Rates)
{
	EXPECT_EQ(format_rate(0), "0.00 MiB/s");
	EXPECT_EQ(format_rate(512 * 1024), "512.0 KiB/s");
	EXPECT_EQ(format_rate(27.3 * 1048576), "27.3 MiB/s");
	EXPECT_EQ(format_rate(3.0 * 1048576), "3.00 MiB/s");
	EXPECT_EQ(format_rate(1234.4 * 1048576), "1234 MiB/s");
	EXPECT_EQ(format_rate(-5), "0.00 MiB/s");
	EXPECT_DOUBLE_EQ(mib_per_second(64ULL << 20, 2), 32);
	EXPECT_DOUBLE_EQ(gbit_per_second(125000000, 1), 1);
	EXPECT_DOUBLE_EQ(mib_per_second(1, 0), 0);
	EXPECT_DOUBLE_EQ(gbit_per_second(1, -1), 0);
}

TEST(ToolUnits, LatencyStatsNearestRank)
{
	std::vector<double> none;
	auto s = latency_stats(none);
	EXPECT_EQ(s.count, 0u);
	EXPECT_EQ(s.p99, 0);

	std::vector<double> v;
	for (int i = 100; i >= 1; i--)
		v.push_back(i);
	s = latency_stats(v);
	EXPECT_EQ(s.count, 100u);
	EXPECT_EQ(s.min, 1);
	EXPECT_EQ(s.max, 100);
	EXPECT_DOUBLE_EQ(s.avg, 50.5);
	EXPECT_EQ(s.p50, 50);
	EXPECT_EQ(s.p99, 99);

	/* Ranks round up: p50 of 3 samples is the 2nd, p99 of 3 the 3rd. */
	std::vector<double> three{ 3, 1, 2 };
	s = latency_stats(three);
	EXPECT_EQ(s.p50, 2);
	EXPECT_EQ(s.p99, 3);

	std::vector<double> one{ 7 };
	s = latency_stats(one);
	EXPECT_EQ(s.p50, 7);
	EXPECT_EQ(s.p99, 7);

	/* 1000 samples, 11 slow ones: p99 (rank 990) is slow, p50 is not. */
	std::vector<double> tail(989, 10.0);
	tail.insert(tail.end(), 11, 1000.0);
	s = latency_stats(tail);
	EXPECT_EQ(s.p50, 10);
	EXPECT_EQ(s.p99, 1000);
	std::vector<double> tail10(990, 10.0);
	tail10.insert(tail10.end(), 10, 1000.0);
	s = latency_stats(tail10);
	EXPECT_EQ(s.p99, 10);
}
