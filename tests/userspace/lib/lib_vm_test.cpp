// SPDX-License-Identifier: GPL-2.0
//
// sd_lib_vm_test: libsmbdirect end to end in the test VM, over rxe and siw,
// IPv4 and IPv6. Prints TAP; run by tests/userspace/lib.sh.
//
//   sd_lib_vm_test [SUBSTRING...]   only the cases whose name contains one
//   sd_lib_vm_test --list           the case names
//
// Every case runs in a child process of its own with an alarm, so a hang
// or a crash fails that case only. Case names: lib.<transport>.<what>, or
// lib.<what> for those without a transport.
//
// What this proves about fork() and fd passing (documented in
// libsmbdirect(3)): a registration belongs to the socket, that is the
// open file description, not to the process that made it.
//  - After fork() parent and child share the socket and all its
//    registrations; either may use the connection, register, and
//    deregister any id of it. Closing one copy changes nothing while the
//    other is open; the last close tears the connection down and releases
//    every registration.
//  - The memory of a registration stays the registrant's: pages pinned for
//    the peer are not shared with a child forked later (the child gets its
//    own copy of them at fork time), so the peer's RDMA writes land in the
//    registrant's memory only. The pinned pages count in the registrant's
//    VmPin until the registration is deregistered, by whichever process.
//  - A registration made by a child lives on after its parent exits; one
//    made by a process that exits lives on while another process holds the
//    socket (its pages stay pinned until deregistered or the socket closes).
//  - SCM_RIGHTS passes the socket like any fd: the receiver can send,
//    receive, register and RDMA-read/write, and holds the registrations too.
#include <smbdirect/smbdirect.h>
#include <smbdirect/smbdirect.hpp>

#include <arpa/inet.h>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <net/if.h>
#include <poll.h>
#include <string>
#include <sys/mman.h>
#include <algorithm>
#include <utility>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>
#ifdef SD_HAVE_LIBURING
#include <liburing.h>
#endif

namespace
{

struct Target {
	const char *name; // rxe4, rxe6, siw4, siw6
	const char *addr; // used by both ends
	int af;
	uint32_t transport;
};

const Target targets[] = {
	{ "rxe4", "10.77.0.1", AF_INET, SMBDIRECT_TRANSPORT_ROCE },
	{ "rxe6", "fd77::1", AF_INET6, SMBDIRECT_TRANSPORT_ROCE },
	{ "siw4", "10.77.0.2", AF_INET, SMBDIRECT_TRANSPORT_IWARP },
	{ "siw6", "fd77::2", AF_INET6, SMBDIRECT_TRANSPORT_IWARP },
};

constexpr int step_ms = 20000;

// A case's verdict: "" passes, "SKIP: why" skips, anything else fails.
using Verdict = std::string;

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}

// Fails the case with a message naming the line.
#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return format("line %d: ", __LINE__) + format(__VA_ARGS__);                \
	} while (0)
// A C API call that must return >= 0.
#define REQUIRE_OK(expr)                                                                           \
	do {                                                                                       \
		long _r = (long)(expr);                                                            \
		if (_r < 0)                                                                        \
			return format("line %d: %s: %s", __LINE__, #expr, strerror((int)-_r));     \
	} while (0)
#define TRY(expr)                                                                                  \
	do {                                                                                       \
		Verdict _v = (expr);                                                               \
		if (!_v.empty())                                                                   \
			return _v;                                                                 \
	} while (0)

// --- small helpers -------------------------------------------------------------

long vm_pin_kb()
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	char line[256];
	long kb = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

// Page-aligned, zeroed memory that is unmapped on scope exit.
struct Buffer {
	explicit Buffer(size_t n) : size(n)
	{
		void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);
		data = p == MAP_FAILED ? nullptr : static_cast<unsigned char *>(p);
	}
	~Buffer()
	{
		if (data)
			munmap(data, size);
	}
	Buffer(const Buffer &) = delete;
	Buffer &operator=(const Buffer &) = delete;
	unsigned char *data;
	size_t size;
};

void fill(unsigned char *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = static_cast<unsigned char>(x);
	}
}

// Index of the first byte that differs from fill(seed), or -1.
long check_fill(const unsigned char *p, size_t n, uint32_t seed)
{
	std::vector<unsigned char> want(n);
	fill(want.data(), n, seed);
	for (size_t i = 0; i < n; i++)
		if (p[i] != want[i])
			return static_cast<long>(i);
	return -1;
}

void set_timeouts(int fd)
{
	struct timeval tv = { step_ms / 1000, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int poll_fd(int fd, short events, int ms)
{
	struct pollfd p = { fd, events, 0 };
	int r = poll(&p, 1, ms);
	return r < 0 ? -errno : r == 0 ? -ETIMEDOUT : p.revents;
}

// SOCK_STREAM framing: a 4-byte big-endian length, then the message.
int send_msg(int fd, const void *data, uint32_t len)
{
	uint32_t be = htonl(len);
	struct iovec iov[2] = { { &be, 4 }, { const_cast<void *>(data), len } };
	struct msghdr msg = {};
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;
	ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return n == static_cast<ssize_t>(len + 4) ? 0 : -EIO;
}

int recv_all(int fd, void *buf, size_t len)
{
	auto *p = static_cast<unsigned char *>(buf);
	while (len) {
		ssize_t n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= static_cast<size_t>(n);
	}
	return 0;
}

// One message into buf (room cap); its length, or -errno.
long recv_msg(int fd, void *buf, uint32_t cap)
{
	uint32_t be;
	int r = recv_all(fd, &be, 4);
	if (r)
		return r;
	uint32_t len = ntohl(be);
	if (len > cap)
		return -EMSGSIZE;
	r = recv_all(fd, buf, len);
	return r ? r : len;
}

// A message holding the registration's descriptors.
int send_descriptors(int fd, const smbdirect_buffer_descriptor_v1 *d, uint32_t n)
{
	return send_msg(fd, d, n * static_cast<uint32_t>(sizeof(*d)));
}

long recv_descriptors(int fd, std::vector<smbdirect_buffer_descriptor_v1> &d)
{
	d.resize(64);
	long n = recv_msg(fd, d.data(), static_cast<uint32_t>(d.size() * sizeof(d[0])));
	if (n < 0)
		return n;
	if (n == 0 || n % sizeof(d[0]))
		return -EPROTO;
	d.resize(static_cast<size_t>(n) / sizeof(d[0]));
	return static_cast<long>(d.size());
}

// A listener on the target's address and an ephemeral port.
int listen_on(const Target &t, int type, int *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int r = smbdirect_parse_address(t.addr, "0", &ss, &len);
	if (r)
		return r;
	int fd = smbdirect_listen(reinterpret_cast<sockaddr *>(&ss), len, type, SOCK_CLOEXEC, 8);
	if (fd < 0)
		return fd;
	len = sizeof(ss);
	if (getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len)) {
		r = -errno;
		close(fd);
		return r;
	}
	*port = ss.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in *>(&ss)->sin_port)
					: ntohs(reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port);
	return fd;
}

int accept_ms(int lfd, int ms, struct sockaddr_storage *peer = nullptr)
{
	int r = poll_fd(lfd, POLLIN, ms);
	if (r < 0)
		return r;
	socklen_t len = sizeof(*peer);
	int fd = smbdirect_accept(lfd, reinterpret_cast<sockaddr *>(peer), peer ? &len : nullptr,
				  SOCK_CLOEXEC);
	if (fd >= 0)
		set_timeouts(fd);
	return fd;
}

// A non-blocking connect that has completed (then made blocking again).
int connect_to(const Target &t, int port, int type)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int r = smbdirect_parse_address(t.addr, std::to_string(port).c_str(), &ss, &len);
	if (r)
		return r;
	int fd = smbdirect_connect(reinterpret_cast<sockaddr *>(&ss), len, type,
				   SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return fd;
	set_timeouts(fd);
	return fd;
}

int finish_connect(int fd)
{
	int r = poll_fd(fd, POLLOUT, step_ms);
	if (r < 0)
		return r;
	int err = 0;
	socklen_t len = sizeof(err);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return -errno;
	if (err)
		return -err;
	int fl = fcntl(fd, F_GETFL);
	return fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ? -errno : 0;
}

// A connected pair: *c from connect, *s from accept.
Verdict pair(const Target &t, int type, int *c, int *s)
{
	int port = 0;
	int lfd = listen_on(t, type, &port);
	REQUIRE(lfd >= 0, "listen on %s: %s", t.addr, strerror(-lfd));
	*c = connect_to(t, port, type);
	if (*c < 0) {
		close(lfd);
		return format("connect to %s port %d: %s", t.addr, port, strerror(-*c));
	}
	*s = accept_ms(lfd, step_ms);
	close(lfd);
	REQUIRE(*s >= 0, "accept: %s", strerror(-*s));
	int r = finish_connect(*c);
	REQUIRE(r == 0, "connect completion: %s", strerror(-r));
	return "";
}

// Closes on scope exit.
struct Fd {
	int fd = -1;
	Fd() = default;
	explicit Fd(int f) : fd(f)
	{
	}
	~Fd()
	{
		if (fd >= 0)
			close(fd);
	}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	operator int() const
	{
		return fd;
	}
};

