// SPDX-License-Identifier: GPL-2.0
/*
 * Registrations: user memory the peer may RDMA-read or -write, described
 * by Buffer Descriptors V1. A registration pins the pages of an iovec
 * list (FOLL_LONGTERM, charged to the owner's pinned_vm against
 * RLIMIT_MEMLOCK), cuts them into regions one MR's page list can map
 * (sd_layout.c), and fast-registers each region with IB_WR_REG_MR and
 * exactly the access asked for. The peer can use a token only until
 * DEREGISTER's LOCAL_INV completes, the peer invalidates it itself
 * (SEND_WITH_INVALIDATE, seen on the receive completion), or teardown
 * deregisters every MR before the PD goes.
 *
 * Also here: the user references that keep the transport alive while an
 * ioctl waits without lock_sock(), and the errno of a work completion.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>

#include "uapi/linux/smbdirect.h"
#include "sd_layout.h"
#include "sd_sock.h"
#include "test_hooks.h"

/* Pages one MR maps: the device's page-list limit, at most this. */
#define SD_MR_PAGES_MAX 2048
/* REG_MR and LOCAL_INV take microseconds; this long means they never will. */
#define SD_REG_STALL (5 * HZ)
/* Idle MRs a socket keeps for reuse, at most (and max_registrations). */
#define SD_MR_IDLE_MAX 32

/*
 * One region of a registration: its pages' scatterlist and an MR of the
 * socket's pool. The MR's work requests (REG_MR, then maybe LOCAL_INV)
 * complete through cqe; the registration counts them.
 */
struct sd_mr {
	struct ib_cqe cqe;
	struct sd_reg *reg;
	struct ib_mr *mr;
	struct scatterlist *sgl;
	u32 nents;		/* entries in sgl, one per page */
	int dma_nents;		/* 0 while not DMA-mapped */
	bool reg_posted;	/* REG_MR posted: the token exists; sd->lock */
	bool inv_posted;	/* LOCAL_INV posted; sd->lock */
	bool remote_inv;	/* the peer invalidated it; sd->lock */
	int status;		/* first failure of its work requests; sd->lock */
};

/*
 * A registration. Live on sd->regs; once deregistered on no list, or on
 * sd->reg_invq while LOCAL_INVs wait for send-queue room, then (ASYNC)
 * on sd->reg_done for mr_work once every work request completed. From
 * DEREGISTER until released it is also on sd->regs_dying, where the
 * peer's SEND_WITH_INVALIDATE of its tokens still finds it.
 */
struct sd_reg {
	struct list_head node;	/* under sd->lock */
	struct list_head dying;	/* on sd->regs_dying; under sd->lock */
	struct sd_sock *sd;
	u64 id;
	u32 flags;
	struct mm_struct *mm;	/* whose pinned_vm shows the pages (VmPin) */
	struct user_struct *user; /* whose locked_vm carries them, or NULL */
	unsigned long charged;	/* pages added to both */
	struct page **pages;
	unsigned long nr_pages;	/* pinned so far */
	u64 bytes;		/* registered */
	/* sd->lock: */
	u32 wrs;		/* work requests posted, not completed */
	u32 inv_next;		/* on reg_invq: the next MR to invalidate */
	bool dereg;		/* being deregistered (or undone) */
	bool handed;		/* ASYNC: given to mr_work */
	int status;		/* ASYNC: what the completion says */
	bool async;		/* SMBDIRECT_DEREG_ASYNC */
	u64 cookie;
	struct sd_rw_cqe *cqe;	/* ASYNC: the completion, allocated */
	u32 nr_mrs;
	struct sd_mr mrs[];
};

int sd_wc_errno(enum ib_wc_status status)
{
	switch (status) {
	case IB_WC_SUCCESS:
		return 0;
	case IB_WC_REM_ACCESS_ERR:
	case IB_WC_LOC_PROT_ERR:
	case IB_WC_REM_INV_REQ_ERR:
		return -EACCES;
	case IB_WC_RETRY_EXC_ERR:
	case IB_WC_RNR_RETRY_EXC_ERR:
		return -ETIMEDOUT;
	case IB_WC_WR_FLUSH_ERR:
		return -ECONNRESET;
	default:
		return -EIO;
	}
}

/* What an RDMA ioctl reports once the connection cannot carry it. */
int sd_conn_errno(struct sd_sock *sd)
{
	int err = READ_ONCE(sd->sk.sk_err);

	if (err)
		return -err;
	return sd->state == SD_CLOSED ? -EPIPE : -ECONNRESET;
}

/* Nothing more may be posted: under sd->lock. */
bool sd_qp_unusable(struct sd_sock *sd)
{
	return sd->dying || sd->failed || sd->wc_failed || !sd->qp;
}

/*
 * Takes a user reference. connected: the ioctl moves data (a connected
 * socket only); otherwise it only needs the transport to still exist.
 */
int sd_res_get(struct sd_sock *sd, bool connected)
{
	struct sock *sk = &sd->sk;
	int err = 0;

	lock_sock(sk);
	if (sd->state == SD_UNCONNECTED || sd->state == SD_LISTENING ||
	    sd->state == SD_CONNECTING) {
		err = -ENOTCONN;
	} else if (connected && sd->state != SD_CONNECTED) {
		err = sock_error(sk);
		if (!err)
			err = -EPIPE;
	}
	if (!err) {
		spin_lock_bh(&sd->lock);
		if (sd->dying || !sd->pd)
			err = connected ? sd_conn_errno(sd) : -ENOENT;
		else if (connected && sd_qp_unusable(sd))
			err = sd_conn_errno(sd);
		else
			atomic_inc(&sd->res_users);
		spin_unlock_bh(&sd->lock);
	}
	release_sock(sk);
	return err;
}

void sd_res_put(struct sd_sock *sd)
{
	if (atomic_dec_and_test(&sd->res_users))
		wake_up_all(&sd->rdma_wait);
}

