// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the preload does with a socket call, as pure functions: no system
 * calls, no globals, so that the host tests (ASan/UBSan) can try every
 * combination. interpose.cpp asks these and carries out the answer.
 *
 *   decide_connect / decide_bind   keep the TCP socket or replace it by an
 *                                  SMB-Direct one (and why)
 *   after_connect_failure          the SMB-Direct attempt failed: fall back
 *                                  to TCP, adopt the SMB-Direct socket
 *                                  anyway (EINTR), or fail
 *   after_bind_failure             the same for a listener
 *   emulated_getsockopt /          TCP- and IP-level options on a replaced
 *   option_policy                  socket: answered or accepted without effect
 *   after_interrupt                a signal during the bounded attempt: wait
 *                                  on (SA_RESTART) or EINTR, as TCP
 *   connect_mode, attempt_state,   the non-blocking connect whose attempt
 *   connect_again                  runs in the background
 */
#ifndef SMBDIRECT_PRELOAD_DECISION_HPP
#define SMBDIRECT_PRELOAD_DECISION_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sys/socket.h>

#include "config.hpp"

namespace sd::preload {

/* An AF_INET or AF_INET6 address and port, host order port. */
struct Endpoint {
	int family = 0;			/* AF_INET or AF_INET6 */
	std::array<uint8_t, 16> addr{};	/* 4 or 16 bytes used */
	uint16_t port = 0;
	uint32_t flowinfo = 0;
	uint32_t scope_id = 0;

