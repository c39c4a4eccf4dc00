// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA READ/WRITE against the peer's buffer descriptors: asynchronous
 * transfers (SMBDIRECT_CMSG_RDMA on sendmsg, completions on the error
 * queue) and the RDMA_READV/RDMA_WRITEV ioctls, which are transfers the
 * calling thread waits for.
 *
 * Taking a transfer does everything that may sleep, in the submitter's
 * context: the descriptors are checked, the local side is cut into chunks
 * (within one descriptor, at most rw_pages pages, a layout one MR could map:
 * sd_layout.c), each chunk's pages are pinned (user memory, charged per
 * user against RLIMIT_MEMLOCK) or referenced (a file's page cache), and
 * each chunk gets its rdma_rw context. From then on the transfer only
 * needs posting, which completions do as well as the submitter: chunks
 * are posted in submission order across transfers (sd->rw_pending), as
 * rw_slots (rdma_rw contexts the send queue has room for) and, for RDMA
 * READ, the peer's ORD allow. A message queued after a transfer waits
 * until the transfer's last chunk is posted (sd_rw_fenced()), so its RDMA
 * WRITEs precede the message on the QP.
 *
 * A transfer finishes once no chunk is in flight and none will be posted:
 * all completed, or a failure, a cancellation or the connection's end
 * stopped it. rw_work then releases its pages and contexts in process
 * context and reports it: to the error queue (rw_cq), or to the ioctl
 * waiting for it. Each finished transfer holds a user reference
 * (res_users) until released, so teardown, which flushes the QP and then
 * waits for the references, never frees the QP under one.
 *
 * Any chunk that fails ends the connection (RC transport rules).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fsnotify.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/scatterlist.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>
#include <rdma/rw.h>

#include "uapi/linux/smbdirect.h"
#include "sd_layout.h"
#include "sd_sock.h"
#include "test_hooks.h"

/* No chunk of an ioctl's transfer completing for this long: it is stuck. */
#define SD_RW_STALL (30 * HZ)

struct sd_xfer;

struct sd_rw_chunk {
	struct rdma_rw_ctx ctx;
	struct ib_cqe cqe;
	/* On sd->rw_posted_chunks from its post to its completion; sd->lock. */
	struct list_head posted;
	/* Its completion was taken: the device's, or sd_rw_flush_stuck()'s. */
	unsigned long completed;
	struct sd_xfer *x;
	struct scatterlist *sgl;
	struct page **pages;
	unsigned long nr_pages;	/* pinned, or referenced (file) */
	u32 nents;
	u64 bytes;
	u64 remote;		/* the peer's address and key for it */
	u32 rkey;
	bool ctx_live;		/* rdma_rw_ctx_init() succeeded */
	/*
	 * Its post failed after part of its chain went to the send queue:
	 * outstanding, but no completion of it will come (rdma_rw signals
	 * only the last work request, which did not go); rw_work takes it
	 * (sd_rw_take_post_failed()). sd->lock.
	 */
	bool post_failed;
	/*
	 * Its context is ready to post; sd->lock. A context may take MRs
	 * of the QP's pool (rw_depth of them): always an iWARP RDMA READ's,
	 * an RDMA READ's of more pages than the device reads in one work
	 * request (max_sgl_rd, mlx5), and any with rdma_rw's force_mr. A
	 * lazy transfer's contexts are made by rw_work when the chunk is
	 * next to post, and every context goes back at its completion.
	 */
	bool ready;
};

struct sd_xfer {
	struct list_head node;	/* rw_pending, then rw_finished; sd->lock */
	struct sd_sock *sd;
	u64 cookie;
	u64 seq;		/* sd->rw_taken when taken */
	bool read;
	bool file;		/* pages are page-cache references */
	/* file: the mapping its pages must still belong to when posted */
	struct address_space *mapping;
	bool sync;		/* an ioctl waits: no error-queue entry */
	/*
	 * Its contexts, from the first not made at submission (an iWARP
	 * READ's, or rdma_rw had no MR left: EAGAIN), are rw_work's, in
	 * queue order. Contexts made at submission thus only ever precede
	 * lazy ones in the queue, and the MRs they hold come back as what
	 * is ahead completes: a later transfer never holds the MRs the
	 * head waits for.
	 */
	bool lazy;
	bool on_pending;	/* chunks left to post; sd->lock */
	bool cancel;		/* post nothing more; sd->lock */
	bool released;		/* sync: resources gone; sd->lock */
	bool orphan;		/* a chunk taken as flushed; sd->lock */
	enum dma_data_direction dir;
	int status;		/* first error; sd->lock */
	u32 nr_chunks;
	u32 nr_desc;		/* the peer's descriptors (tracing) */
	u32 next;		/* next chunk to post; sd->lock */
	u32 outstanding;	/* chunks posted, not completed; sd->lock */
	u32 completed;		/* chunks completed; sd->lock */
	u64 bytes;		/* what success moves */
	/* The pinned pages' charge, as a registration's (sd_mr.c). */
	struct mm_struct *mm;
	struct user_struct *user;
	unsigned long charged;
	struct sd_rw_cqe *cqe;	/* async: the completion to report */
	struct sd_rw_chunk chunks[];
};

static void sd_rw_kick(struct sd_sock *sd);

struct sd_rw_cqe *sd_rw_cqe_alloc(void)
{
	return kzalloc(sizeof(struct sd_rw_cqe), GFP_KERNEL_ACCOUNT);
}

/*
 * Queues a completion for MSG_ERRQUEUE and tells poll (EPOLLERR, or
 * EPOLLPRI with SMBDIRECT_RDMA_EVENTS_PRI) and O_ASYNC owners. slot: it
 * holds an SMBDIRECT_OPT_RDMA_INFLIGHT slot until reaped.
 */
void sd_rw_cqe_post(struct sd_sock *sd, struct sd_rw_cqe *e, u64 cookie,
		    int status, u64 bytes, bool slot)
	__must_hold(&sd->lock)
{
	e->c.cookie = cookie;
	e->c.status = status;
	e->c.bytes = bytes;
	e->slot = slot;
	list_add_tail(&e->node, &sd->rw_cq);
	sd_wake(sd);
	sk_wake_async(&sd->sk, SOCK_WAKE_IO,
		      READ_ONCE(sd->rw_events) & SMBDIRECT_RDMA_EVENTS_PRI ?
		      POLL_PRI : POLL_ERR);
}

/* Completions wait to be reaped: EPOLLERR, or EPOLLPRI. */
bool sd_rw_cq_ready(struct sd_sock *sd)
{
	return !list_empty_careful(&sd->rw_cq);
}

/*
 * A transfer would find a slot: EPOLLWRBAND. Whatever frees one (reaping,
 * an ioctl's transfer ending, a higher SMBDIRECT_OPT_RDMA_INFLIGHT) wakes.
 */
bool sd_rw_slot_free(struct sd_sock *sd)
{
	return READ_ONCE(sd->rw_inflight) < READ_ONCE(sd->rw_limit);
}

/*
 * recvmsg(MSG_ERRQUEUE): one SMBDIRECT_CMSG_RDMA_COMPLETION with as many
 * completions as fit, MSG_CTRUNC if more wait, EAGAIN if none does.
 */
int sd_rw_recv_errqueue(struct sd_sock *sd, struct msghdr *msg)
{
	const size_t one = sizeof(struct smbdirect_rdma_completion);
	struct smbdirect_rdma_completion *out;
	struct sd_rw_cqe *e, *tmp;
	unsigned int room, n = 0, freed = 0, freed_regs = 0;
	LIST_HEAD(taken);
	size_t space;
	int err;

	if (msg->msg_controllen < CMSG_LEN(one))
		return list_empty_careful(&sd->rw_cq) ? -EAGAIN : -EINVAL;
	space = msg->msg_controllen - CMSG_LEN(0);
	room = min_t(size_t, space / one, 256);
	spin_lock_bh(&sd->lock);
	list_for_each_entry_safe(e, tmp, &sd->rw_cq, node) {
		if (n == room)
			break;
		list_move_tail(&e->node, &taken);
		n++;
	}
	spin_unlock_bh(&sd->lock);
	if (!n)
		return -EAGAIN;
	out = kmalloc_array(n, one, GFP_KERNEL_ACCOUNT);
	if (!out) {
		err = -ENOMEM;
		goto putback;
	}
	n = 0;
	list_for_each_entry(e, &taken, node)
		out[n++] = e->c;
	err = put_cmsg(msg, SMBDIRECT_SOL, SMBDIRECT_CMSG_RDMA_COMPLETION, n * one, out);
	kfree(out);
	if (!err && (msg->msg_flags & MSG_CTRUNC))
		err = -EFAULT;	/* put_cmsg() had no room after all */
	if (err)
		goto putback;
	spin_lock_bh(&sd->lock);
	if (!list_empty(&sd->rw_cq))
		msg->msg_flags |= MSG_CTRUNC;
	list_for_each_entry(e, &taken, node) {
		freed += e->slot;
		freed_regs += e->reg_slot;
	}
	WRITE_ONCE(sd->rw_inflight, sd->rw_inflight - freed);
	sd->nr_reg_cqes -= freed_regs;
	spin_unlock_bh(&sd->lock);
	list_for_each_entry_safe(e, tmp, &taken, node)
		kfree(e);
	/* Slots came free: a submitter may wait for them. */
	if (freed)
		sd_wake(sd);
	return 0;

putback:
	spin_lock_bh(&sd->lock);
	list_splice(&taken, &sd->rw_cq);
	spin_unlock_bh(&sd->lock);
	return err;
}

/* Completions nobody reaped; the destructor. */
void sd_rw_cq_free(struct sd_sock *sd)
{
	struct sd_rw_cqe *e, *tmp;

	list_for_each_entry_safe(e, tmp, &sd->rw_cq, node)
		kfree(e);
	INIT_LIST_HEAD(&sd->rw_cq);
}

/* Pinned pages against RLIMIT_MEMLOCK per user, as registrations. */
static int sd_xfer_charge(struct sd_xfer *x, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct user_struct *user;
	long cur;

	if (!current->mm)
		return -EFAULT;
	if (!ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK)) {
		user = current_user();
		cur = atomic_long_read(&user->locked_vm);
		do {
			if (pages > limit || (unsigned long)cur > limit - pages)
				return -ENOMEM;
		} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur,
						  cur + pages));
		x->user = get_uid(user);
	}
	x->mm = current->mm;
	mmgrab(x->mm);
	atomic64_add(pages, &x->mm->pinned_vm);
	x->charged = pages;
	return 0;
}