static void sd_mr_kick(struct sd_sock *sd);
static void sd_reg_check(struct sd_sock *sd, struct sd_reg *reg);

static void sd_mr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sd_mr *m = container_of(wc->wr_cqe, struct sd_mr, cqe);
	struct sd_reg *reg = m->reg;
	struct sd_sock *sd = reg->sd;

	spin_lock_bh(&sd->lock);
	if (wc->status != IB_WC_SUCCESS) {
		if (!m->status)
			m->status = sd_wc_errno(wc->status);
		if (!reg->status)
			reg->status = m->status;
		/*
		 * A flush outside teardown: the QP failed under us. A failed
		 * REG_MR fails the connection too: the peer may hold the token.
		 */
		if (wc->status != IB_WC_WR_FLUSH_ERR || !sd->dying)
			sd_wc_error(sd);
	}
	reg->wrs--;
	sd->reg_wr_free++;
	/* Room for a queued LOCAL_INV; reg itself may have settled. */
	sd_mr_kick(sd);
	sd_reg_check(sd, reg);
	spin_unlock_bh(&sd->lock);
	wake_up_all(&sd->rdma_wait);
}

/*
 * A posted work request can outlive the connection's usefulness: after a
 * TERMINATE siw stops its send queue without flushing it. Moving the QP to
 * the error state flushes everything posted, so the waits below end and
 * pinned memory can be let go. The connection is over then.
 */
static void sd_qp_force_error(struct sd_sock *sd)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	spin_lock_bh(&sd->lock);
	sd_fail(sd, -ECONNRESET);
	spin_unlock_bh(&sd->lock);
	if (ib_modify_qp(sd->qp, &attr, IB_QP_STATE))
		pr_warn_ratelimited("cannot move a stalled QP to the error state\n");
}

/*
 * Teardown, after the QP was drained: waits for every user reference. A
 * transfer whose work requests a device failed to flush (siw after a
 * TERMINATE) gets the QP moved to the error state once more after 5 s,
 * which flushes what is left; 1 s later, what the device still holds
 * without completing it (siw's ORQ after an orderly close) is taken as
 * flushed (sd_rw_flush_stuck()). So the wait is bounded whatever the
 * device does, unless an ioctl's own thread holds on (it is woken, and
 * sees dying).
 */
void sd_res_wait_idle(struct sd_sock *sd)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned long waited = 0;
	unsigned int n;

	while (!wait_event_timeout(sd->rdma_wait, !atomic_read(&sd->res_users), HZ)) {
		waited += HZ;
		if (waited == 5 * HZ && sd->qp) {
			pr_warn_ratelimited("RDMA work still in flight 5 s after the drain: flushing again\n");
			if (ib_modify_qp(sd->qp, &attr, IB_QP_STATE))
				pr_warn_ratelimited("cannot move the QP to the error state\n");
		}
		if (waited == 6 * HZ && sd->qp) {
			n = sd_rw_flush_stuck(sd);
			if (n)
				pr_warn_ratelimited("the RDMA device neither completed nor flushed %u transfer chunks of a QP in the error state: taken as flushed\n",
						    n);
		}
	}
}

/* The connection failed or is being torn down. */
bool sd_conn_over(struct sd_sock *sd)
{
	bool over;

	spin_lock_bh(&sd->lock);
	over = sd->failed || sd->wc_failed || sd->dying;
	spin_unlock_bh(&sd->lock);
	return over;
}

/*
 * Waits until done(arg), which work completions make true. If the
 * connection is over, or nothing happens for stall jiffies, the QP is
 * moved to the error state once and the wait goes on for the flushes.
 * Returns true if it had to do that. The caller holds a user reference.
 */
bool sd_wait_wrs(struct sd_sock *sd, bool (*done)(void *arg), void *arg,
		 unsigned long stall)
{
	unsigned long waited = 0;
	bool forced = false;

	while (!wait_event_timeout(sd->rdma_wait, done(arg), HZ / 4)) {
		waited += HZ / 4;
		if (!forced && (waited >= stall || sd_conn_over(sd))) {
			sd_qp_force_error(sd);
			forced = true;
		}
	}
	return forced;
}

/* An MR for a region: an idle one of the socket's pool, else a new one. */
static struct ib_mr *sd_mr_get(struct sd_sock *sd, u32 pages)
{
	struct ib_mr *mr;

	spin_lock_bh(&sd->lock);
	mr = list_first_entry_or_null(&sd->mr_idle, struct ib_mr, qp_entry);
	if (mr) {
		list_del_init(&mr->qp_entry);
		sd->mr_idle_nr--;
	}
	spin_unlock_bh(&sd->lock);
	if (mr)
		return mr;
	return ib_alloc_mr(sd->pd, IB_MR_TYPE_MEM_REG, pages);
}

/*
 * An MR the device holds no valid key of any more (never registered,
 * invalidated by LOCAL_INV or by the peer) goes back to the pool, up to
 * its bound; any other (a failed work request, or a connection that took
 * no LOCAL_INV) is deregistered, which kills its key. ib_mr.qp_entry is
 * the pool's link, as in the core's ib_mr_pool, which these are not in.
 */
static void sd_mr_put(struct sd_sock *sd, struct ib_mr *mr, bool reusable)
{
	u32 max = min_t(u32, sd_max_registrations(), SD_MR_IDLE_MAX);

	if (reusable) {
		spin_lock_bh(&sd->lock);
		if (sd->mr_idle_nr < max) {
			list_add(&mr->qp_entry, &sd->mr_idle);
			sd->mr_idle_nr++;
			mr = NULL;
		}
		spin_unlock_bh(&sd->lock);
	}
	if (mr)
		ib_dereg_mr(mr);
}

