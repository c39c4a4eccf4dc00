// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the pure helpers of the C glue (kernel/sd_params.c) that check
 * what user space hands in: SOL_SMBDIRECT option values, whole option
 * sets, socket addresses and the size-first ioctl rule. Each case pins the
 * documented boundary on both sides (last refused, first accepted).
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/limits.h>
#include <linux/socket.h>
#include <linux/tcp.h>

#include "uapi/linux/smbdirect.h"
#include "sd_params.h"

/* One option: lo - 1 and hi + 1 refused, lo and hi accepted. */
static void expect_range(struct kunit *test, int opt, int lo, int hi)
{
	if (lo > 0)
		KUNIT_EXPECT_EQ_MSG(test, sd_opt_check(opt, lo - 1), -EINVAL,
				    "option %d value %d", opt, lo - 1);
	KUNIT_EXPECT_EQ_MSG(test, sd_opt_check(opt, lo), 0, "option %d value %d", opt, lo);
	KUNIT_EXPECT_EQ_MSG(test, sd_opt_check(opt, hi), 0, "option %d value %d", opt, hi);
	KUNIT_EXPECT_EQ_MSG(test, sd_opt_check(opt, hi + 1), -EINVAL,
			    "option %d value %d", opt, hi + 1);
	KUNIT_EXPECT_EQ_MSG(test, sd_opt_check(opt, -1), -EINVAL, "option %d value -1", opt);
	KUNIT_EXPECT_EQ_MSG(test, sd_opt_check(opt, INT_MIN), -EINVAL,
			    "option %d value INT_MIN", opt);
}

static void glue_opt_credits(struct kunit *test)
{
	/* One credit each way could only circulate: 2 is the least. */
	expect_range(test, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 2, 1024);
	expect_range(test, SMBDIRECT_OPT_SEND_CREDIT_TARGET, 2, 1024);
	KUNIT_EXPECT_EQ(test, sd_opt_check(SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 0), -EINVAL);
}

static void glue_opt_pdu_sizes(struct kunit *test)
{
	expect_range(test, SMBDIRECT_OPT_MAX_SEND_SIZE, 128, 65536);
	expect_range(test, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, 128, 65536);
	/* The defaults of ksmbd and cifs.ko are inside. */
	KUNIT_EXPECT_EQ(test, sd_opt_check(SMBDIRECT_OPT_MAX_SEND_SIZE, 1364), 0);
}

static void glue_opt_fragmented_size(struct kunit *test)
{
	/* [MS-SMBD]: MaxFragmentedSize is at least 131072. */
	KUNIT_EXPECT_EQ(test, sd_opt_check(SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, 131071), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_opt_check(SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, 131072), 0);
	expect_range(test, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, 131072, 16 << 20);
}

static void glue_opt_read_write_and_keepalive(struct kunit *test)
{
	expect_range(test, SMBDIRECT_OPT_MAX_READ_WRITE_SIZE, 4096, 128 << 20);
	/* 0 turns keepalive off; at most a day. */
	expect_range(test, SMBDIRECT_OPT_KEEPALIVE_INTERVAL, 0, 86400);
}

static void glue_opt_unknown(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sd_opt_check(0, 1), -ENOPROTOOPT);
	KUNIT_EXPECT_EQ(test, sd_opt_check(SMBDIRECT_OPT_KEEPALIVE_INTERVAL + 1, 1),
			-ENOPROTOOPT);
	KUNIT_EXPECT_EQ(test, sd_opt_check(-1, 1), -ENOPROTOOPT);
}