/* The contexts of chunks never posted (or not completed): QP alive. */
static void sd_xfer_release_ctxs(struct sd_xfer *x)
{
	struct sd_sock *sd = x->sd;
	struct sd_rw_chunk *c;
	u32 k;

	for (k = 0; k < x->nr_chunks; k++) {
		c = &x->chunks[k];
		if (c->ctx_live)
			rdma_rw_ctx_destroy(&c->ctx, sd->qp, sd->cm_id->port_num,
					    c->sgl, c->nents, x->dir);
		c->ctx_live = false;
	}
}

/* Undoes the chunks' setup and the charge: process context. */
static void sd_xfer_release(struct sd_xfer *x)
{
	struct sd_rw_chunk *c;
	unsigned long i;
	u32 k;

	sd_xfer_release_ctxs(x);
	for (k = 0; k < x->nr_chunks; k++) {
		c = &x->chunks[k];
		if (x->file) {
			for (i = 0; i < c->nr_pages; i++)
				put_page(c->pages[i]);
		} else if (c->nr_pages) {
			unpin_user_pages_dirty_lock(c->pages, c->nr_pages, x->read);
		}
		kvfree(c->sgl);
		kvfree(c->pages);
		memset(c, 0, sizeof(*c));
	}
	if (x->mm) {
		atomic64_sub(x->charged, &x->mm->pinned_vm);
		mmdrop(x->mm);
		x->mm = NULL;
	}
	if (x->user) {
		atomic_long_sub(x->charged, &x->user->locked_vm);
		free_uid(x->user);
		x->user = NULL;
	}
	x->charged = 0;
}

