// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Page-aligned anonymous memory (mmap) for RDMA buffers: registrations
 * pin whole pages, and the tests place data at chosen page offsets.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_CLIENT_PAGE_BUFFER_HPP
#define SMBDIRECT_EXAMPLES_SMB2_CLIENT_PAGE_BUFFER_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

namespace smb2 {

class PageBuffer {
public:
	PageBuffer() = default;
	explicit PageBuffer(size_t bytes)
	{
		size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
		size_ = (bytes + page - 1) / page * page;
		if (size_ == 0)
			size_ = page;
		void *p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (p == MAP_FAILED) {
			size_ = 0;
			return;
		}
		data_ = static_cast<uint8_t *>(p);
	}
	~PageBuffer()
	{
		if (data_)
			munmap(data_, size_);
	}
	PageBuffer(PageBuffer &&o) noexcept
		: data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0))
	{
	}
	PageBuffer &operator=(PageBuffer &&o) noexcept
	{
		std::swap(data_, o.data_);
		std::swap(size_, o.size_);
		return *this;
	}

	bool ok() const
	{
		return data_ != nullptr;
	}
	uint8_t *data()
	{
		return data_;
	}
	size_t size() const
	{
		return size_;
	}
	std::span<uint8_t> span()
	{
		return { data_, size_ };
	}

private:
	uint8_t *data_ = nullptr;
	size_t size_ = 0;
};

} // namespace smb2

#endif
