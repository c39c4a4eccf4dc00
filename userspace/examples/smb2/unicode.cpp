// SPDX-License-Identifier: LGPL-2.1-or-later
#include "unicode.hpp"

#include <cstdint>

namespace smb2 {

namespace {

/* One code point from UTF-8 at s[i], advancing i; -1 when invalid. */
long next_code_point(std::string_view s, size_t &i)
{
	auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
	uint8_t b0 = byte(i);
	size_t len;
	uint32_t cp;
	if (b0 < 0x80) {
		i += 1;
		return b0;
	} else if ((b0 & 0xE0) == 0xC0) {
		len = 2;
		cp = b0 & 0x1F;
	} else if ((b0 & 0xF0) == 0xE0) {
		len = 3;
		cp = b0 & 0x0F;
	} else if ((b0 & 0xF8) == 0xF0) {
		len = 4;
		cp = b0 & 0x07;
	} else {
		return -1;
	}
	if (s.size() - i < len)
		return -1;
	for (size_t k = 1; k < len; k++) {
		if ((byte(i + k) & 0xC0) != 0x80)
			return -1;
		cp = cp << 6 | (byte(i + k) & 0x3F);
	}
	static const uint32_t min_for_len[] = { 0, 0, 0x80, 0x800, 0x10000 };
	if (cp < min_for_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	i += len;
	return static_cast<long>(cp);
}

void append_utf8(std::string &out, uint32_t cp)
{
	if (cp < 0x80) {
		out.push_back(static_cast<char>(cp));
	} else if (cp < 0x800) {
		out.push_back(static_cast<char>(0xC0 | cp >> 6));
		out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
	} else if (cp < 0x10000) {
		out.push_back(static_cast<char>(0xE0 | cp >> 12));
		out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
		out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
	} else {
		out.push_back(static_cast<char>(0xF0 | cp >> 18));
		out.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
		out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
		out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
	}
}

} // namespace

std::optional<Bytes> utf16le_from_utf8(std::string_view utf8)
{
	Bytes out;
	out.reserve(utf8.size() * 2);
	for (size_t i = 0; i < utf8.size();) {
		long cp = next_code_point(utf8, i);
		if (cp < 0)
			return std::nullopt;
		auto unit = [&](uint32_t u) {
			out.push_back(static_cast<uint8_t>(u));
			out.push_back(static_cast<uint8_t>(u >> 8));
		};
		if (cp >= 0x10000) {
			uint32_t v = static_cast<uint32_t>(cp) - 0x10000;
			unit(0xD800 | v >> 10);
			unit(0xDC00 | (v & 0x3FF));
		} else {
			unit(static_cast<uint32_t>(cp));
		}
	}
	return out;
}

std::optional<std::string> utf8_from_utf16le(ByteView utf16le)
{
	if (utf16le.size() % 2)
		return std::nullopt;
	std::string out;
	out.reserve(utf16le.size() / 2);
	for (size_t i = 0; i < utf16le.size(); i += 2) {
		uint32_t u = load_le16(utf16le.data() + i);
		if (u >= 0xD800 && u <= 0xDBFF) {
			if (i + 4 > utf16le.size())
				return std::nullopt;
			uint32_t lo = load_le16(utf16le.data() + i + 2);
			if (lo < 0xDC00 || lo > 0xDFFF)
				return std::nullopt;
			append_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
			i += 2;
		} else if (u >= 0xDC00 && u <= 0xDFFF) {
			return std::nullopt;
		} else {
			append_utf8(out, u);
		}
	}
	return out;
}

std::string upper_case(std::string_view utf8)
{
	std::string out;
	for (size_t i = 0; i < utf8.size();) {
		size_t start = i;
		long cp = next_code_point(utf8, i);
		if (cp < 0) {
			/* Not ours to judge here: keep the byte. */
			out.push_back(utf8[start]);
			i = start + 1;
			continue;
		}
		uint32_t c = static_cast<uint32_t>(cp);
		if ((c >= 'a' && c <= 'z') || (c >= 0xE0 && c <= 0xFE && c != 0xF7))
			c -= 0x20;
		else if (c == 0xFF)
			c = 0x178;
		append_utf8(out, c);
	}
	return out;
}

} // namespace smb2