/* Nothing in flight and nothing more to post: off to rw_work. */
static void sd_xfer_finish(struct sd_sock *sd, struct sd_xfer *x)
	__must_hold(&sd->lock)
{
	list_add_tail(&x->node, &sd->rw_finished);
	queue_work(sd_wq, &sd->rw_work);
}

/*
 * Releases and reports every finished transfer: process context. An
 * orphan (a chunk the device never completed, sd_rw_flush_stuck()) is
 * reported, and its user reference goes, but its memory and its pages
 * stay, on rw_orphans, until the QP is destroyed: only then is the device
 * sure not to touch them, or to complete the chunk after all.
 */
static void sd_rw_release_finished(struct sd_sock *sd)
{
	struct sd_xfer *x;
	bool ok, orphan;

	for (;;) {
		spin_lock_bh(&sd->lock);
		x = list_first_entry_or_null(&sd->rw_finished, struct sd_xfer, node);
		if (x)
			list_del_init(&x->node);
		orphan = x && x->orphan;
		spin_unlock_bh(&sd->lock);
		if (!x)
			return;
		if (orphan)
			sd_xfer_release_ctxs(x);
		else
			sd_xfer_release(x);
		spin_lock_bh(&sd->lock);
		ok = !x->status;
		if (ok) {
			sd_stat_add(sd, x->read ? SD_STAT_RDMA_READS : SD_STAT_RDMA_WRITES, 1);
			sd_stat_add(sd, x->read ? SD_STAT_RDMA_READ_BYTES :
				    SD_STAT_RDMA_WRITE_BYTES, x->bytes);
		} else if (x->status != -ERESTARTSYS && x->status != -ECANCELED) {
			/* The transfer failed; a signal only interrupted it. */
			sd_stat_add(sd, SD_STAT_ERR_RDMA, 1);
		}
		trace_af_smbdirect_rdma_done(&sd->sk, x->read, ok ? x->bytes : 0,
					     x->nr_desc, x->status);
		if (x->sync) {
			x->released = true;
			spin_unlock_bh(&sd->lock);
			wake_up_all(&sd->rdma_wait);
			continue;
		}
		sd_rw_cqe_post(sd, x->cqe, x->cookie, x->status, ok ? x->bytes : 0, true);
		if (orphan)
			list_add_tail(&x->node, &sd->rw_orphans);
		spin_unlock_bh(&sd->lock);
		if (!orphan)
			kvfree(x);
		sd_res_put(sd);
	}
}

static void sd_rw_prepare_next(struct sd_sock *sd);
static void sd_rw_take_post_failed(struct sd_sock *sd);

static void sd_rw_work_fn(struct work_struct *work)
{
	struct sd_sock *sd = container_of(work, struct sd_sock, rw_work);

	sd_rw_take_post_failed(sd);
	sd_rw_release_finished(sd);
	sd_rw_prepare_next(sd);
}

static void sd_rw_chunk_done(struct sd_rw_chunk *c, enum ib_wc_status wc_status)
{
	struct sd_xfer *x = c->x;
	struct sd_sock *sd = x->sd;
	int status = sd_wc_errno(wc_status);

	/* The device is done with it: its MR (if any) serves the next chunk. */
	rdma_rw_ctx_destroy(&c->ctx, sd->qp, sd->cm_id->port_num, c->sgl, c->nents, x->dir);
	c->ctx_live = false;
	spin_lock_bh(&sd->lock);
	list_del_init(&c->posted);
	/*
	 * The QP is in the error state now: the connection is over at once,
	 * without sd_wc_error()'s grace for a racing orderly close, so that
	 * nothing sent after the failed transfer seems to succeed. A flush
	 * counts too unless our teardown or the peer's orderly close caused
	 * it: siw reports a READ the peer refused (by TERMINATE) as flushed.
	 */
	if (wc_status != IB_WC_SUCCESS &&
	    (wc_status != IB_WC_WR_FLUSH_ERR || !(sd->dying || sd->peer_closed)))
		sd_fail(sd, -ECONNRESET);
	if (status && !x->status)
		x->status = status;
	if (x->status)
		x->cancel = true;
	if (c->post_failed) {
		c->post_failed = false;
		sd->rw_post_failed--;
	}
	x->outstanding--;
	x->completed++;
	sd->rw_slots++;
	if (x->read)
		sd->rw_reads--;
	if (!x->outstanding && !x->on_pending)
		sd_xfer_finish(sd, x);
	sd_rw_kick(sd);
	spin_unlock_bh(&sd->lock);
	wake_up_all(&sd->rdma_wait);
}

static void sd_rw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sd_rw_chunk *c = container_of(wc->wr_cqe, struct sd_rw_chunk, cqe);

	/* Too late: teardown took it as flushed (sd_rw_flush_stuck()). */
	if (test_and_set_bit(0, &c->completed))
		return;
	sd_rw_chunk_done(c, wc->status);
}

/* Transfers not done: chunks to post, posted ones, or some to release. */
bool sd_rw_busy(struct sd_sock *sd)
	__must_hold(&sd->lock)
{
	return !list_empty(&sd->rw_pending) || !list_empty(&sd->rw_posted_chunks) ||
	       !list_empty(&sd->rw_finished);
}

/* Teardown, once the QP is destroyed: the orphans' pages and memory. */
void sd_rw_orphans_free(struct sd_sock *sd)
{
	struct sd_xfer *x, *tmp;
	LIST_HEAD(orphans);

	spin_lock_bh(&sd->lock);
	list_splice_init(&sd->rw_orphans, &orphans);
	spin_unlock_bh(&sd->lock);
	list_for_each_entry_safe(x, tmp, &orphans, node) {
		list_del(&x->node);
		sd_xfer_release(x);
		kvfree(x);
	}
}