static void glue_opt_set_keeps_old_value(struct kunit *test)
{
	struct sd_opts o;
	int v = 0;

	sd_opts_default(&o);
	KUNIT_EXPECT_EQ(test, sd_opt_set(&o, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, 131072), 0);
	KUNIT_EXPECT_EQ(test, sd_opt_set(&o, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, 131071), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_opt_get(&o, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 131072);
	KUNIT_EXPECT_EQ(test, sd_opt_get(&o, 99, &v), -ENOPROTOOPT);
}

/*
 * The unpriv_mem_max cap: what one socket's options cost, the first byte
 * over refused with EPERM (the option unchanged), the boundary accepted,
 * lowering always allowed, and no cap (0: CAP_NET_ADMIN) refusing nothing.
 */
static void glue_opt_mem_cap(struct kunit *test)
{
	struct sd_opts o;
	u64 cost;
	int v = 0;

	sd_opts_default(&o);
	o.receive_credit_max = 255;
	o.send_credit_target = 1024;
	o.max_send_size = 1364;
	o.max_receive_size = 1364;
	o.max_fragmented_size = 16 << 20;
	/* Send buffers count min(send_credit_target, 255), as sd_qp.c posts. */
	cost = 255ULL * 1364 + 255ULL * 1364;
	KUNIT_EXPECT_EQ(test, sd_opts_mem(&o), cost);
	/* The largest the options allow: 1024 * 64 KiB + 255 * 64 KiB. */
	o.receive_credit_max = 1024;
	o.max_receive_size = 65536;
	o.max_send_size = 65536;
	KUNIT_EXPECT_EQ(test, sd_opts_mem(&o), 1024ULL * 65536 + 255ULL * 65536);

	sd_opts_default(&o);
	o.receive_credit_max = 255;
	o.send_credit_target = 255;
	o.max_send_size = 1364;
	o.max_receive_size = 1364;
	cost = sd_opts_mem(&o) + 1364;	/* room for one more receive buffer */
	KUNIT_EXPECT_EQ(test, sd_opt_set_capped(&o, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 257,
						cost), -EPERM);
	KUNIT_EXPECT_EQ(test, sd_opt_get(&o, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 255);
	KUNIT_EXPECT_EQ(test, sd_opt_set_capped(&o, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 256,
						cost), 0);
	KUNIT_EXPECT_EQ(test, sd_opts_mem(&o), cost);
	/* Range errors come first, cap or not. */
	KUNIT_EXPECT_EQ(test, sd_opt_set_capped(&o, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, 65537,
						cost), -EINVAL);
	/* The largest message costs nothing until it arrives. */
	KUNIT_EXPECT_EQ(test, sd_opt_set_capped(&o, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE,
						16 << 20, cost), 0);
	/* 256 * 64 KiB of receive buffers: over a 16 MiB cap with the rest. */
	KUNIT_EXPECT_EQ(test, sd_opt_set_capped(&o, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, 65536,
						16 << 20), -EPERM);
	KUNIT_EXPECT_EQ(test, sd_opt_set_capped(&o, SMBDIRECT_OPT_MAX_RECEIVE_SIZE, 65536, 0), 0);
	/* Above the cap already (privileged, or module defaults): lowering is fine. */
	KUNIT_EXPECT_EQ(test, sd_opt_set_capped(&o, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 128,
						1 << 20), 0);
	KUNIT_EXPECT_EQ(test, sd_opt_set_capped(&o, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 129,
						1 << 20), -EPERM);
	/* Options that cost nothing pass any cap. */
	KUNIT_EXPECT_EQ(test, sd_opt_set_capped(&o, SMBDIRECT_OPT_KEEPALIVE_INTERVAL, 5,
						1 << 20), 0);
}

static void glue_opts_check(struct kunit *test)
{
	struct sd_opts o;

	/* The module-parameter defaults (ksmbd's and cifs.ko's) are valid. */
	sd_opts_default(&o);
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), 0);

	o.max_fragmented_size = 131071;
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), -EINVAL);
	o.max_fragmented_size = 131072;
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), 0);

	o.receive_credit_max = 1;
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), -EINVAL);
	o.receive_credit_max = 2;
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), 0);

	o.keepalive_interval = 86401;
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), -EINVAL);
	o.keepalive_interval = 0;
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), 0);

	/* A u32 that would read as a negative int must not pass as one. */
	o.max_read_write_size = 0x80000000u;
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), -EINVAL);
	o.max_read_write_size = U32_MAX;
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), -EINVAL);
	o.max_read_write_size = 4096;
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), 0);

	o.max_send_size = 127;
	KUNIT_EXPECT_EQ(test, sd_opts_check(&o), -EINVAL);
}

static void glue_ioctl_copy_size(struct kunit *test)
{
	const size_t v1 = 56, ours = 56;

	/* Shorter than v1 (0, the size field alone, one byte short): EINVAL. */
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(0, v1, ours), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(4, v1, ours), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(v1 - 1, v1, ours), -EINVAL);
	/* Exactly ours, and a newer caller's longer struct gets only ours. */
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(v1, v1, ours), (int)ours);
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(v1 + 8, v1, ours), (int)ours);
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(PAGE_SIZE, v1, ours), (int)ours);
	/* Above a page: E2BIG, as openat2() and clone3(). */
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(PAGE_SIZE + 1, v1, ours), -E2BIG);
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(U32_MAX, v1, ours), -E2BIG);
	/* An older v1 caller against a grown struct gets v1's bytes. */
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(v1, v1, ours + 16), (int)v1);
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(v1 + 4, v1, ours + 16), (int)v1 + 4);
	/* The real struct: its v1 is all of it today. */
	KUNIT_EXPECT_EQ(test, sd_ioctl_copy_size(sizeof(struct smbdirect_params),
						 sizeof(struct smbdirect_params),
						 sizeof(struct smbdirect_params)),
			(int)sizeof(struct smbdirect_params));
}

