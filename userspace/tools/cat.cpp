// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect cat: stdin of one end to stdout of the other over SMB-Direct,
 * like the rdma-pipe tools rdsend/rdrecv. The listener receives and the
 * connector sends unless --send/--recv say otherwise. Messages mode moves
 * the data in SOCK_SEQPACKET messages; --rdma has the receiver register
 * buffers for the peer (PEER_WRITE) and the sender move the data with
 * RDMA_WRITEV into them, the SMB3 READ offload path. wire.hpp has the
 * protocol; every way a transfer can end short is an error on both ends.
 */
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <deque>
#include <unistd.h>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "json.hpp"
#include "units.hpp"
#include "wire.hpp"

using namespace sd::tool;

namespace
{

constexpr std::string_view cmd = "cat";

constexpr OptionSpec specs[] = {
	{ "listen", 'l', false }, { "send", 0, false },	     { "recv", 0, false },
	{ "rdma", 0, false },	  { "block", 'b', true },    { "buffers", 0, true },
	{ "progress", 0, false }, { "verbose", 'v', false }, { "json", 'j', false },
	{ "set", 'o', true },
};

constexpr std::string_view help =
	"Usage: smbdirect cat -l [OPTIONS] [ADDR] PORT      (listen; receives by default)\n"
	"       smbdirect cat [OPTIONS] ADDR PORT           (connect; sends by default)\n"
	"\n"
	"Copies standard input of the sending end to standard output of the\n"
	"receiving end over one SMB-Direct connection. Exit status 0 only when\n"
	"the receiver got every byte up to the sender's end marker and wrote it\n"
	"out; any error or a connection ending early is exit status 1 on both ends.\n"
	"\n"
	"  -l, --listen       wait for one connection on [ADDR] PORT (default: all addresses)\n"
	"      --send         this end sends its standard input (default without -l)\n"
	"      --recv         this end writes what it receives (default with -l)\n"
	"      --rdma         the receiver registers buffers and the sender RDMA-writes\n"
	"                     into them (RDMA_WRITEV) instead of sending messages;\n"
	"                     both ends must say so\n"
	"  -b, --block SIZE   bytes per message or per RDMA buffer (default 1M; capped\n"
	"                     by the negotiated max_fragmented_size/max_read_write_size)\n"
	"      --buffers N    --rdma: buffers the receiver registers (default 4, 2-64)\n"
	"  -o, --set NAME=VALUE  a SOL_SMBDIRECT option before connect/listen (repeatable):\n"
	"                     receive_credit_max, send_credit_target, max_send_size,\n"
	"                     max_receive_size, max_fragmented_size, max_read_write_size,\n"
	"                     keepalive_interval; e.g. -o max_send_size=8K -o max_receive_size=8K\n"
	"      --progress     a progress line on stderr (default when stderr is a terminal)\n"
	"  -v, --verbose      say when listening and connected, and a summary at the end\n"
	"  -j, --json         the summary as one JSON object on stderr\n"
	"  -h, --help         this text\n";

struct Config {
	bool listen = false;
	bool sending = false;
	bool rdma = false;
	uint64_t block = 1024 * 1024;
	uint32_t buffers = 4;
	bool verbose = false;
	bool json = false;
	bool progress = false;
	Endpoint ep;
	std::vector<OptionSetting> settings;
};

/* How the transfer went, for the summary. */
struct Transfer {
	std::string peer;
	smbdirect_params params{};
	uint64_t bytes = 0;
	uint64_t messages = 0;
	double start = 0, end = 0;
	uint32_t buffer_size = 0; /* rdma */
};

/* Reports a failure on this end and tells the peer; returns exit_error. */
int fail(int fd, std::string_view role, std::string_view object, std::error_code ec)
{
	print_error(cmd, object, ec);
	send_error_message(fd,
			   std::string(role) + ": " + std::string(object) + ": " + ec.message());
	return exit_error;
}

int protocol_error(int fd, std::string_view what)
{
	print_message(cmd, "protocol error: " + std::string(what));
	send_error_message(fd, "protocol error: " + std::string(what));
	return exit_error;
}

/* A message that is not what this end waits for: ERRR, EOF, or a protocol error. */
int unexpected(int fd, const wire::Reader &r, size_t bytes, std::string_view waiting_for)
{
	if (bytes == 0) {
		print_message(cmd, "the connection ended before " + std::string(waiting_for));
		return exit_error;
	}
	if (r.is(wire::Type::Error)) {
		wire::Reader copy = r;
		print_message(cmd, "peer: " + copy.rest_text());
		return exit_error;
	}
	return protocol_error(fd, "unexpected " + wire::type_name(r.type()) +
					  " message while waiting for " + std::string(waiting_for));
}

std::error_code receive_checked(int fd, std::vector<uint8_t> &buf, Received &got)
{
	std::error_code ec = receive_control(fd, buf, got);
	if (!ec && got.truncated)
		ec = std::make_error_code(std::errc::message_size);
	return ec;
}

/* --- messages mode ---------------------------------------------------------- */

int send_messages(int fd, const Config &cfg, Transfer &t, Progress &progress)
{
	size_t limit = std::min<uint64_t>(cfg.block, t.params.max_fragmented_send_size);
	if (limit <= wire::header_size)
		return protocol_error(fd, "the peer's max_fragmented_size is too small");
	size_t chunk = limit - wire::header_size;
	std::vector<uint8_t> buf(chunk), ctl;
	Received got;

	for (;;) {
		size_t n;
		std::error_code ec = read_some(STDIN_FILENO, buf.data(), chunk, n);
		if (ec)
			return fail(fd, "sender", "stdin", ec);
		if (n == 0)
			break;
		/* The receiver may have given up (ERRR) or gone: stop early. */
		if (message_waiting(fd)) {
			if ((ec = receive_checked(fd, ctl, got)))
				return fail(fd, "sender", "receive from " + t.peer, ec);
			return unexpected(fd, wire::Reader(ctl), got.bytes,
					  "the end of the stream");
		}
		ec = send_message(fd, wire::Type::Data, std::span<const uint8_t>(buf.data(), n));
		if (ec)
			return fail(fd, "sender", "send to " + t.peer, ec);
		t.bytes += n;
		t.messages++;
		progress.update(t.bytes);
	}
	return 0;
}

int receive_messages(int fd, Transfer &t, Progress &progress)
{
	/* The largest message the peer may send us, its type included. */
	std::vector<uint8_t> buf(
		std::max<size_t>(t.params.max_fragmented_receive_size, wire::max_control_size));
	Received got;

	for (;;) {
		std::error_code ec = receive_into(fd, buf, got);
		if (ec)
			return fail(fd, "receiver", "receive from " + t.peer, ec);
		if (got.truncated)
			return protocol_error(fd, "a message larger than max_fragmented_size");
		wire::Reader r(std::span<const uint8_t>(buf.data(), got.bytes));
		if (got.bytes && r.is(wire::Type::Data)) {
			size_t n = got.bytes - wire::header_size;
			if ((ec = write_all(STDOUT_FILENO, buf.data() + wire::header_size, n)))
				return fail(fd, "receiver", "stdout", ec);
			t.bytes += n;
			t.messages++;
			progress.update(t.bytes);
			continue;
		}
		if (got.bytes && r.is(wire::Type::End)) {
			uint64_t total = r.u64();
			if (!r.ok_and_done())
				return protocol_error(fd, "malformed END_ message");
			if (total != t.bytes)
				return protocol_error(fd,
						      "the sender sent " + std::to_string(total) +
							      " bytes, " + std::to_string(t.bytes) +
							      " arrived");
			return 0;
		}
		return unexpected(fd, r, got.bytes, "the end of the stream");
	}
}

/* --- rdma mode ---------------------------------------------------------------- */

int receive_rdma(int fd, const Config &cfg, Transfer &t, Progress &progress)
{
	uint64_t size = std::min<uint64_t>(cfg.block, t.params.max_read_write_size);
	size = std::max<uint64_t>(size & ~uint64_t(4095), 4096);
	t.buffer_size = static_cast<uint32_t>(size);
	std::vector<Mapping> buffers(cfg.buffers);
	std::vector<Registration> regs; /* deregistered when they go */

	for (uint32_t i = 0; i < cfg.buffers; i++) {
		std::error_code ec = buffers[i].map(size);
		if (ec)
			return fail(fd, "receiver", "buffer of " + format_bytes(size), ec);
		auto reg = Registration::create(
			fd, std::as_writable_bytes(std::span(buffers[i].data(), size)),
			SMBDIRECT_ACCESS_PEER_WRITE);
		if (!reg)
			return fail(fd, "receiver", "register " + format_bytes(size), reg.error());
		regs.push_back(std::move(*reg));
		auto desc = regs.back().descriptors();
		wire::Writer w(wire::Type::Buffer);
		w.u32(i).u32(t.buffer_size).u32(static_cast<uint32_t>(desc.size()));
		w.descriptors(desc);
		if ((ec = send_message(fd, w)))
			return fail(fd, "receiver", "send to " + t.peer, ec);
	}

	wire::GrantBook book(cfg.buffers, t.buffer_size);
	std::vector<uint8_t> ctl;
	Received got;
	for (;;) {
		std::error_code ec = receive_checked(fd, ctl, got);
		if (ec)
			return fail(fd, "receiver", "receive from " + t.peer, ec);
		wire::Reader r(ctl);
		if (got.bytes && r.is(wire::Type::Written)) {
			uint32_t index = r.u32(), bytes = r.u32();
			if (!r.ok_and_done() || !book.written(index, bytes))
				return protocol_error(fd,
						      "WRTN of a buffer the sender does not hold");
			if ((ec = write_all(STDOUT_FILENO, buffers[index].data(), bytes)))
				return fail(fd, "receiver", "stdout", ec);
			t.bytes += bytes;
			t.messages++;
			progress.update(t.bytes);
			book.grant(index);
			wire::Writer g(wire::Type::Grant);
			g.u32(index);
			if ((ec = send_message(fd, g)))
				return fail(fd, "receiver", "send to " + t.peer, ec);
			continue;
		}
		if (got.bytes && r.is(wire::Type::End)) {
			uint64_t total = r.u64();
			if (!r.ok_and_done())
				return protocol_error(fd, "malformed END_ message");
			if (total != t.bytes)
				return protocol_error(fd,
						      "the sender wrote " + std::to_string(total) +
							      " bytes, " + std::to_string(t.bytes) +
							      " were announced");
			/* No RDMA WRITE can reach the buffers after this. */
			std::error_code first;
			for (auto &reg : regs)
				if (auto d = reg.deregister(); !d && !first)
					first = d.error();
			if (first)
				return fail(fd, "receiver", "deregister", first);
			return 0;
		}
		return unexpected(fd, r, got.bytes, "the end of the stream");
	}
}

struct RemoteBuffer {
	uint32_t length = 0;
	std::vector<smbdirect_buffer_descriptor_v1> desc;
};

class RdmaSender {
    public:
	RdmaSender(int fd, Transfer &t) : fd_(fd), t_(t)
	{
	}

