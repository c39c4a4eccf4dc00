// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The two containers the interface list needs, with no C++ runtime under
// them: libsmbdirect is built -fno-exceptions -fno-rtti and linked without
// libstdc++ (a C program such as Samba's smbd loads libc only for it), so
// nothing here calls operator new or a std::__throw_* helper.
//  - FixedString<N>: a NUL-terminated string in N bytes that truncates, as
//    the C API's fixed-size fields (interface and device names, reasons) do.
//  - Vector<T>: a growable array on malloc() whose growth reports failure
//    ([[nodiscard]] false) instead of throwing, so that callers return
//    -ENOMEM.
#ifndef SMBDIRECT_LIB_CONTAINERS_H
#define SMBDIRECT_LIB_CONTAINERS_H

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

namespace sd::detail
{

template <size_t N> class FixedString {
	static_assert(N > 0);

    public:
	FixedString() noexcept = default;
	FixedString(const char *s) noexcept
	{
		append(s);
	}

	FixedString &operator=(std::string_view s) noexcept
	{
		clear();
		return append(s);
	}
	FixedString &operator=(const char *s) noexcept
	{
		return *this = std::string_view(s);
	}
	// Appends what fits; the rest is cut off (and truncated() says so).
	FixedString &append(std::string_view s) noexcept
	{
		size_t n = std::min(s.size(), N - 1 - len_);
		std::memcpy(buf_ + len_, s.data(), n);
		len_ += n;
		buf_[len_] = '\0';
		truncated_ |= n < s.size();
		return *this;
	}
	template <std::integral I> FixedString &append(I v) noexcept
	{
		char digits[24];
		if constexpr (std::is_signed_v<I>)
			std::snprintf(digits, sizeof(digits), "%lld", static_cast<long long>(v));
		else
			std::snprintf(digits, sizeof(digits), "%llu",
				      static_cast<unsigned long long>(v));
		return append(std::string_view(digits));
	}
	// Any mix of strings and integers, in order.
	template <class... Parts> FixedString &append_all(const Parts &...parts) noexcept
	{
		(append(parts), ...);
		return *this;
	}
	void clear() noexcept
	{
		len_ = 0;
		buf_[0] = '\0';
		truncated_ = false;
	}

	const char *c_str() const noexcept
	{
		return buf_;
	}
	size_t size() const noexcept
	{
		return len_;
	}
	bool empty() const noexcept
	{
		return len_ == 0;
	}
	bool truncated() const noexcept
	{
		return truncated_;
	}
	std::string_view view() const noexcept
	{
		return { buf_, len_ };
	}
	operator std::string_view() const noexcept
	{
		return view();
	}
	friend bool operator==(const FixedString &a, std::string_view b) noexcept
	{
		return a.view() == b;
	}

    private:
	size_t len_ = 0;
	bool truncated_ = false;
	char buf_[N] = {};
};

template <class T> class Vector {
    public:
	Vector() noexcept = default;
	Vector(Vector &&o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_)
	{
		o.data_ = nullptr;
		o.size_ = o.capacity_ = 0;
	}
	Vector &operator=(Vector &&o) noexcept
	{
		if (this != &o) {
			release();
			std::swap(data_, o.data_);
			std::swap(size_, o.size_);
			std::swap(capacity_, o.capacity_);
		}
		return *this;
	}
	// Copying could fail only silently: copy element by element instead.
	Vector(const Vector &) = delete;
	Vector &operator=(const Vector &) = delete;
	~Vector()
	{
		release();
	}

	[[nodiscard]] bool reserve(size_t n) noexcept
	{
		if (n <= capacity_)
			return true;
		if (n > SIZE_MAX / sizeof(T))
			return false;
		T *p = static_cast<T *>(std::malloc(n * sizeof(T)));
		if (!p)
			return false;
		for (size_t i = 0; i < size_; i++) {
			new (p + i) T(std::move(data_[i]));
			data_[i].~T();
		}
		std::free(data_);
		data_ = p;
		capacity_ = n;
		return true;
	}
	// By value: v may be an element of this vector, which growing moves.
	[[nodiscard]] bool push_back(T v) noexcept
	{
		if (size_ == capacity_ && !reserve(capacity_ ? capacity_ * 2 : 4))
			return false;
		new (data_ + size_) T(std::move(v));
		size_++;
		return true;
	}
	void clear() noexcept
	{
		for (size_t i = 0; i < size_; i++)
			data_[i].~T();
		size_ = 0;
	}
	bool contains(const T &v) const noexcept
	{
		for (const T &e : *this)
			if (e == v)
				return true;
		return false;
	}

	T *data() noexcept
	{
		return data_;
	}
	const T *data() const noexcept
	{
		return data_;
	}
	size_t size() const noexcept
	{
		return size_;
	}
	bool empty() const noexcept
	{
		return size_ == 0;
	}
	T &operator[](size_t i) noexcept
	{
		return data_[i];
	}
	const T &operator[](size_t i) const noexcept
	{
		return data_[i];
	}
	T *begin() noexcept
	{
		return data_;
	}
	T *end() noexcept
	{
		return data_ + size_;
	}
	const T *begin() const noexcept
	{
		return data_;
	}
	const T *end() const noexcept
	{
		return data_ + size_;
	}
	operator std::span<const T>() const noexcept
	{
		return { data_, size_ };
	}

    private:
	void release() noexcept
	{
		clear();
		std::free(data_);
		data_ = nullptr;
		capacity_ = 0;
	}

	T *data_ = nullptr;
	size_t size_ = 0;
	size_t capacity_ = 0;
};

} // namespace sd::detail

#endif // SMBDIRECT_LIB_CONTAINERS_H
