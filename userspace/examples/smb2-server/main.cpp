// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect-example-smb2-server: a minimal SMB2 server on libsmbdirect
 * that moves READ/WRITE data with the SMB-Direct RDMA channel, a reference
 * for ksmbd-style servers. One share from a directory, guest sessions, a
 * process per client. See Documentation/smb2-rdma-offload.rst.
 */
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <smbdirect/smbdirect.h>

#include "connection.hpp"
#include "share.hpp"

namespace {

constexpr int exit_ok = 0;
constexpr int exit_error = 1;
constexpr int exit_usage = 2;
constexpr const char *prog = "smbdirect-example-smb2-server";

const char usage_text[] =
	"Usage: smbdirect-example-smb2-server [OPTIONS] DIR\n"
	"\n"
	"Serves DIR as \\\\SERVER\\share over SMB-Direct (SMB 3.0, 3.0.2, 3.1.1), a process per\n"
	"client, any NTLMSSP authentication accepted as guest. READ and WRITE over the RDMA\n"
	"channel move the data with asynchronous RDMA transfers against the client's buffer\n"
	"descriptors, many in flight per connection: READ from the file's page cache with\n"
	"the response in the same sendmsg, WRITE answered when its RDMA READ completes.\n"
	"\n"
	"Options:\n"
	"  -l, --listen ADDR      address to listen on (default: 0.0.0.0)\n"
	"  -p, --port PORT        a port to listen on, repeatable (default: 445 and 5445)\n"
	"  -s, --share NAME       the share's name (default: share)\n"
	"      --max-io N         MaxReadSize/MaxWriteSize offered (K/M suffixes; default 8M)\n"
	"      --connections N    exit once N clients have come and gone (default: never)\n"
	"      --log FILE         log to FILE (default: stderr)\n"
	"  -v, --verbose          log every request and every RDMA transfer\n"
	"  -h, --help             this help\n"
	"\n"
	"Exit status: 0 success, 1 runtime error, 2 usage.\n";

volatile sig_atomic_t stop = 0;

void on_term(int)
{
	stop = 1;
}

int usage_error(const std::string &message)
{
	std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", prog, message.c_str(), prog);
	return exit_usage;
}

bool parse_size(const char *s, uint64_t &out)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long v = std::strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	uint64_t mult = 1;
	if (*end == 'K' || *end == 'k')
		mult = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mult = 1024 * 1024, end++;
	if (*end)
		return false;
	out = v * mult;
	return v == out / mult;
}

/* The child: one connection, then a summary line the tests count on. */
int serve_client(int fd, const smb2::Share &share, const smb2::ServerConfig &config,
		 std::FILE *log)
{
	smb2::Connection c(fd, share, config, log);
	std::error_code ec = c.serve();
	const auto &io = c.counters();
	std::fprintf(log,
		     "[%d] summary: %llu requests (%llu compounds); READ over RDMA: %llu "
		     "RDMA WRITE from the file, %llu bytes (%llu read first, not cached; "
		     "%llu responses in the same sendmsg); "
		     "WRITE over RDMA: %llu RDMA READ, %llu bytes; %llu send_with_invalidate; "
		     "inline READ: %llu, %llu bytes; inline WRITE: %llu, %llu bytes; at most %u "
		     "descriptors; at most %u transfers and %u WRITEs in flight; %s\n",
		     static_cast<int>(getpid()), static_cast<unsigned long long>(io.requests),
		     static_cast<unsigned long long>(io.compounds),
		     static_cast<unsigned long long>(io.rdma_write_transfers),
		     static_cast<unsigned long long>(io.rdma_write_bytes),
		     static_cast<unsigned long long>(io.rdma_write_read_first),
		     static_cast<unsigned long long>(io.responses_with_transfer),
		     static_cast<unsigned long long>(io.rdma_read_transfers),
		     static_cast<unsigned long long>(io.rdma_read_bytes),
		     static_cast<unsigned long long>(io.send_with_invalidate),
		     static_cast<unsigned long long>(io.inline_reads),
		     static_cast<unsigned long long>(io.inline_read_bytes),
		     static_cast<unsigned long long>(io.inline_writes),
		     static_cast<unsigned long long>(io.inline_write_bytes), io.max_descriptors,
		     io.max_transfers_in_flight, io.max_writes_in_flight,
		     ec ? ("ended by " + ec.message()).c_str() : "closed by the client");
	std::fflush(log);
	return ec ? exit_error : exit_ok;
}

} // namespace

