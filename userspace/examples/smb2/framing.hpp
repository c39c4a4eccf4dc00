// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SMB2 messages on a stream socket: each one behind a 4-byte big-endian
 * length, exactly as SMB over TCP port 445 ([MS-SMB2] 2.1). Our
 * SOCK_STREAM SMB-Direct socket takes and delivers the same framing and
 * turns each framed message into one SMB-Direct message, so the same two
 * functions serve TCP and SMB-Direct.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_FRAMING_HPP
#define SMBDIRECT_EXAMPLES_SMB2_FRAMING_HPP

#include <system_error>

#include "status.hpp"
#include "wire.hpp"

namespace smb2 {

/*
 * Reads one message. A length above max_size is ParseError::too_large
 * (nothing more is read: the stream cannot be trusted after it). The
 * peer's close between two messages is std::errc::not_connected
 * (is_end_of_stream()), inside one std::errc::connection_aborted.
 */
Result<Bytes> read_message(int fd, size_t max_size);
/* Writes the prefix and the message, retrying short writes and EINTR. */
std::error_code write_message(int fd, ByteView message);

/* True for read_message()'s "the peer closed between messages". */
bool is_end_of_stream(std::error_code ec);

} // namespace smb2

#endif
