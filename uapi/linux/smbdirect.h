/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * AF_SMBDIRECT: the SMB-Direct transport ([MS-SMBD] v1.0) as a socket family.
 *
 * Family number. A module cannot extend AF_MAX, so af_smbdirect.ko takes an
 * address-family slot that no protocol has registered on the running
 * kernel, chosen at load time, and publishes it read-only in
 * SMBDIRECT_FAMILY_SYSFS. Applications read that file instead of using a
 * constant. An administrator may force a slot with
 * "modprobe af_smbdirect family=N"; the module then refuses to load if N is
 * taken. Without a forced slot it tries, in order, families that upstream
 * Linux retired or never implemented: SMBDIRECT_FAMILY_CANDIDATES.
 *
 * Addresses are struct sockaddr_in / sockaddr_in6 (sin_family AF_INET or
 * AF_INET6), ports as for TCP: SMB-Direct listens on 445 over InfiniBand
 * and RoCE, 5445 over iWARP.
 *
 * Socket types:
 *   SOCK_STREAM     a drop-in for SMB over TCP port 445: the application
 *                   writes 4-byte big-endian length-prefixed messages, split
 *                   across send calls any way it likes; each becomes one
 *                   SMB-Direct message. Received messages are read back with
 *                   the same prefix. A length above the negotiated maximum
 *                   fails the send with EMSGSIZE.
 *   SOCK_SEQPACKET  one sendmsg is one SMB-Direct message; one recvmsg
 *                   returns one message (MSG_TRUNC when the buffer is short).
 *
 * Message sizes. SMB-Direct has no empty messages: a zero-length
 * SOCK_SEQPACKET send and a zero STREAM length prefix fail with EINVAL
 * (nothing of them is taken). A message, or a STREAM prefix, above the
 * peer's MaxFragmentedSize, capped at 16 MiB whatever the peer advertises
 * (max_fragmented_send_size in GET_PARAMS), fails with EMSGSIZE, equally
 * without taking anything.
 *
 * Shutdown and close. SMB-Direct has no half-close on the wire. SHUT_RD
 * and SHUT_WR act locally only (sends fail with EPIPE after SHUT_WR, recv
 * returns 0 after SHUT_RD); the peer notices nothing until both directions
 * are shut (SHUT_RDWR, or SHUT_RD and SHUT_WR in turn) or the socket is
 * closed: then what was queued is sent, the connection is disconnected,
 * and the peer reads EOF. close() behaves as TCP's: without SO_LINGER it
 * returns at once, blocking socket or not, and the queue drains in the
 * background for up to 10 s (then what is left is dropped); a socket with
 * live registrations drains within close() instead (up to 10 s), so the
 * peer's access ends before close() returns. SO_LINGER {1, N} makes
 * close() wait up to N s, then drop; {1, 0} drops at once. SMB-Direct has
 * no reset on the wire: after a drop the peer reads what had arrived, then
 * EOF. shutdown(SHUT_RDWR) waits as close() with SO_LINGER would (10 s
 * without it).
 *
 * Wake-ups. poll/epoll, O_ASYNC (SIGIO to the F_SETOWN owner) and a kernel
 * user's sk_data_ready are told of data, of a connection to accept, of a
 * finished connect() and of the end of the connection, as for TCP.
 *
 * accept() hands over connections whose negotiation is complete. One that
 * ended while it waited in the queue is still handed over, as TCP's: its
 * reads return what the peer sent, then 0 or the error that ended it.
 *
 * Errors. After the peer's orderly disconnect (its close or shutdown) recv
 * returns 0 once the data that arrived is read, and send fails with EPIPE.
 * Otherwise the connection's error is reported once in SO_ERROR (reading
 * it clears it, as for TCP) and by the next call:
 *   ENETDOWN      the RDMA device was removed (rdma link delete)
 *   EPROTO        the peer broke the protocol
 *   ETIMEDOUT     negotiation or keepalive timed out
 *   ECONNREFUSED  the peer refused the connection or the negotiation
 *   ECONNRESET    the connection failed at the transport level
 * A connect() that failed can be tried again on the same socket, as with
 * TCP; after a non-blocking attempt failed, the connect() that follows
 * EINPROGRESS reports the error (ECONNABORTED if SO_ERROR already took
 * it) and the next one starts afresh.
 *
 * SO_KEEPALIVE is on by default; turning it off before connect() or
 * listen() disables SMB-Direct keepalive (SMBDIRECT_OPT_KEEPALIVE_INTERVAL
 * 0 does the same). As with TCP, a reader that stops reading (stopped,
 * sleeping, or slow) never makes either side's keepalive fail: the peer's
 * data waits, probes and their answers still flow.
 */
