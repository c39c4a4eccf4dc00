// SPDX-License-Identifier: LGPL-2.1-or-later
#include "json.hpp"

#include <cmath>
#include <cstdio>

namespace sd::tool
{

namespace
{

/* Length of the valid UTF-8 sequence at s[i], or 0 if it is not one. */
size_t utf8_sequence(std::string_view s, size_t i)
{
	auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
	unsigned char c = b(i);
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (i + len > s.size())
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((b(i + k) & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (b(i + k) & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF are not UTF-8. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

} // namespace

std::string JsonWriter::quote(std::string_view s)
{
	std::string q = "\"";

	for (size_t i = 0; i < s.size();) {
		unsigned char c = static_cast<unsigned char>(s[i]);

		switch (c) {
		case '"':
			q += "\\\"";
			break;
		case '\\':
			q += "\\\\";
			break;
		case '\b':
			q += "\\b";
			break;
		case '\f':
			q += "\\f";
			break;
		case '\n':
			q += "\\n";
			break;
		case '\r':
			q += "\\r";
			break;
		case '\t':
			q += "\\t";
			break;
		default:
			if (c < 0x20) {
				char esc[8];
				std::snprintf(esc, sizeof(esc), "\\u%04x", c);
				q += esc;
			} else if (c >= 0x80) {
				size_t len = utf8_sequence(s, i);

				if (!len) {
					q += "\\ufffd";
					i++;
					continue;
				}
				q.append(s.substr(i, len));
				i += len;
				continue;
			} else {
				q += static_cast<char>(c);
			}
		}
		i++;
	}
	q += '"';
	return q;
}

void JsonWriter::before_value()
{
	if (after_key_) {
		after_key_ = false;
		return;
	}
	if (!depth_.empty()) {
		if (depth_.back())
			out_ += ',';
		depth_.back() = true;
	}
}

JsonWriter &JsonWriter::begin_object()
{
	before_value();
	out_ += '{';
	depth_.push_back(false);
	return *this;
}

JsonWriter &JsonWriter::end_object()
{
	out_ += '}';
	if (!depth_.empty())
		depth_.pop_back();
	return *this;
}

JsonWriter &JsonWriter::begin_array()
{
	before_value();
	out_ += '[';
	depth_.push_back(false);
	return *this;
}

JsonWriter &JsonWriter::end_array()
{
	out_ += ']';
	if (!depth_.empty())
		depth_.pop_back();
	return *this;
}

JsonWriter &JsonWriter::key(std::string_view name)
{
	before_value();
	out_ += quote(name);
	out_ += ':';
	after_key_ = true;
	return *this;
}

JsonWriter &JsonWriter::value(std::string_view s)
{
	before_value();
	out_ += quote(s);
	return *this;
}

JsonWriter &JsonWriter::value(bool b)
{
	before_value();
	out_ += b ? "true" : "false";
	return *this;
}

JsonWriter &JsonWriter::write_signed(long long v)
{
	before_value();
	out_ += std::to_string(v);
	return *this;
}

JsonWriter &JsonWriter::write_unsigned(unsigned long long v)
{
	before_value();
	out_ += std::to_string(v);
	return *this;
}

JsonWriter &JsonWriter::value(double v, int decimals)
{
	if (!std::isfinite(v))
		return null();
	before_value();
	char buf[400]; /* DBL_MAX has 309 digits */
	std::snprintf(buf, sizeof(buf), "%.*f",
		      decimals < 0    ? 0
		      : decimals > 17 ? 17
				      : decimals,
		      v);
	/* "-0.000" is valid JSON but reads oddly. */
	std::string_view text = buf;
	if (text.starts_with('-') && text.find_first_not_of("-0.") == std::string_view::npos)
		text.remove_prefix(1);
	out_ += text;
	return *this;
}

JsonWriter &JsonWriter::number(double v)
{
	if (!std::isfinite(v))
		return null();
	before_value();
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%.9g", v == 0 ? 0.0 : v); /* no "-0" */
	out_ += buf;
	return *this;
}

JsonWriter &JsonWriter::null()
{
	before_value();
	out_ += "null";
	return *this;
}

} // namespace sd::tool
