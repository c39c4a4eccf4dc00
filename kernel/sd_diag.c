// SPDX-License-Identifier: GPL-2.0
/*
 * Socket diagnostics. Every socket of ours is on one list from allocation
 * to destruction; sockets made by socket(AF_INET[6], SOCK_STREAM,
 * IPPROTO_SMBDIRECT) are dumped by an inet_diag handler for that protocol
 * number, as MPTCP's are: what ss(8) sends with INET_DIAG_REQ_PROTOCOL
 * (sdiag_protocol is a byte) gets an inet_diag_msg per socket, with
 * addresses, ports, state, uid, inode, cookie and queues, filtered by the
 * request's states and bytecode.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <linux/spinlock.h>
#include <net/netlink.h>

#include "compat.h"
#include "sd_sock.h"
#include "test_hooks.h"

/*
 * The inet view of our addresses (sd->local, sd->peer): what
 * inet_diag_msg_common_fill() and the bytecode filter read. An IPv4
 * address on an AF_INET6 socket is shown IPv4-mapped, as TCP shows it.
 */
void sd_inet_addrs_sync(struct sd_sock *sd)
{
	const struct sockaddr_in *l4 = (const struct sockaddr_in *)&sd->local;
	const struct sockaddr_in *p4 = (const struct sockaddr_in *)&sd->peer;
	const struct sockaddr_in6 *l6 = (const struct sockaddr_in6 *)&sd->local;
	const struct sockaddr_in6 *p6 = (const struct sockaddr_in6 *)&sd->peer;
	struct sock *sk = &sd->sk;

	if (sd->local.ss_family == AF_INET) {
		WRITE_ONCE(sk->sk_num, ntohs(l4->sin_port));
		sk->sk_rcv_saddr = l4->sin_addr.s_addr;
		sd->inet.inet_saddr = l4->sin_addr.s_addr;
#if IS_ENABLED(CONFIG_IPV6)
		ipv6_addr_set_v4mapped(l4->sin_addr.s_addr, &sk->sk_v6_rcv_saddr);
#endif
	} else if (sd->local.ss_family == AF_INET6) {
		WRITE_ONCE(sk->sk_num, ntohs(l6->sin6_port));
#if IS_ENABLED(CONFIG_IPV6)
		sk->sk_v6_rcv_saddr = l6->sin6_addr;
#endif
	}
	sd->inet.inet_sport = htons(sk->sk_num);

	if (sd->peer.ss_family == AF_INET) {
		sk->sk_daddr = p4->sin_addr.s_addr;
		WRITE_ONCE(sk->sk_dport, p4->sin_port);
#if IS_ENABLED(CONFIG_IPV6)
		ipv6_addr_set_v4mapped(p4->sin_addr.s_addr, &sk->sk_v6_daddr);
#endif
	} else if (sd->peer.ss_family == AF_INET6) {
#if IS_ENABLED(CONFIG_IPV6)
		sk->sk_v6_daddr = p6->sin6_addr;
#endif
		WRITE_ONCE(sk->sk_dport, p6->sin6_port);
	}
}

#if IS_ENABLED(CONFIG_INET_DIAG)

static struct inet_diag_handler sd_diag_handler;
static bool sd_diag_registered;

static bool sd_diag_match(struct sock *sk, struct net *net,
			  const struct inet_diag_req_v2 *r)
{
	if (!net_eq(sock_net(sk), net) ||
	    sk->sk_protocol != sd_diag_handler.idiag_type)
		return false;
	if (sk->sk_family != AF_INET && sk->sk_family != AF_INET6)
		return false;
	if (r->sdiag_family != AF_UNSPEC && sk->sk_family != r->sdiag_family)
		return false;
	return r->idiag_states & BIT(READ_ONCE(sk->sk_state));
}

static int sd_diag_fill(struct sock *sk, struct sk_buff *skb,
			struct netlink_callback *cb,
			const struct inet_diag_req_v2 *r, u16 flags,
			bool net_admin)
{
	return inet_sk_diag_fill(sk, NULL, skb, cb, r, flags, net_admin);
}

#define SD_DIAG_BATCH 16

struct sd_diag_filter {
	struct net *net;
	const struct inet_diag_req_v2 *r;
};

static bool sd_diag_filter_match(struct sd_sock *sd, void *arg)
{
	const struct sd_diag_filter *f = arg;

	return sd_diag_match(&sd->sk, f->net, f->r);
}

/*
 * cb->args[0]: the all_seq of the last socket handled. The list is walked
 * in batches, each socket held while it is filled outside the lock.
 */
