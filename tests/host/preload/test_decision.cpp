// SPDX-License-Identifier: GPL-2.0
/* The preload's decisions: which calls it takes over, and what a failure leads to. */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string>
#include <sys/un.h>

#include <linux/smbdirect.h>

#include "decision.hpp"

using namespace sd::preload;

namespace {

constexpr int smbdirect_family_example = 23;
constexpr int ipproto_mptcp = 262;

struct Addr {
	struct sockaddr_storage ss = {};
	socklen_t len = 0;
	const struct sockaddr *sa() const
	{
		return reinterpret_cast<const struct sockaddr *>(&ss);
	}
};

Addr v4(const char *host, uint16_t port)
{
	Addr a;
	struct sockaddr_in sin = {};
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	EXPECT_EQ(inet_pton(AF_INET, host, &sin.sin_addr), 1) << host;
	std::memcpy(&a.ss, &sin, sizeof(sin));
	a.len = sizeof(sin);
	return a;
}

Addr v6(const char *host, uint16_t port, uint32_t scope = 0)
{
	Addr a;
	struct sockaddr_in6 sin6 = {};
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(port);
	sin6.sin6_scope_id = scope;
	EXPECT_EQ(inet_pton(AF_INET6, host, &sin6.sin6_addr), 1) << host;
	std::memcpy(&a.ss, &sin6, sizeof(sin6));
	a.len = sizeof(sin6);
	return a;
}

const SocketIdentity tcp4{AF_INET, SOCK_STREAM, IPPROTO_TCP};
const SocketIdentity tcp6{AF_INET6, SOCK_STREAM, IPPROTO_TCP};

Config defaults()
{
	return Config{.ports = parse_ports(default_ports).ports};
}

Config listening()
{
	Config c = defaults();
	c.listen = true;
	return c;
}

std::string where(const Endpoint &e)
{
	char buf[80];
	format_endpoint(e, buf, sizeof(buf));
	return buf;
}

std::string reason(const Config &c, const Decision &d)
{
	char buf[320];
	format_reason(c, d, buf, sizeof(buf));
	return buf;
}

} // namespace

TEST(PreloadConnect, TcpToSmbPortIsReplaced)
{
	for (uint16_t port : {445, 5445}) {
		Addr a = v4("10.77.0.1", port);
		Decision d = decide_connect(defaults(), tcp4, a.sa(), a.len);
		EXPECT_EQ(d.action, Action::replace);
		EXPECT_EQ(d.reason, Reason::replace);
		EXPECT_TRUE(d.report);
		EXPECT_EQ(where(d.target), "10.77.0.1:" + std::to_string(port));
	}
}

TEST(PreloadConnect, ProtocolZeroIsTcpToo)
{
	Addr a = v4("10.77.0.1", 445);
	Decision d = decide_connect(defaults(), SocketIdentity{AF_INET, SOCK_STREAM, 0}, a.sa(),
				    a.len);
	EXPECT_EQ(d.action, Action::replace);
}

TEST(PreloadConnect, OtherPortStaysTcpAndSaysWhy)
{
	Addr a = v4("10.77.0.1", 80);
	Config c = defaults();
	Decision d = decide_connect(c, tcp4, a.sa(), a.len);
	EXPECT_EQ(d.action, Action::keep);
	EXPECT_EQ(d.reason, Reason::port_not_listed);
	EXPECT_TRUE(d.report);
	EXPECT_EQ(reason(c, d), "port 80 not in 445,5445");
}

TEST(PreloadConnect, ConfiguredPortsOnly)
{
	Config c = defaults();
	c.ports = parse_ports("7000-7002").ports;
	Addr in = v4("10.77.0.1", 7001), out = v4("10.77.0.1", 445);
	EXPECT_EQ(decide_connect(c, tcp4, in.sa(), in.len).action, Action::replace);
	Decision d = decide_connect(c, tcp4, out.sa(), out.len);
	EXPECT_EQ(d.action, Action::keep);
	EXPECT_EQ(reason(c, d), "port 445 not in 7000-7002");
}

