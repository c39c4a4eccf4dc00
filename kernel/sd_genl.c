// SPDX-License-Identifier: GPL-2.0
/*
 * The af_smbdirect generic netlink family (uapi/linux/smbdirect_genl.h):
 * every socket with its addresses, device, parameters, credits, queues,
 * registrations and counters (SMBDIRECT_CMD_SOCK_GET, what `smbdirect ss`
 * shows), and the totals of those counters, module-wide and per device,
 * of the caller's network namespace (SMBDIRECT_CMD_STATS_GET and _RESET,
 * for `smbdirect stats`).
 *
 * What the counters count (struct sd_stats, one per socket, sd->lock):
 *   MSGS_TX, BYTES_TX   a message once its last PDU was posted (all of it
 *                       handed to the QP), with its payload bytes (neither
 *                       PDU headers nor SOCK_STREAM's length prefixes).
 *   MSGS_RX, BYTES_RX   a message once reassembled (queued for recvmsg).
 *   PDUS_TX             every data transfer PDU posted: with data, credit
 *                       grants and keepalives (not the negotiate PDUs).
 *   PDUS_RX             every data transfer PDU the core accepted.
 *   KEEPALIVES_TX       PDUs posted with SMB_DIRECT_RESPONSE_REQUESTED:
 *                       keepalive probes, and data PDUs that ask for an
 *                       answer because our credits ran low.
 *   SEND_INVALIDATES    PDUs posted as IB_WR_SEND_WITH_INV.
 *   CREDIT_STALLS       sendmsg() calls that found the send queue full
 *                       (SO_SNDBUF: the peer's credits do not come back
 *                       fast enough) and had to wait or got EAGAIN, where
 *                       the af_smbdirect_send_stall tracepoint fires; a
 *                       STREAM message staged in pieces counts once for
 *                       every piece that waited.
 *   RDMA_READS/WRITES   RDMA_READV/WRITEV calls that moved their bytes,
 *   and their _BYTES    and those bytes; ERR_RDMA: calls whose transfer
 *                       failed (not argument errors, not a signal).
 *   REGISTRATIONS       REGISTER calls that succeeded.
 *   REMOTE_INVALIDATIONS  receives that invalidated one of our tokens.
 *   ERR_*               the connection's failure (sd_fail(), once per
 *                       connection), by errno: sd_stat_of_errno().
 *   CONNECTIONS         (totals only) sockets that reached SD_CONNECTED.
 *   LISTEN_OVERFLOWS    (listeners) connect requests rejected because the
 *                       backlog was full (sd_cm_request()).
 *   LISTEN_HALF_OPEN_DROPS  (listeners) connect requests rejected at the
 *                       listen_half_open_max or netns_half_open_max bound.
 *
 * Totals are per network namespace (struct sd_stats_ns): a reader sees
 * its own namespace's traffic and the devices its sockets used, never
 * another tenant's (issue #26), and a reset is the namespace's own
 * business, so CAP_NET_ADMIN over that namespace suffices for it. Each
 * event a socket counts (sd_stat_add(), under sd->lock) goes to the
 * socket's own counters and to per-CPU counters of its namespace and of
 * the device entry it counts on: a total is the sum over the CPUs minus
 * what the last STATS_RESET saw (base). So neither reading nor resetting
 * the totals visits a socket (issue #45 item 7j: they walked every socket
 * of the namespace under the global lock with bottom halves off), and no
 * event is counted twice or lost: a socket's destructor has nothing to
 * fold, a socket moving to another device counts there from then on.
 * Live sockets keep their own counters through a reset.
 *
 * A namespace's live sockets are also in its xarray (socks), by a number
 * given at creation (all_seq, cyclic, increasing until it wraps): the
 * SOCK_GET and sock_diag dumps walk only the caller's namespace, in
 * batches each resumed where the last one ended (sd_all_collect(); item
 * 7d: each batch rescanned every namespace's sockets from the start).
 *
 * A namespace's totals live from its creation (or the module's load) until
 * both the namespace is gone and its last socket is freed: a kernel
 * socket holds no reference on its namespace.
 *
 * Devices are keyed by ib_device.index, never by pointer: an entry (name
 * as last seen, counters) outlives its device, until a reset frees the
 * entries no live socket uses any more, or the namespace's totals go.
 * There is at most one entry per namespace and device index a socket
 * ever used (the index grows when a device is added again, so re-adding
 * devices adds entries). A socket uses only devices its namespace may
 * (rdma_cm resolves through rdma_dev_access_netns()), so a namespace's
 * entries name only devices it could see when they were used.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/percpu.h>
#include <linux/u64_stats_sync.h>
#include <linux/xarray.h>
#include <linux/sock_diag.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uidgid.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <rdma/ib_verbs.h>

#include "uapi/linux/smbdirect.h"
#include "uapi/linux/smbdirect_genl.h"
#include "compat.h"
#include "sd_sock.h"
#include "test_hooks.h"

/* struct sd_stats' first entries are the attributes, in the same order. */
static_assert(SMBDIRECT_A_STATS_MSGS_TX + SD_STAT_ERR_RDMA == SMBDIRECT_A_STATS_ERR_RDMA);
static_assert(SMBDIRECT_A_STATS_MSGS_TX + SD_STAT_CREDIT_STALLS ==
	      SMBDIRECT_A_STATS_CREDIT_STALLS);
