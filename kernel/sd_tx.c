// SPDX-License-Identifier: GPL-2.0
/*
 * Send path: sendmsg copies the user's bytes into messages on tx_queue and
 * returns; sd_tx_flush() turns them into PDUs whenever the core has
 * credits and a send buffer is free, from whichever context made that true
 * (sendmsg, a receive that brought credits, a send completion). The
 * staging copy is what lets a message outlive the syscall: non-blocking
 * sends, and a fault in user memory never leaves half a message on the wire.
 *
 * SO_SNDBUF bounds the staged bytes (tx_queued). A SEQPACKET message is
 * staged whole. A STREAM message, whose prefix may announce up to the
 * peer's MaxFragmentedSize, is staged in pieces of what SO_SNDBUF has room
 * for, each freed once its bytes are in PDUs; the core fragments the whole
 * message as one, so the peer sees the same PDUs' RemainingDataLength and
 * the last PDU (with SEND_WITH_INVALIDATE if asked) as for one buffer.
 * One send call at a time writes a STREAM socket's message (tx_writer).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <linux/uio.h>
#include <net/sock.h>

#include "uapi/linux/smbdirect.h"
#include "sd_sock.h"

static int sd_tx_post(struct sd_sock *sd, struct sd_tx_buf *tx, u32 len,
		      const struct sd_msg *inv)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	ib_dma_sync_single_for_device(sd->pd->device, tx->dma, len, DMA_TO_DEVICE);
	sge.addr = tx->dma;
	sge.length = len;
	sge.lkey = sd->pd->local_dma_lkey;
	tx->cqe.done = sd_tx_done;
	wr.wr_cqe = &tx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	if (inv) {
		wr.opcode = IB_WR_SEND_WITH_INV;
		wr.ex.invalidate_rkey = inv->inv_token;
	}
	wr.send_flags = IB_SEND_SIGNALED;
	return ib_post_send(sd->qp, &wr, NULL);
}

/*
 * The counters of one posted PDU; sd->lock held. done: the message whose
 * last bytes it carried, if any.
 */
static void sd_tx_count(struct sd_sock *sd, const struct sd_core_pdu *pdu,
			const struct sd_msg *done, bool inv)
	__must_hold(&sd->lock)
{
	if (pdu->kind == SD_CORE_PDU_NEGOTIATE_REQUEST ||
	    pdu->kind == SD_CORE_PDU_NEGOTIATE_RESPONSE)
		return;
	sd_stat_add(sd, SD_STAT_PDUS_TX, 1);
	if (pdu->flags & SD_CORE_FLAG_RESPONSE_REQUESTED)
		sd_stat_add(sd, SD_STAT_KEEPALIVES_TX, 1);
	if (inv)
		sd_stat_add(sd, SD_STAT_SEND_INVALIDATES, 1);
	if (done) {
		sd_stat_add(sd, SD_STAT_MSGS_TX, 1);
		sd_stat_add(sd, SD_STAT_BYTES_TX, done->msg_len);
	}
}

/*
 * Makes the head of tx_queue the current piece: the start of a message the
 * core is then told of, or the next piece of the one it is fragmenting
 * (pieces are queued in order, and a piece leaves the queue once all its
 * bytes are in PDUs).
 */
static int sd_tx_start(struct sd_sock *sd)
	__must_hold(&sd->lock)
{
	struct sd_core_actions act;
	struct sd_msg *m;

	if (sd->tx_cur || list_empty(&sd->tx_queue))
		return 0;
	m = list_first_entry(&sd->tx_queue, struct sd_msg, node);
	/* Its RDMA WRITEs go first: RC places them before the message. */
	if (!m->msg_off && sd_rw_fenced(sd, m->rw_fence))
		return 0;
	if (!m->msg_off && sd_core_send_message(&sd->core, m->msg_len, &act))
		return -EPROTO;
	sd->tx_cur = m;
	return 0;
}

