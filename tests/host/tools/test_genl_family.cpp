// SPDX-License-Identifier: GPL-2.0
/*
 * The af_smbdirect netlink replies as `smbdirect ss` and `smbdirect stats`
 * read them: messages built with libnl as the kernel builds them, parsed
 * by the tool's policies, and what ss and stats print of them.
 */
#include <arpa/inet.h>
#include <cerrno>
#include <gtest/gtest.h>
#include <memory>
#include <netinet/in.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <linux/smbdirect.h>
#include <linux/smbdirect_genl.h>

#include "genl.hpp"
#include "genl_family.hpp"
#include "json.hpp"

namespace nl = sd::tool::nl;

namespace
{

struct MsgFree {
	void operator()(nl_msg *m) const
	{
		nlmsg_free(m);
	}
};
using Msg = std::unique_ptr<nl_msg, MsgFree>;

Msg reply(uint8_t cmd)
{
	Msg m(nlmsg_alloc());
	genlmsg_put(m.get(), 0, 1, 0x20, 0, NLM_F_MULTI, cmd, SMBDIRECT_GENL_VERSION);
	return m;
}

void put_stats(nl_msg *m, int type, uint64_t base)
{
	nlattr *n = nla_nest_start(m, type);
	nla_put_u64(m, SMBDIRECT_A_STATS_MSGS_TX, base + 1);
	nla_put_u64(m, SMBDIRECT_A_STATS_BYTES_TX, base + 2);
	nla_put_u64(m, SMBDIRECT_A_STATS_ERR_RDMA, base + 3);
	nla_nest_end(m, n);
}

/* A connected IPv6 socket over iWARP with everything the kernel sends. */
Msg connected_socket()
{
	Msg m = reply(SMBDIRECT_CMD_SOCK_GET);
	nl_msg *p = m.get();
	in6_addr local{}, peer{};
	inet_pton(AF_INET6, "fd77::2", &local);
	inet_pton(AF_INET6, "fd77::1", &peer);
	nla_put_u8(p, SMBDIRECT_A_SOCK_STATE, SMBDIRECT_STATE_CONNECTED);
	nla_put_u8(p, SMBDIRECT_A_SOCK_TYPE, SOCK_SEQPACKET);
	nla_put_u16(p, SMBDIRECT_A_SOCK_FAMILY, 23);
	nla_put_u32(p, SMBDIRECT_A_SOCK_UID, 1000);
	nla_put_u64(p, SMBDIRECT_A_SOCK_INODE, 123456789012ULL);
	nla_put_u64(p, SMBDIRECT_A_SOCK_COOKIE, 77);
	nla_put_u16(p, SMBDIRECT_A_SOCK_ADDR_FAMILY, AF_INET6);
	nla_put(p, SMBDIRECT_A_SOCK_LOCAL_ADDR, 16, &local);
	nla_put_u16(p, SMBDIRECT_A_SOCK_LOCAL_PORT, 5445);
	nla_put(p, SMBDIRECT_A_SOCK_PEER_ADDR, 16, &peer);
	nla_put_u16(p, SMBDIRECT_A_SOCK_PEER_PORT, 40000);
	nla_put_string(p, SMBDIRECT_A_SOCK_DEV_NAME, "siw1");
	nla_put_u32(p, SMBDIRECT_A_SOCK_DEV_PORT, 1);
	nla_put_u8(p, SMBDIRECT_A_SOCK_TRANSPORT, SMBDIRECT_TRANSPORT_IWARP);
	nlattr *n = nla_nest_start(p, SMBDIRECT_A_SOCK_PARAMS);
	nla_put_u32(p, SMBDIRECT_A_PARAMS_VERSION, 0x0100);
	nla_put_u32(p, SMBDIRECT_A_PARAMS_MAX_SEND_SIZE, 1364);
	nla_put_u32(p, SMBDIRECT_A_PARAMS_KEEPALIVE_INTERVAL, 0);
	nla_nest_end(p, n);
	n = nla_nest_start(p, SMBDIRECT_A_SOCK_CREDITS);
	nla_put_u32(p, SMBDIRECT_A_CREDITS_SEND, 254);
	nla_put_u32(p, SMBDIRECT_A_CREDITS_SENDS_IN_FLIGHT, 0);
	nla_nest_end(p, n);
	nla_put_u32(p, SMBDIRECT_A_SOCK_RX_QUEUED, 300);
	nla_put_u32(p, SMBDIRECT_A_SOCK_TX_QUEUED, 0);
	nla_put_u32(p, SMBDIRECT_A_SOCK_REGS, 2);
	nla_put_u64(p, SMBDIRECT_A_SOCK_PINNED_BYTES, 131072);
	put_stats(p, SMBDIRECT_A_SOCK_STATS, 10);
	return m;
}

Msg listener(const char *addr, uint16_t port)
{
	Msg m = reply(SMBDIRECT_CMD_SOCK_GET);
	nl_msg *p = m.get();
	in_addr a{};
	inet_pton(AF_INET, addr, &a);
	nla_put_u8(p, SMBDIRECT_A_SOCK_STATE, SMBDIRECT_STATE_LISTENING);
	nla_put_u16(p, SMBDIRECT_A_SOCK_ADDR_FAMILY, AF_INET);
	nla_put(p, SMBDIRECT_A_SOCK_LOCAL_ADDR, 4, &a);
	nla_put_u16(p, SMBDIRECT_A_SOCK_LOCAL_PORT, port);
	nla_put_u32(p, SMBDIRECT_A_SOCK_RX_QUEUED, 0);
	nla_put_u32(p, SMBDIRECT_A_SOCK_TX_QUEUED, 0);
	nlattr *n = nla_nest_start(p, SMBDIRECT_A_SOCK_ACCEPT);
	nla_put_u32(p, SMBDIRECT_A_ACCEPT_PENDING, 1);
	nla_put_u32(p, SMBDIRECT_A_ACCEPT_READY, 2);
	nla_put_u32(p, SMBDIRECT_A_ACCEPT_BACKLOG, 16);
	nla_nest_end(p, n);
	return m;
}

} // namespace