TEST(PreloadConnect, NonTcpSocketsAreLeftAloneQuietly)
{
	Addr a = v4("10.77.0.1", 445);
	struct Case {
		SocketIdentity id;
		Reason why;
	};
	for (Case k : {Case{{AF_INET, SOCK_DGRAM, IPPROTO_UDP}, Reason::not_stream},
		       Case{{AF_INET, SOCK_SEQPACKET, 0}, Reason::not_stream},
		       Case{{AF_INET, SOCK_STREAM, ipproto_mptcp}, Reason::not_tcp},
		       Case{{AF_UNIX, SOCK_STREAM, 0}, Reason::not_inet_socket},
		       Case{{smbdirect_family_example, SOCK_STREAM, 0}, Reason::not_inet_socket},
		       Case{{-1, -1, -1}, Reason::not_inet_socket}}) {
		Decision d = decide_connect(defaults(), k.id, a.sa(), a.len);
		EXPECT_EQ(d.action, Action::keep);
		EXPECT_EQ(d.reason, k.why);
		EXPECT_FALSE(d.report);
	}
}

TEST(PreloadConnect, NonInetAddressesAreLeftAlone)
{
	struct sockaddr_un un = {};
	un.sun_family = AF_UNIX;
	Decision d = decide_connect(defaults(), tcp4, reinterpret_cast<struct sockaddr *>(&un),
				    sizeof(un));
	EXPECT_EQ(d.action, Action::keep);
	EXPECT_EQ(d.reason, Reason::not_inet_address);

	/* connect(AF_UNSPEC) dissolves an association: never ours. */
	struct sockaddr unspec = {};
	unspec.sa_family = AF_UNSPEC;
	d = decide_connect(defaults(), tcp4, &unspec, sizeof(unspec));
	EXPECT_EQ(d.action, Action::keep);

	EXPECT_EQ(decide_connect(defaults(), tcp4, nullptr, 0).action, Action::keep);
	Addr a = v4("10.77.0.1", 445);
	d = decide_connect(defaults(), tcp4, a.sa(), a.len - 1);
	EXPECT_EQ(d.action, Action::keep);
	EXPECT_EQ(d.reason, Reason::not_inet_address);
	d = decide_connect(defaults(), tcp4, a.sa(), 1);
	EXPECT_EQ(d.action, Action::keep);
}

TEST(PreloadConnect, V4MappedBecomesIpv4)
{
	Addr a = v6("::ffff:10.77.0.1", 445);
	Decision d = decide_connect(defaults(), tcp6, a.sa(), a.len);
	EXPECT_EQ(d.action, Action::replace);
	EXPECT_EQ(d.target.family, AF_INET);
	EXPECT_EQ(where(d.target), "10.77.0.1:445");
	struct sockaddr_storage ss;
	EXPECT_EQ(to_sockaddr(d.target, &ss), sizeof(struct sockaddr_in));
	EXPECT_EQ(ss.ss_family, AF_INET);
}

TEST(PreloadConnect, Ipv6KeepsScope)
{
	Addr a = v6("fe80::1", 5445, 3);
	Decision d = decide_connect(defaults(), tcp6, a.sa(), a.len);
	EXPECT_EQ(d.action, Action::replace);
	EXPECT_EQ(where(d.target), "[fe80::1%3]:5445");
	struct sockaddr_storage ss;
	ASSERT_EQ(to_sockaddr(d.target, &ss), sizeof(struct sockaddr_in6));
	struct sockaddr_in6 back;
	std::memcpy(&back, &ss, sizeof(back));
	EXPECT_EQ(back.sin6_scope_id, 3u);
	EXPECT_EQ(ntohs(back.sin6_port), 5445);
	EXPECT_EQ(std::memcmp(&back.sin6_addr, &reinterpret_cast<const struct sockaddr_in6 *>(
							  a.sa())->sin6_addr,
			      16),
		  0);
}

TEST(PreloadConnect, ShortIpv6WithoutScopeIsAccepted)
{
	Addr a = v6("fd77::1", 445);
	socklen_t rfc2133 = offsetof(struct sockaddr_in6, sin6_scope_id);
	Decision d = decide_connect(defaults(), tcp6, a.sa(), rfc2133);
	EXPECT_EQ(d.action, Action::replace);
	EXPECT_EQ(where(d.target), "[fd77::1]:445");
	EXPECT_EQ(decide_connect(defaults(), tcp6, a.sa(), rfc2133 - 1).action, Action::keep);
}

