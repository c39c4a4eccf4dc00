// SPDX-License-Identifier: GPL-2.0
/*
 * sd_tcponly: a client and a server that know only TCP (AF_INET/AF_INET6
 * stream sockets), for tests/userspace/run.sh to run under `smbdirect run`.
 * Nothing here knows SMB-Direct; what the preload does must be invisible to
 * it, except in what it reports (SO_DOMAIN of its connected socket).
 *
 *   sd_tcponly server [--once N] [--timeout S] ADDR PORT
 *   sd_tcponly client [--up BYTES] [--down BYTES] [--seed N] [--timeout S] ADDR PORT
 *   sd_tcponly evclient [--down BYTES] [--seed N] [--rounds N] [--timeout S] ADDR PORT
 *
 * The byte stream is SMB's framing over TCP (and what SOCK_STREAM on
 * AF_SMBDIRECT carries): 4-byte big-endian length, then that many bytes, at
 * most 1 MiB (the module's default largest message). The client sends a
 * request message ("up=N down=M seed=S"), N payload bytes in messages of
 * pseudo-random sizes, and reads the server's answer ("up-sha256=HEX"), then
 * M payload bytes and a last message ("down-sha256=HEX"). Payload bytes come
 * from a generator seeded with S (up) and S+1 (down): each side computes
 * the SHA-256 of what it received and of what the stream should be, and the
 * client checks both directions.
 *
 * What it uses, as TCP programs (Samba) do: non-blocking connect + poll +
 * SO_ERROR, TCP_NODELAY (set and read back), SO_KEEPALIVE, SO_RCVBUF set
 * before connect (the value read after connect must be the same: the preload
 * carries it over), getsockname/getpeername, writev/readv, FIONREAD, epoll
 * (server: accept and first read), fork per connection (server). evclient is
 * an event loop's client: its socket is registered in epoll before connect().
 *
 * Output: "key=value" lines on stdout; exit 0 only when every check passed.
 */
#include <arpa/inet.h>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string>
#include <string_view>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vector>

#include <nettle/sha2.h>

namespace {

constexpr std::size_t max_message = 1 << 20;
/* Largest message the sender makes (--max-message); at most max_message. */
std::size_t send_limit = max_message;

[[noreturn]] void die(const char *what)
{
	std::fprintf(stderr, "sd_tcponly: %s: %s\n", what, std::strerror(errno));
	std::fflush(stdout);
	std::exit(1);
}

[[noreturn]] void fail(const char *what)
{
	std::fprintf(stderr, "sd_tcponly: %s\n", what);
	std::fflush(stdout);
	std::exit(1);
}

/* xorshift64*: the same bytes on both ends from the same seed. */
class Generator {
public:
	explicit Generator(uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ULL + 1)
	{
	}
	uint64_t next()
	{
		state_ ^= state_ >> 12;
		state_ ^= state_ << 25;
		state_ ^= state_ >> 27;
		return state_ * 0x2545f4914f6cdd1dULL;
	}
	void fill(uint8_t *p, std::size_t n)
	{
		/* Byte by byte from 8-byte words: independent of how n is split. */
		for (std::size_t i = 0; i < n; i++) {
			if (!left_) {
				word_ = next();
				left_ = 8;
			}
			p[i] = static_cast<uint8_t>(word_);
			word_ >>= 8;
			left_--;
		}
	}

private:
	uint64_t state_;
	uint64_t word_ = 0;
	int left_ = 0;
};

class Sha256 {
public:
	Sha256()
	{
		sha256_init(&ctx_);
	}
	void update(const uint8_t *p, std::size_t n)
	{
		sha256_update(&ctx_, n, p);
	}
	std::string hex()
	{
		uint8_t d[SHA256_DIGEST_SIZE];
		char out[2 * SHA256_DIGEST_SIZE + 1];
		sha256_digest(&ctx_, sizeof(d), d);
		for (std::size_t i = 0; i < sizeof(d); i++)
			std::snprintf(out + 2 * i, 3, "%02x", d[i]);
		return out;
	}

private:
	struct sha256_ctx ctx_;
};

/* The SHA-256 of the first n bytes of the generator's stream. */
std::string expected_sha256(uint64_t seed, uint64_t n)
{
	Generator g(seed);
	Sha256 h;
	std::vector<uint8_t> buf(max_message);
	while (n) {
		std::size_t k = n < buf.size() ? static_cast<std::size_t>(n) : buf.size();
		g.fill(buf.data(), k);
		h.update(buf.data(), k);
		n -= k;
	}
	return h.hex();
}

std::string address_text(const struct sockaddr_storage &ss)
{
	char host[INET6_ADDRSTRLEN] = "?";
	if (ss.ss_family == AF_INET) {
		auto *sin = reinterpret_cast<const struct sockaddr_in *>(&ss);
		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		return std::string(host) + ":" + std::to_string(ntohs(sin->sin_port));
	}
	if (ss.ss_family == AF_INET6) {
		auto *sin6 = reinterpret_cast<const struct sockaddr_in6 *>(&ss);
		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		return "[" + std::string(host) + "]:" + std::to_string(ntohs(sin6->sin6_port));
	}
	return "family-" + std::to_string(ss.ss_family);
}

struct sockaddr_storage parse_address(const char *host, const char *port, socklen_t *len)
{
	struct sockaddr_storage ss = {};
	char *end;
	long p = std::strtol(port, &end, 10);
	if (*end || p < 0 || p > 65535)
		fail("bad port");
	auto *sin = reinterpret_cast<struct sockaddr_in *>(&ss);
	auto *sin6 = reinterpret_cast<struct sockaddr_in6 *>(&ss);
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(static_cast<uint16_t>(p));
		*len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(static_cast<uint16_t>(p));
		*len = sizeof(*sin6);
	} else {
		fail("bad address (numeric IPv4 or IPv6 expected)");
	}
	return ss;
}