/*
 * Takes the posted chunks no completion was taken for (those whose post
 * failed part-way only, if post_failed) as flushed, their transfers
 * orphans. The number taken.
 */
static unsigned int sd_rw_take_flushed(struct sd_sock *sd, bool post_failed)
{
	struct sd_rw_chunk *c, *tmp;
	unsigned int n = 0;
	LIST_HEAD(taken);

	spin_lock_bh(&sd->lock);
	list_for_each_entry_safe(c, tmp, &sd->rw_posted_chunks, posted) {
		if ((c->post_failed || !post_failed) && !test_and_set_bit(0, &c->completed)) {
			list_move_tail(&c->posted, &taken);
			c->x->orphan = true;
		}
	}
	spin_unlock_bh(&sd->lock);
	list_for_each_entry_safe(c, tmp, &taken, posted) {
		sd_rw_chunk_done(c, IB_WC_WR_FLUSH_ERR);
		n++;
	}
	return n;
}

/*
 * Teardown, once the QP is in the error state and drained and a chunk
 * posted before still has no completion: the device keeps a work request
 * it neither completes nor flushes (siw, an RDMA READ in its ORQ when an
 * orderly close moved the QP to CLOSING, siw_qp_nextstate_from_rts()). A
 * QP in the error state processes no packet; what it held is taken as
 * flushed here, so that close(), exit() and device removal end. A
 * completion the device still delivers later is ignored: the transfer
 * becomes an orphan, whose memory and pages stay until the QP is
 * destroyed (sd_rw_orphans_free()). The number taken.
 */
unsigned int sd_rw_flush_stuck(struct sd_sock *sd)
{
	return sd_rw_take_flushed(sd, false);
}

/*
 * A chunk whose post failed part-way (sd_rw_kick()): the work requests
 * ahead of the refused one went to the send queue and may be running, and
 * none of them will complete to us. The QP is moved to the error state,
 * where it processes nothing more and flushes what it holds; then the
 * chunk is taken as flushed, as sd_rw_flush_stuck() takes one, its
 * transfer an orphan whose pages stay until the QP is destroyed. Process
 * context: rw_work, or teardown.
 */
static void sd_rw_take_post_failed(struct sd_sock *sd)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	bool any;

	spin_lock_bh(&sd->lock);
	any = sd->rw_post_failed;
	spin_unlock_bh(&sd->lock);
	if (!any || !sd->qp)
		return;
	if (ib_modify_qp(sd->qp, &attr, IB_QP_STATE))
		pr_warn_ratelimited("cannot move the QP of a failed post to the error state\n");
	sd_rw_take_flushed(sd, true);
}

/* x leaves rw_pending: nothing more of it is posted. */
static void sd_xfer_unqueue(struct sd_sock *sd, struct sd_xfer *x)
	__must_hold(&sd->lock)
{
	list_del_init(&x->node);
	x->on_pending = false;
	sd->rw_posted = x->seq;
	if (!x->outstanding)
		sd_xfer_finish(sd, x);
}

/*
 * Posts pending chunks in order while the send queue and the peer's ORD
 * have room; cancels what can no longer be posted. Messages fenced
 * behind a transfer go once its last chunk is posted.
 */
/*
 * A file chunk some page of which was truncated out of the file after it
 * was taken (the reference keeps the page, not its place in the file):
 * posting it would send bytes that are no longer the file's.
 */
static bool sd_rw_chunk_truncated(struct sd_xfer *x, struct sd_rw_chunk *c)
{
	unsigned long i;

	for (i = 0; i < c->nr_pages; i++)
		if (READ_ONCE(page_folio(c->pages[i])->mapping) != x->mapping)
			return true;
	return false;
}

static void sd_rw_kick(struct sd_sock *sd)
	__must_hold(&sd->lock)
{
	const struct ib_send_wr *bad;
	struct ib_send_wr *first;
	u64 posted = sd->rw_posted;
	struct sd_rw_chunk *c;
	struct sd_xfer *x;
	int err;

	while ((x = list_first_entry_or_null(&sd->rw_pending, struct sd_xfer, node))) {
		if (!x->cancel && sd_qp_unusable(sd)) {
			x->cancel = true;
			if (!x->status)
				x->status = x->next || x->sync ? sd_conn_errno(sd) :
					    -ECANCELED;
		}
		if (x->cancel) {
			sd_xfer_unqueue(sd, x);
			continue;
		}
		if (!sd->rw_slots)
			break;
		if (x->read && sd->rw_reads >= max_t(u32, sd->initiator_depth, 1))
			break;
		c = &x->chunks[x->next];
		if (!c->ready) {
			queue_work(sd_wq, &sd->rw_work);
			break;
		}
		if (x->file && sd_rw_chunk_truncated(x, c)) {
			x->status = -ESTALE;
			x->cancel = true;
			continue;
		}
		c->cqe.done = sd_rw_done;
		first = rdma_rw_ctx_wrs(&c->ctx, sd->qp, sd->cm_id->port_num, &c->cqe, NULL);
		bad = NULL;
		err = sd_test_rw_post(sd->qp, first, &bad);
		if (err) {
			x->status = err;
			x->cancel = true;
			sd_fail(sd, -EIO);
			/* Nothing of the chain went: the chunk is not the device's. */
			if (bad == first)
				continue;
			/*
			 * ib_post_send() stops at the first work request it
			 * refuses; those ahead of it went and may run. The chunk
			 * stays outstanding with its pages, sgl and MRs until
			 * rw_work has stopped the QP (sd_rw_take_post_failed()).
			 */
			c->post_failed = true;
			sd->rw_post_failed++;
			queue_work(sd_wq, &sd->rw_work);
		}
		list_add_tail(&c->posted, &sd->rw_posted_chunks);
		sd->rw_slots--;
		if (x->read)
			sd->rw_reads++;
		x->outstanding++;
		if (++x->next == x->nr_chunks)
			sd_xfer_unqueue(sd, x);
	}
	if (sd->rw_posted != posted)
		sd_tx_flush(sd);
}