static_assert(SD_STAT_ERR_RDMA + 1 == SD_STAT_CONNECTIONS);
/* The listener's counters: after CONNECTIONS, in the same order. */
static_assert(SMBDIRECT_A_STATS_LISTEN_OVERFLOWS - SD_STAT_LISTEN_OVERFLOWS ==
	      SMBDIRECT_A_STATS_LISTEN_HALF_OPEN_DROPS - SD_STAT_LISTEN_HALF_OPEN_DROPS);
static_assert(SD_STAT_LISTEN_HALF_OPEN_DROPS + 1 == SD_STAT_NR);

/* Counters of one namespace or device entry, per CPU. */
struct sd_stats_pcpu {
	u64_stats_t v[SD_STAT_NR];
	struct u64_stats_sync syncp;
};

struct sd_stats_dev {
	struct list_head node;
	u32 index;		/* ib_device.index */
	u32 sockets;		/* live sockets whose sd->dev.entry is this */
	char name[IB_DEVICE_NAME_MAX];
	struct sd_stats_pcpu __percpu *pcpu;	/* since the entry was made */
	struct sd_stats base;	/* the sums at the last reset */
};

/* One network namespace's totals; sd_stats_lock unless said otherwise. */
struct sd_stats_ns {
	struct sd_stats_pcpu __percpu *pcpu;	/* lockless */
	struct sd_stats base;		/* the sums at the last reset */
	struct list_head devs;		/* struct sd_stats_dev */
	unsigned int nr_devs;
	/* Live sockets by sd->all_seq; the xarray's own lock (bottom halves). */
	struct xarray socks;
	u32 next_seq;			/* socks' cyclic allocation */
	unsigned int nr_socks;
	/* nr_socks, and 1 while the namespace lives: the last frees it. */
	unsigned int users;
	/* Half-open children of its listeners: sd_accept_lock, not ours. */
	unsigned int half_open;
};

/* What net_generic() keeps for us in each namespace. */
struct sd_stats_net {
	struct sd_stats_ns *ns;
};

static DEFINE_SPINLOCK(sd_stats_lock);
static unsigned int sd_stats_net_id __read_mostly;

static struct sd_stats_ns *sd_stats_ns_of(const struct net *net)
{
	return ((struct sd_stats_net *)net_generic(net, sd_stats_net_id))->ns;
}

static struct sd_stats_dev *sd_stats_dev_find(struct sd_stats_ns *ns, u32 index)
	__must_hold(&sd_stats_lock)
{
	struct sd_stats_dev *e;

	list_for_each_entry(e, &ns->devs, node)
		if (e->index == index)
			return e;
	return NULL;
}

static struct sd_stats_pcpu __percpu *sd_stats_pcpu_alloc(void)
{
	struct sd_stats_pcpu __percpu *pcpu;
	int cpu;

	pcpu = alloc_percpu_gfp(struct sd_stats_pcpu, GFP_KERNEL_ACCOUNT);
	if (pcpu)
		for_each_possible_cpu(cpu)
			u64_stats_init(&per_cpu_ptr(pcpu, cpu)->syncp);
	return pcpu;
}

static void sd_stats_pcpu_add(struct sd_stats_pcpu __percpu *pcpu, enum sd_stat stat, u64 n)
{
	struct sd_stats_pcpu *p = get_cpu_ptr(pcpu);
	unsigned long flags;

	/* A writer of this CPU's counters may be interrupted by another. */
	flags = u64_stats_update_begin_irqsave(&p->syncp);
	u64_stats_add(&p->v[stat], n);
	u64_stats_update_end_irqrestore(&p->syncp, flags);
	put_cpu_ptr(pcpu);
}

/* The counters summed over the CPUs, minus base. */
static void sd_stats_pcpu_sum(struct sd_stats_pcpu __percpu *pcpu,
			      const struct sd_stats *base, struct sd_stats *out)
{
	struct sd_stats one;
	unsigned int start, i;
	int cpu;

	memset(out, 0, sizeof(*out));
	for_each_possible_cpu(cpu) {
		const struct sd_stats_pcpu *p = per_cpu_ptr(pcpu, cpu);

		do {
			start = u64_stats_fetch_begin(&p->syncp);
			for (i = 0; i < SD_STAT_NR; i++)
				one.v[i] = u64_stats_read(&p->v[i]);
		} while (u64_stats_fetch_retry(&p->syncp, start));
		for (i = 0; i < SD_STAT_NR; i++)
			out->v[i] += one.v[i];
	}
	if (base)
		for (i = 0; i < SD_STAT_NR; i++)
			out->v[i] -= base->v[i];
}

/* An event of sd's, for its namespace's and its device's totals. */
void sd_stats_count(struct sd_sock *sd, enum sd_stat stat, u64 n)
	__must_hold(&sd->lock)
{
	if (sd->stats_ns)
		sd_stats_pcpu_add(sd->stats_ns->pcpu, stat, n);
	if (sd->dev.entry)
		sd_stats_pcpu_add(sd->dev.entry->pcpu, stat, n);
}

static void sd_stats_dev_free(struct sd_stats_dev *e)
{
	if (e) {
		free_percpu(e->pcpu);
		kfree(e);
	}
}

static void sd_stats_ns_free(struct sd_stats_ns *ns)
{
	struct sd_stats_dev *e, *tmp;

	list_for_each_entry_safe(e, tmp, &ns->devs, node) {
		list_del(&e->node);
		sd_stats_dev_free(e);
	}
	WARN_ON_ONCE(!xa_empty(&ns->socks));
	xa_destroy(&ns->socks);
	free_percpu(ns->pcpu);
	kfree(ns);
}