TEST(PreloadConnect, WildcardPeerStaysTcp)
{
	for (Addr a : {v4("0.0.0.0", 445), v6("::", 445), v6("::ffff:0.0.0.0", 445)}) {
		Decision d = decide_connect(defaults(), a.ss.ss_family == AF_INET ? tcp4 : tcp6,
					    a.sa(), a.len);
		EXPECT_EQ(d.action, Action::keep);
		EXPECT_EQ(d.reason, Reason::wildcard_peer);
		EXPECT_TRUE(d.report);
	}
}

TEST(PreloadConnect, ConfigErrorKeepsEverythingTcp)
{
	Config c = defaults();
	c.error = "not a boolean";
	c.error_variable = "SMBDIRECT_LISTEN";
	Addr a = v4("10.77.0.1", 445);
	Decision d = decide_connect(c, tcp4, a.sa(), a.len);
	EXPECT_EQ(d.action, Action::keep);
	EXPECT_EQ(d.reason, Reason::config_error);
	EXPECT_EQ(reason(c, d), "SMBDIRECT_LISTEN: not a boolean");
}

TEST(PreloadBind, OnlyWithListen)
{
	Addr a = v4("0.0.0.0", 445);
	Config c = defaults();
	Decision d = decide_bind(c, tcp4, a.sa(), a.len);
	EXPECT_EQ(d.action, Action::keep);
	EXPECT_EQ(d.reason, Reason::listen_disabled);
	EXPECT_TRUE(d.report);
	d = decide_bind(listening(), tcp4, a.sa(), a.len);
	EXPECT_EQ(d.action, Action::replace);
	EXPECT_EQ(where(d.target), "0.0.0.0:445");
}

TEST(PreloadBind, WildcardIpv6ListenerIsReplaced)
{
	Addr a = v6("::", 5445);
	Decision d = decide_bind(listening(), tcp6, a.sa(), a.len);
	EXPECT_EQ(d.action, Action::replace);
	EXPECT_EQ(d.target.family, AF_INET6);
	EXPECT_EQ(where(d.target), "[::]:5445");
}

TEST(PreloadBind, PortZeroAndOtherPortsStayTcp)
{
	Addr any = v4("10.77.0.1", 0), other = v4("10.77.0.1", 8080);
	Decision d = decide_bind(listening(), tcp4, any.sa(), any.len);
	EXPECT_EQ(d.action, Action::keep);
	EXPECT_EQ(d.reason, Reason::port_not_listed);
	d = decide_bind(listening(), tcp4, other.sa(), other.len);
	EXPECT_EQ(d.action, Action::keep);
	EXPECT_EQ(d.reason, Reason::port_not_listed);
	Addr udp = v4("0.0.0.0", 445);
	d = decide_bind(listening(), SocketIdentity{AF_INET, SOCK_DGRAM, IPPROTO_UDP}, udp.sa(),
			udp.len);
	EXPECT_EQ(d.action, Action::keep);
	EXPECT_FALSE(d.report);
}

TEST(PreloadFailure, FallbackForEveryErrorButASignal)
{
	Config c = defaults();
	for (int err : {ENODEV, EADDRNOTAVAIL, ENETUNREACH, EHOSTUNREACH, ECONNREFUSED, ETIMEDOUT,
			EINPROGRESS, ECONNRESET, EPROTO, EAFNOSUPPORT, ENOMEM, EADDRINUSE, EACCES}) {
		for (Stage s : {Stage::socket, Stage::bind, Stage::connect, Stage::timeout}) {
			FailurePlan p = after_connect_failure(c, s, err, false);
			EXPECT_EQ(p.recovery, Recovery::fallback) << err << " " << stage_name(s);
		}
	}
}

TEST(PreloadFailure, SignalLeavesTheSmbDirectConnectGoing)
{
	for (bool fallback : {true, false}) {
		Config c = defaults();
		c.fallback = fallback;
		FailurePlan p = after_connect_failure(c, Stage::connect, EINTR, false);
		EXPECT_EQ(p.recovery, Recovery::adopt);
		EXPECT_EQ(p.err, EINTR);
		p = after_connect_failure(c, Stage::connect, EINTR, true);
		EXPECT_EQ(p.recovery, Recovery::adopt);
		EXPECT_EQ(p.err, EINPROGRESS);
	}
	/* Before the connect started there is nothing to adopt. */
	Config c = defaults();
	EXPECT_EQ(after_connect_failure(c, Stage::bind, EINTR, false).recovery, Recovery::fallback);
}

