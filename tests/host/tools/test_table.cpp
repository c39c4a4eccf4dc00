// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "table.hpp"

using sd::tool::Table;

TEST(ToolTable, ColumnsAlignLastOneUnpadded)
{
	Table t({ "IFNAME", "RDMA", "REASON" });
	t.add({ "veth0", "rxe0/1", "RoCE port" });
	t.add({ "lo", "-", "" });
	EXPECT_EQ(t.render(), "IFNAME  RDMA    REASON\n"
			      "veth0   rxe0/1  RoCE port\n"
			      "lo      -\n");
}

TEST(ToolTable, RowsAreFittedAndOneLineEach)
{
	Table t({ "A", "B" });
	t.add({ "x" });
	t.add({ "1", "two\nlines", "dropped" });
	EXPECT_EQ(t.render(), "A  B\n"
			      "x\n"
			      "1  two lines\n");
}
