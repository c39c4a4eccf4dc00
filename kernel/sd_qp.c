// SPDX-License-Identifier: GPL-2.0
/*
 * Verbs resources of one connection: PD, one CQ polled from a workqueue
 * (completions never run on the syscall path), an RC QP, and the receive
 * and send buffers. Receives are posted as soon as the QP exists, before
 * connect or accept, because the peer may send the moment it is connected.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "uapi/linux/smbdirect.h"
#include "sd_sock.h"

/* RDMA read depth we ask for. */
#define SD_RD_ATOM_MAX 8
/* rdma_rw contexts of one RDMA_READV/WRITEV in flight, and their size. */
#define SD_RW_DEPTH 16
#define SD_RW_PAGES_MAX 256
/* Send-queue room for REG_MR and LOCAL_INV of registrations. */
#define SD_REG_WRS 16
/* One sge per PDU; rdma_rw uses up to this many. */
#define SD_SEND_SGE_MAX 32

int sd_rx_post(struct sd_sock *sd, struct sd_rx_buf *rx)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge;

	ib_dma_sync_single_for_device(sd->pd->device, rx->dma,
				      sd->opts.max_receive_size, DMA_FROM_DEVICE);
	sge.addr = rx->dma;
	sge.length = sd->opts.max_receive_size;
	sge.lkey = sd->pd->local_dma_lkey;
	rx->cqe.done = sd_rx_done;
	wr.wr_cqe = &rx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ib_post_recv(sd->qp, &wr, NULL);
}

static void sd_bufs_free(struct sd_sock *sd)
{
	struct ib_device *dev = sd->pd->device;
	unsigned int i;

	for (i = 0; sd->rx_bufs && i < sd->rx_count; i++) {
		if (!sd->rx_bufs[i].data)
			break;
		ib_dma_unmap_single(dev, sd->rx_bufs[i].dma,
				    sd->opts.max_receive_size, DMA_FROM_DEVICE);
		kfree(sd->rx_bufs[i].data);
	}
	kvfree(sd->rx_bufs);
	sd->rx_bufs = NULL;
	for (i = 0; sd->tx_bufs && i < sd->tx_count; i++) {
		if (!sd->tx_bufs[i].data)
			break;
		ib_dma_unmap_single(dev, sd->tx_bufs[i].dma,
				    sd->opts.max_send_size, DMA_TO_DEVICE);
		kfree(sd->tx_bufs[i].data);
	}
	kvfree(sd->tx_bufs);
	sd->tx_bufs = NULL;
	INIT_LIST_HEAD(&sd->tx_free);
	INIT_LIST_HEAD(&sd->rx_deferred);
}

