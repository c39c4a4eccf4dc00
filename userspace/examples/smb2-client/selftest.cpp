// SPDX-License-Identifier: LGPL-2.1-or-later
#include "selftest.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <string_view>
#include <unistd.h>

#include "page_buffer.hpp"

namespace smb2 {

namespace {

constexpr size_t page_size = 4096;

/*
 * A buffer shape: size (0: the most one request may move), where it starts
 * in its first page, and in how many iovec segments (each ending inside a
 * page, so that each becomes its own descriptor). Sizes above the most one
 * READ/WRITE may move (SMB2 MaxReadSize/MaxWriteSize and GET_PARAMS'
 * max_read_write_size) take several requests, each registering its part.
 */
struct Layout {
	const char *name;
	uint64_t size;
	size_t page_offset;
	int segments;
	unsigned channels; /* bit 0: _INVALIDATE, bit 1: plain RDMA_V1 */
};

/* The largest transfers once per channel: they cost the most time in a VM. */
constexpr Layout layouts[] = {
	{ "1b", 1, 0, 1, 3 },
	{ "4k", 4096, 0, 1, 3 },
	{ "4k.unaligned", 4096, 1000, 1, 3 },
	{ "1m", 1 << 20, 0, 1, 3 },
	{ "1m.unaligned", 1 << 20, 3, 1, 3 },
	{ "1m.segments3", 1 << 20, 0, 3, 3 },
	{ "max", 0, 0, 1, 1 },
	{ "max.unaligned", 0, 2049, 1, 2 },
};

struct ChannelCase {
	const char *name;
	Channel channel;
};

constexpr ChannelCase channels[] = {
	{ "invalidate", Channel::rdma_v1_invalidate },
	{ "plain", Channel::rdma_v1 },
};

constexpr uint8_t guard_fill = 0xEE;

/*
 * The bytes of one case spread over segments, each in its own mapping
 * with room around it that must stay untouched (guard_fill).
 */
class TestBuffer {
public:
	TestBuffer(uint64_t size, size_t page_offset, int segments)
	{
		uint64_t base = size / static_cast<uint64_t>(segments);
		std::vector<uint64_t> lengths(static_cast<size_t>(segments), base);
		lengths.back() += size - base * static_cast<uint64_t>(segments);
		/* A segment ending on a page boundary would merge with the next. */
		for (size_t i = 0; i + 1 < lengths.size(); i++) {
			if (lengths[i] % page_size == 0 && lengths[i] > 1) {
				lengths[i]--;
				lengths[i + 1]++;
			}
		}
		for (uint64_t len : lengths) {
			PageBuffer b(page_offset + len + page_size);
			if (!b.ok()) {
				ok_ = false;
				return;
			}
			std::fill(b.data(), b.data() + b.size(), guard_fill);
			iov_.push_back({ b.data() + page_offset, len });
			maps_.push_back(std::move(b));
		}
	}

	bool ok() const
	{
		return ok_;
	}
	std::span<const iovec> iov() const
	{
		return iov_;
	}
	void scatter(ByteView data)
	{
		size_t pos = 0;
		for (auto &v : iov_) {
			std::memcpy(v.iov_base, data.data() + pos, v.iov_len);
			pos += v.iov_len;
		}
	}
	Bytes gather() const
	{
		Bytes out;
		for (auto &v : iov_) {
			auto *p = static_cast<const uint8_t *>(v.iov_base);
			out.insert(out.end(), p, p + v.iov_len);
		}
		return out;
	}
	/* Nothing outside the segments changed. */
	bool guards_intact()
	{
		for (size_t i = 0; i < maps_.size(); i++) {
			auto *start = static_cast<uint8_t *>(iov_[i].iov_base);
			auto *end = start + iov_[i].iov_len;
			auto *map_end = maps_[i].data() + maps_[i].size();
			if (std::any_of(maps_[i].data(), start, [](uint8_t b) { return b != guard_fill; }) ||
			    std::any_of(end, map_end, [](uint8_t b) { return b != guard_fill; }))
				return false;
		}
		return true;
	}

private:
	std::vector<PageBuffer> maps_;
	std::vector<iovec> iov_;
	bool ok_ = true;
};

/* The iovec segments covering [offset, offset + len) of iov. */
std::vector<iovec> iov_slice(std::span<const iovec> iov, uint64_t offset, uint64_t len)
{
	std::vector<iovec> out;
	for (const auto &v : iov) {
		if (len == 0)
			break;
		if (offset >= v.iov_len) {
			offset -= v.iov_len;
			continue;
		}
		uint64_t n = std::min<uint64_t>(v.iov_len - offset, len);
		out.push_back({ static_cast<uint8_t *>(v.iov_base) + offset, n });
		len -= n;
		offset = 0;
	}
	return out;
}

Bytes pattern(size_t size, uint32_t seed)
{
	Bytes out(size);
	uint32_t x = seed * 2654435761u | 1;
	for (auto &b : out) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b = static_cast<uint8_t>(x);
	}
	return out;
}

uint32_t seed_of(std::string_view name)
{
	uint32_t h = 2166136261u;
	for (char c : name)
		h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
	return h;
}

Result<Bytes> read_local(const std::string &path)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return std::error_code(errno, std::system_category());
	Bytes out;
	uint8_t buf[65536];
	for (;;) {
		ssize_t n = ::read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : 0;
			::close(fd);
			if (err)
				return std::error_code(err, std::system_category());
			return out;
		}
		out.insert(out.end(), buf, buf + n);
	}
}

