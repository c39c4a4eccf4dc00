// SPDX-License-Identifier: LGPL-2.1-or-later
#include "registration.hpp"

#include <endian.h>

namespace smb2 {

std::error_code Registration::register_memory(int fd, std::span<const iovec> iov, uint32_t flags)
{
	if (registered())
		return std::make_error_code(std::errc::device_or_resource_busy);
	smbdirect_rdma_v1_registration raw;
	int err = smbdirect_rdma_v1_register(fd, iov.data(), static_cast<int>(iov.size()), flags,
					     &raw);
	if (err < 0)
		return errno_code(err);
	reg_ = sd::Registration::adopt(fd, raw);
	return {};
}

Result<uint32_t> Registration::deregister()
{
	if (!registered())
		return std::make_error_code(std::errc::invalid_argument);
	auto remote = reg_.deregister();
	reg_ = sd::Registration(); /* the descriptors go too */
	if (!remote)
		return remote.error();
	return *remote ? SMBDIRECT_REG_STATE_REMOTE_INVALIDATED : 0u;
}

std::vector<BufferDescriptor> Registration::descriptors() const
{
	std::vector<BufferDescriptor> out;
	for (const auto &d : reg_.descriptors())
		out.push_back({ le64toh(d.offset), le32toh(d.token), le32toh(d.length) });
	return out;
}

} // namespace smb2