// Waits for pid; "" if it exited 0, else what happened.
Verdict wait_child(pid_t pid, const char *who)
{
	int status = 0;
	if (waitpid(pid, &status, 0) < 0)
		return format("waitpid %s: %s", who, strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return "";
	if (WIFSIGNALED(status))
		return format("%s killed by signal %d", who, WTERMSIG(status));
	return format("%s exited %d", who, WEXITSTATUS(status));
}

// Runs f in a child process; its verdict goes through a pipe.
struct Child {
	pid_t pid = -1;
	int verdict_fd = -1;
};

Child spawn(const std::function<Verdict()> &f)
{
	int p[2];
	Child c;
	if (pipe2(p, O_CLOEXEC))
		return c;
	c.pid = fork();
	if (c.pid == 0) {
		close(p[0]);
		Verdict v = f();
		if (write(p[1], v.data(), v.size()) < 0)
			_exit(2);
		_exit(v.empty() ? 0 : 1);
	}
	close(p[1]);
	c.verdict_fd = p[0];
	return c;
}

// What a child wrote into its verdict pipe, read once it has exited (its
// own children may still hold the pipe open, so EOF cannot be waited for).
std::string drain(int fd)
{
	std::string text;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	char buf[512];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		text.append(buf, static_cast<size_t>(n));
	close(fd);
	return text;
}

Verdict join(Child &c, const char *who)
{
	if (c.pid < 0)
		return format("%s: fork failed", who);
	Verdict w = wait_child(c.pid, who);
	std::string text = drain(c.verdict_fd);
	if (!text.empty())
		return std::string(who) + ": " + text;
	return w;
}

// Sync between processes: one byte through a pipe.
int signal_fd(int fd)
{
	char b = 1;
	return write(fd, &b, 1) == 1 ? 0 : -errno;
}

int wait_fd(int fd)
{
	int r = poll_fd(fd, POLLIN, step_ms);
	if (r < 0)
		return r;
	char b;
	ssize_t n = read(fd, &b, 1);
	return n == 1 ? 0 : n == 0 ? -EPIPE : -errno;
}

// --- cases without a transport ---------------------------------------------------

Verdict case_available()
{
	FILE *f = fopen(SMBDIRECT_FAMILY_SYSFS, "r");
	REQUIRE(f, "%s: %s", SMBDIRECT_FAMILY_SYSFS, strerror(errno));
	int family = -1;
	int got = fscanf(f, "%d", &family);
	fclose(f);
	REQUIRE(got == 1 && family > 0, "cannot parse %s", SMBDIRECT_FAMILY_SYSFS);
	REQUIRE(smbdirect_family() == family, "smbdirect_family %d, sysfs %d", smbdirect_family(),
		family);
	char why[256];
	int r = smbdirect_available(why, sizeof(why));
	REQUIRE(r == 0, "smbdirect_available: %s (%s)", strerror(-r), why);
	REQUIRE(strstr(why, "is loaded"), "why: %s", why);
	REQUIRE(!strcmp(smbdirect_version(), SMBDIRECT_VERSION_STRING), "version %s", smbdirect_version());
	std::string cpp_why;
	auto ok = sd::available(&cpp_why);
	REQUIRE(ok && cpp_why == why, "sd::available: %s", cpp_why.c_str());
	return "";
}

Verdict case_socket_flags()
{
	struct {
		int domain, type, flags;
		bool nonblock, cloexec;
	} cases[] = {
		{ AF_INET, SOCK_STREAM, 0, false, false },
		{ AF_INET6, SOCK_SEQPACKET, SOCK_CLOEXEC, false, true },
		{ AF_UNSPEC, SOCK_STREAM | SOCK_NONBLOCK, 0, true, false },
		{ AF_INET, SOCK_SEQPACKET | SOCK_CLOEXEC, SOCK_NONBLOCK, true, true },
	};
	for (auto &c : cases) {
		Fd fd(smbdirect_socket(c.domain, c.type, c.flags));
		REQUIRE_OK(fd.fd);
		int type = 0;
		socklen_t len = sizeof(type);
		REQUIRE(getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0, "SO_TYPE: %s",
			strerror(errno));
		REQUIRE(type == (c.type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)), "type %d", type);
		REQUIRE(!!(fcntl(fd, F_GETFL) & O_NONBLOCK) == c.nonblock, "O_NONBLOCK wrong");
		REQUIRE(!!(fcntl(fd, F_GETFD) & FD_CLOEXEC) == c.cloexec, "FD_CLOEXEC wrong");
		struct smbdirect_params p;
		REQUIRE(smbdirect_connection_get_parameters(fd, &p) == -ENOTCONN,
			"parameters before connect");
		struct smbdirect_rdma_v1_registration reg;
		char b[64];
		struct iovec iov = { b, sizeof(b) };
		REQUIRE(smbdirect_rdma_v1_register(fd, &iov, 1, SMBDIRECT_ACCESS_PEER_READ, &reg) ==
				-ENOTCONN,
			"register before connect");
	}
	REQUIRE(smbdirect_socket(AF_INET, SOCK_DGRAM, 0) == -ESOCKTNOSUPPORT, "SOCK_DGRAM");
	REQUIRE(smbdirect_socket(AF_UNIX, SOCK_STREAM, 0) == -EAFNOSUPPORT, "AF_UNIX");
	return "";
}

Verdict case_parse_address()
{
	struct sockaddr_storage ss;
	socklen_t len;
	REQUIRE_OK(smbdirect_parse_address("fe80::1%veth0", "445", &ss, &len));
	REQUIRE(reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_scope_id == if_nametoindex("veth0"),
		"scope of veth0");
	REQUIRE(smbdirect_parse_address("10.77.0.1", "x", &ss, &len) == -EINVAL, "bad port");
	return "";
}

const smbdirect_interface *find_if(const smbdirect_interface *list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(list[i].name, name))
			return &list[i];
	return nullptr;
}

bool has_address(const smbdirect_interface &e, const char *text)
{
	for (uint32_t i = 0; i < e.addr_count; i++) {
		char buf[INET6_ADDRSTRLEN] = "";
		const sockaddr_storage &a = e.addrs[i];
		if (a.ss_family == AF_INET)
			inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(&a)->sin_addr,
				  buf, sizeof(buf));
		else
			inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 *>(&a)->sin6_addr,
				  buf, sizeof(buf));
		if (!strcmp(buf, text))
			return true;
	}
	return false;
}

// What the guest has (guest-init.sh): rxe0 on veth0, siw1 on veth1, siw0 on lo.
Verdict case_interfaces()
{
	smbdirect_interface *list = nullptr;
	int n = smbdirect_interfaces(&list, 0);
	REQUIRE_OK(n);
	struct Free {
		smbdirect_interface *l;
		int n;
		~Free()
		{
			smbdirect_interfaces_free(l, n);
		}
	} free_list{ list, n };

	const smbdirect_interface *v0 = find_if(list, n, "veth0");
	REQUIRE(v0, "veth0 not listed");
	REQUIRE(v0->flags & SMBDIRECT_IF_RDMA_CAPABLE, "veth0 not capable: %s", v0->reason);
	REQUIRE(v0->flags & SMBDIRECT_IF_UP, "veth0 not up");
	REQUIRE(!strcmp(v0->rdma_device, "rxe0") && v0->transport == SMBDIRECT_TRANSPORT_ROCE &&
			v0->rdma_port == 1,
		"veth0: %s/%u %s", v0->rdma_device, v0->rdma_port,
		smbdirect_transport_name(v0->transport));
	REQUIRE(has_address(*v0, "10.77.0.1") && has_address(*v0, "fd77::1"), "veth0 addresses");
	REQUIRE(v0->speed_bps > 0, "veth0 speed unknown");

	const smbdirect_interface *v1 = find_if(list, n, "veth1");
	REQUIRE(v1, "veth1 not listed");
	REQUIRE(v1->flags & SMBDIRECT_IF_RDMA_CAPABLE, "veth1 not capable: %s", v1->reason);
	REQUIRE(!strcmp(v1->rdma_device, "siw1") && v1->transport == SMBDIRECT_TRANSPORT_IWARP,
		"veth1: %s %s", v1->rdma_device, smbdirect_transport_name(v1->transport));
	REQUIRE(has_address(*v1, "10.77.0.2") && has_address(*v1, "fd77::2"), "veth1 addresses");

	// siw0 sits on lo, but nobody else can reach lo: listed, not capable.
	const smbdirect_interface *lo = find_if(list, n, "lo");
	REQUIRE(lo, "lo (carrying siw0) not listed");
	REQUIRE(!(lo->flags & SMBDIRECT_IF_RDMA_CAPABLE), "lo capable");
	REQUIRE(!strcmp(lo->rdma_device, "siw0"), "lo device %s", lo->rdma_device);

	// The C++ view says the same; LIST_ALL lists at least as much.
	auto cpp = sd::interfaces();
	REQUIRE(cpp && static_cast<int>(cpp->size()) == n, "sd::interfaces");
	auto all = sd::interfaces(SMBDIRECT_IF_LIST_ALL);
	REQUIRE(all && static_cast<int>(all->size()) >= n, "LIST_ALL");
	return "";
}

// The module goes away and comes back in another slot: the cached family
// is re-read once; while it is away, "not loaded" says so.
Verdict case_family_reload()
{
	const char *dir = getenv("SD_MODULE_DIR");
	if (!dir || !*dir)
		return "SKIP: SD_MODULE_DIR is not set";
	std::string ko = std::string(dir) + "/af_smbdirect.ko";
	if (access(ko.c_str(), R_OK))
		return "SKIP: no " + ko;
	int before = smbdirect_family(); // cached from here on
	REQUIRE(before > 0, "family %d", before);
	const int candidates[] = SMBDIRECT_FAMILY_CANDIDATES;
	int other = 0;
	for (int candidate : candidates)
		if (candidate != before) {
			other = candidate;
			break;
		}
	std::string load_other =
		"rmmod af_smbdirect && insmod " + ko + " family=" + std::to_string(other);
	std::string restore = "rmmod af_smbdirect 2>/dev/null; insmod " + ko;
	if (system(load_other.c_str())) {
		(void)!system(restore.c_str());
		return format("could not reload the module into family %d", other);
	}
	// The cache still says `before`: socket() fails, the library looks again.
	int fd = smbdirect_socket(AF_INET, SOCK_STREAM, SOCK_CLOEXEC);
	int after = smbdirect_family();
	if (fd >= 0)
		close(fd);
	int unloaded = system("rmmod af_smbdirect");
	char why[256] = "";
	int r = smbdirect_available(why, sizeof(why));
	int sock = smbdirect_socket(AF_INET, SOCK_STREAM, 0);
	if (sock >= 0)
		close(sock);
	REQUIRE(system(("insmod " + ko).c_str()) == 0, "restoring the module failed");
	REQUIRE(fd >= 0, "socket after the reload into family %d: %s", other, strerror(-fd));
	REQUIRE(after == other, "family after the reload %d, want %d", after, other);
	REQUIRE(unloaded == 0, "rmmod failed");
	REQUIRE(r == -ENOENT && !strcmp(why, "af_smbdirect is not loaded: modprobe af_smbdirect"),
		"while unloaded: %d \"%s\"", r, why);
	REQUIRE(sock == -ENOENT, "socket while unloaded: %d", sock);
	REQUIRE(smbdirect_family() == before, "family after restoring %d, want %d",
		smbdirect_family(), before);
	return "";
}

// --- cases per transport ------------------------------------------------------------

Verdict exchange(int a, int b, const char *what)
{
	char buf[64];
	REQUIRE_OK(send_msg(a, what, static_cast<uint32_t>(strlen(what))));
	long n = recv_msg(b, buf, sizeof(buf));
	REQUIRE(n == static_cast<long>(strlen(what)) && !memcmp(buf, what, strlen(what)),
		"message %s: %ld", what, n);
	return "";
}

