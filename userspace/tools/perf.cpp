// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smbdirect perf: throughput and latency over an SMB-Direct connection, as
 * perftest measures the verbs underneath (ib_send_bw, ib_send_lat,
 * ib_read_bw, ib_write_bw):
 *   send      the client sends SIZE-byte messages for --time; the server
 *             counts them (SOCK_SEQPACKET, one message per sendmsg)
 *   latency   ping-pong of SIZE-byte messages; one-way latency = half the
 *             round trip, as perftest's t_avg
 *   read      the server registers SIZE bytes (PEER_READ); the client
 *             RDMA-reads them, keeping --depth transfers in flight on the
 *             asynchronous interface (sendmsg SMBDIRECT_CMSG_RDMA, the
 *             completions reaped from the error queue), or with --api v1
 *             the RDMA_READV ioctl, one call after the other
 *   write     the same with PEER_WRITE and RDMA WRITE (RDMA_WRITEV)
 *   register  the client registers and deregisters SIZE bytes of its own
 *             (no data moves): --api v1 REGISTER + DEREGISTER, async
 *             REGISTER + DEREGISTER_ASYNC and its completion reaped
 * The first operations are untimed (warm-up) and check the data: read
 * compares what it read with the server's pattern, write has the server
 * compare its buffer at the end, send and latency compare counts and sizes.
 */
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <poll.h>
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

/*
 * With SMBDIRECT_PERF_MARKS=1 in the environment the client brackets its
 * measured operations with the marks of the bench's instruction counter
 * (tests/bench/plugin/sdcount.c, a QEMU TCG plugin): "mov $0x5344xxxx,%eax;
 * cpuid", label 16. Outside QEMU with that plugin a CPUID of an unknown
 * leaf is harmless; other architectures have no marks.
 */
bool marks_wanted()
{
	const char *v = std::getenv("SMBDIRECT_PERF_MARKS");
	return v && std::strcmp(v, "1") == 0;
}

void mark(bool stop)
{
#if defined(__x86_64__) || defined(__i386__)
	static const bool wanted = marks_wanted();
	if (!wanted)
		return;
	if (stop)
		asm volatile("mov $0x53440021, %%eax\n\tcpuid" ::
				     : "eax", "ebx", "ecx", "edx", "memory");
	else
		asm volatile("mov $0x53440020, %%eax\n\tcpuid" ::
				     : "eax", "ebx", "ecx", "edx", "memory");
#else
	(void)stop;
#endif
}

constexpr std::string_view cmd = "perf";

constexpr OptionSpec specs[] = {
	{ "listen", 'l', false }, { "once", 0, false },	     { "test", 't', true },
	{ "size", 's', true },	  { "time", 'D', true },     { "iters", 'n', true },
	{ "json", 'j', false },	  { "verbose", 'v', false }, { "set", 'o', true },
	{ "depth", 'd', true },	  { "api", 0, true },
};

constexpr std::string_view help =
	"Usage: smbdirect perf -l [--once] [-v] [ADDR] PORT\n"
	"       smbdirect perf [--test TEST] [--size SIZE] [--time SECONDS | --iters N]\n"
	"                      [--depth N] [--api API] [--json] ADDR PORT\n"
	"\n"
	"Measures throughput and latency against a `smbdirect perf -l` server.\n"
	"\n"
	"  -l, --listen       serve clients on [ADDR] PORT, one after the other, until\n"
	"                     killed (default: all addresses)\n"
	"      --once         with -l: serve one client and exit with its result\n"
	"  -t, --test TEST    send      SIZE-byte messages for the time (default)\n"
	"                     latency   message ping-pong (one-way = round trip / 2)\n"
	"                     read      RDMA READ of a buffer the server registered\n"
	"                     write     RDMA WRITE into a buffer the server registered\n"
	"                     register  REGISTER + DEREGISTER of a local buffer\n"
	"  -s, --size SIZE    bytes per message (its 4-byte tag included) or per RDMA\n"
	"                     transfer (default 1M; 64 for latency); 64K, 1M, 8MiB...\n"
	"  -d, --depth N      read, write: transfers kept in flight (1..64, default 1)\n"
	"      --api API      read, write: async (default: sendmsg SMBDIRECT_CMSG_RDMA,\n"
	"                     completions from the error queue) or v1 (the blocking\n"
	"                     RDMA_READV/WRITEV ioctls; depth 1 only)\n"
	"                     register: v1 (default: REGISTER + DEREGISTER) or async\n"
	"                     (DEREGISTER_ASYNC, its completion reaped)\n"
	"  -D, --time SECS    how long to measure (default 5)\n"
	"  -n, --iters N      measure N operations instead\n"
	"  -o, --set NAME=VALUE  a SOL_SMBDIRECT option before connect/listen (repeatable):\n"
	"                     receive_credit_max, send_credit_target, max_send_size,\n"
	"                     max_receive_size, max_fragmented_size, max_read_write_size,\n"
	"                     keepalive_interval\n"
	"  -j, --json         one JSON object (keys in smbdirect-perf(8))\n"
	"  -v, --verbose      server: say when listening and what each client did\n"
	"  -h, --help         this text\n";

