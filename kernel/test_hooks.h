/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AF_SMBDIRECT_TEST_HOOKS_H
#define AF_SMBDIRECT_TEST_HOOKS_H

/*
 * Hooks that exist only in test builds (make SMBDIRECT_KUNIT=1): debugfs
 * files under af_smbdirect/ that let the VM harness prove its detectors work
 * and let tests force rare orders of events.
 */
#include <rdma/ib_verbs.h>

#ifdef SMBDIRECT_KUNIT
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/delay.h>
#include <linux/errno.h>

void af_smbdirect_test_hooks_init(void);
void af_smbdirect_test_hooks_exit(void);

/*
 * af_smbdirect/test_rx_delay_ms: each successful receive completion waits
 * this long before it is processed (the CQ is polled from a workqueue, so
 * it may sleep). Lets a test make rdma_cm's events overtake the data.
 */
extern u32 af_smbdirect_test_rx_delay_ms;

static inline void sd_test_rx_delay(void)
{
	u32 ms = READ_ONCE(af_smbdirect_test_rx_delay_ms);

	if (ms)
		msleep(ms);
}

/*
 * af_smbdirect/test_disconnect_delay_ms: rdma_cm's DISCONNECTED event
 * of a connection still open here (the survivor of the peer's close)
 * waits this long before it is handled, as it does behind other
 * connections' events in iw_cm's ordered workqueue.
 */
extern u32 af_smbdirect_test_disconnect_delay_ms;

static inline void sd_test_disconnect_delay(void)
{
	u32 ms = READ_ONCE(af_smbdirect_test_disconnect_delay_ms);

	if (ms)
		msleep(ms);
}

/*
 * af_smbdirect/test_request_delay_ms: rdma_cm's CONNECT_REQUEST handler
 * waits this long once the new child is visible (to device removal and
 * the listener) and before its QP exists; test_requests_delayed counts
 * the handlers that entered the wait, so a test knows when to strike.
 */
extern u32 af_smbdirect_test_request_delay_ms;
extern atomic_t af_smbdirect_test_requests_delayed;

static inline void sd_test_request_delay(void)
{
	u32 ms = READ_ONCE(af_smbdirect_test_request_delay_ms);

	if (ms) {
		atomic_inc(&af_smbdirect_test_requests_delayed);
		msleep(ms);
	}
}

/*
 * af_smbdirect/test_route_delay_ms: the ROUTE_RESOLVED handler of a
 * connecting socket waits this long once its QP exists, before it
 * connects or hands the connect over; test_route_delayed counts the
 * waits begun. A test can shut the socket down while the handler runs.
 */
extern u32 af_smbdirect_test_route_delay_ms;
extern u32 af_smbdirect_test_route_delayed;

static inline void sd_test_route_delay(void)
{
	u32 ms = READ_ONCE(af_smbdirect_test_route_delay_ms);

	if (ms) {
		WRITE_ONCE(af_smbdirect_test_route_delayed,
			   READ_ONCE(af_smbdirect_test_route_delayed) + 1);
		msleep(ms);
	}
}

/*
 * af_smbdirect/test_negotiate_timeout_ms: when not 0, the negotiation
 * timeout of connections started from now on instead of [MS-SMBD]'s 5 s:
 * a test holds a peer's half-open connections as long as it needs, or
 * sees them time out sooner.
 */
extern u32 af_smbdirect_test_negotiate_timeout_ms;

static inline unsigned int sd_test_negotiate_timeout(unsigned int ms)
{
	u32 hook = READ_ONCE(af_smbdirect_test_negotiate_timeout_ms);

	return hook ? hook : ms;
}

/*
 * af_smbdirect/test_dereg_delay_ms: DEREGISTER waits this long once the
 * registration is off the live list, before its LOCAL_INV is posted;
 * test_dereg_delayed counts the waits begun. A test has the peer's
 * SEND_WITH_INVALIDATE of the same token arrive in between.
 */
extern u32 af_smbdirect_test_dereg_delay_ms;
extern atomic_t af_smbdirect_test_dereg_delayed;

static inline void sd_test_dereg_delay(void)
{
	u32 ms = READ_ONCE(af_smbdirect_test_dereg_delay_ms);

	if (ms) {
		atomic_inc(&af_smbdirect_test_dereg_delayed);
		msleep(ms);
	}
}

/*
 * af_smbdirect/test_release_delay_ms: releasing a deregistered
 * registration waits this long once its MRs went back to the pool or to
 * the device, before its pages are unpinned; test_release_delayed counts
 * the waits begun. A test has the peer's SEND_WITH_INVALIDATE of another
 * dying registration's token arrive in between.
 */
extern u32 af_smbdirect_test_release_delay_ms;
extern atomic_t af_smbdirect_test_release_delayed;

