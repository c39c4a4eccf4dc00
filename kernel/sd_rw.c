// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA_READV / RDMA_WRITEV: data between local iovecs and the peer's
 * buffer descriptors, through the kernel's rdma_rw API (which also does
 * the MR dance iWARP needs for RDMA READ).
 *
 * The transfer is cut into chunks, each one rdma_rw context: within one
 * descriptor, at most rw_pages local pages, and a local layout one MR
 * could map (sd_layout.c), so that every device takes it in one go. The
 * local pages of a chunk are pinned only while it is in flight. At most
 * rw_depth chunks are in flight (and at most initiator_depth for READ);
 * one call runs at a time per socket (rw_mutex), which owns that part of
 * the send queue.
 *
 * A signal stops posting; what was posted is waited for before the call
 * returns, so no page stays pinned and no DMA outlives the call. Any chunk
 * that fails ends the connection (sd_wc_error()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>
#include <rdma/rw.h>

#include "uapi/linux/smbdirect.h"
#include "sd_layout.h"
#include "sd_sock.h"

/* No chunk completing for this long: the transfer is stuck. */
#define SD_RW_STALL (30 * HZ)

struct sd_rw_req;

struct sd_rw_chunk {
	struct rdma_rw_ctx ctx;
	struct ib_cqe cqe;
	struct sd_rw_req *req;
	struct scatterlist *sgl;
	struct page **pages;
	unsigned long nr_pages;	/* pinned */
	u32 nents;		/* sgl entries given to rdma_rw */
	bool ctx_live;		/* rdma_rw_ctx_init() succeeded */
	bool posted;
	bool done;		/* completion seen; sd->lock */
	int status;		/* sd->lock */
};

struct sd_rw_req {
	struct sd_sock *sd;
	bool read;
	enum dma_data_direction dir;
	u32 depth;
	u32 inflight;
	const struct smbdirect_buffer_descriptor_v1 *desc;
	u32 nr_desc;
	u32 desc_idx;
	u64 desc_off;		/* bytes of desc[desc_idx] done */
	u64 left;		/* bytes not yet in a chunk */
	struct sd_iov_cursor cur;
	int err;
	struct sd_rw_chunk *chunks;	/* depth of them */
};

static void sd_rw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sd_rw_chunk *c = container_of(wc->wr_cqe, struct sd_rw_chunk, cqe);
	struct sd_sock *sd = c->req->sd;

	spin_lock_bh(&sd->lock);
	c->status = sd_wc_errno(wc->status);
	/*
	 * The QP is in the error state now: the connection is over at once,
	 * without sd_wc_error()'s grace for a racing orderly close, so that
	 * nothing sent after the failed call seems to succeed. A flush counts
	 * too unless our teardown or the peer's orderly close caused it: siw
	 * reports a READ the peer refused (by TERMINATE) as flushed.
	 */
	if (wc->status != IB_WC_SUCCESS &&
	    (wc->status != IB_WC_WR_FLUSH_ERR || !(sd->dying || sd->peer_closed)))
		sd_fail(sd, -ECONNRESET);
	c->done = true;
	spin_unlock_bh(&sd->lock);
	wake_up_all(&sd->rdma_wait);
}

/* Undoes sd_rw_prepare() of a chunk that is not (or no longer) in flight. */
static void sd_rw_release(struct sd_rw_req *q, struct sd_rw_chunk *c)
{
	struct sd_sock *sd = q->sd;

	if (c->ctx_live)
		rdma_rw_ctx_destroy(&c->ctx, sd->qp, sd->cm_id->port_num,
				    c->sgl, c->nents, q->dir);
	if (c->nr_pages)
		unpin_user_pages_dirty_lock(c->pages, c->nr_pages, q->read);
	kvfree(c->sgl);
	kvfree(c->pages);
	memset(c, 0, sizeof(*c));
}

/* Pins and maps the next chunk: the next region within the current descriptor. */

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