	[[nodiscard]] bool is_wildcard() const;
	[[nodiscard]] bool is_v4_mapped() const;
};

/* nullopt unless addr is a complete sockaddr_in / sockaddr_in6. */
[[nodiscard]] std::optional<Endpoint> parse_endpoint(const struct sockaddr *addr, socklen_t len);
/* ::ffff:a.b.c.d becomes a.b.c.d (AF_INET); anything else is returned as is. */
[[nodiscard]] Endpoint unmap_v4(const Endpoint &e);
/* The sockaddr for e; returns its length. */
socklen_t to_sockaddr(const Endpoint &e, struct sockaddr_storage *out);
/* "10.77.0.1:445", "[fd77::1]:445" into buf (NUL-terminated). */
void format_endpoint(const Endpoint &e, char *buf, std::size_t len);

/* What SO_DOMAIN, SO_TYPE and SO_PROTOCOL (and TCP_INFO) say about the socket. */
struct SocketIdentity {
	int domain = -1;
	int type = -1;
	int protocol = -1;
	/*
	 * tcpi_state of TCP_INFO, -1 unknown. Only a closed (never
	 * connected, not bound-and-listening) TCP socket is replaced: a
	 * program that calls connect again on a socket whose non-blocking
	 * connect is under way must get EALREADY/EISCONN from TCP.
	 */
	int tcp_state = -1;
	bool bound = false; /* getsockname shows an address or port */
};

enum class Action { keep, replace };

enum class Reason {
	replace,		/* a TCP stream socket and an SMB port */
	config_error,		/* the SMBDIRECT_* variables are wrong: touch nothing */
	not_inet_address,	/* AF_UNIX, AF_UNSPEC (disconnect), short sockaddr */
	not_inet_socket,	/* the socket is not AF_INET/AF_INET6 */
	not_stream,		/* UDP, raw, SEQPACKET */
	not_tcp,		/* MPTCP, SCTP stream sockets */
	port_not_listed,	/* the port is not an SMB port */
	wildcard_peer,		/* connect to 0.0.0.0 / :: (TCP means loopback) */
	listen_disabled,	/* bind to an SMB port without --listen */
	not_fresh,		/* already connecting, connected, listening or bound */
};

struct Decision {
	Action action = Action::keep;
	Reason reason = Reason::not_inet_address;
	/* The address to use for SMB-Direct (IPv4-mapped ones unmapped). */
	Endpoint target;
	/* Worth a debug line: the call concerned a TCP socket. */
	bool report = false;
};

[[nodiscard]] Decision decide_connect(const Config &cfg, const SocketIdentity &sock,
				      const struct sockaddr *addr, socklen_t len);
[[nodiscard]] Decision decide_bind(const Config &cfg, const SocketIdentity &sock,
				   const struct sockaddr *addr, socklen_t len);

/* "port 80 not in 445,5445", ... for a keep decision (into buf). */
void format_reason(const Config &cfg, const Decision &d, char *buf, std::size_t len);

/* Where an SMB-Direct attempt stopped, for the debug line. */
enum class Stage { family, socket, options, bind, connect, timeout };
[[nodiscard]] const char *stage_name(Stage stage);

/* How an SMB-Direct connect error reads to a person. */
enum class ErrorClass {
	no_rdma_path,	/* no RDMA device for the address or route */
	refused,	/* nobody listens with SMB-Direct there */
	timed_out,	/* address/route resolution, CM or negotiation timeout */
	broken,		/* reset, aborted, protocol error during setup */
	unavailable,	/* af_smbdirect not loaded, family unsupported */
	resources,	/* out of memory, fds, ports */
	interrupted,	/* a signal */
	other,
};
[[nodiscard]] ErrorClass classify_error(int err);
[[nodiscard]] const char *error_class_name(ErrorClass c);

enum class Recovery {
	fallback,	/* leave the TCP socket on the fd and connect it */
	adopt,		/* put the SMB-Direct socket on the fd anyway, return err */
	fail,		/* leave the TCP socket unconnected, return err */
};

struct FailurePlan {
	Recovery recovery = Recovery::fail;
	int err = 0; /* errno to return (adopt, fail) */
};

/*
 * The fallback-allowed attempt of a connect failed with err at stage.
 * A signal (EINTR) does not end an SMB-Direct connect in progress: the
 * socket goes on the fd, and the program sees what TCP would show it
 * (EINTR, or EINPROGRESS for a non-blocking socket). Everything else goes
 * to TCP when fallback is allowed, else is returned.
 */
[[nodiscard]] FailurePlan after_connect_failure(const Config &cfg, Stage stage, int err,
					       bool program_nonblocking);
/* A listener's SMB-Direct bind failed: keep TCP (fallback) or fail. */
[[nodiscard]] FailurePlan after_bind_failure(const Config &cfg, int err);

/*
 * A TCP-, IP- or IPv6-level option the module answered ENOPROTOOPT for, on
 * a replaced socket (the module answers SOL_SOCKET, SOL_SMBDIRECT, the
 * TCP options it emulates itself, TCP_NODELAY, TCP_CORK, TCP_QUICKACK,
 * TCP_KEEP*, and IPV6_V6ONLY of its inet entry point: a real answer is
 * never overridden). Programs written for TCP set some of these and stop
 * on an error, so a known list is accepted without effect, each for a
 * reason (decision.cpp); everything else, options whose effect a program
 * relies on (TCP_ULP for kTLS, TCP_MD5SIG, TCP_REPAIR, TCP_INQ, ...), keeps
 * the kernel's ENOPROTOOPT.
 */
struct OptionPolicy {
	bool accepted = false; /* succeed without effect */
	const char *name = nullptr; /* "IPPROTO_TCP TCP_NODELAY"; nullptr: unknown */
};
[[nodiscard]] OptionPolicy option_policy(int level, int name);
/*
 * The few TCP/IP-level options a program may read back, answered as
 * SMB-Direct behaves when the module has no answer: TCP_NODELAY 1 (every
 * message is sent at once), TCP_CORK 0, IPV6_V6ONLY 0 (an AF_SMBDIRECT
 * listener on :: takes IPv4 too; the inet entry point answers itself, with
 * the value set). nullopt: let ENOPROTOOPT through.
 */
[[nodiscard]] std::optional<int> emulated_getsockopt(int level, int name);
/* "IPPROTO_TCP TCP_NODELAY", "level 6 option 99": for debug lines. */
void format_option(int level, int name, char *buf, std::size_t len);

/*
 * A signal interrupted the bounded blocking SMB-Direct attempt. Linux
 * returns EINTR from a connect bounded by SO_SNDTIMEO even for an
 * SA_RESTART handler (sock_intr_errno), where TCP's unbounded blocking
 * connect restarts: so the preload looks at the handlers (sigaction) and
 * keeps waiting, for the time left, when the signal was one that TCP's
 * connect would have restarted after. The signal number is not known, so
 * "every caught signal has SA_RESTART" stands for "this one had": a
 * signal without a handler (SIGSTOP/SIGCONT, a ptrace stop) restarts too.
 */
struct HandlerInfo {
	bool catches = false; /* a function is installed (not SIG_DFL/SIG_IGN) */
	bool restart = false; /* SA_RESTART */
};
[[nodiscard]] bool every_handler_restarts(const HandlerInfo *handlers, std::size_t n);

enum class Interrupted {
	keep_waiting, /* connect again on the side socket, bounded by wait_ms */
	report, /* as TCP: EINTR, the connect going on on the fd */
	out_of_time, /* the bound ran out meanwhile: a timeout (fallback) */
};
struct InterruptPlan {
	Interrupted what = Interrupted::report;
	unsigned long wait_ms = 0;
};
/*
 * program_sndtimeo: the program set SO_SNDTIMEO on its blocking socket, so
 * TCP would have returned EINTR itself.
 */
[[nodiscard]] InterruptPlan after_interrupt(bool every_restarts, bool program_sndtimeo,
					    unsigned long remaining_ms);

/*
 * How a connect to an SMB port goes, by the program socket's blocking mode:
 *   native       no fallback: the SMB-Direct socket goes on the fd and the
 *                program's connect runs on it, blocking or not
 *   bounded      a blocking socket: a blocking attempt on a side socket,
 *                bounded by --connect-timeout, then TCP
 *   background   a non-blocking socket: the attempt is started without
 *                blocking, on the fd at once (EINPROGRESS); the program's
 *                TCP socket is kept aside to fall back on when the program
 *                asks for the result (SO_ERROR, connect again)
 */
enum class ConnectMode {
	native,
	bounded,
	background
};
[[nodiscard]] ConnectMode connect_mode(const Config &cfg, bool program_nonblocking);

/* A background attempt, when the program asks for its result. */
enum class AttemptState {
	in_progress,
	connected,
	failed
};
/*
 * so_error: SO_ERROR just read (and cleared); connected: getpeername
 * works; hangup: poll shows POLLHUP or POLLERR (the error was read
 * already, by an earlier SO_ERROR).
 */
[[nodiscard]] AttemptState attempt_state(int so_error, bool connected, bool hangup);

/*
 * The program called connect() again on the fd of a background attempt;
 * err is what the SMB-Direct socket answered (0 for success). What TCP's
 * second connect says in each state: EALREADY while under way (kept),
 * EISCONN or 0 once connected (done), the attempt's error once failed
 * (which falls back instead).
 */
enum class Again {
	pass_keep,
	pass_done,
	fallback
};
[[nodiscard]] Again connect_again(int err);

} // namespace sd::preload

#endif