#ifndef _UAPI_LINUX_SMBDIRECT_H
#define _UAPI_LINUX_SMBDIRECT_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define SMBDIRECT_FAMILY_SYSFS "/sys/module/af_smbdirect/parameters/family"

/* AF_IRDA, AF_WANPIPE, AF_ECONET, AF_IPX, AF_DECnet, AF_ASH, AF_SNA, AF_NETBEUI */
#define SMBDIRECT_FAMILY_CANDIDATES { 23, 25, 19, 4, 12, 18, 22, 13 }
#define SMBDIRECT_FAMILY_NR_CANDIDATES 8

/* bind() to either needs CAP_NET_BIND_SERVICE. */
#define SMBDIRECT_PORT 445		/* InfiniBand, RoCE */
#define SMBDIRECT_PORT_IWARP 5445	/* iWARP */

/*
 * Socket options, level SOL_SMBDIRECT, value int. Local negotiation
 * parameters: set before connect() or listen() (EISCONN once connecting,
 * connected or listening; getsockopt stays allowed); accepted sockets
 * inherit the listener's. Defaults come from the module parameters of the
 * same names (those of ksmbd and cifs.ko). A value outside these ranges is
 * EINVAL, an unknown option ENOPROTOOPT:
 *   RECEIVE_CREDIT_MAX, SEND_CREDIT_TARGET   2 .. 1024
 *   MAX_SEND_SIZE, MAX_RECEIVE_SIZE          128 .. 65536
 *   MAX_FRAGMENTED_SIZE                      131072 .. 16 MiB
 *   MAX_READ_WRITE_SIZE                      4096 .. 128 MiB
 *   KEEPALIVE_INTERVAL                       0 .. 86400 seconds
 * Without CAP_NET_ADMIN (in the socket's network namespace) a setsockopt
 * that would raise the socket's buffer memory,
 *   RECEIVE_CREDIT_MAX * MAX_RECEIVE_SIZE
 *   + min(SEND_CREDIT_TARGET, 255) * MAX_SEND_SIZE,
 * above the unpriv_mem_max module parameter (16 MiB by default) is EPERM
 * and changes nothing; lowering is always allowed. The buffers are charged
 * to the memory cgroup of the socket's creator (an accepted socket: the
 * listener's); at its memory.max connect() fails with ENOMEM (ECONNREFUSED
 * when the accepting side's did not fit) and send() with ENOBUFS.
 * SO_RCVBUF bounds received bytes not yet read (beyond it, receive buffers
 * are held back and the peer gets no credits); SO_SNDBUF bounds bytes
 * staged by send(): a SOCK_STREAM message is staged in pieces within it
 * (at least one PDU's worth always fits an empty queue), a SOCK_SEQPACKET
 * message whole (one always fits an empty queue).
 */
#define SMBDIRECT_SOL 0x5344
/*
 * SOL_SMBDIRECT is the name programs use. Upstream proposes SOL_SMBDIRECT
 * = 289 (SMBDIRECT_SOL_IPPROTO) in <linux/socket.h>; where the system
 * already defines it, that definition stays (the module answers both
 * levels on every socket). Received control messages
 * (SMBDIRECT_CMSG_RDMA_COMPLETION) always come at SMBDIRECT_SOL.
 */
#ifndef SOL_SMBDIRECT
#define SOL_SMBDIRECT SMBDIRECT_SOL
#endif

/*
 * Level IPPROTO_TCP, for programs ported from TCP: TCP_NODELAY, TCP_CORK,
 * TCP_QUICKACK, TCP_KEEPIDLE, TCP_KEEPINTVL and TCP_KEEPCNT are accepted
 * (TCP's ranges, EINVAL outside) but change nothing: SMB-Direct sends
 * every message at once, so TCP_NODELAY always reads 1 and TCP_CORK 0; the
 * others read back what was set (the keepalive is
 * SMBDIRECT_OPT_KEEPALIVE_INTERVAL with SO_KEEPALIVE). TCP_INFO reads
 * struct tcp_info (<linux/tcp.h>) as MPTCP answers it: state, RTT and RTO
 * estimated from send completions, PDU sizes, byte and PDU counts (see
 * Documentation/uapi.rst). Other TCP options are ENOPROTOOPT.
 * SO_ACCEPTCONN is 1 on a listener; an accepted socket starts with its
 * listener's SO_RCVBUF, SO_SNDBUF, SO_LINGER, SO_RCVTIMEO, SO_SNDTIMEO and
 * SO_KEEPALIVE, as with TCP.
 */

