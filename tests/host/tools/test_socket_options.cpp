// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <linux/smbdirect.h>

#include "socket_options.hpp"

using namespace sd::tool;

TEST(ToolSocketOptions, NamesAndUnits)
{
	std::string error;
	auto s = parse_option_setting("max_send_size=8K", error);
	ASSERT_TRUE(s) << error;
	EXPECT_EQ(s->option, SMBDIRECT_OPT_MAX_SEND_SIZE);
	EXPECT_EQ(s->value, 8192u);
	EXPECT_EQ(s->text, "max_send_size=8K");
	s = parse_option_setting("keepalive_interval=0", error);
	ASSERT_TRUE(s) << error;
	EXPECT_EQ(s->option, SMBDIRECT_OPT_KEEPALIVE_INTERVAL);
	EXPECT_EQ(s->value, 0u);
	s = parse_option_setting("receive_credit_max=4294967295", error);
	ASSERT_TRUE(s) << error;
	EXPECT_EQ(s->value, 4294967295u);
}

TEST(ToolSocketOptions, Refused)
{
	std::string error;
	EXPECT_FALSE(parse_option_setting("max_send_size", error));
	EXPECT_NE(error.find("NAME=VALUE"), std::string::npos) << error;
	EXPECT_FALSE(parse_option_setting("max_sendsize=1", error));
	EXPECT_FALSE(parse_option_setting("=1", error));
	EXPECT_FALSE(parse_option_setting("max_send_size=", error));
	EXPECT_NE(error.find("not a number for max_send_size"), std::string::npos) << error;
	EXPECT_FALSE(parse_option_setting("max_send_size=-1", error));
	EXPECT_FALSE(parse_option_setting("receive_credit_max=4294967296", error));
	EXPECT_FALSE(parse_option_setting("max_read_write_size=4G", error));
}
