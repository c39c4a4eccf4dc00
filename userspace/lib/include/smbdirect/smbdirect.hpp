// SPDX-License-Identifier: LGPL-2.1-or-later
//
// libsmbdirect's C++ API (namespace sd): RAII over the C API of
// <smbdirect/smbdirect.h>, header-only, C++20. See libsmbdirect++(3).
//
//  - Errors are values: sd::Result<T> is std::expected<T, std::error_code>
//    where the standard library has it (C++23), else a stand-in with the
//    members callers use (has_value, explicit operator bool, *, ->, value,
//    value_or, error). Codes are errno values in std::system_category(), so
//    they compare equal to std::errc constants. The calls never throw.
//  - Socket and Listener own a file descriptor (move-only, closed by the
//    destructor); Registration owns a registration of memory for the peer
//    and deregisters it in its destructor (one attempt: a registration the
//    kernel refuses to end there stays until the socket is closed; an
//    explicit deregister() reports the error and keeps the registration
//    for a retry).
//  - A Registration names its socket by fd and must not outlive it. If the
//    fd was closed and reused meanwhile, it notices (the socket's inode
//    differs) and leaves the other socket alone. After fork() only the
//    process that registered deregisters in the destructor (an explicit
//    deregister() works from any process that holds the socket).
//  - RdmaQueue submits asynchronous RDMA transfers on a socket it names by
//    fd (it owns nothing) and reaps their completions, handing each to a
//    callback or to the Pending object its cookie names. A cookie is an
//    opaque 64-bit number returned to whichever process reaps (after
//    fork() or SCM_RIGHTS, maybe another address space): a Pending's
//    cookie is an entry of a per-process table, never its address.
#ifndef SMBDIRECT_SMBDIRECT_HPP
#define SMBDIRECT_SMBDIRECT_HPP

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "<smbdirect/smbdirect.hpp> needs C++20 (-std=c++20 or newer; CMake's smbdirect::smbdirect asks for it); C includes <smbdirect/smbdirect.h>"
#else

#include <smbdirect/smbdirect.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <endian.h>
#include <mutex>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <span>
#include <string>
#include <sys/random.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <utility>
#include <vector>
#if __has_include(<expected>)
#include <expected>
#endif

