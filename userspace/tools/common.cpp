// SPDX-License-Identifier: LGPL-2.1-or-later
#include "common.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "units.hpp"

namespace sd::tool
{

void print_error(std::string_view cmd, std::string_view object, std::error_code ec)
{
	std::fprintf(stderr, "smbdirect %.*s: %.*s: %s\n", static_cast<int>(cmd.size()), cmd.data(),
		     static_cast<int>(object.size()), object.data(), ec.message().c_str());
}

void print_message(std::string_view cmd, std::string_view message)
{
	std::fprintf(stderr, "smbdirect %.*s: %.*s\n", static_cast<int>(cmd.size()), cmd.data(),
		     static_cast<int>(message.size()), message.data());
}

int usage_error(std::string_view cmd, std::string_view message)
{
	print_message(cmd, message);
	std::fprintf(stderr, "Try 'smbdirect %.*s --help'.\n", static_cast<int>(cmd.size()),
		     cmd.data());
	return exit_usage;
}

bool parse_command_line(std::string_view cmd, int argc, char **argv,
			std::span<const OptionSpec> specs, std::string_view help, ParsedArgs &out,
			int &exit_code)
{
	std::vector<OptionSpec> all(specs.begin(), specs.end());
	all.push_back({ "help", 'h', false });
	ParseResult r = parse_args(std::span<char *const>(argv, static_cast<size_t>(argc)), all);

	/* --help wins over everything else on the line, as in iproute2. */
	if (r.ok() && r.args.has("help")) {
		std::fwrite(help.data(), 1, help.size(), stdout);
		exit_code = std::fflush(stdout) ? exit_error : exit_ok;
		return false;
	}
	if (!r.ok()) {
		exit_code = usage_error(cmd, r.error);
		return false;
	}
	out = std::move(r.args);
	return true;
}

bool module_available(std::string_view cmd)
{
	char why[256];
	int rc = smbdirect_available(why, sizeof(why));

	if (rc == 0)
		return true;
	if (why[0])
		print_message(cmd, why);
	else
		print_error(cmd, "af_smbdirect", errno_code(rc));
	return false;
}

Mapping::~Mapping()
{
	if (p_)
		munmap(p_, len_);
}

std::error_code Mapping::map(size_t len)
{
	void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return { errno, std::system_category() };
	p_ = p;
	len_ = len;
	return {};
}

std::string format_endpoint(const sockaddr *addr)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (addr->sa_family == AF_INET) {
		const auto *s4 = reinterpret_cast<const sockaddr_in *>(addr);
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
		return std::string(host) + ":" + std::to_string(port);
	}
	if (addr->sa_family == AF_INET6) {
		const auto *s6 = reinterpret_cast<const sockaddr_in6 *>(addr);
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
		return "[" + std::string(host) + "]:" + std::to_string(port);
	}
	return "family " + std::to_string(addr->sa_family);
}

bool parse_endpoint(std::string_view cmd, const std::string &host, const std::string &port,
		    Endpoint &out)
{
	if (!parse_uint(port, 1, 65535))
		return usage_error(cmd, "'" + port + "' is not a port number (1-65535)"), false;
	int rc = smbdirect_parse_address(host.empty() ? nullptr : host.c_str(), port.c_str(),
					 &out.addr, &out.len);
	if (rc < 0)
		return usage_error(cmd, "'" + host + "' is not a numeric IPv4 or IPv6 address"),
		       false;
	out.text = format_endpoint(reinterpret_cast<const sockaddr *>(&out.addr));
	return true;
}

bool parse_settings(std::string_view cmd, const ParsedArgs &args, std::vector<OptionSetting> &out,
		    int &rc)
{
	for (const auto &text : args.values("set")) {
		std::string error;
		auto s = parse_option_setting(text, error);
		if (!s) {
			rc = usage_error(cmd, error);
			return false;
		}
		out.push_back(std::move(*s));
	}
	return true;
}

namespace
{

/* A new socket with the options set; errors printed. */
Socket socket_with(std::string_view cmd, const Endpoint &ep, int type,
		   const std::vector<OptionSetting> &settings)
{
	auto sock = Socket::create(ep.addr.ss_family, type, SOCK_CLOEXEC);
	if (!sock) {
		print_error(cmd, "socket", sock.error());
		return Socket();
	}
	for (const auto &s : settings) {
		if (auto r = sock->set_option(s.option, s.value); !r) {
			print_error(cmd, "option " + s.text, r.error());
			return Socket();
		}
	}
	return std::move(*sock);
}

} // namespace

Socket connect_endpoint(std::string_view cmd, const Endpoint &ep, int type,
			const std::vector<OptionSetting> &settings)
{
	Socket sock = socket_with(cmd, ep, type, settings);
	if (!sock)
		return sock;
	/* No signal handlers are installed, so no EINTR to restart. */
	if (::connect(sock.fd(), reinterpret_cast<const sockaddr *>(&ep.addr), ep.len) < 0) {
		print_error(cmd, "connect " + ep.text, { errno, std::system_category() });
		return Socket();
	}
	return sock;
}

