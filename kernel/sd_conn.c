// SPDX-License-Identifier: GPL-2.0
/*
 * Connection state shared by every context: starting the core, carrying
 * out its actions, failing a connection, the timer and the works.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/workqueue.h>

#include "sd_sock.h"
#include "test_hooks.h"

/* Every listener's child lists; child->parent. */
DEFINE_SPINLOCK(sd_accept_lock);
/* Our own queue: module exit flushes it, so no work outlives the code. */
struct workqueue_struct *sd_wq;

/* Any monotonic origin will do for the core. */
u64 sd_now_ms(void)
{
	return jiffies64_to_msecs(get_jiffies_64());
}

void sd_wake(struct sd_sock *sd)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sd->sk.sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_all(&wq->wait);
	rcu_read_unlock();
}

static int sd_reason_errno(int reason)
{
	switch (reason) {
	case SD_CORE_REASON_NEGOTIATE_TIMEOUT:
	case SD_CORE_REASON_KEEPALIVE_TIMEOUT:
		return -ETIMEDOUT;
	case SD_CORE_REASON_NEGOTIATE_REJECTED:
		return -ECONNREFUSED;
	case SD_CORE_REASON_PROTOCOL_ERROR:
		return -EPROTO;
	case SD_CORE_REASON_PEER:
		return -ECONNRESET;
	}
	return 0;
}

/*
 * The connection is over: err is -errno, or 0 when orderly. Under
 * sd->lock; idempotent. The QP and id stay until teardown.
 */
void sd_fail(struct sd_sock *sd, int err)
{
	struct sd_core_actions act;

	if (sd->failed)
		return;
	WRITE_ONCE(sd->failed, true);
	trace_af_smbdirect_fail(&sd->sk, err);
	if (sd_stat_of_errno(err) != SD_STAT_NR)
		sd_stat_add(sd, sd_stat_of_errno(err), 1);
	if (sd->core_ready)
		(void)sd_core_disconnect(&sd->core, SD_CORE_REASON_LOCAL, &act);
	if (sd->state != SD_LISTENING)
		sd_set_state(sd, SD_CLOSED);
	if (err)
		WRITE_ONCE(sd->sk.sk_err, -err);
	WRITE_ONCE(sd->sk.sk_shutdown, SHUTDOWN_MASK);
	if (!sd->dying) {
		if (sd->qp_used)
			queue_work(sd_wq, &sd->disconnect_work);
		/*
		 * A child nobody accepted yet has nobody else to free it.
		 * One already queued for accept() stays there, as TCP's:
		 * its reader gets what came before the end, then the end.
		 */
		if (READ_ONCE(sd->parent) && !READ_ONCE(sd->on_ready)) {
			sock_hold(&sd->sk);
			if (!queue_work(sd_wq, &sd->destroy_work))
				sock_put(&sd->sk);
		}
	}
	if (err)
		sk_error_report(&sd->sk);
	sd_wake(sd);
	/* As TCP's end of stream: O_ASYNC owners learn it by SIGIO. */
	if (sd->state != SD_LISTENING)
		sk_wake_async(&sd->sk, SOCK_WAKE_WAITD, POLL_HUP);
	/* RDMA ioctls waiting for send-queue room give up. */
	wake_up_all(&sd->rdma_wait);
}

/*
 * How long a failed completion waits for rdma_cm to say the peer
 * disconnected before it counts as a reset. iWARP gets longer: there the
 * flush comes first (the peer's TCP close moves the QP to the error state
 * at once) and the DISCONNECTED that says the close was orderly follows
 * through iw_cm's one ordered workqueue, behind every other connection's
 * close: 64 connections closed together over siw (6.12, TCG guest) had
 * DISCONNECTED more than 2 s behind the flush for the last twenty-odd.
 */
#define SD_WC_ERROR_GRACE (2 * HZ)
#define SD_WC_ERROR_GRACE_IWARP (6 * HZ)

/*
 * A work request completed with an error other than a flush; sd->lock
 * held. On iWARP a peer's orderly close races with our sends: a send that
 * reaches the closed TCP connection fails before rdma_cm reports the
 * DISCONNECTED that says the close was orderly. So nothing more is posted,
 * and the connection counts as reset only if that event does not follow.
 */