namespace sd
{

// The two spellings of Result<T> give inline functions of the same name
// different return types: an inline namespace per spelling keeps a program
// that mixes C++20 and C++23 translation units free of ODR clashes.
#if defined(__cpp_lib_expected) && __cpp_lib_expected >= 202202L
inline namespace expected_api
{
template <class T> using Result = std::expected<T, std::error_code>;
using Unexpected = std::unexpected<std::error_code>;
#else
inline namespace result_api
{
// What std::unexpected<std::error_code> is in C++23.
struct Unexpected {
	std::error_code code;
	const std::error_code &error() const noexcept
	{
		return code;
	}
};

// The subset of std::expected<T, std::error_code> callers use; value() on
// an error throws std::bad_optional_access (aborts with -fno-exceptions).
template <class T> class [[nodiscard]] Result : public std::optional<T> {
    public:
	Result(T v) : std::optional<T>(std::move(v))
	{
	}
	Result(const Unexpected &u) noexcept : error_(u.error())
	{
	}
	const std::error_code &error() const noexcept
	{
		return error_;
	}

    private:
	std::error_code error_;
};

template <> class [[nodiscard]] Result<void> {
    public:
	Result() noexcept = default;
	Result(const Unexpected &u) noexcept : failed_(true), error_(u.error())
	{
	}
	bool has_value() const noexcept
	{
		return !failed_;
	}
	explicit operator bool() const noexcept
	{
		return !failed_;
	}
	const std::error_code &error() const noexcept
	{
		return error_;
	}

    private:
	bool failed_ = false;
	std::error_code error_;
};
#endif

// errno (positive or negative, as the C API returns it) as an error code.
inline std::error_code errno_code(long e) noexcept
{
	return std::error_code(static_cast<int>(e < 0 ? -e : e), std::system_category());
}

// The error of a failed call: return sd::fail(-EINVAL) or sd::fail(ec).
inline Unexpected fail(std::error_code e) noexcept
{
	return Unexpected{ e };
}
inline Unexpected fail(long e) noexcept
{
	return Unexpected{ errno_code(e) };
}

namespace detail
{

inline int last_errno() noexcept
{
	return errno > 0 ? errno : EIO;
}

// A C API result (-errno or a count) as a Result.
inline Result<void> check(long ret) noexcept
{
	if (ret < 0)
		return fail(ret);
	return {};
}
inline Result<size_t> bytes(ssize_t ret) noexcept
{
	if (ret < 0)
		return fail(ret);
	return static_cast<size_t>(ret);
}
// A system call's (-1 and errno, or a count).
inline Result<size_t> sys_bytes(ssize_t ret) noexcept
{
	return bytes(ret < 0 ? -last_errno() : ret);
}

// The socket's inode: what identifies the socket behind an fd number.
inline ino_t socket_inode(int fd) noexcept
{
	struct stat st;
	if (fd < 0 || ::fstat(fd, &st) || !S_ISSOCK(st.st_mode))
		return 0;
	return st.st_ino;
}

inline iovec byte_iovec(std::span<const std::byte> b) noexcept
{
	return iovec{ const_cast<std::byte *>(b.data()), b.size() };
}

} // namespace detail

// --- addresses, descriptors, options ---------------------------------------------

// A sockaddr_in or sockaddr_in6, as SMB-Direct sockets take them.
struct Address {
	sockaddr_storage storage = {};
	socklen_t length = 0;

	// Numeric host ("10.0.0.1", "fd00::1", "[fd00::1]", "fe80::1%eth0";
	// nullptr: the IPv6 wildcard) and port ("445").
	static Result<Address> parse(const char *host, const char *port) noexcept
	{
		Address a;
		if (int r = smbdirect_parse_address(host, port, &a.storage, &a.length); r < 0)
			return fail(r);
		return a;
	}
	static Result<Address> parse(const std::string &host, const std::string &port) noexcept
	{
		return parse(host.c_str(), port.c_str());
	}
	const sockaddr *get() const noexcept
	{
		return reinterpret_cast<const sockaddr *>(&storage);
	}
	sockaddr *get() noexcept
	{
		return reinterpret_cast<sockaddr *>(&storage);
	}
	int family() const noexcept
	{
		return storage.ss_family;
	}
	uint16_t port() const noexcept
	{
		if (storage.ss_family == AF_INET)
			return be16toh(reinterpret_cast<const sockaddr_in *>(&storage)->sin_port);
		if (storage.ss_family == AF_INET6)
			return be16toh(reinterpret_cast<const sockaddr_in6 *>(&storage)->sin6_port);
		return 0;
	}
};

// Buffer Descriptor V1 as on the wire (little-endian fields), and the
// fields in host order: token() is what send_with_invalidate() takes.
using Descriptor = smbdirect_buffer_descriptor_v1;

inline uint64_t offset(const Descriptor &d) noexcept
{
	return le64toh(d.offset);
}
inline uint32_t token(const Descriptor &d) noexcept
{
	return le32toh(d.token);
}
inline uint32_t length(const Descriptor &d) noexcept
{
	return le32toh(d.length);
}

// SOL_SMBDIRECT options to set before connect() or listen(); unset fields
// keep the module's defaults. flags are the socket's fd flags.
struct Options {
	std::optional<uint32_t> receive_credit_max;
	std::optional<uint32_t> send_credit_target;
	std::optional<uint32_t> max_send_size;
	std::optional<uint32_t> max_receive_size;
	std::optional<uint32_t> max_fragmented_size;
	std::optional<uint32_t> max_read_write_size;
	std::optional<uint32_t> keepalive_interval; // seconds; 0 off
	int flags = SOCK_CLOEXEC;		    // | SOCK_NONBLOCK
};

// --- asynchronous RDMA ---------------------------------------------------------------

// A transfer to submit (smbdirect_rdma_prep_*()) and its completion.
using Transfer = smbdirect_rdma_args;
using Completion = smbdirect_rdma_completion;

// RDMA WRITE of local into the peer's remote descriptors (an SMB2 READ),
// RDMA READ of them into local (an SMB2 WRITE), RDMA WRITE of length
// bytes at offset of the file open for reading at file_fd. The arrays are
// read at submission, the memory (file range) until the completion.
inline Transfer write_transfer(uint64_t cookie, std::span<const iovec> local,
			       std::span<const Descriptor> remote) noexcept
{
	Transfer t;
	smbdirect_rdma_prep_write(&t, cookie, local.data(), static_cast<unsigned int>(local.size()),
				  remote.data(), static_cast<uint32_t>(remote.size()));
	return t;
}
inline Transfer read_transfer(uint64_t cookie, std::span<const iovec> local,
			      std::span<const Descriptor> remote) noexcept
{
	Transfer t;
	smbdirect_rdma_prep_read(&t, cookie, local.data(), static_cast<unsigned int>(local.size()),
				 remote.data(), static_cast<uint32_t>(remote.size()));
	return t;
}
inline Transfer file_write_transfer(uint64_t cookie, int file_fd, uint64_t offset, uint64_t length,
				    std::span<const Descriptor> remote) noexcept
{
	Transfer t;
	smbdirect_rdma_prep_write_file(&t, cookie, file_fd, offset, length, remote.data(),
				       static_cast<uint32_t>(remote.size()));
	return t;
}

// A completion as a result: the bytes moved, or the transfer's error.
inline Result<uint64_t> outcome(const Completion &c) noexcept
{
	if (c.status < 0)
		return fail(c.status);
	return c.bytes;
}

class Pending;

namespace detail
{

// The live Pending objects of this process, by cookie. A cookie is a
// number, never an address: a completion is returned to whichever
// process reaps it (after fork() or SCM_RIGHTS, another address space),
// so one is looked up here and never dereferenced. Cookies are a
// counter through a bijective mix (splitmix64) from a seed drawn per
// process, so unique among this process's Pending objects, never 0, and
// unlikely to equal another process's. A forked child starts an empty
// table with a new seed: the Pending objects it inherited (and the
// transfers their parent submitted) are not its own. One table per
// program and per C++ flavour (an inline variable); a shared object
// built with hidden visibility has its own.
class PendingTable {
    public:
	uint64_t add(Pending *p) noexcept;
	void remove(Pending *p) noexcept;
	Pending *find(uint64_t cookie) noexcept;

    private:
	static constexpr size_t buckets = 256;
	// Under m_: starts afresh in a process other than the one that
	// filled it (a child after fork()).
	void own() noexcept
	{
		pid_t pid = ::getpid();
		if (pid == pid_)
			return;
		pid_ = pid;
		generation_++;
		for (Pending *&b : bucket_)
			b = nullptr;
		uint64_t seed = 0;
		if (::getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
			seed = (static_cast<uint64_t>(pid) << 32) ^
			       static_cast<uint64_t>(::time(nullptr)) ^
			       reinterpret_cast<uintptr_t>(this);
		next_ = seed;
	}
	static uint64_t mix(uint64_t z) noexcept
	{
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		return z ^ (z >> 31);
	}
	static size_t slot(uint64_t cookie) noexcept
	{
		return static_cast<size_t>(cookie % buckets);
	}

	std::mutex m_;
	pid_t pid_ = 0;
	uint64_t generation_ = 0;
	uint64_t next_ = 0;
	Pending *bucket_[buckets] = {};
};

inline constinit PendingTable pending_table;

} // namespace detail

// Something waiting for one completion, found by its cookie(): a number
// this process's table (detail::PendingTable) knows it by, never its
// address. RdmaQueue::dispatch() calls complete() of the Pending a reaped
// completion's cookie names, and hands completions whose cookie names
// none (another process's transfers, after fork() or SCM_RIGHTS; raw
// cookies of the C API; a Pending destroyed already) to its callback
// instead. The object must live until its completion is dispatched; a
// forked child's copy is not the parent's and is never completed there.
class Pending {
    public:
	uint64_t cookie() const noexcept
	{
		return cookie_;
	}
	// The live Pending of this process with this cookie, or nullptr.
	static Pending *from_cookie(uint64_t cookie) noexcept
	{
		return detail::pending_table.find(cookie);
	}
	virtual void complete(const Completion &c) noexcept = 0;

    protected:
	Pending() noexcept
	{
		// In the body: the members' initializers have run (add() sets them).
		cookie_ = detail::pending_table.add(this);
	}
	Pending(const Pending &) = delete;
	Pending &operator=(const Pending &) = delete;
	~Pending()
	{
		detail::pending_table.remove(this);
	}

    private:
	friend class detail::PendingTable;
	uint64_t cookie_ = 0;
	uint64_t generation_ = 0;
	Pending *next_ = nullptr;
	Pending **pprev_ = nullptr;
};

inline uint64_t detail::PendingTable::add(Pending *p) noexcept
{
	std::lock_guard<std::mutex> lock(m_);
	own();
	uint64_t cookie;
	do
		cookie = mix(next_++);
	while (cookie == 0);
	Pending *&head = bucket_[slot(cookie)];
	p->generation_ = generation_;
	p->next_ = head;
	p->pprev_ = &head;
	if (head)
		head->pprev_ = &p->next_;
	head = p;
	return cookie;
}

inline void detail::PendingTable::remove(Pending *p) noexcept
{
	std::lock_guard<std::mutex> lock(m_);
	own();
	// An inherited one (fork()) is in the parent's table only.
	if (p->generation_ != generation_ || !p->pprev_)
		return;
	*p->pprev_ = p->next_;
	if (p->next_)
		p->next_->pprev_ = p->pprev_;
	p->next_ = nullptr;
	p->pprev_ = nullptr;
}

inline Pending *detail::PendingTable::find(uint64_t cookie) noexcept
{
	std::lock_guard<std::mutex> lock(m_);
	own();
	for (Pending *p = bucket_[slot(cookie)]; p; p = p->next_)
		if (p->cookie_ == cookie)
			return p;
	return nullptr;
}

// Asynchronous RDMA on a socket it names by fd (owns nothing; the socket
// must outlive the transfers' completions being reaped). Submission blocks
// only for a slot of SMBDIRECT_OPT_RDMA_INFLIGHT (not with MSG_DONTWAIT or
// on a non-blocking socket: EAGAIN); reaping never blocks. Completions
// wait on the socket's error queue: poll() reports POLLERR meanwhile, or,
// after use_events(), POLLPRI (and POLLERR only for the connection's
// error), with POLLWRBAND while a slot is free.
class RdmaQueue {
    public:
	// Completions reaped per system call by reap_each() and dispatch().
	static constexpr size_t batch = 64;

	RdmaQueue() noexcept = default;
	explicit RdmaQueue(int fd) noexcept : fd_(fd)
	{
	}
	int fd() const noexcept
	{
		return fd_;
	}

	// Up to SMBDIRECT_RDMA_CMSG_MAX transfers, all or none.
	Result<void> submit(std::span<const Transfer> transfers,
			    int flags = MSG_NOSIGNAL) const noexcept
	{
		return detail::check(smbdirect_rdma_submit(
			fd_, transfers.data(), static_cast<unsigned int>(transfers.size()), flags));
	}
	Result<void> submit(const Transfer &transfer, int flags = MSG_NOSIGNAL) const noexcept
	{
		return submit(std::span<const Transfer>(&transfer, 1), flags);
	}

	// The transfers and then one message in one sendmsg(): the RDMA WRITEs
	// reach the peer's memory before it sees the message (an SMB2 READ
	// response right behind its data), optionally with SEND_WITH_INVALIDATE
	// of the peer's token (host order, sd::token()). The message bytes taken.
	Result<size_t> submit_with_message(std::span<const Transfer> transfers,
					   std::span<const iovec> message,
					   std::optional<uint32_t> invalidate_token = std::nullopt,
					   int flags = MSG_NOSIGNAL) const noexcept
	{
		return detail::bytes(smbdirect_rdma_submit_msg(
			fd_, transfers.data(), static_cast<unsigned int>(transfers.size()),
			message.data(), static_cast<int>(message.size()),
			invalidate_token ? &*invalidate_token : nullptr, flags));
	}
	Result<size_t> submit_with_message(std::span<const Transfer> transfers,
					   std::span<const std::byte> message,
					   std::optional<uint32_t> invalidate_token = std::nullopt,
					   int flags = MSG_NOSIGNAL) const noexcept
	{
		iovec v = detail::byte_iovec(message);
		return submit_with_message(transfers, std::span<const iovec>(&v, 1),
					   invalidate_token, flags);
	}

	// Completions waiting, into out (at most 256 a call): how many, 0 when
	// none waits.
	Result<size_t> reap(std::span<Completion> out) const noexcept
	{
		return detail::bytes(smbdirect_rdma_reap(fd_, out.data(),
							 static_cast<unsigned int>(out.size())));
	}

	// Reaps every completion waiting and calls f(const Completion &) for
	// each, in completion order; how many. f must not throw (the rest of a
	// batch reaped already would be lost).
	template <class F> Result<size_t> reap_each(F &&f) const
	{
		Completion c[batch];
		size_t total = 0;
		for (;;) {
			auto n = reap(c);
			if (!n && total == 0)
				return fail(n.error());
			if (!n) // reported by the next call
				return total;
			for (size_t i = 0; i < *n; i++)
				f(static_cast<const Completion &>(c[i]));
			total += *n;
			if (*n < batch)
				return total;
		}
	}

	// reap_each() handing each completion to the Pending of this process
	// its cookie names (looked up, never dereferenced), and each one whose
	// cookie names none to other(const Completion &): another process's
	// transfer (the socket was inherited or passed), a raw cookie, or a
	// Pending destroyed already. How many were reaped.
	template <class F> Result<size_t> dispatch(F &&other) const
	{
		return reap_each([&other](const Completion &c) {
			if (Pending *p = Pending::from_cookie(c.cookie))
				p->complete(c);
			else
				other(c);
		});
	}
	// The same, dropping the completions no Pending of this process waits for.
	Result<size_t> dispatch() const noexcept
	{
		return dispatch([](const Completion &) noexcept {});
	}

	// SMBDIRECT_OPT_RDMA_EVENTS: completions raise POLLPRI instead of
	// POLLERR, which then means the connection's error alone (no race
	// between reaping and asking whether the connection failed), and
	// POLLWRBAND is set while a slot is free. ENOPROTOOPT on a module
	// without the option.
	Result<void> use_events(uint32_t flags = SMBDIRECT_RDMA_EVENTS_PRI |
						 SMBDIRECT_RDMA_EVENTS_WRBAND) const noexcept
	{
		return detail::check(smbdirect_set_option(fd_, SMBDIRECT_OPT_RDMA_EVENTS, flags));
	}
	Result<uint32_t> events() const noexcept
	{
		uint32_t v = 0;
		if (int r = smbdirect_get_option(fd_, SMBDIRECT_OPT_RDMA_EVENTS, &v); r < 0)
			return fail(r);
		return v;
	}

	// Waits up to timeout_ms (-1: forever) for a completion: true if one
	// waits; false after the timeout, or at once when the connection is
	// over (POLLHUP, or POLLERR after use_events()) and none waits.
	Result<bool> wait(int timeout_ms) const noexcept
	{
		if (fd_ < 0) // poll() would ignore it, and wait the whole time
			return fail(EBADF);
		struct pollfd p = { fd_, POLLPRI, 0 }; // POLLERR needs no asking
		int r = ::poll(&p, 1, timeout_ms);
		if (r < 0)
			return fail(detail::last_errno());
		if (r > 0 && (p.revents & POLLNVAL))
			return fail(EBADF);
		if (r <= 0 || (p.revents & POLLPRI))
			return r > 0;
		// POLLERR is a completion only where completions still raise it.
		if (!(p.revents & POLLERR))
			return false;
		auto ev = events();
		return !ev || !(*ev & SMBDIRECT_RDMA_EVENTS_PRI);
	}

	// After use_events(): waits up to timeout_ms (-1: forever) for a free
	// slot (POLLWRBAND): true when one is free; false after the timeout,
	// when completions wait (POLLPRI: reaping them is what frees slots)
	// or the connection is over. It never returns at once without one of
	// these, so a loop over wait_slot(), dispatch() and submit() does not
	// spin.
	Result<bool> wait_slot(int timeout_ms) const noexcept
	{
		if (fd_ < 0)
			return fail(EBADF);
		struct pollfd p = { fd_, POLLWRBAND | POLLPRI, 0 };
		int r = ::poll(&p, 1, timeout_ms);
		if (r < 0)
			return fail(detail::last_errno());
		if (r > 0 && (p.revents & POLLNVAL))
			return fail(EBADF);
		return r > 0 && (p.revents & POLLWRBAND);
	}

	// SMBDIRECT_OPT_RDMA_INFLIGHT: transfers submitted and not yet reaped
	// that the socket holds (1 .. SMBDIRECT_RDMA_INFLIGHT_MAX, default 64).
	Result<void> set_limit(uint32_t transfers) const noexcept
	{
		return detail::check(
			smbdirect_set_option(fd_, SMBDIRECT_OPT_RDMA_INFLIGHT, transfers));
	}
	Result<uint32_t> limit() const noexcept
	{
		uint32_t v = 0;
		if (int r = smbdirect_get_option(fd_, SMBDIRECT_OPT_RDMA_INFLIGHT, &v); r < 0)
			return fail(r);
		return v;
	}

    private:
	int fd_ = -1;
};

// --- registrations -------------------------------------------------------------------

// Memory the peer may RDMA-read or -write, until deregister() or the
// destructor (see the top of this file for lifetime rules).
class Registration {
    public:
	Registration() noexcept = default;
	Registration(Registration &&o) noexcept : s_(std::exchange(o.s_, {}))
	{
	}
	Registration &operator=(Registration &&o) noexcept
	{
		if (this != &o) {
			drop();
			s_ = std::exchange(o.s_, {});
		}
		return *this;
	}
	~Registration()
	{
		drop();
	}

	// Adopts a registration made with the C API on socket fd.
	static Registration adopt(int fd, const smbdirect_rdma_v1_registration &reg) noexcept
	{
		Registration r;
		r.s_ = { fd, detail::socket_inode(fd), ::getpid(), reg, false };
		return r;
	}

	// Registers memory of socket fd for the peer: access is
	// SMBDIRECT_ACCESS_PEER_READ and/or _PEER_WRITE, optionally |
	// SMBDIRECT_REG_REMOTE_INVALIDATE (Socket::register_memory() does
	// the same on its socket).
	static Result<Registration> create(int fd, std::span<const iovec> iov,
					   uint32_t access) noexcept
	{
		smbdirect_rdma_v1_registration reg;
		int r = smbdirect_rdma_v1_register(fd, iov.data(), static_cast<int>(iov.size()),
						   access, &reg);
		if (r < 0)
			return fail(r);
		return adopt(fd, reg);
	}
	static Result<Registration> create(int fd, std::span<std::byte> buffer,
					   uint32_t access) noexcept
	{
		iovec v = detail::byte_iovec(buffer);
		return create(fd, std::span<const iovec>(&v, 1), access);
	}

	// Invalidates and unpins; true if the peer had already invalidated it
	// (send-with-invalidate). On success, or ENOENT (the kernel has no
	// such registration any more), the object is empty. On any other error
	// the kernel did not take the registration (ENOMEM, EINTR, EFAULT, a
	// descriptor that is no SMB-Direct socket...): the object still holds
	// it, and deregister() may be called again. EBADF when its socket's
	// descriptor was closed (or reused): the object lets it go.
	Result<bool> deregister() noexcept
	{
		return end([](int fd, smbdirect_rdma_v1_registration *reg) {
			return smbdirect_rdma_v1_deregister(fd, reg);
		});
	}

	// Ends the registration without waiting for the invalidation
	// (SMBDIRECT_DEREG_ASYNC): the descriptors are gone at once, and one
	// completion with cookie (bytes length(); status 0, or the
	// connection's error if it ended first) reaches the socket's error
	// queue (RdmaQueue) once the peer's access has ended; only then may
	// the memory be reused. The result, and what an error leaves in the
	// object, as with deregister().
	Result<bool> deregister_async(uint64_t cookie) noexcept
	{
		return end([cookie](int fd, smbdirect_rdma_v1_registration *reg) {
			return smbdirect_rdma_v1_deregister_async(fd, reg, cookie);
		});
	}
	// The same, completing p (see Pending).
	Result<bool> deregister_async(Pending &p) noexcept
	{
		return deregister_async(p.cookie());
	}

	// Hands the registration to C code; this object forgets it.
	smbdirect_rdma_v1_registration release() noexcept
	{
		return std::exchange(s_.reg, {});
	}

	bool live() const noexcept
	{
		return s_.reg.id != 0;
	}
	explicit operator bool() const noexcept
	{
		return live();
	}
	uint64_t id() const noexcept
	{
		return s_.reg.id;
	}
	// What to put into SMB2 READ/WRITE channel info.
	std::span<const Descriptor> descriptors() const noexcept
	{
		return { s_.reg.desc, s_.reg.desc ? s_.reg.desc_count : 0 };
	}
	// The bytes registered: what an asynchronous deregistration's
	// completion reports.
	uint64_t length() const noexcept
	{
		uint64_t n = 0;
		for (const Descriptor &d : descriptors())
			n += sd::length(d);
		return n;
	}
	// After deregister(): whether the peer had invalidated it.
	bool remote_invalidated() const noexcept
	{
		return s_.remote_invalidated;
	}

    private:
	struct State {
		int fd = -1;
		ino_t inode = 0;
		pid_t pid = 0;
		smbdirect_rdma_v1_registration reg = {};
		bool remote_invalidated = false;
	};

	template <class Call> Result<bool> end(Call call) noexcept
	{
		if (!s_.reg.id && !s_.reg.desc)
			return fail(ENOENT);
		if (s_.inode && detail::socket_inode(s_.fd) != s_.inode) {
			forget();
			return fail(EBADF);
		}
		// Frees and zeroes reg once the kernel took it (or on ENOENT);
		// other errors leave it here, to retry.
		int r = call(s_.fd, &s_.reg);
		if (r < 0)
			return fail(r);
		s_.remote_invalidated = r & SMBDIRECT_REG_STATE_REMOTE_INVALIDATED;
		return s_.remote_invalidated;
	}

	void forget() noexcept
	{
		std::free(s_.reg.desc);
		s_.reg = {};
	}

	// The destructor's (and move assignment's) deregistration: only in
	// the process that registered, one attempt. A destructor cannot report
	// an error: if the kernel keeps the registration (deregister()'s
	// errors but ENOENT and EBADF), it stays registered, the memory pinned
	// and open to the peer, until the socket's last close() releases it.
	// Call deregister() first where that matters, and retry on its error.
	void drop() noexcept
	{
		if (!s_.reg.id && !s_.reg.desc)
			return;
		if (s_.pid == ::getpid()) {
			int saved = errno;
			(void)deregister();
			errno = saved;
		}
		forget();
	}

	State s_;
};

// --- sockets --------------------------------------------------------------------------

// A connected (or not yet connected) SMB-Direct socket; owns its fd.
class Socket {
    public:
	Socket() noexcept = default;
	explicit Socket(int fd) noexcept : fd_(fd)
	{
	}
	Socket(Socket &&o) noexcept : fd_(std::exchange(o.fd_, -1))
	{
	}
	Socket &operator=(Socket &&o) noexcept
	{
		if (this != &o)
			reset(std::exchange(o.fd_, -1));
		return *this;
	}
	~Socket()
	{
		reset();
	}

	// smbdirect_socket(): domain AF_INET, AF_INET6 or AF_UNSPEC; type
	// SOCK_STREAM or SOCK_SEQPACKET; flags SOCK_CLOEXEC | SOCK_NONBLOCK.
	// ENOENT: af_smbdirect is not loaded (sd::available() says so).
	static Result<Socket> create(int domain = AF_UNSPEC, int type = SOCK_STREAM,
				     int flags = SOCK_CLOEXEC) noexcept
	{
		int fd = smbdirect_socket(domain, type, flags);
		if (fd < 0)
			return fail(fd);
		return Socket(fd);
	}

	int fd() const noexcept
	{
		return fd_;
	}
	bool valid() const noexcept
	{
		return fd_ >= 0;
	}
	explicit operator bool() const noexcept
	{
		return valid();
	}
	// Gives up ownership: the caller closes the fd.
	int release() noexcept
	{
		return std::exchange(fd_, -1);
	}
	// Closes the fd it holds (errors ignored) and takes fd.
	void reset(int fd = -1) noexcept
	{
		if (fd_ >= 0 && fd_ != fd) {
			int saved = errno;
			::close(fd_);
			errno = saved;
		}
		fd_ = fd;
	}
	// Closes and reports close()'s error (SO_LINGER timeouts show here).
	Result<void> close() noexcept
	{
		int fd = std::exchange(fd_, -1);
		if (fd >= 0 && ::close(fd))
			return fail(detail::last_errno());
		return {};
	}

	// --- options and parameters ---
	Result<void> set_option(int option, uint32_t value) const noexcept
	{
		return detail::check(smbdirect_set_option(fd_, option, value));
	}
	Result<uint32_t> option(int option) const noexcept
	{
		uint32_t v = 0;
		if (int r = smbdirect_get_option(fd_, option, &v); r < 0)
			return fail(r);
		return v;
	}
	Result<void> set_options(const Options &o) const noexcept
	{
		const std::pair<int, const std::optional<uint32_t> &> all[] = {
			{ SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, o.receive_credit_max },
			{ SMBDIRECT_OPT_SEND_CREDIT_TARGET, o.send_credit_target },
			{ SMBDIRECT_OPT_MAX_SEND_SIZE, o.max_send_size },
			{ SMBDIRECT_OPT_MAX_RECEIVE_SIZE, o.max_receive_size },
			{ SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, o.max_fragmented_size },
			{ SMBDIRECT_OPT_MAX_READ_WRITE_SIZE, o.max_read_write_size },
			{ SMBDIRECT_OPT_KEEPALIVE_INTERVAL, o.keepalive_interval },
		};
		for (const auto &[name, value] : all)
			if (value)
				if (auto r = set_option(name, *value); !r)
					return r;
		return {};
	}
	// The negotiated parameters (connected sockets).
	Result<smbdirect_params> params() const noexcept
	{
		smbdirect_params p = {};
		if (int r = smbdirect_connection_get_parameters(fd_, &p); r < 0)
			return fail(r);
		return p;
	}

	// --- connecting ---
	Result<void> connect(const Address &peer) const noexcept
	{
		if (::connect(fd_, peer.get(), peer.length))
			return fail(detail::last_errno());
		return {};
	}
	Result<Address> local_address() const noexcept
	{
		Address a;
		a.length = sizeof(a.storage);
		if (::getsockname(fd_, a.get(), &a.length))
			return fail(detail::last_errno());
		return a;
	}

	// --- messages ---
	Result<size_t> send(std::span<const std::byte> data,
			    int flags = MSG_NOSIGNAL) const noexcept
	{
		return detail::sys_bytes(::send(fd_, data.data(), data.size(), flags));
	}
	Result<size_t> recv(std::span<std::byte> data, int flags = 0) const noexcept
	{
		return detail::sys_bytes(::recv(fd_, data.data(), data.size(), flags));
	}
	// Sends data and invalidates the peer's token (host order, see
	// sd::token()) with the message's last PDU.
	Result<size_t> send_with_invalidate(std::span<const iovec> iov, uint32_t peer_token,
					    int flags = MSG_NOSIGNAL) const noexcept
	{
		return detail::bytes(smbdirect_send_with_invalidate(
			fd_, iov.data(), static_cast<int>(iov.size()), peer_token, flags));
	}
	Result<size_t> send_with_invalidate(std::span<const std::byte> data, uint32_t peer_token,
					    int flags = MSG_NOSIGNAL) const noexcept
	{
		iovec v = detail::byte_iovec(data);
		return send_with_invalidate(std::span<const iovec>(&v, 1), peer_token, flags);
	}

	// --- RDMA ---
	// Registration::create() on this socket.
	Result<Registration> register_memory(std::span<const iovec> iov,
					     uint32_t access) const noexcept
	{
		return Registration::create(fd_, iov, access);
	}
	Result<Registration> register_memory(std::span<std::byte> buffer,
					     uint32_t access) const noexcept
	{
		return Registration::create(fd_, buffer, access);
	}
	// RDMA READ from the peer's descriptors into local memory.
	Result<size_t> rdma_read(std::span<const iovec> local,
				 std::span<const Descriptor> remote) const noexcept
	{
		return detail::bytes(smbdirect_rdma_v1_readv(
			fd_, local.data(), static_cast<int>(local.size()), remote.data(),
			static_cast<uint32_t>(remote.size())));
	}
	Result<size_t> rdma_read(std::span<std::byte> local,
				 std::span<const Descriptor> remote) const noexcept
	{
		iovec v = detail::byte_iovec(local);
		return rdma_read(std::span<const iovec>(&v, 1), remote);
	}
	// RDMA WRITE of local memory into the peer's descriptors.
	Result<size_t> rdma_write(std::span<const iovec> local,
				  std::span<const Descriptor> remote) const noexcept
	{
		return detail::bytes(smbdirect_rdma_v1_writev(
			fd_, local.data(), static_cast<int>(local.size()), remote.data(),
			static_cast<uint32_t>(remote.size())));
	}
	Result<size_t> rdma_write(std::span<const std::byte> local,
				  std::span<const Descriptor> remote) const noexcept
	{
		iovec v = detail::byte_iovec(local);
		return rdma_write(std::span<const iovec>(&v, 1), remote);
	}

	// Asynchronous RDMA on this socket (which must outlive it).
	RdmaQueue rdma_queue() const noexcept
	{
		return RdmaQueue(fd_);
	}

    private:
	int fd_ = -1;
};

// A listening SMB-Direct socket (options and the rest as for Socket).
class Listener : public Socket {
    public:
	using Socket::Socket;

	// The next connection; flags SOCK_CLOEXEC | SOCK_NONBLOCK for the new fd.
	Result<Socket> accept(int flags = SOCK_CLOEXEC) const noexcept
	{
		int fd = smbdirect_accept(this->fd(), nullptr, nullptr, flags);
		if (fd < 0)
			return fail(fd);
		return Socket(fd);
	}
	Result<Socket> accept(Address &peer, int flags = SOCK_CLOEXEC) const noexcept
	{
		peer.length = sizeof(peer.storage);
		int fd = smbdirect_accept(this->fd(), peer.get(), &peer.length, flags);
		if (fd < 0)
			return fail(fd);
		return Socket(fd);
	}
	// The port it listens on (after binding port 0: the one chosen).
	uint16_t port() const noexcept
	{
		auto a = local_address();
		return a ? a->port() : 0;
	}
};

// socket + options + connect. With SOCK_NONBLOCK in o.flags the socket is
// returned while the connection is still being made (poll for POLLOUT,
// then read SO_ERROR).
inline Result<Socket> connect(const Address &peer, int type = SOCK_STREAM,
			      const Options &o = {}) noexcept
{
	auto s = Socket::create(peer.family(), type, o.flags);
	if (!s)
		return s;
	if (auto r = s->set_options(o); !r)
		return fail(r.error());
	if (auto r = s->connect(peer); !r) {
		bool nonblock = (type | o.flags) & SOCK_NONBLOCK;
		if (!(nonblock && r.error() == std::errc::operation_in_progress))
			return fail(r.error());
	}
	return s;
}

inline Result<Socket> connect(const char *host, const char *port, int type = SOCK_STREAM,
			      const Options &o = {}) noexcept
{
	auto a = Address::parse(host, port);
	if (!a)
		return fail(a.error());
	return connect(*a, type, o);
}

// socket + options + bind + listen.
inline Result<Listener> listen(const Address &local, int type = SOCK_STREAM, const Options &o = {},
			       int backlog = 16) noexcept
{
	auto s = Socket::create(local.family(), type, o.flags);
	if (!s)
		return fail(s.error());
	if (auto r = s->set_options(o); !r)
		return fail(r.error());
	if (::bind(s->fd(), local.get(), local.length) || ::listen(s->fd(), backlog))
		return fail(detail::last_errno());
	return Listener(s->release());
}

inline Result<Listener> listen(const char *host, const char *port, int type = SOCK_STREAM,
			       const Options &o = {}, int backlog = 16) noexcept
{
	auto a = Address::parse(host, port);
	if (!a)
		return fail(a.error());
	return listen(*a, type, o, backlog);
}

// smbdirect_available(): whether SMB-Direct sockets can be made, and in
// why a sentence for people ("af_smbdirect is not loaded: modprobe
// af_smbdirect"), where the error alone (ENOENT) would puzzle them.
inline Result<void> available(std::string *why = nullptr)
{
	char text[256] = "";
	int r = smbdirect_available(text, sizeof(text));
	if (why)
		*why = text;
	return detail::check(r);
}

// --- RDMA-capable interfaces (SMB3 multichannel) -----------------------------------

struct Interface {
	int ifindex = 0;
	std::string name;
	std::string rdma_device; // "" when none
	uint32_t rdma_port = 0;
	uint32_t transport = 0; // SMBDIRECT_TRANSPORT_*; 0 none
	bool rdma_capable = false;
	bool up = false;
	uint64_t speed_bps = 0; // 0 unknown
	std::string reason;
	std::vector<sockaddr_storage> addresses;
};

// smbdirect_interfaces(): flags 0 (interfaces with an RDMA device) or
// SMBDIRECT_IF_LIST_ALL.
inline Result<std::vector<Interface>> interfaces(uint32_t flags = 0)
{
	smbdirect_interface *list = nullptr;
	int n = smbdirect_interfaces(&list, flags);
	if (n < 0)
		return fail(n);
	std::vector<Interface> out;
	for (const smbdirect_interface &e : std::span(list, static_cast<size_t>(n)))
		out.push_back({ e.ifindex, e.name, e.rdma_device, e.rdma_port, e.transport,
				(e.flags & SMBDIRECT_IF_RDMA_CAPABLE) != 0,
				(e.flags & SMBDIRECT_IF_UP) != 0, e.speed_bps, e.reason,
				std::vector<sockaddr_storage>(e.addrs, e.addrs + e.addr_count) });
	smbdirect_interfaces_free(list, n);
	return out;
}

} // inline namespace
} // namespace sd

#endif // C++20
#endif // SMBDIRECT_SMBDIRECT_HPP
