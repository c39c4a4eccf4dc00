// SPDX-License-Identifier: GPL-2.0
#include "stream.h"

namespace sd
{

void stream_parser_init(sd_core_stream_parser &p, u32 max_message)
{
	__builtin_memset(&p, 0, sizeof(p));
	p.max_message = max_message;
}

Errc stream_parse(sd_core_stream_parser &p, ByteSpan in, sd_core_stream_chunk &out)
{
	__builtin_memset(&out, 0, sizeof(out));
	usize pos = 0;

	if (p.remaining == 0) {
		const u32 want = SD_CORE_STREAM_PREFIX_SIZE - p.prefix_have;
		const u32 take = static_cast<u32>(min<usize>(want, in.size()));
		u8 prefix[SD_CORE_STREAM_PREFIX_SIZE];

		__builtin_memcpy(prefix, p.prefix, sizeof(prefix));
		if (take)
			__builtin_memcpy(prefix + p.prefix_have, in.data(), take);
		if (take < want) {
			__builtin_memcpy(p.prefix, prefix, sizeof(prefix));
			p.prefix_have += take;
			out.consumed = take;
			return Errc::ok;
		}
		const u32 len = static_cast<u32>(prefix[0]) << 24 |
				static_cast<u32>(prefix[1]) << 16 |
				static_cast<u32>(prefix[2]) << 8 | prefix[3];
		if (len == 0)
			return Errc::empty_message;
		if (len > p.max_message)
			return Errc::message_too_long;
		p.prefix_have = 0;
		p.remaining = len;
		pos = take;
		out.message_start = 1;
		out.message_length = len;
	}

	const u32 n = static_cast<u32>(min<usize>(p.remaining, in.size() - pos));
	out.payload_offset = static_cast<u32>(pos);
	out.payload_length = n;
	p.remaining -= n;
	out.message_end = p.remaining == 0;
	out.consumed = static_cast<u32>(pos + n);
	return Errc::ok;
}

void stream_prefix(u32 length, u8 out[SD_CORE_STREAM_PREFIX_SIZE])
{
	out[0] = static_cast<u8>(length >> 24);
	out[1] = static_cast<u8>(length >> 16);
	out[2] = static_cast<u8>(length >> 8);
	out[3] = static_cast<u8>(length);
}

} // namespace sd
