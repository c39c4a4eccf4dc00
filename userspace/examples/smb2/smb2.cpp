// SPDX-License-Identifier: LGPL-2.1-or-later
#include "smb2.hpp"

#include <cstdio>
#include <cstring>

#include "unicode.hpp"

namespace smb2 {

namespace {

constexpr uint8_t protocol_id[4] = { 0xFE, 'S', 'M', 'B' };
/* The most negotiate contexts we accept in one message. */
constexpr size_t max_negotiate_contexts = 32;
constexpr size_t max_dialects = 64;

/* A Reader positioned at the body, with StructureSize checked. */
Result<Reader> body_reader(ByteView message, uint16_t structure_size)
{
	Reader r(message, header_size);
	uint16_t size = r.le16();
	if (!r.ok())
		return ParseError::truncated;
	if (size != structure_size)
		return ParseError::bad_structure_size;
	return r;
}

/*
 * A variable part given as offset/length from the header start. Length 0
 * is an empty view whatever the offset (peers put 0 or the buffer's start).
 * Non-empty parts must not overlap the header and fixed body before
 * min_offset.
 */
Result<ByteView> variable_part(ByteView message, uint64_t offset, uint64_t length,
			       size_t min_offset)
{
	if (length == 0)
		return ByteView{};
	if (offset < min_offset)
		return ParseError::bad_offset;
	auto part = slice(message, offset, length);
	if (!part)
		return ParseError::bad_offset;
	return *part;
}

Result<std::string> utf16_name(ByteView bytes)
{
	auto s = utf8_from_utf16le(bytes);
	if (!s)
		return ParseError::bad_value;
	return *s;
}

void encode_file_id(Writer &w, const FileId &f)
{
	w.le64(f.persistent);
	w.le64(f.volatile_);
}

FileId decode_file_id(Reader &r)
{
	FileId f;
	f.persistent = r.le64();
	f.volatile_ = r.le64();
	return f;
}

void encode_times(Writer &w, const FileTimes &t)
{
	w.le64(t.creation);
	w.le64(t.last_access);
	w.le64(t.last_write);
	w.le64(t.change);
}

FileTimes decode_times(Reader &r)
{
	FileTimes t;
	t.creation = r.le64();
	t.last_access = r.le64();
	t.last_write = r.le64();
	t.change = r.le64();
	return t;
}

/* Negotiate contexts: 8-byte aligned from the header start, each padded. */
void encode_contexts(Writer &w, const std::vector<NegotiateContext> &contexts)
{
	for (size_t i = 0; i < contexts.size(); i++) {
		w.align(8);
		w.le16(contexts[i].type);
		w.le16(static_cast<uint16_t>(contexts[i].data.size()));
		w.le32(0);
		w.bytes(contexts[i].data);
	}
}

Result<std::vector<NegotiateContext>> decode_contexts(ByteView message, uint32_t offset,
						      uint16_t count, size_t min_offset)
{
	std::vector<NegotiateContext> out;
	if (count == 0)
		return out;
	if (count > max_negotiate_contexts)
		return ParseError::too_large;
	if (offset < min_offset || offset % 8)
		return ParseError::bad_offset;
	size_t pos = offset;
	for (uint16_t i = 0; i < count; i++) {
		pos = (pos + 7) & ~size_t(7);
		Reader r(message, pos);
		NegotiateContext c;
		c.type = r.le16();
		uint16_t len = r.le16();
		r.skip(4);
		ByteView data = r.bytes(len);
		if (!r.ok())
			return ParseError::bad_offset;
		c.data.assign(data.begin(), data.end());
		out.push_back(std::move(c));
		pos = r.pos();
	}
	return out;
}

} // namespace

const char *command_name(Command c)
{
	static const char *const names[] = {
		"NEGOTIATE", "SESSION_SETUP", "LOGOFF",	    "TREE_CONNECT", "TREE_DISCONNECT",
		"CREATE",    "CLOSE",	      "FLUSH",	    "READ",	    "WRITE",
		"LOCK",	     "IOCTL",	      "CANCEL",	    "ECHO",	    "QUERY_DIRECTORY",
		"CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO", "OPLOCK_BREAK",
	};
	auto i = static_cast<size_t>(c);
	return i < sizeof(names) / sizeof(names[0]) ? names[i] : "UNKNOWN";
}

std::string dialect_name(uint16_t dialect)
{
	char buf[16];
	if (dialect == dialect_wildcard)
		return "2.???";
	std::snprintf(buf, sizeof(buf), "%x.%x.%x", dialect >> 8, (dialect >> 4) & 0xF,
		      dialect & 0xF);
	std::string s = buf;
	if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0 && (dialect & 0xF) == 0)
		s.resize(s.size() - 2);
	return s;
}