void sd_wc_error(struct sd_sock *sd)
{
	if (sd->failed || sd->wc_failed)
		return;
	sd->wc_failed = true;
	wake_up_all(&sd->rdma_wait);
	if (!sd->dying)
		queue_delayed_work(sd_wq, &sd->reset_work,
				   sd->qp && sd->cm_id &&
				   rdma_protocol_iwarp(sd->qp->device, sd->cm_id->port_num) ?
				   SD_WC_ERROR_GRACE_IWARP : SD_WC_ERROR_GRACE);
	else
		sd_fail(sd, -ECONNRESET);
}

/*
 * Posting a work request failed; sd->lock held. -ENOTCONN is the QP
 * leaving RTS under us (siw refuses work while its QP state is being
 * changed or once it is closing: the peer's close, seen by the QP before
 * rdma_cm reports it). That is the race sd_wc_error() judges: a client
 * whose server accepted and closed at once reposts the receive of the
 * negotiate response into a closing QP, and must still connect and then
 * read EOF, not fail connect() with EIO. Any other error is ours.
 */
void sd_post_failed(struct sd_sock *sd, int err)
{
	if (err == -ENOTCONN)
		sd_wc_error(sd);
	else
		sd_fail(sd, -EIO);
}

static void sd_reset_fn(struct work_struct *work)
{
	struct sd_sock *sd = container_of(to_delayed_work(work), struct sd_sock,
					  reset_work);

	spin_lock_bh(&sd->lock);
	sd_fail(sd, -ECONNRESET);
	spin_unlock_bh(&sd->lock);
}

static void sd_established(struct sd_sock *sd)
{
	if (sd_core_get_params(&sd->core, &sd->params)) {
		sd_fail(sd, -EPROTO);
		return;
	}
	trace_af_smbdirect_negotiated(&sd->sk, sd->params.version,
				      sd->params.max_send_size,
				      sd->params.max_receive_size,
				      sd->params.max_fragmented_send_size,
				      sd->params.max_fragmented_receive_size,
				      sd->params.max_read_write_size,
				      sd->params.peer_credit_target,
				      sd->params.receive_credit_target,
				      sd->opts.keepalive_interval);
	sd_set_state(sd, SD_CONNECTED);
	sd_stat_add(sd, SD_STAT_CONNECTIONS, 1);
	sd_core_stream_parser_init(&sd->tx_parser,
				   sd->params.max_fragmented_send_size);
	/*
	 * The peer's first message came before the RTU: tell the IB CM, as
	 * a QP's COMM_EST event would, so ESTABLISHED need not wait for it.
	 */
	if (READ_ONCE(sd->parent) && !sd->cm_connected && sd->cm_id)
		(void)rdma_notify(sd->cm_id, IB_EVENT_COMM_EST);
	sd_child_ready(sd);
	sd_wake(sd);
	/* As TCP's connect: an O_ASYNC connecting socket learns it can write. */
	if (!READ_ONCE(sd->parent))
		sk_wake_async(&sd->sk, SOCK_WAKE_IO, POLL_OUT);
}

/*
 * A child stops counting as half-open: it negotiated, or it leaves its
 * listener before (a negotiation timeout, the peer's disconnect or
 * reject, device removal, the listener's close). Whichever comes first
 * counts, the others find half_open clear. sd_accept_lock held.
 */
static void sd_child_half_open_end(struct sd_sock *child, struct sd_sock *parent)
	__must_hold(&sd_accept_lock)
{
	if (!child->half_open)
		return;
	child->half_open = false;
	parent->nr_half_open--;
	(*sd_stats_ns_half_open(child))--;
}

/*
 * A new child joins its listener's pending list, half-open; the caller
 * checked the bounds in the same critical section (sd_cm_request()).
 */
