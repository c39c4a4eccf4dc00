/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Local negotiation parameters: module-parameter defaults, the
 * SOL_SMBDIRECT options that override them per socket, and the pure
 * helpers that validate them (tested by tests/kunit/glue_kunit.c).
 */
#ifndef AF_SMBDIRECT_PARAMS_H
#define AF_SMBDIRECT_PARAMS_H

#include <linux/socket.h>
#include <linux/types.h>

struct sd_opts {
	u32 receive_credit_max;
	u32 send_credit_target;
	u32 max_send_size;
	u32 max_receive_size;
	u32 max_fragmented_size;
	u32 max_read_write_size;
	u32 keepalive_interval;	/* seconds; 0 off */
};

/* Bounds beyond the protocol's: what one socket may cost in memory. */
#define SD_OPT_CREDITS_MAX 1024
#define SD_OPT_PDU_SIZE_MAX 65536
#define SD_OPT_FRAGMENTED_MAX (16 * 1024 * 1024)
#define SD_OPT_READ_WRITE_MIN 4096
#define SD_OPT_READ_WRITE_MAX (128 * 1024 * 1024)
#define SD_OPT_KEEPALIVE_MAX (24 * 3600)

/*
 * What a listener holds when a connect request comes: children (those
 * negotiating and those waiting for accept()) against its backlog, and
 * half-open children (negotiating) against the listen_half_open_max and
 * netns_half_open_max module parameters (0: no bound of their own).
 */
struct sd_listen_load {
	u32 children;
	u32 backlog;		/* listen()'s; below 1 counts as 1 */
	u32 half_open;
	u32 half_open_max;
	u32 ns_half_open;	/* of every listener in the namespace */
	u32 ns_half_open_max;
};

enum sd_listen_verdict {
	SD_LISTEN_TAKE,
	SD_LISTEN_OVERFLOW,		/* the backlog is full */
	SD_LISTEN_HALF_OPEN_FULL,	/* a half-open bound is reached */
};

/* Fills in the two half-open bounds from the module parameters. */
void sd_listen_limits(struct sd_listen_load *l);
/* Whether one more connect request is taken; the backlog is checked first. */
enum sd_listen_verdict sd_listen_verdict(const struct sd_listen_load *l);

#define SD_REG_LIVE_MAX 65536	/* bound of the max_registrations parameter */
unsigned int sd_max_registrations(void);

/*
 * Bytes of buffers an option set makes one connection allocate when it
 * is made: receive_credit_max receive buffers of max_receive_size and a
 * send buffer of max_send_size per credit asked of the peer (at most 255,
 * as sd_qp.c posts). Messages (max_fragmented_size at most, allocated as
 * they arrive) are bounded by SO_RCVBUF and SO_SNDBUF instead.
 */
u64 sd_opts_mem(const struct sd_opts *o);
/*
 * The cap (the unpriv_mem_max module parameter) on sd_opts_mem() of a
 * socket whose owner lacks CAP_NET_ADMIN; 0: none.
 */
u64 sd_unpriv_mem_max(void);
/* The ack_timeout parameter: 0 (rdma_cm's) or an IBTA value 1..31. */
u8 sd_ack_timeout(void);
/*
 * sd_opt_set() under a cap (0: none): -EPERM when the new set would cost
 * more than cap and more than the set before (lowering an option is always
 * allowed, whatever the module defaults cost); otherwise as sd_opt_set().
 */
int sd_opt_set_capped(struct sd_opts *o, int optname, int val, u64 cap);

/* 0 if val is valid for SMBDIRECT_OPT_* optname, -EINVAL or -ENOPROTOOPT. */
int sd_opt_check(int optname, int val);
/* Sets after sd_opt_check(); same errors. */
int sd_opt_set(struct sd_opts *o, int optname, int val);
int sd_opt_get(const struct sd_opts *o, int optname, int *val);
/* Every field valid (module parameters are checked with this at load). */
int sd_opts_check(const struct sd_opts *o);
void sd_opts_default(struct sd_opts *o);

