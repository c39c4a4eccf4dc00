// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SMB 3.1.1 preauthentication integrity ([MS-SMB2] 3.2.5.2, 3.3.5.4):
 * H(0) = 64 zero bytes, H(i) = SHA-512(H(i-1) || message i), over the
 * NEGOTIATE request and response and every SESSION_SETUP exchanged until
 * the session is established. The signing, encryption and application
 * keys of a 3.1.1 session are derived from the final value; an unsigned,
 * unencrypted session (the examples') derives none, but the client still
 * keeps the hash so that adding signing is a local change.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_PREAUTH_HPP
#define SMBDIRECT_EXAMPLES_SMB2_PREAUTH_HPP

#include <array>
#include <cstdint>

#include "wire.hpp"

namespace smb2 {

class PreauthHash {
public:
	using Value = std::array<uint8_t, 64>;

	void update(ByteView message);
	const Value &value() const
	{
		return value_;
	}

private:
	Value value_{};
};

} // namespace smb2

#endif
