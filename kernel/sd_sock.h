/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The AF_SMBDIRECT socket: one struct sock, one rdma_cm id, one RC QP and
 * one protocol-core connection.
 *
 * Locking, outermost first:
 *   lock_sock(sk)     syscalls, transport teardown. Never taken by rdma_cm
 *                     handlers, completions or works that teardown waits for.
 *   sd_list_mutex     the global list the ib_client walks on device removal.
 *   sd->lock          the core, the rx/tx queues, the buffer pools, the
 *                     registration list and the RDMA send-queue budget;
 *                     taken (with BHs off) from completions, rdma_cm
 *                     handlers and works. The core is only ever called
 *                     under it.
 *   sd_accept_lock    every listener's child lists and child->parent.
 *
 * The counters' own (sd_genl.c, sd_diag.c), outermost first:
 *   sd_stats_lock     every network namespace's totals (module-wide and
 *                     per device) and its list of live sockets; folding
 *                     a socket's counters into them.
 *   sd_all_lock       the list of every socket (sd_diag.c).
 *   sd->lock          as above, to read or rebase one socket's counters.
 * Neither of the first two is ever taken under sd->lock.
 */
#ifndef AF_SMBDIRECT_SOCK_H
#define AF_SMBDIRECT_SOCK_H

#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/ipv6.h>
#include <net/inet_sock.h>
#include <net/sock.h>
#include <net/tcp_states.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "sd_trace.h"
#include "uapi/linux/smbdirect.h"
#include "smbdirect_core.h"
#include "sd_params.h"

enum sd_state {
	SD_UNCONNECTED,	/* fresh, possibly bound */
	SD_LISTENING,
	SD_CONNECTING,	/* rdma_cm or negotiation under way */
	SD_CONNECTED,	/* negotiated */
	SD_CLOSED,	/* disconnected or failed; never leaves */
};

struct sd_sock;

/* One receive buffer: max_receive_size bytes, DMA-mapped while it lives. */
struct sd_rx_buf {
	struct ib_cqe cqe;
	struct sd_sock *sd;
	struct list_head node;	/* on sd->rx_deferred while not posted */
	u8 *data;
	u64 dma;
};

/* One send buffer: max_send_size bytes, holds one PDU. */
struct sd_tx_buf {
	struct ib_cqe cqe;
	struct sd_sock *sd;
	struct list_head node;	/* on sd->tx_free while not posted */
	u8 *data;
	u64 dma;
	u32 unacked;		/* bytes of the user's it carries (SIOCOUTQ) */
	u64 posted_ns;		/* when posted: the RTT sample (TCP_INFO) */
};

/*
 * One upper-layer message on the rx queue (reassembled, waiting for
 * recvmsg), or on the tx queue (filled by sendmsg, fragmented by the core)
 * one message or a piece of one: a STREAM message is staged in pieces
 * that SO_SNDBUF has room for (sd_tx.c), each freed once its bytes are in
 * PDUs, while the core fragments the whole message as one.
 */
struct sd_msg {
	struct list_head node;
	u32 len;	/* bytes in data: the message, or tx: the piece */
	u32 filled;	/* tx: bytes copied from the user so far */
	u32 done;	/* tx: bytes handed to PDUs; rx: bytes read (stream) */
	u32 msg_len;	/* tx: the whole message's length */
	u32 msg_off;	/* tx: where the piece starts in the message */
	bool inv;	/* tx: last PDU goes with SEND_WITH_INVALIDATE of inv_token */
	u32 inv_token;
	u64 rw_fence;	/* tx: sd->rw_taken when queued (sd_rw_fenced()) */
	u8 *data;
};

/* tx: the piece holds the message's last bytes. */
static inline bool sd_msg_last(const struct sd_msg *m)
{
	return m->msg_off + m->len == m->msg_len;
}

struct sd_reg;

/* A completion for MSG_ERRQUEUE (sd_rw.c). */
struct sd_rw_cqe {
	struct list_head node;	/* sd->rw_cq, under sd->lock */
	struct smbdirect_rdma_completion c;
	bool slot;		/* holds an SMBDIRECT_OPT_RDMA_INFLIGHT slot */
	bool reg_slot;		/* DEREGISTER_ASYNC's: a max_registrations one */
};