/*
 * Rewrites the file in place (same inode: an open handle of the server
 * sees the new bytes), creating it if needed.
 */
std::error_code write_local(const std::string &path, ByteView data)
{
	int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return { errno, std::system_category() };
	size_t done = 0;
	while (done < data.size()) {
		ssize_t n = ::write(fd, data.data() + done, data.size() - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			::close(fd);
			return { err, std::system_category() };
		}
		done += static_cast<size_t>(n);
	}
	if (::close(fd))
		return { errno, std::system_category() };
	return {};
}

/* "first difference at byte N (want 0x.., got 0x..)" or "". */
std::string compare(ByteView want, ByteView got)
{
	char buf[128];
	if (want.size() != got.size()) {
		std::snprintf(buf, sizeof(buf), "%zu bytes where %zu were expected", got.size(),
			      want.size());
		return buf;
	}
	auto mismatch = std::mismatch(want.begin(), want.end(), got.begin());
	if (mismatch.first == want.end())
		return {};
	std::snprintf(buf, sizeof(buf), "first difference at byte %td (want 0x%02x, got 0x%02x)",
		      mismatch.first - want.begin(), *mismatch.first, *mismatch.second);
	return buf;
}

std::string json_string(std::string_view s)
{
	std::string out = "\"";
	for (char c : s) {
		if (c == '"' || c == '\\') {
			out += '\\';
			out += c;
		} else if (static_cast<unsigned char>(c) < 0x20) {
			char buf[8];
			std::snprintf(buf, sizeof(buf), "\\u%04x", c);
			out += buf;
		} else {
			out += c;
		}
	}
	return out + "\"";
}

struct CaseResult {
	std::string name;
	bool ok = false;
	std::string detail; /* the reason when not ok */
	uint64_t bytes = 0;
	uint64_t requests = 0;
	uint32_t descriptors = 0;
	double seconds = 0;
	std::string deregister; /* "remote-invalidated" or "local-invalidation" */
};

class Reporter {
public:
	Reporter(std::FILE *out, bool json) : out_(out), json_(json)
	{
		if (json_)
			std::fputs("[", out_);
	}
	~Reporter()
	{
		if (json_)
			std::fputs("\n]\n", out_);
		std::fflush(out_);
	}
	void report(const CaseResult &r)
	{
		if (!r.ok)
			failed_++;
		if (json_) {
			std::fprintf(out_,
				     "%s\n  {\"name\": %s, \"ok\": %s, \"bytes\": %llu, "
				     "\"requests\": %llu, \"descriptors\": %u, \"seconds\": %.6f",
				     first_ ? "" : ",", json_string(r.name).c_str(),
				     r.ok ? "true" : "false", static_cast<unsigned long long>(r.bytes),
				     static_cast<unsigned long long>(r.requests), r.descriptors,
				     r.seconds);
			if (!r.deregister.empty())
				std::fprintf(out_, ", \"deregister\": %s",
					     json_string(r.deregister).c_str());
			std::fprintf(out_, ", \"detail\": %s}", json_string(r.detail).c_str());
			first_ = false;
		} else if (r.ok) {
			std::fprintf(out_, "ok %s %s\n", r.name.c_str(), r.detail.c_str());
		} else {
			std::fprintf(out_, "not ok %s # %s\n", r.name.c_str(), r.detail.c_str());
		}
		std::fflush(out_);
	}
	int failed() const
	{
		return failed_;
	}

private:
	std::FILE *out_;
	bool json_;
	bool first_ = true;
	int failed_ = 0;
};