enum class Test : uint32_t {
	Send = 1,
	Latency = 2,
	Read = 3,
	Write = 4,
	Register = 5
};

struct TestName {
	std::string_view name;
	Test test;
};
constexpr TestName test_names[] = {
	{ "send", Test::Send },	  { "latency", Test::Latency },	  { "read", Test::Read },
	{ "write", Test::Write }, { "register", Test::Register },
};

std::string_view name_of(Test t)
{
	for (const auto &n : test_names)
		if (n.test == t)
			return n.name;
	return "?";
}

/* Untimed operations before the measurement. */
constexpr int warmup = 3;

/* A pattern of 64-bit words that differs per word and per seed. */
uint64_t pattern(size_t word, unsigned seed)
{
	return (word + 1) * 0x9e3779b97f4a7c15ULL ^ static_cast<uint64_t>(seed) << 56;
}

void fill(uint8_t *p, size_t size, unsigned seed)
{
	for (size_t i = 0; i < size / 8; i++) {
		uint64_t v = pattern(i, seed);
		std::memcpy(p + i * 8, &v, 8);
	}
}

bool check(const uint8_t *p, size_t size, unsigned seed)
{
	for (size_t i = 0; i < size / 8; i++) {
		uint64_t v;
		std::memcpy(&v, p + i * 8, 8);
		if (v != pattern(i, seed))
			return false;
	}
	return true;
}

constexpr unsigned read_seed = 0x52, write_seed = 0x57;

/* "peer: text" for ERRR, else a description of what came instead. */
std::string describe_unexpected(const wire::Reader &r, size_t bytes, std::string_view waiting)
{
	if (!bytes)
		return "the connection ended while waiting for " + std::string(waiting);
	if (r.is(wire::Type::Error)) {
		wire::Reader copy = r;
		return "peer: " + copy.rest_text();
	}
	return "protocol error: " + wire::type_name(r.type()) + " while waiting for " +
	       std::string(waiting);
}

/* --- server ------------------------------------------------------------------- */

struct Session {
	int fd;
	std::string peer;
	bool verbose;
};

