// SPDX-License-Identifier: LGPL-2.1-or-later
#include "connection.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../smb2/framing.hpp"
#include "../smb2/ntlmssp.hpp"
#include "../smb2/unicode.hpp"

namespace smb2 {

namespace {

constexpr FileId related_file_id = { ~0ull, ~0ull };
constexpr uint32_t status_unexpected_io_error = 0xC00000E9;
constexpr uint32_t share_maximal_access = 0x001F01FF;
constexpr uint32_t write_access_bits = file_write_data | file_append_data | generic_write |
				       generic_all | maximum_allowed;

bool is_error(uint32_t status)
{
	return (status >> 30) == 3;
}

std::vector<smbdirect_buffer_descriptor_v1> wire_descriptors(const std::vector<BufferDescriptor> &d)
{
	std::vector<smbdirect_buffer_descriptor_v1> out(d.size());
	for (size_t i = 0; i < d.size(); i++) {
		out[i].offset = htole64(d[i].offset);
		out[i].token = htole32(d[i].token);
		out[i].length = htole32(d[i].length);
	}
	return out;
}

std::string smb_path(const std::string &rel)
{
	if (rel == ".")
		return "\\";
	std::string s = "\\" + rel;
	std::replace(s.begin(), s.end(), '/', '\\');
	return s;
}

bool directory_is_empty(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	DIR *d = fdopendir(fd);
	if (!d) {
		::close(fd);
		return false;
	}
	bool empty = true;
	while (dirent *e = readdir(d)) {
		if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) {
			empty = false;
			break;
		}
	}
	closedir(d);
	return empty;
}

} // namespace

Connection::Reply::Reply()
{
	message.zeros(header_size);
}

Connection::Reply::Reply(Status s) : Reply()
{
	status = static_cast<uint32_t>(s);
}

Connection::Connection(int fd, const Share &share, const ServerConfig &config, std::FILE *log)
	: fd_(fd), share_(share), config_(config), log_(log)
{
	smbdirect_params p{};
	p.size = sizeof(p);
	if (smbdirect_connection_get_parameters(fd_, &p) == 0)
		transport_ = p;
	/*
	 * Completions on POLLPRI, POLLERR for the connection alone, slots on
	 * POLLWRBAND. A module without the option gets no RDMA channel: this
	 * server could not tell a completion from a failure without a race.
	 */
	if (transport_ &&
	    smbdirect_set_option(fd_, SMBDIRECT_OPT_RDMA_EVENTS,
				 SMBDIRECT_RDMA_EVENTS_PRI | SMBDIRECT_RDMA_EVENTS_WRBAND) < 0)
		transport_.reset();
	(void)ntlm::random_bytes(server_guid_);
}

Connection::~Connection()
{
	while (!opens_.empty())
		close_open(opens_.begin()->first);
	::close(fd_);
}

void Connection::log(const char *fmt, ...)
{
	if (!log_)
		return;
	std::fprintf(log_, "[%d] ", static_cast<int>(getpid()));
	va_list ap;
	va_start(ap, fmt);
	std::vfprintf(log_, fmt, ap);
	va_end(ap);
	std::fputc('\n', log_);
	std::fflush(log_);
}

std::error_code Connection::serve()
{
	if (transport_)
		log("connection: %s, max_read_write_size %u, initiator_depth %u, "
		    "max_fragmented_receive_size %u",
		    smbdirect_transport_name(transport_->transport), transport_->max_read_write_size,
		    transport_->initiator_depth, transport_->max_fragmented_receive_size);
	/*
	 * One loop for requests (POLLIN) and RDMA completions (POLLPRI): the
	 * server never waits for a transfer while a request could be served.
	 * POLLERR and POLLHUP are the connection's end, which reading reports.
	 */
	for (;;) {
		pollfd p = { fd_, static_cast<short>(POLLIN | (transport_ ? POLLPRI : 0)), 0 };
		if (::poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return { errno, std::system_category() };
		}
		if ((p.revents & POLLPRI) && transport_) {
			if (auto ec = reap())
				return ec;
		}
		if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		auto m = read_message(fd_, max_message_size);
		if (!m) {
			if (is_end_of_stream(m.error()))
				return {};
			log("reading a request: %s", m.error().message().c_str());
			return m.error();
		}
		if (auto ec = handle(*m))
			return ec;
	}
}

uint16_t Connection::grant(const Header &h)
{
	uint32_t charge = std::max<uint16_t>(h.credit_charge, 1);
	credits_held_ -= std::min(credits_held_, charge);
	uint32_t room = config_.credit_limit > credits_held_ ? config_.credit_limit - credits_held_ : 0;
	uint32_t g = std::min<uint32_t>(std::max<uint16_t>(h.credits, 1), room);
	if (credits_held_ + g == 0)
		g = 1; /* never leave the client without a credit */
	credits_held_ += g;
	return static_cast<uint16_t>(g);
}

Bytes Connection::finish(const Header &h, Reply &r, bool related)
{
	if (config_.verbose)
		log("%s mid %llu -> %s", command_name(h.command),
		    static_cast<unsigned long long>(h.message_id), status_name(r.status).c_str());
	Header rh;
	rh.command = h.command;
	rh.credit_charge = h.credit_charge;
	rh.status = r.status;
	rh.flags = flag_server_to_redir | (related ? flag_related_operations : 0);
	rh.message_id = h.message_id;
	rh.session_id = h.command == Command::negotiate ? 0 : session_id_;
	rh.tree_id = r.tree_id ? r.tree_id : h.tree_id;
	rh.credits = grant(h);
	if (!r.has_body) {
		r.message = Writer();
		r.message.zeros(header_size);
		encode_error_response(r.message);
	}
	Bytes m = r.message.take();
	Writer hw;
	encode_header(hw, rh);
	std::memcpy(m.data(), hw.buffer().data(), header_size);
	return m;
}