static void glue_addr_family_and_length(struct kunit *test)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(445) };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(445) };
	struct sockaddr unix_addr = { .sa_family = AF_UNIX };
	struct sockaddr *a4 = (struct sockaddr *)&sin, *a6 = (struct sockaddr *)&sin6;

	KUNIT_EXPECT_EQ(test, sd_addr_check(NULL, sizeof(sin), false), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_addr_check(a4, 0, false), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_addr_check(a4, 1, false), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_addr_check(&unix_addr, sizeof(unix_addr), false),
			-EAFNOSUPPORT);
	/* Long enough for the family field, too short for the address. */
	KUNIT_EXPECT_EQ(test, sd_addr_check(a4, sizeof(sin) - 1, false), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_addr_check(a4, sizeof(sin), false), 0);
	KUNIT_EXPECT_EQ(test, sd_addr_check(a6, sizeof(sin6) - 1, false), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_addr_check(a6, sizeof(sin6), false), 0);
	/* A sockaddr_in6 is not long enough just because a sockaddr_in would be. */
	KUNIT_EXPECT_EQ(test, sd_addr_check(a6, sizeof(sin), false), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_addr_len(a4), (int)sizeof(sin));
	KUNIT_EXPECT_EQ(test, sd_addr_len(a6), (int)sizeof(sin6));
	KUNIT_EXPECT_EQ(test, sd_addr_len(&unix_addr), 0);
	KUNIT_EXPECT_EQ(test, sd_addr_port(a4), 445);
	KUNIT_EXPECT_EQ(test, sd_addr_port(a6), 445);
}

static void glue_addr_bind_allows_wildcard(struct kunit *test)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in sin = { .sin_family = AF_INET };

	/* bind: any address, port 0 (ephemeral). */
	KUNIT_EXPECT_EQ(test, sd_addr_check((struct sockaddr *)&sin, sizeof(sin), false), 0);
	KUNIT_EXPECT_EQ(test, sd_addr_check((struct sockaddr *)&sin6, sizeof(sin6), false), 0);
}

static void glue_addr_connect_v4(struct kunit *test)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(445) };
	struct sockaddr *a = (struct sockaddr *)&sin;

	sin.sin_addr.s_addr = htonl(0x0a4d0001);	/* 10.77.0.1 */
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin), true), 0);
	sin.sin_port = 0;
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin), true), -EINVAL);
	sin.sin_port = htons(1);
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin), true), 0);
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin), true), -EINVAL);
	sin.sin_addr.s_addr = htonl(INADDR_BROADCAST);
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin), true), -EINVAL);
	sin.sin_addr.s_addr = htonl(0xe0000001);	/* 224.0.0.1 */
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin), true), -EINVAL);
	sin.sin_addr.s_addr = htonl(0xdfffffff);	/* 223.255.255.255: unicast */
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin), true), 0);
}

static void glue_addr_connect_v6(struct kunit *test)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(5445) };
	struct sockaddr *a = (struct sockaddr *)&sin6;

	/* :: is the wildcard. */
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin6), true), -EINVAL);
	sin6.sin6_addr.s6_addr[0] = 0xfd;		/* fd77::2 */
	sin6.sin6_addr.s6_addr[1] = 0x77;
	sin6.sin6_addr.s6_addr[15] = 2;
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin6), true), 0);
	sin6.sin6_port = 0;
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin6), true), -EINVAL);
	sin6.sin6_port = htons(5445);
	sin6.sin6_addr.s6_addr[0] = 0xff;		/* ff77::2, multicast */
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin6), true), -EINVAL);
	sin6.sin6_addr.s6_addr[0] = 0xfe;		/* fe77::2, unicast */
	KUNIT_EXPECT_EQ(test, sd_addr_check(a, sizeof(sin6), true), 0);
}

