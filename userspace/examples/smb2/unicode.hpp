// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SMB2 and NTLMSSP carry names as UTF-16LE; the examples take and print
 * UTF-8. Invalid input (bad UTF-8, unpaired surrogates from a peer) is
 * reported, never guessed at.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_UNICODE_HPP
#define SMBDIRECT_EXAMPLES_SMB2_UNICODE_HPP

#include <optional>
#include <string>
#include <string_view>

#include "wire.hpp"

namespace smb2 {

/* UTF-8 to UTF-16LE bytes; nothing on invalid UTF-8. */
std::optional<Bytes> utf16le_from_utf8(std::string_view utf8);
/* UTF-16LE bytes (even length) to UTF-8; nothing on odd length or bad surrogates. */
std::optional<std::string> utf8_from_utf16le(ByteView utf16le);
/*
 * Upper case as NTOWFv2 needs it for the user name: ASCII and Latin-1
 * letters (what Windows and Samba map for such names); others unchanged.
 */
std::string upper_case(std::string_view utf8);

} // namespace smb2

#endif
