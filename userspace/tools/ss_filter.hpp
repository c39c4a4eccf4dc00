// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What `smbdirect ss` selects, parsed from its options and from ss(8)-like
 * expression words:
 *
 *   src ADDR[:PORT]   dst ADDR[:PORT]   sport PORT   dport PORT   dev NAME
 *
 * ADDR[:PORT] forms: 10.77.0.1, 10.77.0.1:445, 10.77.0.0/24, 10.77.0.0/24:445,
 * fd77::2, fd77::/16, [fd77::2], [fd77::2]:445, [fd77::/16]:445, *:445,
 * :445, * ; PORT: 445 or :445 (sport/dport also take ss's "= :445",
 * "== 445", "eq 445"). The same keyword given twice means either; different
 * keywords must all hold. An IPv4 ADDR also matches the IPv4-mapped IPv6
 * address (::ffff:10.77.0.1) of a dual-stack socket.
 */
#ifndef SMBDIRECT_TOOLS_SS_FILTER_HPP
#define SMBDIRECT_TOOLS_SS_FILTER_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "genl_family.hpp"

namespace sd::tool
{

struct AddrMatch {
	std::optional<nl::Address> addr; /* none: any address */
	unsigned prefix = 0;		 /* bits of addr compared */
	std::optional<uint16_t> port;	 /* none: any port */
};

/* ADDR[:PORT] as above; nullopt with a message in error. */
std::optional<AddrMatch> parse_addr_match(std::string_view text, std::string &error);
/* PORT or :PORT, 1-65535. */
std::optional<uint16_t> parse_port(std::string_view text, std::string &error);

/* Does the address and port of one end of a socket match? */
bool addr_matches(const AddrMatch &m, const std::optional<nl::Address> &addr,
		  const std::optional<uint16_t> &port);

struct SockFilter {
	std::vector<AddrMatch> src, dst;
	std::vector<uint16_t> sport, dport;
	std::optional<std::string> dev; /* the kernel filters by it too */
	uint16_t addr_family = 0;	/* AF_INET, AF_INET6; 0 either */
	uint32_t state_mask = ~0U;	/* bit (1 << SMBDIRECT_STATE_*) per state shown */

	bool matches(const nl::SockInfo &s) const;
};

/*
 * Adds the expression words (src, dst, sport, dport, dev and their
 * arguments) to f; false with a message in error when they do not parse.
 */
bool parse_expression(const std::vector<std::string> &words, SockFilter &f, std::string &error);

} // namespace sd::tool

#endif
