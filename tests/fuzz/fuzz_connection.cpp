// SPDX-License-Identifier: GPL-2.0
// The connection state machine fed arbitrary event sequences through the C
// interface, with invariants checked after every event: credits granted
// never exceed receives posted, every produced PDU decodes cleanly and fits
// the negotiated send size, no data PDU goes out without a credit.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "negotiate.h"
#include "pdu.h"
#include "smbdirect_core.h"

using namespace sd;

namespace
{

void check(bool ok)
{
	if (!ok)
		__builtin_trap();
}

struct Input {
	const uint8_t *p;
	size_t n;

	bool empty() const
	{
		return n == 0;
	}
	uint32_t take(unsigned bytes)
	{
		uint32_t v = 0;
		for (unsigned i = 0; i < bytes; i++) {
			v <<= 8;
			if (n) {
				v |= *p++;
				n--;
			}
		}
		return v;
	}
};

struct Fuzz {
	sd_core_conn conn;
	sd_core_config cfg;
	unsigned long long now = 0;
	bool established = false;
	bool closed = false;
	sd_core_params params{};

	void after(int rc, const sd_core_actions &a)
	{
		check(rc >= 0 && rc < SD_CORE_E_COUNT);
		if (a.flags & SD_CORE_ACT_ESTABLISHED) {
			check(!established);
			established = true;
			check(sd_core_get_params(&conn, &params) == SD_CORE_OK);
			check(params.max_send_size <= cfg.max_send_size);
			check(params.max_send_size >= SD_CORE_MIN_RECEIVE_SIZE);
		}
		if (a.flags & SD_CORE_ACT_DISCONNECT)
			closed = true;
		if (a.flags & SD_CORE_ACT_ARM_TIMER)
			check(a.timer_deadline_ms >= now);
		invariants();
	}

	void invariants()
	{
		sd_core_stats s;
		sd_core_get_stats(&conn, &s);
		check(s.peer_credits <= s.receives_posted);
		check(s.receives_posted <= cfg.receive_credit_max);
	}

	void recv(const uint8_t *buf, unsigned len)
	{
		// An exact-size heap copy, so ASan catches any read past it.
		uint8_t *copy = new uint8_t[len ? len : 1];
		memcpy(copy, buf, len);
		sd_core_actions a;
		int rc = sd_core_on_recv(&conn, now, copy, len, &a);
		if (a.flags & SD_CORE_ACT_DELIVER) {
			check(rc == SD_CORE_OK);
			check(a.deliver_length > 0);
			check(static_cast<uint64_t>(a.deliver_offset) + a.deliver_length <= len);
			volatile uint8_t sink = copy[a.deliver_offset + a.deliver_length - 1];
			(void)sink;
			check(a.message_length <= cfg.max_fragmented_size);
		}
		delete[] copy;
		after(rc, a);
	}

	void produce(unsigned cap, unsigned avail)
	{
		sd_core_stats before;
		sd_core_get_stats(&conn, &before);
		uint8_t *buf = new uint8_t[cap ? cap : 1];
		sd_core_pdu pdu;
		int rc = sd_core_next_pdu(&conn, buf, cap, avail, &pdu);
		check(rc >= 0 && rc < SD_CORE_E_COUNT);
		if (rc == SD_CORE_OK) {
			check(pdu.length <= cap);
			check(pdu.payload_length <= avail);
			ByteSpan out(buf, pdu.length);
			// Payload bytes are the glue's to fill; make them defined.
			if (pdu.payload_length)
				memset(buf + pdu.payload_offset, 0xa5, pdu.payload_length);
			switch (pdu.kind) {
			case SD_CORE_PDU_NEGOTIATE_REQUEST:
				check(decode_negotiate_request(out).ok());
				break;
			case SD_CORE_PDU_NEGOTIATE_RESPONSE: {
				auto r = decode_negotiate_response(out);
				// A refusal decodes as the peer's status, never garbage.
				check(r.ok() || r.error() == Errc::peer_status);
				break;
			}
			default: {
				auto h = decode_data_header(out);
				check(h.ok());
				check(before.send_credits >= 1);
				check(before.send_credits > 1 || pdu.credits_granted > 0);
				check(pdu.credits_granted <= before.receives_posted);
				check(established);
				check(pdu.length <= params.max_send_size);
				check(h.value().data_length == pdu.payload_length);
				break;
			}
			}
		}
		delete[] buf;
		invariants();
	}
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Input in{ data, size };
	Fuzz f;
	sd_core_config_default(&f.cfg, in.take(1) & 1);
	f.cfg.receive_credit_max = 2 + in.take(1) % 63;
	f.cfg.send_credit_target = 2 + in.take(1) % 63;
	f.cfg.max_send_size = 128 + in.take(2) % 2048;
	f.cfg.max_receive_size = 128 + in.take(2) % 2048;
	f.cfg.max_fragmented_size = 131072 + in.take(1);
	f.cfg.keepalive_interval_ms = in.take(1) * 10;
	f.cfg.keepalive_timeout_ms = 1 + in.take(1) * 10;
	f.cfg.negotiate_timeout_ms = 1 + in.take(1) * 10;
	check(sd_core_conn_init(&f.conn, &f.cfg) == SD_CORE_OK);

