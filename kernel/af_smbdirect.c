// SPDX-License-Identifier: GPL-2.0
/*
 * The socket calls of AF_SMBDIRECT (proto_ops). A struct sock with our own
 * struct proto gives the generic SOL_SOCKET options, timeouts, sk_err,
 * poll wait queues and reference counting of every other family.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <asm/ioctls.h>
#include <linux/sockios.h>
#include <net/ip.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "uapi/linux/smbdirect.h"
#include "compat.h"
#include "sd_sock.h"

/*
 * Longest a closed socket keeps its queued data without SO_LINGER (in the
 * background) or with live registrations (in close()); then it is dropped.
 */
#define SD_CLOSE_DRAIN_JIFFIES (10 * HZ)
/* How often a socket draining in the background looks at its queue. */
#define SD_CLOSE_POLL_JIFFIES (HZ / 20)

static int sd_inet_sk_init(struct sock *sk);
static void sd_close_fn(struct work_struct *work);

/* inet_create() calls ->unhash() only when ->init() failed; nothing to do. */
static void sd_unhash(struct sock *sk)
{
}

/*
 * One proto for both entry points: AF_SMBDIRECT sockets are allocated by
 * sd_sock_alloc(), IPPROTO_SMBDIRECT ones by inet_create()/inet6_create(),
 * which then call ->init().
 */
struct proto sd_proto = {
	.name = "AF_SMBDIRECT",
	.owner = THIS_MODULE,
	.obj_size = sizeof(struct sd_sock),
	.init = sd_inet_sk_init,
	.unhash = sd_unhash,
#if IS_ENABLED(CONFIG_IPV6)
	SD_PROTO_IPV6_PINFO(struct sd_sock, inet6)
#endif
};

#if IS_ENABLED(CONFIG_IPV6)
static_assert(!SD_IPV6_PINFO_MUST_BE_LAST ||
	      offsetof(struct sd_sock, inet6) + sizeof(struct ipv6_pinfo) ==
	      sizeof(struct sd_sock));
#endif

static const struct proto_ops sd_ops;

static void sd_sk_destruct(struct sock *sk)
{
	struct sd_sock *sd = sd_sk(sk);

	WARN_ON_ONCE(sd->cm_id || sd->pd || !list_empty(&sd->regs));
	/* Off its namespace's list and totals. */
	sd_stats_sock_free(sd);
	sd_queues_free(sd, true);
	sd_rw_cq_free(sd);
	mem_cgroup_put(sd->memcg);
	sd->memcg = NULL;
}

/*
 * Data or a connection to accept: every waiter (a writer waiting for
 * credits may be woken by the same PDU, so the wake-up is not keyed to
 * EPOLLIN), and SIGIO for O_ASYNC owners.
 */
static void sd_data_ready(struct sock *sk)
{
	sd_wake(sd_sk(sk));
	sk_wake_async(sk, SOCK_WAKE_WAITD, POLL_IN);
}

/*
 * What every socket of ours starts with, whoever allocated it. 0, or
 * -ENOMEM: the caller frees the socket (its destructor copes).
 */
static int sd_sock_setup(struct sd_sock *sd, int type)
{
	struct sock *sk = &sd->sk;

	sk->sk_type = type;
	sk->sk_destruct = sd_sk_destruct;
	sk->sk_data_ready = sd_data_ready;
	sd_conn_setup(sd);
	sd->type = type;
	sd_set_state(sd, SD_UNCONNECTED);
	INIT_DELAYED_WORK(&sd->close_work, sd_close_fn);
	sd_opts_default(&sd->opts);
	sd_tcp_opts_default(&sd->tcp_opts);
	/* SMB-Direct keepalive is on by default, as in cifs.ko and ksmbd. */
	sock_set_flag(sk, SOCK_KEEPOPEN);
	return sd_stats_sock_init(sd);
}

/*
 * A user's socket charges its connection buffers to the creating task's
 * memory cgroup, whoever later uses it (as TCP's socket memory does);
 * a kernel socket charges nobody.
 */
static void sd_memcg_from_current(struct sd_sock *sd, bool kern)
{
	if (!kern && current->mm)
		sd->memcg = get_mem_cgroup_from_mm(current->mm);
}

/*
 * IPPROTO_SMBDIRECT sockets get lock classes of their own. With the inet
 * family's default class, lockdep would take our socket lock for a TCP
 * socket's, which siw takes under its QP state lock, and report a cycle
 * through sd->res_mutex (seen on 6.12 with siw) that no real pair of locks
 * can form.
 */
static struct lock_class_key sd_inet_sk_key[2], sd_inet_slock_key[2];

static void sd_inet_lock_class(struct sock *sk)
{
	if (sk->sk_family == AF_INET6)
		sock_lock_init_class_and_name(sk, "slock-AF_INET6-SMBDIRECT",
					      &sd_inet_slock_key[1],
					      "sk_lock-AF_INET6-SMBDIRECT",
					      &sd_inet_sk_key[1]);
	else
		sock_lock_init_class_and_name(sk, "slock-AF_INET-SMBDIRECT",
					      &sd_inet_slock_key[0],
					      "sk_lock-AF_INET-SMBDIRECT",
					      &sd_inet_sk_key[0]);
}

/*
 * A new socket of family (AF_SMBDIRECT's number, or AF_INET/AF_INET6 for
 * a child of an IPPROTO_SMBDIRECT listener: protocol is the listener's).
 */
