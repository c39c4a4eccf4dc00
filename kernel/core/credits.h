/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Credit accounting for both directions. One send credit is one receive
 * buffer the peer has posted for us; we grant the peer credits only for
 * receives we have posted and not yet promised. The rules that keep both
 * sides live are here, in one place, so they can be tested on their own.
 */
#ifndef SD_CORE_CREDITS_H
#define SD_CORE_CREDITS_H

#include "result.h"
#include "types.h"

namespace sd
{

class Credits {
    public:
	void init(u16 receive_credit_max, u16 send_credit_target);

	/* Receive side. */
	[[nodiscard]] Errc on_receives_posted(u32 n);
	/* peer_spent: the PDU was a data-transfer PDU, which costs a credit. */
	[[nodiscard]] Errc on_receive_completed(bool peer_spent);
	/* The peer's CreditsRequested bounds how many we keep it at. */
	void set_receive_target(u16 peer_requested);
	/*
	 * New credits we could grant now: never above what is posted, and
	 * never the last posted receive the peer holds no credit for (the
	 * reserve, see credits.cpp), which only a keepalive probe grants.
	 */
	[[nodiscard]] u16 grantable() const;
	/* The same with the reserve: what a keepalive probe may grant. */
	[[nodiscard]] u16 probe_grantable() const;

	/* Send side. */
	[[nodiscard]] Errc on_granted(u16 n);
	/*
	 * Deadlock rule: the last credit may only be spent on a PDU that
	 * grants the peer at least one, so the peer can always answer.
	 */
	[[nodiscard]] bool can_send(u16 grant) const;
	void on_sent(u16 grant);
	/* The negotiate response grants without spending a credit. */
	void on_granted_without_send(u16 grant);
	/* The peer is low enough on our credits that we should top it up. */
	[[nodiscard]] bool peer_low() const;

	[[nodiscard]] u16 send_credits() const
	{
		return send_credits_;
	}
	[[nodiscard]] u16 peer_credits() const
	{
		return peer_credits_;
	}
	[[nodiscard]] u16 posted() const
	{
		return posted_;
	}
	[[nodiscard]] u16 receive_target() const
	{
		return receive_target_;
	}
	[[nodiscard]] u16 send_credit_target() const
	{
		return send_credit_target_;
	}

    private:
	u16 receive_credit_max_;
	u16 receive_target_;
	u16 send_credit_target_;
	u16 posted_;
	u16 peer_credits_;
	u16 send_credits_;
};

} // namespace sd

#endif