Socket listen_endpoint(std::string_view cmd, const Endpoint &ep, int type, int backlog,
		       const std::vector<OptionSetting> &settings)
{
	Socket sock = socket_with(cmd, ep, type, settings);
	if (!sock)
		return sock;
	if (::bind(sock.fd(), reinterpret_cast<const sockaddr *>(&ep.addr), ep.len) ||
	    ::listen(sock.fd(), backlog)) {
		print_error(cmd, "listen " + ep.text, { errno, std::system_category() });
		return Socket();
	}
	return sock;
}

double now_seconds()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

bool connection_parameters(std::string_view cmd, int fd, smbdirect_params &p)
{
	int rc = smbdirect_connection_get_parameters(fd, &p);

	if (rc < 0) {
		print_error(cmd, "connection parameters", errno_code(rc));
		return false;
	}
	return true;
}

namespace
{

std::error_code sendmsg_all(int fd, iovec *iov, int count)
{
	msghdr mh{};
	mh.msg_iov = iov;
	mh.msg_iovlen = static_cast<size_t>(count);
	size_t want = 0;
	for (int i = 0; i < count; i++)
		want += iov[i].iov_len;
	for (;;) {
		ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return { errno, std::system_category() };
		/* SOCK_SEQPACKET takes a message whole or not at all. */
		if (static_cast<size_t>(n) != want)
			return std::make_error_code(std::errc::message_size);
		return {};
	}
}

} // namespace

std::error_code send_message(int fd, wire::Type type, std::span<const uint8_t> payload)
{
	uint8_t header[wire::header_size];
	wire::put_header(header, type);
	iovec iov[2] = { { header, sizeof(header) },
			 { const_cast<uint8_t *>(payload.data()), payload.size() } };

	return sendmsg_all(fd, iov, payload.empty() ? 1 : 2);
}

std::error_code send_message(int fd, const wire::Writer &msg)
{
	iovec iov = { const_cast<uint8_t *>(msg.bytes().data()), msg.bytes().size() };

	return sendmsg_all(fd, &iov, 1);
}

void send_error_message(int fd, std::string_view text)
{
	wire::Writer w(wire::Type::Error);
	w.text(text.substr(0, 1000));
	(void)send_message(fd, w);
}

std::error_code receive_into(int fd, std::span<uint8_t> buf, Received &out)
{
	for (;;) {
		iovec iov = { buf.data(), buf.size() };
		msghdr mh{};
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		ssize_t n = recvmsg(fd, &mh, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return { errno, std::system_category() };
		out.bytes = static_cast<size_t>(n);
		out.truncated = mh.msg_flags & MSG_TRUNC;
		return {};
	}
}

std::error_code receive_control(int fd, std::vector<uint8_t> &buf, Received &out)
{
	buf.resize(wire::max_control_size);
	std::error_code ec = receive_into(fd, buf, out);
	if (!ec && !out.truncated)
		buf.resize(out.bytes);
	return ec;
}

bool message_waiting(int fd)
{
	pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, 0) > 0;
}

std::error_code write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return { errno, std::system_category() };
		buf += n;
		len -= static_cast<size_t>(n);
	}
	return {};
}

std::error_code read_some(int fd, uint8_t *buf, size_t len, size_t &got)
{
	got = 0;
	while (got < len) {
		if (got) {
			pollfd p = { fd, POLLIN, 0 };
			if (poll(&p, 1, 0) <= 0)
				break;
		}
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return { errno, std::system_category() };
		if (n == 0)
			break;
		got += static_cast<size_t>(n);
	}
	return {};
}

Progress::Progress(bool enabled, bool terminal, std::string label)
    : enabled_(enabled), terminal_(terminal), label_(std::move(label)), start_(now_seconds())
{
}

void Progress::update(uint64_t bytes)
{
	if (!enabled_)
		return;
	double t = now_seconds();
	if (t - last_ < (terminal_ ? 0.5 : 1.0))
		return;
	print(bytes, t);
}

void Progress::print(uint64_t bytes, double t)
{
	double el = t - start_;
	std::string line = label_ + " " + std::to_string(bytes) + " bytes (" + format_bytes(bytes) +
			   ")  " + format_rate(el > 0 ? static_cast<double>(bytes) / el : 0);

	if (terminal_)
		std::fprintf(stderr, "\r%-60s", line.c_str());
	else
		std::fprintf(stderr, "%s\n", line.c_str());
	std::fflush(stderr);
	last_ = t;
	printed_ = true;
}

void Progress::finish(uint64_t bytes)
{
	if (!enabled_)
		return;
	print(bytes, now_seconds());
	if (terminal_)
		std::fputc('\n', stderr);
}

} // namespace sd::tool
