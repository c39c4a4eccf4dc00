// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect params: the module's defaults (its parameters in
 * /sys/module/af_smbdirect/parameters), and with ADDR PORT the parameters
 * a test connection negotiated (SMBDIRECT_IOC_GET_PARAMS). `params -l`
 * is the other end: it accepts connections, prints what each negotiated,
 * and keeps each open until its client closes it.
 */
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <poll.h>
#include <sys/socket.h>
#include <vector>

#include <smbdirect/smbdirect.h>

#include "commands.hpp"
#include "common.hpp"
#include "json.hpp"
#include "table.hpp"
#include "units.hpp"

using namespace sd::tool;

namespace
{

constexpr const char *module_parameters = "/sys/module/af_smbdirect/parameters";

constexpr OptionSpec specs[] = {
	{ "json", 'j', false }, { "listen", 'l', false },  { "once", 0, false },
	{ "set", 'o', true },	{ "verbose", 'v', false },
};

constexpr std::string_view help =
	"Usage: smbdirect params [--json]\n"
	"       smbdirect params [--json] [-o NAME=VALUE]... ADDR PORT\n"
	"       smbdirect params -l [--once] [--json] [-v] [-o NAME=VALUE]... [ADDR] PORT\n"
	"\n"
	"Without an address: af_smbdirect's module parameters (the defaults of\n"
	"every connection). With ADDR PORT: connects to a `smbdirect params -l`\n"
	"(or any SMB-Direct listener) and prints the parameters the connection\n"
	"negotiated. With -l: accepts connections, prints what each negotiated\n"
	"and keeps it open until the client closes it.\n"
	"\n"
	"  -l, --listen          accept connections on [ADDR] PORT (default: all addresses)\n"
	"      --once            with -l: exit after the first connection ended\n"
	"  -o, --set NAME=VALUE  set a SOL_SMBDIRECT option before connect/listen;\n"
	"                        NAME: receive_credit_max, send_credit_target,\n"
	"                        max_send_size, max_receive_size, max_fragmented_size,\n"
	"                        max_read_write_size, keepalive_interval\n"
	"  -j, --json            JSON (with -l: one object per line and connection)\n"
	"  -v, --verbose         with -l: say when listening and when a client left\n"
	"  -h, --help            this text\n";

/* Module parameters: file name -> contents, sorted by name. */
int print_module_defaults(bool json)
{
	DIR *d = opendir(module_parameters);

	if (!d) {
		print_error("params", module_parameters, { errno, std::system_category() });
		return exit_error;
	}
	std::map<std::string, std::string> values;
	while (dirent *e = readdir(d)) {
		if (e->d_name[0] == '.')
			continue;
		std::ifstream f(std::string(module_parameters) + "/" + e->d_name);
		std::string v;
		if (!std::getline(f, v))
			continue;
		values[e->d_name] = v;
	}
	closedir(d);
	if (values.empty()) {
		print_message("params", std::string(module_parameters) + " is empty");
		return exit_error;
	}

	JsonWriter j;
	Table t({ "PARAMETER", "DEFAULT" });
	j.begin_object();
	for (const auto &[name, v] : values) {
		auto n = parse_uint(v, 0, UINT64_MAX);
		n ? j.member(name, *n) : j.member(name, v);
		t.add({ name, v });
	}
	j.end_object();
	if (json)
		std::printf("%s\n", j.str().c_str());
	else
		std::fputs(t.render().c_str(), stdout);
	return std::fflush(stdout) ? exit_error : exit_ok;
}

void print_params(const smbdirect_params &p, const std::string &local, const std::string &peer,
		  bool json)
{
	char version[16];
	std::snprintf(version, sizeof(version), "%u.%u", p.version >> 8, p.version & 0xff);
	const std::pair<const char *, uint32_t> fields[] = {
		{ "max_send_size", p.max_send_size },
		{ "max_receive_size", p.max_receive_size },
		{ "max_fragmented_send_size", p.max_fragmented_send_size },
		{ "max_fragmented_receive_size", p.max_fragmented_receive_size },
		{ "max_read_write_size", p.max_read_write_size },
		{ "send_credit_target", p.send_credit_target },
		{ "receive_credit_max", p.receive_credit_max },
		{ "initiator_depth", p.initiator_depth },
		{ "responder_resources", p.responder_resources },
		{ "keepalive_interval", p.keepalive_interval },
	};
	if (json) {
		JsonWriter j;
		j.begin_object().member("local", local).member("peer", peer);
		j.member("version", version)
			.member("transport", smbdirect_transport_name(p.transport));
		for (const auto &[name, v] : fields)
			j.member(name, v);
		j.end_object();
		std::printf("%s\n", j.str().c_str());
	} else {
		Table t({ "PARAMETER", "NEGOTIATED" });
		t.add({ "local", local });
		t.add({ "peer", peer });
		t.add({ "version", version });
		t.add({ "transport", smbdirect_transport_name(p.transport) });
		for (const auto &[name, v] : fields)
			t.add({ name, std::to_string(v) });
		std::fputs(t.render().c_str(), stdout);
	}
	std::fflush(stdout);
}

std::string local_name(int fd)
{
	sockaddr_storage ss{};
	socklen_t len = sizeof(ss);
	if (getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len))
		return "?";
	return format_endpoint(reinterpret_cast<sockaddr *>(&ss));
}

