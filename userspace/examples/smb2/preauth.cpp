// SPDX-License-Identifier: LGPL-2.1-or-later
#include "preauth.hpp"

#include <nettle/sha2.h>

namespace smb2 {

void PreauthHash::update(ByteView message)
{
	sha512_ctx ctx;
	sha512_init(&ctx);
	sha512_update(&ctx, value_.size(), value_.data());
	sha512_update(&ctx, message.size(), message.data());
	sha512_digest(&ctx, value_.size(), value_.data());
}

} // namespace smb2
