// SPDX-License-Identifier: GPL-2.0
// The C++ API as C++20 (its own sd::Result), plus what only this flavour
// checks: the types' shape, and that after fork() only the registering
// process's destructor deregisters.
#include "cpp_common.h"

#include <csignal>
#include <cstddef>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <type_traits>

static_assert(!std::is_copy_constructible_v<sd::Socket>);
static_assert(std::is_nothrow_move_constructible_v<sd::Socket>);
static_assert(std::is_nothrow_move_assignable_v<sd::Socket>);
static_assert(!std::is_copy_constructible_v<sd::Listener>);
static_assert(std::is_nothrow_move_constructible_v<sd::Listener>);
static_assert(!std::is_copy_constructible_v<sd::Registration>);
static_assert(std::is_nothrow_move_constructible_v<sd::Registration>);
static_assert(std::is_nothrow_move_assignable_v<sd::Registration>);
static_assert(std::is_nothrow_destructible_v<sd::Registration>);

namespace
{

SD_CPP_TESTS(Cpp)

// The process's own system call ABI, for the filter below.
#if defined(__x86_64__)
constexpr unsigned int own_audit_arch = AUDIT_ARCH_X86_64;
#elif defined(__i386__)
constexpr unsigned int own_audit_arch = AUDIT_ARCH_I386;
#elif defined(__aarch64__)
constexpr unsigned int own_audit_arch = AUDIT_ARCH_AARCH64;
#else
#error "add this architecture's AUDIT_ARCH_*"
#endif

// In a child: any ioctl() kills the process with SIGSYS.
void forbid_ioctl()
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, own_audit_arch, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(3);
}

// Runs f in a child that may not ioctl; its wait status.
template <class F> int in_child_without_ioctl(F f)
{
	pid_t pid = fork();
	if (pid == 0) {
		forbid_ioctl();
		f();
		_exit(0);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	return status;
}

TEST(Cpp, AfterForkOnlyTheRegistrantsDestructorDeregisters)
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	auto *reg = new sd::Registration(
		sd::Registration::adopt(p[0], sdtest::fake_registration(1, 1)));
	// The control: an explicit deregister() is an ioctl, and the filter kills it.
	int status = in_child_without_ioctl([&] { (void)reg->deregister(); });
	ASSERT_TRUE(WIFSIGNALED(status)) << status;
	EXPECT_EQ(WTERMSIG(status), SIGSYS);
	// The child's copy of the object goes without an ioctl.
	status = in_child_without_ioctl([&] { delete reg; });
	ASSERT_TRUE(WIFEXITED(status)) << status;
	EXPECT_EQ(WEXITSTATUS(status), 0);
	// In the registering process, the destructor does deregister (ENOTTY
	// from the pipe, swallowed; the descriptors are freed, or ASan says so).
	delete reg;
	close(p[0]);
	close(p[1]);
}

// After fork(), the child's copy of a Pending is not the parent's: a
// completion the child reaps with the parent's cookie does not complete
// it (the parent's transfer is not the child's), and the child's own
// Pending objects get cookies of their own.
TEST(Cpp, AForkedChildNeverCompletesItsParentsPending)
{
	int p[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p), 0);
	sdtest::FakeErrorQueue k(p[0]);
	sdtest::Noted parents;
	k.waiting = { { parents.cookie(), 0, 0, 64 } };
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		if (sd::Pending::from_cookie(parents.cookie()))
			bad |= 1;
		size_t others = 0;
		auto n = sd::RdmaQueue(p[0]).dispatch([&](const sd::Completion &) { others++; });
		if (!n || *n != 1 || others != 1)
			bad |= 2;
		if (parents.calls != 0)
			bad |= 4;
		sdtest::Noted childs;
		if (childs.cookie() == parents.cookie() ||
		    sd::Pending::from_cookie(childs.cookie()) != &childs)
			bad |= 8;
		_exit(bad);
	}
	int status = -1;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status)) << status;
	EXPECT_EQ(WEXITSTATUS(status), 0); // the bits above say which failed
	// The parent's table is untouched.
	EXPECT_EQ(sd::Pending::from_cookie(parents.cookie()), static_cast<sd::Pending *>(&parents));
	close(p[0]);
	close(p[1]);
}

} // namespace
