/* SPDX-License-Identifier: GPL-2.0 */
// Shared by the C++ API tests, which compile in three ways (C++20,
// C++23 with std::expected, -fno-exceptions): the same checks each time.
#ifndef SD_TEST_CPP_COMMON_H
#define SD_TEST_CPP_COMMON_H

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <vector>
#include <fcntl.h>
#include <smbdirect/smbdirect.hpp>
#include <unistd.h>

#include "fake_kernel.h"

namespace sdtest
{

inline bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

// A registration as the C API returns it, its array on the heap.
inline smbdirect_rdma_v1_registration fake_registration(uint64_t id, uint32_t count)
{
	smbdirect_rdma_v1_registration reg = {};
	reg.id = id;
	reg.desc_count = count;
	reg.flags = SMBDIRECT_ACCESS_PEER_WRITE;
	reg.desc = static_cast<smbdirect_buffer_descriptor_v1 *>(calloc(count, sizeof(*reg.desc)));
	for (uint32_t i = 0; i < count; i++) {
		reg.desc[i].token = htole32(0x100 + i);
		reg.desc[i].length = htole32(4096);
		reg.desc[i].offset = htole64(0x7000000000000000ull + i);
	}
	return reg;
}

// The checks every flavour runs; suffix names the flavour's test suite.
inline void result_basics()
{
	sd::Result<int> ok = 5;
	EXPECT_TRUE(ok.has_value());
	EXPECT_TRUE(static_cast<bool>(ok));
	EXPECT_EQ(*ok, 5);
	EXPECT_EQ(ok.value(), 5);
	EXPECT_EQ(ok.value_or(9), 5);

	sd::Result<int> bad = sd::fail(-EINVAL);
	EXPECT_FALSE(bad.has_value());
	EXPECT_FALSE(static_cast<bool>(bad));
	EXPECT_EQ(bad.error(), std::errc::invalid_argument);
	EXPECT_EQ(bad.error().value(), EINVAL);
	EXPECT_EQ(bad.value_or(9), 9);
	EXPECT_EQ(sd::fail(ENOENT).error(), std::errc::no_such_file_or_directory);

	sd::Result<void> done;
	EXPECT_TRUE(done.has_value());
	sd::Result<void> failed = sd::fail(-EPIPE);
	EXPECT_FALSE(failed);
	EXPECT_EQ(failed.error(), std::errc::broken_pipe);

	sd::Result<std::string> s = std::string("abc");
	EXPECT_EQ(s->size(), 3u);
}

inline void socket_owns_its_fd()
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	{
		sd::Socket a(p[0]);
		EXPECT_TRUE(a.valid());
		sd::Socket b(std::move(a));
		EXPECT_FALSE(a.valid());
		EXPECT_EQ(b.fd(), p[0]);
		EXPECT_TRUE(fd_open(p[0]));
		sd::Socket c(p[1]);
		c = std::move(b); // closes p[1]
		EXPECT_FALSE(fd_open(p[1]));
		EXPECT_TRUE(fd_open(p[0]));
	}
	EXPECT_FALSE(fd_open(p[0]));

	ASSERT_EQ(pipe(p), 0);
	sd::Socket r(p[0]);
	EXPECT_EQ(r.release(), p[0]);
	EXPECT_FALSE(r.valid());
	EXPECT_TRUE(fd_open(p[0]));
	sd::Socket again(p[0]);
	EXPECT_TRUE(again.close().has_value());
	EXPECT_FALSE(fd_open(p[0]));
	EXPECT_TRUE(again.close().has_value()); // nothing left to close
	sd::Socket stale(p[0]);			// p[0] is closed already
	auto closed = stale.close();
	EXPECT_EQ(closed.error(), std::errc::bad_file_descriptor);
	close(p[1]);
}