/* A namespace gets its totals when it is made, or when the module loads. */
static int __net_init sd_stats_net_init(struct net *net)
{
	struct sd_stats_net *sn = net_generic(net, sd_stats_net_id);
	struct sd_stats_ns *ns = sd_kzalloc_obj(ns, GFP_KERNEL_ACCOUNT);

	if (!ns)
		return -ENOMEM;
	ns->pcpu = sd_stats_pcpu_alloc();
	if (!ns->pcpu) {
		kfree(ns);
		return -ENOMEM;
	}
	INIT_LIST_HEAD(&ns->devs);
	xa_init_flags(&ns->socks, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	ns->users = 1;
	sn->ns = ns;
	return 0;
}

static void __net_exit sd_stats_net_exit(struct net *net)
{
	struct sd_stats_ns *ns = sd_stats_ns_of(net);
	bool last;

	spin_lock_bh(&sd_stats_lock);
	last = !--ns->users;
	spin_unlock_bh(&sd_stats_lock);
	if (last)
		sd_stats_ns_free(ns);
}

static struct pernet_operations sd_stats_net_ops = {
	.init = sd_stats_net_init,
	.exit = sd_stats_net_exit,
	.id = &sd_stats_net_id,
	.size = sizeof(struct sd_stats_net),
};

/*
 * The count of half-open children in sd's network namespace (sd_conn.c),
 * under sd_accept_lock. The totals live as long as sd does.
 */
unsigned int *sd_stats_ns_half_open(struct sd_sock *sd)
{
	return &sd->stats_ns->half_open;
}

/*
 * Every new socket: on its namespace's list (for the dumps) and counted in
 * its totals from now on. 0 or -ENOMEM (the socket is then freed).
 */
int sd_stats_sock_init(struct sd_sock *sd)
{
	struct sd_stats_ns *ns = sd_stats_ns_of(sock_net(&sd->sk));
	u32 seq;
	int err;

	err = xa_alloc_cyclic_bh(&ns->socks, &seq, sd, xa_limit_32b, &ns->next_seq,
				 GFP_KERNEL_ACCOUNT);
	if (err < 0)
		return err;
	sd->all_seq = seq;
	spin_lock_bh(&sd_stats_lock);
	ns->users++;
	ns->nr_socks++;
	sd->stats_ns = ns;
	spin_unlock_bh(&sd_stats_lock);
	return 0;
}

/*
 * The socket uses dev (a QP is created on it, or its cm_id was bound to
 * it): shown from now on, and its counters from now on go to dev's total.
 * May sleep; the caller holds what keeps dev alive (the cm_id on it).
 */
void sd_stats_dev_bind(struct sd_sock *sd, struct ib_device *dev, u32 port)
{
	struct sd_stats_ns *ns = sd->stats_ns;
	struct sd_stats_dev *fresh, *e, *old;
	u32 transport = sd_transport_kind(dev, port);

	fresh = sd_kzalloc_obj(fresh, GFP_KERNEL_ACCOUNT);
	if (fresh) {
		fresh->pcpu = sd_stats_pcpu_alloc();
		if (!fresh->pcpu) {
			kfree(fresh);
			fresh = NULL;
		}
	}
	spin_lock_bh(&sd_stats_lock);
	e = sd_stats_dev_find(ns, dev->index);
	if (!e && fresh) {
		e = fresh;
		fresh = NULL;
		e->index = dev->index;
		list_add_tail(&e->node, &ns->devs);
		ns->nr_devs++;
	}
	/* A renamed device shows its new name (a racing rename: either). */
	if (e)
		strscpy(e->name, dev->name, sizeof(e->name));

	spin_lock(&sd->lock);
	/* Its past stays with the old device's total; it counts on e now. */
	old = sd->dev.entry;
	if (old != e) {
		if (old)
			old->sockets--;
		sd->dev.entry = e;
		if (e)
			e->sockets++;
	}
	sd->dev.known = true;
	sd->dev.index = dev->index;
	sd->dev.port = port;
	sd->dev.transport = transport;
	strscpy(sd->dev.name, dev->name, sizeof(sd->dev.name));
	spin_unlock(&sd->lock);
	spin_unlock_bh(&sd_stats_lock);
	sd_stats_dev_free(fresh);
}

/*
 * From the socket's destructor: off its namespace's list and totals (its
 * events are in them already). Not there if its creation failed.
 */
void sd_stats_sock_free(struct sd_sock *sd)
{
	struct sd_stats_ns *ns = sd->stats_ns;
	bool last = false;

	if (!ns)
		return;
	xa_erase_bh(&ns->socks, sd->all_seq);
	spin_lock_bh(&sd_stats_lock);
	spin_lock(&sd->lock);
	if (sd->dev.entry)
		sd->dev.entry->sockets--;
	sd->dev.entry = NULL;
	sd->stats_ns = NULL;
	spin_unlock(&sd->lock);
	ns->nr_socks--;
	last = !--ns->users;
	spin_unlock_bh(&sd_stats_lock);
	if (last)
		sd_stats_ns_free(ns);
}

/*
 * Up to max sockets of net numbered above the cursor (0: from the start)
 * for which match(sd, arg) holds (called under the xarray's lock, so it
 * may only read what needs no socket lock), each held: the caller fills them
 * outside the lock, sock_put()s them, and resumes after the all_seq of
 * the last one it is done with. A cursor by number, not by position,
 * neither repeats nor skips a socket when others go meanwhile (until the
 * numbers wrap, after 2^32 sockets). Sockets already being destroyed are
 * left out. The caller's namespace is alive (it asked), so are its totals.
 */
unsigned int sd_all_collect(struct net *net, unsigned long after,
			    bool (*match)(struct sd_sock *sd, void *arg), void *arg,
			    struct sock **batch, unsigned int max)
{
	struct sd_stats_ns *ns = sd_stats_ns_of(net);
	XA_STATE(xas, &ns->socks, after + 1);
	unsigned int n = 0;
	struct sd_sock *sd;

	if (!max || after >= U32_MAX)
		return 0;
	xas_lock_bh(&xas);
	xas_for_each(&xas, sd, U32_MAX) {
		sd_test_socket_walked();
		if (match && !match(sd, arg))
			continue;
		if (!refcount_inc_not_zero(&sd->sk.sk_refcnt))
			continue;
		batch[n++] = &sd->sk;
		if (n == max)
			break;
	}
	xas_unlock_bh(&xas);
	return n;
}

/* A socket in uapi_state is wanted by a dump with (or without) a mask. */
bool sd_genl_state_wanted(bool have_mask, u32 mask, u32 uapi_state)
{
	if (!have_mask)
		return true;
	return uapi_state < 32 && (mask & BIT(uapi_state));
}

static struct genl_family sd_genl_family;

/* ---- SMBDIRECT_CMD_SOCK_GET -------------------------------------------- */

struct sd_genl_addr {
	u16 family;		/* 0: none */
	u16 port;		/* host order */
	u8 addr[16];
};

/* One socket as read under its locks, put into the message after. */
struct sd_genl_snap {
	u8 state;
	u8 type;
	u16 family;
	bool negotiated;
	bool core_ready;
	bool listener;
	struct sd_genl_addr local, peer;
	struct sd_dev_info dev;
	u32 params[SMBDIRECT_A_PARAMS_MAX + 1];
	struct sd_core_stats core;
	u32 receives_held;
	u32 send_target, receive_target;
	u32 rx_queued, tx_queued, regs;
	u64 pinned_bytes;
	struct sd_stats stats;
	u32 pending, ready, backlog;
};

struct sd_genl_dump {
	unsigned long cursor;	/* all_seq of the last socket done */
	bool admin;		/* CAP_NET_ADMIN: every socket */
	bool uid_ok;		/* else: the requester's own, if it is one user */
	kuid_t uid;
	bool have_mask;
	u32 state_mask;
	bool have_dev;
	char dev_name[IB_DEVICE_NAME_MAX];
	struct sd_genl_snap snap;
};

/* What cb->ctx holds for a dump: the state .start allocated. */
struct sd_genl_dump_ctx {
	struct sd_genl_dump *d;
};

static_assert(sizeof(struct sd_genl_dump_ctx) <=
	      sizeof_field(struct netlink_callback, ctx));

static struct sd_genl_dump *sd_genl_dump_of(struct netlink_callback *cb)
{
	return ((struct sd_genl_dump_ctx *)cb->ctx)->d;
}

static const struct nla_policy sd_genl_sock_get_policy[SMBDIRECT_A_SOCK_MAX + 1] = {
	[SMBDIRECT_A_SOCK_STATE_MASK] = { .type = NLA_U32 },
	[SMBDIRECT_A_SOCK_DEV_NAME] = { .type = NLA_NUL_STRING,
					.len = IB_DEVICE_NAME_MAX - 1 },
};

/*
 * STATS_GET and STATS_RESET take no attribute: with strict validation any
 * attribute is refused (type 0 and types above 1 as unknown, 1 by
 * NLA_REJECT). Spelled out because 6.1 does not parse ops without
 * maxattr at all, where later kernels fill in a reject-all policy.
 */
static const struct nla_policy sd_genl_no_attrs_policy[2] = {
	[1] = { .type = NLA_REJECT },
};

static void sd_genl_addr_of(struct sd_genl_addr *a,
			    const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		a->family = AF_INET;
		a->port = ntohs(sin->sin_port);
		memcpy(a->addr, &sin->sin_addr, sizeof(sin->sin_addr));
	} else if (ss->ss_family == AF_INET6) {
		a->family = AF_INET6;
		a->port = ntohs(sin6->sin6_port);
		memcpy(a->addr, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
	}
}

/* Everything of sd the message shows, read under sd->lock (and the accept lock). */
static void sd_genl_snapshot(struct sd_sock *sd, struct sd_genl_snap *s)
{
	struct sock *sk = &sd->sk;
	struct sd_rx_buf *rx;
	u32 *p = s->params;

	memset(s, 0, sizeof(*s));
	s->type = sd->type;
	s->family = sk->sk_family;

	spin_lock_bh(&sd->lock);
	s->state = sd_uapi_state(sd->state);
	s->listener = sd->state == SD_LISTENING;
	/* As SMBDIRECT_IOC_GET_PARAMS: once negotiated, for good. */
	s->negotiated = sd->state == SD_CONNECTED ||
			(sd->state == SD_CLOSED && sd->params.version);
	sd_genl_addr_of(&s->local, &sd->local);
	/* As getpeername(): a connected socket's, or a closed one that was. */
	if (s->negotiated)
		sd_genl_addr_of(&s->peer, &sd->peer);
	s->dev = sd->dev;
	if (s->negotiated) {
		p[SMBDIRECT_A_PARAMS_VERSION] = sd->params.version;
		p[SMBDIRECT_A_PARAMS_MAX_SEND_SIZE] = sd->params.max_send_size;
		p[SMBDIRECT_A_PARAMS_MAX_RECEIVE_SIZE] = sd->params.max_receive_size;
		p[SMBDIRECT_A_PARAMS_MAX_FRAGMENTED_SEND_SIZE] =
			sd->params.max_fragmented_send_size;
		p[SMBDIRECT_A_PARAMS_MAX_FRAGMENTED_RECEIVE_SIZE] =
			sd->params.max_fragmented_receive_size;
		p[SMBDIRECT_A_PARAMS_MAX_READ_WRITE_SIZE] = sd->params.max_read_write_size;
		p[SMBDIRECT_A_PARAMS_SEND_CREDIT_TARGET] = sd->params.peer_credit_target;
		p[SMBDIRECT_A_PARAMS_RECEIVE_CREDIT_MAX] = sd->opts.receive_credit_max;
		p[SMBDIRECT_A_PARAMS_INITIATOR_DEPTH] = sd->initiator_depth;
		p[SMBDIRECT_A_PARAMS_RESPONDER_RESOURCES] = sd->responder_resources;
		p[SMBDIRECT_A_PARAMS_KEEPALIVE_INTERVAL] =
			sock_flag(sk, SOCK_KEEPOPEN) ? sd->opts.keepalive_interval : 0;
		s->send_target = sd->params.peer_credit_target;
		s->receive_target = sd->params.receive_credit_target;
	}
	/* As SMBDIRECT_OPT_INFO; a listener's core never carries PDUs. */
	s->core_ready = sd->core_ready && !s->listener;
	if (s->core_ready) {
		sd_core_get_stats(&sd->core, &s->core);
		list_for_each_entry(rx, &sd->rx_deferred, node)
			s->receives_held++;
	}
	s->rx_queued = sd->rx_queued;
	s->tx_queued = READ_ONCE(sd->tx_queued);
	s->regs = sd->nr_regs;
	s->pinned_bytes = sd->pinned_bytes;
	s->stats = sd->stats;
	spin_unlock_bh(&sd->lock);

	if (s->listener) {
		struct sd_sock *child;

		spin_lock_bh(&sd_accept_lock);
		list_for_each_entry(child, &sd->pending, child_node)
			s->pending++;
		list_for_each_entry(child, &sd->ready, child_node)
			s->ready++;
		spin_unlock_bh(&sd_accept_lock);
		s->backlog = READ_ONCE(sk->sk_max_ack_backlog);
	}
}

static int sd_genl_put_addr(struct sk_buff *skb, const struct sd_genl_addr *a,
			    int addr_attr, int port_attr)
{
	int len = a->family == AF_INET ? 4 : 16;

	if (nla_put(skb, addr_attr, len, a->addr) ||
	    nla_put_u16(skb, port_attr, a->port))
		return -EMSGSIZE;
	return 0;
}

/*
 * The counters of one socket (totals: with SOCKETS and CONNECTIONS; the
 * LISTEN_* ones for totals and listeners).
 */
static int sd_genl_put_stats(struct sk_buff *skb, int attr,
			     const struct sd_stats *st, bool totals, u64 sockets,
			     bool listener)
{
	struct nlattr *nest = nla_nest_start(skb, attr);
	unsigned int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i <= SD_STAT_ERR_RDMA; i++)
		if (nla_put_u64_64bit(skb, SMBDIRECT_A_STATS_MSGS_TX + i, st->v[i],
				      SMBDIRECT_A_STATS_PAD))
			goto cancel;
	for (i = SD_STAT_LISTEN_OVERFLOWS; (totals || listener) && i < SD_STAT_NR; i++)
		if (nla_put_u64_64bit(skb, SMBDIRECT_A_STATS_LISTEN_OVERFLOWS +
				      i - SD_STAT_LISTEN_OVERFLOWS, st->v[i],
				      SMBDIRECT_A_STATS_PAD))
			goto cancel;
	if (totals &&
	    (nla_put_u64_64bit(skb, SMBDIRECT_A_STATS_SOCKETS, sockets,
			       SMBDIRECT_A_STATS_PAD) ||
	     nla_put_u64_64bit(skb, SMBDIRECT_A_STATS_CONNECTIONS,
			       st->v[SD_STAT_CONNECTIONS], SMBDIRECT_A_STATS_PAD)))
		goto cancel;
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int sd_genl_put_u32s(struct sk_buff *skb, int attr, const u32 *v,
			    int first, int last)
{
	struct nlattr *nest = nla_nest_start(skb, attr);
	int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = first; i <= last; i++) {
		if (nla_put_u32(skb, i, v[i])) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int sd_genl_put_credits(struct sk_buff *skb, const struct sd_genl_snap *s)
{
	struct nlattr *nest = nla_nest_start(skb, SMBDIRECT_A_SOCK_CREDITS);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, SMBDIRECT_A_CREDITS_SEND, s->core.send_credits) ||
	    nla_put_u32(skb, SMBDIRECT_A_CREDITS_PEER, s->core.peer_credits) ||
	    nla_put_u32(skb, SMBDIRECT_A_CREDITS_RECEIVES_POSTED,
			s->core.receives_posted) ||
	    nla_put_u32(skb, SMBDIRECT_A_CREDITS_RECEIVES_HELD, s->receives_held) ||
	    nla_put_u32(skb, SMBDIRECT_A_CREDITS_SENDS_IN_FLIGHT,
			s->core.sends_in_flight))
		goto cancel;
	/* The targets exist once negotiated. */
	if (s->negotiated &&
	    (nla_put_u32(skb, SMBDIRECT_A_CREDITS_SEND_TARGET, s->send_target) ||
	     nla_put_u32(skb, SMBDIRECT_A_CREDITS_RECEIVE_TARGET, s->receive_target)))
		goto cancel;
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/*
 * sock_gen_cookie(), through what inet_diag uses: __sock_gen_cookie() is
 * not exported to modules.
 */
static u64 sd_genl_cookie(struct sock *sk)
{
	u32 c[2];

	sock_diag_save_cookie(sk, c);
	return (u64)c[1] << 32 | c[0];
}

static int sd_genl_put_sock(struct sk_buff *skb, struct netlink_callback *cb,
			    struct sock *sk, const struct sd_genl_snap *s)
{
	struct user_namespace *ns = sk_user_ns(NETLINK_CB(cb->skb).sk);
	const struct sd_genl_addr *af = s->local.family ? &s->local : &s->peer;
	struct nlattr *nest;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &sd_genl_family, NLM_F_MULTI, SMBDIRECT_CMD_SOCK_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u8(skb, SMBDIRECT_A_SOCK_STATE, s->state) ||
	    nla_put_u8(skb, SMBDIRECT_A_SOCK_TYPE, s->type) ||
	    nla_put_u16(skb, SMBDIRECT_A_SOCK_FAMILY, s->family) ||
	    nla_put_u32(skb, SMBDIRECT_A_SOCK_UID,
			from_kuid_munged(ns, READ_ONCE(sk->sk_uid))) ||
	    nla_put_u64_64bit(skb, SMBDIRECT_A_SOCK_INODE, sock_i_ino(sk),
			      SMBDIRECT_A_SOCK_PAD) ||
	    nla_put_u64_64bit(skb, SMBDIRECT_A_SOCK_COOKIE, sd_genl_cookie(sk),
			      SMBDIRECT_A_SOCK_PAD))
		goto cancel;
	if (af->family && nla_put_u16(skb, SMBDIRECT_A_SOCK_ADDR_FAMILY, af->family))
		goto cancel;
	if (s->local.family &&
	    sd_genl_put_addr(skb, &s->local, SMBDIRECT_A_SOCK_LOCAL_ADDR,
			     SMBDIRECT_A_SOCK_LOCAL_PORT))
		goto cancel;
	if (s->peer.family &&
	    sd_genl_put_addr(skb, &s->peer, SMBDIRECT_A_SOCK_PEER_ADDR,
			     SMBDIRECT_A_SOCK_PEER_PORT))
		goto cancel;
	if (s->dev.known &&
	    (nla_put_string(skb, SMBDIRECT_A_SOCK_DEV_NAME, s->dev.name) ||
	     nla_put_u32(skb, SMBDIRECT_A_SOCK_DEV_PORT, s->dev.port) ||
	     nla_put_u8(skb, SMBDIRECT_A_SOCK_TRANSPORT, s->dev.transport)))
		goto cancel;
	if (s->negotiated &&
	    sd_genl_put_u32s(skb, SMBDIRECT_A_SOCK_PARAMS, s->params,
			     SMBDIRECT_A_PARAMS_VERSION, SMBDIRECT_A_PARAMS_MAX))
		goto cancel;
	if (s->core_ready && sd_genl_put_credits(skb, s))
		goto cancel;
	if (nla_put_u32(skb, SMBDIRECT_A_SOCK_RX_QUEUED, s->rx_queued) ||
	    nla_put_u32(skb, SMBDIRECT_A_SOCK_TX_QUEUED, s->tx_queued) ||
	    nla_put_u32(skb, SMBDIRECT_A_SOCK_REGS, s->regs) ||
	    nla_put_u64_64bit(skb, SMBDIRECT_A_SOCK_PINNED_BYTES, s->pinned_bytes,
			      SMBDIRECT_A_SOCK_PAD) ||
	    sd_genl_put_stats(skb, SMBDIRECT_A_SOCK_STATS, &s->stats, false, 0,
			      s->listener))
		goto cancel;
	if (s->listener) {
		nest = nla_nest_start(skb, SMBDIRECT_A_SOCK_ACCEPT);
		if (!nest ||
		    nla_put_u32(skb, SMBDIRECT_A_ACCEPT_PENDING, s->pending) ||
		    nla_put_u32(skb, SMBDIRECT_A_ACCEPT_READY, s->ready) ||
		    nla_put_u32(skb, SMBDIRECT_A_ACCEPT_BACKLOG, s->backlog))
			goto cancel;
		nla_nest_end(skb, nest);
	}
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* 0 and nothing added when the dump does not want sk; -EMSGSIZE when full. */
static int sd_genl_sock_fill(struct sk_buff *skb, struct netlink_callback *cb,
			     struct sd_genl_dump *d, struct sock *sk)
{
	struct sd_genl_snap *s = &d->snap;

	if (!d->admin &&
	    (!d->uid_ok || !uid_eq(READ_ONCE(sk->sk_uid), d->uid)))
		return 0;
	sd_genl_snapshot(sd_sk(sk), s);
	if (!sd_genl_state_wanted(d->have_mask, d->state_mask, s->state))
		return 0;
	if (d->have_dev && (!s->dev.known || strcmp(s->dev.name, d->dev_name)))
		return 0;
	return sd_genl_put_sock(skb, cb, sk, s);
}

/*
 * The requester's identity and filters, taken once: .start runs in the
 * sendmsg() of the request, while the dump goes on from whichever task
 * reads the netlink socket next (a descriptor can be passed on), so
 * .dumpit never looks at current. Without CAP_NET_ADMIN (asked of the
 * requester and of the netlink socket's opener, by netlink_net_capable())
 * a dump shows the sockets owned (sk_uid, what sock_i_uid() read before
 * 6.17) by the requester's effective uid, and only if the netlink
 * socket's opener (its file's credentials: who reads the replies) is the
 * same user. A set-uid program made to write a request into somebody
 * else's netlink socket so shows that somebody nothing of its owner's.
 */
static int sd_genl_sock_start(struct netlink_callback *cb)
{
	struct sd_genl_dump_ctx *ctx = (struct sd_genl_dump_ctx *)cb->ctx;
	struct nlattr *tb[SMBDIRECT_A_SOCK_MAX + 1];
	const struct sock *nlsk = NETLINK_CB(cb->skb).sk;
	const struct file *file;
	struct sd_genl_dump *d;
	int err;

	/*
	 * Already validated by genetlink with this policy (strictly: the op
	 * sets no GENL_DONT_VALIDATE_* flag); parsed again here because
	 * where genetlink keeps the result differs between 6.1 and later
	 * kernels. It cannot fail now.
	 */
	err = nlmsg_parse(cb->nlh, GENL_HDRLEN, tb, SMBDIRECT_A_SOCK_MAX,
			  sd_genl_sock_get_policy, cb->extack);
	if (err)
		return err;
	d = sd_kzalloc_obj(d, GFP_KERNEL_ACCOUNT);
	if (!d)
		return -ENOMEM;
	d->admin = netlink_net_capable(cb->skb, CAP_NET_ADMIN);
	d->uid = current_euid();
	file = nlsk && nlsk->sk_socket ? nlsk->sk_socket->file : NULL;
	d->uid_ok = file && uid_eq(file->f_cred->euid, d->uid);
	if (tb[SMBDIRECT_A_SOCK_STATE_MASK]) {
		d->have_mask = true;
		d->state_mask = nla_get_u32(tb[SMBDIRECT_A_SOCK_STATE_MASK]);
	}
	if (tb[SMBDIRECT_A_SOCK_DEV_NAME]) {
		d->have_dev = true;
		nla_strscpy(d->dev_name, tb[SMBDIRECT_A_SOCK_DEV_NAME],
			    sizeof(d->dev_name));
	}
	ctx->d = d;
	return 0;
}

static int sd_genl_sock_done(struct netlink_callback *cb)
{
	kfree(sd_genl_dump_of(cb));
	return 0;
}

#define SD_GENL_BATCH 16

/*
 * The caller's network namespace's sockets, in sd_all order, resumed
 * after d->cursor: batches of held sockets, each filled outside the
 * list's lock (as sd_diag_dump() does).
 */
static int sd_genl_sock_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct sd_genl_dump *d = sd_genl_dump_of(cb);
	struct net *net = sock_net(skb->sk);
	struct sock *batch[SD_GENL_BATCH];
	unsigned int n, i;

	do {
		n = sd_all_collect(net, d->cursor, NULL, NULL, batch, SD_GENL_BATCH);
		for (i = 0; i < n; i++) {
			struct sock *sk = batch[i];
			unsigned long seq = sd_sk(sk)->all_seq;
			int err = sd_genl_sock_fill(skb, cb, d, sk);

			sock_put(sk);
			if (err) {
				while (++i < n)
					sock_put(batch[i]);
				/* Full: the rest next time (one always fits). */
				return skb->len ? skb->len : err;
			}
			d->cursor = seq;
		}
		cond_resched();
	} while (n == SD_GENL_BATCH);
	return skb->len;
}

