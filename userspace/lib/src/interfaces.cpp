// SPDX-License-Identifier: LGPL-2.1-or-later
//
// smbdirect_interfaces(): the facts (interface_probe.cpp) judged by the
// rules (interface_rules.cpp), as plain C structs.
#include "internal.h"
#include "interface_probe.h"
#include "interface_rules.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <net/if.h>

using namespace sd::detail;

namespace
{

void copy_string(char *dst, size_t room, const std::string &src)
{
	std::snprintf(dst, room, "%s", src.c_str());
}

int list_interfaces(struct smbdirect_interface **list, uint32_t flags)
{
	SystemFacts facts;
	int err = probe_system(facts);
	if (err)
		return err;
	std::vector<InterfaceVerdict> verdicts = classify_interfaces(facts.netdevs, facts.ports);

	size_t count = 0;
	for (const InterfaceVerdict &v : verdicts)
		if ((flags & SMBDIRECT_IF_LIST_ALL) || !v.device.empty())
			count++;
	auto *out = static_cast<struct smbdirect_interface *>(
		std::calloc(count ? count : 1, sizeof(struct smbdirect_interface)));
	if (!out)
		return -ENOMEM;

	size_t at = 0;
	for (size_t i = 0; i < verdicts.size(); i++) {
		const InterfaceVerdict &v = verdicts[i];
		const NetdevFacts &n = facts.netdevs[i];
		if (!(flags & SMBDIRECT_IF_LIST_ALL) && v.device.empty())
			continue;
		struct smbdirect_interface &e = out[at++];
		e.ifindex = n.ifindex;
		copy_string(e.name, sizeof(e.name), n.name);
		copy_string(e.rdma_device, sizeof(e.rdma_device), v.device);
		copy_string(e.reason, sizeof(e.reason), v.reason);
		e.rdma_port = v.port;
		e.transport = v.transport;
		e.speed_bps = v.speed_bps;
		if (v.capable)
			e.flags |= SMBDIRECT_IF_RDMA_CAPABLE;
		if ((n.flags & IFF_UP) && (n.flags & IFF_RUNNING))
			e.flags |= SMBDIRECT_IF_UP;
		uint32_t addrs = 0;
		for (const InterfaceAddress &a : facts.addresses)
			addrs += a.ifindex == n.ifindex;
		if (!addrs)
			continue;
		e.addrs = static_cast<struct sockaddr_storage *>(
			std::calloc(addrs, sizeof(struct sockaddr_storage)));
		if (!e.addrs) {
			smbdirect_interfaces_free(out, static_cast<int>(at));
			return -ENOMEM;
		}
		for (const InterfaceAddress &a : facts.addresses)
			if (a.ifindex == n.ifindex)
				e.addrs[e.addr_count++] = a.addr;
	}
	*list = out;
	return static_cast<int>(count);
}

} // namespace

extern "C" {

int smbdirect_interfaces(struct smbdirect_interface **list, uint32_t flags)
{
	if (!list)
		return -EINVAL;
	*list = nullptr;
	if (flags & ~static_cast<uint32_t>(SMBDIRECT_IF_LIST_ALL))
		return -EINVAL;
	ErrnoGuard keep;
	return no_throw([&] { return list_interfaces(list, flags); });
}

void smbdirect_interfaces_free(struct smbdirect_interface *list, int count)
{
	if (!list)
		return;
	for (int i = 0; i < count; i++)
		std::free(list[i].addrs);
	std::free(list);
}

} // extern "C"