inline void socket_calls_report_errors()
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	sd::Socket s(p[0]);
	EXPECT_EQ(s.params().error(), std::errc::inappropriate_io_control_operation);
	EXPECT_TRUE(s.set_options({}).has_value()); // nothing to set: no call
	sd::Options o;
	o.max_send_size = 1364;
	EXPECT_EQ(s.set_options(o).error(), std::errc::not_a_socket);
	EXPECT_EQ(s.option(SMBDIRECT_OPT_MAX_SEND_SIZE).error(), std::errc::not_a_socket);
	char buf[8];
	auto data = std::as_writable_bytes(std::span(buf));
	EXPECT_EQ(s.register_memory(data, 0).error(), std::errc::invalid_argument);
	EXPECT_EQ(s.register_memory(data, SMBDIRECT_ACCESS_PEER_READ).error(),
		  std::errc::inappropriate_io_control_operation);
	sd::Descriptor d = {};
	EXPECT_EQ(s.rdma_read(data, std::span(&d, 1)).error(),
		  std::errc::inappropriate_io_control_operation);
	EXPECT_EQ(s.rdma_write(std::as_bytes(std::span(buf)), {}).error(),
		  std::errc::invalid_argument);
	EXPECT_EQ(s.send_with_invalidate(std::as_bytes(std::span(buf)), 1).error(),
		  std::errc::not_a_socket);
	EXPECT_EQ(sd::Socket::create(AF_INET, SOCK_DGRAM).error().value(), ESOCKTNOSUPPORT);
	EXPECT_EQ(sd::connect("no.such.name", "445").error(), std::errc::invalid_argument);
	EXPECT_EQ(sd::listen("10.0.0.1", "70000").error(), std::errc::invalid_argument);
	close(p[1]);
}

inline void registration_deregisters_once()
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	auto reg = sd::Registration::adopt(p[0], fake_registration(7, 3));
	EXPECT_TRUE(reg.live());
	EXPECT_EQ(reg.id(), 7u);
	ASSERT_EQ(reg.descriptors().size(), 3u);
	EXPECT_EQ(sd::token(reg.descriptors()[2]), 0x102u);
	EXPECT_EQ(sd::length(reg.descriptors()[0]), 4096u);
	EXPECT_EQ(sd::offset(reg.descriptors()[1]), 0x7000000000000001ull);

	sd::Registration moved(std::move(reg));
	EXPECT_FALSE(reg.live());
	EXPECT_TRUE(reg.descriptors().empty());
	EXPECT_EQ(reg.deregister().error(), std::errc::no_such_file_or_directory);
	EXPECT_TRUE(moved.live());
	// A pipe has no DEREGISTER ioctl: the kernel's answer comes back, and
	// the kernel did not take the registration: the object keeps it.
	EXPECT_EQ(moved.deregister().error(), std::errc::inappropriate_io_control_operation);
	EXPECT_TRUE(moved.live());
	EXPECT_EQ(moved.descriptors().size(), 3u);

	sd::Registration a = sd::Registration::adopt(p[0], fake_registration(8, 1));
	a = sd::Registration::adopt(p[0], fake_registration(9, 2)); // drops 8
	EXPECT_EQ(a.id(), 9u);
	auto raw = a.release();
	EXPECT_FALSE(a.live());
	EXPECT_EQ(raw.id, 9u);
	EXPECT_EQ(smbdirect_rdma_v1_deregister(p[0], &raw), -ENOTTY);
	EXPECT_EQ(raw.id, 9u); // refused: still the caller's
	free(raw.desc);
	close(p[0]);
	close(p[1]);
}

inline void registration_notices_a_reused_fd()
{
	int a[2], b[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, a), 0);
	auto reg = sd::Registration::adopt(a[0], fake_registration(1, 1));
	// While its socket is there, the ioctl is made (and a unix socket refuses it).
	auto other = sd::Registration::adopt(a[0], fake_registration(2, 1));
	EXPECT_EQ(other.deregister().error(), std::errc::inappropriate_io_control_operation);
	// The socket closes and its fd number goes to another socket.
	int fd = a[0];
	close(a[0]);
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, b), 0);
	if (b[0] != fd) {
		ASSERT_EQ(dup2(b[0], fd), fd);
		close(b[0]);
		b[0] = fd;
	}
	EXPECT_EQ(reg.deregister().error(), std::errc::bad_file_descriptor);
	EXPECT_FALSE(reg.live());
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

