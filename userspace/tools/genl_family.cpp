// SPDX-License-Identifier: LGPL-2.1-or-later
#include "genl_family.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstdio>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <linux/smbdirect.h>

#include "genl.hpp"
#include "json.hpp"

namespace sd::tool::nl
{

namespace
{

constexpr Field params_table[] = {
	{ SMBDIRECT_A_PARAMS_VERSION, "version", 4, "", "params" },
	{ SMBDIRECT_A_PARAMS_MAX_SEND_SIZE, "max_send_size", 4, "", "params" },
	{ SMBDIRECT_A_PARAMS_MAX_RECEIVE_SIZE, "max_receive_size", 4, "", "params" },
	{ SMBDIRECT_A_PARAMS_MAX_FRAGMENTED_SEND_SIZE, "max_fragmented_send_size", 4, "",
	  "params" },
	{ SMBDIRECT_A_PARAMS_MAX_FRAGMENTED_RECEIVE_SIZE, "max_fragmented_receive_size", 4, "",
	  "params" },
	{ SMBDIRECT_A_PARAMS_MAX_READ_WRITE_SIZE, "max_read_write_size", 4, "", "params" },
	{ SMBDIRECT_A_PARAMS_SEND_CREDIT_TARGET, "send_credit_target", 4, "", "params" },
	{ SMBDIRECT_A_PARAMS_RECEIVE_CREDIT_MAX, "receive_credit_max", 4, "", "params" },
	{ SMBDIRECT_A_PARAMS_INITIATOR_DEPTH, "initiator_depth", 4, "", "params" },
	{ SMBDIRECT_A_PARAMS_RESPONDER_RESOURCES, "responder_resources", 4, "", "params" },
	{ SMBDIRECT_A_PARAMS_KEEPALIVE_INTERVAL, "keepalive_interval", 4, "", "params" },
};

constexpr Field credits_table[] = {
	{ SMBDIRECT_A_CREDITS_SEND, "send", 4, "", "credits" },
	{ SMBDIRECT_A_CREDITS_SEND_TARGET, "send_target", 4, "", "credits" },
	{ SMBDIRECT_A_CREDITS_PEER, "peer", 4, "", "credits" },
	{ SMBDIRECT_A_CREDITS_RECEIVES_POSTED, "receives_posted", 4, "", "credits" },
	{ SMBDIRECT_A_CREDITS_RECEIVES_HELD, "receives_held", 4, "", "credits" },
	{ SMBDIRECT_A_CREDITS_RECEIVE_TARGET, "receive_target", 4, "", "credits" },
	{ SMBDIRECT_A_CREDITS_SENDS_IN_FLIGHT, "sends_in_flight", 4, "", "credits" },
};

/* Groups: the sections of `smbdirect stats` and the -e lines of ss. */
constexpr std::string_view g_conn = "connections", g_msgs = "messages", g_rdma = "rdma",
			   g_err = "errors";

constexpr Field stats_table[] = {
	{ SMBDIRECT_A_STATS_MSGS_TX, "msgs_tx", 8, "Messages sent", g_msgs },
	{ SMBDIRECT_A_STATS_MSGS_RX, "msgs_rx", 8, "Messages received", g_msgs },
	{ SMBDIRECT_A_STATS_PDUS_TX, "pdus_tx", 8, "Data PDUs sent", g_msgs },
	{ SMBDIRECT_A_STATS_PDUS_RX, "pdus_rx", 8, "Data PDUs received", g_msgs },
	{ SMBDIRECT_A_STATS_BYTES_TX, "bytes_tx", 8, "Message bytes sent", g_msgs },
	{ SMBDIRECT_A_STATS_BYTES_RX, "bytes_rx", 8, "Message bytes received", g_msgs },
	{ SMBDIRECT_A_STATS_RDMA_READS, "rdma_reads", 8, "RDMA reads", g_rdma },
	{ SMBDIRECT_A_STATS_RDMA_READ_BYTES, "rdma_read_bytes", 8, "RDMA read bytes", g_rdma },
	{ SMBDIRECT_A_STATS_RDMA_WRITES, "rdma_writes", 8, "RDMA writes", g_rdma },
	{ SMBDIRECT_A_STATS_RDMA_WRITE_BYTES, "rdma_write_bytes", 8, "RDMA write bytes", g_rdma },
	{ SMBDIRECT_A_STATS_REGISTRATIONS, "registrations", 8, "Registrations", g_rdma },
	{ SMBDIRECT_A_STATS_REMOTE_INVALIDATIONS, "remote_invalidations", 8,
	  "Invalidated by the peer", g_rdma },
	{ SMBDIRECT_A_STATS_SEND_INVALIDATES, "send_invalidates", 8, "Sends with invalidate",
	  g_rdma },
	{ SMBDIRECT_A_STATS_KEEPALIVES_TX, "keepalives_tx", 8, "Keepalive probes sent", g_msgs },
	{ SMBDIRECT_A_STATS_CREDIT_STALLS, "credit_stalls", 8, "Sends that waited for a credit",
	  g_msgs },
	{ SMBDIRECT_A_STATS_ERR_PROTOCOL, "err_protocol", 8, "Protocol errors (EPROTO)", g_err },
	{ SMBDIRECT_A_STATS_ERR_TIMEOUT, "err_timeout", 8, "Timeouts (ETIMEDOUT)", g_err },
	{ SMBDIRECT_A_STATS_ERR_REFUSED, "err_refused", 8, "Refused (ECONNREFUSED)", g_err },
	{ SMBDIRECT_A_STATS_ERR_TRANSPORT, "err_transport", 8, "Transport failures (ECONNRESET)",
	  g_err },
	{ SMBDIRECT_A_STATS_ERR_DEVICE, "err_device", 8, "Device gone (ENETDOWN)", g_err },
	{ SMBDIRECT_A_STATS_ERR_RDMA, "err_rdma", 8, "Failed RDMA reads/writes", g_err },
	{ SMBDIRECT_A_STATS_SOCKETS, "sockets", 8, "Sockets now", g_conn },
	{ SMBDIRECT_A_STATS_CONNECTIONS, "connections", 8, "Connections negotiated", g_conn },
	{ SMBDIRECT_A_STATS_LISTEN_OVERFLOWS, "listen_overflows", 8, "Requests over the backlog",
	  g_conn },
	{ SMBDIRECT_A_STATS_LISTEN_HALF_OPEN_DROPS, "listen_half_open_drops", 8,
	  "Requests over half-open bound", g_conn },
};

constexpr Field accept_table[] = {
	{ SMBDIRECT_A_ACCEPT_PENDING, "pending", 4, "", "accept" },
	{ SMBDIRECT_A_ACCEPT_READY, "ready", 4, "", "accept" },
	{ SMBDIRECT_A_ACCEPT_BACKLOG, "backlog", 4, "", "accept" },
};

/* Fixed sizes are exact: a u32 of 8 bytes is malformed, not rounded. */
constexpr nla_policy exact(uint16_t type, uint16_t len)
{
	return { type, len, len };
}

template <size_t Max, size_t N>
constexpr std::array<nla_policy, Max + 1> numbers_policy(const Field (&fields)[N])
{
	std::array<nla_policy, Max + 1> p{};
	for (const auto &f : fields)
		p[f.attr] = f.bytes == 8 ? exact(NLA_U64, 8) : exact(NLA_U32, 4);
	return p;
}

constexpr auto params_policy = numbers_policy<SMBDIRECT_A_PARAMS_MAX>(params_table);
constexpr auto credits_policy = numbers_policy<SMBDIRECT_A_CREDITS_MAX>(credits_table);
constexpr auto stats_policy = numbers_policy<SMBDIRECT_A_STATS_MAX>(stats_table);
constexpr auto accept_policy = numbers_policy<SMBDIRECT_A_ACCEPT_MAX>(accept_table);

constexpr std::array<nla_policy, SMBDIRECT_A_SOCK_MAX + 1> make_sock_policy()
{
	std::array<nla_policy, SMBDIRECT_A_SOCK_MAX + 1> p{};
	p[SMBDIRECT_A_SOCK_STATE] = exact(NLA_U8, 1);
	p[SMBDIRECT_A_SOCK_TYPE] = exact(NLA_U8, 1);
	p[SMBDIRECT_A_SOCK_FAMILY] = exact(NLA_U16, 2);
	p[SMBDIRECT_A_SOCK_UID] = exact(NLA_U32, 4);
	p[SMBDIRECT_A_SOCK_INODE] = exact(NLA_U64, 8);
	p[SMBDIRECT_A_SOCK_COOKIE] = exact(NLA_U64, 8);
	p[SMBDIRECT_A_SOCK_ADDR_FAMILY] = exact(NLA_U16, 2);
	p[SMBDIRECT_A_SOCK_LOCAL_ADDR] = { NLA_UNSPEC, 4, 16 };
	p[SMBDIRECT_A_SOCK_LOCAL_PORT] = exact(NLA_U16, 2);
	p[SMBDIRECT_A_SOCK_PEER_ADDR] = { NLA_UNSPEC, 4, 16 };
	p[SMBDIRECT_A_SOCK_PEER_PORT] = exact(NLA_U16, 2);
	p[SMBDIRECT_A_SOCK_DEV_NAME] = { NLA_STRING, 1, 256 };
	p[SMBDIRECT_A_SOCK_DEV_PORT] = exact(NLA_U32, 4);
	p[SMBDIRECT_A_SOCK_TRANSPORT] = exact(NLA_U8, 1);
	p[SMBDIRECT_A_SOCK_PARAMS] = { NLA_NESTED, 0, 0 };
	p[SMBDIRECT_A_SOCK_CREDITS] = { NLA_NESTED, 0, 0 };
	p[SMBDIRECT_A_SOCK_RX_QUEUED] = exact(NLA_U32, 4);
	p[SMBDIRECT_A_SOCK_TX_QUEUED] = exact(NLA_U32, 4);
	p[SMBDIRECT_A_SOCK_REGS] = exact(NLA_U32, 4);
	p[SMBDIRECT_A_SOCK_PINNED_BYTES] = exact(NLA_U64, 8);
	p[SMBDIRECT_A_SOCK_STATS] = { NLA_NESTED, 0, 0 };
	p[SMBDIRECT_A_SOCK_ACCEPT] = { NLA_NESTED, 0, 0 };
	p[SMBDIRECT_A_SOCK_STATE_MASK] = exact(NLA_U32, 4);
	return p;
}
constexpr auto sock_policy = make_sock_policy();

constexpr std::array<nla_policy, SMBDIRECT_A_STATS_TOP_MAX + 1> make_top_policy()
{
	std::array<nla_policy, SMBDIRECT_A_STATS_TOP_MAX + 1> p{};
	p[SMBDIRECT_A_STATS_TOP_MODULE] = { NLA_NESTED, 0, 0 };
	p[SMBDIRECT_A_STATS_TOP_DEVICE] = { NLA_NESTED, 0, 0 };
	return p;
}
constexpr auto top_policy = make_top_policy();

constexpr std::array<nla_policy, SMBDIRECT_A_DEV_MAX + 1> make_dev_policy()
{
	std::array<nla_policy, SMBDIRECT_A_DEV_MAX + 1> p{};
	p[SMBDIRECT_A_DEV_NAME] = { NLA_STRING, 1, 256 };
	p[SMBDIRECT_A_DEV_INDEX] = exact(NLA_U32, 4);
	p[SMBDIRECT_A_DEV_STATS] = { NLA_NESTED, 0, 0 };
	return p;
}
constexpr auto dev_policy = make_dev_policy();

/* libnl's nla_* take non-const pointers; nothing here writes through them. */
nlattr *mut(const nlattr *a)
{
	return const_cast<nlattr *>(a);
}

template <size_t N> std::error_code parse_numbers(const nlattr *nest, std::span<const Field> fields,
						  const std::array<nla_policy, N> &policy,
						  Numbers &out)
{
	std::array<nlattr *, N> tb{};
	int rc = nla_parse_nested(tb.data(), static_cast<int>(N - 1), mut(nest),
				  const_cast<nla_policy *>(policy.data()));
	if (rc < 0)
		return genl::from_nl(rc);
	Numbers n;
	for (const auto &f : fields)
		if (tb[f.attr])
			n.set(f.attr,
			      f.bytes == 8 ? nla_get_u64(tb[f.attr]) : nla_get_u32(tb[f.attr]));
	out = std::move(n);
	return {};
}

std::error_code parse_address(const nlattr *a, Address &out)
{
	int len = nla_len(a);
	if (len != 4 && len != 16)
		return std::make_error_code(std::errc::invalid_argument);
	out.family = len == 4 ? AF_INET : AF_INET6;
	out.bytes = {};
	std::memcpy(out.bytes.data(), nla_data(a), static_cast<size_t>(len));
	return {};
}

std::string string_of(const nlattr *a)
{
	/* The policy checked the NUL at the end. */
	return std::string(static_cast<const char *>(nla_data(a)));
}

} // namespace

std::span<const Field> params_fields()
{
	return params_table;
}
std::span<const Field> credits_fields()
{
	return credits_table;
}
std::span<const Field> stats_fields()
{
	return stats_table;
}
std::span<const Field> accept_fields()
{
	return accept_table;
}

std::error_code parse_sock(const nlmsghdr *msg, SockInfo &out)
{
	std::array<nlattr *, SMBDIRECT_A_SOCK_MAX + 1> tb{};
	int rc = genlmsg_parse(const_cast<nlmsghdr *>(msg), 0, tb.data(), SMBDIRECT_A_SOCK_MAX,
			       const_cast<nla_policy *>(sock_policy.data()));
	if (rc < 0)
		return genl::from_nl(rc);
	SockInfo s;
	std::error_code ec;
	if (auto *a = tb[SMBDIRECT_A_SOCK_STATE])
		s.state = nla_get_u8(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_TYPE])
		s.type = nla_get_u8(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_FAMILY])
		s.family = nla_get_u16(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_UID])
		s.uid = nla_get_u32(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_INODE])
		s.inode = nla_get_u64(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_COOKIE])
		s.cookie = nla_get_u64(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_ADDR_FAMILY])
		s.addr_family = nla_get_u16(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_LOCAL_ADDR]) {
		if ((ec = parse_address(a, s.local_addr.emplace())))
			return ec;
	}
	if (auto *a = tb[SMBDIRECT_A_SOCK_LOCAL_PORT])
		s.local_port = nla_get_u16(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_PEER_ADDR]) {
		if ((ec = parse_address(a, s.peer_addr.emplace())))
			return ec;
	}
	if (auto *a = tb[SMBDIRECT_A_SOCK_PEER_PORT])
		s.peer_port = nla_get_u16(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_DEV_NAME])
		s.dev_name = string_of(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_DEV_PORT])
		s.dev_port = nla_get_u32(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_TRANSPORT])
		s.transport = nla_get_u8(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_RX_QUEUED])
		s.rx_queued = nla_get_u32(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_TX_QUEUED])
		s.tx_queued = nla_get_u32(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_REGS])
		s.regs = nla_get_u32(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_PINNED_BYTES])
		s.pinned_bytes = nla_get_u64(a);
	if (auto *a = tb[SMBDIRECT_A_SOCK_PARAMS])
		if ((ec = parse_numbers(a, params_table, params_policy, s.params.emplace())))
			return ec;
	if (auto *a = tb[SMBDIRECT_A_SOCK_CREDITS])
		if ((ec = parse_numbers(a, credits_table, credits_policy, s.credits.emplace())))
			return ec;
	if (auto *a = tb[SMBDIRECT_A_SOCK_STATS])
		if ((ec = parse_numbers(a, stats_table, stats_policy, s.stats.emplace())))
			return ec;
	if (auto *a = tb[SMBDIRECT_A_SOCK_ACCEPT])
		if ((ec = parse_numbers(a, accept_table, accept_policy, s.accept.emplace())))
			return ec;
	out = std::move(s);
	return {};
}