/* A message queued after transfer seq waits until it is all posted. */
bool sd_rw_fenced(struct sd_sock *sd, u64 fence)
	__must_hold(&sd->lock)
{
	return fence > sd->rw_posted;
}

/*
 * Teardown, after the QP was flushed: what was never posted is cancelled,
 * and every finished transfer released here. rw_work is cancelled, not
 * flushed: teardown runs under lock_sock() and res_mutex, and a flush
 * would wait on sd_wq, where close_work takes lock_sock().
 */
void sd_rw_teardown(struct sd_sock *sd)
{
	spin_lock_bh(&sd->lock);
	sd_rw_kick(sd);
	spin_unlock_bh(&sd->lock);
	sd_rw_take_post_failed(sd);
	cancel_work_sync(&sd->rw_work);
	sd_rw_release_finished(sd);
}

/*
 * An iWARP RDMA READ lands in an MR that rdma_rw registers at the local
 * buffer's DMA address, and the Read Request carries that address to the
 * peer as the sink's tagged offset: under siw a kernel virtual address.
 * Those MRs get the registrations' peer address; their REG_MR work
 * request reads mr->iova only when posted. (rdma_rw takes the MR path for
 * exactly this case on iWARP; IB and RoCE Read Requests carry no sink
 * address.)
 */
static void sd_rw_hide_iova(struct sd_sock *sd, struct sd_rw_chunk *c,
			    enum dma_data_direction dir)
{
	struct rdma_rw_reg_ctx *reg;
	u32 i;

	if (dir != DMA_FROM_DEVICE ||
	    !rdma_protocol_iwarp(sd->qp->device, sd->cm_id->port_num))
		return;
	for (i = 0; i < c->ctx.nr_ops; i++) {
		reg = &c->ctx.reg[i];
		reg->mr->iova = sd_peer_iova(reg->mr->iova);
		reg->sge.addr = reg->mr->iova;
	}
}

/* The rdma_rw context of a chunk whose pages and sgl are set. */
static int sd_rw_ctx(struct sd_xfer *x, struct sd_rw_chunk *c)
{
	struct sd_sock *sd = x->sd;
	int ret;

	ret = rdma_rw_ctx_init(&c->ctx, sd->qp, sd->cm_id->port_num, c->sgl,
			       c->nents, 0, c->remote, c->rkey, x->dir);
	if (ret < 0)
		return ret;
	c->ctx_live = true;
	sd_rw_hide_iova(sd, c, x->dir);
	/* The send queue holds rw_depth chunks of at most rw_wrs each. */
	if (WARN_ON_ONCE(ret > sd->rw_wrs))
		return -EIO;
	return 0;
}

/*
 * Whether x's contexts are all rw_work's: an iWARP RDMA READ (its
 * context always takes an MR of the QP's pool), or a transfer queued
 * behind one whose contexts are.
 */
static bool sd_rw_lazy(struct sd_xfer *x)
{
	struct sd_sock *sd = x->sd;
	struct sd_xfer *p;
	bool lazy = false;

	if (x->read && rdma_protocol_iwarp(sd->qp->device, sd->cm_id->port_num))
		return true;
	spin_lock_bh(&sd->lock);
	list_for_each_entry(p, &sd->rw_pending, node) {
		if (p->lazy) {
			lazy = true;
			break;
		}
	}
	spin_unlock_bh(&sd->lock);
	return lazy;
}

/*
 * rw_work: makes the context of the chunk next to post when the send
 * queue has room for it. EAGAIN (the MR pool is empty until a posted
 * chunk completes, whose completion kicks again) waits.
 */
static void sd_rw_prepare_next(struct sd_sock *sd)
{
	struct sd_rw_chunk *c;
	struct sd_xfer *x;
	int err;

	for (;;) {
		spin_lock_bh(&sd->lock);
		x = list_first_entry_or_null(&sd->rw_pending, struct sd_xfer, node);
		c = x ? &x->chunks[x->next] : NULL;
		if (!c || c->ready || c->ctx_live || x->cancel || !sd->rw_slots ||
		    sd_qp_unusable(sd)) {
			spin_unlock_bh(&sd->lock);
			return;
		}
		spin_unlock_bh(&sd->lock);
		/* Only rw_work takes x off rw_pending's head's chunk: it stays. */
		err = sd_rw_ctx(x, c);
		spin_lock_bh(&sd->lock);
		if (!err) {
			c->ready = true;
		} else if (err != -EAGAIN) {
			if (!x->status)
				x->status = err;
			x->cancel = true;
		}
		if (err != -EAGAIN)
			sd_rw_kick(sd);
		spin_unlock_bh(&sd->lock);
		if (err == -EAGAIN)
			return;
	}
}

/*
 * A file chunk: uptodate pages of the page cache, referenced until the
 * transfer is released. Never waits for I/O under the socket: a page not
 * cached (or not uptodate) fails the transfer with ENODATA, after starting
 * readahead of the transfer's range from there to last (not for shmem,
 * whose holes and swapped-out pages the caller's own read serves without
 * this path allocating into someone else's tmpfs or memfd). A page
 * truncated out of the file while we took it fails the transfer.
 */