void sd_child_link(struct sd_sock *parent, struct sd_sock *child)
	__must_hold(&sd_accept_lock)
{
	WRITE_ONCE(child->parent, parent);
	sock_hold(&parent->sk);
	list_add_tail(&child->child_node, &parent->pending);
	parent->nr_children++;
	child->half_open = true;
	parent->nr_half_open++;
	(*sd_stats_ns_half_open(child))++;
}

/*
 * The child is no longer its listener's to count: it leaves every count
 * it is in. Its list entry is the caller's (sd_listener_close() moves
 * them all at once); the reference on the listener goes with its owner.
 */
void sd_child_forget(struct sd_sock *child)
	__must_hold(&sd_accept_lock)
{
	struct sd_sock *parent = child->parent;

	sd_child_half_open_end(child, parent);
	parent->nr_children--;
	WRITE_ONCE(child->parent, NULL);
}

/* As sd_child_forget(), off its listener's list too. */
void sd_child_unlink(struct sd_sock *child)
	__must_hold(&sd_accept_lock)
{
	list_del_init(&child->child_node);
	sd_child_forget(child);
}

/*
 * A passive-side child goes to its listener's accept queue once both the
 * negotiation and rdma_cm are done; sd->lock held. The peer's negotiate
 * request can arrive before the RTU: a child closed in between would
 * leave its IB CM in REP_SENT, where it cannot send a DREQ, and the peer
 * would see a reject instead of an orderly disconnect. A peer that
 * negotiated and disconnected before rdma_cm said ESTABLISHED made the
 * connection all the same (the DREQ moved the IB CM past REP_SENT): its
 * child is handed out, to read what the peer sent and then EOF.
 */
void sd_child_ready(struct sd_sock *sd)
	__must_hold(&sd->lock)
{
	struct sd_sock *parent;

	if (sd->state != SD_CONNECTED || sd->failed ||
	    (!sd->cm_connected && !sd->peer_closed))
		return;
	spin_lock_bh(&sd_accept_lock);
	parent = sd->parent;
	if (parent && !sd->on_ready) {
		sd_child_half_open_end(sd, parent);
		WRITE_ONCE(sd->on_ready, true);
		list_move_tail(&sd->child_node, &parent->ready);
		parent->sk.sk_data_ready(&parent->sk);
	}
	spin_unlock_bh(&sd_accept_lock);
}

/* Carries out what the core asked, in the contract's order; sd->lock held. */
void sd_do_actions(struct sd_sock *sd, const struct sd_core_actions *act)
{
	u64 now, delay;

	if (act->flags & SD_CORE_ACT_ESTABLISHED)
		sd_established(sd);
	if (act->flags & SD_CORE_ACT_SEND)
		sd_tx_flush(sd);
	if ((act->flags & SD_CORE_ACT_ARM_TIMER) && !sd->dying) {
		now = sd_now_ms();
		delay = act->timer_deadline_ms > now ? act->timer_deadline_ms - now : 0;
		mod_delayed_work(sd_wq, &sd->timer_work,
				 msecs_to_jiffies(min_t(u64, delay, 24 * 3600 * 1000ULL)));
	}
	if (act->flags & SD_CORE_ACT_DISCONNECT)
		sd_fail(sd, sd_reason_errno(act->disconnect_reason));
}

int sd_core_start(struct sd_sock *sd, unsigned int role)
{
	struct sd_core_config cfg;
	int err;

	sd_core_config_default(&cfg, role);
	cfg.receive_credit_max = sd->opts.receive_credit_max;
	cfg.send_credit_target = sd->opts.send_credit_target;
	cfg.max_send_size = sd->opts.max_send_size;
	cfg.max_receive_size = sd->opts.max_receive_size;
	cfg.max_fragmented_size = sd->opts.max_fragmented_size;
	cfg.max_read_write_size = sd->opts.max_read_write_size;
	cfg.keepalive_interval_ms = sock_flag(&sd->sk, SOCK_KEEPOPEN) ?
				    sd->opts.keepalive_interval * 1000 : 0;
	cfg.negotiate_timeout_ms = sd_test_negotiate_timeout(cfg.negotiate_timeout_ms);
	spin_lock_bh(&sd->lock);
	sd->negotiate_timeout_ms = cfg.negotiate_timeout_ms;
	err = sd_core_conn_init(&sd->core, &cfg);
	sd->core_ready = !err;
	spin_unlock_bh(&sd->lock);
	return err ? -EINVAL : 0;
}

