// SPDX-License-Identifier: LGPL-2.1-or-later
#include "errors.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "page_buffer.hpp"

namespace smb2 {

namespace {

constexpr uint32_t st_success = 0x00000000;
constexpr uint32_t st_invalid_parameter = 0xC000000D;
constexpr uint32_t st_end_of_file = 0xC0000011;
constexpr uint32_t st_access_denied = 0xC0000022;
constexpr uint32_t st_file_closed = 0xC0000128;
constexpr uint32_t st_network_name_deleted = 0xC00000C9;

constexpr size_t buf_size = 4096;
constexpr size_t file_size = 16384;

/* One buffer registered for the server with remote invalidation allowed. */
struct Buffer {
	PageBuffer pages;
	std::optional<sd::Registration> reg;
	std::error_code ec;

	Buffer(int fd, bool server_writes, size_t size = buf_size) : pages(size)
	{
		if (!pages.ok()) {
			ec = std::make_error_code(std::errc::not_enough_memory);
			return;
		}
		std::memset(pages.data(), 0xEE, size);
		iovec v{ pages.data(), size };
		uint32_t flags = (server_writes ? SMBDIRECT_ACCESS_PEER_WRITE
						: SMBDIRECT_ACCESS_PEER_READ) |
				 SMBDIRECT_REG_REMOTE_INVALIDATE;
		auto r = sd::Registration::create(fd, std::span<const iovec>(&v, 1), flags);
		if (!r)
			ec = r.error();
		else
			reg.emplace(std::move(*r));
	}
	/* Deregisters: "" if the server had invalidated it, else why not. */
	std::string invalidated()
	{
		auto r = reg->deregister();
		if (!r)
			return "DEREGISTER: " + r.error().message();
		return *r ? "" : "not invalidated by the server";
	}
};

std::string hex(uint32_t v)
{
	char b[16];
	std::snprintf(b, sizeof(b), "0x%08x", v);
	return b;
}

/* What one request of a case looks like. */
struct Req {
	bool write = false;
	FileId file;
	uint64_t offset = 0;
	uint32_t length = buf_size;	/* READ Length / WRITE RemainingBytes */
	uint32_t minimum = 0;		/* READ MinimumCount */
	std::optional<uint32_t> tree_id{};
	uint32_t expect = st_success;
};

class ErrorTest {
public:
	ErrorTest(Client &c, const SelftestOptions &o, std::FILE *out) : c_(c), o_(o), out_(out)
	{
	}

	int run();

private:
	void report(const std::string &name, const std::string &problem, const std::string &detail)
	{
		if (problem.empty())
			std::fprintf(out_, "ok %s %s\n", name.c_str(), detail.c_str());
		else
			std::fprintf(out_, "not ok %s # %s (%s)\n", name.c_str(), problem.c_str(),
				     detail.c_str());
		failed_ += !problem.empty();
	}
	void run_case(const std::string &name, std::vector<Req> reqs);
	/* The connection is still good: an RDMA READ of the test file. */
	std::string next_io_works();

