// SPDX-License-Identifier: LGPL-2.1-or-later
//
// libsmbdirect's C++ API (namespace sd), header-only over the C API of
// <smbdirect/smbdirect.h>. See libsmbdirect++(3).
//
//  - Errors are values: sd::Result<T> is std::expected<T, std::error_code>
//    where the standard library has it (C++23), else a small class with the
//    same members (has_value, value, error, operator*, operator->, explicit
//    operator bool, value_or). The codes are errno values in
//    std::system_category(), so they compare equal to std::errc constants.
//    Nothing here throws: it compiles and works with -fno-exceptions.
//    value() on an error aborts there (std::expected would throw).
//  - Socket and Listener own a file descriptor (move-only, closed by the
//    destructor); Registration owns a registration of memory for the peer
//    and deregisters it in its destructor.
//  - RdmaQueue submits asynchronous RDMA transfers on a socket it names by
//    fd (it owns nothing) and reaps their completions, handing each to a
//    callback or to the Pending object whose address is its cookie.
//  - A Registration names its socket by fd and must not outlive it (destroy
//    it, or call deregister(), before closing the socket). If the fd was
//    closed and reused meanwhile, the Registration notices (the socket's
//    inode differs) and does not touch the other socket. Registrations
//    belong to the socket, not to the process: after fork() both processes
//    see them, and only the process that registered deregisters in the
//    destructor (the other one's copy lets go silently; an explicit
//    deregister() works from any process that holds the socket).
#ifndef SMBDIRECT_SMBDIRECT_HPP
#define SMBDIRECT_SMBDIRECT_HPP

#include <smbdirect/smbdirect.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <netinet/in.h>
#include <new>
#include <optional>
#include <poll.h>
#include <span>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <type_traits>
#include <unistd.h>
#include <utility>
#include <vector>
#if __has_include(<expected>)
#include <expected>
#endif