/* SMBDIRECT_OPT_RDMA_INFLIGHT's default. */
#define SD_RW_INFLIGHT_DEFAULT 64

/* Released tokens a socket remembers for a crossing invalidation. */
#define SD_RETIRED_TOKENS 16

/*
 * Counters of one socket (SMBDIRECT_A_STATS_*), under sd->lock. Entry i is
 * attribute SMBDIRECT_A_STATS_MSGS_TX + i, up to SD_STAT_ERR_RDMA; the
 * counting points are in sd_genl.c's comment. SD_STAT_CONNECTIONS (0 or
 * 1 per socket) only adds up to the module and device totals. The
 * listener's counters follow it (SMBDIRECT_A_STATS_LISTEN_*).
 */
enum sd_stat {
	SD_STAT_MSGS_TX,
	SD_STAT_MSGS_RX,
	SD_STAT_PDUS_TX,
	SD_STAT_PDUS_RX,
	SD_STAT_BYTES_TX,
	SD_STAT_BYTES_RX,
	SD_STAT_RDMA_READS,
	SD_STAT_RDMA_READ_BYTES,
	SD_STAT_RDMA_WRITES,
	SD_STAT_RDMA_WRITE_BYTES,
	SD_STAT_REGISTRATIONS,
	SD_STAT_REMOTE_INVALIDATIONS,
	SD_STAT_SEND_INVALIDATES,
	SD_STAT_KEEPALIVES_TX,
	SD_STAT_CREDIT_STALLS,
	SD_STAT_ERR_PROTOCOL,
	SD_STAT_ERR_TIMEOUT,
	SD_STAT_ERR_REFUSED,
	SD_STAT_ERR_TRANSPORT,
	SD_STAT_ERR_DEVICE,
	SD_STAT_ERR_RDMA,
	SD_STAT_CONNECTIONS,
	SD_STAT_LISTEN_OVERFLOWS,
	SD_STAT_LISTEN_HALF_OPEN_DROPS,
	SD_STAT_NR
};

struct sd_stats {
	u64 v[SD_STAT_NR];
};

/*
 * The RDMA device a socket uses (the last one: a client whose connect()
 * failed may retry through another), under sd->lock. A copy, so that
 * nothing reads sd->cm_id, which teardown destroys, to show it.
 */
struct sd_dev_info {
	bool known;
	/* The sd_genl.c device entry it counts on (and keeps), or NULL. */
	struct sd_stats_dev *entry;
	u32 index;		/* ib_device.index */
	u32 port;
	u32 transport;		/* SMBDIRECT_TRANSPORT_* */
	char name[IB_DEVICE_NAME_MAX];
};

struct sd_sock {
	/*
	 * First: sk_alloc() allocates struct sd_sock. A socket made by
	 * socket(AF_INET[6], SOCK_STREAM, IPPROTO_SMBDIRECT) comes from
	 * inet_create()/inet6_create(), which write inet_sock fields.
	 */
	union {
		struct sock sk;
		struct inet_sock inet;
	};
	enum sd_state state;
	int type;		/* SOCK_STREAM or SOCK_SEQPACKET */
	struct sd_opts opts;	/* local parameters, fixed at connect/listen */
	struct sd_tcp_opts tcp_opts;	/* IPPROTO_TCP level: accepted, no effect */
	/*
	 * The memory cgroup the connection's buffers are charged to: the
	 * creating task's (a listener's, for its children), referenced until
	 * the destructor; NULL for kernel sockets and without CONFIG_MEMCG.
	 */
	struct mem_cgroup *memcg;
	/* Written under sd->lock (sd_cm.c); readers in other tasks take it. */
	struct sockaddr_storage local;
	struct sockaddr_storage peer;
	bool bound;

	struct rdma_cm_id *cm_id;
	struct list_head dev_node;	/* sd_list, while cm_id exists */
	struct list_head rm_node;	/* device removal batch */

