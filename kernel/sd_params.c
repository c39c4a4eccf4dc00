// SPDX-License-Identifier: GPL-2.0
/*
 * Defaults (module parameters, those of ksmbd and cifs.ko) and the
 * validation of SOL_SMBDIRECT options and addresses.
 */
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ipv6.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/tcp.h>
#include <net/ipv6.h>

#include "uapi/linux/smbdirect.h"
#include "smbdirect_core.h"
#include "sd_params.h"

static unsigned int receive_credit_max = 255;
module_param(receive_credit_max, uint, 0444);
MODULE_PARM_DESC(receive_credit_max, "default receive buffers posted per connection");
static unsigned int send_credit_target = 255;
module_param(send_credit_target, uint, 0444);
MODULE_PARM_DESC(send_credit_target, "default credits requested of the peer");
static unsigned int max_send_size = 1364;
module_param(max_send_size, uint, 0444);
MODULE_PARM_DESC(max_send_size, "default bytes per PDU sent");
static unsigned int max_receive_size = 1364;
module_param(max_receive_size, uint, 0444);
MODULE_PARM_DESC(max_receive_size, "default bytes per receive buffer");
static unsigned int max_fragmented_size = 1024 * 1024;
module_param(max_fragmented_size, uint, 0444);
MODULE_PARM_DESC(max_fragmented_size, "default largest message received");
static unsigned int max_read_write_size = 8 * 1024 * 1024;
module_param(max_read_write_size, uint, 0444);
MODULE_PARM_DESC(max_read_write_size, "default bytes per RDMA read/write");
static unsigned int keepalive_interval = 120;
module_param(keepalive_interval, uint, 0444);
MODULE_PARM_DESC(keepalive_interval, "default idle seconds before a keepalive probe (0 off)");
static unsigned int max_registrations = 256;
module_param(max_registrations, uint, 0444);
MODULE_PARM_DESC(max_registrations, "live RDMA registrations per socket (1..65536)");
static unsigned long unpriv_mem_max = 16 * 1024 * 1024;
module_param(unpriv_mem_max, ulong, 0644);
MODULE_PARM_DESC(unpriv_mem_max,
		 "bytes of connection buffers (receive_credit_max * max_receive_size + min(send_credit_target, 255) * max_send_size) SOL_SMBDIRECT options may ask for without CAP_NET_ADMIN; EPERM beyond (0: no cap)");

/*
 * The RC ACK timeout of InfiniBand and RoCE connections (IBTA encoding:
 * 4.096 us << value). With SD_CM_RETRY (6) retries it is how long a peer
 * or the wire may stall before the connection fails with a retry error.
 * 0 keeps rdma_cm's (RoCE: packet lifetime 16 + 1, 537 ms; about 3.2 s
 * in all), as cifs.ko and ksmbd do; iWARP's timeouts are TCP's.
 */
static unsigned int ack_timeout;

static int sd_param_set_ack_timeout(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int err = kstrtouint(val, 0, &v);

	if (err)
		return err;
	if (v > 31)
		return -EINVAL;
	WRITE_ONCE(ack_timeout, v);
	return 0;
}

static const struct kernel_param_ops sd_ack_timeout_ops = {
	.set = sd_param_set_ack_timeout,
	.get = param_get_uint,
};

module_param_cb(ack_timeout, &sd_ack_timeout_ops, &ack_timeout, 0644);
MODULE_PARM_DESC(ack_timeout,
		 "RC ACK timeout of InfiniBand and RoCE connections made from now on, 4.096 us << value (1..31; 0: rdma_cm's, 537 ms on RoCE), 6 retries");

u8 sd_ack_timeout(void)
{
	return READ_ONCE(ack_timeout);
}

/*
 * Half-open children: a connect request answered (socket, QP and buffers
 * allocated), the SMB-Direct negotiation not yet done. Bounded below the
 * backlog, as TCP's SYN queue is, since nothing has authenticated the
 * peer yet; per listener, so that one flooded port leaves room for the
 * others, and per network namespace.
 */
