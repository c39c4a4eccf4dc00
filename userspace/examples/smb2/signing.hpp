// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SMB 3.x signing ([MS-SMB2] 3.1.4.1, 3.1.4.2): the SP800-108 counter-mode
 * KDF with HMAC-SHA256 that turns a session key into a signing key, and
 * AES-128-CMAC (RFC 4493) over a whole message with its Signature field
 * zeroed, the algorithm of 3.0.x and the one 3.1.1 uses when no
 * SIGNING_CAPABILITIES context was negotiated (the examples send none).
 *
 * Which key signs what ([MS-SMB2] 3.2.4.1.1, 3.2.5.3.1):
 *  - Session.SigningKey: KDF(SessionKey, "SMBSigningKey\0", the session's
 *    preauth hash) for 3.1.1, KDF(SessionKey, "SMB2AESCMAC\0", "SmbSign\0")
 *    for 3.0.x; it signs the first channel's messages and both binding
 *    SESSION_SETUP requests of a new channel.
 *  - Channel.SigningKey of a bound channel: the same derivation from the
 *    binding authentication's own session key and, for 3.1.1, the preauth
 *    hash of the new connection's NEGOTIATE and the binding exchange; it
 *    signs the binding's final response and everything after on that
 *    connection.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_SIGNING_HPP
#define SMBDIRECT_EXAMPLES_SMB2_SIGNING_HPP

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>

#include "preauth.hpp"
#include "wire.hpp"

namespace smb2 {

using SigningKey = std::array<uint8_t, 16>;
using Signature = std::array<uint8_t, 16>;

/* SP800-108 KDF in counter mode, PRF HMAC-SHA256, r = 32, L = 128. */
SigningKey kdf_sp800_108(ByteView key, ByteView label, ByteView context);

/* AES-128-CMAC of the concatenated parts. */
Signature aes_cmac(const SigningKey &key, std::initializer_list<ByteView> parts);

/*
 * The signing key of a session or a channel. dialect 0x0300/0x0302 ignore
 * preauth; 0x0311 takes the final preauth hash of the session (or of the
 * binding exchange, for a channel).
 */
SigningKey derive_signing_key(uint16_t dialect, const SigningKey &session_key,
			      const PreauthHash::Value &preauth);

/* Sets SMB2_FLAGS_SIGNED and writes the signature of one whole message. */
void sign_message(std::span<uint8_t> message, const SigningKey &key);
/* The signature the message should carry (its own Signature read as zeros). */
Signature message_signature(ByteView message, const SigningKey &key);
/* Whether the message's Signature is the right one (constant time). */
bool signature_valid(ByteView message, const SigningKey &key);

} // namespace smb2

#endif
