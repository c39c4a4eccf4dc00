// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_cm: address and route resolution, connect, accept, disconnect.
 * Handlers run in rdma_cm's context and may sleep, but never take
 * lock_sock(): teardown holds it while rdma_destroy_id() waits for them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/nsproxy.h>
#include <linux/security.h>
#include <linux/sched/task.h>
#include <linux/task_work.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "uapi/linux/smbdirect.h"
#include "compat.h"
#include "sd_sock.h"
#include "test_hooks.h"

#define SD_ADDR_TIMEOUT_MS 2000
#define SD_ROUTE_TIMEOUT_MS 2000
/* As cifs.ko and ksmbd: receives are always posted before credits go out. */
#define SD_CM_RETRY 6
#define SD_CM_RNR_RETRY 0

/*
 * The addresses change under sd->lock: netlink dumps and getname() read
 * them under it, from other tasks than the rdma_cm handler writing them.
 */
static void __sd_cm_save_addrs(struct sd_sock *sd, struct rdma_cm_id *id)
{
	struct sockaddr *src = (struct sockaddr *)&id->route.addr.src_addr;
	struct sockaddr *dst = (struct sockaddr *)&id->route.addr.dst_addr;

	lockdep_assert_held(&sd->lock);
	if (sd_addr_len(src))
		memcpy(&sd->local, src, sd_addr_len(src));
	if (sd_addr_len(dst))
		memcpy(&sd->peer, dst, sd_addr_len(dst));
	sd_inet_addrs_sync(sd);
}

static void sd_cm_save_addrs(struct sd_sock *sd, struct rdma_cm_id *id)
{
	spin_lock_bh(&sd->lock);
	__sd_cm_save_addrs(sd, id);
	spin_unlock_bh(&sd->lock);
}

/*
 * The legacy iWARP (MPA v1) IRD/ORD exchange: cifs.ko always sends it on
 * iWARP, big-endian {responder_resources, initiator_depth}.
 */
static void sd_cm_conn_param(struct sd_sock *sd, struct rdma_conn_param *p,
			     __be32 ird_ord[2], bool legacy_iwarp)
{
	memset(p, 0, sizeof(*p));
	p->initiator_depth = sd->initiator_depth;
	p->responder_resources = sd->responder_resources;
	p->retry_count = SD_CM_RETRY;
	p->rnr_retry_count = SD_CM_RNR_RETRY;
	if (legacy_iwarp) {
		ird_ord[0] = cpu_to_be32(p->responder_resources);
		ird_ord[1] = cpu_to_be32(p->initiator_depth);
		p->private_data = ird_ord;
		p->private_data_len = 2 * sizeof(__be32);
	}
}

/*
 * Before rdma_connect() and rdma_accept(): the ack_timeout parameter, on
 * InfiniBand and RoCE (rdma_cm applies it when the QP goes to RTS).
 */
static void sd_cm_ack_timeout(struct sd_sock *sd, struct rdma_cm_id *id)
{
	u8 t = sd_ack_timeout();

	if (t && sd->transport != SMBDIRECT_TRANSPORT_IWARP && rdma_set_ack_timeout(id, t))
		pr_warn_ratelimited("ack_timeout %u not applied\n", t);
}

static void sd_cm_fail(struct sd_sock *sd, int err)
{
	spin_lock_bh(&sd->lock);
	sd_fail(sd, err);
	spin_unlock_bh(&sd->lock);
}

/*
 * siw makes the TCP socket of an iWARP connection in the network namespace
 * of the task that calls rdma_connect(), not in the id's: only a task of
 * the socket's own namespace may call it. From anywhere else the
 * connection would leave from another namespace (a container's socket
 * from the host's, to its loopback and its services). rdma_cm's handlers
 * run in kworkers of init_net.
 */
static bool sd_cm_connect_ns_ok(const struct sd_sock *sd)
{
	const struct nsproxy *ns = current->nsproxy;

	return sd->transport != SMBDIRECT_TRANSPORT_IWARP ||
	       (ns && net_eq(sock_net(&sd->sk), ns->net_ns));
}