TEST(ToolGenl, ParsesEverySocketAttribute)
{
	Msg m = connected_socket();
	nl::SockInfo s;
	ASSERT_FALSE(nl::parse_sock(nlmsg_hdr(m.get()), s));
	EXPECT_EQ(s.state, SMBDIRECT_STATE_CONNECTED);
	EXPECT_EQ(s.type, SOCK_SEQPACKET);
	EXPECT_EQ(s.family, 23);
	EXPECT_EQ(s.uid, 1000u);
	EXPECT_EQ(s.inode, 123456789012ULL);
	EXPECT_EQ(s.cookie, 77u);
	ASSERT_TRUE(s.local_addr && s.peer_addr);
	EXPECT_EQ(nl::address_text(*s.local_addr), "fd77::2");
	EXPECT_EQ(nl::address_text(*s.peer_addr), "fd77::1");
	EXPECT_EQ(s.local_port, 5445);
	EXPECT_EQ(s.peer_port, 40000);
	EXPECT_EQ(s.dev_name, "siw1");
	EXPECT_EQ(s.dev_port, 1u);
	EXPECT_EQ(s.transport, SMBDIRECT_TRANSPORT_IWARP);
	ASSERT_TRUE(s.params && s.credits && s.stats);
	EXPECT_EQ(s.params->get(SMBDIRECT_A_PARAMS_MAX_SEND_SIZE), 1364u);
	EXPECT_EQ(s.params->get(SMBDIRECT_A_PARAMS_KEEPALIVE_INTERVAL), 0u);
	EXPECT_FALSE(s.params->get(SMBDIRECT_A_PARAMS_MAX_RECEIVE_SIZE));
	EXPECT_EQ(s.credits->get(SMBDIRECT_A_CREDITS_SEND), 254u);
	EXPECT_EQ(s.stats->get(SMBDIRECT_A_STATS_BYTES_TX), 12u);
	EXPECT_EQ(s.rx_queued, 300u);
	EXPECT_EQ(s.regs, 2u);
	EXPECT_EQ(s.pinned_bytes, 131072u);
	EXPECT_FALSE(s.accept);
}