static void sd_timer_fn(struct work_struct *work)
{
	struct sd_sock *sd = container_of(to_delayed_work(work), struct sd_sock,
					  timer_work);
	struct sd_core_actions act;

	spin_lock_bh(&sd->lock);
	if (sd->establish_by && !sd->cm_connected && !sd->peer_closed) {
		/* An accepted child whose peer never completed the connection. */
		if (time_after_eq(jiffies, sd->establish_by)) {
			sd->establish_by = 0;
			sd_fail(sd, -ETIMEDOUT);
		}
	} else if (sd->core_ready && !sd->failed && !sd->dying &&
		   !sd_core_on_timer(&sd->core, sd_now_ms(), &act)) {
		sd_do_actions(sd, &act);
	}
	spin_unlock_bh(&sd->lock);
	sd_tx_reap(sd);
}

/* rdma_disconnect() may sleep (iWARP), so never from under sd->lock. */
static void sd_disconnect_fn(struct work_struct *work)
{
	struct sd_sock *sd = container_of(work, struct sd_sock, disconnect_work);

	rdma_disconnect(sd->cm_id);
}

static void sd_destroy_fn(struct work_struct *work)
{
	struct sd_sock *sd = container_of(work, struct sd_sock, destroy_work);

	sd_child_drop(sd, true);
	sock_put(&sd->sk);
}

/*
 * Frees a child a listener still holds, unless someone (accept(), the
 * listener's close, another failure) unlinked it first. Once unlinked it
 * is ours alone; rdma_cm's handler (lock false) must not take lock_sock()
 * under its handler mutex (see sd_cm.c), the works do.
 */
void sd_child_drop(struct sd_sock *child, bool lock)
{
	struct sd_sock *parent;

	spin_lock_bh(&sd_accept_lock);
	parent = child->parent;
	if (parent)
		sd_child_unlink(child);
	spin_unlock_bh(&sd_accept_lock);
	if (!parent)
		return;
	if (lock)
		lock_sock(&child->sk);
	sd_transport_teardown(child);
	if (lock)
		release_sock(&child->sk);
	sock_put(&parent->sk);
	sock_put(&child->sk);
}

void sd_conn_setup(struct sd_sock *sd)
{
	spin_lock_init(&sd->lock);
	mutex_init(&sd->res_mutex);
	INIT_LIST_HEAD(&sd->dev_node);
	INIT_LIST_HEAD(&sd->rm_node);
	INIT_LIST_HEAD(&sd->rx_queue);
	INIT_LIST_HEAD(&sd->rx_deferred);
	INIT_LIST_HEAD(&sd->tx_queue);
	INIT_LIST_HEAD(&sd->tx_free);
	INIT_LIST_HEAD(&sd->tx_done);
	INIT_LIST_HEAD(&sd->child_node);
	INIT_LIST_HEAD(&sd->pending);
	INIT_LIST_HEAD(&sd->ready);
	INIT_LIST_HEAD(&sd->regs);
	INIT_LIST_HEAD(&sd->regs_dying);
	init_waitqueue_head(&sd->rdma_wait);
	sd_rw_setup(sd);
	atomic_set(&sd->res_users, 0);
	INIT_DELAYED_WORK(&sd->timer_work, sd_timer_fn);
	INIT_DELAYED_WORK(&sd->reset_work, sd_reset_fn);
	INIT_WORK(&sd->disconnect_work, sd_disconnect_fn);
	INIT_WORK(&sd->destroy_work, sd_destroy_fn);
	INIT_WORK(&sd->remove_work, sd_removal_fn);
}

int sd_conn_init(void)
{
	sd_wq = alloc_workqueue("af_smbdirect", WQ_MEM_RECLAIM, 0);
	return sd_wq ? 0 : -ENOMEM;
}

void sd_conn_exit(void)
{
	destroy_workqueue(sd_wq);
}