#define SMBDIRECT_OPT_RECEIVE_CREDIT_MAX	1 /* receive buffers posted */
#define SMBDIRECT_OPT_SEND_CREDIT_TARGET	2 /* credits asked of the peer */
#define SMBDIRECT_OPT_MAX_SEND_SIZE		3 /* bytes per PDU sent */
#define SMBDIRECT_OPT_MAX_RECEIVE_SIZE		4 /* bytes per receive buffer */
#define SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE	5 /* largest message received */
#define SMBDIRECT_OPT_MAX_READ_WRITE_SIZE	6 /* bytes per RDMA read/write */
#define SMBDIRECT_OPT_KEEPALIVE_INTERVAL	7 /* seconds idle before a probe; 0 off */
/*
 * Asynchronous RDMA transfers (SMBDIRECT_CMSG_RDMA) the socket holds at
 * once, from submission until their completion is reaped: 1 ..
 * SMBDIRECT_RDMA_INFLIGHT_MAX, default 64. Settable in every state; a
 * lower value only refuses new submissions.
 */
#define SMBDIRECT_OPT_RDMA_INFLIGHT		8
#define SMBDIRECT_RDMA_INFLIGHT_MAX		1024
/*
 * What poll tells of the asynchronous RDMA offload: flags, 0 by default,
 * settable in every state, inherited by accepted sockets; an unknown flag
 * is EINVAL.
 *   SMBDIRECT_RDMA_EVENTS_PRI     completions waiting raise EPOLLPRI
 *                                 (SIGIO with POLL_PRI) instead of
 *                                 EPOLLERR; EPOLLERR then means SO_ERROR
 *                                 alone, so a completion never looks like
 *                                 a failed connection
 *   SMBDIRECT_RDMA_EVENTS_WRBAND  EPOLLWRBAND while a transfer slot is
 *                                 free (fewer than SMBDIRECT_OPT_RDMA_INFLIGHT
 *                                 transfers held) on a connected socket;
 *                                 reaping a completion frees a slot and
 *                                 wakes. EPOLLOUT keeps its meaning, room
 *                                 for a message (which needs no slot)
 * Without flags completions raise EPOLLERR, as MSG_ZEROCOPY's do.
 */
#define SMBDIRECT_OPT_RDMA_EVENTS		9
#define SMBDIRECT_RDMA_EVENTS_PRI		0x1
#define SMBDIRECT_RDMA_EVENTS_WRBAND		0x2

/*
 * getsockopt(SOL_SMBDIRECT, SMBDIRECT_OPT_INFO, &info, &len): the
 * connection's state now, as TCP_INFO is for TCP. Read-only (setsockopt
 * is ENOPROTOOPT); readable in every state, the credit fields are 0 before
 * the negotiation. len in: the caller's buffer (a shorter one gets the
 * first len bytes, so the struct can grow at its end); out: bytes written.
 */
#define SMBDIRECT_OPT_INFO			16

#define SMBDIRECT_STATE_UNCONNECTED	0
#define SMBDIRECT_STATE_LISTENING	1
#define SMBDIRECT_STATE_CONNECTING	2	/* rdma_cm or negotiation */
#define SMBDIRECT_STATE_CONNECTED	3	/* negotiated */
#define SMBDIRECT_STATE_CLOSED		4

struct smbdirect_info {
	__u32 state;		/* SMBDIRECT_STATE_* */
	__u32 send_credits;	/* PDUs we may send now (the peer's grants) */
	__u32 peer_credits;	/* PDUs the peer may send now (our grants) */
	__u32 receives_posted;	/* receive buffers on the QP */
	/*
	 * Receive buffers kept back because rx_queued reached SO_RCVBUF: the
	 * peer gets their credits once the reader makes room.
	 */
	__u32 receives_held;
	__u32 sends_in_flight;	/* PDUs posted, not yet completed */
	__u32 rx_queued;	/* message bytes received, not yet read */
	__u32 tx_queued;	/* bytes taken by send, not yet all in PDUs */
};

/* Transport kinds in struct smbdirect_params. */
#define SMBDIRECT_TRANSPORT_IB		1
#define SMBDIRECT_TRANSPORT_ROCE	2
#define SMBDIRECT_TRANSPORT_IWARP	3

#define SMBDIRECT_IOC_MAGIC 0xD5

/*
 * Every ioctl argument begins with its own size: the caller sets it to
 * sizeof() of the struct it was compiled with, so the struct can grow.
 * A larger struct than the module's is accepted when every byte beyond
 * the module's is zero, else E2BIG, as copy_struct_from_user() reads
 * openat2()'s; a size above a page is E2BIG. GET_PARAMS reads only size.
 * Unknown flags are EINVAL.
 *
 * 32-bit processes (i386 programs on an x86-64 kernel, built with -m32)
 * use every ioctl as 64-bit ones do, through compat_ioctl: the structs
 * have the same size and layout in both (each __u64 is 8-aligned), a
 * user pointer goes in a __u64 zero-extended ((__u64)(uintptr_t)p), and
 * an iovec array is the process's own struct iovec (32-bit pointer and
 * length). For such a process the segment lengths must also add up
 * within its size_t (EMSGSIZE) and each segment must end inside its 4 GiB
 * address space (EFAULT), as a 64-bit segment must not wrap 64 bits.
 */

