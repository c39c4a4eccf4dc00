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

namespace {

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

struct KnownOption {
	int level;
	int name;
	const char *text;
	bool accepted;
};

/*
 * Accepted without effect, and why that is honest:
 *   TCP_NODELAY, TCP_CORK      every message is sent at once, nothing is
 *                              coalesced (the module answers these itself)
 *   TCP_QUICKACK               RDMA acknowledges in the NIC, nothing delayed
 *   TCP_KEEPIDLE/INTVL/CNT     SMB-Direct has its own keepalive (SO_KEEPALIVE,
 *                              SMBDIRECT_OPT_KEEPALIVE_INTERVAL)
 *   TCP_USER_TIMEOUT           the RDMA transport's retries bound unacknowledged
 *                              data; a dead peer still ends the connection
 *   TCP_SYNCNT                 connection setup is rdma_cm's, bounded by
 *                              --connect-timeout
 *   TCP_LINGER2                there is no FIN_WAIT2
 *   TCP_MAXSEG, TCP_WINDOW_CLAMP
 *                              no segments, no window: the PDU sizes and the
 *                              credits are negotiated by SMB-Direct
 *   TCP_CONGESTION             no congestion control to choose (the fabric's)
 *   TCP_NOTSENT_LOWAT          a hint about buffering; writability is credits
 *   TCP_DEFER_ACCEPT           accept() already returns only negotiated
 *                              connections
 *   TCP_FASTOPEN               a listener's queue for SYN data that never comes
 *   IP_TOS, IPV6_TCLASS        the traffic class is the RDMA device's (Samba's
 *                              "socket options" set them)
 *   IP_TTL, IPV6_UNICAST_HOPS  the hop limit under RoCEv2/iWARP is the device's
 *   IP_MTU_DISCOVER, IPV6_MTU_DISCOVER
 *                              the path MTU is the RDMA device's
 *   IP_RECVERR, IPV6_RECVERR   no ICMP error is ever queued: MSG_ERRQUEUE
 *                              stays empty, as on a path without errors
 *   IP_BIND_ADDRESS_NO_PORT    the port is chosen at connect anyway
 * Named but refused (ENOPROTOOPT): accepting them would promise what
 * SMB-Direct cannot do, and the programs that set them have a way without:
 *   TCP_ULP (kTLS: the program keeps TLS in user space), TCP_MD5SIG
 *   (authentication), TCP_REPAIR (checkpointing), TCP_INQ (a control
 *   message per read), TCP_FASTOPEN_CONNECT, IPV6_V6ONLY on an AF_SMBDIRECT
 *   socket (no such option: it is dual stack, and reads 0)
 */
constexpr KnownOption known_options[] = {
	{IPPROTO_TCP, TCP_NODELAY, "IPPROTO_TCP TCP_NODELAY", true},
	{IPPROTO_TCP, TCP_CORK, "IPPROTO_TCP TCP_CORK", true},
	{IPPROTO_TCP, TCP_QUICKACK, "IPPROTO_TCP TCP_QUICKACK", true},
	{IPPROTO_TCP, TCP_KEEPIDLE, "IPPROTO_TCP TCP_KEEPIDLE", true},
	{IPPROTO_TCP, TCP_KEEPINTVL, "IPPROTO_TCP TCP_KEEPINTVL", true},
	{IPPROTO_TCP, TCP_KEEPCNT, "IPPROTO_TCP TCP_KEEPCNT", true},
	{IPPROTO_TCP, TCP_USER_TIMEOUT, "IPPROTO_TCP TCP_USER_TIMEOUT", true},
	{IPPROTO_TCP, TCP_SYNCNT, "IPPROTO_TCP TCP_SYNCNT", true},
	{IPPROTO_TCP, TCP_LINGER2, "IPPROTO_TCP TCP_LINGER2", true},
	{IPPROTO_TCP, TCP_MAXSEG, "IPPROTO_TCP TCP_MAXSEG", true},
	{IPPROTO_TCP, TCP_WINDOW_CLAMP, "IPPROTO_TCP TCP_WINDOW_CLAMP", true},
	{IPPROTO_TCP, TCP_CONGESTION, "IPPROTO_TCP TCP_CONGESTION", true},
	{IPPROTO_TCP, TCP_NOTSENT_LOWAT, "IPPROTO_TCP TCP_NOTSENT_LOWAT", true},
	{IPPROTO_TCP, TCP_DEFER_ACCEPT, "IPPROTO_TCP TCP_DEFER_ACCEPT", true},
	{IPPROTO_TCP, TCP_FASTOPEN, "IPPROTO_TCP TCP_FASTOPEN", true},
	{IPPROTO_IP, IP_TOS, "IPPROTO_IP IP_TOS", true},
	{IPPROTO_IP, IP_TTL, "IPPROTO_IP IP_TTL", true},
	{IPPROTO_IP, IP_MTU_DISCOVER, "IPPROTO_IP IP_MTU_DISCOVER", true},
	{IPPROTO_IP, IP_RECVERR, "IPPROTO_IP IP_RECVERR", true},
	{IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, "IPPROTO_IP IP_BIND_ADDRESS_NO_PORT", true},
	{IPPROTO_IPV6, IPV6_TCLASS, "IPPROTO_IPV6 IPV6_TCLASS", true},
	{IPPROTO_IPV6, IPV6_UNICAST_HOPS, "IPPROTO_IPV6 IPV6_UNICAST_HOPS", true},
	{IPPROTO_IPV6, IPV6_MTU_DISCOVER, "IPPROTO_IPV6 IPV6_MTU_DISCOVER", true},
	{IPPROTO_IPV6, IPV6_RECVERR, "IPPROTO_IPV6 IPV6_RECVERR", true},
	{IPPROTO_TCP, TCP_ULP, "IPPROTO_TCP TCP_ULP", false},
	{IPPROTO_TCP, TCP_MD5SIG, "IPPROTO_TCP TCP_MD5SIG", false},
	{IPPROTO_TCP, TCP_REPAIR, "IPPROTO_TCP TCP_REPAIR", false},
	{IPPROTO_TCP, TCP_INQ, "IPPROTO_TCP TCP_INQ", false},
	{IPPROTO_TCP, TCP_FASTOPEN_CONNECT, "IPPROTO_TCP TCP_FASTOPEN_CONNECT", false},
	{IPPROTO_TCP, TCP_INFO, "IPPROTO_TCP TCP_INFO", false},
	{IPPROTO_IPV6, IPV6_V6ONLY, "IPPROTO_IPV6 IPV6_V6ONLY", false},
};

} // namespace

