// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Gathers the facts interface_rules.h judges: network devices and their
// addresses from rtnetlink (libnl-route-3, loaded on first use), RDMA ports and their netdevs
// from RDMA netlink (libnl-3's core socket API, RDMA_NLDEV_CMD_GET and
// _PORT_GET), and from sysfs what netlink does not tell: the port's link
// layer, rate and GID table, and the netdev's speed.
#ifndef SMBDIRECT_LIB_INTERFACE_PROBE_H
#define SMBDIRECT_LIB_INTERFACE_PROBE_H

#include "containers.h"
#include "interface_rules.h"

#include <string_view>
#include <sys/socket.h>

namespace sd::detail
{

struct InterfaceAddress {
	int ifindex = 0;
	struct sockaddr_storage addr = {};
};

struct SystemFacts {
	Vector<NetdevFacts> netdevs;
	Vector<InterfaceAddress> addresses;
	Vector<RdmaPortFacts> ports;
};

// What RDMA netlink says about one port (before sysfs adds to it).
struct RdmaPortLink {
	RdmaDeviceName device;
	uint32_t port = 0;
	uint32_t node_type = 0; // RDMA_NODE_*
	int netdev = 0;
};

// The sysfs part for one port, below sys_root ("/sys" normally; host tests
// pass a fabricated tree): link layer and node type decide the transport,
// then the rate and, when read_gids, the GID table's netdevs (RoCE) or GIDs
// (InfiniBand). netdevs maps the GID table's netdev names to ifindexes.
// Into port (reset first); 0, or -ENOMEM.
[[nodiscard]] int read_port_sysfs(std::string_view sys_root, const RdmaPortLink &link,
				  std::span<const NetdevFacts> netdevs, bool read_gids,
				  RdmaPortFacts &port);

// /sys/class/net/<name>/speed in Mb/s below sys_root; -1 when unknown.
int64_t read_netdev_speed(std::string_view sys_root, std::string_view name);

// "100 Gb/sec (4X EDR)" -> 100000000000; 0 when it cannot be parsed.
uint64_t parse_port_rate(std::string_view text);

// "fe80:0000:0000:0000:0002:c903:0001:2345" -> 16 bytes; false if malformed.
bool parse_gid(std::string_view text, std::array<uint8_t, 16> &gid);

// Everything, from the running system. 0 or -errno. No RDMA netlink at
// all (ib_core not loaded) is no RDMA port, not an error. libnl is loaded
// on the first call (dlopen of libnl-3.so.200 and libnl-route-3.so.200):
// -ELIBACC when either is not installed.
int probe_system(SystemFacts &facts);

} // namespace sd::detail

#endif // SMBDIRECT_LIB_INTERFACE_PROBE_H