	/* Transport resources; NULL until created, NULL again after teardown. */
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct sd_rx_buf *rx_bufs;
	unsigned int rx_count;
	struct sd_tx_buf *tx_bufs;
	unsigned int tx_count;
	u8 initiator_depth;
	u8 responder_resources;
	u32 transport;		/* SMBDIRECT_TRANSPORT_* */

	/* Serialises creating transport resources with tearing them down. */
	struct mutex res_mutex;
	bool qp_used;		/* connect/accept ran: the QP needs draining */
	bool active;		/* we sent the connect request (rdma_connect) */
	/*
	 * iWARP in a network namespace: rdma_connect() must run in the
	 * connect() caller's context (see sd_cm_route_resolved()). Under
	 * sd->lock: the caller (a reference), whether it waits in connect(),
	 * and a connect the route handler left for it.
	 */
	struct task_struct *connector;
	bool connector_waits;
	bool connect_deferred;
	bool connect_twork_queued;
	struct callback_head connect_twork;
	bool id_owned_by_cm;	/* rdma_cm destroys cm_id (handler returned 1) */
	bool id_destroying;	/* teardown destroys cm_id; under lock */

	spinlock_t lock;	/* see the order at the top of this file */
	struct sd_core_conn core;
	struct sd_core_params params;	/* valid once state is SD_CONNECTED */
	bool core_ready;	/* sd_core_conn_init() done */
	bool dying;		/* teardown started: queue no more work */
	bool failed;		/* sd_fail() ran */
	bool cm_connected;	/* rdma_cm ESTABLISHED, not yet disconnected */
	bool on_ready;		/* child queued for accept(); sd_accept_lock */
	/*
	 * Child counted as half-open in parent->nr_half_open and in its
	 * namespace's (sd_stats_ns_half_open()); sd_accept_lock.
	 */
	bool half_open;
	bool wc_failed;		/* a completion failed; see sd_wc_error() */
	bool peer_closed;	/* rdma_cm DISCONNECTED: an orderly close */
	/*
	 * Accepted child: rdma_cm's ESTABLISHED is due by this (jiffies),
	 * 0 once it came or for other sockets. sd->lock.
	 */
	unsigned long establish_by;
	unsigned int negotiate_timeout_ms;	/* the core's, as configured */

	/* Receive side. */
	struct list_head rx_queue;	/* complete messages (struct sd_msg) */
	unsigned int rx_queued;		/* bytes on rx_queue */
	unsigned int rx_msgs;		/* messages on rx_queue */
	struct sd_msg *rx_asm;		/* message being reassembled */
	struct list_head rx_deferred;	/* buffers held back: reader is slow */

	/* Send side. */
	struct list_head tx_queue;	/* messages (pieces) waiting for PDUs */
	unsigned int tx_queued;		/* bytes on tx_queue: what SO_SNDBUF bounds */
	/*
	 * Bytes of the user's in posted sends not yet completed (STREAM:
	 * with their messages' 4-byte prefixes), and those completed: with
	 * the staged bytes, what SIOCOUTQ and TCP_INFO report. sd->lock.
	 */
	unsigned int tx_unacked;
	u64 tx_acked;
	struct sd_rtt rtt;		/* send completion times; sd->lock */
	struct list_head tx_free;	/* idle send buffers */
	struct list_head tx_done;	/* sent messages to free outside the lock */
	struct sd_msg *tx_cur;		/* the piece the core is fragmenting */
	struct sd_msg *tx_fill;		/* STREAM: the piece sendmsg fills, not full */
	u32 tx_fill_len;		/* STREAM: bytes parsed, not yet in a piece */
	u32 tx_msg_len;			/* STREAM: the length of their message */
	u32 tx_want;			/* bytes the last sd_tx_wait() waited room for */
	struct sd_core_stream_parser tx_parser;
	/*
	 * STREAM: a sendmsg() owns the fields above from tx_fill on, its
	 * waits (which release the socket lock) included; lock_sock().
	 */
	bool tx_writer;

