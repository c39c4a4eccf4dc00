// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The RDMA_CAPABLE rules (see interface_rules.h for where they come from).
#include "interface_rules.h"

#include <algorithm>
#include <cerrno>
#include <net/if_arp.h>
#include <linux/smbdirect.h>
#include <net/if.h>

namespace sd::detail
{

namespace
{

// Stacked devices deeper than this are not followed (and a loop of
// IFLA_LINK/IFLA_MASTER, which rtnetlink never reports, ends).
constexpr int max_stack_depth = 8;

const NetdevFacts *find_netdev(std::span<const NetdevFacts> netdevs, int ifindex)
{
	if (ifindex <= 0)
		return nullptr;
	for (const NetdevFacts &n : netdevs)
		if (n.ifindex == ifindex)
			return &n;
	return nullptr;
}

// Long enough for "ifindex " and any int.
using NameText = FixedString<32>;
static_assert(sizeof(NetdevName) <= sizeof(NameText));

NameText name_of(std::span<const NetdevFacts> netdevs, int ifindex)
{
	const NetdevFacts *n = find_netdev(netdevs, ifindex);
	NameText text;
	if (n)
		text = n->name;
	else
		text.append_all("ifindex ", ifindex);
	return text;
}

bool is_loopback(const NetdevFacts &n)
{
	return (n.flags & IFF_LOOPBACK) || n.arptype == ARPHRD_LOOPBACK;
}

bool stacks_by_link(const NetdevKind &kind)
{
	return kind == "vlan" || kind == "macvlan" || kind == "macvtap" || kind == "ipvlan";
}

// Is lower below n (a VLAN/macvlan's link, a bridge's or bond's port),
// directly or through other stacked devices?
bool is_below(std::span<const NetdevFacts> netdevs, const NetdevFacts &n, int lower, int depth = 0)
{
	if (depth > max_stack_depth || lower <= 0)
		return false;
	if (stacks_by_link(n.kind) && n.link > 0 && n.link != n.ifindex) {
		if (n.link == lower)
			return true;
		const NetdevFacts *l = find_netdev(netdevs, n.link);
		if (l && is_below(netdevs, *l, lower, depth + 1))
			return true;
	}
	for (const NetdevFacts &m : netdevs) {
		if (m.master != n.ifindex || m.ifindex == n.ifindex)
			continue;
		if (m.ifindex == lower || is_below(netdevs, m, lower, depth + 1))
			return true;
	}
	return false;
}

// "VLAN on veth0", "bridge over eth0": how n sits on the port's netdev.
using Relation = FixedString<128>;
Relation relation(std::span<const NetdevFacts> netdevs, const NetdevFacts &n, int lower)
{
	NameText below = name_of(netdevs, lower);
	NameText link = n.link == lower ? below : name_of(netdevs, n.link);
	Relation r;
	if (n.kind == "vlan")
		r.append_all("VLAN on ", link);
	else if (stacks_by_link(n.kind))
		r.append_all(n.kind, " on ", link);
	else if (n.kind.empty())
		r.append_all("upper device of ", below);
	else
		r.append_all(n.kind, " over ", below);
	return r;
}

// "mlx5_0 port 1".
using PortName = FixedString<96>;
PortName port_name(const RdmaPortFacts &p)
{
	PortName name;
	name.append_all(p.device, " port ", p.port);
	return name;
}

bool in_gid_table(const RdmaPortFacts &p, int ifindex)
{
	return p.gid_netdevs.contains(ifindex);
}

void serve(InterfaceVerdict &v, const RdmaPortFacts &p, bool capable, const Reason &reason)
{
	v.capable = capable;
	v.device = p.device;
	v.port = p.port;
	v.transport = p.transport;
	v.reason = reason;
}

// IPoIB: the hardware address is 4 bytes of QPN and flags, then the GID.
bool classify_ipoib(std::span<const NetdevFacts> netdevs, std::span<const RdmaPortFacts> ports,
		    const NetdevFacts &n, InterfaceVerdict &v)
{
	if (n.hwaddr_len == 20) {
		std::array<uint8_t, 16> gid;
		std::copy(n.hwaddr.begin() + 4, n.hwaddr.begin() + 20, gid.begin());
		for (const RdmaPortFacts &p : ports) {
			if (p.transport != SMBDIRECT_TRANSPORT_IB || !p.gids.contains(gid))
				continue;
			Reason r;
			if (n.link > 0 && n.link != n.ifindex)
				r.append_all("IPoIB child of ", name_of(netdevs, n.link), " on ");
			else
				r.append("IPoIB on ");
			serve(v, p, true, r.append(port_name(p)));
			return true;
		}
	}
	v.reason = "IPoIB interface whose GID no InfiniBand port has";
	return false;
}

// RoCE or iWARP port p for Ethernet-like netdev n: capable?
bool ethernet_capable(std::span<const NetdevFacts> netdevs, const RdmaPortFacts &p,
		      const NetdevFacts &n, Reason &reason)
{
	bool own = p.netdev > 0 && p.netdev == n.ifindex;
	reason.clear();
	if (p.transport == SMBDIRECT_TRANSPORT_ROCE) {
		if (!p.gid_table_known) {
			reason.append_all("RoCE ", port_name(p), " on this interface");
			return own;
		}
		if (!in_gid_table(p, n.ifindex))
			return false;
		if (own)
			reason.append_all("RoCE ", port_name(p), " on this interface");
		else
			reason.append_all(relation(netdevs, n, p.netdev),
					  ", in the GID table of RoCE ", port_name(p));
		return true;
	}
	if (p.transport == SMBDIRECT_TRANSPORT_IWARP) {
		if (own) {
			reason.append_all("iWARP ", port_name(p), " on this interface");
			return true;
		}
		if (n.kind == "vlan" && p.netdev > 0 && n.link == p.netdev) {
			reason.append_all(relation(netdevs, n, p.netdev), ", served by iWARP ",
					  port_name(p));
			return true;
		}
	}
	return false;
}

constexpr std::string_view no_gid_entry =
	", but its GID table has no entry for it: rdma_cm cannot use its addresses";

// Why a netdev on or over port p's netdev is not capable.
Reason not_capable_reason(std::span<const NetdevFacts> netdevs, const RdmaPortFacts &p,
			  const NetdevFacts &n)
{
	bool own = p.netdev == n.ifindex;
	Reason r;
	if (p.transport == SMBDIRECT_TRANSPORT_ROCE) {
		if (!p.gid_table_known)
			r.append_all(relation(netdevs, n, p.netdev), " (RoCE ", port_name(p),
				     "): its GID table could not be read, so only ",
				     name_of(netdevs, p.netdev), " itself counts");
		else if (own && n.master > 0)
			r.append_all("enslaved to ", name_of(netdevs, n.master),
				     " and not in the GID table of RoCE ", port_name(p),
				     ": use the master's addresses");
		else if (own)
			r.append_all("RoCE ", port_name(p), " on this interface", no_gid_entry);
		else
			r.append_all(relation(netdevs, n, p.netdev), " (RoCE ", port_name(p), ")",
				     no_gid_entry);
	} else if (p.transport == SMBDIRECT_TRANSPORT_IWARP) {
		r.append_all(relation(netdevs, n, p.netdev), ": iWARP ", port_name(p),
			     " serves only its own interface and VLANs on it");
	} else {
		r.append_all(relation(netdevs, n, p.netdev), " (", port_name(p),
			     ", transport unknown)");
	}
	return r;
}

InterfaceVerdict classify_one(std::span<const NetdevFacts> netdevs,
			      std::span<const RdmaPortFacts> ports, const NetdevFacts &n)
{
	InterfaceVerdict v;
	v.ifindex = n.ifindex;

	if (is_loopback(n)) {
		for (const RdmaPortFacts &p : ports)
			if (p.netdev == n.ifindex) {
				serve(v, p, false, Reason());
				break;
			}
		v.reason = "loopback: other hosts cannot reach it, and rdma_cm resolves no route "
			   "over it";
		return v;
	}
	if (n.arptype == ARPHRD_INFINIBAND) {
		classify_ipoib(netdevs, ports, n, v);
		return v;
	}

	// A port on this very netdev first, then ports below it.
	for (int pass = 0; pass < 2; pass++) {
		for (const RdmaPortFacts &p : ports) {
			bool own = p.netdev > 0 && p.netdev == n.ifindex;
			if (own != (pass == 0))
				continue;
			Reason reason;
			if (ethernet_capable(netdevs, p, n, reason)) {
				serve(v, p, true, reason);
				return v;
			}
		}
	}
	// Not capable: name the port it sits on, if any, and say why.
	for (int pass = 0; pass < 2; pass++) {
		for (const RdmaPortFacts &p : ports) {
			if (p.netdev <= 0 || p.transport == SMBDIRECT_TRANSPORT_IB)
				continue;
			bool own = p.netdev == n.ifindex;
			if (pass == 0 ? !own : !is_below(netdevs, n, p.netdev))
				continue;
			serve(v, p, false, not_capable_reason(netdevs, p, n));
			return v;
		}
	}
	v.reason = "no RDMA device";
	return v;
}

} // namespace

bool gid_table_decides(std::span<const NetdevFacts> netdevs, int port_netdev)
{
	for (const NetdevFacts &n : netdevs) {
		if (n.ifindex == port_netdev && n.master > 0)
			return true;
		if (n.ifindex != port_netdev && stacks_by_link(n.kind) && n.link == port_netdev)
			return true;
	}
	return false;
}

bool have_ipoib(std::span<const NetdevFacts> netdevs)
{
	for (const NetdevFacts &n : netdevs)
		if (n.arptype == ARPHRD_INFINIBAND)
			return true;
	return false;
}

int classify_interfaces(std::span<const NetdevFacts> netdevs, std::span<const RdmaPortFacts> ports,
			Vector<InterfaceVerdict> &out)
{
	out.clear();
	if (!out.reserve(netdevs.size()))
		return -ENOMEM;
	for (const NetdevFacts &n : netdevs) {
		InterfaceVerdict v = classify_one(netdevs, ports, n);
		if (n.speed_mbps > 0)
			v.speed_bps = static_cast<uint64_t>(n.speed_mbps) * 1000000u;
		else if (!v.device.empty())
			for (const RdmaPortFacts &p : ports)
				if (p.device == v.device && p.port == v.port)
					v.speed_bps = p.rate_bps;
		if (!out.push_back(v))
			return -ENOMEM;
	}
	return 0;
}

} // namespace sd::detail
