// SPDX-License-Identifier: GPL-2.0
//
// NTLMSSP and NTLMv2 of the example client against the published vectors:
// RFC 1320 (MD4), RFC 2104 (HMAC-MD5), [MS-NLMP] 4.2.4 (NTLMv2: user
// "User", domain "Domain", password "Password", server challenge
// 0123456789abcdef, client challenge aa * 8, time 0, target info
// MsvAvNbDomainName "Domain" + MsvAvNbComputerName "Server"), and the
// parsers against hostile CHALLENGE messages.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "smb2/ntlmssp.hpp"
#include "smb2/unicode.hpp"

using namespace smb2;
using namespace smb2::ntlm;

namespace {

Bytes unhex(const std::string &s)
{
	Bytes out;
	for (size_t i = 0; i + 1 < s.size(); i += 2)
		out.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
	return out;
}

std::string hex(ByteView b)
{
	return to_hex(b);
}

const Challenge8 server_challenge = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
const Challenge8 client_challenge = { 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa };

/* [MS-NLMP] 4.2.4's target info: NbDomainName "Domain", NbComputerName "Server", EOL. */
const std::string vector_target_info =
	"02000c0044006f006d00610069006e00"
	"01000c005300650072007600650072000000"
	"0000";

/* The NTLMv2 "temp" blob of [MS-NLMP] 4.2.4.2.2. */
const std::string vector_blob = "01010000000000000000000000000000aaaaaaaaaaaaaaaa00000000" +
				vector_target_info + "00000000";

Bytes challenge_message(const Bytes &target_info, uint32_t flags = client_flags)
{
	ChallengeMessage m;
	m.flags = flags;
	m.server_challenge = server_challenge;
	m.target_name = "Domain";
	m.target_info = target_info;
	auto bytes = encode_challenge(m);
	EXPECT_TRUE(bytes);
	return *bytes;
}

} // namespace

TEST(ExampleCrypto, Md4Rfc1320)
{
	EXPECT_EQ(hex(md4(Bytes{})), "31d6cfe0d16ae931b73c59d7e0c089c0");
	std::string abc = "abc";
	EXPECT_EQ(hex(md4({ reinterpret_cast<const uint8_t *>(abc.data()), abc.size() })),
		  "a448017aaf21d8525fc10ae87aa6729d");
}

TEST(ExampleCrypto, HmacMd5Rfc2104)
{
	Bytes key(16, 0x0b);
	std::string text = "Hi There";
	EXPECT_EQ(hex(hmac_md5(key, { { reinterpret_cast<const uint8_t *>(text.data()),
					   text.size() } })),
		  "9294727a3638bb1c13f48ef8158bfc9d");
	/* Parts are one message: "Hi " + "There" gives the same MAC. */
	std::string a = "Hi ", b = "There";
	EXPECT_EQ(hex(hmac_md5(key, { { reinterpret_cast<const uint8_t *>(a.data()), a.size() },
				      { reinterpret_cast<const uint8_t *>(b.data()), b.size() } })),
		  "9294727a3638bb1c13f48ef8158bfc9d");
}

TEST(ExampleNtlm, NtHashMsNlmp)
{
	auto h = nt_hash("Password");
	ASSERT_TRUE(h);
	EXPECT_EQ(hex(*h), "a4f49c406510bdcab6824ee7c30fd852");
}

TEST(ExampleNtlm, Ntowfv2MsNlmp)
{
	auto k = ntowf_v2("User", "Domain", "Password");
	ASSERT_TRUE(k);
	EXPECT_EQ(hex(*k), "0c868a403bfd7a93a3001ef22ef02e3f");
	/* The user name is upper-cased, the domain is not. */
	EXPECT_EQ(hex(*ntowf_v2("user", "Domain", "Password")), hex(*k));
	EXPECT_NE(hex(*ntowf_v2("User", "DOMAIN", "Password")), hex(*k));
}

TEST(ExampleNtlm, Ntlmv2ResponseMsNlmp)
{
	Bytes blob = ntlmv2_blob(0, client_challenge, unhex(vector_target_info));
	EXPECT_EQ(hex(blob), vector_blob);
	V2Response r = ntlmv2_response(*ntowf_v2("User", "Domain", "Password"), server_challenge,
				       blob);
	EXPECT_EQ(hex(r.nt_proof_str), "68cd0ab851e51c96aabc927bebef6a1c");
	EXPECT_EQ(hex(r.session_base_key), "8de40ccadbc14a82f15cb0ad0de95ca3");
	EXPECT_EQ(hex(r.nt_challenge_response), "68cd0ab851e51c96aabc927bebef6a1c" + vector_blob);
}