const char *channel_name(Channel c)
{
	switch (c) {
	case Channel::none:
		return "SMB2_CHANNEL_NONE";
	case Channel::rdma_v1:
		return "SMB2_CHANNEL_RDMA_V1";
	case Channel::rdma_v1_invalidate:
		return "SMB2_CHANNEL_RDMA_V1_INVALIDATE";
	case Channel::rdma_transform:
		return "SMB2_CHANNEL_RDMA_TRANSFORM";
	}
	return "SMB2_CHANNEL_?";
}

void encode_header(Writer &w, const Header &h)
{
	w.bytes(protocol_id);
	w.le16(64);
	w.le16(h.credit_charge);
	w.le32(h.status);
	w.le16(static_cast<uint16_t>(h.command));
	w.le16(h.credits);
	w.le32(h.flags);
	w.le32(h.next_command);
	w.le64(h.message_id);
	if (h.is_async()) {
		w.le64(h.async_id);
	} else {
		w.le32(0);
		w.le32(h.tree_id);
	}
	w.le64(h.session_id);
	w.bytes(h.signature);
}

Result<Header> decode_header(ByteView message)
{
	if (message.size() < header_size)
		return ParseError::truncated;
	if (std::memcmp(message.data(), protocol_id, 4) != 0)
		return ParseError::bad_protocol_id;
	Reader r(message, 4);
	Header h;
	if (r.le16() != 64)
		return ParseError::bad_structure_size;
	h.credit_charge = r.le16();
	h.status = r.le32();
	h.command = static_cast<Command>(r.le16());
	h.credits = r.le16();
	h.flags = r.le32();
	h.next_command = r.le32();
	h.message_id = r.le64();
	if (h.is_async()) {
		h.async_id = r.le64();
	} else {
		r.skip(4);
		h.tree_id = r.le32();
	}
	h.session_id = r.le64();
	ByteView sig = r.bytes(16);
	if (!r.ok())
		return ParseError::truncated;
	std::memcpy(h.signature.data(), sig.data(), 16);
	return h;
}

void encode_descriptors(Writer &w, const std::vector<BufferDescriptor> &descriptors)
{
	for (const auto &d : descriptors) {
		w.le64(d.offset);
		w.le32(d.token);
		w.le32(d.length);
	}
}

Result<std::vector<BufferDescriptor>> decode_descriptors(ByteView blob)
{
	if (blob.size() % buffer_descriptor_size)
		return ParseError::bad_value;
	std::vector<BufferDescriptor> out;
	Reader r(blob);
	while (r.remaining()) {
		BufferDescriptor d;
		d.offset = r.le64();
		d.token = r.le32();
		d.length = r.le32();
		out.push_back(d);
	}
	return out;
}

NegotiateContext encode_preauth_context(const PreauthIntegrity &p)
{
	Writer w;
	w.le16(static_cast<uint16_t>(p.hash_algorithms.size()));
	w.le16(static_cast<uint16_t>(p.salt.size()));
	for (uint16_t a : p.hash_algorithms)
		w.le16(a);
	w.bytes(p.salt);
	return { context_preauth_integrity, w.take() };
}

Result<PreauthIntegrity> decode_preauth_context(ByteView data)
{
	Reader r(data);
	PreauthIntegrity p;
	uint16_t count = r.le16();
	uint16_t salt_len = r.le16();
	if (!r.ok())
		return ParseError::truncated;
	if (count == 0)
		return ParseError::bad_value;
	for (uint16_t i = 0; i < count; i++)
		p.hash_algorithms.push_back(r.le16());
	ByteView salt = r.bytes(salt_len);
	if (!r.ok())
		return ParseError::truncated;
	p.salt.assign(salt.begin(), salt.end());
	return p;
}

/* --- NEGOTIATE ---------------------------------------------------------------- */

void encode_negotiate_request(Writer &w, const NegotiateRequest &r)
{
	bool has_contexts = !r.contexts.empty();
	w.le16(36);
	w.le16(static_cast<uint16_t>(r.dialects.size()));
	w.le16(r.security_mode);
	w.le16(0);
	w.le32(r.capabilities);
	w.bytes(r.client_guid);
	size_t context_fields = w.size();
	w.le32(0); /* NegotiateContextOffset */
	w.le16(has_contexts ? static_cast<uint16_t>(r.contexts.size()) : 0);
	w.le16(0);
	for (uint16_t d : r.dialects)
		w.le16(d);
	if (has_contexts) {
		w.align(8);
		w.le32_at(context_fields, static_cast<uint32_t>(w.size()));
		encode_contexts(w, r.contexts);
	}
}