static int sd_cm_do_connect(struct sd_sock *sd, struct rdma_cm_id *id,
			    bool in_handler)
{
	struct rdma_conn_param p;
	__be32 ird_ord[2];
	int err;

	if (!sd_cm_connect_ns_ok(sd))
		return -ECONNABORTED;
	sd_cm_conn_param(sd, &p, ird_ord,
			 sd->transport == SMBDIRECT_TRANSPORT_IWARP);
	sd_cm_ack_timeout(sd, id);
	/* Inside the handler: rdma_connect() would take its mutex again. */
	err = in_handler ? rdma_connect_locked(id, &p) : rdma_connect(id, &p);
	if (!err) {
		sd->qp_used = true;
		sd->active = true;
	}
	return err;
}

void sd_cm_connector_put(struct sd_sock *sd)
{
	struct task_struct *t;

	spin_lock_bh(&sd->lock);
	t = sd->connector;
	sd->connector = NULL;
	WRITE_ONCE(sd->connect_deferred, false);
	spin_unlock_bh(&sd->lock);
	if (t)
		put_task_struct(t);
}

/*
 * The connect the route handler left (socket lock held, in process
 * context): a connect() waiting for the connection runs it, else a poll
 * of the socket (sd_cm_poll_connect()) or the task work queued to the
 * task that called connect(), whichever comes first. A task that moved to
 * another namespace since (setns()) fails it.
 */
void sd_cm_connect_deferred(struct sd_sock *sd)
{
	bool mine;
	int err;

	spin_lock_bh(&sd->lock);
	mine = sd->connect_deferred && !sd->failed && !sd->dying && sd->cm_id;
	WRITE_ONCE(sd->connect_deferred, false);
	spin_unlock_bh(&sd->lock);
	if (!mine)
		return;
	err = sd_cm_do_connect(sd, sd->cm_id, false);
	if (err)
		sd_cm_fail(sd, err);
	sd_cm_connector_put(sd);
}

static void sd_cm_connect_twork(struct callback_head *cb)
{
	struct sd_sock *sd = container_of(cb, struct sd_sock, connect_twork);

	spin_lock_bh(&sd->lock);
	sd->connect_twork_queued = false;
	spin_unlock_bh(&sd->lock);
	lock_sock(&sd->sk);
	/*
	 * Run by an exiting task (exit_task_work()), its namespaces gone
	 * already: no connect from here. Another process has the socket.
	 */
	if (current->flags & PF_EXITING || !current->nsproxy) {
		if (READ_ONCE(sd->connect_deferred))
			sd_cm_fail(sd, -ECONNABORTED);
		sd_cm_connector_put(sd);
	} else {
		sd_cm_connect_deferred(sd);
	}
	release_sock(&sd->sk);
	sock_put(&sd->sk);
}

/*
 * The connect of an iWARP socket outside the kworker's namespace (see
 * sd_cm_connect_ns_ok()) goes to a task of the socket's namespace: the
 * task that called connect(), woken if it waits there; else whoever polls
 * the socket (sd_cm_poll_connect(), woken here), and as a last resort the
 * connector itself when it next returns to user space (a TWA_RESUME task
 * work, which interrupts nothing: with TWA_SIGNAL an unrelated epoll_wait()
 * failed with EINTR). 0 if handed over, or nothing to connect (the socket
 * failed meanwhile); -ECONNABORTED if no task can take it: a kernel socket
 * connected from a kernel thread, or the task exited. Never connects from
 * here.
 */
static int sd_cm_connect_elsewhere(struct sd_sock *sd)
{
	struct sock *sk = &sd->sk;
	struct task_struct *t;
	bool failed;
	int err;

	spin_lock_bh(&sd->lock);
	t = sd->connector;
	failed = sd->failed;
	if (failed || !t) {
		spin_unlock_bh(&sd->lock);
		return failed ? 0 : -ECONNABORTED;
	}
	WRITE_ONCE(sd->connect_deferred, true);
	/* One from an earlier attempt that has not run yet takes this one. */
	if (sd->connector_waits || sd->connect_twork_queued) {
		spin_unlock_bh(&sd->lock);
		sk->sk_state_change(sk);
		return 0;
	}
	sd->connect_twork_queued = true;
	get_task_struct(t);
	spin_unlock_bh(&sd->lock);
	sock_hold(sk);
	init_task_work(&sd->connect_twork, sd_cm_connect_twork);
	err = task_work_add(t, &sd->connect_twork, TWA_RESUME);
	put_task_struct(t);
	if (!err) {
		sk->sk_state_change(sk);
		return 0;
	}
	/* The task is past its last task work: nobody to connect from. */
	sock_put(sk);
	spin_lock_bh(&sd->lock);
	WRITE_ONCE(sd->connect_deferred, false);
	sd->connect_twork_queued = false;
	spin_unlock_bh(&sd->lock);
	return -ECONNABORTED;
}