inline void address_parse_and_port()
{
	auto a = sd::Address::parse("10.77.0.1", "445");
	ASSERT_TRUE(a);
	EXPECT_EQ(a->family(), AF_INET);
	EXPECT_EQ(a->port(), 445);
	auto b = sd::Address::parse(std::string("fd77::2"), std::string("5445"));
	ASSERT_TRUE(b);
	EXPECT_EQ(b->family(), AF_INET6);
	EXPECT_EQ(b->port(), 5445);
	EXPECT_EQ(sd::Address::parse("x", "1").error(), std::errc::invalid_argument);
}

inline void interfaces_list_loopback()
{
	auto all = sd::interfaces(SMBDIRECT_IF_LIST_ALL);
	ASSERT_TRUE(all) << all.error().message();
	bool found = false;
	for (const sd::Interface &i : *all) {
		if (i.name != "lo")
			continue;
		found = true;
		EXPECT_FALSE(i.rdma_capable);
		EXPECT_NE(i.reason.find("loopback"), std::string::npos) << i.reason;
		EXPECT_FALSE(i.addresses.empty());
	}
	EXPECT_TRUE(found);
	EXPECT_EQ(sd::interfaces(0x80).error(), std::errc::invalid_argument);
}

inline void transfers_are_the_c_structs()
{
	iovec local[2] = { { reinterpret_cast<void *>(0x1000), 10 },
			   { reinterpret_cast<void *>(0x2000), 20 } };
	sd::Descriptor remote[3] = {};
	sd::Transfer w = sd::write_transfer(5, local, remote);
	smbdirect_rdma_args want;
	smbdirect_rdma_prep_write(&want, 5, local, 2, remote, 3);
	EXPECT_EQ(memcmp(&w, &want, sizeof(want)), 0);
	sd::Transfer r = sd::read_transfer(6, std::span<const iovec>(local, 1), remote);
	smbdirect_rdma_prep_read(&want, 6, local, 1, remote, 3);
	EXPECT_EQ(memcmp(&r, &want, sizeof(want)), 0);
	sd::Transfer f = sd::file_write_transfer(7, 9, 4096, 100, std::span(remote, 1));
	smbdirect_rdma_prep_write_file(&want, 7, 9, 4096, 100, remote, 1);
	EXPECT_EQ(memcmp(&f, &want, sizeof(want)), 0);

	sd::Completion ok = { 1, 0, 0, 4096 };
	EXPECT_EQ(sd::outcome(ok).value_or(0), 4096u);
	sd::Completion bad = { 1, -ECONNRESET, 0, 0 };
	EXPECT_EQ(sd::outcome(bad).error(), std::errc::connection_reset);
}

struct Noted : sd::Pending {
	int calls = 0;
	sd::Completion last = {};
	void complete(const sd::Completion &c) noexcept override
	{
		calls++;
		last = c;
	}
};

inline void rdma_queue_reports_errors()
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	sd::Socket s(p[1]);
	sd::RdmaQueue q = s.rdma_queue();
	EXPECT_EQ(q.fd(), p[1]);
	char buf[8];
	iovec local = { buf, sizeof(buf) };
	sd::Descriptor remote = {};
	sd::Transfer t = sd::write_transfer(1, std::span(&local, 1), std::span(&remote, 1));
	// Valid transfers reach the kernel, which knows a pipe is no socket.
	EXPECT_EQ(q.submit(t).error(), std::errc::not_a_socket);
	std::vector<sd::Transfer> many(SMBDIRECT_RDMA_CMSG_MAX + 1, t);
	EXPECT_EQ(q.submit(many).error(), std::errc::invalid_argument);
	EXPECT_EQ(q.submit(std::span<const sd::Transfer>()).error(), std::errc::invalid_argument);
	sd::Transfer wrong = t;
	wrong.desc_count = 0;
	EXPECT_EQ(q.submit(wrong).error(), std::errc::invalid_argument);
	EXPECT_EQ(q.submit_with_message(std::span(&t, 1), std::as_bytes(std::span(buf)), 7u)
			  .error(),
		  std::errc::not_a_socket);
	sd::Completion c[2];
	EXPECT_EQ(q.reap(c).error(), std::errc::not_a_socket);
	EXPECT_EQ(q.reap(std::span<sd::Completion>()).error(), std::errc::invalid_argument);
	int calls = 0;
	EXPECT_EQ(q.reap_each([&](const sd::Completion &) { calls++; }).error(),
		  std::errc::not_a_socket);
	EXPECT_EQ(calls, 0);
	EXPECT_EQ(q.limit().error(), std::errc::not_a_socket);
	EXPECT_EQ(q.set_limit(8).error(), std::errc::not_a_socket);
	EXPECT_EQ(sd::RdmaQueue().submit(t).error(), std::errc::bad_file_descriptor);
	EXPECT_EQ(sd::RdmaQueue().wait(0).error(), std::errc::bad_file_descriptor);
	close(p[0]);
}

