// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The preload's decisions (see decision.hpp): pure functions only.
 */
#include "decision.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>

namespace sd::preload {

namespace {

constexpr std::array<uint8_t, 12> v4_mapped_prefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool is_tcp_stream(const SocketIdentity &s, Reason *why)
{
	if (s.domain != AF_INET && s.domain != AF_INET6) {
		*why = Reason::not_inet_socket;
		return false;
	}
	if (s.type != SOCK_STREAM) {
		*why = Reason::not_stream;
		return false;
	}
	/* SO_PROTOCOL reads IPPROTO_TCP for socket(AF_INET, SOCK_STREAM, 0). */
	if (s.protocol != IPPROTO_TCP && s.protocol != 0) {
		*why = Reason::not_tcp;
		return false;
	}
	return true;
}

/* The checks connect and bind share; fills d->target on success. */
bool inet_stream_call(const Config &cfg, const SocketIdentity &sock, const struct sockaddr *addr,
		      socklen_t len, Decision *d)
{
	if (!addr || len < static_cast<socklen_t>(sizeof(sa_family_t)) ||
	    (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) {
		d->reason = Reason::not_inet_address;
		return false;
	}
	if (!is_tcp_stream(sock, &d->reason))
		return false;
	std::optional<Endpoint> e = parse_endpoint(addr, len);
	if (!e) {
		/* Too short for its family: the kernel's TCP answers EINVAL. */
		d->reason = Reason::not_inet_address;
		return false;
	}
	/* TCP_CLOSE is the state of a socket that never connected. */
	if (sock.tcp_state >= 0 && sock.tcp_state != TCP_CLOSE) {
		d->reason = Reason::not_fresh;
		return false;
	}
	d->report = true;
	if (!cfg.enabled()) {
		d->reason = Reason::config_error;
		return false;
	}
	d->target = unmap_v4(*e);
	return true;
}

} // namespace

bool Endpoint::is_wildcard() const
{
	std::size_t n = family == AF_INET ? 4 : 16;
	for (std::size_t i = 0; i < n; i++)
		if (addr[i])
			return false;
	return true;
}

bool Endpoint::is_v4_mapped() const
{
	return family == AF_INET6 &&
	       std::memcmp(addr.data(), v4_mapped_prefix.data(), v4_mapped_prefix.size()) == 0;
}

std::optional<Endpoint> parse_endpoint(const struct sockaddr *addr, socklen_t len)
{
	Endpoint e;

	if (!addr || len < static_cast<socklen_t>(sizeof(sa_family_t)))
		return std::nullopt;
	if (addr->sa_family == AF_INET) {
		struct sockaddr_in sin;
		if (len < static_cast<socklen_t>(sizeof(sin)))
			return std::nullopt;
		std::memcpy(&sin, addr, sizeof(sin));
		e.family = AF_INET;
		std::memcpy(e.addr.data(), &sin.sin_addr, 4);
		e.port = ntohs(sin.sin_port);
		return e;
	}
	if (addr->sa_family == AF_INET6) {
		struct sockaddr_in6 sin6;
		/* As the kernel: the scope id is optional (SIN6_LEN_RFC2133). */
		if (len < static_cast<socklen_t>(offsetof(struct sockaddr_in6, sin6_scope_id)))
			return std::nullopt;
		std::memset(&sin6, 0, sizeof(sin6));
		std::memcpy(&sin6, addr, len < sizeof(sin6) ? len : sizeof(sin6));
		e.family = AF_INET6;
		std::memcpy(e.addr.data(), &sin6.sin6_addr, 16);
		e.port = ntohs(sin6.sin6_port);
		e.flowinfo = sin6.sin6_flowinfo;
		e.scope_id = sin6.sin6_scope_id;
		return e;
	}
	return std::nullopt;
}

Endpoint unmap_v4(const Endpoint &e)
{
	if (!e.is_v4_mapped())
		return e;
	Endpoint v4;
	v4.family = AF_INET;
	std::memcpy(v4.addr.data(), e.addr.data() + 12, 4);
	v4.port = e.port;
	return v4;
}

socklen_t to_sockaddr(const Endpoint &e, struct sockaddr_storage *out)
{
	std::memset(out, 0, sizeof(*out));
	if (e.family == AF_INET) {
		struct sockaddr_in sin = {};
		sin.sin_family = AF_INET;
		sin.sin_port = htons(e.port);
		std::memcpy(&sin.sin_addr, e.addr.data(), 4);
		std::memcpy(out, &sin, sizeof(sin));
		return sizeof(sin);
	}
	struct sockaddr_in6 sin6 = {};
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(e.port);
	sin6.sin6_flowinfo = e.flowinfo;
	sin6.sin6_scope_id = e.scope_id;
	std::memcpy(&sin6.sin6_addr, e.addr.data(), 16);
	std::memcpy(out, &sin6, sizeof(sin6));
	return sizeof(sin6);
}

void format_endpoint(const Endpoint &e, char *buf, std::size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (!len)
		return;
	inet_ntop(e.family == AF_INET ? AF_INET : AF_INET6, e.addr.data(), host, sizeof(host));
	if (e.family == AF_INET)
		std::snprintf(buf, len, "%s:%u", host, unsigned{e.port});
	else if (e.scope_id)
		std::snprintf(buf, len, "[%s%%%u]:%u", host, e.scope_id, unsigned{e.port});
	else
		std::snprintf(buf, len, "[%s]:%u", host, unsigned{e.port});
}

Decision decide_connect(const Config &cfg, const SocketIdentity &sock, const struct sockaddr *addr,
			socklen_t len)
{
	Decision d;

	if (!inet_stream_call(cfg, sock, addr, len, &d))
		return d;
	if (!cfg.ports.contains(d.target.port)) {
		d.reason = Reason::port_not_listed;
		return d;
	}
	if (d.target.is_wildcard()) {
		d.reason = Reason::wildcard_peer;
		return d;
	}
	d.action = Action::replace;
	d.reason = Reason::replace;
	return d;
}

Decision decide_bind(const Config &cfg, const SocketIdentity &sock, const struct sockaddr *addr,
		     socklen_t len)
{
	Decision d;

	if (!inet_stream_call(cfg, sock, addr, len, &d))
		return d;
	if (sock.bound) {
		/* TCP answers EINVAL for a second bind: let it. */
		d.reason = Reason::not_fresh;
		d.report = false;
		return d;
	}
	/* Port 0 asks for any free port: never an SMB port on purpose. */
	if (!d.target.port || !cfg.ports.contains(d.target.port)) {
		d.reason = Reason::port_not_listed;
		return d;
	}
	if (!cfg.listen) {
		d.reason = Reason::listen_disabled;
		return d;
	}
	d.action = Action::replace;
	d.reason = Reason::replace;
	return d;
}

void format_reason(const Config &cfg, const Decision &d, char *buf, std::size_t len)
{
	char ports[256];

	if (!len)
		return;
	format_ports(cfg.ports, ports, sizeof(ports));
	switch (d.reason) {
	case Reason::replace:
		std::snprintf(buf, len, "SMB port %u", unsigned{d.target.port});
		break;
	case Reason::config_error:
		std::snprintf(buf, len, "%s: %s", cfg.error_variable ? cfg.error_variable : "?",
			      cfg.error ? cfg.error : "?");
		break;
	case Reason::not_inet_address:
		std::snprintf(buf, len, "not an IPv4/IPv6 address");
		break;
	case Reason::not_inet_socket:
		std::snprintf(buf, len, "not an IPv4/IPv6 socket");
		break;
	case Reason::not_stream:
		std::snprintf(buf, len, "not a stream socket");
		break;
	case Reason::not_tcp:
		std::snprintf(buf, len, "not a TCP socket");
		break;
	case Reason::port_not_listed:
		std::snprintf(buf, len, "port %u not in %s", unsigned{d.target.port}, ports);
		break;
	case Reason::wildcard_peer:
		std::snprintf(buf, len, "wildcard destination");
		break;
	case Reason::listen_disabled:
		std::snprintf(buf, len, "listeners are replaced only with --listen");
		break;
	case Reason::not_fresh:
		std::snprintf(buf, len, "the socket is already in use");
		break;
	}
}

const char *stage_name(Stage stage)
{
	switch (stage) {
	case Stage::family:
		return "af_smbdirect";
	case Stage::socket:
		return "socket";
	case Stage::options:
		return "setsockopt";
	case Stage::bind:
		return "bind";
	case Stage::connect:
		return "connect";
	case Stage::timeout:
		return "timeout";
	}
	return "?";
}

ErrorClass classify_error(int err)
{
	switch (err) {
	case ENODEV:
	case EADDRNOTAVAIL:
	case ENETUNREACH:
	case EHOSTUNREACH:
	case ENETDOWN:
	case EHOSTDOWN:
		return ErrorClass::no_rdma_path;
	case ECONNREFUSED:
		return ErrorClass::refused;
	case ETIMEDOUT:
	case EINPROGRESS: /* our bound on the attempt ran out */
		return ErrorClass::timed_out;
	case ECONNRESET:
	case ECONNABORTED:
	case EPROTO:
	case EPIPE:
		return ErrorClass::broken;
	case ENOENT: /* no family file: the module is not loaded */
	case EAFNOSUPPORT:
	case EPROTONOSUPPORT:
	case ESOCKTNOSUPPORT:
	case EOPNOTSUPP:
		return ErrorClass::unavailable;
	case ENOMEM:
	case ENOBUFS:
	case EMFILE:
	case ENFILE:
	case EADDRINUSE:
		return ErrorClass::resources;
	case EINTR:
		return ErrorClass::interrupted;
	default:
		return ErrorClass::other;
	}
}

const char *error_class_name(ErrorClass c)
{
	switch (c) {
	case ErrorClass::no_rdma_path:
		return "no RDMA path";
	case ErrorClass::refused:
		return "refused";
	case ErrorClass::timed_out:
		return "timed out";
	case ErrorClass::broken:
		return "connection failed";
	case ErrorClass::unavailable:
		return "SMB-Direct unavailable";
	case ErrorClass::resources:
		return "out of resources";
	case ErrorClass::interrupted:
		return "interrupted";
	case ErrorClass::other:
		return "error";
	}
	return "?";
}

FailurePlan after_connect_failure(const Config &cfg, Stage stage, int err,
				  bool program_nonblocking)
{
	/*
	 * Only the connect itself can be interrupted with the attempt still
	 * going on; it continues on the fd as a TCP connect would.
	 */
	if (err == EINTR && stage == Stage::connect)
		return {Recovery::adopt, program_nonblocking ? EINPROGRESS : EINTR};
	if (cfg.fallback)
		return {Recovery::fallback, 0};
	/* Our bound ran out: that is a timeout to the program. */
	return {Recovery::fail, err == EINPROGRESS || stage == Stage::timeout ? ETIMEDOUT : err};
}

FailurePlan after_bind_failure(const Config &cfg, int err)
{
	if (cfg.fallback)
		return {Recovery::fallback, 0};
	return {Recovery::fail, err};
}

bool ignored_setsockopt_level(int level)
{
	return level == IPPROTO_TCP || level == IPPROTO_IP || level == IPPROTO_IPV6;
}

std::optional<int> emulated_getsockopt(int level, int name)
{
	if (level == IPPROTO_TCP && name == TCP_NODELAY)
		return 1;
	if (level == IPPROTO_TCP && name == TCP_CORK)
		return 0;
	if (level == IPPROTO_IPV6 && name == IPV6_V6ONLY)
		return 0;
	return std::nullopt;
}

void format_option(int level, int name, char *buf, std::size_t len)
{
	struct Named {
		int level;
		int name;
		const char *text;
	};
	static constexpr Named names[] = {
		{IPPROTO_TCP, TCP_NODELAY, "IPPROTO_TCP TCP_NODELAY"},
		{IPPROTO_TCP, TCP_CORK, "IPPROTO_TCP TCP_CORK"},
		{IPPROTO_TCP, TCP_KEEPIDLE, "IPPROTO_TCP TCP_KEEPIDLE"},
		{IPPROTO_TCP, TCP_KEEPINTVL, "IPPROTO_TCP TCP_KEEPINTVL"},
		{IPPROTO_TCP, TCP_KEEPCNT, "IPPROTO_TCP TCP_KEEPCNT"},
		{IPPROTO_TCP, TCP_QUICKACK, "IPPROTO_TCP TCP_QUICKACK"},
		{IPPROTO_TCP, TCP_USER_TIMEOUT, "IPPROTO_TCP TCP_USER_TIMEOUT"},
		{IPPROTO_TCP, TCP_MAXSEG, "IPPROTO_TCP TCP_MAXSEG"},
		{IPPROTO_IP, IP_TOS, "IPPROTO_IP IP_TOS"},
		{IPPROTO_IPV6, IPV6_TCLASS, "IPPROTO_IPV6 IPV6_TCLASS"},
		{IPPROTO_IPV6, IPV6_V6ONLY, "IPPROTO_IPV6 IPV6_V6ONLY"},
	};
	if (!len)
		return;
	for (const Named &n : names) {
		if (n.level == level && n.name == name) {
			std::snprintf(buf, len, "%s", n.text);
			return;
		}
	}
	std::snprintf(buf, len, "level %d option %d", level, name);
}

} // namespace sd::preload
