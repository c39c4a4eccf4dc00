// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Command-line parsing for the smbdirect subcommands: GNU style without
 * getopt's global state, so that it can be unit-tested.
 *
 *   --name VALUE, --name=VALUE, unique prefixes of long names (--prog for
 *   --progress), -x VALUE, -xVALUE, grouped flags (-lv), options before,
 *   between and after the positional arguments, "--" ends the options,
 *   a lone "-" is a positional argument.
 */
#ifndef SMBDIRECT_TOOLS_ARGS_HPP
#define SMBDIRECT_TOOLS_ARGS_HPP

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sd::tool
{

struct OptionSpec {
	std::string_view long_name; /* without "--" */
	char short_name;	    /* 0: none */
	bool takes_value;
};

class ParsedArgs {
    public:
	struct Option {
		std::string_view name; /* the spec's long name */
		std::string value;
	};

	/* Was the option given (any number of times)? */
	bool has(std::string_view name) const;
	/* The value of its last occurrence. */
	std::optional<std::string> value(std::string_view name) const;
	/* Every value of a repeatable option, in order. */
	std::vector<std::string> values(std::string_view name) const;

	std::vector<Option> options;
	std::vector<std::string> positionals;
};

struct ParseResult {
	ParsedArgs args;
	std::string error; /* empty on success; else what was wrong, for a person */

	bool ok() const
	{
		return error.empty();
	}
};

/* argv[0] is the subcommand's name and is skipped. */
ParseResult parse_args(std::span<char *const> argv, std::span<const OptionSpec> specs);

} // namespace sd::tool

#endif