inline void rdma_queue_on_a_plain_socket()
{
	int p[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p), 0);
	sd::Socket a(p[0]), b(p[1]);
	sd::RdmaQueue q(a.fd());
	// Nothing on the error queue: nothing reaped, no callback, no POLLERR.
	sd::Completion c[4];
	auto none = q.reap(c);
	ASSERT_TRUE(none) << none.error().message();
	EXPECT_EQ(*none, 0u);
	int calls = 0;
	auto each = q.reap_each([&](const sd::Completion &) { calls++; });
	ASSERT_TRUE(each);
	EXPECT_EQ(*each, 0u);
	EXPECT_EQ(calls, 0);
	auto d = q.dispatch();
	ASSERT_TRUE(d);
	EXPECT_EQ(*d, 0u);
	auto w = q.wait(0);
	ASSERT_TRUE(w);
	EXPECT_FALSE(*w);
	// AF_UNIX ignores SOL_SMBDIRECT control messages: the message arrives.
	char buf[8];
	iovec local = { buf, sizeof(buf) };
	sd::Descriptor remote = {};
	sd::Transfer t = sd::read_transfer(1, std::span(&local, 1), std::span(&remote, 1));
	auto sent = q.submit_with_message(std::span(&t, 1),
					  std::as_bytes(std::span("reply", 5)));
	ASSERT_TRUE(sent) << sent.error().message();
	EXPECT_EQ(*sent, 5u);
	char got[8] = {};
	EXPECT_EQ(recv(b.fd(), got, sizeof(got), MSG_DONTWAIT), 5);
	EXPECT_STREQ(got, "reply");

	// A Pending is found again by its cookie.
	Noted n;
	EXPECT_EQ(sd::Pending::from_cookie(n.cookie()), static_cast<sd::Pending *>(&n));
	sd::Pending::from_cookie(n.cookie())->complete({ n.cookie(), 0, 0, 12 });
	EXPECT_EQ(n.calls, 1);
	EXPECT_EQ(n.last.bytes, 12u);
}

inline void registration_create_and_deregister_async()
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	char buf[64];
	auto bytes = std::as_writable_bytes(std::span(buf));
	EXPECT_EQ(sd::Registration::create(p[0], bytes, 0).error(), std::errc::invalid_argument);
	EXPECT_EQ(sd::Registration::create(-1, bytes, SMBDIRECT_ACCESS_PEER_READ).error(),
		  std::errc::bad_file_descriptor);
	EXPECT_EQ(sd::Registration::create(p[0], bytes, SMBDIRECT_ACCESS_PEER_READ).error(),
		  std::errc::inappropriate_io_control_operation);

	auto reg = sd::Registration::adopt(p[0], fake_registration(5, 3));
	EXPECT_EQ(reg.length(), 3u * 4096);
	// The kernel refuses (a pipe): its answer comes back, and the object
	// keeps the registration the kernel did not take, as with deregister().
	EXPECT_EQ(reg.deregister_async(1).error(), std::errc::inappropriate_io_control_operation);
	EXPECT_TRUE(reg.live());
	EXPECT_EQ(reg.length(), 3u * 4096);
	auto other = sd::Registration::adopt(p[0], fake_registration(6, 1));
	Noted n;
	EXPECT_EQ(other.deregister_async(n).error(), std::errc::inappropriate_io_control_operation);
	EXPECT_TRUE(other.live());
	auto none = sd::Registration();
	EXPECT_EQ(none.deregister_async(1).error(), std::errc::no_such_file_or_directory);
	close(p[0]);
	close(p[1]);

	// Its socket is gone: nothing is asked of the kernel, it is forgotten.
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p), 0);
	auto gone = sd::Registration::adopt(p[0], fake_registration(6, 1));
	close(p[0]);
	EXPECT_EQ(gone.deregister_async(1).error(), std::errc::bad_file_descriptor);
	EXPECT_FALSE(gone.live());
	close(p[1]);
}