static void sd_diag_dump(struct sk_buff *skb, struct netlink_callback *cb,
			 const struct inet_diag_req_v2 *r)
{
	bool net_admin = netlink_net_capable(cb->skb, CAP_NET_ADMIN);
	struct sd_diag_filter f = { .net = sock_net(skb->sk), .r = r };
	struct sock *batch[SD_DIAG_BATCH];
	unsigned int n, i;

	do {
		n = sd_all_collect(f.net, (unsigned long)cb->args[0], sd_diag_filter_match,
				   &f, batch, SD_DIAG_BATCH);
		for (i = 0; i < n; i++) {
			struct sock *sk = batch[i];
			unsigned long seq = sd_sk(sk)->all_seq;
			int err = 0;

			if (sd_inet_diag_bc_sk(cb->data, sk))
				err = sd_diag_fill(sk, skb, cb, r, NLM_F_MULTI,
						   net_admin);
			sock_put(sk);
			if (err < 0) {
				/* The skb is full: the rest in the next call. */
				while (++i < n)
					sock_put(batch[i]);
				return;
			}
			cb->args[0] = (long)seq;
		}
		cond_resched();
	} while (n == SD_DIAG_BATCH);
}

static bool sd_diag_one_match(struct sd_sock *sd, void *arg)
{
	const struct inet_diag_req_v2 *req = arg;
	struct sock *sk = &sd->sk;

	return sk->sk_protocol == sd_diag_handler.idiag_type &&
	       sk->sk_family == req->sdiag_family &&
	       !sock_diag_check_cookie(sk, req->id.idiag_cookie) &&
	       (!req->id.idiag_sport || req->id.idiag_sport == sd->inet.inet_sport) &&
	       (!req->id.idiag_dport || req->id.idiag_dport == READ_ONCE(sk->sk_dport));
}

/* One socket, by the cookie of an earlier dump (as ss -K or a monitor asks). */
static int sd_diag_dump_one(struct netlink_callback *cb,
			    const struct inet_diag_req_v2 *req)
{
	struct sk_buff *in_skb = cb->skb;
	struct net *net = sock_net(in_skb->sk);
	struct sock *found;
	struct sk_buff *rep;
	int err;

	if (!sd_all_collect(net, 0, sd_diag_one_match, (void *)req, &found, 1))
		return -ENOENT;

	rep = nlmsg_new(nla_total_size(sizeof(struct inet_diag_msg)) +
			inet_diag_msg_attrs_size() +
			nla_total_size(sizeof(struct inet_diag_meminfo)) +
			nla_total_size(SK_MEMINFO_VARS * sizeof(u32)) + 64,
			GFP_KERNEL);
	err = -ENOMEM;
	if (!rep)
		goto out;
	err = sd_diag_fill(found, rep, cb, req, 0,
			   netlink_net_capable(in_skb, CAP_NET_ADMIN));
	if (err < 0) {
		kfree_skb(rep);
		goto out;
	}
	err = nlmsg_unicast(net->diag_nlsk, rep, NETLINK_CB(in_skb).portid);
out:
	sock_put(found);
	return err;
}

/* Without an inet_connection_sock, only the queues: bytes waiting each way. */
static void sd_diag_get_info(struct sock *sk, struct inet_diag_msg *r,
			     void *info)
{
	struct sd_sock *sd = sd_sk(sk);

	spin_lock_bh(&sd->lock);
	r->idiag_rqueue = sd->rx_queued;
	r->idiag_wqueue = sd->tx_queued;
	spin_unlock_bh(&sd->lock);
}

static struct inet_diag_handler sd_diag_handler = {
	SD_INET_DIAG_OWNER
	.dump = sd_diag_dump,
	.dump_one = sd_diag_dump_one,
	.idiag_get_info = sd_diag_get_info,
};

int sd_diag_init(int protocol)
{
	int err;

	sd_diag_handler.idiag_type = protocol;
	err = inet_diag_register(&sd_diag_handler);
	if (err) {
		/* Sockets work without it; only ss cannot list them. */
		pr_warn("no socket diagnostics for protocol %d: %d\n", protocol, err);
		return 0;
	}
	sd_diag_registered = true;
	return 0;
}

void sd_diag_exit(void)
{
	if (sd_diag_registered)
		inet_diag_unregister(&sd_diag_handler);
	sd_diag_registered = false;
}

#else

int sd_diag_init(int protocol)
{
	return 0;
}

void sd_diag_exit(void)
{
}

#endif