Result<NegotiateRequest> decode_negotiate_request(ByteView message)
{
	auto br = body_reader(message, 36);
	if (!br)
		return br.error();
	Reader &r = *br;
	NegotiateRequest n;
	uint16_t dialect_count = r.le16();
	n.security_mode = r.le16();
	r.skip(2);
	n.capabilities = r.le32();
	ByteView guid = r.bytes(16);
	uint32_t context_offset = r.le32();
	uint16_t context_count = r.le16();
	r.skip(2);
	if (!r.ok())
		return ParseError::truncated;
	std::memcpy(n.client_guid.data(), guid.data(), 16);
	if (dialect_count == 0)
		return ParseError::bad_value;
	if (dialect_count > max_dialects)
		return ParseError::too_large;
	for (uint16_t i = 0; i < dialect_count; i++)
		n.dialects.push_back(r.le16());
	if (!r.ok())
		return ParseError::truncated;
	bool has_311 = false;
	for (uint16_t d : n.dialects)
		has_311 |= d == dialect_311;
	/* The context fields are ClientStartTime (zero) unless 3.1.1 is offered. */
	if (has_311) {
		auto contexts = decode_contexts(message, context_offset, context_count, r.pos());
		if (!contexts)
			return contexts.error();
		n.contexts = std::move(*contexts);
	}
	return n;
}

void encode_negotiate_response(Writer &w, const NegotiateResponse &r)
{
	w.le16(65);
	w.le16(r.security_mode);
	w.le16(r.dialect);
	w.le16(r.dialect == dialect_311 ? static_cast<uint16_t>(r.contexts.size()) : 0);
	w.bytes(r.server_guid);
	w.le32(r.capabilities);
	w.le32(r.max_transact_size);
	w.le32(r.max_read_size);
	w.le32(r.max_write_size);
	w.le64(r.system_time);
	w.le64(r.server_start_time);
	size_t sec_fields = w.size();
	w.le16(0);
	w.le16(static_cast<uint16_t>(r.security_buffer.size()));
	size_t ctx_field = w.size();
	w.le32(0);
	w.le16_at(sec_fields, static_cast<uint16_t>(w.size()));
	w.bytes(r.security_buffer);
	if (r.dialect == dialect_311 && !r.contexts.empty()) {
		w.align(8);
		w.le32_at(ctx_field, static_cast<uint32_t>(w.size()));
		encode_contexts(w, r.contexts);
	}
}

Result<NegotiateResponse> decode_negotiate_response(ByteView message)
{
	auto br = body_reader(message, 65);
	if (!br)
		return br.error();
	Reader &r = *br;
	NegotiateResponse n;
	n.security_mode = r.le16();
	n.dialect = r.le16();
	uint16_t context_count = r.le16();
	ByteView guid = r.bytes(16);
	n.capabilities = r.le32();
	n.max_transact_size = r.le32();
	n.max_read_size = r.le32();
	n.max_write_size = r.le32();
	n.system_time = r.le64();
	n.server_start_time = r.le64();
	uint16_t sec_offset = r.le16();
	uint16_t sec_length = r.le16();
	uint32_t context_offset = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	std::memcpy(n.server_guid.data(), guid.data(), 16);
	const size_t fixed_end = header_size + 64;
	auto sec = variable_part(message, sec_offset, sec_length, fixed_end);
	if (!sec)
		return sec.error();
	n.security_buffer.assign(sec->begin(), sec->end());
	if (n.dialect == dialect_311) {
		auto contexts = decode_contexts(message, context_offset, context_count, fixed_end);
		if (!contexts)
			return contexts.error();
		n.contexts = std::move(*contexts);
	}
	return n;
}

/* --- SESSION_SETUP -------------------------------------------------------------- */

void encode_session_setup_request(Writer &w, const SessionSetupRequest &r)
{
	w.le16(25);
	w.u8(r.flags);
	w.u8(r.security_mode);
	w.le32(r.capabilities);
	w.le32(r.channel);
	w.le16(static_cast<uint16_t>(header_size + 24));
	w.le16(static_cast<uint16_t>(r.security_buffer.size()));
	w.le64(r.previous_session_id);
	w.bytes(r.security_buffer);
	if (r.security_buffer.empty())
		w.u8(0);
}

Result<SessionSetupRequest> decode_session_setup_request(ByteView message)
{
	auto br = body_reader(message, 25);
	if (!br)
		return br.error();
	Reader &r = *br;
	SessionSetupRequest s;
	s.flags = r.u8();
	s.security_mode = r.u8();
	s.capabilities = r.le32();
	s.channel = r.le32();
	uint16_t off = r.le16();
	uint16_t len = r.le16();
	s.previous_session_id = r.le64();
	if (!r.ok())
		return ParseError::truncated;
	auto sec = variable_part(message, off, len, header_size + 24);
	if (!sec)
		return sec.error();
	s.security_buffer.assign(sec->begin(), sec->end());
	return s;
}

