/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixed-width integers and the few traits the core needs. The core is built
 * with -nostdinc, so nothing here may come from a system header; the
 * compiler's predefined macros give the exact types.
 */
#ifndef SD_CORE_TYPES_H
#define SD_CORE_TYPES_H

namespace sd
{

using u8 = __UINT8_TYPE__;
using u16 = __UINT16_TYPE__;
using u32 = __UINT32_TYPE__;
using u64 = __UINT64_TYPE__;
using i32 = __INT32_TYPE__;
using usize = decltype(sizeof(0));

static_assert(sizeof(u8) == 1 && sizeof(u16) == 2 && sizeof(u32) == 4 && sizeof(u64) == 8);

inline constexpr u16 u16_max = 0xffff;
inline constexpr u32 u32_max = 0xffffffffu;

template <typename T> [[nodiscard]] constexpr T min(T a, T b)
{
	return b < a ? b : a;
}

template <typename T> [[nodiscard]] constexpr T max(T a, T b)
{
	return a < b ? b : a;
}

/* Replaces std::move without <utility>. */
template <typename T> struct remove_reference {
	using type = T;
};
template <typename T> struct remove_reference<T &> {
	using type = T;
};
template <typename T> struct remove_reference<T &&> {
	using type = T;
};

template <typename T> constexpr typename remove_reference<T>::type &&move(T &&t)
{
	return static_cast<typename remove_reference<T>::type &&>(t);
}

} // namespace sd

#endif
