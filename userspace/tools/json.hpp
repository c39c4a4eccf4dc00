// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A small JSON writer for --json output: one document built in a string,
 * commas and nesting tracked, strings escaped (RFC 8259: quotation mark,
 * backslash and control characters; invalid UTF-8 becomes U+FFFD so the
 * output always parses), non-finite numbers written as null.
 */
#ifndef SMBDIRECT_TOOLS_JSON_HPP
#define SMBDIRECT_TOOLS_JSON_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sd::tool
{

class JsonWriter {
    public:
	JsonWriter &begin_object();
	JsonWriter &end_object();
	JsonWriter &begin_array();
	JsonWriter &end_array();
	/* Inside an object: the next value's name. */
	JsonWriter &key(std::string_view name);

	JsonWriter &value(std::string_view s);
	JsonWriter &value(const char *s)
	{
		return value(std::string_view(s));
	}
	JsonWriter &value(bool b);
	JsonWriter &value(int v)
	{
		return write_signed(v);
	}
	JsonWriter &value(unsigned v)
	{
		return write_unsigned(v);
	}
	JsonWriter &value(long v)
	{
		return write_signed(v);
	}
	JsonWriter &value(unsigned long v)
	{
		return write_unsigned(v);
	}
	JsonWriter &value(long long v)
	{
		return write_signed(v);
	}
	JsonWriter &value(unsigned long long v)
	{
		return write_unsigned(v);
	}
	/* decimals: digits after the point. */
	JsonWriter &value(double v, int decimals = 3);
	/* 9 significant digits, exponent when needed: rates that can be tiny. */
	JsonWriter &number(double v);
	JsonWriter &null();

	/* key + value in one call. */
	template <typename T> JsonWriter &member(std::string_view name, const T &v)
	{
		return key(name).value(v);
	}
	JsonWriter &member(std::string_view name, double v, int decimals)
	{
		return key(name).value(v, decimals);
	}

	/* The document so far (complete once every begin_* is ended). */
	const std::string &str() const
	{
		return out_;
	}
	bool complete() const
	{
		return depth_.empty() && !out_.empty();
	}

	/* The escaped form of s with its quotes, as written by value(s). */
	static std::string quote(std::string_view s);

    private:
	JsonWriter &write_signed(long long v);
	JsonWriter &write_unsigned(unsigned long long v);
	void before_value();

	std::string out_;
	/* Per open container: has it a member yet? */
	std::vector<bool> depth_;
	bool after_key_ = false;
};

} // namespace sd::tool

#endif