void encode_session_setup_response(Writer &w, const SessionSetupResponse &r)
{
	w.le16(9);
	w.le16(r.session_flags);
	w.le16(r.security_buffer.empty() ? 0 : static_cast<uint16_t>(header_size + 8));
	w.le16(static_cast<uint16_t>(r.security_buffer.size()));
	w.bytes(r.security_buffer);
	if (r.security_buffer.empty())
		w.u8(0);
}

Result<SessionSetupResponse> decode_session_setup_response(ByteView message)
{
	auto br = body_reader(message, 9);
	if (!br)
		return br.error();
	Reader &r = *br;
	SessionSetupResponse s;
	s.session_flags = r.le16();
	uint16_t off = r.le16();
	uint16_t len = r.le16();
	if (!r.ok())
		return ParseError::truncated;
	auto sec = variable_part(message, off, len, header_size + 8);
	if (!sec)
		return sec.error();
	s.security_buffer.assign(sec->begin(), sec->end());
	return s;
}

void encode_empty(Writer &w)
{
	w.le16(4);
	w.le16(0);
}

std::error_code decode_empty(ByteView message)
{
	auto br = body_reader(message, 4);
	if (!br)
		return br.error();
	br->skip(2);
	return br->ok() ? std::error_code() : make_error_code(ParseError::truncated);
}

/* --- TREE_CONNECT ------------------------------------------------------------------ */

std::error_code encode_tree_connect_request(Writer &w, const TreeConnectRequest &r)
{
	auto path = utf16le_from_utf8(r.path);
	if (!path)
		return std::make_error_code(std::errc::illegal_byte_sequence);
	w.le16(9);
	w.le16(r.flags);
	w.le16(static_cast<uint16_t>(header_size + 8));
	w.le16(static_cast<uint16_t>(path->size()));
	w.bytes(*path);
	return {};
}

Result<TreeConnectRequest> decode_tree_connect_request(ByteView message)
{
	auto br = body_reader(message, 9);
	if (!br)
		return br.error();
	Reader &r = *br;
	TreeConnectRequest t;
	t.flags = r.le16();
	uint16_t off = r.le16();
	uint16_t len = r.le16();
	if (!r.ok())
		return ParseError::truncated;
	auto path = variable_part(message, off, len, header_size + 8);
	if (!path)
		return path.error();
	auto name = utf16_name(*path);
	if (!name)
		return name.error();
	t.path = std::move(*name);
	return t;
}

void encode_tree_connect_response(Writer &w, const TreeConnectResponse &r)
{
	w.le16(16);
	w.u8(r.share_type);
	w.u8(0);
	w.le32(r.share_flags);
	w.le32(r.capabilities);
	w.le32(r.maximal_access);
}

Result<TreeConnectResponse> decode_tree_connect_response(ByteView message)
{
	auto br = body_reader(message, 16);
	if (!br)
		return br.error();
	Reader &r = *br;
	TreeConnectResponse t;
	t.share_type = r.u8();
	r.skip(1);
	t.share_flags = r.le32();
	t.capabilities = r.le32();
	t.maximal_access = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	return t;
}

/* --- CREATE ------------------------------------------------------------------------- */

std::error_code encode_create_request(Writer &w, const CreateRequest &r)
{
	auto name = utf16le_from_utf8(r.name);
	if (!name)
		return std::make_error_code(std::errc::illegal_byte_sequence);
	if (name->size() > 0xFFFF)
		return std::make_error_code(std::errc::filename_too_long);
	w.le16(57);
	w.u8(0); /* SecurityFlags */
	w.u8(r.requested_oplock_level);
	w.le32(r.impersonation_level);
	w.le64(0); /* SmbCreateFlags */
	w.le64(0); /* Reserved */
	w.le32(r.desired_access);
	w.le32(r.file_attributes);
	w.le32(r.share_access);
	w.le32(r.create_disposition);
	w.le32(r.create_options);
	w.le16(static_cast<uint16_t>(header_size + 56));
	w.le16(static_cast<uint16_t>(name->size()));
	size_t ctx_fields = w.size();
	w.le32(0);
	w.le32(0);
	w.bytes(*name);
	if (!r.create_contexts.empty()) {
		w.align(8);
		w.le32_at(ctx_fields, static_cast<uint32_t>(w.size()));
		w.le32_at(ctx_fields + 4, static_cast<uint32_t>(r.create_contexts.size()));
		w.bytes(r.create_contexts);
	} else if (name->empty()) {
		w.u8(0); /* the Buffer must hold at least one byte */
	}
	return {};
}