/* Bytes of the current message staged from m (the current piece) on. */
static u32 sd_tx_avail(struct sd_sock *sd, struct sd_msg *m)
	__must_hold(&sd->lock)
{
	u32 avail = m->filled - m->done;

	/* A later piece has bytes only once the one before is full. */
	while (m->filled == m->len && !sd_msg_last(m) &&
	       !list_is_last(&m->node, &sd->tx_queue)) {
		m = list_next_entry(m, node);
		avail += m->filled;
	}
	return avail;
}

/*
 * Copies len staged bytes (at most sd_tx_avail()) of the current message
 * to dst, retiring every piece whose bytes are all out to tx_done. Returns
 * the last piece if the message's last byte went.
 */
static struct sd_msg *sd_tx_copy(struct sd_sock *sd, u8 *dst, u32 len)
	__must_hold(&sd->lock)
{
	struct sd_msg *m = sd->tx_cur;
	u32 n;

	while (len) {
		n = min(len, m->filled - m->done);
		memcpy(dst, m->data + m->done, n);
		m->done += n;
		dst += n;
		len -= n;
		if (m->done < m->len)
			break;
		list_move_tail(&m->node, &sd->tx_done);
		WRITE_ONCE(sd->tx_queued, sd->tx_queued - m->len);
		sd->tx_cur = NULL;
		if (sd->tx_fill == m)
			WRITE_ONCE(sd->tx_fill, NULL);
		if (sd_msg_last(m))
			return m;
		if (len)
			sd->tx_cur = list_first_entry(&sd->tx_queue, struct sd_msg, node);
		m = sd->tx_cur;
	}
	return NULL;
}

/* Produces and posts every PDU the core allows now; under sd->lock. */
void sd_tx_flush(struct sd_sock *sd)
{
	const struct sd_msg *inv, *done;
	struct sd_core_pdu pdu;
	struct sd_tx_buf *tx;
	struct sd_msg *m;
	u32 avail;
	int rc;

	while (sd->qp && !sd->failed && !sd->dying && !sd->wc_failed) {
		if (sd->state == SD_CONNECTED && sd_tx_start(sd)) {
			sd_fail(sd, -EPROTO);
			return;
		}
		if (list_empty(&sd->tx_free))
			return;
		tx = list_first_entry(&sd->tx_free, struct sd_tx_buf, node);
		m = sd->tx_cur;
		avail = m ? sd_tx_avail(sd, m) : 0;
		rc = sd_core_next_pdu(&sd->core, tx->data, sd->opts.max_send_size,
				      avail, &pdu);
		if (rc == SD_CORE_E_AGAIN)
			return;
		if (rc || pdu.length > sd->opts.max_send_size) {
			sd_fail(sd, -EPROTO);
			return;
		}
		inv = NULL;
		done = NULL;
		tx->unacked = 0;
		if (pdu.kind == SD_CORE_PDU_DATA) {
			if (!m || pdu.message_offset != m->msg_off + m->done ||
			    pdu.payload_length > avail ||
			    pdu.payload_offset > pdu.length ||
			    pdu.payload_length > pdu.length - pdu.payload_offset) {
				sd_fail(sd, -EPROTO);
				return;
			}
			done = sd_tx_copy(sd, tx->data + pdu.payload_offset,
					  pdu.payload_length);
			if (!done != !pdu.message_last) {
				sd_fail(sd, -EPROTO);
				return;
			}
			if (done && done->inv)
				inv = done;
			/*
			 * SIOCOUTQ counts what the user wrote: a STREAM
			 * message's prefix goes with its first PDU.
			 */
			tx->unacked = pdu.payload_length;
			if (sd->type == SOCK_STREAM && !pdu.message_offset)
				tx->unacked += SD_CORE_STREAM_PREFIX_SIZE;
		}
		list_del_init(&tx->node);
		tx->posted_ns = ktime_get_ns();
		/* inv, done stay valid: tx_done is freed only by sd_tx_reap(). */
		rc = sd_tx_post(sd, tx, pdu.length, inv);
		if (rc) {
			list_add(&tx->node, &sd->tx_free);
			sd_post_failed(sd, rc);
			return;
		}
		sd->tx_unacked += tx->unacked;
		sd_tx_count(sd, &pdu, done, inv);
		trace_af_smbdirect_pdu_send(&sd->sk, pdu.kind, pdu.length,
					    pdu.payload_length,
					    pdu.credits_granted, pdu.flags);
	}
}

