/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Idle/keepalive timer: idle -> probe due -> probe sent -> (answer: idle |
 * timeout: dead). Time is passed in; the connection owns the one timer.
 * Receives only record the time, so a busy connection never re-arms the
 * timer per PDU: an early firing re-arms at last activity + interval.
 */
#ifndef SD_CORE_KEEPALIVE_H
#define SD_CORE_KEEPALIVE_H

#include "types.h"

namespace sd
{

class Keepalive {
    public:
	enum class State : u8 {
		off,
		idle,
		probe_due,
		probe_sent,
		dead
	};
	enum class Fire : u8 {
		rearm,
		send_probe,
		dead,
		none
	};

	void init(u32 interval_ms, u32 timeout_ms);
	/* Negotiation finished; returns the first deadline (0: disabled). */
	u64 start(u64 now);
	void on_activity(u64 now);
	/*
	 * peer_can_answer: the peer holds a credit to answer a probe with.
	 * A peer we starve of credits (our reader is not reading) cannot,
	 * and its silence is then our doing, not its death.
	 */
	Fire on_timer(u64 now, bool peer_can_answer = true);
	void on_probe_sent();

	[[nodiscard]] bool probe_due() const
	{
		return state_ == State::probe_due;
	}
	[[nodiscard]] State state() const
	{
		return state_;
	}
	[[nodiscard]] u64 deadline() const
	{
		return deadline_;
	}

    private:
	u64 last_activity_;
	u64 deadline_;
	u32 interval_;
	u32 timeout_;
	State state_;
};

} // namespace sd

#endif