Result<CreateRequest> decode_create_request(ByteView message)
{
	auto br = body_reader(message, 57);
	if (!br)
		return br.error();
	Reader &r = *br;
	CreateRequest c;
	r.skip(1);
	c.requested_oplock_level = r.u8();
	c.impersonation_level = r.le32();
	r.skip(16);
	c.desired_access = r.le32();
	c.file_attributes = r.le32();
	c.share_access = r.le32();
	c.create_disposition = r.le32();
	c.create_options = r.le32();
	uint16_t name_off = r.le16();
	uint16_t name_len = r.le16();
	uint32_t ctx_off = r.le32();
	uint32_t ctx_len = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	auto name = variable_part(message, name_off, name_len, header_size + 56);
	if (!name)
		return name.error();
	auto utf8 = utf16_name(*name);
	if (!utf8)
		return utf8.error();
	c.name = std::move(*utf8);
	auto ctx = variable_part(message, ctx_off, ctx_len, header_size + 56);
	if (!ctx)
		return ctx.error();
	c.create_contexts.assign(ctx->begin(), ctx->end());
	return c;
}

void encode_create_response(Writer &w, const CreateResponse &r)
{
	w.le16(89);
	w.u8(r.oplock_level);
	w.u8(r.flags);
	w.le32(r.create_action);
	encode_times(w, r.times);
	w.le64(r.allocation_size);
	w.le64(r.end_of_file);
	w.le32(r.file_attributes);
	w.le32(0);
	encode_file_id(w, r.file_id);
	size_t ctx_fields = w.size();
	w.le32(0);
	w.le32(0);
	if (!r.create_contexts.empty()) {
		w.align(8);
		w.le32_at(ctx_fields, static_cast<uint32_t>(w.size()));
		w.le32_at(ctx_fields + 4, static_cast<uint32_t>(r.create_contexts.size()));
		w.bytes(r.create_contexts);
	} else {
		w.u8(0);
	}
}

Result<CreateResponse> decode_create_response(ByteView message)
{
	auto br = body_reader(message, 89);
	if (!br)
		return br.error();
	Reader &r = *br;
	CreateResponse c;
	c.oplock_level = r.u8();
	c.flags = r.u8();
	c.create_action = r.le32();
	c.times = decode_times(r);
	c.allocation_size = r.le64();
	c.end_of_file = r.le64();
	c.file_attributes = r.le32();
	r.skip(4);
	c.file_id = decode_file_id(r);
	uint32_t ctx_off = r.le32();
	uint32_t ctx_len = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	auto ctx = variable_part(message, ctx_off, ctx_len, header_size + 88);
	if (!ctx)
		return ctx.error();
	c.create_contexts.assign(ctx->begin(), ctx->end());
	return c;
}

/* --- CLOSE, FLUSH --------------------------------------------------------------- */

void encode_close_request(Writer &w, const CloseRequest &r)
{
	w.le16(24);
	w.le16(r.flags);
	w.le32(0);
	encode_file_id(w, r.file_id);
}

Result<CloseRequest> decode_close_request(ByteView message)
{
	auto br = body_reader(message, 24);
	if (!br)
		return br.error();
	Reader &r = *br;
	CloseRequest c;
	c.flags = r.le16();
	r.skip(4);
	c.file_id = decode_file_id(r);
	if (!r.ok())
		return ParseError::truncated;
	return c;
}

void encode_close_response(Writer &w, const CloseResponse &r)
{
	w.le16(60);
	w.le16(r.flags);
	w.le32(0);
	encode_times(w, r.times);
	w.le64(r.allocation_size);
	w.le64(r.end_of_file);
	w.le32(r.file_attributes);
}

Result<CloseResponse> decode_close_response(ByteView message)
{
	auto br = body_reader(message, 60);
	if (!br)
		return br.error();
	Reader &r = *br;
	CloseResponse c;
	c.flags = r.le16();
	r.skip(4);
	c.times = decode_times(r);
	c.allocation_size = r.le64();
	c.end_of_file = r.le64();
	c.file_attributes = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	return c;
}

void encode_flush_request(Writer &w, const FlushRequest &r)
{
	w.le16(24);
	w.le16(0);
	w.le32(0);
	encode_file_id(w, r.file_id);
}

Result<FlushRequest> decode_flush_request(ByteView message)
{
	auto br = body_reader(message, 24);
	if (!br)
		return br.error();
	Reader &r = *br;
	r.skip(6);
	FlushRequest f;
	f.file_id = decode_file_id(r);
	if (!r.ok())
		return ParseError::truncated;
	return f;
}

/* --- READ ------------------------------------------------------------------------ */

