// SPDX-License-Identifier: LGPL-2.1-or-later
//
// smbdirect_interfaces@SMBDIRECT_0.1: the call as libsmbdirect 0.1 had it,
// for programs built against 0.1, whose struct smbdirect_interface had no
// size field (0.2 put it first, so every offset moved). Programs built
// against 0.2 or later call smbdirect_interfaces_sized@SMBDIRECT_0.2
// through the header's inline smbdirect_interfaces() and never bind to
// this one (it is not the default version). In the shared library only: a
// static library has no versions, and its users compile against the
// header they link with.
#include "internal.h"
#include "interfaces.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

using namespace sd::detail;


extern "C" __attribute__((visibility("default"))) int
sd_interfaces_0_1(struct sd::detail::interface_0_1 **list, uint32_t flags);

__asm__(".symver sd_interfaces_0_1, smbdirect_interfaces@SMBDIRECT_0.1");

int sd_interfaces_0_1(struct interface_0_1 **list, uint32_t flags)
{
	if (!list)
		return -EINVAL;
	*list = nullptr;
	struct smbdirect_interface *now = nullptr;
	int n = smbdirect_interfaces_sized(&now, flags, sizeof(*now));
	if (n < 0)
		return n;
	auto *old = static_cast<interface_0_1 *>(interface_list_alloc(
		static_cast<size_t>(n), sizeof(interface_0_1), offsetof(interface_0_1, addrs)));
	if (!old) {
		smbdirect_interfaces_free(now, n);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		const struct smbdirect_interface &e = now[i];
		interface_0_1 &o = old[i];
		o.ifindex = e.ifindex;
		std::memcpy(o.name, e.name, sizeof(o.name));
		std::memcpy(o.rdma_device, e.rdma_device, sizeof(o.rdma_device));
		o.rdma_port = e.rdma_port;
		o.transport = e.transport;
		o.flags = e.flags;
		o.speed_bps = e.speed_bps;
		std::memcpy(o.reason, e.reason, sizeof(o.reason));
		o.addr_count = e.addr_count;
		o.addrs = e.addrs; // moved: freed with the old array
		now[i].addrs = nullptr;
	}
	smbdirect_interfaces_free(now, n);
	*list = old;
	return n;
}
