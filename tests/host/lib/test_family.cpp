// SPDX-License-Identifier: GPL-2.0
// The family number from a module parameter file (the sysfs seam).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "family.h"

namespace
{

class FamilyFile : public ::testing::Test {
    protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/sd-family-XXXXXX";
		int fd = mkstemp(tmpl);
		ASSERT_GE(fd, 0);
		close(fd);
		path_ = tmpl;
	}
	void TearDown() override
	{
		unlink(path_.c_str());
	}
	int read_with(const std::string &content)
	{
		FILE *f = fopen(path_.c_str(), "w");
		EXPECT_NE(f, nullptr);
		fputs(content.c_str(), f);
		fclose(f);
		return sd::detail::read_family_file(path_.c_str());
	}
	std::string path_;
};

TEST_F(FamilyFile, NumberWithNewline)
{
	EXPECT_EQ(read_with("23\n"), 23);
	EXPECT_EQ(read_with("4"), 4);
}

TEST_F(FamilyFile, ZeroMeansNotLoaded)
{
	EXPECT_EQ(read_with("0\n"), -ENOENT);
}

TEST_F(FamilyFile, GarbageIsInvalid)
{
	EXPECT_EQ(read_with(""), -EINVAL);
	EXPECT_EQ(read_with("\n"), -EINVAL);
	EXPECT_EQ(read_with("-1\n"), -EINVAL);
	EXPECT_EQ(read_with("23x\n"), -EINVAL);
	EXPECT_EQ(read_with(" 23\n"), -EINVAL);
	EXPECT_EQ(read_with("23\n\n"), -EINVAL);
}

TEST_F(FamilyFile, NoAddressFamilyIsThatLarge)
{
	EXPECT_EQ(read_with("255\n"), 255);
	EXPECT_EQ(read_with("256\n"), -ERANGE);
	EXPECT_EQ(read_with("99999999999999999999\n"), -ERANGE);
}

// The inet_protocol parameter: 257 is a protocol number, not a family.
TEST_F(FamilyFile, ProtocolNumbersHaveTheirOwnLimit)
{
	EXPECT_EQ(read_with("257\n"), -ERANGE);
	EXPECT_EQ(sd::detail::read_number_file(path_.c_str(), 65536), 257);
	read_with("0\n");
	EXPECT_EQ(sd::detail::read_number_file(path_.c_str(), 65536), -ENOENT);
	read_with("70000\n");
	EXPECT_EQ(sd::detail::read_number_file(path_.c_str(), 65536), -ERANGE);
}

TEST(Family, MissingFileIsNotLoaded)
{
	EXPECT_EQ(sd::detail::read_family_file("/nonexistent/af_smbdirect/family"), -ENOENT);
}

TEST(Family, DirectoryCannotBeRead)
{
	EXPECT_EQ(sd::detail::read_family_file("/"), -EISDIR);
}

} // namespace