// A Pending's cookie is an entry of this process's table, not its
// address: from_cookie() finds live ones only.
inline void pending_cookies_are_table_entries()
{
	Noted a, b;
	EXPECT_NE(a.cookie(), 0u);
	EXPECT_NE(a.cookie(), b.cookie());
	auto *pa = static_cast<sd::Pending *>(&a);
	EXPECT_NE(a.cookie(), reinterpret_cast<uintptr_t>(pa));
	EXPECT_EQ(sd::Pending::from_cookie(a.cookie()), pa);
	EXPECT_EQ(sd::Pending::from_cookie(b.cookie()), static_cast<sd::Pending *>(&b));
	EXPECT_EQ(sd::Pending::from_cookie(reinterpret_cast<uintptr_t>(pa)), nullptr);
	EXPECT_EQ(sd::Pending::from_cookie(0), nullptr);
	uint64_t gone;
	{
		Noted c;
		gone = c.cookie();
		EXPECT_EQ(sd::Pending::from_cookie(gone), static_cast<sd::Pending *>(&c));
	}
	EXPECT_EQ(sd::Pending::from_cookie(gone), nullptr);
	// Many at once (every bucket of the table holds several), each found.
	std::vector<Noted> many(2000);
	for (Noted &n : many)
		ASSERT_EQ(sd::Pending::from_cookie(n.cookie()), static_cast<sd::Pending *>(&n));
	EXPECT_EQ(sd::Pending::from_cookie(a.cookie()), pa);
}

// Completions whose cookie names no Pending of this process (another
// process's, as after fork() or SCM_RIGHTS; a destroyed Pending's; a raw
// number) are never dereferenced: dispatch() drops them, dispatch(f)
// hands them to f.
inline void dispatch_never_follows_a_foreign_cookie()
{
	int p[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p), 0);
	FakeErrorQueue k(p[0]);
	sd::RdmaQueue q(p[0]);
	Noted mine;
	uint64_t gone;
	{
		Noted destroyed;
		gone = destroyed.cookie();
	}
	int not_a_pending = 5;
	const uint64_t foreign[] = { 0x7fffdeadb000ull, reinterpret_cast<uintptr_t>(&not_a_pending),
				     gone };
	k.waiting = { { foreign[0], 0, 0, 1 },
		      { mine.cookie(), 0, 0, 10 },
		      { foreign[1], 0, 0, 2 },
		      { foreign[2], -ECANCELED, 0, 0 } };
	auto n = q.dispatch();
	ASSERT_TRUE(n) << n.error().message();
	EXPECT_EQ(*n, 4u);
	EXPECT_EQ(mine.calls, 1);
	EXPECT_EQ(mine.last.bytes, 10u);

	for (uint64_t f : foreign)
		k.waiting.push_back({ f, 0, 0, 7 });
	k.waiting.push_back({ mine.cookie(), 0, 0, 11 });
	std::vector<uint64_t> others;
	n = q.dispatch([&](const sd::Completion &c) { others.push_back(c.cookie); });
	ASSERT_TRUE(n) << n.error().message();
	EXPECT_EQ(*n, 4u);
	EXPECT_EQ(others, std::vector<uint64_t>(std::begin(foreign), std::end(foreign)));
	EXPECT_EQ(mine.calls, 2);
	EXPECT_EQ(mine.last.bytes, 11u);
	close(p[0]);
	close(p[1]);
}