Verdict case_connect_accept(const Target &t)
{
	// Non-blocking connect through smbdirect_connect(), accept with the
	// peer's address.
	int port = 0;
	Fd lfd(listen_on(t, SOCK_STREAM, &port));
	REQUIRE(lfd >= 0, "listen: %s", strerror(-lfd.fd));
	REQUIRE(fcntl(lfd, F_GETFD) & FD_CLOEXEC, "listener lacks FD_CLOEXEC");
	Fd c(connect_to(t, port, SOCK_STREAM));
	REQUIRE(c >= 0, "connect: %s", strerror(-c.fd));
	REQUIRE(fcntl(c, F_GETFL) & O_NONBLOCK, "client not O_NONBLOCK");
	struct sockaddr_storage peer = {};
	Fd s(accept_ms(lfd, step_ms, &peer));
	REQUIRE(s >= 0, "accept: %s", strerror(-s.fd));
	REQUIRE(peer.ss_family == t.af, "peer family %d", peer.ss_family);
	REQUIRE_OK(finish_connect(c));
	TRY(exchange(c, s, "hello server"));
	TRY(exchange(s, c, "hello client"));

	// Blocking connect (flags 0), SOCK_SEQPACKET, in a thread against accept.
	Fd lseq(listen_on(t, SOCK_SEQPACKET, &port));
	REQUIRE(lseq >= 0, "listen seqpacket: %s", strerror(-lseq.fd));
	struct sockaddr_storage ss;
	socklen_t len;
	REQUIRE_OK(smbdirect_parse_address(t.addr, std::to_string(port).c_str(), &ss, &len));
	int cfd = -1;
	std::thread th([&] {
		cfd = smbdirect_connect(reinterpret_cast<sockaddr *>(&ss), len, SOCK_SEQPACKET, 0);
	});
	Fd s2(accept_ms(lseq, step_ms));
	th.join();
	Fd c2(cfd);
	REQUIRE(c2 >= 0, "blocking connect: %s", strerror(-c2.fd));
	REQUIRE(s2 >= 0, "accept seqpacket: %s", strerror(-s2.fd));
	REQUIRE(!(fcntl(c2, F_GETFL) & O_NONBLOCK), "blocking client is O_NONBLOCK");
	set_timeouts(c2);
	REQUIRE(send(c2, "one message", 11, 0) == 11, "seqpacket send: %s", strerror(errno));
	char buf[32];
	REQUIRE(recv(s2, buf, sizeof(buf), 0) == 11 && !memcmp(buf, "one message", 11),
		"seqpacket recv");
	return "";
}

Verdict case_options(const Target &t)
{
	int port = 0;
	Fd lfd(listen_on(t, SOCK_STREAM, &port));
	REQUIRE(lfd >= 0, "listen: %s", strerror(-lfd.fd));
	Fd c(smbdirect_socket(t.af, SOCK_STREAM, SOCK_CLOEXEC));
	REQUIRE_OK(c.fd);

	struct {
		int (*set)(int, uint32_t);
		int (*get)(int, uint32_t *);
		int option;
		uint32_t value, bad;
	} opts[] = {
		{ smbdirect_set_receive_credit_max, smbdirect_get_receive_credit_max,
		  SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, 100, 1 },
		{ smbdirect_set_send_credit_target, smbdirect_get_send_credit_target,
		  SMBDIRECT_OPT_SEND_CREDIT_TARGET, 90, 2000 },
		{ smbdirect_set_max_send_size, smbdirect_get_max_send_size,
		  SMBDIRECT_OPT_MAX_SEND_SIZE, 4096, 64 },
		{ smbdirect_set_max_receive_size, smbdirect_get_max_receive_size,
		  SMBDIRECT_OPT_MAX_RECEIVE_SIZE, 8192, 70000 },
		{ smbdirect_set_max_fragmented_size, smbdirect_get_max_fragmented_size,
		  SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, 262144, 100 },
		{ smbdirect_set_max_read_write_size, smbdirect_get_max_read_write_size,
		  SMBDIRECT_OPT_MAX_READ_WRITE_SIZE, 1048576, 1024 },
		{ smbdirect_set_keepalive_interval, smbdirect_get_keepalive_interval,
		  SMBDIRECT_OPT_KEEPALIVE_INTERVAL, 33, 90000 },
	};
	for (auto &o : opts) {
		REQUIRE_OK(o.set(c, o.value));
		uint32_t v = 0, g = 0;
		REQUIRE_OK(o.get(c, &v));
		REQUIRE(v == o.value, "option %d: got %u, set %u", o.option, v, o.value);
		REQUIRE_OK(smbdirect_get_option(c, o.option, &g));
		REQUIRE(g == v, "generic get of option %d: %u", o.option, g);
		REQUIRE(o.set(c, o.bad) == -EINVAL, "option %d takes %u", o.option, o.bad);
	}
	REQUIRE(smbdirect_set_option(c, 99, 1) == -ENOPROTOOPT, "unknown option");

	struct sockaddr_storage ss;
	socklen_t len;
	REQUIRE_OK(smbdirect_parse_address(t.addr, std::to_string(port).c_str(), &ss, &len));
	int fl = fcntl(c, F_GETFL);
	fcntl(c, F_SETFL, fl | O_NONBLOCK);
	int r = connect(c, reinterpret_cast<sockaddr *>(&ss), len) ? -errno : 0;
	REQUIRE(r == 0 || r == -EINPROGRESS, "connect: %s", strerror(-r));
	Fd s(accept_ms(lfd, step_ms));
	REQUIRE(s >= 0, "accept: %s", strerror(-s.fd));
	REQUIRE_OK(finish_connect(c));
	set_timeouts(c);

	REQUIRE(smbdirect_set_max_send_size(c, 2048) == -EISCONN, "set after connect");
	uint32_t v = 0;
	REQUIRE_OK(smbdirect_get_keepalive_interval(c, &v));
	REQUIRE(v == 33, "keepalive after connect %u", v);

	struct smbdirect_params p;
	memset(&p, 0xff, sizeof(p));
	REQUIRE_OK(smbdirect_connection_get_parameters(c, &p));
	REQUIRE(p.size == sizeof(p), "size %u", p.size);
	REQUIRE(p.version == 0x0100, "version %#x", p.version);
	REQUIRE(p.transport == t.transport, "transport %s", smbdirect_transport_name(p.transport));
	REQUIRE(p.max_fragmented_receive_size == 262144, "fragmented receive %u",
		p.max_fragmented_receive_size);
	REQUIRE(p.keepalive_interval == 33, "keepalive %u", p.keepalive_interval);
	REQUIRE(p.receive_credit_max == 100, "receive credits %u", p.receive_credit_max);
	REQUIRE(p.max_send_size <= 4096 && p.max_send_size >= 128, "send size %u", p.max_send_size);
	REQUIRE(p.max_read_write_size <= 1048576 && p.max_read_write_size > 0, "rw size %u",
		p.max_read_write_size);
	struct smbdirect_params ps;
	REQUIRE_OK(smbdirect_connection_get_parameters(s, &ps));
	REQUIRE(ps.transport == t.transport && ps.max_fragmented_send_size == 262144,
		"server side: fragmented send %u", ps.max_fragmented_send_size);
	REQUIRE(smbdirect_connection_get_parameters(lfd, &p) == -ENOTCONN, "listener parameters");
	// The C++ view of the same.
	sd::Socket view(dup(c));
	auto cp = view.params();
	REQUIRE(cp && cp->keepalive_interval == 33, "sd::Socket::params");
	auto opt = view.option(SMBDIRECT_OPT_MAX_READ_WRITE_SIZE);
	REQUIRE(opt && *opt == 1048576, "sd::Socket::option");
	return "";
}

// Registers on the client, the server reads and writes it.
Verdict case_rdma(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	// Two segments, the second starting inside a page: two descriptors at least.
	Buffer a(256 * 1024), b(3 * 4096);
	REQUIRE(a.data && b.data, "mmap");
	fill(a.data, a.size, 1);
	fill(b.data + 100, 8000, 2);
	struct iovec iov[2] = { { a.data, a.size }, { b.data + 100, 8000 } };
	long pin0 = vm_pin_kb();
	struct smbdirect_rdma_v1_registration reg;
	REQUIRE_OK(smbdirect_rdma_v1_register(
		c, iov, 2, SMBDIRECT_ACCESS_PEER_READ | SMBDIRECT_ACCESS_PEER_WRITE, &reg));
	REQUIRE(reg.id != 0 && reg.desc && reg.desc_count >= 2, "registration %" PRIu64 " %u",
		reg.id, reg.desc_count);
	long pin1 = vm_pin_kb();
	REQUIRE(pin1 - pin0 >= 256 + 8, "VmPin %ld -> %ld", pin0, pin1);
	uint64_t total = 0;
	for (uint32_t i = 0; i < reg.desc_count; i++)
		total += le32toh(reg.desc[i].length);
	REQUIRE(total == a.size + 8000, "descriptors cover %" PRIu64, total);
	REQUIRE_OK(send_descriptors(c, reg.desc, reg.desc_count));

	std::vector<smbdirect_buffer_descriptor_v1> d;
	REQUIRE(recv_descriptors(s, d) == reg.desc_count, "descriptors arrived");
	// READV: the server pulls the client's bytes.
	Buffer in(a.size + 8192);
	struct iovec into[2] = { { in.data, 100000 },
				 { in.data + 100000, a.size + 8000 - 100000 } };
	ssize_t n = smbdirect_rdma_v1_readv(s, into, 2, d.data(), static_cast<uint32_t>(d.size()));
	REQUIRE(n == static_cast<ssize_t>(a.size + 8000), "readv: %zd (%s)", n,
		n < 0 ? strerror(static_cast<int>(-n)) : "");
	REQUIRE(check_fill(in.data, a.size, 1) < 0, "readv data (first segment)");
	REQUIRE(check_fill(in.data + a.size, 8000, 2) < 0, "readv data (second segment)");
	// WRITEV: the server pushes new bytes; fewer local bytes than remote.
	Buffer out(a.size);
	fill(out.data, out.size, 3);
	struct iovec from = { out.data, out.size };
	n = smbdirect_rdma_v1_writev(s, &from, 1, d.data(), static_cast<uint32_t>(d.size()));
	REQUIRE(n == static_cast<ssize_t>(a.size), "writev: %zd", n);
	TRY(exchange(s, c, "written"));
	REQUIRE(check_fill(a.data, a.size, 3) < 0, "writev data");
	REQUIRE(check_fill(b.data + 100, 8000, 2) < 0, "writev wrote beyond its bytes");

	int state = smbdirect_rdma_v1_deregister(c, &reg);
	REQUIRE(state == 0, "deregister: %d", state);
	REQUIRE(reg.id == 0 && reg.desc == nullptr, "registration not zeroed");
	REQUIRE(vm_pin_kb() == pin0, "VmPin %ld after deregister, %ld before", vm_pin_kb(), pin0);
	REQUIRE(smbdirect_rdma_v1_deregister(c, &reg) == -ENOENT, "second deregister");
	// The token is dead now: the peer is refused, and the connection ends.
	// (iWARP does not acknowledge RDMA WRITEs: there the writer may not know.)
	n = smbdirect_rdma_v1_writev(s, &from, 1, d.data(), 1);
	REQUIRE(n < 0 || t.transport == SMBDIRECT_TRANSPORT_IWARP,
		"writev after deregister moved %zd bytes", n);
	return "";
}

