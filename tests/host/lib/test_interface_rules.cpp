// SPDX-License-Identifier: GPL-2.0
// The RDMA_CAPABLE rules (userspace/lib/src/interface_rules.h) on
// fabricated machines: what SMB3 multichannel may announce.
#include <gtest/gtest.h>

#include <linux/smbdirect.h>
#include <net/if.h>
#include <net/if_arp.h>

#include <algorithm>
#include <ostream>
#include <vector>

#include "interface_rules.h"

namespace sd::detail
{
// The reasons and names in gtest's messages.
template <size_t N> std::ostream &operator<<(std::ostream &out, const FixedString<N> &s)
{
	return out << s.view();
}
} // namespace sd::detail

namespace
{

using sd::detail::classify_interfaces;
using sd::detail::InterfaceVerdict;
using sd::detail::NetdevFacts;
using sd::detail::RdmaPortFacts;

constexpr unsigned up = IFF_UP | IFF_RUNNING;

NetdevFacts netdev(int ifindex, const char *name, const char *kind = "",
		   unsigned arptype = ARPHRD_ETHER)
{
	NetdevFacts n;
	n.ifindex = ifindex;
	n.name = name;
	n.kind = kind;
	n.arptype = arptype;
	n.flags = up;
	return n;
}

NetdevFacts loopback()
{
	NetdevFacts n = netdev(1, "lo", "", ARPHRD_LOOPBACK);
	n.flags |= IFF_LOOPBACK;
	return n;
}

RdmaPortFacts roce(const char *device, int netdev, std::vector<int> gid_netdevs)
{
	RdmaPortFacts p;
	p.device = device;
	p.transport = SMBDIRECT_TRANSPORT_ROCE;
	p.netdev = netdev;
	p.gid_table_known = true;
	for (int n : gid_netdevs)
		EXPECT_TRUE(p.gid_netdevs.push_back(n));
	return p;
}

RdmaPortFacts iwarp(const char *device, int netdev)
{
	RdmaPortFacts p;
	p.device = device;
	p.transport = SMBDIRECT_TRANSPORT_IWARP;
	p.netdev = netdev;
	return p;
}

std::array<uint8_t, 16> gid(uint8_t last)
{
	std::array<uint8_t, 16> g = { 0xfe, 0x80, 0,	0,    0, 0, 0, 0,
				      0x00, 0x02, 0xc9, 0x03, 0, 0, 0, last };
	return g;
}

NetdevFacts ipoib(int ifindex, const char *name, std::array<uint8_t, 16> g, int parent = 0)
{
	NetdevFacts n = netdev(ifindex, name, parent ? "ipoib" : "", ARPHRD_INFINIBAND);
	n.link = parent;
	const uint8_t qpn[] = { 0x80, 0x00, 0x02, 0x08 }; // flags and QPN
	std::copy(std::begin(qpn), std::end(qpn), n.hwaddr.begin());
	std::copy(g.begin(), g.end(), n.hwaddr.begin() + 4);
	n.hwaddr_len = 20;
	return n;
}

// The ports of a machine (RdmaPortFacts can only be moved).
template <class... Ports> std::vector<RdmaPortFacts> ports(Ports... p)
{
	std::vector<RdmaPortFacts> v;
	(v.push_back(std::move(p)), ...);
	return v;
}

// The verdict for the interface named name.
struct Machine {
	std::vector<NetdevFacts> netdevs;
	std::vector<RdmaPortFacts> ports;
	sd::detail::Vector<InterfaceVerdict> verdicts;

