// SPDX-License-Identifier: GPL-2.0
#include "connection.h"

namespace sd
{

namespace
{

void clear(Actions &act)
{
	__builtin_memset(&act, 0, sizeof(act));
}

void arm(Actions &act, u64 deadline)
{
	act.flags |= SD_CORE_ACT_ARM_TIMER;
	act.timer_deadline_ms = deadline;
}

} // namespace

Errc Connection::init(const Config &cfg)
{
	SD_TRY(validate_config(cfg));
	__builtin_memset(this, 0, sizeof(*this));
	cfg_ = cfg;
	credits_.init(static_cast<u16>(cfg.receive_credit_max),
		      static_cast<u16>(cfg.send_credit_target));
	fragmenter_.init();
	reassembly_.init(cfg.max_fragmented_size);
	keepalive_.init(cfg.keepalive_interval_ms, cfg.keepalive_timeout_ms);
	refusal_ = Errc::ok;
	state_ = State::init;
	return Errc::ok;
}

Errc Connection::fail(Errc why, i32 reason, Actions &act)
{
	state_ = State::closed;
	act.flags |= SD_CORE_ACT_DISCONNECT;
	act.disconnect_reason = reason;
	act.error = to_c(why);
	return why;
}

Errc Connection::recv_posted(u32 n, Actions &act)
{
	clear(act);
	if (state_ == State::closed)
		return Errc::bad_state;
	SD_TRY(credits_.on_receives_posted(n));
	request_send_if_ready(act);
	return Errc::ok;
}

Errc Connection::on_connected(u64 now, Actions &act)
{
	clear(act);
	/* The negotiate request may overtake rdma_cm's ESTABLISHED event. */
	if ((state_ == State::established || state_ == State::refusing) &&
	    cfg_.role == SD_CORE_ROLE_SERVER)
		return Errc::ok;
	if (state_ != State::init)
		return Errc::bad_state;
	state_ = State::negotiating;
	negotiate_pending_ = cfg_.role == SD_CORE_ROLE_CLIENT;
	negotiate_deadline_ = now + cfg_.negotiate_timeout_ms;
	arm(act, negotiate_deadline_);
	request_send_if_ready(act);
	return Errc::ok;
}

void Connection::establish(u64 now, Actions &act)
{
	state_ = State::established;
	act.flags |= SD_CORE_ACT_ESTABLISHED;
	reassembly_.init(params_.max_fragmented_receive_size);
	credits_.set_receive_target(params_.peer_credit_target);
	const u64 deadline = keepalive_.start(now);
	if (deadline)
		arm(act, deadline);
}

Errc Connection::recv_negotiate_request(ByteSpan pdu, Actions &act)
{
	const auto req = decode_negotiate_request(pdu);
	if (!req.ok()) {
		/* The peer must learn why; the refusal is our only PDU. */
		state_ = State::refusing;
		refusal_ = req.error();
		negotiate_pending_ = true;
		act.flags |= SD_CORE_ACT_SEND;
		return req.error();
	}
	params_ = server_params(cfg_, req.value());
	negotiate_pending_ = true;
	return Errc::ok;
}

Errc Connection::recv_negotiate_response(u64 now, ByteSpan pdu, Actions &act)
{
	const auto resp = decode_negotiate_response(pdu);
	if (!resp.ok())
		return fail(resp.error(), SD_CORE_REASON_NEGOTIATE_REJECTED, act);
	const auto params = client_params(cfg_, resp.value());
	if (!params.ok())
		return fail(params.error(), SD_CORE_REASON_NEGOTIATE_REJECTED, act);
	params_ = params.value();
	const Errc e = credits_.on_granted(resp.value().credits_granted);
	if (e != Errc::ok)
		return fail(e, SD_CORE_REASON_PROTOCOL_ERROR, act);
	establish(now, act);
	/* The server starts with no credits: only we can give it some. */
	peer_wants_credits_ = true;
	return Errc::ok;
}

Errc Connection::recv_data(u64 now, ByteSpan pdu, Actions &act)
{
	Errc e = credits_.on_receive_completed(true);
	if (e != Errc::ok)
		return fail(e, SD_CORE_REASON_PROTOCOL_ERROR, act);
	const auto hdr = decode_data_header(pdu);
	if (!hdr.ok())
		return fail(hdr.error(), SD_CORE_REASON_PROTOCOL_ERROR, act);
	const DataHeader &h = hdr.value();
	e = credits_.on_granted(h.credits_granted);
	if (e != Errc::ok)
		return fail(e, SD_CORE_REASON_PROTOCOL_ERROR, act);
	/* CreditsRequested 0 would leave the peer unable to get any; keep 1. */
	credits_.set_receive_target(max<u16>(h.credits_requested, 1));
	keepalive_.on_activity(now);
	if (h.flags & flag_response_requested) {
		response_owed_ = true;
		probe_owed_ = h.data_length == 0;
	}

	if (h.data_length == 0) {
		act.flags |= SD_CORE_ACT_REPOST;
		act.repost = 1;
	} else {
		const auto slice = reassembly_.on_fragment(h);
		if (!slice.ok())
			return fail(slice.error(), SD_CORE_REASON_PROTOCOL_ERROR, act);
		act.flags |= SD_CORE_ACT_DELIVER;
		act.deliver_offset = slice.value().offset;
		act.deliver_length = slice.value().length;
		act.deliver_flags = slice.value().flags;
		act.message_length = slice.value().message_length;
		/*
		 * Credit-only PDUs deliberately do not set this: two idle
		 * peers would otherwise trade empty PDUs forever.
		 */
		peer_wants_credits_ = true;
	}
	request_send_if_ready(act);
	return Errc::ok;
}

Errc Connection::on_recv(u64 now, ByteSpan pdu, Actions &act)
{
	clear(act);
	const bool server = cfg_.role == SD_CORE_ROLE_SERVER;
	const bool awaiting_negotiate = (state_ == State::negotiating && !negotiate_pending_) ||
					(state_ == State::init && server);

	if (state_ == State::closed || state_ == State::refusing ||
	    (state_ == State::init && !server))
		return Errc::bad_state;
	const u32 limit =
		state_ == State::established ? params_.max_receive_size : cfg_.max_receive_size;
	if (pdu.size() > limit)
		return fail(Errc::pdu_too_long, SD_CORE_REASON_PROTOCOL_ERROR, act);
	if (!awaiting_negotiate) {
		if (state_ != State::established)
			return fail(Errc::bad_state, SD_CORE_REASON_PROTOCOL_ERROR, act);
		return recv_data(now, pdu, act);
	}

	/* Negotiate PDUs use a posted receive but no credit. */
	const Errc e = credits_.on_receive_completed(false);
	if (e != Errc::ok)
		return fail(e, SD_CORE_REASON_PROTOCOL_ERROR, act);
	act.flags |= SD_CORE_ACT_REPOST;
	act.repost = 1;
	if (!server)
		return recv_negotiate_response(now, pdu, act);

	if (state_ == State::init)
		negotiate_deadline_ = now + cfg_.negotiate_timeout_ms;
	const Errc r = recv_negotiate_request(pdu, act);
	if (r != Errc::ok)
		return r;
	establish(now, act);
	request_send_if_ready(act);
	return Errc::ok;
}

Errc Connection::on_send_complete(u32 n, Actions &act)
{
	clear(act);
	if (n > sends_in_flight_)
		return Errc::invalid_argument;
	sends_in_flight_ -= n;
	/* The refusal is on the wire; only now may the connection go. */
	if (state_ == State::refusing && !negotiate_pending_ && sends_in_flight_ == 0)
		static_cast<void>(fail(refusal_, SD_CORE_REASON_NEGOTIATE_REJECTED, act));
	return Errc::ok;
}

Errc Connection::on_timer(u64 now, Actions &act)
{
	clear(act);
	if (state_ == State::negotiating || state_ == State::refusing) {
		if (now < negotiate_deadline_) {
			arm(act, negotiate_deadline_);
			return Errc::ok;
		}
		if (state_ == State::refusing)
			static_cast<void>(fail(refusal_, SD_CORE_REASON_NEGOTIATE_REJECTED, act));
		else
			static_cast<void>(fail(Errc::ok, SD_CORE_REASON_NEGOTIATE_TIMEOUT, act));
		return Errc::ok;
	}
	if (state_ != State::established)
		return Errc::ok;
	switch (keepalive_.on_timer(now, credits_.peer_credits() > 0)) {
	case Keepalive::Fire::rearm:
		arm(act, keepalive_.deadline());
		break;
	case Keepalive::Fire::send_probe:
		arm(act, keepalive_.deadline());
		request_send_if_ready(act);
		break;
	case Keepalive::Fire::dead:
		return fail(Errc::ok, SD_CORE_REASON_KEEPALIVE_TIMEOUT, act);
	case Keepalive::Fire::none:
		break;
	}
	return Errc::ok;
}

Errc Connection::send_message(u32 length, Actions &act)
{
	clear(act);
	if (state_ != State::established)
		return Errc::bad_state;
	SD_TRY(fragmenter_.begin(length, params_.max_fragmented_send_size));
	request_send_if_ready(act);
	return Errc::ok;
}

Errc Connection::disconnect(i32 reason, Actions &act)
{
	clear(act);
	if (state_ == State::closed)
		return Errc::bad_state;
	static_cast<void>(fail(Errc::ok, reason, act));
	return Errc::ok;
}

bool Connection::empty_pdu_due(u16 grant) const
{
	if (response_owed_ || keepalive_.probe_due())
		return true;
	if (grant == 0)
		return false;
	/*
	 * A peer without credits cannot ask for any, so it gets one whether
	 * or not it seems to need it; topping up further is only worth a PDU
	 * when the peer has been sending.
	 */
	const u16 peer = credits_.peer_credits();
	if (peer == 0)
		return true;
	/*
	 * One credit is as good as none to a peer with nothing to grant (it
	 * is reserved for a granting PDU), but we only top it up when that
	 * cannot leave us in the same spot, or the top-ups would bounce.
	 */
	if (peer == 1 && credits_.send_credits() >= 3)
		return true;
	return peer_wants_credits_ && credits_.peer_low();
}

/*
 * The last send credit never carries data: it is kept for the PDUs that
 * keep the connection alive (credit grants, keepalive probes and their
 * answers). A peer whose reader stops reading holds our credits back; it
 * still reposts the buffers such PDUs take, so they keep flowing both
 * ways while data waits, and the peer's buffers never fill beyond what
 * it granted for data.
 */
bool Connection::data_ready() const
{
	/*
	 * Nor does the credit a keepalive probe granted (the reserve,
	 * credits.cpp) while its answer is owed: the answer returns it, and
	 * data on it would fill the receive a paused reader keeps for its
	 * next probe.
	 */
	const u16 keep = probe_owed_ && cfg_.receive_credit_max > 2 ? 2 : 1;
	return fragmenter_.active() && credits_.send_credits() > keep;
}

/* A probe may grant the receive kept in reserve; nothing else may. */
u16 Connection::grant_now() const
{
	return keepalive_.probe_due() ? credits_.probe_grantable() : credits_.grantable();
}

bool Connection::send_ready() const
{
	if (state_ == State::refusing)
		return negotiate_pending_;
	if (state_ == State::negotiating)
		return negotiate_pending_ && cfg_.role == SD_CORE_ROLE_CLIENT;
	if (state_ != State::established)
		return false;
	const u16 grant = negotiate_pending_ ? credits_.grantable() : grant_now();
	if (negotiate_pending_)
		return grant > 0;
	if (!credits_.can_send(grant))
		return false;
	return data_ready() || empty_pdu_due(grant);
}

void Connection::request_send_if_ready(Actions &act) const
{
	if (send_ready())
		act.flags |= SD_CORE_ACT_SEND;
}

Errc Connection::produce_negotiate(MutByteSpan buf, Pdu &pdu)
{
	Result<usize> n = Errc::bad_state;

	if (state_ == State::refusing) {
		n = encode_negotiate_response(make_refusal(refusal_), buf);
		pdu.kind = SD_CORE_PDU_NEGOTIATE_RESPONSE;
	} else if (cfg_.role == SD_CORE_ROLE_CLIENT) {
		n = encode_negotiate_request(make_request(cfg_), buf);
		pdu.kind = SD_CORE_PDU_NEGOTIATE_REQUEST;
	} else {
		const u16 grant = credits_.grantable();
		/* CreditsGranted must be > 0: wait until a receive is posted. */
		if (grant == 0)
			return Errc::again;
		n = encode_negotiate_response(make_response(cfg_, params_, grant), buf);
		if (n.ok())
			credits_.on_granted_without_send(grant);
		pdu.kind = SD_CORE_PDU_NEGOTIATE_RESPONSE;
		pdu.credits_granted = grant;
	}
	if (!n.ok())
		return n.error();
	pdu.length = static_cast<u32>(n.value());
	negotiate_pending_ = false;
	sends_in_flight_++;
	return Errc::ok;
}

Errc Connection::produce_data(MutByteSpan buf, u32 avail, Pdu &pdu)
{
	const u16 grant = grant_now();
	if (!credits_.can_send(grant))
		return Errc::again;

	Fragment frag{ 0, 0, 0 };
	if (data_ready())
		frag = fragmenter_.next(params_.max_send_size - data_offset, avail);
	if (frag.length == 0 && !empty_pdu_due(grant))
		return Errc::again;

	DataHeader h{};
	h.credits_requested = credits_.send_credit_target();
	h.credits_granted = grant;
	/*
	 * Down to our reserved last credit with data to send: ask for an
	 * answer so credits come back. An empty PDU never asks, except as a
	 * probe, so answers cannot bounce between the peers.
	 */
	if (keepalive_.probe_due() || (frag.length && credits_.send_credits() <= 2))
		h.flags = flag_response_requested;
	/* An empty PDU between fragments is not one of them. */
	h.remaining_data_length = frag.length ? frag.remaining_after : 0;
	h.data_offset = frag.length ? data_offset : 0;
	h.data_length = frag.length;
	if (frag.length && !buf.has(0, static_cast<usize>(data_offset) + frag.length))
		return Errc::buffer_too_small;
	const auto n = encode_data_header(h, buf);
	if (!n.ok())
		return n.error();

	pdu.kind = frag.length ? SD_CORE_PDU_DATA
			       : (h.flags ? SD_CORE_PDU_KEEPALIVE : SD_CORE_PDU_CREDIT);
	pdu.length = static_cast<u32>(n.value()) + frag.length;
	pdu.payload_offset = frag.length ? data_offset : 0;
	pdu.payload_length = frag.length;
	pdu.message_offset = frag.offset;
	pdu.message_last = frag.length && frag.remaining_after == 0;
	pdu.credits_granted = grant;
	pdu.flags = h.flags;

	credits_.on_sent(grant);
	fragmenter_.advance(frag.length);
	if (keepalive_.probe_due())
		keepalive_.on_probe_sent();
	response_owed_ = false;
	probe_owed_ = false;
	if (!credits_.peer_low())
		peer_wants_credits_ = false;
	sends_in_flight_++;
	return Errc::ok;
}

Errc Connection::next_pdu(MutByteSpan buf, u32 avail, Pdu &pdu)
{
	__builtin_memset(&pdu, 0, sizeof(pdu));
	if (!send_ready())
		return state_ == State::closed ? Errc::bad_state : Errc::again;
	if (negotiate_pending_)
		return produce_negotiate(buf, pdu);
	return produce_data(buf, avail, pdu);
}

} // namespace sd
