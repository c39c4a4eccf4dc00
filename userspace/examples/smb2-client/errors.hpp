// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The client's error-path test of the RDMA channel (`rdma-errors`): READs
 * and WRITEs with SMB2_CHANNEL_RDMA_V1_INVALIDATE that the server must
 * refuse (closed handle, read-only handle, beyond the end of file, a tree
 * id it does not know, too long, buffers shorter than the READ's
 * MinimumCount), and compound chains of two such requests. For each:
 *
 *   - the response's status is the expected one;
 *   - every buffer the request named was invalidated by the server
 *     (SEND_WITH_INVALIDATE: DEREGISTER reports
 *     SMBDIRECT_REG_STATE_REMOTE_INVALIDATED), whatever the status: a
 *     client at SMB 3.0.2 or later relies on it ([MS-SMB2] 3.3.5.12,
 *     3.3.5.13);
 *   - the connection stays up: an RDMA READ of the test file follows and
 *     must succeed, remotely invalidated too.
 *
 * One line per case as the selftest prints them, and at the end
 * "# server_rdma_read_bytes N": what the server should have RDMA-read
 * from us in all (a refused WRITE pulls nothing), for the caller to
 * compare with the module's counters.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_CLIENT_ERRORS_HPP
#define SMBDIRECT_EXAMPLES_SMB2_CLIENT_ERRORS_HPP

#include <cstdio>

#include "client.hpp"
#include "selftest.hpp"

namespace smb2 {

/* Runs on a client that has not negotiated yet; returns the failed cases. */
int run_rdma_errors(Client &client, const SelftestOptions &options, std::FILE *out);

/*
 * `identity-writes`: the files sd-identity-0 .. files-1 of the share
 * (made by the caller) each get 1 MiB by RDMA WRITE, each WRITE
 * followed at once by an SMB2 CANCEL of an unused message id, which the
 * server handles as root while it RDMA-reads the data: the data must
 * still be written as the session's user (the caller checks, e.g. that
 * the kernel cleared the files' setuid bits, as it does when their
 * owner writes and not when root does).
 */
int run_identity_writes(Client &client, const SelftestOptions &options, std::FILE *out,
			int files);

/*
 * `no-stall N`: N READs over the RDMA channel of 1 MiB each (or the
 * largest the connection allows), sent back to back, then an SMB2 ECHO.
 * A server that has fewer RDMA transfer slots than N (smbd with
 * "smbd:smbdirect rdma inflight" below N) must not wait for a slot inside
 * its event loop: the ECHO must be answered before the last READ. Every
 * READ must still succeed with the file's data, its buffer invalidated by
 * the server. The file sd-no-stall.bin is written first (RDMA WRITE) and
 * removed at the end. With holes (`no-stall-holes N`) only its last 4 KiB
 * are written, so the READs are of a sparse file's holes (zeros), which a
 * server's zero-copy path cannot take from the page cache: the kernel
 * refuses them (ENODATA) and the server must read them its own way,
 * still without waiting in its event loop.
 */
int run_no_stall(Client &client, const SelftestOptions &options, std::FILE *out, int reads,
		 bool holes = false);

} // namespace smb2

#endif
