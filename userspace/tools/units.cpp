// SPDX-License-Identifier: LGPL-2.1-or-later
#include "units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>

namespace sd::tool
{

namespace
{

struct Suffix {
	std::string_view text;
	uint64_t factor;
};

constexpr uint64_t KiB = 1024;
constexpr Suffix size_suffixes[] = {
	{ "", 1 },
	{ "B", 1 },
	{ "K", KiB },
	{ "k", KiB },
	{ "KiB", KiB },
	{ "M", KiB *KiB },
	{ "m", KiB *KiB },
	{ "MiB", KiB *KiB },
	{ "G", KiB *KiB *KiB },
	{ "g", KiB *KiB *KiB },
	{ "GiB", KiB *KiB *KiB },
	{ "T", KiB *KiB *KiB *KiB },
	{ "t", KiB *KiB *KiB *KiB },
	{ "TiB", KiB *KiB *KiB *KiB },
	{ "kB", 1000 },
	{ "KB", 1000 },
	{ "MB", 1000 * 1000 },
	{ "GB", 1000 * 1000 * 1000 },
	{ "TB", 1000ULL * 1000 * 1000 * 1000 },
};

/* Leading decimal digits of text as a number; nullopt on overflow or none. */
std::optional<uint64_t> leading_digits(std::string_view text, size_t &used)
{
	uint64_t v = 0;

	used = 0;
	while (used < text.size() && text[used] >= '0' && text[used] <= '9') {
		unsigned d = static_cast<unsigned>(text[used] - '0');

		if (v > (std::numeric_limits<uint64_t>::max() - d) / 10)
			return std::nullopt;
		v = v * 10 + d;
		used++;
	}
	if (!used)
		return std::nullopt;
	return v;
}

} // namespace

std::optional<uint64_t> parse_size(std::string_view text)
{
	size_t used;
	auto v = leading_digits(text, used);

	if (!v)
		return std::nullopt;
	std::string_view suffix = text.substr(used);
	for (const auto &s : size_suffixes) {
		if (s.text != suffix)
			continue;
		if (*v > std::numeric_limits<uint64_t>::max() / s.factor)
			return std::nullopt;
		return *v * s.factor;
	}
	return std::nullopt;
}

std::optional<uint64_t> parse_uint(std::string_view text, uint64_t min, uint64_t max)
{
	size_t used;
	auto v = leading_digits(text, used);

	if (!v || used != text.size() || *v < min || *v > max)
		return std::nullopt;
	return v;
}

std::optional<double> parse_duration(std::string_view text)
{
	/* strtod accepts "inf", hex and exponents: allow digits and one point only. */
	size_t i = 0, digits = 0;
	bool point = false;

	for (; i < text.size(); i++) {
		char c = text[i];
		if (c >= '0' && c <= '9') {
			digits++;
		} else if (c == '.' && !point) {
			point = true;
		} else {
			break;
		}
	}
	if (!digits || i > 32)
		return std::nullopt;
	std::string number(text.substr(0, i));
	double v = std::strtod(number.c_str(), nullptr);
	std::string_view unit = text.substr(i);
	if (unit.empty() || unit == "s")
		return v;
	if (unit == "ms")
		return v / 1000;
	if (unit == "m" || unit == "min")
		return v * 60;
	return std::nullopt;
}

std::string format_bytes(uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	char buf[32];

	if (bytes < 1024) {
		std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
		return buf;
	}
	double v = static_cast<double>(bytes) / 1024;
	size_t u = 0;
	while (v >= 1024 && u + 1 < std::size(units)) {
		v /= 1024;
		u++;
	}
	/* Three significant digits: 1.50 KiB, 64.0 MiB, 512 MiB. */
	int decimals = v < 10 ? 2 : v < 100 ? 1 : 0;
	std::snprintf(buf, sizeof(buf), "%.*f %s", decimals, v, units[u]);
	return buf;
}

std::string format_rate(double bytes_per_second)
{
	char buf[48];

	if (!std::isfinite(bytes_per_second) || bytes_per_second < 0)
		bytes_per_second = 0;
	double mib = bytes_per_second / (1024.0 * 1024.0);
	if (mib >= 1 || bytes_per_second == 0)
		std::snprintf(buf, sizeof(buf), "%.*f MiB/s",
			      mib < 10	  ? 2
			      : mib < 100 ? 1
					  : 0,
			      mib);
	else
		std::snprintf(buf, sizeof(buf), "%.1f KiB/s", bytes_per_second / 1024);
	return buf;
}

double mib_per_second(uint64_t bytes, double seconds)
{
	return seconds > 0 ? static_cast<double>(bytes) / seconds / (1024.0 * 1024.0) : 0;
}

double gbit_per_second(uint64_t bytes, double seconds)
{
	return seconds > 0 ? static_cast<double>(bytes) * 8 / seconds / 1e9 : 0;
}

LatencyStats latency_stats(std::vector<double> &samples)
{
	LatencyStats s;

	if (samples.empty())
		return s;
	std::sort(samples.begin(), samples.end());
	auto rank = [&](double p) {
		/* ceil(p/100 * n) as a 1-based rank, computed in integers. */
		size_t n = samples.size();
		size_t r = (static_cast<size_t>(p * 100) * n + 9999) / 10000;
		return samples[std::clamp<size_t>(r, 1, n) - 1];
	};
	s.count = samples.size();
	s.min = samples.front();
	s.max = samples.back();
	s.avg = std::accumulate(samples.begin(), samples.end(), 0.0) /
		static_cast<double>(samples.size());
	s.p50 = rank(50);
	s.p99 = rank(99);
	return s;
}

} // namespace sd::tool
