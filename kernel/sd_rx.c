// SPDX-License-Identifier: GPL-2.0
/*
 * Receive path: completions feed the core; what it delivers is copied
 * into whole messages so the receive buffer can go back to the peer at
 * once. A message of max_fragmented_size spans far more PDUs than there
 * are receive buffers, so holding buffers until a reader comes would
 * deadlock on credits. Flow control instead holds buffers back (no
 * credits for the peer) while complete messages beyond sk_rcvbuf wait.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/sched/mm.h>
#include <net/sock.h>

#include "sd_sock.h"
#include "test_hooks.h"

/* A message of len bytes, charged to the socket's memory cgroup. */
struct sd_msg *sd_msg_alloc(struct sd_sock *sd, u32 len)
{
	struct mem_cgroup *old = sd_memcg_enter(sd);
	struct sd_msg *m = kmalloc(sizeof(*m), SD_GFP_CONN);

	if (m) {
		m->data = kvmalloc(max_t(u32, len, 1), SD_GFP_CONN);
		if (!m->data) {
			kfree(m);
			m = NULL;
		}
	}
	sd_memcg_leave(old);
	if (!m)
		return NULL;
	m->len = len;
	m->filled = 0;
	m->done = 0;
	m->msg_len = len;
	m->msg_off = 0;
	m->inv = false;
	m->inv_token = 0;
	INIT_LIST_HEAD(&m->node);
	return m;
}

/* May sleep (vfree): never under sd->lock. */
void sd_msg_free(struct sd_msg *m)
{
	kvfree(m->data);
	kfree(m);
}

static bool sd_rx_hold_back(struct sd_sock *sd)
{
	return !list_empty(&sd->rx_queue) &&
	       sd->rx_queued >= (unsigned int)READ_ONCE(sd->sk.sk_rcvbuf);
}

/*
 * may_hold: the buffer carried data, so it may wait for the reader. One
 * that carried none (a credit grant, a keepalive probe or its answer) goes
 * back at once even then: the peer never spends its last credit on data,
 * so those keep flowing while the reader sleeps, and the queue cannot grow.
 */
static void sd_rx_repost(struct sd_sock *sd, struct sd_rx_buf *rx, bool may_hold)
{
	struct sd_core_actions act;
	int err;

	/* A QP that failed a completion takes no more work requests. */
	if (sd->wc_failed || (may_hold && sd_rx_hold_back(sd))) {
		list_add_tail(&rx->node, &sd->rx_deferred);
		return;
	}
	err = sd_test_repost_fail() ?: sd_rx_post(sd, rx);
	if (err) {
		sd_post_failed(sd, err);
		list_add_tail(&rx->node, &sd->rx_deferred);
		return;
	}
	if (!sd_core_recv_posted(&sd->core, 1, &act))
		sd_do_actions(sd, &act);
}

/* The reader made room: give held-back buffers to the peer again. */
void sd_rx_release_deferred(struct sd_sock *sd)
{
	struct sd_rx_buf *rx;

	while (!sd->failed && !sd->dying && !sd->wc_failed && sd->qp &&
	       !list_empty(&sd->rx_deferred) && !sd_rx_hold_back(sd)) {
		rx = list_first_entry(&sd->rx_deferred, struct sd_rx_buf, node);
		list_del_init(&rx->node);
		sd_rx_repost(sd, rx, true);
	}
}

/* DELIVER: bytes of the PDU in rx go to the message being reassembled. */
static int sd_rx_deliver(struct sd_sock *sd, struct sd_rx_buf *rx, u32 byte_len,
			 const struct sd_core_actions *act)
	__must_hold(&sd->lock)
{
	u32 off = act->deliver_offset, len = act->deliver_length;
	unsigned int noio;
	struct sd_msg *m;

	/* The core checked these against the PDU; a second look is cheap. */
	if (off > byte_len || len > byte_len - off)
		return -EPROTO;
	if (act->deliver_flags & SD_CORE_DELIVER_FIRST) {
		if (sd->rx_asm || act->message_length > sd->opts.max_fragmented_size)
			return -EPROTO;
		/*
		 * Only this completion handler touches rx_asm. It runs on
		 * ib_comp_wq, a reclaim workqueue that storage over RDMA
		 * (NFS, iSER, NVMe-oF) shares: reclaim for the buffer (up to
		 * max_fragmented_size) must not wait on I/O, which may wait
		 * on this very workqueue.
		 */
		spin_unlock_bh(&sd->lock);
		noio = memalloc_noio_save();
		m = sd_msg_alloc(sd, act->message_length);
		memalloc_noio_restore(noio);
		spin_lock_bh(&sd->lock);
		if (!m)
			return -ENOMEM;
		sd->rx_asm = m;
	}
	m = sd->rx_asm;
	if (!m || len > m->len - m->filled)
		return -EPROTO;
	memcpy(m->data + m->filled, rx->data + off, len);
	m->filled += len;
	if (act->deliver_flags & SD_CORE_DELIVER_LAST) {
		if (m->filled != m->len)
			return -EPROTO;
		sd->rx_asm = NULL;
		list_add_tail(&m->node, &sd->rx_queue);
		sd->rx_queued += m->len;
		sd->rx_msgs++;
		sd_stat_add(sd, SD_STAT_MSGS_RX, 1);
		sd_stat_add(sd, SD_STAT_BYTES_RX, m->len);
		trace_af_smbdirect_message(&sd->sk, m->len, sd->rx_queued);
		/* sd_data_ready(), or a kernel user's callback. */
		sd->sk.sk_data_ready(&sd->sk);
	}
	return 0;
}