std::error_code parse_stats(const nlmsghdr *msg, StatsInfo &out)
{
	std::array<nlattr *, SMBDIRECT_A_STATS_TOP_MAX + 1> tb{};
	int rc = genlmsg_parse(const_cast<nlmsghdr *>(msg), 0, tb.data(), SMBDIRECT_A_STATS_TOP_MAX,
			       const_cast<nla_policy *>(top_policy.data()));
	if (rc < 0)
		return genl::from_nl(rc);
	StatsInfo s;
	std::error_code ec;
	if (auto *a = tb[SMBDIRECT_A_STATS_TOP_MODULE])
		if ((ec = parse_numbers(a, stats_table, stats_policy, s.module.emplace())))
			return ec;
	/* The device nests repeat: walk them all (the index keeps the last). */
	nlattr *a;
	int rem;
	nlmsg_for_each_attr(a, const_cast<nlmsghdr *>(msg), GENL_HDRLEN, rem)
	{
		if (nla_type(a) != SMBDIRECT_A_STATS_TOP_DEVICE)
			continue;
		std::array<nlattr *, SMBDIRECT_A_DEV_MAX + 1> dt{};
		rc = nla_parse_nested(dt.data(), SMBDIRECT_A_DEV_MAX, a,
				      const_cast<nla_policy *>(dev_policy.data()));
		if (rc < 0)
			return genl::from_nl(rc);
		DeviceStats d;
		if (dt[SMBDIRECT_A_DEV_NAME])
			d.name = string_of(dt[SMBDIRECT_A_DEV_NAME]);
		if (dt[SMBDIRECT_A_DEV_INDEX])
			d.index = nla_get_u32(dt[SMBDIRECT_A_DEV_INDEX]);
		if (dt[SMBDIRECT_A_DEV_STATS])
			if ((ec = parse_numbers(dt[SMBDIRECT_A_DEV_STATS], stats_table,
						stats_policy, d.stats.emplace())))
				return ec;
		s.devices.push_back(std::move(d));
	}
	out = std::move(s);
	return {};
}