TEST(ToolGenl, UnknownAttributesAreSkipped)
{
	Msg m = listener("10.77.0.1", 445);
	nla_put_u64(m.get(), SMBDIRECT_A_SOCK_MAX + 5, 1); /* a newer kernel's */
	nlattr *n = nla_nest_start(m.get(), SMBDIRECT_A_SOCK_STATS);
	nla_put_u64(m.get(), SMBDIRECT_A_STATS_MAX + 1, 9);
	nla_put_u64(m.get(), SMBDIRECT_A_STATS_MSGS_RX, 4);
	nla_nest_end(m.get(), n);
	nl::SockInfo s;
	ASSERT_FALSE(nl::parse_sock(nlmsg_hdr(m.get()), s));
	EXPECT_EQ(s.local_port, 445);
	ASSERT_TRUE(s.stats);
	EXPECT_EQ(s.stats->get(SMBDIRECT_A_STATS_MSGS_RX), 4u);
	EXPECT_FALSE(s.stats->get(SMBDIRECT_A_STATS_MAX + 1));
}

TEST(ToolGenl, MalformedAttributesAreErrors)
{
	struct Case {
		const char *what;
		void (*put)(nl_msg *);
	};
	const Case cases[] = {
		{ "u32 uid of 2 bytes",
		  [](nl_msg *m) { nla_put_u16(m, SMBDIRECT_A_SOCK_UID, 1); } },
		{ "u32 uid of 8 bytes",
		  [](nl_msg *m) { nla_put_u64(m, SMBDIRECT_A_SOCK_UID, 1); } },
		{ "u16 port of 4 bytes",
		  [](nl_msg *m) { nla_put_u32(m, SMBDIRECT_A_SOCK_LOCAL_PORT, 1); } },
		{ "u8 state of 4 bytes",
		  [](nl_msg *m) { nla_put_u32(m, SMBDIRECT_A_SOCK_STATE, 1); } },
		{ "u64 inode of 4 bytes",
		  [](nl_msg *m) { nla_put_u32(m, SMBDIRECT_A_SOCK_INODE, 1); } },
		{ "address of 8 bytes",
		  [](nl_msg *m) { nla_put_u64(m, SMBDIRECT_A_SOCK_LOCAL_ADDR, 1); } },
		{ "address of 20 bytes",
		  [](nl_msg *m) {
			  char b[20] = {};
			  nla_put(m, SMBDIRECT_A_SOCK_PEER_ADDR, sizeof(b), b);
		  } },
		{ "device name without NUL",
		  [](nl_msg *m) { nla_put(m, SMBDIRECT_A_SOCK_DEV_NAME, 4, "rxe0"); } },
		{ "u64 counter of 4 bytes in the stats nest",
		  [](nl_msg *m) {
			  nlattr *n = nla_nest_start(m, SMBDIRECT_A_SOCK_STATS);
			  nla_put_u32(m, SMBDIRECT_A_STATS_MSGS_TX, 1);
			  nla_nest_end(m, n);
		  } },
		{ "u32 parameter of 8 bytes",
		  [](nl_msg *m) {
			  nlattr *n = nla_nest_start(m, SMBDIRECT_A_SOCK_PARAMS);
			  nla_put_u64(m, SMBDIRECT_A_PARAMS_MAX_SEND_SIZE, 1);
			  nla_nest_end(m, n);
		  } },
	};
	for (const auto &c : cases) {
		Msg m = reply(SMBDIRECT_CMD_SOCK_GET);
		c.put(m.get());
		nl::SockInfo s;
		EXPECT_TRUE(nl::parse_sock(nlmsg_hdr(m.get()), s)) << c.what;
	}
}

TEST(ToolGenl, TruncatedGenericHeaderIsAnError)
{
	for (unsigned payload : { 0u, 2u }) {
		Msg m(nlmsg_alloc());
		nlmsghdr *h = nlmsg_put(m.get(), 0, 1, 0x20, 4, 0);
		ASSERT_NE(h, nullptr);
		h->nlmsg_len = NLMSG_HDRLEN + payload; /* less than a genlmsghdr */
		nl::SockInfo s;
		EXPECT_TRUE(nl::parse_sock(h, s)) << payload;
		nl::StatsInfo st;
		EXPECT_TRUE(nl::parse_stats(h, st)) << payload;
	}
}