// More descriptors than the library's first guess: it grows the array.
Verdict case_register_many(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	// 10 MiB in one segment: 5 MRs on rxe (512 pages each), 10 on siw (256).
	Buffer big(10 << 20);
	REQUIRE(big.data, "mmap");
	struct iovec iov = { big.data, big.size };
	struct smbdirect_rdma_v1_registration reg;
	REQUIRE_OK(smbdirect_rdma_v1_register(c, &iov, 1, SMBDIRECT_ACCESS_PEER_WRITE, &reg));
	REQUIRE(reg.desc_count > 4, "only %u descriptors", reg.desc_count);
	uint64_t total = 0;
	for (uint32_t i = 0; i < reg.desc_count; i++)
		total += le32toh(reg.desc[i].length);
	REQUIRE(total == big.size, "descriptors cover %" PRIu64, total);
	// The last descriptor works: the peer writes its first 64 KiB.
	REQUIRE_OK(send_descriptors(c, &reg.desc[reg.desc_count - 1], 1));
	std::vector<smbdirect_buffer_descriptor_v1> d;
	REQUIRE(recv_descriptors(s, d) == 1, "descriptor arrived");
	Buffer out(65536);
	fill(out.data, out.size, 9);
	struct iovec from = { out.data, out.size };
	REQUIRE(smbdirect_rdma_v1_writev(s, &from, 1, d.data(), 1) == 65536, "writev");
	TRY(exchange(s, c, "done"));
	size_t tail = big.size - le32toh(reg.desc[reg.desc_count - 1].length);
	REQUIRE(check_fill(big.data + tail, 65536, 9) < 0, "data in the last region");
	REQUIRE(smbdirect_rdma_v1_deregister(c, &reg) == 0, "deregister");
	return "";
}

// The server answers with SEND_WITH_INVALIDATE: deregister reports it.
Verdict case_invalidate(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	Buffer a(65536);
	struct iovec iov = { a.data, a.size };
	struct smbdirect_rdma_v1_registration reg;
	REQUIRE_OK(smbdirect_rdma_v1_register(
		c, &iov, 1, SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE, &reg));
	REQUIRE(reg.desc_count == 1, "%u descriptors", reg.desc_count);
	REQUIRE_OK(send_descriptors(c, reg.desc, 1));
	std::vector<smbdirect_buffer_descriptor_v1> d;
	REQUIRE(recv_descriptors(s, d) == 1, "descriptor arrived");
	Buffer out(a.size);
	fill(out.data, out.size, 4);
	struct iovec from = { out.data, out.size };
	REQUIRE(smbdirect_rdma_v1_writev(s, &from, 1, d.data(), 1) == 65536, "writev");
	// A framed reply whose last PDU invalidates the client's token.
	const char reply[] = "read done";
	uint32_t be = htonl(sizeof(reply));
	struct iovec msg[2] = { { &be, 4 }, { const_cast<char *>(reply), sizeof(reply) } };
	ssize_t n = smbdirect_send_with_invalidate(s, msg, 2, le32toh(d[0].token), MSG_NOSIGNAL);
	REQUIRE(n == static_cast<ssize_t>(4 + sizeof(reply)), "send_with_invalidate: %zd (%s)", n,
		n < 0 ? strerror(static_cast<int>(-n)) : "");
	char buf[64];
	REQUIRE(recv_msg(c, buf, sizeof(buf)) == static_cast<long>(sizeof(reply)), "reply");
	REQUIRE(check_fill(a.data, a.size, 4) < 0, "data");
	int state = smbdirect_rdma_v1_deregister(c, &reg);
	REQUIRE(state == SMBDIRECT_REG_STATE_REMOTE_INVALIDATED, "deregister state %d", state);
	// The cmsg builder feeds a plain sendmsg() just as well.
	struct smbdirect_rdma_v1_registration reg2;
	REQUIRE_OK(smbdirect_rdma_v1_register(
		c, &iov, 1, SMBDIRECT_ACCESS_PEER_READ | SMBDIRECT_REG_REMOTE_INVALIDATE, &reg2));
	REQUIRE_OK(send_descriptors(c, reg2.desc, reg2.desc_count));
	REQUIRE(recv_descriptors(s, d) == reg2.desc_count, "descriptors arrived");
	union {
		struct cmsghdr align;
		unsigned char bytes[SMBDIRECT_CMSG_INVALIDATE_SPACE];
	} control;
	struct msghdr mh = {};
	mh.msg_iov = msg;
	mh.msg_iovlen = 2;
	REQUIRE_OK(smbdirect_cmsg_invalidate(&mh, control.bytes, sizeof(control.bytes),
					     le32toh(d[0].token)));
	REQUIRE(sendmsg(s, &mh, MSG_NOSIGNAL) == static_cast<ssize_t>(4 + sizeof(reply)),
		"sendmsg: %s", strerror(errno));
	REQUIRE(recv_msg(c, buf, sizeof(buf)) == static_cast<long>(sizeof(reply)), "reply 2");
	state = smbdirect_rdma_v1_deregister(c, &reg2);
	REQUIRE(state == SMBDIRECT_REG_STATE_REMOTE_INVALIDATED, "deregister 2 state %d", state);
	return "";
}

// C++: RAII and move-only ownership; nothing stays pinned.
Verdict case_cpp(const Target &t)
{
	auto local = sd::Address::parse(t.addr, "0");
	REQUIRE(local, "parse");
	sd::Options lo;
	lo.keepalive_interval = 45;
	auto listener = sd::listen(*local, SOCK_STREAM, lo);
	REQUIRE(listener, "sd::listen: %s", listener.error().message().c_str());
	uint16_t port = listener->port();
	REQUIRE(port != 0, "port");
	auto peer = sd::Address::parse(t.addr, std::to_string(port));
	sd::Options co;
	co.max_read_write_size = 2 << 20;
	co.flags = SOCK_CLOEXEC | SOCK_NONBLOCK;
	auto client = sd::connect(*peer, SOCK_STREAM, co);
	REQUIRE(client, "sd::connect: %s", client.error().message().c_str());
	REQUIRE(poll_fd(listener->fd(), POLLIN, step_ms) > 0, "nothing to accept");
	sd::Address from;
	auto server = listener->accept(from);
	REQUIRE(server, "accept: %s", server.error().message().c_str());
	REQUIRE(from.family() == t.af, "peer family");
	REQUIRE_OK(finish_connect(client->fd()));
	set_timeouts(client->fd());
	set_timeouts(server->fd());
	auto sp = server->params();
	REQUIRE(sp && sp->keepalive_interval == 45,
		"accepted socket inherits the listener's options");
	auto cp = client->params();
	REQUIRE(cp && cp->max_read_write_size <= (2u << 20) && cp->transport == t.transport,
		"client params");

	Buffer a(256 * 1024);
	long pin0 = vm_pin_kb();
	{
		auto reg = client->register_memory(
			std::span(reinterpret_cast<std::byte *>(a.data), a.size),
			SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE);
		REQUIRE(reg, "register: %s", reg.error().message().c_str());
		REQUIRE(vm_pin_kb() - pin0 >= 256, "VmPin %ld -> %ld", pin0, vm_pin_kb());
		sd::Registration moved = std::move(*reg);
		REQUIRE(!reg->live() && moved.live(), "move");
		auto desc = moved.descriptors();
		REQUIRE_OK(send_descriptors(client->fd(), desc.data(),
					    static_cast<uint32_t>(desc.size())));
		std::vector<sd::Descriptor> d;
		REQUIRE(recv_descriptors(server->fd(), d) == static_cast<long>(desc.size()),
			"descriptors");
		Buffer out(a.size);
		fill(out.data, out.size, 5);
		auto w = server->rdma_write(
			std::span(reinterpret_cast<const std::byte *>(out.data), out.size), d);
		REQUIRE(w && *w == a.size, "rdma_write: %s",
			w ? "short" : w.error().message().c_str());
		const char done[] = "\0\0\0\4done";
		auto sent = server->send_with_invalidate(
			std::span(reinterpret_cast<const std::byte *>(done), 8), sd::token(d[0]));
		REQUIRE(sent && *sent == 8, "send_with_invalidate");
		char buf[16];
		REQUIRE(recv_msg(client->fd(), buf, sizeof(buf)) == 4, "reply");
		REQUIRE(check_fill(a.data, a.size, 5) < 0, "data");
		auto inv = moved.deregister();
		REQUIRE(inv && *inv && moved.remote_invalidated(),
			"deregister: peer invalidation not seen");
		REQUIRE(vm_pin_kb() == pin0, "VmPin after deregister");

		// This one is left to the destructor.
		auto held = client->register_memory(
			std::span(reinterpret_cast<std::byte *>(a.data), a.size),
			SMBDIRECT_ACCESS_PEER_READ);
		REQUIRE(held && vm_pin_kb() - pin0 >= 256, "second registration");
		// And the server reads the client's memory with rdma_read.
		REQUIRE_OK(send_descriptors(client->fd(), held->descriptors().data(),
					    static_cast<uint32_t>(held->descriptors().size())));
		REQUIRE(recv_descriptors(server->fd(), d) > 0, "descriptors 2");
		Buffer in(a.size);
		auto r = server->rdma_read(
			std::span(reinterpret_cast<std::byte *>(in.data), in.size), d);
		REQUIRE(r && *r == a.size && check_fill(in.data, in.size, 5) < 0, "rdma_read");
	}
	REQUIRE(vm_pin_kb() == pin0, "VmPin %ld after the scope, %ld before", vm_pin_kb(), pin0);
	// Messages through the C++ socket; Socket's destructor closes.
	auto n = client->send(std::span(reinterpret_cast<const std::byte *>("\0\0\0\2hi"), 6));
	REQUIRE(n && *n == 6, "send");
	std::byte got[6];
	REQUIRE_OK(recv_all(server->fd(), got, 6));
	int sfd = server->fd();
	{
		sd::Socket gone = std::move(*server);
	}
	REQUIRE(fcntl(sfd, F_GETFD) == -1, "Socket's destructor left the fd open");
	char b;
	REQUIRE(recv(client->fd(), &b, 1, 0) == 0, "client sees no EOF after the server's close");
	return "";
}

// Receives "written" after the peer wrote fill(seed) into a fresh
// registration of n bytes on c, checks it, deregisters, and checks VmPin.
Verdict receive_rdma_write(int c, size_t n, uint32_t seed)
{
	Buffer buf(n);
	REQUIRE(buf.data, "mmap");
	long pin0 = vm_pin_kb();
	struct iovec iov = { buf.data, n };
	struct smbdirect_rdma_v1_registration reg;
	REQUIRE_OK(smbdirect_rdma_v1_register(c, &iov, 1, SMBDIRECT_ACCESS_PEER_WRITE, &reg));
	REQUIRE(vm_pin_kb() - pin0 >= static_cast<long>(n / 1024), "VmPin did not grow");
	REQUIRE_OK(send_descriptors(c, reg.desc, reg.desc_count));
	char msg[16];
	long got = recv_msg(c, msg, sizeof(msg));
	REQUIRE(got == 7 && !memcmp(msg, "written", 7), "no \"written\": %ld", got);
	REQUIRE(check_fill(buf.data, n, seed) < 0, "the peer's data is not in the registration");
	int state = smbdirect_rdma_v1_deregister(c, &reg);
	REQUIRE(state == 0, "deregister: %d", state);
	REQUIRE(vm_pin_kb() == pin0, "VmPin %ld, was %ld", vm_pin_kb(), pin0);
	return "";
}