	/* Handles one control message from the receiver; non-zero exit code on error. */
	int handle(const std::string &waiting_for)
	{
		Received got;
		std::error_code ec = receive_checked(fd_, ctl_, got);
		if (ec)
			return fail(fd_, "sender", "receive from " + t_.peer, ec);
		wire::Reader r(ctl_);
		if (got.bytes && r.is(wire::Type::Buffer)) {
			uint32_t index = r.u32(), length = r.u32(), count = r.u32();
			auto desc = r.descriptors(count);
			if (!r.ok_and_done() || index >= 64 || index != remote_.size() || !length ||
			    (!remote_.empty() && length != remote_[0].length) || desc.empty())
				return protocol_error(fd_, "malformed BUFR message");
			remote_.push_back({ length, std::move(desc) });
			granted_.push_back(index);
			return 0;
		}
		if (got.bytes && r.is(wire::Type::Grant)) {
			uint32_t index = r.u32();
			if (!r.ok_and_done() || index >= remote_.size())
				return protocol_error(fd_, "GRNT of an unknown buffer");
			granted_.push_back(index);
			return 0;
		}
		return unexpected(fd_, r, got.bytes, waiting_for);
	}

	int run(Progress &progress)
	{
		int rc;
		while (remote_.empty())
			if ((rc = handle("the receiver's buffers")))
				return rc;
		uint32_t chunk = std::min(remote_[0].length, t_.params.max_read_write_size);
		t_.buffer_size = remote_[0].length;
		Mapping local;
		std::error_code ec = local.map(chunk);
		if (ec)
			return fail(fd_, "sender", "buffer of " + format_bytes(chunk), ec);

		for (;;) {
			size_t n;
			if ((ec = read_some(STDIN_FILENO, local.data(), chunk, n)))
				return fail(fd_, "sender", "stdin", ec);
			if (n == 0)
				return 0;
			while (message_waiting(fd_))
				if ((rc = handle("a buffer")))
					return rc;
			while (granted_.empty())
				if ((rc = handle("a buffer")))
					return rc;
			uint32_t index = granted_.front();
			granted_.pop_front();
			const RemoteBuffer &b = remote_[index];
			iovec iov = { local.data(), n };
			ssize_t moved = smbdirect_rdma_v1_writev(
				fd_, &iov, 1, b.desc.data(), static_cast<uint32_t>(b.desc.size()));
			if (moved < 0)
				return fail(fd_, "sender", "RDMA write to " + t_.peer,
					    errno_code(moved));
			if (static_cast<size_t>(moved) != n)
				return protocol_error(fd_, "RDMA write moved " +
								   std::to_string(moved) + " of " +
								   std::to_string(n) + " bytes");
			wire::Writer w(wire::Type::Written);
			w.u32(index).u32(static_cast<uint32_t>(n));
			if ((ec = send_message(fd_, w)))
				return fail(fd_, "sender", "send to " + t_.peer, ec);
			t_.bytes += n;
			t_.messages++;
			progress.update(t_.bytes);
		}
	}