/* ---- SMBDIRECT_CMD_STATS_GET and _RESET -------------------------------- */

struct sd_genl_dev_snap {
	u32 index;
	u32 sockets;
	char name[IB_DEVICE_NAME_MAX];
	struct sd_stats stats;
};

struct sd_genl_totals {
	struct sd_stats module;
	u64 sockets;
	struct sd_genl_dev_snap *devs;
	unsigned int nr_devs;
};

/*
 * ns's totals now: its sums and its devices' since the last reset. The
 * caller's namespace is alive (it asked), so are its totals.
 */
static int sd_genl_totals(struct sd_stats_ns *ns, struct sd_genl_totals *t)
{
	struct sd_stats_dev *e;
	unsigned int n;

	memset(t, 0, sizeof(*t));
	for (;;) {
		spin_lock_bh(&sd_stats_lock);
		n = ns->nr_devs;
		spin_unlock_bh(&sd_stats_lock);
		t->devs = kcalloc(max(n, 1U), sizeof(*t->devs), GFP_KERNEL_ACCOUNT);
		if (!t->devs)
			return -ENOMEM;
		spin_lock_bh(&sd_stats_lock);
		if (ns->nr_devs <= n)
			break;
		/* A device came meanwhile: room for it too. */
		spin_unlock_bh(&sd_stats_lock);
		kfree(t->devs);
	}
	sd_stats_pcpu_sum(ns->pcpu, &ns->base, &t->module);
	t->sockets = ns->nr_socks;
	list_for_each_entry(e, &ns->devs, node) {
		struct sd_genl_dev_snap *ds = &t->devs[t->nr_devs++];

		ds->index = e->index;
		ds->sockets = e->sockets;
		memcpy(ds->name, e->name, sizeof(ds->name));
		sd_stats_pcpu_sum(e->pcpu, &e->base, &ds->stats);
	}
	spin_unlock_bh(&sd_stats_lock);
	return 0;
}