TEST(ToolGenl, StatsModuleAndEveryDevice)
{
	Msg m = reply(SMBDIRECT_CMD_STATS_GET);
	put_stats(m.get(), SMBDIRECT_A_STATS_TOP_MODULE, 100);
	for (int i = 0; i < 2; i++) {
		nlattr *d = nla_nest_start(m.get(), SMBDIRECT_A_STATS_TOP_DEVICE);
		nla_put_string(m.get(), SMBDIRECT_A_DEV_NAME, i ? "siw1" : "rxe0");
		nla_put_u32(m.get(), SMBDIRECT_A_DEV_INDEX, static_cast<uint32_t>(i + 3));
		put_stats(m.get(), SMBDIRECT_A_DEV_STATS, i * 10);
		nla_nest_end(m.get(), d);
	}
	nl::StatsInfo s;
	ASSERT_FALSE(nl::parse_stats(nlmsg_hdr(m.get()), s));
	ASSERT_TRUE(s.module);
	EXPECT_EQ(s.module->get(SMBDIRECT_A_STATS_MSGS_TX), 101u);
	ASSERT_EQ(s.devices.size(), 2u);
	EXPECT_EQ(s.devices[0].name, "rxe0");
	EXPECT_EQ(s.devices[1].name, "siw1");
	EXPECT_EQ(s.devices[1].index, 4u);
	ASSERT_TRUE(s.devices[1].stats);
	EXPECT_EQ(s.devices[1].stats->get(SMBDIRECT_A_STATS_ERR_RDMA), 13u);

	sd::tool::JsonWriter j;
	nl::write_json(j, s);
	EXPECT_EQ(j.str(), "{\"module\":{\"msgs_tx\":101,\"bytes_tx\":102,\"err_rdma\":103},"
			   "\"devices\":[{\"name\":\"rxe0\",\"index\":3,\"stats\":{\"msgs_tx\":1,"
			   "\"bytes_tx\":2,\"err_rdma\":3}},{\"name\":\"siw1\",\"index\":4,"
			   "\"stats\":{\"msgs_tx\":11,\"bytes_tx\":12,\"err_rdma\":13}}]}");

	std::string text = nl::stats_text(s);
	EXPECT_NE(text.find("total  rxe0  siw1\n"), std::string::npos) << text;
	EXPECT_NE(text.find("\n  Messages sent                      101     1    11\n"),
		  std::string::npos)
		<< text;
	EXPECT_NE(text.find("\n  RDMA reads                           -     -     -\n"),
		  std::string::npos)
		<< text;
	EXPECT_NE(text.find("\nErrors\n"), std::string::npos) << text;
}

TEST(ToolGenl, SocketJsonHasWhatTheKernelSentByName)
{
	Msg m = connected_socket();
	nl::SockInfo s;
	ASSERT_FALSE(nl::parse_sock(nlmsg_hdr(m.get()), s));
	std::vector<nl::ProcessRef> users{ { "smbd", 42, 7 } };
	sd::tool::JsonWriter j;
	nl::write_json(j, s, &users);
	EXPECT_EQ(j.str(),
		  "{\"state\":\"ESTAB\",\"type\":\"seqpacket\",\"family\":23,\"uid\":1000,"
		  "\"inode\":123456789012,\"cookie\":77,\"addr_family\":10,"
		  "\"local_addr\":\"fd77::2\",\"local_port\":5445,\"peer_addr\":\"fd77::1\","
		  "\"peer_port\":40000,\"dev\":\"siw1\",\"dev_port\":1,\"transport\":\"iwarp\","
		  "\"params\":{\"version\":\"1.0\",\"max_send_size\":1364,"
		  "\"keepalive_interval\":0},\"credits\":{\"send\":254,\"sends_in_flight\":0},"
		  "\"rx_queued\":300,\"tx_queued\":0,\"registrations\":2,"
		  "\"pinned_bytes\":131072,\"stats\":{\"msgs_tx\":11,\"bytes_tx\":12,"
		  "\"err_rdma\":13},\"users\":[{\"comm\":\"smbd\",\"pid\":42,\"fd\":7}]}");

	sd::tool::JsonWriter bare;
	Msg l = listener("0.0.0.0", 445);
	nl::SockInfo ls;
	ASSERT_FALSE(nl::parse_sock(nlmsg_hdr(l.get()), ls));
	nl::write_json(bare, ls, nullptr);
	EXPECT_EQ(bare.str(), "{\"state\":\"LISTEN\",\"addr_family\":2,\"local_addr\":\"0.0.0.0\","
			      "\"local_port\":445,\"rx_queued\":0,\"tx_queued\":0,"
			      "\"accept\":{\"pending\":1,\"ready\":2,\"backlog\":16}}");
}