/*
 * poll(), select() and epoll_wait() on a socket whose connect the route
 * handler left run it, in process context: the connector (a connector
 * that moved to another namespace fails it, as its task work would) or
 * any task of the socket's namespace. A poller elsewhere leaves it to the
 * connector. As a blocking connect() does, the caller then waits for
 * siw's TCP handshake (siw_connect() connects its socket blocking).
 */
void sd_cm_poll_connect(struct sd_sock *sd)
{
	if (!READ_ONCE(sd->connect_deferred) || !in_task())
		return;
	if (READ_ONCE(sd->connector) != current && !sd_cm_connect_ns_ok(sd))
		return;
	lock_sock(&sd->sk);
	sd_cm_connect_deferred(sd);
	release_sock(&sd->sk);
}

static int sd_cm_route_resolved(struct sd_sock *sd, struct rdma_cm_id *id)
{
	int err;

	err = sd_qp_create(sd);
	if (err)
		return err;
	sd_cm_save_addrs(sd, id);
	sd_test_route_delay();
	if (!sd_cm_connect_ns_ok(sd))
		return sd_cm_connect_elsewhere(sd);
	err = sd_cm_do_connect(sd, id, true);
	sd_cm_connector_put(sd);
	return err;
}

/*
 * The active side learns the depths the peer accepted with. ib_cm hands
 * the REP over from our point of view and programs the QP with exactly
 * that (max_rd_atomic = the peer's responder resources), 0 included.
 * iw_cm reports an established connection from the peer's point of view
 * (seen with siw and irdma; the in-tree smbdirect swaps likewise), and a
 * legacy MPA v1 peer answers in the private data, as cifs.ko and ksmbd do.
 */
static void sd_cm_active_depths(struct sd_sock *sd,
				const struct rdma_conn_param *rep)
{
	u32 serves = rep->initiator_depth, issues = rep->responder_resources;
	bool iwarp = sd->transport == SMBDIRECT_TRANSPORT_IWARP;

	if (iwarp && rep->private_data_len == 2 * sizeof(__be32) &&
	    rep->private_data) {
		const __be32 *hdr = rep->private_data;

		serves = sd_legacy_depth(hdr[0]);
		issues = sd_legacy_depth(hdr[1]);
	} else if (iwarp) {
		serves = rep->responder_resources;
		issues = rep->initiator_depth;
	}
	sd_rd_depths(&sd->initiator_depth, &sd->responder_resources,
		     serves, issues, !iwarp);
}

static void sd_cm_established(struct sd_sock *sd,
			      const struct rdma_conn_param *rep)
{
	struct sd_core_actions act;

	spin_lock_bh(&sd->lock);
	if (sd->active && !sd->cm_connected)
		sd_cm_active_depths(sd, rep);
	sd->cm_connected = true;
	sd->establish_by = 0;
	if (sd->cm_id)
		__sd_cm_save_addrs(sd, sd->cm_id);
	if (!sd->failed && !sd_core_on_connected(&sd->core, sd_now_ms(), &act))
		sd_do_actions(sd, &act);
	sd_child_ready(sd);
	spin_unlock_bh(&sd->lock);
}

/*
 * The peer's orderly close reads as end of file. Its last messages can
 * still wait in our CQ: the DREQ (or iWARP's FIN) travels another path
 * than the data and can overtake their completions, and a failed
 * connection ignores receives. Draining the receive queue first lets
 * every receive that completed reach the core, in order, so nothing the
 * peer sent before closing is lost (its negotiate response included: a
 * peer that accepts and closes at once leaves us connected, then at EOF).
 */
static void sd_cm_disconnected(struct sd_sock *sd)
{
	bool connecting, drain;

	/* The survivor's event only: the closer's would delay it twice. */
	if (!READ_ONCE(sd->failed))
		sd_test_disconnect_delay();
	/* Teardown destroys the QP under res_mutex. */
	mutex_lock(&sd->res_mutex);
	spin_lock_bh(&sd->lock);
	sd->peer_closed = true;
	drain = sd->qp && sd->qp_used && !sd->dying && !sd->failed;
	spin_unlock_bh(&sd->lock);
	if (drain)
		ib_drain_rq(sd->qp);
	mutex_unlock(&sd->res_mutex);

	spin_lock_bh(&sd->lock);
	connecting = sd->state == SD_CONNECTING;
	sd_child_ready(sd);
	sd_fail(sd, connecting ? -ECONNREFUSED : 0);
	spin_unlock_bh(&sd->lock);
}