/* One client: returns exit_ok or exit_error (printed). */
int serve_client(const Session &s)
{
	std::vector<uint8_t> ctl;
	Received got;
	std::error_code ec = receive_control(s.fd, ctl, got);
	auto failed = [&](std::string_view object, std::error_code e) {
		print_error(cmd, s.peer + ": " + std::string(object), e);
		send_error_message(s.fd, "server: " + std::string(object) + ": " + e.message());
		return exit_error;
	};
	auto refuse = [&](const std::string &why) {
		print_message(cmd, s.peer + ": " + why);
		send_error_message(s.fd, why);
		return exit_error;
	};
	if (ec)
		return failed("receive", ec);
	wire::Reader hello(ctl);
	if (!got.bytes || got.truncated || !hello.is(wire::Type::PerfHello))
		return refuse(describe_unexpected(hello, got.bytes, "a perf hello"));
	uint16_t version = hello.u16();
	Test test = static_cast<Test>(hello.u32());
	uint64_t size = hello.u64();
	if (!hello.ok_and_done() || version != wire::version || name_of(test) == "?")
		return refuse("not a smbdirect perf client of version 1");

	smbdirect_params p{};
	if (int rc = smbdirect_connection_get_parameters(s.fd, &p); rc < 0)
		return failed("connection parameters", errno_code(rc));
	bool rdma = test == Test::Read || test == Test::Write;
	if (rdma && (size > p.max_read_write_size || size > SMBDIRECT_REG_MAX_BYTES || size < 8))
		return refuse("size " + std::to_string(size) + " is not within 8 and " +
			      std::to_string(std::min<uint64_t>(p.max_read_write_size,
								SMBDIRECT_REG_MAX_BYTES)));

	Mapping buf;
	Registration reg;
	wire::Writer ready(wire::Type::PerfReady);
	if (rdma) {
		if ((ec = buf.map(size)))
			return failed("buffer", ec);
		if (test == Test::Read)
			fill(buf.data(), size, read_seed);
		auto r = Registration::create(s.fd,
					      std::as_writable_bytes(std::span(buf.data(), size)),
					      test == Test::Read ? SMBDIRECT_ACCESS_PEER_READ
								 : SMBDIRECT_ACCESS_PEER_WRITE);
		if (!r)
			return failed("register " + format_bytes(size), r.error());
		reg = std::move(*r);
	}
	ready.u32(static_cast<uint32_t>(reg.descriptors().size())).descriptors(reg.descriptors());
	if ((ec = send_message(s.fd, ready)))
		return failed("send", ec);

	/* Messages of any size up to our limit: send and latency data, then END_. */
	std::vector<uint8_t> msg(
		std::max<size_t>(p.max_fragmented_receive_size, wire::max_control_size));
	uint64_t messages = 0, bytes = 0;
	for (;;) {
		if ((ec = receive_into(s.fd, msg, got)))
			return failed("receive", ec);
		if (got.truncated)
			return refuse("protocol error: a message larger than max_fragmented_size");
		wire::Reader r(std::span<const uint8_t>(msg.data(), got.bytes));
		if (got.bytes && r.is(wire::Type::Data) &&
		    (test == Test::Send || test == Test::Latency)) {
			messages++;
			bytes += got.bytes;
			if (test == Test::Latency &&
			    (ec = send_message(
				     s.fd, wire::Type::Data,
				     std::span<const uint8_t>(msg.data() + wire::header_size,
							      got.bytes - wire::header_size))))
				return failed("send", ec);
			continue;
		}
		if (got.bytes && r.is(wire::Type::End)) {
			uint64_t sent = r.u64();
			if (!r.ok_and_done())
				return refuse("protocol error: malformed END_");
			if ((test == Test::Send || test == Test::Latency) && sent != messages)
				return refuse("the client sent " + std::to_string(sent) +
					      " messages, " + std::to_string(messages) +
					      " arrived");
			break;
		}
		return refuse(describe_unexpected(r, got.bytes, "data or the end"));
	}
	/* The client's writes are over once it sent END_ (RC ordering). */
	if (reg) {
		if (auto d = reg.deregister(); !d)
			return failed("deregister", d.error());
	}
	bool verified = test != Test::Write || check(buf.data(), size, write_seed);
	wire::Writer result(wire::Type::PerfResult);
	result.u64(messages).u64(bytes).u8(verified);
	if ((ec = send_message(s.fd, result)))
		return failed("send", ec);
	if (s.verbose)
		print_message(cmd, s.peer + ": " + std::string(name_of(test)) + " " +
					   std::to_string(size) + " bytes, " +
					   std::to_string(messages) + " messages, " +
					   (verified ? "data ok" : "data check FAILED"));
	/* Wait for the client to close: our close must not race its last read. */
	(void)receive_control(s.fd, ctl, got);
	return verified ? exit_ok : exit_error;
}

int serve(const Endpoint &ep, bool once, bool verbose, const std::vector<OptionSetting> &settings)
{
	Socket listener = listen_endpoint(cmd, ep, SOCK_SEQPACKET, 8, settings);
	if (!listener)
		return exit_error;
	if (verbose)
		print_message(cmd, "listening on " + ep.text);
	for (;;) {
		sockaddr_storage peer{};
		socklen_t len = sizeof(peer);
		int fd = smbdirect_accept(listener.fd(), reinterpret_cast<sockaddr *>(&peer), &len,
					  SOCK_CLOEXEC);
		if (fd < 0) {
			print_error(cmd, "accept on " + ep.text, errno_code(fd));
			if (once || fd == -EBADF || fd == -EINVAL || fd == -ENOTSOCK)
				return exit_error;
			continue;
		}
		Socket conn(fd);
		int rc = serve_client(
			{ fd, format_endpoint(reinterpret_cast<sockaddr *>(&peer)), verbose });
		if (once)
			return rc;
	}
}

