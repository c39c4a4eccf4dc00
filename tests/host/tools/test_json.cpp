// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "json.hpp"

using sd::tool::JsonWriter;

TEST(ToolJson, EscapesWhatRfc8259Requires)
{
	EXPECT_EQ(JsonWriter::quote("plain"), "\"plain\"");
	EXPECT_EQ(JsonWriter::quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
	EXPECT_EQ(JsonWriter::quote("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
	EXPECT_EQ(JsonWriter::quote(std::string_view("\x00\x01\x1f", 3)),
		  "\"\\u0000\\u0001\\u001f\"");
	/* '/' and DEL need no escape. */
	EXPECT_EQ(JsonWriter::quote("a/b\x7f"), "\"a/b\x7f\"");
}

TEST(ToolJson, Utf8PassesInvalidBytesBecomeReplacementCharacters)
{
	EXPECT_EQ(JsonWriter::quote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
		  "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	/* A lone continuation byte, a truncated sequence, an overlong '/', a surrogate. */
	EXPECT_EQ(JsonWriter::quote("\x80"), "\"\\ufffd\"");
	EXPECT_EQ(JsonWriter::quote("a\xc3"), "\"a\\ufffd\"");
	EXPECT_EQ(JsonWriter::quote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
	EXPECT_EQ(JsonWriter::quote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
	EXPECT_EQ(JsonWriter::quote("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

TEST(ToolJson, NestingAndCommas)
{
	JsonWriter j;
	j.begin_object().member("a", 1).key("b").begin_array().value(true).null().value("x");
	j.begin_object().end_object().end_array().member("c", -2L).end_object();
	EXPECT_EQ(j.str(), "{\"a\":1,\"b\":[true,null,\"x\",{}],\"c\":-2}");
	EXPECT_TRUE(j.complete());
}

TEST(ToolJson, TopLevelArrayOfObjects)
{
	JsonWriter j;
	j.begin_array();
	for (int i = 0; i < 3; i++)
		j.begin_object().member("i", i).end_object();
	EXPECT_FALSE(j.complete());
	j.end_array();
	EXPECT_EQ(j.str(), "[{\"i\":0},{\"i\":1},{\"i\":2}]");
	EXPECT_TRUE(j.complete());
}

TEST(ToolJson, Numbers)
{
	JsonWriter j;
	j.begin_array();
	j.value(18446744073709551615ULL).value(std::numeric_limits<long long>::min());
	j.value(1.23456, 2).value(-0.0001, 3).value(2.5, 0);
	j.value(std::nan("")).value(std::numeric_limits<double>::infinity());
	j.end_array();
	EXPECT_EQ(j.str(), "[18446744073709551615,-9223372036854775808,1.23,0.000,2,null,null]");
}

TEST(ToolJson, HugeDoubleIsNotTruncated)
{
	JsonWriter j;
	j.value(std::numeric_limits<double>::max(), 3);
	/* 309 integer digits, the point and 3 decimals. */
	EXPECT_EQ(j.str().size(), 309u + 4u);
	EXPECT_EQ(j.str().substr(j.str().size() - 4), ".000");
}

TEST(ToolJson, KeysAreEscapedToo)
{
	JsonWriter j;
	j.begin_object().member("we\"ird\n", "v").end_object();
	EXPECT_EQ(j.str(), "{\"we\\\"ird\\n\":\"v\"}");
}

TEST(ToolJson, NumbersKeepTinyRates)
{
	JsonWriter j;
	j.begin_array().number(1.3e-05).number(0.0).number(-0.0).number(1234.5);
	j.number(2.0 / 3).number(std::nan("")).end_array();
	EXPECT_EQ(j.str(), "[1.3e-05,0,0,1234.5,0.666666667,null]");
}