/*
 * Who destroys a child's id when its CONNECT_REQUEST handler gives up:
 * rdma_cm (the handler returns 1) unless a teardown elsewhere (device
 * removal, which finds the child on sd_list while the handler runs)
 * already took it to destroy; then that teardown's rdma_destroy_id(),
 * waiting for this handler, does, and the handler must return 0. Decided
 * under sd->lock, where sd_transport_teardown() takes it.
 */
static int sd_cm_child_give_up_id(struct sd_sock *child)
{
	bool theirs;

	spin_lock_bh(&child->lock);
	theirs = child->id_destroying;
	if (!theirs)
		WRITE_ONCE(child->id_owned_by_cm, true);
	spin_unlock_bh(&child->lock);
	return theirs ? 0 : 1;
}

/* A passive-side connection that never reached accept(): undo it here. */
static int sd_cm_child_abort(struct sd_sock *child)
{
	int ret = sd_cm_child_give_up_id(child);

	sd_child_drop(child, false);
	/* Non-zero: rdma_cm destroys the new id itself. */
	return ret;
}

/*
 * An accepted socket starts with its listener's socket settings, as TCP's
 * do (sk_clone_lock): buffer sizes and their locks, linger, timeouts,
 * low-water mark, keepalive, mark and priority.
 */
static void sd_inherit_sock(struct sock *child, const struct sock *parent)
{
	static const enum sock_flags flags[] = { SOCK_LINGER, SOCK_KEEPOPEN };
	unsigned int i;

	WRITE_ONCE(child->sk_rcvbuf, READ_ONCE(parent->sk_rcvbuf));
	WRITE_ONCE(child->sk_sndbuf, READ_ONCE(parent->sk_sndbuf));
	child->sk_userlocks = parent->sk_userlocks;
	WRITE_ONCE(child->sk_lingertime, READ_ONCE(parent->sk_lingertime));
	WRITE_ONCE(child->sk_rcvtimeo, READ_ONCE(parent->sk_rcvtimeo));
	WRITE_ONCE(child->sk_sndtimeo, READ_ONCE(parent->sk_sndtimeo));
	WRITE_ONCE(child->sk_rcvlowat, READ_ONCE(parent->sk_rcvlowat));
	WRITE_ONCE(child->sk_mark, READ_ONCE(parent->sk_mark));
	WRITE_ONCE(child->sk_priority, READ_ONCE(parent->sk_priority));
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		if (sock_flag(parent, flags[i]))
			sock_set_flag(child, flags[i]);
		else
			sock_reset_flag(child, flags[i]);
	}
}

/*
 * Whether the listener takes one more child: 0 when it does, -ECONNREFUSED
 * when it no longer listens, -ENOBUFS when its backlog is full (children
 * negotiating or waiting for accept()), -EAGAIN when it or its network
 * namespace holds as many half-open children as the module parameters
 * allow (sd_listen_verdict()).
 */
static int sd_cm_listener_room(struct sd_sock *lsd)
	__must_hold(&sd_accept_lock)
{
	struct sd_listen_load l;

	if (lsd->state != SD_LISTENING || lsd->failed)
		return -ECONNREFUSED;
	sd_listen_limits(&l);
	l.children = lsd->nr_children;
	l.backlog = READ_ONCE(lsd->sk.sk_max_ack_backlog);
	l.half_open = lsd->nr_half_open;
	l.ns_half_open = *sd_stats_ns_half_open(lsd);
	switch (sd_listen_verdict(&l)) {
	case SD_LISTEN_TAKE:
		return 0;
	case SD_LISTEN_OVERFLOW:
		return -ENOBUFS;
	default:
		return -EAGAIN;
	}
}