static unsigned int listen_half_open_max = 128;
module_param(listen_half_open_max, uint, 0644);
MODULE_PARM_DESC(listen_half_open_max,
		 "connect requests one listener has answered and not yet negotiated; more are rejected (0: the backlog only)");
static unsigned int netns_half_open_max = 256;
module_param(netns_half_open_max, uint, 0644);
MODULE_PARM_DESC(netns_half_open_max,
		 "connect requests the listeners of one network namespace have answered and not yet negotiated; more are rejected (0: no bound)");

void sd_listen_limits(struct sd_listen_load *l)
{
	l->half_open_max = READ_ONCE(listen_half_open_max);
	l->ns_half_open_max = READ_ONCE(netns_half_open_max);
}

enum sd_listen_verdict sd_listen_verdict(const struct sd_listen_load *l)
{
	if (l->children >= max(l->backlog, 1U))
		return SD_LISTEN_OVERFLOW;
	if (l->half_open_max && l->half_open >= l->half_open_max)
		return SD_LISTEN_HALF_OPEN_FULL;
	if (l->ns_half_open_max && l->ns_half_open >= l->ns_half_open_max)
		return SD_LISTEN_HALF_OPEN_FULL;
	return SD_LISTEN_TAKE;
}

unsigned int sd_max_registrations(void)
{
	return max_registrations;
}

int sd_opt_check(int optname, int val)
{
	u32 lo, hi;

	switch (optname) {
	case SMBDIRECT_OPT_RECEIVE_CREDIT_MAX:
	case SMBDIRECT_OPT_SEND_CREDIT_TARGET:
		/* One credit each way can only circulate (see the core). */
		lo = 2;
		hi = SD_OPT_CREDITS_MAX;
		break;
	case SMBDIRECT_OPT_MAX_SEND_SIZE:
	case SMBDIRECT_OPT_MAX_RECEIVE_SIZE:
		lo = SD_CORE_MIN_RECEIVE_SIZE;
		hi = SD_OPT_PDU_SIZE_MAX;
		break;
	case SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE:
		lo = SD_CORE_MIN_FRAGMENTED_SIZE;
		hi = SD_OPT_FRAGMENTED_MAX;
		break;
	case SMBDIRECT_OPT_MAX_READ_WRITE_SIZE:
		lo = SD_OPT_READ_WRITE_MIN;
		hi = SD_OPT_READ_WRITE_MAX;
		break;
	case SMBDIRECT_OPT_KEEPALIVE_INTERVAL:
		lo = 0;
		hi = SD_OPT_KEEPALIVE_MAX;
		break;
	default:
		return -ENOPROTOOPT;
	}
	if (val < 0 || (u32)val < lo || (u32)val > hi)
		return -EINVAL;
	return 0;
}

static u32 *sd_opt_field(struct sd_opts *o, int optname)
{
	switch (optname) {
	case SMBDIRECT_OPT_RECEIVE_CREDIT_MAX:
		return &o->receive_credit_max;
	case SMBDIRECT_OPT_SEND_CREDIT_TARGET:
		return &o->send_credit_target;
	case SMBDIRECT_OPT_MAX_SEND_SIZE:
		return &o->max_send_size;
	case SMBDIRECT_OPT_MAX_RECEIVE_SIZE:
		return &o->max_receive_size;
	case SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE:
		return &o->max_fragmented_size;
	case SMBDIRECT_OPT_MAX_READ_WRITE_SIZE:
		return &o->max_read_write_size;
	case SMBDIRECT_OPT_KEEPALIVE_INTERVAL:
		return &o->keepalive_interval;
	}
	return NULL;
}

int sd_opt_set(struct sd_opts *o, int optname, int val)
{
	int err = sd_opt_check(optname, val);

	if (err)
		return err;
	*sd_opt_field(o, optname) = val;
	return 0;
}