/* --- client ------------------------------------------------------------------- */

enum class Api {
	Async,
	V1
};

std::string_view api_name(Api a)
{
	switch (a) {
	case Api::Async:
		return "async";
	case Api::V1:
		return "v1";
	}
	return "?";
}

struct Result {
	Test test;
	Api api = Api::Async;
	uint32_t depth = 1;
	uint64_t size = 0;
	uint64_t ops = 0;
	double seconds = 0;
	std::vector<double> samples_us; /* per operation; latency: one-way */
	bool verified = true;
	std::string peer;
	smbdirect_params params{};
};

struct Limits {
	double seconds;
	uint64_t iters; /* 0: by time */
};

class Client {
    public:
	Client(int fd, Result &r, const Limits &l) : fd_(fd), r_(r), limits_(l)
	{
	}

	int run()
	{
		if (!connection_parameters(cmd, fd_, r_.params))
			return exit_error;
		if (int rc = check_size(); rc)
			return rc;
		wire::Writer hello(wire::Type::PerfHello);
		hello.u16(wire::version).u32(static_cast<uint32_t>(r_.test)).u64(r_.size);
		std::error_code ec = send_message(fd_, hello);
		if (ec)
			return failed("send to " + r_.peer, ec);
		Received got;
		if ((ec = receive_control(fd_, ctl_, got)))
			return failed("receive from " + r_.peer, ec);
		wire::Reader ready(ctl_);
		if (!got.bytes || !ready.is(wire::Type::PerfReady))
			return message(
				describe_unexpected(ready, got.bytes, "the server's answer"));
		desc_ = ready.descriptors(ready.u32());
		if (!ready.ok_and_done())
			return message("protocol error: malformed PRDY");

		int rc;
		switch (r_.test) {
		case Test::Send:
			rc = send_test();
			break;
		case Test::Latency:
			rc = latency_test();
			break;
		case Test::Read:
		case Test::Write:
			rc = r_.api == Api::V1 ? rdma_test() : rdma_async_test();
			break;
		case Test::Register:
			rc = register_test();
			break;
		default:
			rc = exit_error;
		}
		return rc ? rc : finish();
	}

    private:
	int failed(const std::string &object, std::error_code ec)
	{
		print_error(cmd, object, ec);
		return exit_error;
	}
	int message(const std::string &m)
	{
		print_message(cmd, m);
		return exit_error;
	}

	int check_size()
	{
		const auto &p = r_.params;
		switch (r_.test) {
		case Test::Send:
		case Test::Latency:
			if (r_.size < wire::header_size ||
			    r_.size > std::min(p.max_fragmented_send_size,
					       p.max_fragmented_receive_size))
				return message(
					"--size " + std::to_string(r_.size) +
					" is not within 4 and the connection's "
					"max_fragmented_size " +
					std::to_string(std::min(p.max_fragmented_send_size,
								p.max_fragmented_receive_size)));
			break;
		case Test::Read:
		case Test::Write:
			if (r_.size < 8 || r_.size > p.max_read_write_size)
				return message("--size " + std::to_string(r_.size) +
					       " is not within 8 and the connection's "
					       "max_read_write_size " +
					       std::to_string(p.max_read_write_size));
			break;
		default:
			break;
		}
		return 0;
	}

	bool more(uint64_t done, double start) const
	{
		return limits_.iters ? done < limits_.iters
				     : now_seconds() - start < limits_.seconds;
	}

	int send_test()
	{
		std::vector<uint8_t> payload(r_.size - wire::header_size);
		mark(false);
		double start = send_start_ = now_seconds();
		while (more(r_.ops, start)) {
			std::error_code ec = send_message(fd_, wire::Type::Data, payload);
			if (ec)
				return failed("send to " + r_.peer, ec);
			r_.ops++;
		}
		return 0;
	}