	Client &c_;
	const SelftestOptions &o_;
	std::FILE *out_;
	int failed_ = 0;
	FileId rw_, ro_, closed_;
	Bytes data_;
	uint64_t pulled_ = 0; /* bytes the server should have RDMA-read */
};

void ErrorTest::run_case(const std::string &name, std::vector<Req> reqs)
{
	if (!selftest_case_wanted(o_.filter, name))
		return;
	std::vector<std::unique_ptr<Buffer>> bufs;
	std::vector<Client::CompoundPart> parts;
	for (const Req &r : reqs) {
		bufs.push_back(std::make_unique<Buffer>(c_.fd(), !r.write));
		Buffer &b = *bufs.back();
		if (b.ec) {
			report(name, "REGISTER: " + b.ec.message(), "");
			return;
		}
		if (r.write)
			std::memcpy(b.pages.data(), data_.data(), buf_size);
		auto desc = channel_info(*b.reg);
		Client::CompoundPart p;
		p.tree_id = r.tree_id;
		p.credit_charge = credit_charge_for(r.length);
		if (r.write) {
			p.command = Command::write;
			p.body = [r, desc](Writer &w) {
				WriteRequest q;
				q.offset = r.offset;
				q.file_id = r.file;
				q.channel = Channel::rdma_v1_invalidate;
				q.remaining_bytes = r.length;
				q.channel_info = desc;
				encode_write_request(w, q);
				return std::error_code();
			};
		} else {
			p.command = Command::read;
			p.body = [r, desc](Writer &w) {
				ReadRequest q;
				q.length = r.length;
				q.offset = r.offset;
				q.file_id = r.file;
				q.minimum_count = r.minimum;
				q.channel = Channel::rdma_v1_invalidate;
				q.channel_info = desc;
				encode_read_request(w, q);
				return std::error_code();
			};
		}
		parts.push_back(std::move(p));
	}
	unsigned messages = 0;
	auto rsp = c_.exchange_compound(parts, &messages);
	std::string detail = std::to_string(reqs.size()) + " request" +
			     (reqs.size() > 1 ? "s" : "");
	if (!rsp) {
		report(name, "exchange: " + rsp.error().message() + " (connection lost?)", detail);
		return;
	}
	detail += ", answered in " + std::to_string(messages) + " message" +
		  (messages > 1 ? "s" : "") + ":";
	std::string problem;
	for (size_t i = 0; i < reqs.size(); i++) {
		const Req &r = reqs[i];
		uint32_t status = (*rsp)[i].header.status;
		detail += " " + status_name(status);
		if (status != r.expect && problem.empty())
			problem = "request " + std::to_string(i + 1) + ": " + status_name(status) +
				  " (" + hex(status) + "), expected " + status_name(r.expect);
		if (status == st_success && r.write)
			pulled_ += r.length;
		if (status == st_success && !r.write && problem.empty()) {
			auto rr = decode_read_response((*rsp)[i].message);
			if (!rr)
				problem = "READ response: " + rr.error().message();
			else if (rr->data_remaining != std::min<uint64_t>(r.length, buf_size))
				problem = "READ: DataRemaining " + std::to_string(rr->data_remaining);
			else if (std::memcmp(bufs[i]->pages.data(), data_.data() + r.offset,
					     rr->data_remaining) != 0)
				problem = "READ: the data differs from the file's";
		}
	}
	for (size_t i = 0; i < bufs.size(); i++) {
		std::string why = bufs[i]->invalidated();
		if (!why.empty() && problem.empty())
			problem = "buffer of request " + std::to_string(i + 1) + ": " + why;
	}
	if (problem.empty())
		problem = next_io_works();
	report(name, problem, detail);
}

std::string ErrorTest::next_io_works()
{
	PageBuffer p(buf_size);
	if (!p.ok())
		return "no memory";
	iovec v{ p.data(), buf_size };
	auto r = c_.read_rdma(rw_, 0, std::span<const iovec>(&v, 1), Channel::rdma_v1_invalidate);
	if (!r)
		return "the next RDMA READ failed: " + r.error().message();
	if (r->bytes != buf_size || std::memcmp(p.data(), data_.data(), buf_size) != 0)
		return "the next RDMA READ returned other data";
	if (!(r->deregister_state & SMBDIRECT_REG_STATE_REMOTE_INVALIDATED))
		return "the next RDMA READ was not remotely invalidated";
	return "";
}

int ErrorTest::run()
{
	auto setup = [&]() -> std::string {
		if (auto ec = c_.negotiate())
			return "NEGOTIATE: " + ec.message();
		if (c_.negotiated().dialect < dialect_302)
			return "dialect below 3.0.2: no SMB2_CHANNEL_RDMA_V1_INVALIDATE";
		if (auto ec = c_.session_setup())
			return "SESSION_SETUP: " + ec.message();
		if (auto ec = c_.tree_connect(o_.unc))
			return "TREE_CONNECT: " + ec.message();
		const char *name = "sd-rdma-errors.bin";
		auto f = c_.create(name, generic_read | generic_write, disposition_overwrite_if);
		if (!f)
			return std::string("CREATE: ") + f.error().message();
		rw_ = f->id;
		data_.resize(file_size);
		for (size_t i = 0; i < file_size; i++)
			data_[i] = static_cast<uint8_t>(i * 7 + 3);
		auto w = c_.write(rw_, 0, data_);
		if (!w || *w != file_size)
			return "WRITE (inline) of the test file failed";
		auto ro = c_.create(name, generic_read, disposition_open);
		if (!ro)
			return std::string("CREATE (read-only): ") + ro.error().message();
		ro_ = ro->id;
		auto cl = c_.create(name, generic_read, disposition_open);
		if (!cl)
			return std::string("CREATE: ") + cl.error().message();
		closed_ = cl->id;
		if (auto ec = c_.close(closed_))
			return "CLOSE: " + ec.message();
		return "";
	};
	if (std::string why = setup(); !why.empty()) {
		std::fprintf(out_, "not ok rdma_errors.setup # %s\n", why.c_str());
		return 1;
	}
	const uint32_t bad_tree = c_.tree_id() ^ 0x5a5a;
	const uint32_t max_read = c_.negotiated().max_read_size;
	const uint32_t max_write = c_.negotiated().max_write_size;

	run_case("read.closed_handle", { { .file = closed_, .expect = st_file_closed } });
	run_case("read.bad_tree_id", { { .file = rw_, .tree_id = bad_tree,
					  .expect = st_network_name_deleted } });
	run_case("read.too_long", { { .file = rw_, .length = max_read + 1,
				      .expect = st_invalid_parameter } });
	run_case("read.beyond_eof", { { .file = rw_, .offset = 1 << 20,
					.expect = st_end_of_file } });
	run_case("read.buffers_below_minimum",
		 { { .file = rw_, .length = 2 * buf_size, .minimum = 2 * buf_size,
		     .expect = st_invalid_parameter } });
	run_case("write.read_only_handle", { { .write = true, .file = ro_,
					       .expect = st_access_denied } });
	run_case("write.closed_handle", { { .write = true, .file = closed_,
					    .expect = st_file_closed } });
	run_case("write.bad_tree_id", { { .write = true, .file = rw_, .tree_id = bad_tree,
					  .expect = st_network_name_deleted } });
	run_case("write.too_long", { { .write = true, .file = rw_, .length = max_write + 1,
				       .expect = st_invalid_parameter } });
	run_case("compound.two_reads", { { .file = rw_ }, { .file = rw_, .offset = buf_size } });
	run_case("compound.error_then_read",
		 { { .file = closed_, .expect = st_file_closed }, { .file = rw_ } });
	run_case("compound.write_then_read",
		 { { .write = true, .file = rw_ }, { .file = rw_ } });

	(void)c_.close(ro_);
	(void)c_.close(rw_);
	std::fprintf(out_, "# server_rdma_read_bytes %llu\n",
		     static_cast<unsigned long long>(pulled_));
	return failed_;
}

/*
 * identity-writes: for each of the files sd-identity-0 .. -N-1 of the
 * share (made by the caller), an RDMA WRITE followed at once by an SMB2
 * CANCEL of a message id nobody uses: smbd runs the CANCEL as root while
 * it RDMA-reads the WRITE's data, and must write the data as the
 * session's user all the same (the caller sees it in the file: a
 * setuid bit the kernel clears when its owner, not root, writes).
 */
int identity_writes(Client &c, const SelftestOptions &o, std::FILE *out, int files)
{
	if (auto ec = c.negotiate())
		return std::fprintf(out, "not ok identity.setup # NEGOTIATE: %s\n",
				    ec.message().c_str()), 1;
	if (auto ec = c.session_setup())
		return std::fprintf(out, "not ok identity.setup # SESSION_SETUP: %s\n",
				    ec.message().c_str()), 1;
	if (auto ec = c.tree_connect(o.unc))
		return std::fprintf(out, "not ok identity.setup # TREE_CONNECT: %s\n",
				    ec.message().c_str()), 1;
	int failed = 0;
	for (int i = 0; i < files; i++) {
		std::string name = "sd-identity-" + std::to_string(i);
		std::string problem;
		size_t size = 0;
		auto f = c.create(name, generic_read | generic_write, disposition_open);
		if (!f) {
			std::fprintf(out, "not ok identity.write.%d # CREATE %s: %s\n", i, name.c_str(),
				     f.error().message().c_str());
			failed++;
			continue;
		}
		/*
		 * 1 MiB: the RDMA READ takes long enough for the CANCEL to be
		 * dispatched first (with 4 KiB it often completed before).
		 */
		size = std::min<size_t>(1 << 20, c.max_rdma_write());
		Buffer b(c.fd(), false, size);
		if (b.ec) {
			problem = "REGISTER: " + b.ec.message();
		} else {
			std::memset(b.pages.data(), 'a' + i, size);
			WriteRequest q;
			q.file_id = f->id;
			q.channel = Channel::rdma_v1_invalidate;
			q.remaining_bytes = static_cast<uint32_t>(size);
			q.channel_info = channel_info(*b.reg);
			auto id = c.send_request(Command::write, credit_charge_for(size),
						 [&](Writer &w) {
							 encode_write_request(w, q);
							 return std::error_code();
						 });
			if (!id)
				problem = "WRITE: " + id.error().message();
			else if (auto ec = c.send_cancel(*id + 1000))
				problem = "CANCEL: " + ec.message();
			if (problem.empty()) {
				auto r = c.receive_response();
				if (!r)
					problem = "WRITE: " + r.error().message();
				else if (auto ec = Client::status_of(*r))
					problem = "WRITE: " + ec.message();
			}
			if (problem.empty())
				problem = b.invalidated();
		}
		if (auto ec = c.close(f->id); ec && problem.empty())
			problem = "CLOSE: " + ec.message();
		if (problem.empty())
			std::fprintf(out, "ok identity.write.%d %s: %zu bytes by RDMA WRITE with a "
				     "CANCEL behind it\n", i, name.c_str(), size);
		else
			std::fprintf(out, "not ok identity.write.%d # %s\n", i, problem.c_str());
		failed += !problem.empty();
	}
	return failed;
}

int no_stall(Client &c, const SelftestOptions &o, std::FILE *out, int reads, bool holes)
{
	auto fail = [&](const std::string &what) {
		std::fprintf(out, "not ok no_stall # %s\n", what.c_str());
		return 1;
	};
	if (auto ec = c.negotiate())
		return fail("NEGOTIATE: " + ec.message());
	if (auto ec = c.session_setup())
		return fail("SESSION_SETUP: " + ec.message());
	if (auto ec = c.tree_connect(o.unc))
		return fail("TREE_CONNECT: " + ec.message());
	const size_t size = std::min<size_t>({ 1 << 20, c.max_rdma_read(), c.max_rdma_write() });
	const Channel channel = c.negotiated().dialect >= dialect_302 ? Channel::rdma_v1_invalidate
								    : Channel::rdma_v1;
	const char *name = "sd-no-stall.bin";
	/* Deleted when closed, by us or with the connection. */
	auto f = c.create(name, generic_read | generic_write | access_delete,
			  disposition_overwrite_if,
			  option_non_directory_file | option_delete_on_close);
	if (!f)
		return fail(std::string("CREATE: ") + f.error().message());
	Bytes data(size * reads);
	/* holes: only the last 4 KiB written, the rest of the file a hole */
	const size_t first = holes ? data.size() - 4096 : 0;
	for (size_t i = first; i < data.size(); i++)
		data[i] = static_cast<uint8_t>(i * 13 + i / 4093);
	std::string problem;
	for (size_t at = first; at < data.size() && problem.empty();) {
		const size_t n = std::min(size, data.size() - at);
		Buffer b(c.fd(), false, n);
		if (b.ec) {
			problem = "REGISTER: " + b.ec.message();
			break;
		}
		std::memcpy(b.pages.data(), data.data() + at, n);
		iovec v{ b.pages.data(), n };
		auto w = c.write_rdma(f->id, at, std::span<const iovec>(&v, 1), channel);
		if (!w || w->bytes != n)
			problem = "RDMA WRITE of the file: " +
				  (w ? std::to_string(w->bytes) + " bytes" : w.error().message());
		(void)b.reg->deregister();
		at += n;
	}
	if (!problem.empty())
		return fail(problem);

	const uint16_t charge = credit_charge_for(size);
	if (c.credits() < static_cast<uint32_t>(reads) * charge + 1)
		return fail("the server granted " + std::to_string(c.credits()) + " credits, " +
			    std::to_string(reads * charge + 1) + " needed");
	std::vector<std::unique_ptr<Buffer>> bufs;
	std::vector<uint64_t> ids;
	for (int i = 0; i < reads && problem.empty(); i++) {
		bufs.push_back(std::make_unique<Buffer>(c.fd(), true, size));
		Buffer &b = *bufs.back();
		if (b.ec) {
			problem = "REGISTER: " + b.ec.message();
			break;
		}
		ReadRequest q;
		q.length = static_cast<uint32_t>(size);
		q.offset = i * size;
		q.file_id = f->id;
		q.minimum_count = static_cast<uint32_t>(size);
		q.channel = channel;
		q.channel_info = channel_info(*b.reg);
		auto id = c.send_request(Command::read, charge, [&](Writer &w) {
			encode_read_request(w, q);
			return std::error_code();
		});
		if (!id)
			problem = "READ: " + id.error().message();
		else
			ids.push_back(*id);
	}
	std::optional<uint64_t> echo_id;
	if (problem.empty()) {
		auto id = c.send_request(Command::echo, 1, [](Writer &w) {
			w.le16(4); /* StructureSize */
			w.le16(0); /* Reserved */
			return std::error_code();
		});
		if (!id)
			problem = "ECHO: " + id.error().message();
		else
			echo_id = *id;
	}
	/* The responses, in the order they came. */
	int echo_at = -1, got = 0;
	while (problem.empty() && c.outstanding() > 0) {
		auto r = c.receive_response();
		if (!r) {
			problem = "response: " + r.error().message() + " (connection lost?)";
			break;
		}
		got++;
		if (echo_id && r->header.message_id == *echo_id) {
			echo_at = got;
			if (auto ec = Client::status_of(*r))
				problem = "ECHO: " + ec.message();
			continue;
		}
		auto it = std::find(ids.begin(), ids.end(), r->header.message_id);
		if (it == ids.end()) {
			problem = "a response to message id " + std::to_string(r->header.message_id);
			break;
		}
		size_t i = it - ids.begin();
		if (auto ec = Client::status_of(*r)) {
			problem = "READ " + std::to_string(i) + ": " + ec.message();
			break;
		}
		auto rr = decode_read_response(r->message);
		if (!rr)
			problem = "READ response: " + rr.error().message();
		else if (rr->data_remaining != size)
			problem = "READ " + std::to_string(i) + ": DataRemaining " +
				  std::to_string(rr->data_remaining);
		else if (std::memcmp(bufs[i]->pages.data(), data.data() + i * size, size) != 0)
			problem = "READ " + std::to_string(i) + ": the data differs from the file's";
	}
	if (problem.empty() && channel == Channel::rdma_v1_invalidate) {
		for (size_t i = 0; i < bufs.size() && problem.empty(); i++) {
			std::string why = bufs[i]->invalidated();
			if (!why.empty())
				problem = "buffer of READ " + std::to_string(i) + ": " + why;
		}
	}
	if (problem.empty() && echo_at > reads)
		problem = "the ECHO was answered after all " + std::to_string(reads) +
			  " READs: the server waited for RDMA slots in its event loop";
	std::fprintf(out, "# echo answered as response %d of %d\n", echo_at, reads + 1);
	if (c.outstanding() == 0)
		(void)c.close(f->id);
	if (!problem.empty())
		return fail(problem);
	std::fprintf(out, "ok no_stall %d READs of %zu bytes%s by RDMA WRITE and an ECHO: the ECHO "
		     "answered as response %d\n", reads, size, holes ? " (holes)" : "", echo_at);
	return 0;
}

} // namespace

int run_no_stall(Client &client, const SelftestOptions &options, std::FILE *out, int reads,
		 bool holes)
{
	return no_stall(client, options, out, reads, holes);
}

int run_identity_writes(Client &client, const SelftestOptions &options, std::FILE *out,
			int files)
{
	return identity_writes(client, options, out, files);
}

int run_rdma_errors(Client &client, const SelftestOptions &options, std::FILE *out)
{
	ErrorTest t(client, options, out);
	return t.run();
}

} // namespace smb2
