// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the SMB-Direct protocol core (kernel/core) inside the kernel, built
 * with the module's real flags, called only through smbdirect_core.h. Runs
 * the host suite's byte-exact vectors and a two-engine loopback.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/types.h>

#include "smbdirect_core.h"
#include "core_vectors.h"

/* Small enough that a stuck credit shows up within a few messages. */
#define SD_KT_CREDITS 8
#define SD_KT_SEND_SIZE 512
#define SD_KT_RING 64
#define SD_KT_MESSAGES 24
#define SD_KT_MAX_MESSAGE 6000

struct sd_kt_side {
	struct sd_core_conn conn;
	struct sd_core_config cfg;
	/* PDUs on the way to this side, oldest at head. */
	u8 *ring[SD_KT_RING];
	unsigned int ring_len[SD_KT_RING];
	unsigned int head;
	unsigned int count;
	unsigned int nic_posted;	/* receives the "NIC" holds */
	unsigned int repost;
	bool established;
	bool disconnected;
	/* Sending. */
	u8 *tx;
	unsigned int tx_index;
	bool sending;
	/* Receiving. */
	u8 *rx;
	unsigned int rx_len;
	unsigned int rx_index;
	bool rx_bad;
};

static u32 sd_kt_len(u32 seed, unsigned int index)
{
	u32 x = seed ^ (index * 0x9e3779b9u);

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return 1 + x % SD_KT_MAX_MESSAGE;
}

static u8 sd_kt_byte(unsigned int index, unsigned int pos)
{
	return (u8)(index * 31 + pos * 7 + (pos >> 8));
}

static void sd_kt_apply(struct kunit *test, struct sd_kt_side *s,
			const struct sd_core_actions *a, const u8 *buf)
{
	unsigned int i;

	if (a->flags & SD_CORE_ACT_ESTABLISHED)
		s->established = true;
	if (a->flags & SD_CORE_ACT_DISCONNECT)
		s->disconnected = true;
	if (a->flags & SD_CORE_ACT_REPOST)
		s->repost += a->repost;
	if (!(a->flags & SD_CORE_ACT_DELIVER))
		return;
	if (a->deliver_flags & SD_CORE_DELIVER_FIRST)
		s->rx_len = 0;
	KUNIT_ASSERT_LE(test, s->rx_len + a->deliver_length, (unsigned int)SD_KT_MAX_MESSAGE);
	memcpy(s->rx + s->rx_len, buf + a->deliver_offset, a->deliver_length);
	s->rx_len += a->deliver_length;
	/* Copied out at once, so the buffer goes straight back. */
	s->repost++;
	if (!(a->deliver_flags & SD_CORE_DELIVER_LAST))
		return;
	for (i = 0; i < s->rx_len; i++)
		if (s->rx[i] != sd_kt_byte(s->rx_index, i))
			s->rx_bad = true;
	s->rx_index++;
}

static void sd_kt_post(struct kunit *test, struct sd_kt_side *s)
{
	struct sd_core_actions a;
	unsigned int n = s->repost;

	if (!n)
		return;
	s->repost = 0;
	s->nic_posted += n;
	KUNIT_EXPECT_EQ(test, sd_core_recv_posted(&s->conn, n, &a), SD_CORE_OK);
	sd_kt_apply(test, s, &a, NULL);
}

/* Produces every PDU from while can, into to's ring. */
static void sd_kt_pump(struct kunit *test, struct sd_kt_side *from, struct sd_kt_side *to,
		       u32 seed)
{
	struct sd_core_actions a;
	struct sd_core_pdu pdu;
	unsigned int len, slot, i;
	int rc;

	for (;;) {
		if (from->established && !from->sending && from->tx_index < SD_KT_MESSAGES) {
			len = sd_kt_len(seed, from->tx_index);
			for (i = 0; i < len; i++)
				from->tx[i] = sd_kt_byte(from->tx_index, i);
			KUNIT_ASSERT_EQ(test, sd_core_send_message(&from->conn, len, &a),
					SD_CORE_OK);
			from->sending = true;
		}
		KUNIT_ASSERT_LT(test, to->count, (unsigned int)SD_KT_RING);
		slot = (to->head + to->count) % SD_KT_RING;
		len = from->sending ? sd_kt_len(seed, from->tx_index) : 0;
		rc = sd_core_next_pdu_copy(&from->conn, to->ring[slot], SD_KT_SEND_SIZE,
					   from->tx, len, &pdu);
		if (rc == SD_CORE_E_AGAIN)
			return;
		KUNIT_ASSERT_EQ(test, rc, SD_CORE_OK);
		to->ring_len[slot] = pdu.length;
		to->count++;
		if (pdu.kind == SD_CORE_PDU_DATA && pdu.message_last) {
			from->sending = false;
			from->tx_index++;
		}
	}
}

