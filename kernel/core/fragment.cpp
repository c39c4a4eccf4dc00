// SPDX-License-Identifier: GPL-2.0
#include "fragment.h"

namespace sd
{

void Fragmenter::init()
{
	length_ = 0;
	offset_ = 0;
}

Errc Fragmenter::begin(u32 length, u32 max_fragmented_send_size)
{
	if (active())
		return Errc::busy;
	if (length == 0)
		return Errc::empty_message;
	if (length > max_fragmented_send_size)
		return Errc::message_too_long;
	length_ = length;
	offset_ = 0;
	return Errc::ok;
}

Fragment Fragmenter::next(u32 max_payload, u32 avail) const
{
	const u32 n = min(remaining(), min(max_payload, avail));
	return Fragment{ offset_, n, remaining() - n };
}

void Fragmenter::advance(u32 n)
{
	offset_ += min(n, remaining());
	if (!active()) {
		length_ = 0;
		offset_ = 0;
	}
}

} // namespace sd
