// SPDX-License-Identifier: GPL-2.0
// The C boundary: argument checks, ABI facts, buffer descriptors.
#include <gtest/gtest.h>

#include "engine.h"

using namespace sdtest;

TEST(CApi, AbiVersion)
{
	EXPECT_EQ(sd_core_abi_version(), SD_CORE_ABI_VERSION);
}

TEST(CApi, DefaultsAreTheFieldValues)
{
	sd_core_config c;
	sd_core_config_default(&c, SD_CORE_ROLE_SERVER);
	EXPECT_EQ(c.role, static_cast<unsigned>(SD_CORE_ROLE_SERVER));
	EXPECT_EQ(c.receive_credit_max, 255u);
	EXPECT_EQ(c.send_credit_target, 255u);
	EXPECT_EQ(c.max_send_size, 1364u);
	EXPECT_EQ(c.max_receive_size, 1364u);
	EXPECT_EQ(c.max_fragmented_size, 1048576u);
	EXPECT_EQ(c.max_read_write_size, 8388608u);
	EXPECT_EQ(c.keepalive_interval_ms, 120000u);
	sd_core_config_default(nullptr, 0);
}

TEST(CApi, NullArgumentsAreRejected)
{
	sd_core_conn conn;
	sd_core_config cfg = config(SD_CORE_ROLE_CLIENT);
	sd_core_actions a;
	sd_core_pdu pdu;
	unsigned char buf[64];
	EXPECT_EQ(sd_core_conn_init(nullptr, &cfg), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_conn_init(&conn, nullptr), SD_CORE_E_INVALID_ARGUMENT);
	ASSERT_EQ(sd_core_conn_init(&conn, &cfg), SD_CORE_OK);
	EXPECT_EQ(sd_core_recv_posted(&conn, 1, nullptr), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_recv_posted(nullptr, 1, &a), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_on_connected(nullptr, 0, &a), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_on_recv(&conn, 0, nullptr, 5, &a), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_on_send_complete(nullptr, 1, &a), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_on_timer(nullptr, 0, &a), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_send_message(nullptr, 1, &a), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_next_pdu(&conn, nullptr, 0, 0, &pdu), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_next_pdu_copy(&conn, buf, 64, nullptr, 3, &pdu),
		  SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_disconnect(nullptr, 1, &a), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_get_params(nullptr, nullptr), SD_CORE_E_INVALID_ARGUMENT);
	sd_core_get_stats(nullptr, nullptr);
	sd_core_stream_parser_init(nullptr, 0);
	EXPECT_EQ(sd_core_stream_parse(nullptr, buf, 1, nullptr), SD_CORE_E_INVALID_ARGUMENT);
	sd_core_stream_prefix(1, nullptr);
	// A zero-length receive is a truncated PDU, not a bad argument.
	ASSERT_EQ(sd_core_recv_posted(&conn, 1, &a), SD_CORE_OK);
	EXPECT_EQ(sd_core_on_connected(&conn, 0, &a), SD_CORE_OK);
}

TEST(CApi, ConnStorageFitsTheEngine)
{
	EXPECT_EQ(sizeof(sd_core_conn), static_cast<size_t>(SD_CORE_CONN_SIZE));
	EXPECT_GE(alignof(sd_core_conn), static_cast<size_t>(SD_CORE_CONN_ALIGN));
}

TEST(CApi, BufferDescriptorsRoundTrip)
{
	sd_core_buffer_descriptor d[3] = { { 1, 2, 3 },
					   { 0xffffffffffffffffull, 0, 0xffffffffu },
					   { 0x1122334455667788ull, 0xaabbccddu, 0x10000u } };
	unsigned char buf[48];
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(sd_core_buffer_descriptor_encode(&d[i], buf + 16 * i, 16), SD_CORE_OK);
	EXPECT_EQ(0, memcmp(buf + 32, sd_vec_buffer_descriptor, 16));
	sd_core_buffer_descriptor out[3];
	unsigned n = 99;
	ASSERT_EQ(sd_core_buffer_descriptor_decode(buf, 48, out, 3, &n), SD_CORE_OK);
	ASSERT_EQ(n, 3u);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(out[i].offset, d[i].offset);
		EXPECT_EQ(out[i].token, d[i].token);
		EXPECT_EQ(out[i].length, d[i].length);
	}
	EXPECT_EQ(sd_core_buffer_descriptor_decode(buf, 47, out, 3, &n), SD_CORE_E_TRUNCATED);
	EXPECT_EQ(n, 0u);
	EXPECT_EQ(sd_core_buffer_descriptor_decode(buf, 48, out, 2, &n),
		  SD_CORE_E_BUFFER_TOO_SMALL);
	EXPECT_EQ(sd_core_buffer_descriptor_decode(buf, 0, nullptr, 0, &n), SD_CORE_OK);
	EXPECT_EQ(n, 0u);
	EXPECT_EQ(sd_core_buffer_descriptor_encode(&d[0], buf, 15), SD_CORE_E_BUFFER_TOO_SMALL);
	EXPECT_EQ(sd_core_buffer_descriptor_encode(nullptr, buf, 16), SD_CORE_E_INVALID_ARGUMENT);
	EXPECT_EQ(sd_core_buffer_descriptor_decode(buf, 16, out, 1, nullptr),
		  SD_CORE_E_INVALID_ARGUMENT);
}

TEST(CApi, NextPduCopyChecksTheMessageBuffer)
{
	Engine c(config(SD_CORE_ROLE_CLIENT)), s(config(SD_CORE_ROLE_SERVER));
	ASSERT_TRUE(negotiate(c, s));
	c.pump();
	ASSERT_EQ(c.send(100), SD_CORE_OK);
	unsigned char buf[200];
	unsigned char msg[100] = {};
	sd_core_pdu pdu;
	// Shorter message buffer than announced: only what exists is sent.
	ASSERT_EQ(sd_core_next_pdu_copy(&c.conn, buf, 200, msg, 30, &pdu), SD_CORE_OK);
	EXPECT_EQ(pdu.payload_length, 30u);
	EXPECT_EQ(sd_core_next_pdu_copy(&c.conn, buf, 200, msg, 30, &pdu), SD_CORE_E_AGAIN);
	ASSERT_EQ(sd_core_next_pdu_copy(&c.conn, buf, 200, msg, 100, &pdu), SD_CORE_OK);
	EXPECT_EQ(pdu.message_offset, 30u);
	EXPECT_EQ(pdu.payload_length, 70u);
}