std::string error_text(std::error_code ec)
{
	return std::string(ec.category().name()) + ": " + ec.message();
}

std::string file_name(const Layout &l, const ChannelCase &c)
{
	std::string s = std::string("sd-offload-") + l.name + "-" + c.name;
	std::replace(s.begin(), s.end(), '.', '-');
	return s + ".bin";
}

class Selftest {
public:
	Selftest(Client &client, const SelftestOptions &options, Reporter &reporter)
		: client_(client), options_(options), reporter_(reporter)
	{
	}

	void run();

private:
	bool wanted(const std::string &name) const
	{
		return selftest_case_wanted(options_.filter, name);
	}
	bool session_setup();
	void io_case(bool write, const Layout &layout, const ChannelCase &channel,
		     const FileId &file, const std::string &local_path);
	void past_end_case(const ChannelCase &channel);
	void fail_all_after(size_t done, const std::string &why);

	Client &client_;
	const SelftestOptions &options_;
	Reporter &reporter_;
};

bool Selftest::session_setup()
{
	CaseResult r;
	r.name = "session.setup";
	auto t0 = std::chrono::steady_clock::now();
	std::error_code ec = client_.negotiate();
	const char *step = "NEGOTIATE";
	if (!ec) {
		step = "SESSION_SETUP";
		ec = client_.session_setup();
	}
	if (!ec) {
		step = "TREE_CONNECT";
		ec = client_.tree_connect(options_.unc);
	}
	r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	if (ec) {
		r.detail = std::string(step) + ": " + error_text(ec);
		reporter_.report(r);
		return false;
	}
	const auto &n = client_.negotiated();
	char buf[512];
	const auto &t = client_.transport();
	std::snprintf(buf, sizeof(buf),
		      "dialect %s, MaxReadSize %u, MaxWriteSize %u, SessionFlags 0x%x, "
		      "max_read_write_size %u, initiator_depth %u, rdma read/write max %u/%u, "
		      "%.3f s",
		      dialect_name(n.dialect).c_str(), n.max_read_size, n.max_write_size,
		      client_.session_flags(), t ? t->max_read_write_size : 0,
		      t ? t->initiator_depth : 0, client_.max_rdma_read(), client_.max_rdma_write(),
		      r.seconds);
	r.detail = buf;
	if (!t) {
		r.detail = "not an SMB-Direct connection (GET_PARAMS failed): no RDMA channel";
		reporter_.report(r);
		return false;
	}
	r.ok = true;
	reporter_.report(r);
	return true;
}

