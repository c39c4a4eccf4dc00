/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A raw rdma_cm peer for the kselftests (librdmacm and libibverbs: link
 * with -lrdmacm -libverbs): it sends connect requests to our listeners,
 * gives each a real RC QP and never a byte of SMB-Direct, so every
 * request it makes that a listener answers is a half-open child. Used by
 * flood_test.c (the half-open bounds) and zz_device_test.c (a device
 * deleted again and again under the flood).
 *
 * One thread drives a struct flood: every call below, and the handling
 * of its events, happens on that thread.
 */
#ifndef SD_FLOOD_H
#define SD_FLOOD_H

#include <rdma/rdma_cma.h>

#include "sd_test.h"

#ifndef FLOOD_MAX
#define FLOOD_MAX 32
#endif

enum flood_state { F_PENDING, F_ESTABLISHED, F_REJECTED, F_FAILED, F_CLOSED };

struct flood {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id[FLOOD_MAX];
	enum flood_state st[FLOOD_MAX];
	int port[FLOOD_MAX];
	int n;
	int live, live_max;	/* established, not yet disconnected */
	int established, rejected, failed, closed;
	int removals;		/* RDMA_CM_EVENT_DEVICE_REMOVAL seen */
	int err;		/* the first verbs or rdma_cm call that failed */
	/*
	 * IB/RoCE: connect without a QP and never call rdma_establish(), so
	 * no RTU follows our REP; the answer (CONNECT_RESPONSE) counts as
	 * established.
	 */
	bool no_rtu;
};

static inline int flood_init(struct flood *f)
{
	memset(f, 0, sizeof(*f));
	f->ch = rdma_create_event_channel();
	if (!f->ch)
		return -errno;
	return fcntl(f->ch->fd, F_SETFL, O_NONBLOCK) ? -errno : 0;
}

static inline void flood_event(struct flood *f, struct rdma_cm_event *ev)
{
	int i = (int)(intptr_t)ev->id->context;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .rnr_retry_count = 7 };
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	int err = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdma_resolve_route(ev->id, 2000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (f->no_rtu) {
			/* A made-up QP number: nothing ever reaches it. */
			p.qp_num = 0x4000 + i;
			err = rdma_connect(ev->id, &p);
			break;
		}
		/* A QP of its own (iWARP connects one), and never a post. */
		err = rdma_create_qp(ev->id, NULL, &qa) ?: rdma_connect(ev->id, &p);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_ESTABLISHED:
		f->st[i] = F_ESTABLISHED;
		f->established++;
		if (++f->live > f->live_max)
			f->live_max = f->live;
		break;
	case RDMA_CM_EVENT_REJECTED:
		/* After the answer: dropped, as a disconnect. */
		if (f->st[i] == F_ESTABLISHED) {
			f->st[i] = F_CLOSED;
			f->closed++;
			f->live--;
			break;
		}
		f->st[i] = F_REJECTED;
		f->rejected++;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* The device went under it: as good as disconnected, or failed. */
		f->removals++;
		if (f->st[i] == F_PENDING) {
			f->st[i] = F_FAILED;
			f->failed++;
		} else if (f->st[i] == F_ESTABLISHED) {
			f->st[i] = F_CLOSED;
			f->closed++;
			f->live--;
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (f->st[i] == F_ESTABLISHED) {
			f->st[i] = F_CLOSED;
			f->closed++;
			f->live--;
		}
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		if (f->st[i] == F_PENDING) {
			f->st[i] = F_FAILED;
			f->failed++;
		}
		break;
	default:
		break;
	}
	if (err && f->st[i] == F_PENDING) {
		f->st[i] = F_FAILED;
		f->failed++;
		if (!f->err)
			f->err = -errno;
	}
}