void encode_read_request(Writer &w, const ReadRequest &r)
{
	w.le16(49);
	w.u8(r.padding);
	w.u8(r.flags);
	w.le32(r.length);
	w.le64(r.offset);
	encode_file_id(w, r.file_id);
	w.le32(r.minimum_count);
	w.le32(static_cast<uint32_t>(r.channel));
	w.le32(r.remaining_bytes);
	size_t info_len = r.channel_info.size() * buffer_descriptor_size;
	w.le16(info_len ? static_cast<uint16_t>(header_size + 48) : 0);
	w.le16(static_cast<uint16_t>(info_len));
	if (info_len)
		encode_descriptors(w, r.channel_info);
	else
		w.u8(0);
}

Result<ReadRequest> decode_read_request(ByteView message)
{
	auto br = body_reader(message, 49);
	if (!br)
		return br.error();
	Reader &r = *br;
	ReadRequest q;
	q.padding = r.u8();
	q.flags = r.u8();
	q.length = r.le32();
	q.offset = r.le64();
	q.file_id = decode_file_id(r);
	q.minimum_count = r.le32();
	q.channel = static_cast<Channel>(r.le32());
	q.remaining_bytes = r.le32();
	uint16_t info_off = r.le16();
	uint16_t info_len = r.le16();
	if (!r.ok())
		return ParseError::truncated;
	auto info = variable_part(message, info_off, info_len, header_size + 48);
	if (!info)
		return info.error();
	auto descriptors = decode_descriptors(*info);
	if (!descriptors)
		return descriptors.error();
	q.channel_info = std::move(*descriptors);
	return q;
}

void encode_read_response(Writer &w, const ReadResponse &r)
{
	w.le16(17);
	w.u8(r.data.empty() ? 0 : static_cast<uint8_t>(header_size + 16));
	w.u8(0);
	w.le32(static_cast<uint32_t>(r.data.size()));
	w.le32(r.data_remaining);
	w.le32(r.flags);
	/*
	 * No padding byte without data: cifs.ko reads an RDMA READ response
	 * only up to its 80-byte fixed part (the data came by RDMA), and a
	 * byte left behind would be taken for the next message's length.
	 */
	w.bytes(r.data);
}

Result<ReadResponse> decode_read_response(ByteView message)
{
	auto br = body_reader(message, 17);
	if (!br)
		return br.error();
	Reader &r = *br;
	ReadResponse p;
	p.data_offset = r.u8();
	r.skip(1);
	p.data_length = r.le32();
	p.data_remaining = r.le32();
	p.flags = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	auto data = variable_part(message, p.data_offset, p.data_length, header_size + 16);
	if (!data)
		return data.error();
	p.data = *data;
	return p;
}

/* --- WRITE ------------------------------------------------------------------------ */

void encode_write_request(Writer &w, const WriteRequest &r)
{
	/* Inline data at the Buffer; over RDMA the descriptors are there instead. */
	size_t info_len = r.channel_info.size() * buffer_descriptor_size;
	w.le16(49);
	w.le16(r.data.empty() ? 0 : static_cast<uint16_t>(header_size + 48));
	w.le32(static_cast<uint32_t>(r.data.size()));
	w.le64(r.offset);
	encode_file_id(w, r.file_id);
	w.le32(static_cast<uint32_t>(r.channel));
	w.le32(r.remaining_bytes);
	w.le16(info_len ? static_cast<uint16_t>(header_size + 48 + r.data.size()) : 0);
	w.le16(static_cast<uint16_t>(info_len));
	w.le32(r.flags);
	w.bytes(r.data);
	if (info_len)
		encode_descriptors(w, r.channel_info);
	if (r.data.empty() && !info_len)
		w.u8(0);
}

Result<WriteRequest> decode_write_request(ByteView message)
{
	auto br = body_reader(message, 49);
	if (!br)
		return br.error();
	Reader &r = *br;
	WriteRequest q;
	uint16_t data_off = r.le16();
	uint32_t data_len = r.le32();
	q.offset = r.le64();
	q.file_id = decode_file_id(r);
	q.channel = static_cast<Channel>(r.le32());
	q.remaining_bytes = r.le32();
	uint16_t info_off = r.le16();
	uint16_t info_len = r.le16();
	q.flags = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	auto data = variable_part(message, data_off, data_len, header_size + 48);
	if (!data)
		return data.error();
	q.data = *data;
	auto info = variable_part(message, info_off, info_len, header_size + 48);
	if (!info)
		return info.error();
	auto descriptors = decode_descriptors(*info);
	if (!descriptors)
		return descriptors.error();
	q.channel_info = std::move(*descriptors);
	return q;
}