std::string state_name(unsigned state)
{
	switch (state) {
	case SMBDIRECT_STATE_UNCONNECTED:
		return "UNCONN";
	case SMBDIRECT_STATE_LISTENING:
		return "LISTEN";
	case SMBDIRECT_STATE_CONNECTING:
		return "CONNECTING";
	case SMBDIRECT_STATE_CONNECTED:
		return "ESTAB";
	case SMBDIRECT_STATE_CLOSED:
		return "CLOSED";
	default:
		return "STATE-" + std::to_string(state);
	}
}

std::string type_name(unsigned type)
{
	switch (type) {
	case SOCK_STREAM:
		return "stream";
	case SOCK_SEQPACKET:
		return "seqpacket";
	default:
		return std::to_string(type);
	}
}

std::string transport_key(unsigned transport)
{
	switch (transport) {
	case SMBDIRECT_TRANSPORT_IB:
		return "ib";
	case SMBDIRECT_TRANSPORT_ROCE:
		return "roce";
	case SMBDIRECT_TRANSPORT_IWARP:
		return "iwarp";
	default:
		return "unknown-" + std::to_string(transport);
	}
}

std::string transport_label(unsigned transport)
{
	switch (transport) {
	case SMBDIRECT_TRANSPORT_IB:
		return "InfiniBand";
	case SMBDIRECT_TRANSPORT_ROCE:
		return "RoCE";
	case SMBDIRECT_TRANSPORT_IWARP:
		return "iWARP";
	default:
		return "unknown-" + std::to_string(transport);
	}
}