/* cifs.ko asks 32 responder resources, initiator depth 1; ksmbd answers 1/8. */
static void glue_rd_depths_cifs_request(struct kunit *test)
{
	u8 ird = 8, rr = 8;

	/* It serves 32 of our READs and issues 1 against us. */
	sd_rd_depths(&ird, &rr, 32, 1, false);
	KUNIT_EXPECT_EQ(test, ird, 8);
	KUNIT_EXPECT_EQ(test, rr, 1);
}

/* 6.12's cifs.ko asks initiator depth 0: we then serve no READ at all. */
static void glue_rd_depths_cifs612_request(struct kunit *test)
{
	u8 ird = 8, rr = 8;

	sd_rd_depths(&ird, &rr, 32, 0, true);
	KUNIT_EXPECT_EQ(test, ird, 8);
	KUNIT_EXPECT_EQ(test, rr, 0);
}

static void glue_legacy_depth(struct kunit *test)
{
	/* 7.2 sends big-endian, 6.12's cifs.ko host order. */
	KUNIT_EXPECT_EQ(test, sd_legacy_depth(cpu_to_be32(32)), 32u);
	KUNIT_EXPECT_EQ(test, sd_legacy_depth(cpu_to_be32(1)), 1u);
	KUNIT_EXPECT_EQ(test, sd_legacy_depth((__force __be32)cpu_to_le32(32)), 32u);
	KUNIT_EXPECT_EQ(test, sd_legacy_depth((__force __be32)cpu_to_le32(1)), 1u);
	KUNIT_EXPECT_EQ(test, sd_legacy_depth(cpu_to_be32(0)), 0u);
	KUNIT_EXPECT_EQ(test, sd_legacy_depth(cpu_to_be32(300)), 255u);
	KUNIT_EXPECT_EQ(test, sd_legacy_depth(cpu_to_be32(0x10000)), 255u);
}

static void glue_tcp_opts(struct kunit *test)
{
	struct sd_tcp_opts t;
	int v = -1;

	sd_tcp_opts_default(&t);
	/* SMB-Direct sends every message at once: NODELAY 1, CORK 0, always. */
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_get(&t, TCP_NODELAY, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 1);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_NODELAY, 0), 0);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_get(&t, TCP_NODELAY, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 1);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_CORK, 1), 0);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_get(&t, TCP_CORK, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 0);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_get(&t, TCP_KEEPIDLE, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 7200);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_QUICKACK, 0), 0);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_get(&t, TCP_QUICKACK, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 0);
	/* TCP's bounds: 1 .. 32767 seconds, 1 .. 127 probes. */
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_KEEPIDLE, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_KEEPIDLE, 32768), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_KEEPIDLE, 32767), 0);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_KEEPINTVL, -1), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_KEEPINTVL, 10), 0);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_KEEPCNT, 128), -EINVAL);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_KEEPCNT, 3), 0);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_get(&t, TCP_KEEPIDLE, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 32767);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_get(&t, TCP_KEEPINTVL, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 10);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_get(&t, TCP_KEEPCNT, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 3);
	/* Options without a meaning on SMB-Direct stay unknown. */
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_set(&t, TCP_MAXSEG, 1400), -ENOPROTOOPT);
	KUNIT_EXPECT_EQ(test, sd_tcp_opt_get(&t, TCP_INFO, &v), -ENOPROTOOPT);
}

static void glue_rd_depths_zero(struct kunit *test)
{
	u8 ird = 8, rr = 8;

	/* iWARP MPA v1: nothing stated, ours stay. */
	sd_rd_depths(&ird, &rr, 0, 0, false);
	KUNIT_EXPECT_EQ(test, ird, 8);
	KUNIT_EXPECT_EQ(test, rr, 8);
	/* An IB CM REP with 0 responder resources: the QP serves none. */
	sd_rd_depths(&ird, &rr, 0, 4, true);
	KUNIT_EXPECT_EQ(test, ird, 0);
	KUNIT_EXPECT_EQ(test, rr, 4);
	/* Never above ours. */
	ird = 2;
	rr = 3;
	sd_rd_depths(&ird, &rr, 255, 255, true);
	KUNIT_EXPECT_EQ(test, ird, 2);
	KUNIT_EXPECT_EQ(test, rr, 3);
}

/*
 * TCP_INFO's RTT estimator (RFC 6298 over send completion times): the
 * first sample sets srtt and rttvar = srtt / 2; later ones move srtt by
 * 1/8 and rttvar by 1/4 of the difference; the RTO is srtt + 4 * rttvar
 * within TCP's 200 ms .. 120 s, and 1 s before any sample.
 */
