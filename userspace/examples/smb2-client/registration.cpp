// SPDX-License-Identifier: LGPL-2.1-or-later
#include "registration.hpp"

#include <endian.h>
#include <utility>

namespace smb2 {

std::error_code Registration::register_memory(int fd, std::span<const iovec> iov, uint32_t flags)
{
	if (registered())
		return std::make_error_code(std::errc::device_or_resource_busy);
	auto reg = sd::Registration::create(fd, iov, flags);
	if (!reg)
		return reg.error();
	reg_ = std::move(*reg);
	return {};
}

Result<uint32_t> Registration::deregister()
{
	if (!registered())
		return std::make_error_code(std::errc::invalid_argument);
	auto invalidated = reg_.deregister();
	if (!invalidated)
		return invalidated.error();
	return *invalidated ? uint32_t(SMBDIRECT_REG_STATE_REMOTE_INVALIDATED) : 0u;
}

std::vector<BufferDescriptor> Registration::descriptors() const
{
	std::vector<BufferDescriptor> out;
	for (const sd::Descriptor &d : reg_.descriptors())
		out.push_back({ sd::offset(d), sd::token(d), sd::length(d) });
	return out;
}

} // namespace smb2
