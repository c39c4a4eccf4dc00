/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SMB-Direct PDU codec ([MS-SMBD] 2.2). Wire layouts are byte arrays with
 * explicit little-endian accessors, so layout never depends on the host's
 * alignment or endianness, and every size/offset is checked at compile time.
 * Decoders return validated values or the specific rule that failed;
 * encoders write whatever they are given (tests craft invalid PDUs with
 * them) into caller-provided buffers.
 */
#ifndef SD_CORE_PDU_H
#define SD_CORE_PDU_H

#include "byte_span.h"
#include "result.h"
#include "types.h"

namespace sd
{

template <typename T> class LeInt {
    public:
	constexpr T get() const
	{
		T v = 0;
		for (usize i = 0; i < sizeof(T); i++)
			v = static_cast<T>(v | static_cast<T>(static_cast<T>(b_[i]) << (8 * i)));
		return v;
	}
	constexpr void set(T v)
	{
		for (usize i = 0; i < sizeof(T); i++)
			b_[i] = static_cast<u8>(v >> (8 * i));
	}

    private:
	u8 b_[sizeof(T)];
};

using Le16 = LeInt<u16>;
using Le32 = LeInt<u32>;
using Le64 = LeInt<u64>;
static_assert(sizeof(Le16) == 2 && alignof(Le16) == 1);
static_assert(sizeof(Le32) == 4 && alignof(Le32) == 1);
static_assert(sizeof(Le64) == 8 && alignof(Le64) == 1);

inline constexpr u16 version_1 = SD_CORE_VERSION_1;
inline constexpr u32 min_fragmented_size = SD_CORE_MIN_FRAGMENTED_SIZE;
inline constexpr u32 min_receive_size = SD_CORE_MIN_RECEIVE_SIZE;
inline constexpr u16 flag_response_requested = SD_CORE_FLAG_RESPONSE_REQUESTED;
inline constexpr u32 status_success = SD_CORE_STATUS_SUCCESS;
inline constexpr u32 status_not_supported = SD_CORE_STATUS_NOT_SUPPORTED;
inline constexpr u32 status_invalid_parameter = SD_CORE_STATUS_INVALID_PARAMETER;
/* Payload starts 8-byte aligned after the padded header. */
inline constexpr u32 data_offset = SD_CORE_DATA_HEADER_SIZE;

namespace wire
{

struct NegotiateRequest {
	Le16 min_version;
	Le16 max_version;
	Le16 reserved;
	Le16 credits_requested;
	Le32 preferred_send_size;
	Le32 max_receive_size;
	Le32 max_fragmented_size;
};
static_assert(sizeof(NegotiateRequest) == SD_CORE_NEGOTIATE_REQUEST_SIZE);
static_assert(__builtin_offsetof(NegotiateRequest, min_version) == 0);
static_assert(__builtin_offsetof(NegotiateRequest, max_version) == 2);
static_assert(__builtin_offsetof(NegotiateRequest, reserved) == 4);
static_assert(__builtin_offsetof(NegotiateRequest, credits_requested) == 6);
static_assert(__builtin_offsetof(NegotiateRequest, preferred_send_size) == 8);
static_assert(__builtin_offsetof(NegotiateRequest, max_receive_size) == 12);
static_assert(__builtin_offsetof(NegotiateRequest, max_fragmented_size) == 16);

struct NegotiateResponse {
	Le16 min_version;
	Le16 max_version;
	Le16 negotiated_version;
	Le16 reserved;
	Le16 credits_requested;
	Le16 credits_granted;
	Le32 status;
	Le32 max_read_write_size;
	Le32 preferred_send_size;
	Le32 max_receive_size;
	Le32 max_fragmented_size;
};
static_assert(sizeof(NegotiateResponse) == SD_CORE_NEGOTIATE_RESPONSE_SIZE);
static_assert(__builtin_offsetof(NegotiateResponse, min_version) == 0);
static_assert(__builtin_offsetof(NegotiateResponse, max_version) == 2);
static_assert(__builtin_offsetof(NegotiateResponse, negotiated_version) == 4);
static_assert(__builtin_offsetof(NegotiateResponse, reserved) == 6);
static_assert(__builtin_offsetof(NegotiateResponse, credits_requested) == 8);
static_assert(__builtin_offsetof(NegotiateResponse, credits_granted) == 10);
static_assert(__builtin_offsetof(NegotiateResponse, status) == 12);
static_assert(__builtin_offsetof(NegotiateResponse, max_read_write_size) == 16);
static_assert(__builtin_offsetof(NegotiateResponse, preferred_send_size) == 20);
static_assert(__builtin_offsetof(NegotiateResponse, max_receive_size) == 24);
static_assert(__builtin_offsetof(NegotiateResponse, max_fragmented_size) == 28);

struct DataTransfer {
	Le16 credits_requested;
	Le16 credits_granted;
	Le16 flags;
	Le16 reserved;
	Le32 remaining_data_length;
	Le32 data_offset;
	Le32 data_length;
	Le32 padding;
};
static_assert(sizeof(DataTransfer) == SD_CORE_DATA_HEADER_SIZE);
static_assert(__builtin_offsetof(DataTransfer, credits_requested) == 0);
static_assert(__builtin_offsetof(DataTransfer, credits_granted) == 2);
static_assert(__builtin_offsetof(DataTransfer, flags) == 4);
static_assert(__builtin_offsetof(DataTransfer, reserved) == 6);
static_assert(__builtin_offsetof(DataTransfer, remaining_data_length) == 8);
static_assert(__builtin_offsetof(DataTransfer, data_offset) == 12);
static_assert(__builtin_offsetof(DataTransfer, data_length) == 16);
static_assert(__builtin_offsetof(DataTransfer, padding) == SD_CORE_DATA_HEADER_MIN_SIZE);

struct BufferDescriptorV1 {
	Le64 offset;
	Le32 token;
	Le32 length;
};
static_assert(sizeof(BufferDescriptorV1) == SD_CORE_BUFFER_DESCRIPTOR_V1_SIZE);
static_assert(__builtin_offsetof(BufferDescriptorV1, offset) == 0);
static_assert(__builtin_offsetof(BufferDescriptorV1, token) == 8);
static_assert(__builtin_offsetof(BufferDescriptorV1, length) == 12);

} // namespace wire

/* Decoded, host-order values. */
struct NegotiateRequest {
	u16 min_version;
	u16 max_version;
	u16 credits_requested;
	u32 preferred_send_size;
	u32 max_receive_size;
	u32 max_fragmented_size;
};

struct NegotiateResponse {
	u16 min_version;
	u16 max_version;
	u16 negotiated_version;
	u16 credits_requested;
	u16 credits_granted;
	u32 status;
	u32 max_read_write_size;
	u32 preferred_send_size;
	u32 max_receive_size;
	u32 max_fragmented_size;
};

struct DataHeader {
	u16 credits_requested;
	u16 credits_granted;
	u16 flags;
	u32 remaining_data_length;
	u32 data_offset;
	u32 data_length;
};

struct BufferDescriptor {
	u64 offset;
	u32 token;
	u32 length;
};

/*
 * Decoders. A request whose only fault is the version decodes with
 * Errc::version so the server can still answer STATUS_NOT_SUPPORTED.
 */
Result<NegotiateRequest> decode_negotiate_request(ByteSpan pdu);
Result<NegotiateResponse> decode_negotiate_response(ByteSpan pdu);
Result<DataHeader> decode_data_header(ByteSpan pdu);
Result<BufferDescriptor> decode_buffer_descriptor(ByteSpan bytes);

/* Encoders return the bytes written. */
Result<usize> encode_negotiate_request(const NegotiateRequest &req, MutByteSpan out);
Result<usize> encode_negotiate_response(const NegotiateResponse &resp, MutByteSpan out);
/* Writes 20 bytes for an empty message, 24 when data_length != 0. */
Result<usize> encode_data_header(const DataHeader &hdr, MutByteSpan out);
Result<usize> encode_buffer_descriptor(const BufferDescriptor &desc, MutByteSpan out);

} // namespace sd

#endif