static int sd_buf_map(struct ib_device *dev, u8 **data, u64 *dma, u32 size,
		      enum dma_data_direction dir)
{
	*data = kmalloc(size, SD_GFP_CONN);
	if (!*data)
		return -ENOMEM;
	*dma = ib_dma_map_single(dev, *data, size, dir);
	if (ib_dma_mapping_error(dev, *dma)) {
		kfree(*data);
		*data = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * Under sd_memcg_enter(): the buffers are charged to the socket's memory
 * cgroup, whichever context creates the QP.
 */
static int sd_bufs_alloc(struct sd_sock *sd)
{
	struct ib_device *dev = sd->pd->device;
	unsigned int i;
	int err;

	sd->rx_bufs = kvcalloc(sd->rx_count, sizeof(*sd->rx_bufs), SD_GFP_CONN);
	sd->tx_bufs = kvcalloc(sd->tx_count, sizeof(*sd->tx_bufs), SD_GFP_CONN);
	if (!sd->rx_bufs || !sd->tx_bufs)
		return -ENOMEM;
	for (i = 0; i < sd->rx_count; i++) {
		sd->rx_bufs[i].sd = sd;
		INIT_LIST_HEAD(&sd->rx_bufs[i].node);
		err = sd_buf_map(dev, &sd->rx_bufs[i].data, &sd->rx_bufs[i].dma,
				 sd->opts.max_receive_size, DMA_FROM_DEVICE);
		if (err)
			return err;
	}
	for (i = 0; i < sd->tx_count; i++) {
		sd->tx_bufs[i].sd = sd;
		err = sd_buf_map(dev, &sd->tx_bufs[i].data, &sd->tx_bufs[i].dma,
				 sd->opts.max_send_size, DMA_TO_DEVICE);
		if (err)
			return err;
		list_add_tail(&sd->tx_bufs[i].node, &sd->tx_free);
	}
	return 0;
}

/* Posts every receive buffer and tells the core; under sd->lock. */
static int sd_rx_post_all(struct sd_sock *sd)
{
	struct sd_core_actions act;
	unsigned int i;
	int err;

	for (i = 0; i < sd->rx_count; i++) {
		err = sd_rx_post(sd, &sd->rx_bufs[i]);
		if (err)
			return err;
	}
	if (sd_core_recv_posted(&sd->core, sd->rx_count, &act))
		return -EINVAL;
	return 0;
}

/* Send-queue entries the QP may hold, rdma_rw's own room included. */
static u32 sd_sq_size(struct sd_sock *sd)
{
	return sd->tx_count + 1 + SD_REG_WRS + sd->rw_depth * (sd->rw_wrs + 3);
}

/*
 * Sizes RDMA_READV/WRITEV's share of the send queue: rw_depth contexts of
 * rw_pages pages, each taking at most rw_wrs work requests (rdma_rw splits
 * a context by the device's sge limits, or uses one MR: REG, RDMA, INV).
 */
static int sd_rw_size(struct sd_sock *sd, struct ib_device *dev)
{
	u32 sge = clamp_t(u32, dev->attrs.max_send_sge, 1, SD_SEND_SGE_MAX);
	u32 sge_rd = clamp_t(u32, dev->attrs.max_sge_rd, 1, sge);
	u32 fixed = sd->tx_count + 1 + SD_REG_WRS;
	u32 qp_room, cq_room;

	sd->rw_pages = clamp_t(u32, dev->attrs.max_fast_reg_page_list_len, 1,
			       SD_RW_PAGES_MAX);
	sd->rw_wrs = max_t(u32, DIV_ROUND_UP(sd->rw_pages, sge_rd), 3);
	qp_room = (u32)dev->attrs.max_qp_wr > fixed ? dev->attrs.max_qp_wr - fixed : 0;
	cq_room = (u32)dev->attrs.max_cqe > sd->rx_count + 1 + fixed ?
		  dev->attrs.max_cqe - (sd->rx_count + 1 + fixed) : 0;
	sd->rw_depth = min3(qp_room, cq_room, (u32)SD_RW_DEPTH * (sd->rw_wrs + 3)) /
		       (sd->rw_wrs + 3);
	if (!sd->rw_depth)
		return -EINVAL;
	spin_lock_bh(&sd->lock);
	sd->reg_wr_free = SD_REG_WRS;
	sd->rw_slots = sd->rw_depth;
	sd->rw_reads = 0;
	spin_unlock_bh(&sd->lock);
	return 0;
}

u32 sd_transport_kind(struct ib_device *dev, u32 port)
{
	if (rdma_protocol_iwarp(dev, port))
		return SMBDIRECT_TRANSPORT_IWARP;
	if (rdma_protocol_roce(dev, port))
		return SMBDIRECT_TRANSPORT_ROCE;
	return SMBDIRECT_TRANSPORT_IB;
}

/*
 * Creates PD, CQ, QP and buffers on sd->cm_id's device and posts the
 * receives. Called from rdma_cm handlers with the core initialised.
 */
int sd_qp_create(struct sd_sock *sd)
{
	struct rdma_cm_id *id = sd->cm_id;
	struct ib_device *dev = id->device;
	struct ib_qp_init_attr attr = {};
	struct mem_cgroup *old;
	int err;

	mutex_lock(&sd->res_mutex);
	if (sd->dying || sd->pd) {
		err = -ECONNABORTED;
		goto out;
	}
	sd->rx_count = sd->opts.receive_credit_max;
	/*
	 * The peer never holds more credits than it has receives posted,
	 * and it posts at most its receive_credit_max (255 by default):
	 * more send buffers than that would never be used at once.
	 */
	sd->tx_count = min_t(u32, sd->opts.send_credit_target, 255);
	if (sd->rx_count + 1 > dev->attrs.max_qp_wr ||
	    sd->tx_count + 1 > dev->attrs.max_qp_wr ||
	    sd->rx_count + sd->tx_count + 2 > dev->attrs.max_cqe) {
		err = -EINVAL;
		goto out;
	}
	err = sd_rw_size(sd, dev);
	if (err)
		goto out;
	sd_mr_setup(sd);
	sd->transport = sd_transport_kind(dev, id->port_num);
	sd_stats_dev_bind(sd, dev, id->port_num);
	sd->initiator_depth = min_t(u32, dev->attrs.max_qp_init_rd_atom, SD_RD_ATOM_MAX);
	sd->responder_resources = min_t(u32, dev->attrs.max_qp_rd_atom, SD_RD_ATOM_MAX);

	sd->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(sd->pd)) {
		err = PTR_ERR(sd->pd);
		sd->pd = NULL;
		goto out;
	}
	sd->cq = ib_alloc_cq(dev, sd, sd->rx_count + 1 + sd_sq_size(sd), 0,
			     IB_POLL_WORKQUEUE);
	if (IS_ERR(sd->cq)) {
		err = PTR_ERR(sd->cq);
		sd->cq = NULL;
		goto out;
	}
	attr.qp_context = sd;
	attr.send_cq = sd->cq;
	attr.recv_cq = sd->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	/* One more of each for ib_drain_qp(). */
	attr.cap.max_send_wr = sd->tx_count + 1 + SD_REG_WRS + sd->rw_depth * sd->rw_wrs;
	attr.cap.max_recv_wr = sd->rx_count + 1;
	attr.cap.max_send_sge = clamp_t(u32, dev->attrs.max_send_sge, 1, SD_SEND_SGE_MAX);
	attr.cap.max_recv_sge = 1;
	/* rdma_rw adds its REG_MR/LOCAL_INV room and, on iWARP, an MR pool. */
	attr.cap.max_rdma_ctxs = sd->rw_depth;
	err = rdma_create_qp(id, sd->pd, &attr);
	if (err)
		goto out;
	sd->qp = id->qp;
	old = sd_memcg_enter(sd);
	err = sd_bufs_alloc(sd);
	sd_memcg_leave(old);
	if (err)
		goto out;
	spin_lock_bh(&sd->lock);
	err = sd_rx_post_all(sd);
	spin_unlock_bh(&sd->lock);
out:
	mutex_unlock(&sd->res_mutex);
	return err;
}

/* Frees the tx side and, with @rx, unread messages too. */
void sd_queues_free(struct sd_sock *sd, bool rx)
{
	struct sd_msg *m, *tmp;

	list_splice_init(&sd->tx_done, &sd->tx_queue);
	list_for_each_entry_safe(m, tmp, &sd->tx_queue, node)
		sd_msg_free(m);
	INIT_LIST_HEAD(&sd->tx_queue);
	WRITE_ONCE(sd->tx_queued, 0);
	sd->tx_unacked = 0;
	sd->tx_cur = NULL;
	WRITE_ONCE(sd->tx_fill, NULL);
	if (sd->rx_asm)
		sd_msg_free(sd->rx_asm);
	sd->rx_asm = NULL;
	if (!rx)
		return;
	list_for_each_entry_safe(m, tmp, &sd->rx_queue, node)
		sd_msg_free(m);
	INIT_LIST_HEAD(&sd->rx_queue);
	sd->rx_queued = 0;
	sd->rx_msgs = 0;
}

/*
 * Frees every transport resource; idempotent. The caller holds
 * lock_sock() or owns the socket alone. Received but unread messages are
 * kept for recvmsg; only the socket's destructor frees those.
 */
void sd_transport_teardown(struct sd_sock *sd)
{
	struct rdma_cm_id *id;

	spin_lock_bh(&sd->lock);
	WRITE_ONCE(sd->dying, true);
	spin_unlock_bh(&sd->lock);
	wake_up_all(&sd->rdma_wait);
	cancel_delayed_work_sync(&sd->timer_work);
	cancel_delayed_work_sync(&sd->reset_work);
	cancel_work_sync(&sd->disconnect_work);

	mutex_lock(&sd->res_mutex);
	id = sd->cm_id;
	if (sd->qp) {
		/* Also answers a peer's DREQ; errors only mean "not connected". */
		if (sd->qp_used && !READ_ONCE(sd->id_owned_by_cm))
			rdma_disconnect(id);
		sd->cm_connected = false;
		/* Flushes every posted WR through the completion handlers. */
		if (sd->qp_used)
			ib_drain_qp(sd->qp);
	}
	/* Transfers never posted end too; finished ones are released. */
	sd_rw_teardown(sd);
	/*
	 * An RDMA ioctl woken by those flushes finishes and drops its
	 * reference; none can take one now that dying is set. The wait lets
	 * go of res_mutex: over iWARP the flush of what was still in flight
	 * can depend on the CM's ordered work queue, whose DISCONNECTED
	 * handler takes res_mutex (and, dying set, leaves the QP alone).
	 */
	mutex_unlock(&sd->res_mutex);
	sd_res_wait_idle(sd);
	mutex_lock(&sd->res_mutex);
	if (sd->pd)
		sd_mr_release_all(sd);
	if (sd->qp) {
		rdma_destroy_qp(id);
		sd->qp = NULL;
	}
	if (sd->cq) {
		ib_free_cq(sd->cq);
		sd->cq = NULL;
	}
	/* The device can no longer touch what it never completed. */
	sd_rw_orphans_free(sd);
	if (sd->pd) {
		sd_bufs_free(sd);
		ib_dealloc_pd(sd->pd);
		sd->pd = NULL;
	}
	mutex_unlock(&sd->res_mutex);

	if (id) {
		bool destroy;

		sd_list_del(sd);
		/*
		 * One destroyer: rdma_cm (a CONNECT_REQUEST handler gave the
		 * id up, sd_cm.c) or the first teardown to get here. A second
		 * one, the handler's own while another waits in
		 * rdma_destroy_id() for it, must not.
		 */
		spin_lock_bh(&sd->lock);
		destroy = !sd->id_owned_by_cm && !sd->id_destroying;
		if (destroy)
			sd->id_destroying = true;
		spin_unlock_bh(&sd->lock);
		/* Waits for a running handler; none can start afterwards. */
		if (destroy)
			rdma_destroy_id(id);
		sd->cm_id = NULL;
		/* No handler runs now: a removal work queued for it is moot. */
		spin_lock_bh(&sd->lock);
		sd->removed_id = NULL;
		spin_unlock_bh(&sd->lock);
	}
	sd_cm_connector_put(sd);
	/* Unread messages stay for recvmsg; the destructor frees them. */
	sd_queues_free(sd, false);
}