// The other side of receive_rdma_write().
Verdict send_rdma_write(int s, size_t n, uint32_t seed)
{
	std::vector<smbdirect_buffer_descriptor_v1> d;
	long nd = recv_descriptors(s, d);
	REQUIRE(nd > 0, "descriptors: %s", strerror(static_cast<int>(-nd)));
	Buffer out(n);
	fill(out.data, n, seed);
	struct iovec iov = { out.data, n };
	ssize_t w = smbdirect_rdma_v1_writev(s, &iov, 1, d.data(), static_cast<uint32_t>(d.size()));
	REQUIRE(w == static_cast<ssize_t>(n), "writev: %zd (%s)", w,
		w < 0 ? strerror(static_cast<int>(-w)) : "short");
	REQUIRE_OK(send_msg(s, "written", 7));
	return "";
}

// The parent accepts, a child serves, the parent closes its copy first.
Verdict case_fork_serve(const Target &t)
{
	int port = 0;
	Fd lfd(listen_on(t, SOCK_STREAM, &port));
	REQUIRE(lfd >= 0, "listen: %s", strerror(-lfd.fd));
	Child client = spawn([&]() -> Verdict {
		Fd c(connect_to(t, port, SOCK_STREAM));
		REQUIRE(c >= 0, "connect: %s", strerror(-c.fd));
		REQUIRE_OK(finish_connect(c));
		REQUIRE_OK(send_msg(c, "request", 7));
		char buf[32];
		long n = recv_msg(c, buf, sizeof(buf));
		REQUIRE(n == 15 && !memcmp(buf, "served by child", 15), "reply: %ld", n);
		return send_rdma_write(c, 128 * 1024, 21);
	});
	Fd s(accept_ms(lfd, step_ms));
	REQUIRE(s >= 0, "accept: %s", strerror(-s.fd));
	int go[2];
	REQUIRE(pipe2(go, O_CLOEXEC) == 0, "pipe");
	Child server = spawn([&]() -> Verdict {
		close(go[1]);
		// The parent has closed its copy of the socket by now.
		REQUIRE_OK(wait_fd(go[0]));
		char buf[32];
		long n = recv_msg(s, buf, sizeof(buf));
		REQUIRE(n == 7 && !memcmp(buf, "request", 7), "request: %ld", n);
		REQUIRE_OK(send_msg(s, "served by child", 15));
		return receive_rdma_write(s, 128 * 1024, 21);
	});
	close(go[0]);
	close(s.fd);
	s.fd = -1;
	signal_fd(go[1]);
	close(go[1]);
	Verdict vs = join(server, "server child");
	Verdict vc = join(client, "client");
	return !vs.empty() ? vs : vc;
}

// A child registers on the socket it inherited; its parent has exited.
Verdict case_fork_child_registers(const Target &t)
{
	REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "subreaper: %s", strerror(errno));
	int port = 0;
	Fd lfd(listen_on(t, SOCK_STREAM, &port));
	REQUIRE(lfd >= 0, "listen: %s", strerror(-lfd.fd));
	int verdict[2];
	REQUIRE(pipe2(verdict, O_CLOEXEC) == 0, "pipe");
	// X connects, forks Y, closes its copy and exits; Y then registers.
	Child x = spawn([&]() -> Verdict {
		close(verdict[0]);
		Fd c(connect_to(t, port, SOCK_STREAM));
		REQUIRE(c >= 0, "connect: %s", strerror(-c.fd));
		REQUIRE_OK(finish_connect(c));
		int alive[2];
		REQUIRE(pipe2(alive, O_CLOEXEC) == 0, "pipe");
		pid_t xpid = getpid();
		pid_t y = fork();
		if (y == 0) {
			close(alive[1]);
			char b;
			// EOF: X is exiting (only X held the write end). It closes
			// its files before it is gone as a parent: wait for that too.
			Verdict v = read(alive[0], &b, 1) == 0 ? "" : "X did not exit";
			for (int i = 0; v.empty() && getppid() == xpid && i < 1000; i++)
				usleep(10000);
			if (v.empty() && getppid() == xpid)
				v = "not reparented";
			if (v.empty())
				v = receive_rdma_write(c, 256 * 1024, 31);
			if (v.empty()) {
				char buf[8];
				long n = recv_msg(c, buf, sizeof(buf));
				if (n != 3)
					v = "no bye from the peer";
			}
			if (write(verdict[1], v.data(), v.size()) < 0)
				_exit(2);
			_exit(v.empty() ? 0 : 1);
		}
		REQUIRE(y > 0, "fork: %s", strerror(errno));
		return "";
	});
	close(verdict[1]);
	Fd s(accept_ms(lfd, step_ms));
	REQUIRE(s >= 0, "accept: %s", strerror(-s.fd));
	TRY(join(x, "parent X"));
	Verdict mine = send_rdma_write(s, 256 * 1024, 31);
	if (mine.empty() && send_msg(s, "bye", 3))
		mine = "sending bye failed";
	if (!mine.empty())
		close(s.fd), s.fd = -1; // Y's recv ends
	std::string text;
	char buf[256];
	ssize_t n;
	while ((n = read(verdict[0], buf, sizeof(buf))) > 0)
		text.append(buf, static_cast<size_t>(n));
	close(verdict[0]);
	int status = 0;
	pid_t reaped = waitpid(-1, &status, 0);
	REQUIRE(text.empty(), "child Y: %s%s%s", text.c_str(),
		mine.empty() ? "" : "; peer: ", mine.c_str());
	TRY(mine);
	REQUIRE(reaped > 0, "child Y was not reparented to us");
	REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child Y status %#x", status);
	return "";
}

// A registration made before fork(): the child shares it (the socket's),
// the memory and its VmPin stay the registrant's.
Verdict case_fork_registration_owner(const Target &t)
{
	int port = 0;
	Fd lfd(listen_on(t, SOCK_STREAM, &port));
	REQUIRE(lfd >= 0, "listen: %s", strerror(-lfd.fd));
	const size_t n = 64 * 1024;
	Child a = spawn([&]() -> Verdict {
		Fd c(connect_to(t, port, SOCK_STREAM));
		REQUIRE(c >= 0, "connect: %s", strerror(-c.fd));
		REQUIRE_OK(finish_connect(c));
		Buffer buf(n);
		fill(buf.data, n, 6);
		long pin0 = vm_pin_kb();
		struct iovec iov = { buf.data, n };
		struct smbdirect_rdma_v1_registration reg;
		REQUIRE_OK(
			smbdirect_rdma_v1_register(c, &iov, 1, SMBDIRECT_ACCESS_PEER_WRITE, &reg));
		long pin1 = vm_pin_kb();
		REQUIRE(pin1 - pin0 >= 64, "VmPin %ld -> %ld", pin0, pin1);
		int to_b[2], to_a[2];
		REQUIRE(pipe2(to_b, O_CLOEXEC) == 0 && pipe2(to_a, O_CLOEXEC) == 0, "pipe");
		Child b = spawn([&]() -> Verdict {
			// The child's pinned count starts at zero: the pages are A's.
			REQUIRE(vm_pin_kb() < pin1 - pin0, "child VmPin %ld", vm_pin_kb());
			REQUIRE_OK(wait_fd(to_b[0]));
			// The peer wrote into A's pages, not into this copy of them.
			REQUIRE(check_fill(buf.data, n, 6) < 0, "the child's copy changed");
			// The registration is the socket's: the child can drop it.
			int state = smbdirect_rdma_v1_deregister(c, &reg);
			REQUIRE(state == 0, "deregister in the child: %d", state);
			REQUIRE_OK(signal_fd(to_a[1]));
			return "";
		});
		REQUIRE_OK(send_descriptors(c, reg.desc, reg.desc_count));
		char msg[16];
		REQUIRE(recv_msg(c, msg, sizeof(msg)) == 7, "no \"written\"");
		REQUIRE(check_fill(buf.data, n, 7) < 0, "the peer's data is not in A's memory");
		REQUIRE_OK(signal_fd(to_b[1]));
		REQUIRE_OK(wait_fd(to_a[0]));
		TRY(join(b, "child B"));
		REQUIRE(vm_pin_kb() == pin0, "A's VmPin %ld after B deregistered, %ld before",
			vm_pin_kb(), pin0);
		REQUIRE(smbdirect_rdma_v1_deregister(c, &reg) == -ENOENT, "already deregistered");
		REQUIRE_OK(send_msg(c, "bye", 3));
		return "";
	});
	Fd s(accept_ms(lfd, step_ms));
	REQUIRE(s >= 0, "accept: %s", strerror(-s.fd));
	TRY(send_rdma_write(s, n, 7));
	char buf[8];
	REQUIRE(recv_msg(s, buf, sizeof(buf)) == 3, "no bye");
	return join(a, "client A");
}

int send_fd(int via, int fd)
{
	char byte = 'F';
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control = {};
	struct msghdr msg = {};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof(control.buf);
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	return sendmsg(via, &msg, 0) == 1 ? 0 : -errno;
}

