// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The little protocol `smbdirect cat` and `smbdirect perf` speak over a
 * SOCK_SEQPACKET SMB-Direct connection: one SMB-Direct message per
 * sendmsg, each beginning with a 4-byte type (four ASCII letters,
 * little-endian) followed by little-endian fields. Buffer descriptors are
 * carried exactly as SMB2 carries them (struct
 * smbdirect_buffer_descriptor_v1, 16 bytes, little-endian).
 *
 * cat, after connect/accept:
 *   connector -> listener  HELO  u16 version, u8 mode (0 messages, 1 rdma),
 *                                u8 connector_sends (1: the connector is
 *                                the sender)
 *   listener -> connector  REDY  (or ERRR text: the two ends disagree)
 *   then, messages mode, sender S and receiver R:
 *     S -> R  DATA  payload bytes...
 *     S -> R  END_  u64 total bytes sent
 *     R -> S  DONE  u64 total bytes received and written out
 *   rdma mode:
 *     R -> S  BUFR  u32 index, u32 length, u32 count, count descriptors:
 *                   a buffer R registered PEER_WRITE, granted to S
 *     S -> R  WRTN  u32 index, u32 bytes: S RDMA-wrote bytes at the start
 *                   of buffer index; it is R's again until R grants it
 *     R -> S  GRNT  u32 index: S may write it again
 *     S -> R  END_  u64 total;   R -> S  DONE u64 total
 *   either end, at any time:  ERRR text  (then it closes)
 * A connection that ends without END_ (receiver) or DONE (sender) is an
 * error: a truncated stream never looks complete.
 *
 * perf:
 *   client -> server  PHLO  u16 version, u32 test, u64 size
 *   server -> client  PRDY  u32 count, count descriptors (read/write tests:
 *                           the server's registered buffer; else 0)
 *   send:     client DATA..., END_ u64 messages  -> server PRES
 *   latency:  client DATA, server DATA (echo), ..., END_ -> PRES
 *   read/write/register: client ioctls..., END_ -> server PRES
 *   server -> client  PRES  u64 messages, u64 bytes, u8 verified
 *                           (write: the server found the client's
 *                           pattern in its buffer; else 1)
 */
#ifndef SMBDIRECT_TOOLS_WIRE_HPP
#define SMBDIRECT_TOOLS_WIRE_HPP

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <linux/smbdirect.h>

namespace sd::tool::wire
{

constexpr uint32_t fourcc(const char (&s)[5])
{
	return static_cast<uint32_t>(static_cast<unsigned char>(s[0])) |
	       static_cast<uint32_t>(static_cast<unsigned char>(s[1])) << 8 |
	       static_cast<uint32_t>(static_cast<unsigned char>(s[2])) << 16 |
	       static_cast<uint32_t>(static_cast<unsigned char>(s[3])) << 24;
}

enum class Type : uint32_t {
	Hello = fourcc("HELO"),
	Ready = fourcc("REDY"),
	Data = fourcc("DATA"),
	End = fourcc("END_"),
	Done = fourcc("DONE"),
	Error = fourcc("ERRR"),
	Buffer = fourcc("BUFR"),
	Written = fourcc("WRTN"),
	Grant = fourcc("GRNT"),
	PerfHello = fourcc("PHLO"),
	PerfReady = fourcc("PRDY"),
	PerfResult = fourcc("PRES"),
};

constexpr uint16_t version = 1;
constexpr size_t header_size = 4;
/* Control messages stay far below every max_fragmented_size (>= 128 KiB). */
constexpr size_t max_control_size = 64 * 1024;
constexpr size_t descriptor_size = sizeof(smbdirect_buffer_descriptor_v1);
static_assert(descriptor_size == 16);

/* The 4 header bytes of a message of type t. */
void put_header(uint8_t (&out)[header_size], Type t);

/* "HELO" for a known type, else its bytes in hex. */
std::string type_name(uint32_t type);

class Writer {
    public:
	explicit Writer(Type t);
	Writer &u8(uint8_t v);
	Writer &u16(uint16_t v);
	Writer &u32(uint32_t v);
	Writer &u64(uint64_t v);
	Writer &text(std::string_view s);
	Writer &descriptors(std::span<const smbdirect_buffer_descriptor_v1> d);
	const std::vector<uint8_t> &bytes() const
	{
		return buf_;
	}

    private:
	std::vector<uint8_t> buf_;
};

/* Reads fields in order; reading past the end fails the reader for good. */
class Reader {
    public:
	explicit Reader(std::span<const uint8_t> msg);
	/* The type; 0 for a message shorter than its header. */
	uint32_t type() const
	{
		return type_;
	}
	bool is(Type t) const
	{
		return type_ == static_cast<uint32_t>(t);
	}
	uint8_t u8();
	uint16_t u16();
	uint32_t u32();
	uint64_t u64();
	/* What is left, as text. */
	std::string rest_text();
	/* count descriptors; an empty vector (and failure) when too few bytes. */
	std::vector<smbdirect_buffer_descriptor_v1> descriptors(uint32_t count);
	/* No field was read past the end, and nothing is left over. */
	bool ok_and_done() const
	{
		return ok_ && pos_ == msg_.size();
	}
	bool ok() const
	{
		return ok_;
	}

    private:
	bool take(size_t n);
	std::span<const uint8_t> msg_;
	size_t pos_;
	uint32_t type_;
	bool ok_;
};

/*
 * The rdma-mode receiver's book of its buffers: which are granted to the
 * sender (it may write them) and which are back (the receiver writes them
 * out). A WRTN for a buffer that is not granted, out of range, or longer
 * than the buffer is the sender breaking the protocol.
 */
class GrantBook {
    public:
	GrantBook(uint32_t buffers, uint32_t length);
	/* true and the buffer is back, or false (nothing changes). */
	bool written(uint32_t index, uint32_t bytes);
	/* true and the buffer is granted, or false if it already was. */
	bool grant(uint32_t index);
	uint32_t granted_count() const;

    private:
	std::vector<bool> granted_;
	uint32_t length_;
};

} // namespace sd::tool::wire

#endif