u64 sd_opts_mem(const struct sd_opts *o)
{
	return (u64)o->receive_credit_max * o->max_receive_size +
	       (u64)min_t(u32, o->send_credit_target, 255) * o->max_send_size;
}

u64 sd_unpriv_mem_max(void)
{
	return READ_ONCE(unpriv_mem_max);
}

int sd_opt_set_capped(struct sd_opts *o, int optname, int val, u64 cap)
{
	struct sd_opts n = *o;
	int err = sd_opt_set(&n, optname, val);

	if (err)
		return err;
	if (cap && sd_opts_mem(&n) > cap && sd_opts_mem(&n) > sd_opts_mem(o))
		return -EPERM;
	*o = n;
	return 0;
}

int sd_opt_get(const struct sd_opts *o, int optname, int *val)
{
	u32 *f = sd_opt_field((struct sd_opts *)o, optname);

	if (!f)
		return -ENOPROTOOPT;
	*val = *f;
	return 0;
}

int sd_opts_check(const struct sd_opts *o)
{
	int opt, val, err;

	for (opt = SMBDIRECT_OPT_RECEIVE_CREDIT_MAX;
	     opt <= SMBDIRECT_OPT_KEEPALIVE_INTERVAL; opt++) {
		/* A u32 above INT_MAX must not turn into a valid negative. */
		if (*sd_opt_field((struct sd_opts *)o, opt) > INT_MAX)
			return -EINVAL;
		sd_opt_get(o, opt, &val);
		err = sd_opt_check(opt, val);
		if (err)
			return err;
	}
	return 0;
}

void sd_opts_default(struct sd_opts *o)
{
	o->receive_credit_max = receive_credit_max;
	o->send_credit_target = send_credit_target;
	o->max_send_size = max_send_size;
	o->max_receive_size = max_receive_size;
	o->max_fragmented_size = max_fragmented_size;
	o->max_read_write_size = max_read_write_size;
	o->keepalive_interval = keepalive_interval;
}

/* TCP's defaults and bounds (net/tcp.h: MAX_TCP_KEEPIDLE and friends). */
#define SD_TCP_KEEP_SECS_MAX 32767
#define SD_TCP_KEEPCNT_MAX 127

void sd_tcp_opts_default(struct sd_tcp_opts *t)
{
	*t = (struct sd_tcp_opts){ .quickack = 1, .keepcnt = 9,
				   .keepidle = 7200, .keepintvl = 75 };
}

int sd_tcp_opt_set(struct sd_tcp_opts *t, int optname, int val)
{
	switch (optname) {
	case TCP_NODELAY:
	case TCP_CORK:
		return 0;	/* read back as SMB-Direct behaves, see below */
	case TCP_QUICKACK:
		t->quickack = !!val;
		return 0;
	case TCP_KEEPIDLE:
	case TCP_KEEPINTVL:
		if (val < 1 || val > SD_TCP_KEEP_SECS_MAX)
			return -EINVAL;
		if (optname == TCP_KEEPIDLE)
			t->keepidle = val;
		else
			t->keepintvl = val;
		return 0;
	case TCP_KEEPCNT:
		if (val < 1 || val > SD_TCP_KEEPCNT_MAX)
			return -EINVAL;
		t->keepcnt = val;
		return 0;
	}
	return -ENOPROTOOPT;
}

int sd_tcp_opt_get(const struct sd_tcp_opts *t, int optname, int *val)
{
	switch (optname) {
	case TCP_NODELAY:
		*val = 1;	/* every message goes at once */
		return 0;
	case TCP_CORK:
		*val = 0;	/* nothing is held back */
		return 0;
	case TCP_QUICKACK:
		*val = t->quickack;
		return 0;
	case TCP_KEEPIDLE:
		*val = t->keepidle;
		return 0;
	case TCP_KEEPINTVL:
		*val = t->keepintvl;
		return 0;
	case TCP_KEEPCNT:
		*val = t->keepcnt;
		return 0;
	}
	return -ENOPROTOOPT;
}