std::string version_text(uint64_t version)
{
	return std::to_string(version >> 8 & 0xff) + "." + std::to_string(version & 0xff);
}

std::string address_text(const Address &a)
{
	char buf[INET6_ADDRSTRLEN] = "?";

	if (a.family == AF_INET || a.family == AF_INET6)
		inet_ntop(a.family, a.bytes.data(), buf, sizeof(buf));
	return buf;
}

std::string endpoint_text(const std::optional<uint16_t> &addr_family,
			  const std::optional<Address> &addr, const std::optional<uint16_t> &port)
{
	uint16_t family = addr ? addr->family : addr_family.value_or(0);
	std::string host;

	if (addr)
		host = address_text(*addr);
	else if (family == AF_INET)
		host = "0.0.0.0";
	else if (family == AF_INET6)
		host = "::";
	else
		host = "*";
	if (family == AF_INET6)
		host = "[" + host + "]";
	/* Port 0 of an unbound or unconnected end reads as ss's "*". */
	return host + ":" + (port && *port ? std::to_string(*port) : "*");
}

namespace
{

void write_numbers(JsonWriter &j, std::string_view key, const Numbers &n,
		   std::span<const Field> fields, bool version_as_text = false)
{
	j.key(key).begin_object();
	for (const auto &f : fields) {
		auto v = n.get(f.attr);
		if (!v)
			continue;
		if (version_as_text && f.attr == SMBDIRECT_A_PARAMS_VERSION)
			j.member(f.key, version_text(*v));
		else
			j.member(f.key, static_cast<unsigned long long>(*v));
	}
	j.end_object();
}

} // namespace