/* Delivers everything queued for to; returns how many PDUs moved. */
static unsigned int sd_kt_deliver(struct kunit *test, struct sd_kt_side *to)
{
	struct sd_core_actions a;
	unsigned int moved = 0;
	u8 *buf;

	while (to->count) {
		/* RDMA fails a send that finds no receive posted. */
		KUNIT_ASSERT_GT(test, to->nic_posted, 0U);
		to->nic_posted--;
		buf = to->ring[to->head];
		KUNIT_EXPECT_EQ(test,
				sd_core_on_recv(&to->conn, 0, buf, to->ring_len[to->head], &a),
				SD_CORE_OK);
		sd_kt_apply(test, to, &a, buf);
		to->head = (to->head + 1) % SD_KT_RING;
		to->count--;
		moved++;
	}
	return moved;
}

static struct sd_kt_side *sd_kt_side(struct kunit *test, unsigned int role)
{
	struct sd_kt_side *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, s);
	sd_core_config_default(&s->cfg, role);
	s->cfg.receive_credit_max = SD_KT_CREDITS;
	s->cfg.send_credit_target = SD_KT_CREDITS;
	s->cfg.max_send_size = SD_KT_SEND_SIZE;
	s->cfg.max_receive_size = SD_KT_SEND_SIZE;
	s->cfg.keepalive_interval_ms = 0;
	KUNIT_ASSERT_EQ(test, sd_core_conn_init(&s->conn, &s->cfg), SD_CORE_OK);
	for (i = 0; i < SD_KT_RING; i++) {
		s->ring[i] = kunit_kzalloc(test, SD_KT_SEND_SIZE, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, s->ring[i]);
	}
	s->tx = kunit_kzalloc(test, SD_KT_MAX_MESSAGE, GFP_KERNEL);
	s->rx = kunit_kzalloc(test, SD_KT_MAX_MESSAGE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->tx);
	KUNIT_ASSERT_NOT_NULL(test, s->rx);
	s->repost = SD_KT_CREDITS;
	sd_kt_post(test, s);
	return s;
}

static void sd_core_abi(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sd_core_abi_version(), SD_CORE_ABI_VERSION);
}

static void sd_core_negotiate_vectors(struct kunit *test)
{
	struct sd_kt_side *s = sd_kt_side(test, SD_CORE_ROLE_SERVER);
	struct sd_core_config cfg;
	struct sd_core_conn conn;
	struct sd_core_actions a;
	struct sd_core_params p;
	struct sd_core_pdu pdu;
	u8 buf[64];

	/* A client with the Windows defaults sends exactly the vector. */
	sd_core_config_default(&cfg, SD_CORE_ROLE_CLIENT);
	cfg.max_receive_size = 8192;
	KUNIT_ASSERT_EQ(test, sd_core_conn_init(&conn, &cfg), SD_CORE_OK);
	KUNIT_ASSERT_EQ(test, sd_core_recv_posted(&conn, 4, &a), SD_CORE_OK);
	KUNIT_ASSERT_EQ(test, sd_core_on_connected(&conn, 0, &a), SD_CORE_OK);
	KUNIT_ASSERT_EQ(test, sd_core_next_pdu(&conn, buf, sizeof(buf), 0, &pdu), SD_CORE_OK);
	KUNIT_EXPECT_EQ(test, pdu.length, (unsigned int)sizeof(sd_vec_negotiate_request));
	KUNIT_EXPECT_EQ(test, memcmp(buf, sd_vec_negotiate_request, pdu.length), 0);
	/* ... and takes the field response. */
	KUNIT_ASSERT_EQ(test, sd_core_on_recv(&conn, 0, sd_vec_negotiate_response,
					      sizeof(sd_vec_negotiate_response), &a), SD_CORE_OK);
	KUNIT_EXPECT_TRUE(test, a.flags & SD_CORE_ACT_ESTABLISHED);
	KUNIT_ASSERT_EQ(test, sd_core_get_params(&conn, &p), SD_CORE_OK);
	KUNIT_EXPECT_EQ(test, p.max_send_size, 1364U);
	KUNIT_EXPECT_EQ(test, p.max_read_write_size, 8388608U);
	KUNIT_EXPECT_EQ(test, p.max_fragmented_send_size, 1048576U);

	/* A server answers the vector request with a valid response. */
	KUNIT_ASSERT_EQ(test, sd_core_on_connected(&s->conn, 0, &a), SD_CORE_OK);
	KUNIT_ASSERT_EQ(test, sd_core_on_recv(&s->conn, 0, sd_vec_negotiate_request,
					      sizeof(sd_vec_negotiate_request), &a), SD_CORE_OK);
	sd_kt_apply(test, s, &a, NULL);
	sd_kt_post(test, s);
	KUNIT_ASSERT_EQ(test, sd_core_next_pdu(&s->conn, buf, sizeof(buf), 0, &pdu), SD_CORE_OK);
	KUNIT_EXPECT_EQ(test, pdu.kind, (unsigned int)SD_CORE_PDU_NEGOTIATE_RESPONSE);
	KUNIT_EXPECT_EQ(test, pdu.length, (unsigned int)SD_CORE_NEGOTIATE_RESPONSE_SIZE);
	/* Every posted receive but the one kept in reserve for probes. */
	KUNIT_EXPECT_EQ(test, pdu.credits_granted, (unsigned int)SD_KT_CREDITS - 1);
	KUNIT_EXPECT_TRUE(test, s->established);
}

