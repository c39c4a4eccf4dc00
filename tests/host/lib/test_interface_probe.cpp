// SPDX-License-Identifier: GPL-2.0
// What the interface probe reads from sysfs, on a fabricated tree.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <ftw.h>
#include <linux/smbdirect.h>
#include <rdma/rdma_netlink.h>
#include <string>
#include <sys/stat.h>

#include "interface_probe.h"

namespace
{

using namespace sd::detail;

class FakeSysfs : public ::testing::Test {
    protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/sd-sysfs-XXXXXX";
		ASSERT_NE(mkdtemp(tmpl), nullptr);
		root_ = tmpl;
	}
	void TearDown() override
	{
		nftw(
			root_.c_str(),
			[](const char *path, const struct stat *, int, struct FTW *) {
				return remove(path);
			},
			16, FTW_DEPTH | FTW_PHYS);
	}
	void write(const std::string &rel, const std::string &content)
	{
		std::string path = root_ + "/" + rel;
		for (size_t at = root_.size() + 1; (at = path.find('/', at)) != std::string::npos;
		     at++)
			mkdir(path.substr(0, at).c_str(), 0755);
		FILE *f = fopen(path.c_str(), "w");
		ASSERT_NE(f, nullptr) << path;
		fputs(content.c_str(), f);
		fclose(f);
	}
	std::string root_;
};

std::vector<NetdevFacts> netdevs()
{
	std::vector<NetdevFacts> n(3);
	n[0].ifindex = 2;
	n[0].name = "eth0";
	n[1].ifindex = 3;
	n[1].name = "eth0.100";
	n[2].ifindex = 4;
	n[2].name = "ib0";
	return n;
}

TEST_F(FakeSysfs, RocePortReadsItsGidTableNetdevs)
{
	std::string port = "class/infiniband/mlx5_0/ports/1/";
	write(port + "link_layer", "Ethernet\n");
	write(port + "rate", "25 Gb/sec (1X EDR)\n");
	write(port + "gid_attrs/ndevs/0", "eth0\n");
	write(port + "gid_attrs/ndevs/1", "eth0\n");
	write(port + "gid_attrs/ndevs/2", "eth0.100\n");
	write(port + "gid_attrs/ndevs/3", "\n");      // an unused entry
	write(port + "gid_attrs/ndevs/4", "gone0\n"); // another namespace's
	RdmaPortLink link{ "mlx5_0", 1, RDMA_NODE_IB_CA, 2 };
	RdmaPortFacts p;
	ASSERT_EQ(read_port_sysfs(root_, link, netdevs(), true, p), 0);
	EXPECT_EQ(p.transport, SMBDIRECT_TRANSPORT_ROCE);
	EXPECT_EQ(p.netdev, 2);
	EXPECT_EQ(p.rate_bps, 25000000000ull);
	EXPECT_TRUE(p.gid_table_known);
	std::sort(p.gid_netdevs.begin(), p.gid_netdevs.end());
	EXPECT_EQ(std::vector<int>(p.gid_netdevs.begin(), p.gid_netdevs.end()),
		  (std::vector<int>{ 2, 3 }));
}

TEST_F(FakeSysfs, GidsAreReadOnlyWhenAsked)
{
	std::string port = "class/infiniband/mlx5_0/ports/1/";
	write(port + "link_layer", "Ethernet\n");
	write(port + "rate", "25 Gb/sec (1X EDR)\n");
	write(port + "gid_attrs/ndevs/0", "eth0\n");
	RdmaPortLink link{ "mlx5_0", 1, RDMA_NODE_IB_CA, 2 };
	RdmaPortFacts p;
	ASSERT_EQ(read_port_sysfs(root_, link, netdevs(), false, p), 0);
	EXPECT_EQ(p.transport, SMBDIRECT_TRANSPORT_ROCE);
	EXPECT_EQ(p.rate_bps, 25000000000ull);
	EXPECT_FALSE(p.gid_table_known);
	EXPECT_TRUE(p.gid_netdevs.empty());
}

TEST_F(FakeSysfs, RocePortWithoutGidAttributes)
{
	write("class/infiniband/rxe0/ports/1/link_layer", "Ethernet\n");
	RdmaPortLink link{ "rxe0", 1, RDMA_NODE_IB_CA, 2 };
	RdmaPortFacts p;
	ASSERT_EQ(read_port_sysfs(root_, link, netdevs(), true, p), 0);
	EXPECT_EQ(p.transport, SMBDIRECT_TRANSPORT_ROCE);
	EXPECT_FALSE(p.gid_table_known);
	EXPECT_EQ(p.rate_bps, 0u);
}

