// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect run [OPTIONS] [--] CMD ARGS...
 *
 * Runs an unmodified program with libsmbdirect-preload.so first in
 * LD_PRELOAD, so that its TCP stream sockets to (and with --listen on) the
 * SMB ports become SMB-Direct sockets. The configuration reaches the preload
 * through SMBDIRECT_* variables (userspace/preload/config.hpp,
 * smbdirect-run(8)); the command line is parsed by
 * userspace/preload/run_options.hpp. The program replaces this process
 * (exec), so its exit status is ours.
 *
 * Exit: 2 usage error, 1 the preload cannot be found (or, with
 * --no-fallback, af_smbdirect is not loaded), 127/126 the command cannot be
 * found/executed (as env(1)), otherwise the command's own status.
 */
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#include <smbdirect/smbdirect.h>

#include "../preload/run_options.hpp"

#if __has_include("commands.hpp")
#include "commands.hpp"
#else
int sd_cmd_run(int argc, char **argv);
#endif

/*
 * Set by userspace/preload/CMakeLists.txt; the defaults match its layout
 * (userspace/{preload,tools} side by side in the build tree).
 */
#ifndef SD_PRELOAD_BUILD_REL
#define SD_PRELOAD_BUILD_REL "../preload/libsmbdirect-preload.so"
#endif
#ifndef SD_PRELOAD_INSTALL_REL
#define SD_PRELOAD_INSTALL_REL ""
#endif
#ifndef SD_PRELOAD_INSTALL_PATH
#define SD_PRELOAD_INSTALL_PATH ""
#endif

namespace {

using namespace sd::preload;

void help()
{
	std::printf(
		     "Usage: smbdirect run [OPTIONS] [--] CMD [ARGS...]\n"
		     "Runs CMD with its TCP sockets to the SMB ports on SMB-Direct "
		     "(libsmbdirect-preload.so).\n"
		     "\n"
		     "  -p, --ports LIST          SMB ports, e.g. 445,5445,9000-9010 (default "
		     "445,5445)\n"
		     "  -l, --listen              listening sockets on those ports become "
		     "SMB-Direct too\n"
		     "      --no-fallback         fail a connect that cannot go over RDMA instead "
		     "of using TCP\n"
		     "  -t, --connect-timeout MS  bound of the SMB-Direct attempt before TCP "
		     "(default 5000)\n"
		     "      --inet                make socket(AF_INET[6], SOCK_STREAM, "
		     "IPPROTO_SMBDIRECT)\n"
		     "                            sockets (upstream's shape), not AF_SMBDIRECT\n"
		     "  -d, --debug               say on stderr what was replaced and why "
		     "(SMBDIRECT_DEBUG=1)\n"
		     "  -h, --help                this text\n"
		     "\n"
		     "Environment: SMBDIRECT_PORTS, SMBDIRECT_LISTEN, SMBDIRECT_NO_FALLBACK,\n"
		     "SMBDIRECT_DEBUG, SMBDIRECT_CONNECT_TIMEOUT, SMBDIRECT_INET (options\n"
		     "override them), SMBDIRECT_NEGATIVE_CACHE (seconds a peer without an\n"
		     "RDMA path goes straight to TCP, 60; 0 off),\n"
		     "SMBDIRECT_PRELOAD (the preload to use). See smbdirect-run(8).\n");
}

bool readable(const std::string &path)
{
	return access(path.c_str(), R_OK) == 0;
}

/* The preload's absolute path, or "" after printing why there is none. */
std::string find_preload()
{
	if (const char *forced = std::getenv(env_preload)) {
		char real[PATH_MAX];
		if (!*forced || !realpath(forced, real) || !readable(real)) {
			std::fprintf(stderr, "smbdirect run: %s=%s: %s\n", env_preload, forced,
				     *forced ? std::strerror(errno) : "empty path");
			return "";
		}
		return real;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	std::string self = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : "";
	std::vector<std::string> candidates = preload_candidates(
		self, SD_PRELOAD_BUILD_REL, SD_PRELOAD_INSTALL_REL, SD_PRELOAD_INSTALL_PATH);
	for (const std::string &c : candidates) {
		char real[PATH_MAX];
		if (realpath(c.c_str(), real) && readable(real))
			return real;
	}
	std::string looked;
	for (const std::string &c : candidates)
		looked += (looked.empty() ? "" : ", ") + c;
	std::fprintf(stderr, "smbdirect run: %s: %s (looked in: %s); set %s\n", preload_name,
		     std::strerror(ENOENT), looked.empty() ? "nowhere" : looked.c_str(),
		     env_preload);
	return "";
}

} // namespace

int sd_cmd_run(int argc, char **argv)
{
	RunOptions o = parse_run_args(argc, argv);
	if (o.help) {
		help();
		return 0;
	}
	if (!o.error.empty()) {
		std::fprintf(stderr, "smbdirect run: %s\nTry 'smbdirect run --help'.\n",
			     o.error.c_str());
		return 2;
	}
	std::string preload = find_preload();
	if (preload.empty())
		return 1;

	char why[256] = "";
	if (smbdirect_available(why, sizeof(why)) < 0) {
		if (o.no_fallback) {
			std::fprintf(stderr, "smbdirect run: %s\n", why);
			return 1;
		}
		std::fprintf(stderr, "smbdirect run: %s; sockets stay TCP\n", why);
	}

	for (const auto &[name, value] : run_environment(o)) {
		if (setenv(name, value.c_str(), 1) != 0) {
			std::fprintf(stderr, "smbdirect run: setenv %s: %s\n", name,
				     std::strerror(errno));
			return 1;
		}
	}
	std::string ld = compose_ld_preload(preload, std::getenv("LD_PRELOAD"));
	if (setenv("LD_PRELOAD", ld.c_str(), 1) != 0) {
		std::fprintf(stderr, "smbdirect run: setenv LD_PRELOAD: %s\n", std::strerror(errno));
		return 1;
	}
	execvp(argv[o.command], argv + o.command);
	int err = errno;
	std::fprintf(stderr, "smbdirect run: %s: %s\n", argv[o.command], std::strerror(err));
	return err == ENOENT ? 127 : 126;
}