static void glue_rtt_estimator(struct kunit *test)
{
	struct sd_rtt r = {};
	int i;

	KUNIT_EXPECT_EQ(test, sd_rtt_rto(&r), 1000000U);
	sd_rtt_sample(&r, 0);	/* a completion within the same microsecond */
	KUNIT_EXPECT_EQ(test, r.srtt_us, 1U);
	r = (struct sd_rtt){};
	sd_rtt_sample(&r, 80000);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 80000U);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 40000U);
	KUNIT_EXPECT_EQ(test, sd_rtt_rto(&r), 240000U);
	sd_rtt_sample(&r, 160000);
	/* rttvar 3/4 * 40000 + 80000 / 4; srtt 7/8 * 80000 + 160000 / 8 */
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 50000U);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 90000U);
	KUNIT_EXPECT_EQ(test, sd_rtt_rto(&r), 290000U);
	/* A fast fabric: the RTO stays at TCP's floor. */
	for (i = 0; i < 200; i++)
		sd_rtt_sample(&r, 20);
	KUNIT_EXPECT_LE(test, r.srtt_us, 40U);
	KUNIT_EXPECT_EQ(test, sd_rtt_rto(&r), 200000U);
	/* A stalled one: at most TCP's 120 s, no overflow. */
	r = (struct sd_rtt){};
	sd_rtt_sample(&r, U32_MAX);
	KUNIT_EXPECT_EQ(test, sd_rtt_rto(&r), 120000000U);
}

/*
 * A connect request's verdict: the backlog first (a full one is an
 * overflow whatever the half-open counts), then the listener's half-open
 * bound, then the namespace's; each bound's last free slot is taken and
 * the next refused; 0 is no bound of its own.
 */
static void glue_listen_verdict(struct kunit *test)
{
	struct sd_listen_load l = { .children = 3, .backlog = 16, .half_open = 3,
				    .half_open_max = 8, .ns_half_open = 10,
				    .ns_half_open_max = 12 };

	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_TAKE);
	l.half_open = 7;
	l.children = 7;
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_TAKE);
	l.half_open = 8;
	l.children = 8;
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_HALF_OPEN_FULL);
	/* Children waiting for accept() are not half-open. */
	l.half_open = 2;
	l.children = 15;
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_TAKE);
	l.children = 16;
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_OVERFLOW);
	l.half_open = 8;
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_OVERFLOW);
	/* The namespace's bound, with room left in the listener. */
	l.children = 2;
	l.half_open = 2;
	l.ns_half_open = 11;
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_TAKE);
	l.ns_half_open = 12;
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_HALF_OPEN_FULL);
	l.ns_half_open_max = 0;
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_TAKE);
	l.half_open = 100;
	l.children = 15;
	l.half_open_max = 0;
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_TAKE);
	/* A backlog of 0 takes one, as listen() makes it. */
	l = (struct sd_listen_load){ .backlog = 0 };
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_TAKE);
	l.children = 1;
	KUNIT_EXPECT_EQ(test, sd_listen_verdict(&l), SD_LISTEN_OVERFLOW);
}

static struct kunit_case glue_cases[] = {
	KUNIT_CASE(glue_rtt_estimator),
	KUNIT_CASE(glue_opt_credits),
	KUNIT_CASE(glue_opt_pdu_sizes),
	KUNIT_CASE(glue_opt_fragmented_size),
	KUNIT_CASE(glue_opt_read_write_and_keepalive),
	KUNIT_CASE(glue_opt_unknown),
	KUNIT_CASE(glue_opt_set_keeps_old_value),
	KUNIT_CASE(glue_opts_check),
	KUNIT_CASE(glue_ioctl_copy_size),
	KUNIT_CASE(glue_addr_family_and_length),
	KUNIT_CASE(glue_addr_bind_allows_wildcard),
	KUNIT_CASE(glue_addr_connect_v4),
	KUNIT_CASE(glue_addr_connect_v6),
	KUNIT_CASE(glue_rd_depths_cifs_request),
	KUNIT_CASE(glue_rd_depths_cifs612_request),
	KUNIT_CASE(glue_legacy_depth),
	KUNIT_CASE(glue_rd_depths_zero),
	KUNIT_CASE(glue_tcp_opts),
	KUNIT_CASE(glue_opt_mem_cap),
	KUNIT_CASE(glue_listen_verdict),
	{}
};

static struct kunit_suite glue_suite = {
	.name = "af_smbdirect_glue",
	.test_cases = glue_cases,
};

kunit_test_suite(glue_suite);