static inline void sd_test_release_delay(void)
{
	u32 ms = READ_ONCE(af_smbdirect_test_release_delay_ms);

	if (ms) {
		atomic_inc(&af_smbdirect_test_release_delayed);
		msleep(ms);
	}
}

/*
 * af_smbdirect/test_live_key_unmaps: DMA unmaps of a registration's pages
 * done while its MR may still hold a live key (no LOCAL_INV or remote
 * invalidation ended it, and the MR was not yet given back to the
 * device, which kills it). Must stay 0: a
 * peer still writing through a live key would reach memory the IOMMU or
 * swiotlb has let go.
 */
extern atomic_t af_smbdirect_test_live_key_unmaps;

static inline void sd_test_live_key_unmap(bool key_live)
{
	if (key_live)
		atomic_inc(&af_smbdirect_test_live_key_unmaps);
}

/*
 * af_smbdirect/test_repost_enotconn: a countdown of receive reposts; the
 * one that takes it from 1 to 0 fails with -ENOTCONN without reaching the
 * device, as siw refuses a post once its QP is closing. 2 hits the
 * client's repost after the negotiate response (the server's after the
 * request comes first).
 */
extern atomic_t af_smbdirect_test_repost_enotconn;

static inline int sd_test_repost_fail(void)
{
	return atomic_dec_if_positive(&af_smbdirect_test_repost_enotconn) == 0 ?
	       -ENOTCONN : 0;
}

/*
 * af_smbdirect/test_rw_post_fail: a countdown of RDMA transfer chunk
 * posts; the one that takes it from 1 to 0 fails part-way, as
 * ib_post_send() does when it refuses a work request of the chain: all
 * but the chain's last work request (the one rdma_rw signals) go to the
 * send queue, and -ENOMEM is returned with *bad at the last. A chain of
 * one work request goes nowhere. With af_smbdirect/test_rw_post_whole
 * non-zero the whole chain goes and *bad is NULL (a device that reports
 * an error for a chain it took: the completion of the last must find the
 * chunk alive). test_rw_posted_part counts the work requests the failed
 * posts sent.
 */
extern atomic_t af_smbdirect_test_rw_post_fail;
extern atomic_t af_smbdirect_test_rw_post_whole;
extern atomic_t af_smbdirect_test_rw_posted_part;

static inline int sd_test_rw_post(struct ib_qp *qp, struct ib_send_wr *first,
				  const struct ib_send_wr **bad)
{
	struct ib_send_wr *prev = NULL, *last = first;
	int n = 1, err;

	if (atomic_dec_if_positive(&af_smbdirect_test_rw_post_fail) != 0)
		return ib_post_send(qp, first, bad);
	while (last->next) {
		prev = last;
		last = last->next;
		n++;
	}
	if (atomic_read(&af_smbdirect_test_rw_post_whole)) {
		err = ib_post_send(qp, first, bad);
		if (err)
			return err;
	} else if (prev) {
		prev->next = NULL;
		err = ib_post_send(qp, first, bad);
		prev->next = last;
		if (err)
			return err;
		n--;
	} else {
		n = 0;
	}
	atomic_add(n, &af_smbdirect_test_rw_posted_part);
	if (atomic_read(&af_smbdirect_test_rw_post_whole))
		*bad = NULL;
	else
		*bad = n ? last : first;
	return -ENOMEM;
}

/*
 * af_smbdirect/test_sockets_walked: sockets a dump, a STATS_GET or a
 * STATS_RESET visited under a lock every socket of a namespace (or of
 * every namespace) depends on. A test zeroes it, asks, and reads what the
 * request cost.
 */
extern atomic_t af_smbdirect_test_sockets_walked;

static inline void sd_test_socket_walked(void)
{
	atomic_inc(&af_smbdirect_test_sockets_walked);
}
#else
static inline void af_smbdirect_test_hooks_init(void) {}
static inline void sd_test_socket_walked(void) {}
static inline void af_smbdirect_test_hooks_exit(void) {}
static inline void sd_test_rx_delay(void) {}
static inline void sd_test_disconnect_delay(void) {}
static inline void sd_test_request_delay(void) {}
static inline void sd_test_route_delay(void) {}
static inline void sd_test_dereg_delay(void) {}
static inline void sd_test_release_delay(void) {}
static inline void sd_test_live_key_unmap(bool key_live) {}
static inline int sd_test_repost_fail(void)
{
	return 0;
}

static inline int sd_test_rw_post(struct ib_qp *qp, struct ib_send_wr *first,
				  const struct ib_send_wr **bad)
{
	return ib_post_send(qp, first, bad);
}

static inline unsigned int sd_test_negotiate_timeout(unsigned int ms)
{
	return ms;
}
#endif

#endif
