// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Numeric host and port strings to socket addresses, without name
// resolution (no DNS, no /etc files): what a server's configuration or a
// command line gives.
#include "internal.h"

#include <arpa/inet.h>
#include <cstring>
#include <net/if.h>
#include <netinet/in.h>

using namespace sd::detail;

namespace
{

// "445" -> 445; digits only, at most 65535.
int parse_port(const char *port) noexcept
{
	if (!port || !*port)
		return -EINVAL;
	long value = 0;
	for (const char *p = port; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		value = value * 10 + (*p - '0');
		if (value > 65535)
			return -EINVAL;
	}
	return static_cast<int>(value);
}

// The scope of "fe80::1%2" or "fe80::1%eth0": an interface index.
int parse_scope(const char *scope) noexcept
{
	if (!*scope)
		return -EINVAL;
	bool numeric = true;
	long value = 0;
	for (const char *p = scope; *p; p++) {
		if (*p < '0' || *p > '9') {
			numeric = false;
			break;
		}
		value = value * 10 + (*p - '0');
		if (value > 0x7fffffff)
			return -EINVAL;
	}
	if (numeric)
		return static_cast<int>(value);
	unsigned int index = ::if_nametoindex(scope);
	return index ? static_cast<int>(index) : -ENODEV;
}

} // namespace

extern "C" int smbdirect_parse_address(const char *host, const char *port,
				       struct sockaddr_storage *addr, socklen_t *addr_len)
{
	if (!addr || !addr_len)
		return -EINVAL;
	int port_number = parse_port(port);
	if (port_number < 0)
		return port_number;
	if (!host)
		host = "::";

	char text[INET6_ADDRSTRLEN + IF_NAMESIZE + 4];
	size_t len = std::strlen(host);
	if (len == 0 || len >= sizeof(text))
		return -EINVAL;
	// "[fd00::1]" as in URLs.
	if (host[0] == '[') {
		if (len < 3 || host[len - 1] != ']')
			return -EINVAL;
		std::memcpy(text, host + 1, len - 2);
		text[len - 2] = '\0';
	} else {
		std::memcpy(text, host, len + 1);
	}

	struct sockaddr_storage out;
	std::memset(&out, 0, sizeof(out));
	auto *sin = reinterpret_cast<struct sockaddr_in *>(&out);
	if (host[0] != '[' && ::inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(static_cast<uint16_t>(port_number));
		*addr = out;
		*addr_len = sizeof(*sin);
		return 0;
	}
	auto *sin6 = reinterpret_cast<struct sockaddr_in6 *>(&out);
	char *percent = std::strchr(text, '%');
	if (percent) {
		*percent = '\0';
		int scope = parse_scope(percent + 1);
		if (scope < 0)
			return scope;
		sin6->sin6_scope_id = static_cast<uint32_t>(scope);
	}
	if (::inet_pton(AF_INET6, text, &sin6->sin6_addr) != 1)
		return -EINVAL;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(static_cast<uint16_t>(port_number));
	*addr = out;
	*addr_len = sizeof(*sin6);
	return 0;
}