/* A request refused for want of room counts on the listener. */
static void sd_cm_count_refusal(struct sd_sock *lsd, int err)
{
	spin_lock_bh(&lsd->lock);
	if (err == -ENOBUFS)
		sd_stat_add(lsd, SD_STAT_LISTEN_OVERFLOWS, 1);
	else if (err == -EAGAIN)
		sd_stat_add(lsd, SD_STAT_LISTEN_HALF_OPEN_DROPS, 1);
	spin_unlock_bh(&lsd->lock);
}

/*
 * The child's answer is out: the peer has the negotiation timeout, from
 * now, to complete the connection, and the core's, from then, to
 * negotiate. Without this deadline an IB/RoCE peer that never sends the
 * RTU would hold the child (a QP, a half-open slot) while ib_cm retries
 * the REP on the schedule the peer chose in its REQ: minutes, or hours.
 * rdma_cm runs one id's events one at a time: ESTABLISHED has not come.
 */
static void sd_cm_arm_establish(struct sd_sock *child)
{
	unsigned long delay = msecs_to_jiffies(child->negotiate_timeout_ms);

	spin_lock_bh(&child->lock);
	if (!child->dying && !child->failed && !child->cm_connected) {
		child->establish_by = (jiffies + delay) ?: 1;
		mod_delayed_work(sd_wq, &child->timer_work, delay);
	}
	spin_unlock_bh(&child->lock);
}

static int sd_cm_request(struct sd_sock *lsd, struct rdma_cm_id *id,
			 struct rdma_cm_event *ev)
{
	const struct rdma_conn_param *req = &ev->param.conn;
	struct sd_sock *child;
	struct rdma_conn_param p;
	__be32 ird_ord[2];
	bool legacy = false;
	/*
	 * ib_cm and iw_cm deliver a connect request from our point of view:
	 * initiator_depth is what the peer serves (its responder resources),
	 * responder_resources what it issues (its initiator depth).
	 */
	u32 peer_ird = req->initiator_depth, peer_ord = req->responder_resources;
	int err;

	/* A first look, so that a full listener allocates nothing. */
	spin_lock_bh(&sd_accept_lock);
	err = sd_cm_listener_room(lsd);
	spin_unlock_bh(&sd_accept_lock);
	if (err) {
		sd_cm_count_refusal(lsd, err);
		goto reject;
	}
	child = sd_sock_alloc(sock_net(&lsd->sk), NULL, lsd->sk.sk_family,
			      lsd->sk.sk_protocol, lsd->type,
			      !lsd->sk.sk_net_refcnt);
	if (!child)
		goto reject;
	/*
	 * The listener's LSM labels, as sk_clone_lock() gives TCP's child.
	 * sk_alloc() labelled it as a new socket of rdma_cm's kworker:
	 * SELinux unlabeled, Smack the web label of kernel threads, AppArmor
	 * the kernel's; the policy would judge the accepted socket by those.
	 */
	security_sk_clone(&lsd->sk, &child->sk);
	child->opts = lsd->opts;
	child->tcp_opts = lsd->tcp_opts;
	child->rw_events = READ_ONCE(lsd->rw_events);
	/* Charged where the listener is: rdma_cm's context is nobody's. */
	child->memcg = sd_memcg_get(lsd->memcg);
	sd_inherit_sock(&child->sk, &lsd->sk);
	/*
	 * Owned by the listener's owner until accept() grafts it (as TCP's
	 * clones are): its user sees it in a dump, and diagnostics show it.
	 */
	WRITE_ONCE(child->sk.sk_uid, READ_ONCE(lsd->sk.sk_uid));
	child->cm_id = id;
	id->context = child;
	sd_list_add(child);
	sd_cm_save_addrs(child, id);

	/*
	 * The check that counts: with the link in one critical section, so
	 * that requests handled side by side (rdma_cm runs them on several
	 * workers) cannot all pass it and overshoot the backlog or the
	 * half-open bounds.
	 */
	spin_lock_bh(&sd_accept_lock);
	err = sd_cm_listener_room(lsd);
	if (!err)
		sd_child_link(lsd, child);
	spin_unlock_bh(&sd_accept_lock);
	if (err) {
		int ret = sd_cm_child_give_up_id(child);

		sd_cm_count_refusal(lsd, err);
		sd_transport_teardown(child);
		sock_put(&child->sk);
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return ret;
	}