TEST(PreloadFailure, NoFallbackReturnsTheError)
{
	Config c = defaults();
	c.fallback = false;
	FailurePlan p = after_connect_failure(c, Stage::connect, ECONNREFUSED, false);
	EXPECT_EQ(p.recovery, Recovery::fail);
	EXPECT_EQ(p.err, ECONNREFUSED);
	p = after_connect_failure(c, Stage::socket, EAFNOSUPPORT, true);
	EXPECT_EQ(p.recovery, Recovery::fail);
	EXPECT_EQ(p.err, EAFNOSUPPORT);
	/* The attempt's own bound reads as a timeout, not as "in progress". */
	p = after_connect_failure(c, Stage::timeout, EINPROGRESS, false);
	EXPECT_EQ(p.recovery, Recovery::fail);
	EXPECT_EQ(p.err, ETIMEDOUT);
}

TEST(PreloadFailure, Listener)
{
	Config c = listening();
	EXPECT_EQ(after_bind_failure(c, ENODEV).recovery, Recovery::fallback);
	c.fallback = false;
	FailurePlan p = after_bind_failure(c, EADDRINUSE);
	EXPECT_EQ(p.recovery, Recovery::fail);
	EXPECT_EQ(p.err, EADDRINUSE);
}

TEST(PreloadFailure, ErrorClassesForTheDebugLine)
{
	EXPECT_EQ(classify_error(ENODEV), ErrorClass::no_rdma_path);
	EXPECT_EQ(classify_error(EHOSTUNREACH), ErrorClass::no_rdma_path);
	EXPECT_EQ(classify_error(ENETUNREACH), ErrorClass::no_rdma_path);
	EXPECT_EQ(classify_error(EADDRNOTAVAIL), ErrorClass::no_rdma_path);
	EXPECT_EQ(classify_error(ECONNREFUSED), ErrorClass::refused);
	EXPECT_EQ(classify_error(ETIMEDOUT), ErrorClass::timed_out);
	EXPECT_EQ(classify_error(EPROTO), ErrorClass::broken);
	EXPECT_EQ(classify_error(EAFNOSUPPORT), ErrorClass::unavailable);
	EXPECT_EQ(classify_error(ENOENT), ErrorClass::unavailable);
	EXPECT_EQ(classify_error(EMFILE), ErrorClass::resources);
	EXPECT_EQ(classify_error(EINTR), ErrorClass::interrupted);
	EXPECT_EQ(classify_error(EFAULT), ErrorClass::other);
	EXPECT_STREQ(error_class_name(ErrorClass::no_rdma_path), "no RDMA path");
	EXPECT_STREQ(stage_name(Stage::connect), "connect");
}

TEST(PreloadOptions, KnownTcpAndIpOptionsAreAcceptedWithoutEffect)
{
	for (int name :
	     {TCP_NODELAY, TCP_CORK, TCP_QUICKACK, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT,
	      TCP_USER_TIMEOUT, TCP_SYNCNT, TCP_LINGER2, TCP_MAXSEG, TCP_WINDOW_CLAMP,
	      TCP_CONGESTION, TCP_NOTSENT_LOWAT, TCP_DEFER_ACCEPT, TCP_FASTOPEN}) {
		OptionPolicy p = option_policy(IPPROTO_TCP, name);
		EXPECT_TRUE(p.accepted) << name;
		EXPECT_NE(p.name, nullptr) << name;
	}
	for (int name : {IP_TOS, IP_TTL, IP_MTU_DISCOVER, IP_RECVERR})
		EXPECT_TRUE(option_policy(IPPROTO_IP, name).accepted) << name;
	for (int name : {IPV6_TCLASS, IPV6_UNICAST_HOPS, IPV6_MTU_DISCOVER, IPV6_RECVERR})
		EXPECT_TRUE(option_policy(IPPROTO_IPV6, name).accepted) << name;
}

