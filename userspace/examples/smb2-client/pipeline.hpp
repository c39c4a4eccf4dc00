// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * put and get over the RDMA channel with up to `depth` READ or WRITE
 * requests outstanding (`--depth N`; 1 is one request at a time).
 *
 * A pool of page buffers (depth + 2 of them), each registered for the
 * request that carries its descriptors and deregistered asynchronously
 * (SMBDIRECT_DEREG_ASYNC) once the response has arrived: a server that
 * invalidated the token with SEND_WITH_INVALIDATE (_INVALIDATE channel)
 * leaves nothing to do, and otherwise the LOCAL_INV runs while the next
 * requests go out. A buffer is used again only after its deregistration
 * completed (its completion on the socket's error queue): until then the
 * server could still touch it. Responses are matched to their buffers by
 * MessageId, in whatever order they come.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_CLIENT_PIPELINE_HPP
#define SMBDIRECT_EXAMPLES_SMB2_CLIENT_PIPELINE_HPP

#include <cstdint>

#include "client.hpp"

namespace smb2 {

struct PipelineConfig {
	uint32_t depth = 1;
	uint64_t io_size = 0; /* bytes per request, at most the channel's maximum */
	Channel channel = Channel::rdma_v1;
	int segments = 1; /* iovec segments (descriptors) per buffer */
	bool round_up = false; /* get: every READ asks for io_size bytes */
};

struct PipelineStats {
	uint64_t bytes = 0;
	uint64_t requests = 0;
	uint32_t descriptors = 0; /* the most in one request */
	uint64_t remote_invalidations = 0;
	uint32_t max_outstanding = 0;
	/* Times a buffer was wanted while all waited for their deregistration. */
	uint64_t deregistration_waits = 0;
};

/* WRITEs of in_fd's data from offset 0 until its end. */
Result<PipelineStats> put_pipelined(Client &client, const FileId &file, int in_fd,
				    const PipelineConfig &config);
/* READs of [0, end_of_file) into out_fd at the same offsets. */
Result<PipelineStats> get_pipelined(Client &client, const FileId &file, uint64_t end_of_file,
				    int out_fd, const PipelineConfig &config);

/* iovec segments over buf[0, n) that end inside pages (one descriptor each). */
std::vector<iovec> split_segments(uint8_t *buf, size_t n, int segments);

} // namespace smb2

#endif