	sd_test_request_delay();
	if (sd_core_start(child, SD_CORE_ROLE_SERVER) || sd_qp_create(child))
		goto abort;
	if (child->transport == SMBDIRECT_TRANSPORT_IWARP &&
	    req->private_data_len == 2 * sizeof(__be32) && req->private_data) {
		const __be32 *hdr = req->private_data;

		/* An MPA v1 peer can only tell its depths this way. */
		peer_ird = sd_legacy_depth(hdr[0]);
		peer_ord = sd_legacy_depth(hdr[1]);
		legacy = true;
	}
	/*
	 * We serve at most the reads it issues and issue at most it serves.
	 * An IB/RoCE REQ, iWARP legacy private data and an MPA v2 request
	 * that states either depth also state a 0 (6.12's cifs.ko asks
	 * initiator depth 0 over RoCE: it never reads from us); MPA v1
	 * leaves both 0.
	 */
	sd_rd_depths(&child->initiator_depth, &child->responder_resources,
		     peer_ird, peer_ord,
		     legacy || child->transport != SMBDIRECT_TRANSPORT_IWARP ||
		     peer_ird || peer_ord);
	sd_cm_conn_param(child, &p, ird_ord, legacy);
	sd_cm_ack_timeout(child, id);
	/*
	 * A teardown elsewhere (device removal) may have destroyed the QP
	 * since sd_qp_create(): accept only with the QP still there, and
	 * under res_mutex, which that teardown destroys it under.
	 */
	mutex_lock(&child->res_mutex);
	if (READ_ONCE(child->dying) || !child->qp || rdma_accept(id, &p)) {
		mutex_unlock(&child->res_mutex);
		goto abort;
	}
	child->qp_used = true;
	mutex_unlock(&child->res_mutex);
	sd_cm_arm_establish(child);
	return 0;

abort:
	rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	return sd_cm_child_abort(child);
reject:
	rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	return 1;
}