/* Teardown, before the PD goes: the pool's MRs. */
static void sd_mr_pool_free(struct sd_sock *sd)
{
	struct ib_mr *mr;

	for (;;) {
		spin_lock_bh(&sd->lock);
		mr = list_first_entry_or_null(&sd->mr_idle, struct ib_mr, qp_entry);
		if (mr) {
			list_del_init(&mr->qp_entry);
			sd->mr_idle_nr--;
		}
		spin_unlock_bh(&sd->lock);
		if (!mr)
			break;
		ib_dereg_mr(mr);
	}
}

/*
 * Takes one unit of the REG_MR/LOCAL_INV send-queue budget for a REG_MR.
 * Queued LOCAL_INVs go first: they give MRs and pages back.
 */
struct sd_wr_take {
	struct sd_sock *sd;
	int err;
};

static bool sd_reg_wr_take(void *arg)
{
	struct sd_wr_take *t = arg;
	struct sd_sock *sd = t->sd;
	bool done = true;

	spin_lock_bh(&sd->lock);
	if (sd_qp_unusable(sd)) {
		t->err = sd_conn_errno(sd);
	} else if (sd->reg_wr_free && list_empty(&sd->reg_invq)) {
		sd->reg_wr_free--;
		t->err = 0;
	} else {
		done = false;
	}
	spin_unlock_bh(&sd->lock);
	return done;
}

/*
 * Posts m's REG_MR, signaled, without waiting for it: the send carrying
 * the descriptors is posted later on the same send queue, so the peer
 * cannot use the token before the registration took effect. Waits for
 * room in the budget, which completions give back on their own (or the
 * stall handling of sd_wait_wrs() flushes).
 */
static int sd_mr_register(struct sd_sock *sd, struct sd_mr *m, u32 flags)
{
	struct sd_wr_take t = { .sd = sd };
	struct ib_reg_wr wr = {};
	int access = 0, err;

	if (flags & SMBDIRECT_ACCESS_PEER_READ)
		access |= IB_ACCESS_REMOTE_READ;
	if (flags & SMBDIRECT_ACCESS_PEER_WRITE)
		access |= IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE;
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.wr_cqe = &m->cqe;
	wr.mr = m->mr;
	wr.key = m->mr->rkey;
	wr.access = access;
	m->cqe.done = sd_mr_done;
	sd_wait_wrs(sd, sd_reg_wr_take, &t, SD_REG_STALL);
	if (t.err)
		return t.err;
	spin_lock_bh(&sd->lock);
	if (sd_qp_unusable(sd)) {
		err = sd_conn_errno(sd);
	} else {
		err = ib_post_send(sd->qp, &wr.wr, NULL);
		if (!err) {
			m->reg_posted = true;
			m->reg->wrs++;
		}
	}
	if (err)
		sd->reg_wr_free++;
	spin_unlock_bh(&sd->lock);
	return err;
}

/* The MR's token may be live at the device: it needs a LOCAL_INV. */
static bool sd_mr_needs_inv(const struct sd_mr *m)
{
	return m->reg_posted && !m->remote_inv && !m->inv_posted && !m->status;
}

/*
 * Posts the LOCAL_INVs of deregistered registrations, in order, while the
 * budget has room; under sd->lock, any context. On a connection that
 * takes no more work requests the QP is (or soon is) in the error state
 * and accepts nothing: deregistering the MR (sd_reg_release()) kills the
 * token then, and the registration ends with the connection's error.
 */
static void sd_mr_kick(struct sd_sock *sd)
	__must_hold(&sd->lock)
{
	struct ib_send_wr wr;
	struct sd_reg *reg;
	struct sd_mr *m;
	int err;

	while ((reg = list_first_entry_or_null(&sd->reg_invq, struct sd_reg, node))) {
		for (; reg->inv_next < reg->nr_mrs; reg->inv_next++) {
			m = &reg->mrs[reg->inv_next];
			if (!sd_mr_needs_inv(m))
				continue;
			if (sd_qp_unusable(sd)) {
				if (!reg->status)
					reg->status = sd_conn_errno(sd);
				continue;
			}
			if (!sd->reg_wr_free)
				return;
			memset(&wr, 0, sizeof(wr));
			wr.opcode = IB_WR_LOCAL_INV;
			wr.ex.invalidate_rkey = m->mr->rkey;
			wr.send_flags = IB_SEND_SIGNALED;
			wr.wr_cqe = &m->cqe;
			err = ib_post_send(sd->qp, &wr, NULL);
			if (err) {
				/* The QP took nothing: the connection is over. */
				sd_fail(sd, -ECONNRESET);
				if (!reg->status)
					reg->status = err;
				continue;
			}
			sd->reg_wr_free--;
			reg->wrs++;
			m->inv_posted = true;
		}
		list_del_init(&reg->node);
		sd_reg_check(sd, reg);
	}
}

/* Every work request of a deregistered registration has completed. */
static bool sd_reg_settled(const struct sd_reg *reg)
{
	return reg->dereg && !reg->wrs && reg->inv_next == reg->nr_mrs &&
	       list_empty(&reg->node);
}

/* An ASYNC deregistration that settled goes to mr_work; once. */
static void sd_reg_check(struct sd_sock *sd, struct sd_reg *reg)
	__must_hold(&sd->lock)
{
	if (!reg->async || reg->handed || !sd_reg_settled(reg))
		return;
	reg->handed = true;
	list_add_tail(&reg->node, &sd->reg_done);
	queue_work(sd_wq, &sd->mr_work);
}

static bool sd_reg_settled_now(void *arg)
{
	struct sd_reg *reg = arg;
	struct sd_sock *sd = reg->sd;
	bool settled;

	spin_lock_bh(&sd->lock);
	settled = sd_reg_settled(reg);
	spin_unlock_bh(&sd->lock);
	return settled;
}