int int_option(int fd, int level, int name, const char *what)
{
	int v = 0;
	socklen_t len = sizeof(v);
	if (getsockopt(fd, level, name, &v, &len) != 0)
		die(what);
	return v;
}

void set_int_option(int fd, int level, int name, int v, const char *what)
{
	if (setsockopt(fd, level, name, &v, sizeof(v)) != 0)
		die(what);
}

/* What both ends report about their connected socket. */
void report_socket(const char *role, int fd)
{
	struct sockaddr_storage local = {}, peer = {};
	socklen_t ll = sizeof(local), pl = sizeof(peer);
	if (getsockname(fd, reinterpret_cast<struct sockaddr *>(&local), &ll) != 0)
		die("getsockname");
	if (getpeername(fd, reinterpret_cast<struct sockaddr *>(&peer), &pl) != 0)
		die("getpeername");
	std::printf("%s domain=%d local=%s peer=%s nodelay=%d keepalive=%d protocol=%d\n", role,
		    int_option(fd, SOL_SOCKET, SO_DOMAIN, "SO_DOMAIN"),
		    address_text(local).c_str(), address_text(peer).c_str(),
		    int_option(fd, IPPROTO_TCP, TCP_NODELAY, "getsockopt TCP_NODELAY"),
		    int_option(fd, SOL_SOCKET, SO_KEEPALIVE, "getsockopt SO_KEEPALIVE"),
		    int_option(fd, SOL_SOCKET, SO_PROTOCOL, "SO_PROTOCOL"));
	std::fflush(stdout);
}

/* --- framed messages over the byte stream -------------------------------- */

/* Writes one framed message with writev (prefix and payload), whole. */
void send_message(int fd, const uint8_t *payload, std::size_t n)
{
	uint8_t prefix[4] = {static_cast<uint8_t>(n >> 24), static_cast<uint8_t>(n >> 16),
			     static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)};
	struct iovec iov[2] = {{prefix, 4}, {const_cast<uint8_t *>(payload), n}};
	struct iovec *v = iov;
	int count = 2;
	while (count) {
		ssize_t w = writev(fd, v, count);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("writev");
		auto done = static_cast<std::size_t>(w);
		while (count && done >= v->iov_len) {
			done -= v->iov_len;
			v++;
			count--;
		}
		if (count) {
			v->iov_base = static_cast<uint8_t *>(v->iov_base) + done;
			v->iov_len -= done;
		}
	}
}

void send_text(int fd, const std::string &text)
{
	send_message(fd, reinterpret_cast<const uint8_t *>(text.data()), text.size());
}

/*
 * Reads the stream into a ring buffer with readv (two segments when the
 * free space wraps) and hands out whole messages.
 */