struct sd_sock *sd_sock_alloc(struct net *net, struct socket *sock, int family,
			      int protocol, int type, int kern)
{
	struct sd_sock *sd;
	struct sock *sk;

	sk = sk_alloc(net, family, GFP_KERNEL, &sd_proto, kern);
	if (!sk)
		return NULL;
	sock_init_data(sock, sk);
	sk->sk_protocol = protocol;
	sd = sd_sk(sk);
#if IS_ENABLED(CONFIG_IPV6)
	if (family == AF_INET6)
		sd->inet.pinet6 = &sd->inet6;
#endif
	if (family == AF_INET || family == AF_INET6)
		sd_inet_lock_class(sk);
	if (sd_sock_setup(sd, type)) {
		/* Not the socket()'s any more: __sock_create() drops it bare. */
		if (sock)
			sock->sk = NULL;
		sk_free(sk);
		return NULL;
	}
	return sd;
}

/*
 * socket(AF_INET[6], SOCK_STREAM, IPPROTO_SMBDIRECT): inet_create() has
 * allocated sk, set up its inet (and ipv6) part and sk_protocol, and set
 * sk_destruct to inet_sock_destruct(), which expects a TCP-like state
 * machine; ours replaces it.
 */
static int sd_inet_sk_init(struct sock *sk)
{
	int err;

	sd_inet_lock_class(sk);
	/* On failure inet_create() releases sk, which our destructor copes with. */
	err = sd_sock_setup(sd_sk(sk), sk->sk_type);
	if (!err)
		sd_memcg_from_current(sd_sk(sk), sk->sk_kern_sock);
	return err;
}

static bool sd_is_inet(const struct sock *sk)
{
	return sk->sk_family == AF_INET || sk->sk_family == AF_INET6;
}

/*
 * The address a bind() or connect() of ours takes. AF_SMBDIRECT takes
 * IPv4 and IPv6 alike. An IPPROTO_SMBDIRECT socket takes its own family
 * only, as TCP does, and an AF_INET6 one an IPv4-mapped address as that
 * IPv4 address unless IPV6_V6ONLY is set.
 */
static int sd_sock_addr(struct sock *sk, struct sockaddr *addr, int len,
			bool for_connect, struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	int err = sd_addr_check(addr, len, for_connect);

	if (err)
		return err;
	if (sd_is_inet(sk) && addr->sa_family != sk->sk_family)
		return -EAFNOSUPPORT;
	memset(ss, 0, sizeof(*ss));
	if (sk->sk_family == AF_INET6 && ipv6_addr_v4mapped(&sin6->sin6_addr)) {
		if (sk->sk_ipv6only)
			return for_connect ? -ENETUNREACH : -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = sin6->sin6_port;
		sin->sin_addr.s_addr = sin6->sin6_addr.s6_addr32[3];
		if (for_connect && (!sin->sin_addr.s_addr ||
				    ipv4_is_multicast(sin->sin_addr.s_addr)))
			return -EINVAL;
		return 0;
	}
	memcpy(ss, addr, sd_addr_len(addr));
	return 0;
}

int sd_sock_create(struct net *net, struct socket *sock, int family,
		   int protocol, int kern)
{
	struct sd_sock *sd;

	if (protocol)
		return -EPROTONOSUPPORT;
	if (sock->type != SOCK_STREAM && sock->type != SOCK_SEQPACKET)
		return -ESOCKTNOSUPPORT;
	sock->ops = &sd_ops;
	sock->state = SS_UNCONNECTED;
	sd = sd_sock_alloc(net, sock, family, 0, sock->type, kern);
	if (!sd)
		return -ENOMEM;
	sd_memcg_from_current(sd, kern);
	return 0;
}

static bool sd_drained(struct sd_sock *sd)
{
	bool drained;

	spin_lock_bh(&sd->lock);
	drained = sd->failed || sd_tx_drained(sd);
	spin_unlock_bh(&sd->lock);
	return drained;
}

