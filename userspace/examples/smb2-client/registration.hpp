// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One libsmbdirect registration (smbdirect_rdma_v1_register) owned for
 * the time of one SMB2 READ or WRITE: the descriptors go into the
 * request's ReadChannelInfo/WriteChannelInfo, and the client deregisters
 * once the response has arrived, whatever it said. deregister() reports
 * whether the server had already invalidated the token with
 * SEND_WITH_INVALIDATE (SMB2_CHANNEL_RDMA_V1_INVALIDATE); the destructor
 * deregisters what is still registered (an error path), so no pinned
 * memory outlives the request. It is libsmbdirect's sd::Registration
 * (<smbdirect/smbdirect.hpp>) with the SMB2 codec's view of descriptors.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_CLIENT_REGISTRATION_HPP
#define SMBDIRECT_EXAMPLES_SMB2_CLIENT_REGISTRATION_HPP

#include <cstdint>
#include <span>
#include <system_error>
#include <vector>

#include <smbdirect/smbdirect.hpp>

#include "../smb2/smb2.hpp"

namespace smb2 {

class Registration {
public:
	/* flags: SMBDIRECT_ACCESS_* | SMBDIRECT_REG_REMOTE_INVALIDATE. */
	std::error_code register_memory(int fd, std::span<const iovec> iov, uint32_t flags);
	/* SMBDIRECT_REG_STATE_* bits, or the error; registered() is false after. */
	Result<uint32_t> deregister();

	bool registered() const
	{
		return reg_.live();
	}
	/* The descriptors in host order, for the SMB2 codec. */
	std::vector<BufferDescriptor> descriptors() const;

private:
	sd::Registration reg_;
};

} // namespace smb2

#endif
