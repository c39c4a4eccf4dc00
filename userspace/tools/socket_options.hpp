// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * "-o NAME=VALUE": SOL_SMBDIRECT options by name, as the module parameters
 * and smbdirect_set_option(3) name them, set before connect or listen.
 */
#ifndef SMBDIRECT_TOOLS_SOCKET_OPTIONS_HPP
#define SMBDIRECT_TOOLS_SOCKET_OPTIONS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sd::tool
{

struct OptionSetting {
	std::string text; /* as given, for messages */
	int option;	  /* SMBDIRECT_OPT_* */
	uint32_t value;
};

/*
 * "max_send_size=8192", "max_read_write_size=1M" (sizes may use units).
 * The range is the kernel's to check; this only refuses unknown names and
 * values that are no number or do not fit 32 bits (error says which).
 */
std::optional<OptionSetting> parse_option_setting(std::string_view text, std::string &error);

/* The NAME list for help texts. */
extern const char *const socket_option_names;

} // namespace sd::tool

#endif