/* Lets queued messages reach the peer before the QP goes to error. */
static void sd_wait_drain(struct sd_sock *sd, long timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &sd->sk;

	add_wait_queue(sk_sleep(sk), &wait);
	while (timeo && !sd_drained(sd) && !signal_pending(current))
		sk_wait_event(sk, &timeo, sd_drained(sd), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
}

static void sd_listener_close(struct sd_sock *sd)
{
	struct sd_sock *child, *tmp;
	LIST_HEAD(children);

	spin_lock_bh(&sd_accept_lock);
	sd_set_state(sd, SD_CLOSED);
	spin_unlock_bh(&sd_accept_lock);
	/* Destroying the listening id waits out a running CONNECT_REQUEST. */
	sd_transport_teardown(sd);
	spin_lock_bh(&sd_accept_lock);
	list_splice_init(&sd->pending, &children);
	list_splice_tail_init(&sd->ready, &children);
	list_for_each_entry(child, &children, child_node)
		sd_child_forget(child);
	WARN_ON_ONCE(sd->nr_children || sd->nr_half_open);
	spin_unlock_bh(&sd_accept_lock);
	list_for_each_entry_safe(child, tmp, &children, child_node) {
		list_del_init(&child->child_node);
		/* The same lock class as the listener's, held by our caller. */
		lock_sock_nested(&child->sk, SINGLE_DEPTH_NESTING);
		sd_transport_teardown(child);
		release_sock(&child->sk);
		sock_put(&sd->sk);
		sock_put(&child->sk);
	}
}

/*
 * What close() does with a connection's queued data, as TCP: SO_LINGER
 * {1, 0} drops it at once (SMB-Direct has no reset on the wire: the peer
 * sees the end of the stream after what had left), {1, N} waits up to N s,
 * and without SO_LINGER close() returns at once while the queue drains in
 * the background for up to SD_CLOSE_DRAIN_JIFFIES. A socket with live
 * registrations, or with RDMA transfers not yet done, drains within
 * close() instead: the peer must lose access to the registrations, and
 * the transfers end, their pages unpinned, before close() returns. True
 * when the socket was handed to the background; it holds a reference for
 * that.
 */
static bool sd_close_drain(struct sd_sock *sd)
{
	struct sock *sk = &sd->sk;
	bool regs;

	if (sock_flag(sk, SOCK_LINGER)) {
		sd_wait_drain(sd, sk->sk_lingertime);
		return false;
	}
	if (sd_drained(sd))
		return false;
	spin_lock_bh(&sd->lock);
	regs = sd->nr_regs || sd_rw_busy(sd);
	spin_unlock_bh(&sd->lock);
	if (regs) {
		sd_wait_drain(sd, SD_CLOSE_DRAIN_JIFFIES);
		return false;
	}
	sd->close_deadline = jiffies + SD_CLOSE_DRAIN_JIFFIES;
	sock_hold(sk);
	queue_delayed_work(sd_wq, &sd->close_work, SD_CLOSE_POLL_JIFFIES);
	return true;
}

static void sd_close_fn(struct work_struct *work)
{
	struct sd_sock *sd = container_of(to_delayed_work(work), struct sd_sock,
					  close_work);
	struct sock *sk = &sd->sk;

	lock_sock(sk);
	if (!sd_drained(sd) && time_before(jiffies, sd->close_deadline)) {
		queue_delayed_work(sd_wq, &sd->close_work, SD_CLOSE_POLL_JIFFIES);
		release_sock(sk);
		return;
	}
	spin_lock_bh(&sd->lock);
	sd_fail(sd, 0);
	spin_unlock_bh(&sd->lock);
	sd_transport_teardown(sd);
	release_sock(sk);
	sock_put(sk);
}

static int sd_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct sd_sock *sd;
	bool background = false;

	if (!sk)
		return 0;
	sd = sd_sk(sk);
	lock_sock(sk);
	if (sd->state == SD_LISTENING)
		sd_listener_close(sd);
	else if (sd->state == SD_CONNECTED)
		background = sd_close_drain(sd);
	if (!background) {
		spin_lock_bh(&sd->lock);
		sd_fail(sd, 0);
		spin_unlock_bh(&sd->lock);
		sd_transport_teardown(sd);
	}
	sock_orphan(sk);
	sock->sk = NULL;
	release_sock(sk);
	sock_put(sk);
	return 0;
}

/*
 * Whether binding port takes CAP_NET_BIND_SERVICE in the user namespace
 * of the socket's network namespace: TCP's rule (the ports below
 * net.ipv4.ip_unprivileged_port_start, 1024 by default), and always
 * iWARP's SMB-Direct port, 5445. Above 1024 it would be anyone's, yet it
 * is an SMB server's port (ksmbd listens there on iWARP devices, and an
 * iWARP listener takes the TCP port too): a user who bound it first
 * would keep the server off it, or stand in for it. Lowering the sysctl
 * does not free it: 445 is not freed either, since rdma_cm refuses the
 * ports below 1024 without CAP_NET_BIND_SERVICE in the initial user
 * namespace whatever the sysctl says (cma_use_port()).
 */
static bool sd_port_needs_bind_service(struct net *net, u16 port)
{
	return port == SMBDIRECT_PORT_IWARP ||
	       (port && inet_port_requires_bind_service(net, port));
}

static int sd_bind(struct socket *sock, SD_SOCKADDR_ARG *uaddr, int len)
{
	struct sockaddr *addr = (struct sockaddr *)uaddr;
	struct sock *sk = sock->sk;
	struct sd_sock *sd = sd_sk(sk);
	struct sockaddr_storage ss = {};
	u16 port;
	int err;

	err = sd_sock_addr(sk, addr, len, false, &ss);
	if (err)
		return err;
	port = sd_addr_port((struct sockaddr *)&ss);
	if (sd_port_needs_bind_service(sock_net(sk), port) &&
	    !ns_capable(sock_net(sk)->user_ns, CAP_NET_BIND_SERVICE))
		return -EACCES;
	lock_sock(sk);
	if (sd->bound || sd->state != SD_UNCONNECTED)
		err = -EINVAL;
	else
		err = sd_cm_bind(sd, (struct sockaddr *)&ss);
	release_sock(sk);
	return err;
}