TEST(PreloadOptions, EverythingElseKeepsEnoprotoopt)
{
	/* Named, refused: their effect is what the program relies on. */
	for (int name :
	     {TCP_ULP, TCP_MD5SIG, TCP_REPAIR, TCP_INQ, TCP_FASTOPEN_CONNECT, TCP_INFO}) {
		OptionPolicy p = option_policy(IPPROTO_TCP, name);
		EXPECT_FALSE(p.accepted) << name;
		EXPECT_NE(p.name, nullptr) << name;
	}
	EXPECT_FALSE(option_policy(IPPROTO_IPV6, IPV6_V6ONLY).accepted);
	/* Unknown ones, and the right names at the wrong level. */
	EXPECT_FALSE(option_policy(IPPROTO_TCP, 9999).accepted);
	EXPECT_EQ(option_policy(IPPROTO_TCP, 9999).name, nullptr);
	EXPECT_FALSE(option_policy(IPPROTO_IP, IP_TRANSPARENT).accepted);
	EXPECT_FALSE(option_policy(IPPROTO_IP, IP_ADD_MEMBERSHIP).accepted);
	EXPECT_FALSE(option_policy(IPPROTO_IP, TCP_MAXSEG + 1000).accepted);
	EXPECT_FALSE(option_policy(IPPROTO_IPV6, IP_TOS).accepted);
	EXPECT_FALSE(option_policy(SOL_SOCKET, SO_KEEPALIVE).accepted);
	EXPECT_FALSE(option_policy(IPPROTO_UDP, TCP_NODELAY).accepted);
}

TEST(PreloadInterrupt, EveryCaughtSignalMustRestart)
{
	HandlerInfo none[3] = {};
	EXPECT_TRUE(every_handler_restarts(none, 3)); /* SIGSTOP/SIGCONT: no handler */
	EXPECT_TRUE(every_handler_restarts(nullptr, 0));
	HandlerInfo restarting[2] = {{true, true}, {false, false}};
	EXPECT_TRUE(every_handler_restarts(restarting, 2));
	HandlerInfo one_not[3] = {{true, true}, {true, false}, {false, false}};
	EXPECT_FALSE(every_handler_restarts(one_not, 3));
	/* SA_RESTART on SIG_IGN/SIG_DFL means nothing. */
	HandlerInfo ignored[1] = {{false, true}};
	EXPECT_TRUE(every_handler_restarts(ignored, 1));
}

TEST(PreloadInterrupt, WaitOnAsTcpWould)
{
	InterruptPlan p = after_interrupt(true, false, 1234);
	EXPECT_EQ(p.what, Interrupted::keep_waiting);
	EXPECT_EQ(p.wait_ms, 1234u);
	/* A handler without SA_RESTART: EINTR, as TCP's connect. */
	EXPECT_EQ(after_interrupt(false, false, 1234).what, Interrupted::report);
	/* The program's own SO_SNDTIMEO: TCP says EINTR even under SA_RESTART. */
	EXPECT_EQ(after_interrupt(true, true, 1234).what, Interrupted::report);
	/* Nothing left of the bound: a timeout, which falls back. */
	EXPECT_EQ(after_interrupt(true, false, 0).what, Interrupted::out_of_time);
	EXPECT_EQ(after_interrupt(false, false, 0).what, Interrupted::report);
}

TEST(PreloadBackground, ModeFollowsBlockingAndFallback)
{
	Config c = defaults();
	EXPECT_EQ(connect_mode(c, false), ConnectMode::bounded);
	EXPECT_EQ(connect_mode(c, true), ConnectMode::background);
	c.fallback = false;
	EXPECT_EQ(connect_mode(c, false), ConnectMode::native);
	EXPECT_EQ(connect_mode(c, true), ConnectMode::native);
}

TEST(PreloadBackground, AttemptState)
{
	EXPECT_EQ(attempt_state(0, false, false), AttemptState::in_progress);
	EXPECT_EQ(attempt_state(0, true, false), AttemptState::connected);
	/* Connected, then closed by the peer: still a connection that was made. */
	EXPECT_EQ(attempt_state(0, true, true), AttemptState::connected);
	EXPECT_EQ(attempt_state(ECONNREFUSED, false, true), AttemptState::failed);
	EXPECT_EQ(attempt_state(ENODEV, false, false), AttemptState::failed);
	/* The error was read by an earlier SO_ERROR: the hangup tells. */
	EXPECT_EQ(attempt_state(0, false, true), AttemptState::failed);
}