static int sd_rw_file_pages(struct sd_rw_chunk *c, struct file *file, u64 pos,
			    u64 bytes, u32 pages, pgoff_t last)
{
	struct address_space *mapping = file->f_mapping;
	pgoff_t first = pos >> PAGE_SHIFT;
	u32 off = offset_in_page(pos), i, len;
	struct folio *folio;
	struct page *page;

	c->pages = kvmalloc_array(pages, sizeof(*c->pages), GFP_KERNEL_ACCOUNT);
	c->sgl = kvmalloc_array(pages, sizeof(*c->sgl), GFP_KERNEL_ACCOUNT);
	if (!c->pages || !c->sgl)
		return -ENOMEM;
	sg_init_table(c->sgl, pages);
	for (i = 0; i < pages; i++) {
		/* 6.1 returns NULL for a miss, later kernels ERR_PTR(-ENOENT). */
		folio = filemap_get_folio(mapping, first + i);
		if (!IS_ERR_OR_NULL(folio) && !folio_test_uptodate(folio)) {
			folio_put(folio);
			folio = NULL;
		}
		if (IS_ERR_OR_NULL(folio)) {
			if (!shmem_mapping(mapping))
				page_cache_sync_readahead(mapping, &file->f_ra, file,
							  first + i, last - (first + i) + 1);
			return -ENODATA;
		}
		page = folio_file_page(folio, first + i);
		c->pages[c->nr_pages++] = page;
		len = min_t(u64, PAGE_SIZE - off, bytes);
		sg_set_page(&c->sgl[i], page, len, off);
		off = 0;
		bytes -= len;
	}
	c->nents = pages;
	for (i = 0; i < pages; i++)
		if (READ_ONCE(page_folio(c->pages[i])->mapping) != mapping)
			return -EINVAL;
	return 0;
}

/*
 * Walks the chunks of a transfer: within each descriptor, pieces of at
 * most rw_pages pages (and, for user memory, what one MR could map).
 * With x NULL it only counts them. Returns the number of chunks or -errno.
 */
static int sd_xfer_walk(struct sd_sock *sd, struct sd_xfer *x,
			const struct smbdirect_buffer_descriptor_v1 *desc,
			struct sd_iov_cursor *cur, struct file *file,
			u64 offset, u64 moved, unsigned long *total_pages)
{
	u32 idx = 0, pages, n = 0;
	u64 desc_off = 0, bytes, left = moved;
	struct sd_rw_chunk *c;
	int err;

	while (left) {
		u64 room = min_t(u64, left, le32_to_cpu(desc[idx].length) - desc_off);

		if (file) {
			bytes = sd_file_region(offset + (moved - left), room,
					       sd->rw_pages, &pages);
			if (WARN_ON_ONCE(!bytes))
				return -EINVAL;
		} else {
			struct sd_iov_cursor start = *cur;

			bytes = sd_iov_next_region(cur, sd->rw_pages, room, &pages);
			if (WARN_ON_ONCE(!bytes))
				return -EINVAL;
			if (x) {
				c = &x->chunks[n];
				c->pages = kvmalloc_array(pages, sizeof(*c->pages),
							  GFP_KERNEL_ACCOUNT);
				c->sgl = kvmalloc_array(pages, sizeof(*c->sgl),
							GFP_KERNEL_ACCOUNT);
				if (!c->pages || !c->sgl)
					return -ENOMEM;
				err = sd_pin_region(&start, bytes, pages,
						    x->read ? FOLL_WRITE : 0, c->pages,
						    &c->nr_pages, c->sgl, &c->nents);
				if (err)
					return err;
			}
		}
		*total_pages += pages;
		if (x) {
			c = &x->chunks[n];
			c->x = x;
			c->bytes = bytes;
			if (file) {
				err = sd_rw_file_pages(c, file, offset + (moved - left),
						       bytes, pages,
						       (offset + moved - 1) >> PAGE_SHIFT);
				if (err)
					return err;
			}
			/* sd_desc_check() ruled out overflow of offset + length. */
			c->remote = le64_to_cpu(desc[idx].offset) + desc_off;
			c->rkey = le32_to_cpu(desc[idx].token);
			if (!x->lazy) {
				err = sd_rw_ctx(x, c);
				/* No MR left: this chunk on waits for rw_work. */
				if (err && err != -EAGAIN)
					return err;
				x->lazy = err == -EAGAIN;
				c->ready = !err;
			}
		}
		n++;
		left -= bytes;
		desc_off += bytes;
		if (desc_off == le32_to_cpu(desc[idx].length)) {
			idx++;
			desc_off = 0;
		}
	}
	return n;
}

static void sd_xfer_free(struct sd_sock *sd, struct sd_xfer *x)
{
	sd_xfer_release(x);
	kfree(x->cqe);
	kvfree(x);
	sd_res_put(sd);
}

/*
 * The local side of a file transfer: a regular file open for reading,
 * with a page cache, and the range inside it.
 */
static struct file *sd_rw_file(const struct smbdirect_rdma_args *a, u64 *local)
{
	struct address_space *mapping;
	struct inode *inode;
	struct file *file;
	loff_t pos;
	u64 end;
	int err;

	file = fget(a->fd);
	if (!file)
		return ERR_PTR(-EBADF);
	inode = file_inode(file);
	mapping = file->f_mapping;
	if (!(file->f_mode & FMODE_READ)) {
		fput(file);
		return ERR_PTR(-EBADF);
	}
	if (!S_ISREG(inode->i_mode) || check_add_overflow(a->offset, a->length, &end) ||
	    end > (u64)i_size_read(inode)) {
		fput(file);
		return ERR_PTR(-EINVAL);
	}
	if (IS_DAX(inode) || (!shmem_mapping(mapping) &&
			      (!mapping->a_ops || !mapping->a_ops->read_folio))) {
		fput(file);
		return ERR_PTR(-EOPNOTSUPP);
	}
	/* What read() asks first: the LSM, fanotify's permission events. */
	pos = a->offset;
	err = rw_verify_area(READ, file, &pos, a->length);
	if (err) {
		fput(file);
		return ERR_PTR(err);
	}
	*local = a->length;
	return file;
}

/*
 * Takes one transfer as far as it goes without the QP: checked, pinned or
 * referenced, contexts ready. Under lock_sock() of a connected socket. The
 * transfer holds a user reference.
 */