static int sd_connect_wait(struct sd_sock *sd, long timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &sd->sk;
	int err = 0;

	spin_lock_bh(&sd->lock);
	sd->connector_waits = true;
	spin_unlock_bh(&sd->lock);
	add_wait_queue(sk_sleep(sk), &wait);
	while (READ_ONCE(sd->state) == SD_CONNECTING) {
		if (READ_ONCE(sd->connect_deferred)) {
			sd_cm_connect_deferred(sd);
			continue;
		}
		if (!timeo) {
			err = -EINPROGRESS;
			break;
		}
		if (signal_pending(current)) {
			err = sock_intr_errno(timeo);
			break;
		}
		sk_wait_event(sk, &timeo, READ_ONCE(sd->state) != SD_CONNECTING ||
			      READ_ONCE(sd->connect_deferred), &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	/* A connect left for us while we were leaving is ours still. */
	spin_lock_bh(&sd->lock);
	sd->connector_waits = false;
	spin_unlock_bh(&sd->lock);
	if (READ_ONCE(sd->connect_deferred))
		sd_cm_connect_deferred(sd);
	return err;
}

/*
 * A client whose connect() failed (refused, timed out, no route) starts
 * over: its transport goes, the flags of the attempt are cleared, and the
 * socket is unconnected again, its bound address kept. Socket lock held.
 */
static void sd_connect_reset(struct sd_sock *sd)
{
	struct sock *sk = &sd->sk;

	sd_transport_teardown(sd);
	spin_lock_bh(&sd->lock);
	sd->dying = false;
	WRITE_ONCE(sd->failed, false);
	sd->wc_failed = false;
	sd->peer_closed = false;
	sd->cm_connected = false;
	sd->core_ready = false;
	sd->qp_used = false;
	sd->active = false;
	sd->id_owned_by_cm = false;
	sd->id_destroying = false;
	spin_unlock_bh(&sd->lock);
	WRITE_ONCE(sk->sk_err, 0);
	WRITE_ONCE(sk->sk_shutdown, 0);
	sd_set_state(sd, SD_UNCONNECTED);
}

static int sd_connect(struct socket *sock, SD_SOCKADDR_ARG *uaddr, int len, int flags)
{
	struct sockaddr *addr = (struct sockaddr *)uaddr;
	struct sock *sk = sock->sk;
	struct sd_sock *sd = sd_sk(sk);
	struct sockaddr_storage ss = {};
	long timeo;
	int err;

	lock_sock(sk);
	switch (sd->state) {
	case SD_CONNECTED:
		err = -EISCONN;
		goto out;
	case SD_LISTENING:
		err = -EINVAL;
		goto out;
	case SD_CLOSED:
		/*
		 * As TCP: a failed attempt reports its error once more to a
		 * connect() that follows EINPROGRESS, then the socket may
		 * connect again.
		 */
		if (!sd->params.version) {
			if (sock->state == SS_CONNECTING) {
				err = sock_error(sk) ?: -ECONNABORTED;
				sock->state = SS_UNCONNECTED;
				goto out;
			}
			sd_connect_reset(sd);
			goto fresh;
		}
		err = sock_error(sk);
		if (!err)
			err = sd->params.version ? -EISCONN : -ECONNABORTED;
		goto out;
	case SD_CONNECTING:
		if (flags & O_NONBLOCK) {
			err = -EALREADY;
			goto out;
		}
		break;
	case SD_UNCONNECTED:
fresh:
		err = sd_sock_addr(sk, addr, len, true, &ss);
		if (err)
			goto out;
		sd_set_state(sd, SD_CONNECTING);
		sock->state = SS_CONNECTING;
		err = sd_cm_connect(sd, (struct sockaddr *)&ss);
		if (err) {
			sd_set_state(sd, SD_UNCONNECTED);
			sock->state = SS_UNCONNECTED;
			goto out;
		}
		break;
	}
	timeo = sock_sndtimeo(sk, flags & O_NONBLOCK);
	err = sd_connect_wait(sd, timeo);
	if (err)
		goto out;
	/* As TCP: a connection the peer closed in between was made. */
	if (sd->state == SD_CONNECTED ||
	    (sd->state == SD_CLOSED && sd->params.version && !sk->sk_err)) {
		sock->state = SS_CONNECTED;
	} else {
		sock->state = SS_UNCONNECTED;
		err = sock_error(sk);
		if (!err)
			err = -ECONNREFUSED;
	}
out:
	release_sock(sk);
	return err;
}

static int sd_listen(struct socket *sock, int backlog)
{
	struct sock *sk = sock->sk;
	struct sd_sock *sd = sd_sk(sk);
	int err = 0;

	lock_sock(sk);
	backlog = max(backlog, 1);
	WRITE_ONCE(sk->sk_max_ack_backlog, backlog);
	if (sd->state == SD_LISTENING)
		goto out;
	if (sd->state != SD_UNCONNECTED) {
		err = -EINVAL;
		goto out;
	}
	/* Checks the options together; children start their own cores. */
	err = sd_core_start(sd, SD_CORE_ROLE_SERVER);
	if (err)
		goto out;
	spin_lock_bh(&sd_accept_lock);
	sd_set_state(sd, SD_LISTENING);
	spin_unlock_bh(&sd_accept_lock);
	err = sd_cm_listen(sd, backlog);
	if (err) {
		spin_lock_bh(&sd_accept_lock);
		sd_set_state(sd, SD_UNCONNECTED);
		spin_unlock_bh(&sd_accept_lock);
	}
out:
	release_sock(sk);
	return err;
}

static struct sd_sock *sd_accept_pop(struct sd_sock *sd)
{
	struct sd_sock *child;

	spin_lock_bh(&sd_accept_lock);
	child = list_first_entry_or_null(&sd->ready, struct sd_sock, child_node);
	if (child)
		sd_child_unlink(child);
	spin_unlock_bh(&sd_accept_lock);
	return child;
}

static int sd_accept(struct socket *sock, struct socket *newsock, SD_ACCEPT_ARGS)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = sock->sk;
	struct sd_sock *sd = sd_sk(sk);
	struct sd_sock *child = NULL;
	long timeo;
	int err = 0;

	lock_sock(sk);
	timeo = sock_rcvtimeo(sk, SD_ACCEPT_FLAGS & O_NONBLOCK);
	add_wait_queue(sk_sleep(sk), &wait);
	for (;;) {
		if (sd->state != SD_LISTENING) {
			err = -EINVAL;
			break;
		}
		child = sd_accept_pop(sd);
		if (child)
			break;
		if (sd->failed) {
			/*
			 * The listener lost its device: every accept() says so
			 * (ENETDOWN unless SO_ERROR took the error), none waits.
			 */
			err = READ_ONCE(sk->sk_err) ? sock_error(sk) : -ENETDOWN;
			break;
		}
		if (READ_ONCE(sk->sk_err)) {
			err = sock_error(sk);
			if (err)
				break;
		}
		if (!timeo) {
			err = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			err = sock_intr_errno(timeo);
			break;
		}
		sk_wait_event(sk, &timeo, !list_empty_careful(&sd->ready) ||
			      READ_ONCE(sk->sk_err) || READ_ONCE(sd->failed) ||
			      sd->state != SD_LISTENING, &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	release_sock(sk);
	if (!child)
		return err;
	/* The child's reference on us; the listener's own one remains. */
	sock_put(sk);
	lock_sock(&child->sk);
	sock_graft(&child->sk, newsock);
	newsock->state = SS_CONNECTED;
	release_sock(&child->sk);
	return 0;
}

static int sd_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct sd_sock *sd = sd_sk(sock->sk);
	struct sockaddr_storage copy, *ss = &copy;
	int len;

	lock_sock(sock->sk);
	if (peer && sd->state != SD_CONNECTED &&
	    !(sd->state == SD_CLOSED && sd->params.version)) {
		release_sock(sock->sk);
		return -ENOTCONN;
	}
	/* The rdma_cm handler writes them under sd->lock, not lock_sock(). */
	spin_lock_bh(&sd->lock);
	copy = peer ? sd->peer : sd->local;
	spin_unlock_bh(&sd->lock);
	len = sd_addr_len((struct sockaddr *)ss);
	if (sock->sk->sk_family == AF_INET6 && len != sizeof(struct sockaddr_in6)) {
		/* IPv4 on an AF_INET6 socket: mapped, as TCP reports it. */
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		if (len) {
			sin6->sin6_port = sin->sin_port;
			ipv6_addr_set_v4mapped(sin->sin_addr.s_addr, &sin6->sin6_addr);
		}
		len = sizeof(*sin6);
	} else if (!len) {
		/* Unbound: the IPv4 wildcard, port 0, as TCP reports it. */
		memset(uaddr, 0, sizeof(struct sockaddr_in));
		uaddr->sa_family = AF_INET;
		len = sizeof(struct sockaddr_in);
	} else {
		memcpy(uaddr, ss, len);
	}
	release_sock(sock->sk);
	return len;
}

static __poll_t sd_poll(struct file *file, struct socket *sock, poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct sd_sock *sd = sd_sk(sk);
	u32 events = READ_ONCE(sd->rw_events);
	enum sd_state state;
	__poll_t mask = 0;
	u8 shutdown;

	sock_poll_wait(file, sock, wait);
	sd_cm_poll_connect(sd);
	state = READ_ONCE(sd->state);
	if (READ_ONCE(sk->sk_err))
		mask |= EPOLLERR;
	/*
	 * RDMA completions to reap: EPOLLERR as MSG_ZEROCOPY's notifications,
	 * or, asked for, EPOLLPRI (as SO_SELECT_ERR_QUEUE adds it for an
	 * error queue), so that EPOLLERR means the connection's error alone.
	 */
	if (sd_rw_cq_ready(sd))
		mask |= events & SMBDIRECT_RDMA_EVENTS_PRI ? EPOLLPRI : EPOLLERR;
	if (state == SD_LISTENING) {
		if (!list_empty_careful(&sd->ready))
			mask |= EPOLLIN | EPOLLRDNORM;
		return mask;
	}
	shutdown = READ_ONCE(sk->sk_shutdown);
	if (shutdown == SHUTDOWN_MASK || state == SD_CLOSED || state == SD_UNCONNECTED)
		mask |= EPOLLHUP;
	if (shutdown & RCV_SHUTDOWN)
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;
	if (sd_rx_readable(sd))
		mask |= EPOLLIN | EPOLLRDNORM;
	/* As TCP: after SHUT_WR a send no longer blocks, it fails at once. */
	if (state == SD_CONNECTED &&
	    ((shutdown & SEND_SHUTDOWN) || sd_tx_writable(sd)))
		mask |= EPOLLOUT | EPOLLWRNORM;
	/*
	 * A transfer slot, asked for: a plain message needs none, so EPOLLOUT
	 * does not wait for one; a transfer with its message wants both.
	 */
	if (state == SD_CONNECTED && (events & SMBDIRECT_RDMA_EVENTS_WRBAND) &&
	    ((shutdown & SEND_SHUTDOWN) || sd_rw_slot_free(sd)))
		mask |= EPOLLWRBAND;
	return mask;
}

/*
 * Copies in an ioctl struct that starts with its own u32 size: EFAULT if
 * unreadable, EINVAL if the caller's size is below len. A larger size (a
 * newer caller's struct) is accepted if it is at most a page and all its
 * bytes past len are zero, else E2BIG: a field we do not know must not be
 * set, or the caller would take our success for its meaning.
 */
int sd_ioctl_copy_in(void *dst, const void __user *src, size_t len)
{
	u32 size;
	int n;

	if (get_user(size, (const u32 __user *)src))
		return -EFAULT;
	n = sd_ioctl_copy_size(size, len, len);
	if (n < 0)
		return n;
	return copy_struct_from_user(dst, len, src, size);
}

static int sd_ioctl_get_params(struct sd_sock *sd, void __user *arg)
{
	struct smbdirect_params p = {};
	u32 size;
	int n;

	if (get_user(size, (u32 __user *)arg))
		return -EFAULT;
	n = sd_ioctl_copy_size(size, offsetofend(struct smbdirect_params, reserved),
			       sizeof(p));
	if (n < 0)
		return n;
	lock_sock(&sd->sk);
	/* Once negotiated, readable for good: the peer may close any time. */
	if (sd->state != SD_CONNECTED &&
	    !(sd->state == SD_CLOSED && sd->params.version)) {
		release_sock(&sd->sk);
		return -ENOTCONN;
	}
	p.size = sizeof(p);
	p.version = sd->params.version;
	p.max_send_size = sd->params.max_send_size;
	p.max_receive_size = sd->params.max_receive_size;
	p.max_fragmented_send_size = sd->params.max_fragmented_send_size;
	p.max_fragmented_receive_size = sd->params.max_fragmented_receive_size;
	p.max_read_write_size = sd->params.max_read_write_size;
	p.send_credit_target = sd->params.peer_credit_target;
	p.receive_credit_max = sd->opts.receive_credit_max;
	p.initiator_depth = sd->initiator_depth;
	p.responder_resources = sd->responder_resources;
	p.keepalive_interval = sock_flag(&sd->sk, SOCK_KEEPOPEN) ?
			       sd->opts.keepalive_interval : 0;
	p.transport = sd->transport;
	release_sock(&sd->sk);
	return copy_to_user(arg, &p, n) ? -EFAULT : 0;
}

static int sd_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct sd_sock *sd = sd_sk(sock->sk);
	int n;

	switch (cmd) {
	case SMBDIRECT_IOC_GET_PARAMS:
		return sd_ioctl_get_params(sd, (void __user *)arg);
	case SMBDIRECT_IOC_REGISTER:
		return sd_ioctl_register(sd, (void __user *)arg);
	case SMBDIRECT_IOC_DEREGISTER:
		return sd_ioctl_deregister(sd, (void __user *)arg);
	case SMBDIRECT_IOC_RDMA_READV:
		return sd_ioctl_rdma(sd, (void __user *)arg, true);
	case SMBDIRECT_IOC_RDMA_WRITEV:
		return sd_ioctl_rdma(sd, (void __user *)arg, false);
	case SIOCINQ:
		lock_sock(sock->sk);
		spin_lock_bh(&sd->lock);
		n = sd_rx_inq(sd);
		spin_unlock_bh(&sd->lock);
		release_sock(sock->sk);
		return put_user(n, (int __user *)arg);
	case SIOCOUTQ:
		spin_lock_bh(&sd->lock);
		n = sd_tx_outq(sd);
		spin_unlock_bh(&sd->lock);
		return put_user(n, (int __user *)arg);
	}
	return -ENOIOCTLCMD;
}

/*
 * A 32-bit process's ioctls. Each ioctl struct has one layout for every
 * ABI: its __u64 fields are 8-aligned and its size a multiple of 8, so
 * i386's 4-byte alignment of u64 changes neither the layout nor the size
 * (nor the command number, which holds the size); the user pointers in
 * it are zero-extended __u64. What differs is the argument pointer and
 * the iovec arrays, which sd_iov_import() reads as struct compat_iovec.
 * An ioctl we do not know goes to the generic compat translation.
 */
#define SD_ABI_U64(type, field) \
	static_assert(offsetof(type, field) % 8 == 0 && sizeof(type) % 8 == 0)
SD_ABI_U64(struct smbdirect_register, iov);
SD_ABI_U64(struct smbdirect_register, desc);
SD_ABI_U64(struct smbdirect_register, id);
SD_ABI_U64(struct smbdirect_deregister, id);
SD_ABI_U64(struct smbdirect_deregister, cookie);
SD_ABI_U64(struct smbdirect_rdma_args, desc);
SD_ABI_U64(struct smbdirect_rdma_args, iov);
SD_ABI_U64(struct smbdirect_rdma_args, offset);
SD_ABI_U64(struct smbdirect_rdma_args, length);
SD_ABI_U64(struct smbdirect_rdma_completion, bytes);
SD_ABI_U64(struct smbdirect_rdma, iov);
SD_ABI_U64(struct smbdirect_rdma, desc);
SD_ABI_U64(struct smbdirect_rdma, bytes);
SD_ABI_U64(struct smbdirect_buffer_descriptor_v1, offset);
static_assert(sizeof(struct smbdirect_params) == 56);
static_assert(sizeof(struct smbdirect_register) == 40);
static_assert(sizeof(struct smbdirect_deregister) == 32);
static_assert(sizeof(struct smbdirect_rdma_args) == 64);
static_assert(sizeof(struct smbdirect_rdma_completion) == 24);
static_assert(sizeof(struct smbdirect_rdma) == 40);
static_assert(sizeof(struct smbdirect_buffer_descriptor_v1) == 16);

#ifdef CONFIG_COMPAT
static int sd_compat_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	return sd_ioctl(sock, cmd, (unsigned long)compat_ptr(arg));
}

