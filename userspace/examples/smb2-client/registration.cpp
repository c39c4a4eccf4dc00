// SPDX-License-Identifier: LGPL-2.1-or-later
#include "registration.hpp"

#include <endian.h>
#include <utility>

namespace smb2 {

Registration::~Registration()
{
	if (registered())
		(void)smbdirect_rdma_v1_deregister(fd_, &reg_);
}

Registration::Registration(Registration &&other) noexcept
	: fd_(std::exchange(other.fd_, -1)), reg_(std::exchange(other.reg_, {}))
{
}

Registration &Registration::operator=(Registration &&other) noexcept
{
	if (this != &other) {
		if (registered())
			(void)smbdirect_rdma_v1_deregister(fd_, &reg_);
		fd_ = std::exchange(other.fd_, -1);
		reg_ = std::exchange(other.reg_, {});
	}
	return *this;
}

std::error_code Registration::register_memory(int fd, std::span<const iovec> iov, uint32_t flags)
{
	if (registered())
		return std::make_error_code(std::errc::device_or_resource_busy);
	int err = smbdirect_rdma_v1_register(fd, iov.data(), static_cast<int>(iov.size()), flags,
					     &reg_);
	if (err < 0)
		return errno_code(err);
	fd_ = fd;
	return {};
}

Result<uint32_t> Registration::deregister()
{
	if (!registered())
		return std::make_error_code(std::errc::invalid_argument);
	int state = smbdirect_rdma_v1_deregister(std::exchange(fd_, -1), &reg_);
	if (state < 0)
		return errno_code(state);
	return static_cast<uint32_t>(state);
}

std::vector<BufferDescriptor> Registration::descriptors() const
{
	std::vector<BufferDescriptor> out;
	out.reserve(reg_.desc_count);
	for (uint32_t i = 0; i < reg_.desc_count; i++) {
		const auto &d = reg_.desc[i];
		out.push_back({ le64toh(d.offset), le32toh(d.token), le32toh(d.length) });
	}
	return out;
}

} // namespace smb2