class Reader {
public:
	explicit Reader(int fd) : fd_(fd), ring_(4 * max_message)
	{
	}
	/* The next message's payload, or false at end of stream. */
	bool next(std::vector<uint8_t> *out)
	{
		if (!fill(4))
			return false;
		uint8_t prefix[4];
		take(prefix, 4);
		std::size_t n = static_cast<std::size_t>(prefix[0]) << 24 |
				static_cast<std::size_t>(prefix[1]) << 16 |
				static_cast<std::size_t>(prefix[2]) << 8 | prefix[3];
		if (n == 0 || n > max_message)
			fail("framing: message length 0 or above 1 MiB");
		if (!fill(n))
			fail("end of stream inside a message");
		out->resize(n);
		take(out->data(), n);
		return true;
	}

private:
	bool fill(std::size_t want)
	{
		while (used_ < want) {
			std::size_t cap = ring_.size();
			std::size_t tail = (head_ + used_) % cap;
			std::size_t free_total = cap - used_;
			std::size_t first = tail + free_total <= cap ? free_total : cap - tail;
			struct iovec iov[2] = {{ring_.data() + tail, first},
					       {ring_.data(), free_total - first}};
			ssize_t r = readv(fd_, iov, iov[1].iov_len ? 2 : 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				die("readv");
			if (r == 0)
				return false;
			used_ += static_cast<std::size_t>(r);
		}
		return true;
	}
	void take(uint8_t *dst, std::size_t n)
	{
		std::size_t cap = ring_.size();
		std::size_t first = head_ + n <= cap ? n : cap - head_;
		std::memcpy(dst, ring_.data() + head_, first);
		std::memcpy(dst + first, ring_.data(), n - first);
		head_ = (head_ + n) % cap;
		used_ -= n;
	}

	int fd_;
	std::vector<uint8_t> ring_;
	std::size_t head_ = 0;
	std::size_t used_ = 0;
};

/* With SD_TCPONLY_PROGRESS set: a line on stderr per 8 MiB moved. */
void progress(const char *what, uint64_t done)
{
	static const bool on = std::getenv("SD_TCPONLY_PROGRESS") != nullptr;
	static struct timespec start;
	if (!on || done % (8 << 20) > max_message)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!start.tv_sec)
		start = now;
	std::fprintf(stderr, "sd_tcponly: %s %" PRIu64 " MiB at %.1f s\n", what, done >> 20,
		     (now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9);
}

/* Sends n generated bytes in messages of pseudo-random sizes; returns their SHA-256. */
std::string send_stream(int fd, uint64_t seed, uint64_t n)
{
	Generator data(seed), sizes(seed ^ 0x5a5a5a5a);
	Sha256 h;
	std::vector<uint8_t> buf(max_message);
	uint64_t done = 0;
	while (n) {
		std::size_t k = static_cast<std::size_t>(sizes.next() % send_limit) + 1;
		if (k > n)
			k = static_cast<std::size_t>(n);
		data.fill(buf.data(), k);
		h.update(buf.data(), k);
		send_message(fd, buf.data(), k);
		n -= k;
		done += k;
		progress("sent", done);
	}
	return h.hex();
}

/* Receives n payload bytes; returns their SHA-256. */
std::string receive_stream(Reader &r, uint64_t n)
{
	Sha256 h;
	std::vector<uint8_t> msg;
	uint64_t done = 0;
	while (n) {
		if (!r.next(&msg))
			fail("end of stream before all data arrived");
		if (msg.size() > n)
			fail("more data than announced");
		h.update(msg.data(), msg.size());
		n -= msg.size();
		done += msg.size();
		progress("received", done);
	}
	return h.hex();
}

std::string receive_text(Reader &r)
{
	std::vector<uint8_t> msg;
	if (!r.next(&msg))
		fail("end of stream instead of a message");
	return std::string(msg.begin(), msg.end());
}

/* "key=VALUE" out of "a=1 key=VALUE b=2". */
std::string field(const std::string &text, const std::string &key)
{
	std::size_t at = (" " + text).find(" " + key + "=");
	if (at == std::string::npos)
		return "";
	std::size_t start = at + key.size() + 1;
	return text.substr(start, text.find(' ', start) - start);
}

/* Waits for input with poll and says how many bytes FIONREAD sees. */
int wait_readable_fionread(int fd, int timeout_ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	int rc;
	while ((rc = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (rc < 0)
		die("poll");
	if (rc == 0)
		fail("poll: nothing to read in time");
	int queued = 0;
	if (ioctl(fd, FIONREAD, &queued) != 0)
		die("ioctl FIONREAD");
	return queued;
}

/* --- client ------------------------------------------------------------ */

int client(const char *host, const char *port, uint64_t up, uint64_t down, uint64_t seed,
	   int timeout_s)
{
	socklen_t len;
	struct sockaddr_storage ss = parse_address(host, port, &len);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, 1, "setsockopt TCP_NODELAY");
	set_int_option(fd, SOL_SOCKET, SO_KEEPALIVE, 1, "setsockopt SO_KEEPALIVE");
	set_int_option(fd, SOL_SOCKET, SO_RCVBUF, 1 << 20, "setsockopt SO_RCVBUF");
	int rcvbuf_before = int_option(fd, SOL_SOCKET, SO_RCVBUF, "getsockopt SO_RCVBUF");

	/* Non-blocking connect, as Samba's async connect does. */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		die("fcntl O_NONBLOCK");
	const char *how = "immediate";
	if (connect(fd, reinterpret_cast<struct sockaddr *>(&ss), len) != 0) {
		if (errno != EINPROGRESS)
			die("connect");
		how = "in-progress";
		struct pollfd p = {fd, POLLOUT, 0};
		int rc;
		while ((rc = poll(&p, 1, timeout_s * 1000)) < 0 && errno == EINTR)
			;
		if (rc <= 0)
			fail("connect: no POLLOUT in time");
		int err = int_option(fd, SOL_SOCKET, SO_ERROR, "getsockopt SO_ERROR");
		if (err) {
			errno = err;
			die("connect (SO_ERROR)");
		}
	}
	if (!(fcntl(fd, F_GETFL) & O_NONBLOCK))
		fail("O_NONBLOCK was lost across connect");
	if (!(fcntl(fd, F_GETFD) & FD_CLOEXEC))
		fail("FD_CLOEXEC was lost across connect");
	if (fcntl(fd, F_SETFL, fl) < 0)
		die("fcntl");
	int rcvbuf_after = int_option(fd, SOL_SOCKET, SO_RCVBUF, "getsockopt SO_RCVBUF");
	std::printf("connect=%s rcvbuf_before=%d rcvbuf_after=%d\n", how, rcvbuf_before,
		    rcvbuf_after);
	report_socket("client", fd);
	if (rcvbuf_after != rcvbuf_before)
		fail("SO_RCVBUF changed across connect");
	if (int_option(fd, IPPROTO_TCP, TCP_NODELAY, "TCP_NODELAY") != 1)
		fail("TCP_NODELAY does not read back 1");

	send_text(fd, "up=" + std::to_string(up) + " down=" + std::to_string(down) +
			      " seed=" + std::to_string(seed));
	std::string up_sent = send_stream(fd, seed, up);
	Reader r(fd);
	int queued = wait_readable_fionread(fd, timeout_s * 1000);
	std::string answer = receive_text(r);
	std::string up_received = field(answer, "up-sha256");
	std::printf("up bytes=%" PRIu64 " sent-sha256=%s server-sha256=%s fionread=%d\n", up,
		    up_sent.c_str(), up_received.c_str(), queued);
	std::string down_received = receive_stream(r, down);
	std::string down_sent = field(receive_text(r), "down-sha256");
	std::string down_expected = expected_sha256(seed + 1, down);
	std::printf("down bytes=%" PRIu64 " received-sha256=%s server-sha256=%s\n", down,
		    down_received.c_str(), down_sent.c_str());
	std::fflush(stdout);
	if (queued <= 0)
		fail("FIONREAD saw nothing although poll said readable");
	if (up_received != up_sent)
		fail("upload checksum mismatch");
	if (down_received != down_sent || down_received != down_expected)
		fail("download checksum mismatch");
	if (close(fd) != 0)
		die("close");
	std::printf("result=ok\n");
	return 0;
}

/* --- event-loop client ------------------------------------------------ */

long elapsed_ms(const struct timespec &since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since.tv_sec) * 1000 + (now.tv_nsec - since.tv_nsec) / 1000000;
}

/*
 * The next epoll event of fd's registration (whose data is tag) that has one
 * of want; fails after timeout_s. Other events of the registration (EPOLLERR,
 * EPOLLHUP of a connect that failed) are returned too.
 */
uint32_t wait_event(int ep, uint64_t tag, uint32_t want, int timeout_s, const char *what)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		long left = timeout_s * 1000L - elapsed_ms(start);
		if (left <= 0)
			fail(what);
		struct epoll_event ev = {};
		int n = epoll_wait(ep, &ev, 1, static_cast<int>(left));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("epoll_wait");
		if (n == 0)
			fail(what);
		if (ev.data.u64 != tag)
			fail("epoll: an event with data that was never registered");
		if (ev.events & (want | EPOLLERR | EPOLLHUP))
			return ev.events;
	}
}