static enum dma_data_direction sd_reg_dir(u32 flags)
{
	switch (flags & (SMBDIRECT_ACCESS_PEER_READ | SMBDIRECT_ACCESS_PEER_WRITE)) {
	case SMBDIRECT_ACCESS_PEER_READ:
		return DMA_TO_DEVICE;
	case SMBDIRECT_ACCESS_PEER_WRITE:
		return DMA_FROM_DEVICE;
	}
	return DMA_BIDIRECTIONAL;
}

/*
 * The tokens of a registration being released that the peer was allowed
 * to invalidate and has not: remembered, so that its SEND_WITH_INVALIDATE
 * crossing our DEREGISTER is recognised after the release too. The
 * oldest make room.
 */
static void sd_reg_remember_tokens(struct sd_sock *sd, struct sd_reg *reg)
	__must_hold(&sd->lock)
{
	struct sd_mr *m;
	u32 i;

	if (!(reg->flags & SMBDIRECT_REG_REMOTE_INVALIDATE))
		return;
	for (i = 0; i < reg->nr_mrs; i++) {
		m = &reg->mrs[i];
		if (!m->mr || !m->reg_posted || m->remote_inv)
			continue;
		sd->retired_tokens[sd->retired_next] = m->mr->rkey;
		sd->retired_valid |= BIT(sd->retired_next);
		sd->retired_next = (sd->retired_next + 1) % SD_RETIRED_TOKENS;
	}
}

/* rkey is a remembered token: forgotten, as the peer invalidated it. */
static bool sd_retired_token_take(struct sd_sock *sd, u32 rkey)
	__must_hold(&sd->lock)
{
	u32 i;

	for (i = 0; i < SD_RETIRED_TOKENS; i++) {
		if ((sd->retired_valid & BIT(i)) && sd->retired_tokens[i] == rkey) {
			sd->retired_valid &= ~BIT(i);
			return true;
		}
	}
	return false;
}

/*
 * Frees a settled registration (on no list, no work request in flight,
 * the peer's access over): MRs back to the pool (or deregistered), pages
 * unmapped, unpinned and uncharged, its max_registrations slot free. May
 * sleep. The transport (PD) is alive: a user reference, mr_work, or
 * teardown before the PD goes.
 *
 * It leaves regs_dying before any MR goes: the receive path reads the
 * MRs of every registration there under sd->lock, and a freed MR, or a
 * pooled one re-registered for another registration, must not be among
 * them. Each MR's key dies (deregistered, or already invalid when pooled)
 * before its pages are unmapped: a peer still writing through a live key
 * must not reach memory the IOMMU or swiotlb has let go.
 */
static void __sd_reg_release(struct sd_sock *sd, struct sd_reg *reg,
			     bool keep_slot)
{
	struct ib_device *dev = sd->pd->device;
	enum dma_data_direction dir = sd_reg_dir(reg->flags);
	struct sd_mr *m;
	bool reusable;
	u32 i;

	spin_lock_bh(&sd->lock);
	list_del_init(&reg->dying);
	sd_reg_remember_tokens(sd, reg);
	spin_unlock_bh(&sd->lock);
	for (i = 0; i < reg->nr_mrs; i++) {
		m = &reg->mrs[i];
		/* Else its key may be live: deregistering the MR kills it. */
		reusable = !m->status &&
			   (!m->reg_posted || m->remote_inv || m->inv_posted);
		if (m->mr) {
			sd_mr_put(sd, m->mr, reusable);
			m->mr = NULL;
		}
		if (m->dma_nents) {
			sd_test_live_key_unmap(m->mr && !reusable);
			ib_dma_unmap_sg(dev, m->sgl, m->nents, dir);
		}
		kvfree(m->sgl);
	}
	sd_test_release_delay();
	if (reg->nr_pages)
		unpin_user_pages_dirty_lock(reg->pages, reg->nr_pages,
					    reg->flags & SMBDIRECT_ACCESS_PEER_WRITE);
	if (reg->mm) {
		atomic64_sub(reg->charged, &reg->mm->pinned_vm);
		mmdrop(reg->mm);
	}
	if (reg->user) {
		atomic_long_sub(reg->charged, &reg->user->locked_vm);
		free_uid(reg->user);
	}
	spin_lock_bh(&sd->lock);
	sd->nr_regs--;
	/* The slot goes to the completion, in the same breath. */
	if (keep_slot)
		sd->nr_reg_cqes++;
	sd->pinned_bytes -= (u64)reg->nr_pages << PAGE_SHIFT;
	spin_unlock_bh(&sd->lock);
	kvfree(reg->pages);
	kvfree(reg);
}

static void sd_reg_release(struct sd_sock *sd, struct sd_reg *reg)
{
	__sd_reg_release(sd, reg, false);
}

/*
 * An ASYNC registration settled: released, then its completion queued,
 * holding the registration's max_registrations slot until it is reaped.
 */
static void sd_reg_finish(struct sd_sock *sd, struct sd_reg *reg)
{
	struct sd_rw_cqe *e = reg->cqe;
	u64 cookie = reg->cookie, bytes = reg->bytes;
	int status = reg->status;

	__sd_reg_release(sd, reg, true);
	spin_lock_bh(&sd->lock);
	e->reg_slot = true;
	sd_rw_cqe_post(sd, e, cookie, status, bytes, false);
	spin_unlock_bh(&sd->lock);
}

static void sd_mr_work_fn(struct work_struct *work)
{
	struct sd_sock *sd = container_of(work, struct sd_sock, mr_work);
	struct sd_reg *reg;

	for (;;) {
		spin_lock_bh(&sd->lock);
		reg = list_first_entry_or_null(&sd->reg_done, struct sd_reg, node);
		if (reg)
			list_del_init(&reg->node);
		spin_unlock_bh(&sd->lock);
		if (!reg)
			break;
		sd_reg_finish(sd, reg);
	}
}

