// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ntlmssp.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>

#include <nettle/hmac.h>
#include <nettle/md4.h>
#include <nettle/md5.h>
#include <sys/random.h>

#include "unicode.hpp"

namespace smb2::ntlm {

namespace {

constexpr uint8_t signature[8] = { 'N', 'T', 'L', 'M', 'S', 'S', 'P', 0 };
constexpr uint32_t type_negotiate = 1;
constexpr uint32_t type_challenge = 2;
constexpr uint32_t type_authenticate = 3;
/* ProductMajorVersion 6, Minor 1, Build 7600, NTLMSSP_REVISION_W2K3. */
constexpr uint8_t version[8] = { 6, 1, 0xB0, 0x1D, 0, 0, 0, 0x0F };
constexpr size_t max_av_pairs = 64;

/* Len/MaxLen/Offset fields pointing at data appended to a payload. */
class Payload {
public:
	explicit Payload(Writer &w) : w_(w)
	{
	}
	/* Writes a field for data placed later. */
	void field(ByteView data)
	{
		pending_.push_back({ w_.size(), data });
		w_.le16(static_cast<uint16_t>(data.size()));
		w_.le16(static_cast<uint16_t>(data.size()));
		w_.le32(0);
	}
	/* Appends every pending part and patches its offset. */
	void place()
	{
		for (auto &p : pending_) {
			w_.le32_at(p.pos + 4, static_cast<uint32_t>(w_.size()));
			w_.bytes(p.data);
		}
	}

private:
	struct Pending {
		size_t pos;
		ByteView data;
	};
	Writer &w_;
	std::vector<Pending> pending_;
};

/* A Len/MaxLen/Offset field's data, checked against the message. */
Result<ByteView> field_data(ByteView message, Reader &r, size_t payload_start)
{
	uint16_t len = r.le16();
	r.skip(2);
	uint32_t off = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	if (len == 0)
		return ByteView{};
	if (off < payload_start)
		return ParseError::bad_ntlmssp;
	auto part = slice(message, off, len);
	if (!part)
		return ParseError::bad_offset;
	return *part;
}

Result<std::string> field_string(ByteView message, Reader &r, size_t payload_start)
{
	auto data = field_data(message, r, payload_start);
	if (!data)
		return data.error();
	auto s = utf8_from_utf16le(*data);
	if (!s)
		return ParseError::bad_ntlmssp;
	return *s;
}

Result<Reader> message_reader(ByteView bytes, uint32_t type, size_t fixed_size)
{
	if (bytes.size() < fixed_size)
		return ParseError::truncated;
	if (std::memcmp(bytes.data(), signature, 8) != 0)
		return ParseError::bad_ntlmssp;
	Reader r(bytes, 8);
	if (r.le32() != type)
		return ParseError::bad_ntlmssp;
	return r;
}

} // namespace

Result<std::vector<AvPair>> decode_av_pairs(ByteView bytes)
{
	std::vector<AvPair> pairs;
	Reader r(bytes);
	for (;;) {
		uint16_t id = r.le16();
		uint16_t len = r.le16();
		ByteView value = r.bytes(len);
		if (!r.ok())
			return ParseError::bad_ntlmssp;
		if (id == av_eol)
			return pairs;
		if (pairs.size() == max_av_pairs)
			return ParseError::too_large;
		pairs.push_back({ id, Bytes(value.begin(), value.end()) });
	}
}

Bytes encode_av_pairs(const std::vector<AvPair> &pairs)
{
	Writer w;
	for (const auto &p : pairs) {
		w.le16(p.id);
		w.le16(static_cast<uint16_t>(p.value.size()));
		w.bytes(p.value);
	}
	w.le16(av_eol);
	w.le16(0);
	return w.take();
}

Key16 md4(ByteView data)
{
	md4_ctx ctx;
	md4_init(&ctx);
	md4_update(&ctx, data.size(), data.data());
	Key16 out;
	md4_digest(&ctx, out.size(), out.data());
	return out;
}

Key16 hmac_md5(ByteView key, std::initializer_list<ByteView> parts)
{
	hmac_md5_ctx ctx;
	hmac_md5_set_key(&ctx, key.size(), key.data());
	for (ByteView p : parts)
		hmac_md5_update(&ctx, p.size(), p.data());
	Key16 out;
	hmac_md5_digest(&ctx, out.size(), out.data());
	return out;
}

std::optional<Key16> nt_hash(std::string_view password)
{
	auto utf16 = utf16le_from_utf8(password);
	if (!utf16)
		return std::nullopt;
	return md4(*utf16);
}

std::optional<Key16> ntowf_v2(std::string_view user, std::string_view domain,
			      std::string_view password)
{
	auto hash = nt_hash(password);
	auto identity = utf16le_from_utf8(upper_case(user) + std::string(domain));
	if (!hash || !identity)
		return std::nullopt;
	return hmac_md5(*hash, { *identity });
}

Bytes ntlmv2_blob(uint64_t timestamp, const Challenge8 &client_challenge, ByteView av_pairs)
{
	Writer w;
	w.u8(1); /* RespType */
	w.u8(1); /* HiRespType */
	w.zeros(6);
	w.le64(timestamp);
	w.bytes(client_challenge);
	w.zeros(4);
	w.bytes(av_pairs);
	w.zeros(4);
	return w.take();
}

V2Response ntlmv2_response(const Key16 &response_key, const Challenge8 &server_challenge,
			   ByteView blob)
{
	V2Response r;
	r.nt_proof_str = hmac_md5(response_key, { server_challenge, blob });
	Writer w;
	w.bytes(r.nt_proof_str);
	w.bytes(blob);
	r.nt_challenge_response = w.take();
	r.session_base_key = hmac_md5(response_key, { r.nt_proof_str });
	return r;
}

Bytes lmv2_response(const Key16 &response_key, const Challenge8 &server_challenge,
		    const Challenge8 &client_challenge)
{
	Key16 mac = hmac_md5(response_key, { server_challenge, client_challenge });
	Writer w;
	w.bytes(mac);
	w.bytes(client_challenge);
	return w.take();
}

Bytes encode_negotiate(const NegotiateMessage &m)
{
	Writer w;
	w.bytes(signature);
	w.le32(type_negotiate);
	w.le32(m.flags);
	w.zeros(8); /* DomainNameFields */
	w.zeros(8); /* WorkstationFields */
	if (m.flags & negotiate_version)
		w.bytes(version);
	return w.take();
}

Result<NegotiateMessage> decode_negotiate(ByteView bytes)
{
	auto r = message_reader(bytes, type_negotiate, 16);
	if (!r)
		return r.error();
	NegotiateMessage m;
	m.flags = r->le32();
	return m;
}

Result<Bytes> encode_challenge(const ChallengeMessage &m)
{
	auto name = utf16le_from_utf8(m.target_name);
	if (!name)
		return std::make_error_code(std::errc::illegal_byte_sequence);
	Writer w;
	Payload payload(w);
	w.bytes(signature);
	w.le32(type_challenge);
	payload.field(*name);
	w.le32(m.flags);
	w.bytes(m.server_challenge);
	w.zeros(8);
	payload.field(m.target_info);
	w.bytes(version);
	payload.place();
	return w.take();
}

Result<ChallengeMessage> decode_challenge(ByteView bytes)
{
	/* Through TargetInfoFields; Version is optional. */
	auto rr = message_reader(bytes, type_challenge, 48);
	if (!rr)
		return rr.error();
	Reader &r = *rr;
	ChallengeMessage m;
	const size_t payload_start = 48;
	auto name = field_string(bytes, r, payload_start);
	if (!name)
		return name.error();
	m.target_name = std::move(*name);
	m.flags = r.le32();
	ByteView challenge = r.bytes(8);
	r.skip(8);
	if (!r.ok())
		return ParseError::truncated;
	std::memcpy(m.server_challenge.data(), challenge.data(), 8);
	auto info = field_data(bytes, r, payload_start);
	if (!info)
		return info.error();
	if (!info->empty()) {
		/* Validate now: the client copies it into its NTLMv2 blob. */
		auto pairs = decode_av_pairs(*info);
		if (!pairs)
			return pairs.error();
	}
	m.target_info.assign(info->begin(), info->end());
	return m;
}

Result<Bytes> encode_authenticate(const AuthenticateMessage &m)
{
	auto domain = utf16le_from_utf8(m.domain);
	auto user = utf16le_from_utf8(m.user);
	auto workstation = utf16le_from_utf8(m.workstation);
	if (!domain || !user || !workstation)
		return std::make_error_code(std::errc::illegal_byte_sequence);
	Writer w;
	Payload payload(w);
	w.bytes(signature);
	w.le32(type_authenticate);
	payload.field(m.lm_challenge_response);
	payload.field(m.nt_challenge_response);
	payload.field(*domain);
	payload.field(*user);
	payload.field(*workstation);
	payload.field(m.encrypted_random_session_key);
	w.le32(m.flags);
	if (m.mic) {
		w.bytes(version);
		w.bytes(*m.mic);
	} else if (m.flags & negotiate_version) {
		w.bytes(version);
	}
	payload.place();
	return w.take();
}

Result<AuthenticateMessage> decode_authenticate(ByteView bytes)
{
	auto rr = message_reader(bytes, type_authenticate, 64);
	if (!rr)
		return rr.error();
	Reader &r = *rr;
	AuthenticateMessage m;
	/*
	 * The fixed part ends after NegotiateFlags (64), Version (72) or the
	 * MIC (88) depending on the sender: no data may start before 64.
	 */
	const size_t payload_start = 64;
	auto lm = field_data(bytes, r, payload_start);
	auto nt = field_data(bytes, r, payload_start);
	if (!lm)
		return lm.error();
	if (!nt)
		return nt.error();
	auto domain = field_string(bytes, r, payload_start);
	if (!domain)
		return domain.error();
	auto user = field_string(bytes, r, payload_start);
	if (!user)
		return user.error();
	auto workstation = field_string(bytes, r, payload_start);
	if (!workstation)
		return workstation.error();
	auto key = field_data(bytes, r, payload_start);
	if (!key)
		return key.error();
	m.flags = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	m.lm_challenge_response.assign(lm->begin(), lm->end());
	m.nt_challenge_response.assign(nt->begin(), nt->end());
	m.domain = std::move(*domain);
	m.user = std::move(*user);
	m.workstation = std::move(*workstation);
	m.encrypted_random_session_key.assign(key->begin(), key->end());
	return m;
}

Result<ClientResult> client_authenticate(const Credentials &credentials, ByteView negotiate,
					 ByteView challenge, const Challenge8 &client_challenge,
					 uint64_t now_filetime)
{
	auto ch = decode_challenge(challenge);
	if (!ch)
		return ch.error();
	if (!(ch->flags & negotiate_unicode))
		return ParseError::bad_ntlmssp; /* we only speak Unicode */
	const Bytes no_pairs = encode_av_pairs({});
	auto pairs = decode_av_pairs(ch->target_info.empty() ? ByteView(no_pairs)
							      : ByteView(ch->target_info));
	if (!pairs)
		return pairs.error();

	uint64_t timestamp = now_filetime;
	bool server_timestamp = false;
	bool have_flags = false;
	for (auto &p : *pairs) {
		if (p.id == av_timestamp && p.value.size() == 8) {
			timestamp = load_le64(p.value.data());
			server_timestamp = true;
		}
	}
	if (server_timestamp) {
		for (auto &p : *pairs) {
			if (p.id == av_flags && p.value.size() == 4) {
				store_le32(p.value.data(),
					   load_le32(p.value.data()) | av_flag_mic_present);
				have_flags = true;
			}
		}
		if (!have_flags) {
			Bytes v(4);
			store_le32(v.data(), av_flag_mic_present);
			pairs->push_back({ av_flags, std::move(v) });
		}
	}

	auto key = ntowf_v2(credentials.user, credentials.domain, credentials.password);
	if (!key)
		return std::make_error_code(std::errc::illegal_byte_sequence);
	Bytes blob = ntlmv2_blob(timestamp, client_challenge, encode_av_pairs(*pairs));
	V2Response v2 = ntlmv2_response(*key, ch->server_challenge, blob);

	AuthenticateMessage m;
	/* What both sides asked for, never signing or sealing. */
	m.flags = (client_flags & ch->flags) | negotiate_unicode;
	m.flags &= ~(negotiate_sign | negotiate_seal | negotiate_key_exch);
	m.lm_challenge_response = server_timestamp
					  ? Bytes(24, 0)
					  : lmv2_response(*key, ch->server_challenge, client_challenge);
	m.nt_challenge_response = std::move(v2.nt_challenge_response);
	m.domain = credentials.domain;
	m.user = credentials.user;
	m.workstation = credentials.workstation;
	if (server_timestamp)
		m.mic = Key16{};
	auto encoded = encode_authenticate(m);
	if (!encoded)
		return encoded.error();
	if (server_timestamp) {
		/* Without KEY_EXCH the exported session key is the session base key. */
		Key16 mic = hmac_md5(v2.session_base_key, { negotiate, challenge, *encoded });
		std::memcpy(encoded->data() + mic_offset, mic.data(), mic.size());
	}
	return ClientResult{ std::move(*encoded), v2.session_base_key };
}

uint64_t filetime_now()
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	return (static_cast<uint64_t>(ts.tv_sec) + 11644473600ULL) * 10000000ULL +
	       static_cast<uint64_t>(ts.tv_nsec) / 100;
}

std::error_code random_bytes(std::span<uint8_t> out)
{
	size_t done = 0;
	while (done < out.size()) {
		ssize_t n = getrandom(out.data() + done, out.size() - done, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return { errno, std::system_category() };
		}
		done += static_cast<size_t>(n);
	}
	return {};
}

} // namespace smb2::ntlm
