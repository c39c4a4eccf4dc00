// SPDX-License-Identifier: GPL-2.0
#include "keepalive.h"

namespace sd
{

void Keepalive::init(u32 interval_ms, u32 timeout_ms)
{
	last_activity_ = 0;
	deadline_ = 0;
	interval_ = interval_ms;
	timeout_ = timeout_ms;
	state_ = State::off;
}

u64 Keepalive::start(u64 now)
{
	if (interval_ == 0)
		return 0;
	last_activity_ = now;
	deadline_ = now + interval_;
	state_ = State::idle;
	return deadline_;
}

void Keepalive::on_activity(u64 now)
{
	if (state_ == State::off || state_ == State::dead)
		return;
	/* Any PDU proves the peer alive, whether or not it answers a probe. */
	last_activity_ = now;
	state_ = State::idle;
}

Keepalive::Fire Keepalive::on_timer(u64 now, bool peer_can_answer)
{
	if (state_ == State::off || state_ == State::dead)
		return Fire::none;
	if (now < deadline_)
		return Fire::rearm;
	if (state_ == State::idle) {
		if (now < last_activity_ + interval_) {
			deadline_ = last_activity_ + interval_;
			return Fire::rearm;
		}
		/* The answer window starts when the probe is due, not sent:
		 * a peer that starves us of credits is as dead as a silent one.
		 */
		state_ = State::probe_due;
		deadline_ = now + timeout_;
		return Fire::send_probe;
	}
	if (!peer_can_answer) {
		/* Probe again after a full interval, as TCP's zero-window probes. */
		last_activity_ = now;
		deadline_ = now + interval_;
		state_ = State::idle;
		return Fire::rearm;
	}
	state_ = State::dead;
	return Fire::dead;
}

void Keepalive::on_probe_sent()
{
	if (state_ == State::probe_due)
		state_ = State::probe_sent;
}

} // namespace sd
