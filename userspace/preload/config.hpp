// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The configuration of libsmbdirect-preload.so and its parsing: which ports
 * are SMB ports, whether listeners are replaced, whether a client may fall
 * back to TCP, the debug switch and the bound of the SMB-Direct connect
 * attempt. `smbdirect run` writes it into the environment; the preload reads
 * it once. Pure: no getenv here, the caller passes a lookup function, so the
 * host tests feed it any environment. Header-only because run.cpp (built
 * into the smbdirect command) validates --ports with the same parser.
 *
 * Environment (documented in smbdirect-run(8)):
 *   SMBDIRECT_PORTS            "445,5445" by default; a list of ports and
 *                              ranges, "445,5445,9000-9010"
 *   SMBDIRECT_LISTEN           1: listening sockets on those ports become
 *                              SMB-Direct too (default 0: clients only)
 *   SMBDIRECT_NO_FALLBACK      1: a connect that cannot go over RDMA fails
 *                              instead of falling back to TCP
 *   SMBDIRECT_DEBUG            1: one line on stderr per decision
 *   SMBDIRECT_CONNECT_TIMEOUT  milliseconds the SMB-Direct attempt of a
 *                              connect may take before TCP is tried (5000)
 *   SMBDIRECT_INET             1: the replacements are socket(AF_INET[6],
 *                              SOCK_STREAM, IPPROTO_SMBDIRECT), upstream's
 *                              proposed shape, instead of AF_SMBDIRECT
 *   SMBDIRECT_NEGATIVE_CACHE   seconds a peer without an RDMA path (or
 *                              refusing or timing out SMB-Direct) goes
 *                              straight to TCP (60; 0 = no cache)
 * Booleans accept 1/0, yes/no, true/false, on/off (empty = 0).
 */
#ifndef SMBDIRECT_PRELOAD_CONFIG_HPP
#define SMBDIRECT_PRELOAD_CONFIG_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

namespace sd::preload {

inline constexpr const char *env_ports = "SMBDIRECT_PORTS";
inline constexpr const char *env_listen = "SMBDIRECT_LISTEN";
inline constexpr const char *env_no_fallback = "SMBDIRECT_NO_FALLBACK";
inline constexpr const char *env_debug = "SMBDIRECT_DEBUG";
inline constexpr const char *env_connect_timeout = "SMBDIRECT_CONNECT_TIMEOUT";
inline constexpr const char *env_inet = "SMBDIRECT_INET";
inline constexpr const char *env_negative_cache = "SMBDIRECT_NEGATIVE_CACHE";

inline constexpr std::string_view default_ports = "445,5445";
inline constexpr unsigned default_connect_timeout_ms = 5000;
/* An hour: beyond that a "bound" bounds nothing. */
inline constexpr unsigned max_connect_timeout_ms = 3600 * 1000;
inline constexpr unsigned default_negative_cache_s = 60;
/* A day: a route that appears later is tried again at least that often. */
inline constexpr unsigned max_negative_cache_s = 86400;

struct PortRange {
	uint16_t first = 0;
	uint16_t last = 0;
};

/* A fixed-size list: the preload allocates nothing. */
struct PortList {
	static constexpr std::size_t max_ranges = 32;
	std::array<PortRange, max_ranges> ranges{};
	std::size_t count = 0;

