// SPDX-License-Identifier: GPL-2.0
#include "reassembly.h"

namespace sd
{

void Reassembly::init(u32 max_fragmented_size)
{
	max_fragmented_ = max_fragmented_size;
	message_length_ = 0;
	expected_remaining_ = 0;
}

Result<Slice> Reassembly::on_fragment(const DataHeader &h)
{
	/* 64-bit so a hostile length pair cannot wrap past the checks. */
	const u64 carried = static_cast<u64>(h.data_length) + h.remaining_data_length;
	u32 flags = 0;

	if (!in_progress()) {
		if (carried > max_fragmented_)
			return Errc::message_too_long;
		message_length_ = static_cast<u32>(carried);
		flags |= SD_CORE_DELIVER_FIRST;
	} else if (carried != expected_remaining_) {
		return Errc::remaining_mismatch;
	}
	expected_remaining_ = h.remaining_data_length;
	if (expected_remaining_ == 0)
		flags |= SD_CORE_DELIVER_LAST;
	return Slice{ h.data_offset, h.data_length, flags, message_length_ };
}

} // namespace sd