/*
 * The connection's negotiated parameters: ENOTCONN until the negotiation
 * completed; afterwards readable also once the connection was closed.
 */
struct smbdirect_params {
	__u32 size;
	__u32 version;			/* negotiated, 0x0100 */
	__u32 max_send_size;		/* effective: min(ours, peer's receive) */
	__u32 max_receive_size;		/* effective: min(ours, peer's send) */
	__u32 max_fragmented_send_size;	/* the peer's limit, at most 16 MiB */
	__u32 max_fragmented_receive_size; /* ours */
	__u32 max_read_write_size;
	__u32 send_credit_target;	/* what the peer asked of us */
	__u32 receive_credit_max;	/* receives we keep posted */
	/* RDMA reads we issue at once: at most what the peer serves (0: none) */
	__u32 initiator_depth;
	/* RDMA reads we serve at once: at most what the peer issues */
	__u32 responder_resources;
	__u32 keepalive_interval;	/* seconds; 0 off */
	__u32 transport;		/* SMBDIRECT_TRANSPORT_* */
	__u32 reserved;
};

#define SMBDIRECT_IOC_GET_PARAMS _IOWR(SMBDIRECT_IOC_MAGIC, 1, struct smbdirect_params)

/*
 * RDMA: the SMB3 READ/WRITE offload.
 *
 * A client registers its buffers (REGISTER) and sends the descriptors
 * inside SMB2 READ/WRITE; the server moves the data with RDMA_WRITEV (into
 * the client's buffers: SMB2 READ) or RDMA_READV (from them: SMB2 WRITE)
 * and may answer with SEND_WITH_INVALIDATE of the client's token
 * (SMBDIRECT_CMSG_SEND_INVALIDATE). The client then deregisters.
 *
 * REGISTER, RDMA_READV and RDMA_WRITEV need a connected socket: ENOTCONN
 * before connect and on a listening socket; once the connection is over,
 * its error (as for send) or EPIPE. DEREGISTER keeps working after the
 * connection is over, so pins can be dropped without closing the socket
 * (ENOTCONN only before connect and on a listening socket). Common
 * errors: EFAULT for a bad pointer, EINVAL for an unknown flag, a size
 * field smaller than the struct, or a malformed list, E2BIG for a larger
 * struct with a byte beyond ours that is not zero (see above), EMSGSIZE
 * for a list that is too long or too large (checked before EFAULT). These
 * argument errors change nothing: the connection stays usable.
 *
 * Memory rules. The peer may touch exactly the registered bytes, only in
 * the directions granted, and only until the registration is invalidated:
 * by DEREGISTER, by the peer's SEND_WITH_INVALIDATE (if allowed), by
 * close() (or exit, which closes), or when the connection ends. (The
 * module asks the device for exactly the directions granted; Soft-iWARP,
 * siw, does not check the remote-read permission of a registration, so
 * over siw a PEER_WRITE-only registration can also be read by the peer.)
 * Pinned
 * pages are charged to the registering user (the locked memory io_uring
 * and MSG_ZEROCOPY charge too), checked against the caller's
 * RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK, shown in the registering
 * process's VmPin, and unpinned and uncharged by DEREGISTER or close().
 * The charge is per user, not per process: a registration lives on the
 * socket, so a child that exits without DEREGISTER leaves its pages
 * charged to its user for as long as another process keeps the socket.
 */

/* Buffer Descriptor V1 exactly as it travels inside SMB2: little-endian. */
struct smbdirect_buffer_descriptor_v1 {
	__le64 offset;
	__le32 token;
	__le32 length;
};

/* What the peer may do with a registration. */
#define SMBDIRECT_ACCESS_PEER_READ	0x1 /* peer RDMA-reads it (SMB2 WRITE) */
#define SMBDIRECT_ACCESS_PEER_WRITE	0x2 /* peer RDMA-writes it (SMB2 READ) */
#define SMBDIRECT_REG_REMOTE_INVALIDATE	0x4 /* peer may send-with-invalidate */

/* Limits of one call. */
#define SMBDIRECT_IOV_MAX		1024	/* iovec segments */
#define SMBDIRECT_DESC_MAX		1024	/* descriptors in RDMA_READV/WRITEV */
#define SMBDIRECT_REG_MAX_BYTES		(256U << 20) /* bytes in one registration */

