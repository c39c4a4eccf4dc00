// SPDX-License-Identifier: LGPL-2.1-or-later
//
// smbdirect_interfaces(): the facts (interface_probe.cpp) judged by the
// rules (interface_rules.cpp), as plain C structs of the caller's size.
#include "internal.h"
#include "interface_probe.h"
#include "interface_rules.h"
#include "interfaces.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <net/if.h>

using namespace sd::detail;

namespace
{

void copy_string(char *dst, size_t room, std::string_view src)
{
	std::snprintf(dst, room, "%.*s", static_cast<int>(src.size()), src.data());
}

// What an entry's caller-sized slot looks like to the library: the
// entries start stride bytes apart, and the 0.2 struct is at the start of
// each (the caller's may be longer; its tail stays zero).
struct Slots {
	unsigned char *base;
	size_t stride;
	struct smbdirect_interface &operator[](size_t i) const noexcept
	{
		return *reinterpret_cast<struct smbdirect_interface *>(base + i * stride);
	}
};

int list_interfaces(struct smbdirect_interface **list, uint32_t flags, size_t stride)
{
	SystemFacts facts;
	int err = probe_system(facts);
	if (err)
		return err;
	Vector<InterfaceVerdict> verdicts;
	err = classify_interfaces(facts.netdevs, facts.ports, verdicts);
	if (err)
		return err;

	size_t count = 0;
	for (const InterfaceVerdict &v : verdicts)
		if ((flags & SMBDIRECT_IF_LIST_ALL) || !v.device.empty())
			count++;
	void *mem = interface_list_alloc(count, stride,
					 offsetof(struct smbdirect_interface, addrs));
	if (!mem)
		return -ENOMEM;
	Slots out{ static_cast<unsigned char *>(mem), stride };

	size_t at = 0;
	for (size_t i = 0; i < verdicts.size(); i++) {
		const InterfaceVerdict &v = verdicts[i];
		const NetdevFacts &n = facts.netdevs[i];
		if (!(flags & SMBDIRECT_IF_LIST_ALL) && v.device.empty())
			continue;
		struct smbdirect_interface &e = out[at++];
		e.size = sizeof(e);
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
			smbdirect_interfaces_free(&out[0], static_cast<int>(at));
			return -ENOMEM;
		}
		for (const InterfaceAddress &a : facts.addresses)
			if (a.ifindex == n.ifindex)
				e.addrs[e.addr_count++] = a.addr;
	}
	*list = &out[0];
	return static_cast<int>(count);
}

} // namespace

namespace sd::detail
{

// The array is preceded by a header that says how to free it, whichever
// layout (0.1's, or 0.2's at a caller's stride) it holds.
namespace
{
struct alignas(alignof(std::max_align_t)) ListHeader {
	size_t stride;
	size_t addrs_offset;
};
} // namespace

void *interface_list_alloc(size_t count, size_t stride, size_t addrs_offset) noexcept
{
	void *mem = std::calloc(1, sizeof(ListHeader) + (count ? count : 1) * stride);
	if (!mem)
		return nullptr;
	auto *h = static_cast<ListHeader *>(mem);
	h->stride = stride;
	h->addrs_offset = addrs_offset;
	return h + 1;
}

void interface_list_free(void *list, int count) noexcept
{
	if (!list)
		return;
	auto *h = static_cast<ListHeader *>(list) - 1;
	auto *base = static_cast<unsigned char *>(list);
	for (int i = 0; i < count; i++) {
		struct sockaddr_storage *addrs;
		std::memcpy(&addrs, base + static_cast<size_t>(i) * h->stride + h->addrs_offset,
			    sizeof(addrs));
		std::free(addrs);
	}
	std::free(h);
}

} // namespace sd::detail

extern "C" {

int smbdirect_interfaces_sized(struct smbdirect_interface **list, uint32_t flags,
			       size_t entry_size)
{
	if (!list)
		return -EINVAL;
	*list = nullptr;
	if (flags & ~static_cast<uint32_t>(SMBDIRECT_IF_LIST_ALL))
		return -EINVAL;
	if (entry_size < sizeof(struct smbdirect_interface) || entry_size > interface_entry_max ||
	    entry_size % alignof(struct smbdirect_interface))
		return -EINVAL;
	ErrnoGuard keep;
	return list_interfaces(list, flags, entry_size);
}

void smbdirect_interfaces_free(struct smbdirect_interface *list, int count)
{
	interface_list_free(list, count);
}

} // extern "C"