int receive_fd(int via)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control = {};
	struct msghdr msg = {};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof(control.buf);
	if (poll_fd(via, POLLIN, step_ms) < 0 || recvmsg(via, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -EIO;
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	if (!h || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	int fd;
	memcpy(&fd, CMSG_DATA(h), sizeof(int));
	return fd;
}

// A connected socket goes to another process with SCM_RIGHTS; the sender
// closes its copy and exits; the receiver uses it, RDMA included.
Verdict case_scm_rights(const Target &t)
{
	int port = 0;
	Fd lfd(listen_on(t, SOCK_STREAM, &port));
	REQUIRE(lfd >= 0, "listen: %s", strerror(-lfd.fd));
	int u[2];
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, u) == 0, "socketpair");
	const size_t n = 128 * 1024;
	// The receiver exists before the connection: it inherits nothing.
	Child b = spawn([&]() -> Verdict {
		close(u[0]);
		Fd c(receive_fd(u[1]));
		REQUIRE(c >= 0, "no fd received: %s", strerror(-c.fd));
		struct smbdirect_params p;
		REQUIRE_OK(smbdirect_connection_get_parameters(c, &p));
		REQUIRE(p.transport == t.transport, "transport");
		REQUIRE_OK(send_msg(c, "from B", 6));
		TRY(receive_rdma_write(c, n, 41));
		std::vector<smbdirect_buffer_descriptor_v1> d;
		REQUIRE(recv_descriptors(c, d) > 0, "the peer's descriptors");
		Buffer in(n);
		struct iovec iov = { in.data, n };
		ssize_t r = smbdirect_rdma_v1_readv(c, &iov, 1, d.data(),
						    static_cast<uint32_t>(d.size()));
		REQUIRE(r == static_cast<ssize_t>(n), "readv: %zd", r);
		REQUIRE(check_fill(in.data, n, 42) < 0, "readv data");
		REQUIRE_OK(send_msg(c, "bye", 3));
		return "";
	});
	Child a = spawn([&]() -> Verdict {
		close(u[1]);
		Fd c(connect_to(t, port, SOCK_STREAM));
		REQUIRE(c >= 0, "connect: %s", strerror(-c.fd));
		REQUIRE_OK(finish_connect(c));
		REQUIRE_OK(send_fd(u[0], c));
		return ""; // closes its copy and exits
	});
	close(u[0]);
	close(u[1]);
	Fd s(accept_ms(lfd, step_ms));
	REQUIRE(s >= 0, "accept: %s", strerror(-s.fd));
	TRY(join(a, "sender A"));
	char buf[16];
	long got = recv_msg(s, buf, sizeof(buf));
	REQUIRE(got == 6 && !memcmp(buf, "from B", 6), "message from B: %ld", got);
	TRY(send_rdma_write(s, n, 41));
	Buffer mine(n);
	fill(mine.data, n, 42);
	struct iovec iov = { mine.data, n };
	struct smbdirect_rdma_v1_registration reg;
	REQUIRE_OK(smbdirect_rdma_v1_register(s, &iov, 1, SMBDIRECT_ACCESS_PEER_READ, &reg));
	REQUIRE_OK(send_descriptors(s, reg.desc, reg.desc_count));
	REQUIRE(recv_msg(s, buf, sizeof(buf)) == 3, "no bye");
	REQUIRE(smbdirect_rdma_v1_deregister(s, &reg) == 0, "deregister");
	return join(b, "receiver B");
}

// --- asynchronous RDMA -------------------------------------------------------------

// The descriptors of bytes [off, off + len) of the buffer that d describes
// in order (a registration's descriptors, as sent).
std::vector<smbdirect_buffer_descriptor_v1>
slice(const std::vector<smbdirect_buffer_descriptor_v1> &d, uint64_t off, uint64_t len)
{
	std::vector<smbdirect_buffer_descriptor_v1> out;
	for (const auto &x : d) {
		uint64_t n = le32toh(x.length);
		if (len && off < n) {
			uint64_t take = std::min(n - off, len);
			smbdirect_buffer_descriptor_v1 y = x;
			y.offset = htole64(le64toh(x.offset) + off);
			y.length = htole32(static_cast<uint32_t>(take));
			out.push_back(y);
			len -= take;
			off = 0;
		} else {
			off -= std::min(off, n);
		}
	}
	return out;
}

// Reaps from fd, waiting for POLLERR in between, until n completions came.
Verdict reap_n(int fd, size_t n, std::vector<smbdirect_rdma_completion> &out)
{
	while (out.size() < n) {
		// events 0: POLLERR is reported whatever was asked for.
		int r = poll_fd(fd, 0, step_ms);
		REQUIRE(r > 0, "%zu of %zu completions, then poll: %s", out.size(), n,
			strerror(-r));
		REQUIRE(r & POLLERR, "poll revents %#x without POLLERR", r);
		smbdirect_rdma_completion c[16];
		int got = smbdirect_rdma_reap(fd, c, 16);
		REQUIRE(got > 0, "reap after POLLERR: %d (%s)", got, got < 0 ? strerror(-got) : "");
		out.insert(out.end(), c, c + got);
	}
	REQUIRE(out.size() == n, "%zu completions, %zu expected", out.size(), n);
	return "";
}

// Every cookie of want completed exactly once, successfully, with bytes.
Verdict check_completions(const std::vector<smbdirect_rdma_completion> &got,
			  const std::vector<std::pair<uint64_t, uint64_t>> &want)
{
	REQUIRE(got.size() == want.size(), "%zu completions, %zu expected", got.size(),
		want.size());
	for (const auto &[cookie, bytes] : want) {
		int seen = 0;
		for (const auto &c : got) {
			if (c.cookie != cookie)
				continue;
			seen++;
			REQUIRE(c.status == 0, "cookie %#" PRIx64 ": %s", cookie, strerror(-c.status));
			REQUIRE(c.bytes == bytes, "cookie %#" PRIx64 ": %" PRIu64 " bytes, not %" PRIu64,
				cookie, static_cast<uint64_t>(c.bytes), bytes);
		}
		REQUIRE(seen == 1, "cookie %#" PRIx64 " completed %d times", cookie, seen);
	}
	return "";
}

// Nothing waits on the error queue: no POLLERR, reap finds nothing.
Verdict queue_empty(int fd)
{
	int r = poll_fd(fd, 0, 0);
	REQUIRE(r == -ETIMEDOUT, "poll after the last completion: %#x", r);
	smbdirect_rdma_completion c[1];
	int n = smbdirect_rdma_reap(fd, c, 1);
	REQUIRE(n == 0, "reap of an empty queue: %d", n);
	return "";
}

// A registration of n bytes on c whose descriptors s has received.
struct Registered {
	Buffer buf;
	smbdirect_rdma_v1_registration reg = {};
	std::vector<smbdirect_buffer_descriptor_v1> d; // as the server got them
	explicit Registered(size_t n) : buf(n)
	{
	}
	~Registered()
	{
		free(reg.desc); // the registration goes with the socket's close()
	}
};

Verdict register_for_peer(int c, int s, Registered &r, uint32_t flags)
{
	REQUIRE(r.buf.data, "mmap");
	struct iovec iov = { r.buf.data, r.buf.size };
	REQUIRE_OK(smbdirect_rdma_v1_register(c, &iov, 1, flags, &r.reg));
	REQUIRE_OK(send_descriptors(c, r.reg.desc, r.reg.desc_count));
	REQUIRE(recv_descriptors(s, r.d) == r.reg.desc_count, "descriptors arrived");
	return "";
}

// Four RDMA WRITEs from memory in one submission, reaped after POLLERR.
Verdict case_async_write(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	const size_t part = 64 * 1024;
	Registered r(4 * part);
	TRY(register_for_peer(c, s, r, SMBDIRECT_ACCESS_PEER_WRITE));
	Buffer out(4 * part);
	fill(out.data, out.size, 11);
	struct iovec iov[4];
	std::vector<smbdirect_buffer_descriptor_v1> remote[4];
	struct smbdirect_rdma_args a[4];
	for (int i = 0; i < 4; i++) {
		iov[i] = { out.data + i * part, part };
		remote[i] = slice(r.d, i * part, part);
		smbdirect_rdma_prep_write(&a[i], 0x100 + i, &iov[i], 1, remote[i].data(),
					  static_cast<uint32_t>(remote[i].size()));
	}
	REQUIRE_OK(smbdirect_rdma_submit(s, a, 4, MSG_NOSIGNAL));
	std::vector<smbdirect_rdma_completion> got;
	TRY(reap_n(s, 4, got));
	TRY(check_completions(got, { { 0x100, part }, { 0x101, part }, { 0x102, part },
				     { 0x103, part } }));
	TRY(queue_empty(s));
	TRY(exchange(s, c, "written"));
	REQUIRE(check_fill(r.buf.data, r.buf.size, 11) < 0, "data at the client");
	REQUIRE(smbdirect_rdma_v1_deregister(c, &r.reg) == 0, "deregister");
	return "";
}

// RDMA WRITE from a file's page cache (a memfd: shmem), two ranges.
Verdict case_async_write_file(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	Registered r(128 * 1024);
	TRY(register_for_peer(c, s, r, SMBDIRECT_ACCESS_PEER_WRITE));
	Fd file(memfd_create("sd-lib-async", MFD_CLOEXEC));
	REQUIRE(file >= 0, "memfd_create: %s", strerror(errno));
	Buffer content(256 * 1024);
	fill(content.data, content.size, 12);
	REQUIRE(pwrite(file, content.data, content.size, 0) ==
			static_cast<ssize_t>(content.size),
		"pwrite");
	// 64 KiB from offset 8192 to the start; 5000 bytes from offset 100 000
	// (neither page-aligned) to 64 KiB in.
	auto first = slice(r.d, 0, 65536);
	auto second = slice(r.d, 65536, 5000);
	struct smbdirect_rdma_args a[2];
	smbdirect_rdma_prep_write_file(&a[0], 1, file, 8192, 65536, first.data(),
				       static_cast<uint32_t>(first.size()));
	smbdirect_rdma_prep_write_file(&a[1], 2, file, 100000, 5000, second.data(),
				       static_cast<uint32_t>(second.size()));
	REQUIRE_OK(smbdirect_rdma_submit(s, a, 2, MSG_NOSIGNAL));
	std::vector<smbdirect_rdma_completion> got;
	TRY(reap_n(s, 2, got));
	TRY(check_completions(got, { { 1, 65536 }, { 2, 5000 } }));
	// A range beyond the file's end is refused, and nothing else changes.
	struct smbdirect_rdma_args beyond;
	smbdirect_rdma_prep_write_file(&beyond, 3, file, content.size - 10, 11, first.data(), 1);
	int e = smbdirect_rdma_submit(s, &beyond, 1, MSG_NOSIGNAL);
	REQUIRE(e == -EINVAL, "a range beyond the end: %d", e);
	TRY(queue_empty(s));
	TRY(exchange(s, c, "written"));
	REQUIRE(!memcmp(r.buf.data, content.data + 8192, 65536), "first range");
	REQUIRE(!memcmp(r.buf.data + 65536, content.data + 100000, 5000), "second range");
	REQUIRE(smbdirect_rdma_v1_deregister(c, &r.reg) == 0, "deregister");
	return "";
}

// RDMA READs of the client's memory into two local buffers.
Verdict case_async_read(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	Registered r(192 * 1024);
	fill(r.buf.data, r.buf.size, 13);
	TRY(register_for_peer(c, s, r, SMBDIRECT_ACCESS_PEER_READ));
	Buffer in1(64 * 1024), in2(128 * 1024);
	struct iovec i1 = { in1.data, in1.size }, i2 = { in2.data, in2.size };
	auto d1 = slice(r.d, 0, in1.size), d2 = slice(r.d, in1.size, in2.size);
	struct smbdirect_rdma_args a[2];
	smbdirect_rdma_prep_read(&a[0], 0xa, &i1, 1, d1.data(), static_cast<uint32_t>(d1.size()));
	smbdirect_rdma_prep_read(&a[1], 0xb, &i2, 1, d2.data(), static_cast<uint32_t>(d2.size()));
	REQUIRE_OK(smbdirect_rdma_submit(s, a, 2, MSG_NOSIGNAL));
	std::vector<smbdirect_rdma_completion> got;
	TRY(reap_n(s, 2, got));
	TRY(check_completions(got, { { 0xa, in1.size }, { 0xb, in2.size } }));
	REQUIRE(!memcmp(in1.data, r.buf.data, in1.size), "first read");
	REQUIRE(!memcmp(in2.data, r.buf.data + in1.size, in2.size), "second read");
	TRY(exchange(s, c, "read"));
	REQUIRE(smbdirect_rdma_v1_deregister(c, &r.reg) == 0, "deregister");
	return "";
}

