// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect dev: network interfaces, the RDMA device and port behind each,
 * addresses, link speed, transport, and whether an SMB3 server would
 * announce it RDMA_CAPABLE in FSCTL_QUERY_NETWORK_INTERFACE_INFO, with the
 * reason (smbdirect_interfaces(3) has the rules). Needs no module.
 */
#include <arpa/inet.h>
#include <cstdio>
#include <netinet/in.h>
#include <string>
#include <vector>

#include <smbdirect/smbdirect.h>

#include "commands.hpp"
#include "common.hpp"
#include "json.hpp"
#include "table.hpp"

using namespace sd::tool;

namespace
{

constexpr OptionSpec specs[] = {
	{ "json", 'j', false },
	{ "capable", 'c', false },
};

constexpr std::string_view help =
	"Usage: smbdirect dev [--capable] [--json]\n"
	"\n"
	"Lists the network interfaces with the RDMA device and port that serve\n"
	"each, their addresses, link speed and transport, and whether an SMB3\n"
	"server would announce them RDMA_CAPABLE for multichannel (and why).\n"
	"\n"
	"  -c, --capable  only the interfaces that are RDMA-capable\n"
	"  -j, --json     a JSON array, one object per interface\n"
	"  -h, --help     this text\n";

std::string address_text(const sockaddr_storage &ss)
{
	char buf[INET6_ADDRSTRLEN] = "";

	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in &>(ss).sin_addr, buf,
			  sizeof(buf));
	else if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 &>(ss).sin6_addr, buf,
			  sizeof(buf));
	return buf;
}

std::string speed_text(uint64_t bps)
{
	char buf[32];

	if (!bps)
		return "unknown";
	if (bps >= 1000000000ULL)
		std::snprintf(buf, sizeof(buf), bps % 1000000000ULL ? "%.1fGbit/s" : "%.0fGbit/s",
			      static_cast<double>(bps) / 1e9);
	else
		std::snprintf(buf, sizeof(buf), "%.0fMbit/s", static_cast<double>(bps) / 1e6);
	return buf;
}

class InterfaceList {
    public:
	~InterfaceList()
	{
		if (list_)
			smbdirect_interfaces_free(list_, count_);
	}
	int load()
	{
		count_ = smbdirect_interfaces(&list_, SMBDIRECT_IF_LIST_ALL);
		return count_;
	}
	std::span<const smbdirect_interface> items() const
	{
		return { list_, count_ > 0 ? static_cast<size_t>(count_) : 0 };
	}

    private:
	smbdirect_interface *list_ = nullptr;
	int count_ = 0;
};

} // namespace

int sd_cmd_dev(int argc, char **argv)
{
	ParsedArgs args;
	int rc;

	if (!parse_command_line("dev", argc, argv, specs, help, args, rc))
		return rc;
	if (!args.positionals.empty())
		return usage_error("dev", "unexpected argument '" + args.positionals[0] + "'");

	InterfaceList list;
	int n = list.load();
	if (n < 0) {
		print_error("dev", "network interfaces", errno_code(n));
		return exit_error;
	}
	bool only_capable = args.has("capable");
	JsonWriter j;
	Table t({ "IFNAME", "INDEX", "STATE", "RDMA", "TRANSPORT", "SPEED", "RDMA_CAPABLE",
		  "ADDRESSES", "REASON" });
	j.begin_array();
	for (const auto &i : list.items()) {
		bool capable = i.flags & SMBDIRECT_IF_RDMA_CAPABLE;
		bool up = i.flags & SMBDIRECT_IF_UP;
		if (only_capable && !capable)
			continue;
		std::vector<std::string> addrs;
		for (uint32_t a = 0; a < i.addr_count; a++)
			addrs.push_back(address_text(i.addrs[a]));
		std::string rdma = i.rdma_device[0] ? std::string(i.rdma_device) + "/" +
							      std::to_string(i.rdma_port)
						    : "-";
		const char *transport = i.transport ? smbdirect_transport_name(i.transport) : "-";

		std::string joined;
		for (const auto &a : addrs)
			joined += (joined.empty() ? "" : ",") + a;
		t.add({ i.name, std::to_string(i.ifindex), up ? "up" : "down", rdma, transport,
			speed_text(i.speed_bps), capable ? "yes" : "no",
			joined.empty() ? "-" : joined, i.reason });

		j.begin_object().member("ifname", i.name).member("ifindex", i.ifindex);
		j.member("up", up);
		j.key("rdma_device");
		i.rdma_device[0] ? j.value(i.rdma_device) : j.null();
		j.key("rdma_port");
		i.rdma_device[0] ? j.value(i.rdma_port) : j.null();
		j.key("transport");
		i.transport ? j.value(smbdirect_transport_name(i.transport)) : j.null();
		j.member("speed_bps", i.speed_bps);
		j.member("rdma_capable", capable).member("reason", i.reason);
		j.key("addresses").begin_array();
		for (const auto &a : addrs)
			j.value(a);
		j.end_array().end_object();
	}
	j.end_array();
	if (args.has("json"))
		std::printf("%s\n", j.str().c_str());
	else
		std::fputs(t.render().c_str(), stdout);
	if (std::fflush(stdout)) {
		print_error("dev", "stdout", { errno, std::system_category() });
		return exit_error;
	}
	return exit_ok;
}