void sd_mr_setup(struct sd_sock *sd)
{
	INIT_LIST_HEAD(&sd->reg_invq);
	INIT_LIST_HEAD(&sd->reg_done);
	INIT_LIST_HEAD(&sd->mr_idle);
	sd->mr_idle_nr = 0;
	INIT_WORK(&sd->mr_work, sd_mr_work_fn);
}

/*
 * Ends a registration that is on no list: LOCAL_INV of every MR whose
 * token may be live (none if the peer invalidated them all), then the
 * release. Synchronous: returns when the peer's access has ended and the
 * pages are unpinned. ASYNC (reg->async, reg->cqe set): returns at once;
 * the completion is queued here if nothing is in flight, else by mr_work.
 */
static void sd_reg_retire(struct sd_sock *sd, struct sd_reg *reg)
{
	bool async = reg->async, now = false;
	u32 i;

	spin_lock_bh(&sd->lock);
	reg->dereg = true;
	reg->inv_next = 0;
	if (!reg->wrs) {
		now = true;
		for (i = 0; i < reg->nr_mrs; i++)
			if (sd_mr_needs_inv(&reg->mrs[i]))
				now = false;
	}
	if (now) {
		reg->inv_next = reg->nr_mrs;
		reg->handed = true;
	} else {
		list_add_tail(&reg->node, &sd->reg_invq);
		sd_mr_kick(sd);
	}
	spin_unlock_bh(&sd->lock);
	if (now) {
		if (async)
			sd_reg_finish(sd, reg);
		else
			sd_reg_release(sd, reg);
		return;
	}
	/* mr_work may have freed an ASYNC one already. */
	if (async)
		return;
	sd_wait_wrs(sd, sd_reg_settled_now, reg, SD_REG_STALL);
	sd_reg_release(sd, reg);
}

/*
 * An MR's address as a peer may see it: only the page offset of the DMA
 * address (a kernel virtual address on software devices) is kept, with a
 * random number above it and bit 63 clear, where every kernel address
 * has it set. Drivers address an MR relative to its iova, so any base
 * with the same page offset maps the same bytes.
 */
u64 sd_peer_iova(u64 dma_iova)
{
	u32 hi = get_random_u32() & 0x7fffffff;

	return ((u64)hi << 32) | offset_in_page(dma_iova);
}

/*
 * Charges pages against RLIMIT_MEMLOCK per user, as io_uring does: the
 * registration outlives the process that made it (the socket may belong
 * to its parent), so a per-mm charge would let every short-lived child
 * pin up to the limit again. CAP_IPC_LOCK is exempt, asked without an
 * audit record: a file server registers per I/O, and a denial here is a
 * charge, not a refusal. The caller's pinned_vm shows the pages in VmPin
 * either way.
 */
static int sd_reg_charge(struct sd_reg *reg, unsigned long pages)
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
		reg->user = get_uid(user);
	}
	reg->mm = current->mm;
	mmgrab(reg->mm);
	atomic64_add(pages, &reg->mm->pinned_vm);
	reg->charged = pages;
	return 0;
}

/*
 * Pins the next bytes at the cursor (pages pages, as sd_iov_next_region()
 * counted them) into pagev[*pinned...] and describes them in sgl, one
 * entry per page. On an error, what was pinned is counted in *pinned for
 * the caller to unpin.
 */
int sd_pin_region(struct sd_iov_cursor *c, u64 bytes, u32 pages,
		  unsigned int gup, struct page **pagev, unsigned long *pinned,
		  struct scatterlist *sgl, u32 *nents)
{
	struct scatterlist *sg = sgl;
	unsigned long addr, start, i, n;
	u32 used = 0;
	u64 len, chunk;
	long got;

	sg_init_table(sgl, pages);
	while (bytes) {
		len = sd_iov_next_piece(c, bytes, &addr);
		if (WARN_ON_ONCE(!len))
			return -EINVAL;
		bytes -= len;
		n = DIV_ROUND_UP(offset_in_page(addr) + len, PAGE_SIZE);
		if (WARN_ON_ONCE(used + n > pages))
			return -EINVAL;
		i = *pinned;
		start = addr & PAGE_MASK;
		while (n) {
			got = pin_user_pages_fast(start, n, gup, pagev + *pinned);
			if (got <= 0)
				return got ? got : -EFAULT;
			*pinned += got;
			start += got * PAGE_SIZE;
			n -= got;
		}
		for (; i < *pinned; i++) {
			chunk = min_t(u64, len, PAGE_SIZE - offset_in_page(addr));
			sg_set_page(sg, pagev[i], chunk, offset_in_page(addr));
			addr += chunk;
			len -= chunk;
			if (++used < pages)
				sg = sg_next(sg);
		}
	}
	if (WARN_ON_ONCE(!used))
		return -EINVAL;
	sg_mark_end(&sgl[used - 1]);
	*nents = used;
	return 0;
}

/*
 * Pins one region's pages and builds its page-per-entry scatterlist, then
 * maps it and an MR of the pool (every one maps mr_pages) over it, with a
 * new key. The cursor is at the region's start.
 */
static int sd_mr_build(struct sd_sock *sd, struct sd_reg *reg, struct sd_mr *m,
		       struct sd_iov_cursor *c, u64 bytes, u32 pages,
		       u32 mr_pages, unsigned int gup)
{
	struct ib_device *dev = sd->pd->device;
	unsigned long before = reg->nr_pages;
	int err, n;

	m->reg = reg;
	m->sgl = kvmalloc_array(pages, sizeof(*m->sgl), GFP_KERNEL_ACCOUNT);
	if (!m->sgl)
		return -ENOMEM;
	err = sd_pin_region(c, bytes, pages, gup, reg->pages, &reg->nr_pages,
			    m->sgl, &m->nents);
	/* Pinned, even on an error: sd_reg_release() unpins and uncounts. */
	spin_lock_bh(&sd->lock);
	sd->pinned_bytes += (u64)(reg->nr_pages - before) << PAGE_SHIFT;
	spin_unlock_bh(&sd->lock);
	if (err)
		return err;
	n = ib_dma_map_sg(dev, m->sgl, m->nents, sd_reg_dir(reg->flags));
	if (n <= 0)
		return -ENOMEM;
	m->dma_nents = n;
	m->mr = sd_mr_get(sd, mr_pages);
	if (IS_ERR(m->mr)) {
		err = PTR_ERR(m->mr);
		m->mr = NULL;
		return err;
	}
	if (ib_map_mr_sg(m->mr, m->sgl, n, NULL, PAGE_SIZE) != n)
		return -EINVAL;
	/* The peer learns the descriptor's offset. */
	m->mr->iova = sd_peer_iova(m->mr->iova);
	/* A reused MR's earlier tokens stay dead: the key changes each time. */
	ib_update_fast_reg_key(m->mr, ib_inc_rkey(m->mr->rkey));
	return 0;
}