// The server's SMB2 READ answer: RDMA WRITE and the framed reply in one
// sendmsg, with SEND_WITH_INVALIDATE; the data is there when the client
// reads the reply, and its token is invalidated.
Verdict case_async_submit_msg(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	Registered r(256 * 1024);
	TRY(register_for_peer(c, s, r,
			      SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE));
	Buffer out(r.buf.size);
	fill(out.data, out.size, 14);
	struct iovec from = { out.data, out.size };
	struct smbdirect_rdma_args a;
	smbdirect_rdma_prep_write(&a, 0x5e, &from, 1, r.d.data(), static_cast<uint32_t>(r.d.size()));
	const char reply[] = "read done";
	uint32_t be = htonl(sizeof(reply));
	struct iovec msg[2] = { { &be, 4 }, { const_cast<char *>(reply), sizeof(reply) } };
	uint32_t token = le32toh(r.d[0].token);
	ssize_t n = smbdirect_rdma_submit_msg(s, &a, 1, msg, 2, &token, MSG_NOSIGNAL);
	REQUIRE(n == static_cast<ssize_t>(4 + sizeof(reply)), "submit_msg: %zd (%s)", n,
		n < 0 ? strerror(static_cast<int>(-n)) : "");
	char buf[64];
	REQUIRE(recv_msg(c, buf, sizeof(buf)) == static_cast<long>(sizeof(reply)), "reply");
	// No wait for the server's completion: RC ordering put the data first.
	REQUIRE(check_fill(r.buf.data, r.buf.size, 14) < 0, "data not there with the reply");
	int state = smbdirect_rdma_v1_deregister(c, &r.reg);
	REQUIRE(state == SMBDIRECT_REG_STATE_REMOTE_INVALIDATED, "deregister state %d", state);
	std::vector<smbdirect_rdma_completion> got;
	TRY(reap_n(s, 1, got));
	TRY(check_completions(got, { { 0x5e, r.buf.size } }));
	// Transfers alone through submit_msg: 0 message bytes.
	n = smbdirect_rdma_submit_msg(s, nullptr, 0, msg, 2, nullptr, MSG_NOSIGNAL);
	REQUIRE(n == static_cast<ssize_t>(4 + sizeof(reply)), "a message alone: %zd", n);
	REQUIRE(recv_msg(c, buf, sizeof(buf)) == static_cast<long>(sizeof(reply)), "reply 2");
	return "";
}

// Many transfers in flight, each cookie reaped once after POLLERR; the
// SMBDIRECT_OPT_RDMA_INFLIGHT limit holds slots until reaped.
Verdict case_async_many(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	const size_t part = 4096, nr = 48;
	Registered r(nr * part);
	TRY(register_for_peer(c, s, r, SMBDIRECT_ACCESS_PEER_WRITE));
	Buffer out(r.buf.size);
	fill(out.data, out.size, 15);
	std::vector<struct iovec> iov(nr);
	std::vector<std::vector<smbdirect_buffer_descriptor_v1>> remote(nr);
	std::vector<struct smbdirect_rdma_args> a(nr);
	std::vector<std::pair<uint64_t, uint64_t>> want;
	for (size_t i = 0; i < nr; i++) {
		iov[i] = { out.data + i * part, part };
		remote[i] = slice(r.d, i * part, part);
		smbdirect_rdma_prep_write(&a[i], 1000 + i, &iov[i], 1, remote[i].data(),
					  static_cast<uint32_t>(remote[i].size()));
		want.push_back({ 1000 + i, part });
	}
	REQUIRE_OK(smbdirect_rdma_submit(s, a.data(), static_cast<unsigned int>(nr), 0));
	std::vector<smbdirect_rdma_completion> got;
	TRY(reap_n(s, nr, got));
	TRY(check_completions(got, want));
	TRY(queue_empty(s));

	// Two slots: two transfers hold them until reaped, completed or not.
	REQUIRE_OK(smbdirect_set_option(s, SMBDIRECT_OPT_RDMA_INFLIGHT, 2));
	REQUIRE_OK(smbdirect_rdma_submit(s, a.data(), 2, 0));
	int p = poll_fd(s, 0, step_ms);
	REQUIRE(p > 0 && (p & POLLERR), "no POLLERR: %d", p);
	int e = smbdirect_rdma_submit(s, a.data() + 2, 1, MSG_DONTWAIT);
	REQUIRE(e == -EAGAIN, "a third transfer with two slots taken: %d", e);
	got.clear();
	TRY(reap_n(s, 2, got));
	REQUIRE_OK(smbdirect_rdma_submit(s, a.data() + 2, 1, MSG_DONTWAIT));
	got.clear();
	TRY(reap_n(s, 1, got));
	TRY(check_completions(got, { { 1002, part } }));
	TRY(exchange(s, c, "written"));
	REQUIRE(check_fill(r.buf.data, r.buf.size, 15) < 0, "data at the client");
	return "";
}

// SMBDIRECT_DEREG_ASYNC: the id is gone at once, the completion comes
// when the peer's access has ended; the pages are unpinned by then.
Verdict case_deregister_async(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	long pin0 = vm_pin_kb();
	for (int invalidate = 0; invalidate < 2; invalidate++) {
		Registered r(64 * 1024);
		uint32_t flags = SMBDIRECT_ACCESS_PEER_WRITE |
				 (invalidate ? SMBDIRECT_REG_REMOTE_INVALIDATE : 0);
		TRY(register_for_peer(c, s, r, flags));
		REQUIRE(vm_pin_kb() - pin0 >= 64, "VmPin did not grow");
		Buffer out(r.buf.size);
		fill(out.data, out.size, 16);
		struct iovec from = { out.data, out.size };
		ssize_t w = smbdirect_rdma_v1_writev(s, &from, 1, r.d.data(),
						     static_cast<uint32_t>(r.d.size()));
		REQUIRE(w == static_cast<ssize_t>(out.size), "writev: %zd", w);
		if (invalidate) {
			// The framed "written", invalidating the client's token.
			uint32_t be = htonl(7);
			struct iovec msg[2] = { { &be, 4 }, { const_cast<char *>("written"), 7 } };
			ssize_t n = smbdirect_send_with_invalidate(s, msg, 2, le32toh(r.d[0].token),
								   MSG_NOSIGNAL);
			REQUIRE(n == 11, "send_with_invalidate: %zd", n);
			char buf[16];
			REQUIRE(recv_msg(c, buf, sizeof(buf)) == 7, "written");
		} else {
			TRY(exchange(s, c, "written"));
		}
		uint64_t id = r.reg.id;
		uint64_t cookie = 0xdead0000 + invalidate;
		int state = smbdirect_rdma_v1_deregister_async(c, &r.reg, cookie);
		REQUIRE(state == (invalidate ? SMBDIRECT_REG_STATE_REMOTE_INVALIDATED : 0),
			"deregister_async: %d", state);
		REQUIRE(r.reg.id == 0 && r.reg.desc == nullptr, "registration not zeroed");
		struct smbdirect_rdma_v1_registration again = {};
		again.id = id;
		REQUIRE(smbdirect_rdma_v1_deregister(c, &again) == -ENOENT, "the id lives on");
		std::vector<smbdirect_rdma_completion> got;
		TRY(reap_n(c, 1, got));
		TRY(check_completions(got, { { cookie, 64 * 1024 } }));
		REQUIRE(vm_pin_kb() == pin0, "VmPin %ld after the completion, %ld before",
			vm_pin_kb(), pin0);
		REQUIRE(check_fill(r.buf.data, r.buf.size, 16) < 0, "data");
		TRY(queue_empty(c));
	}
	return "";
}

// Completes once, noting what it got.
struct Noted : sd::Pending {
	int calls = 0;
	sd::Completion got = {};
	void complete(const sd::Completion &c) noexcept override
	{
		calls++;
		got = c;
	}
};

// C++: Registration::create(), RdmaQueue's submit_with_message, wait and
// dispatch to sd::Pending, deregister_async() completing a Pending.
Verdict case_cpp_async(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	Buffer a(128 * 1024);
	REQUIRE(a.data, "mmap");
	long pin0 = vm_pin_kb();
	auto reg = sd::Registration::create(
		c, std::span(reinterpret_cast<std::byte *>(a.data), a.size),
		SMBDIRECT_ACCESS_PEER_WRITE | SMBDIRECT_REG_REMOTE_INVALIDATE);
	REQUIRE(reg, "Registration::create: %s", reg.error().message().c_str());
	REQUIRE(reg->length() == a.size, "length %" PRIu64, reg->length());
	auto desc = reg->descriptors();
	REQUIRE_OK(send_descriptors(c, desc.data(), static_cast<uint32_t>(desc.size())));
	std::vector<sd::Descriptor> d;
	REQUIRE(recv_descriptors(s, d) == static_cast<long>(desc.size()), "descriptors");

	Buffer out(a.size);
	fill(out.data, out.size, 17);
	const size_t half = a.size / 2;
	iovec local[2] = { { out.data, half }, { out.data + half, half } };
	auto d1 = slice(d, 0, half), d2 = slice(d, half, half);
	Noted w1, w2;
	sd::Transfer tr[2] = { sd::write_transfer(w1.cookie(), std::span(&local[0], 1), d1),
			       sd::write_transfer(w2.cookie(), std::span(&local[1], 1), d2) };
	sd::RdmaQueue q(s);
	auto lim = q.limit();
	REQUIRE(lim && *lim == 64, "SMBDIRECT_OPT_RDMA_INFLIGHT: %s",
		lim ? std::to_string(*lim).c_str() : lim.error().message().c_str());
	// Completions on POLLPRI, slots on POLLWRBAND (SMBDIRECT_OPT_RDMA_EVENTS).
	REQUIRE(q.use_events(), "use_events");
	auto ev = q.events();
	REQUIRE(ev && *ev == (SMBDIRECT_RDMA_EVENTS_PRI | SMBDIRECT_RDMA_EVENTS_WRBAND), "events");
	REQUIRE(q.set_limit(2), "set_limit");
	auto slot = q.wait_slot(0);
	REQUIRE(slot && *slot, "no free slot before any transfer");
	const char reply[] = "\0\0\0\4done";
	auto sent = q.submit_with_message(tr, std::as_bytes(std::span(reply, 8)), sd::token(d[0]));
	REQUIRE(sent && *sent == 8, "submit_with_message: %s",
		sent ? "short" : sent.error().message().c_str());
	slot = q.wait_slot(0);
	REQUIRE(slot && !*slot, "a free slot with both held");
	char buf[16];
	REQUIRE(recv_msg(c, buf, sizeof(buf)) == 4, "reply");
	REQUIRE(check_fill(a.data, a.size, 17) < 0, "data not there with the reply");
	size_t total = 0;
	while (total < 2) {
		auto w = q.wait(step_ms);
		REQUIRE(w && *w, "no completion: %s", w ? "timeout" : w.error().message().c_str());
		auto n = q.dispatch();
		REQUIRE(n, "dispatch: %s", n.error().message().c_str());
		total += *n;
	}
	REQUIRE(total == 2 && w1.calls == 1 && w2.calls == 1, "dispatched %zu: %d, %d", total,
		w1.calls, w2.calls);
	slot = q.wait_slot(step_ms);
	REQUIRE(slot && *slot, "no free slot once reaped");
	REQUIRE(sd::outcome(w1.got).value_or(0) == half && sd::outcome(w2.got).value_or(0) == half,
		"bytes %" PRIu64 " %" PRIu64, static_cast<uint64_t>(w1.got.bytes),
		static_cast<uint64_t>(w2.got.bytes));

	Noted dereg;
	auto inv = reg->deregister_async(dereg);
	REQUIRE(inv && *inv, "deregister_async: %s",
		inv ? "the peer's invalidation not seen" : inv.error().message().c_str());
	REQUIRE(!reg->live() && reg->descriptors().empty(), "still live");
	sd::RdmaQueue cq(c);
	auto w = cq.wait(step_ms);
	REQUIRE(w && *w, "no deregistration completion");
	auto n = cq.dispatch();
	REQUIRE(n && *n == 1 && dereg.calls == 1, "deregistration completion");
	REQUIRE(sd::outcome(dereg.got).value_or(0) == a.size, "its bytes: %" PRIu64,
		static_cast<uint64_t>(dereg.got.bytes));
	REQUIRE(vm_pin_kb() == pin0, "VmPin %ld, was %ld", vm_pin_kb(), pin0);
	return "";
}