TEST_F(FakeSysfs, InfinibandPortReadsItsGids)
{
	std::string port = "class/infiniband/mlx5_1/ports/1/";
	write(port + "link_layer", "InfiniBand\n");
	write(port + "rate", "2.5 Gb/sec (1X SDR)\n");
	write(port + "gids/0", "fe80:0000:0000:0000:0002:c903:0001:2345\n");
	write(port + "gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n");
	write(port + "gids/2", "not a gid\n");
	RdmaPortLink link{ "mlx5_1", 1, RDMA_NODE_IB_CA, 0 };
	RdmaPortFacts p;
	ASSERT_EQ(read_port_sysfs(root_, link, netdevs(), true, p), 0);
	EXPECT_EQ(p.transport, SMBDIRECT_TRANSPORT_IB);
	EXPECT_EQ(p.rate_bps, 2500000000ull);
	ASSERT_EQ(p.gids.size(), 1u);
	EXPECT_EQ(p.gids[0][0], 0xfe);
	EXPECT_EQ(p.gids[0][15], 0x45);
}

TEST_F(FakeSysfs, IwarpByNodeTypeFromNetlinkOrSysfs)
{
	RdmaPortLink link{ "siw1", 1, RDMA_NODE_RNIC, 3 };
	RdmaPortFacts p;
	ASSERT_EQ(read_port_sysfs(root_, link, netdevs(), true, p), 0);
	EXPECT_EQ(p.transport, SMBDIRECT_TRANSPORT_IWARP);
	write("class/infiniband/siw2/node_type", "4: RNIC\n");
	RdmaPortLink unknown{ "siw2", 1, 0, 3 };
	ASSERT_EQ(read_port_sysfs(root_, unknown, netdevs(), true, p), 0);
	EXPECT_EQ(p.transport, SMBDIRECT_TRANSPORT_IWARP);
}

TEST_F(FakeSysfs, NetdevSpeed)
{
	write("class/net/eth0/speed", "10000\n");
	write("class/net/eth1/speed", "-1\n");
	write("class/net/eth2/speed", "fast\n");
	EXPECT_EQ(read_netdev_speed(root_, "eth0"), 10000);
	EXPECT_EQ(read_netdev_speed(root_, "eth1"), -1);
	EXPECT_EQ(read_netdev_speed(root_, "eth2"), -1);
	EXPECT_EQ(read_netdev_speed(root_, "eth3"), -1);
}

TEST(PortRate, Parses)
{
	EXPECT_EQ(parse_port_rate("100 Gb/sec (4X EDR)"), 100000000000ull);
	EXPECT_EQ(parse_port_rate("2.5 Gb/sec (1X SDR)"), 2500000000ull);
	EXPECT_EQ(parse_port_rate("10 Gb/sec"), 10000000000ull);
	EXPECT_EQ(parse_port_rate(""), 0u);
	EXPECT_EQ(parse_port_rate("Gb/sec"), 0u);
	EXPECT_EQ(parse_port_rate("10 Mb/sec"), 0u);
	EXPECT_EQ(parse_port_rate("-5 Gb/sec"), 0u);
}

TEST(Gid, Parses)
{
	std::array<uint8_t, 16> g{};
	ASSERT_TRUE(parse_gid("0000:0000:0000:0000:0000:ffff:0a4d:0001", g));
	EXPECT_EQ(g[10], 0xff);
	EXPECT_EQ(g[12], 0x0a);
	EXPECT_EQ(g[13], 0x4d);
	EXPECT_EQ(g[15], 0x01);
	EXPECT_TRUE(parse_gid("FE80:0000:0000:0000:0002:C903:0001:2345", g));
	EXPECT_FALSE(parse_gid("fe80::1", g));
	EXPECT_FALSE(parse_gid("fe80:0000:0000:0000:0002:c903:0001:234g", g));
	EXPECT_FALSE(parse_gid("fe80-0000:0000:0000:0002:c903:0001:2345", g));
}

TEST(ProbeSystem, ListsLoopback)
{
	SystemFacts facts;
	ASSERT_EQ(probe_system(facts), 0);
	bool lo = false;
	for (const NetdevFacts &n : facts.netdevs)
		lo |= n.name == "lo";
	EXPECT_TRUE(lo);
	bool lo_addr = false;
	for (const InterfaceAddress &a : facts.addresses)
		lo_addr |= a.ifindex == 1;
	EXPECT_TRUE(lo_addr);
}

} // namespace