/* Limits of one MR on this device. */
static void sd_mr_limits(struct sd_sock *sd, u32 *pages, u64 *bytes)
{
	const struct ib_device_attr *a = &sd->pd->device->attrs;

	*pages = clamp_t(u32, a->max_fast_reg_page_list_len, 1, SD_MR_PAGES_MAX);
	*bytes = min_t(u64, a->max_mr_size, U32_MAX);
	if (*bytes < PAGE_SIZE)
		*bytes = PAGE_SIZE;
}

static int sd_reg_setup(struct sd_sock *sd, struct sd_reg *reg,
			const struct iovec *iov, u32 nr_iov, u32 mr_pages,
			u64 mr_bytes)
{
	unsigned int gup = FOLL_LONGTERM;
	struct sd_iov_cursor c, start;
	unsigned long total_pages = 0;
	u32 i, pages;
	u64 bytes;
	int err;

	if (reg->flags & SMBDIRECT_ACCESS_PEER_WRITE)
		gup |= FOLL_WRITE;
	sd_iov_cursor_init(&c, iov, nr_iov);
	for (i = 0; i < reg->nr_mrs; i++) {
		if (!sd_iov_next_region(&c, mr_pages, mr_bytes, &pages))
			return -EINVAL;
		total_pages += pages;
	}
	err = sd_reg_charge(reg, total_pages);
	if (err)
		return err;
	reg->pages = kvmalloc_array(total_pages, sizeof(*reg->pages), GFP_KERNEL_ACCOUNT);
	if (!reg->pages)
		return -ENOMEM;
	sd_iov_cursor_init(&c, iov, nr_iov);
	for (i = 0; i < reg->nr_mrs; i++) {
		start = c;
		bytes = sd_iov_next_region(&c, mr_pages, mr_bytes, &pages);
		err = sd_mr_build(sd, reg, &reg->mrs[i], &start, bytes, pages,
				  mr_pages, gup);
		if (err)
			return err;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	/* Not waited for: a failed REG_MR fails the connection. */
	for (i = 0; i < reg->nr_mrs; i++) {
		err = sd_mr_register(sd, &reg->mrs[i], reg->flags);
		if (err)
			return err;
	}
	return 0;
}

#define SD_REG_FLAGS (SMBDIRECT_ACCESS_PEER_READ | SMBDIRECT_ACCESS_PEER_WRITE | \
		      SMBDIRECT_REG_REMOTE_INVALIDATE)

/*
 * The caller's iovec array of nr (1 .. SMBDIRECT_IOV_MAX) segments, copied
 * in. A 32-bit caller's is an array of struct compat_iovec (32-bit pointer
 * and length), widened here to struct iovec. An ERR_PTR on a bad pointer
 * or no memory; kvfree() the result.
 */
struct iovec *sd_iov_import(u64 uptr, u32 nr)
{
	const struct compat_iovec __user *uc = u64_to_user_ptr(uptr);
	struct iovec *iov;
	u32 i;

	/* Charged, as everything a caller makes us allocate. */
	iov = kvmalloc_array(nr, sizeof(*iov), GFP_KERNEL_ACCOUNT);
	if (!iov)
		return ERR_PTR(-ENOMEM);
	if (!in_compat_syscall()) {
		if (copy_from_user(iov, u64_to_user_ptr(uptr), array_size(nr, sizeof(*iov))))
			goto fault;
		return iov;
	}
	if (!user_access_begin(uc, array_size(nr, sizeof(*uc))))
		goto fault;
	for (i = 0; i < nr; i++) {
		compat_uptr_t base;
		compat_size_t len;

		unsafe_get_user(base, &uc[i].iov_base, fault_end);
		unsafe_get_user(len, &uc[i].iov_len, fault_end);
		iov[i].iov_base = compat_ptr(base);
		iov[i].iov_len = len;
	}
	user_access_end();
	return iov;

fault_end:
	user_access_end();
fault:
	kvfree(iov);
	return ERR_PTR(-EFAULT);
}

/*
 * sd_iov_total() of an array from sd_iov_import(), in the caller's terms:
 * a 32-bit caller's lengths must also add up within its size_t (else
 * -EMSGSIZE, as a wrapped sum), and each of its segments must end within
 * its 32-bit address space (else -EFAULT, as a wrapping 64-bit segment).
 */
int sd_iov_user_total(const struct iovec *iov, u32 nr, u64 max, u64 *total)
{
	bool compat = in_compat_syscall();
	u32 i;
	int err;

	err = sd_iov_total(iov, nr, compat ? min_t(u64, max, U32_MAX) : max, total);
	if (err || !compat)
		return err;
	for (i = 0; i < nr; i++)
		if ((u64)(unsigned long)iov[i].iov_base + iov[i].iov_len > U32_MAX)
			return -EFAULT;
	return 0;
}

/*
 * Takes a slot of the socket's max_registrations, which DEREGISTER_ASYNC
 * completions not reaped yet hold too.
 */