void write_json(JsonWriter &j, const SockInfo &s, const std::vector<ProcessRef> *users)
{
	j.begin_object();
	if (s.state)
		j.member("state", state_name(*s.state));
	if (s.type)
		j.member("type", type_name(*s.type));
	if (s.family)
		j.member("family", static_cast<unsigned>(*s.family));
	if (s.uid)
		j.member("uid", static_cast<unsigned>(*s.uid));
	if (s.inode)
		j.member("inode", static_cast<unsigned long long>(*s.inode));
	if (s.cookie)
		j.member("cookie", static_cast<unsigned long long>(*s.cookie));
	if (s.addr_family)
		j.member("addr_family", static_cast<unsigned>(*s.addr_family));
	if (s.local_addr)
		j.member("local_addr", address_text(*s.local_addr));
	if (s.local_port)
		j.member("local_port", static_cast<unsigned>(*s.local_port));
	if (s.peer_addr)
		j.member("peer_addr", address_text(*s.peer_addr));
	if (s.peer_port)
		j.member("peer_port", static_cast<unsigned>(*s.peer_port));
	if (s.dev_name)
		j.member("dev", *s.dev_name);
	if (s.dev_port)
		j.member("dev_port", static_cast<unsigned>(*s.dev_port));
	if (s.transport)
		j.member("transport", transport_key(*s.transport));
	if (s.params)
		write_numbers(j, "params", *s.params, params_table, true);
	if (s.credits)
		write_numbers(j, "credits", *s.credits, credits_table);
	if (s.rx_queued)
		j.member("rx_queued", static_cast<unsigned>(*s.rx_queued));
	if (s.tx_queued)
		j.member("tx_queued", static_cast<unsigned>(*s.tx_queued));
	if (s.regs)
		j.member("registrations", static_cast<unsigned>(*s.regs));
	if (s.pinned_bytes)
		j.member("pinned_bytes", static_cast<unsigned long long>(*s.pinned_bytes));
	if (s.stats)
		write_numbers(j, "stats", *s.stats, stats_table);
	if (s.accept)
		write_numbers(j, "accept", *s.accept, accept_table);
	if (users) {
		j.key("users").begin_array();
		for (const auto &u : *users)
			j.begin_object()
				.member("comm", u.comm)
				.member("pid", u.pid)
				.member("fd", u.fd)
				.end_object();
		j.end_array();
	}
	j.end_object();
}