	[[nodiscard]] bool contains(uint16_t port) const
	{
		for (std::size_t i = 0; i < count; i++)
			if (port >= ranges[i].first && port <= ranges[i].last)
				return true;
		return false;
	}
};

/* string_view::substr without its exception (the preload has no runtime for one). */
[[nodiscard]] constexpr std::string_view head(std::string_view s, std::size_t n)
{
	return std::string_view(s.data(), n < s.size() ? n : s.size());
}

[[nodiscard]] constexpr std::string_view tail(std::string_view s, std::size_t from)
{
	return from < s.size() ? std::string_view(s.data() + from, s.size() - from)
			       : std::string_view{};
}

/* Parse results: error is nullptr on success, else a sentence fragment. */
struct PortsResult {
	PortList ports;
	const char *error = nullptr;
};

struct UnsignedResult {
	unsigned long value = 0;
	const char *error = nullptr;
};

/* Decimal digits only, no sign, no blanks, at most max. */
[[nodiscard]] constexpr UnsignedResult parse_unsigned(std::string_view text, unsigned long max)
{
	UnsignedResult r;
	if (text.empty())
		return {0, "empty number"};
	for (char c : text) {
		if (c < '0' || c > '9')
			return {0, "not a decimal number"};
		r.value = r.value * 10 + static_cast<unsigned long>(c - '0');
		if (r.value > max)
			return {0, "number out of range"};
	}
	return r;
}

/* "445,5445", "445, 5445", "9000-9010": 1..65535, at most 32 entries. */
[[nodiscard]] constexpr PortsResult parse_ports(std::string_view text)
{
	PortsResult r;
	if (text.find_first_not_of(" \t,") == std::string_view::npos)
		return {{}, "empty port list"};
	for (;;) {
		std::size_t comma = text.find(',');
		std::string_view item = head(text, comma);
		while (!item.empty() && (item.front() == ' ' || item.front() == '\t'))
			item.remove_prefix(1);
		while (!item.empty() && (item.back() == ' ' || item.back() == '\t'))
			item.remove_suffix(1);
		if (item.empty())
			return {{}, "empty entry in the port list"};
		std::size_t dash = item.find('-');
		UnsignedResult lo = parse_unsigned(head(item, dash), 65535);
		UnsignedResult hi = lo;
		if (dash != std::string_view::npos)
			hi = parse_unsigned(tail(item, dash + 1), 65535);
		if (lo.error || hi.error)
			return {{}, lo.error ? lo.error : hi.error};
		if (lo.value == 0 || hi.value == 0)
			return {{}, "port 0 is not a port"};
		if (hi.value < lo.value)
			return {{}, "a range ends below its start"};
		if (r.ports.count == PortList::max_ranges)
			return {{}, "more than 32 entries in the port list"};
		r.ports.ranges[r.ports.count++] = {static_cast<uint16_t>(lo.value),
						   static_cast<uint16_t>(hi.value)};
		if (comma == std::string_view::npos)
			return r;
		/* A comma at the end leaves an empty entry: caught above. */
		text = tail(text, comma + 1);
		if (text.empty())
			return {{}, "empty entry in the port list"};
	}
}

/* "445,5445,9000-9010" into buf (always NUL-terminated when len > 0). */
inline void format_ports(const PortList &ports, char *buf, std::size_t len)
{
	std::size_t used = 0;
	if (!len)
		return;
	buf[0] = '\0';
	for (std::size_t i = 0; i < ports.count && used < len; i++) {
		const PortRange &p = ports.ranges[i];
		int n = p.first == p.last
				? std::snprintf(buf + used, len - used, "%s%u", i ? "," : "",
						unsigned{p.first})
				: std::snprintf(buf + used, len - used, "%s%u-%u", i ? "," : "",
						unsigned{p.first}, unsigned{p.last});
		if (n < 0)
			break;
		used += static_cast<std::size_t>(n);
	}
}

struct BoolResult {
	bool value = false;
	const char *error = nullptr;
};

[[nodiscard]] constexpr BoolResult parse_bool(std::string_view text)
{
	for (std::string_view t : {"1", "yes", "true", "on"})
		if (text == t)
			return {true, nullptr};
	for (std::string_view f : {"", "0", "no", "false", "off"})
		if (text == f)
			return {false, nullptr};
	return {false, "not a boolean (1/0, yes/no, true/false, on/off)"};
}

struct Config {
	PortList ports;
	bool listen = false;
	bool fallback = true;
	bool debug = false;
	bool inet = false;
	unsigned connect_timeout_ms = default_connect_timeout_ms;
	unsigned negative_cache_s = default_negative_cache_s; /* 0: off */
	/*
	 * The first problem found. A preload cannot stop the program it
	 * runs in, so a bad configuration leaves every socket alone (and
	 * says so with SMBDIRECT_DEBUG=1).
	 */
	const char *error = nullptr;
	const char *error_variable = nullptr;

	[[nodiscard]] bool enabled() const
	{
		return error == nullptr;
	}
};

/*
 * Reads the SMBDIRECT_* variables through lookup (a getenv: returns the
 * value or nullptr when unset).
 */
template <class Lookup> [[nodiscard]] Config parse_config(Lookup &&lookup)
{
	Config c;
	auto fail = [&c](const char *variable, const char *error) {
		if (!c.error) {
			c.error = error;
			c.error_variable = variable;
		}
	};
	/* Debug first: it must work even when something else is wrong. */
	if (const char *v = lookup(env_debug)) {
		BoolResult b = parse_bool(v);
		c.debug = b.value || b.error; /* a typo in the debug switch still debugs */
		if (b.error)
			fail(env_debug, b.error);
	}
	const char *ports = lookup(env_ports);
	PortsResult p = parse_ports(ports ? std::string_view{ports} : default_ports);
	if (p.error)
		fail(env_ports, p.error);
	else
		c.ports = p.ports;
	if (const char *v = lookup(env_listen)) {
		BoolResult b = parse_bool(v);
		if (b.error)
			fail(env_listen, b.error);
		c.listen = b.value;
	}
	if (const char *v = lookup(env_no_fallback)) {
		BoolResult b = parse_bool(v);
		if (b.error)
			fail(env_no_fallback, b.error);
		c.fallback = !b.value;
	}
	if (const char *v = lookup(env_inet)) {
		BoolResult b = parse_bool(v);
		if (b.error)
			fail(env_inet, b.error);
		c.inet = b.value;
	}
	if (const char *v = lookup(env_connect_timeout)) {
		UnsignedResult t = parse_unsigned(v, max_connect_timeout_ms);
		if (!t.error && t.value == 0)
			t.error = "a timeout of 0 ms would never try SMB-Direct";
		if (t.error)
			fail(env_connect_timeout, t.error);
		else
			c.connect_timeout_ms = static_cast<unsigned>(t.value);
	}
	if (const char *v = lookup(env_negative_cache)) {
		UnsignedResult t = parse_unsigned(v, max_negative_cache_s);
		if (t.error)
			fail(env_negative_cache, t.error);
		else
			c.negative_cache_s = static_cast<unsigned>(t.value);
	}
	return c;
}

/* The number in SMBDIRECT_INET_PROTOCOL_SYSFS ("257\n"), 0 when off, or -1. */
[[nodiscard]] constexpr int parse_protocol(std::string_view text)
{
	while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
		text.remove_suffix(1);
	UnsignedResult r = parse_unsigned(text, 65535);
	return r.error ? -1 : static_cast<int>(r.value);
}

/* The number in SMBDIRECT_FAMILY_SYSFS ("23\n"), or -1. */
[[nodiscard]] constexpr int parse_family(std::string_view text)
{
	while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
		text.remove_suffix(1);
	UnsignedResult r = parse_unsigned(text, 1023);
	return r.error || r.value == 0 ? -1 : static_cast<int>(r.value);
}

} // namespace sd::preload

#endif