	int latency_test()
	{
		std::vector<uint8_t> payload(r_.size - wire::header_size);
		std::vector<uint8_t> echo(r_.size + 1);
		double start = 0;
		for (int64_t i = -warmup;; i++) {
			if (i == 0) {
				mark(false);
				start = now_seconds();
			}
			if (i >= 0 && !more(r_.ops, start))
				break;
			double t0 = now_seconds();
			std::error_code ec = send_message(fd_, wire::Type::Data, payload);
			if (ec)
				return failed("send to " + r_.peer, ec);
			Received got;
			if ((ec = receive_into(fd_, echo, got)))
				return failed("receive from " + r_.peer, ec);
			wire::Reader r(std::span<const uint8_t>(echo.data(), got.bytes));
			if (!got.bytes || got.truncated || !r.is(wire::Type::Data))
				return message(describe_unexpected(r, got.bytes, "the echo"));
			if (got.bytes != r_.size)
				r_.verified = false;
			double t1 = now_seconds();
			sent_++;
			if (i >= 0) {
				r_.ops++;
				r_.samples_us.push_back((t1 - t0) / 2 * 1e6);
			}
		}
		r_.seconds = now_seconds() - start;
		mark(true);
		return 0;
	}

	int rdma_test()
	{
		bool reading = r_.test == Test::Read;
		Mapping buf;
		std::error_code ec = buf.map(r_.size);
		if (ec)
			return failed("buffer", ec);
		if (!reading)
			fill(buf.data(), r_.size, write_seed);
		iovec iov = { buf.data(), r_.size };
		double start = 0;
		for (int64_t i = -warmup;; i++) {
			if (i == 0) {
				if (reading)
					r_.verified = check(buf.data(), r_.size, read_seed);
				mark(false);
				start = now_seconds();
			}
			if (i >= 0 && !more(r_.ops, start))
				break;
			double t0 = now_seconds();
			ssize_t n = reading ? smbdirect_rdma_v1_readv(
						      fd_, &iov, 1, desc_.data(),
						      static_cast<uint32_t>(desc_.size()))
					    : smbdirect_rdma_v1_writev(
						      fd_, &iov, 1, desc_.data(),
						      static_cast<uint32_t>(desc_.size()));
			double t1 = now_seconds();
			if (n < 0)
				return failed(std::string(reading ? "RDMA read from "
								  : "RDMA write to ") +
						      r_.peer,
					      errno_code(n));
			if (static_cast<uint64_t>(n) != r_.size)
				return message("RDMA moved " + std::to_string(n) + " of " +
					       std::to_string(r_.size) + " bytes");
			if (i >= 0) {
				r_.ops++;
				r_.samples_us.push_back((t1 - t0) * 1e6);
			}
		}
		r_.seconds = now_seconds() - start;
		mark(true);
		return 0;
	}

