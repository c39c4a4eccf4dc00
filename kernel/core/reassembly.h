/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks incoming fragments against each other and the negotiated limit,
 * and turns each into a delivery slice. Payload stays in the receive buffer
 * so the glue can copy it once, straight to the reader.
 */
#ifndef SD_CORE_REASSEMBLY_H
#define SD_CORE_REASSEMBLY_H

#include "pdu.h"
#include "result.h"
#include "types.h"

namespace sd
{

struct Slice {
	u32 offset; /* within the received PDU */
	u32 length;
	u32 flags; /* SD_CORE_DELIVER_* */
	u32 message_length;
};

class Reassembly {
    public:
	void init(u32 max_fragmented_size);
	/* Only for PDUs with data; the header is already decoded. */
	[[nodiscard]] Result<Slice> on_fragment(const DataHeader &h);

	[[nodiscard]] bool in_progress() const
	{
		return expected_remaining_ != 0;
	}

    private:
	u32 max_fragmented_;
	u32 message_length_;
	u32 expected_remaining_;
};

} // namespace sd

#endif
