// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect stats: af_smbdirect's counters of the caller's network
 * namespace, in total and one column per RDMA device
 * (SMBDIRECT_CMD_STATS_GET), as `smc stats` shows AF_SMC's; --reset zeroes
 * them (SMBDIRECT_CMD_STATS_RESET, CAP_NET_ADMIN over the namespace) after
 * reading them, and prints what they were.
 */
#include <cerrno>
#include <cstdio>
#include <optional>

#include <linux/smbdirect_genl.h>
#include <netlink/netlink.h>

#include "commands.hpp"
#include "common.hpp"
#include "genl.hpp"
#include "genl_family.hpp"
#include "genl_open.hpp"
#include "json.hpp"

using namespace sd::tool;

namespace
{

constexpr std::string_view cmd = "stats";

constexpr OptionSpec specs[] = {
	{ "json", 'j', false },
	{ "reset", 'r', false },
};

constexpr std::string_view help =
	"Usage: smbdirect stats [--reset] [--json]\n"
	"\n"
	"af_smbdirect's counters of this network namespace since the module was\n"
	"loaded or they were last reset: the total and one column per RDMA device\n"
	"used (messages, bytes and PDUs each way, RDMA reads and writes,\n"
	"registrations, invalidations, keepalives, credit stalls, errors by kind,\n"
	"sockets and connections). Anyone may read them.\n"
	"\n"
	"  -r, --reset   read the counters, zero them, and print what they were\n"
	"                (needs CAP_NET_ADMIN)\n"
	"  -j, --json    one JSON object (keys in smbdirect-stats(8))\n"
	"  -h, --help    this text\n";

std::error_code read_stats(genl::Socket &sock, int family, std::optional<nl::StatsInfo> &out,
			   bool &malformed)
{
	genl::Message m;
	std::error_code ec = genl::Message::make(family, SMBDIRECT_CMD_STATS_GET,
						 SMBDIRECT_GENL_VERSION, NLM_F_ACK, m);
	if (ec)
		return ec;
	return sock.transact(m, [&out, &malformed](const nlmsghdr *h) {
		nl::StatsInfo s;
		std::error_code e = nl::parse_stats(h, s);
		if (e)
			malformed = true;
		else
			out = std::move(s);
		return e;
	});
}

std::error_code reset_stats(genl::Socket &sock, int family)
{
	genl::Message m;
	std::error_code ec = genl::Message::make(family, SMBDIRECT_CMD_STATS_RESET,
						 SMBDIRECT_GENL_VERSION, NLM_F_ACK, m);
	if (ec)
		return ec;
	return sock.transact(m, [](const nlmsghdr *) { return std::error_code(); });
}

} // namespace

int sd_cmd_stats(int argc, char **argv)
{
	ParsedArgs args;
	int rc;

	if (!parse_command_line(cmd, argc, argv, specs, help, args, rc))
		return rc;
	if (!args.positionals.empty())
		return usage_error(cmd, "unexpected argument '" + args.positionals[0] + "'");

	genl::Socket sock;
	int family;
	if (!open_smbdirect_genl(cmd, sock, family))
		return exit_error;
	std::optional<nl::StatsInfo> stats;
	bool malformed = false;
	std::error_code ec = read_stats(sock, family, stats, malformed);
	if (malformed) {
		print_error(cmd, "a malformed reply from the kernel", ec);
		return exit_error;
	}
	if (!ec && !stats)
		ec = std::make_error_code(std::errc::no_message);
	if (ec) {
		print_error(cmd, "reading the counters (SMBDIRECT_CMD_STATS_GET)", ec);
		return exit_error;
	}
	if (args.has("reset")) {
		ec = reset_stats(sock, family);
		if (ec == std::errc::operation_not_permitted) {
			print_message(cmd, "resetting the counters needs CAP_NET_ADMIN: " +
						   ec.message());
			return exit_error;
		}
		if (ec) {
			print_error(cmd, "resetting the counters (SMBDIRECT_CMD_STATS_RESET)", ec);
			return exit_error;
		}
	}
	if (args.has("json")) {
		JsonWriter j;
		nl::write_json(j, *stats);
		std::printf("%s\n", j.str().c_str());
	} else {
		std::fputs(nl::stats_text(*stats).c_str(), stdout);
	}
	if (std::fflush(stdout)) {
		print_error(cmd, "stdout", { errno, std::system_category() });
		return exit_error;
	}
	return exit_ok;
}
