// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What every subcommand shares: exit codes, error messages that name the
 * object and the errno text, the "is the module loaded" check, addresses,
 * SOCK_SEQPACKET message I/O, buffers for RDMA and the progress line.
 * Sockets, registrations and errno_code() are libsmbdirect's C++ API.
 */
#ifndef SMBDIRECT_TOOLS_COMMON_HPP
#define SMBDIRECT_TOOLS_COMMON_HPP

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <sys/socket.h>

#include <smbdirect/smbdirect.hpp>

#include "args.hpp"
#include "socket_options.hpp"
#include "wire.hpp"

namespace sd::tool
{

/* iproute2 / rdma-tool habits. */
constexpr int exit_ok = 0;
constexpr int exit_error = 1;
constexpr int exit_usage = 2;

using sd::errno_code;
using sd::Registration;
using sd::Socket;

/* "smbdirect CMD: OBJECT: errno text" on stderr. */
void print_error(std::string_view cmd, std::string_view object, std::error_code ec);
/* "smbdirect CMD: message" on stderr. */
void print_message(std::string_view cmd, std::string_view message);
/* The message and "Try 'smbdirect CMD --help'."; returns exit_usage. */
int usage_error(std::string_view cmd, std::string_view message);

/*
 * Parses argv for a subcommand that also takes -h/--help. On --help prints
 * help to stdout and sets *exit_code = 0; on a parse error prints it and
 * sets *exit_code = 2. Returns whether the command should go on.
 */
bool parse_command_line(std::string_view cmd, int argc, char **argv,
			std::span<const OptionSpec> specs, std::string_view help, ParsedArgs &out,
			int &exit_code);

/*
 * false (having printed "smbdirect CMD: af_smbdirect is not loaded:
 * modprobe af_smbdirect" or the library's other reason) when SMB-Direct
 * sockets cannot be created.
 */
bool module_available(std::string_view cmd);

/* An anonymous mapping (MAP_POPULATE), unmapped when it goes: RDMA buffers. */
class Mapping {
    public:
	Mapping() = default;
	Mapping(const Mapping &) = delete;
	Mapping &operator=(const Mapping &) = delete;
	Mapping(Mapping &&o) noexcept
	    : p_(std::exchange(o.p_, nullptr)), len_(std::exchange(o.len_, 0))
	{
	}
	~Mapping();
	std::error_code map(size_t len);
	uint8_t *data() const
	{
		return static_cast<uint8_t *>(p_);
	}

    private:
	void *p_ = nullptr;
	size_t len_ = 0;
};

struct Endpoint {
	sockaddr_storage addr{};
	socklen_t len = 0;
	std::string text; /* "10.77.0.1:7000", "[fd77::1]:7000" */
};

/* "10.77.0.1:7000", "[fd77::1]:7000" for an AF_INET/AF_INET6 address. */
std::string format_endpoint(const sockaddr *addr);

/*
 * [ADDR] PORT from the positional arguments: host may be empty for a
 * wildcard listener. Prints a usage error (returns false) when malformed.
 */
bool parse_endpoint(std::string_view cmd, const std::string &host, const std::string &port,
		    Endpoint &out);

/* Every -o/--set of args, parsed; a usage error printed (rc = 2) if one is bad. */
bool parse_settings(std::string_view cmd, const ParsedArgs &args, std::vector<OptionSetting> &out,
		    int &rc);

/*
 * A connected socket of type (SOCK_SEQPACKET / SOCK_STREAM) with the
 * options set before connect, errors printed.
 */
Socket connect_endpoint(std::string_view cmd, const Endpoint &ep, int type,
			const std::vector<OptionSetting> &settings = {});
/* A listening socket with the options set before listen, errors printed. */
Socket listen_endpoint(std::string_view cmd, const Endpoint &ep, int type, int backlog,
		       const std::vector<OptionSetting> &settings = {});

/* Seconds on CLOCK_MONOTONIC. */
double now_seconds();

/* The negotiated parameters, errors printed (false). */
bool connection_parameters(std::string_view cmd, int fd, smbdirect_params &p);

/*
 * Message I/O on a SOCK_SEQPACKET socket: a message is its 4-byte type and
 * an optional payload sent in one sendmsg (no copy), MSG_NOSIGNAL, EINTR
 * retried.
 */
std::error_code send_message(int fd, wire::Type type, std::span<const uint8_t> payload = {});
std::error_code send_message(int fd, const wire::Writer &msg);
/* ERRR with a text, best effort (the connection may be gone already). */
void send_error_message(int fd, std::string_view text);

struct Received {
	size_t bytes = 0;	/* 0: the peer closed the connection */
	bool truncated = false; /* the message was larger than the buffer */
};
/* One message into buf (type included). */
std::error_code receive_into(int fd, std::span<uint8_t> buf, Received &out);
/* One control message (at most wire::max_control_size bytes) into buf, resized to it. */
std::error_code receive_control(int fd, std::vector<uint8_t> &buf, Received &out);

/* Is a message (or the end of the connection) waiting? Never blocks. */
bool message_waiting(int fd);

/* Writes all of buf to fd (a pipe, file or terminal), EINTR retried. */
std::error_code write_all(int fd, const uint8_t *buf, size_t len);
/*
 * Reads up to len bytes: blocks for the first, then takes whatever else is
 * ready without waiting (a pipe gives at most its buffer per read). Returns
 * the bytes read, 0 at the end of the input.
 */
std::error_code read_some(int fd, uint8_t *buf, size_t len, size_t &got);

/*
 * The progress line: "  12.0 MiB   23.4 MiB/s" on stderr, rewritten in
 * place on a terminal (every 0.5 s), one line a second otherwise.
 */
class Progress {
    public:
	Progress(bool enabled, bool terminal, std::string label);
	void update(uint64_t bytes);
	/* The last line, and a newline on a terminal. */
	void finish(uint64_t bytes);

    private:
	void print(uint64_t bytes, double now);
	bool enabled_;
	bool terminal_;
	std::string label_;
	double start_;
	double last_ = 0;
	bool printed_ = false;
};

} // namespace sd::tool

#endif