	/*
	 * --depth transfers in flight on the asynchronous interface: each
	 * with a buffer of its own, submitted (several per sendmsg) as soon as
	 * a slot is free, reaped from the error queue when poll says so. A
	 * sample is one transfer's time from submission to reaping; the run's
	 * time ends with the last completion.
	 */
	int rdma_async_test()
	{
		const bool reading = r_.test == Test::Read;
		const uint32_t depth = r_.depth;
		std::vector<Mapping> bufs(depth);
		std::vector<iovec> iovs(depth);
		for (uint32_t i = 0; i < depth; i++) {
			if (std::error_code ec = bufs[i].map(r_.size))
				return failed("buffer", ec);
			if (!reading)
				fill(bufs[i].data(), r_.size, write_seed);
			iovs[i] = { bufs[i].data(), r_.size };
		}
		std::vector<double> submitted(depth, 0);
		std::vector<uint32_t> free_slots;
		for (uint32_t i = depth; i-- > 0;)
			free_slots.push_back(i);
		uint64_t issued = 0, done = 0;
		/* The first depth transfers (at least warmup) are untimed: they check the data. */
		const uint64_t untimed = std::max<uint64_t>(warmup, depth);
		double start = 0;
		bool measuring = false, stopping = false;
		std::vector<smbdirect_rdma_args> args(depth);
		smbdirect_rdma_completion c[64];
		for (;;) {
			/* Fill the free slots, one sendmsg for all of them. */
			unsigned n = 0;
			while (!free_slots.empty() && !stopping &&
			       !(issued >= untimed && !measuring)) {
				uint32_t slot = free_slots.back();
				free_slots.pop_back();
				if (reading)
					smbdirect_rdma_prep_read(
						&args[n], slot, &iovs[slot], 1, desc_.data(),
						static_cast<uint32_t>(desc_.size()));
				else
					smbdirect_rdma_prep_write(
						&args[n], slot, &iovs[slot], 1, desc_.data(),
						static_cast<uint32_t>(desc_.size()));
				submitted[slot] = now_seconds();
				n++;
				issued++;
				if (measuring && !more(issued, start))
					stopping = true;
			}
			if (n) {
				int rc = smbdirect_rdma_submit(fd_, args.data(), n, 0);
				if (rc < 0)
					return failed(std::string("RDMA submission to ") + r_.peer,
						      errno_code(rc));
			}
			if (done == issued) {
				if (stopping)
					break;
				if (!measuring) {
					/* Warm-up over: every buffer was used once. */
					if (reading)
						for (uint32_t i = 0; i < depth; i++)
							r_.verified &= check(bufs[i].data(),
									     r_.size, read_seed);
					measuring = true;
					issued = done = 0;
					mark(false);
					start = now_seconds();
				}
				continue;
			}
			pollfd p = { fd_, 0, 0 };
			if (::poll(&p, 1, 30000) == 0)
				return message("no RDMA completion for 30 s");
			int got = smbdirect_rdma_reap(fd_, c, 64);
			if (got == -EAGAIN || got == -EINTR)
				continue;
			if (got < 0)
				return failed("reaping completions", errno_code(got));
			double t = now_seconds();
			for (int i = 0; i < got; i++) {
				if (c[i].cookie >= depth)
					return message("a completion for cookie " +
						       std::to_string(c[i].cookie) +
						       " that was never submitted");
				if (c[i].status < 0)
					return failed(std::string(reading ? "RDMA read from "
									  : "RDMA write to ") +
							      r_.peer,
						      errno_code(c[i].status));
				if (c[i].bytes != r_.size)
					return message("RDMA moved " + std::to_string(c[i].bytes) +
						       " of " + std::to_string(r_.size) + " bytes");
				uint32_t slot = static_cast<uint32_t>(c[i].cookie);
				if (measuring) {
					r_.ops++;
					r_.samples_us.push_back((t - submitted[slot]) * 1e6);
				}
				free_slots.push_back(slot);
				done++;
			}
		}
		r_.seconds = now_seconds() - start;
		mark(true);
		return 0;
	}

	int register_test()
	{
		Mapping buf;
		std::error_code ec = buf.map(r_.size);
		if (ec)
			return failed("buffer", ec);
		double start = 0;
		for (int64_t i = -warmup;; i++) {
			if (i == 0) {
				mark(false);
				start = now_seconds();
			}
			if (i >= 0 && !more(r_.ops, start))
				break;
			double t0 = now_seconds();
			auto reg = Registration::create(
				fd_, std::as_writable_bytes(std::span(buf.data(), r_.size)),
				SMBDIRECT_ACCESS_PEER_WRITE);
			if (!reg)
				return failed("register " + format_bytes(r_.size), reg.error());
			if (r_.api == Api::V1) {
				if (auto d = reg->deregister(); !d)
					return failed("deregister", d.error());
			} else {
				/* The memory is ours again at the completion: wait for it. */
				if (auto d = reg->deregister_async(
					    static_cast<uint64_t>(i + warmup));
				    !d)
					return failed("deregister", d.error());
				smbdirect_rdma_completion c;
				for (;;) {
					int got = smbdirect_rdma_reap(fd_, &c, 1);
					if (got == 1)
						break;
					if (got < 0 && got != -EAGAIN && got != -EINTR)
						return failed("reaping the deregistration",
							      errno_code(got));
					pollfd p = { fd_, 0, 0 };
					if (::poll(&p, 1, 30000) == 0)
						return message(
							"no deregistration completion for 30 s");
				}
				if (c.status < 0 || c.cookie != static_cast<uint64_t>(i + warmup))
					return message("deregistration completed with status " +
						       std::to_string(c.status) + ", cookie " +
						       std::to_string(c.cookie));
			}
			double t1 = now_seconds();
			if (i >= 0) {
				r_.ops++;
				r_.samples_us.push_back((t1 - t0) * 1e6);
			}
		}
		r_.seconds = now_seconds() - start;
		mark(true);
		return 0;
	}

