// SPDX-License-Identifier: GPL-2.0
//
// SMB 3.x signing of the example client against published vectors:
// AES-128-CMAC against RFC 4493 section 4; the SP800-108 KDF and whole
// signed messages against the key derivation examples of Microsoft's Open
// Specifications blog "SMB 2 and SMB 3 security in Windows 10: the anatomy
// of signing and cryptographic keys" (2017, its appendix): an SMB 3.0
// session and its second channel, and an SMB 3.1.1 session (preauth hash
// 0DD13628...) with a channel bound to it, whose signed SESSION_SETUP
// messages the appendix lists byte for byte.
#include <gtest/gtest.h>

#include <string>

#include "smb2/signing.hpp"
#include "smb2/smb2.hpp"

using namespace smb2;

namespace {

Bytes unhex(const std::string &s)
{
	Bytes out;
	for (size_t i = 0; i + 1 < s.size(); i += 2)
		out.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
	return out;
}

template <size_t N> std::array<uint8_t, N> unhex_array(const std::string &s)
{
	Bytes b = unhex(s);
	std::array<uint8_t, N> out{};
	EXPECT_EQ(b.size(), N) << s;
	std::copy_n(b.begin(), std::min(N, b.size()), out.begin());
	return out;
}

std::string hex(ByteView b)
{
	return to_hex(b);
}

/* RFC 4493 section 4: K and the first 64 bytes of its message M. */
const SigningKey rfc4493_key = unhex_array<16>("2b7e151628aed2a6abf7158809cf4f3c");
const std::string rfc4493_m = "6bc1bee22e409f96e93d7e117393172a"
			      "ae2d8a571e03ac9c9eb76fac45af8e51"
			      "30c81c46a35ce411e5fbc1191a0a52ef"
			      "f69f2445df4f9b17ad2b417be66c3710";

} // namespace

TEST(Signing, AesCmacRfc4493)
{
	Bytes m = unhex(rfc4493_m);
	ByteView v(m);
	EXPECT_EQ(hex(aes_cmac(rfc4493_key, { ByteView() })), "bb1d6929e95937287fa37d129b756746");
	EXPECT_EQ(hex(aes_cmac(rfc4493_key, { v.subspan(0, 16) })),
		  "070a16b46b4d4144f79bdd9dd04a287c");
	EXPECT_EQ(hex(aes_cmac(rfc4493_key, { v.subspan(0, 40) })),
		  "dfa66747de9ae63030ca32611497c827");
	EXPECT_EQ(hex(aes_cmac(rfc4493_key, { v })), "51f0bebf7e3b9d92fc49741779363cfe");
	/* In pieces that do not fall on block boundaries: the same MAC. */
	EXPECT_EQ(hex(aes_cmac(rfc4493_key, { v.subspan(0, 7), v.subspan(7, 30), v.subspan(37) })),
		  "51f0bebf7e3b9d92fc49741779363cfe");
}

TEST(Signing, KdfSmb30SessionAndChannel)
{
	PreauthHash::Value unused{};
	EXPECT_EQ(hex(derive_signing_key(dialect_300, unhex_array<16>("7CD451825D0450D235424E44BA6E78CC"),
					 unused)),
		  "0b7e9c5cac36c0f6ea9ab275298cedce");
	EXPECT_EQ(hex(derive_signing_key(dialect_302, unhex_array<16>("4E01A2B313BCF660CC250BEF021AEDE6"),
					 unused)),
		  "ba1a17dbbfec349bca105563d598952f");
}

/* The 3.1.1 session of the appendix: its key and the preauth hash it ends with. */
const SigningKey session_key_311 = unhex_array<16>("270E1BA896585EEB7AF3472D3B4C75A7");
const PreauthHash::Value preauth_311 = unhex_array<64>(
	"0DD13628CC3ED218EF9DF9772D436D0887AB9814BFAE63A80AA845F36909DB79"
	"28622DDDAD522D9751640A459762C5A9D6BB084CBB3CE6BDADEF5D5BCE3C6C01");