std::error_code Connection::handle(ByteView message)
{
	auto parts = split_compound(message);
	if (!parts) {
		log("a %zu-byte request: %s", message.size(), parts.error().message().c_str());
		return parts.error();
	}
	const bool compound = parts->size() > 1;
	if (compound)
		io_.compounds++;
	Bytes out;
	size_t previous_start = 0;
	bool first = true;
	std::optional<uint32_t> invalidate;
	std::vector<FileTransfer> transfers;
	uint32_t create_failure = 0;
	compound_file_id_ = related_file_id;
	for (size_t i = 0; i < parts->size(); i++) {
		ByteView part = (*parts)[i];
		auto h = decode_header(part);
		if (!h)
			return h.error();
		if (h->is_response())
			return ParseError::unexpected_message;
		io_.requests++;
		bool related = i > 0 && (h->flags & flag_related_operations);
		Reply r;
		if (related && create_failure) {
			r = Reply(static_cast<Status>(create_failure)); /* the CREATE's error cascades */
		} else {
			r = dispatch(*h, part, compound);
		}
		if (!related)
			create_failure = 0;
		if (h->command == Command::create) {
			if (is_error(r.status))
				create_failure = r.status;
			else
				compound_file_id_ = r.created;
		}
		if (r.no_response || r.deferred)
			continue;
		Bytes m = finish(*h, r, related);
		if (r.invalidate_token)
			invalidate = r.invalidate_token;
		if (r.transfer)
			transfers.push_back(std::move(*r.transfer));
		if (!first) {
			/* Pad the previous response to 8 bytes and chain it to this one. */
			out.resize((out.size() + 7) & ~size_t(7), 0);
			store_le32(out.data() + previous_start + 20,
				   static_cast<uint32_t>(out.size() - previous_start));
		}
		previous_start = out.size();
		out.insert(out.end(), m.begin(), m.end());
		first = false;
	}
	if (out.empty())
		return {};
	std::error_code ec;
	if (transfers.size() == 1) {
		/* The usual READ: its RDMA WRITE and the response in one sendmsg. */
		ByteView response(out);
		ec = submit_file(transfers[0], &response, invalidate);
	} else {
		/* Several READs in a compound: the transfers first, RC orders them. */
		for (const FileTransfer &t : transfers)
			if ((ec = submit_file(t, nullptr, std::nullopt)))
				break;
		if (!ec)
			ec = send(out, invalidate);
	}
	if (ec && transfers.size() == 1 && !compound &&
	    (ec.value() == EINVAL || ec.value() == EBADF || ec.value() == EOPNOTSUPP) &&
	    ec.category() == std::system_category()) {
		/*
		 * Refused before anything was taken (the file shrank since the
		 * fstat, by another client's process): the same response as an
		 * error, the token still invalidated as the client expects.
		 */
		log("READ: RDMA WRITE from the file refused: %s", ec.message().c_str());
		if (auto rh = decode_header(out)) {
			rh->status = status_unexpected_io_error;
			Writer w;
			encode_header(w, *rh);
			encode_error_response(w);
			return send(w.take(), invalidate);
		}
	}
	if (ec)
		log("sending a %zu-byte response%s%s: %s", out.size(),
		    transfers.empty() ? "" : " behind its RDMA WRITE",
		    invalidate ? " with SEND_WITH_INVALIDATE" : "", ec.message().c_str());
	return ec;
}

