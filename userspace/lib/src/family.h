// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The address family af_smbdirect.ko took, read from its module parameter
// (SMBDIRECT_FAMILY_SYSFS). The reading is separate from the cache so that
// host tests can point it at a file of their own.
#ifndef SMBDIRECT_LIB_FAMILY_H
#define SMBDIRECT_LIB_FAMILY_H

namespace sd::detail
{

// The family number in the file at path: a decimal number, optionally
// followed by a newline. -ENOENT when the file does not exist or says 0
// (the module is not loaded, or still loading), -EINVAL when it holds
// anything else, -ERANGE for a number no address family can have,
// -errno when it cannot be read.
int read_family_file(const char *path) noexcept;

// The same for any module parameter holding a number below limit.
int read_number_file(const char *path, long limit) noexcept;

// Reads SMBDIRECT_FAMILY_SYSFS again and caches the result (a failure
// clears the cache). Returns what smbdirect_family() would.
int refresh_family() noexcept;

} // namespace sd::detail

#endif // SMBDIRECT_LIB_FAMILY_H