/* Handles events until done() holds or ms pass; 0 or -ETIMEDOUT. */
static inline int flood_run(struct flood *f, bool (*done)(struct flood *f), int ms)
{
	long end = sd_now_ms() + ms;
	struct rdma_cm_event *ev;

	while (!done(f)) {
		long left = end - sd_now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		if (rdma_get_cm_event(f->ch, &ev)) {
			if (errno == EAGAIN)
				sd_poll(f->ch->fd, POLLIN, left);
			continue;
		}
		flood_event(f, ev);
		rdma_ack_cm_event(ev);
	}
	return 0;
}

static inline bool flood_settled(struct flood *f)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (f->st[i] == F_PENDING)
			return false;
	return true;
}

static inline bool flood_all_closed(struct flood *f)
{
	return flood_settled(f) && !f->live;
}

/*
 * Slot k: a new id and its connect request to ss (port); -errno, and the
 * slot may hold an id to put.
 */
static inline int flood_start_one(struct flood *f, const struct sockaddr_storage *ss,
				  int port, int k)
{
	f->port[k] = port;
	f->st[k] = F_PENDING;
	f->id[k] = NULL;
	if (rdma_create_id(f->ch, &f->id[k], (void *)(intptr_t)k, RDMA_PS_TCP) ||
	    rdma_resolve_addr(f->id[k], NULL, (struct sockaddr *)ss, 2000))
		return -errno;
	return 0;
}

/* n more connect requests to port, all at once; -errno if one cannot start. */
static inline int flood_start(struct flood *f, const struct sd_target *t, int port, int n)
{
	struct sockaddr_storage ss;
	int i, err;

	sd_addr(t, port, &ss);
	for (i = 0; i < n && f->n < FLOOD_MAX; i++) {
		err = flood_start_one(f, &ss, port, f->n++);
		if (err)
			return err;
	}
	return i == n ? 0 : -ENOSPC;
}

/* Slot k's QP and id go (its events must have been acknowledged). */
static inline void flood_put(struct flood *f, int k)
{
	if (!f->id[k])
		return;
	if (f->id[k]->qp)
		rdma_destroy_qp(f->id[k]);
	rdma_destroy_id(f->id[k]);
	f->id[k] = NULL;
}

/*
 * The flood goes on: each slot whose request has ended (rejected, failed,
 * disconnected) puts its id and, with restart, sends a new request to
 * port. The number of requests sent.
 */
static inline int flood_recycle(struct flood *f, const struct sd_target *t, int port, bool restart)
{
	struct sockaddr_storage ss;
	int i, n = 0;

	sd_addr(t, port, &ss);
	for (i = 0; i < f->n; i++) {
		if (f->st[i] == F_PENDING || f->st[i] == F_ESTABLISHED)
			continue;
		flood_put(f, i);
		if (!restart)
			continue;
		n++;
		if (flood_start_one(f, &ss, port, i)) {
			/* No device: the next round tries again. */
			flood_put(f, i);
			f->st[i] = F_FAILED;
			f->failed++;
		}
	}
	return n;
}

/* The outcome of the requests to port. */
static inline void flood_count(struct flood *f, int port, int *established, int *rejected)
{
	int i;

	*established = *rejected = 0;
	for (i = 0; i < f->n; i++) {
		if (f->port[i] != port)
			continue;
		*established += f->st[i] == F_ESTABLISHED || f->st[i] == F_CLOSED;
		*rejected += f->st[i] == F_REJECTED;
	}
}

/* The peer goes: disconnects what it holds, destroys every id. */
static inline void flood_release(struct flood *f)
{
	int i;

	for (i = 0; i < f->n; i++) {
		if (!f->id[i])
			continue;
		if (f->st[i] == F_ESTABLISHED)
			rdma_disconnect(f->id[i]);
		flood_put(f, i);
	}
	f->n = 0;
	f->live = 0;
}

static inline void flood_free(struct flood *f)
{
	struct rdma_cm_event *ev;

	if (!f->ch)
		return;
	/* Events not yet taken would keep rdma_destroy_id() waiting. */
	while (!rdma_get_cm_event(f->ch, &ev))
		rdma_ack_cm_event(ev);
	flood_release(f);
	rdma_destroy_event_channel(f->ch);
	f->ch = NULL;
}

#endif /* SD_FLOOD_H */
