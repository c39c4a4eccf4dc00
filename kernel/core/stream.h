/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SOCK_STREAM framing, as SMB over TCP port 445: every message is preceded
 * by its length as 4 big-endian bytes. The parser finds message boundaries
 * in a user byte stream that may be split anywhere, including inside a
 * prefix.
 */
#ifndef SD_CORE_STREAM_H
#define SD_CORE_STREAM_H

#include "byte_span.h"
#include "result.h"
#include "smbdirect_core.h"
#include "types.h"

namespace sd
{

void stream_parser_init(sd_core_stream_parser &p, u32 max_message);
/* On error the parser is left unchanged and must not be fed again. */
[[nodiscard]] Errc stream_parse(sd_core_stream_parser &p, ByteSpan in, sd_core_stream_chunk &out);
void stream_prefix(u32 length, u8 out[SD_CORE_STREAM_PREFIX_SIZE]);

} // namespace sd

#endif
