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
 *   setsockopt  TCP/IP-level options on a replaced fd succeed without effect
 *   getsockopt  TCP_NODELAY, TCP_CORK, IPV6_V6ONLY read as SMB-Direct behaves
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
 * Connect, with fallback allowed (the default). The SMB-Direct attempt runs
 * on a side socket, blocking, bounded by SMBDIRECT_CONNECT_TIMEOUT (5 s, or
 * the program's shorter SO_SNDTIMEO); the program's TCP socket is untouched
 * meanwhile. On success the side socket replaces it (dup3 keeps the fd
 * number, FD_CLOEXEC and O_NONBLOCK are restored) and connect returns 0,
 * which POSIX allows for a non-blocking socket too (Samba's async connect
 * takes it). On failure the TCP connect runs as the program asked (a
 * non-blocking one returns EINPROGRESS as usual). A signal during the attempt
 * leaves the SMB-Direct connect going on the fd: EINTR, or EINPROGRESS for a
 * non-blocking socket, exactly what TCP would show.
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
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/smbdirect.h>

#include "config.hpp"
#include "decision.hpp"
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

__attribute__((constructor)) void preload_init()
{
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

SocketState read_state(int fd, int domain)
{
	SocketState s;
	sockopt_read(fd, SOL_SOCKET, SO_KEEPALIVE, &s.keepalive);
	sockopt_read(fd, SOL_SOCKET, SO_RCVBUF, &s.rcvbuf);
	sockopt_read(fd, SOL_SOCKET, SO_SNDBUF, &s.sndbuf);
	sockopt_read(fd, SOL_SOCKET, SO_RCVTIMEO, &s.rcvtimeo);
	sockopt_read(fd, SOL_SOCKET, SO_SNDTIMEO, &s.sndtimeo);
	sockopt_read(fd, SOL_SOCKET, SO_LINGER, &s.linger);
	if (domain == AF_INET6)
		sockopt_read(fd, IPPROTO_IPV6, IPV6_V6ONLY, &s.v6only);
	int fl = fcntl(fd, F_GETFL);
	s.nonblocking = fl >= 0 && (fl & O_NONBLOCK);
	int fdfl = fcntl(fd, F_GETFD);
	s.cloexec = fdfl >= 0 && (fdfl & FD_CLOEXEC);
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
	int current = sockopt_int(fd, SOL_SMBDIRECT, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, -1);
	std::optional<int> v = raised_max_fragmented_size(current);
	return !v || real_setsockopt(fd, SOL_SMBDIRECT, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, &*v,
				     sizeof(*v)) == 0;
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
	if (!raise_max_fragmented_size(fd) || !set_sockopt(fd, SO_KEEPALIVE, carry.keepalive) ||
	    !set_sockopt(fd, SO_RCVBUF, carry.rcvbuf) || !set_sockopt(fd, SO_SNDBUF, carry.sndbuf) ||
	    !set_sockopt(fd, SO_RCVTIMEO, carry.rcvtimeo) ||
	    !set_sockopt(fd, SO_SNDTIMEO, carry.sndtimeo) ||
	    !set_sockopt(fd, SO_LINGER, carry.linger)) {
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

/*
 * Puts sd on fd's number (closing the TCP socket there) with the program's
 * O_NONBLOCK and FD_CLOEXEC. 0 or -errno (sd is closed either way).
 */
int install(int sd, int fd, const SocketState &program)
{
	int err = 0;
	if (program.nonblocking) {
		int fl = fcntl(sd, F_GETFL);
		if (fl < 0 || fcntl(sd, F_SETFL, fl | O_NONBLOCK) < 0)
			err = -errno;
	}
	if (!err && dup3(sd, fd, program.cloexec ? O_CLOEXEC : 0) < 0)
		err = -errno;
	close(sd);
	return err;
}

/* --- connect -------------------------------------------------------------- */

/* The program's own connect over TCP, after the SMB-Direct attempt failed. */
int tcp_fallback(const Config &cfg, int fd, const struct sockaddr *addr, socklen_t len,
		 const char *where, Stage stage, int err)
{
	if (stage == Stage::timeout)
		debug_line(cfg, "fd %d: connect %s -> TCP fallback (no SMB-Direct connection within %u ms)",
			   fd, where, cfg.connect_timeout_ms);
	else if (stage == Stage::family)
		debug_line(cfg, "fd %d: connect %s -> TCP fallback (af_smbdirect is not loaded)", fd,
			   where);
	else
		debug_line(cfg, "fd %d: connect %s -> TCP fallback (%s: %s: %s)", fd, where,
			   error_class_name(classify_error(err)), stage_name(stage),
			   std::strerror(err));
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
	if (int err = install(p.fd, fd, program))
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
			return tcp_fallback(cfg, fd, addr, len, where, Stage::family, mk.err);
		/* As socket(2) says for a family that is not there. */
		return fail(cfg, fd, "connect", where, Stage::family, EAFNOSUPPORT);
	}
	Carry carry = carry_over(program, default_state(id.domain, program));
	if (!cfg.fallback)
		return connect_no_fallback(cfg, fd, program, carry, mk, sa, ss_len, where);

	/* The bounded attempt: blocking, with SO_SNDTIMEO as the bound. */
	std::optional<struct timeval> own_sndtimeo = carry.sndtimeo;
	carry.sndtimeo = ms_timeval(attempt_timeout_ms(cfg, program));
	Prepared p = prepare_smbdirect(mk, carry);
	if (p.fd < 0)
		return tcp_fallback(cfg, fd, addr, len, where, p.stage, p.err);
	int rc = real_connect(p.fd, sa, ss_len);
	int err = rc ? errno : 0;
	/* The program's send timeout (or the default, none) from now on. */
	struct timeval sndtimeo = own_sndtimeo.value_or(timeval{});
	real_setsockopt(p.fd, SOL_SOCKET, SO_SNDTIMEO, &sndtimeo, sizeof(sndtimeo));
	if (!rc) {
		int ierr = install(p.fd, fd, program);
		if (!ierr) {
			debug_line(cfg, "fd %d: connect %s -> SMB-Direct%s", fd, where, shape(cfg));
			return 0;
		}
		return tcp_fallback(cfg, fd, addr, len, where, Stage::socket, -ierr);
	}
	Stage stage = err == EINPROGRESS ? Stage::timeout : Stage::connect;
	FailurePlan plan = after_connect_failure(cfg, stage, err, program.nonblocking);
	switch (plan.recovery) {
	case Recovery::adopt:
		if (install(p.fd, fd, program) == 0) {
			debug_line(cfg, "fd %d: connect %s -> SMB-Direct (interrupted, %s)", fd,
				   where, std::strerror(plan.err));
			errno = plan.err;
			return -1;
		}
		return tcp_fallback(cfg, fd, addr, len, where, stage, err);
	case Recovery::fallback:
		close(p.fd);
		return tcp_fallback(cfg, fd, addr, len, where, stage, err);
	case Recovery::fail:
		break;
	}
	close(p.fd);
	return fail(cfg, fd, "connect", where, stage, plan.err);
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
		Carry carry = carry_over(program, default_state(id.domain, program));
		carry.bind = target;
		if (carry.v6only_lost)
			debug_line(cfg,
				   "fd %d: IPV6_V6ONLY has no SMB-Direct equivalent: %s takes IPv4 "
				   "connections too",
				   fd, where);
		p = prepare_smbdirect(mk, carry);
	}
	if (p.fd >= 0) {
		int err = install(p.fd, fd, program);
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
	if (rc == 0 || errno != ENOPROTOOPT || !ignored_setsockopt_level(level))
		return rc;
	if (!is_smbdirect_fd(fd)) {
		errno = ENOPROTOOPT;
		return rc;
	}
	Config cfg = config();
	if (cfg.debug) {
		char opt[64];
		format_option(level, name, opt, sizeof(opt));
		debug_line(cfg, "fd %d: setsockopt %s: no effect on SMB-Direct", fd, opt);
	}
	return 0;
}

__attribute__((visibility("default"))) int getsockopt(int fd, int level, int name, void *val,
						       socklen_t *len)
{
	int rc = real_getsockopt(fd, level, name, val, len);
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