static size_t sd_genl_stats_size(void)
{
	return nla_total_size(0) +
	       (SD_STAT_NR + 1) * nla_total_size_64bit(sizeof(u64));
}

static int sd_genl_stats_get(struct sk_buff *skb, struct genl_info *info)
{
	struct sd_genl_totals t;
	struct sk_buff *msg;
	struct nlattr *nest;
	unsigned int i;
	void *hdr;
	int err;

	err = sd_genl_totals(sd_stats_ns_of(genl_info_net(info)), &t);
	if (err)
		return err;
	msg = genlmsg_new(sd_genl_stats_size() +
			  t.nr_devs * (nla_total_size(0) +
				       nla_total_size(IB_DEVICE_NAME_MAX) +
				       nla_total_size(sizeof(u32)) +
				       sd_genl_stats_size()), GFP_KERNEL);
	err = -ENOMEM;
	if (!msg)
		goto out;
	hdr = genlmsg_put_reply(msg, info, &sd_genl_family, 0,
				SMBDIRECT_CMD_STATS_GET);
	err = -EMSGSIZE;
	if (!hdr)
		goto out_free;
	if (sd_genl_put_stats(msg, SMBDIRECT_A_STATS_TOP_MODULE, &t.module, true,
			      t.sockets, false))
		goto out_free;
	for (i = 0; i < t.nr_devs; i++) {
		nest = nla_nest_start(msg, SMBDIRECT_A_STATS_TOP_DEVICE);
		if (!nest ||
		    nla_put_string(msg, SMBDIRECT_A_DEV_NAME, t.devs[i].name) ||
		    nla_put_u32(msg, SMBDIRECT_A_DEV_INDEX, t.devs[i].index) ||
		    sd_genl_put_stats(msg, SMBDIRECT_A_DEV_STATS, &t.devs[i].stats,
				      true, t.devs[i].sockets, false))
			goto out_free;
		nla_nest_end(msg, nest);
	}
	genlmsg_end(msg, hdr);
	kfree(t.devs);
	return genlmsg_reply(msg, info);

out_free:
	nlmsg_free(msg);
out:
	kfree(t.devs);
	return err;
}