static int sd_reg_slot(struct sd_sock *sd)
{
	int err = 0;

	spin_lock_bh(&sd->lock);
	if (sd->nr_regs + sd->nr_reg_cqes >= sd_max_registrations())
		err = -ENOBUFS;
	else
		sd->nr_regs++;
	spin_unlock_bh(&sd->lock);
	return err;
}

int sd_ioctl_register(struct sd_sock *sd, void __user *arg)
{
	struct smbdirect_register __user *ur = arg;
	struct smbdirect_buffer_descriptor_v1 *desc = NULL;
	struct smbdirect_register r;
	struct iovec *iov = NULL;
	struct sd_reg *reg = NULL;
	struct sd_iov_cursor c;
	u32 nr_mrs = 0, mr_pages, pages, i;
	u64 total = 0, mr_bytes;
	struct mem_cgroup *old;
	int err;

	err = sd_ioctl_copy_in(&r, ur, sizeof(r));
	if (err)
		return err;
	if ((r.flags & ~SD_REG_FLAGS) ||
	    !(r.flags & (SMBDIRECT_ACCESS_PEER_READ | SMBDIRECT_ACCESS_PEER_WRITE)) ||
	    !r.iov_count)
		return -EINVAL;
	if (r.iov_count > SMBDIRECT_IOV_MAX)
		return -EMSGSIZE;
	iov = sd_iov_import(r.iov, r.iov_count);
	if (IS_ERR(iov))
		return PTR_ERR(iov);
	err = sd_iov_user_total(iov, r.iov_count, SMBDIRECT_REG_MAX_BYTES, &total);
	if (!err && !total)
		err = -EINVAL;
	if (err)
		goto out_iov;

	err = sd_res_get(sd, true);
	if (err)
		goto out_iov;
	sd_mr_limits(sd, &mr_pages, &mr_bytes);
	sd_iov_cursor_init(&c, iov, r.iov_count);
	while (sd_iov_next_region(&c, mr_pages, mr_bytes, &pages))
		nr_mrs++;
	if (nr_mrs > r.desc_count) {
		err = put_user(nr_mrs, &ur->desc_count) ? -EFAULT : -ENOSPC;
		goto out_put;
	}
	desc = kvmalloc_array(nr_mrs, sizeof(*desc), GFP_KERNEL_ACCOUNT);
	if (!desc) {
		err = -ENOMEM;
		goto out_put;
	}
	err = sd_reg_slot(sd);
	if (err)
		goto out_put;
	reg = kvzalloc(struct_size(reg, mrs, nr_mrs), GFP_KERNEL_ACCOUNT);
	if (!reg) {
		spin_lock_bh(&sd->lock);
		sd->nr_regs--;
		spin_unlock_bh(&sd->lock);
		err = -ENOMEM;
		goto out_put;
	}
	INIT_LIST_HEAD(&reg->dying);
	reg->nr_mrs = nr_mrs;
	reg->sd = sd;
	reg->flags = r.flags;
	reg->bytes = total;
	INIT_LIST_HEAD(&reg->node);
	for (i = 0; i < nr_mrs; i++)
		reg->mrs[i].reg = reg;
	/* The registration's memory is the connection's: its memory cgroup. */
	old = sd_memcg_enter(sd);
	err = sd_reg_setup(sd, reg, iov, r.iov_count, mr_pages, mr_bytes);
	sd_memcg_leave(old);
	if (err)
		goto out_destroy;

	for (i = 0; i < nr_mrs; i++) {
		desc[i].offset = cpu_to_le64(reg->mrs[i].mr->iova);
		desc[i].token = cpu_to_le32(reg->mrs[i].mr->rkey);
		desc[i].length = cpu_to_le32(reg->mrs[i].mr->length);
	}
	spin_lock_bh(&sd->lock);
	reg->id = ++sd->next_reg_id;
	spin_unlock_bh(&sd->lock);
	r.id = reg->id;
	r.desc_count = nr_mrs;
	/* The peer cannot know a token before the caller has it: undo is safe. */
	if (copy_to_user(u64_to_user_ptr(r.desc), desc, nr_mrs * sizeof(*desc)) ||
	    copy_to_user(ur, &r, sizeof(r))) {
		err = -EFAULT;
		goto out_destroy;
	}
	spin_lock_bh(&sd->lock);
	list_add_tail(&reg->node, &sd->regs);
	sd_stat_add(sd, SD_STAT_REGISTRATIONS, 1);
	spin_unlock_bh(&sd->lock);
	reg = NULL;
	goto out_put;

out_destroy:
	/* Undone before anyone saw a token: LOCAL_INV of what was posted. */
	sd_reg_retire(sd, reg);
out_put:
	sd_res_put(sd);
out_iov:
	trace_af_smbdirect_register(&sd->sk, err ? 0 : r.id, total, nr_mrs,
				    r.flags, err);
	kvfree(desc);
	kvfree(iov);
	return err;
}

