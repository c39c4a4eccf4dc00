// SPDX-License-Identifier: GPL-2.0
// Test-side glue: drives one core engine through the C header only, the way
// the kernel glue will (receive buffers, send pumping, timers, delivery).
#ifndef SD_TEST_ENGINE_H
#define SD_TEST_ENGINE_H

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include <ostream>

#include "result.h"
#include "smbdirect_core.h"
#include "core_vectors.h"

// Readable failure messages: "Errc(17)" rather than a byte dump.
namespace sd
{
inline void PrintTo(Errc e, std::ostream *os)
{
	*os << "Errc(" << static_cast<int>(e) << ")";
}
} // namespace sd

inline void PrintTo(const sd_vec_case &v, std::ostream *os)
{
	*os << v.name;
}

namespace sdtest
{

using Bytes = std::vector<uint8_t>;

inline sd_core_config config(unsigned role)
{
	sd_core_config c;
	sd_core_config_default(&c, role);
	return c;
}

struct Engine {
	sd_core_conn conn{};
	sd_core_config cfg{};
	sd_core_actions last{};
	unsigned long long now = 0;
	unsigned long long timer = 0; // 0: not armed
	bool disconnected = false;
	int disconnect_reason = 0;
	int disconnect_error = 0;
	unsigned reposts_owed = 0;   // buffers the glue may post again
	std::deque<Bytes> out;	     // produced PDUs, oldest first
	std::vector<Bytes> messages; // completed received messages
	Bytes partial;		     // message being reassembled
	unsigned held = 0;	     // receive buffers holding undelivered data
	bool established = false;

	explicit Engine(const sd_core_config &c) : cfg(c)
	{
	}

	int init()
	{
		return sd_core_conn_init(&conn, &cfg);
	}

	// Applies actions the way the glue must. Delivery copies out of buf.
	void apply(const sd_core_actions &a, const uint8_t *buf = nullptr)
	{
		last = a;
		if (a.flags & SD_CORE_ACT_DELIVER) {
			if (a.deliver_flags & SD_CORE_DELIVER_FIRST)
				partial.clear();
			partial.insert(partial.end(), buf + a.deliver_offset,
				       buf + a.deliver_offset + a.deliver_length);
			if (a.deliver_flags & SD_CORE_DELIVER_LAST) {
				messages.push_back(partial);
				partial.clear();
			}
			held++;
		}
		if (a.flags & SD_CORE_ACT_REPOST)
			reposts_owed += a.repost;
		if (a.flags & SD_CORE_ACT_ARM_TIMER)
			timer = a.timer_deadline_ms;
		if (a.flags & SD_CORE_ACT_ESTABLISHED)
			established = true;
		if (a.flags & SD_CORE_ACT_DISCONNECT) {
			disconnected = true;
			disconnect_reason = a.disconnect_reason;
			disconnect_error = a.error;
		}
	}

	int post(unsigned n)
	{
		sd_core_actions a;
		int rc = sd_core_recv_posted(&conn, n, &a);
		apply(a);
		return rc;
	}

	int connected()
	{
		sd_core_actions a;
		int rc = sd_core_on_connected(&conn, now, &a);
		apply(a);
		return rc;
	}

	int recv(const Bytes &pdu)
	{
		sd_core_actions a;
		int rc = sd_core_on_recv(&conn, now, pdu.data(), static_cast<unsigned>(pdu.size()),
					 &a);
		apply(a, pdu.data());
		return rc;
	}

	int fire()
	{
		sd_core_actions a;
		int rc = sd_core_on_timer(&conn, now, &a);
		apply(a);
		return rc;
	}

	int completed(unsigned n)
	{
		sd_core_actions a;
		int rc = sd_core_on_send_complete(&conn, n, &a);
		apply(a);
		return rc;
	}

	int send(unsigned len)
	{
		sd_core_actions a;
		int rc = sd_core_send_message(&conn, len, &a);
		apply(a);
		return rc;
	}

	// Produces one PDU; the payload comes from msg. Returns the errc.
	int produce(const Bytes &msg = {}, sd_core_pdu *info = nullptr)
	{
		Bytes buf(cfg.max_send_size + 64);
		sd_core_pdu pdu;
		int rc = sd_core_next_pdu_copy(&conn, buf.data(), static_cast<unsigned>(buf.size()),
					       msg.data(), static_cast<unsigned>(msg.size()), &pdu);
		if (rc == SD_CORE_OK) {
			buf.resize(pdu.length);
			out.push_back(buf);
			if (info)
				*info = pdu;
		}
		return rc;
	}

	// Produces until AGAIN; returns how many PDUs.
	unsigned pump(const Bytes &msg = {})
	{
		unsigned n = 0;
		while (produce(msg) == SD_CORE_OK)
			n++;
		return n;
	}

	sd_core_stats stats() const
	{
		sd_core_stats s;
		sd_core_get_stats(&conn, &s);
		return s;
	}

	sd_core_params params() const
	{
		sd_core_params p{};
		sd_core_get_params(&conn, &p);
		return p;
	}
};

// Moves the oldest PDU of from to to; returns to's errc.
inline int transfer(Engine &from, Engine &to)
{
	Bytes pdu = from.out.front();
	from.out.pop_front();
	int rc = to.recv(pdu);
	return rc;
}

// Delivers everything a and then b have queued to the other; returns the
// first error a receiver reported.
inline int exchange(Engine &a, Engine &b)
{
	while (!a.out.empty())
		if (int rc = transfer(a, b))
			return rc;
	while (!b.out.empty())
		if (int rc = transfer(b, a))
			return rc;
	return SD_CORE_OK;
}

// Connects and negotiates a client/server pair with posted receives.
// Returns false (with the engines showing why) if anything failed.
inline bool negotiate(Engine &c, Engine &s)
{
	if (c.init() || s.init())
		return false;
	if (c.post(c.cfg.receive_credit_max) || s.post(s.cfg.receive_credit_max))
		return false;
	if (s.connected() || c.connected())
		return false;
	if (c.pump() != 1 || transfer(c, s) != SD_CORE_OK)
		return false;
	s.post(s.reposts_owed);
	s.reposts_owed = 0;
	if (s.pump() != 1 || transfer(s, c) != SD_CORE_OK)
		return false;
	c.post(c.reposts_owed);
	c.reposts_owed = 0;
	return c.established && s.established;
}

inline Bytes pattern(size_t n, unsigned seed)
{
	Bytes b(n);
	for (size_t i = 0; i < n; i++)
		b[i] = static_cast<uint8_t>((i * 131u + seed * 7u + (i >> 8)) & 0xff);
	return b;
}

} // namespace sdtest

#endif
