// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ss_filter.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>

#include "units.hpp"

namespace sd::tool
{

namespace
{

const std::string forms = "ADDR, ADDR/PREFIX, ADDR:PORT, [ADDR6]:PORT, *:PORT or :PORT";

/* ADDR or ADDR/PREFIX of the given family (0: IPv4 or IPv6). */
bool parse_host(std::string_view text, AddrMatch &m)
{
	std::string_view host = text, prefix;
	size_t slash = text.find('/');
	if (slash != std::string_view::npos) {
		host = text.substr(0, slash);
		prefix = text.substr(slash + 1);
	}
	std::string h(host);
	nl::Address a;
	if (inet_pton(AF_INET, h.c_str(), a.bytes.data()) == 1)
		a.family = AF_INET;
	else if (inet_pton(AF_INET6, h.c_str(), a.bytes.data()) == 1)
		a.family = AF_INET6;
	else
		return false;
	unsigned bits = a.family == AF_INET ? 32 : 128;
	m.prefix = bits;
	if (slash != std::string_view::npos) {
		auto p = parse_uint(prefix, 0, bits);
		if (!p)
			return false;
		m.prefix = static_cast<unsigned>(*p);
	}
	m.addr = a;
	return true;
}

bool port_part(std::string_view text, AddrMatch &m)
{
	if (text == "*")
		return true;
	auto p = parse_uint(text, 1, 65535);
	if (!p)
		return false;
	m.port = static_cast<uint16_t>(*p);
	return true;
}

bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	size_t whole = bits / 8;
	if (std::memcmp(a, b, whole))
		return false;
	if (bits % 8 == 0)
		return true;
	uint8_t mask = static_cast<uint8_t>(0xff << (8 - bits % 8));
	return (a[whole] & mask) == (b[whole] & mask);
}

bool v4_mapped(const nl::Address &a)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	return a.family == AF_INET6 && !std::memcmp(a.bytes.data(), prefix, sizeof(prefix));
}

} // namespace

std::optional<AddrMatch> parse_addr_match(std::string_view text, std::string &error)
{
	AddrMatch m;
	bool ok;

	if (text == "*" || text == "*:*") {
		ok = true;
	} else if (text.starts_with('[')) {
		size_t close = text.find(']');
		ok = close != std::string_view::npos && parse_host(text.substr(1, close - 1), m) &&
		     m.addr->family == AF_INET6;
		std::string_view rest =
			close == std::string_view::npos ? "" : text.substr(close + 1);
		if (ok && !rest.empty())
			ok = rest.starts_with(':') && port_part(rest.substr(1), m);
	} else if (std::count(text.begin(), text.end(), ':') >= 2) {
		ok = parse_host(text, m); /* bare IPv6: no port */
	} else {
		size_t colon = text.rfind(':');
		std::string_view host = text.substr(0, colon);
		ok = true;
		if (colon != std::string_view::npos)
			ok = port_part(text.substr(colon + 1), m);
		if (ok && host != "*" && !host.empty())
			ok = parse_host(host, m) && m.addr->family == AF_INET;
		if (ok && host.empty() && colon == std::string_view::npos)
			ok = false;
	}
	if (!ok) {
		error = "'" + std::string(text) + "' is not an address (" + forms + ")";
		return std::nullopt;
	}
	return m;
}

std::optional<uint16_t> parse_port(std::string_view text, std::string &error)
{
	std::string_view digits = text.starts_with(':') ? text.substr(1) : text;
	auto p = parse_uint(digits, 1, 65535);
	if (!p) {
		error = "'" + std::string(text) + "' is not a port number (1-65535)";
		return std::nullopt;
	}
	return static_cast<uint16_t>(*p);
}

bool addr_matches(const AddrMatch &m, const std::optional<nl::Address> &addr,
		  const std::optional<uint16_t> &port)
{
	if (m.port && (!port || *port != *m.port))
		return false;
	if (!m.addr)
		return true;
	if (!addr)
		return false;
	const uint8_t *have = addr->bytes.data();
	uint16_t family = addr->family;
	if (m.addr->family == AF_INET && v4_mapped(*addr)) {
		have += 12;
		family = AF_INET;
	}
	return family == m.addr->family && prefix_equal(have, m.addr->bytes.data(), m.prefix);
}

bool SockFilter::matches(const nl::SockInfo &s) const
{
	if (s.state && *s.state < 32 && !(state_mask & 1U << *s.state))
		return false;
	if (addr_family) {
		uint16_t fam = s.local_addr ? s.local_addr->family : s.addr_family.value_or(0);
		if (fam != addr_family)
			return false;
	}
	if (dev && s.dev_name != *dev)
		return false;
	auto any = [](const auto &list, auto pred) {
		if (list.empty())
			return true;
		for (const auto &x : list)
			if (pred(x))
				return true;
		return false;
	};
	return any(src,
		   [&](const AddrMatch &m) {
			   return addr_matches(m, s.local_addr, s.local_port);
		   }) &&
	       any(dst,
		   [&](const AddrMatch &m) { return addr_matches(m, s.peer_addr, s.peer_port); }) &&
	       any(sport, [&](uint16_t p) { return s.local_port == p; }) &&
	       any(dport, [&](uint16_t p) { return s.peer_port == p; });
}

bool parse_expression(const std::vector<std::string> &words, SockFilter &f, std::string &error)
{
	for (size_t i = 0; i < words.size(); i++) {
		const std::string &w = words[i];
		if (w != "src" && w != "dst" && w != "sport" && w != "dport" && w != "dev") {
			error = "unknown filter word '" + w + "' (src, dst, sport, dport, dev)";
			return false;
		}
		if (i + 1 >= words.size()) {
			error = "'" + w + "' needs a value";
			return false;
		}
		std::string v = words[++i];
		if ((w == "sport" || w == "dport") && (v == "=" || v == "==" || v == "eq")) {
			if (i + 1 >= words.size()) {
				error = "'" + w + " " + v + "' needs a port";
				return false;
			}
			v = words[++i];
		}
		if (w == "dev") {
			if (f.dev && *f.dev != v) {
				error = "one device at a time ('" + *f.dev + "' and '" + v + "')";
				return false;
			}
			f.dev = v;
			continue;
		}
		if (w == "src" || w == "dst") {
			auto m = parse_addr_match(v, error);
			if (!m)
				return false;
			(w == "src" ? f.src : f.dst).push_back(*m);
			continue;
		}
		auto p = parse_port(v, error);
		if (!p)
			return false;
		(w == "sport" ? f.sport : f.dport).push_back(*p);
	}
	return true;
}

} // namespace sd::tool