	/*
	 * RDMA (sd_mr.c, sd_rw.c). An ioctl holds a user reference (sd_res_get)
	 * instead of lock_sock() while it waits for completions; teardown
	 * waits for the references after draining the QP, so the QP, PD and
	 * MRs outlive every ioctl that uses them.
	 */
	atomic_t res_users;
	wait_queue_head_t rdma_wait;	/* completions, budgets, res_users */
	u32 reg_wr_free;	/* send-queue room for REG_MR/LOCAL_INV; sd->lock */
	u32 rw_depth;		/* rdma_rw contexts in flight */
	u32 rw_pages;		/* pages per context */
	u32 rw_wrs;		/* send-queue WRs one context may take */
	struct list_head regs;	/* struct sd_reg, under sd->lock */
	/*
	 * Deregistered, not yet released (sd_reg.dying), under sd->lock: a
	 * SEND_WITH_INVALIDATE of their tokens may still arrive legitimately.
	 */
	struct list_head regs_dying;
	/*
	 * Tokens of released registrations the peer was allowed to
	 * invalidate, the newest SD_RETIRED_TOKENS, under sd->lock: its
	 * SEND_WITH_INVALIDATE may still cross our DEREGISTER after the
	 * release (sd_mr_remote_invalidated()). retired_valid: which hold one.
	 */
	u32 retired_tokens[SD_RETIRED_TOKENS];
	u16 retired_valid;
	u8 retired_next;
	/* live, being registered, or deregistered and not yet unpinned */
	unsigned int nr_regs;
	/*
	 * SMBDIRECT_DEREG_ASYNC completions queued and not reaped, under
	 * sd->lock: each keeps its registration's max_registrations slot, so
	 * that a process that never reaps gets ENOBUFS from REGISTER instead
	 * of growing the error queue without bound.
	 */
	unsigned int nr_reg_cqes;
	/*
	 * Deregistrations (sd_mr.c), under sd->lock: those with LOCAL_INVs
	 * waiting for send-queue room, and SMBDIRECT_DEREG_ASYNC ones whose
	 * work requests all completed, for mr_work to unpin and complete.
	 */
	struct list_head reg_invq;
	struct list_head reg_done;
	struct work_struct mr_work;
	/* Idle MRs for the next registrations (ib_mr.qp_entry); sd->lock. */
	struct list_head mr_idle;
	u32 mr_idle_nr;
	u64 pinned_bytes;	/* pages they pin, in bytes; sd->lock */
	u64 next_reg_id;
	/*
	 * Transfers (sd_rw.c), under sd->lock: those with chunks to post in
	 * order, those finished for rw_work to release, and completions for
	 * MSG_ERRQUEUE. rw_taken counts transfers taken, rw_posted is the
	 * last one all posted (or cancelled): messages queued after a
	 * transfer wait for it.
	 */
	struct list_head rw_pending;
	struct list_head rw_finished;
	struct list_head rw_posted_chunks;	/* posted, not completed */
	struct list_head rw_orphans;	/* see sd_rw_flush_stuck() */
	struct list_head rw_cq;
	struct work_struct rw_work;
	u64 rw_taken;
	u64 rw_posted;
	u32 rw_slots;		/* of rw_depth, free now */
	u32 rw_post_failed;	/* chunks posted part-way, not yet taken */
	u32 rw_reads;		/* RDMA READ contexts posted */
	u32 rw_inflight;	/* transfers taken and not reaped */
	u32 rw_limit;		/* SMBDIRECT_OPT_RDMA_INFLIGHT; lock_sock() */
	u32 rw_events;		/* SMBDIRECT_OPT_RDMA_EVENTS; lock_sock() */
	bool tx_inv_pending;	/* STREAM: token for the next message */
	u32 tx_inv_token;

	struct delayed_work timer_work;
	struct delayed_work reset_work;	/* sd_wc_error()'s verdict */
	struct work_struct disconnect_work;
	struct work_struct destroy_work;
	/* rdma_cm's DEVICE_REMOVAL for removed_id (sd->lock): tear it down */
	struct work_struct remove_work;
	struct rdma_cm_id *removed_id;
	/* close() without SO_LINGER: the queue drains after the fd is gone */
	struct delayed_work close_work;
	unsigned long close_deadline;	/* jiffies; then queued data is dropped */

