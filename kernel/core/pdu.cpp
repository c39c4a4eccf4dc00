// SPDX-License-Identifier: GPL-2.0
#include "pdu.h"

namespace sd
{

namespace
{

/* Wire structs are byte arrays, so a memcpy is the whole (de)serialisation. */
template <typename W> W load(ByteSpan pdu)
{
	W w;
	__builtin_memcpy(&w, pdu.data(), sizeof(W));
	return w;
}

template <typename W> Result<usize> store(const W &w, MutByteSpan out)
{
	if (!out.has(0, sizeof(W)))
		return Errc::buffer_too_small;
	__builtin_memcpy(out.data(), &w, sizeof(W));
	return sizeof(W);
}

bool version_in_range(u16 min_version, u16 max_version)
{
	return min_version <= version_1 && version_1 <= max_version;
}

} // namespace

Result<NegotiateRequest> decode_negotiate_request(ByteSpan pdu)
{
	if (!pdu.has(0, sizeof(wire::NegotiateRequest)))
		return Errc::truncated;
	const auto w = load<wire::NegotiateRequest>(pdu);
	NegotiateRequest r{};
	r.min_version = w.min_version.get();
	r.max_version = w.max_version.get();
	r.credits_requested = w.credits_requested.get();
	r.preferred_send_size = w.preferred_send_size.get();
	r.max_receive_size = w.max_receive_size.get();
	r.max_fragmented_size = w.max_fragmented_size.get();

	if (!version_in_range(r.min_version, r.max_version))
		return Errc::version;
	if (r.credits_requested == 0)
		return Errc::zero_credits_requested;
	if (r.max_receive_size < min_receive_size)
		return Errc::receive_size_too_small;
	if (r.max_fragmented_size < min_fragmented_size)
		return Errc::fragmented_size_too_small;
	return r;
}

Result<NegotiateResponse> decode_negotiate_response(ByteSpan pdu)
{
	if (!pdu.has(0, sizeof(wire::NegotiateResponse)))
		return Errc::truncated;
	const auto w = load<wire::NegotiateResponse>(pdu);
	NegotiateResponse r{};
	r.min_version = w.min_version.get();
	r.max_version = w.max_version.get();
	r.negotiated_version = w.negotiated_version.get();
	r.credits_requested = w.credits_requested.get();
	r.credits_granted = w.credits_granted.get();
	r.status = w.status.get();
	r.max_read_write_size = w.max_read_write_size.get();
	r.preferred_send_size = w.preferred_send_size.get();
	r.max_receive_size = w.max_receive_size.get();
	r.max_fragmented_size = w.max_fragmented_size.get();

	/* A refusal carries no usable parameters, so it is reported first. */
	if (r.status != status_success)
		return Errc::peer_status;
	if (r.negotiated_version != version_1 || !version_in_range(r.min_version, r.max_version))
		return Errc::version;
	if (r.credits_requested == 0)
		return Errc::zero_credits_requested;
	if (r.credits_granted == 0)
		return Errc::zero_credits_granted;
	if (r.max_receive_size < min_receive_size)
		return Errc::receive_size_too_small;
	if (r.max_fragmented_size < min_fragmented_size)
		return Errc::fragmented_size_too_small;
	return r;
}

Result<DataHeader> decode_data_header(ByteSpan pdu)
{
	if (!pdu.has(0, SD_CORE_DATA_HEADER_MIN_SIZE))
		return Errc::truncated;
	/* A 20-byte credit-only PDU has no padding field; read what is there. */
	wire::DataTransfer w{};
	__builtin_memcpy(&w, pdu.data(), min(pdu.size(), sizeof(w)));
	DataHeader h{};
	h.credits_requested = w.credits_requested.get();
	h.credits_granted = w.credits_granted.get();
	h.flags = w.flags.get();
	h.remaining_data_length = w.remaining_data_length.get();
	h.data_offset = w.data_offset.get();
	h.data_length = w.data_length.get();

	if (h.data_length == 0) {
		/*
		 * DataOffset is meaningless without data and peers differ in
		 * what they put there, so it is not checked. A fragment that
		 * carries nothing yet promises more could stall reassembly.
		 */
		if (h.remaining_data_length != 0)
			return Errc::empty_fragment;
		return h;
	}
	if (h.data_offset % 8 != 0)
		return Errc::data_offset_alignment;
	if (h.data_offset < data_offset)
		return Errc::data_offset_range;
	if (!pdu.has(h.data_offset, h.data_length))
		return Errc::data_out_of_bounds;
	return h;
}

Result<BufferDescriptor> decode_buffer_descriptor(ByteSpan bytes)
{
	if (!bytes.has(0, sizeof(wire::BufferDescriptorV1)))
		return Errc::truncated;
	const auto w = load<wire::BufferDescriptorV1>(bytes);
	return BufferDescriptor{ w.offset.get(), w.token.get(), w.length.get() };
}

Result<usize> encode_negotiate_request(const NegotiateRequest &req, MutByteSpan out)
{
	wire::NegotiateRequest w{};
	w.min_version.set(req.min_version);
	w.max_version.set(req.max_version);
	w.reserved.set(0);
	w.credits_requested.set(req.credits_requested);
	w.preferred_send_size.set(req.preferred_send_size);
	w.max_receive_size.set(req.max_receive_size);
	w.max_fragmented_size.set(req.max_fragmented_size);
	return store(w, out);
}

Result<usize> encode_negotiate_response(const NegotiateResponse &resp, MutByteSpan out)
{
	wire::NegotiateResponse w{};
	w.min_version.set(resp.min_version);
	w.max_version.set(resp.max_version);
	w.negotiated_version.set(resp.negotiated_version);
	w.reserved.set(0);
	w.credits_requested.set(resp.credits_requested);
	w.credits_granted.set(resp.credits_granted);
	w.status.set(resp.status);
	w.max_read_write_size.set(resp.max_read_write_size);
	w.preferred_send_size.set(resp.preferred_send_size);
	w.max_receive_size.set(resp.max_receive_size);
	w.max_fragmented_size.set(resp.max_fragmented_size);
	return store(w, out);
}

Result<usize> encode_data_header(const DataHeader &hdr, MutByteSpan out)
{
	wire::DataTransfer w{};
	w.credits_requested.set(hdr.credits_requested);
	w.credits_granted.set(hdr.credits_granted);
	w.flags.set(hdr.flags);
	w.reserved.set(0);
	w.remaining_data_length.set(hdr.remaining_data_length);
	w.data_offset.set(hdr.data_offset);
	w.data_length.set(hdr.data_length);
	w.padding.set(0);
	const usize len = hdr.data_length ? sizeof(w) : SD_CORE_DATA_HEADER_MIN_SIZE;
	if (!out.has(0, len))
		return Errc::buffer_too_small;
	__builtin_memcpy(out.data(), &w, len);
	return len;
}

Result<usize> encode_buffer_descriptor(const BufferDescriptor &desc, MutByteSpan out)
{
	wire::BufferDescriptorV1 w{};
	w.offset.set(desc.offset);
	w.token.set(desc.token);
	w.length.set(desc.length);
	return store(w, out);
}

} // namespace sd
