// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect: the command-line tool over AF_SMBDIRECT sockets and
 * libsmbdirect. This file only dispatches: one file per subcommand.
 */
#include <cstdio>
#include <cstring>
#include <string_view>

#include <smbdirect/smbdirect.h>

#include "commands.hpp"
#include "common.hpp"

namespace
{

#ifndef SMBDIRECT_TOOL_HAVE_RUN
/* run.cpp comes with the preload; a build without it says so. */
int run_missing(int, char **)
{
	sd::tool::print_message("run", "not built into this smbdirect binary");
	return sd::tool::exit_error;
}
#endif

struct Command {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
};

const Command commands[] = {
	{ "cat", sd_cmd_cat, "stdin to stdout across machines (messages or RDMA writes)" },
	{ "perf", sd_cmd_perf, "throughput and latency of messages and RDMA read/write" },
	{ "dev", sd_cmd_dev, "RDMA devices, their interfaces, and SMB3 multichannel capability" },
	{ "params", sd_cmd_params, "module defaults; a test connection's negotiated parameters" },
	{ "ss", sd_cmd_ss, "the SMB-Direct sockets, as ss(8): addresses, queues, device, counters" },
	{ "stats", sd_cmd_stats, "module-wide and per-device counters; --reset zeroes them" },
#ifdef SMBDIRECT_TOOL_HAVE_RUN
	{ "run", sd_cmd_run, "run an unmodified TCP program over SMB-Direct" },
#else
	{ "run", run_missing, "run an unmodified TCP program over SMB-Direct" },
#endif
	{ "family", sd_cmd_family, "the address family af_smbdirect.ko registered" },
};

void usage(FILE *to)
{
	std::fprintf(to, "Usage: smbdirect [-V | --version] [-h | --help] COMMAND [ARGS]...\n"
			 "       smbdirect help [COMMAND]\n\n"
			 "Commands:\n");
	for (const auto &c : commands)
		std::fprintf(to, "  %-8s %s\n", c.name, c.summary);
	std::fprintf(to, "\nEvery command takes --help; commands that print data take --json.\n"
			 "Exit status: 0 success, 1 runtime error, 2 usage error.\n"
			 "See smbdirect(8).\n");
}

const Command *find(std::string_view name)
{
	for (const auto &c : commands)
		if (name == c.name)
			return &c;
	return nullptr;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return sd::tool::exit_usage;
	}
	std::string_view first = argv[1];
	if (first == "-h" || first == "--help") {
		usage(stdout);
		return sd::tool::exit_ok;
	}
	if (first == "-V" || first == "--version") {
		/* The header it was built with, and the library it runs with. */
		std::printf("smbdirect %s (libsmbdirect %s)\n", SMBDIRECT_VERSION_STRING,
			    smbdirect_version());
		return sd::tool::exit_ok;
	}
	if (first == "help") {
		if (argc == 2) {
			usage(stdout);
			return sd::tool::exit_ok;
		}
		const Command *c = find(argv[2]);
		if (!c) {
			std::fprintf(stderr, "smbdirect: unknown command '%s'\n", argv[2]);
			return sd::tool::exit_usage;
		}
		char help[] = "--help";
		char *args[] = { argv[2], help, nullptr };
		return c->fn(2, args);
	}
	if (first.starts_with('-')) {
		std::fprintf(stderr, "smbdirect: unknown option '%s'\n", argv[1]);
		usage(stderr);
		return sd::tool::exit_usage;
	}
	const Command *c = find(first);
	if (!c) {
		std::fprintf(stderr, "smbdirect: unknown command '%s'\n", argv[1]);
		usage(stderr);
		return sd::tool::exit_usage;
	}
	return c->fn(argc - 1, argv + 1);
}