	/* END_, then the server's PRES; send's time runs until the PRES. */
	int finish()
	{
		uint64_t messages = r_.test == Test::Send ? r_.ops : sent_;
		wire::Writer end(wire::Type::End);
		end.u64(messages);
		std::error_code ec = send_message(fd_, end);
		if (ec)
			return failed("send to " + r_.peer, ec);
		Received got;
		if ((ec = receive_control(fd_, ctl_, got)))
			return failed("receive from " + r_.peer, ec);
		wire::Reader res(ctl_);
		if (!got.bytes || !res.is(wire::Type::PerfResult))
			return message(describe_unexpected(res, got.bytes, "the server's result"));
		uint64_t server_messages = res.u64();
		res.u64();
		bool server_verified = res.u8();
		if (!res.ok_and_done())
			return message("protocol error: malformed PRES");
		if (r_.test == Test::Send) {
			r_.seconds = now_seconds() - send_start_;
			mark(true);
		}
		if (server_messages != messages || !server_verified)
			r_.verified = false;
		return 0;
	}

	int fd_;
	Result &r_;
	Limits limits_;
	std::vector<uint8_t> ctl_;
	std::vector<smbdirect_buffer_descriptor_v1> desc_;
	uint64_t sent_ = 0;
	double send_start_ = 0;
};

void print_result(const Result &r, bool json)
{
	uint64_t bytes = r.ops * r.size;
	std::vector<double> samples = r.samples_us;
	LatencyStats lat = latency_stats(samples);
	bool has_latency = r.test != Test::Send;
	double ops_per_s = r.seconds > 0 ? static_cast<double>(r.ops) / r.seconds : 0;

	if (json) {
		JsonWriter j;
		j.begin_object()
			.member("test", name_of(r.test))
			.member("peer", r.peer)
			.member("transport", smbdirect_transport_name(r.params.transport))
			.member("size", r.size);
		if (r.test == Test::Read || r.test == Test::Write || r.test == Test::Register)
			j.member("api", api_name(r.api));
		if (r.test == Test::Read || r.test == Test::Write)
			j.member("depth", r.depth);
		j.member("iterations", r.ops)
			.member("seconds", r.seconds, 6)
			.member("bytes", bytes)
			.key("mib_per_s")
			.number(mib_per_second(bytes, r.seconds))
			.key("gbit_per_s")
			.number(gbit_per_second(bytes, r.seconds))
			.key("ops_per_s")
			.number(ops_per_s);
		if (has_latency) {
			j.key("latency_us").begin_object();
			j.member("min", lat.min, 2).member("avg", lat.avg, 2);
			j.member("p50", lat.p50, 2).member("p99", lat.p99, 2);
			j.member("max", lat.max, 2).end_object();
		}
		j.member("verified", r.verified).end_object();
		std::printf("%s\n", j.str().c_str());
	} else {
		bool rdma = r.test == Test::Read || r.test == Test::Write;
		std::string how = r.test == Test::Register
					  ? " (api " + std::string(api_name(r.api)) + ")"
				  : rdma ? " (api " + std::string(api_name(r.api)) + ", depth " +
						   std::to_string(r.depth) + ")"
					 : "";
		std::printf("smbdirect perf: %s%s, %llu-byte %s, %s to %s\n",
			    std::string(name_of(r.test)).c_str(), how.c_str(),
			    static_cast<unsigned long long>(r.size),
			    r.test == Test::Send || r.test == Test::Latency ? "messages"
			    : rdma					    ? "transfers"
									    : "calls",
			    smbdirect_transport_name(r.params.transport), r.peer.c_str());
		std::printf(" %-10s %-10s %-12s %-10s %-10s", "#ops", "seconds", "MiB/s", "Gbit/s",
			    "ops/s");
		if (has_latency)
			std::printf(" %-9s %-9s %-9s", "avg[us]", "p50[us]", "p99[us]");
		std::printf("\n %-10llu %-10.3f %-12.2f %-10.3f %-10.1f",
			    static_cast<unsigned long long>(r.ops), r.seconds,
			    mib_per_second(bytes, r.seconds), gbit_per_second(bytes, r.seconds),
			    ops_per_s);
		if (has_latency)
			std::printf(" %-9.2f %-9.2f %-9.2f", lat.avg, lat.p50, lat.p99);
		std::printf("\n");
		if (r.test == Test::Latency)
			std::printf(
				" latency is one-way: half the round trip, as perftest's t_avg\n");
		if (!r.verified)
			std::printf(" data check FAILED\n");
	}
	std::fflush(stdout);
}