/*
 * Register user memory for the peer. flags: at least one SMBDIRECT_ACCESS_*
 * bit, optionally SMBDIRECT_REG_REMOTE_INVALIDATE. The iovec segments
 * (zero-length ones are skipped) are pinned and fast-registered; each
 * memory region becomes one descriptor, in iovec order. A region ends
 * where the device's page-list limit is reached, where a segment ends
 * inside a page, or before a segment that starts inside a page, so a
 * registration may need several descriptors. desc_count gives the room
 * at desc; if that is too little, the call fails with ENOSPC and sets
 * desc_count to the number needed. On success desc_count is the number
 * written and id names the registration for DEREGISTER.
 *
 * The call does not wait for the device to complete the registration: it
 * returns once the registration is queued on the connection's send queue,
 * ahead of any message sent afterwards, so the peer cannot use a token
 * before the registration took effect (RC ordering). Should the device
 * fail it, the connection fails (as for a failed RDMA operation). At most
 * 16 registrations and invalidations are queued per socket at once; past
 * that the call waits (even on an O_NONBLOCK socket) until earlier ones
 * complete, which takes microseconds. The socket keeps deregistered
 * memory regions for reuse (up to 32, or max_registrations if lower): a
 * token is built from the region's index and an 8-bit key that changes
 * with each registration, so a deregistered token stays dead for the
 * next 255 registrations of that region at least; a peer must never use
 * one after its registration ended.
 *
 * Errors beyond the common ones:
 *   EINVAL     no access bit, or no bytes at all
 *   EMSGSIZE   more than SMBDIRECT_IOV_MAX segments or
 *              SMBDIRECT_REG_MAX_BYTES bytes
 *   ENOSPC     desc_count too small (desc_count tells how many)
 *   ENOBUFS    the socket already holds max_registrations (module
 *              parameter, default 256) live registrations, counting
 *              SMBDIRECT_DEREG_ASYNC completions not reaped yet
 *   ENOMEM     RLIMIT_MEMLOCK would be exceeded, or no memory
 *   EFAULT     an unmapped range, or read-only memory asked for PEER_WRITE
 * A peer's SEND_WITH_INVALIDATE of a token registered without
 * SMBDIRECT_REG_REMOTE_INVALIDATE is a protocol error: the connection
 * fails with EPROTO (and DEREGISTER reports the token as invalidated).
 */
struct smbdirect_register {
	__u32 size;
	__u32 flags;		/* in: SMBDIRECT_ACCESS_* | SMBDIRECT_REG_* */
	__u64 iov;		/* in: const struct iovec * */
	__u32 iov_count;	/* in */
	__u32 desc_count;	/* in: room at desc; out: descriptors written/needed */
	__u64 desc;		/* in: struct smbdirect_buffer_descriptor_v1 * */
	__u64 id;		/* out: registration id, never 0 */
};

#define SMBDIRECT_IOC_REGISTER _IOWR(SMBDIRECT_IOC_MAGIC, 2, struct smbdirect_register)

/*
 * Invalidate (LOCAL_INV, waited for) and unpin a registration; ENOENT for
 * an id this socket does not hold (never registered, already
 * deregistered, or released when the RDMA device went away). state tells
 * what had happened to it: SMBDIRECT_REG_STATE_REMOTE_INVALIDATED if the
 * peer had already invalidated it with SEND_WITH_INVALIDATE: then there is
 * no second invalidation, no work request at all, and the pages are
 * unpinned before the call returns. Otherwise the call returns once the
 * LOCAL_INV completed (the peer's access has ended) and the pages are
 * unpinned. On a connection that is over, nothing is posted: the memory
 * region is destroyed, which ends the peer's access as well. Only state
 * is written back (a first-version struct without cookie is accepted).
 */
struct smbdirect_deregister {
	__u32 size;
	__u32 flags;		/* in: SMBDIRECT_DEREG_* */
	__u64 id;		/* in */
	__u32 state;		/* out: SMBDIRECT_REG_STATE_* */
	__u32 reserved;
	__u64 cookie;		/* in, SMBDIRECT_DEREG_ASYNC: for the completion */
};

/*
 * SMBDIRECT_DEREG_ASYNC: do not wait for LOCAL_INV. size must cover
 * cookie (else EINVAL); ENOMEM if the completion cannot be allocated
 * (nothing happened then). The id is gone at once and state is written as
 * above; the call never blocks on the device. When the peer's access has
 * ended and the pages are unpinned and uncharged, exactly one struct
 * smbdirect_rdma_completion with cookie and bytes the registered length
 * reaches the socket's error queue (see SMBDIRECT_CMSG_RDMA_COMPLETION;
 * poll reports EPOLLERR): status 0 once the LOCAL_INV completed, or
 * already queued when the call returns if the peer had invalidated the
 * registration (state says so) and nothing of it was in flight; status
 * -errno (ECONNRESET, or the connection's error) if the connection ended
 * before the invalidation completed: the memory region was destroyed
 * instead, which ends the peer's access too. The memory must not be
 * reused, nor assumed unpinned, before that completion. Until then the
 * registration counts against RLIMIT_MEMLOCK, and until the completion
 * is reaped against max_registrations: a process that never reaps gets
 * ENOBUFS from REGISTER, the error queue does not grow without bound.
 * close() ends every pending one (completions nobody can reap any more
 * are freed); when only the transport goes (RDMA device removal) they
 * complete with its error. Nothing stays pinned after close().
 */