TEST(ToolGenl, TableCellsAsSsShowsThem)
{
	Msg m = connected_socket();
	nl::SockInfo s;
	ASSERT_FALSE(nl::parse_sock(nlmsg_hdr(m.get()), s));
	EXPECT_EQ(nl::table_cells(s),
		  (std::vector<std::string>{ "ESTAB", "300", "0", "[fd77::2]:5445",
					     "[fd77::1]:40000", "siw1/1", "iWARP" }));

	/* A listener: ready connections and backlog as the queues, no peer. */
	Msg l = listener("10.77.0.1", 7000);
	nl::SockInfo ls;
	ASSERT_FALSE(nl::parse_sock(nlmsg_hdr(l.get()), ls));
	EXPECT_EQ(nl::table_cells(ls),
		  (std::vector<std::string>{ "LISTEN", "2", "16", "10.77.0.1:7000", "0.0.0.0:*",
					     "-", "-" }));

	/* A socket that has nothing yet. */
	nl::SockInfo fresh;
	fresh.state = SMBDIRECT_STATE_UNCONNECTED;
	EXPECT_EQ(nl::table_cells(fresh),
		  (std::vector<std::string>{ "UNCONN", "-", "-", "*:*", "*:*", "-", "-" }));
}

TEST(ToolGenl, ExtendedLines)
{
	Msg m = connected_socket();
	nl::SockInfo s;
	ASSERT_FALSE(nl::parse_sock(nlmsg_hdr(m.get()), s));
	EXPECT_EQ(nl::extended_lines(s),
		  (std::vector<std::string>{
			  "uid:1000 ino:123456789012 cookie:77 family:23 type:seqpacket",
			  "params: version:1.0 max_send_size:1364 keepalive_interval:0",
			  "credits: send:254 sends_in_flight:0",
			  "rx_queued:300 tx_queued:0 registrations:2 pinned_bytes:131072",
			  "messages: msgs_tx:11 bytes_tx:12", "errors: err_rdma:13" }));
	Msg l = listener("10.77.0.1", 7000);
	nl::SockInfo ls;
	ASSERT_FALSE(nl::parse_sock(nlmsg_hdr(l.get()), ls));
	EXPECT_EQ(nl::extended_lines(ls),
		  (std::vector<std::string>{ "rx_queued:0 tx_queued:0",
					     "accept: pending:1 ready:2 backlog:16" }));
}

TEST(ToolGenl, Names)
{
	EXPECT_EQ(nl::state_name(SMBDIRECT_STATE_UNCONNECTED), "UNCONN");
	EXPECT_EQ(nl::state_name(SMBDIRECT_STATE_LISTENING), "LISTEN");
	EXPECT_EQ(nl::state_name(SMBDIRECT_STATE_CONNECTING), "CONNECTING");
	EXPECT_EQ(nl::state_name(SMBDIRECT_STATE_CONNECTED), "ESTAB");
	EXPECT_EQ(nl::state_name(SMBDIRECT_STATE_CLOSED), "CLOSED");
	EXPECT_EQ(nl::state_name(9), "STATE-9");
	EXPECT_EQ(nl::type_name(SOCK_STREAM), "stream");
	EXPECT_EQ(nl::type_name(SOCK_SEQPACKET), "seqpacket");
	EXPECT_EQ(nl::transport_key(SMBDIRECT_TRANSPORT_IB), "ib");
	EXPECT_EQ(nl::transport_key(SMBDIRECT_TRANSPORT_ROCE), "roce");
	EXPECT_EQ(nl::transport_key(SMBDIRECT_TRANSPORT_IWARP), "iwarp");
	EXPECT_EQ(nl::transport_key(7), "unknown-7");
	EXPECT_EQ(nl::version_text(0x0100), "1.0");
	EXPECT_EQ(nl::version_text(0x0203), "2.3");
}

TEST(ToolGenl, NetlinkErrorsAreErrnos)
{
	EXPECT_EQ(sd::tool::genl::from_nl(-NLE_PERM).value(), EPERM);
	EXPECT_EQ(sd::tool::genl::from_nl(-NLE_OBJ_NOTFOUND).value(), ENOENT);
	EXPECT_EQ(sd::tool::genl::from_nl(-NLE_RANGE).value(), ERANGE);
	EXPECT_EQ(sd::tool::genl::from_nl(-NLE_DUMP_INTR).value(), EINTR);
	EXPECT_EQ(sd::tool::genl::from_nl(-NLE_FAILURE).value(), EIO);
	EXPECT_FALSE(sd::tool::genl::from_nl(0));
}