/*
 * IPPROTO_TCP options a program ported from TCP sets (Samba's "socket
 * options = TCP_NODELAY ..."): accepted, without effect. TCP_NODELAY and
 * TCP_CORK read as SMB-Direct behaves (1 and 0: every message goes at
 * once, as the preload reports them too); TCP_QUICKACK and the keepalive
 * knobs read back what was set (TCP's ranges): SMB-Direct's keepalive is
 * SMBDIRECT_OPT_KEEPALIVE_INTERVAL. Other TCP options are ENOPROTOOPT.
 */
struct sd_tcp_opts {
	u8 quickack, keepcnt;
	u16 keepidle, keepintvl;	/* seconds */
};

/*
 * The round-trip time TCP_INFO reports (tcpi_rtt, tcpi_rttvar, tcpi_rto),
 * measured from a send's post to its completion, which the peer's RDMA
 * adapter acknowledged: RFC 6298's estimator over those samples, in
 * microseconds. The RTO is what TCP would arm (srtt + 4 * rttvar, at
 * least TCP's 200 ms and at most its 120 s), an estimate for programs
 * that size their own timers by it (Samba's oplock break), not a timer
 * of ours: the RC QP retransmits by its own timeout.
 */
struct sd_rtt {
	u32 srtt_us;	/* 0: no sample yet */
	u32 rttvar_us;
};

#define SD_RTO_MIN_US 200000U
#define SD_RTO_MAX_US 120000000U
/* No sample yet: RFC 6298's initial RTO, 1 s. */
#define SD_RTO_INITIAL_US 1000000U

void sd_rtt_sample(struct sd_rtt *r, u32 sample_us);
u32 sd_rtt_rto(const struct sd_rtt *r);

void sd_tcp_opts_default(struct sd_tcp_opts *t);
int sd_tcp_opt_set(struct sd_tcp_opts *t, int optname, int val);
int sd_tcp_opt_get(const struct sd_tcp_opts *t, int optname, int *val);
int sd_params_init(void);

/*
 * RDMA READ depths after the connection manager's exchange. peer_serves is
 * how many of our READs the peer serves at once (its responder resources:
 * bounds our initiator depth), peer_issues how many READs it may have
 * outstanding against us (its initiator depth: bounds our responder
 * resources). With zero_is_stated false a 0 means the peer stated nothing
 * (iWARP MPA v1 carries no IRD/ORD) and our value stays; with it true the
 * peer really offered 0 (an IB CM REP programs the QP with it).
 */
void sd_rd_depths(u8 *initiator_depth, u8 *responder_resources,
		  u32 peer_serves, u32 peer_issues, bool zero_is_stated);

/*
 * One depth of the 8-byte IRD/ORD private data iWARP peers send beside MPA:
 * big-endian on the wire, but 6.12's cifs.ko writes it in host order (a
 * little-endian 32 reads as 0x20000000). A depth is at most 255, so a
 * big-endian value above that which is a small little-endian one is taken
 * as that. Clamped to 255.
 */
u32 sd_legacy_depth(__be32 wire);

/*
 * The size-first ioctl rule: a caller's struct shorter than v1 is EINVAL,
 * one above a page E2BIG (as openat2() and clone3() bound theirs); a
 * longer one than ours gets only what we know, and the struct's input
 * is read with copy_struct_from_user(), which refuses a tail that is not
 * zero (E2BIG). Returns the bytes to copy in or back: the smaller size.
 */
int sd_ioctl_copy_size(u32 user_size, size_t v1_size, size_t our_size);

/*
 * Checks a user sockaddr for bind (for_connect false) or connect: family
 * AF_INET/AF_INET6 with a length that holds it, a port and a non-wildcard
 * address for connect. Returns 0 or -EINVAL/-EAFNOSUPPORT.
 */
int sd_addr_check(const struct sockaddr *addr, int len, bool for_connect);
u16 sd_addr_port(const struct sockaddr *addr);
/* The bytes of a sockaddr of this family (0 for unknown families). */
int sd_addr_len(const struct sockaddr *addr);

#endif