void sd_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sd_rx_buf *rx = container_of(wc->wr_cqe, struct sd_rx_buf, cqe);
	struct sd_sock *sd = rx->sd;
	struct sd_core_actions act;
	bool negotiated;
	int err;

	if (wc->status != IB_WC_SUCCESS) {
		/*
		 * Receives are always posted, so a flush outside teardown means
		 * the QP went to the error state under us (the peer's RDMA
		 * broke our access rules and our responder moved it there, or
		 * the peer disconnected): the connection is over, and
		 * sd_wc_error() tells which once rdma_cm has had its say.
		 * Any other error is what the peer sent failing to arrive (a
		 * SEND longer than the buffer): a reset, even when the
		 * disconnect that follows (siw's TERMINATE) would read as
		 * orderly.
		 */
		spin_lock_bh(&sd->lock);
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			sd_fail(sd, -ECONNRESET);
		else if (!sd->dying)
			sd_wc_error(sd);
		spin_unlock_bh(&sd->lock);
		return;
	}
	sd_test_rx_delay();
	ib_dma_sync_single_for_cpu(cq->device, rx->dma, sd->opts.max_receive_size,
				   DMA_FROM_DEVICE);
	spin_lock_bh(&sd->lock);
	/* Before the core sees the PDU: its reader finds the token marked. */
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		sd_mr_remote_invalidated(sd, wc->ex.invalidate_rkey);
	if (sd->failed || !sd->core_ready) {
		spin_unlock_bh(&sd->lock);
		return;
	}
	/* After the negotiate PDU, each is a data transfer PDU. */
	negotiated = sd->state == SD_CONNECTED;
	/* A failed rule sets DISCONNECT in act; the buffer then stays unposted. */
	if (!sd_core_on_recv(&sd->core, sd_now_ms(), rx->data,
			     min_t(u32, wc->byte_len, sd->opts.max_receive_size),
			     &act) && negotiated)
		sd_stat_add(sd, SD_STAT_PDUS_RX, 1);
	if (trace_af_smbdirect_pdu_recv_enabled()) {
		struct sd_core_stats st;

		sd_core_get_stats(&sd->core, &st);
		trace_af_smbdirect_pdu_recv(&sd->sk, wc->byte_len,
					    act.flags & SD_CORE_ACT_DELIVER ?
					    act.deliver_length : 0,
					    st.send_credits, st.peer_credits);
	}
	if (act.flags & SD_CORE_ACT_DELIVER) {
		err = sd_rx_deliver(sd, rx, wc->byte_len, &act);
		if (err) {
			sd_fail(sd, err);
			spin_unlock_bh(&sd->lock);
			return;
		}
	}
	if ((act.flags & (SD_CORE_ACT_DELIVER | SD_CORE_ACT_REPOST)) && !sd->failed)
		sd_rx_repost(sd, rx, act.flags & SD_CORE_ACT_DELIVER);
	sd_do_actions(sd, &act);
	spin_unlock_bh(&sd->lock);
	sd_tx_reap(sd);
}

/*
 * SIOCINQ/FIONREAD: what read() returns without waiting. SOCK_STREAM
 * reads each message with its 4-byte prefix, less what the reader already
 * took of the head message; SEQPACKET the messages' bytes. lock_sock()
 * held (the reader's progress, m->done, is stable under it) and sd->lock.
 */
u32 sd_rx_inq(struct sd_sock *sd)
{
	const struct sd_msg *m;

	if (sd->type != SOCK_STREAM)
		return sd->rx_queued;
	m = list_first_entry_or_null(&sd->rx_queue, struct sd_msg, node);
	if (!m)
		return 0;
	return sd->rx_queued + sd->rx_msgs * SD_CORE_STREAM_PREFIX_SIZE - m->done;
}