void Selftest::io_case(bool write, const Layout &layout, const ChannelCase &channel,
		       const FileId &file, const std::string &local_path)
{
	CaseResult r;
	r.name = std::string(write ? "write." : "read.") + channel.name + "." + layout.name;
	if (!wanted(r.name))
		return;
	/* SMB2 bounds each request by MaxWriteSize/MaxReadSize: larger cases take several. */
	const uint64_t per_request = write ? client_.max_rdma_write() : client_.max_rdma_read();
	const uint64_t size = layout.size ? layout.size : per_request;
	TestBuffer buf(size, layout.page_offset, layout.segments);
	if (!buf.ok() || per_request == 0) {
		r.detail = per_request ? "cannot allocate the buffer" : "no RDMA channel";
		reporter_.report(r);
		return;
	}
	Bytes data = pattern(size, seed_of(r.name));
	if (write) {
		buf.scatter(data);
	} else if (auto ec = write_local(local_path, data)) {
		r.detail = "writing " + local_path + ": " + ec.message();
		reporter_.report(r);
		return;
	}

	std::string problem;
	uint64_t requests = 0, remote_invalidated = 0;
	auto t0 = std::chrono::steady_clock::now();
	for (uint64_t pos = 0; pos < size && problem.empty(); pos += per_request) {
		uint64_t len = std::min(per_request, size - pos);
		auto part = iov_slice(buf.iov(), pos, len);
		auto res = write ? client_.write_rdma(file, pos, part, channel.channel)
				 : client_.read_rdma(file, pos, part, channel.channel);
		requests++;
		if (!res) {
			problem = std::string(write ? "WRITE" : "READ") + " at " +
				  std::to_string(pos) + ": " + error_text(res.error());
			break;
		}
		r.bytes += res->bytes;
		r.descriptors = std::max(r.descriptors, res->descriptors);
		if (res->deregister_state & SMBDIRECT_REG_STATE_REMOTE_INVALIDATED)
			remote_invalidated++;
		if (res->bytes != len)
			problem = "server moved " + std::to_string(res->bytes) + " of " +
				  std::to_string(len) + " bytes at " + std::to_string(pos);
	}
	r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	bool invalidate = channel.channel == Channel::rdma_v1_invalidate;
	r.deregister = remote_invalidated == requests ? "remote-invalidated"
		       : remote_invalidated == 0      ? "local-invalidation"
						      : "mixed";
	if (!problem.empty()) {
		/* reported below */
	} else if (invalidate && remote_invalidated != requests) {
		problem = "DEREGISTER: " + std::to_string(requests - remote_invalidated) + " of " +
			  std::to_string(requests) + " tokens were not remotely invalidated";
	} else if (!invalidate && remote_invalidated) {
		problem = "DEREGISTER: the server invalidated a token it was not asked to";
	} else if (!buf.guards_intact()) {
		problem = "memory around the registered buffer changed";
	} else if (write) {
		auto disk = read_local(local_path);
		if (!disk)
			problem = "reading " + local_path + ": " + disk.error().message();
		else if (auto diff = compare(data, *disk); !diff.empty())
			problem = "file on the server's disk: " + diff;
	} else if (auto diff = compare(data, buf.gather()); !diff.empty()) {
		problem = "data RDMA-written into our buffer: " + diff;
	}
	char details[320];
	std::snprintf(details, sizeof(details),
		      "%llu bytes in %llu %s%s, %u descriptor%s per request, %.3f ms, %.1f MiB/s, "
		      "%s, DEREGISTER: %s",
		      static_cast<unsigned long long>(r.bytes),
		      static_cast<unsigned long long>(requests), write ? "WRITE" : "READ",
		      requests == 1 ? "" : "s", r.descriptors, r.descriptors == 1 ? "" : "s",
		      r.seconds * 1e3,
		      r.seconds > 0 ? static_cast<double>(r.bytes) / r.seconds / 1048576.0 : 0.0,
		      channel_name(channel.channel), r.deregister.c_str());
	r.requests = requests;
	r.ok = problem.empty();
	r.detail = r.ok ? details : problem + " (" + details + ")";
	reporter_.report(r);
}

/*
 * A READ asking for more than the file holds (clients round up; Windows
 * reads whole 64 KiB units): the server RDMA-writes only the bytes there
 * are, answers with DataRemaining = that count, and the rest of our
 * registered buffer stays as it was.
 */
void Selftest::past_end_case(const ChannelCase &channel)
{
	CaseResult r;
	r.name = std::string("read.") + channel.name + ".past_end";
	if (!wanted(r.name))
		return;
	const size_t file_size = 100, request = 8192;
	std::string remote = std::string("sd-offload-past-end-") + channel.name + ".bin";
	std::string local = options_.local_dir + "/" + remote;
	Bytes data = pattern(file_size, seed_of(r.name));
	if (auto ec = write_local(local, data)) {
		r.detail = "writing " + local + ": " + ec.message();
		reporter_.report(r);
		return;
	}
	auto file = client_.create(remote, generic_read, disposition_open);
	if (!file) {
		r.detail = "CREATE " + remote + ": " + error_text(file.error());
		reporter_.report(r);
		::unlink(local.c_str());
		return;
	}
	TestBuffer buf(request, 0, options_.past_end_segments);
	auto t0 = std::chrono::steady_clock::now();
	auto res = client_.read_rdma(file->id, 0, buf.iov(), channel.channel);
	r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::string problem;
	if (!res) {
		problem = "READ: " + error_text(res.error());
	} else {
		r.bytes = res->bytes;
		r.descriptors = res->descriptors;
		r.requests = 1;
		bool remote_inv = res->deregister_state & SMBDIRECT_REG_STATE_REMOTE_INVALIDATED;
		r.deregister = remote_inv ? "remote-invalidated" : "local-invalidation";
		Bytes got = buf.gather();
		if (res->bytes != file_size)
			problem = "DataRemaining " + std::to_string(res->bytes) + " for a " +
				  std::to_string(file_size) + "-byte file";
		else if (remote_inv != (channel.channel == Channel::rdma_v1_invalidate))
			problem = "DEREGISTER: unexpected remote invalidation state";
		else if (auto diff = compare(data, ByteView(got).subspan(0, file_size));
			 !diff.empty())
			problem = "data: " + diff;
		else if (std::any_of(got.begin() + file_size, got.end(),
				     [](uint8_t b) { return b != guard_fill; }) ||
			 !buf.guards_intact())
			problem = "the server wrote past the file's bytes into our buffer";
	}
	if (auto ec = client_.close(file->id); ec && problem.empty())
		problem = "CLOSE: " + error_text(ec);
	::unlink(local.c_str());
	char details[256];
	std::snprintf(details, sizeof(details),
		      "READ of %zu bytes in %u descriptor%s from a %zu-byte file: %llu bytes "
		      "RDMA-written, %.3f ms, %s, DEREGISTER: %s",
		      request, r.descriptors, r.descriptors == 1 ? "" : "s", file_size,
		      static_cast<unsigned long long>(r.bytes), r.seconds * 1e3,
		      channel_name(channel.channel), r.deregister.c_str());
	r.ok = problem.empty();
	r.detail = r.ok ? details : problem + " (" + details + ")";
	reporter_.report(r);
}

