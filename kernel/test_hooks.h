/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AF_SMBDIRECT_TEST_HOOKS_H
#define AF_SMBDIRECT_TEST_HOOKS_H

/*
 * Hooks that exist only in test builds (make SMBDIRECT_KUNIT=1): debugfs
 * files under af_smbdirect/ that let the VM harness prove its detectors work
 * and let tests force rare orders of events.
 */
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

static inline unsigned int sd_test_negotiate_timeout(unsigned int ms)
{
	return ms;
}
#endif

#endif
