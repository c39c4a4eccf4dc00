// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The af_smbdirect generic netlink family for `smbdirect ss` and
 * `smbdirect stats`: a connected socket and the family's id, or a printed
 * reason (the module is not loaded; the module has no netlink interface).
 */
#ifndef SMBDIRECT_TOOLS_GENL_OPEN_HPP
#define SMBDIRECT_TOOLS_GENL_OPEN_HPP

#include <string_view>

#include "genl.hpp"

namespace sd::tool
{

/* What a module without the family (an older one) gets said. */
constexpr std::string_view no_genl_message =
	"this af_smbdirect has no netlink interface (no generic netlink family "
	"\"af_smbdirect\"): load a newer module";

/*
 * false after printing why: "af_smbdirect is not loaded: modprobe
 * af_smbdirect" (no family file, as every subcommand says it),
 * no_genl_message, or the socket's error. The caller exits with
 * exit_error.
 */
bool open_smbdirect_genl(std::string_view cmd, genl::Socket &sock, int &family);

} // namespace sd::tool

#endif
