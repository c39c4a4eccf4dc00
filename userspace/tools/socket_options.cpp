// SPDX-License-Identifier: LGPL-2.1-or-later
#include "socket_options.hpp"

#include <linux/smbdirect.h>

#include "units.hpp"

namespace sd::tool
{

namespace
{

struct OptionName {
	std::string_view name;
	int option;
};

constexpr OptionName option_names[] = {
	{ "receive_credit_max", SMBDIRECT_OPT_RECEIVE_CREDIT_MAX },
	{ "send_credit_target", SMBDIRECT_OPT_SEND_CREDIT_TARGET },
	{ "max_send_size", SMBDIRECT_OPT_MAX_SEND_SIZE },
	{ "max_receive_size", SMBDIRECT_OPT_MAX_RECEIVE_SIZE },
	{ "max_fragmented_size", SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE },
	{ "max_read_write_size", SMBDIRECT_OPT_MAX_READ_WRITE_SIZE },
	{ "keepalive_interval", SMBDIRECT_OPT_KEEPALIVE_INTERVAL },
};

} // namespace

const char *const socket_option_names =
	"receive_credit_max, send_credit_target, max_send_size, max_receive_size,\n"
	"max_fragmented_size, max_read_write_size, keepalive_interval";

std::optional<OptionSetting> parse_option_setting(std::string_view text, std::string &error)
{
	size_t eq = text.find('=');
	std::string_view name = text.substr(0, eq);
	const OptionName *found = nullptr;

	for (const auto &o : option_names)
		if (o.name == name)
			found = &o;
	if (!found || eq == std::string_view::npos) {
		error = "'" + std::string(text) + "' is not NAME=VALUE with a known NAME";
		return std::nullopt;
	}
	std::string_view value = text.substr(eq + 1);
	auto v = parse_size(value);
	if (!v || *v > UINT32_MAX) {
		error = "'" + std::string(value) + "' is not a number for " + std::string(name);
		return std::nullopt;
	}
	return OptionSetting{ std::string(text), found->option, static_cast<uint32_t>(*v) };
}

} // namespace sd::tool
