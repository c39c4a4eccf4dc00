// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `smbdirect run [OPTIONS] [--] CMD ARGS...`: the command line, the
 * environment it hands to libsmbdirect-preload.so, and where the preload
 * is looked for. Pure functions (no getopt state, no getenv, no file
 * system), header-only: userspace/tools/run.cpp uses them, the host tests
 * in tests/host/preload try them.
 */
#ifndef SMBDIRECT_PRELOAD_RUN_OPTIONS_HPP
#define SMBDIRECT_PRELOAD_RUN_OPTIONS_HPP

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config.hpp"

namespace sd::preload {

inline constexpr const char *preload_name = "libsmbdirect-preload.so";
inline constexpr const char *env_preload = "SMBDIRECT_PRELOAD";

struct RunOptions {
	bool help = false;
	bool listen = false;
	bool no_fallback = false;
	bool debug = false;
	bool inet = false;
	const char *ports = nullptr;		/* validated list, or nullptr */
	const char *connect_timeout = nullptr;	/* validated milliseconds, or nullptr */
	int command = -1;			/* argv index of CMD */
	std::string error;			/* a usage error: exit 2 */
};

/*
 * argv[0] is "run". Options end at the first argument that is not one, or
 * after "--"; what follows is the command and its arguments, untouched.
 */
inline RunOptions parse_run_args(int argc, char *const *argv)
{
	RunOptions o;
	int i = 1;

	auto value = [&](std::string_view opt, std::string_view arg, const char **out) -> bool {
		/* --opt=VALUE, --opt VALUE, -o VALUE */
		std::size_t eq = arg.find('=');
		if (arg.starts_with("--") && eq != std::string_view::npos) {
			*out = argv[i] + eq + 1;
			return true;
		}
		if (i + 1 >= argc) {
			o.error = std::string("option ") + std::string(opt) + " needs a value";
			return false;
		}
		*out = argv[++i];
		return true;
	};
	for (; i < argc; i++) {
		std::string_view a = argv[i];
		std::string_view name = a.substr(0, a.find('='));
		if (a == "--") {
			i++;
			break;
		}
		if (a.empty() || a[0] != '-' || a == "-")
			break;
		if (a == "-h" || a == "--help") {
			o.help = true;
			return o;
		} else if (a == "-l" || a == "--listen") {
			o.listen = true;
		} else if (a == "--no-fallback") {
			o.no_fallback = true;
		} else if (a == "--inet") {
			o.inet = true;
		} else if (a == "-d" || a == "--debug") {
			o.debug = true;
		} else if (a == "-p" || name == "--ports") {
			if (!value("--ports", a, &o.ports))
				return o;
			PortsResult p = parse_ports(o.ports);
			if (p.error) {
				o.error = std::string("--ports '") + o.ports + "': " + p.error;
				return o;
			}
		} else if (a == "-t" || name == "--connect-timeout") {
			if (!value("--connect-timeout", a, &o.connect_timeout))
				return o;
			UnsignedResult t = parse_unsigned(o.connect_timeout, max_connect_timeout_ms);
			if (t.error || t.value == 0) {
				o.error = std::string("--connect-timeout '") + o.connect_timeout +
					  "': milliseconds from 1 to 3600000 expected";
				return o;
			}
		} else {
			o.error = std::string("unknown option '") + std::string(a) + "'";
			return o;
		}
	}
	if (i >= argc) {
		o.error = "no command to run";
		return o;
	}
	o.command = i;
	return o;
}

/*
 * The variables to set for the preload. Options override the environment;
 * what no option names (SMBDIRECT_DEBUG=1 without --debug, a
 * SMBDIRECT_PORTS without --ports) is left as it is.
 */
inline std::vector<std::pair<const char *, std::string>> run_environment(const RunOptions &o)
{
	std::vector<std::pair<const char *, std::string>> env;
	if (o.ports)
		env.emplace_back(env_ports, o.ports);
	if (o.listen)
		env.emplace_back(env_listen, "1");
	if (o.no_fallback)
		env.emplace_back(env_no_fallback, "1");
	if (o.debug)
		env.emplace_back(env_debug, "1");
	if (o.inet)
		env.emplace_back(env_inet, "1");
	if (o.connect_timeout)
		env.emplace_back(env_connect_timeout, o.connect_timeout);
	return env;
}

/*
 * LD_PRELOAD with ours first and every existing entry kept (ld.so takes
 * blanks and colons as separators); ours is not listed twice.
 */
inline std::string compose_ld_preload(std::string_view ours, const char *existing)
{
	std::string out(ours);
	std::string_view rest = existing ? existing : "";
	while (!rest.empty()) {
		std::size_t end = rest.find_first_of(" :");
		std::string_view item = rest.substr(0, end);
		rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
		if (item.empty() || item == ours)
			continue;
		out += ':';
		out += item;
	}
	return out;
}

/* The directory part of a path ("/a/b/c" -> "/a/b", "c" -> "."). */
inline std::string dir_of(std::string_view path)
{
	std::size_t slash = path.rfind('/');
	if (slash == std::string_view::npos)
		return ".";
	if (slash == 0)
		return "/";
	return std::string(path.substr(0, slash));
}

/*
 * Where to look for the preload, in order: the build tree next to this
 * executable (a build-tree tool must not pick up an older installed
 * preload), the library directory relative to this executable (an
 * installed tree, also one staged with DESTDIR), the library directory the
 * build was configured for. exe is /proc/self/exe resolved.
 */
inline std::vector<std::string> preload_candidates(std::string_view exe, std::string_view build_rel,
						   std::string_view install_rel,
						   std::string_view install_path)
{
	std::vector<std::string> c;
	std::string dir = dir_of(exe);
	if (!exe.empty() && !build_rel.empty())
		c.push_back(dir + "/" + std::string(build_rel));
	if (!exe.empty() && !install_rel.empty())
		c.push_back(dir + "/" + std::string(install_rel));
	if (!install_path.empty())
		c.push_back(std::string(install_path));
	return c;
}

} // namespace sd::preload

#endif