/*
 * The caller's namespace's totals restart at 0: what its counters and its
 * devices' sum to now becomes their base, entries of devices no live
 * socket uses are freed. Sockets keep their own counters; other
 * namespaces' totals are not touched.
 */
static int sd_genl_stats_reset(struct sk_buff *skb, struct genl_info *info)
{
	struct sd_stats_ns *ns = sd_stats_ns_of(genl_info_net(info));
	struct sd_stats_dev *e, *tmp;
	LIST_HEAD(gone);

	spin_lock_bh(&sd_stats_lock);
	sd_stats_pcpu_sum(ns->pcpu, NULL, &ns->base);
	list_for_each_entry_safe(e, tmp, &ns->devs, node) {
		if (e->sockets) {
			sd_stats_pcpu_sum(e->pcpu, NULL, &e->base);
			continue;
		}
		list_move(&e->node, &gone);
		ns->nr_devs--;
	}
	spin_unlock_bh(&sd_stats_lock);
	list_for_each_entry_safe(e, tmp, &gone, node)
		sd_stats_dev_free(e);
	return 0;
}

static const struct genl_ops sd_genl_ops[] = {
	{
		.cmd = SMBDIRECT_CMD_SOCK_GET,
		.start = sd_genl_sock_start,
		.dumpit = sd_genl_sock_dumpit,
		.done = sd_genl_sock_done,
		.policy = sd_genl_sock_get_policy,
		.maxattr = SMBDIRECT_A_SOCK_MAX,
	},
	{
		.cmd = SMBDIRECT_CMD_STATS_GET,
		.doit = sd_genl_stats_get,
		.policy = sd_genl_no_attrs_policy,
		.maxattr = ARRAY_SIZE(sd_genl_no_attrs_policy) - 1,
	},
	{
		.cmd = SMBDIRECT_CMD_STATS_RESET,
		.doit = sd_genl_stats_reset,
		.policy = sd_genl_no_attrs_policy,
		.maxattr = ARRAY_SIZE(sd_genl_no_attrs_policy) - 1,
		/* The caller's namespace's totals: its own admin's to reset. */
		.flags = GENL_UNS_ADMIN_PERM,
	},
};