void encode_write_response(Writer &w, const WriteResponse &r)
{
	w.le16(17);
	w.le16(0);
	w.le32(r.count);
	w.le32(r.remaining);
	w.le16(0);
	w.le16(0);
}

Result<WriteResponse> decode_write_response(ByteView message)
{
	auto br = body_reader(message, 17);
	if (!br)
		return br.error();
	Reader &r = *br;
	WriteResponse p;
	r.skip(2);
	p.count = r.le32();
	p.remaining = r.le32();
	r.skip(4);
	if (!r.ok())
		return ParseError::truncated;
	return p;
}

/* --- QUERY_DIRECTORY, QUERY_INFO, SET_INFO, IOCTL ---------------------------------- */

void encode_query_directory_request(Writer &w, const QueryDirectoryRequest &r)
{
	auto name = utf16le_from_utf8(r.pattern);
	w.le16(33);
	w.u8(r.info_class);
	w.u8(r.flags);
	w.le32(r.file_index);
	encode_file_id(w, r.file_id);
	w.le16(static_cast<uint16_t>(header_size + 32));
	w.le16(static_cast<uint16_t>(name ? name->size() : 0));
	w.le32(r.output_buffer_length);
	if (name && !name->empty())
		w.bytes(*name);
	else
		w.u8(0);
}

Result<QueryDirectoryRequest> decode_query_directory_request(ByteView message)
{
	auto br = body_reader(message, 33);
	if (!br)
		return br.error();
	Reader &r = *br;
	QueryDirectoryRequest q;
	q.info_class = r.u8();
	q.flags = r.u8();
	q.file_index = r.le32();
	q.file_id = decode_file_id(r);
	uint16_t off = r.le16();
	uint16_t len = r.le16();
	q.output_buffer_length = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	auto name = variable_part(message, off, len, header_size + 32);
	if (!name)
		return name.error();
	auto pattern = utf16_name(*name);
	if (!pattern)
		return pattern.error();
	q.pattern = pattern->empty() ? "*" : std::move(*pattern);
	return q;
}

void encode_buffer_response(Writer &w, ByteView output)
{
	w.le16(9);
	w.le16(output.empty() ? 0 : static_cast<uint16_t>(header_size + 8));
	w.le32(static_cast<uint32_t>(output.size()));
	if (output.empty())
		w.u8(0);
	else
		w.bytes(output);
}

Result<ByteView> decode_buffer_response(ByteView message)
{
	auto br = body_reader(message, 9);
	if (!br)
		return br.error();
	Reader &r = *br;
	uint16_t off = r.le16();
	uint32_t len = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	return variable_part(message, off, len, header_size + 8);
}

void encode_query_info_request(Writer &w, const QueryInfoRequest &r)
{
	w.le16(41);
	w.u8(r.info_type);
	w.u8(r.info_class);
	w.le32(r.output_buffer_length);
	w.le16(r.input.empty() ? 0 : static_cast<uint16_t>(header_size + 40));
	w.le16(0);
	w.le32(static_cast<uint32_t>(r.input.size()));
	w.le32(r.additional_information);
	w.le32(r.flags);
	encode_file_id(w, r.file_id);
	if (r.input.empty())
		w.u8(0);
	else
		w.bytes(r.input);
}

Result<QueryInfoRequest> decode_query_info_request(ByteView message)
{
	auto br = body_reader(message, 41);
	if (!br)
		return br.error();
	Reader &r = *br;
	QueryInfoRequest q;
	q.info_type = r.u8();
	q.info_class = r.u8();
	q.output_buffer_length = r.le32();
	uint16_t off = r.le16();
	r.skip(2);
	uint32_t len = r.le32();
	q.additional_information = r.le32();
	q.flags = r.le32();
	q.file_id = decode_file_id(r);
	if (!r.ok())
		return ParseError::truncated;
	auto input = variable_part(message, off, len, header_size + 40);
	if (!input)
		return input.error();
	q.input = *input;
	return q;
}

void encode_set_info_request(Writer &w, const SetInfoRequest &r)
{
	w.le16(33);
	w.u8(r.info_type);
	w.u8(r.info_class);
	w.le32(static_cast<uint32_t>(r.buffer.size()));
	w.le16(static_cast<uint16_t>(header_size + 32));
	w.le16(0);
	w.le32(r.additional_information);
	encode_file_id(w, r.file_id);
	if (r.buffer.empty())
		w.u8(0);
	else
		w.bytes(r.buffer);
}