TEST(PreloadBackground, ConnectAgain)
{
	EXPECT_EQ(connect_again(EALREADY), Again::pass_keep);
	EXPECT_EQ(connect_again(EINPROGRESS), Again::pass_keep);
	EXPECT_EQ(connect_again(EINTR), Again::pass_keep);
	EXPECT_EQ(connect_again(0), Again::pass_done);
	EXPECT_EQ(connect_again(EISCONN), Again::pass_done);
	for (int err : {ENODEV, ECONNREFUSED, ETIMEDOUT, ECONNABORTED, EHOSTUNREACH, EPROTO})
		EXPECT_EQ(connect_again(err), Again::fallback) << err;
	EXPECT_EQ(connect_again(EFAULT), Again::pass_keep);
}

TEST(PreloadOptions, ReadBackAsSmbDirectBehaves)
{
	EXPECT_EQ(emulated_getsockopt(IPPROTO_TCP, TCP_NODELAY), 1);
	EXPECT_EQ(emulated_getsockopt(IPPROTO_TCP, TCP_CORK), 0);
	EXPECT_EQ(emulated_getsockopt(IPPROTO_IPV6, IPV6_V6ONLY), 0);
	EXPECT_FALSE(emulated_getsockopt(IPPROTO_TCP, TCP_INFO).has_value());
	EXPECT_FALSE(emulated_getsockopt(SOL_SOCKET, SO_KEEPALIVE).has_value());
	EXPECT_FALSE(emulated_getsockopt(IPPROTO_IP, TCP_NODELAY).has_value());
}

TEST(PreloadOptions, NamesForDebugLines)
{
	char buf[64];
	format_option(IPPROTO_TCP, TCP_NODELAY, buf, sizeof(buf));
	EXPECT_STREQ(buf, "IPPROTO_TCP TCP_NODELAY");
	format_option(IPPROTO_IPV6, IPV6_TCLASS, buf, sizeof(buf));
	EXPECT_STREQ(buf, "IPPROTO_IPV6 IPV6_TCLASS");
	format_option(IPPROTO_TCP, 9999, buf, sizeof(buf));
	EXPECT_STREQ(buf, "level 6 option 9999");
}

TEST(PreloadEndpoint, Format)
{
	Addr a = v4("10.77.0.1", 445), b = v6("fd77::2", 5445);
	EXPECT_EQ(where(*parse_endpoint(a.sa(), a.len)), "10.77.0.1:445");
	EXPECT_EQ(where(*parse_endpoint(b.sa(), b.len)), "[fd77::2]:5445");
	char small[6];
	format_endpoint(*parse_endpoint(a.sa(), a.len), small, sizeof(small));
	EXPECT_STREQ(small, "10.77");
}

TEST(PreloadConnect, OnlyANeverConnectedSocketIsReplaced)
{
	Addr a = v4("10.77.0.1", 445);
	SocketIdentity closed = tcp4;
	closed.tcp_state = TCP_CLOSE;
	EXPECT_EQ(decide_connect(defaults(), closed, a.sa(), a.len).action, Action::replace);
	/* A client that bound a local address first is still fresh. */
	closed.bound = true;
	EXPECT_EQ(decide_connect(defaults(), closed, a.sa(), a.len).action, Action::replace);
	/* connect() again while the TCP connect is under way: EALREADY is TCP's to give. */
	for (int state : {TCP_SYN_SENT, TCP_ESTABLISHED, TCP_LISTEN, TCP_CLOSE_WAIT}) {
		SocketIdentity busy = tcp4;
		busy.tcp_state = state;
		Decision d = decide_connect(defaults(), busy, a.sa(), a.len);
		EXPECT_EQ(d.action, Action::keep) << state;
		EXPECT_EQ(d.reason, Reason::not_fresh) << state;
		EXPECT_FALSE(d.report) << state;
	}
}

TEST(PreloadBind, ASecondBindIsTcpsToRefuse)
{
	Addr a = v4("0.0.0.0", 445);
	SocketIdentity bound = tcp4;
	bound.tcp_state = TCP_CLOSE;
	bound.bound = true;
	Decision d = decide_bind(listening(), bound, a.sa(), a.len);
	EXPECT_EQ(d.action, Action::keep);
	EXPECT_EQ(d.reason, Reason::not_fresh);
}
