// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The negative cache and the table of pending connects (see
 * connect_memory.hpp): pure code over fixed arrays.
 */
#include "connect_memory.hpp"

#include <cstring>
#include <netinet/in.h>

namespace sd::preload {

bool same_host(const Endpoint &a, const Endpoint &b)
{
	std::size_t n = a.family == AF_INET ? 4 : 16;
	return a.family == b.family && a.scope_id == b.scope_id &&
	       std::memcmp(a.addr.data(), b.addr.data(), n) == 0;
}

bool NegativeCache::cacheable(ErrorClass why)
{
	return why == ErrorClass::no_rdma_path || why == ErrorClass::refused ||
	       why == ErrorClass::timed_out;
}

void NegativeCache::remember(const Endpoint &peer, ErrorClass why, uint64_t now_ms, unsigned ttl_s)
{
	if (!ttl_s || !cacheable(why))
		return;
	Entry e;
	e.used = true;
	e.peer = peer;
	e.peer.flowinfo = 0;
	if (why == ErrorClass::no_rdma_path)
		e.peer.port = 0;
	e.why = why;
	e.added_ms = now_ms;
	e.expires_ms = now_ms + uint64_t{ttl_s} * 1000;

	Entry *slot = nullptr;
	for (Entry &x : entries_) {
		/* The same key: renewed in place. */
		if (x.used && same_host(x.peer, e.peer) && x.peer.port == e.peer.port) {
			slot = &x;
			break;
		}
	}
	for (std::size_t i = 0; !slot && i < entries_.size(); i++)
		if (!entries_[i].used || entries_[i].expires_ms <= now_ms)
			slot = &entries_[i];
	if (!slot) {
		slot = &entries_[0];
		for (Entry &x : entries_)
			if (x.added_ms < slot->added_ms)
				slot = &x;
	}
	*slot = e;
}

std::optional<NegativeCache::Hit> NegativeCache::lookup(const Endpoint &peer, uint64_t now_ms) const
{
	const Entry *best = nullptr;
	for (const Entry &x : entries_) {
		if (!x.used || x.expires_ms <= now_ms || !same_host(x.peer, peer))
			continue;
		if (x.peer.port && x.peer.port != peer.port)
			continue;
		if (!best || x.expires_ms > best->expires_ms)
			best = &x;
	}
	if (!best)
		return std::nullopt;
	uint64_t left_ms = best->expires_ms - now_ms;
	Hit h;
	h.why = best->why;
	h.seconds_left = static_cast<unsigned>((left_ms + 999) / 1000);
	return h;
}

void NegativeCache::forget(const Endpoint &peer)
{
	for (Entry &x : entries_)
		if (x.used && same_host(x.peer, peer) && (!x.peer.port || x.peer.port == peer.port))
			x.used = false;
}

std::size_t NegativeCache::live(uint64_t now_ms) const
{
	std::size_t n = 0;
	for (const Entry &x : entries_)
		n += x.used && x.expires_ms > now_ms;
	return n;
}

std::optional<PendingConnect> PendingConnects::add(const PendingConnect &e)
{
	std::optional<PendingConnect> pushed;
	std::size_t at = capacity;
	for (std::size_t i = 0; i < capacity; i++) {
		/* One entry per fd: an older one of the same number is stale. */
		if (used_[i] && entries_[i].fd == e.fd) {
			pushed = entries_[i];
			at = i;
			break;
		}
	}
	for (std::size_t i = 0; at == capacity && i < capacity; i++)
		if (!used_[i])
			at = i;
	if (at == capacity) {
		at = 0;
		for (std::size_t i = 1; i < capacity; i++)
			if (entries_[i].started_ms < entries_[at].started_ms)
				at = i;
		pushed = entries_[at];
	}
	if (!used_[at])
		count_++;
	used_[at] = true;
	entries_[at] = e;
	return pushed;
}

bool PendingConnects::has_fd(int fd) const
{
	for (std::size_t i = 0; i < capacity; i++)
		if (used_[i] && entries_[i].fd == fd)
			return true;
	return false;
}

std::optional<PendingConnect> PendingConnects::take(int fd, uint64_t dev, uint64_t ino,
						    std::optional<PendingConnect> *stale)
{
	for (std::size_t i = 0; i < capacity; i++) {
		if (!used_[i] || entries_[i].fd != fd)
			continue;
		std::optional<PendingConnect> e = remove_slot(i);
		if (e->dev == dev && e->ino == ino)
			return e;
		if (stale)
			*stale = e;
		return std::nullopt;
	}
	return std::nullopt;
}

std::optional<PendingConnect> PendingConnects::find(int fd, uint64_t dev, uint64_t ino) const
{
	for (std::size_t i = 0; i < capacity; i++)
		if (used_[i] && entries_[i].fd == fd && entries_[i].dev == dev &&
		    entries_[i].ino == ino)
			return entries_[i];
	return std::nullopt;
}

const PendingConnect *PendingConnects::slot(std::size_t i) const
{
	return i < capacity && used_[i] ? &entries_[i] : nullptr;
}

std::optional<PendingConnect> PendingConnects::remove_slot(std::size_t i)
{
	if (i >= capacity || !used_[i])
		return std::nullopt;
	used_[i] = false;
	count_--;
	return entries_[i];
}

} // namespace sd::preload