void write_json(JsonWriter &j, const StatsInfo &s)
{
	j.begin_object();
	if (s.module)
		write_numbers(j, "module", *s.module, stats_table);
	j.key("devices").begin_array();
	for (const auto &d : s.devices) {
		j.begin_object();
		if (d.name)
			j.member("name", *d.name);
		if (d.index)
			j.member("index", static_cast<unsigned>(*d.index));
		if (d.stats)
			write_numbers(j, "stats", *d.stats, stats_table);
		j.end_object();
	}
	j.end_array().end_object();
}

std::vector<std::string> table_cells(const SockInfo &s)
{
	auto num = [](const auto &v) { return v ? std::to_string(*v) : std::string("-"); };
	std::string recv_q = num(s.rx_queued), send_q = num(s.tx_queued);

	if (s.state == SMBDIRECT_STATE_LISTENING && s.accept) {
		recv_q = num(s.accept->get(SMBDIRECT_A_ACCEPT_READY));
		send_q = num(s.accept->get(SMBDIRECT_A_ACCEPT_BACKLOG));
	}
	std::string dev = s.dev_name ? *s.dev_name : "-";
	if (s.dev_name && s.dev_port)
		dev += "/" + std::to_string(*s.dev_port);
	return { s.state ? state_name(*s.state) : "-",
		 recv_q,
		 send_q,
		 endpoint_text(s.addr_family, s.local_addr, s.local_port),
		 endpoint_text(s.addr_family, s.peer_addr, s.peer_port),
		 dev,
		 s.transport ? transport_label(*s.transport) : "-" };
}