int test_connection(const Endpoint &ep, const std::vector<OptionSetting> &settings, bool json)
{
	Socket sock = connect_endpoint("params", ep, SOCK_SEQPACKET, settings);
	if (!sock)
		return exit_error;
	int fd = sock.fd();
	smbdirect_params p{};
	if (!connection_parameters("params", fd, p))
		return exit_error;
	print_params(p, local_name(fd), ep.text, json);
	return exit_ok;
}

int serve(const Endpoint &ep, const std::vector<OptionSetting> &settings, const ParsedArgs &args)
{
	bool json = args.has("json"), verbose = args.has("verbose"), once = args.has("once");
	Socket listener = listen_endpoint("params", ep, SOCK_SEQPACKET, 16, settings);
	if (!listener)
		return exit_error;
	if (verbose)
		print_message("params", "listening on " + ep.text);

	std::vector<Socket> clients;
	std::vector<std::string> names;
	for (;;) {
		std::vector<pollfd> fds{ { listener.fd(), POLLIN, 0 } };
		for (const auto &c : clients)
			fds.push_back({ c.fd(), POLLIN, 0 });
		if (poll(fds.data(), fds.size(), -1) < 0) {
			if (errno == EINTR)
				continue;
			print_error("params", "poll", { errno, std::system_category() });
			return exit_error;
		}
		/* Clients first: an index into clients stays valid until the erase. */
		for (size_t i = fds.size() - 1; i >= 1; i--) {
			if (!fds[i].revents)
				continue;
			char buf[256];
			ssize_t n = recv(clients[i - 1].fd(), buf, sizeof(buf), MSG_DONTWAIT);
			if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
				continue;
			if (verbose)
				print_message(
					"params",
					names[i - 1] + " closed" +
						(n < 0 ? std::string(": ") + std::strerror(errno)
						       : ""));
			clients.erase(clients.begin() + static_cast<long>(i - 1));
			names.erase(names.begin() + static_cast<long>(i - 1));
			if (once)
				return exit_ok;
		}
		if (!(fds[0].revents & POLLIN))
			continue;
		sockaddr_storage peer{};
		socklen_t len = sizeof(peer);
		int c = smbdirect_accept(listener.fd(), reinterpret_cast<sockaddr *>(&peer), &len,
					 SOCK_CLOEXEC);
		if (c < 0) {
			/* A connection that failed during the handshake is its problem. */
			print_error("params", "accept", errno_code(c));
			if (c == -EINTR || c == -ECONNABORTED || c == -ECONNREFUSED ||
			    c == -ETIMEDOUT || c == -ECONNRESET || c == -EPROTO)
				continue;
			return exit_error;
		}
		Socket conn(c);
		smbdirect_params p{};
		if (!connection_parameters("params", c, p))
			continue;
		std::string name = format_endpoint(reinterpret_cast<sockaddr *>(&peer));
		print_params(p, local_name(c), name, json);
		clients.push_back(std::move(conn));
		names.push_back(name);
	}
}

} // namespace

int sd_cmd_params(int argc, char **argv)
{
	ParsedArgs args;
	int rc;

	if (!parse_command_line("params", argc, argv, specs, help, args, rc))
		return rc;
	std::vector<OptionSetting> settings;
	if (!parse_settings("params", args, settings, rc))
		return rc;
	auto &pos = args.positionals;
	bool listening = args.has("listen");
	if (listening ? pos.empty() || pos.size() > 2 : pos.size() == 1 || pos.size() > 2)
		return usage_error("params", listening ? "-l needs [ADDR] PORT"
						       : "expected no arguments or ADDR PORT");
	if (!listening && pos.empty() && !settings.empty())
		return usage_error("params", "-o needs ADDR PORT or -l");
	if (args.has("once") && !listening)
		return usage_error("params", "--once needs -l");
	Endpoint ep;
	if (!pos.empty() &&
	    !parse_endpoint("params", pos.size() == 2 ? pos[0] : "", pos.back(), ep))
		return exit_usage;
	if (!module_available("params"))
		return exit_error;
	if (pos.empty())
		return print_module_defaults(args.has("json"));
	if (listening)
		return serve(ep, settings, args);
	return test_connection(ep, settings, args.has("json"));
}
