/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The connection state machine: events in, actions out. It ties the codec,
 * negotiation, credits, fragmentation, reassembly and keepalive together
 * and is the object behind struct sd_core_conn.
 */
#ifndef SD_CORE_CONNECTION_H
#define SD_CORE_CONNECTION_H

#include "byte_span.h"
#include "credits.h"
#include "fragment.h"
#include "keepalive.h"
#include "negotiate.h"
#include "reassembly.h"
#include "result.h"
#include "smbdirect_core.h"
#include "types.h"

namespace sd
{

using Actions = sd_core_actions;
using Pdu = sd_core_pdu;

class Connection {
    public:
	enum class State : u8 {
		init, /* receives may be posted, not connected yet */
		negotiating,
		established,
		refusing, /* server: refusal queued or in flight */
		closed,
	};

	[[nodiscard]] Errc init(const Config &cfg);
	[[nodiscard]] Errc recv_posted(u32 n, Actions &act);
	[[nodiscard]] Errc on_connected(u64 now, Actions &act);
	[[nodiscard]] Errc on_recv(u64 now, ByteSpan pdu, Actions &act);
	[[nodiscard]] Errc on_send_complete(u32 n, Actions &act);
	[[nodiscard]] Errc on_timer(u64 now, Actions &act);
	[[nodiscard]] Errc send_message(u32 length, Actions &act);
	[[nodiscard]] Errc next_pdu(MutByteSpan buf, u32 avail, Pdu &pdu);
	[[nodiscard]] Errc disconnect(i32 reason, Actions &act);

	[[nodiscard]] State state() const
	{
		return state_;
	}
	[[nodiscard]] const Params &params() const
	{
		return params_;
	}
	[[nodiscard]] const Credits &credits() const
	{
		return credits_;
	}
	[[nodiscard]] const Fragmenter &fragmenter() const
	{
		return fragmenter_;
	}
	[[nodiscard]] u32 sends_in_flight() const
	{
		return sends_in_flight_;
	}

    private:
	[[nodiscard]] Errc fail(Errc why, i32 reason, Actions &act);
	[[nodiscard]] Errc recv_negotiate_request(ByteSpan pdu, Actions &act);
	[[nodiscard]] Errc recv_negotiate_response(u64 now, ByteSpan pdu, Actions &act);
	[[nodiscard]] Errc recv_data(u64 now, ByteSpan pdu, Actions &act);
	void establish(u64 now, Actions &act);
	/* Whether next_pdu() would produce something if called now. */
	[[nodiscard]] bool data_ready() const;
	[[nodiscard]] u16 grant_now() const;
	[[nodiscard]] bool send_ready() const;
	[[nodiscard]] bool empty_pdu_due(u16 grant) const;
	void request_send_if_ready(Actions &act) const;
	[[nodiscard]] Errc produce_negotiate(MutByteSpan buf, Pdu &pdu);
	[[nodiscard]] Errc produce_data(MutByteSpan buf, u32 avail, Pdu &pdu);

	Config cfg_;
	Params params_;
	Credits credits_;
	Fragmenter fragmenter_;
	Reassembly reassembly_;
	Keepalive keepalive_;
	u64 negotiate_deadline_;
	u32 sends_in_flight_;
	Errc refusal_;
	State state_;
	/* Client: request not yet produced. Server: response not yet. */
	bool negotiate_pending_;
	/* The peer set RESPONSE_REQUESTED and has not had an answer. */
	bool response_owed_;
	/* ... and that PDU was a keepalive probe (no data). */
	bool probe_owed_;
	/* The peer sent data lately and may run dry of our credits. */
	bool peer_wants_credits_;
};

static_assert(sizeof(Connection) <= SD_CORE_CONN_SIZE);
static_assert(alignof(Connection) <= SD_CORE_CONN_ALIGN);
/* Lives in the glue's opaque storage, initialised by init(): no ctor. */
static_assert(__is_trivial(Connection));

} // namespace sd

#endif
