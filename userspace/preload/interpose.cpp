// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsmbdirect-preload.so: puts an unmodified program's TCP sockets to or on
 * the SMB ports on SMB-Direct (LD_PRELOAD; `smbdirect run` sets it up).
 *
 * This file is the thin layer that carries out what decision.cpp and
 * socket_state.cpp decide; it interposes exactly four calls:
 *
 *   connect     a TCP stream socket to an SMB port: an SMB-Direct socket
 *               with the same state is connected and put on the same fd
 *               (dup3), else the TCP connect goes on (fallback)
 *   bind        with SMBDIRECT_LISTEN=1, a TCP stream socket bound to an
 *               SMB port becomes an SMB-Direct socket bound there; listen()
 *               and accept() then work natively
 *   setsockopt  known TCP/IP-level options on a replaced fd succeed without
 *               effect (option_policy), others keep ENOPROTOOPT
 *   getsockopt  TCP_NODELAY, TCP_CORK, IPV6_V6ONLY read as SMB-Direct behaves
 *               where the module has no answer; SO_ERROR ends a background
 *               connect (below)
 *
 * Every SMB-Direct socket made here receives messages of up to 16 MiB
 * (SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, see socket_state.hpp): the peer sends
 * each SMB2 message whole, sized for SMB2's MaxReadSize/MaxWriteSize.
 *
 * Everything else (read/write/readv/writev, send/recv, poll/epoll, FIONREAD,
 * SO_KEEPALIVE, SO_RCVBUF, getsockname/getpeername, shutdown, fork, exec)
 * works natively on the AF_SMBDIRECT socket. A replaced fd is recognised
 * without a table: getsockopt(SO_DOMAIN) is the family af_smbdirect.ko
 * registered, so dup()ed fds and fds inherited across fork/exec are handled
 * alike.
 *
 * Replacing (install): the new socket gets the program's O_NONBLOCK,
 * FD_CLOEXEC, O_ASYNC with its F_SETOWN_EX owner and F_SETSIG signal, and
 * the fd's epoll registrations: dup3() would drop them, so they are found in
 * /proc/self/fdinfo of this process's epoll descriptors (epoll_fdinfo.hpp),
 * deleted before dup3 and added again after it, same events and data. An
 * epoll set that only another process holds cannot be seen and is lost (a
 * debug line says when /proc cannot be read at all).
 *
 * Connect, with fallback allowed (the default), blocking program socket:
 * the SMB-Direct attempt runs on a side socket, blocking, bounded by
 * SMBDIRECT_CONNECT_TIMEOUT (5 s, or the program's shorter SO_SNDTIMEO); the
 * program's TCP socket is untouched meanwhile. On success the side socket
 * replaces it and connect returns 0. On failure the TCP connect runs as the
 * program asked. A signal during the attempt: the wait goes on when TCP's
 * connect would have restarted (every caught signal has SA_RESTART, see
 * after_interrupt), else the SMB-Direct connect stays going on the fd and
 * the program gets EINTR, exactly what TCP would show.
 *
 * Non-blocking program socket (Samba's async_connect, event loops): the
 * caller is never blocked. The SMB-Direct connect is started non-blocking
 * and put on the fd at once (EINPROGRESS); the program's TCP socket is kept
 * aside, the attempt remembered (g_pending, keyed by fd and validated by the
 * socket's inode). When the program asks for the result, with
 * getsockopt(SO_ERROR) or a second connect(), a failed attempt puts the TCP
 * socket back (flags, epoll registrations) and starts its connect; SO_ERROR
 * then answers for TCP (see fallback_settle_ms), connect as TCP's second
 * connect would (EALREADY). An immediate failure falls back inside
 * connect().
 *
 * Peers whose attempt failed for want of an RDMA path, by refusal or by
 * timeout are remembered for SMBDIRECT_NEGATIVE_CACHE seconds (60): their
 * next connects go to TCP at once.
 *
 * Connect without fallback (SMBDIRECT_NO_FALLBACK=1): the SMB-Direct socket
 * goes on the fd first and the program's connect runs on it natively,
 * blocking or not, with the program's own timeouts.
 */
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <csignal>
#include <ctime>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/smbdirect.h>

#include "config.hpp"
#include "connect_memory.hpp"
#include "decision.hpp"
#include "epoll_fdinfo.hpp"
#include "socket_state.hpp"

using namespace sd::preload;

namespace {

/* --- the next definitions of the interposed calls ---------------------- */

using connect_fn = int (*)(int, const struct sockaddr *, socklen_t);
using bind_fn = int (*)(int, const struct sockaddr *, socklen_t);
using setsockopt_fn = int (*)(int, int, int, const void *, socklen_t);
using getsockopt_fn = int (*)(int, int, int, void *, socklen_t *);

template <class F> F next_symbol(std::atomic<F> &cache, const char *name)
{
	F f = cache.load(std::memory_order_acquire);
	if (!f) {
		f = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
		cache.store(f, std::memory_order_release);
	}
	return f;
}

std::atomic<connect_fn> next_connect_fn;
std::atomic<bind_fn> next_bind_fn;
std::atomic<setsockopt_fn> next_setsockopt_fn;
std::atomic<getsockopt_fn> next_getsockopt_fn;

/* Without a next definition (nothing should lack one) the system call itself. */
int real_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (connect_fn f = next_symbol(next_connect_fn, "connect"))
		return f(fd, addr, len);
	return static_cast<int>(syscall(SYS_connect, fd, addr, len));
}

int real_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (bind_fn f = next_symbol(next_bind_fn, "bind"))
		return f(fd, addr, len);
	return static_cast<int>(syscall(SYS_bind, fd, addr, len));
}

int real_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	if (setsockopt_fn f = next_symbol(next_setsockopt_fn, "setsockopt"))
		return f(fd, level, name, val, len);
	return static_cast<int>(syscall(SYS_setsockopt, fd, level, name, val, len));
}

int real_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	if (getsockopt_fn f = next_symbol(next_getsockopt_fn, "getsockopt"))
		return f(fd, level, name, val, len);
	return static_cast<int>(syscall(SYS_getsockopt, fd, level, name, val, len));
}

/* --- configuration and debug output ------------------------------------ */

/*
 * Parsed in the library constructor, before the program's threads exist.
 * A call from another library's constructor that runs before ours parses
 * its own copy (the environment is the same).
 */
Config g_config;
std::atomic<bool> g_config_ready;