void sd_rtt_sample(struct sd_rtt *r, u32 sample_us)
{
	u32 delta;

	sample_us = max(sample_us, 1U);
	if (!r->srtt_us) {
		r->srtt_us = sample_us;
		r->rttvar_us = sample_us / 2;
		return;
	}
	delta = r->srtt_us > sample_us ? r->srtt_us - sample_us : sample_us - r->srtt_us;
	/* rttvar = 3/4 rttvar + 1/4 |srtt - r|; srtt = 7/8 srtt + 1/8 r */
	r->rttvar_us = r->rttvar_us - r->rttvar_us / 4 + delta / 4;
	r->srtt_us = r->srtt_us - r->srtt_us / 8 + sample_us / 8;
	r->srtt_us = max(r->srtt_us, 1U);
}

u32 sd_rtt_rto(const struct sd_rtt *r)
{
	u64 rto;

	if (!r->srtt_us)
		return SD_RTO_INITIAL_US;
	rto = (u64)r->srtt_us + 4 * (u64)r->rttvar_us;
	return clamp_t(u64, rto, SD_RTO_MIN_US, SD_RTO_MAX_US);
}

int sd_params_init(void)
{
	struct sd_opts o;
	int err;

	sd_opts_default(&o);
	err = sd_opts_check(&o);
	if (err)
		pr_err("af_smbdirect: a default-parameter module option is out of range\n");
	if (!err && (!max_registrations || max_registrations > SD_REG_LIVE_MAX)) {
		pr_err("af_smbdirect: max_registrations must be 1..%u\n", SD_REG_LIVE_MAX);
		err = -EINVAL;
	}
	return err;
}

void sd_rd_depths(u8 *initiator_depth, u8 *responder_resources,
		  u32 peer_serves, u32 peer_issues, bool zero_is_stated)
{
	if (peer_serves || zero_is_stated)
		*initiator_depth = min_t(u32, *initiator_depth, peer_serves);
	if (peer_issues || zero_is_stated)
		*responder_resources = min_t(u32, *responder_resources, peer_issues);
}

u32 sd_legacy_depth(__be32 wire)
{
	u32 be = be32_to_cpu(wire), le = le32_to_cpu((__force __le32)wire);

	if (be > U8_MAX && le <= U8_MAX)
		return le;
	return min_t(u32, be, U8_MAX);
}

int sd_ioctl_copy_size(u32 user_size, size_t v1_size, size_t our_size)
{
	if (user_size < v1_size)
		return -EINVAL;
	if (user_size > PAGE_SIZE)
		return -E2BIG;
	return min_t(size_t, user_size, our_size);
}

int sd_addr_len(const struct sockaddr *addr)
{
	switch (addr->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	}
	return 0;
}

u16 sd_addr_port(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)addr)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
}

int sd_addr_check(const struct sockaddr *addr, int len, bool for_connect)
{
	const struct sockaddr_in6 *sin6;
	const struct sockaddr_in *sin;

	if (!addr || len < (int)sizeof(addr->sa_family))
		return -EINVAL;
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (len < sd_addr_len(addr))
		return -EINVAL;
	if (!for_connect)
		return 0;
	if (!sd_addr_port(addr))
		return -EINVAL;
	if (addr->sa_family == AF_INET) {
		sin = (const struct sockaddr_in *)addr;
		if (sin->sin_addr.s_addr == htonl(INADDR_ANY) ||
		    ipv4_is_multicast(sin->sin_addr.s_addr) ||
		    sin->sin_addr.s_addr == htonl(INADDR_BROADCAST))
			return -EINVAL;
	} else {
		sin6 = (const struct sockaddr_in6 *)addr;
		if (ipv6_addr_any(&sin6->sin6_addr) ||
		    ipv6_addr_is_multicast(&sin6->sin6_addr))
			return -EINVAL;
	}
	return 0;
}
