// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Sizes, durations, rates and latency statistics: parsing what people type
 * and printing what people read.
 *
 * Sizes (as dd(1)): a plain number is bytes; K, M, G, T (either case) and
 * KiB, MiB, GiB, TiB are powers of 1024; kB, KB, MB, GB, TB powers of 1000;
 * a trailing B alone is bytes. "64M" = "64MiB" = 67108864, "1MB" = 1000000.
 *
 * Durations: seconds, optionally with a unit: "5", "2.5s", "500ms", "1m".
 *
 * Rates are printed in MiB/s (2^20 bytes per second, perftest's "MB/sec")
 * and Gbit/s (10^9 bits per second, perftest's --report_gbits).
 */
#ifndef SMBDIRECT_TOOLS_UNITS_HPP
#define SMBDIRECT_TOOLS_UNITS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sd::tool
{

std::optional<uint64_t> parse_size(std::string_view text);
std::optional<double> parse_duration(std::string_view text);
/* A decimal number in [min, max], nothing else. */
std::optional<uint64_t> parse_uint(std::string_view text, uint64_t min, uint64_t max);

/* "512 B", "1.5 KiB", "64.0 MiB", "2.00 GiB". */
std::string format_bytes(uint64_t bytes);
/* "27.3 MiB/s" (bytes per second). */
std::string format_rate(double bytes_per_second);

double mib_per_second(uint64_t bytes, double seconds);
double gbit_per_second(uint64_t bytes, double seconds);

struct LatencyStats {
	size_t count = 0;
	double min = 0, avg = 0, p50 = 0, p99 = 0, max = 0;
};

/*
 * Statistics of samples (any unit; sorted in place). Percentiles by the
 * nearest-rank method: the smallest sample that at least p % of the samples
 * are not above. An empty set gives all zeros.
 */
LatencyStats latency_stats(std::vector<double> &samples);

} // namespace sd::tool

#endif