static void sd_core_buffer_descriptor_vector(struct kunit *test)
{
	struct sd_core_buffer_descriptor d = {
		.offset = 0x1122334455667788ULL,
		.token = 0xaabbccdd,
		.length = 0x10000,
	};
	struct sd_core_buffer_descriptor out;
	unsigned int n;
	u8 buf[16];

	KUNIT_ASSERT_EQ(test, sd_core_buffer_descriptor_encode(&d, buf, sizeof(buf)), SD_CORE_OK);
	KUNIT_EXPECT_EQ(test, memcmp(buf, sd_vec_buffer_descriptor, sizeof(buf)), 0);
	KUNIT_ASSERT_EQ(test, sd_core_buffer_descriptor_decode(buf, 16, &out, 1, &n), SD_CORE_OK);
	KUNIT_EXPECT_EQ(test, n, 1U);
	KUNIT_EXPECT_EQ(test, out.offset, d.offset);
	KUNIT_EXPECT_EQ(test, out.token, d.token);
}

/* Brings a pair to the point where either may send data. */
static void sd_kt_connect(struct kunit *test, struct sd_kt_side *c, struct sd_kt_side *s,
			  u32 seed)
{
	struct sd_core_actions a;
	int round;

	KUNIT_ASSERT_EQ(test, sd_core_on_connected(&s->conn, 0, &a), SD_CORE_OK);
	KUNIT_ASSERT_EQ(test, sd_core_on_connected(&c->conn, 0, &a), SD_CORE_OK);
	for (round = 0; round < 4; round++) {
		sd_kt_pump(test, c, s, seed);
		sd_kt_deliver(test, s);
		sd_kt_post(test, s);
		sd_kt_pump(test, s, c, seed);
		sd_kt_deliver(test, c);
		sd_kt_post(test, c);
	}
	KUNIT_ASSERT_TRUE(test, c->established);
	KUNIT_ASSERT_TRUE(test, s->established);
}

static void sd_core_invalid_vectors(struct kunit *test)
{
	const struct sd_vec_case *v;
	struct sd_kt_side *c, *s;
	struct sd_core_actions a;
	unsigned int i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(sd_vec_invalid); i++) {
		v = &sd_vec_invalid[i];
		c = sd_kt_side(test, SD_CORE_ROLE_CLIENT);
		s = sd_kt_side(test, SD_CORE_ROLE_SERVER);
		if (v->kind == SD_VEC_KIND_REQUEST) {
			rc = sd_core_on_recv(&s->conn, 0, v->bytes, v->len, &a);
		} else if (v->kind == SD_VEC_KIND_RESPONSE) {
			KUNIT_ASSERT_EQ(test, sd_core_on_connected(&c->conn, 0, &a), SD_CORE_OK);
			sd_kt_pump(test, c, s, 0);
			rc = sd_core_on_recv(&c->conn, 0, v->bytes, v->len, &a);
		} else {
			c->tx_index = SD_KT_MESSAGES;
			s->tx_index = SD_KT_MESSAGES;
			sd_kt_connect(test, c, s, 0);
			rc = sd_core_on_recv(&c->conn, 0, v->bytes, v->len, &a);
		}
		KUNIT_EXPECT_EQ_MSG(test, rc, v->expect, "vector %s", v->name);
	}
}