int main(int argc, char **argv)
{
	enum { opt_max_io = 256, opt_connections, opt_log };
	static const option long_options[] = {
		{ "listen", required_argument, nullptr, 'l' },
		{ "port", required_argument, nullptr, 'p' },
		{ "share", required_argument, nullptr, 's' },
		{ "max-io", required_argument, nullptr, opt_max_io },
		{ "connections", required_argument, nullptr, opt_connections },
		{ "log", required_argument, nullptr, opt_log },
		{ "verbose", no_argument, nullptr, 'v' },
		{ "help", no_argument, nullptr, 'h' },
		{},
	};
	std::string listen_addr = "0.0.0.0";
	std::vector<std::string> ports;
	smb2::ServerConfig config;
	uint64_t connections = 0;
	std::string log_path;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "l:p:s:vh", long_options, nullptr)) != -1) {
		switch (c) {
		case 'l':
			listen_addr = optarg;
			break;
		case 'p':
			ports.push_back(optarg);
			break;
		case 's':
			config.share_name = optarg;
			break;
		case opt_max_io: {
			uint64_t v = 0;
			if (!parse_size(optarg, v) || v < 65536 || v > (64u << 20))
				return usage_error(std::string("max-io ") + optarg +
						   ": must be 64K..64M");
			config.max_io = static_cast<uint32_t>(v);
			break;
		}
		case opt_connections:
			if (!parse_size(optarg, connections))
				return usage_error(std::string("connections ") + optarg +
						   ": not a number");
			break;
		case opt_log:
			log_path = optarg;
			break;
		case 'v':
			config.verbose = true;
			break;
		case 'h':
			std::fputs(usage_text, stdout);
			return exit_ok;
		default:
			return usage_error(std::string("unknown option '") + argv[optind - 1] + "'");
		}
	}
	if (argc - optind != 1)
		return usage_error("expected the share's directory");
	if (ports.empty())
		ports = { "445", "5445" };

	std::FILE *log = stderr;
	if (!log_path.empty() && !(log = std::fopen(log_path.c_str(), "a"))) {
		std::fprintf(stderr, "%s: %s: %s\n", prog, log_path.c_str(), std::strerror(errno));
		return exit_error;
	}
	smb2::Share share(argv[optind]);
	if (!share.ok()) {
		std::fprintf(stderr, "%s: %s: %s\n", prog, argv[optind], std::strerror(errno));
		return exit_error;
	}
	char why[256];
	if (smbdirect_available(why, sizeof(why)) < 0) {
		std::fprintf(stderr, "%s: %s\n", prog, why);
		return exit_error;
	}

	std::vector<pollfd> listeners;
	for (const auto &port : ports) {
		sockaddr_storage ss{};
		socklen_t len = 0;
		int err = smbdirect_parse_address(listen_addr.c_str(), port.c_str(), &ss, &len);
		int fd = err < 0 ? err
				 : smbdirect_listen(reinterpret_cast<sockaddr *>(&ss), len, SOCK_STREAM,
						    SOCK_CLOEXEC, 16);
		if (fd < 0) {
			std::fprintf(stderr, "%s: listen %s port %s: %s\n", prog, listen_addr.c_str(),
				     port.c_str(), std::strerror(-fd));
			return exit_error;
		}
		listeners.push_back({ fd, POLLIN, 0 });
	}
	struct sigaction sa {};
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGINT, &sa, nullptr);
	signal(SIGPIPE, SIG_IGN);

	std::string list;
	for (const auto &p : ports)
		list += " " + listen_addr + ":" + p;
	std::fprintf(log, "[%d] listening on%s, share '%s' = %s\n", static_cast<int>(getpid()),
		     list.c_str(), config.share_name.c_str(), argv[optind]);
	std::fflush(log);

	uint64_t accepted = 0;
	int children = 0;
	while (!stop && (connections == 0 || accepted < connections)) {
		while (waitpid(-1, nullptr, WNOHANG) > 0)
			children--;
		int n = poll(listeners.data(), listeners.size(), 500);
		if (n < 0 && errno != EINTR) {
			std::fprintf(log, "%s: poll: %s\n", prog, std::strerror(errno));
			break;
		}
		for (auto &l : listeners) {
			if (n <= 0 || !(l.revents & POLLIN))
				continue;
			sockaddr_storage peer{};
			socklen_t plen = sizeof(peer);
			int fd = smbdirect_accept(l.fd, reinterpret_cast<sockaddr *>(&peer), &plen,
						  SOCK_CLOEXEC);
			if (fd < 0) {
				std::fprintf(log, "[%d] accept: %s\n", static_cast<int>(getpid()),
					     std::strerror(-fd));
				continue;
			}
			accepted++;
			pid_t pid = fork();
			if (pid == 0) {
				for (auto &other : listeners)
					::close(other.fd);
				std::fflush(log);
				_exit(serve_client(fd, share, config, log));
			}
			if (pid < 0)
				std::fprintf(log, "%s: fork: %s\n", prog, std::strerror(errno));
			else
				children++;
			::close(fd);
		}
	}
	for (auto &l : listeners)
		::close(l.fd);
	/* The children finish their clients. */
	while (children > 0 && waitpid(-1, nullptr, 0) > 0)
		children--;
	return exit_ok;
}