int sd_ioctl_deregister(struct sd_sock *sd, void __user *arg)
{
	struct smbdirect_deregister __user *ud = arg;
	struct smbdirect_deregister d = {};
	struct sd_reg *reg = NULL, *r;
	struct sd_rw_cqe *e = NULL;
	u32 i, size;
	int err, n;

	/* The first version ended at reserved: no cookie. */
	if (get_user(size, &ud->size))
		return -EFAULT;
	n = sd_ioctl_copy_size(size, offsetofend(struct smbdirect_deregister, reserved),
			       sizeof(d));
	if (n < 0)
		return n;
	/* A first-version struct's cookie reads as 0; a longer one's tail as 0. */
	err = copy_struct_from_user(&d, sizeof(d), ud, size);
	if (err)
		return err;
	if (d.flags & ~SMBDIRECT_DEREG_ASYNC)
		return -EINVAL;
	if (d.flags & SMBDIRECT_DEREG_ASYNC) {
		/* The cookie is needed; the completion is allocated here. */
		if (n < sizeof(d))
			return -EINVAL;
		e = sd_rw_cqe_alloc();
		if (!e)
			return -ENOMEM;
	}
	err = sd_res_get(sd, false);
	if (err)
		goto out_free;
	spin_lock_bh(&sd->lock);
	list_for_each_entry(r, &sd->regs, node) {
		if (r->id == d.id) {
			reg = r;
			list_del_init(&reg->node);
			list_add_tail(&reg->dying, &sd->regs_dying);
			break;
		}
	}
	/*
	 * The state reported is the one at this point: an invalidation by
	 * the peer that crosses this call later (regs_dying, then the
	 * remembered tokens) still marks it, and only spares its LOCAL_INV.
	 */
	d.state = 0;
	for (i = 0; reg && i < reg->nr_mrs; i++)
		if (reg->mrs[i].remote_inv)
			d.state |= SMBDIRECT_REG_STATE_REMOTE_INVALIDATED;
	spin_unlock_bh(&sd->lock);
	if (!reg) {
		sd_res_put(sd);
		err = -ENOENT;
		goto out_free;
	}
	trace_af_smbdirect_deregister(&sd->sk, d.id,
				      (u64)reg->nr_pages << PAGE_SHIFT,
				      reg->nr_mrs, d.state, 0);
	sd_test_dereg_delay();
	if (e) {
		reg->async = true;
		reg->cookie = d.cookie;
		reg->cqe = e;
		e = NULL;
	}
	sd_reg_retire(sd, reg);
	sd_res_put(sd);
	d.reserved = 0;
	/* Only state is written: a v1 caller's struct ends before cookie. */
	return put_user(d.state, &ud->state) ? -EFAULT : 0;

out_free:
	kfree(e);
	return err;
}

/* rkey is one of reg's tokens: marked invalidated by the peer. */
static bool sd_reg_remote_invalidated(struct sd_sock *sd, struct sd_reg *reg, u32 rkey)
	__must_hold(&sd->lock)
{
	u32 i;

	for (i = 0; i < reg->nr_mrs; i++) {
		if (!reg->mrs[i].reg_posted || reg->mrs[i].mr->rkey != rkey)
			continue;
		reg->mrs[i].remote_inv = true;
		sd_stat_add(sd, SD_STAT_REMOTE_INVALIDATIONS, 1);
		trace_af_smbdirect_remote_invalidate(&sd->sk, rkey, true);
		if (!(reg->flags & SMBDIRECT_REG_REMOTE_INVALIDATE)) {
			pr_warn_ratelimited("peer invalidated a token it was not allowed to\n");
			sd_fail(sd, -EPROTO);
		}
		return true;
	}
	return false;
}

/*
 * A receive arrived with SEND_WITH_INVALIDATE of rkey: the device already
 * invalidated it. Under sd->lock, before the core sees the PDU, so the
 * reader of the message finds the registration marked. The token may
 * also be one that crossed our DEREGISTER: on regs_dying until released,
 * then among the SD_RETIRED_TOKENS newest released ones, once. A token
 * this connection never issued (or no longer holds) is a protocol error:
 * some devices (rxe) do not check the MR's PD, so it may have been
 * another connection's registration.
 */
void sd_mr_remote_invalidated(struct sd_sock *sd, u32 rkey)
{
	struct sd_reg *reg;

	list_for_each_entry(reg, &sd->regs, node)
		if (sd_reg_remote_invalidated(sd, reg, rkey))
			return;
	/*
	 * A token being deregistered: the peer's answer and our DEREGISTER
	 * crossed. Its LOCAL_INV, not yet posted, is skipped.
	 */
	list_for_each_entry(reg, &sd->regs_dying, dying)
		if (sd_reg_remote_invalidated(sd, reg, rkey))
			return;
	/* The same crossing, once the registration was released. */
	if (sd_retired_token_take(sd, rkey)) {
		sd_stat_add(sd, SD_STAT_REMOTE_INVALIDATIONS, 1);
		trace_af_smbdirect_remote_invalidate(&sd->sk, rkey, true);
		return;
	}
	trace_af_smbdirect_remote_invalidate(&sd->sk, rkey, false);
	pr_warn_ratelimited("peer invalidated a token this connection did not issue\n");
	sd_fail(sd, -EPROTO);
}

/*
 * Teardown: the QP is drained (every posted work request completed) and
 * no ioctl holds a reference. Deregistrations whose LOCAL_INV never went
 * out end with the connection's error (their MRs deregistered: that kills
 * the tokens); ASYNC ones queue their completion, which the destructor
 * frees if nobody reaps it. Live registrations are released without one.
 * Then the MR pool; the PD goes after this.
 */
void sd_mr_release_all(struct sd_sock *sd)
{
	struct sd_reg *reg;

	/*
	 * Nothing can be posted now: the queued ones settle, for mr_work,
	 * whose list is worked off here. Cancelled, not flushed: teardown
	 * holds res_mutex, and close_work on the same workqueue takes it.
	 */
	spin_lock_bh(&sd->lock);
	sd_mr_kick(sd);
	spin_unlock_bh(&sd->lock);
	cancel_work_sync(&sd->mr_work);
	sd_mr_work_fn(&sd->mr_work);
	for (;;) {
		spin_lock_bh(&sd->lock);
		reg = list_first_entry_or_null(&sd->regs, struct sd_reg, node);
		if (reg) {
			list_del_init(&reg->node);
			reg->dereg = true;
			reg->inv_next = reg->nr_mrs;
			WARN_ON_ONCE(reg->wrs);
		}
		spin_unlock_bh(&sd->lock);
		if (!reg)
			break;
		sd_reg_release(sd, reg);
	}
	WARN_ON_ONCE(!list_empty(&sd->reg_invq) || !list_empty(&sd->reg_done));
	sd_mr_pool_free(sd);
}