    private:
	int fd_;
	Transfer &t_;
	std::vector<uint8_t> ctl_;
	std::vector<RemoteBuffer> remote_;
	std::deque<uint32_t> granted_;
};

/* --- both ends ------------------------------------------------------------------ */

/* The sender's end: END_, then the receiver's DONE with the same count. */
int finish_sending(int fd, Transfer &t)
{
	wire::Writer w(wire::Type::End);
	w.u64(t.bytes);
	std::error_code ec = send_message(fd, w);
	if (ec)
		return fail(fd, "sender", "send to " + t.peer, ec);
	std::vector<uint8_t> ctl;
	Received got;
	for (;;) {
		if ((ec = receive_checked(fd, ctl, got)))
			return fail(fd, "sender", "receive from " + t.peer, ec);
		wire::Reader r(ctl);
		/* Grants still on their way are of no use now. */
		if (got.bytes && (r.is(wire::Type::Grant) || r.is(wire::Type::Buffer)))
			continue;
		if (got.bytes && r.is(wire::Type::Done)) {
			uint64_t total = r.u64();
			if (!r.ok_and_done() || total != t.bytes)
				return protocol_error(
					fd, "the receiver confirmed " + std::to_string(total) +
						    " of " + std::to_string(t.bytes) + " bytes");
			return 0;
		}
		return unexpected(fd, r, got.bytes, "the receiver's confirmation");
	}
}

int finish_receiving(int fd, Transfer &t)
{
	wire::Writer w(wire::Type::Done);
	w.u64(t.bytes);
	std::error_code ec = send_message(fd, w);
	if (ec)
		return fail(fd, "receiver", "send to " + t.peer, ec);
	return 0;
}

/* Connector: HELO, then REDY. Listener: checks HELO against its own settings. */
int handshake(int fd, const Config &cfg, const std::string &peer)
{
	std::vector<uint8_t> ctl;
	Received got;
	std::error_code ec;

	if (!cfg.listen) {
		wire::Writer w(wire::Type::Hello);
		w.u16(wire::version).u8(cfg.rdma).u8(cfg.sending);
		if ((ec = send_message(fd, w)))
			return fail(fd, "client", "send to " + peer, ec);
		if ((ec = receive_checked(fd, ctl, got)))
			return fail(fd, "client", "receive from " + peer, ec);
		wire::Reader r(ctl);
		if (got.bytes && r.is(wire::Type::Ready) && r.ok_and_done())
			return 0;
		return unexpected(fd, r, got.bytes, "the listener's answer");
	}
	if ((ec = receive_checked(fd, ctl, got)))
		return fail(fd, "listener", "receive from " + peer, ec);
	wire::Reader r(ctl);
	if (!got.bytes || !r.is(wire::Type::Hello))
		return unexpected(fd, r, got.bytes, "the client's hello");
	uint16_t version = r.u16();
	bool rdma = r.u8(), peer_sends = r.u8();
	if (!r.ok_and_done() || version != wire::version)
		return protocol_error(fd, "not a smbdirect cat client of version 1");
	std::string why;
	if (rdma != cfg.rdma)
		why = "one end uses --rdma and the other does not";
	else if (peer_sends == cfg.sending)
		why = cfg.sending ? "both ends would send: use --recv on one of them"
				  : "both ends would receive: use --send on one of them";
	if (!why.empty()) {
		print_message(cmd, why);
		send_error_message(fd, why);
		return exit_error;
	}
	if ((ec = send_message(fd, wire::Type::Ready)))
		return fail(fd, "listener", "send to " + peer, ec);
	return 0;
}

void print_summary(const Config &cfg, const Transfer &t)
{
	double secs = t.end - t.start;
	const char *mode = cfg.rdma ? "rdma" : "messages";
	if (cfg.json) {
		JsonWriter j;
		j.begin_object()
			.member("role", cfg.sending ? "sender" : "receiver")
			.member("mode", mode)
			.member("peer", t.peer)
			.member("transport", smbdirect_transport_name(t.params.transport))
			.member("bytes", t.bytes)
			.member("seconds", secs, 6)
			.key("mib_per_s")
			.number(mib_per_second(t.bytes, secs))
			.key("gbit_per_s")
			.number(gbit_per_second(t.bytes, secs))
			.member(cfg.rdma ? "rdma_writes" : "messages", t.messages);
		if (cfg.rdma)
			j.member("buffers", cfg.buffers).member("buffer_size", t.buffer_size);
		j.end_object();
		std::fprintf(stderr, "%s\n", j.str().c_str());
		return;
	}
	std::fprintf(stderr,
		     "smbdirect cat: %s %llu bytes (%s) in %.3f s, %s, %.3f Gbit/s, %llu %s, "
		     "%s, over %s\n",
		     cfg.sending ? "sent" : "received", static_cast<unsigned long long>(t.bytes),
		     format_bytes(t.bytes).c_str(), secs,
		     format_rate(secs > 0 ? static_cast<double>(t.bytes) / secs : 0).c_str(),
		     gbit_per_second(t.bytes, secs), static_cast<unsigned long long>(t.messages),
		     cfg.rdma ? "RDMA writes" : "messages", t.peer.c_str(),
		     smbdirect_transport_name(t.params.transport));
}

int transfer(int fd, const Config &cfg, Transfer &t)
{
	int rc = handshake(fd, cfg, t.peer);
	if (rc)
		return rc;
	if (!connection_parameters(cmd, fd, t.params)) {
		send_error_message(fd, "cannot read the connection's parameters");
		return exit_error;
	}
	if (cfg.verbose)
		print_message(cmd, std::string("connected to ") + t.peer + " over " +
					   smbdirect_transport_name(t.params.transport) + ", " +
					   (cfg.sending ? "sending" : "receiving") +
					   (cfg.rdma ? " by RDMA write" : " messages"));
	Progress progress(cfg.progress, isatty(STDERR_FILENO),
			  cfg.sending ? "smbdirect cat: sent" : "smbdirect cat: received");
	t.start = now_seconds();
	if (cfg.sending) {
		if (cfg.rdma) {
			RdmaSender s(fd, t);
			rc = s.run(progress);
		} else {
			rc = send_messages(fd, cfg, t, progress);
		}
		if (!rc)
			rc = finish_sending(fd, t);
	} else {
		rc = cfg.rdma ? receive_rdma(fd, cfg, t, progress)
			      : receive_messages(fd, t, progress);
		if (!rc)
			rc = finish_receiving(fd, t);
	}
	t.end = now_seconds();
	progress.finish(t.bytes);
	if (!rc && (cfg.verbose || cfg.json))
		print_summary(cfg, t);
	return rc;
}

bool parse_config(const ParsedArgs &args, Config &cfg, int &rc)
{
	cfg.listen = args.has("listen");
	cfg.rdma = args.has("rdma");
	cfg.verbose = args.has("verbose");
	cfg.json = args.has("json");
	cfg.progress = args.has("progress") || isatty(STDERR_FILENO);
	if (args.has("send") && args.has("recv")) {
		rc = usage_error(cmd, "--send and --recv exclude each other");
		return false;
	}
	cfg.sending = args.has("send") || (!args.has("recv") && !cfg.listen);
	if (auto b = args.value("block")) {
		auto v = parse_size(*b);
		if (!v || *v < 4096 || *v > 256 * 1024 * 1024) {
			rc = usage_error(cmd, "--block '" + *b + "' is not a size from 4K to 256M");
			return false;
		}
		cfg.block = *v;
	}
	if (auto b = args.value("buffers")) {
		auto v = parse_uint(*b, 2, 64);
		if (!v) {
			rc = usage_error(cmd,
					 "--buffers '" + *b + "' is not a number from 2 to 64");
			return false;
		}
		cfg.buffers = static_cast<uint32_t>(*v);
	}
	if (!parse_settings(cmd, args, cfg.settings, rc))
		return false;
	const auto &pos = args.positionals;
	if (cfg.listen ? pos.empty() || pos.size() > 2 : pos.size() != 2) {
		rc = usage_error(cmd, cfg.listen ? "-l needs [ADDR] PORT" : "expected ADDR PORT");
		return false;
	}
	if (!parse_endpoint(cmd, pos.size() == 2 ? pos[0] : "", pos.back(), cfg.ep)) {
		rc = exit_usage;
		return false;
	}
	return true;
}

} // namespace