#define SD_COMPAT_IOCTL .compat_ioctl = sd_compat_ioctl,
#else
#define SD_COMPAT_IOCTL
#endif

static int sd_shutdown(struct socket *sock, int how)
{
	struct sock *sk = sock->sk;
	struct sd_sock *sd = sd_sk(sk);
	int err = 0;

	/* SHUT_RD, SHUT_WR, SHUT_RDWR -> RCV_SHUTDOWN, SEND_SHUTDOWN, both. */
	how++;
	if (how < RCV_SHUTDOWN || how > SHUTDOWN_MASK)
		return -EINVAL;
	lock_sock(sk);
	if (sd->state != SD_CONNECTED && sd->state != SD_CONNECTING) {
		err = -ENOTCONN;
		goto out;
	}
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | how);
	/*
	 * SMB-Direct has no half-close on the wire: the peer learns only
	 * when both directions are shut, by an orderly disconnect once the
	 * queued data left.
	 */
	if (sk->sk_shutdown == SHUTDOWN_MASK) {
		if (sd->state == SD_CONNECTED)
			sd_wait_drain(sd, sock_flag(sk, SOCK_LINGER) ?
				      sk->sk_lingertime : SD_CLOSE_DRAIN_JIFFIES);
		spin_lock_bh(&sd->lock);
		sd_fail(sd, 0);
		spin_unlock_bh(&sd->lock);
	}
	sd_wake(sd);
	sk->sk_state_change(sk);