/* Frees messages whose bytes are all in send buffers; may sleep. */
void sd_tx_reap(struct sd_sock *sd)
{
	struct sd_msg *m, *tmp;
	LIST_HEAD(done);

	spin_lock_bh(&sd->lock);
	list_splice_init(&sd->tx_done, &done);
	spin_unlock_bh(&sd->lock);
	list_for_each_entry_safe(m, tmp, &done, node)
		sd_msg_free(m);
}

void sd_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sd_tx_buf *tx = container_of(wc->wr_cqe, struct sd_tx_buf, cqe);
	struct sd_sock *sd = tx->sd;
	struct sd_core_actions act;

	spin_lock_bh(&sd->lock);
	list_add_tail(&tx->node, &sd->tx_free);
	/* Flushed or failed: those bytes are not going anywhere either. */
	sd->tx_unacked -= min(sd->tx_unacked, tx->unacked);
	if (wc->status == IB_WC_SUCCESS) {
		sd->tx_acked += tx->unacked;
		sd_rtt_sample(&sd->rtt, min_t(u64, U32_MAX,
					      div_u64(ktime_get_ns() - tx->posted_ns,
						      NSEC_PER_USEC)));
	}
	tx->unacked = 0;
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			sd_wc_error(sd);
	} else if (sd->core_ready && !sd->failed &&
		   !sd_core_on_send_complete(&sd->core, 1, &act)) {
		sd_do_actions(sd, &act);
		sd_tx_flush(sd);
	}
	sd_wake(sd);
	spin_unlock_bh(&sd->lock);
}

/*
 * SIOCOUTQ: the bytes the user wrote that the peer's adapter has not
 * acknowledged: staged (what sendmsg took, not yet in PDUs) and posted,
 * not yet completed. As TCP's SIOCOUTQ (write_seq - snd_una), it never
 * exceeds what the program wrote and reaches 0 once the peer has all of
 * it, which is what Samba's oplock break waits for. sd->lock held.
 */
u32 sd_tx_outq(struct sd_sock *sd)
{
	const struct sd_msg *m;
	u32 n = sd->tx_unacked;

	list_for_each_entry(m, &sd->tx_queue, node)
		n += m->filled - m->done;
	return n;
}

/* Nothing left to put on the wire, nothing in flight; sd->lock held. */
bool sd_tx_drained(struct sd_sock *sd)
{
	struct sd_core_stats st;

	sd_core_get_stats(&sd->core, &st);
	if (st.sends_in_flight)
		return false;
	/* A STREAM message the user never finished cannot be sent. */
	return list_empty(&sd->tx_queue) ||
	       (list_is_singular(&sd->tx_queue) && sd->tx_fill &&
		sd->tx_fill->done == sd->tx_fill->filled);
}

/*
 * POLLOUT promises that a send makes progress: the same test as
 * sd_tx_wait(), for the size a send last had to wait for (a STREAM piece,
 * or a SEQPACKET message that got EAGAIN), so that a poller is not woken
 * for a send that cannot go.
 */
bool sd_tx_writable(struct sd_sock *sd)
{
	u32 queued = READ_ONCE(sd->tx_queued);
	u32 need = max_t(u32, READ_ONCE(sd->tx_want), 1);

	/* Another thread's send is writing: this one would wait for it. */
	if (READ_ONCE(sd->tx_writer))
		return false;
	/* A STREAM piece with room left takes bytes at once. */
	if (READ_ONCE(sd->tx_fill))
		return true;
	return !queued || queued + need <= (unsigned int)READ_ONCE(sd->sk.sk_sndbuf);
}

/* The pending error, or EPIPE if another caller took it first. */
static int sd_sock_error(struct sock *sk)
{
	int err = sock_error(sk);

	return err ? err : -EPIPE;
}