int sd_cmd_cat(int argc, char **argv)
{
	ParsedArgs args;
	Config cfg;
	int rc;

	if (!parse_command_line(cmd, argc, argv, specs, help, args, rc))
		return rc;
	if (!parse_config(args, cfg, rc))
		return rc;
	if (!module_available(cmd))
		return exit_error;
	/* A reader of our stdout that goes away is an error to report, not a signal. */
	std::signal(SIGPIPE, SIG_IGN);

	Transfer t;
	Socket conn;
	if (cfg.listen) {
		Socket listener = listen_endpoint(cmd, cfg.ep, SOCK_SEQPACKET, 1, cfg.settings);
		if (!listener)
			return exit_error;
		if (cfg.verbose)
			print_message(cmd, "listening on " + cfg.ep.text);
		sockaddr_storage peer{};
		socklen_t len = sizeof(peer);
		int fd = smbdirect_accept(listener.fd(), reinterpret_cast<sockaddr *>(&peer), &len,
					  SOCK_CLOEXEC);
		if (fd < 0) {
			print_error(cmd, "accept on " + cfg.ep.text, errno_code(fd));
			return exit_error;
		}
		conn.reset(fd);
		t.peer = format_endpoint(reinterpret_cast<sockaddr *>(&peer));
	} else {
		conn = connect_endpoint(cmd, cfg.ep, SOCK_SEQPACKET, cfg.settings);
		if (!conn)
			return exit_error;
		t.peer = cfg.ep.text;
	}
	return transfer(conn.fd(), cfg, t);
}