namespace sd
{

// The two spellings of Result<T> would give inline functions of the same
// name different return types: an inline namespace per spelling keeps a
// program that mixes C++20 and C++23 translation units free of ODR clashes.
#if defined(__cpp_lib_expected) && __cpp_lib_expected >= 202202L
inline namespace expected_api
{
#else
inline namespace result_api
{
#endif

// errno (positive or negative, as the C API returns it) as an error code.
inline std::error_code errno_code(int e) noexcept
{
	return std::error_code(e < 0 ? -e : e, std::system_category());
}

#if defined(__cpp_lib_expected) && __cpp_lib_expected >= 202202L

template <class T> using Result = std::expected<T, std::error_code>;
using Unexpected = std::unexpected<std::error_code>;

#else

// What std::unexpected<std::error_code> is in C++23.
class Unexpected {
    public:
	explicit Unexpected(std::error_code e) noexcept : error_(e)
	{
	}
	const std::error_code &error() const noexcept
	{
		return error_;
	}

    private:
	std::error_code error_;
};

// The subset of std::expected<T, std::error_code> this API uses.
template <class T> class [[nodiscard]] Result {
    public:
	using value_type = T;
	using error_type = std::error_code;

	Result(const T &v) noexcept(std::is_nothrow_copy_constructible_v<T>) : value_(v)
	{
	}
	Result(T &&v) noexcept(std::is_nothrow_move_constructible_v<T>) : value_(std::move(v))
	{
	}
	Result(const Unexpected &u) noexcept : error_(u.error())
	{
	}

	bool has_value() const noexcept
	{
		return value_.has_value();
	}
	explicit operator bool() const noexcept
	{
		return has_value();
	}
	T &value() &noexcept
	{
		check();
		return *value_;
	}
	const T &value() const &noexcept
	{
		check();
		return *value_;
	}
	T &&value() &&noexcept
	{
		check();
		return std::move(*value_);
	}
	T &operator*() &noexcept
	{
		return *value_;
	}
	const T &operator*() const &noexcept
	{
		return *value_;
	}
	T &&operator*() &&noexcept
	{
		return std::move(*value_);
	}
	T *operator->() noexcept
	{
		return &*value_;
	}
	const T *operator->() const noexcept
	{
		return &*value_;
	}
	const std::error_code &error() const noexcept
	{
		return error_;
	}
	template <class U> T value_or(U &&other) const &
	{
		return has_value() ? *value_ : static_cast<T>(std::forward<U>(other));
	}
	template <class U> T value_or(U &&other) &&
	{
		return has_value() ? std::move(*value_) : static_cast<T>(std::forward<U>(other));
	}

    private:
	void check() const noexcept
	{
		if (!value_)
			std::abort();
	}

	std::optional<T> value_;
	std::error_code error_;
};

template <> class [[nodiscard]] Result<void> {
    public:
	using value_type = void;
	using error_type = std::error_code;

	Result() noexcept = default;
	Result(const Unexpected &u) noexcept : ok_(false), error_(u.error())
	{
	}

	bool has_value() const noexcept
	{
		return ok_;
	}
	explicit operator bool() const noexcept
	{
		return ok_;
	}
	void value() const noexcept
	{
		if (!ok_)
			std::abort();
	}
	void operator*() const noexcept
	{
	}
	const std::error_code &error() const noexcept
	{
		return error_;
	}

    private:
	bool ok_ = true;
	std::error_code error_;
};

#endif

// The error of a failed call: return sd::fail(-EINVAL) or sd::fail(ec).
inline Unexpected fail(std::error_code e) noexcept
{
	return Unexpected(e);
}
inline Unexpected fail(int e) noexcept
{
	return Unexpected(errno_code(e));
}

namespace detail
{

inline Result<void> check(long ret) noexcept
{
	if (ret < 0)
		return fail(static_cast<int>(ret));
	return {};
}

inline Result<size_t> bytes(ssize_t ret) noexcept
{
	if (ret < 0)
		return fail(static_cast<int>(ret));
	return static_cast<size_t>(ret);
}

inline int last_errno() noexcept
{
	return errno > 0 ? errno : EIO;
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

// --- addresses -----------------------------------------------------------------

// A sockaddr_in or sockaddr_in6, as SMB-Direct sockets take them.
struct Address {
	sockaddr_storage storage = {};
	socklen_t length = 0;

	// Numeric host ("10.0.0.1", "fd00::1", "[fd00::1]", "fe80::1%eth0";
	// nullptr: the IPv6 wildcard) and port ("445").
	static Result<Address> parse(const char *host, const char *port) noexcept
	{
		Address a;
		int r = smbdirect_parse_address(host, port, &a.storage, &a.length);
		if (r < 0)
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

// --- buffer descriptors ------------------------------------------------------------

// Buffer Descriptor V1 as on the wire (little-endian fields).
using Descriptor = smbdirect_buffer_descriptor_v1;

// The fields in host order: token() is what send_with_invalidate() takes.
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

// --- options ------------------------------------------------------------------------

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

class Socket;
class Pending;

// --- registrations -------------------------------------------------------------------

// Memory the peer may RDMA-read or -write, until deregister() or the
// destructor (see the top of this file for lifetime rules).
class Registration {
    public:
	Registration() noexcept = default;
	Registration(const Registration &) = delete;
	Registration &operator=(const Registration &) = delete;
	Registration(Registration &&o) noexcept
	    : fd_(o.fd_), inode_(o.inode_), pid_(o.pid_), reg_(std::exchange(o.reg_, {})),
	      remote_invalidated_(o.remote_invalidated_)
	{
	}
	Registration &operator=(Registration &&o) noexcept
	{
		if (this != &o) {
			drop();
			fd_ = o.fd_;
			inode_ = o.inode_;
			pid_ = o.pid_;
			reg_ = std::exchange(o.reg_, {});
			remote_invalidated_ = o.remote_invalidated_;
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
		return Registration(fd, reg);
	}

	// Invalidates and unpins; true if the peer had already invalidated it
	// (send-with-invalidate). The descriptors are gone afterwards.
	Result<bool> deregister() noexcept
	{
		if (!reg_.id && !reg_.desc)
			return fail(ENOENT);
		if (inode_ && detail::socket_inode(fd_) != inode_) {
			forget();
			return fail(EBADF);
		}
		int r = smbdirect_rdma_v1_deregister(fd_, &reg_);
		if (r < 0)
			return fail(r);
		remote_invalidated_ = r & SMBDIRECT_REG_STATE_REMOTE_INVALIDATED;
		return remote_invalidated_;
	}

	// Registers memory of the socket fd for the peer, without an
	// sd::Socket: access as for Socket::register_memory().
	static Result<Registration> create(int fd, std::span<const iovec> iov,
					   uint32_t access) noexcept
	{
		smbdirect_rdma_v1_registration reg;
		int r = smbdirect_rdma_v1_register(fd, iov.data(), static_cast<int>(iov.size()),
						   access, &reg);
		if (r < 0)
			return fail(r);
		return Registration(fd, reg);
	}
	static Result<Registration> create(int fd, std::span<std::byte> buffer,
					   uint32_t access) noexcept
	{
		iovec v = detail::byte_iovec(buffer);
		return create(fd, std::span<const iovec>(&v, 1), access);
	}

	// Ends the registration without waiting for the invalidation
	// (SMBDIRECT_DEREG_ASYNC): the descriptors are gone at once, and one
	// completion with cookie (bytes length(); status 0, or the
	// connection's error if it ended first) reaches the socket's error
	// queue (RdmaQueue) once the peer's access has ended; only then may
	// the memory be reused. true if the peer had already invalidated it.
	// The registration is gone from the object whatever the result, as
	// with deregister().
	Result<bool> deregister_async(uint64_t cookie) noexcept
	{
		if (!reg_.id && !reg_.desc)
			return fail(ENOENT);
		if (inode_ && detail::socket_inode(fd_) != inode_) {
			forget();
			return fail(EBADF);
		}
		int r = smbdirect_rdma_v1_deregister_async(fd_, &reg_, cookie);
		if (r < 0)
			return fail(r);
		remote_invalidated_ = r & SMBDIRECT_REG_STATE_REMOTE_INVALIDATED;
		return remote_invalidated_;
	}
	// The same, completing p (see Pending).
	inline Result<bool> deregister_async(Pending &p) noexcept;

	// Hands the registration to C code; this object forgets it.
	smbdirect_rdma_v1_registration release() noexcept
	{
		return std::exchange(reg_, {});
	}

	bool live() const noexcept
	{
		return reg_.id != 0;
	}
	explicit operator bool() const noexcept
	{
		return live();
	}
	uint64_t id() const noexcept
	{
		return reg_.id;
	}
	uint32_t flags() const noexcept
	{
		return reg_.flags;
	}
	int fd() const noexcept
	{
		return fd_;
	}
	// What to put into SMB2 READ/WRITE channel info.
	std::span<const Descriptor> descriptors() const noexcept
	{
		return { reg_.desc, reg_.desc ? reg_.desc_count : 0 };
	}
	// The bytes registered: what an asynchronous deregistration's
	// completion reports.
	uint64_t length() const noexcept
	{
		uint64_t n = 0;
		for (const Descriptor &d : descriptors())
			n += le32toh(d.length);
		return n;
	}
	// After deregister(): whether the peer had invalidated it.
	bool remote_invalidated() const noexcept
	{
		return remote_invalidated_;
	}

    private:
	friend class Socket;
	Registration(int fd, const smbdirect_rdma_v1_registration &reg) noexcept
	    : fd_(fd), inode_(detail::socket_inode(fd)), pid_(::getpid()), reg_(reg)
	{
	}

	void forget() noexcept
	{
		std::free(reg_.desc);
		reg_ = {};
	}

	// The destructor's deregistration: only in the process that registered.
	void drop() noexcept
	{
		if (!reg_.id && !reg_.desc)
			return;
		if (pid_ != ::getpid()) {
			forget();
			return;
		}
		int saved = errno;
		(void)deregister();
		forget();
		errno = saved;
	}

	int fd_ = -1;
	ino_t inode_ = 0;
	pid_t pid_ = 0;
	smbdirect_rdma_v1_registration reg_ = {};
	bool remote_invalidated_ = false;
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
inline Transfer file_write_transfer(uint64_t cookie, int file_fd, uint64_t offset,
				    uint64_t length, std::span<const Descriptor> remote) noexcept
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

// Something waiting for one completion, found by its cookie: its own
// address (cookie()). RdmaQueue::dispatch() calls complete() once the
// completion is reaped; the object must live until then. Every cookie on
// a socket that is dispatched must be one of these.
class Pending {
    public:
	uint64_t cookie() const noexcept
	{
		return reinterpret_cast<uintptr_t>(this);
	}
	static Pending *from_cookie(uint64_t cookie) noexcept
	{
		return reinterpret_cast<Pending *>(static_cast<uintptr_t>(cookie));
	}
	virtual void complete(const Completion &c) noexcept = 0;

    protected:
	Pending() noexcept = default;
	Pending(const Pending &) = delete;
	Pending &operator=(const Pending &) = delete;
	~Pending() = default;
};

inline Result<bool> Registration::deregister_async(Pending &p) noexcept
{
	return deregister_async(p.cookie());
}

// Asynchronous RDMA on a socket it names by fd (owns nothing; the socket
// must outlive the transfers' completions being reaped). Submission blocks
// only for a slot of SMBDIRECT_OPT_RDMA_INFLIGHT (not with MSG_DONTWAIT or
// on a non-blocking socket: EAGAIN); reaping never blocks. Completions
// wait on the socket's error queue: poll() reports POLLERR meanwhile.
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
		int n = smbdirect_rdma_reap(fd_, out.data(),
					    static_cast<unsigned int>(out.size()));
		if (n < 0)
			return fail(n);
		return static_cast<size_t>(n);
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

	// reap_each() handing each completion to the Pending its cookie names.
	Result<size_t> dispatch() const noexcept
	{
		return reap_each([](const Completion &c) noexcept {
			Pending::from_cookie(c.cookie)->complete(c);
		});
	}

	// Waits up to timeout_ms (-1: forever) for a completion: true if one
	// waits; false after the timeout, or at once when the connection is
	// over (POLLHUP) and none waits.
	Result<bool> wait(int timeout_ms) const noexcept
	{
		if (fd_ < 0) // poll() would ignore it, and wait the whole time
			return fail(EBADF);
		struct pollfd p = { fd_, 0, 0 }; // POLLERR needs no asking
		int r = ::poll(&p, 1, timeout_ms);
		if (r < 0)
			return fail(detail::last_errno());
		if (r > 0 && (p.revents & POLLNVAL))
			return fail(EBADF);
		return r > 0 && (p.revents & POLLERR);
	}

	// SMBDIRECT_OPT_RDMA_INFLIGHT: transfers submitted and not yet reaped
	// that the socket holds (1 .. SMBDIRECT_RDMA_INFLIGHT_MAX, default 64).
	Result<void> set_limit(uint32_t transfers) const noexcept
	{
		return detail::check(smbdirect_set_option(fd_, SMBDIRECT_OPT_RDMA_INFLIGHT, transfers));
	}
	Result<uint32_t> limit() const noexcept
	{
		uint32_t v = 0;
		int r = smbdirect_get_option(fd_, SMBDIRECT_OPT_RDMA_INFLIGHT, &v);
		if (r < 0)
			return fail(r);
		return v;
	}

    private:
	int fd_ = -1;
};

// --- sockets --------------------------------------------------------------------------

// A connected (or not yet connected) SMB-Direct socket; owns its fd.
class Socket {
    public:
	Socket() noexcept = default;
	explicit Socket(int fd) noexcept : fd_(fd)
	{
	}
	Socket(const Socket &) = delete;
	Socket &operator=(const Socket &) = delete;
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
		int r = smbdirect_get_option(fd_, option, &v);
		if (r < 0)
			return fail(r);
		return v;
	}
	Result<void> set_options(const Options &o) const noexcept
	{
		const std::pair<int, const std::optional<uint32_t> *> all[] = {
			{ SMBDIRECT_OPT_RECEIVE_CREDIT_MAX, &o.receive_credit_max },
			{ SMBDIRECT_OPT_SEND_CREDIT_TARGET, &o.send_credit_target },
			{ SMBDIRECT_OPT_MAX_SEND_SIZE, &o.max_send_size },
			{ SMBDIRECT_OPT_MAX_RECEIVE_SIZE, &o.max_receive_size },
			{ SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE, &o.max_fragmented_size },
			{ SMBDIRECT_OPT_MAX_READ_WRITE_SIZE, &o.max_read_write_size },
			{ SMBDIRECT_OPT_KEEPALIVE_INTERVAL, &o.keepalive_interval },
		};
		for (const auto &[name, value] : all) {
			if (!value->has_value())
				continue;
			if (auto r = set_option(name, **value); !r)
				return r;
		}
		return {};
	}
	// The negotiated parameters (connected sockets).
	Result<smbdirect_params> params() const noexcept
	{
		smbdirect_params p = {};
		int r = smbdirect_connection_get_parameters(fd_, &p);
		if (r < 0)
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
	Result<Address> peer_address() const noexcept
	{
		Address a;
		a.length = sizeof(a.storage);
		if (::getpeername(fd_, a.get(), &a.length))
			return fail(detail::last_errno());
		return a;
	}

	// --- messages ---
	Result<size_t> send(std::span<const std::byte> data,
			    int flags = MSG_NOSIGNAL) const noexcept
	{
		ssize_t n = ::send(fd_, data.data(), data.size(), flags);
		return n >= 0 ? Result<size_t>(static_cast<size_t>(n)) : fail(detail::last_errno());
	}
	Result<size_t> send(std::span<const iovec> iov, int flags = MSG_NOSIGNAL) const noexcept
	{
		msghdr msg = {};
		msg.msg_iov = const_cast<iovec *>(iov.data());
		msg.msg_iovlen = iov.size();
		ssize_t n = ::sendmsg(fd_, &msg, flags);
		return n >= 0 ? Result<size_t>(static_cast<size_t>(n)) : fail(detail::last_errno());
	}
	Result<size_t> recv(std::span<std::byte> data, int flags = 0) const noexcept
	{
		ssize_t n = ::recv(fd_, data.data(), data.size(), flags);
		return n >= 0 ? Result<size_t>(static_cast<size_t>(n)) : fail(detail::last_errno());
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
	// Registers memory for the peer: access is SMBDIRECT_ACCESS_PEER_READ
	// and/or _PEER_WRITE, optionally | SMBDIRECT_REG_REMOTE_INVALIDATE.
	Result<Registration> register_memory(std::span<const iovec> iov,
					     uint32_t access) const noexcept
	{
		smbdirect_rdma_v1_registration reg;
		int r = smbdirect_rdma_v1_register(fd_, iov.data(), static_cast<int>(iov.size()),
						   access, &reg);
		if (r < 0)
			return fail(r);
		return Registration(fd_, reg);
	}
	Result<Registration> register_memory(std::span<std::byte> buffer,
					     uint32_t access) const noexcept
	{
		iovec v = detail::byte_iovec(buffer);
		return register_memory(std::span<const iovec>(&v, 1), access);
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

// A listening SMB-Direct socket; owns its fd.
class Listener {
    public:
	Listener() noexcept = default;
	explicit Listener(int fd) noexcept : socket_(fd)
	{
	}
	Listener(Listener &&) noexcept = default;
	Listener &operator=(Listener &&) noexcept = default;

	// The next connection; flags SOCK_CLOEXEC | SOCK_NONBLOCK for the new fd.
	Result<Socket> accept(int flags = SOCK_CLOEXEC) const noexcept
	{
		int fd = smbdirect_accept(socket_.fd(), nullptr, nullptr, flags);
		if (fd < 0)
			return fail(fd);
		return Socket(fd);
	}
	Result<Socket> accept(Address &peer, int flags = SOCK_CLOEXEC) const noexcept
	{
		peer.length = sizeof(peer.storage);
		int fd = smbdirect_accept(socket_.fd(), peer.get(), &peer.length, flags);
		if (fd < 0)
			return fail(fd);
		return Socket(fd);
	}
	Result<Address> local_address() const noexcept
	{
		return socket_.local_address();
	}
	// The port it listens on (after binding port 0: the one chosen).
	uint16_t port() const noexcept
	{
		auto a = local_address();
		return a ? a->port() : 0;
	}
	int fd() const noexcept
	{
		return socket_.fd();
	}
	bool valid() const noexcept
	{
		return socket_.valid();
	}
	explicit operator bool() const noexcept
	{
		return valid();
	}
	int release() noexcept
	{
		return socket_.release();
	}
	Result<void> close() noexcept
	{
		return socket_.close();
	}
	// The listener as a Socket, for options.
	const Socket &socket() const noexcept
	{
		return socket_;
	}

    private:
	Socket socket_;
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

// smbdirect_available(): an error, and in why a sentence for people.
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
	out.reserve(static_cast<size_t>(n));
	for (int i = 0; i < n; i++) {
		const smbdirect_interface &e = list[i];
		Interface it;
		it.ifindex = e.ifindex;
		it.name = e.name;
		it.rdma_device = e.rdma_device;
		it.rdma_port = e.rdma_port;
		it.transport = e.transport;
		it.rdma_capable = e.flags & SMBDIRECT_IF_RDMA_CAPABLE;
		it.up = e.flags & SMBDIRECT_IF_UP;
		it.speed_bps = e.speed_bps;
		it.reason = e.reason;
		it.addresses.assign(e.addrs, e.addrs + e.addr_count);
		out.push_back(std::move(it));
	}
	smbdirect_interfaces_free(list, n);
	return out;
}

} // inline namespace
} // namespace sd

#endif // SMBDIRECT_SMBDIRECT_HPP