static struct sd_xfer *sd_xfer_build(struct sd_sock *sd,
				     const struct smbdirect_rdma_args *a, bool sync)
{
	struct smbdirect_buffer_descriptor_v1 *desc = NULL;
	bool read = a->op == SMBDIRECT_RDMA_READ;
	bool is_file = a->flags & SMBDIRECT_RDMA_F_FILE;
	unsigned long pages = 0, ignored = 0;
	struct sd_iov_cursor cur = {}, dry;
	struct iovec *iov = NULL;
	struct file *file = NULL;
	struct sd_xfer *x = NULL;
	u64 local = 0, remote, moved;
	int n, err;

	if ((a->op != SMBDIRECT_RDMA_READ && a->op != SMBDIRECT_RDMA_WRITE) ||
	    (a->flags & ~SMBDIRECT_RDMA_F_FILE) || a->reserved || !a->desc_count)
		return ERR_PTR(-EINVAL);
	if (is_file ? (read || a->iov || a->iov_count || !a->length) :
		      (!a->iov_count || a->length || a->offset))
		return ERR_PTR(-EINVAL);
	if (a->iov_count > SMBDIRECT_IOV_MAX || a->desc_count > SMBDIRECT_DESC_MAX)
		return ERR_PTR(-EMSGSIZE);
	if (!is_file) {
		iov = sd_iov_import(a->iov, a->iov_count);
		if (IS_ERR(iov))
			return ERR_CAST(iov);
	}
	desc = vmemdup_array_user(u64_to_user_ptr(a->desc), a->desc_count, sizeof(*desc));
	if (IS_ERR(desc)) {
		err = PTR_ERR(desc);
		desc = NULL;
		goto out;
	}
	err = sd_desc_check(desc, a->desc_count, &remote);
	if (err)
		goto out;
	if (!is_file) {
		err = sd_iov_user_total(iov, a->iov_count, U64_MAX, &local);
		if (!err && !local)
			err = -EINVAL;
		if (err)
			goto out;
	}
	moved = min(is_file ? a->length : local, remote);
	if (moved > sd->params.max_read_write_size) {
		err = -EMSGSIZE;
		goto out;
	}
	/* The peer accepted the connection serving no RDMA READ at all. */
	if (read && !READ_ONCE(sd->initiator_depth)) {
		err = -EOPNOTSUPP;
		goto out;
	}
	if (is_file) {
		file = sd_rw_file(a, &local);
		if (IS_ERR(file)) {
			err = PTR_ERR(file);
			file = NULL;
			goto out;
		}
	}
	if (iov)
		sd_iov_cursor_init(&cur, iov, a->iov_count);
	dry = cur;
	n = sd_xfer_walk(sd, NULL, desc, iov ? &dry : NULL, file, a->offset, moved, &pages);
	if (n <= 0) {
		err = n ? n : -EINVAL;
		goto out;
	}
	x = kvzalloc(struct_size(x, chunks, n), GFP_KERNEL_ACCOUNT);
	if (!x) {
		err = -ENOMEM;
		goto out;
	}
	INIT_LIST_HEAD(&x->node);
	x->sd = sd;
	x->cookie = a->cookie;
	x->read = read;
	x->file = is_file;
	x->mapping = file ? file->f_mapping : NULL;
	x->sync = sync;
	x->dir = read ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	x->nr_chunks = n;
	x->nr_desc = a->desc_count;
	x->bytes = moved;
	x->lazy = sd_rw_lazy(x);
	if (!sync) {
		x->cqe = sd_rw_cqe_alloc();
		if (!x->cqe) {
			kvfree(x);
			x = NULL;
			err = -ENOMEM;
			goto out;
		}
	}
	/* A user reference, as an ioctl's: teardown waits for the transfer. */
	spin_lock_bh(&sd->lock);
	if (sd->dying || !sd->pd || sd_qp_unusable(sd))
		err = sd_conn_errno(sd);
	else
		atomic_inc(&sd->res_users);
	spin_unlock_bh(&sd->lock);
	if (err) {
		kfree(x->cqe);
		kvfree(x);
		x = NULL;
		goto out;
	}
	/* File pages too: referenced until reaped, like pinned memory. */
	err = sd_xfer_charge(x, pages);
	if (!err) {
		if (iov)
			sd_iov_cursor_init(&cur, iov, a->iov_count);
		n = sd_xfer_walk(sd, x, desc, iov ? &cur : NULL, file, a->offset,
				 moved, &ignored);
		err = n < 0 ? n : 0;
	}
	if (err) {
		sd_xfer_free(sd, x);
		x = NULL;
	} else if (file) {
		/* As a read() of the range would: IN_ACCESS, the atime. */
		fsnotify_access(file);
		file_accessed(file);
	}
out:
	if (file)
		fput(file);
	kvfree(desc);
	kvfree(iov);
	return err ? ERR_PTR(err) : x;
}

/* Hands built transfers to the posting order; under lock_sock(). */
static void sd_xfer_commit(struct sd_sock *sd, struct sd_xfer **xs, u32 nr)
{
	u32 i;

	spin_lock_bh(&sd->lock);
	for (i = 0; i < nr; i++) {
		xs[i]->seq = ++sd->rw_taken;
		xs[i]->on_pending = true;
		list_add_tail(&xs[i]->node, &sd->rw_pending);
		WRITE_ONCE(sd->rw_inflight, sd->rw_inflight + 1);
		trace_af_smbdirect_rdma_issue(&sd->sk, xs[i]->read, xs[i]->bytes,
					      xs[i]->nr_desc, 0);
	}
	sd_rw_kick(sd);
	spin_unlock_bh(&sd->lock);
}

/*
 * Waits, within *timeo, until nr more transfers fit the socket's limit.
 * Under lock_sock(), which the wait lets go of.
 */