/* Its bound channel: the binding authentication's key and preauth hash. */
const SigningKey channel_session_key_311 = unhex_array<16>("84B9DBB730116A8FA6E9889555C265F9");
const PreauthHash::Value channel_preauth_311 = unhex_array<64>(
	"EA3BF912B11CBFEC5B1889E8209614218687F82FA5294521AD3063425E49E88A"
	"10BD022124CE25123BC9111F52D9566BA88BF46344E6063DC5E3FF0389026F6C");

TEST(Signing, KdfSmb311SessionAndBoundChannel)
{
	EXPECT_EQ(hex(derive_signing_key(dialect_311, session_key_311, preauth_311)),
		  "73fe7a9a77bef0bde49c650d8ccb5f76");
	EXPECT_EQ(hex(derive_signing_key(dialect_311, channel_session_key_311, channel_preauth_311)),
		  "c962bca1a9dd1697b030644199705431");
}

/*
 * The appendix's signed messages: the first channel's final SESSION_SETUP
 * response (Session.SigningKey), the binding's first request (signed with
 * Session.SigningKey, the flag set) and its final response (the new
 * Channel.SigningKey).
 */
TEST(Signing, Smb311SessionSetupSignatures)
{
	SigningKey session = derive_signing_key(dialect_311, session_key_311, preauth_311);
	SigningKey channel =
		derive_signing_key(dialect_311, channel_session_key_311, channel_preauth_311);

	Bytes final_rsp = unhex("FE534D4240000100000000000100800009000000000000000300000000000000"
				"FFFE0000000000001900000000100000EBE146DA120BA25FC3376A49DFE31BC1"
				"0900000048001D00A11B3019A0030A0100A3120410010000003B453CDC352416"
				"4200000000");
	EXPECT_TRUE(signature_valid(final_rsp, session));
	EXPECT_EQ(hex(message_signature(final_rsp, session)), "ebe146da120ba25fc3376a49dfe31bc1");
	EXPECT_FALSE(signature_valid(final_rsp, channel));

	/* The binding request, signed from scratch: the same bytes. */
	Bytes bind_req = unhex("FE534D4240000100000000000100800008000000000000000200000000000000"
			       "FFFE000000000000190000000010000068BD0C58F613CE1334B1EB51C68D39EA"
			       "19000101010000000000000058004A000000000000000000604806062B060105"
			       "0502A03E303CA00E300C060A2B06010401823702020AA22A04284E544C4D5353"
			       "5000010000009782" "08E200000000000000000000000000000000060380250000000F");
	Bytes unsigned_req = bind_req;
	std::fill_n(unsigned_req.begin() + 48, 16, 0);
	unsigned_req[16] &= ~flag_signed;
	Bytes resigned = unsigned_req;
	sign_message(resigned, session);
	EXPECT_EQ(hex(resigned), hex(bind_req));
	EXPECT_TRUE(signature_valid(bind_req, session));

	Bytes bind_final = unhex("FE534D4240000100000000000100800009000000000000000300000000000000"
				 "FFFE00000000000019000000001000008D604217FFBACF40635BF9D872992150"
				 "0900000048001D00A11B3019A0030A0100A312041001000000CFB046FC5D368E"
				 "2200000000");
	EXPECT_TRUE(signature_valid(bind_final, channel));
	EXPECT_FALSE(signature_valid(bind_final, session));

	/* One bit anywhere, in the header or the body, breaks it. */
	for (size_t at : { size_t{ 0 }, size_t{ 12 }, size_t{ 40 }, size_t{ 64 }, bind_final.size() - 1 }) {
		Bytes bad = bind_final;
		bad[at] ^= 0x01;
		EXPECT_FALSE(signature_valid(bad, channel)) << "bit flipped at " << at;
	}
	EXPECT_FALSE(signature_valid(ByteView(bind_final).subspan(0, 63), channel));
}
