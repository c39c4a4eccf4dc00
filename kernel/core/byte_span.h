/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bounds-checked views over caller-owned bytes. Every read or write of wire
 * data goes through these, so an offset/length bug becomes an error value
 * instead of an out-of-bounds access.
 */
#ifndef SD_CORE_BYTE_SPAN_H
#define SD_CORE_BYTE_SPAN_H

#include "result.h"
#include "types.h"

namespace sd
{

class ByteSpan {
    public:
	constexpr ByteSpan() = default;
	constexpr ByteSpan(const u8 *data, usize size)
	    : data_(size ? data : nullptr), size_(data ? size : 0)
	{
	}

	[[nodiscard]] constexpr usize size() const
	{
		return size_;
	}
	[[nodiscard]] constexpr const u8 *data() const
	{
		return data_;
	}
	[[nodiscard]] constexpr bool empty() const
	{
		return size_ == 0;
	}
	[[nodiscard]] constexpr bool has(usize offset, usize len) const
	{
		/* Written so that offset + len cannot overflow. */
		return offset <= size_ && len <= size_ - offset;
	}
	/* An empty span when out of range; callers test has() or size(). */
	[[nodiscard]] constexpr ByteSpan sub(usize offset, usize len) const
	{
		if (!has(offset, len))
			return ByteSpan();
		return ByteSpan(data_ + offset, len);
	}

    private:
	const u8 *data_ = nullptr;
	usize size_ = 0;
};

class MutByteSpan {
    public:
	constexpr MutByteSpan() = default;
	constexpr MutByteSpan(u8 *data, usize size)
	    : data_(size ? data : nullptr), size_(data ? size : 0)
	{
	}

	[[nodiscard]] constexpr usize size() const
	{
		return size_;
	}
	[[nodiscard]] constexpr u8 *data() const
	{
		return data_;
	}
	[[nodiscard]] constexpr bool has(usize offset, usize len) const
	{
		return offset <= size_ && len <= size_ - offset;
	}
	[[nodiscard]] constexpr MutByteSpan sub(usize offset, usize len) const
	{
		if (!has(offset, len))
			return MutByteSpan();
		return MutByteSpan(data_ + offset, len);
	}
	[[nodiscard]] Errc copy_in(usize offset, ByteSpan src) const
	{
		if (!has(offset, src.size()))
			return Errc::buffer_too_small;
		if (src.size())
			__builtin_memcpy(data_ + offset, src.data(), src.size());
		return Errc::ok;
	}
	[[nodiscard]] constexpr operator ByteSpan() const
	{
		return ByteSpan(data_, size_);
	}

    private:
	u8 *data_ = nullptr;
	usize size_ = 0;
};

} // namespace sd

#endif