Result<SetInfoRequest> decode_set_info_request(ByteView message)
{
	auto br = body_reader(message, 33);
	if (!br)
		return br.error();
	Reader &r = *br;
	SetInfoRequest q;
	q.info_type = r.u8();
	q.info_class = r.u8();
	uint32_t len = r.le32();
	uint16_t off = r.le16();
	r.skip(2);
	q.additional_information = r.le32();
	q.file_id = decode_file_id(r);
	if (!r.ok())
		return ParseError::truncated;
	auto buffer = variable_part(message, off, len, header_size + 32);
	if (!buffer)
		return buffer.error();
	q.buffer = *buffer;
	return q;
}

void encode_set_info_response(Writer &w)
{
	w.le16(2);
}

void encode_ioctl_request(Writer &w, const IoctlRequest &r)
{
	w.le16(57);
	w.le16(0);
	w.le32(r.ctl_code);
	encode_file_id(w, r.file_id);
	w.le32(r.input.empty() ? 0 : static_cast<uint32_t>(header_size + 56));
	w.le32(static_cast<uint32_t>(r.input.size()));
	w.le32(r.max_input_response);
	w.le32(0); /* OutputOffset */
	w.le32(0); /* OutputCount */
	w.le32(r.max_output_response);
	w.le32(r.flags);
	w.le32(0);
	if (r.input.empty())
		w.u8(0);
	else
		w.bytes(r.input);
}

Result<IoctlRequest> decode_ioctl_request(ByteView message)
{
	auto br = body_reader(message, 57);
	if (!br)
		return br.error();
	Reader &r = *br;
	IoctlRequest q;
	r.skip(2);
	q.ctl_code = r.le32();
	q.file_id = decode_file_id(r);
	uint32_t in_off = r.le32();
	uint32_t in_len = r.le32();
	q.max_input_response = r.le32();
	r.skip(8); /* OutputOffset, OutputCount: requests carry no output */
	q.max_output_response = r.le32();
	q.flags = r.le32();
	r.skip(4);
	if (!r.ok())
		return ParseError::truncated;
	auto input = variable_part(message, in_off, in_len, header_size + 56);
	if (!input)
		return input.error();
	q.input = *input;
	return q;
}

void encode_ioctl_response(Writer &w, const IoctlResponse &r)
{
	w.le16(49);
	w.le16(0);
	w.le32(r.ctl_code);
	encode_file_id(w, r.file_id);
	uint32_t off = static_cast<uint32_t>(header_size + 48);
	w.le32(off); /* InputOffset */
	w.le32(0);
	w.le32(r.output.empty() ? 0 : off);
	w.le32(static_cast<uint32_t>(r.output.size()));
	w.le32(0);
	w.le32(0);
	w.bytes(r.output);
}

Result<IoctlResponse> decode_ioctl_response(ByteView message)
{
	auto br = body_reader(message, 49);
	if (!br)
		return br.error();
	Reader &r = *br;
	IoctlResponse p;
	r.skip(2);
	p.ctl_code = r.le32();
	p.file_id = decode_file_id(r);
	r.skip(8); /* InputOffset, InputCount */
	uint32_t out_off = r.le32();
	uint32_t out_len = r.le32();
	r.skip(8);
	if (!r.ok())
		return ParseError::truncated;
	auto output = variable_part(message, out_off, out_len, header_size + 48);
	if (!output)
		return output.error();
	p.output = *output;
	return p;
}

Result<std::vector<ByteView>> split_compound(ByteView message)
{
	std::vector<ByteView> parts;
	size_t pos = 0;
	for (;;) {
		if (parts.size() == 64)
			return ParseError::too_large;
		ByteView rest = message.subspan(pos);
		auto h = decode_header(rest);
		if (!h)
			return h.error();
		if (h->next_command == 0) {
			parts.push_back(rest);
			return parts;
		}
		if (h->next_command % 8 || h->next_command < header_size ||
		    h->next_command > rest.size())
			return ParseError::bad_offset;
		parts.push_back(rest.subspan(0, h->next_command));
		pos += h->next_command;
	}
}

/* --- ERROR ----------------------------------------------------------------------- */

void encode_error_response(Writer &w)
{
	w.le16(9);
	w.u8(0);
	w.u8(0);
	w.le32(0);
	w.u8(0);
}

std::error_code decode_error_response(ByteView message)
{
	auto br = body_reader(message, 9);
	if (!br)
		return br.error();
	Reader &r = *br;
	r.skip(2);
	uint32_t byte_count = r.le32();
	if (!r.ok())
		return ParseError::truncated;
	if (byte_count && !slice(message, r.pos(), byte_count))
		return ParseError::bad_offset;
	return {};
}

uint16_t credit_charge_for(uint64_t bytes)
{
	if (bytes == 0)
		return 1;
	uint64_t charge = (bytes - 1) / 65536 + 1;
	return charge > 0xFFFF ? 0xFFFF : static_cast<uint16_t>(charge);
}

} // namespace smb2
