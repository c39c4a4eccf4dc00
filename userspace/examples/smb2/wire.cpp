// SPDX-License-Identifier: LGPL-2.1-or-later
#include "wire.hpp"

#include <cstring>

namespace smb2 {

bool Reader::take(size_t n)
{
	if (!ok_ || n > bytes_.size() - pos_) {
		fail();
		return false;
	}
	return true;
}

uint8_t Reader::u8()
{
	if (!take(1))
		return 0;
	return bytes_[pos_++];
}

uint16_t Reader::le16()
{
	if (!take(2))
		return 0;
	uint16_t v = load_le16(bytes_.data() + pos_);
	pos_ += 2;
	return v;
}

uint32_t Reader::le32()
{
	if (!take(4))
		return 0;
	uint32_t v = load_le32(bytes_.data() + pos_);
	pos_ += 4;
	return v;
}

uint64_t Reader::le64()
{
	if (!take(8))
		return 0;
	uint64_t v = load_le64(bytes_.data() + pos_);
	pos_ += 8;
	return v;
}

ByteView Reader::bytes(size_t n)
{
	if (!take(n))
		return {};
	ByteView v = bytes_.subspan(pos_, n);
	pos_ += n;
	return v;
}

void Reader::skip(size_t n)
{
	if (take(n))
		pos_ += n;
}

void Reader::seek(size_t pos)
{
	if (!ok_ || pos > bytes_.size())
		fail();
	else
		pos_ = pos;
}

void Writer::u8(uint8_t v)
{
	out_.push_back(v);
}

void Writer::le16(uint16_t v)
{
	uint8_t b[2];
	store_le16(b, v);
	out_.insert(out_.end(), b, b + 2);
}

void Writer::le32(uint32_t v)
{
	uint8_t b[4];
	store_le32(b, v);
	out_.insert(out_.end(), b, b + 4);
}

void Writer::le64(uint64_t v)
{
	uint8_t b[8];
	store_le64(b, v);
	out_.insert(out_.end(), b, b + 8);
}

void Writer::bytes(ByteView v)
{
	out_.insert(out_.end(), v.begin(), v.end());
}

void Writer::zeros(size_t n)
{
	out_.insert(out_.end(), n, 0);
}

void Writer::align(size_t n)
{
	size_t rem = out_.size() % n;
	if (rem)
		zeros(n - rem);
}

void Writer::le16_at(size_t pos, uint16_t v)
{
	store_le16(out_.data() + pos, v);
}

void Writer::le32_at(size_t pos, uint32_t v)
{
	store_le32(out_.data() + pos, v);
}

std::optional<ByteView> slice(ByteView whole, uint64_t offset, uint64_t length)
{
	if (offset > whole.size() || length > whole.size() - offset)
		return std::nullopt;
	return whole.subspan(static_cast<size_t>(offset), static_cast<size_t>(length));
}

std::string to_hex(ByteView bytes)
{
	static const char digits[] = "0123456789abcdef";
	std::string s;
	s.reserve(bytes.size() * 2);
	for (uint8_t b : bytes) {
		s.push_back(digits[b >> 4]);
		s.push_back(digits[b & 15]);
	}
	return s;
}

} // namespace smb2