void debug_line(const Config &cfg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void debug_line(const Config &cfg, const char *fmt, ...)
{
	char line[512];
	int saved = errno;

	if (!cfg.debug)
		return;
	int n = std::snprintf(line, sizeof(line), "smbdirect-preload: ");
	va_list ap;
	va_start(ap, fmt);
	int m = std::vsnprintf(line + n, sizeof(line) - static_cast<std::size_t>(n) - 1, fmt, ap);
	va_end(ap);
	std::size_t used = static_cast<std::size_t>(n) +
			   (m < 0 ? 0 : static_cast<std::size_t>(m));
	if (used > sizeof(line) - 2)
		used = sizeof(line) - 2;
	line[used++] = '\n';
	/* One write: lines of concurrent processes do not interleave. */
	ssize_t rc = write(STDERR_FILENO, line, used);
	(void)rc;
	errno = saved;
}

Config load_config()
{
	Config c = parse_config([](const char *name) -> const char * { return std::getenv(name); });
	if (!c.enabled())
		debug_line(c, "%s: %s: every socket stays TCP", c.error_variable, c.error);
	return c;
}

void memory_lock_child();

__attribute__((constructor)) void preload_init()
{
	pthread_atfork(nullptr, nullptr, memory_lock_child);
	g_config = load_config();
	g_config_ready.store(true, std::memory_order_release);
}

Config config()
{
	if (g_config_ready.load(std::memory_order_acquire))
		return g_config;
	return load_config();
}

/* --- facts about sockets ------------------------------------------------ */

/* The family af_smbdirect.ko registered, or -errno (-ENOENT: not loaded). */
int smbdirect_family_number()
{
	char buf[32];
	int fd = open(SMBDIRECT_FAMILY_SYSFS, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	int family = parse_family(std::string_view(buf, static_cast<std::size_t>(n)));
	return family < 0 ? -EINVAL : family;
}

int sockopt_int(int fd, int level, int name, int fallback)
{
	int v = 0;
	socklen_t len = sizeof(v);
	return real_getsockopt(fd, level, name, &v, &len) == 0 ? v : fallback;
}

SocketIdentity identity(int fd)
{
	SocketIdentity id;
	id.domain = sockopt_int(fd, SOL_SOCKET, SO_DOMAIN, -1);
	if (id.domain != AF_INET && id.domain != AF_INET6)
		return id;
	id.type = sockopt_int(fd, SOL_SOCKET, SO_TYPE, -1);
	id.protocol = sockopt_int(fd, SOL_SOCKET, SO_PROTOCOL, -1);
	if (id.type != SOCK_STREAM)
		return id;
	struct tcp_info info = {};
	socklen_t len = sizeof(info);
	if (real_getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
	    len >= offsetof(struct tcp_info, tcpi_state) + sizeof(info.tcpi_state))
		id.tcp_state = info.tcpi_state;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getsockname(fd, reinterpret_cast<struct sockaddr *>(&ss), &sl) == 0)
		id.bound = is_bound(parse_endpoint(reinterpret_cast<struct sockaddr *>(&ss), sl));
	return id;
}

/*
 * IPPROTO_SMBDIRECT's number from SMBDIRECT_INET_PROTOCOL_SYSFS, or -errno:
 * -ENOENT when the module is not loaded, -EPROTONOSUPPORT when it runs
 * without its inet entry point (the file says 0).
 */
int inet_protocol_number()
{
	char buf[32];
	int fd = open(SMBDIRECT_INET_PROTOCOL_SYSFS, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT && smbdirect_family_number() > 0 ? -EPROTONOSUPPORT
									  : -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	int protocol = parse_protocol(std::string_view(buf, static_cast<std::size_t>(n)));
	if (protocol < 0)
		return -EINVAL;
	return protocol ? protocol : -EPROTONOSUPPORT;
}

bool is_smbdirect_fd(int fd)
{
	int domain = sockopt_int(fd, SOL_SOCKET, SO_DOMAIN, -1);
	if (domain == AF_INET || domain == AF_INET6) {
		int protocol = inet_protocol_number();
		return protocol > 0 && sockopt_int(fd, SOL_SOCKET, SO_PROTOCOL, -1) == protocol;
	}
	int family = smbdirect_family_number();
	return family > 0 && domain == family;
}

/*
 * How a replacement is made: socket(AF_SMBDIRECT's family, SOCK_STREAM, 0),
 * or with SMBDIRECT_INET socket(the target's family, SOCK_STREAM,
 * IPPROTO_SMBDIRECT). err (an errno) when that entry point is not there.
 */
struct Maker {
	int family = -1;
	int protocol = 0;
	int err = 0;
};

/* For debug lines: which entry point made the replacement. */
const char *shape(const Config &cfg)
{
	return cfg.inet ? " (IPPROTO_SMBDIRECT)" : "";
}

Maker maker(const Config &cfg, int target_family)
{
	Maker m;
	int n = cfg.inet ? inet_protocol_number() : smbdirect_family_number();
	if (n < 0) {
		m.err = -n;
		return m;
	}
	m.family = cfg.inet ? target_family : n;
	m.protocol = cfg.inet ? n : 0;
	return m;
}

template <class T> void sockopt_read(int fd, int level, int name, T *out)
{
	socklen_t len = sizeof(*out);
	if (real_getsockopt(fd, level, name, out, &len) != 0)
		*out = T{};
}

/* The open file's and the descriptor's flags (fcntl), into s. */
void read_fd_flags(int fd, SocketState *s)
{
	int fl = fcntl(fd, F_GETFL);
	s->nonblocking = fl >= 0 && (fl & O_NONBLOCK);
	s->async = fl >= 0 && (fl & O_ASYNC);
	int fdfl = fcntl(fd, F_GETFD);
	s->cloexec = fdfl >= 0 && (fdfl & FD_CLOEXEC);
	struct f_owner_ex owner = {};
	if (fcntl(fd, F_GETOWN_EX, &owner) == 0) {
		s->owner_type = owner.type;
		s->owner_pid = owner.pid;
	}
	int sig = fcntl(fd, F_GETSIG);
	s->signal = sig > 0 ? sig : 0;
}

SocketState read_state(int fd, int domain)
{
	SocketState s;
	sockopt_read(fd, SOL_SOCKET, SO_KEEPALIVE, &s.keepalive);
	sockopt_read(fd, SOL_SOCKET, SO_RCVBUF, &s.rcvbuf);
	sockopt_read(fd, SOL_SOCKET, SO_SNDBUF, &s.sndbuf);
	sockopt_read(fd, SOL_SOCKET, SO_RCVTIMEO, &s.rcvtimeo);
	sockopt_read(fd, SOL_SOCKET, SO_SNDTIMEO, &s.sndtimeo);
	sockopt_read(fd, SOL_SOCKET, SO_LINGER, &s.linger);
	sockopt_read(fd, SOL_SOCKET, SO_PRIORITY, &s.priority);
	sockopt_read(fd, SOL_SOCKET, SO_RCVLOWAT, &s.rcvlowat);
	sockopt_read(fd, SOL_SOCKET, SO_REUSEADDR, &s.reuseaddr);
	sockopt_read(fd, SOL_SOCKET, SO_MARK, &s.mark);
	if (domain == AF_INET6)
		sockopt_read(fd, IPPROTO_IPV6, IPV6_V6ONLY, &s.v6only);
	read_fd_flags(fd, &s);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(fd, reinterpret_cast<struct sockaddr *>(&ss), &len) == 0)
		s.local = parse_endpoint(reinterpret_cast<struct sockaddr *>(&ss), len);
	return s;
}

/* A fresh TCP socket's state: what the program did not change. */
SocketState default_state(int domain, const SocketState &program)
{
	int fd = socket(domain, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		/* Then carry nothing but the bound address. */
		SocketState s = program;
		s.local.reset();
		s.v6only = 0;
		return s;
	}
	SocketState s = read_state(fd, domain);
	close(fd);
	return s;
}

uint64_t now_ms()
{
	struct timespec ts = {};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000 +
	       static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

/* st_dev, st_ino of what fd holds; false when fd is not open. */
bool file_id(int fd, uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

/* --- what the preload remembers: the negative cache, pending connects ---- */

/*
 * One lock for both tables, held for table operations only. A try-lock
 * that gives up (and answers "not found"/"not remembered") rather than
 * deadlock: interposed calls may come from a signal handler that
 * interrupted this very thread inside the lock. fork() of a multithreaded
 * program clears it in the child (pthread_atfork in preload_init).
 */
std::atomic_flag g_memory_lock = ATOMIC_FLAG_INIT;
NegativeCache g_negative;
PendingConnects g_pending;
/* g_pending.size(), readable without the lock: most calls stop there. */
std::atomic<std::size_t> g_pending_count;

class MemoryLock {
    public:
	MemoryLock()
	{
		for (int i = 0; i < 1000; i++) {
			if (!g_memory_lock.test_and_set(std::memory_order_acquire)) {
				held_ = true;
				return;
			}
			sched_yield();
		}
	}
	~MemoryLock()
	{
		if (held_)
			g_memory_lock.clear(std::memory_order_release);
	}
	MemoryLock(const MemoryLock &) = delete;
	MemoryLock &operator=(const MemoryLock &) = delete;
	[[nodiscard]] bool held() const
	{
		return held_;
	}

    private:
	bool held_ = false;
};

void memory_lock_child()
{
	/* The child has one thread: whoever held the lock is not in it. */
	g_memory_lock.clear(std::memory_order_release);
}

std::optional<NegativeCache::Hit> negative_lookup(const Config &cfg, const Endpoint &peer)
{
	if (!cfg.negative_cache_s)
		return std::nullopt;
	MemoryLock lock;
	return lock.held() ? g_negative.lookup(peer, now_ms()) : std::nullopt;
}

void negative_remember(const Config &cfg, const Endpoint &peer, ErrorClass why)
{
	if (!cfg.negative_cache_s || !NegativeCache::cacheable(why))
		return;
	MemoryLock lock;
	if (lock.held())
		g_negative.remember(peer, why, now_ms(), cfg.negative_cache_s);
}

void negative_forget(const Config &cfg, const Endpoint &peer)
{
	if (!cfg.negative_cache_s)
		return;
	MemoryLock lock;
	if (lock.held())
		g_negative.forget(peer);
}

/* --- epoll registrations across a replacement ----------------------------- */

/* One registration of the fd being replaced, in epoll set epfd. */
struct Watch {
	int epfd = -1;
	uint32_t events = 0;
	uint64_t data = 0;
};

struct Watches {
	static constexpr std::size_t max = 16;
	std::array<Watch, max> list{};
	std::size_t count = 0;
	std::size_t missed = 0; /* beyond max: lost */
	bool no_proc = false; /* /proc/self/fd could not be read */
};

/* The registrations of (fd, ino) in epoll set epfd, from its fdinfo. */
void scan_epoll(int epfd, int fd, uint64_t ino, Watches *w)
{
	char path[48];
	std::snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
	int in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return;
	char buf[4096];
	std::size_t have = 0;
	FdinfoWatch found[Watches::max];
	for (;;) {
		ssize_t n = read(in, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		bool at_end = n <= 0;
		if (n > 0)
			have += static_cast<std::size_t>(n);
		FdinfoScan r = scan_epoll_fdinfo(std::string_view(buf, have), at_end, fd, ino,
						 found, Watches::max);
		for (std::size_t i = 0; i < r.found; i++) {
			if (i >= Watches::max || w->count == Watches::max) {
				w->missed++;
				continue;
			}
			w->list[w->count++] = {epfd, found[i].events, found[i].data};
		}
		if (at_end)
			break;
		/* A line longer than the buffer is no registration: dropped. */
		if (r.consumed == 0 && have == sizeof(buf))
			have = 0;
		std::memmove(buf, buf + r.consumed, have - r.consumed);
		have -= r.consumed;
	}
	close(in);
}

/*
 * Every registration of the socket (fd, ino) in this process's epoll sets:
 * the epoll descriptors are the "anon_inode:[eventpoll]" links of
 * /proc/self/fd (read with getdents64: no allocation).
 */
Watches find_watches(int fd, uint64_t ino)
{
	Watches w;
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		w.no_proc = true;
		return w;
	}
	alignas(8) char buf[4096];
	for (;;) {
		long n = syscall(SYS_getdents64, dir, buf, sizeof(buf));
		if (n <= 0)
			break;
		/* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name */
		for (long off = 0; off + 19 < n;) {
			unsigned short reclen;
			std::memcpy(&reclen, buf + off + 16, sizeof(reclen));
			const char *name = buf + off + 19;
			off += reclen ? reclen : n;
			UnsignedResult num = parse_unsigned(name, 1u << 30);
			if (num.error)
				continue;
			int epfd = static_cast<int>(num.value);
			if (epfd == dir || epfd == fd)
				continue;
			char link[32];
			ssize_t l = readlinkat(dir, name, link, sizeof(link));
			if (l <= 0 ||
			    !is_eventpoll_link(std::string_view(link, static_cast<std::size_t>(l))))
				continue;
			scan_epoll(epfd, fd, ino, &w);
		}
	}
	close(dir);
	return w;
}

void detach(const Watches &w, int fd)
{
	for (std::size_t i = 0; i < w.count; i++)
		epoll_ctl(w.list[i].epfd, EPOLL_CTL_DEL, fd, nullptr);
}

/*
 * The registrations again, same events (EPOLLET, EPOLLONESHOT, EPOLLEXCLUSIVE
 * included) and data, on what fd holds now. Returns how many failed. (A
 * disarmed EPOLLONESHOT registration comes back armed for EPOLLERR and
 * EPOLLHUP, which EPOLL_CTL_ADD always adds.)
 */
std::size_t attach(const Watches &w, int fd)
{
	std::size_t failed = 0;
	for (std::size_t i = 0; i < w.count; i++) {
		struct epoll_event ev = {};
		ev.events = w.list[i].events;
		ev.data.u64 = w.list[i].data;
		if (epoll_ctl(w.list[i].epfd, EPOLL_CTL_ADD, fd, &ev) != 0 && errno != EEXIST)
			failed++;
	}
	return failed;
}

/* --- building and installing the SMB-Direct socket ---------------------- */

struct Prepared {
	int fd = -1;
	Stage stage = Stage::socket;
	int err = 0;
};

template <class T> bool set_sockopt(int fd, int name, const std::optional<T> &v)
{
	return !v || real_setsockopt(fd, SOL_SOCKET, name, &*v, sizeof(*v)) == 0;
}

/* SMB-sized messages: see smb_max_fragmented_size in socket_state.hpp. */
bool raise_max_fragmented_size(int fd)
{
	int current = sockopt_int(fd, SMBDIRECT_SOL, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, -1);
	std::optional<int> v = raised_max_fragmented_size(current);
	return !v || real_setsockopt(fd, SMBDIRECT_SOL, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, &*v,
				     sizeof(*v)) == 0;
}

bool set_options(int fd, const Carry &carry)
{
	return raise_max_fragmented_size(fd) && set_sockopt(fd, SO_KEEPALIVE, carry.keepalive) &&
	       set_sockopt(fd, SO_RCVBUF, carry.rcvbuf) &&
	       set_sockopt(fd, SO_SNDBUF, carry.sndbuf) &&
	       set_sockopt(fd, SO_RCVTIMEO, carry.rcvtimeo) &&
	       set_sockopt(fd, SO_SNDTIMEO, carry.sndtimeo) &&
	       set_sockopt(fd, SO_LINGER, carry.linger) &&
	       set_sockopt(fd, SO_PRIORITY, carry.priority) &&
	       set_sockopt(fd, SO_RCVLOWAT, carry.rcvlowat) &&
	       set_sockopt(fd, SO_REUSEADDR, carry.reuseaddr) &&
	       set_sockopt(fd, SO_MARK, carry.mark) &&
	       (!carry.v6only ||
		real_setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &*carry.v6only, sizeof(int)) == 0);
}

/*
 * An SMB-Direct socket with the program's state, bound if it had bound,
 * receiving messages of any size SMB2 over TCP can frame.
 */
Prepared prepare_smbdirect(const Maker &mk, const Carry &carry)
{
	Prepared p;
	int fd = socket(mk.family, SOCK_STREAM | SOCK_CLOEXEC, mk.protocol);
	if (fd < 0) {
		p.err = errno;
		return p;
	}
	if (!set_options(fd, carry)) {
		p.stage = Stage::options;
		p.err = errno;
		close(fd);
		return p;
	}
	if (carry.bind) {
		struct sockaddr_storage ss;
		socklen_t len = to_sockaddr(*carry.bind, &ss);
		if (real_bind(fd, reinterpret_cast<struct sockaddr *>(&ss), len) != 0) {
			p.stage = Stage::bind;
			p.err = errno;
			close(fd);
			return p;
		}
	}
	p.fd = fd;
	return p;
}

/* The open file's flags of the program's socket on from: owner, signal, O_ASYNC, O_NONBLOCK. */
int copy_file_flags(int from, const SocketState &program)
{
	if (program.owner_pid) {
		struct f_owner_ex owner = {};
		owner.type = static_cast<decltype(owner.type)>(program.owner_type);
		owner.pid = program.owner_pid;
		if (fcntl(from, F_SETOWN_EX, &owner) != 0)
			return -errno;
	}
	if (program.signal && fcntl(from, F_SETSIG, program.signal) != 0)
		return -errno;
	int fl = fcntl(from, F_GETFL);
	if (fl < 0)
		return -errno;
	int want = (fl & ~(O_NONBLOCK | O_ASYNC)) | (program.nonblocking ? O_NONBLOCK : 0) |
		   (program.async ? O_ASYNC : 0);
	if (want != fl && fcntl(from, F_SETFL, want) < 0)
		return -errno;
	return 0;
}

/*
 * Puts the socket on from onto fd's number (closing what fd held) with the
 * program's O_NONBLOCK, FD_CLOEXEC, O_ASYNC with its owner and signal, and
 * fd's epoll registrations (deleted before dup3, added again after it; see
 * epoll_fdinfo.hpp). 0 or -errno; from is closed either way, and on failure
 * fd holds what it held, registrations included.
 */
int install(const Config &cfg, int from, int fd, const SocketState &program)
{
	uint64_t dev = 0, ino = 0;
	Watches w;
	if (file_id(fd, &dev, &ino))
		w = find_watches(fd, ino);
	int err = copy_file_flags(from, program);
	if (!err) {
		detach(w, fd);
		if (dup3(from, fd, program.cloexec ? O_CLOEXEC : 0) < 0)
			err = -errno;
		std::size_t failed = attach(w, fd);
		if (failed)
			debug_line(cfg, "fd %d: %zu of %zu epoll registrations could not be kept",
				   fd, failed, w.count);
	}
	close(from);
	if (err)
		return err;
	if (w.no_proc)
		debug_line(cfg,
			   "fd %d: /proc/self/fd is not readable: epoll registrations of the "
			   "fd, if any, are lost",
			   fd);
	else if (w.missed)
		debug_line(cfg, "fd %d: more than %zu epoll registrations: %zu lost", fd,
			   Watches::max, w.missed);
	else if (w.count)
		debug_line(cfg, "fd %d: %zu epoll registration%s kept", fd, w.count,
			   w.count == 1 ? "" : "s");
	return 0;
}

/* --- connect -------------------------------------------------------------- */

/*
 * The program's own connect over TCP, after the SMB-Direct attempt failed.
 * A failure that will happen again soon is remembered (negative cache).
 */
int tcp_fallback(const Config &cfg, int fd, const struct sockaddr *addr, socklen_t len,
		 const Endpoint &target, const char *where, Stage stage, int err)
{
	if (stage == Stage::timeout) {
		negative_remember(cfg, target, ErrorClass::timed_out);
		debug_line(
			cfg,
			"fd %d: connect %s -> TCP fallback (no SMB-Direct connection within %u ms)",
			fd, where, cfg.connect_timeout_ms);
	} else if (stage == Stage::family) {
		debug_line(cfg, "fd %d: connect %s -> TCP fallback (af_smbdirect is not loaded)",
			   fd, where);
	} else {
		if (stage == Stage::connect)
			negative_remember(cfg, target, classify_error(err));
		debug_line(cfg, "fd %d: connect %s -> TCP fallback (%s: %s: %s)", fd, where,
			   error_class_name(classify_error(err)), stage_name(stage),
			   std::strerror(err));
	}
	return real_connect(fd, addr, len);
}

int fail(const Config &cfg, int fd, const char *call, const char *where, Stage stage, int err)
{
	debug_line(cfg, "fd %d: %s %s -> failed, no fallback (%s: %s)", fd, call, where,
		   stage_name(stage), std::strerror(err));
	errno = err;
	return -1;
}

/* Without fallback: the SMB-Direct socket goes on the fd, the connect is native. */
int connect_no_fallback(const Config &cfg, int fd, const SocketState &program, const Carry &carry,
			const Maker &mk, const struct sockaddr *target, socklen_t target_len,
			const char *where)
{
	Prepared p = prepare_smbdirect(mk, carry);
	if (p.fd < 0)
		return fail(cfg, fd, "connect", where, p.stage, p.err);
	if (int err = install(cfg, p.fd, fd, program))
		return fail(cfg, fd, "connect", where, Stage::socket, -err);
	int rc = real_connect(fd, target, target_len);
	int err = rc ? errno : 0;
	if (!rc)
		debug_line(cfg, "fd %d: connect %s -> SMB-Direct%s", fd, where, shape(cfg));
	else if (err == EINPROGRESS)
		debug_line(cfg, "fd %d: connect %s -> SMB-Direct%s (in progress, no fallback)", fd,
			   where, shape(cfg));
	else
		debug_line(cfg, "fd %d: connect %s -> SMB-Direct%s failed, no fallback (%s)", fd,
			   where, shape(cfg), std::strerror(err));
	errno = err;
	return rc;
}

/* Whether every caught signal has SA_RESTART (see after_interrupt). */
bool handlers_restart()
{
	HandlerInfo h[NSIG];
	std::size_t n = 0;
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sigaction(sig, nullptr, &sa) != 0)
			continue;
		bool info = sa.sa_flags & SA_SIGINFO;
		h[n].catches = info ? sa.sa_sigaction != nullptr
				    : sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
		h[n].restart = sa.sa_flags & SA_RESTART;
		n++;
	}
	return every_handler_restarts(h, n);
}