static int sd_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sd_sock *sd = id->context;
	int err;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return sd_cm_request(sd, id, ev);
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdma_resolve_route(id, SD_ROUTE_TIMEOUT_MS);
		if (err)
			sd_cm_fail(sd, err);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		err = sd_cm_route_resolved(sd, id);
		if (err)
			sd_cm_fail(sd, err);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		sd_cm_fail(sd, -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		sd_cm_fail(sd, -ENETUNREACH);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		sd_cm_fail(sd, ev->status == -ETIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_REJECTED:
		/* A reject after ESTABLISHED: the peer dropped the connection. */
	case RDMA_CM_EVENT_CONNECT_ERROR:
		sd_cm_fail(sd, READ_ONCE(sd->state) == SD_CONNECTED ?
			   -ECONNRESET : -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		sd_cm_established(sd, &ev->param.conn);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		sd_cm_disconnected(sd);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * Our ib_client ran first and destroyed every id it knew of;
		 * an id still here picked the device up in between. rdma_cm
		 * waits for it: it goes now, not at the owner's close().
		 */
		sd_device_removal(sd, id);
		break;
	default:
		break;
	}
	return 0;
}

static struct rdma_cm_id *sd_cm_new_id(struct sd_sock *sd)
{
	return rdma_create_id(sock_net(&sd->sk), sd_cm_handler, sd, RDMA_PS_TCP,
			      IB_QPT_RC);
}

int sd_cm_create_id(struct sd_sock *sd)
{
	struct rdma_cm_id *id;

	if (sd->cm_id)
		return 0;
	id = sd_cm_new_id(sd);
	if (IS_ERR(id))
		return PTR_ERR(id);
	sd->cm_id = id;
	sd_list_add(sd);
	return 0;
}

static int sd_cm_bind_id(struct sd_sock *sd, struct rdma_cm_id *id,
			 struct sockaddr *addr)
{
	int err;

	/* An AF_INET6 socket on :: takes IPv4 too unless IPV6_V6ONLY, as TCP. */
	if (sd->sk.sk_family == AF_INET6 && addr->sa_family == AF_INET6) {
		err = rdma_set_afonly(id, sd->sk.sk_ipv6only);
		if (err)
			return err;
	}
	return rdma_bind_addr(id, addr);
}

/*
 * rdma_cm gives bind(port 0) a port from its own table, which does not see
 * the host's TCP sockets. Over iWARP the listener and each connection are
 * TCP sockets on that port (siw binds them with SO_REUSEADDR), so a port a
 * TCP socket holds without it (a client's, one in TIME_WAIT) made listen()
 * fail with EADDRINUSE. Binding a TCP socket as siw will tells; a wildcard
 * may reach iWARP devices, so it is asked too, more strictly than needed.
 */
static bool sd_cm_port_taken_by_tcp(struct sd_sock *sd, struct rdma_cm_id *id)
{
	struct sockaddr *src = (struct sockaddr *)&id->route.addr.src_addr;
	struct socket *s;
	bool taken;

	if (id->device && !rdma_protocol_iwarp(id->device, id->port_num))
		return false;
	if (sock_create_kern(sock_net(&sd->sk), src->sa_family, SOCK_STREAM,
			     IPPROTO_TCP, &s))
		return false;
	sock_set_reuseaddr(s->sk);
	taken = kernel_bind(s, (SD_SOCKADDR_ARG *)src,
			    sd_addr_len(src)) == -EADDRINUSE;
	sock_release(s);
	return taken;
}

/* As TCP's bind(port 0) when every port it tries is taken. */
#define SD_AUTOBIND_TRIES 8

/*
 * Another port for bind(port 0): a new id binds while the old one still
 * holds the taken port, then takes its place (sd_list sees one or the
 * other; lock_sock() keeps everything else out).
 */
static int sd_cm_autobind_again(struct sd_sock *sd, struct sockaddr *addr)
{
	struct rdma_cm_id *old = sd->cm_id, *id;
	int err;

	id = sd_cm_new_id(sd);
	if (IS_ERR(id))
		return PTR_ERR(id);
	err = sd_cm_bind_id(sd, id, addr);
	if (err) {
		rdma_destroy_id(id);
		return err;
	}
	sd_list_set_id(sd, id);
	rdma_destroy_id(old);
	return 0;
}

int sd_cm_bind(struct sd_sock *sd, struct sockaddr *addr)
{
	int err = sd_cm_create_id(sd), tries = 0;

	if (err)
		return err;
	err = sd_cm_bind_id(sd, sd->cm_id, addr);
	if (err)
		return err;
	while (!sd_addr_port(addr) && sd_cm_port_taken_by_tcp(sd, sd->cm_id)) {
		if (++tries == SD_AUTOBIND_TRIES)
			err = -EADDRINUSE;
		else
			err = sd_cm_autobind_again(sd, addr);
		if (err) {
			/* Unbound again, as TCP's socket after that error. */
			sd_list_del(sd);
			rdma_destroy_id(sd->cm_id);
			sd->cm_id = NULL;
			return err;
		}
	}
	sd_cm_save_addrs(sd, sd->cm_id);
	sd->bound = true;
	/* A specific address is on one device (a wildcard on none yet). */
	if (sd->cm_id->device)
		sd_stats_dev_bind(sd, sd->cm_id->device, sd->cm_id->port_num);
	return 0;
}

int sd_cm_connect(struct sd_sock *sd, struct sockaddr *addr)
{
	int err = sd_cm_create_id(sd);

	if (err)
		return err;
	err = sd_core_start(sd, SD_CORE_ROLE_CLIENT);
	if (err)
		return err;
	spin_lock_bh(&sd->lock);
	memcpy(&sd->peer, addr, sd_addr_len(addr));
	sd_inet_addrs_sync(sd);
	spin_unlock_bh(&sd->lock);
	/* For sd_cm_connect_elsewhere(): a user task outside init_net. */
	if (!net_eq(sock_net(&sd->sk), &init_net) &&
	    !(current->flags & PF_KTHREAD)) {
		sd_cm_connector_put(sd);
		spin_lock_bh(&sd->lock);
		sd->connector = get_task_struct(current);
		spin_unlock_bh(&sd->lock);
	}
	return rdma_resolve_addr(sd->cm_id,
				 sd->bound ? (struct sockaddr *)&sd->local : NULL,
				 addr, SD_ADDR_TIMEOUT_MS);
}

int sd_cm_listen(struct sd_sock *sd, int backlog)
{
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in any = { .sin_family = AF_INET };
	int err;

	if (!sd->bound) {
		/* As TCP: an unbound AF_INET6 listener is on ::, IPv4 too. */
		err = sd_cm_bind(sd, sd->sk.sk_family == AF_INET6 ?
				 (struct sockaddr *)&any6 :
				 (struct sockaddr *)&any);
		if (err)
			return err;
	}
	return rdma_listen(sd->cm_id, backlog);
}
