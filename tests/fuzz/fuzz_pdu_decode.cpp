// SPDX-License-Identifier: GPL-2.0
// Every decoder on arbitrary bytes. A decoded value must re-encode to a PDU
// that decodes to the same value, and nothing may read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pdu.h"
#include "smbdirect_core.h"

using namespace sd;

namespace
{

void check(bool ok)
{
	if (!ok)
		__builtin_trap();
}

void request(ByteSpan in)
{
	auto r = decode_negotiate_request(in);
	if (!r.ok())
		return;
	u8 b[SD_CORE_NEGOTIATE_REQUEST_SIZE];
	check(encode_negotiate_request(r.value(), MutByteSpan(b, sizeof(b))).ok());
	auto again = decode_negotiate_request(ByteSpan(b, sizeof(b)));
	check(again.ok() && memcmp(&again.value(), &r.value(), sizeof(r.value())) == 0);
}

void response(ByteSpan in)
{
	auto r = decode_negotiate_response(in);
	if (!r.ok())
		return;
	u8 b[SD_CORE_NEGOTIATE_RESPONSE_SIZE];
	check(encode_negotiate_response(r.value(), MutByteSpan(b, sizeof(b))).ok());
	auto again = decode_negotiate_response(ByteSpan(b, sizeof(b)));
	check(again.ok() && memcmp(&again.value(), &r.value(), sizeof(r.value())) == 0);
}

void data(ByteSpan in)
{
	auto r = decode_data_header(in);
	if (!r.ok())
		return;
	const DataHeader &h = r.value();
	// The payload the decoder vouched for must be inside the input.
	if (h.data_length) {
		check(static_cast<uint64_t>(h.data_offset) + h.data_length <= in.size());
		volatile uint8_t sink = in.data()[h.data_offset + h.data_length - 1];
		(void)sink;
	}
	uint8_t b[SD_CORE_DATA_HEADER_SIZE];
	DataHeader canon = h;
	if (!canon.data_length)
		canon.data_offset = 0;
	auto n = encode_data_header(canon, MutByteSpan(b, sizeof(b)));
	check(n.ok());
	if (!canon.data_length) {
		auto again = decode_data_header(ByteSpan(b, n.value()));
		check(again.ok() && again.value().credits_granted == h.credits_granted &&
		      again.value().flags == h.flags);
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data_in, size_t size)
{
	// Exact-size copies so ASan sees any read past the end.
	uint8_t *copy = new uint8_t[size ? size : 1];
	memcpy(copy, data_in, size);
	ByteSpan in(copy, size);
	request(in);
	response(in);
	data(in);

	sd_core_buffer_descriptor d[8];
	unsigned n;
	if (sd_core_buffer_descriptor_decode(copy, static_cast<unsigned>(size), d, 8, &n) ==
	    SD_CORE_OK)
		check(n * 16u == size);

	sd_core_stream_parser p;
	sd_core_stream_parser_init(&p, 1u << 20);
	size_t pos = 0;
	while (pos < size) {
		sd_core_stream_chunk ch;
		if (sd_core_stream_parse(&p, copy + pos, static_cast<unsigned>(size - pos), &ch))
			break;
		check(ch.consumed > 0 && ch.consumed <= size - pos);
		check(ch.payload_offset + ch.payload_length <= ch.consumed);
		pos += ch.consumed;
	}
	delete[] copy;
	return 0;
}