std::error_code Connection::send(ByteView message, std::optional<uint32_t> invalidate_token)
{
	if (!invalidate_token)
		return write_message(fd_, message);
	uint32_t len = static_cast<uint32_t>(message.size());
	uint8_t prefix[4] = { static_cast<uint8_t>(len >> 24), static_cast<uint8_t>(len >> 16),
			      static_cast<uint8_t>(len >> 8), static_cast<uint8_t>(len) };
	iovec iov[2] = { { prefix, 4 }, { const_cast<uint8_t *>(message.data()), message.size() } };
	/* The control message rides with the first bytes of the message. */
	ssize_t n;
	do {
		n = smbdirect_send_with_invalidate(fd_, iov, 2, *invalidate_token, MSG_NOSIGNAL);
	} while (n == -EINTR);
	if (n < 0)
		return errno_code(n);
	io_.send_with_invalidate++;
	size_t done = static_cast<size_t>(n);
	if (done >= 4 + message.size())
		return {};
	/* The rest of a partly taken message, without the prefix. */
	size_t skip = done < 4 ? 0 : done - 4;
	if (done < 4) {
		ssize_t w = ::send(fd_, prefix + done, 4 - done, MSG_NOSIGNAL);
		if (w != static_cast<ssize_t>(4 - done))
			return { w < 0 ? errno : EIO, std::system_category() };
	}
	while (skip < message.size()) {
		ssize_t w = ::send(fd_, message.data() + skip, message.size() - skip, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return { errno, std::system_category() };
		skip += static_cast<size_t>(w);
	}
	return {};
}

/* Cookies: WRITE data (answered at completion) apart from READ data (counted). */
constexpr uint64_t cookie_write_data = 1ull << 63;

uint64_t Connection::next_cookie(bool is_write_data)
{
	return ++cookie_serial_ | (is_write_data ? cookie_write_data : 0);
}

void Connection::transfer_started()
{
	transfers_in_flight_++;
	io_.max_transfers_in_flight = std::max(io_.max_transfers_in_flight, transfers_in_flight_);
}

std::error_code Connection::reap(unsigned *count)
{
	smbdirect_rdma_completion c[32];
	for (;;) {
		int n = smbdirect_rdma_reap(fd_, c, 32);
		if (n == -EAGAIN || n == 0)
			return {};
		if (n == -EINTR)
			continue;
		if (n < 0)
			return errno_code(n);
		if (count)
			*count += static_cast<unsigned>(n);
		for (int i = 0; i < n; i++)
			if (auto ec = on_completion(c[i]))
				return ec;
		if (n < 32)
			return {};
	}
}

std::error_code Connection::on_completion(const smbdirect_rdma_completion &c)
{
	transfers_in_flight_ -= transfers_in_flight_ > 0;
	if (!(c.cookie & cookie_write_data)) {
		/* A READ's RDMA WRITE: the response went out right behind it. */
		auto held = read_buffers_.find(c.cookie);
		if (held != read_buffers_.end()) {
			spare_buffers_.push_back(std::move(held->second));
			read_buffers_.erase(held);
		}
		if (c.status < 0) {
			log("READ: RDMA WRITE from the file: %s", std::strerror(-c.status));
			return errno_code(c.status);
		}
		io_.rdma_write_bytes += c.bytes;
		return {};
	}
	auto it = pending_writes_.find(c.cookie);
	if (it == pending_writes_.end()) {
		stashed_.push_back(c); /* a compound's, for wait_for() */
		return {};
	}
	std::error_code ec = answer_write(it->second, c.status, c.bytes);
	spare_buffers_.push_back(std::move(it->second.data));
	pending_writes_.erase(it);
	return ec;
}

std::error_code Connection::answer_write(PendingWrite &w, int status, uint64_t bytes)
{
	Reply r;
	auto o = opens_.find(w.open);
	if (status < 0) {
		log("WRITE: RDMA READ of %zu bytes: %s", w.data.size(), std::strerror(-status));
		r.status = status_unexpected_io_error;
	} else if (o == opens_.end()) {
		r = Reply(Status::file_closed); /* closed while its data was on the way */
	} else {
		io_.rdma_read_bytes += bytes;
		size_t done = 0;
		while (done < bytes) {
			ssize_t n = pwrite(o->second.fd, w.data.data() + done, bytes - done,
					   static_cast<off_t>(w.offset + done));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				break;
			done += static_cast<size_t>(n);
		}
		if (done < bytes) {
			r = Reply(status_from_errno(errno == EBADF ? EACCES : errno));
		} else {
			WriteResponse rsp;
			rsp.count = static_cast<uint32_t>(done);
			encode_write_response(r.message, rsp);
			r.has_body = true;
		}
		if (config_.verbose)
			log("WRITE %llu bytes at %llu: RDMA READ done, written",
			    static_cast<unsigned long long>(bytes),
			    static_cast<unsigned long long>(w.offset));
	}
	Bytes m = finish(w.request, r, false);
	if (auto ec = send(m, w.invalidate_token)) {
		log("sending a WRITE response: %s", ec.message().c_str());
		return ec;
	}
	return status < 0 ? errno_code(status) : std::error_code();
}

std::error_code Connection::submit(const smbdirect_rdma_args *args, unsigned count)
{
	for (;;) {
		int rc = smbdirect_rdma_submit(fd_, args, count, MSG_DONTWAIT);
		if (rc >= 0) {
			for (unsigned i = 0; i < count; i++)
				transfer_started();
			return {};
		}
		if (rc == -EINTR)
			continue;
		if (rc != -EAGAIN)
			return errno_code(rc);
		/* The socket's in-flight limit: our own completions make room. */
		if (auto ec = wait_room(false))
			return ec;
	}
}

std::error_code Connection::wait_room(bool message)
{
	short want = static_cast<short>(POLLWRBAND | (message ? POLLOUT : 0));
	while (want) {
		pollfd p = { fd_, static_cast<short>(want | POLLPRI), 0 };
		if (::poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return { errno, std::system_category() };
		}
		if (p.revents & POLLPRI) {
			if (auto ec = reap())
				return ec;
		}
		if (p.revents & (POLLERR | POLLHUP | POLLNVAL))
			return {};
		/* What is there stays there: only this process takes slots and room. */
		want = static_cast<short>(want & ~p.revents);
	}
	return {};
}

std::error_code Connection::submit_with_message(const smbdirect_rdma_args &args, ByteView message,
						std::optional<uint32_t> invalidate_token)
{
	uint32_t len = static_cast<uint32_t>(message.size());
	uint8_t prefix[4] = { static_cast<uint8_t>(len >> 24), static_cast<uint8_t>(len >> 16),
			      static_cast<uint8_t>(len >> 8), static_cast<uint8_t>(len) };
	iovec iov[2] = { { prefix, 4 }, { const_cast<uint8_t *>(message.data()), message.size() } };
	ssize_t n;
	for (;;) {
		n = smbdirect_rdma_submit_msg(fd_, &args, 1, iov, 2,
					      invalidate_token ? &*invalidate_token : nullptr,
					      MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n >= 0)
			break;
		if (n == -EINTR)
			continue;
		if (n != -EAGAIN)
			return errno_code(n);
		/*
		 * Nothing was taken: the in-flight limit (reaping makes room) or
		 * no room for the whole message yet, which POLLOUT waits for.
		 */
		if (auto ec = wait_room(true))
			return ec;
	}
	transfer_started();
	io_.responses_with_transfer++;
	if (invalidate_token)
		io_.send_with_invalidate++;
	/* SOCK_STREAM may take part of the message: the rest as any send. */
	size_t done = static_cast<size_t>(n);
	while (done < 4 + message.size()) {
		const uint8_t *p = done < 4 ? prefix + done : message.data() + (done - 4);
		size_t left = done < 4 ? 4 - done : message.size() - (done - 4);
		ssize_t w = ::send(fd_, p, left, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return { errno, std::system_category() };
		done += static_cast<size_t>(w);
	}
	return {};
}

std::error_code Connection::submit_file(const FileTransfer &t, const ByteView *message,
					std::optional<uint32_t> invalidate_token)
{
	smbdirect_rdma_args a;
	auto go = [&]() {
		return message ? submit_with_message(a, *message, invalidate_token) : submit(&a, 1);
	};
	smbdirect_rdma_prep_write_file(&a, next_cookie(false), t.fd, t.offset, t.length,
				       t.descriptors.data(),
				       static_cast<uint32_t>(t.descriptors.size()));
	std::error_code ec = go();
	if (!ec || ec.category() != std::system_category() ||
	    (ec.value() != ENODATA && ec.value() != EOPNOTSUPP))
		return ec;
	/*
	 * Not cached (the kernel started readahead) or no page cache of its
	 * own: read it here, as an inline READ would, and send from memory.
	 */
	Bytes buf;
	if (!spare_buffers_.empty()) {
		buf = std::move(spare_buffers_.back());
		spare_buffers_.pop_back();
	}
	buf.resize(t.length);
	size_t done = 0;
	while (done < t.length) {
		ssize_t n = ::pread(t.fd, buf.data() + done, t.length - done,
				    static_cast<off_t>(t.offset + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return { errno, std::system_category() };
		if (n == 0) /* the file shrank since the fstat: as the kernel's EINVAL */
			return std::make_error_code(std::errc::invalid_argument);
		done += static_cast<size_t>(n);
	}
	uint64_t cookie = next_cookie(false);
	Bytes &held = read_buffers_[cookie] = std::move(buf);
	iovec iov = { held.data(), held.size() };
	smbdirect_rdma_prep_write(&a, cookie, &iov, 1, t.descriptors.data(),
				  static_cast<uint32_t>(t.descriptors.size()));
	if ((ec = go())) {
		spare_buffers_.push_back(std::move(held));
		read_buffers_.erase(cookie);
		return ec;
	}
	io_.rdma_write_read_first++;
	if (config_.verbose)
		log("READ %llu bytes at %llu: not in the page cache, read and sent from memory",
		    static_cast<unsigned long long>(t.length),
		    static_cast<unsigned long long>(t.offset));
	return {};
}

Result<smbdirect_rdma_completion> Connection::wait_for(uint64_t cookie)
{
	for (;;) {
		for (auto it = stashed_.begin(); it != stashed_.end(); ++it)
			if (it->cookie == cookie) {
				smbdirect_rdma_completion c = *it;
				stashed_.erase(it);
				return c;
			}
		pollfd p = { fd_, POLLPRI, 0 };
		if (::poll(&p, 1, -1) < 0 && errno != EINTR)
			return std::error_code(errno, std::system_category());
		unsigned got = 0;
		if (auto ec = reap(&got))
			return ec;
		/* The end of the connection with nothing to reap: it stays so. */
		if (!got && (p.revents & (POLLERR | POLLHUP)))
			return std::make_error_code(std::errc::connection_aborted);
	}
}

Connection::Reply Connection::dispatch(const Header &h, ByteView request, bool in_compound)
{
	switch (h.command) {
	case Command::negotiate:
		return negotiate(request);
	case Command::session_setup:
		return session_setup(h, request);
	case Command::cancel: {
		Reply r;
		r.no_response = true;
		return r;
	}
	default:
		break;
	}
	if (!authenticated_ || h.session_id != session_id_)
		return Reply(Status::user_session_deleted);
	switch (h.command) {
	case Command::logoff: {
		while (!opens_.empty())
			close_open(opens_.begin()->first);
		authenticated_ = tree_connected_ = false;
		Reply r;
		encode_empty(r.message);
		r.has_body = true;
		return r;
	}
	case Command::echo: {
		Reply r;
		encode_empty(r.message);
		r.has_body = true;
		return r;
	}
	case Command::tree_connect:
		return tree_connect(request);
	default:
		break;
	}
	if (!tree_connected_ || h.tree_id != 1)
		return Reply(Status::network_name_deleted);
	switch (h.command) {
	case Command::tree_disconnect: {
		while (!opens_.empty())
			close_open(opens_.begin()->first);
		tree_connected_ = false;
		Reply r;
		encode_empty(r.message);
		r.has_body = true;
		return r;
	}
	case Command::create:
		return create(request);
	case Command::close:
		return close(request);
	case Command::flush:
		return flush(request);
	case Command::read:
		return read(request);
	case Command::write:
		return write(h, request, in_compound);
	case Command::query_info:
		return query_info(request);
	case Command::set_info:
		return set_info(request);
	case Command::query_directory:
		return query_directory(request);
	case Command::ioctl:
		return ioctl(request);
	case Command::lock:
	case Command::change_notify:
	case Command::oplock_break:
		return Reply(Status::not_supported);
	default:
		return Reply(Status::invalid_parameter);
	}
}

Connection::Reply Connection::negotiate(ByteView request)
{
	auto q = decode_negotiate_request(request);
	if (!q || dialect_ != 0)
		return Reply(Status::invalid_parameter);
	uint16_t chosen = 0;
	for (uint16_t d : { dialect_311, dialect_302, dialect_300 })
		if (std::find(q->dialects.begin(), q->dialects.end(), d) != q->dialects.end()) {
			chosen = d;
			break;
		}
	if (!chosen)
		return Reply(Status::not_supported);
	NegotiateResponse rsp;
	if (chosen == dialect_311) {
		bool sha512 = false;
		for (const auto &c : q->contexts) {
			if (c.type != context_preauth_integrity)
				continue;
			auto p = decode_preauth_context(c.data);
			sha512 = p && std::find(p->hash_algorithms.begin(), p->hash_algorithms.end(),
						hash_sha512) != p->hash_algorithms.end();
		}
		if (!sha512)
			return Reply(Status::invalid_parameter);
		PreauthIntegrity p{ { hash_sha512 }, Bytes(32) };
		(void)ntlm::random_bytes(p.salt);
		/* No encryption, signing or compression context: none of them here. */
		rsp.contexts.push_back(encode_preauth_context(p));
	}
	dialect_ = chosen;
	client_guid_ = q->client_guid;
	client_security_mode_ = q->security_mode;
	client_capabilities_ = q->capabilities;
	rsp.security_mode = signing_enabled;
	rsp.dialect = chosen;
	rsp.server_guid = server_guid_;
	rsp.capabilities = cap_large_mtu;
	rsp.max_transact_size = rsp.max_read_size = rsp.max_write_size = config_.max_io;
	rsp.system_time = ntlm::filetime_now();
	log("NEGOTIATE: dialect %s", dialect_name(chosen).c_str());
	Reply r;
	encode_negotiate_response(r.message, rsp);
	r.has_body = true;
	return r;
}

Connection::Reply Connection::session_setup(const Header &h, ByteView request)
{
	(void)h;
	auto q = decode_session_setup_request(request);
	if (!q || dialect_ == 0)
		return Reply(Status::invalid_parameter);
	const Bytes &blob = q->security_buffer;
	if (auto neg = ntlm::decode_negotiate(blob)) {
		/* NTLMSSP NEGOTIATE: answer with a CHALLENGE, the session exists now. */
		if (session_id_ == 0)
			session_id_ = 0x100000000ull | static_cast<uint32_t>(getpid());
		ntlm::ChallengeMessage ch;
		/*
		 * KEY_EXCH when asked: the guest session derives no keys, but
		 * cifs.ko warns that authentication "has been weakened" without it.
		 */
		ch.flags = (neg->flags & (ntlm::client_flags | ntlm::negotiate_key_exch)) |
			   ntlm::negotiate_unicode | ntlm::negotiate_target_info |
			   ntlm::target_type_server;
		(void)ntlm::random_bytes(ch.server_challenge);
		ch.target_name = "SMBDIRECT";
		Bytes ts(8);
		store_le64(ts.data(), ntlm::filetime_now());
		auto name = [](std::string_view s) { return *utf16le_from_utf8(s); };
		ch.target_info = ntlm::encode_av_pairs({ { ntlm::av_nb_domain_name, name("SMBDIRECT") },
							 { ntlm::av_nb_computer_name, name("SMBDIRECT") },
							 { ntlm::av_timestamp, ts } });
		auto encoded = ntlm::encode_challenge(ch);
		if (!encoded)
			return Reply(Status::insufficient_resources);
		Reply r(Status::more_processing_required);
		encode_session_setup_response(r.message, { 0, *encoded });
		r.has_body = true;
		return r;
	}
	auto auth = ntlm::decode_authenticate(blob);
	if (!auth || session_id_ == 0)
		return Reply(Status::logon_failure);
	/* Any credentials are welcome, as a guest: the session stays unsigned. */
	bool anonymous = auth->user.empty() && auth->nt_challenge_response.empty();
	uint16_t flags = anonymous ? session_flag_is_null : session_flag_is_guest;
	authenticated_ = true;
	log("SESSION_SETUP: user '%s' domain '%s' accepted as %s", auth->user.c_str(),
	    auth->domain.c_str(), anonymous ? "anonymous" : "guest");
	Reply r;
	encode_session_setup_response(r.message, { flags, {} });
	r.has_body = true;
	return r;
}

Connection::Reply Connection::tree_connect(ByteView request)
{
	auto q = decode_tree_connect_request(request);
	if (!q)
		return Reply(Status::invalid_parameter);
	std::string name = q->path.substr(q->path.rfind('\\') == std::string::npos
						  ? 0
						  : q->path.rfind('\\') + 1);
	auto lower = [](std::string s) {
		for (auto &c : s)
			c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
		return s;
	};
	if (lower(name) != lower(config_.share_name)) {
		log("TREE_CONNECT %s: no such share", q->path.c_str());
		return Reply(Status::bad_network_name);
	}
	tree_connected_ = true;
	TreeConnectResponse rsp;
	rsp.share_type = share_type_disk;
	rsp.maximal_access = share_maximal_access;
	Reply r;
	encode_tree_connect_response(r.message, rsp);
	r.has_body = true;
	r.tree_id = 1;
	return r;
}

Connection::Open *Connection::find(const FileId &id)
{
	FileId f = id == related_file_id ? compound_file_id_ : id;
	if (f.persistent != f.volatile_)
		return nullptr;
	auto it = opens_.find(f.volatile_);
	return it == opens_.end() ? nullptr : &it->second;
}

void Connection::close_open(uint64_t id)
{
	auto it = opens_.find(id);
	if (it == opens_.end())
		return;
	Open &o = it->second;
	if (o.delete_on_close) {
		if (auto p = share_.parent_of(o.path)) {
			if (unlinkat(p->fd, p->name.c_str(), o.directory ? AT_REMOVEDIR : 0) != 0)
				log("delete on close of %s: %s", o.path.c_str(), std::strerror(errno));
			::close(p->fd);
		}
	}
	::close(o.fd);
	opens_.erase(it);
}

Connection::Reply Connection::create(ByteView request)
{
	auto q = decode_create_request(request);
	if (!q)
		return Reply(Status::invalid_parameter);
	auto rel = Share::relative_path(q->name);
	if (!rel)
		return Reply(Status::object_name_invalid);
	const bool want_dir = q->create_options & option_directory_file;
	const bool want_file = q->create_options & option_non_directory_file;

	struct stat st {};
	bool exists = false;
	int probe = share_.open_beneath(*rel, O_PATH);
	if (probe >= 0) {
		exists = fstat(probe, &st) == 0;
		::close(probe);
	} else if (errno != ENOENT) {
		return Reply(status_from_errno(errno));
	}
	if (!exists) {
		auto parent = share_.parent_of(*rel);
		if (!parent)
			return Reply(Status::object_path_not_found);
		::close(parent->fd);
	}
	if (exists && S_ISDIR(st.st_mode) && want_file)
		return Reply(Status::file_is_a_directory);
	if (exists && !S_ISDIR(st.st_mode) && want_dir)
		return Reply(Status::not_a_directory);

	uint32_t action = action_opened;
	bool truncate = false;
	switch (q->create_disposition) {
	case disposition_open:
		if (!exists)
			return Reply(Status::object_name_not_found);
		break;
	case disposition_create:
		if (exists)
			return Reply(Status::object_name_collision);
		action = action_created;
		break;
	case disposition_open_if:
		action = exists ? action_opened : action_created;
		break;
	case disposition_overwrite:
		if (!exists)
			return Reply(Status::object_name_not_found);
		truncate = true;
		action = action_overwritten;
		break;
	case disposition_overwrite_if:
	case disposition_supersede:
		truncate = exists;
		action = exists ? (q->create_disposition == disposition_supersede ? action_superseded
										      : action_overwritten)
				: action_created;
		break;
	default:
		return Reply(Status::invalid_parameter);
	}
	bool directory = exists ? S_ISDIR(st.st_mode) : want_dir;
	if (directory && truncate)
		return Reply(Status::invalid_parameter);

	int fd;
	if (directory) {
		if (!exists) {
			auto parent = share_.parent_of(*rel);
			if (!parent)
				return Reply(Status::object_path_not_found);
			int rc = mkdirat(parent->fd, parent->name.c_str(), 0755);
			int err = errno;
			::close(parent->fd);
			if (rc != 0)
				return Reply(status_from_errno(err));
		}
		fd = share_.open_beneath(*rel, O_RDONLY | O_DIRECTORY);
	} else {
		int flags = (q->desired_access & write_access_bits) ? O_RDWR : O_RDONLY;
		if (!exists)
			flags |= O_CREAT | O_EXCL;
		if (truncate)
			flags |= O_TRUNC;
		fd = share_.open_beneath(*rel, flags, 0644);
		if (fd < 0 && errno == EACCES && (q->desired_access & maximum_allowed) && exists)
			fd = share_.open_beneath(*rel, O_RDONLY);
	}
	if (fd < 0)
		return Reply(status_from_errno(errno));
	if (fstat(fd, &st) != 0) {
		int err = errno;
		::close(fd);
		return Reply(status_from_errno(err));
	}
	uint64_t id = next_file_id_++;
	Open o;
	o.fd = fd;
	o.path = *rel;
	o.directory = S_ISDIR(st.st_mode);
	o.delete_on_close = q->create_options & option_delete_on_close;
	o.access = q->desired_access;
	opens_.emplace(id, std::move(o));

	CreateResponse rsp;
	rsp.create_action = action;
	rsp.times = { filetime_from(st.st_ctim), filetime_from(st.st_atim), filetime_from(st.st_mtim),
		      filetime_from(st.st_ctim) };
	rsp.allocation_size = static_cast<uint64_t>(st.st_blocks) * 512;
	rsp.end_of_file = S_ISDIR(st.st_mode) ? 0 : static_cast<uint64_t>(st.st_size);
	rsp.file_attributes = file_attributes(st);
	rsp.file_id = { id, id };
	Reply r;
	encode_create_response(r.message, rsp);
	r.has_body = true;
	r.created = rsp.file_id;
	return r;
}

Connection::Reply Connection::close(ByteView request)
{
	auto q = decode_close_request(request);
	if (!q)
		return Reply(Status::invalid_parameter);
	Open *o = find(q->file_id);
	if (!o)
		return Reply(Status::file_closed);
	CloseResponse rsp;
	struct stat st {};
	if ((q->flags & close_flag_postquery_attrib) && fstat(o->fd, &st) == 0) {
		rsp.flags = close_flag_postquery_attrib;
		rsp.times = { filetime_from(st.st_ctim), filetime_from(st.st_atim),
			      filetime_from(st.st_mtim), filetime_from(st.st_ctim) };
		rsp.allocation_size = static_cast<uint64_t>(st.st_blocks) * 512;
		rsp.end_of_file = S_ISDIR(st.st_mode) ? 0 : static_cast<uint64_t>(st.st_size);
		rsp.file_attributes = file_attributes(st);
	}
	FileId f = q->file_id == related_file_id ? compound_file_id_ : q->file_id;
	close_open(f.volatile_);
	Reply r;
	encode_close_response(r.message, rsp);
	r.has_body = true;
	return r;
}

Connection::Reply Connection::flush(ByteView request)
{
	auto q = decode_flush_request(request);
	if (!q)
		return Reply(Status::invalid_parameter);
	Open *o = find(q->file_id);
	if (!o)
		return Reply(Status::file_closed);
	if (!o->directory && fsync(o->fd) != 0)
		return Reply(status_from_errno(errno));
	Reply r;
	encode_empty(r.message);
	r.has_body = true;
	return r;
}

/*
 * cifs.ko, like Windows, trusts a server asked for RDMA_V1_INVALIDATE to
 * invalidate the token with whatever it answers, errors included
 * (STATUS_END_OF_FILE for a read-ahead past the end is common): it marks
 * the memory region invalid without a LOCAL_INV and registers it again,
 * which fails on a still-valid region and takes the connection down.
 */
static std::optional<uint32_t> token_to_invalidate(Channel channel,
						    const std::vector<BufferDescriptor> &descriptors)
{
	if (channel != Channel::rdma_v1_invalidate || descriptors.empty())
		return std::nullopt;
	return descriptors[0].token;
}

Connection::Reply Connection::read(ByteView request)
{
	auto q = decode_read_request(request);
	if (!q)
		return Reply(Status::invalid_parameter);
	Reply r = read(&*q);
	if (dialect_ != dialect_300)
		r.invalidate_token = token_to_invalidate(q->channel, q->channel_info);
	return r;
}

Connection::Reply Connection::read(const ReadRequest *q)
{
	Open *o = find(q->file_id);
	if (!o)
		return Reply(Status::file_closed);
	if (o->directory)
		return Reply(Status::invalid_device_request);
	const bool rdma = q->channel == Channel::rdma_v1 || q->channel == Channel::rdma_v1_invalidate;
	if (q->length > config_.max_io || (!rdma && q->channel != Channel::none))
		return Reply(Status::invalid_parameter);
	/* The RDMA channel needs SMB-Direct and descriptors; 3.0 has no remote invalidation. */
	if (rdma && (!transport_ || q->channel_info.empty() ||
		     (dialect_ == dialect_300 && q->channel == Channel::rdma_v1_invalidate)))
		return Reply(Status::invalid_parameter);

	ReadResponse rsp;
	Reply r;
	if (rdma) {
		/*
		 * Straight from the page cache into the client's registered
		 * pages: only the size is looked at here; handle() submits the
		 * RDMA WRITE with this response behind it.
		 */
		struct stat st {};
		if (fstat(o->fd, &st) != 0)
			return Reply(status_from_errno(errno));
		if ((fcntl(o->fd, F_GETFL) & O_ACCMODE) == O_WRONLY)
			return Reply(Status::access_denied);
		uint64_t size = static_cast<uint64_t>(st.st_size);
		uint64_t n = q->offset < size ? std::min<uint64_t>(q->length, size - q->offset) : 0;
		if ((n == 0 && q->length > 0) || n < q->minimum_count)
			return Reply(Status::end_of_file);
		if (n > 0) {
			FileTransfer t;
			t.fd = o->fd;
			t.offset = q->offset;
			t.length = n;
			t.descriptors = wire_descriptors(q->channel_info);
			io_.rdma_write_transfers++;
			io_.max_descriptors = std::max(io_.max_descriptors,
						       static_cast<uint32_t>(t.descriptors.size()));
			if (config_.verbose)
				log("READ %llu bytes at %llu: RDMA WRITE from the file into %zu "
				    "descriptor(s), %s",
				    static_cast<unsigned long long>(n),
				    static_cast<unsigned long long>(q->offset), t.descriptors.size(),
				    channel_name(q->channel));
			r.transfer = std::move(t);
		}
		rsp.data_remaining = static_cast<uint32_t>(n);
		encode_read_response(r.message, rsp);
		r.has_body = true;
		return r;
	}

	io_buffer_.resize(q->length);
	size_t n = 0;
	while (n < q->length) {
		ssize_t got = pread(o->fd, io_buffer_.data() + n, q->length - n,
				    static_cast<off_t>(q->offset + n));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return Reply(status_from_errno(errno));
		if (got == 0)
			break;
		n += static_cast<size_t>(got);
	}
	if ((n == 0 && q->length > 0) || n < q->minimum_count)
		return Reply(Status::end_of_file);
	rsp.data = ByteView(io_buffer_.data(), n);
	io_.inline_reads++;
	io_.inline_read_bytes += n;
	encode_read_response(r.message, rsp);
	r.has_body = true;
	return r;
}

Connection::Reply Connection::write(const Header &h, ByteView request, bool in_compound)
{
	auto q = decode_write_request(request);
	if (!q)
		return Reply(Status::invalid_parameter);
	std::optional<uint32_t> token;
	if (dialect_ != dialect_300)
		token = token_to_invalidate(q->channel, q->channel_info);
	Reply r = write(h, &*q, in_compound, token);
	r.invalidate_token = token;
	return r;
}

Connection::Reply Connection::write(const Header &h, const WriteRequest *q, bool in_compound,
				    std::optional<uint32_t> invalidate_token)
{
	Open *o = find(q->file_id);
	if (!o)
		return Reply(Status::file_closed);
	if (o->directory)
		return Reply(Status::invalid_device_request);
	const bool rdma = q->channel == Channel::rdma_v1 || q->channel == Channel::rdma_v1_invalidate;
	if (!rdma && q->channel != Channel::none)
		return Reply(Status::invalid_parameter);
	if (rdma && (!transport_ || q->channel_info.empty() || !q->data.empty() ||
		     q->remaining_bytes > config_.max_io ||
		     (dialect_ == dialect_300 && q->channel == Channel::rdma_v1_invalidate)))
		return Reply(Status::invalid_parameter);
	if ((fcntl(o->fd, F_GETFL) & O_ACCMODE) == O_RDONLY)
		return Reply(Status::access_denied);

	ByteView data = q->data;
	Reply r;
	if (rdma && q->remaining_bytes > 0) {
		/* Out of the client's registered pages into a pooled buffer. */
		Bytes buf;
		if (!spare_buffers_.empty()) {
			buf = std::move(spare_buffers_.back());
			spare_buffers_.pop_back();
		}
		buf.resize(q->remaining_bytes);
		auto descs = wire_descriptors(q->channel_info);
		iovec iov = { buf.data(), buf.size() };
		uint64_t cookie = next_cookie(true);
		smbdirect_rdma_args a;
		smbdirect_rdma_prep_read(&a, cookie, &iov, 1, descs.data(),
					 static_cast<uint32_t>(descs.size()));
		if (auto ec = submit(&a, 1)) {
			log("WRITE: RDMA READ of %u bytes: %s", q->remaining_bytes,
			    ec.message().c_str());
			Reply e;
			e.status = status_unexpected_io_error;
			return e;
		}
		io_.rdma_read_transfers++;
		io_.max_descriptors = std::max(io_.max_descriptors,
					       static_cast<uint32_t>(descs.size()));
		if (config_.verbose)
			log("WRITE %u bytes at %llu: RDMA READ from %zu descriptor(s) submitted, %s",
			    q->remaining_bytes, static_cast<unsigned long long>(q->offset),
			    descs.size(), channel_name(q->channel));
		if (!in_compound) {
			/* Answered by on_completion(); serve the next request meanwhile. */
			FileId f = q->file_id == related_file_id ? compound_file_id_ : q->file_id;
			PendingWrite &w = pending_writes_[cookie];
			w.request = h;
			w.open = f.volatile_;
			w.offset = q->offset;
			w.data = std::move(buf);
			w.invalidate_token = invalidate_token;
			io_.max_writes_in_flight =
				std::max(io_.max_writes_in_flight,
					 static_cast<uint32_t>(pending_writes_.size()));
			r.deferred = true;
			return r;
		}
		auto c = wait_for(cookie);
		if (!c || c->status < 0) {
			log("WRITE: RDMA READ of %u bytes: %s", q->remaining_bytes,
			    c ? std::strerror(-c->status) : c.error().message().c_str());
			Reply e;
			e.status = status_unexpected_io_error;
			return e;
		}
		io_.rdma_read_bytes += c->bytes;
		io_buffer_ = std::move(buf);
		data = ByteView(io_buffer_.data(), static_cast<size_t>(c->bytes));
	} else if (!rdma) {
		io_.inline_writes++;
		io_.inline_write_bytes += data.size();
	}
	size_t done = 0;
	while (done < data.size()) {
		ssize_t w = pwrite(o->fd, data.data() + done, data.size() - done,
				   static_cast<off_t>(q->offset + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			Reply e(status_from_errno(errno == EBADF ? EACCES : errno));
			return e;
		}
		done += static_cast<size_t>(w);
	}
	WriteResponse rsp;
	rsp.count = static_cast<uint32_t>(done);
	encode_write_response(r.message, rsp);
	r.has_body = true;
	return r;
}

Connection::Reply Connection::query_info(ByteView request)
{
	auto q = decode_query_info_request(request);
	if (!q)
		return Reply(Status::invalid_parameter);
	Open *o = find(q->file_id);
	if (!o)
		return Reply(Status::file_closed);
	std::optional<Bytes> out;
	struct stat st {};
	if (q->info_type == info_type_file) {
		if (fstat(o->fd, &st) != 0)
			return Reply(status_from_errno(errno));
		out = file_info(q->info_class, st, smb_path(o->path), o->access, o->delete_on_close);
	} else if (q->info_type == info_type_filesystem) {
		out = fs_info(q->info_class, o->fd);
	} else {
		return Reply(Status::not_supported);
	}
	if (!out) {
		log("QUERY_INFO type %u class %u: not answered", q->info_type, q->info_class);
		return Reply(Status::invalid_info_class);
	}
	Reply r;
	if (out->size() > q->output_buffer_length) {
		/* Variable-length classes return what fits with a warning; fixed ones fail. */
		bool variable = (q->info_type == info_type_file &&
				 (q->info_class == file_all_information ||
				  q->info_class == file_name_information ||
				  q->info_class == file_stream_information)) ||
				(q->info_type == info_type_filesystem &&
				 (q->info_class == fs_volume_information ||
				  q->info_class == fs_attribute_information));
		if (!variable)
			return Reply(Status::info_length_mismatch);
		out->resize(q->output_buffer_length);
		r.status = static_cast<uint32_t>(Status::buffer_overflow);
	}
	encode_buffer_response(r.message, *out);
	r.has_body = true;
	return r;
}

Connection::Reply Connection::set_info(ByteView request)
{
	auto q = decode_set_info_request(request);
	if (!q)
		return Reply(Status::invalid_parameter);
	Open *o = find(q->file_id);
	if (!o)
		return Reply(Status::file_closed);
	if (q->info_type != info_type_file)
		return Reply(Status::not_supported);
	Reader in(q->buffer);
	switch (q->info_class) {
	case file_basic_information: {
		in.skip(8); /* CreationTime: Linux has none to set */
		uint64_t atime = in.le64(), mtime = in.le64();
		if (!in.ok())
			return Reply(Status::info_length_mismatch);
		/* 0 and -1 mean "leave it" ([MS-FSCC] 2.4.7). */
		struct timespec ts[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
		if (atime != 0 && atime != ~0ull)
			ts[0] = timespec_from_filetime(atime);
		if (mtime != 0 && mtime != ~0ull)
			ts[1] = timespec_from_filetime(mtime);
		if (futimens(o->fd, ts) != 0)
			return Reply(status_from_errno(errno));
		break;
	}
	case file_rename_information: {
		uint8_t replace = in.u8();
		in.skip(7 + 8); /* Reserved, RootDirectory */
		uint32_t len = in.le32();
		ByteView name = in.bytes(len);
		if (!in.ok())
			return Reply(Status::info_length_mismatch);
		auto utf8 = utf8_from_utf16le(name);
		if (!utf8)
			return Reply(Status::object_name_invalid);
		auto to = Share::relative_path(*utf8);
		if (!to)
			return Reply(Status::object_name_invalid);
		auto from_parent = share_.parent_of(o->path);
		if (!from_parent)
			return Reply(static_cast<Status>(from_parent.error().value()));
		auto to_parent = share_.parent_of(*to);
		if (!to_parent) {
			::close(from_parent->fd);
			return Reply(Status::object_path_not_found);
		}
		int rc = renameat2(from_parent->fd, from_parent->name.c_str(), to_parent->fd,
				   to_parent->name.c_str(), replace ? 0 : RENAME_NOREPLACE);
		int err = errno;
		::close(from_parent->fd);
		::close(to_parent->fd);
		if (rc != 0)
			return Reply(status_from_errno(err));
		log("rename %s -> %s", o->path.c_str(), to->c_str());
		o->path = *to;
		break;
	}
	case file_disposition_information: {
		uint8_t pending = in.u8();
		if (!in.ok())
			return Reply(Status::info_length_mismatch);
		if (pending && o->directory && !directory_is_empty(o->fd))
			return Reply(Status::directory_not_empty);
		o->delete_on_close = pending;
		break;
	}
	case file_end_of_file_information: {
		uint64_t eof = in.le64();
		if (!in.ok())
			return Reply(Status::info_length_mismatch);
		if (o->directory || ftruncate(o->fd, static_cast<off_t>(eof)) != 0)
			return Reply(o->directory ? Status::invalid_parameter
						  : status_from_errno(errno == EBADF ? EACCES : errno));
		break;
	}
	case file_allocation_information:
		break; /* a hint; the file system allocates as it writes */
	default:
		log("SET_INFO class %u: not supported", q->info_class);
		return Reply(Status::invalid_info_class);
	}
	Reply r;
	encode_set_info_response(r.message);
	r.has_body = true;
	return r;
}

Connection::Reply Connection::query_directory(ByteView request)
{
	auto q = decode_query_directory_request(request);
	if (!q)
		return Reply(Status::invalid_parameter);
	Open *o = find(q->file_id);
	if (!o)
		return Reply(Status::file_closed);
	if (!o->directory)
		return Reply(Status::invalid_parameter);
	if (!is_directory_class(q->info_class))
		return Reply(Status::invalid_info_class);
	bool first_call = !o->listed;
	if (!o->listed ||
	    (q->flags & (query_directory_restart_scans | query_directory_reopen))) {
		o->names.clear();
		o->next = 0;
		o->listed = true;
		first_call = true;
		int dfd = openat(o->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : nullptr;
		if (!d) {
			if (dfd >= 0)
				::close(dfd);
			return Reply(status_from_errno(errno));
		}
		while (dirent *e = readdir(d))
			if (pattern_matches(q->pattern, e->d_name))
				o->names.push_back(e->d_name);
		closedir(d);
		std::sort(o->names.begin(), o->names.end());
	}
	if (o->next >= o->names.size())
		return Reply(first_call ? Status::no_such_file : Status::no_more_files);

	Bytes out;
	size_t last = 0;
	size_t count = 0;
	while (o->next < o->names.size()) {
		const std::string &name = o->names[o->next];
		struct stat st {};
		bool root_parent = name == ".." && o->path == ".";
		if (fstatat(o->fd, root_parent ? "." : name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
			o->next++; /* gone since it was listed */
			continue;
		}
		Bytes entry = directory_entry(q->info_class, st, name, 0);
		size_t start = (out.size() + 7) & ~size_t(7);
		if (count > 0 && start + entry.size() > q->output_buffer_length)
			break;
		if (count == 0 && entry.size() > q->output_buffer_length)
			return Reply(Status::info_length_mismatch);
		if (count > 0) {
			out.resize(start, 0);
			store_le32(out.data() + last, static_cast<uint32_t>(start - last));
		}
		last = out.size();
		out.insert(out.end(), entry.begin(), entry.end());
		o->next++;
		count++;
		if (q->flags & query_directory_return_single_entry)
			break;
	}
	Reply r;
	encode_buffer_response(r.message, out);
	r.has_body = true;
	return r;
}

Connection::Reply Connection::ioctl(ByteView request)
{
	auto q = decode_ioctl_request(request);
	if (!q)
		return Reply(Status::invalid_parameter);
	if (q->ctl_code != fsctl_validate_negotiate_info) {
		log("IOCTL 0x%08x: not supported", q->ctl_code);
		return Reply(Status::not_supported);
	}
	/* [MS-SMB2] 3.3.5.15.12: what the client sent in NEGOTIATE, checked. */
	Reader in(q->input);
	uint32_t capabilities = in.le32();
	ByteView guid = in.bytes(16);
	uint16_t security_mode = in.le16();
	uint16_t count = in.le16();
	bool offered = false;
	for (uint16_t i = 0; i < count && in.ok(); i++)
		offered |= in.le16() == dialect_;
	if (!in.ok())
		return Reply(Status::invalid_parameter);
	/* cifs.ko adds MULTI_CHANNEL here whether or not it sent it before. */
	if ((capabilities & ~cap_multi_channel) != (client_capabilities_ & ~cap_multi_channel) ||
	    security_mode != client_security_mode_ ||
	    !std::equal(guid.begin(), guid.end(), client_guid_.begin()) || !offered) {
		log("VALIDATE_NEGOTIATE_INFO: does not match the NEGOTIATE");
		return Reply(Status::access_denied);
	}
	Writer out;
	out.le32(cap_large_mtu);
	out.bytes(server_guid_);
	out.le16(signing_enabled);
	out.le16(dialect_);
	IoctlResponse rsp;
	rsp.ctl_code = q->ctl_code;
	rsp.file_id = q->file_id;
	rsp.output = out.buffer();
	Reply r;
	encode_ioctl_response(r.message, rsp);
	r.has_body = true;
	return r;
}

} // namespace smb2