void Selftest::fail_all_after(size_t done, const std::string &why)
{
	auto names = selftest_case_names();
	for (size_t i = done; i < names.size(); i++) {
		if (!wanted(names[i]))
			continue;
		CaseResult r;
		r.name = names[i];
		r.detail = why;
		reporter_.report(r);
	}
}

void Selftest::run()
{
	if (!session_setup()) {
		fail_all_after(1, "no session");
		return;
	}
	for (const auto &layout : layouts) {
		for (size_t c = 0; c < std::size(channels); c++) {
			const auto &channel = channels[c];
			if (!(layout.channels & (1u << c)))
				continue;
			std::string remote = file_name(layout, channel);
			std::string local = options_.local_dir + "/" + remote;
			std::string w = std::string("write.") + channel.name + "." + layout.name;
			std::string rd = std::string("read.") + channel.name + "." + layout.name;
			if (!wanted(w) && !wanted(rd))
				continue;
			auto file = client_.create(remote, generic_read | generic_write,
						   disposition_overwrite_if);
			if (!file) {
				for (const auto &name : { w, rd }) {
					if (!wanted(name))
						continue;
					CaseResult r;
					r.name = name;
					r.detail = "CREATE " + remote + ": " + error_text(file.error());
					reporter_.report(r);
				}
				continue;
			}
			io_case(true, layout, channel, file->id, local);
			io_case(false, layout, channel, file->id, local);
			if (auto ec = client_.close(file->id)) {
				CaseResult r;
				r.name = "close." + remote;
				r.detail = "CLOSE: " + error_text(ec);
				reporter_.report(r);
			}
			::unlink(local.c_str());
		}
	}
	for (const auto &channel : channels)
		past_end_case(channel);
	CaseResult r;
	r.name = "session.teardown";
	auto t0 = std::chrono::steady_clock::now();
	std::error_code ec = client_.tree_disconnect();
	const char *step = "TREE_DISCONNECT";
	if (!ec) {
		step = "LOGOFF";
		ec = client_.logoff();
	}
	r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	r.ok = !ec;
	r.detail = ec ? std::string(step) + ": " + error_text(ec) : "TREE_DISCONNECT, LOGOFF";
	if (wanted(r.name))
		reporter_.report(r);
}

} // namespace

bool selftest_case_wanted(std::string_view filter, std::string_view name)
{
	if (filter.empty())
		return true;
	size_t start = 0;
	for (;;) {
		size_t comma = filter.find(',', start);
		std::string_view part = filter.substr(start, comma == std::string_view::npos
								      ? std::string_view::npos
								      : comma - start);
		if (!part.empty() && name.find(part) != std::string_view::npos)
			return true;
		if (comma == std::string_view::npos)
			return false;
		start = comma + 1;
	}
}

std::vector<std::string> selftest_case_names()
{
	std::vector<std::string> names{ "session.setup" };
	for (const auto &layout : layouts)
		for (size_t c = 0; c < std::size(channels); c++)
			if (layout.channels & (1u << c))
				for (const char *op : { "write.", "read." })
					names.push_back(std::string(op) + channels[c].name + "." +
							layout.name);
	for (const auto &channel : channels)
		names.push_back(std::string("read.") + channel.name + ".past_end");
	names.push_back("session.teardown");
	return names;
}

int run_selftest(Client &client, const SelftestOptions &options, std::FILE *out)
{
	Reporter reporter(out, options.json);
	Selftest t(client, options, reporter);
	t.run();
	return reporter.failed();
}

} // namespace smb2
