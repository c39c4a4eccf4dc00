// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline.hpp"

#include <algorithm>
#include <cerrno>
#include <poll.h>
#include <unistd.h>
#include <vector>

#include <smbdirect/smbdirect.hpp>

#include "page_buffer.hpp"

namespace smb2 {

std::vector<iovec> split_segments(uint8_t *buf, size_t n, int segments)
{
	std::vector<iovec> iov;
	size_t base = n / static_cast<size_t>(segments);
	size_t pos = 0;
	for (int i = 0; i < segments && pos < n; i++) {
		size_t len = i + 1 == segments ? n - pos : base;
		if (i + 1 < segments && len % 4096 == 0 && len > 1)
			len--;
		iov.push_back({ buf + pos, len });
		pos += len;
	}
	return iov;
}

namespace {

/* One buffer of the pool and what it is doing. */
struct Slot {
	enum class State { free, in_request, deregistering };
	PageBuffer buffer;
	State state = State::free;
	sd::Registration registration;
	uint64_t message_id = 0;
	uint64_t offset = 0;
	uint32_t length = 0;
};

class Pipeline {
public:
	Pipeline(Client &client, const FileId &file, const PipelineConfig &config, bool is_write)
		: client_(client), file_(file), config_(config), is_write_(is_write)
	{
	}

	std::error_code allocate()
	{
		slots_.resize(config_.depth + 2);
		for (auto &s : slots_) {
			s.buffer = PageBuffer(config_.io_size);
			if (!s.buffer.ok())
				return std::make_error_code(std::errc::not_enough_memory);
		}
		return {};
	}

	/* A free buffer, waiting for deregistrations to complete if need be. */
	Result<Slot *> take()
	{
		for (bool waited = false;; waited = true) {
			for (auto &s : slots_)
				if (s.state == Slot::State::free)
					return &s;
			if (!waited)
				stats_.deregistration_waits++;
			if (auto ec = reap(true))
				return ec;
		}
	}

	/* Registers slot's first n bytes and sends the request for them. */
	std::error_code send(Slot &s, uint64_t offset, uint32_t n)
	{
		uint32_t flags = is_write_ ? SMBDIRECT_ACCESS_PEER_READ : SMBDIRECT_ACCESS_PEER_WRITE;
		if (config_.channel == Channel::rdma_v1_invalidate)
			flags |= SMBDIRECT_REG_REMOTE_INVALIDATE;
		auto iov = split_segments(s.buffer.data(), n, config_.segments);
		auto reg = sd::Registration::create(client_.fd(), iov, flags);
		if (!reg)
			return reg.error();
		s.registration = std::move(*reg);
		std::vector<BufferDescriptor> descriptors = channel_info(s.registration);
		stats_.descriptors =
			std::max(stats_.descriptors, static_cast<uint32_t>(descriptors.size()));
		Result<uint64_t> id = std::error_code();
		if (is_write_) {
			WriteRequest req;
			req.offset = offset;
			req.file_id = file_;
			req.channel = config_.channel;
			req.remaining_bytes = n;
			req.channel_info = std::move(descriptors);
			id = client_.send_request(Command::write, credit_charge_for(n), [&](Writer &w) {
				encode_write_request(w, req);
				return std::error_code();
			});
		} else {
			ReadRequest req;
			req.length = n;
			req.offset = offset;
			req.file_id = file_;
			req.channel = config_.channel;
			req.channel_info = std::move(descriptors);
			id = client_.send_request(Command::read, credit_charge_for(n), [&](Writer &w) {
				encode_read_request(w, req);
				return std::error_code();
			});
		}
		if (!id)
			return id.error(); /* ~Registration deregisters */
		s.state = Slot::State::in_request;
		s.message_id = *id;
		s.offset = offset;
		s.length = n;
		stats_.requests++;
		stats_.max_outstanding = std::max(stats_.max_outstanding, client_.outstanding());
		return {};
	}

	/*
	 * The next response: its slot, with bytes the server moved. The
	 * registration goes away asynchronously; the slot is free again when
	 * that completes.
	 */
	Result<Slot *> receive(uint32_t &bytes)
	{
		auto r = client_.receive_response();
		if (!r)
			return r.error();
		Slot *s = nullptr;
		for (auto &c : slots_)
			if (c.state == Slot::State::in_request && c.message_id == r->header.message_id)
				s = &c;
		if (!s || r->header.command != (is_write_ ? Command::write : Command::read))
			return ParseError::unexpected_message;
		if (auto ec = release(*s))
			return ec;
		if (auto ec = Client::status_of(*r, { Status::end_of_file }))
			return ec;
		if (is_write_) {
			if (r->header.status != static_cast<uint32_t>(Status::success))
				return ParseError::unexpected_message;
			auto rsp = decode_write_response(r->message);
			if (!rsp)
				return rsp.error();
			bytes = rsp->count;
		} else if (r->header.status == static_cast<uint32_t>(Status::end_of_file)) {
			bytes = 0; /* at or beyond the end: nothing was written to us */
		} else {
			auto rsp = decode_read_response(r->message);
			if (!rsp)
				return rsp.error();
			/* Over the RDMA channel nothing comes inline. */
			if (rsp->data_length != 0)
				return ParseError::bad_value;
			bytes = rsp->data_remaining;
		}
		if (bytes > s->length)
			return ParseError::bad_value;
		return s;
	}