static int sd_rw_prepare(struct sd_rw_req *q, struct sd_rw_chunk *c)
{
	const struct smbdirect_buffer_descriptor_v1 *d = &q->desc[q->desc_idx];
	struct sd_sock *sd = q->sd;
	struct sd_iov_cursor start = q->cur;
	u64 bytes, remote;
	u32 pages;
	int ret;

	bytes = sd_iov_next_region(&q->cur, sd->rw_pages,
				   min_t(u64, q->left, le32_to_cpu(d->length) - q->desc_off),
				   &pages);
	if (WARN_ON_ONCE(!bytes))
		return -EINVAL;
	c->req = q;
	c->pages = kvmalloc_array(pages, sizeof(*c->pages), GFP_KERNEL);
	c->sgl = kvmalloc_array(pages, sizeof(*c->sgl), GFP_KERNEL);
	if (!c->pages || !c->sgl)
		return -ENOMEM;
	ret = sd_pin_region(&start, bytes, pages, q->read ? FOLL_WRITE : 0,
			    c->pages, &c->nr_pages, c->sgl, &c->nents);
	if (ret)
		return ret;
	/* sd_desc_check() ruled out overflow of offset + length. */
	remote = le64_to_cpu(d->offset) + q->desc_off;
	ret = rdma_rw_ctx_init(&c->ctx, sd->qp, sd->cm_id->port_num, c->sgl,
			       c->nents, 0, remote, le32_to_cpu(d->token), q->dir);
	if (ret < 0)
		return ret;
	c->ctx_live = true;
	sd_rw_hide_iova(sd, c, q->dir);
	/* The send queue holds rw_depth chunks of at most rw_wrs each. */
	if (WARN_ON_ONCE(ret > sd->rw_wrs))
		return -EIO;
	q->left -= bytes;
	q->desc_off += bytes;
	if (q->desc_off == le32_to_cpu(d->length)) {
		q->desc_idx++;
		q->desc_off = 0;
	}
	return 0;
}

static int sd_rw_post(struct sd_rw_req *q, struct sd_rw_chunk *c)
{
	struct sd_sock *sd = q->sd;
	int err;

	c->cqe.done = sd_rw_done;
	spin_lock_bh(&sd->lock);
	if (sd_qp_unusable(sd))
		err = sd_conn_errno(sd);
	else
		err = rdma_rw_ctx_post(&c->ctx, sd->qp, sd->cm_id->port_num,
				       &c->cqe, NULL);
	if (!err) {
		c->posted = true;
		q->inflight++;
	}
	spin_unlock_bh(&sd->lock);
	return err;
}

static bool sd_rw_any_done(void *arg)
{
	struct sd_rw_req *q = arg;
	struct sd_sock *sd = q->sd;
	bool done = false;
	u32 i;

	spin_lock_bh(&sd->lock);
	for (i = 0; i < q->depth; i++)
		done |= q->chunks[i].posted && q->chunks[i].done;
	spin_unlock_bh(&sd->lock);
	return done;
}

/* Retires completed chunks; the first failure becomes the call's error. */
static void sd_rw_retire(struct sd_rw_req *q)
{
	struct sd_sock *sd = q->sd;
	struct sd_rw_chunk *c;
	bool done;
	int status;
	u32 i;

	for (i = 0; i < q->depth; i++) {
		c = &q->chunks[i];
		spin_lock_bh(&sd->lock);
		done = c->posted && c->done;
		status = c->status;
		spin_unlock_bh(&sd->lock);
		if (!done)
			continue;
		q->inflight--;
		if (status && (!q->err || q->err == -ERESTARTSYS))
			q->err = status;
		sd_rw_release(q, c);
	}
}

static struct sd_rw_chunk *sd_rw_free_chunk(struct sd_rw_req *q)
{
	u32 i;

	for (i = 0; i < q->depth; i++)
		if (!q->chunks[i].req)
			return &q->chunks[i];
	return NULL;
}

static void sd_rw_run(struct sd_rw_req *q)
{
	struct sd_sock *sd = q->sd;
	struct sd_rw_chunk *c;
	long t;
	int err;

	for (;;) {
		while (!q->err && q->left && q->inflight < q->depth) {
			if (signal_pending(current)) {
				q->err = -ERESTARTSYS;
				break;
			}
			c = sd_rw_free_chunk(q);
			if (WARN_ON_ONCE(!c)) {
				q->err = -EIO;
				break;
			}
			err = sd_rw_prepare(q, c);
			if (!err)
				err = sd_rw_post(q, c);
			if (err) {
				sd_rw_release(q, c);
				q->err = err;
			}
		}
		if (!q->inflight)
			return;
		/*
		 * Posted work is always waited for; a signal only stops posting.
		 * No progress for SD_RW_STALL means the QP is stuck (or the
		 * peer is gone): sd_wait_wrs() flushes it.
		 */
		if (!q->err) {
			t = wait_event_interruptible_timeout(sd->rdma_wait,
							     sd_rw_any_done(q),
							     SD_RW_STALL);
			if (t < 0)
				q->err = -ERESTARTSYS;
			else if (!t)
				q->err = -ETIMEDOUT;
		}
		if (q->err)
			sd_wait_wrs(sd, sd_rw_any_done, q,
				    q->err == -ETIMEDOUT ? 0 : SD_RW_STALL);
		sd_rw_retire(q);
	}
}

