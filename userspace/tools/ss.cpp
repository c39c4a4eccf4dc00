// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect ss: the AF_SMBDIRECT sockets of this network namespace, as
 * ss(8) lists TCP sockets and smcss(8) AF_SMC ones, from the module's
 * generic netlink family (SMBDIRECT_CMD_SOCK_GET). Without CAP_NET_ADMIN
 * the kernel returns the caller's own sockets only.
 */
#include <cerrno>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <linux/smbdirect.h>
#include <linux/smbdirect_genl.h>
#include <netlink/netlink.h>
#include <sys/socket.h>

#include "commands.hpp"
#include "common.hpp"
#include "genl.hpp"
#include "genl_family.hpp"
#include "genl_open.hpp"
#include "json.hpp"
#include "proc_users.hpp"
#include "ss_filter.hpp"
#include "table.hpp"

using namespace sd::tool;

namespace
{

constexpr std::string_view cmd = "ss";

constexpr OptionSpec specs[] = {
	{ "all", 'a', false },	     { "listening", 'l', false }, { "extended", 'e', false },
	{ "processes", 'p', false }, { "json", 'j', false },	  { "no-header", 'H', false },
	{ "numeric", 'n', false },   { "ipv4", '4', false },	  { "ipv6", '6', false },
	{ "dev", 0, true },	     { "src", 0, true },	  { "dst", 0, true },
};

constexpr std::string_view help =
	"Usage: smbdirect ss [-a | -l] [-e] [-p] [-4 | -6] [-H] [--json]\n"
	"                    [--dev NAME] [--src ADDR[:PORT]] [--dst ADDR[:PORT]] [FILTER]\n"
	"\n"
	"Lists AF_SMBDIRECT sockets (both entry points) as ss(8) lists TCP: by\n"
	"default the connected ones (connecting, established, closed), with\n"
	"their queues, addresses, RDMA device and transport. Without\n"
	"CAP_NET_ADMIN only the caller's own sockets are shown.\n"
	"\n"
	"  -a, --all          every socket, listening and unconnected ones too\n"
	"  -l, --listening    listening sockets only\n"
	"  -e, --extended     owner, inode, cookie, negotiated parameters, credits,\n"
	"                     registrations and pinned bytes, counters, accept queue\n"
	"  -p, --processes    the processes holding each socket (from /proc/*/fd)\n"
	"  -4, --ipv4         IPv4 sockets only\n"
	"  -6, --ipv6         IPv6 sockets only\n"
	"      --dev NAME     sockets on this RDMA device (the kernel filters)\n"
	"      --src ADDR[:PORT], --dst ADDR[:PORT]\n"
	"                     local / peer address: 10.77.0.1, 10.77.0.0/24:445,\n"
	"                     [fd77::2]:5445, fd77::/16, *:445\n"
	"  -H, --no-header    no header line\n"
	"  -n, --numeric      accepted for ss(8) habits; output is always numeric\n"
	"  -j, --json         a JSON array, one object per socket (keys in smbdirect-ss(8))\n"
	"  -h, --help         this text\n"
	"\n"
	"FILTER: words of src ADDR[:PORT], dst ADDR[:PORT], sport PORT, dport PORT,\n"
	"dev NAME; the same word twice means either, different words must all hold.\n"
	"\n"
	"Columns: State (UNCONN, LISTEN, CONNECTING, ESTAB, CLOSED), Recv-Q and\n"
	"Send-Q (bytes not yet read / not yet sent; a listener's connections ready\n"
	"to accept and its backlog), Local and Peer Address:Port, Dev (RDMA\n"
	"device/port), Transport; Process with -p.\n";

constexpr uint32_t bit(unsigned state)
{
	return 1U << state;
}

/* Dumps the sockets the kernel selects for f; retried if the set changed under it. */
std::error_code dump(genl::Socket &sock, int family, const SockFilter &f,
		     std::vector<nl::SockInfo> &out, bool &malformed)
{
	std::error_code ec;
	for (int attempt = 0; attempt < 3; attempt++) {
		out.clear();
		genl::Message m;
		if ((ec = genl::Message::make(family, SMBDIRECT_CMD_SOCK_GET,
					      SMBDIRECT_GENL_VERSION, NLM_F_DUMP, m)) ||
		    (f.state_mask != ~0U &&
		     (ec = m.put_u32(SMBDIRECT_A_SOCK_STATE_MASK, f.state_mask))) ||
		    (f.dev && (ec = m.put_string(SMBDIRECT_A_SOCK_DEV_NAME, *f.dev))))
			return ec;
		ec = sock.transact(m, [&out, &malformed](const nlmsghdr *h) {
			nl::SockInfo s;
			std::error_code e = nl::parse_sock(h, s);
			if (e)
				malformed = true;
			else
				out.push_back(std::move(s));
			return e;
		});
		if (ec != std::errc::interrupted)
			break;
	}
	return ec;
}

bool build_filter(const ParsedArgs &args, SockFilter &f, int &rc)
{
	std::string error;
	if (args.has("all") && args.has("listening")) {
		rc = usage_error(cmd, "-a and -l exclude each other");
		return false;
	}
	if (args.has("ipv4") && args.has("ipv6")) {
		rc = usage_error(cmd, "-4 and -6 exclude each other");
		return false;
	}
	/* -a: no mask at all, so that a state added later shows too. */
	if (args.has("all"))
		f.state_mask = ~0U;
	else if (args.has("listening"))
		f.state_mask = bit(SMBDIRECT_STATE_LISTENING);
	else
		f.state_mask = bit(SMBDIRECT_STATE_CONNECTING) | bit(SMBDIRECT_STATE_CONNECTED) |
			       bit(SMBDIRECT_STATE_CLOSED);
	if (args.has("ipv4"))
		f.addr_family = AF_INET;
	if (args.has("ipv6"))
		f.addr_family = AF_INET6;
	/* The options are expression words of their own. */
	std::vector<std::string> words;
	for (const auto &o : args.options)
		if (o.name == "dev" || o.name == "src" || o.name == "dst") {
			words.emplace_back(o.name);
			words.push_back(o.value);
		}
	words.insert(words.end(), args.positionals.begin(), args.positionals.end());
	if (!parse_expression(words, f, error)) {
		rc = usage_error(cmd, error);
		return false;
	}
	return true;
}

void print_text(const std::vector<nl::SockInfo> &socks, const ProcUsers *users, bool extended,
		bool header)
{
	std::vector<std::string> head = {
		"State", "Recv-Q",   "Send-Q", "Local Address:Port", "Peer Address:Port",
		"Dev",	 "Transport"
	};
	if (users)
		head.push_back("Process");
	Table t(head);
	for (const auto &s : socks) {
		auto cells = nl::table_cells(s);
		if (users) {
			auto u = s.inode ? users->find(*s.inode) : users->end();
			cells.push_back(u == users->end() ? "" : format_users(u->second));
		}
		t.add(cells);
	}
	std::string text = t.render();
	size_t row = 0, pos = 0;
	while (pos < text.size()) {
		size_t end = text.find('\n', pos);
		std::string line = text.substr(pos, end - pos);
		pos = end + 1;
		if (row == 0 && !header) {
			row++;
			continue;
		}
		std::printf("%s\n", line.c_str());
		if (row > 0 && extended)
			for (const auto &l : nl::extended_lines(socks[row - 1]))
				std::printf("\t %s\n", l.c_str());
		row++;
	}
}

} // namespace

