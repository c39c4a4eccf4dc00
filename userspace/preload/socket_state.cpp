// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which of a TCP socket's state an SMB-Direct replacement takes over (see
 * socket_state.hpp). Pure functions only.
 */
#include "socket_state.hpp"

#include <climits>

namespace sd::preload {

namespace {

bool same(const struct timeval &a, const struct timeval &b)
{
	return a.tv_sec == b.tv_sec && a.tv_usec == b.tv_usec;
}

} // namespace

bool is_bound(const std::optional<Endpoint> &local)
{
	return local && (local->port != 0 || !local->is_wildcard());
}

Carry carry_over(const SocketState &program, const SocketState &fresh, bool inet6)
{
	Carry c;

	if (program.keepalive != fresh.keepalive)
		c.keepalive = program.keepalive ? 1 : 0;
	/* The kernel doubles what is set; setting half reads back the same. */
	if (program.rcvbuf != fresh.rcvbuf && program.rcvbuf > 0)
		c.rcvbuf = program.rcvbuf / 2;
	if (program.sndbuf != fresh.sndbuf && program.sndbuf > 0)
		c.sndbuf = program.sndbuf / 2;
	if (!same(program.rcvtimeo, fresh.rcvtimeo))
		c.rcvtimeo = program.rcvtimeo;
	if (!same(program.sndtimeo, fresh.sndtimeo))
		c.sndtimeo = program.sndtimeo;
	if (program.linger.l_onoff != fresh.linger.l_onoff ||
	    program.linger.l_linger != fresh.linger.l_linger)
		c.linger = program.linger;
	/*
	 * SOL_SOCKET options the generic socket layer keeps for our family
	 * too: what the program changed goes along.
	 */
	if (program.priority != fresh.priority)
		c.priority = program.priority;
	if (program.rcvlowat != fresh.rcvlowat)
		c.rcvlowat = program.rcvlowat;
	if (program.reuseaddr != fresh.reuseaddr)
		c.reuseaddr = program.reuseaddr ? 1 : 0;
	if (program.mark != fresh.mark)
		c.mark = program.mark;
	if (is_bound(program.local))
		c.bind = unmap_v4(*program.local);
	if (program.v6only && inet6)
		c.v6only = 1;
	else
		c.v6only_lost = program.v6only != 0;
	return c;
}

std::optional<int> raised_max_fragmented_size(int current)
{
	if (current >= smb_max_fragmented_size)
		return std::nullopt;
	return smb_max_fragmented_size;
}

unsigned long timeval_ms(const struct timeval &tv)
{
	if (tv.tv_sec < 0 || tv.tv_usec < 0)
		return 0;
	unsigned long sec = static_cast<unsigned long>(tv.tv_sec);
	if (sec > ULONG_MAX / 1000 - 1)
		return ULONG_MAX;
	return sec * 1000 + static_cast<unsigned long>(tv.tv_usec) / 1000;
}

struct timeval ms_timeval(unsigned long ms)
{
	struct timeval tv = {};
	tv.tv_sec = static_cast<time_t>(ms / 1000);
	tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
	return tv;
}

unsigned long attempt_timeout_ms(const Config &cfg, const SocketState &program)
{
	unsigned long bound = cfg.connect_timeout_ms;
	unsigned long own = timeval_ms(program.sndtimeo);

	/* A timeout below 1 ms reads as 0 ("none") above: keep it at 1. */
	if (!program.nonblocking && (program.sndtimeo.tv_sec || program.sndtimeo.tv_usec) &&
	    own < bound)
		return own ? own : 1;
	return bound;
}

} // namespace sd::preload