namespace
{

std::string numbers_line(std::string_view prefix, const Numbers &n, std::span<const Field> fields,
			 std::string_view group = {})
{
	std::string line;
	for (const auto &f : fields) {
		if (!group.empty() && f.group != group)
			continue;
		auto v = n.get(f.attr);
		if (!v)
			continue;
		line += line.empty() ? "" : " ";
		line += std::string(f.key) + ":" +
			(f.attr == SMBDIRECT_A_PARAMS_VERSION && fields.data() == params_table
				 ? version_text(*v)
				 : std::to_string(*v));
	}
	return line.empty() ? line : std::string(prefix) + ": " + line;
}

void add(std::vector<std::string> &lines, std::string line)
{
	if (!line.empty())
		lines.push_back(std::move(line));
}

} // namespace

std::vector<std::string> extended_lines(const SockInfo &s)
{
	std::vector<std::string> lines;
	std::vector<std::string> words;
	auto word = [&words](std::string_view k, const auto &v) {
		if (v)
			words.push_back(std::string(k) + ":" + std::to_string(*v));
	};
	auto flush = [&] {
		std::string l;
		for (const auto &w : words)
			l += (l.empty() ? "" : " ") + w;
		add(lines, l);
		words.clear();
	};

	word("uid", s.uid);
	word("ino", s.inode);
	word("cookie", s.cookie);
	word("family", s.family);
	if (s.type)
		words.push_back("type:" + type_name(*s.type));
	flush();
	if (s.params)
		add(lines, numbers_line("params", *s.params, params_table));
	if (s.credits)
		add(lines, numbers_line("credits", *s.credits, credits_table));
	word("rx_queued", s.rx_queued);
	word("tx_queued", s.tx_queued);
	word("registrations", s.regs);
	word("pinned_bytes", s.pinned_bytes);
	flush();
	if (s.accept)
		add(lines, numbers_line("accept", *s.accept, accept_table));
	if (s.stats)
		for (auto g : { g_msgs, g_rdma, g_err, g_conn })
			add(lines, numbers_line(g, *s.stats, stats_table, g));
	return lines;
}

std::string stats_text(const StatsInfo &s)
{
	std::vector<std::string> header{ "total" };
	std::vector<const Numbers *> columns{ s.module ? &*s.module : nullptr };
	for (const auto &d : s.devices) {
		header.push_back(d.name	   ? *d.name
				 : d.index ? "dev#" + std::to_string(*d.index)
					   : "dev");
		columns.push_back(d.stats ? &*d.stats : nullptr);
	}

	struct Row {
		std::string label;
		std::vector<std::string> cells; /* empty: a section title */
	};
	std::vector<Row> rows;
	const std::pair<std::string_view, std::string_view> sections[] = {
		{ g_conn, "Connections" },
		{ g_msgs, "Messages" },
		{ g_rdma, "RDMA" },
		{ g_err, "Errors" },
	};
	for (const auto &[group, title] : sections) {
		rows.push_back({ std::string(title), {} });
		for (const auto &f : stats_table) {
			if (f.group != group)
				continue;
			Row r{ "  " + std::string(f.label), {} };
			for (const Numbers *n : columns) {
				auto v = n ? n->get(f.attr) : std::nullopt;
				r.cells.push_back(v ? std::to_string(*v) : "-");
			}
			rows.push_back(std::move(r));
		}
	}

	size_t label_width = 0;
	std::vector<size_t> width;
	for (const auto &h : header)
		width.push_back(h.size());
	for (const auto &r : rows) {
		if (r.cells.empty())
			continue;
		label_width = std::max(label_width, r.label.size());
		for (size_t c = 0; c < r.cells.size(); c++)
			width[c] = std::max(width[c], r.cells[c].size());
	}

	auto line = [&](const std::string &label, const std::vector<std::string> &cells) {
		std::string l = label + std::string(label_width - label.size(), ' ');
		for (size_t c = 0; c < cells.size(); c++)
			l += std::string(width[c] + 2 - cells[c].size(), ' ') + cells[c];
		return l + "\n";
	};
	std::string out = line("", header);
	for (const auto &r : rows)
		out += r.cells.empty() ? r.label + "\n" : line(r.label, r.cells);
	return out;
}

} // namespace sd::tool::nl