/*
 * The blocking attempt on the side socket sd, bounded by bound_ms: 0 or an
 * errno (EINPROGRESS: the bound ran out). An interruption by a signal that
 * TCP's connect would restart after waits on for the time left.
 */
int bounded_attempt(int sd, const struct sockaddr *sa, socklen_t sa_len, unsigned long bound_ms,
		    bool program_sndtimeo)
{
	uint64_t deadline = now_ms() + bound_ms;
	int rc = real_connect(sd, sa, sa_len);
	int err = rc ? errno : 0;
	while (err == EINTR) {
		uint64_t now = now_ms();
		InterruptPlan plan = after_interrupt(handlers_restart(), program_sndtimeo,
						     deadline > now ? deadline - now : 0);
		if (plan.what == Interrupted::report)
			break;
		if (plan.what == Interrupted::out_of_time)
			return EINPROGRESS;
		struct timeval tv = ms_timeval(plan.wait_ms);
		real_setsockopt(sd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		/* A blocking connect again on a connecting socket waits again. */
		rc = real_connect(sd, sa, sa_len);
		err = rc ? errno : 0;
		if (err == EISCONN)
			err = 0;
	}
	return err;
}

/*
 * A non-blocking program socket: the SMB-Direct connect is started without
 * blocking and put on the fd at once (EINPROGRESS), the program's TCP socket
 * kept aside on a descriptor of ours (close-on-exec, numbered from
 * kept_fd_min so as not to take the low numbers a program may count on).
 * The program's SO_ERROR or second connect() then finds the attempt in
 * g_pending (pending_so_error, pending_connect_again); a failure puts the
 * TCP socket back and starts its connect. An immediate failure (no RDMA
 * device for the address) falls back at once.
 */
constexpr int kept_fd_min = 100;

void close_all(const int *fds, std::size_t n)
{
	for (std::size_t i = 0; i < n; i++)
		close(fds[i]);
}

/* Drops entries whose fd no longer holds their socket, or is connected. */
void sweep_pending(int *to_close, std::size_t *n)
{
	for (std::size_t i = 0; i < PendingConnects::capacity; i++) {
		const PendingConnect *e = g_pending.slot(i);
		if (!e)
			continue;
		uint64_t dev = 0, ino = 0;
		struct sockaddr_storage peer;
		socklen_t pl = sizeof(peer);
		bool mine = file_id(e->fd, &dev, &ino) && dev == e->dev && ino == e->ino;
		if (mine &&
		    getpeername(e->fd, reinterpret_cast<struct sockaddr *>(&peer), &pl) != 0)
			continue;
		if (std::optional<PendingConnect> gone = g_pending.remove_slot(i))
			to_close[(*n)++] = gone->tcp_fd;
	}
}

int connect_background(const Config &cfg, int fd, const struct sockaddr *addr, socklen_t len,
		       const SocketState &program, const Carry &carry, const Maker &mk,
		       const Endpoint &target, const char *where)
{
	struct sockaddr_storage ss;
	socklen_t ss_len = to_sockaddr(target, &ss);
	const struct sockaddr *sa = reinterpret_cast<const struct sockaddr *>(&ss);
	Prepared p = prepare_smbdirect(mk, carry);
	if (p.fd < 0)
		return tcp_fallback(cfg, fd, addr, len, target, where, p.stage, p.err);
	int fl = fcntl(p.fd, F_GETFL);
	if (fl < 0 || fcntl(p.fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int err = errno;
		close(p.fd);
		return tcp_fallback(cfg, fd, addr, len, target, where, Stage::options, err);
	}
	int rc = real_connect(p.fd, sa, ss_len);
	int err = rc ? errno : 0;
	if (!rc) {
		if (int ierr = install(cfg, p.fd, fd, program))
			return tcp_fallback(cfg, fd, addr, len, target, where, Stage::socket,
					    -ierr);
		negative_forget(cfg, target);
		debug_line(cfg, "fd %d: connect %s -> SMB-Direct%s", fd, where, shape(cfg));
		return 0;
	}
	if (err != EINPROGRESS) {
		close(p.fd);
		return tcp_fallback(cfg, fd, addr, len, target, where, Stage::connect, err);
	}
	PendingConnect e;
	e.fd = fd;
	e.tcp_fd = fcntl(fd, F_DUPFD_CLOEXEC, kept_fd_min);
	if (e.tcp_fd < 0)
		e.tcp_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (e.tcp_fd < 0 || !file_id(p.fd, &e.dev, &e.ino)) {
		err = errno;
		if (e.tcp_fd >= 0)
			close(e.tcp_fd);
		close(p.fd);
		return tcp_fallback(cfg, fd, addr, len, target, where, Stage::socket, err);
	}
	if (int ierr = install(cfg, p.fd, fd, program)) {
		close(e.tcp_fd);
		return tcp_fallback(cfg, fd, addr, len, target, where, Stage::socket, -ierr);
	}
	std::memcpy(&e.addr, addr, len < sizeof(e.addr) ? len : sizeof(e.addr));
	e.addr_len = len < sizeof(e.addr) ? len : static_cast<socklen_t>(sizeof(e.addr));
	e.target = target;
	e.started_ms = now_ms();
	int to_close[PendingConnects::capacity + 1];
	std::size_t n = 0;
	bool kept = false;
	{
		MemoryLock lock;
		if (lock.held()) {
			sweep_pending(to_close, &n);
			if (std::optional<PendingConnect> pushed = g_pending.add(e))
				to_close[n++] = pushed->tcp_fd;
			g_pending_count.store(g_pending.size(), std::memory_order_release);
			kept = true;
		}
	}
	close_all(to_close, n);
	if (!kept) {
		close(e.tcp_fd);
		debug_line(cfg,
			   "fd %d: connect %s -> SMB-Direct%s (in progress, no fallback: busy)", fd,
			   where, shape(cfg));
	} else {
		debug_line(
			cfg,
			"fd %d: connect %s -> SMB-Direct%s (in progress, TCP kept to fall back on)",
			fd, where, shape(cfg));
	}
	errno = EINPROGRESS;
	return -1;
}

int connect_smbdirect(const Config &cfg, int fd, const struct sockaddr *addr, socklen_t len,
		      const SocketIdentity &id, const Endpoint &target)
{
	char where[80];
	format_endpoint(target, where, sizeof(where));
	struct sockaddr_storage ss;
	socklen_t ss_len = to_sockaddr(target, &ss);
	const struct sockaddr *sa = reinterpret_cast<const struct sockaddr *>(&ss);

	SocketState program = read_state(fd, id.domain);
	Maker mk = maker(cfg, ss.ss_family);
	if (mk.err) {
		FailurePlan plan = after_connect_failure(cfg, Stage::family, mk.err,
							 program.nonblocking);
		if (plan.recovery == Recovery::fallback)
			return tcp_fallback(cfg, fd, addr, len, target, where, Stage::family,
					    mk.err);
		/* As socket(2) says for a family that is not there. */
		return fail(cfg, fd, "connect", where, Stage::family, EAFNOSUPPORT);
	}
	Carry carry = carry_over(program, default_state(id.domain, program),
				 cfg.inet && mk.family == AF_INET6);
	ConnectMode mode = connect_mode(cfg, program.nonblocking);
	if (mode == ConnectMode::native)
		return connect_no_fallback(cfg, fd, program, carry, mk, sa, ss_len, where);
	if (std::optional<NegativeCache::Hit> hit = negative_lookup(cfg, target)) {
		debug_line(cfg, "fd %d: connect %s -> TCP fallback (cached: %s, %u s left)", fd,
			   where, error_class_name(hit->why), hit->seconds_left);
		return real_connect(fd, addr, len);
	}
	if (mode == ConnectMode::background)
		return connect_background(cfg, fd, addr, len, program, carry, mk, target, where);

	/* The bounded attempt: blocking, with SO_SNDTIMEO as the bound. */
	std::optional<struct timeval> own_sndtimeo = carry.sndtimeo;
	unsigned long bound = attempt_timeout_ms(cfg, program);
	carry.sndtimeo = ms_timeval(bound);
	Prepared p = prepare_smbdirect(mk, carry);
	if (p.fd < 0)
		return tcp_fallback(cfg, fd, addr, len, target, where, p.stage, p.err);
	bool program_sndtimeo = program.sndtimeo.tv_sec || program.sndtimeo.tv_usec;
	int err = bounded_attempt(p.fd, sa, ss_len, bound, program_sndtimeo);
	/* The program's send timeout (or the default, none) from now on. */
	struct timeval sndtimeo = own_sndtimeo.value_or(timeval{});
	real_setsockopt(p.fd, SOL_SOCKET, SO_SNDTIMEO, &sndtimeo, sizeof(sndtimeo));
	if (!err) {
		int ierr = install(cfg, p.fd, fd, program);
		if (!ierr) {
			negative_forget(cfg, target);
			debug_line(cfg, "fd %d: connect %s -> SMB-Direct%s", fd, where, shape(cfg));
			return 0;
		}
		return tcp_fallback(cfg, fd, addr, len, target, where, Stage::socket, -ierr);
	}
	Stage stage = err == EINPROGRESS ? Stage::timeout : Stage::connect;
	FailurePlan plan = after_connect_failure(cfg, stage, err, program.nonblocking);
	switch (plan.recovery) {
	case Recovery::adopt:
		if (install(cfg, p.fd, fd, program) == 0) {
			debug_line(cfg, "fd %d: connect %s -> SMB-Direct (interrupted, %s)", fd,
				   where, std::strerror(plan.err));
			errno = plan.err;
			return -1;
		}
		return tcp_fallback(cfg, fd, addr, len, target, where, stage, err);
	case Recovery::fallback:
		close(p.fd);
		return tcp_fallback(cfg, fd, addr, len, target, where, stage, err);
	case Recovery::fail:
		break;
	}
	close(p.fd);
	return fail(cfg, fd, "connect", where, stage, plan.err);
}

/* --- the result of a background attempt ------------------------------------ */

/*
 * fd's pending entry if fd still holds its SMB-Direct socket: removed from
 * the table when take, copied otherwise. A stale entry (fd closed and
 * reused) is dropped and its TCP socket closed.
 */
std::optional<PendingConnect> pending_entry(int fd, bool take)
{
	if (!g_pending_count.load(std::memory_order_acquire))
		return std::nullopt;
	uint64_t dev = 0, ino = 0;
	if (!file_id(fd, &dev, &ino))
		return std::nullopt;
	std::optional<PendingConnect> e, stale;
	{
		MemoryLock lock;
		if (!lock.held() || !g_pending.has_fd(fd))
			return std::nullopt;
		if (take)
			e = g_pending.take(fd, dev, ino, &stale);
		else if (!(e = g_pending.find(fd, dev, ino)))
			(void)g_pending.take(fd, dev, ino, &stale);
		g_pending_count.store(g_pending.size(), std::memory_order_release);
	}
	if (stale)
		close(stale->tcp_fd);
	return e;
}

/*
 * The attempt is over for good (connected): the kept TCP socket goes, and
 * the debug output says where the connect ended, as for a blocking one.
 */
void pending_done(const Config &cfg, int fd)
{
	if (std::optional<PendingConnect> e = pending_entry(fd, true)) {
		close(e->tcp_fd);
		negative_forget(cfg, e->target);
		char where[80];
		format_endpoint(e->target, where, sizeof(where));
		debug_line(cfg, "fd %d: connect %s -> SMB-Direct%s", fd, where, shape(cfg));
	}
}

/*
 * The background attempt of e failed with err: the program's TCP socket goes
 * back on the fd (flags and epoll registrations as the fd has them now) and
 * its connect starts. Returns what that connect said: 0, EINPROGRESS or an
 * errno.
 */
int pending_fallback(const Config &cfg, const PendingConnect &e, int err)
{
	char where[80];
	format_endpoint(e.target, where, sizeof(where));
	negative_remember(cfg, e.target, classify_error(err));
	SocketState now;
	read_fd_flags(e.fd, &now);
	if (int ierr = install(cfg, e.tcp_fd, e.fd, now)) {
		debug_line(
			cfg,
			"fd %d: connect %s -> SMB-Direct failed (%s), TCP fallback impossible (%s)",
			e.fd, where, std::strerror(err), std::strerror(-ierr));
		return err;
	}
	debug_line(cfg, "fd %d: connect %s -> TCP fallback (%s: connect: %s)", e.fd, where,
		   error_class_name(classify_error(err)), std::strerror(err));
	int rc = real_connect(e.fd, reinterpret_cast<const struct sockaddr *>(&e.addr), e.addr_len);
	return rc ? errno : 0;
}

/*
 * How long SO_ERROR waits for the TCP connect it has just started in a
 * fallback, at most. The program asks SO_ERROR because it was told the
 * connect was over, and many go on to getpeername() (Samba's
 * smbXcli_conn_create) or write at once; SO_ERROR has no value for "still
 * under way". One round trip to a peer it can reach is far below this;
 * when the handshake takes longer, SO_ERROR says 0 and the connect's end
 * surfaces as TCP's would after that (POLLOUT, or an error from the first
 * I/O).
 */
constexpr int fallback_settle_ms = 250;

/*
 * getsockopt(SOL_SOCKET, SO_ERROR) on fd read *value (and cleared it).
 * For a background attempt this is where it ends: connected (the entry
 * goes), still under way (nothing), or failed (the TCP fallback, and
 * *value becomes what TCP's SO_ERROR says).
 */
void pending_so_error(const Config &cfg, int fd, int *value)
{
	std::optional<PendingConnect> e = pending_entry(fd, false);
	if (!e)
		return;
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	bool connected = getpeername(fd, reinterpret_cast<struct sockaddr *>(&peer), &pl) == 0;
	struct pollfd p = {fd, 0, 0};
	bool hangup = poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
	AttemptState state = attempt_state(*value, connected, hangup);
	if (state == AttemptState::in_progress)
		return;
	if (state == AttemptState::connected) {
		pending_done(cfg, fd);
		return;
	}
	std::optional<PendingConnect> mine = pending_entry(fd, true);
	if (!mine)
		return; /* another thread took it */
	int tcp = pending_fallback(cfg, *mine, *value ? *value : ECONNABORTED);
	if (tcp == EINPROGRESS) {
		struct pollfd q = {fd, POLLOUT, 0};
		(void)poll(&q, 1, fallback_settle_ms);
		int v = 0;
		socklen_t vl = sizeof(v);
		tcp = real_getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &vl) == 0 ? v : 0;
	}
	*value = tcp;
}

/*
 * connect() again on the fd of a background attempt (the other way programs
 * learn a non-blocking connect's end): the SMB-Direct socket answers as TCP
 * would (EALREADY, EISCONN, the error); a failure falls back, and the
 * program gets TCP's answer to a second connect (EALREADY while its
 * handshake is under way).
 */
int pending_connect_again(const Config &cfg, const PendingConnect &e)
{
	struct sockaddr_storage ss;
	socklen_t ss_len = to_sockaddr(e.target, &ss);
	int rc = real_connect(e.fd, reinterpret_cast<const struct sockaddr *>(&ss), ss_len);
	int err = rc ? errno : 0;
	switch (connect_again(err)) {
	case Again::pass_keep:
		break;
	case Again::pass_done:
		pending_done(cfg, e.fd);
		break;
	case Again::fallback: {
		std::optional<PendingConnect> mine = pending_entry(e.fd, true);
		if (!mine)
			break;
		int tcp = pending_fallback(cfg, *mine, err);
		if (tcp == EINPROGRESS)
			return real_connect(e.fd,
					    reinterpret_cast<const struct sockaddr *>(&e.addr),
					    e.addr_len);
		errno = tcp;
		return tcp ? -1 : 0;
	}
	}
	errno = err;
	return rc;
}

/* --- bind (listeners) ---------------------------------------------------- */

int bind_smbdirect(const Config &cfg, int fd, const struct sockaddr *addr, socklen_t len,
		   const SocketIdentity &id, const Endpoint &target)
{
	char where[80];
	format_endpoint(target, where, sizeof(where));
	SocketState program = read_state(fd, id.domain);
	struct sockaddr_storage bound;
	to_sockaddr(target, &bound);
	Maker mk = maker(cfg, bound.ss_family);
	Prepared p;
	p.stage = Stage::family;
	p.err = mk.err;
	if (!mk.err) {
		Carry carry = carry_over(program, default_state(id.domain, program),
					 cfg.inet && mk.family == AF_INET6);
		carry.bind = target;
		if (carry.v6only_lost)
			debug_line(cfg,
				   "fd %d: IPV6_V6ONLY has no SMB-Direct equivalent: %s takes IPv4 "
				   "connections too",
				   fd, where);
		p = prepare_smbdirect(mk, carry);
	}
	if (p.fd >= 0) {
		int err = install(cfg, p.fd, fd, program);
		if (!err) {
			debug_line(cfg, "fd %d: bind %s -> SMB-Direct%s", fd, where, shape(cfg));
			return 0;
		}
		p.stage = Stage::socket;
		p.err = -err;
	}
	FailurePlan plan = after_bind_failure(cfg, p.err);
	if (plan.recovery == Recovery::fallback) {
		if (p.stage == Stage::family)
			debug_line(cfg, "fd %d: bind %s kept TCP (af_smbdirect is not loaded)", fd,
				   where);
		else
			debug_line(cfg, "fd %d: bind %s kept TCP (%s: %s)", fd, where,
				   stage_name(p.stage), std::strerror(p.err));
		return real_bind(fd, addr, len);
	}
	return fail(cfg, fd, "bind", where, p.stage,
		    p.stage == Stage::family ? EAFNOSUPPORT : plan.err);
}

bool inet_address(const struct sockaddr *addr, socklen_t len)
{
	return addr && len >= static_cast<socklen_t>(sizeof(sa_family_t)) &&
	       (addr->sa_family == AF_INET || addr->sa_family == AF_INET6);
}

void report_keep(const Config &cfg, int fd, const char *call, const Decision &d,
		 const struct sockaddr *addr, socklen_t len)
{
	if (!cfg.debug || !d.report)
		return;
	char where[80] = "?";
	char why[320];
	if (std::optional<Endpoint> e = parse_endpoint(addr, len))
		format_endpoint(*e, where, sizeof(where));
	format_reason(cfg, d, why, sizeof(why));
	debug_line(cfg, "fd %d: %s %s kept TCP: %s", fd, call, where, why);
}

} // namespace

