// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The af_smbdirect generic netlink family (<linux/smbdirect_genl.h>) as
 * the tool sees it: what a SOCK_GET reply and a STATS_GET reply hold,
 * parsed with libnl's policies (a malformed attribute is EINVAL, an
 * attribute this tool does not know is skipped), the names every
 * attribute has in --json (the attribute's name in snake_case), and the
 * text forms ss and stats print.
 */
#ifndef SMBDIRECT_TOOLS_GENL_FAMILY_HPP
#define SMBDIRECT_TOOLS_GENL_FAMILY_HPP

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <linux/smbdirect_genl.h>

struct nlattr;
struct nlmsghdr;

namespace sd::tool
{
class JsonWriter;
}

namespace sd::tool::nl
{

/* One attribute of a nest of numbers (params, credits, stats, accept). */
struct Field {
	uint16_t attr;
	std::string_view key;	/* --json name */
	uint8_t bytes;		/* 4 (u32) or 8 (u64) */
	std::string_view label; /* `smbdirect stats`'s row label; empty: none */
	std::string_view group; /* the -e line or the stats section it belongs to */
};

std::span<const Field> params_fields();
std::span<const Field> credits_fields();
std::span<const Field> stats_fields();
std::span<const Field> accept_fields();

/* The attributes of one nest that were present, by attribute number. */
class Numbers {
    public:
	std::optional<uint64_t> get(uint16_t attr) const
	{
		return attr < values_.size() ? values_[attr] : std::nullopt;
	}
	void set(uint16_t attr, uint64_t v)
	{
		if (attr >= values_.size())
			values_.resize(attr + 1);
		values_[attr] = v;
	}

    private:
	std::vector<std::optional<uint64_t>> values_;
};

struct Address {
	uint16_t family = 0; /* AF_INET, AF_INET6 */
	std::array<uint8_t, 16> bytes{};
};

/* One SMBDIRECT_CMD_SOCK_GET reply: only what the kernel sent is set. */
struct SockInfo {
	std::optional<uint8_t> state, type, transport;
	std::optional<uint16_t> family, addr_family, local_port, peer_port;
	std::optional<uint32_t> uid, dev_port, rx_queued, tx_queued, regs;
	std::optional<uint64_t> inode, cookie, pinned_bytes;
	std::optional<Address> local_addr, peer_addr;
	std::optional<std::string> dev_name;
	std::optional<Numbers> params, credits, stats, accept;
};

struct DeviceStats {
	std::optional<std::string> name;
	std::optional<uint32_t> index;
	std::optional<Numbers> stats;
};

/* One SMBDIRECT_CMD_STATS_GET reply. */
struct StatsInfo {
	std::optional<Numbers> module;
	std::vector<DeviceStats> devices;
};

/* A SOCK_GET reply message (generic netlink header included). */
std::error_code parse_sock(const nlmsghdr *msg, SockInfo &out);
/* A STATS_GET reply message. */
std::error_code parse_stats(const nlmsghdr *msg, StatsInfo &out);

/* "UNCONN", "LISTEN", "CONNECTING", "ESTAB", "CLOSED"; "STATE-N" otherwise. */
std::string state_name(unsigned state);
/* "stream", "seqpacket"; the number otherwise. */
std::string type_name(unsigned type);
/* --json: "ib", "roce", "iwarp"; "unknown-N" otherwise. */
std::string transport_key(unsigned transport);
/* Columns: "InfiniBand", "RoCE", "iWARP". */
std::string transport_label(unsigned transport);
/* "1.0" for 0x0100. */
std::string version_text(uint64_t version);

/* "10.77.0.1", "fd77::2" (no brackets); "?" for a family we do not know. */
std::string address_text(const Address &a);
/*
 * ss's column: "10.77.0.1:7000", "[fd77::2]:7000"; no port known: "*";
 * no address: 0.0.0.0 / [::] for the socket's address family, or "*".
 */
std::string endpoint_text(const std::optional<uint16_t> &addr_family,
			  const std::optional<Address> &addr, const std::optional<uint16_t> &port);

/* A process holding a socket, as `ss -p` shows it. */
struct ProcessRef {
	std::string comm;
	int pid = 0;
	int fd = 0;
};

/*
 * The socket as a JSON object: every attribute present, by its name;
 * users (when not null) as "users": [{"comm", "pid", "fd"}...].
 */
void write_json(JsonWriter &j, const SockInfo &s, const std::vector<ProcessRef> *users);
/* {"module": {...}, "devices": [{"name", "index", "stats": {...}}...]} */
void write_json(JsonWriter &j, const StatsInfo &s);

/*
 * The ss table's cells: State, Recv-Q, Send-Q (a listener's: connections
 * ready to accept and the backlog, as ss shows TCP listeners), Local
 * Address:Port, Peer Address:Port, Dev (name/port), Transport.
 */
std::vector<std::string> table_cells(const SockInfo &s);
/* The -e lines under a socket, each without indentation or newline. */
std::vector<std::string> extended_lines(const SockInfo &s);

/* `smbdirect stats`'s text: sections of labelled rows, a column per device. */
std::string stats_text(const StatsInfo &s);

} // namespace sd::tool::nl

#endif
