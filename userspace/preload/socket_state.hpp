// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The state a program gave its TCP socket before the preload replaced it,
 * and which of it the SMB-Direct socket takes over. The interposition layer
 * reads the state with getsockopt/fcntl/getsockname (of the program's socket
 * and of a fresh TCP socket of the same domain); carry_over() says what to
 * set, as a pure function.
 *
 * Only what the program changed is carried over: the two families have
 * different defaults (SO_KEEPALIVE is off for TCP and on for SMB-Direct,
 * whose keepalive cifs.ko and ksmbd rely on; TCP's buffers follow
 * tcp_rmem/tcp_wmem, SMB-Direct's net.core.rmem_default/wmem_default), so
 * copying TCP's defaults would change SMB-Direct's behaviour for nothing.
 */
#ifndef SMBDIRECT_PRELOAD_SOCKET_STATE_HPP
#define SMBDIRECT_PRELOAD_SOCKET_STATE_HPP

#include <optional>
#include <sys/socket.h>
#include <sys/time.h>

#include "decision.hpp"

namespace sd::preload {

struct SocketState {
	int keepalive = 0;
	int rcvbuf = 0; /* as getsockopt reads it: twice what was set */
	int sndbuf = 0;
	struct timeval rcvtimeo = {};
	struct timeval sndtimeo = {};
	struct linger linger = {};
	int priority = 0; /* SO_PRIORITY */
	int rcvlowat = 1; /* SO_RCVLOWAT */
	int reuseaddr = 0; /* SO_REUSEADDR */
	int mark = 0; /* SO_MARK */
	bool nonblocking = false; /* O_NONBLOCK of the open file */
	/* O_ASYNC and its F_SETOWN_EX owner / F_SETSIG signal (the open file's) */
	bool async = false;
	int owner_type = 0; /* F_OWNER_TID/PID/PGRP */
	int owner_pid = 0; /* 0: none */
	int signal = 0; /* F_GETSIG; 0: SIGIO */
	bool cloexec = false; /* FD_CLOEXEC of the descriptor */
	int v6only = 0; /* IPV6_V6ONLY of an AF_INET6 socket */
	std::optional<Endpoint> local; /* getsockname */
};

struct Carry {
	std::optional<int> keepalive;
	std::optional<int> rcvbuf; /* the value to pass to setsockopt */
	std::optional<int> sndbuf;
	std::optional<struct timeval> rcvtimeo;
	std::optional<struct timeval> sndtimeo;
	std::optional<struct linger> linger;
	std::optional<int> priority;
	std::optional<int> rcvlowat;
	std::optional<int> reuseaddr;
	std::optional<int> mark;
	/* The program bound an address or a port: bind the SMB-Direct socket. */
	std::optional<Endpoint> bind;
	/*
	 * IPV6_V6ONLY for an AF_INET6 replacement through the inet entry point
	 * (SMBDIRECT_INET), which has it (set before bind, as TCP).
	 */
	std::optional<int> v6only;
	/*
	 * The program asked for IPV6_V6ONLY, which an AF_SMBDIRECT socket
	 * cannot give (it is dual stack): worth a debug line.
	 */
	bool v6only_lost = false;
};

/*
 * program: the socket being replaced; fresh: a new TCP socket's defaults;
 * inet6: the replacement is an AF_INET6 IPPROTO_SMBDIRECT socket (which
 * keeps IPV6_V6ONLY), not an AF_SMBDIRECT one.
 */
[[nodiscard]] Carry carry_over(const SocketState &program, const SocketState &fresh,
			       bool inet6 = false);

/* Set when the program bound the socket (a non-wildcard address or a port). */
[[nodiscard]] bool is_bound(const std::optional<Endpoint> &local);

/*
 * The receive MaxFragmentedSize of every SMB-Direct socket the preload makes
 * (SOL_SMBDIRECT SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, set before connect or
 * bind, inherited by accepted sockets). A TCP program sizes an SMB2 message
 * by SMB2's MaxReadSize/MaxWriteSize (4 MiB from ksmbd, 8 MiB from Samba
 * and Windows), and the peer sends each one as a single SMB-Direct message:
 * the module's default of 1 MiB would end the connection at the first large
 * READ response or inline WRITE. SMB2 over TCP frames a message with a
 * 24-bit length, so 16 MiB holds anything the program could have received
 * over TCP; it is also the UAPI's upper bound. Memory is allocated per
 * message as it arrives, so the raised limit costs nothing until used.
 */
inline constexpr int smb_max_fragmented_size = 16 * 1024 * 1024;

/*
 * The value to set, given what the fresh SMB-Direct socket reads (the
 * module's max_fragmented_size parameter, or -1 when it cannot be read):
 * nullopt when it is already at least smb_max_fragmented_size.
 */
[[nodiscard]] std::optional<int> raised_max_fragmented_size(int current);

/* Milliseconds of a timeval, 0 for none; saturates. */
[[nodiscard]] unsigned long timeval_ms(const struct timeval &tv);
[[nodiscard]] struct timeval ms_timeval(unsigned long ms);

/*
 * The send timeout for the bounded SMB-Direct attempt: the configured
 * bound, or the program's own SO_SNDTIMEO on a blocking socket when that
 * is shorter (a blocking TCP connect honours it).
 */
[[nodiscard]] unsigned long attempt_timeout_ms(const Config &cfg, const SocketState &program);

} // namespace sd::preload

#endif