	/* Listener side, under sd_accept_lock. */
	struct sd_sock *parent;		/* a listener's child not yet accepted */
	struct list_head child_node;
	struct list_head pending;	/* children negotiating */
	struct list_head ready;		/* children negotiated, for accept() */
	unsigned int nr_children;	/* on pending and ready */
	unsigned int nr_half_open;	/* on pending: children with half_open */

	/* Diagnostics (sd_diag.c, sd_genl.c). */
	u32 all_seq;			/* number on its namespace's xarray, set once */
	struct sd_dev_info dev;		/* sd->lock */
	struct sd_stats stats;		/* sd->lock */
	/* The totals of the socket's network namespace, from creation to destruct. */
	struct sd_stats_ns *stats_ns;	/* sd_stats_lock and sd->lock */
#if IS_ENABLED(CONFIG_IPV6)
	/* Last (see SD_PROTO_IPV6_PINFO): inet6_create() sets it up. */
	struct ipv6_pinfo inet6;
#endif
};

static inline struct sd_sock *sd_sk(const struct sock *sk)
{
	return container_of(sk, struct sd_sock, sk);
}

/*
 * Every state change: sk_state follows as for TCP (TCP_LISTEN, SYN_SENT,
 * ESTABLISHED, CLOSE), so SO_ACCEPTCONN and socket diagnostics read it.
 */
static inline void sd_set_state(struct sd_sock *sd, enum sd_state state)
{
	static const unsigned char tcp[] = {
		[SD_UNCONNECTED] = TCP_CLOSE,
		[SD_LISTENING] = TCP_LISTEN,
		[SD_CONNECTING] = TCP_SYN_SENT,
		[SD_CONNECTED] = TCP_ESTABLISHED,
		[SD_CLOSED] = TCP_CLOSE,
	};

	if (sd->state != state)
		trace_af_smbdirect_state(&sd->sk, sd->state, state);
	sd->state = state;
	WRITE_ONCE(sd->sk.sk_state, tcp[state]);
}

/* The UAPI's name of a state (SMBDIRECT_OPT_INFO, the netlink dump). */
static inline u32 sd_uapi_state(enum sd_state state)
{
	static const u8 uapi[] = {
		[SD_UNCONNECTED] = SMBDIRECT_STATE_UNCONNECTED,
		[SD_LISTENING] = SMBDIRECT_STATE_LISTENING,
		[SD_CONNECTING] = SMBDIRECT_STATE_CONNECTING,
		[SD_CONNECTED] = SMBDIRECT_STATE_CONNECTED,
		[SD_CLOSED] = SMBDIRECT_STATE_CLOSED,
	};

	return uapi[state];
}

void sd_stats_count(struct sd_sock *sd, enum sd_stat stat, u64 n);

static inline void sd_stat_add(struct sd_sock *sd, enum sd_stat stat, u64 n)
	__must_hold(&sd->lock)
{
	sd->stats.v[stat] += n;
	sd_stats_count(sd, stat, n);
}

/*
 * The error counter of a connection's failure (sd_fail()'s -errno), or
 * SD_STAT_NR for one not counted (0: orderly; unreachable, no route,
 * local resources).
 */
static inline enum sd_stat sd_stat_of_errno(int err)
{
	switch (err) {
	case -EPROTO:
		return SD_STAT_ERR_PROTOCOL;
	case -ETIMEDOUT:
		return SD_STAT_ERR_TIMEOUT;
	case -ECONNREFUSED:
		return SD_STAT_ERR_REFUSED;
	case -ECONNRESET:
		return SD_STAT_ERR_TRANSPORT;
	case -ENETDOWN:
		return SD_STAT_ERR_DEVICE;
	}
	return SD_STAT_NR;
}

extern spinlock_t sd_accept_lock;

/*
 * The connection's buffers (receive and send buffers, staged and
 * reassembled messages): charged to the socket's memory cgroup, and
 * failing with ENOMEM at its memory.max instead of invoking the OOM killer.
 */
