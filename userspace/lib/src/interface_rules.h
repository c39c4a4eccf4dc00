// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Which network interfaces SMB3 multichannel may announce RDMA_CAPABLE
// (FSCTL_QUERY_NETWORK_INTERFACE_INFO): the rules, as a pure function of
// plain facts, so that host tests can fabricate any machine. The facts
// come from rtnetlink, RDMA netlink and sysfs (interface_probe.cpp).
//
// The rules follow what the kernel's RDMA connection manager accepts as a
// source address (drivers/infiniband/core/cma.c, cma_validate_port(), and
// the RoCE GID table kept by roce_gid_mgmt.c):
//  - RoCE: an address can carry RDMA exactly when the port's GID table has
//    an entry for it on that netdev. The kernel adds the port's own netdev
//    and its upper devices (VLAN, macvlan, bond master while the port is an
//    active or non-bonded slave, bridge), so the GID table decides: a
//    bridge or VLAN whose entries are there is capable, one whose entries
//    are missing (an inactive bond slave's uppers, a device moved to another
//    namespace) is not, whatever its lower device.
//  - iWARP: only the port's netdev itself and VLANs on it (cma matches the
//    bound interface against the first GID entry's netdev and its VLANs);
//    a bridge, bond or macvlan over an iWARP netdev is not capable.
//  - InfiniBand: an IPoIB netdev (ARPHRD_INFINIBAND) whose hardware address
//    carries a GID of an InfiniBand port; child interfaces (ib0.8001) share
//    the parent's GID and are capable too.
//  - loopback never: other hosts cannot reach it, and rdma_cm resolves no
//    route over lo even with an RDMA device on it (siw on lo).
//  - anything else (a plain NIC, a VF netdev without an RDMA device of its
//    own, a tunnel) is not capable.
#ifndef SMBDIRECT_LIB_INTERFACE_RULES_H
#define SMBDIRECT_LIB_INTERFACE_RULES_H

#include "containers.h"

#include <array>
#include <cstdint>
#include <net/if.h>
#include <span>

namespace sd::detail
{

// The lengths the kernel allows: IFNAMSIZ, IB_DEVICE_NAME_MAX, MAX_ADDR_LEN.
using NetdevName = FixedString<IFNAMSIZ>;
using NetdevKind = FixedString<32>;
using RdmaDeviceName = FixedString<64>;
constexpr size_t max_hwaddr_len = 32;
// Longer than struct smbdirect_interface's reason[], which cuts it.
using Reason = FixedString<256>;

// One network device as rtnetlink describes it.
struct NetdevFacts {
	int ifindex = 0;
	NetdevName name;
	NetdevKind kind;       // IFLA_INFO_KIND: "vlan", "bridge", "bond", "macvlan",
			       // "ipvlan", "veth", "ipoib", ... ("" for hardware)
	unsigned arptype = 0;  // ARPHRD_*
	unsigned flags = 0;    // IFF_*
	int link = 0;	       // IFLA_LINK: the lower device (VLAN, macvlan, IPoIB child)
	int master = 0;	       // IFLA_MASTER: the bridge or bond it is enslaved to
	size_t hwaddr_len = 0; // of hwaddr; IPoIB: 4 bytes QPN, then the port GID
	std::array<uint8_t, max_hwaddr_len> hwaddr = {};
	int64_t speed_mbps = -1; // /sys/class/net/<if>/speed; <= 0 unknown
};

// One port of an RDMA device as RDMA netlink and sysfs describe it.
struct RdmaPortFacts {
	RdmaDeviceName device; // "mlx5_0", "rxe0", "siw1"
	uint32_t port = 1;
	uint32_t transport = 0;		      // SMBDIRECT_TRANSPORT_*; 0 unknown
	int netdev = 0;			      // RDMA_NLDEV_ATTR_NDEV_INDEX; 0 none (IB)
	bool gid_table_known = false;	      // gid_netdevs was read (see gid_table_decides())
	Vector<int> gid_netdevs;	      // RoCE: netdevs with an entry in the GID table
	Vector<std::array<uint8_t, 16>> gids; // InfiniBand: the port's GIDs
	uint64_t rate_bps = 0;		      // the port's rate; 0 unknown
};

struct InterfaceVerdict {
	int ifindex = 0;
	bool capable = false;  // announce RDMA_CAPABLE
	RdmaDeviceName device; // the RDMA device serving it ("" none)
	uint32_t port = 0;
	uint32_t transport = 0; // SMBDIRECT_TRANSPORT_*; 0 none
	uint64_t speed_bps = 0; // netdev speed, else the port's rate; 0 unknown
	Reason reason;		// why it is (not) capable, for people
};

// One verdict per netdev, in the order of netdevs, into verdicts (emptied
// first). 0, or -ENOMEM.
[[nodiscard]] int classify_interfaces(std::span<const NetdevFacts> netdevs,
				      std::span<const RdmaPortFacts> ports,
				      Vector<InterfaceVerdict> &verdicts);

// Whether a RoCE port's GID table can change a verdict, i.e. whether it is
// worth reading (sysfs has an entry per slot, 1024 on rxe, and every open
// costs): only when the port's netdev is enslaved (bond, bridge) or carries
// stacked devices (VLAN, macvlan, ipvlan). Otherwise the kernel keeps the
// netdev's own default GIDs in the table and nothing else can be there.
bool gid_table_decides(std::span<const NetdevFacts> netdevs, int port_netdev);

// Whether any netdev is IPoIB, the only use of InfiniBand ports' GIDs.
bool have_ipoib(std::span<const NetdevFacts> netdevs);

} // namespace sd::detail

#endif // SMBDIRECT_LIB_INTERFACE_RULES_H