int sd_rw_wait_slots(struct sd_sock *sd, u32 nr, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &sd->sk;
	int err;

	if (nr > READ_ONCE(sd->rw_limit))
		return -EINVAL;
	while (READ_ONCE(sd->rw_inflight) + nr > READ_ONCE(sd->rw_limit)) {
		if (sd->state != SD_CONNECTED) {
			err = sock_error(sk);
			return err ? err : -EPIPE;
		}
		if (!*timeo)
			return -EAGAIN;
		if (signal_pending(current))
			return sock_intr_errno(*timeo);
		add_wait_queue(sk_sleep(sk), &wait);
		sk_wait_event(sk, timeo, sd->state != SD_CONNECTED ||
			      READ_ONCE(sd->rw_inflight) + nr <= READ_ONCE(sd->rw_limit),
			      &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
	}
	return 0;
}

/*
 * SMBDIRECT_CMSG_RDMA: takes nr transfers, all or none. Under lock_sock()
 * of a connected socket; the caller made room (sd_rw_wait_slots()).
 */
int sd_rw_submit(struct sd_sock *sd, const struct smbdirect_rdma_args *args, u32 nr)
{
	struct sd_xfer *xs[SMBDIRECT_RDMA_CMSG_MAX];
	u32 i;

	if (WARN_ON_ONCE(nr > SMBDIRECT_RDMA_CMSG_MAX))
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		xs[i] = sd_xfer_build(sd, &args[i], false);
		if (IS_ERR(xs[i])) {
			int err = PTR_ERR(xs[i]);

			while (i--)
				sd_xfer_free(sd, xs[i]);
			return err;
		}
	}
	sd_xfer_commit(sd, xs, nr);
	return 0;
}

static bool sd_xfer_released(void *arg)
{
	struct sd_xfer *x = arg;
	bool done;

	spin_lock_bh(&x->sd->lock);
	done = x->released;
	spin_unlock_bh(&x->sd->lock);
	return done;
}

/* Posts no more of x; what is in flight completes. */
static void sd_xfer_cancel(struct sd_sock *sd, struct sd_xfer *x, int err)
{
	spin_lock_bh(&sd->lock);
	if (!x->status)
		x->status = err;
	x->cancel = true;
	sd_rw_kick(sd);
	spin_unlock_bh(&sd->lock);
}

/* RDMA_READV / RDMA_WRITEV: one transfer, waited for. */
int sd_ioctl_rdma(struct sd_sock *sd, void __user *arg, bool read)
{
	struct smbdirect_rdma __user *ur = arg;
	struct smbdirect_rdma_args a = {};
	long timeo = MAX_SCHEDULE_TIMEOUT;
	struct sock *sk = &sd->sk;
	struct smbdirect_rdma r;
	struct sd_xfer *x;
	bool orphan;
	u32 progress;
	u64 bytes;
	long t;
	int err;

	err = sd_ioctl_copy_in(&r, ur, sizeof(r));
	if (err)
		return err;
	if (r.flags || !r.iov_count || !r.desc_count)
		return -EINVAL;
	if (r.iov_count > SMBDIRECT_IOV_MAX || r.desc_count > SMBDIRECT_DESC_MAX)
		return -EMSGSIZE;
	a.op = read ? SMBDIRECT_RDMA_READ : SMBDIRECT_RDMA_WRITE;
	a.iov = r.iov;
	a.iov_count = r.iov_count;
	a.desc = r.desc;
	a.desc_count = r.desc_count;

	lock_sock(sk);
	if (sd->state == SD_UNCONNECTED || sd->state == SD_LISTENING ||
	    sd->state == SD_CONNECTING) {
		err = -ENOTCONN;
	} else if (sd->state != SD_CONNECTED) {
		err = sock_error(sk);
		if (!err)
			err = -EPIPE;
	} else {
		err = sd_rw_wait_slots(sd, 1, &timeo);
		if (err == -EINVAL)
			err = -ENOBUFS;	/* SMBDIRECT_OPT_RDMA_INFLIGHT 0: impossible */
	}
	x = err ? ERR_PTR(err) : sd_xfer_build(sd, &a, true);
	if (!IS_ERR(x))
		sd_xfer_commit(sd, &x, 1);
	release_sock(sk);
	if (IS_ERR(x))
		return PTR_ERR(x);

	/*
	 * Posted work is always waited for; a signal only stops posting.
	 * The connection ending (the peer closed, a reset) flushes what is
	 * still posted at once: nothing of it can complete any more. No
	 * chunk completing for SD_RW_STALL means the QP is stuck (or the
	 * peer is gone unnoticed): sd_wait_wrs() flushes it.
	 */
	progress = 0;
	for (;;) {
		t = wait_event_interruptible_timeout(sd->rdma_wait,
						     sd_xfer_released(x) || sd_conn_over(sd),
						     SD_RW_STALL);
		if (sd_xfer_released(x))
			break;
		if (t > 0) {
			sd_xfer_cancel(sd, x, sd_conn_errno(sd));
			sd_wait_wrs(sd, sd_xfer_released, x, 0);
			break;
		}
		if (t < 0) {
			sd_xfer_cancel(sd, x, -ERESTARTSYS);
			sd_wait_wrs(sd, sd_xfer_released, x, SD_RW_STALL);
			break;
		}
		spin_lock_bh(&sd->lock);
		t = x->completed != progress;
		progress = x->completed;
		spin_unlock_bh(&sd->lock);
		if (t)
			continue;
		sd_xfer_cancel(sd, x, -ETIMEDOUT);
		sd_wait_wrs(sd, sd_xfer_released, x, 0);
		break;
	}
	spin_lock_bh(&sd->lock);
	err = x->status;
	WRITE_ONCE(sd->rw_inflight, sd->rw_inflight - 1);
	bytes = x->bytes;
	/* Teardown frees an orphan once the QP is gone. */
	orphan = x->orphan;
	if (orphan)
		list_add_tail(&x->node, &sd->rw_orphans);
	spin_unlock_bh(&sd->lock);
	sd_wake(sd);
	if (!err && put_user(bytes, &ur->bytes))
		err = -EFAULT;
	if (!orphan)
		kvfree(x);
	sd_res_put(sd);
	return err;
}

void sd_rw_setup(struct sd_sock *sd)
{
	INIT_LIST_HEAD(&sd->rw_pending);
	INIT_LIST_HEAD(&sd->rw_posted_chunks);
	INIT_LIST_HEAD(&sd->rw_orphans);
	INIT_LIST_HEAD(&sd->rw_finished);
	INIT_LIST_HEAD(&sd->rw_cq);
	INIT_WORK(&sd->rw_work, sd_rw_work_fn);
	sd->rw_limit = SD_RW_INFLIGHT_DEFAULT;
}
