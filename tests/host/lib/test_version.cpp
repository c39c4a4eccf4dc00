// SPDX-License-Identifier: GPL-2.0
// The version a consumer can check (the header's macros, the running
// library's string) and the extensible struct smbdirect_interface: the
// caller's entry size, and 0.1's layout for programs built against 0.1.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <dlfcn.h>
#include <smbdirect/smbdirect.h>
#include <string>

#include "interfaces.h"

// Usable in #if.
#if !SMBDIRECT_CHECK_VERSION(0, 2, 0)
#error "SMBDIRECT_CHECK_VERSION(0, 2, 0) is false"
#endif
#if SMBDIRECT_CHECK_VERSION(SMBDIRECT_VERSION_MAJOR + 1, 0, 0)
#error "SMBDIRECT_CHECK_VERSION of the next major version is true"
#endif

namespace
{

TEST(Version, MacrosCompareAsVersions)
{
	EXPECT_EQ(SMBDIRECT_VERSION_MAJOR, 0);
	EXPECT_GE(SMBDIRECT_VERSION_MINOR, 2);
	EXPECT_EQ(std::string(SMBDIRECT_VERSION_STRING),
		  std::to_string(SMBDIRECT_VERSION_MAJOR) + "." +
			  std::to_string(SMBDIRECT_VERSION_MINOR) + "." +
			  std::to_string(SMBDIRECT_VERSION_PATCH));
	EXPECT_TRUE(SMBDIRECT_CHECK_VERSION(0, 1, 0));
	EXPECT_TRUE(SMBDIRECT_CHECK_VERSION(0, 1, 99));
	EXPECT_TRUE(SMBDIRECT_CHECK_VERSION(0, 2, 0));
	EXPECT_TRUE(SMBDIRECT_CHECK_VERSION(SMBDIRECT_VERSION_MAJOR, SMBDIRECT_VERSION_MINOR,
					    SMBDIRECT_VERSION_PATCH));
	EXPECT_FALSE(SMBDIRECT_CHECK_VERSION(SMBDIRECT_VERSION_MAJOR, SMBDIRECT_VERSION_MINOR,
					     SMBDIRECT_VERSION_PATCH + 1));
	EXPECT_FALSE(SMBDIRECT_CHECK_VERSION(SMBDIRECT_VERSION_MAJOR,
					     SMBDIRECT_VERSION_MINOR + 1, 0));
	EXPECT_FALSE(SMBDIRECT_CHECK_VERSION(1, 0, 0));
	// The names of 0.1 still say the same.
	EXPECT_EQ(SMBDIRECT_LIB_VERSION_MAJOR, SMBDIRECT_VERSION_MAJOR);
	EXPECT_EQ(SMBDIRECT_LIB_VERSION_MINOR, SMBDIRECT_VERSION_MINOR);
	EXPECT_STREQ(smbdirect_version(), SMBDIRECT_VERSION_STRING);
}

// The struct starts with its size, as the kernel's ioctl structs do.
static_assert(offsetof(struct smbdirect_interface, size) == 0);

// A caller built with a larger struct (a later header) gets its stride,
// each entry filled as far as the library knows it, size saying how far,
// and the rest zero.
TEST(Version, InterfacesAtTheCallersEntrySize)
{
	struct smbdirect_interface *now = nullptr;
	int n = smbdirect_interfaces(&now, SMBDIRECT_IF_LIST_ALL);
	if (n == -EOPNOTSUPP)
		GTEST_SKIP() << "no rtnetlink probe in this build (i386)";
	ASSERT_GT(n, 0); // lo at least
	constexpr size_t later = sizeof(struct smbdirect_interface) + 64;
	struct smbdirect_interface *big = nullptr;
	ASSERT_EQ(smbdirect_interfaces_sized(&big, SMBDIRECT_IF_LIST_ALL, later), n);
	auto *bytes = reinterpret_cast<const unsigned char *>(big);
	for (int i = 0; i < n; i++) {
		auto *e = reinterpret_cast<const struct smbdirect_interface *>(bytes + i * later);
		EXPECT_EQ(now[i].size, sizeof(struct smbdirect_interface));
		EXPECT_EQ(e->size, sizeof(struct smbdirect_interface));
		EXPECT_EQ(e->ifindex, now[i].ifindex);
		EXPECT_STREQ(e->name, now[i].name);
		EXPECT_EQ(e->addr_count, now[i].addr_count);
		for (size_t b = sizeof(struct smbdirect_interface); b < later; b++)
			ASSERT_EQ(bytes[i * later + b], 0) << "entry " << i << " byte " << b;
	}
	smbdirect_interfaces_free(big, n); // every addrs freed: ASan says otherwise
	smbdirect_interfaces_free(now, n);
}

#ifdef SD_SHARED_LIBRARY
using sd::detail::interface_0_1; // as programs built against 0.1 have it

// What a program built against 0.1 binds to in libsmbdirect.so.0:
// smbdirect_interfaces@SMBDIRECT_0.1, 0.1's layout; and a program built
// now to smbdirect_interfaces_sized@@SMBDIRECT_0.2.
TEST(Version, SharedLibraryKeepsTheLayoutOf01)
{
	void *lib = dlopen(SD_SHARED_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(lib, nullptr) << dlerror();
	using Old = int (*)(interface_0_1 **, uint32_t);
	using Sized = int (*)(struct smbdirect_interface **, uint32_t, size_t);
	using Free = void (*)(void *, int);
	auto old = reinterpret_cast<Old>(dlvsym(lib, "smbdirect_interfaces", "SMBDIRECT_0.1"));
	auto sized = reinterpret_cast<Sized>(
		dlvsym(lib, "smbdirect_interfaces_sized", "SMBDIRECT_0.2"));
	auto release = reinterpret_cast<Free>(
		dlvsym(lib, "smbdirect_interfaces_free", "SMBDIRECT_0.1"));
	ASSERT_NE(old, nullptr);
	ASSERT_NE(sized, nullptr);
	ASSERT_NE(release, nullptr);
	// No default version: a program linked now cannot bind to 0.1's.
	EXPECT_EQ(dlvsym(lib, "smbdirect_interfaces", "SMBDIRECT_0.2"), nullptr);

	struct smbdirect_interface *now = nullptr;
	int n = sized(&now, SMBDIRECT_IF_LIST_ALL, sizeof(*now));
	ASSERT_GT(n, 0);
	interface_0_1 *then = nullptr;
	ASSERT_EQ(old(&then, SMBDIRECT_IF_LIST_ALL), n);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(then[i].ifindex, now[i].ifindex);
		EXPECT_STREQ(then[i].name, now[i].name);
		EXPECT_STREQ(then[i].reason, now[i].reason);
		EXPECT_EQ(then[i].flags, now[i].flags);
		ASSERT_EQ(then[i].addr_count, now[i].addr_count);
		if (now[i].addr_count) {
			EXPECT_EQ(memcmp(then[i].addrs, now[i].addrs,
					 now[i].addr_count * sizeof(*now[i].addrs)),
				  0);
		}
	}
	release(then, n); // both layouts freed by the one free (ASan checks)
	release(now, n);
	EXPECT_EQ(old(nullptr, 0), -EINVAL);
	dlclose(lib);
}
#endif

} // namespace