#define SMBDIRECT_DEREG_ASYNC	0x1

#define SMBDIRECT_REG_STATE_REMOTE_INVALIDATED 0x1

#define SMBDIRECT_IOC_DEREGISTER _IOWR(SMBDIRECT_IOC_MAGIC, 3, struct smbdirect_deregister)

/*
 * RDMA between local memory and the peer's descriptors. READV: from the
 * peer's buffers into iov (SMB2 WRITE on a server); WRITEV: from iov into
 * the peer's buffers (SMB2 READ on a server). The descriptors are used in
 * order, as one stream of bytes, as are the iovec segments (zero-length
 * segments are skipped); min(local bytes, descriptor bytes) are moved and
 * returned in bytes. Each RDMA operation stays within one descriptor and
 * the negotiated max_read_write_size, and at most initiator_depth RDMA
 * READs are outstanding (GET_PARAMS shows both). Blocks until done (and,
 * while the socket holds SMBDIRECT_OPT_RDMA_INFLIGHT transfers, for a
 * slot); several threads may each have one in flight on a socket.
 * Errors beyond the common ones:
 *   EINVAL     no local bytes, no descriptors, a descriptor of length 0
 *              or whose offset + length overflows
 *   EMSGSIZE   more than SMBDIRECT_IOV_MAX segments or SMBDIRECT_DESC_MAX
 *              descriptors, local lengths whose sum overflows, or more
 *              than max_read_write_size bytes to move (the limit applies
 *              to the bytes moved, min(local, descriptors))
 *   EFAULT     an unmapped local range, or read-only memory for READV
 *   EOPNOTSUPP READV on a connection whose peer serves no RDMA READ
 *              (initiator_depth 0 in GET_PARAMS); nothing was moved
 *   EACCES     the peer refused the access (a dead token, a range outside
 *              its registration, or a direction it did not grant)
 *   ECONNRESET, ETIMEDOUT, EIO  the transfer failed at the transport level
 *              (iWARP reports a refusal this way: a TERMINATE ends the
 *              connection); ETIMEDOUT also when nothing completed for 30 s
 *   EINTR      a signal arrived (restarted under SA_RESTART); operations
 *              already posted are waited for before the call returns
 * Any failure of an RDMA operation ends the connection (RC transport
 * rules): later calls fail with the connection's error (ECONNRESET), or
 * EPIPE once that error was reported or the peer's disconnect came first.
 * iWARP does not acknowledge an RDMA WRITE: a WRITEV the peer refuses can
 * return success there, and the peer then ends the connection; the
 * memory outside the peer's registration is untouched either way.
 */
struct smbdirect_rdma {
	__u32 size;
	__u32 flags;		/* none defined */
	__u64 iov;		/* struct iovec * */
	__u32 iov_count;
	__u32 desc_count;
	__u64 desc;		/* const struct smbdirect_buffer_descriptor_v1 * */
	__u64 bytes;		/* out */
};

#define SMBDIRECT_IOC_RDMA_READV _IOWR(SMBDIRECT_IOC_MAGIC, 4, struct smbdirect_rdma)
#define SMBDIRECT_IOC_RDMA_WRITEV _IOWR(SMBDIRECT_IOC_MAGIC, 5, struct smbdirect_rdma)

/*
 * sendmsg control message, level SOL_SMBDIRECT, data __u32 token (as in
 * the descriptor, host order of the decoded __le32): the message goes out
 * with SEND_WITH_INVALIDATE of the peer's token on its last PDU (the
 * server's answer to SMB2_CHANNEL_RDMA_V1_INVALIDATE), so the peer sees
 * the token invalidated by the time it reads the message. SOCK_SEQPACKET:
 * the message of this sendmsg. SOCK_STREAM: the message this sendmsg
 * continues if one is partly written (its prefix included), else the next
 * one it starts. A second token for the same message, any other control
 * message, or a length other than 4 is EINVAL.
 */
#define SMBDIRECT_CMSG_SEND_INVALIDATE 1