static int sd_tx_wait(struct sd_sock *sd, long *timeo, u32 need)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &sd->sk;

	WRITE_ONCE(sd->tx_want, need);
	if (READ_ONCE(sd->tx_queued) &&
	    READ_ONCE(sd->tx_queued) + need > (unsigned int)READ_ONCE(sk->sk_sndbuf)) {
		bool trace = trace_af_smbdirect_send_stall_enabled();
		struct sd_core_stats st = {};

		/* A stall: the credits do not come back as fast as we send. */
		spin_lock_bh(&sd->lock);
		sd_stat_add(sd, SD_STAT_CREDIT_STALLS, 1);
		if (trace)
			sd_core_get_stats(&sd->core, &st);
		spin_unlock_bh(&sd->lock);
		if (trace)
			trace_af_smbdirect_send_stall(sk, st.send_credits, sd->tx_queued);
	}
	while (READ_ONCE(sd->tx_queued) &&
	       READ_ONCE(sd->tx_queued) + need > (unsigned int)READ_ONCE(sk->sk_sndbuf)) {
		if (READ_ONCE(sk->sk_err))
			return sd_sock_error(sk);
		if (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN)
			return -EPIPE;
		if (!*timeo)
			return -EAGAIN;
		if (signal_pending(current))
			return sock_intr_errno(*timeo);
		add_wait_queue(sk_sleep(sk), &wait);
		sk_wait_event(sk, timeo,
			      READ_ONCE(sd->tx_queued) + need <=
			      (unsigned int)READ_ONCE(sk->sk_sndbuf) ||
			      !READ_ONCE(sd->tx_queued) || READ_ONCE(sk->sk_err) ||
			      (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN), &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
	}
	WRITE_ONCE(sd->tx_want, 0);
	return 0;
}

/* Queues a filled (or, for STREAM, growing) message and pushes PDUs. */
static void sd_tx_queue(struct sd_sock *sd, struct sd_msg *m)
{
	spin_lock_bh(&sd->lock);
	list_add_tail(&m->node, &sd->tx_queue);
	m->rw_fence = sd->rw_taken;
	WRITE_ONCE(sd->tx_queued, sd->tx_queued + m->len);
	sd_tx_flush(sd);
	spin_unlock_bh(&sd->lock);
}

static int sd_send_seqpacket(struct sd_sock *sd, struct msghdr *msg, size_t len,
			     long *timeo, const u32 *inv)
{
	struct sd_msg *m;
	int err;

	if (!len)
		return -EINVAL;	/* SMB-Direct has no empty messages */
	if (len > sd->params.max_fragmented_send_size)
		return -EMSGSIZE;
	err = sd_tx_wait(sd, timeo, len);
	if (err)
		return err;
	m = sd_msg_alloc(sd, len);
	if (!m)
		return -ENOBUFS;
	if (!copy_from_iter_full(m->data, len, &msg->msg_iter)) {
		sd_msg_free(m);
		return -EFAULT;
	}
	m->filled = len;
	if (inv) {
		m->inv = true;
		m->inv_token = *inv;
	}
	sd_tx_queue(sd, m);
	return len;
}

/* Feeds the 4-byte length prefix through the core's stream parser. */
static int sd_send_prefix(struct sd_sock *sd, struct msghdr *msg)
{
	struct sd_core_stream_parser *p = &sd->tx_parser;
	struct sd_core_stream_parser saved = *p;
	struct sd_core_stream_chunk chunk;
	u8 buf[SD_CORE_STREAM_PREFIX_SIZE];
	u32 n = SD_CORE_STREAM_PREFIX_SIZE - p->prefix_have;
	int rc;

	n = min_t(size_t, n, iov_iter_count(&msg->msg_iter));
	if (!copy_from_iter_full(buf, n, &msg->msg_iter))
		return -EFAULT;
	rc = sd_core_stream_parse(p, buf, n, &chunk);
	if (rc) {
		*p = saved;
		iov_iter_revert(&msg->msg_iter, n);
		return rc == SD_CORE_E_MESSAGE_TOO_LONG ? -EMSGSIZE : -EINVAL;
	}
	if (chunk.message_start) {
		sd->tx_msg_len = chunk.message_length;
		sd->tx_fill_len = chunk.message_length;
	}
	return n;
}