OptionPolicy option_policy(int level, int name)
{
	for (const KnownOption &k : known_options)
		if (k.level == level && k.name == name)
			return {k.accepted, k.text};
	return {};
}

void format_option(int level, int name, char *buf, std::size_t len)
{
	if (!len)
		return;
	OptionPolicy p = option_policy(level, name);
	if (p.name)
		std::snprintf(buf, len, "%s", p.name);
	else
		std::snprintf(buf, len, "level %d option %d", level, name);
}

bool every_handler_restarts(const HandlerInfo *handlers, std::size_t n)
{
	for (std::size_t i = 0; i < n; i++)
		if (handlers[i].catches && !handlers[i].restart)
			return false;
	return true;
}

InterruptPlan after_interrupt(bool every_restarts, bool program_sndtimeo,
			      unsigned long remaining_ms)
{
	/* TCP's own connect, bounded by the program's SO_SNDTIMEO, says EINTR. */
	if (program_sndtimeo || !every_restarts)
		return {Interrupted::report, 0};
	if (!remaining_ms)
		return {Interrupted::out_of_time, 0};
	return {Interrupted::keep_waiting, remaining_ms};
}

ConnectMode connect_mode(const Config &cfg, bool program_nonblocking)
{
	if (!cfg.fallback)
		return ConnectMode::native;
	return program_nonblocking ? ConnectMode::background : ConnectMode::bounded;
}

AttemptState attempt_state(int so_error, bool connected, bool hangup)
{
	if (so_error)
		return AttemptState::failed;
	if (connected)
		return AttemptState::connected;
	return hangup ? AttemptState::failed : AttemptState::in_progress;
}

Again connect_again(int err)
{
	switch (err) {
	case 0:
	case EISCONN:
		return Again::pass_done;
	case EALREADY:
	case EINPROGRESS:
	case EINTR:
	case EAGAIN:
		return Again::pass_keep;
	/* The caller's own mistakes: TCP would say the same. */
	case EBADF:
	case EFAULT:
	case ENOTSOCK:
	case EINVAL:
	case EAFNOSUPPORT:
		return Again::pass_keep;
	default:
		return Again::fallback;
	}
}

} // namespace sd::preload