	void judge()
	{
		ASSERT_EQ(classify_interfaces(netdevs, ports, verdicts), 0);
		ASSERT_EQ(verdicts.size(), netdevs.size());
	}
	const InterfaceVerdict &operator[](const std::string &name) const
	{
		for (size_t i = 0; i < netdevs.size(); i++)
			if (netdevs[i].name == name)
				return verdicts[i];
		static InterfaceVerdict none;
		ADD_FAILURE() << "no interface " << name;
		return none;
	}
};

TEST(InterfaceRules, TestGuestRxeAndSiwOnVeth)
{
	// The VM: rxe0 on veth0, siw1 on veth1, siw0 on lo.
	Machine m;
	m.netdevs = { loopback(), netdev(2, "veth0", "veth"), netdev(3, "veth1", "veth") };
	m.netdevs[1].link = 3; // a veth's IFLA_LINK is its peer, not a lower device
	m.netdevs[2].link = 2;
	m.ports = ports(roce("rxe0", 2, { 2 }), iwarp("siw0", 1), iwarp("siw1", 3));
	m.judge();
	EXPECT_TRUE(m["veth0"].capable) << m["veth0"].reason;
	EXPECT_EQ(m["veth0"].device, "rxe0");
	EXPECT_EQ(m["veth0"].transport, SMBDIRECT_TRANSPORT_ROCE);
	EXPECT_EQ(m["veth0"].port, 1u);
	EXPECT_TRUE(m["veth1"].capable) << m["veth1"].reason;
	EXPECT_EQ(m["veth1"].device, "siw1");
	EXPECT_EQ(m["veth1"].transport, SMBDIRECT_TRANSPORT_IWARP);
	EXPECT_FALSE(m["lo"].capable);
	EXPECT_EQ(m["lo"].device, "siw0");
	EXPECT_NE(m["lo"].reason.view().find("loopback"), std::string::npos);
}

TEST(InterfaceRules, IpoibAndItsChild)
{
	Machine m;
	m.netdevs = { loopback(), ipoib(4, "ib0", gid(1)), ipoib(5, "ib0.8001", gid(1), 4),
		      ipoib(6, "ib1", gid(9)) };
	RdmaPortFacts ib;
	ib.device = "mlx5_0";
	ib.transport = SMBDIRECT_TRANSPORT_IB;
	ASSERT_TRUE(ib.gids.push_back(gid(1)));
	ib.rate_bps = 100000000000ull;
	m.ports = ports(std::move(ib));
	m.judge();
	EXPECT_TRUE(m["ib0"].capable);
	EXPECT_EQ(m["ib0"].device, "mlx5_0");
	EXPECT_EQ(m["ib0"].transport, SMBDIRECT_TRANSPORT_IB);
	EXPECT_EQ(m["ib0"].speed_bps, 100000000000ull); // no netdev speed: the port's rate
	EXPECT_TRUE(m["ib0.8001"].capable);
	EXPECT_NE(m["ib0.8001"].reason.view().find("child of ib0"), std::string::npos)
		<< m["ib0.8001"].reason;
	// Its GID is on no port (another HCA without a driver, or a stale one).
	EXPECT_FALSE(m["ib1"].capable);
	EXPECT_EQ(m["ib1"].device, "");
}

TEST(InterfaceRules, IpoibWithAShortHardwareAddressIsNotCapable)
{
	Machine m;
	NetdevFacts n = ipoib(4, "ib0", gid(1));
	n.hwaddr_len = 6;
	m.netdevs = { n };
	RdmaPortFacts ib;
	ib.device = "mlx5_0";
	ib.transport = SMBDIRECT_TRANSPORT_IB;
	ASSERT_TRUE(ib.gids.push_back(gid(1)));
	m.ports = ports(std::move(ib));
	m.judge();
	EXPECT_FALSE(m["ib0"].capable);
}

TEST(InterfaceRules, VlanOnRoceIsCapableWhenTheGidTableCarriesIt)
{
	Machine m;
	NetdevFacts v100 = netdev(3, "eth0.100", "vlan");
	v100.link = 2;
	NetdevFacts v200 = netdev(4, "eth0.200", "vlan");
	v200.link = 2;
	m.netdevs = { loopback(), netdev(2, "eth0"), v100, v200 };
	m.ports = ports(roce("mlx5_0", 2, { 2, 3 }));
	m.judge();
	EXPECT_TRUE(m["eth0"].capable);
	EXPECT_TRUE(m["eth0.100"].capable) << m["eth0.100"].reason;
	EXPECT_EQ(m["eth0.100"].device, "mlx5_0");
	EXPECT_NE(m["eth0.100"].reason.view().find("VLAN on eth0"), std::string::npos);
	// Not (yet) in the GID table (no address, or another namespace).
	EXPECT_FALSE(m["eth0.200"].capable);
	EXPECT_EQ(m["eth0.200"].device, "mlx5_0");
	EXPECT_NE(m["eth0.200"].reason.view().find("GID table"), std::string::npos);
}

TEST(InterfaceRules, BridgeOverRoceFollowsTheGidTable)
{
	Machine m;
	NetdevFacts eth0 = netdev(2, "eth0");
	eth0.master = 3;
	m.netdevs = { loopback(), eth0, netdev(3, "br0", "bridge") };
	m.ports = ports(roce("mlx5_0", 2, { 2 }));
	m.judge();
	EXPECT_FALSE(m["br0"].capable);
	EXPECT_EQ(m["br0"].device, "mlx5_0");
	EXPECT_NE(m["br0"].reason.view().find("bridge over eth0"), std::string::npos)
		<< m["br0"].reason;

	m.ports = ports(roce("mlx5_0", 2, { 2, 3 }));
	m.judge();
	EXPECT_TRUE(m["br0"].capable) << m["br0"].reason;
}

TEST(InterfaceRules, BondOverRocePorts)
{
	// eth0 (active) and eth1 enslaved to bond0; the GID table of the
	// active slave's port carries bond0, the inactive one's does not.
	Machine m;
	NetdevFacts eth0 = netdev(2, "eth0"), eth1 = netdev(3, "eth1");
	eth0.master = eth1.master = 4;
	NetdevFacts bond = netdev(4, "bond0", "bond");
	bond.speed_mbps = 50000;
	m.netdevs = { loopback(), eth0, eth1, bond };
	m.ports = ports(roce("mlx5_0", 2, { 4 }), roce("mlx5_1", 3, {}));
	m.judge();
	EXPECT_TRUE(m["bond0"].capable) << m["bond0"].reason;
	EXPECT_EQ(m["bond0"].device, "mlx5_0");
	EXPECT_EQ(m["bond0"].speed_bps, 50000000000ull);
	EXPECT_FALSE(m["eth1"].capable);
	EXPECT_NE(m["eth1"].reason.view().find("enslaved to bond0"), std::string::npos)
		<< m["eth1"].reason;
	EXPECT_FALSE(m["eth0"].capable);
}

TEST(InterfaceRules, VlanOnBondOnRoce)
{
	Machine m;
	NetdevFacts eth0 = netdev(2, "eth0");
	eth0.master = 3;
	NetdevFacts vlan = netdev(4, "bond0.7", "vlan");
	vlan.link = 3;
	m.netdevs = { loopback(), eth0, netdev(3, "bond0", "bond"), vlan };
	m.ports = ports(roce("mlx5_0", 2, { 3 }));
	m.judge();
	EXPECT_FALSE(m["bond0.7"].capable);
	EXPECT_EQ(m["bond0.7"].device, "mlx5_0"); // found through two layers
	m.ports = ports(roce("mlx5_0", 2, { 3, 4 }));
	m.judge();
	EXPECT_TRUE(m["bond0.7"].capable);
}

TEST(InterfaceRules, SriovVfWithAndWithoutItsOwnRdmaDevice)
{
	Machine m;
	m.netdevs = { loopback(), netdev(2, "ens1f0np0"), netdev(7, "ens1f0v0"),
		      netdev(8, "ens1f0v1") };
	m.ports = ports(roce("mlx5_0", 2, { 2 }), roce("mlx5_2", 7, { 7 }));
	m.judge();
	EXPECT_TRUE(m["ens1f0np0"].capable);
	EXPECT_TRUE(m["ens1f0v0"].capable);
	EXPECT_EQ(m["ens1f0v0"].device, "mlx5_2");
	EXPECT_FALSE(m["ens1f0v1"].capable);
	EXPECT_EQ(m["ens1f0v1"].device, "");
	EXPECT_EQ(m["ens1f0v1"].reason, "no RDMA device");
}

TEST(InterfaceRules, PlainNicAndTunnel)
{
	Machine m;
	NetdevFacts eth = netdev(2, "enp0s3");
	eth.speed_mbps = 1000;
	m.netdevs = { loopback(), eth, netdev(3, "wg0", "wireguard", ARPHRD_NONE) };
	m.judge();
	EXPECT_FALSE(m["enp0s3"].capable);
	EXPECT_EQ(m["enp0s3"].speed_bps, 1000000000ull);
	EXPECT_EQ(m["enp0s3"].transport, 0u);
	EXPECT_FALSE(m["wg0"].capable);
	EXPECT_FALSE(m["lo"].capable);
	EXPECT_EQ(m["lo"].device, "");
}

TEST(InterfaceRules, IwarpServesItsNetdevAndVlansOnly)
{
	Machine m;
	NetdevFacts eth = netdev(2, "eth0");
	eth.master = 4;
	NetdevFacts vlan = netdev(3, "eth0.5", "vlan");
	vlan.link = 2;
	NetdevFacts mac = netdev(5, "mv0", "macvlan");
	mac.link = 2;
	m.netdevs = { loopback(), eth, vlan, netdev(4, "br0", "bridge"), mac };
	m.ports = ports(iwarp("cxgb4_0", 2));
	m.judge();
	EXPECT_TRUE(m["eth0"].capable);
	EXPECT_TRUE(m["eth0.5"].capable) << m["eth0.5"].reason;
	EXPECT_FALSE(m["br0"].capable);
	EXPECT_NE(m["br0"].reason.view().find("iWARP"), std::string::npos) << m["br0"].reason;
	EXPECT_FALSE(m["mv0"].capable);
	EXPECT_EQ(m["mv0"].device, "cxgb4_0");
}

TEST(InterfaceRules, UnreadableGidTableTrustsOnlyThePortsNetdev)
{
	Machine m;
	NetdevFacts vlan = netdev(3, "eth0.9", "vlan");
	vlan.link = 2;
	m.netdevs = { netdev(2, "eth0"), vlan };
	RdmaPortFacts p = roce("mlx5_0", 2, {});
	p.gid_table_known = false;
	m.ports = ports(std::move(p));
	m.judge();
	EXPECT_TRUE(m["eth0"].capable);
	EXPECT_FALSE(m["eth0.9"].capable);
}

TEST(InterfaceRules, AMissingLowerDeviceOrALoopEnds)
{
	Machine m;
	NetdevFacts a = netdev(2, "a", "vlan"), b = netdev(3, "b", "vlan");
	a.link = 3;
	b.link = 2; // rtnetlink never says so; the rules must still end
	NetdevFacts orphan = netdev(4, "c", "vlan");
	orphan.link = 99;
	m.netdevs = { a, b, orphan };
	m.ports = ports(roce("rxe0", 5, { 5 }));
	m.judge();
	EXPECT_FALSE(m["a"].capable);
	EXPECT_FALSE(m["c"].capable);
	EXPECT_EQ(m["c"].reason, "no RDMA device");
}

TEST(InterfaceRules, SpeedPrefersTheNetdev)
{
	Machine m;
	NetdevFacts known = netdev(2, "eth0");
	known.speed_mbps = 25000;
	m.netdevs = { known, netdev(3, "eth1") };
	RdmaPortFacts p0 = roce("mlx5_0", 2, { 2 }), p1 = roce("mlx5_1", 3, { 3 });
	p0.rate_bps = p1.rate_bps = 40000000000ull;
	m.ports = ports(std::move(p0), std::move(p1));
	m.judge();
	EXPECT_EQ(m["eth0"].speed_bps, 25000000000ull);
	EXPECT_EQ(m["eth1"].speed_bps, 40000000000ull);
}

} // namespace