out:
	release_sock(sk);
	return err;
}

/*
 * Who may ask for connection buffers beyond the unpriv_mem_max parameter:
 * CAP_NET_ADMIN in the initial user namespace, as SO_RCVBUFFORCE
 * (sockopt_capable()), and kernel sockets. Not the socket's own
 * namespace: the memory is the host's, and root of a container's user
 * namespace is nobody to the host. Asked only once the cap is exceeded,
 * so that a denial reaches the audit log only for a request that needed
 * it.
 */
static bool sd_mem_privileged(struct sock *sk)
{
	return sk->sk_kern_sock || capable(CAP_NET_ADMIN);
}

static int sd_setsockopt(struct socket *sock, int level, int optname,
			 sockptr_t optval, unsigned int optlen)
{
	struct sock *sk = sock->sk;
	struct sd_sock *sd = sd_sk(sk);
	int val, err;

	if (sk->sk_family == AF_INET6 && level == SOL_IPV6 && optname == IPV6_V6ONLY) {
		if (optlen < sizeof(int))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		lock_sock(sk);
		/* As TCP: only before bind() (listen() and connect() bind). */
		err = 0;
		if (sd->bound || sd->state != SD_UNCONNECTED)
			err = -EINVAL;
		else
			sk->sk_ipv6only = !!val;
		release_sock(sk);
		return err;
	}
	if (level == SOL_TCP) {
		if (optlen < sizeof(int))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		lock_sock(sk);
		err = sd_tcp_opt_set(&sd->tcp_opts, optname, val);
		release_sock(sk);
		return err;
	}
	if (!sd_sol_level(level))
		return -ENOPROTOOPT;
	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;
	if (optname == SMBDIRECT_OPT_RDMA_INFLIGHT) {
		if (val < 1 || val > SMBDIRECT_RDMA_INFLIGHT_MAX)
			return -EINVAL;
		lock_sock(sk);
		WRITE_ONCE(sd->rw_limit, val);
		release_sock(sk);
		/* A higher limit may let a waiting submitter go. */
		sd_wake(sd);
		return 0;
	}
	if (optname == SMBDIRECT_OPT_RDMA_EVENTS) {
		if (val & ~(SMBDIRECT_RDMA_EVENTS_PRI | SMBDIRECT_RDMA_EVENTS_WRBAND))
			return -EINVAL;
		lock_sock(sk);
		WRITE_ONCE(sd->rw_events, val);
		release_sock(sk);
		/* Pollers see the bits the completions and slots now raise. */
		sd_wake(sd);
		return 0;
	}
	err = sd_opt_check(optname, val);
	if (err)
		return err;
	lock_sock(sk);
	if (sd->state != SD_UNCONNECTED) {
		err = -EISCONN;
	} else {
		err = sd_opt_set_capped(&sd->opts, optname, val, sd_unpriv_mem_max());
		if (err == -EPERM && sd_mem_privileged(sk))
			err = sd_opt_set(&sd->opts, optname, val);
	}
	release_sock(sk);
	return err;
}

