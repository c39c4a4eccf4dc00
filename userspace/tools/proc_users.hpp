// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which processes hold which sockets, as `ss -p` finds out: every
 * /proc/PID/fd/N that links to "socket:[INODE]". Processes whose fd
 * directory cannot be read (another user's, without privileges) are
 * skipped, as ss skips them. The proc root is a parameter so that tests
 * can hand in a directory of their own.
 */
#ifndef SMBDIRECT_TOOLS_PROC_USERS_HPP
#define SMBDIRECT_TOOLS_PROC_USERS_HPP

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "genl_family.hpp"

namespace sd::tool
{

/* Socket inode -> its holders, each list by pid, then fd. */
using ProcUsers = std::map<uint64_t, std::vector<nl::ProcessRef>>;

/*
 * Scans proc_root ("/proc") for the sockets in wanted (all sockets when
 * wanted is empty).
 */
ProcUsers scan_proc_users(const std::string &proc_root, const std::set<uint64_t> &wanted = {});

/* ss's form: users:(("comm",pid=12,fd=3),("other",pid=14,fd=5)); "" for none. */
std::string format_users(const std::vector<nl::ProcessRef> &users);

/* The inode N of "socket:[N]"; 0 for any other link text. */
uint64_t socket_inode(const std::string &link);

} // namespace sd::tool

#endif