namespace
{

TEST(InterfaceRules, GidTableIsReadOnlyWhereItDecides)
{
	using sd::detail::gid_table_decides;
	NetdevFacts eth0 = netdev(2, "eth0"), eth1 = netdev(3, "eth1");
	std::vector<NetdevFacts> plain = { loopback(), eth0, eth1 };
	EXPECT_FALSE(gid_table_decides(plain, 2));

	NetdevFacts vlan = netdev(4, "eth0.5", "vlan");
	vlan.link = 2;
	std::vector<NetdevFacts> with_vlan = { loopback(), eth0, eth1, vlan };
	EXPECT_TRUE(gid_table_decides(with_vlan, 2));
	EXPECT_FALSE(gid_table_decides(with_vlan, 3)); // eth1 has nothing on it

	NetdevFacts slave = eth0;
	slave.master = 9;
	std::vector<NetdevFacts> enslaved = { loopback(), slave, netdev(9, "br0", "bridge") };
	EXPECT_TRUE(gid_table_decides(enslaved, 2));

	// A veth peer's IFLA_LINK is no stacking.
	NetdevFacts peer = netdev(5, "veth1", "veth");
	peer.link = 2;
	std::vector<NetdevFacts> veth = { eth0, peer };
	EXPECT_FALSE(gid_table_decides(veth, 2));
}

TEST(InterfaceRules, IpoibPresence)
{
	std::vector<NetdevFacts> eth = { loopback(), netdev(2, "eth0") };
	EXPECT_FALSE(sd::detail::have_ipoib(eth));
	eth.push_back(ipoib(3, "ib0", gid(1)));
	EXPECT_TRUE(sd::detail::have_ipoib(eth));
}

TEST(InterfaceRules, UnreadGidTableNamesWhyAStackedDeviceIsNotCapable)
{
	Machine m;
	NetdevFacts vlan = netdev(3, "eth0.9", "vlan");
	vlan.link = 2;
	m.netdevs = { netdev(2, "eth0"), vlan };
	RdmaPortFacts p = roce("mlx5_0", 2, {});
	p.gid_table_known = false;
	m.ports = ports(std::move(p));
	m.judge();
	EXPECT_EQ(m["eth0"].reason, "RoCE mlx5_0 port 1 on this interface");
	EXPECT_NE(m["eth0.9"].reason.view().find("could not be read"), std::string::npos)
		<< m["eth0.9"].reason;
}

} // namespace
