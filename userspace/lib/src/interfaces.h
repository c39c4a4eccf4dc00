// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The arrays smbdirect_interfaces_sized() (and 0.1's smbdirect_interfaces,
// interfaces_compat.cpp) return: a hidden header before the entries says
// their stride and where each holds its addrs pointer, so that
// smbdirect_interfaces_free() frees either layout.
#ifndef SMBDIRECT_LIB_INTERFACES_H
#define SMBDIRECT_LIB_INTERFACES_H

#include <cstddef>
#include <cstdint>
#include <sys/socket.h>

namespace sd::detail
{

// The largest entry_size a caller may ask for.
inline constexpr size_t interface_entry_max = 4096;

// count entries (room for one at least) of stride bytes, zeroed; the
// pointer to the first; nullptr when out of memory.
void *interface_list_alloc(size_t count, size_t stride, size_t addrs_offset) noexcept;
// Frees the first count entries' addrs and the array.
void interface_list_free(void *list, int count) noexcept;

// 0.1's struct smbdirect_interface (no size), which
// smbdirect_interfaces@SMBDIRECT_0.1 returns (interfaces_compat.cpp).
struct interface_0_1 {
	int ifindex;
	char name[16];
	char rdma_device[64];
	uint32_t rdma_port;
	uint32_t transport;
	uint32_t flags;
	uint64_t speed_bps;
	char reason[96];
	uint32_t addr_count;
	struct sockaddr_storage *addrs;
};
#if defined(__x86_64__)
static_assert(sizeof(interface_0_1) == 216 && offsetof(interface_0_1, addrs) == 208,
	      "0.1's layout on x86-64");
#endif

} // namespace sd::detail

#endif // SMBDIRECT_LIB_INTERFACES_H