	/* Deregistrations that completed free their slots; block: wait for one. */
	std::error_code reap(bool block)
	{
		for (;;) {
			smbdirect_rdma_completion c[16];
			int n = smbdirect_rdma_reap(client_.fd(), c, 16);
			if (n == -EINTR)
				continue;
			if (n < 0 && n != -EAGAIN)
				return errno_code(n);
			for (int i = 0; i < n; i++) {
				if (c[i].cookie >= slots_.size() ||
				    slots_[c[i].cookie].state != Slot::State::deregistering)
					return std::make_error_code(std::errc::protocol_error);
				if (c[i].status < 0)
					return errno_code(c[i].status);
				slots_[c[i].cookie].state = Slot::State::free;
			}
			if (n > 0 || !block)
				return {};
			/* Nothing yet: completions raise POLLERR, whatever is asked. */
			pollfd p = { client_.fd(), 0, 0 };
			if (::poll(&p, 1, 30000) == 0)
				return std::make_error_code(std::errc::timed_out);
		}
	}

	/* Every deregistration completed: the buffers may go. */
	std::error_code drain()
	{
		for (;;) {
			bool busy = false;
			for (auto &s : slots_)
				busy |= s.state == Slot::State::deregistering;
			if (!busy)
				return {};
			if (auto ec = reap(true))
				return ec;
		}
	}

	PipelineStats &stats()
	{
		return stats_;
	}
	uint32_t depth() const
	{
		return config_.depth;
	}

private:
	std::error_code release(Slot &s)
	{
		uint64_t cookie = static_cast<uint64_t>(&s - slots_.data());
		/* On an error the kernel did not take it: the slot keeps it. */
		auto remote_invalidated = s.registration.deregister_async(cookie);
		if (!remote_invalidated)
			return remote_invalidated.error();
		if (*remote_invalidated)
			stats_.remote_invalidations++;
		s.state = Slot::State::deregistering;
		return {};
	}

	Client &client_;
	FileId file_;
	PipelineConfig config_;
	bool is_write_;
	std::vector<Slot> slots_;
	PipelineStats stats_;
};

/* Reads up to n bytes (less only at the end of the input). */
ssize_t read_full(int fd, uint8_t *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = ::read(fd, p + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += static_cast<size_t>(r);
	}
	return static_cast<ssize_t>(done);
}

std::error_code write_full_at(int fd, const uint8_t *p, size_t n, uint64_t offset)
{
	size_t done = 0;
	while (done < n) {
		ssize_t w = ::pwrite(fd, p + done, n - done, static_cast<off_t>(offset + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return { errno, std::system_category() };
		done += static_cast<size_t>(w);
	}
	return {};
}

} // namespace

Result<PipelineStats> put_pipelined(Client &client, const FileId &file, int in_fd,
				    const PipelineConfig &config)
{
	Pipeline p(client, file, config, true);
	if (auto ec = p.allocate())
		return ec;
	uint64_t offset = 0;
	bool input_done = false;
	while (!input_done || client.outstanding() > 0) {
		while (!input_done && client.outstanding() < p.depth()) {
			auto s = p.take();
			if (!s)
				return s.error();
			ssize_t n = read_full(in_fd, (*s)->buffer.data(), config.io_size);
			if (n < 0)
				return errno_code(n);
			if (n == 0) {
				input_done = true;
				break;
			}
			if (auto ec = p.send(**s, offset, static_cast<uint32_t>(n)))
				return ec;
			offset += static_cast<uint64_t>(n);
			input_done = static_cast<uint64_t>(n) < config.io_size;
		}
		if (client.outstanding() == 0)
			break;
		uint32_t bytes = 0;
		auto s = p.receive(bytes);
		if (!s)
			return s.error();
		if (bytes != (*s)->length)
			return std::make_error_code(std::errc::io_error); /* a short WRITE */
		p.stats().bytes += bytes;
		if (auto ec = p.reap(false))
			return ec;
	}
	if (auto ec = p.drain())
		return ec;
	return p.stats();
}

Result<PipelineStats> get_pipelined(Client &client, const FileId &file, uint64_t end_of_file,
				    int out_fd, const PipelineConfig &config)
{
	Pipeline p(client, file, config, false);
	if (auto ec = p.allocate())
		return ec;
	uint64_t offset = 0;
	/* Where the file turned out to end (a short READ), if before end_of_file. */
	uint64_t end = end_of_file;
	while (offset < end || client.outstanding() > 0) {
		while (offset < end && client.outstanding() < p.depth()) {
			auto s = p.take();
			if (!s)
				return s.error();
			uint64_t want = config.round_up ? config.io_size
							: std::min(config.io_size, end - offset);
			if (auto ec = p.send(**s, offset, static_cast<uint32_t>(want)))
				return ec;
			offset += want;
		}
		if (client.outstanding() == 0)
			break;
		uint32_t bytes = 0;
		auto s = p.receive(bytes);
		if (!s)
			return s.error();
		if (auto ec = write_full_at(out_fd, (*s)->buffer.data(), bytes, (*s)->offset))
			return ec;
		p.stats().bytes += bytes;
		if (bytes < (*s)->length)
			end = std::min(end, (*s)->offset + bytes); /* the file ends here */
		if (auto ec = p.reap(false))
			return ec;
	}
	if (auto ec = p.drain())
		return ec;
	/* READs past a premature end may have left nothing, or a hole: cut there. */
	if (end < end_of_file && ftruncate(out_fd, static_cast<off_t>(end)) != 0)
		return std::error_code(errno, std::system_category());
	return p.stats();
}

} // namespace smb2
