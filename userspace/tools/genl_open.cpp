// SPDX-License-Identifier: LGPL-2.1-or-later
#include "genl_open.hpp"

#include <cerrno>

#include <smbdirect/smbdirect.h>

#include <linux/smbdirect_genl.h>

#include "common.hpp"

namespace sd::tool
{

bool open_smbdirect_genl(std::string_view cmd, genl::Socket &sock, int &family)
{
	/* The library's test and words, as every other subcommand says it. */
	if (smbdirect_family() == -ENOENT) {
		print_message(cmd, "af_smbdirect is not loaded: modprobe af_smbdirect");
		return false;
	}
	std::error_code ec = sock.open();
	if (ec) {
		print_error(cmd, "generic netlink socket", ec);
		return false;
	}
	ec = sock.resolve(SMBDIRECT_GENL_NAME, family);
	if (ec == std::errc::no_such_file_or_directory) {
		print_message(cmd, no_genl_message);
		return false;
	}
	if (ec) {
		print_error(cmd, "generic netlink family " SMBDIRECT_GENL_NAME, ec);
		return false;
	}
	return true;
}

} // namespace sd::tool