/*
 * The next piece of the STREAM message being written, queued while empty
 * so that PDUs leave as its bytes come in: as much of the message's rest
 * as SO_SNDBUF has room for, up to SD_TX_PIECE_MAX (a piece is freed only
 * once all its bytes are out), and at least what one PDU carries, which an
 * empty queue always takes. Under lock_sock() as the writer (tx_writer);
 * sd_tx_wait() may drop the lock. NULL when the message is no longer
 * where it was before the wait: the caller looks again.
 */
#define SD_TX_PIECE_MAX (64 * 1024)

static u32 sd_tx_least(struct sd_sock *sd, u32 rest)
{
	return min(rest, max_t(u32, sd->params.max_send_size, 1));
}

static struct sd_msg *sd_tx_piece(struct sd_sock *sd, long *timeo)
{
	u32 rest, least, room, queued, len;
	struct sd_msg *m;
	int err;

	/* Pieces already sent give their memory back before more is taken. */
	sd_tx_reap(sd);
	err = sd_tx_wait(sd, timeo, sd_tx_least(sd, sd->tx_fill_len));
	if (err)
		return ERR_PTR(err);
	/*
	 * The piece is cut from the state after the wait, never from what
	 * was read before it: the socket lock was released there (a
	 * teardown ends the connection; before tx_writer, a second writer
	 * took pieces of this same message).
	 */
	if (sd->state != SD_CONNECTED)
		return ERR_PTR(sd->sk.sk_err ? sd_sock_error(&sd->sk) : -EPIPE);
	rest = sd->tx_fill_len;
	if (sd->tx_fill || !rest)
		return NULL;
	least = sd_tx_least(sd, rest);
	queued = READ_ONCE(sd->tx_queued);
	room = (unsigned int)READ_ONCE(sd->sk.sk_sndbuf);
	room = room > queued ? room - queued : 0;
	len = clamp_t(u32, min_t(u32, room, SD_TX_PIECE_MAX), least, rest);
	m = sd_msg_alloc(sd, len);
	if (!m)
		return ERR_PTR(-ENOBUFS);
	m->msg_len = sd->tx_msg_len;
	m->msg_off = sd->tx_msg_len - rest;
	WRITE_ONCE(sd->tx_fill, m);
	sd->tx_fill_len -= len;
	/* A token waits for the message's last piece: its last PDU. */
	if (sd_msg_last(m) && sd->tx_inv_pending) {
		m->inv = true;
		m->inv_token = sd->tx_inv_token;
		sd->tx_inv_pending = false;
	}
	sd_tx_queue(sd, m);
	return m;
}

static int sd_send_stream(struct sd_sock *sd, struct msghdr *msg, size_t len,
			  long *timeo)
{
	struct sd_core_stream_chunk chunk;
	size_t sent = 0;
	struct sd_msg *m;
	u32 n, off;
	int err = 0;

	while (iov_iter_count(&msg->msg_iter)) {
		m = sd->tx_fill;
		if (!m && !sd->tx_fill_len) {
			err = sd_send_prefix(sd, msg);
			if (err < 0)
				break;
			sent += err;
			err = 0;
			continue;
		}
		if (!m) {
			m = sd_tx_piece(sd, timeo);
			if (IS_ERR(m)) {
				err = PTR_ERR(m);
				break;
			}
			if (!m)
				continue;
		}
		off = m->filled;
		n = min_t(size_t, m->len - off, iov_iter_count(&msg->msg_iter));
		if (!copy_from_iter_full(m->data + off, n, &msg->msg_iter)) {
			err = -EFAULT;
			break;
		}
		/* Keeps the parser in step; in the payload it only counts. */
		if (sd_core_stream_parse(&sd->tx_parser, m->data + off, n, &chunk) ||
		    chunk.payload_length != n ||
		    chunk.message_end != (sd_msg_last(m) && off + n == m->len)) {
			err = -EINVAL;
			break;
		}
		spin_lock_bh(&sd->lock);
		if (sd->tx_fill == m) {
			m->filled += n;
			if (m->filled == m->len)
				WRITE_ONCE(sd->tx_fill, NULL);
			sd_tx_flush(sd);
		}
		spin_unlock_bh(&sd->lock);
		sent += n;
	}
	return sent ? sent : err;
}