/*
 * Asynchronous RDMA: many transfers in flight per socket, none blocking.
 *
 * Submission: sendmsg() with control messages level SOL_SMBDIRECT (or
 * 289), type SMBDIRECT_CMSG_RDMA, data one struct smbdirect_rdma_args each
 * (cmsg_len exactly CMSG_LEN(sizeof(struct smbdirect_rdma_args))), at most
 * SMBDIRECT_RDMA_CMSG_MAX per call, optionally with message bytes and
 * SMBDIRECT_CMSG_SEND_INVALIDATE. The transfers are taken in cmsg order,
 * all or none, once they and the whole message have room (the slots,
 * and every byte of the call in SO_SNDBUF, which an empty queue always
 * offers), then the message as by send(). A call takes its transfers
 * exactly once or not at all: every error, EAGAIN, EINTR and a restart
 * (ERESTARTSYS under SA_RESTART, io_uring's retry) come before anything
 * is taken; once the transfers are taken the call returns the message
 * bytes it took (0 without a message: a zero-length send is allowed when
 * it carries transfers), possibly fewer than asked or none (SOCK_STREAM:
 * a fault in the message's bytes, the connection's end; the next call
 * reports that error), and the rest of the message goes as by send().
 * Argument errors are those of RDMA_READV/WRITEV, plus:
 *   EAGAIN     MSG_DONTWAIT or O_NONBLOCK, and the socket holds
 *              SMBDIRECT_OPT_RDMA_INFLIGHT transfers (a blocking call
 *              waits for reaping, within SO_SNDTIMEO), or the message has
 *              no room in SO_SNDBUF: nothing was taken. POLLOUT comes
 *              back with room for the message, EPOLLWRBAND
 *              (SMBDIRECT_RDMA_EVENTS_WRBAND) with a slot
 *   ENOMEM     the pages would exceed RLIMIT_MEMLOCK (as for REGISTER)
 *   EBADF      SMBDIRECT_RDMA_F_FILE with an fd not open for reading
 *   EINVAL     more transfers in one call than SMBDIRECT_OPT_RDMA_INFLIGHT,
 *              an unknown op or flag, reserved not 0,
 *              SMBDIRECT_RDMA_F_FILE on a READ, on what is not a regular
 *              file, or a range beyond its end (as the file is at
 *              submission); a cookie is not checked
 *   EOPNOTSUPP SMBDIRECT_RDMA_F_FILE on a file without a page cache of
 *              its own (DAX, overlayfs, FUSE in direct I/O mode, ...)
 *   ENODATA    SMBDIRECT_RDMA_F_FILE, and part of the range is not in the
 *              page cache: readahead of the range has started (none on
 *              tmpfs or a memfd, where holes stay unallocated); the
 *              caller reads the bytes itself (a file server: its own
 *              asynchronous read, then a transfer from memory). The
 *              submission never waits for the file's I/O.
 *   EACCES, EPERM  SMBDIRECT_RDMA_F_FILE refused by read()'s own checks
 *              (rw_verify_area(): an LSM, fanotify's permission events)
 * Fall back to reading the file on EOPNOTSUPP and ENODATA.
 * Once taken, a transfer never blocks anyone: its local pages are pinned
 * or, for a file, referenced in the page cache, both charged as
 * registrations are (per user against RLIMIT_MEMLOCK, VmPin) until
 * reaped, and its RDMA operations are
 * posted as the send queue and the peer's ORD (initiator_depth) allow, in
 * submission order across transfers.
 *
 * Ordering: every RDMA WRITE of a transfer taken before a message (by an
 * earlier sendmsg, or earlier in the same one) is posted before that
 * message's first PDU, so RC ordering places the data in the peer's
 * memory before the peer sees the message: a server sends its SMB2 READ
 * response, with SEND_WITH_INVALIDATE, right behind its RDMA WRITE without
 * waiting. RDMA READ data is complete only at the transfer's completion.
 *
 * From a file (SMBDIRECT_RDMA_F_FILE, WRITE only): the source is length
 * bytes at offset of the regular file open for reading at fd, taken from
 * its page cache when all of them are there (ENODATA otherwise, above; no
 * copy through user space): the server READ path of cached data. As
 * read() does, submission asks rw_verify_area() first and then reports
 * the access (fsnotify's IN_ACCESS, the atime). The pages are referenced
 * until the completion; a file
 * written after submission may send old or new bytes; truncated after
 * submission, a chunk already posted may still send what it held, a chunk
 * whose pages left the file is not sent and the transfer completes with
 * ESTALE. RDMA READ into a file is not offered: the page cache would have
 * to take data the peer has not yet sent into locked, uptodate pages;
 * READ into registered or pinned user memory, then pwrite() or
 * io_uring's write.
 *
 * Completion: each transfer completes exactly once, with its cookie,
 * 0 or -errno (the errors of RDMA_READV/WRITEV; ECANCELED when the
 * connection ended before any of it was posted) and the bytes moved.
 * Completions queue on the socket's error queue, as MSG_ZEROCOPY's do:
 * poll reports EPOLLERR while one is waiting (epoll reports EPOLLERR
 * whatever was asked for), or EPOLLPRI with SMBDIRECT_RDMA_EVENTS_PRI
 * (SMBDIRECT_OPT_RDMA_EVENTS), and recvmsg(MSG_ERRQUEUE), which never blocks,
 * returns 0 with one control message SMBDIRECT_CMSG_RDMA_COMPLETION
 * holding as many struct smbdirect_rdma_completion as fit in msg_control
 * (MSG_CTRUNC if more wait), or EAGAIN when none waits. io_uring's
 * IORING_OP_SENDMSG and IORING_OP_RECVMSG (with MSG_ERRQUEUE) do both.
 * Closing the socket ends every transfer; after the connection ended the
 * remaining ones complete with its error and stay to be reaped. A
 * transfer holds its SMBDIRECT_OPT_RDMA_INFLIGHT slot until reaped.
 *
 * The RDMA_READV/WRITEV ioctls are transfers of this kind that the
 * calling thread waits for (their completion never reaches the error
 * queue); they no longer exclude each other.
 */
