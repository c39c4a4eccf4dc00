/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Splits one outgoing upper-layer message into data-transfer PDUs. It
 * decides only offsets and lengths; the payload stays with the caller.
 */
#ifndef SD_CORE_FRAGMENT_H
#define SD_CORE_FRAGMENT_H

#include "result.h"
#include "types.h"

namespace sd
{

struct Fragment {
	u32 offset; /* within the message */
	u32 length;
	u32 remaining_after; /* RemainingDataLength on the wire */
};

class Fragmenter {
    public:
	void init();
	/*
	 * A zero-length message cannot be sent: a data-transfer PDU without
	 * data is a credit-only PDU to the receiver.
	 */
	[[nodiscard]] Errc begin(u32 length, u32 max_fragmented_send_size);
	/* Next piece bounded by the PDU payload room and what the caller has. */
	[[nodiscard]] Fragment next(u32 max_payload, u32 avail) const;
	void advance(u32 n);

	[[nodiscard]] bool active() const
	{
		return offset_ < length_;
	}
	[[nodiscard]] u32 remaining() const
	{
		return length_ - offset_;
	}
	[[nodiscard]] u32 offset() const
	{
		return offset_;
	}

    private:
	u32 length_;
	u32 offset_;
};

} // namespace sd

#endif
