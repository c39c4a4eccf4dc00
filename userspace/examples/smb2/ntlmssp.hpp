// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NTLMSSP ([MS-NLMP]) as SMB2 SESSION_SETUP carries it raw (without
 * SPNEGO, as cifs.ko does): the three messages, AV pairs, and NTLMv2
 * (NTOWFv2, NTProofStr, session base key, MIC) on nettle's MD4 and
 * HMAC-MD5. No signing or sealing: the examples keep sessions unsigned,
 * so neither KEY_EXCH nor the signing keys are needed.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_NTLMSSP_HPP
#define SMBDIRECT_EXAMPLES_SMB2_NTLMSSP_HPP

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "status.hpp"
#include "wire.hpp"

namespace smb2::ntlm {

/* NegotiateFlags ([MS-NLMP] 2.2.2.5). */
constexpr uint32_t negotiate_unicode = 0x00000001;
constexpr uint32_t negotiate_oem = 0x00000002;
constexpr uint32_t request_target = 0x00000004;
constexpr uint32_t negotiate_sign = 0x00000010;
constexpr uint32_t negotiate_seal = 0x00000020;
constexpr uint32_t negotiate_ntlm = 0x00000200;
constexpr uint32_t negotiate_anonymous = 0x00000800;
constexpr uint32_t negotiate_always_sign = 0x00008000;
constexpr uint32_t target_type_domain = 0x00010000;
constexpr uint32_t target_type_server = 0x00020000;
constexpr uint32_t negotiate_extended_session_security = 0x00080000;
constexpr uint32_t negotiate_target_info = 0x00800000;
constexpr uint32_t negotiate_version = 0x02000000;
constexpr uint32_t negotiate_128 = 0x20000000;
constexpr uint32_t negotiate_key_exch = 0x40000000;
constexpr uint32_t negotiate_56 = 0x80000000;

/* What the example client asks for: NTLMv2, Unicode, no signing/sealing. */
constexpr uint32_t client_flags = negotiate_unicode | request_target | negotiate_ntlm |
				  negotiate_extended_session_security | negotiate_target_info |
				  negotiate_version | negotiate_128 | negotiate_56;

/* AV pair ids ([MS-NLMP] 2.2.2.1). */
constexpr uint16_t av_eol = 0;
constexpr uint16_t av_nb_computer_name = 1;
constexpr uint16_t av_nb_domain_name = 2;
constexpr uint16_t av_dns_computer_name = 3;
constexpr uint16_t av_dns_domain_name = 4;
constexpr uint16_t av_flags = 6;
constexpr uint16_t av_timestamp = 7;
/* MsvAvFlags bit: the AUTHENTICATE message carries a MIC. */
constexpr uint32_t av_flag_mic_present = 0x2;

using Key16 = std::array<uint8_t, 16>;
using Challenge8 = std::array<uint8_t, 8>;

struct AvPair {
	uint16_t id = 0;
	Bytes value;
};

/* A TargetInfo list: must end with MsvAvEOL; pairs after it are ignored. */
Result<std::vector<AvPair>> decode_av_pairs(ByteView bytes);
/* The pairs followed by MsvAvEOL. */
Bytes encode_av_pairs(const std::vector<AvPair> &pairs);

/* --- crypto (nettle) ----------------------------------------------------- */

Key16 md4(ByteView data);
Key16 hmac_md5(ByteView key, std::initializer_list<ByteView> parts);
/* NTOWFv1: MD4 of the UTF-16LE password (nothing for invalid UTF-8). */
std::optional<Key16> nt_hash(std::string_view password);
/* NTOWFv2 = HMAC_MD5(NTOWFv1, UTF16LE(Upper(user) + domain)). */
std::optional<Key16> ntowf_v2(std::string_view user, std::string_view domain,
			      std::string_view password);

/*
 * The client's NTLMv2 blob ("temp" in [MS-NLMP] 3.3.2): 0x01 0x01, six
 * zeros, the FILETIME timestamp, the client challenge, four zeros, the AV
 * pairs (with their MsvAvEOL), four zeros.
 */
Bytes ntlmv2_blob(uint64_t timestamp, const Challenge8 &client_challenge, ByteView av_pairs);

struct V2Response {
	Key16 nt_proof_str{};
	Bytes nt_challenge_response; /* NTProofStr + blob */
	Key16 session_base_key{};
};
V2Response ntlmv2_response(const Key16 &response_key, const Challenge8 &server_challenge,
			   ByteView blob);
/* LMv2: HMAC_MD5(key, server || client challenge) followed by the client challenge. */
Bytes lmv2_response(const Key16 &response_key, const Challenge8 &server_challenge,
		    const Challenge8 &client_challenge);

/* --- messages ([MS-NLMP] 2.2.1) --------------------------------------------- */

struct NegotiateMessage {
	uint32_t flags = client_flags;
};

struct ChallengeMessage {
	uint32_t flags = 0;
	Challenge8 server_challenge{};
	std::string target_name;
	Bytes target_info; /* AV pairs, MsvAvEOL included */
};

struct AuthenticateMessage {
	uint32_t flags = 0;
	Bytes lm_challenge_response;
	Bytes nt_challenge_response;
	std::string domain;
	std::string user;
	std::string workstation;
	Bytes encrypted_random_session_key;
	/* Set: the MIC field is present (Version + MIC before the payload). */
	std::optional<Key16> mic;
};

Bytes encode_negotiate(const NegotiateMessage &m);
Result<NegotiateMessage> decode_negotiate(ByteView bytes);
Result<Bytes> encode_challenge(const ChallengeMessage &m);
Result<ChallengeMessage> decode_challenge(ByteView bytes);
/* Offset of the MIC inside an AUTHENTICATE message that has one. */
constexpr size_t mic_offset = 72;
Result<Bytes> encode_authenticate(const AuthenticateMessage &m);
Result<AuthenticateMessage> decode_authenticate(ByteView bytes);

/* --- the client's side of the exchange ------------------------------------- */

struct Credentials {
	std::string user;
	std::string password;
	std::string domain;
	std::string workstation;
};

struct ClientResult {
	Bytes authenticate_message;
	Key16 session_base_key{};
};

/*
 * From the server's CHALLENGE to our AUTHENTICATE: NTLMv2 with the given
 * client challenge and time (FILETIME; the server's MsvAvTimestamp wins
 * when present, and then LmChallengeResponse is zeros and a MIC over the
 * three messages is added, as [MS-NLMP] 3.1.5.1.2 says).
 */
Result<ClientResult> client_authenticate(const Credentials &credentials, ByteView negotiate,
					 ByteView challenge, const Challenge8 &client_challenge,
					 uint64_t now_filetime);

/* FILETIME (100 ns since 1601) of the current time. */
uint64_t filetime_now();
/* n random bytes from getrandom(2). */
std::error_code random_bytes(std::span<uint8_t> out);

} // namespace smb2::ntlm

#endif