bool parse_client(const ParsedArgs &args, Result &r, Limits &l, int &rc)
{
	r.test = Test::Send;
	if (auto t = args.value("test")) {
		bool found = false;
		for (const auto &n : test_names)
			if (n.name == *t) {
				r.test = n.test;
				found = true;
			}
		if (!found) {
			rc = usage_error(cmd,
					 "--test '" + *t +
						 "' is not send, latency, read, write or register");
			return false;
		}
	}
	r.size = r.test == Test::Latency ? 64 : 1024 * 1024;
	if (auto s = args.value("size")) {
		auto v = parse_size(*s);
		if (!v || *v == 0 || *v > SMBDIRECT_REG_MAX_BYTES) {
			rc = usage_error(cmd, "--size '" + *s + "' is not a size from 1 to 256M");
			return false;
		}
		r.size = *v;
	}
	l.seconds = 5;
	l.iters = 0;
	if (args.has("time") && args.has("iters")) {
		rc = usage_error(cmd, "--time and --iters exclude each other");
		return false;
	}
	if (auto t = args.value("time")) {
		auto v = parse_duration(*t);
		if (!v || *v <= 0 || *v > 86400) {
			rc = usage_error(cmd, "--time '" + *t + "' is not a duration");
			return false;
		}
		l.seconds = *v;
	}
	bool rdma = r.test == Test::Read || r.test == Test::Write;
	r.api = r.test == Test::Register ? Api::V1 : Api::Async;
	if (auto a = args.value("api")) {
		if (*a == "async")
			r.api = Api::Async;
		else if (*a == "v1")
			r.api = Api::V1;
		else {
			rc = usage_error(cmd, "--api '" + *a + "' is not " +
						      (r.test == Test::Register ? "v1 or async"
										: "async or v1"));
			return false;
		}
		if (!rdma && r.test != Test::Register) {
			rc = usage_error(cmd, "--api is for read, write and register");
			return false;
		}
	}
	if (auto d = args.value("depth")) {
		auto v = parse_uint(*d, 1, 64);
		if (!v) {
			rc = usage_error(cmd, "--depth '" + *d + "' is not a number from 1 to 64");
			return false;
		}
		if (!rdma || (r.api == Api::V1 && *v != 1)) {
			rc = usage_error(cmd, "--depth is for read and write on the async api");
			return false;
		}
		r.depth = static_cast<uint32_t>(*v);
	}
	if (auto n = args.value("iters")) {
		auto v = parse_uint(*n, 1, 1000000000);
		if (!v) {
			rc = usage_error(cmd, "--iters '" + *n + "' is not a number from 1");
			return false;
		}
		l.iters = *v;
	}
	return true;
}

} // namespace

int sd_cmd_perf(int argc, char **argv)
{
	ParsedArgs args;
	int rc;

	if (!parse_command_line(cmd, argc, argv, specs, help, args, rc))
		return rc;
	const auto &pos = args.positionals;
	bool listening = args.has("listen");
	if (listening ? pos.empty() || pos.size() > 2 : pos.size() != 2)
		return usage_error(cmd, listening ? "-l needs [ADDR] PORT" : "expected ADDR PORT");
	if (listening) {
		for (const char *o : { "test", "size", "time", "iters", "json", "depth", "api" })
			if (args.has(o))
				return usage_error(cmd,
						   std::string("--") + o + " is a client option");
	} else if (args.has("once")) {
		return usage_error(cmd, "--once needs -l");
	}
	Result r;
	Limits limits{};
	if (!listening && !parse_client(args, r, limits, rc))
		return rc;
	std::vector<OptionSetting> settings;
	if (!parse_settings(cmd, args, settings, rc))
		return rc;
	Endpoint ep;
	if (!parse_endpoint(cmd, pos.size() == 2 ? pos[0] : "", pos.back(), ep))
		return exit_usage;
	if (!module_available(cmd))
		return exit_error;
	std::signal(SIGPIPE, SIG_IGN);
	if (listening)
		return serve(ep, args.has("once"), args.has("verbose"), settings);

	Socket conn = connect_endpoint(cmd, ep, SOCK_SEQPACKET, settings);
	if (!conn)
		return exit_error;
	r.peer = ep.text;
	Client client(conn.fd(), r, limits);
	if ((rc = client.run()))
		return rc;
	print_result(r, args.has("json"));
	if (!r.verified) {
		print_message(cmd, "data check failed");
		return exit_error;
	}
	return exit_ok;
}