	sd_core_actions a;
	for (int steps = 0; !in.empty() && steps < 4096; steps++) {
		switch (in.take(1) % 11) {
		case 0:
			f.after(sd_core_on_connected(&f.conn, f.now, &a), a);
			break;
		case 1:
			f.after(sd_core_recv_posted(&f.conn, in.take(1) % 8, &a), a);
			break;
		case 2: {
			unsigned len = in.take(2) % 4096;
			uint8_t buf[4096];
			for (unsigned i = 0; i < len; i++)
				buf[i] = static_cast<uint8_t>(in.take(1));
			f.recv(buf, len);
			break;
		}
		case 3: {
			NegotiateRequest r{ static_cast<u16>(in.take(2)),
					    static_cast<u16>(in.take(2)),
					    static_cast<u16>(in.take(2)),
					    in.take(2) + 100,
					    in.take(2) + 100,
					    131072 + in.take(2) };
			if (in.take(1) & 1)
				r.min_version = r.max_version = version_1;
			uint8_t b[20];
			check(encode_negotiate_request(r, MutByteSpan(b, 20)).ok());
			f.recv(b, 20);
			break;
		}
		case 4: {
			NegotiateResponse r{ version_1,
					     version_1,
					     version_1,
					     static_cast<u16>(in.take(1)),
					     static_cast<u16>(in.take(1)),
					     in.take(1) ? 0u : 0xc00000bbu,
					     in.take(4),
					     in.take(2) + 100,
					     in.take(2) + 100,
					     131072 + in.take(2) };
			uint8_t b[32];
			check(encode_negotiate_response(r, MutByteSpan(b, 32)).ok());
			f.recv(b, 32);
			break;
		}
		case 5: {
			unsigned len = in.take(2) % 2048;
			DataHeader h{ static_cast<u16>(in.take(1)),
				      static_cast<u16>(in.take(1) % 8),
				      static_cast<u16>(in.take(1) & 1),
				      in.take(1) % 4 ? in.take(2) : 0,
				      24,
				      len };
			uint8_t buf[24 + 2048];
			check(encode_data_header(h, MutByteSpan(buf, sizeof(buf))).ok());
			memset(buf + 24, 0x5a, len);
			f.recv(buf, (len ? 24 : 20) + len);
			break;
		}
		case 6:
			f.after(sd_core_on_send_complete(&f.conn, in.take(1) % 4, &a), a);
			break;
		case 7:
			f.now += in.take(2);
			f.after(sd_core_on_timer(&f.conn, f.now, &a), a);
			break;
		case 8:
			f.after(sd_core_send_message(&f.conn, in.take(3), &a), a);
			break;
		case 9:
			f.produce(in.take(2) % 4096, in.take(2));
			break;
		case 10:
			f.after(sd_core_disconnect(&f.conn, static_cast<int>(in.take(1) % 7), &a),
				a);
			break;
		}
	}
	return 0;
}
