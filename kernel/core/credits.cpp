// SPDX-License-Identifier: GPL-2.0
#include "credits.h"

namespace sd
{

void Credits::init(u16 receive_credit_max, u16 send_credit_target)
{
	receive_credit_max_ = receive_credit_max;
	/* Until the peer says otherwise, keep it at everything we can post. */
	receive_target_ = receive_credit_max;
	send_credit_target_ = send_credit_target;
	posted_ = 0;
	peer_credits_ = 0;
	send_credits_ = 0;
}

Errc Credits::on_receives_posted(u32 n)
{
	if (n > static_cast<u32>(receive_credit_max_ - posted_))
		return Errc::too_many_receives;
	posted_ = static_cast<u16>(posted_ + n);
	return Errc::ok;
}

Errc Credits::on_receive_completed(bool peer_spent)
{
	if (posted_ == 0)
		return Errc::no_receive_posted;
	if (peer_spent) {
		if (peer_credits_ == 0)
			return Errc::no_credit;
		peer_credits_--;
	}
	posted_--;
	return Errc::ok;
}

void Credits::set_receive_target(u16 peer_requested)
{
	receive_target_ = min(receive_credit_max_, peer_requested);
}

/*
 * The reserve. A reader that stops reading holds back the buffers data
 * took, so its posted receives shrink to the ones the peer holds credits
 * for. If both readers stop, each end then holds its last credit (which
 * never carries data) and has nothing to grant, so neither can send a
 * keepalive probe, which must grant, and both would declare the other
 * dead. Keeping one posted receive out of every ordinary grant means a
 * probe can always grant one: the peer answers with the credit that
 * grant gave it, granting back the buffer the probe took (reposted, it
 * carried no data), and both ends are where they were, one credit each
 * and one receive in reserve. The peer never holds the reserve for long:
 * a probe's answer returns it.
 */
u16 Credits::grantable() const
{
	/*
	 * With two receives there is no room for it: the peer needs two
	 * credits to send data at all (data never takes its last).
	 */
	const u16 reserve = receive_credit_max_ > 2 && posted_ > 1 ? 1 : 0;
	const u16 limit = min(static_cast<u16>(posted_ - reserve), receive_target_);
	return limit > peer_credits_ ? static_cast<u16>(limit - peer_credits_) : 0;
}

u16 Credits::probe_grantable() const
{
	const u16 limit = min(posted_, receive_target_);
	return limit > peer_credits_ ? static_cast<u16>(limit - peer_credits_) : 0;
}

Errc Credits::on_granted(u16 n)
{
	if (n > u16_max - send_credits_)
		return Errc::credit_overflow;
	send_credits_ = static_cast<u16>(send_credits_ + n);
	return Errc::ok;
}

bool Credits::can_send(u16 grant) const
{
	/*
	 * What the peer already holds does not count: it may be spending
	 * those credits right now, and if both sides spent their last credit
	 * that way neither could ever send again.
	 */
	return send_credits_ > 1 || (send_credits_ == 1 && grant > 0);
}

void Credits::on_sent(u16 grant)
{
	send_credits_--;
	peer_credits_ = static_cast<u16>(peer_credits_ + grant);
}

void Credits::on_granted_without_send(u16 grant)
{
	peer_credits_ = static_cast<u16>(peer_credits_ + grant);
}

bool Credits::peer_low() const
{
	/* One credit is none to a peer with data: it keeps its last for us. */
	return peer_credits_ <= 1 || peer_credits_ <= receive_target_ / 4;
}

} // namespace sd
