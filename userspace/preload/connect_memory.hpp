// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the preload remembers about connects, per process, in fixed-size
 * tables (no allocation in an interposed call). Pure: the caller passes the
 * time and does the system calls; interpose.cpp holds one of each under a
 * mutex.
 *
 *   NegativeCache     peers whose SMB-Direct attempt failed in a way that
 *                     will fail again soon: the next connect to them goes
 *                     to TCP at once instead of paying the attempt again
 *   PendingConnects   non-blocking connects whose SMB-Direct attempt is
 *                     under way on the program's fd, with the program's TCP
 *                     socket kept aside to fall back on
 */
#ifndef SMBDIRECT_PRELOAD_CONNECT_MEMORY_HPP
#define SMBDIRECT_PRELOAD_CONNECT_MEMORY_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sys/socket.h>

#include "decision.hpp"

namespace sd::preload {

/*
 * Bounded (capacity entries, the oldest replaced), expiring (the TTL given
 * at insertion). A peer without an RDMA path (no RDMA device for its
 * address or route) is remembered by address, for every port; a refusal or
 * a timeout by address and port (another port of that host may have an
 * SMB-Direct listener). Other failures (a broken negotiation, no memory, a
 * signal) say nothing about the next attempt and are not remembered.
 */
class NegativeCache {
    public:
	static constexpr std::size_t capacity = 64;

	struct Hit {
		ErrorClass why = ErrorClass::other;
		unsigned seconds_left = 0; /* rounded up: never 0 for a live entry */
	};

	/* Whether a failure of this class is remembered. */
	[[nodiscard]] static bool cacheable(ErrorClass why);

	/* Remembers peer until now_ms + ttl_s; ttl_s 0 or an uncacheable class: nothing. */
	void remember(const Endpoint &peer, ErrorClass why, uint64_t now_ms, unsigned ttl_s);
	/* A live entry covering peer (its address, and its port where keyed so). */
	[[nodiscard]] std::optional<Hit> lookup(const Endpoint &peer, uint64_t now_ms) const;
	/* peer connected over SMB-Direct: drop what was said about it. */
	void forget(const Endpoint &peer);
	[[nodiscard]] std::size_t live(uint64_t now_ms) const;

    private:
	struct Entry {
		bool used = false;
		Endpoint peer; /* port 0: every port of the address */
		ErrorClass why = ErrorClass::other;
		uint64_t added_ms = 0;
		uint64_t expires_ms = 0;
	};
	std::array<Entry, capacity> entries_{};
};

/* The same host: family, address bytes and IPv6 scope. */
[[nodiscard]] bool same_host(const Endpoint &a, const Endpoint &b);

/*
 * A non-blocking connect whose SMB-Direct attempt runs on the program's fd.
 * The entry is valid only while fd still holds that SMB-Direct socket
 * (dev, ino of fstat): a closed and reused fd number never matches.
 */
struct PendingConnect {
	int fd = -1;
	uint64_t dev = 0;
	uint64_t ino = 0;
	int tcp_fd = -1; /* the program's own TCP socket, kept aside (CLOEXEC) */
	struct sockaddr_storage addr = {}; /* what the program passed to connect */
	socklen_t addr_len = 0;
	Endpoint target; /* where SMB-Direct connects (IPv4-mapped unmapped) */
	uint64_t started_ms = 0;
};

class PendingConnects {
    public:
	static constexpr std::size_t capacity = 64;

	/*
	 * Adds e. When the table is full the oldest entry is pushed out and
	 * returned: the caller closes its tcp_fd (that connect can no longer
	 * fall back).
	 */
	[[nodiscard]] std::optional<PendingConnect> add(const PendingConnect &e);
	/* Whether fd has an entry (any inode): the cheap test before an fstat. */
	[[nodiscard]] bool has_fd(int fd) const;
	/*
	 * Removes and returns fd's entry if its inode is (dev, ino). An entry
	 * of fd with another inode is stale (the fd was closed and reused): it
	 * is removed and returned in *stale for the caller to close its tcp_fd.
	 */
	[[nodiscard]] std::optional<PendingConnect> take(int fd, uint64_t dev, uint64_t ino,
							 std::optional<PendingConnect> *stale);
	/* A copy of fd's entry if its inode is (dev, ino); the entry stays. */
	[[nodiscard]] std::optional<PendingConnect> find(int fd, uint64_t dev, uint64_t ino) const;
	[[nodiscard]] std::size_t size() const
	{
		return count_;
	}
	/* Entry i (0 <= i < capacity), for sweeping; nullptr if unused. */
	[[nodiscard]] const PendingConnect *slot(std::size_t i) const;
	/* Removes entry i and returns it (sweeping). */
	[[nodiscard]] std::optional<PendingConnect> remove_slot(std::size_t i);

    private:
	std::array<PendingConnect, capacity> entries_{};
	std::array<bool, capacity> used_{};
	std::size_t count_ = 0;
};

} // namespace sd::preload

#endif