/*
 * An event loop's connect (Boost.Asio, tevent): a non-blocking socket
 * registered in epoll (EPOLLIN|EPOLLOUT|EPOLLET) BEFORE connect(), the
 * connect's completion taken from EPOLLOUT and SO_ERROR (then getpeername,
 * as Samba's smbXcli_conn_create does), the answer's arrival from EPOLLIN of
 * that same registration. rounds connections one after another in this
 * process (a preload's per-process state, such as its negative cache, is
 * seen from the second on). Prints one "round=" line per connection.
 */
int event_client(const char *host, const char *port, uint64_t down, uint64_t seed, int rounds,
		 int timeout_s)
{
	socklen_t len;
	struct sockaddr_storage ss = parse_address(host, port, &len);
	for (int round = 1; round <= rounds; round++) {
		int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die("socket");
		set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, 1, "setsockopt TCP_NODELAY");
		int ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0)
			die("epoll_create1");
		const uint64_t tag = 0x5d00c0ffee000000ull + static_cast<uint64_t>(round);
		struct epoll_event ev = {};
		ev.events = EPOLLIN | EPOLLOUT | EPOLLET;
		ev.data.u64 = tag;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
			die("epoll_ctl");
		struct timespec start;
		clock_gettime(CLOCK_MONOTONIC, &start);
		int rc = connect(fd, reinterpret_cast<struct sockaddr *>(&ss), len);
		int err = rc ? errno : 0;
		long connect_ms = elapsed_ms(start);
		if (rc != 0 && err != EINPROGRESS) {
			errno = err;
			die("connect");
		}
		uint32_t got = wait_event(ep, tag, EPOLLOUT, timeout_s,
					  "epoll: no EPOLLOUT for the connect");
		int so_error = int_option(fd, SOL_SOCKET, SO_ERROR, "getsockopt SO_ERROR");
		if (so_error) {
			errno = so_error;
			die("connect (SO_ERROR)");
		}
		struct sockaddr_storage peer = {};
		socklen_t pl = sizeof(peer);
		if (getpeername(fd, reinterpret_cast<struct sockaddr *>(&peer), &pl) != 0)
			die("getpeername after SO_ERROR 0");
		long connected_ms = elapsed_ms(start);
		send_text(fd, "up=0 down=" + std::to_string(down) + " seed=" + std::to_string(seed));
		uint32_t in = wait_event(ep, tag, EPOLLIN, timeout_s,
					 "epoll: no EPOLLIN for the answer");
		if (!(in & EPOLLIN))
			fail("epoll: the connection failed instead of EPOLLIN");
		close(ep);
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
			die("fcntl");
		Reader r(fd);
		receive_text(r);
		std::string down_received = receive_stream(r, down);
		std::string down_sent = field(receive_text(r), "down-sha256");
		std::printf("round=%d connect=%s connect_ms=%ld connected_ms=%ld first_event=0x%x "
			    "domain=%d down=%" PRIu64 " sha256_ok=%d\n",
			    round, rc ? "EINPROGRESS" : "0", connect_ms, connected_ms, got,
			    int_option(fd, SOL_SOCKET, SO_DOMAIN, "SO_DOMAIN"), down,
			    down_received == down_sent &&
				    down_received == expected_sha256(seed + 1, down));
		std::fflush(stdout);
		if (down_received != down_sent || down_received != expected_sha256(seed + 1, down))
			fail("download checksum mismatch");
		close(fd);
	}
	std::printf("result=ok\n");
	return 0;
}