bool sd_rx_readable(struct sd_sock *sd)
{
	return !list_empty_careful(&sd->rx_queue);
}

/*
 * Copies from the head message. SOCK_STREAM reads the 4-byte prefix and
 * then the payload as one byte stream; m->done counts both.
 */
static int sd_rx_copy_stream(struct sd_msg *m, struct msghdr *msg, u32 want,
			     u32 *done)
{
	u8 prefix[SD_CORE_STREAM_PREFIX_SIZE];
	u32 pos = *done, n, copied = 0;

	if (pos < sizeof(prefix)) {
		sd_core_stream_prefix(m->len, prefix);
		n = min_t(u32, want, sizeof(prefix) - pos);
		if (copy_to_iter(prefix + pos, n, &msg->msg_iter) != n)
			return -EFAULT;
		pos += n;
		copied += n;
	}
	n = min_t(u32, want - copied, m->len + sizeof(prefix) - pos);
	if (n) {
		if (copy_to_iter(m->data + pos - sizeof(prefix), n, &msg->msg_iter) != n)
			return -EFAULT;
		copied += n;
		pos += n;
	}
	*done = pos;
	return copied;
}

static void sd_rx_consumed(struct sd_sock *sd, struct sd_msg *m)
{
	spin_lock_bh(&sd->lock);
	list_del(&m->node);
	sd->rx_queued -= m->len;
	sd->rx_msgs--;
	sd_rx_release_deferred(sd);
	spin_unlock_bh(&sd->lock);
	sd_msg_free(m);
	sd_tx_reap(sd);
}

static int sd_rx_wait(struct sd_sock *sd, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &sd->sk;

	add_wait_queue(sk_sleep(sk), &wait);
	sk_wait_event(sk, timeo, sd_rx_readable(sd) || READ_ONCE(sk->sk_err) ||
		      (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
	return 0;
}

static struct sd_msg *sd_rx_head(struct sd_sock *sd)
{
	struct sd_msg *m;

	spin_lock_bh(&sd->lock);
	m = list_first_entry_or_null(&sd->rx_queue, struct sd_msg, node);
	spin_unlock_bh(&sd->lock);
	return m;
}

int sd_recvmsg(struct socket *sock, struct msghdr *msg, size_t len, int flags)
{
	struct sock *sk = sock->sk;
	struct sd_sock *sd = sd_sk(sk);
	bool peek = flags & MSG_PEEK;
	size_t copied = 0, target;
	struct sd_msg *m;
	long timeo;
	int err = 0;
	u32 pos;

	if (flags & MSG_ERRQUEUE)
		return sd_rw_recv_errqueue(sd, msg);
	if (flags & MSG_OOB)
		return -EOPNOTSUPP;
	lock_sock(sk);
	if (sd->state == SD_LISTENING || sd->state == SD_UNCONNECTED ||
	    sd->state == SD_CONNECTING) {
		err = -ENOTCONN;
		goto out;
	}
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	target = sock_rcvlowat(sk, flags & MSG_WAITALL, len);
	if (sd->type == SOCK_SEQPACKET)
		target = 1;
	while (copied < len || (!len && !copied)) {
		m = sd_rx_head(sd);
		if (!m) {
			if (copied >= target && copied)
				break;
			if (READ_ONCE(sk->sk_err)) {
				err = copied ? 0 : sock_error(sk);
				break;
			}
			if (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN)
				break;
			if (!timeo) {
				err = copied ? 0 : -EAGAIN;
				break;
			}
			if (signal_pending(current)) {
				err = copied ? 0 : sock_intr_errno(timeo);
				break;
			}
			sd_rx_wait(sd, &timeo);
			continue;
		}
		if (sd->type == SOCK_SEQPACKET) {
			size_t n = min_t(size_t, len, m->len);

			if (copy_to_iter(m->data, n, &msg->msg_iter) != n) {
				err = -EFAULT;
				break;
			}
			copied = n;
			if (n < m->len) {
				msg->msg_flags |= MSG_TRUNC;
				if (flags & MSG_TRUNC)
					copied = m->len;
			}
			if (!peek)
				sd_rx_consumed(sd, m);
			break;
		}
		if (!len)
			break;
		pos = m->done;
		err = sd_rx_copy_stream(m, msg, min_t(size_t, len - copied, U32_MAX),
					&pos);
		if (err < 0)
			break;
		copied += err;
		err = 0;
		if (peek)
			break;	/* peeking stops at a message boundary: cheap */
		m->done = pos;
		if (pos == m->len + SD_CORE_STREAM_PREFIX_SIZE)
			sd_rx_consumed(sd, m);
	}
out:
	release_sock(sk);
	return copied ? copied : err;
}