int sd_ioctl_rdma(struct sd_sock *sd, void __user *arg, bool read)
{
	struct smbdirect_buffer_descriptor_v1 *desc = NULL;
	struct smbdirect_rdma __user *ur = arg;
	struct sd_rw_req *q = NULL;
	struct smbdirect_rdma r;
	struct iovec *iov = NULL;
	u64 local, remote, moved;
	int err;

	err = sd_ioctl_copy_in(&r, ur, sizeof(r));
	if (err)
		return err;
	if (r.flags || !r.iov_count || !r.desc_count)
		return -EINVAL;
	if (r.iov_count > SMBDIRECT_IOV_MAX || r.desc_count > SMBDIRECT_DESC_MAX)
		return -EMSGSIZE;
	iov = sd_iov_import(r.iov, r.iov_count);
	if (IS_ERR(iov))
		return PTR_ERR(iov);
	desc = vmemdup_array_user(u64_to_user_ptr(r.desc), r.desc_count, sizeof(*desc));
	if (IS_ERR(desc)) {
		err = PTR_ERR(desc);
		desc = NULL;
		goto out;
	}
	err = sd_desc_check(desc, r.desc_count, &remote);
	if (err)
		goto out;
	err = sd_iov_user_total(iov, r.iov_count, U64_MAX, &local);
	if (err)
		goto out;
	if (!local) {
		err = -EINVAL;
		goto out;
	}
	moved = min(local, remote);

	err = sd_res_get(sd, true);
	if (err)
		goto out;
	if (moved > sd->params.max_read_write_size) {
		err = -EMSGSIZE;
		goto out_put;
	}
	/* The peer accepted the connection serving no RDMA READ at all. */
	if (read && !READ_ONCE(sd->initiator_depth)) {
		err = -EOPNOTSUPP;
		goto out_put;
	}
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (q)
		q->chunks = kcalloc(sd->rw_depth, sizeof(*q->chunks), GFP_KERNEL);
	if (!q || !q->chunks) {
		err = -ENOMEM;
		goto out_put;
	}
	q->sd = sd;
	q->read = read;
	q->dir = read ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	q->depth = read ? clamp_t(u32, sd->initiator_depth, 1, sd->rw_depth) : sd->rw_depth;
	q->desc = desc;
	q->nr_desc = r.desc_count;
	q->left = moved;
	sd_iov_cursor_init(&q->cur, iov, r.iov_count);

	if (mutex_lock_interruptible(&sd->rw_mutex)) {
		err = -ERESTARTSYS;
		goto out_put;
	}
	trace_af_smbdirect_rdma_issue(&sd->sk, read, moved, r.desc_count, 0);
	sd_rw_run(q);
	mutex_unlock(&sd->rw_mutex);
	err = q->err;
	trace_af_smbdirect_rdma_done(&sd->sk, read, err ? 0 : moved,
				     r.desc_count, err);
	spin_lock_bh(&sd->lock);
	if (!err) {
		sd_stat_add(sd, read ? SD_STAT_RDMA_READS : SD_STAT_RDMA_WRITES, 1);
		sd_stat_add(sd, read ? SD_STAT_RDMA_READ_BYTES :
			    SD_STAT_RDMA_WRITE_BYTES, moved);
	} else if (err != -ERESTARTSYS && err != -EINTR) {
		/* The transfer failed; a signal only interrupted it. */
		sd_stat_add(sd, SD_STAT_ERR_RDMA, 1);
	}
	spin_unlock_bh(&sd->lock);
	if (!err) {
		r.bytes = moved;
		if (put_user(r.bytes, &ur->bytes))
			err = -EFAULT;
	}
out_put:
	sd_res_put(sd);
out:
	if (q)
		kfree(q->chunks);
	kfree(q);
	kvfree(desc);
	kvfree(iov);
	return err;
}