static void sd_core_data_vectors(struct kunit *test)
{
	struct sd_kt_side *c = sd_kt_side(test, SD_CORE_ROLE_CLIENT);
	struct sd_kt_side *s = sd_kt_side(test, SD_CORE_ROLE_SERVER);
	struct sd_core_actions a;
	struct sd_core_stats before, after;

	/* No messages of their own: the vector must start a message. */
	c->tx_index = SD_KT_MESSAGES;
	s->tx_index = SD_KT_MESSAGES;
	sd_kt_connect(test, c, s, 0);
	sd_core_get_stats(&c->conn, &before);
	KUNIT_ASSERT_EQ(test, sd_core_on_recv(&c->conn, 0, sd_vec_data_transfer,
					      sizeof(sd_vec_data_transfer), &a), SD_CORE_OK);
	KUNIT_EXPECT_TRUE(test, a.flags & SD_CORE_ACT_DELIVER);
	KUNIT_EXPECT_EQ(test, a.deliver_offset, 24U);
	KUNIT_EXPECT_EQ(test, a.deliver_length, 5U);
	KUNIT_EXPECT_EQ(test, a.message_length, 4101U);
	KUNIT_EXPECT_EQ(test, a.deliver_flags, (unsigned int)SD_CORE_DELIVER_FIRST);
	KUNIT_EXPECT_EQ(test, memcmp(sd_vec_data_transfer + a.deliver_offset, "hello", 5), 0);
	/* RESPONSE_REQUESTED: an answer is due. */
	KUNIT_EXPECT_TRUE(test, a.flags & SD_CORE_ACT_SEND);
	KUNIT_ASSERT_EQ(test, sd_core_on_recv(&c->conn, 0, sd_vec_credit_only,
					      sizeof(sd_vec_credit_only), &a), SD_CORE_OK);
	KUNIT_EXPECT_EQ(test, a.repost, 1U);
	sd_core_get_stats(&c->conn, &after);
	KUNIT_EXPECT_EQ(test, after.send_credits, before.send_credits + 10 + 3);
}

static void sd_core_loopback(struct kunit *test)
{
	struct sd_kt_side *c = sd_kt_side(test, SD_CORE_ROLE_CLIENT);
	struct sd_kt_side *s = sd_kt_side(test, SD_CORE_ROLE_SERVER);
	const u32 seed = 0x5eed2026;
	unsigned int moved, rounds = 0;

	kunit_info(test, "loopback seed %#x, %d messages each way\n", seed, SD_KT_MESSAGES);
	sd_kt_connect(test, c, s, seed);
	do {
		sd_kt_pump(test, c, s, seed);
		sd_kt_pump(test, s, c, seed);
		moved = sd_kt_deliver(test, s) + sd_kt_deliver(test, c);
		sd_kt_post(test, s);
		sd_kt_post(test, c);
		sd_kt_pump(test, c, s, seed);
		sd_kt_pump(test, s, c, seed);
		moved += s->count + c->count;
	} while (moved && ++rounds < 100000);
	KUNIT_EXPECT_FALSE(test, c->disconnected);
	KUNIT_EXPECT_FALSE(test, s->disconnected);
	KUNIT_EXPECT_EQ(test, s->rx_index, (unsigned int)SD_KT_MESSAGES);
	KUNIT_EXPECT_EQ(test, c->rx_index, (unsigned int)SD_KT_MESSAGES);
	KUNIT_EXPECT_FALSE(test, s->rx_bad);
	KUNIT_EXPECT_FALSE(test, c->rx_bad);
}

static struct kunit_case sd_core_cases[] = {
	KUNIT_CASE(sd_core_abi),
	KUNIT_CASE(sd_core_negotiate_vectors),
	KUNIT_CASE(sd_core_buffer_descriptor_vector),
	KUNIT_CASE(sd_core_invalid_vectors),
	KUNIT_CASE(sd_core_data_vectors),
	KUNIT_CASE(sd_core_loopback),
	{}
};

static struct kunit_suite sd_core_suite = {
	.name = "smbdirect_core",
	.test_cases = sd_core_cases,
};

kunit_test_suite(sd_core_suite);