/* --- the interposed calls -------------------------------------------------- */

extern "C" {

__attribute__((visibility("default"))) int connect(int fd, const struct sockaddr *addr,
						    socklen_t len)
{
	if (!inet_address(addr, len))
		return real_connect(fd, addr, len);
	Config cfg = config();
	if (std::optional<PendingConnect> e = pending_entry(fd, false))
		return pending_connect_again(cfg, *e);
	SocketIdentity id = identity(fd);
	Decision d = decide_connect(cfg, id, addr, len);
	if (d.action == Action::keep) {
		report_keep(cfg, fd, "connect", d, addr, len);
		return real_connect(fd, addr, len);
	}
	return connect_smbdirect(cfg, fd, addr, len, id, d.target);
}

__attribute__((visibility("default"))) int bind(int fd, const struct sockaddr *addr,
						 socklen_t len)
{
	if (!inet_address(addr, len))
		return real_bind(fd, addr, len);
	Config cfg = config();
	SocketIdentity id = identity(fd);
	Decision d = decide_bind(cfg, id, addr, len);
	if (d.action == Action::keep) {
		report_keep(cfg, fd, "bind", d, addr, len);
		return real_bind(fd, addr, len);
	}
	return bind_smbdirect(cfg, fd, addr, len, id, d.target);
}

__attribute__((visibility("default"))) int setsockopt(int fd, int level, int name,
						       const void *val, socklen_t len)
{
	int rc = real_setsockopt(fd, level, name, val, len);
	int err = rc ? errno : 0;
	/*
	 * A background attempt's kept TCP socket gets the options too: the
	 * fallback then has what the program set after connect().
	 */
	if (g_pending_count.load(std::memory_order_acquire)) {
		if (std::optional<PendingConnect> e = pending_entry(fd, false)) {
			MemoryLock lock;
			if (lock.held() && g_pending.find(fd, e->dev, e->ino))
				real_setsockopt(e->tcp_fd, level, name, val, len);
		}
	}
	if (rc == 0 || err != ENOPROTOOPT ||
	    (level != IPPROTO_TCP && level != IPPROTO_IP && level != IPPROTO_IPV6) ||
	    !is_smbdirect_fd(fd)) {
		errno = err;
		return rc;
	}
	OptionPolicy policy = option_policy(level, name);
	Config cfg = config();
	if (cfg.debug) {
		char opt[64];
		format_option(level, name, opt, sizeof(opt));
		debug_line(cfg,
			   policy.accepted
				   ? "fd %d: setsockopt %s: no effect on SMB-Direct"
				   : "fd %d: setsockopt %s: not on SMB-Direct (ENOPROTOOPT)",
			   fd, opt);
	}
	if (!policy.accepted) {
		errno = ENOPROTOOPT;
		return -1;
	}
	return 0;
}

__attribute__((visibility("default"))) int getsockopt(int fd, int level, int name, void *val,
						       socklen_t *len)
{
	int rc = real_getsockopt(fd, level, name, val, len);
	if (rc == 0 && level == SOL_SOCKET && name == SO_ERROR && val && len &&
	    *len >= static_cast<socklen_t>(sizeof(int)) &&
	    g_pending_count.load(std::memory_order_acquire)) {
		int v;
		std::memcpy(&v, val, sizeof(v));
		pending_so_error(config(), fd, &v);
		std::memcpy(val, &v, sizeof(v));
		return 0;
	}
	if (rc == 0 || errno != ENOPROTOOPT)
		return rc;
	std::optional<int> v = emulated_getsockopt(level, name);
	if (!v || !is_smbdirect_fd(fd)) {
		errno = ENOPROTOOPT;
		return rc;
	}
	if (!val || !len) {
		errno = EFAULT;
		return -1;
	}
	/* As TCP's int options: a shorter buffer gets the first bytes. */
	if (static_cast<int>(*len) < 0) {
		errno = EINVAL;
		return -1;
	}
	socklen_t n = *len < sizeof(int) ? *len : static_cast<socklen_t>(sizeof(int));
	std::memcpy(val, &*v, n);
	*len = n;
	return 0;
}

} // extern "C"
