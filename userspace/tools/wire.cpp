// SPDX-License-Identifier: LGPL-2.1-or-later
#include "wire.hpp"

#include <cstdio>
#include <cstring>

namespace sd::tool::wire
{

void put_header(uint8_t (&out)[header_size], Type t)
{
	uint32_t v = static_cast<uint32_t>(t);

	for (size_t i = 0; i < header_size; i++)
		out[i] = static_cast<uint8_t>(v >> (8 * i));
}

std::string type_name(uint32_t type)
{
	char s[5];

	for (int i = 0; i < 4; i++)
		s[i] = static_cast<char>(type >> (8 * i));
	s[4] = 0;
	for (Type t : { Type::Hello, Type::Ready, Type::Data, Type::End, Type::Done, Type::Error,
			Type::Buffer, Type::Written, Type::Grant, Type::PerfHello, Type::PerfReady,
			Type::PerfResult })
		if (static_cast<uint32_t>(t) == type)
			return s;
	char hex[16];
	std::snprintf(hex, sizeof(hex), "0x%08x", type);
	return hex;
}

Writer::Writer(Type t)
{
	u32(static_cast<uint32_t>(t));
}

Writer &Writer::u8(uint8_t v)
{
	buf_.push_back(v);
	return *this;
}

Writer &Writer::u16(uint16_t v)
{
	for (int i = 0; i < 2; i++)
		buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
	return *this;
}

Writer &Writer::u32(uint32_t v)
{
	for (int i = 0; i < 4; i++)
		buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
	return *this;
}

Writer &Writer::u64(uint64_t v)
{
	for (int i = 0; i < 8; i++)
		buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
	return *this;
}

Writer &Writer::text(std::string_view s)
{
	buf_.insert(buf_.end(), s.begin(), s.end());
	return *this;
}

Writer &Writer::descriptors(std::span<const smbdirect_buffer_descriptor_v1> d)
{
	/* Already little-endian: the bytes go as they are. */
	const auto *p = reinterpret_cast<const uint8_t *>(d.data());
	buf_.insert(buf_.end(), p, p + d.size_bytes());
	return *this;
}

Reader::Reader(std::span<const uint8_t> msg) : msg_(msg), pos_(0), type_(0), ok_(true)
{
	type_ = u32();
	if (!ok_)
		type_ = 0;
}

bool Reader::take(size_t n)
{
	if (!ok_ || msg_.size() - pos_ < n) {
		ok_ = false;
		return false;
	}
	return true;
}

uint8_t Reader::u8()
{
	if (!take(1))
		return 0;
	return msg_[pos_++];
}

uint16_t Reader::u16()
{
	if (!take(2))
		return 0;
	uint16_t v = static_cast<uint16_t>(msg_[pos_] | msg_[pos_ + 1] << 8);
	pos_ += 2;
	return v;
}

uint32_t Reader::u32()
{
	if (!take(4))
		return 0;
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | msg_[pos_ + static_cast<size_t>(i)];
	pos_ += 4;
	return v;
}

uint64_t Reader::u64()
{
	if (!take(8))
		return 0;
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | msg_[pos_ + static_cast<size_t>(i)];
	pos_ += 8;
	return v;
}

std::string Reader::rest_text()
{
	std::string s(reinterpret_cast<const char *>(msg_.data()) + pos_, msg_.size() - pos_);
	pos_ = msg_.size();
	return s;
}

std::vector<smbdirect_buffer_descriptor_v1> Reader::descriptors(uint32_t count)
{
	std::vector<smbdirect_buffer_descriptor_v1> d;

	if (count > SMBDIRECT_DESC_MAX || !take(static_cast<size_t>(count) * descriptor_size)) {
		ok_ = false;
		return d;
	}
	d.resize(count);
	std::memcpy(d.data(), msg_.data() + pos_, count * descriptor_size);
	pos_ += count * descriptor_size;
	return d;
}

GrantBook::GrantBook(uint32_t buffers, uint32_t length) : granted_(buffers, true), length_(length)
{
}

bool GrantBook::written(uint32_t index, uint32_t bytes)
{
	if (index >= granted_.size() || !granted_[index] || bytes == 0 || bytes > length_)
		return false;
	granted_[index] = false;
	return true;
}

bool GrantBook::grant(uint32_t index)
{
	if (index >= granted_.size() || granted_[index])
		return false;
	granted_[index] = true;
	return true;
}

uint32_t GrantBook::granted_count() const
{
	uint32_t n = 0;
	for (bool g : granted_)
		n += g;
	return n;
}

} // namespace sd::tool::wire