/* --- server ------------------------------------------------------------ */

int serve(int fd)
{
	report_socket("server", fd);
	/* The first read waits in epoll, as an event-driven server's would. */
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	struct epoll_event ev = {};
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
		die("epoll_ctl");
	int n;
	while ((n = epoll_wait(ep, &ev, 1, 60000)) < 0 && errno == EINTR)
		;
	if (n != 1 || !(ev.events & EPOLLIN))
		fail("epoll: the request did not arrive");
	close(ep);
	int queued = 0;
	if (ioctl(fd, FIONREAD, &queued) != 0)
		die("ioctl FIONREAD");

	Reader r(fd);
	std::string request = receive_text(r);
	uint64_t up = std::strtoull(field(request, "up").c_str(), nullptr, 10);
	uint64_t down = std::strtoull(field(request, "down").c_str(), nullptr, 10);
	uint64_t seed = std::strtoull(field(request, "seed").c_str(), nullptr, 10);
	std::string up_received = receive_stream(r, up);
	std::string up_expected = expected_sha256(seed, up);
	send_text(fd, "up-sha256=" + up_received);
	std::string down_sent = send_stream(fd, seed + 1, down);
	send_text(fd, "down-sha256=" + down_sent);
	std::vector<uint8_t> extra;
	bool eof = !r.next(&extra);
	std::printf("served fionread=%d up=%" PRIu64 " up-sha256=%s down=%" PRIu64
		    " down-sha256=%s eof=%d\n",
		    queued, up, up_received.c_str(), down, down_sent.c_str(), eof ? 1 : 0);
	std::fflush(stdout);
	if (up_received != up_expected)
		fail("server: upload checksum mismatch");
	if (!eof)
		fail("server: data after the transfer");
	if (queued <= 0)
		fail("server: FIONREAD saw nothing after EPOLLIN");
	close(fd);
	return 0;
}

