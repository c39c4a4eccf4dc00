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
