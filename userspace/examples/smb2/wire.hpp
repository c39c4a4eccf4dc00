// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Little-endian byte readers and writers for SMB2 and NTLMSSP.
 *
 * Reader has a sticky failure flag (Samba's ndr_pull habit): a read past
 * the end returns zeros and marks the reader failed, so a parser reads a
 * whole fixed structure and checks ok() once instead of after every field.
 * Every offset/length pair a peer sends goes through slice(), which checks
 * it against the message before anything is dereferenced.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_WIRE_HPP
#define SMBDIRECT_EXAMPLES_SMB2_WIRE_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace smb2 {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;

class Reader {
public:
	explicit Reader(ByteView bytes, size_t pos = 0) : bytes_(bytes), pos_(pos)
	{
		if (pos > bytes.size())
			fail();
	}

	uint8_t u8();
	uint16_t le16();
	uint32_t le32();
	uint64_t le64();
	/* n bytes, or an empty view (and failure) if fewer remain. */
	ByteView bytes(size_t n);
	void skip(size_t n);
	void seek(size_t pos);

	size_t pos() const
	{
		return pos_;
	}
	size_t remaining() const
	{
		return ok_ ? bytes_.size() - pos_ : 0;
	}
	bool ok() const
	{
		return ok_;
	}

private:
	bool take(size_t n);
	void fail()
	{
		ok_ = false;
		pos_ = bytes_.size();
	}

	ByteView bytes_;
	size_t pos_;
	bool ok_ = true;
};

class Writer {
public:
	void u8(uint8_t v);
	void le16(uint16_t v);
	void le32(uint32_t v);
	void le64(uint64_t v);
	void bytes(ByteView v);
	void zeros(size_t n);
	/* Zero padding up to a multiple of n from the start of the buffer. */
	void align(size_t n);
	/* Patches a field written earlier (offsets and lengths known later). */
	void le16_at(size_t pos, uint16_t v);
	void le32_at(size_t pos, uint32_t v);

	size_t size() const
	{
		return out_.size();
	}
	const Bytes &buffer() const
	{
		return out_;
	}
	Bytes take()
	{
		return std::move(out_);
	}

private:
	Bytes out_;
};

/*
 * The [offset, offset + length) part of whole, or nothing when it does not
 * lie inside (the check every peer-supplied offset/length pair needs).
 */
std::optional<ByteView> slice(ByteView whole, uint64_t offset, uint64_t length);

inline uint16_t load_le16(const uint8_t *p)
{
	return static_cast<uint16_t>(p[0] | p[1] << 8);
}
inline uint32_t load_le32(const uint8_t *p)
{
	return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
	       static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
inline uint64_t load_le64(const uint8_t *p)
{
	return load_le32(p) | static_cast<uint64_t>(load_le32(p + 4)) << 32;
}
inline void store_le16(uint8_t *p, uint16_t v)
{
	p[0] = static_cast<uint8_t>(v);
	p[1] = static_cast<uint8_t>(v >> 8);
}
inline void store_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void store_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = static_cast<uint8_t>(v >> (8 * i));
}

/* "0a1b..." for logs and tests. */
std::string to_hex(ByteView bytes);

} // namespace smb2

#endif