/*
 * The control messages: at most one token (SMBDIRECT_CMSG_SEND_INVALIDATE,
 * or upstream's SMBDIRECT_CMSG_IPPROTO_REMOTE_INVALIDATE at level 289) and
 * up to SMBDIRECT_RDMA_CMSG_MAX transfers (SMBDIRECT_CMSG_RDMA, at either
 * level), copied to args. Returns 1 with *token set, 0 without one,
 * -EINVAL for anything else.
 */
static int sd_send_cmsg(struct msghdr *msg, u32 *token,
			struct smbdirect_rdma_args *args, u32 *nr_args)
{
	struct cmsghdr *cmsg;
	int found = 0;

	*nr_args = 0;
	for_each_cmsghdr(cmsg, msg) {
		bool level = cmsg->cmsg_level == SMBDIRECT_SOL ||
			     (sd_sol_level_ipproto() &&
			      cmsg->cmsg_level == sd_sol_level_ipproto());
		bool ours = cmsg->cmsg_level == SMBDIRECT_SOL &&
			    cmsg->cmsg_type == SMBDIRECT_CMSG_SEND_INVALIDATE;
		bool upstream = sd_sol_level_ipproto() &&
				cmsg->cmsg_level == sd_sol_level_ipproto() &&
				cmsg->cmsg_type == SMBDIRECT_CMSG_IPPROTO_REMOTE_INVALIDATE;

		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (level && cmsg->cmsg_type == SMBDIRECT_CMSG_RDMA) {
			if (cmsg->cmsg_len != CMSG_LEN(sizeof(*args)) ||
			    *nr_args == SMBDIRECT_RDMA_CMSG_MAX)
				return -EINVAL;
			memcpy(&args[(*nr_args)++], CMSG_DATA(cmsg), sizeof(*args));
			continue;
		}
		/* Both carry one __u32, the peer's token. */
		if (!(ours || upstream) || cmsg->cmsg_len != CMSG_LEN(sizeof(u32)) || found)
			return -EINVAL;
		memcpy(token, CMSG_DATA(cmsg), sizeof(u32));
		found = 1;
	}
	return found;
}

/*
 * Transfers before the message: room for both first (the transfers'
 * slots and, with a message, every byte of the call in SO_SNDBUF), so that
 * nothing is taken when the call cannot go on. Under lock_sock().
 */
static int sd_send_rdma_wait(struct sd_sock *sd, u32 nr, u32 need, long *timeo)
{
	int err;

	for (;;) {
		err = sd_rw_wait_slots(sd, nr, timeo);
		if (!err && need)
			err = sd_tx_wait(sd, timeo, need);
		if (err)
			return err;
		if (sd->state != SD_CONNECTED)
			return sd->sk.sk_err ? sd_sock_error(&sd->sk) : -EPIPE;
		if (sd->rw_inflight + nr <= sd->rw_limit)
			return 0;
	}
}

/*
 * STREAM: the length prefix this call starts or finishes, checked without
 * taking it, so that a prefix the stream refuses (EINVAL, EMSGSIZE) or
 * cannot read (EFAULT) fails the call before its transfers are taken.
 */
static int sd_stream_check_prefix(struct sd_sock *sd, struct msghdr *msg)
{
	struct sd_core_stream_parser p = sd->tx_parser;
	struct sd_core_stream_chunk chunk;
	u8 buf[SD_CORE_STREAM_PREFIX_SIZE];
	struct iov_iter it = msg->msg_iter;
	u32 n = SD_CORE_STREAM_PREFIX_SIZE - p.prefix_have;
	int rc;

	if (sd->tx_fill || sd->tx_fill_len)
		return 0;	/* within a message's payload */
	n = min_t(size_t, n, iov_iter_count(&it));
	if (!copy_from_iter_full(buf, n, &it))
		return -EFAULT;
	rc = sd_core_stream_parse(&p, buf, n, &chunk);
	if (rc)
		return rc == SD_CORE_E_MESSAGE_TOO_LONG ? -EMSGSIZE : -EINVAL;
	return 0;
}