TEST(ExampleNtlm, Lmv2ResponseMsNlmp)
{
	EXPECT_EQ(hex(lmv2_response(*ntowf_v2("User", "Domain", "Password"), server_challenge,
				    client_challenge)),
		  "86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa");
}

TEST(ExampleNtlm, ClientAuthenticateWithoutTimestamp)
{
	Credentials c{ "User", "Password", "Domain", "COMPUTER" };
	Bytes negotiate = encode_negotiate({});
	Bytes challenge = challenge_message(unhex(vector_target_info));
	auto r = client_authenticate(c, negotiate, challenge, client_challenge, 0);
	ASSERT_TRUE(r) << r.error().message();
	auto a = decode_authenticate(r->authenticate_message);
	ASSERT_TRUE(a) << a.error().message();
	EXPECT_EQ(hex(a->nt_challenge_response), "68cd0ab851e51c96aabc927bebef6a1c" + vector_blob);
	EXPECT_EQ(hex(a->lm_challenge_response),
		  "86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa");
	EXPECT_EQ(a->user, "User");
	EXPECT_EQ(a->domain, "Domain");
	EXPECT_EQ(a->workstation, "COMPUTER");
	EXPECT_TRUE(a->encrypted_random_session_key.empty());
	EXPECT_EQ(hex(r->session_base_key), "8de40ccadbc14a82f15cb0ad0de95ca3");
	/* The session stays unsigned: no SIGN, SEAL or KEY_EXCH. */
	EXPECT_EQ(a->flags & (negotiate_sign | negotiate_seal | negotiate_key_exch), 0u);
	EXPECT_TRUE(a->flags & negotiate_extended_session_security);
}

TEST(ExampleNtlm, ClientAuthenticateWithServerTimestampAddsMic)
{
	/* Target info with MsvAvTimestamp: LM zeros, MsvAvFlags MIC, a MIC. */
	Bytes ts_pair = unhex("07000800" "0102030405060708");
	Bytes info = unhex(vector_target_info.substr(0, vector_target_info.size() - 8));
	info.insert(info.end(), ts_pair.begin(), ts_pair.end());
	Bytes eol = unhex("00000000");
	info.insert(info.end(), eol.begin(), eol.end());

	Credentials c{ "User", "Password", "Domain", "COMPUTER" };
	Bytes negotiate = encode_negotiate({});
	Bytes challenge = challenge_message(info);
	auto r = client_authenticate(c, negotiate, challenge, client_challenge, 0);
	ASSERT_TRUE(r) << r.error().message();
	auto a = decode_authenticate(r->authenticate_message);
	ASSERT_TRUE(a);
	EXPECT_EQ(a->lm_challenge_response, Bytes(24, 0));
	/* The blob's timestamp is the server's, and MsvAvFlags says MIC present. */
	ByteView blob = ByteView(a->nt_challenge_response).subspan(16);
	EXPECT_EQ(hex(blob.subspan(8, 8)), "0102030405060708");
	auto pairs = decode_av_pairs(blob.subspan(28, blob.size() - 28 - 4));
	ASSERT_TRUE(pairs);
	bool mic_flag = false;
	for (auto &p : *pairs)
		if (p.id == av_flags && p.value.size() == 4)
			mic_flag = load_le32(p.value.data()) & av_flag_mic_present;
	EXPECT_TRUE(mic_flag);
	/* The NTProofStr covers that blob. */
	V2Response v2 = ntlmv2_response(*ntowf_v2("User", "Domain", "Password"), server_challenge,
					blob);
	EXPECT_EQ(hex(ByteView(a->nt_challenge_response).subspan(0, 16)), hex(v2.nt_proof_str));
	/* MIC = HMAC_MD5(session key, NEGOTIATE || CHALLENGE || AUTHENTICATE with MIC zeroed). */
	Bytes zeroed = r->authenticate_message;
	ASSERT_GE(zeroed.size(), mic_offset + 16);
	Bytes mic(zeroed.begin() + mic_offset, zeroed.begin() + mic_offset + 16);
	std::memset(zeroed.data() + mic_offset, 0, 16);
	EXPECT_EQ(hex(mic), hex(hmac_md5(v2.session_base_key, { negotiate, challenge, zeroed })));
	EXPECT_NE(mic, Bytes(16, 0));
}

TEST(ExampleNtlm, NegotiateMessageShape)
{
	Bytes n = encode_negotiate({});
	ASSERT_EQ(n.size(), 40u);
	EXPECT_EQ(std::memcmp(n.data(), "NTLMSSP", 8), 0);
	EXPECT_EQ(load_le32(n.data() + 8), 1u);
	uint32_t flags = load_le32(n.data() + 12);
	EXPECT_EQ(flags, client_flags);
	EXPECT_EQ(flags & (negotiate_sign | negotiate_seal | negotiate_always_sign), 0u);
	auto d = decode_negotiate(n);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->flags, client_flags);
}