#ifdef SD_HAVE_LIBURING
// io_uring: IORING_OP_SENDMSG with smbdirect_rdma_prep_msghdr(), then
// IORING_OP_POLL_ADD (POLLERR) and IORING_OP_RECVMSG with MSG_ERRQUEUE,
// parsed by smbdirect_rdma_completions().
Verdict case_io_uring(const Target &t)
{
	int c, s;
	TRY(pair(t, SOCK_STREAM, &c, &s));
	Fd cf(c), sf(s);
	const size_t part = 32 * 1024;
	Registered r(2 * part);
	TRY(register_for_peer(c, s, r, SMBDIRECT_ACCESS_PEER_WRITE));
	Buffer out(r.buf.size);
	fill(out.data, out.size, 18);
	struct iovec iov[2] = { { out.data, part }, { out.data + part, part } };
	auto d0 = slice(r.d, 0, part), d1 = slice(r.d, part, part);
	struct smbdirect_rdma_args a[2];
	smbdirect_rdma_prep_write(&a[0], 0x0e0, &iov[0], 1, d0.data(), static_cast<uint32_t>(d0.size()));
	smbdirect_rdma_prep_write(&a[1], 0x0e1, &iov[1], 1, d1.data(), static_cast<uint32_t>(d1.size()));

	struct io_uring ring;
	int e = io_uring_queue_init(8, &ring, 0);
	if (e == -ENOSYS || e == -EPERM)
		return format("SKIP: io_uring_queue_init: %s", strerror(-e));
	REQUIRE(e == 0, "io_uring_queue_init: %s", strerror(-e));
	struct Exit {
		struct io_uring *r;
		~Exit()
		{
			io_uring_queue_exit(r);
		}
	} exit_ring{ &ring };
	// One SQE at a time, its result.
	auto run = [&](auto prep) -> int {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		prep(sqe);
		if (io_uring_submit(&ring) != 1)
			return -EIO;
		struct io_uring_cqe *cqe;
		int w = io_uring_wait_cqe(&ring, &cqe);
		if (w)
			return w;
		int res = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
		return res;
	};

	union {
		struct cmsghdr align;
		unsigned char bytes[2 * CMSG_SPACE(sizeof(struct smbdirect_rdma_args))];
	} control;
	REQUIRE(smbdirect_rdma_control_space(2) == sizeof(control.bytes), "control_space");
	struct msghdr mh = {};
	REQUIRE_OK(smbdirect_rdma_prep_msghdr(&mh, control.bytes, sizeof(control.bytes), a, 2));
	e = run([&](struct io_uring_sqe *sqe) { io_uring_prep_sendmsg(sqe, s, &mh, MSG_NOSIGNAL); });
	REQUIRE(e == 0, "IORING_OP_SENDMSG: %d (%s)", e, e < 0 ? strerror(-e) : "");

	smbdirect_rdma_completion got[2];
	unsigned int n = 0;
	for (int round = 0; n < 2 && round < 20; round++) {
		e = run([&](struct io_uring_sqe *sqe) { io_uring_prep_poll_add(sqe, s, POLLERR); });
		REQUIRE(e > 0 && (e & POLLERR), "IORING_OP_POLL_ADD: %d", e);
		union {
			struct cmsghdr align;
			unsigned char bytes[256];
		} rc;
		struct msghdr rh = {};
		rh.msg_control = rc.bytes;
		rh.msg_controllen = smbdirect_rdma_completion_space(2 - n);
		REQUIRE(rh.msg_controllen <= sizeof(rc.bytes), "completion_space");
		e = run([&](struct io_uring_sqe *sqe) { io_uring_prep_recvmsg(sqe, s, &rh, MSG_ERRQUEUE); });
		if (e == -EAGAIN)
			continue;
		REQUIRE(e == 0, "IORING_OP_RECVMSG: %d (%s)", e, e < 0 ? strerror(-e) : "");
		int k = smbdirect_rdma_completions(&rh, got + n, 2 - n);
		REQUIRE(k > 0, "smbdirect_rdma_completions: %d", k);
		n += static_cast<unsigned int>(k);
	}
	TRY(check_completions(std::vector<smbdirect_rdma_completion>(got, got + n),
			      { { 0x0e0, part }, { 0x0e1, part } }));
	TRY(exchange(s, c, "written"));
	REQUIRE(check_fill(r.buf.data, r.buf.size, 18) < 0, "data at the client");
	return "";
}
#endif

// --- the runner --------------------------------------------------------------------

struct Case {
	std::string name;
	std::function<Verdict()> run;
	int timeout_s;
};

std::vector<Case> all_cases()
{
	std::vector<Case> cases = {
		{ "lib.available", case_available, 30 },
		{ "lib.socket_flags", case_socket_flags, 30 },
		{ "lib.parse_address", case_parse_address, 30 },
		{ "lib.interfaces", case_interfaces, 60 },
	};
	struct PerTarget {
		const char *what;
		Verdict (*run)(const Target &);
		int timeout_s;
	} per[] = {
		{ "connect_accept", case_connect_accept, 60 },
		{ "options_parameters", case_options, 60 },
		{ "register_readv_writev", case_rdma, 60 },
		{ "register_grows_descriptors", case_register_many, 90 },
		{ "send_with_invalidate", case_invalidate, 60 },
		{ "cpp_raii", case_cpp, 60 },
		{ "fork_serve", case_fork_serve, 60 },
		{ "fork_child_registers", case_fork_child_registers, 60 },
		{ "fork_registration_owner", case_fork_registration_owner, 60 },
		{ "scm_rights", case_scm_rights, 60 },
		{ "async_write", case_async_write, 60 },
		{ "async_write_file", case_async_write_file, 60 },
		{ "async_read", case_async_read, 60 },
		{ "async_submit_msg_invalidate", case_async_submit_msg, 60 },
		{ "async_many_poll_limit", case_async_many, 90 },
		{ "async_deregister", case_deregister_async, 60 },
		{ "cpp_async", case_cpp_async, 60 },
#ifdef SD_HAVE_LIBURING
		{ "io_uring", case_io_uring, 60 },
#endif
	};
	for (const Target &t : targets)
		for (const PerTarget &p : per)
			cases.push_back({ std::string("lib.") + t.name + "." + p.what,
					  [&t, run = p.run] { return run(t); }, p.timeout_s });
	// Last: it unloads and reloads the module.
	cases.push_back({ "lib.family_reload", case_family_reload, 120 });
	return cases;
}

bool selected(const std::string &name, int argc, char **argv)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (name.find(argv[i]) != std::string::npos)
			return true;
	return false;
}

// Runs one case in a child (a process group of its own) with an alarm;
// prints its TAP line. Helpers the case left behind are killed.
bool run_case(int number, const Case &c)
{
	Child child = spawn([&]() -> Verdict {
		setpgid(0, 0);
		alarm(static_cast<unsigned>(c.timeout_s));
		return c.run();
	});
	if (child.pid < 0) {
		printf("not ok %d %s # fork failed\n", number, c.name.c_str());
		return false;
	}
	setpgid(child.pid, child.pid);
	int status = 0;
	waitpid(child.pid, &status, 0);
	std::string text = drain(child.verdict_fd);
	kill(-child.pid, SIGKILL);
	while (waitpid(-1, nullptr, WNOHANG) > 0)
		;
	for (char &ch : text)
		if (ch == '\n' || ch == '#')
			ch = ' ';
	if (WIFSIGNALED(status)) {
		printf("not ok %d %s # killed by signal %d%s\n", number, c.name.c_str(),
		       WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? format(" (timeout %ds)", c.timeout_s).c_str()
						   : "");
		return false;
	}
	if (text.rfind("SKIP: ", 0) == 0) {
		printf("ok %d %s # SKIP %s\n", number, c.name.c_str(), text.c_str() + 6);
		return true;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && text.empty()) {
		printf("ok %d %s\n", number, c.name.c_str());
		return true;
	}
	printf("not ok %d %s # %s\n", number, c.name.c_str(),
	       text.empty() ? format("exit status %d", WEXITSTATUS(status)).c_str() : text.c_str());
	return false;
}

} // namespace

int main(int argc, char **argv)
{
	setvbuf(stdout, nullptr, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	std::vector<Case> cases = all_cases();
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (const Case &c : cases)
			printf("%s\n", c.name.c_str());
		return 0;
	}
	std::vector<const Case *> run;
	for (const Case &c : cases)
		if (selected(c.name, argc, argv))
			run.push_back(&c);
	printf("1..%zu\n", run.size());
	int failed = 0, number = 0;
	for (const Case *c : run) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		failed += !run_case(++number, *c);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("# %s took %.1f s\n", c->name.c_str(),
		       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
	return failed ? 1 : 0;
}