static struct genl_family sd_genl_family __ro_after_init = {
	.name = SMBDIRECT_GENL_NAME,
	.version = SMBDIRECT_GENL_VERSION,
	.module = THIS_MODULE,
	.ops = sd_genl_ops,
	.n_ops = ARRAY_SIZE(sd_genl_ops),
	/*
	 * 0, as genetlink asks of new families: every command gets the
	 * header check (genlmsghdr.reserved 0, no ambiguous nlmsg_flags)
	 * and strict attribute validation; none may opt out.
	 */
	.resv_start_op = 0,
	.netnsok = true,
	/* Our own locks serialise what needs it; no genl_mutex. */
	.parallel_ops = true,
};

/* Before any socket can be made: each needs its namespace's totals. */
int sd_genl_init(void)
{
	int err;

	err = register_pernet_subsys(&sd_stats_net_ops);
	if (err)
		return err;
	err = genl_register_family(&sd_genl_family);
	if (err)
		unregister_pernet_subsys(&sd_stats_net_ops);
	return err;
}

/*
 * After every socket is gone (each holds the module): nothing races, and
 * each namespace's totals go with the pernet exit.
 */
void sd_genl_exit(void)
{
	genl_unregister_family(&sd_genl_family);
	unregister_pernet_subsys(&sd_stats_net_ops);
}
