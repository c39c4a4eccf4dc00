// SPDX-License-Identifier: GPL-2.0
// Argument checks of the C API. Where a wrong argument could also reach
// the kernel, the fd is a pipe: had the library made the system call, the
// answer would be the kernel's for a pipe (ENOTTY, ENOTSOCK), not the
// library's own.
#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <fcntl.h>
#include <netinet/in.h>
#include <smbdirect/smbdirect.h>
#include <sys/socket.h>
#include <unistd.h>

namespace
{

class Pipe : public ::testing::Test {
    protected:
	void SetUp() override
	{
		ASSERT_EQ(pipe2(fds_, O_CLOEXEC), 0);
	}
	void TearDown() override
	{
		close(fds_[0]);
		close(fds_[1]);
	}
	int fd() const
	{
		return fds_[0];
	}
	int fds_[2] = { -1, -1 };
};

bool module_loaded()
{
	return smbdirect_family() > 0;
}

TEST(SocketArgs, DomainTypeFlagsAreCheckedFirst)
{
	EXPECT_EQ(smbdirect_socket(AF_PACKET, SOCK_STREAM, 0), -EAFNOSUPPORT);
	EXPECT_EQ(smbdirect_socket(AF_UNIX, SOCK_STREAM, 0), -EAFNOSUPPORT);
	EXPECT_EQ(smbdirect_socket(AF_INET, SOCK_DGRAM, 0), -ESOCKTNOSUPPORT);
	EXPECT_EQ(smbdirect_socket(AF_INET, SOCK_RAW, 0), -ESOCKTNOSUPPORT);
	EXPECT_EQ(smbdirect_socket(AF_INET, SOCK_STREAM, MSG_DONTWAIT), -EINVAL);
	EXPECT_EQ(smbdirect_socket(AF_INET, SOCK_STREAM, SOCK_STREAM), -EINVAL);
	// Unknown bits in type that are not socket flags.
	EXPECT_EQ(smbdirect_socket(AF_INET6, SOCK_STREAM | 0x10000, 0), -ESOCKTNOSUPPORT);
	// Upstream's entry point: a flag, not a type bit; stream sockets only.
	EXPECT_EQ(smbdirect_socket(AF_INET, SOCK_STREAM | SMBDIRECT_SOCKET_IPPROTO, 0),
		  -ESOCKTNOSUPPORT);
	EXPECT_EQ(smbdirect_socket(AF_INET, SOCK_SEQPACKET, SMBDIRECT_SOCKET_IPPROTO),
		  -ESOCKTNOSUPPORT);
	EXPECT_EQ(smbdirect_socket(AF_UNIX, SOCK_STREAM, SMBDIRECT_SOCKET_IPPROTO), -EAFNOSUPPORT);
	EXPECT_EQ(smbdirect_socket(AF_INET, SOCK_STREAM, SMBDIRECT_SOCKET_IPPROTO | 0x1000),
		  -EINVAL);
}

TEST(SocketArgs, WithoutTheModuleValidCallsSayNotLoaded)
{
	if (module_loaded())
		GTEST_SKIP() << "af_smbdirect is loaded on this host";
	EXPECT_EQ(smbdirect_family(), -ENOENT);
	EXPECT_EQ(smbdirect_socket(AF_INET, SOCK_STREAM, 0), -ENOENT);
	EXPECT_EQ(smbdirect_socket(AF_UNSPEC, SOCK_SEQPACKET | SOCK_CLOEXEC, SOCK_NONBLOCK),
		  -ENOENT);
	EXPECT_EQ(smbdirect_socket(AF_INET6, SOCK_STREAM, SMBDIRECT_SOCKET_IPPROTO), -ENOENT);
	// The same wrong arguments keep their own errors: checked before the family.
	EXPECT_EQ(smbdirect_socket(AF_INET, SOCK_DGRAM, 0), -ESOCKTNOSUPPORT);
	char why[128] = "unchanged";
	EXPECT_EQ(smbdirect_available(why, sizeof(why)), -ENOENT);
	EXPECT_STREQ(why, "af_smbdirect is not loaded: modprobe af_smbdirect");
}

TEST(SocketArgs, AvailableTruncatesItsSentence)
{
	if (module_loaded())
		GTEST_SKIP() << "af_smbdirect is loaded on this host";
	char why[8];
	memset(why, 'x', sizeof(why));
	EXPECT_EQ(smbdirect_available(why, sizeof(why)), -ENOENT);
	EXPECT_STREQ(why, "af_smbd");
	EXPECT_EQ(smbdirect_available(nullptr, 0), -ENOENT);
}

TEST(SocketArgs, ConnectAndListenCheckTheAddress)
{
	struct sockaddr_in sin = {};
	sin.sin_family = AF_INET;
	struct sockaddr_un_like {
		sa_family_t family;
		char path[20];
	} un = { AF_UNIX, "x" };
	EXPECT_EQ(smbdirect_connect(nullptr, 0, SOCK_STREAM, 0), -EINVAL);
	EXPECT_EQ(smbdirect_connect((struct sockaddr *)&sin, sizeof(sin) - 1, SOCK_STREAM, 0),
		  -EINVAL);
	EXPECT_EQ(smbdirect_connect((struct sockaddr *)&un, sizeof(un), SOCK_STREAM, 0),
		  -EAFNOSUPPORT);
	EXPECT_EQ(smbdirect_connect((struct sockaddr *)&sin, sizeof(sin), SOCK_DGRAM, 0),
		  -ESOCKTNOSUPPORT);
	EXPECT_EQ(smbdirect_listen(nullptr, 0, SOCK_STREAM, 0, 1), -EINVAL);
	EXPECT_EQ(smbdirect_listen((struct sockaddr *)&un, sizeof(un), SOCK_STREAM, 0, 1),
		  -EAFNOSUPPORT);
	EXPECT_EQ(smbdirect_listen((struct sockaddr *)&sin, sizeof(sin), SOCK_STREAM, 0x4000, 1),
		  -EINVAL);
}

TEST_F(Pipe, AcceptChecksFlagsAndLengths)
{
	struct sockaddr_storage ss;
	EXPECT_EQ(smbdirect_accept(-1, nullptr, nullptr, 0), -EBADF);
	EXPECT_EQ(smbdirect_accept(fd(), nullptr, nullptr, MSG_PEEK), -EINVAL);
	EXPECT_EQ(smbdirect_accept(fd(), (struct sockaddr *)&ss, nullptr, 0), -EINVAL);
	// Valid arguments reach the kernel, which knows a pipe is no socket.
	EXPECT_EQ(smbdirect_accept(fd(), nullptr, nullptr, SOCK_CLOEXEC), -ENOTSOCK);
}

TEST_F(Pipe, OptionsAndParameters)
{
	uint32_t v = 7;
	EXPECT_EQ(smbdirect_set_option(-1, SMBDIRECT_OPT_MAX_SEND_SIZE, 1364), -EBADF);
	EXPECT_EQ(smbdirect_set_option(fd(), SMBDIRECT_OPT_MAX_SEND_SIZE, 0x80000000u), -EINVAL);
	EXPECT_EQ(smbdirect_get_option(fd(), SMBDIRECT_OPT_MAX_SEND_SIZE, nullptr), -EINVAL);
	EXPECT_EQ(smbdirect_get_option(-3, SMBDIRECT_OPT_MAX_SEND_SIZE, &v), -EBADF);
	EXPECT_EQ(v, 7u);
	EXPECT_EQ(smbdirect_connection_get_parameters(fd(), nullptr), -EINVAL);
	EXPECT_EQ(smbdirect_connection_get_parameters(-1, nullptr), -EBADF);
	// Through to the kernel: a pipe has no socket options and no such ioctl.
	EXPECT_EQ(smbdirect_set_max_send_size(fd(), 1364), -ENOTSOCK);
	EXPECT_EQ(smbdirect_get_keepalive_interval(fd(), &v), -ENOTSOCK);
	struct smbdirect_params p;
	EXPECT_EQ(smbdirect_connection_get_parameters(fd(), &p), -ENOTTY);
}

TEST_F(Pipe, TypedOptionsNameTheirOption)
{
	// Every typed setter reaches the same generic path (-ENOTSOCK from the
	// kernel) and rejects the same out-of-range value first.
	int (*setters[])(int, uint32_t) = {
		smbdirect_set_receive_credit_max,  smbdirect_set_send_credit_target,
		smbdirect_set_max_send_size,	   smbdirect_set_max_receive_size,
		smbdirect_set_max_fragmented_size, smbdirect_set_max_read_write_size,
		smbdirect_set_keepalive_interval,
	};
	int (*getters[])(int, uint32_t *) = {
		smbdirect_get_receive_credit_max,  smbdirect_get_send_credit_target,
		smbdirect_get_max_send_size,	   smbdirect_get_max_receive_size,
		smbdirect_get_max_fragmented_size, smbdirect_get_max_read_write_size,
		smbdirect_get_keepalive_interval,
	};
	for (auto set : setters) {
		EXPECT_EQ(set(fd(), UINT32_MAX), -EINVAL);
		EXPECT_EQ(set(fd(), 1), -ENOTSOCK);
	}
	for (auto get : getters) {
		EXPECT_EQ(get(fd(), nullptr), -EINVAL);
		uint32_t v;
		EXPECT_EQ(get(fd(), &v), -ENOTSOCK);
	}
}

TEST_F(Pipe, RegisterChecksBeforeTheIoctl)
{
	char buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct smbdirect_rdma_v1_registration reg;
	memset(&reg, 0x5a, sizeof(reg));
	EXPECT_EQ(smbdirect_rdma_v1_register(fd(), &iov, 1, SMBDIRECT_ACCESS_PEER_READ, nullptr),
		  -EINVAL);
	EXPECT_EQ(smbdirect_rdma_v1_register(-1, &iov, 1, SMBDIRECT_ACCESS_PEER_READ, &reg),
		  -EBADF);
	EXPECT_EQ(reg.id, 0u);
	EXPECT_EQ(reg.desc, nullptr);
	memset(&reg, 0x5a, sizeof(reg));
	EXPECT_EQ(smbdirect_rdma_v1_register(fd(), &iov, 1, 0, &reg), -EINVAL);
	EXPECT_EQ(reg.desc_count, 0u);
	EXPECT_EQ(smbdirect_rdma_v1_register(fd(), &iov, 1, SMBDIRECT_REG_REMOTE_INVALIDATE, &reg),
		  -EINVAL);
	EXPECT_EQ(smbdirect_rdma_v1_register(fd(), &iov, 1, SMBDIRECT_ACCESS_PEER_READ | 0x8, &reg),
		  -EINVAL);
	EXPECT_EQ(smbdirect_rdma_v1_register(fd(), &iov, 0, SMBDIRECT_ACCESS_PEER_READ, &reg),
		  -EINVAL);
	EXPECT_EQ(smbdirect_rdma_v1_register(fd(), &iov, -1, SMBDIRECT_ACCESS_PEER_READ, &reg),
		  -EINVAL);
	EXPECT_EQ(smbdirect_rdma_v1_register(fd(), &iov, SMBDIRECT_IOV_MAX + 1,
					     SMBDIRECT_ACCESS_PEER_READ, &reg),
		  -EMSGSIZE);
	EXPECT_EQ(smbdirect_rdma_v1_register(fd(), nullptr, 1, SMBDIRECT_ACCESS_PEER_READ, &reg),
		  -EFAULT);
	// Valid: the kernel answers (a pipe has no such ioctl); *reg zeroed.
	memset(&reg, 0x5a, sizeof(reg));
	EXPECT_EQ(smbdirect_rdma_v1_register(fd(), &iov, 1,
					     SMBDIRECT_ACCESS_PEER_READ |
						     SMBDIRECT_ACCESS_PEER_WRITE |
						     SMBDIRECT_REG_REMOTE_INVALIDATE,
					     &reg),
		  -ENOTTY);
	EXPECT_EQ(reg.id, 0u);
	EXPECT_EQ(reg.desc, nullptr);
}

TEST_F(Pipe, DeregisterKeepsWhatTheKernelDidNotTake)
{
	EXPECT_EQ(smbdirect_rdma_v1_deregister(fd(), nullptr), -EINVAL);
	struct smbdirect_rdma_v1_registration reg = {};
	// A zeroed registration is none: no ioctl (a pipe would say ENOTTY).
	EXPECT_EQ(smbdirect_rdma_v1_deregister(fd(), &reg), -ENOENT);
	// A live-looking one goes to the kernel, which refuses (a pipe): the
	// registration is still the caller's (test_deregister.cpp has the rest).
	reg.id = 3;
	reg.desc_count = 2;
	reg.desc = static_cast<smbdirect_buffer_descriptor_v1 *>(calloc(2, sizeof(*reg.desc)));
	auto *desc = reg.desc;
	EXPECT_EQ(smbdirect_rdma_v1_deregister(fd(), &reg), -ENOTTY);
	EXPECT_EQ(reg.id, 3u);
	EXPECT_EQ(reg.desc, desc);
	EXPECT_EQ(reg.desc_count, 2u);
	EXPECT_EQ(smbdirect_rdma_v1_deregister(-1, &reg), -EBADF);
	EXPECT_EQ(reg.id, 3u);
	EXPECT_EQ(reg.desc, desc);
	free(reg.desc);
}

TEST_F(Pipe, ReadvWritevCheckInTheKernelsOrder)
{
	char buf[16];
	struct iovec iov = { buf, sizeof(buf) };
	struct smbdirect_buffer_descriptor_v1 d = {};
	for (auto move : { smbdirect_rdma_v1_readv, smbdirect_rdma_v1_writev }) {
		EXPECT_EQ(move(-1, &iov, 1, &d, 1), -EBADF);
		EXPECT_EQ(move(fd(), &iov, 0, &d, 1), -EINVAL);
		EXPECT_EQ(move(fd(), &iov, -5, &d, 1), -EINVAL);
		EXPECT_EQ(move(fd(), &iov, 1, &d, 0), -EINVAL);
		EXPECT_EQ(move(fd(), &iov, SMBDIRECT_IOV_MAX + 1, &d, 1), -EMSGSIZE);
		EXPECT_EQ(move(fd(), &iov, 1, &d, SMBDIRECT_DESC_MAX + 1), -EMSGSIZE);
		// EMSGSIZE comes before EFAULT, as in the kernel.
		EXPECT_EQ(move(fd(), nullptr, SMBDIRECT_IOV_MAX + 1, &d, 1), -EMSGSIZE);
		EXPECT_EQ(move(fd(), nullptr, 1, &d, 1), -EFAULT);
		EXPECT_EQ(move(fd(), &iov, 1, nullptr, 1), -EFAULT);
		EXPECT_EQ(move(fd(), &iov, 1, &d, 1), -ENOTTY);
	}
}

TEST_F(Pipe, SendWithInvalidateChecksThenSends)
{
	char buf[4] = "abc";
	struct iovec iov = { buf, sizeof(buf) };
	EXPECT_EQ(smbdirect_send_with_invalidate(-1, &iov, 1, 1, 0), -EBADF);
	EXPECT_EQ(smbdirect_send_with_invalidate(fd(), &iov, -1, 1, 0), -EINVAL);
	EXPECT_EQ(smbdirect_send_with_invalidate(fd(), nullptr, 1, 1, 0), -EFAULT);
	EXPECT_EQ(smbdirect_send_with_invalidate(fds_[1], &iov, 1, 1, 0), -ENOTSOCK);
}

TEST(Interfaces, ArgumentsAreChecked)
{
	struct smbdirect_interface *list = reinterpret_cast<struct smbdirect_interface *>(0x1);
	EXPECT_EQ(smbdirect_interfaces(nullptr, 0), -EINVAL);
	EXPECT_EQ(smbdirect_interfaces(&list, 0x2), -EINVAL);
	EXPECT_EQ(list, nullptr);
	smbdirect_interfaces_free(nullptr, 5);
	// The entry size: at least 0.2's, a multiple of its alignment, at most 4096.
	list = reinterpret_cast<struct smbdirect_interface *>(0x1);
	EXPECT_EQ(smbdirect_interfaces_sized(&list, 0, sizeof(*list) - 8), -EINVAL);
	EXPECT_EQ(list, nullptr);
	EXPECT_EQ(smbdirect_interfaces_sized(&list, 0, sizeof(*list) + 1), -EINVAL);
	EXPECT_EQ(smbdirect_interfaces_sized(&list, 0, 4096 + 8), -EINVAL);
	EXPECT_EQ(smbdirect_interfaces_sized(&list, 0, 0), -EINVAL);
}

TEST(Names, TransportsAndVersion)
{
	EXPECT_STREQ(smbdirect_transport_name(SMBDIRECT_TRANSPORT_IB), "InfiniBand");
	EXPECT_STREQ(smbdirect_transport_name(SMBDIRECT_TRANSPORT_ROCE), "RoCE");
	EXPECT_STREQ(smbdirect_transport_name(SMBDIRECT_TRANSPORT_IWARP), "iWARP");
	EXPECT_STREQ(smbdirect_transport_name(0), "unknown");
	EXPECT_STREQ(smbdirect_transport_name(99), "unknown");
	EXPECT_STREQ(smbdirect_version(), SMBDIRECT_VERSION_STRING);
}

TEST(Errno, LibraryLeavesErrnoAlone)
{
	errno = 1234;
	char why[64];
	(void)smbdirect_available(why, sizeof(why));
	struct smbdirect_interface *list = nullptr;
	int n = smbdirect_interfaces(&list, SMBDIRECT_IF_LIST_ALL);
	smbdirect_interfaces_free(list, n);
	EXPECT_EQ(errno, 1234);
}

} // namespace
