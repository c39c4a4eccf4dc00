// SPDX-License-Identifier: LGPL-2.1-or-later
#include "signing.hpp"

#include <cstring>

#include <nettle/cmac.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "smb2.hpp"

namespace smb2 {

namespace {

constexpr size_t flags_offset = 16;
constexpr size_t signature_offset = 48;

/* Labels and contexts with their terminating NUL, as [MS-SMB2] 3.1.4.2 counts them. */
template <size_t N> ByteView with_nul(const char (&s)[N])
{
	return { reinterpret_cast<const uint8_t *>(s), N };
}

} // namespace

SigningKey kdf_sp800_108(ByteView key, ByteView label, ByteView context)
{
	static const uint8_t counter_one[4] = { 0, 0, 0, 1 };
	static const uint8_t separator = 0;
	static const uint8_t length_bits[4] = { 0, 0, 0, 128 };
	hmac_sha256_ctx ctx;
	hmac_sha256_set_key(&ctx, key.size(), key.data());
	hmac_sha256_update(&ctx, sizeof(counter_one), counter_one);
	hmac_sha256_update(&ctx, label.size(), label.data());
	hmac_sha256_update(&ctx, 1, &separator);
	hmac_sha256_update(&ctx, context.size(), context.data());
	hmac_sha256_update(&ctx, sizeof(length_bits), length_bits);
	SigningKey out;
	/* L = 128 bits: one PRF block, truncated. */
	hmac_sha256_digest(&ctx, out.size(), out.data());
	return out;
}

Signature aes_cmac(const SigningKey &key, std::initializer_list<ByteView> parts)
{
	cmac_aes128_ctx ctx;
	cmac_aes128_set_key(&ctx, key.data());
	for (ByteView p : parts)
		cmac_aes128_update(&ctx, p.size(), p.data());
	Signature out;
	cmac_aes128_digest(&ctx, out.size(), out.data());
	return out;
}

SigningKey derive_signing_key(uint16_t dialect, const SigningKey &session_key,
			      const PreauthHash::Value &preauth)
{
	if (dialect == dialect_311)
		return kdf_sp800_108(session_key, with_nul("SMBSigningKey"), preauth);
	return kdf_sp800_108(session_key, with_nul("SMB2AESCMAC"), with_nul("SmbSign"));
}

Signature message_signature(ByteView message, const SigningKey &key)
{
	static const uint8_t zeros[16] = {};
	if (message.size() < header_size)
		return aes_cmac(key, { message });
	return aes_cmac(key, { message.subspan(0, signature_offset), ByteView(zeros),
			       message.subspan(signature_offset + 16) });
}

void sign_message(std::span<uint8_t> message, const SigningKey &key)
{
	if (message.size() < header_size)
		return;
	uint32_t flags = load_le32(message.data() + flags_offset) | flag_signed;
	store_le32(message.data() + flags_offset, flags);
	Signature s = message_signature(message, key);
	std::memcpy(message.data() + signature_offset, s.data(), s.size());
}

bool signature_valid(ByteView message, const SigningKey &key)
{
	if (message.size() < header_size)
		return false;
	Signature s = message_signature(message, key);
	return memeql_sec(s.data(), message.data() + signature_offset, s.size()) != 0;
}

} // namespace smb2