/* STREAM: whether a token may go with the message (sd_stream_set_inv()). */
static bool sd_stream_inv_ok(struct sd_sock *sd)
{
	struct sd_msg *m = sd->tx_fill;
	bool ok;

	if (sd->tx_inv_pending)
		return false;
	if (!m || !sd_msg_last(m))
		return true;
	spin_lock_bh(&sd->lock);
	ok = !m->inv;
	spin_unlock_bh(&sd->lock);
	return ok;
}

static int sd_stream_set_inv(struct sd_sock *sd, u32 token);

/*
 * A call with transfers takes them exactly once or not at all: io_uring
 * issues a sendmsg again after EAGAIN, and SA_RESTART restarts one that
 * returned ERESTARTSYS, each time with the same transfers. So everything
 * the call needs is waited for (or refused) before the transfers are
 * taken: their slots; room for every byte of the message (STREAM: the
 * call's bytes and one PDU's worth more, which the first piece may need
 * beyond them; or an empty queue, where a piece always goes); a
 * SEQPACKET message copied in; a STREAM prefix and token checked. Once
 * they are taken the call returns what it took of the message, maybe
 * nothing (STREAM: a fault in the payload, the connection ended), and
 * never an error. Under lock_sock(), as the STREAM writer.
 */
static int sd_send_rdma(struct sd_sock *sd, struct msghdr *msg,
			const struct smbdirect_rdma_args *args, u32 nr, size_t len,
			long *timeo, const u32 *inv)
{
	struct sd_msg *m = NULL;
	u32 need = 0;
	int err;

	if (len && sd->type == SOCK_SEQPACKET) {
		if (len > sd->params.max_fragmented_send_size)
			return -EMSGSIZE;
		need = len;
	} else if (len) {
		if (inv && !sd_stream_inv_ok(sd))
			return -EINVAL;
		err = sd_stream_check_prefix(sd, msg);
		if (err)
			return err;
		need = min_t(size_t, len + max_t(u32, sd->params.max_send_size, 1),
			     INT_MAX);
	}
	err = sd_send_rdma_wait(sd, nr, need, timeo);
	if (err)
		return err;
	if (len && sd->type == SOCK_SEQPACKET) {
		m = sd_msg_alloc(sd, len);
		if (!m)
			return -ENOBUFS;
		if (!copy_from_iter_full(m->data, len, &msg->msg_iter)) {
			sd_msg_free(m);
			return -EFAULT;
		}
		m->filled = len;
		if (inv) {
			m->inv = true;
			m->inv_token = *inv;
		}
	}
	err = sd_rw_submit(sd, args, nr);
	if (err) {
		if (m)
			sd_msg_free(m);
		return err;
	}
	/* Taken: from here on no error, what the message took. */
	if (!len)
		return 0;
	if (m) {
		sd_tx_queue(sd, m);
		return len;
	}
	if (inv)
		WARN_ON_ONCE(sd_stream_set_inv(sd, *inv));
	err = sd_send_stream(sd, msg, len, timeo);
	return max(err, 0);
}

/*
 * STREAM: the token goes with the message partly written (its prefix
 * included), else with the next one this call starts. It waits in
 * tx_inv_token until the message's last piece is taken (sd_tx_piece()).
 * Under lock_sock().
 */
static int sd_stream_set_inv(struct sd_sock *sd, u32 token)
{
	struct sd_msg *m = sd->tx_fill;
	int err = 0;

	if (sd->tx_inv_pending)
		return -EINVAL;
	if (!m || !sd_msg_last(m)) {
		sd->tx_inv_pending = true;
		sd->tx_inv_token = token;
		return 0;
	}
	/* The flush path reads m->inv; tx_fill means the last PDU is not out. */
	spin_lock_bh(&sd->lock);
	if (m->inv) {
		err = -EINVAL;
	} else {
		m->inv = true;
		m->inv_token = token;
	}
	spin_unlock_bh(&sd->lock);
	return err;
}