#define SD_GFP_CONN (GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/*
 * Charges SD_GFP_CONN allocations to sd->memcg whatever the context (a
 * syscall of another process, rdma_cm's handlers, completion works) until
 * sd_memcg_leave(). Sleeping contexts only.
 */
static inline struct mem_cgroup *sd_memcg_enter(struct sd_sock *sd)
{
	return set_active_memcg(sd->memcg);
}

static inline void sd_memcg_leave(struct mem_cgroup *old)
{
	set_active_memcg(old);
}

/* af_smbdirect.c */
int sd_ioctl_copy_in(void *dst, const void __user *src, size_t len);
int sd_proto_init(void);
void sd_proto_exit(void);
int sd_sock_create(struct net *net, struct socket *sock, int family,
		   int protocol, int kern);
struct sd_sock *sd_sock_alloc(struct net *net, struct socket *sock, int family,
			      int protocol, int type, int kern);
extern struct proto sd_proto;
extern const struct proto_ops sd_inet_ops;
extern const struct proto_ops sd_inet6_ops;

/* af_inet.c: the IPPROTO_SMBDIRECT entry point */
int sd_inet_init(void);
void sd_inet_exit(void);
int sd_sol_level_ipproto(void);

/* A level our options answer at: SMBDIRECT_SOL or upstream's 289. */
static inline bool sd_sol_level(int level)
{
	return level == SMBDIRECT_SOL ||
	       (sd_sol_level_ipproto() && level == sd_sol_level_ipproto());
}

/* sd_conn.c: connection state shared by every context */
extern struct workqueue_struct *sd_wq;
int sd_conn_init(void);
void sd_conn_exit(void);
void sd_conn_setup(struct sd_sock *sd);
int sd_core_start(struct sd_sock *sd, unsigned int role);
void sd_wake(struct sd_sock *sd);
void sd_fail(struct sd_sock *sd, int err);
void sd_wc_error(struct sd_sock *sd);
void sd_post_failed(struct sd_sock *sd, int err);
void sd_do_actions(struct sd_sock *sd, const struct sd_core_actions *act);
void sd_child_drop(struct sd_sock *child, bool lock);
void sd_child_link(struct sd_sock *parent, struct sd_sock *child);
void sd_child_forget(struct sd_sock *child);
void sd_child_unlink(struct sd_sock *child);
void sd_child_ready(struct sd_sock *sd);
u64 sd_now_ms(void);

/* sd_cm.c */
int sd_cm_create_id(struct sd_sock *sd);
int sd_cm_bind(struct sd_sock *sd, struct sockaddr *addr);
int sd_cm_connect(struct sd_sock *sd, struct sockaddr *addr);
void sd_cm_connect_deferred(struct sd_sock *sd);
void sd_cm_poll_connect(struct sd_sock *sd);
void sd_cm_connector_put(struct sd_sock *sd);
int sd_cm_listen(struct sd_sock *sd, int backlog);

/* sd_qp.c */
int sd_qp_create(struct sd_sock *sd);
u32 sd_transport_kind(struct ib_device *dev, u32 port);
u64 sd_peer_iova(u64 dma_iova);
void sd_transport_teardown(struct sd_sock *sd);
void sd_queues_free(struct sd_sock *sd, bool rx);
int sd_rx_post(struct sd_sock *sd, struct sd_rx_buf *rx);

/* sd_rx.c */
int sd_recvmsg(struct socket *sock, struct msghdr *msg, size_t len, int flags);
bool sd_rx_readable(struct sd_sock *sd);
void sd_rx_done(struct ib_cq *cq, struct ib_wc *wc);
void sd_rx_release_deferred(struct sd_sock *sd);
void sd_msg_free(struct sd_msg *m);
struct sd_msg *sd_msg_alloc(struct sd_sock *sd, u32 len);

/* sd_tx.c */
int sd_sendmsg(struct socket *sock, struct msghdr *msg, size_t len);
bool sd_tx_writable(struct sd_sock *sd);
void sd_tx_done(struct ib_cq *cq, struct ib_wc *wc);
void sd_tx_flush(struct sd_sock *sd);
void sd_tx_reap(struct sd_sock *sd);
bool sd_tx_drained(struct sd_sock *sd);
u32 sd_tx_outq(struct sd_sock *sd);
u32 sd_rx_inq(struct sd_sock *sd);

/* sd_mr.c */
int sd_ioctl_register(struct sd_sock *sd, void __user *arg);
int sd_ioctl_deregister(struct sd_sock *sd, void __user *arg);
struct iovec *sd_iov_import(u64 uptr, u32 nr);
int sd_iov_user_total(const struct iovec *iov, u32 nr, u64 max, u64 *total);
void sd_mr_remote_invalidated(struct sd_sock *sd, u32 rkey);
void sd_mr_release_all(struct sd_sock *sd);
void sd_mr_setup(struct sd_sock *sd);
int sd_res_get(struct sd_sock *sd, bool connected);
void sd_res_put(struct sd_sock *sd);
int sd_wc_errno(enum ib_wc_status status);
int sd_conn_errno(struct sd_sock *sd);
bool sd_qp_unusable(struct sd_sock *sd);
bool sd_conn_over(struct sd_sock *sd);
bool sd_wait_wrs(struct sd_sock *sd, bool (*done)(void *arg), void *arg,
		 unsigned long stall);
void sd_res_wait_idle(struct sd_sock *sd);
unsigned int sd_rw_flush_stuck(struct sd_sock *sd);
void sd_rw_orphans_free(struct sd_sock *sd);
bool sd_rw_busy(struct sd_sock *sd);
struct sd_iov_cursor;
int sd_pin_region(struct sd_iov_cursor *c, u64 bytes, u32 pages,
		  unsigned int gup, struct page **pagev, unsigned long *pinned,
		  struct scatterlist *sgl, u32 *nents);

/* sd_rw.c */
int sd_ioctl_rdma(struct sd_sock *sd, void __user *arg, bool read);
void sd_rw_setup(struct sd_sock *sd);
void sd_rw_teardown(struct sd_sock *sd);
int sd_rw_wait_slots(struct sd_sock *sd, u32 nr, long *timeo);
int sd_rw_submit(struct sd_sock *sd, const struct smbdirect_rdma_args *args, u32 nr);
bool sd_rw_fenced(struct sd_sock *sd, u64 fence);
bool sd_rw_cq_ready(struct sd_sock *sd);
bool sd_rw_slot_free(struct sd_sock *sd);
int sd_rw_recv_errqueue(struct sd_sock *sd, struct msghdr *msg);
void sd_rw_cq_free(struct sd_sock *sd);
struct sd_rw_cqe *sd_rw_cqe_alloc(void);
void sd_rw_cqe_post(struct sd_sock *sd, struct sd_rw_cqe *e, u64 cookie,
		    int status, u64 bytes, bool slot);

/* sd_diag.c */
void sd_inet_addrs_sync(struct sd_sock *sd);
int sd_diag_init(int protocol);
void sd_diag_exit(void);

/* sd_genl.c */
int sd_genl_init(void);
void sd_genl_exit(void);
void sd_stats_dev_bind(struct sd_sock *sd, struct ib_device *dev, u32 port);
int sd_stats_sock_init(struct sd_sock *sd);
unsigned int sd_all_collect(struct net *net, unsigned long after,
			    bool (*match)(struct sd_sock *sd, void *arg), void *arg,
			    struct sock **batch, unsigned int max);
void sd_stats_sock_free(struct sd_sock *sd);
bool sd_genl_state_wanted(bool have_mask, u32 mask, u32 uapi_state);
unsigned int *sd_stats_ns_half_open(struct sd_sock *sd);

/* sd_device.c */
int sd_device_init(void);
void sd_device_exit(void);
void sd_list_add(struct sd_sock *sd);
void sd_list_del(struct sd_sock *sd);
void sd_list_set_id(struct sd_sock *sd, struct rdma_cm_id *id);
void sd_device_removal(struct sd_sock *sd, struct rdma_cm_id *id);
void sd_removal_fn(struct work_struct *work);

#endif