TEST(ExampleNtlm, ChallengeRoundTrip)
{
	Bytes bytes = challenge_message(unhex(vector_target_info));
	auto m = decode_challenge(bytes);
	ASSERT_TRUE(m) << m.error().message();
	EXPECT_EQ(m->server_challenge, server_challenge);
	EXPECT_EQ(m->target_name, "Domain");
	EXPECT_EQ(hex(m->target_info), vector_target_info);
}

TEST(ExampleNtlm, HostileChallengesAreRejected)
{
	Bytes good = challenge_message(unhex(vector_target_info));
	/* Every truncation fails cleanly (ASan watches for overreads). */
	for (size_t n = 0; n < good.size(); n++) {
		Bytes cut(good.begin(), good.begin() + static_cast<long>(n));
		EXPECT_FALSE(decode_challenge(cut)) << "length " << n;
	}
	/* Wrong signature, wrong message type. */
	Bytes bad = good;
	bad[0] = 'X';
	EXPECT_EQ(decode_challenge(bad).error(), ParseError::bad_ntlmssp);
	bad = good;
	bad[8] = 3;
	EXPECT_EQ(decode_challenge(bad).error(), ParseError::bad_ntlmssp);
	/* TargetInfo offset beyond the message; length running past it. */
	bad = good;
	store_le32(bad.data() + 44, 0xFFFFFFF0u);
	EXPECT_EQ(decode_challenge(bad).error(), ParseError::bad_offset);
	bad = good;
	store_le16(bad.data() + 40, 0xFFFF);
	EXPECT_EQ(decode_challenge(bad).error(), ParseError::bad_offset);
	/* TargetInfo pointing into the fixed header. */
	bad = good;
	store_le32(bad.data() + 44, 8);
	EXPECT_EQ(decode_challenge(bad).error(), ParseError::bad_ntlmssp);
	/* An odd-length (not UTF-16) target name. */
	bad = good;
	store_le16(bad.data() + 12, 3);
	EXPECT_FALSE(decode_challenge(bad));
	/* AV pairs without MsvAvEOL, and one whose length runs past the list. */
	EXPECT_FALSE(decode_challenge(challenge_message(unhex("02000200aaaa"))));
	EXPECT_FALSE(decode_challenge(challenge_message(unhex("0200ff00aaaa00000000"))));
	/* A server that does not speak Unicode is refused by the client. */
	Credentials c{ "U", "P", "", "" };
	Bytes oem = challenge_message(unhex(vector_target_info), negotiate_oem | negotiate_ntlm);
	EXPECT_FALSE(client_authenticate(c, encode_negotiate({}), oem, client_challenge, 0));
}

TEST(ExampleNtlm, AvPairsRoundTrip)
{
	std::vector<AvPair> pairs = { { av_nb_domain_name, { 'D', 0 } }, { av_flags, { 2, 0, 0, 0 } } };
	Bytes b = encode_av_pairs(pairs);
	EXPECT_EQ(hex(b), "020002004400" "060004000200000000000000");
	auto d = decode_av_pairs(b);
	ASSERT_TRUE(d);
	ASSERT_EQ(d->size(), 2u);
	EXPECT_EQ((*d)[1].value, (Bytes{ 2, 0, 0, 0 }));
}

TEST(ExampleUnicode, Utf16RoundTripAndRejects)
{
	auto u = utf16le_from_utf8("\\\\10.77.0.1\\share\xc3\xa9\xf0\x9f\x98\x80");
	ASSERT_TRUE(u);
	auto back = utf8_from_utf16le(*u);
	ASSERT_TRUE(back);
	EXPECT_EQ(*back, "\\\\10.77.0.1\\share\xc3\xa9\xf0\x9f\x98\x80");
	EXPECT_FALSE(utf16le_from_utf8("\xc3"));	   /* truncated sequence */
	EXPECT_FALSE(utf16le_from_utf8("\xc0\xaf"));	   /* overlong */
	EXPECT_FALSE(utf16le_from_utf8("\xed\xa0\x80")); /* surrogate */
	EXPECT_FALSE(utf8_from_utf16le(Bytes{ 0x41 }));	   /* odd length */
	EXPECT_FALSE(utf8_from_utf16le(Bytes{ 0x00, 0xD8 })); /* lone high surrogate */
	EXPECT_FALSE(utf8_from_utf16le(Bytes{ 0x00, 0xDC, 0x41, 0x00 })); /* lone low */
	EXPECT_EQ(upper_case("user\xc3\xa9"), "USER\xc3\x89");
}
