// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The SMB3 READ/WRITE offload: registering memory for the peer (Buffer
// Descriptors V1), deregistering it, and RDMA READ/WRITE against the
// peer's descriptors.
#include "internal.h"
#include "rdma_register.h"

#include <cstdlib>
#include <cstring>
#include <sys/ioctl.h>

using namespace sd::detail;

namespace
{

// The checks of readv/writev before the system call, in the kernel's order
// (EMSGSIZE before EFAULT).
int check_rdma_args(int fd, const struct iovec *iov, int iov_count,
		    const struct smbdirect_buffer_descriptor_v1 *desc, uint32_t desc_count) noexcept
{
	if (fd < 0)
		return -EBADF;
	if (iov_count <= 0 || desc_count == 0)
		return -EINVAL;
	if (iov_count > SMBDIRECT_IOV_MAX || desc_count > SMBDIRECT_DESC_MAX)
		return -EMSGSIZE;
	if (!iov || !desc)
		return -EFAULT;
	return 0;
}

ssize_t rdma_move(unsigned long request, int fd, const struct iovec *iov, int iov_count,
		  const struct smbdirect_buffer_descriptor_v1 *desc, uint32_t desc_count) noexcept
{
	int err = check_rdma_args(fd, iov, iov_count, desc, desc_count);
	if (err)
		return err;
	struct smbdirect_rdma r = {};
	r.size = sizeof(r);
	r.iov = reinterpret_cast<uintptr_t>(iov);
	r.iov_count = static_cast<uint32_t>(iov_count);
	r.desc = reinterpret_cast<uintptr_t>(desc);
	r.desc_count = desc_count;
	if (::ioctl(fd, request, &r))
		return neg_errno();
	return static_cast<ssize_t>(r.bytes);
}

} // namespace

extern "C" {

int smbdirect_rdma_v1_register(int fd, const struct iovec *iov, int iov_count, uint32_t flags,
			       struct smbdirect_rdma_v1_registration *reg)
{
	int err = check_register_args(fd, iov, iov_count, flags, reg);
	if (err) {
		if (reg)
			std::memset(reg, 0, sizeof(*reg));
		return err;
	}
	return register_growing(
		[fd](struct smbdirect_register &r) noexcept {
			return ::ioctl(fd, SMBDIRECT_IOC_REGISTER, &r) ? neg_errno() : 0;
		},
		iov, iov_count, flags, reg);
}

int smbdirect_rdma_v1_deregister(int fd, struct smbdirect_rdma_v1_registration *reg)
{
	int err = check_deregister_args(fd, reg);
	if (err)
		return err;
	struct smbdirect_deregister d = {};
	d.size = sizeof(d);
	d.id = reg->id;
	err = ::ioctl(fd, SMBDIRECT_IOC_DEREGISTER, &d) ? neg_errno() : 0;
	return deregistered(reg, err, d.state);
}

ssize_t smbdirect_rdma_v1_readv(int fd, const struct iovec *iov, int iov_count,
				const struct smbdirect_buffer_descriptor_v1 *desc,
				uint32_t desc_count)
{
	return rdma_move(SMBDIRECT_IOC_RDMA_READV, fd, iov, iov_count, desc, desc_count);
}

ssize_t smbdirect_rdma_v1_writev(int fd, const struct iovec *iov, int iov_count,
				 const struct smbdirect_buffer_descriptor_v1 *desc,
				 uint32_t desc_count)
{
	return rdma_move(SMBDIRECT_IOC_RDMA_WRITEV, fd, iov, iov_count, desc, desc_count);
}

} // extern "C"