#define SMBDIRECT_CMSG_RDMA		2
#define SMBDIRECT_CMSG_RDMA_COMPLETION	3

#define SMBDIRECT_RDMA_READ	1	/* peer's buffers to local: SMB2 WRITE */
#define SMBDIRECT_RDMA_WRITE	2	/* local to the peer's buffers: SMB2 READ */

#define SMBDIRECT_RDMA_F_FILE	0x1	/* local side: fd, offset, length */

#define SMBDIRECT_RDMA_CMSG_MAX	64	/* SMBDIRECT_CMSG_RDMA per sendmsg */

struct smbdirect_rdma_args {
	__u64 cookie;		/* returned in the completion */
	__u32 op;		/* SMBDIRECT_RDMA_READ or _WRITE */
	__u32 flags;		/* SMBDIRECT_RDMA_F_* */
	__u64 desc;		/* const struct smbdirect_buffer_descriptor_v1 * */
	__u32 desc_count;
	__u32 iov_count;	/* local memory: struct iovec array */
	__u64 iov;		/* const struct iovec * (0 with F_FILE) */
	__s32 fd;		/* F_FILE: the file; else -1 or 0, ignored */
	__u32 reserved;		/* 0 */
	__u64 offset;		/* F_FILE: file offset */
	__u64 length;		/* F_FILE: bytes; else 0 */
};

struct smbdirect_rdma_completion {
	__u64 cookie;
	__s32 status;		/* 0 or -errno */
	__u32 reserved;
	__u64 bytes;		/* moved */
};

/*
 * Two entry points to the same socket.
 *
 * Ours: socket(<AF_SMBDIRECT>, SOCK_STREAM or SOCK_SEQPACKET, 0), the
 * family number read from SMBDIRECT_FAMILY_SYSFS; options and the control
 * message at level SOL_SMBDIRECT (0x5344), as above. Works wherever the
 * module loads, with SOCK_SEQPACKET too.
 *
 * Upstream's proposal (Stefan Metzmacher, netdev/linux-cifs, Nov 2025 and
 * Apr 2026; not merged): socket(AF_INET or AF_INET6, SOCK_STREAM,
 * IPPROTO_SMBDIRECT), an inet stream socket to SELinux, seccomp and
 * systemd's RestrictAddressFamilies; options at level 289 as well as
 * SOL_SMBDIRECT, and the remote-invalidation control message as level 289,
 * type SMBDIRECT_CMSG_IPPROTO_REMOTE_INVALIDATE, data struct
 * smbdirect_cmsg_remote_invalidate (SMBDIRECT_CMSG_SEND_INVALIDATE at
 * SOL_SMBDIRECT is accepted on these sockets too). Module parameters
 * inet_protocol and sol_level hold the numbers (0: that entry point off);
 * when the running kernel already serves the protocol number the module
 * leaves it alone (one line in dmesg) and AF_SMBDIRECT stays.
 * /sys/module/af_smbdirect/parameters/inet_protocol reads 0 then.
 * An AF_INET socket takes only IPv4 addresses, an AF_INET6 one IPv6 and
 * IPv4-mapped ones (not with IPV6_V6ONLY), and a listener on :: takes IPv4
 * connections unless IPV6_V6ONLY is set, as TCP.
 */
#define SMBDIRECT_IPPROTO 257
#define SMBDIRECT_SOL_IPPROTO 289
#ifndef IPPROTO_SMBDIRECT
#define IPPROTO_SMBDIRECT SMBDIRECT_IPPROTO
#endif
#define SMBDIRECT_INET_PROTOCOL_SYSFS "/sys/module/af_smbdirect/parameters/inet_protocol"

struct smbdirect_cmsg_remote_invalidate {
	__u32 remote_token;
};

#define SMBDIRECT_CMSG_IPPROTO_REMOTE_INVALIDATE \
	_IOW('S', 0x20, struct smbdirect_cmsg_remote_invalidate)

#endif /* _UAPI_LINUX_SMBDIRECT_H */