/* SMBDIRECT_OPT_INFO: a snapshot under sd->lock, copied out after. */
static int sd_get_info(struct sd_sock *sd, char __user *optval, int __user *optlen, int len)
{
	struct smbdirect_info info = {};
	struct sd_core_stats st;
	struct sd_rx_buf *rx;

	spin_lock_bh(&sd->lock);
	info.state = sd_uapi_state(sd->state);
	if (sd->core_ready) {
		sd_core_get_stats(&sd->core, &st);
		info.send_credits = st.send_credits;
		info.peer_credits = st.peer_credits;
		info.receives_posted = st.receives_posted;
		info.sends_in_flight = st.sends_in_flight;
	}
	list_for_each_entry(rx, &sd->rx_deferred, node)
		info.receives_held++;
	info.rx_queued = sd->rx_queued;
	info.tx_queued = READ_ONCE(sd->tx_queued);
	spin_unlock_bh(&sd->lock);

	len = min_t(int, len, sizeof(info));
	if (put_user(len, optlen) || copy_to_user(optval, &info, len))
		return -EFAULT;
	return 0;
}

/*
 * IPPROTO_TCP TCP_INFO, as MPTCP answers it for its sockets: programs
 * written for TCP read it for the connection's state and to size their
 * timers (Samba's smbd ends a client's connection when its oplock break
 * cannot read tcpi_rto). What SMB-Direct has an equivalent for is filled
 * in: the state (sk_state follows TCP's), the RTT and the RTO estimated
 * from send completions (struct sd_rtt), the PDU sizes as the MSS, the
 * send credits as the congestion window (in PDUs, as TCP's is in
 * segments), sends in flight as unacked,
 * bytes and PDUs each way, and what is not yet sent. The rest is 0, as
 * for a TCP connection without that feature. The struct is the kernel's
 * (uapi/linux/tcp.h); a shorter buffer gets its first bytes, as TCP's.
 */