int sd_cmd_ss(int argc, char **argv)
{
	ParsedArgs args;
	int rc;

	if (!parse_command_line(cmd, argc, argv, specs, help, args, rc))
		return rc;
	SockFilter f;
	if (!build_filter(args, f, rc))
		return rc;

	genl::Socket sock;
	int family;
	if (!open_smbdirect_genl(cmd, sock, family))
		return exit_error;
	std::vector<nl::SockInfo> all, socks;
	bool malformed = false;
	std::error_code ec = dump(sock, family, f, all, malformed);
	if (malformed) {
		print_error(cmd, "a malformed reply from the kernel", ec);
		return exit_error;
	}
	if (ec) {
		print_error(cmd, "dumping the sockets (SMBDIRECT_CMD_SOCK_GET)", ec);
		return exit_error;
	}
	for (auto &s : all)
		if (f.matches(s))
			socks.push_back(std::move(s));

	ProcUsers users;
	if (args.has("processes")) {
		std::set<uint64_t> inodes;
		for (const auto &s : socks)
			if (s.inode)
				inodes.insert(*s.inode);
		if (!inodes.empty())
			users = scan_proc_users("/proc", inodes);
	}
	const ProcUsers *u = args.has("processes") ? &users : nullptr;

	if (args.has("json")) {
		JsonWriter j;
		j.begin_array();
		for (const auto &s : socks) {
			const std::vector<nl::ProcessRef> none;
			const std::vector<nl::ProcessRef> *list = nullptr;
			if (u) {
				auto it = s.inode ? u->find(*s.inode) : u->end();
				list = it == u->end() ? &none : &it->second;
			}
			nl::write_json(j, s, list);
		}
		j.end_array();
		std::printf("%s\n", j.str().c_str());
	} else {
		print_text(socks, u, args.has("extended"), !args.has("no-header"));
	}
	if (std::fflush(stdout)) {
		print_error(cmd, "stdout", { errno, std::system_category() });
		return exit_error;
	}
	return exit_ok;
}