int server(const char *host, const char *port, int once)
{
	socklen_t len;
	struct sockaddr_storage ss = parse_address(host, port, &len);
	int lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket");
	set_int_option(lfd, SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt SO_REUSEADDR");
	if (bind(lfd, reinterpret_cast<struct sockaddr *>(&ss), len) != 0)
		die("bind");
	if (listen(lfd, 16) != 0)
		die("listen");
	struct sockaddr_storage bound = {};
	socklen_t bl = sizeof(bound);
	if (getsockname(lfd, reinterpret_cast<struct sockaddr *>(&bound), &bl) != 0)
		die("getsockname");
	std::printf("listening domain=%d local=%s protocol=%d\n",
		    int_option(lfd, SOL_SOCKET, SO_DOMAIN, "SO_DOMAIN"),
		    address_text(bound).c_str(),
		    int_option(lfd, SOL_SOCKET, SO_PROTOCOL, "SO_PROTOCOL"));
	std::fflush(stdout);

	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	struct epoll_event ev = {};
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) != 0)
		die("epoll_ctl");
	int accepted = 0, failed = 0, children = 0;
	while (once == 0 || accepted < once) {
		int n = epoll_wait(ep, &ev, 1, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("epoll_wait");
		int cfd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
		if (cfd < 0)
			die("accept4");
		accepted++;
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			close(lfd);
			close(ep);
			std::exit(serve(cfd));
		}
		children++;
		/* The parent's copy goes; the child's connection must not notice. */
		close(cfd);
	}
	close(ep);
	close(lfd);
	while (children--) {
		int status;
		if (wait(&status) < 0)
			die("wait");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	std::printf("server accepted=%d failed=%d\n", accepted, failed);
	return failed ? 1 : 0;
}

[[noreturn]] void usage()
{
	std::fprintf(stderr,
		     "usage: sd_tcponly server [--once N] [--timeout S] [--max-message B] ADDR PORT\n"
		     "       sd_tcponly client [--up BYTES] [--down BYTES] [--seed N] "
		     "[--timeout S] [--max-message B] ADDR PORT\n"
		     "       sd_tcponly evclient [--down BYTES] [--seed N] [--rounds N] "
		     "[--timeout S] ADDR PORT\n");
	std::exit(2);
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	std::string_view mode = argv[1];
	uint64_t up = 1 << 20, down = 1 << 20, seed = 1;
	int once = 0, timeout_s = 120, rounds = 1;
	int i = 2;
	for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] == '-'; i += 2) {
		std::string_view o = argv[i];
		unsigned long long v = std::strtoull(argv[i + 1], nullptr, 0);
		if (o == "--up")
			up = v;
		else if (o == "--down")
			down = v;
		else if (o == "--seed")
			seed = v;
		else if (o == "--once")
			once = static_cast<int>(v);
		else if (o == "--rounds" && v >= 1 && v <= 100)
			rounds = static_cast<int>(v);
		else if (o == "--timeout")
			timeout_s = static_cast<int>(v);
		else if (o == "--max-message" && v >= 1 && v <= max_message)
			send_limit = static_cast<std::size_t>(v);
		else
			usage();
	}
	if (argc - i != 2 || timeout_s <= 0)
		usage();
	signal(SIGPIPE, SIG_IGN);
	/* Never hang a test run: the whole program has a deadline. */
	alarm(static_cast<unsigned>(timeout_s));
	if (mode == "client")
		return client(argv[i], argv[i + 1], up, down, seed, timeout_s);
	if (mode == "evclient")
		return event_client(argv[i], argv[i + 1], down, seed, rounds, timeout_s);
	if (mode == "server")
		return server(argv[i], argv[i + 1], once);
	usage();
}