static int sd_get_tcp_info(struct sd_sock *sd, char __user *optval,
			   int __user *optlen, int len)
{
	struct tcp_info info = {};
	struct sd_core_stats st;
	u32 rtt_us, rttvar_us;

	spin_lock_bh(&sd->lock);
	info.tcpi_state = READ_ONCE(sd->sk.sk_state);
	rtt_us = sd->rtt.srtt_us;
	rttvar_us = sd->rtt.rttvar_us;
	info.tcpi_rto = sd_rtt_rto(&sd->rtt);
	if (sd->state == SD_CONNECTED || (sd->state == SD_CLOSED && sd->params.version)) {
		info.tcpi_snd_mss = sd->params.max_send_size;
		info.tcpi_rcv_mss = sd->params.max_receive_size;
		info.tcpi_advmss = sd->params.max_receive_size;
		info.tcpi_pmtu = sd->params.max_send_size;
	}
	if (sd->core_ready) {
		sd_core_get_stats(&sd->core, &st);
		info.tcpi_unacked = st.sends_in_flight;
		info.tcpi_snd_cwnd = st.send_credits;
	}
	info.tcpi_rtt = rtt_us;
	info.tcpi_rttvar = rttvar_us;
	info.tcpi_min_rtt = rtt_us;
	info.tcpi_snd_ssthresh = TCP_INFINITE_SSTHRESH;
	info.tcpi_rcv_ssthresh = TCP_INFINITE_SSTHRESH;
	info.tcpi_bytes_acked = sd->tx_acked;
	info.tcpi_bytes_sent = sd->stats.v[SD_STAT_BYTES_TX];
	info.tcpi_bytes_received = sd->stats.v[SD_STAT_BYTES_RX];
	info.tcpi_segs_out = sd->stats.v[SD_STAT_PDUS_TX];
	info.tcpi_segs_in = sd->stats.v[SD_STAT_PDUS_RX];
	info.tcpi_data_segs_out = sd->stats.v[SD_STAT_PDUS_TX];
	info.tcpi_data_segs_in = sd->stats.v[SD_STAT_PDUS_RX];
	info.tcpi_notsent_bytes = sd_tx_outq(sd) - sd->tx_unacked;
	spin_unlock_bh(&sd->lock);

	len = min_t(int, len, sizeof(info));
	if (put_user(len, optlen) || copy_to_user(optval, &info, len))
		return -EFAULT;
	return 0;
}

static int sd_getsockopt(struct socket *sock, int level, int optname,
			 char __user *optval, int __user *optlen)
{
	struct sd_sock *sd = sd_sk(sock->sk);
	int len, val, err;
	bool v6only = sock->sk->sk_family == AF_INET6 && level == SOL_IPV6 &&
		      optname == IPV6_V6ONLY;

	if (!v6only && level != SOL_TCP && !sd_sol_level(level))
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;
	if (!v6only && level != SOL_TCP && optname == SMBDIRECT_OPT_INFO)
		return len < 0 ? -EINVAL : sd_get_info(sd, optval, optlen, len);
	if (level == SOL_TCP && optname == TCP_INFO)
		return len < 0 ? -EINVAL : sd_get_tcp_info(sd, optval, optlen, len);
	if (len < (int)sizeof(int))
		return -EINVAL;
	lock_sock(sock->sk);
	if (v6only) {
		val = sock->sk->sk_ipv6only;
		err = 0;
	} else if (level == SOL_TCP) {
		err = sd_tcp_opt_get(&sd->tcp_opts, optname, &val);
	} else if (optname == SMBDIRECT_OPT_RDMA_INFLIGHT) {
		val = sd->rw_limit;
		err = 0;
	} else if (optname == SMBDIRECT_OPT_RDMA_EVENTS) {
		val = sd->rw_events;
		err = 0;
	} else {
		err = sd_opt_get(&sd->opts, optname, &val);
	}
	release_sock(sock->sk);
	if (err)
		return err;
	if (put_user(sizeof(int), optlen) || copy_to_user(optval, &val, sizeof(int)))
		return -EFAULT;
	return 0;
}

#define SD_PROTO_OPS \
	.owner = THIS_MODULE,			\
	.release = sd_release,			\
	.bind = sd_bind,			\
	.connect = sd_connect,			\
	.socketpair = sock_no_socketpair,	\
	.accept = sd_accept,			\
	.getname = sd_getname,			\
	.poll = sd_poll,			\
	.ioctl = sd_ioctl,			\
	SD_COMPAT_IOCTL				\
	.listen = sd_listen,			\
	.shutdown = sd_shutdown,		\
	.setsockopt = sd_setsockopt,		\
	.getsockopt = sd_getsockopt,		\
	.sendmsg = sd_sendmsg,			\
	.recvmsg = sd_recvmsg,			\
	.mmap = sock_no_mmap

/*
 * .family stays 0: the slot is picked at load, and the kernel reads only
 * the net_proto_family's number and sk->sk_family.
 */
static const struct proto_ops sd_ops = {
	SD_PROTO_OPS,
};

/* IPPROTO_SMBDIRECT sockets: the same calls (af_inet.c registers them). */
const struct proto_ops sd_inet_ops = {
	.family = PF_INET,
	SD_PROTO_OPS,
};

const struct proto_ops sd_inet6_ops = {
	.family = PF_INET6,
	SD_PROTO_OPS,
};

int sd_proto_init(void)
{
	return proto_register(&sd_proto, 1);
}

void sd_proto_exit(void)
{
	proto_unregister(&sd_proto);
}
