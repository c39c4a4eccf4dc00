/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The af_smbdirect generic netlink family: what `smbdirect ss` and
 * `smbdirect stats` read. Specified in
 * Documentation/netlink/specs/af_smbdirect.yaml (the kernel's genetlink
 * spec format, so tools/net/ynl can talk to it too); this header and the
 * spec must agree.
 *
 * Commands:
 *   SMBDIRECT_CMD_SOCK_GET     dump: one message per AF_SMBDIRECT socket
 *                              (both entry points) in the caller's network
 *                              namespace. Without CAP_NET_ADMIN only the
 *                              caller's own sockets (owner uid), as ss
 *                              shows TCP. Optional request attributes
 *                              filter: SMBDIRECT_A_SOCK_STATE_MASK (bit per
 *                              SMBDIRECT_STATE_*), SMBDIRECT_A_SOCK_DEV_NAME.
 *   SMBDIRECT_CMD_STATS_GET    do: the counters of the caller's network
 *                              namespace (SMBDIRECT_A_STATS_TOP_MODULE) and
 *                              one SMBDIRECT_A_STATS_DEVICE nest per RDMA
 *                              device its sockets used since load (or the
 *                              last reset). Anyone may read them; no
 *                              namespace sees another's.
 *   SMBDIRECT_CMD_STATS_RESET  do, CAP_NET_ADMIN over the caller's network
 *                              namespace: zeroes that namespace's totals
 *                              and its devices' (live sockets keep their
 *                              own counters).
 *
 * Attributes are added at the end of each enum only; a reader ignores
 * those it does not know. Counters are u64 (NLA_U64, padded with
 * SMBDIRECT_A_*_PAD as the kernel's nla_put_u64_64bit() does).
 */
#ifndef _UAPI_LINUX_SMBDIRECT_GENL_H
#define _UAPI_LINUX_SMBDIRECT_GENL_H

#define SMBDIRECT_GENL_NAME	"af_smbdirect"
#define SMBDIRECT_GENL_VERSION	1

enum {
	SMBDIRECT_CMD_UNSPEC,
	SMBDIRECT_CMD_SOCK_GET,
	SMBDIRECT_CMD_STATS_GET,
	SMBDIRECT_CMD_STATS_RESET,

	__SMBDIRECT_CMD_MAX,
	SMBDIRECT_CMD_MAX = __SMBDIRECT_CMD_MAX - 1
};

/* One socket (SMBDIRECT_CMD_SOCK_GET replies), top level. */
enum {
	SMBDIRECT_A_SOCK_UNSPEC,
	SMBDIRECT_A_SOCK_PAD,
	SMBDIRECT_A_SOCK_STATE,		/* u8: SMBDIRECT_STATE_* */
	SMBDIRECT_A_SOCK_TYPE,		/* u8: SOCK_STREAM or SOCK_SEQPACKET */
	/*
	 * u16: the socket()'s family: the AF_SMBDIRECT slot, or AF_INET/AF_INET6
	 * for socket(AF_INET[6], SOCK_STREAM, IPPROTO_SMBDIRECT)
	 */
	SMBDIRECT_A_SOCK_FAMILY,
	SMBDIRECT_A_SOCK_UID,		/* u32: owner, in the caller's user namespace */
	SMBDIRECT_A_SOCK_INODE,		/* u64: socket:[inode] in /proc/PID/fd */
	SMBDIRECT_A_SOCK_COOKIE,	/* u64: sock_gen_cookie(), as ss -e shows */
	SMBDIRECT_A_SOCK_ADDR_FAMILY,	/* u16: AF_INET or AF_INET6 (absent: unbound) */
	SMBDIRECT_A_SOCK_LOCAL_ADDR,	/* binary: 4 or 16 bytes, network order */
	SMBDIRECT_A_SOCK_LOCAL_PORT,	/* u16, host order */
	SMBDIRECT_A_SOCK_PEER_ADDR,	/* binary: 4 or 16 bytes (connected only) */
	SMBDIRECT_A_SOCK_PEER_PORT,	/* u16, host order */
	SMBDIRECT_A_SOCK_DEV_NAME,	/* string: RDMA device (once one is bound) */
	SMBDIRECT_A_SOCK_DEV_PORT,	/* u32: its port number */
	SMBDIRECT_A_SOCK_TRANSPORT,	/* u8: SMBDIRECT_TRANSPORT_* */
	SMBDIRECT_A_SOCK_PARAMS,	/* nest: SMBDIRECT_A_PARAMS_* (negotiated) */
	SMBDIRECT_A_SOCK_CREDITS,	/* nest: SMBDIRECT_A_CREDITS_* */
	SMBDIRECT_A_SOCK_RX_QUEUED,	/* u32: bytes received, not yet read */
	SMBDIRECT_A_SOCK_TX_QUEUED,	/* u32: bytes sent, not yet in PDUs */
	SMBDIRECT_A_SOCK_REGS,		/* u32: live registrations */
	SMBDIRECT_A_SOCK_PINNED_BYTES,	/* u64: bytes those registrations pin */
	SMBDIRECT_A_SOCK_STATS,		/* nest: SMBDIRECT_A_STATS_* of this socket */
	SMBDIRECT_A_SOCK_ACCEPT,	/* nest: SMBDIRECT_A_ACCEPT_* (listeners) */
	/* request only: u32, bit (1 << SMBDIRECT_STATE_*) per state wanted */
	SMBDIRECT_A_SOCK_STATE_MASK,

	__SMBDIRECT_A_SOCK_MAX,
	SMBDIRECT_A_SOCK_MAX = __SMBDIRECT_A_SOCK_MAX - 1
};

/* The negotiated parameters: struct smbdirect_params' fields, u32 each. */
enum {
	SMBDIRECT_A_PARAMS_UNSPEC,
	SMBDIRECT_A_PARAMS_VERSION,
	SMBDIRECT_A_PARAMS_MAX_SEND_SIZE,
	SMBDIRECT_A_PARAMS_MAX_RECEIVE_SIZE,
	SMBDIRECT_A_PARAMS_MAX_FRAGMENTED_SEND_SIZE,
	SMBDIRECT_A_PARAMS_MAX_FRAGMENTED_RECEIVE_SIZE,
	SMBDIRECT_A_PARAMS_MAX_READ_WRITE_SIZE,
	SMBDIRECT_A_PARAMS_SEND_CREDIT_TARGET,
	SMBDIRECT_A_PARAMS_RECEIVE_CREDIT_MAX,
	SMBDIRECT_A_PARAMS_INITIATOR_DEPTH,
	SMBDIRECT_A_PARAMS_RESPONDER_RESOURCES,
	SMBDIRECT_A_PARAMS_KEEPALIVE_INTERVAL,

	__SMBDIRECT_A_PARAMS_MAX,
	SMBDIRECT_A_PARAMS_MAX = __SMBDIRECT_A_PARAMS_MAX - 1
};

/* Credits now, u32 each (struct smbdirect_info's view, plus targets). */
enum {
	SMBDIRECT_A_CREDITS_UNSPEC,
	SMBDIRECT_A_CREDITS_SEND,		/* PDUs we may send (peer's grants) */
	SMBDIRECT_A_CREDITS_SEND_TARGET,	/* what the peer asked of us */
	SMBDIRECT_A_CREDITS_PEER,		/* PDUs the peer may send (our grants) */
	SMBDIRECT_A_CREDITS_RECEIVES_POSTED,	/* receive buffers on the QP */
	SMBDIRECT_A_CREDITS_RECEIVES_HELD,	/* held back: the reader is slow */
	SMBDIRECT_A_CREDITS_RECEIVE_TARGET,	/* receives we keep posted */
	SMBDIRECT_A_CREDITS_SENDS_IN_FLIGHT,	/* PDUs posted, not completed */

	__SMBDIRECT_A_CREDITS_MAX,
	SMBDIRECT_A_CREDITS_MAX = __SMBDIRECT_A_CREDITS_MAX - 1
};

/*
 * Counters, u64 each: per socket (since it was created), and per network
 * namespace, in total and per device (since load or the namespace's
 * SMBDIRECT_CMD_STATS_RESET; closed sockets' counters are added in when
 * they are freed).
 */
enum {
	SMBDIRECT_A_STATS_UNSPEC,
	SMBDIRECT_A_STATS_PAD,
	SMBDIRECT_A_STATS_MSGS_TX,		/* upper-layer messages sent */
	SMBDIRECT_A_STATS_MSGS_RX,		/* ... received (reassembled) */
	SMBDIRECT_A_STATS_PDUS_TX,		/* SMB-Direct data transfer PDUs */
	SMBDIRECT_A_STATS_PDUS_RX,
	SMBDIRECT_A_STATS_BYTES_TX,		/* message payload bytes */
	SMBDIRECT_A_STATS_BYTES_RX,
	SMBDIRECT_A_STATS_RDMA_READS,		/* RDMA_READV calls completed */
	SMBDIRECT_A_STATS_RDMA_READ_BYTES,
	SMBDIRECT_A_STATS_RDMA_WRITES,		/* RDMA_WRITEV calls completed */
	SMBDIRECT_A_STATS_RDMA_WRITE_BYTES,
	SMBDIRECT_A_STATS_REGISTRATIONS,	/* REGISTER calls that succeeded */
	SMBDIRECT_A_STATS_REMOTE_INVALIDATIONS,	/* our MRs the peer invalidated */
	SMBDIRECT_A_STATS_SEND_INVALIDATES,	/* SEND_WITH_INVALIDATE we sent */
	/* PDUs asking for an answer (SMB_DIRECT_RESPONSE_REQUESTED): probes, low credits */
	SMBDIRECT_A_STATS_KEEPALIVES_TX,
	SMBDIRECT_A_STATS_CREDIT_STALLS,	/* sends that waited for a credit */
	SMBDIRECT_A_STATS_ERR_PROTOCOL,		/* EPROTO: the peer broke [MS-SMBD] */
	SMBDIRECT_A_STATS_ERR_TIMEOUT,		/* negotiation or keepalive timeout */
	SMBDIRECT_A_STATS_ERR_REFUSED,		/* connection or negotiation refused */
	SMBDIRECT_A_STATS_ERR_TRANSPORT,	/* ECONNRESET: a completion failed */
	SMBDIRECT_A_STATS_ERR_DEVICE,		/* ENETDOWN: the device went away */
	SMBDIRECT_A_STATS_ERR_RDMA,		/* RDMA_READV/WRITEV that failed */
	/* module and device only */
	SMBDIRECT_A_STATS_SOCKETS,		/* sockets alive now */
	SMBDIRECT_A_STATS_CONNECTIONS,		/* negotiated connections, total */
	/* listeners: connect requests rejected, the backlog full */
	SMBDIRECT_A_STATS_LISTEN_OVERFLOWS,
	/* listeners: ... at the half-open bound (listener or namespace) */
	SMBDIRECT_A_STATS_LISTEN_HALF_OPEN_DROPS,

	__SMBDIRECT_A_STATS_MAX,
	SMBDIRECT_A_STATS_MAX = __SMBDIRECT_A_STATS_MAX - 1
};

/* A listener's queue, u32 each. */
enum {
	SMBDIRECT_A_ACCEPT_UNSPEC,
	SMBDIRECT_A_ACCEPT_PENDING,	/* children still negotiating */
	SMBDIRECT_A_ACCEPT_READY,	/* negotiated, waiting for accept() */
	SMBDIRECT_A_ACCEPT_BACKLOG,	/* listen()'s backlog */

	__SMBDIRECT_A_ACCEPT_MAX,
	SMBDIRECT_A_ACCEPT_MAX = __SMBDIRECT_A_ACCEPT_MAX - 1
};

/* SMBDIRECT_CMD_STATS_GET reply, top level. */
enum {
	SMBDIRECT_A_STATS_TOP_UNSPEC,
	SMBDIRECT_A_STATS_TOP_MODULE,	/* nest: SMBDIRECT_A_STATS_* */
	SMBDIRECT_A_STATS_TOP_DEVICE,	/* nest, repeated: SMBDIRECT_A_DEV_* */

	__SMBDIRECT_A_STATS_TOP_MAX,
	SMBDIRECT_A_STATS_TOP_MAX = __SMBDIRECT_A_STATS_TOP_MAX - 1
};

enum {
	SMBDIRECT_A_DEV_UNSPEC,
	SMBDIRECT_A_DEV_NAME,		/* string */
	SMBDIRECT_A_DEV_INDEX,		/* u32: the RDMA device's index */
	SMBDIRECT_A_DEV_STATS,		/* nest: SMBDIRECT_A_STATS_* */

	__SMBDIRECT_A_DEV_MAX,
	SMBDIRECT_A_DEV_MAX = __SMBDIRECT_A_DEV_MAX - 1
};

#endif
