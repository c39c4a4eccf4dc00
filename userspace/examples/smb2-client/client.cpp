// SPDX-License-Identifier: LGPL-2.1-or-later
#include "client.hpp"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

#include "../smb2/framing.hpp"

namespace smb2 {

namespace {

/* Headroom in one SMB-Direct message besides READ/WRITE data. */
constexpr uint32_t read_response_overhead = header_size + 16;
constexpr uint32_t write_request_overhead = header_size + 48;

std::string unc_with_backslashes(std::string_view unc)
{
	std::string s(unc);
	std::replace(s.begin(), s.end(), '/', '\\');
	return s;
}

} // namespace

uint64_t iov_bytes(std::span<const iovec> iov)
{
	uint64_t n = 0;
	for (const auto &v : iov)
		n += v.iov_len;
	return n;
}

std::vector<BufferDescriptor> channel_info(const sd::Registration &reg)
{
	std::vector<BufferDescriptor> out;
	for (const auto &d : reg.descriptors())
		out.push_back({ sd::offset(d), sd::token(d), sd::length(d) });
	return out;
}

Client::Client(int fd, ClientConfig config) : fd_(fd), config_(std::move(config))
{
	smbdirect_params p{};
	p.size = sizeof(p);
	if (smbdirect_connection_get_parameters(fd_, &p) == 0)
		transport_ = p;
}

Client::~Client()
{
	if (fd_ >= 0)
		::close(fd_);
}

uint32_t Client::max_inline_read() const
{
	uint32_t max = negotiated_.max_read_size;
	/* A READ response must fit the largest message we accept. */
	if (transport_)
		max = std::min(max, transport_->max_fragmented_receive_size - read_response_overhead);
	return std::min<uint32_t>(max, max_message_size - read_response_overhead);
}

uint32_t Client::max_inline_write() const
{
	uint32_t max = negotiated_.max_write_size;
	/* A WRITE request must fit the largest message the peer accepts. */
	if (transport_)
		max = std::min(max, transport_->max_fragmented_send_size - write_request_overhead);
	return std::min<uint32_t>(max, max_message_size - write_request_overhead);
}

uint32_t Client::max_rdma_read() const
{
	return transport_ ? std::min(negotiated_.max_read_size, transport_->max_read_write_size) : 0;
}

uint32_t Client::max_rdma_write() const
{
	return transport_ ? std::min(negotiated_.max_write_size, transport_->max_read_write_size)
			  : 0;
}

Result<uint64_t> Client::send_request(Command command, uint16_t credit_charge,
				      const BodyEncoder &body, Bytes *request)
{
	Header h;
	h.command = command;
	h.credit_charge = credit_charge;
	h.message_id = next_message_id_;
	h.session_id = session_id_;
	h.tree_id = tree_id_;
	uint16_t charge = std::max<uint16_t>(credit_charge, 1);
	if (credits_ < charge)
		return std::make_error_code(std::errc::resource_unavailable_try_again);
	/* Ask for what brings us back to the target after this charge. */
	uint32_t want = config_.credit_target > credits_ - charge
				? config_.credit_target - (credits_ - charge)
				: 1;
	h.credits = static_cast<uint16_t>(std::clamp<uint32_t>(want, 1, 0xFFFF));

	Writer w;
	encode_header(w, h);
	if (auto ec = body(w))
		return ec;
	Bytes bytes = w.take();
	if (sign_requests_ && signing_key_ && command != Command::negotiate) {
		sign_message(bytes, *signing_key_);
		/* Only a test would: a signature smbd must refuse. */
		if (config_.binding_signature == BindingSignature::wrong && !bound_channel_ &&
		    command == Command::session_setup)
			bytes[48] ^= 0x01;
	}
	if (config_.verbose)
		std::fprintf(stderr, "-> %s mid %llu charge %u credits %u (%zu bytes)\n",
			     command_name(command), static_cast<unsigned long long>(h.message_id),
			     credit_charge, h.credits, bytes.size());
	if (auto ec = write_message(fd_, bytes))
		return ec;
	credits_ -= charge;
	next_message_id_ += charge;
	outstanding_++;
	if (request)
		*request = std::move(bytes);
	return h.message_id;
}

Result<Client::Response> Client::receive_response()
{
	for (;;) {
		auto m = read_message(fd_, max_message_size);
		if (!m)
			return m.error();
		auto h = decode_header(*m);
		if (!h)
			return h.error();
		if (!h->is_response())
			return ParseError::unexpected_message;
		if (h->next_command != 0)
			return ParseError::compound;
		credits_ += h->credits;
		if (config_.verbose)
			std::fprintf(stderr, "<- %s mid %llu %s credits +%u (%zu bytes)\n",
				     command_name(h->command),
				     static_cast<unsigned long long>(h->message_id),
				     status_name(h->status).c_str(), h->credits, m->size());
		if (h->status == static_cast<uint32_t>(Status::pending) && h->is_async())
			continue; /* interim response: the real one follows */
		outstanding_ -= outstanding_ > 0;
		if (auto ec = check_signature(*h, *m))
			return ec;
		return Response{ *h, std::move(*m) };
	}
}

std::error_code Client::check_signature(const Header &h, ByteView message) const
{
	if (!signing_key_ || !verify_responses_)
		return {};
	if (h.flags & flag_signed)
		return signature_valid(message, *signing_key_) ? std::error_code()
							       : ParseError::bad_signature;
	/* Errors may come unsigned ([MS-SMB2] 3.3.4.1.1); what succeeded may not. */
	if (sign_requests_ && (h.status == static_cast<uint32_t>(Status::success) ||
			       h.status == static_cast<uint32_t>(Status::more_processing_required)))
		return ParseError::unsigned_message;
	return {};
}

std::error_code Client::status_of(const Response &r, std::initializer_list<Status> also_ok)
{
	uint32_t status = r.header.status;
	if (status == static_cast<uint32_t>(Status::success))
		return {};
	for (Status s : also_ok)
		if (status == static_cast<uint32_t>(s))
			return {};
	/* An error response must still be well formed; then its status counts. */
	if (auto ec = decode_error_response(r.message))
		return ec;
	return std::error_code(static_cast<int>(status), ntstatus_category());
}

Result<Client::Exchange> Client::exchange(Command command, uint16_t credit_charge,
					  const BodyEncoder &body,
					  std::initializer_list<Status> also_ok)
{
	if (outstanding_)
		return std::make_error_code(std::errc::device_or_resource_busy);
	Exchange x;
	auto id = send_request(command, credit_charge, body, &x.request);
	if (!id)
		return id.error();
	auto r = receive_response();
	if (!r)
		return r.error();
	if (r->header.command != command || r->header.message_id != *id)
		return ParseError::unexpected_message;
	if (auto ec = status_of(*r, also_ok))
		return ec;
	x.header = r->header;
	x.response = std::move(r->message);
	return x;
}

Result<std::vector<Client::Response>> Client::exchange_compound(std::span<const CompoundPart> parts,
								unsigned *messages)
{
	if (outstanding_)
		return std::make_error_code(std::errc::device_or_resource_busy);
	if (parts.empty())
		return std::make_error_code(std::errc::invalid_argument);
	Bytes message;
	std::vector<uint64_t> ids;
	uint32_t charged = 0;
	for (size_t i = 0; i < parts.size(); i++) {
		const CompoundPart &p = parts[i];
		uint16_t charge = std::max<uint16_t>(p.credit_charge, 1);
		if (credits_ < charged + charge)
			return std::make_error_code(std::errc::resource_unavailable_try_again);
		Header h;
		h.command = p.command;
		h.credit_charge = p.credit_charge;
		h.message_id = next_message_id_ + charged;
		h.session_id = session_id_;
		h.tree_id = p.tree_id ? *p.tree_id : tree_id_;
		h.credits = charge;
		Writer w;
		encode_header(w, h);
		if (auto ec = p.body(w))
			return ec;
		if (i + 1 < parts.size()) {
			w.align(8);
			w.le32_at(20, static_cast<uint32_t>(w.size())); /* NextCommand */
		}
		Bytes b = w.take();
		/* [MS-SMB2] 3.2.4.1.4: each member signed over its bytes, padding included. */
		if (sign_requests_ && signing_key_)
			sign_message(b, *signing_key_);
		message.insert(message.end(), b.begin(), b.end());
		ids.push_back(h.message_id);
		charged += charge;
	}
	if (config_.verbose)
		std::fprintf(stderr, "-> compound of %zu (%zu bytes)\n", parts.size(), message.size());
	if (auto ec = write_message(fd_, message))
		return ec;
	credits_ -= charged;
	next_message_id_ += charged;
	outstanding_ += static_cast<uint32_t>(parts.size());

	std::vector<std::optional<Response>> got(parts.size());
	size_t finals = 0;
	unsigned count = 0;
	while (finals < parts.size()) {
		auto m = read_message(fd_, max_message_size);
		if (!m)
			return m.error();
		count++;
		size_t pos = 0;
		for (;;) {
			ByteView rest = ByteView(*m).subspan(pos);
			auto h = decode_header(rest);
			if (!h)
				return h.error();
			if (!h->is_response() || h->next_command > rest.size() ||
			    (h->next_command != 0 && h->next_command < header_size))
				return ParseError::unexpected_message;
			size_t len = h->next_command ? h->next_command : rest.size();
			credits_ += h->credits;
			if (config_.verbose)
				std::fprintf(stderr, "<- %s mid %llu %s (message %u)\n",
					     command_name(h->command),
					     static_cast<unsigned long long>(h->message_id),
					     status_name(h->status).c_str(), count);
			if (!(h->status == static_cast<uint32_t>(Status::pending) && h->is_async())) {
				auto it = std::find(ids.begin(), ids.end(), h->message_id);
				if (it == ids.end() || got[it - ids.begin()])
					return ParseError::unexpected_message;
				got[it - ids.begin()] = Response{ *h, Bytes(rest.begin(), rest.begin() + len) };
				finals++;
				outstanding_ -= outstanding_ > 0;
			}
			if (h->next_command == 0)
				break;
			pos += h->next_command;
		}
	}
	if (messages)
		*messages = count;
	std::vector<Response> out;
	for (auto &r : got)
		out.push_back(std::move(*r));
	return out;
}

std::error_code Client::send_cancel(uint64_t message_id)
{
	Header h;
	h.command = Command::cancel;
	h.message_id = message_id;
	h.session_id = session_id_;
	h.tree_id = tree_id_;
	Writer w;
	encode_header(w, h);
	w.le16(4); /* StructureSize */
	w.le16(0); /* Reserved */
	Bytes b = w.take();
	if (sign_requests_ && signing_key_)
		sign_message(b, *signing_key_);
	return write_message(fd_, b);
}

std::error_code Client::negotiate()
{
	NegotiateRequest req;
	req.security_mode = config_.sign ? signing_enabled | signing_required : signing_enabled;
	req.capabilities = cap_large_mtu | (config_.multi_channel ? cap_multi_channel : 0);
	if (config_.client_guid)
		req.client_guid = *config_.client_guid;
	else if (auto ec = ntlm::random_bytes(req.client_guid))
		return ec;
	client_guid_ = req.client_guid;
	req.dialects = { config_.dialect };
	if (config_.dialect == dialect_311) {
		PreauthIntegrity p;
		p.hash_algorithms = { hash_sha512 };
		p.salt.resize(32);
		if (auto ec = ntlm::random_bytes(p.salt))
			return ec;
		req.contexts.push_back(encode_preauth_context(p));
	}
	auto x = exchange(Command::negotiate, 0, [&](Writer &w) {
		encode_negotiate_request(w, req);
		return std::error_code();
	});
	if (!x)
		return x.error();
	auto rsp = decode_negotiate_response(x->response);
	if (!rsp)
		return rsp.error();
	if (rsp->dialect != config_.dialect)
		return ParseError::bad_value;
	if (config_.dialect == dialect_311) {
		/* The server must pick exactly one preauth algorithm, ours. */
		bool preauth_ok = false;
		for (const auto &c : rsp->contexts) {
			if (c.type != context_preauth_integrity)
				continue;
			auto p = decode_preauth_context(c.data);
			if (!p)
				return p.error();
			preauth_ok = p->hash_algorithms.size() == 1 &&
				     p->hash_algorithms[0] == hash_sha512;
		}
		if (!preauth_ok)
			return ParseError::bad_value;
		preauth_.update(x->request);
		preauth_.update(x->response);
	}
	negotiated_ = std::move(*rsp);
	return {};
}

std::error_code Client::session_setup()
{
	return authenticate(0);
}

std::error_code Client::bind_session(const Client &primary)
{
	if (primary.session_id_ == 0 || !primary.session_signing_key_)
		return std::make_error_code(std::errc::invalid_argument);
	/* [MS-SMB2] 3.2.4.2.3.1: same dialect; the ClientGuid names the client. */
	if (negotiated_.dialect < dialect_300 ||
	    negotiated_.dialect != primary.negotiated_.dialect || client_guid_ != primary.client_guid_)
		return std::make_error_code(std::errc::protocol_not_supported);
	session_id_ = primary.session_id_;
	signing_key_ = primary.session_signing_key_;
	session_signing_key_ = primary.session_signing_key_;
	sign_requests_ = config_.binding_signature != BindingSignature::none;
	if (auto ec = authenticate(session_setup_flag_binding))
		return ec;
	tree_id_ = primary.tree_id_;
	return {};
}

/*
 * The two SESSION_SETUP round trips of NTLMSSP, for a new session or (flags
 * SMB2_SESSION_FLAG_BINDING) a new channel of session_id_. For 3.1.1 the
 * preauth hash goes on from this connection's NEGOTIATE through both
 * requests and the first response; the final response, signed with the
 * key derived from it, is checked with that key.
 */
std::error_code Client::authenticate(uint8_t flags)
{
	const bool is_311 = negotiated_.dialect == dialect_311;
	const bool binding = flags & session_setup_flag_binding;
	Bytes negotiate = ntlm::encode_negotiate({});
	SessionSetupRequest req;
	req.flags = flags;
	req.security_mode = config_.sign ? signing_enabled | signing_required : signing_enabled;
	req.security_buffer = negotiate;
	auto first = exchange(
		Command::session_setup, 1,
		[&](Writer &w) {
			encode_session_setup_request(w, req);
			return std::error_code();
		},
		{ Status::more_processing_required });
	if (!first)
		return first.error();
	if (first->header.status != static_cast<uint32_t>(Status::more_processing_required))
		return ParseError::unexpected_message;
	auto challenge_rsp = decode_session_setup_response(first->response);
	if (!challenge_rsp)
		return challenge_rsp.error();
	if (binding && first->header.session_id != session_id_)
		return ParseError::unexpected_message;
	session_id_ = first->header.session_id;
	if (session_id_ == 0)
		return ParseError::bad_value;
	if (is_311) {
		preauth_.update(first->request);
		preauth_.update(first->response);
	}

	ntlm::Challenge8 client_challenge;
	if (auto ec = ntlm::random_bytes(client_challenge))
		return ec;
	auto auth = ntlm::client_authenticate(config_.credentials, negotiate,
					      challenge_rsp->security_buffer, client_challenge,
					      ntlm::filetime_now());
	if (!auth)
		return auth.error();
	req.security_buffer = std::move(auth->authenticate_message);
	/* The final response is signed with the key this exchange ends in. */
	verify_responses_ = false;
	auto second = exchange(Command::session_setup, 1, [&](Writer &w) {
		encode_session_setup_request(w, req);
		return std::error_code();
	});
	verify_responses_ = true;
	if (!second)
		return second.error();
	auto done = decode_session_setup_response(second->response);
	if (!done)
		return done.error();
	if (second->header.session_id != session_id_)
		return ParseError::unexpected_message;
	/* The last request counts; the final (success) response does not. */
	if (is_311)
		preauth_.update(second->request);
	if (!binding)
		session_flags_ = done->session_flags;
	/* We cannot encrypt: a server that insists would reject every request. */
	if (session_flags_ & session_flag_encrypt_data)
		return std::make_error_code(std::errc::protocol_not_supported);
	/* Guest and anonymous sessions have no key to sign with. */
	if (session_flags_ & (session_flag_is_guest | session_flag_is_null)) {
		if (config_.sign || binding)
			return std::make_error_code(std::errc::permission_denied);
		return {};
	}
	if (negotiated_.dialect < dialect_300)
		return {};
	SigningKey key = derive_signing_key(negotiated_.dialect, auth->session_base_key,
					    preauth_.value());
	if (second->header.flags & flag_signed) {
		if (!signature_valid(second->response, key))
			return ParseError::bad_signature;
	} else if (binding || config_.sign) {
		return ParseError::unsigned_message;
	}
	signing_key_ = key;
	if (binding) {
		bound_channel_ = true;
		sign_requests_ = true;
	} else {
		session_signing_key_ = key;
		sign_requests_ = config_.sign || (negotiated_.security_mode & signing_required);
	}
	return {};
}

std::error_code Client::tree_connect(std::string_view unc)
{
	TreeConnectRequest req;
	req.path = unc_with_backslashes(unc);
	auto x = exchange(Command::tree_connect, 1,
			  [&](Writer &w) { return encode_tree_connect_request(w, req); });
	if (!x)
		return x.error();
	auto rsp = decode_tree_connect_response(x->response);
	if (!rsp)
		return rsp.error();
	if (rsp->share_type != share_type_disk)
		return std::make_error_code(std::errc::not_supported);
	tree_id_ = x->header.tree_id;
	return {};
}

Result<OpenFile> Client::create(std::string_view name, uint32_t desired_access,
				uint32_t disposition, uint32_t options)
{
	CreateRequest req;
	req.name = unc_with_backslashes(name);
	req.desired_access = desired_access;
	req.file_attributes = attribute_normal;
	req.create_disposition = disposition;
	req.create_options = options;
	auto x = exchange(Command::create, 1,
			  [&](Writer &w) { return encode_create_request(w, req); });
	if (!x)
		return x.error();
	auto rsp = decode_create_response(x->response);
	if (!rsp)
		return rsp.error();
	return OpenFile{ rsp->file_id, rsp->end_of_file, rsp->create_action };
}

std::error_code Client::close(const FileId &file)
{
	auto x = exchange(Command::close, 1, [&](Writer &w) {
		encode_close_request(w, { 0, file });
		return std::error_code();
	});
	if (!x)
		return x.error();
	return decode_close_response(x->response).error();
}

std::error_code Client::tree_disconnect()
{
	auto x = exchange(Command::tree_disconnect, 1, [](Writer &w) {
		encode_empty(w);
		return std::error_code();
	});
	if (!x)
		return x.error();
	tree_id_ = 0;
	return decode_empty(x->response);
}

std::error_code Client::logoff()
{
	auto x = exchange(Command::logoff, 1, [](Writer &w) {
		encode_empty(w);
		return std::error_code();
	});
	if (!x)
		return x.error();
	session_id_ = 0;
	return decode_empty(x->response);
}

Result<uint32_t> Client::write(const FileId &file, uint64_t offset, ByteView data)
{
	if (data.empty() || data.size() > max_inline_write())
		return std::make_error_code(std::errc::message_size);
	WriteRequest req;
	req.offset = offset;
	req.file_id = file;
	req.data = data;
	auto x = exchange(Command::write, credit_charge_for(data.size()), [&](Writer &w) {
		encode_write_request(w, req);
		return std::error_code();
	});
	if (!x)
		return x.error();
	auto rsp = decode_write_response(x->response);
	if (!rsp)
		return rsp.error();
	if (rsp->count > data.size())
		return ParseError::bad_value;
	return rsp->count;
}

Result<size_t> Client::read(const FileId &file, uint64_t offset, std::span<uint8_t> out)
{
	if (out.empty() || out.size() > max_inline_read())
		return std::make_error_code(std::errc::message_size);
	ReadRequest req;
	req.length = static_cast<uint32_t>(out.size());
	req.offset = offset;
	req.file_id = file;
	auto x = exchange(
		Command::read, credit_charge_for(out.size()),
		[&](Writer &w) {
			encode_read_request(w, req);
			return std::error_code();
		},
		{ Status::end_of_file });
	if (!x)
		return x.error();
	if (x->header.status == static_cast<uint32_t>(Status::end_of_file))
		return size_t{ 0 };
	auto rsp = decode_read_response(x->response);
	if (!rsp)
		return rsp.error();
	if (rsp->data.size() > out.size())
		return ParseError::bad_value;
	std::copy(rsp->data.begin(), rsp->data.end(), out.begin());
	return rsp->data.size();
}

Result<RdmaResult> Client::rdma_io(Command command, const FileId &file, uint64_t offset,
				   std::span<const iovec> iov, Channel channel)
{
	if (channel != Channel::rdma_v1 && channel != Channel::rdma_v1_invalidate)
		return std::make_error_code(std::errc::invalid_argument);
	if (!transport_)
		return std::make_error_code(std::errc::operation_not_supported);
	const bool is_write = command == Command::write;
	uint64_t bytes = iov_bytes(iov);
	if (bytes == 0 || bytes > (is_write ? max_rdma_write() : max_rdma_read()))
		return std::make_error_code(std::errc::message_size);

	/* 1. Register: the server reads our buffer for a WRITE, writes it for a READ. */
	uint32_t flags = is_write ? SMBDIRECT_ACCESS_PEER_READ : SMBDIRECT_ACCESS_PEER_WRITE;
	if (channel == Channel::rdma_v1_invalidate)
		flags |= SMBDIRECT_REG_REMOTE_INVALIDATE;
	auto reg = sd::Registration::create(fd_, iov, flags);
	if (!reg)
		return reg.error();
	RdmaResult result;
	auto descriptors = channel_info(*reg);
	result.descriptors = static_cast<uint32_t>(descriptors.size());

	/* 2. The request carries the descriptors; the server moves the data. */
	Result<Exchange> x = std::error_code();
	if (is_write) {
		WriteRequest req;
		req.offset = offset;
		req.file_id = file;
		req.channel = channel;
		req.remaining_bytes = static_cast<uint32_t>(bytes);
		req.channel_info = std::move(descriptors);
		x = exchange(Command::write, credit_charge_for(bytes), [&](Writer &w) {
			encode_write_request(w, req);
			return std::error_code();
		});
	} else {
		ReadRequest req;
		req.length = static_cast<uint32_t>(bytes);
		req.offset = offset;
		req.file_id = file;
		req.channel = channel;
		req.channel_info = std::move(descriptors);
		x = exchange(
			Command::read, credit_charge_for(bytes),
			[&](Writer &w) {
				encode_read_request(w, req);
				return std::error_code();
			},
			{ Status::end_of_file });
	}
	if (!x)
		return x.error(); /* ~Registration deregisters */

	if (is_write) {
		auto rsp = decode_write_response(x->response);
		if (!rsp)
			return rsp.error();
		result.bytes = rsp->count;
	} else if (x->header.status == static_cast<uint32_t>(Status::end_of_file)) {
		if (auto ec = decode_error_response(x->response))
			return ec;
		result.bytes = 0; /* at or beyond the end: nothing was written to us */
	} else {
		auto rsp = decode_read_response(x->response);
		if (!rsp)
			return rsp.error();
		/* Over the RDMA channel nothing comes inline. */
		if (rsp->data_length != 0)
			return ParseError::bad_value;
		result.bytes = rsp->data_remaining;
	}
	if (result.bytes > bytes)
		return ParseError::bad_value;

	/* 3. The server is done with our memory: deregister (the client's job). */
	auto remote_invalidated = reg->deregister();
	if (!remote_invalidated)
		return remote_invalidated.error();
	result.deregister_state = *remote_invalidated ? SMBDIRECT_REG_STATE_REMOTE_INVALIDATED : 0;
	return result;
}

Result<RdmaResult> Client::write_rdma(const FileId &file, uint64_t offset,
				      std::span<const iovec> iov, Channel channel)
{
	return rdma_io(Command::write, file, offset, iov, channel);
}

Result<RdmaResult> Client::read_rdma(const FileId &file, uint64_t offset,
				     std::span<const iovec> iov, Channel channel)
{
	return rdma_io(Command::read, file, offset, iov, channel);
}

} // namespace smb2
