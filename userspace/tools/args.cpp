// SPDX-License-Identifier: LGPL-2.1-or-later
#include "args.hpp"

namespace sd::tool
{

bool ParsedArgs::has(std::string_view name) const
{
	for (const auto &o : options)
		if (o.name == name)
			return true;
	return false;
}

std::optional<std::string> ParsedArgs::value(std::string_view name) const
{
	std::optional<std::string> v;

	for (const auto &o : options)
		if (o.name == name)
			v = o.value;
	return v;
}

std::vector<std::string> ParsedArgs::values(std::string_view name) const
{
	std::vector<std::string> v;

	for (const auto &o : options)
		if (o.name == name)
			v.push_back(o.value);
	return v;
}

namespace
{

/* An exact match wins; else a prefix that names exactly one option. */
const OptionSpec *find_long(std::string_view name, std::span<const OptionSpec> specs,
			    std::string &error)
{
	const OptionSpec *found = nullptr;
	int prefixes = 0;

	for (const auto &s : specs) {
		if (s.long_name == name)
			return &s;
		if (!name.empty() && s.long_name.starts_with(name)) {
			found = &s;
			prefixes++;
		}
	}
	if (prefixes == 1)
		return found;
	error = prefixes ? "option '--" + std::string(name) + "' is ambiguous"
			 : "unknown option '--" + std::string(name) + "'";
	return nullptr;
}

const OptionSpec *find_short(char c, std::span<const OptionSpec> specs)
{
	for (const auto &s : specs)
		if (s.short_name && s.short_name == c)
			return &s;
	return nullptr;
}

} // namespace

ParseResult parse_args(std::span<char *const> argv, std::span<const OptionSpec> specs)
{
	ParseResult r;
	bool options_done = false;

	for (size_t i = 1; i < argv.size(); i++) {
		std::string_view a = argv[i];

		if (options_done || a.size() < 2 || a[0] != '-') {
			r.args.positionals.emplace_back(a);
			continue;
		}
		if (a == "--") {
			options_done = true;
			continue;
		}
		if (a.starts_with("--")) {
			std::string_view body = a.substr(2);
			size_t eq = body.find('=');
			std::string_view name = body.substr(0, eq);
			const OptionSpec *s = find_long(name, specs, r.error);

			if (!s)
				return r;
			std::string opt = "--" + std::string(s->long_name);
			if (!s->takes_value) {
				if (eq != std::string_view::npos) {
					r.error = "option '" + opt + "' takes no value";
					return r;
				}
				r.args.options.push_back({ s->long_name, {} });
				continue;
			}
			if (eq != std::string_view::npos) {
				r.args.options.push_back(
					{ s->long_name, std::string(body.substr(eq + 1)) });
				continue;
			}
			if (i + 1 >= argv.size()) {
				r.error = "option '" + opt + "' needs a value";
				return r;
			}
			r.args.options.push_back({ s->long_name, argv[++i] });
			continue;
		}
		/* One or more short options: -l, -lv, -sVALUE, -s VALUE. */
		for (size_t k = 1; k < a.size(); k++) {
			const OptionSpec *s = find_short(a[k], specs);

			if (!s) {
				r.error = std::string("unknown option '-") + a[k] + "'";
				return r;
			}
			if (!s->takes_value) {
				r.args.options.push_back({ s->long_name, {} });
				continue;
			}
			if (k + 1 < a.size()) {
				r.args.options.push_back(
					{ s->long_name, std::string(a.substr(k + 1)) });
			} else if (i + 1 < argv.size()) {
				r.args.options.push_back({ s->long_name, argv[++i] });
			} else {
				r.error = std::string("option '-") + a[k] + "' needs a value";
				return r;
			}
			break;
		}
	}
	return r;
}

} // namespace sd::tool