/*
 * SOCK_STREAM: one send call writes at a time, from its first byte to
 * its return. The message being written (tx_fill, tx_fill_len,
 * tx_msg_len, the prefix parser, a token waiting for the last piece) is
 * state across the waits for room and credits, which release the socket
 * lock. A second writer that came in there continued the first one's
 * message with its own prefix and cut pieces of it from a length the
 * first had already used: offsets the core refused, or a length that
 * wrapped, and the connection wedged (issue #26). The second waits here
 * instead, as for room (SO_SNDTIMEO, EAGAIN without waiting, signals).
 * A message one call leaves unfinished (a partial send) is finished by
 * the next call, whoever makes it, as on TCP.
 */
static int sd_tx_writer_get(struct sd_sock *sd, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &sd->sk;
	int err = 0;

	add_wait_queue(sk_sleep(sk), &wait);
	while (sd->tx_writer) {
		if (!*timeo) {
			err = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			err = sock_intr_errno(*timeo);
			break;
		}
		sk_wait_event(sk, timeo, !sd->tx_writer, &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	if (!err)
		WRITE_ONCE(sd->tx_writer, true);
	return err;
}

static void sd_tx_writer_put(struct sd_sock *sd)
{
	WRITE_ONCE(sd->tx_writer, false);
	/* The next writer, and pollers sd_tx_writable() turned away. */
	sd_wake(sd);
}

int sd_sendmsg(struct socket *sock, struct msghdr *msg, size_t len)
{
	struct smbdirect_rdma_args *args = NULL;
	struct sock *sk = sock->sk;
	struct sd_sock *sd = sd_sk(sk);
	u32 token, nr_args = 0;
	bool writer = false;
	long timeo;
	int err, inv = 0;

	if (msg->msg_flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (msg->msg_controllen) {
		args = kmalloc_array(SMBDIRECT_RDMA_CMSG_MAX, sizeof(*args),
				     GFP_KERNEL_ACCOUNT);
		if (!args)
			return -ENOMEM;
		inv = sd_send_cmsg(msg, &token, args, &nr_args);
		if (inv < 0) {
			kfree(args);
			return inv;
		}
	}
	lock_sock(sk);
	timeo = sock_sndtimeo(sk, msg->msg_flags & MSG_DONTWAIT);
	if (sd->type == SOCK_STREAM) {
		err = sd_tx_writer_get(sd, &timeo);
		if (err)
			goto out;
		writer = true;
	}
	if (sd->state != SD_CONNECTED) {
		err = sd->state == SD_CLOSED ? -EPIPE : -ENOTCONN;
		if (sd->state == SD_CLOSED && READ_ONCE(sk->sk_err))
			err = sd_sock_error(sk);
		goto out;
	}
	if (sk->sk_shutdown & SEND_SHUTDOWN) {
		err = -EPIPE;
		goto out;
	}
	if (nr_args) {
		err = sd_send_rdma(sd, msg, args, nr_args, len, &timeo,
				   inv ? &token : NULL);
		goto out;
	}
	if (sd->type == SOCK_SEQPACKET) {
		err = sd_send_seqpacket(sd, msg, len, &timeo, inv ? &token : NULL);
	} else {
		bool was_pending = sd->tx_inv_pending;

		err = inv ? sd_stream_set_inv(sd, token) : 0;
		if (!err)
			err = sd_send_stream(sd, msg, len, &timeo);
		/* A call that took nothing leaves no token behind. */
		if (err < 0 && inv && !was_pending)
			sd->tx_inv_pending = false;
	}
out:
	if (writer)
		sd_tx_writer_put(sd);
	release_sock(sk);
	kfree(args);
	sd_tx_reap(sd);
	if (err == -EPIPE && !(msg->msg_flags & MSG_NOSIGNAL))
		send_sig(SIGPIPE, current, 0);
	return err;
}
