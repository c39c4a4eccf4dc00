// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect family: the address family number af_smbdirect.ko took (see
 * SMBDIRECT_FAMILY_SYSFS in <linux/smbdirect.h>).
 */
#include <cstdio>

#include <smbdirect/smbdirect.h>

#include "commands.hpp"
#include "common.hpp"
#include "json.hpp"

using namespace sd::tool;

namespace
{

constexpr OptionSpec specs[] = {
	{ "json", 'j', false },
};

constexpr std::string_view help =
	"Usage: smbdirect family [--json]\n"
	"\n"
	"Prints the address family number af_smbdirect.ko registered, as read\n"
	"from " SMBDIRECT_FAMILY_SYSFS ".\n"
	"\n"
	"  -j, --json   {\"family\": N}\n"
	"  -h, --help   this text\n";

} // namespace

int sd_cmd_family(int argc, char **argv)
{
	ParsedArgs args;
	int rc;

	if (!parse_command_line("family", argc, argv, specs, help, args, rc))
		return rc;
	if (!args.positionals.empty())
		return usage_error("family", "unexpected argument '" + args.positionals[0] + "'");
	if (!module_available("family"))
		return exit_error;
	int family = smbdirect_family();
	if (family < 0) {
		print_error("family", SMBDIRECT_FAMILY_SYSFS, errno_code(family));
		return exit_error;
	}
	if (args.has("json")) {
		JsonWriter j;
		j.begin_object().member("family", family).end_object();
		std::printf("%s\n", j.str().c_str());
	} else {
		std::printf("%d\n", family);
	}
	return std::fflush(stdout) ? exit_error : exit_ok;
}
