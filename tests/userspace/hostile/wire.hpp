// SPDX-License-Identifier: GPL-2.0
//
// [MS-SMBD] 2.2 wire formats as the hostile peer writes and reads them,
// written from the specification (../shared/MS-SMBD-NOTES.md), not from
// the module: the point is an independent view of the bytes. All fields
// little-endian; x86 and arm64 test hosts are little-endian, which the
// static_assert below insists on.
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <vector>

namespace hp
{

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the structs are used as is");

constexpr uint16_t smbd_version = 0x0100;
constexpr uint16_t flag_response_requested = 0x0001;
constexpr uint32_t status_success = 0;
constexpr uint32_t status_not_supported = 0xC00000BB;
constexpr uint32_t status_invalid_parameter = 0xC000000D;
constexpr uint32_t status_pending = 0x00000103;

struct __attribute__((packed)) NegReq {
	uint16_t min_version;
	uint16_t max_version;
	uint16_t reserved;
	uint16_t credits_requested;
	uint32_t preferred_send_size;
	uint32_t max_receive_size;
	uint32_t max_fragmented_size;
};
static_assert(sizeof(NegReq) == 20);

struct __attribute__((packed)) NegResp {
	uint16_t min_version;
	uint16_t max_version;
	uint16_t negotiated_version;
	uint16_t reserved;
	uint16_t credits_requested;
	uint16_t credits_granted;
	uint32_t status;
	uint32_t max_read_write_size;
	uint32_t preferred_send_size;
	uint32_t max_receive_size;
	uint32_t max_fragmented_size;
};
static_assert(sizeof(NegResp) == 32);

struct __attribute__((packed)) DataHdr {
	uint16_t credits_requested;
	uint16_t credits_granted;
	uint16_t flags;
	uint16_t reserved;
	uint32_t remaining_data_length;
	uint32_t data_offset;
	uint32_t data_length;
	uint32_t padding;
};
static_assert(sizeof(DataHdr) == 24);
constexpr uint32_t data_hdr_min = 20; // without Padding: a PDU with no data

// A well-formed request of the hostile client: what the tests start from.
inline NegReq good_request()
{
	NegReq r{};
	r.min_version = smbd_version;
	r.max_version = smbd_version;
	r.credits_requested = 32;
	r.preferred_send_size = 1364;
	r.max_receive_size = 8192;
	r.max_fragmented_size = 1 << 20;
	return r;
}

// A well-formed response of the hostile server.
inline NegResp good_response(uint16_t granted)
{
	NegResp r{};
	r.min_version = smbd_version;
	r.max_version = smbd_version;
	r.negotiated_version = smbd_version;
	r.credits_requested = 32;
	r.credits_granted = granted;
	r.status = status_success;
	r.max_read_write_size = 1 << 20;
	r.preferred_send_size = 1364;
	r.max_receive_size = 8192;
	r.max_fragmented_size = 1 << 20;
	return r;
}

template <typename T> std::vector<uint8_t> bytes_of(const T &t)
{
	std::vector<uint8_t> v(sizeof(T));
	std::memcpy(v.data(), &t, sizeof(T));
	return v;
}

// A data transfer PDU: the header, then payload at DataOffset (24 unless
// the caller breaks it); total is the SEND's length (0: header + payload).
inline std::vector<uint8_t> data_pdu(const DataHdr &h, const std::vector<uint8_t> &payload,
				     size_t total = 0)
{
	size_t need = payload.empty() ? data_hdr_min : sizeof(DataHdr) + payload.size();
	std::vector<uint8_t> v(total ? total : need, 0);
	std::memcpy(v.data(), &h, std::min(v.size(), sizeof(DataHdr)));
	if (!payload.empty() && v.size() > sizeof(DataHdr))
		std::memcpy(v.data() + sizeof(DataHdr), payload.data(),
			    std::min(payload.size(), v.size() - sizeof(DataHdr)));
	return v;
}

} // namespace hp