// The kernel fails DEREGISTER before taking the registration (ENOMEM):
// the object keeps it, a retry ends it; the destructor (and a move
// assignment over it) tries once and then lets the object go, the
// registration staying in the kernel until the socket is closed.
inline void registration_keeps_what_the_kernel_did_not_take()
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	{
		FakeDeregister k(p[0]);
		k.errors = { ENOMEM };
		auto reg = sd::Registration::adopt(p[0], fake_registration(11, 2));
		EXPECT_EQ(reg.deregister().error(), std::errc::not_enough_memory);
		EXPECT_TRUE(reg.live());
		EXPECT_EQ(reg.id(), 11u);
		ASSERT_EQ(reg.descriptors().size(), 2u);
		EXPECT_EQ(sd::token(reg.descriptors()[1]), 0x101u);
		auto again = reg.deregister();
		ASSERT_TRUE(again) << again.error().message();
		EXPECT_FALSE(reg.live());
		ASSERT_EQ(k.calls.size(), 2u);
		EXPECT_EQ(k.calls[1].id, 11u);

		k.errors = { ENOMEM, ENOMEM, ENOMEM };
		k.calls.clear();
		reg = sd::Registration::adopt(p[0], fake_registration(12, 1));
		EXPECT_EQ(reg.deregister_async(7).error(), std::errc::not_enough_memory);
		EXPECT_TRUE(reg.live());
		EXPECT_EQ(reg.id(), 12u);
		ASSERT_EQ(k.calls.size(), 1u);
		EXPECT_EQ(k.calls[0].cookie, 7u);
	} // ~Registration: one more attempt, refused; freed all the same (ASan)
	{
		FakeDeregister k(p[0]);
		k.errors = { ENOMEM, ENOMEM };
		{
			auto reg = sd::Registration::adopt(p[0], fake_registration(13, 1));
			reg = sd::Registration::adopt(p[0], fake_registration(14, 1)); // drops 13
			EXPECT_EQ(reg.id(), 14u);
		}
		ASSERT_EQ(k.calls.size(), 2u);
		EXPECT_EQ(k.calls[0].id, 13u);
		EXPECT_EQ(k.calls[1].id, 14u);
	}
	close(p[0]);
	close(p[1]);
}

} // namespace sdtest

// One TEST per check, in the suite named by the including file.
#define SD_CPP_TESTS(Suite)                                                                        \
	TEST(Suite, ResultBasics)                                                                  \
	{                                                                                          \
		sdtest::result_basics();                                                           \
	}                                                                                          \
	TEST(Suite, SocketOwnsItsFd)                                                               \
	{                                                                                          \
		sdtest::socket_owns_its_fd();                                                      \
	}                                                                                          \
	TEST(Suite, SocketCallsReportErrors)                                                       \
	{                                                                                          \
		sdtest::socket_calls_report_errors();                                              \
	}                                                                                          \
	TEST(Suite, RegistrationDeregistersOnce)                                                   \
	{                                                                                          \
		sdtest::registration_deregisters_once();                                           \
	}                                                                                          \
	TEST(Suite, RegistrationNoticesAReusedFd)                                                  \
	{                                                                                          \
		sdtest::registration_notices_a_reused_fd();                                        \
	}                                                                                          \
	TEST(Suite, AddressParseAndPort)                                                           \
	{                                                                                          \
		sdtest::address_parse_and_port();                                                  \
	}                                                                                          \
	TEST(Suite, InterfacesListLoopback)                                                        \
	{                                                                                          \
		sdtest::interfaces_list_loopback();                                                \
	}                                                                                          \
	TEST(Suite, TransfersAreTheCStructs)                                                       \
	{                                                                                          \
		sdtest::transfers_are_the_c_structs();                                             \
	}                                                                                          \
	TEST(Suite, RdmaQueueReportsErrors)                                                        \
	{                                                                                          \
		sdtest::rdma_queue_reports_errors();                                               \
	}                                                                                          \
	TEST(Suite, RdmaQueueOnAPlainSocket)                                                       \
	{                                                                                          \
		sdtest::rdma_queue_on_a_plain_socket();                                            \
	}                                                                                          \
	TEST(Suite, RegistrationCreateAndDeregisterAsync)                                          \
	{                                                                                          \
		sdtest::registration_create_and_deregister_async();                                \
	}                                                                                          \
	TEST(Suite, RegistrationKeepsWhatTheKernelDidNotTake)                                      \
	{                                                                                          \
		sdtest::registration_keeps_what_the_kernel_did_not_take();                         \
	}                                                                                          \
	TEST(Suite, PendingCookiesAreTableEntries)                                                 \
	{                                                                                          \
		sdtest::pending_cookies_are_table_entries();                                       \
	}                                                                                          \
	TEST(Suite, DispatchNeverFollowsAForeignCookie)                                            \
	{                                                                                          \
		sdtest::dispatch_never_follows_a_foreign_cookie();                                 \
	}

#endif // SD_TEST_CPP_COMMON_H
