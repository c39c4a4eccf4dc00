// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The client's self-test: on one session, WRITE and READ over the RDMA
 * channel for each size and buffer layout, with SMB2_CHANNEL_RDMA_V1_INVALIDATE
 * and SMB2_CHANNEL_RDMA_V1, checking every byte against the file in the
 * share's directory on this machine (where the server keeps it), the
 * memory around our buffers, and what DEREGISTER reports. One result line
 * per case, for tests/interop/ksmbd-offload.sh.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_CLIENT_SELFTEST_HPP
#define SMBDIRECT_EXAMPLES_SMB2_CLIENT_SELFTEST_HPP

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "client.hpp"

namespace smb2 {

struct SelftestOptions {
	std::string unc;	/* \\server\share */
	std::string local_dir;	/* the share's directory, as the server sees it */
	bool json = false;
	/* Only cases whose name contains one of these comma-separated parts. */
	std::string filter;
	/* Descriptors of the past_end READs (more than one: see the walkthrough). */
	int past_end_segments = 1;
};

/* Every case name, in the order they run. */
std::vector<std::string> selftest_case_names();
/* Whether a case runs under a filter (SelftestOptions::filter). */
bool selftest_case_wanted(std::string_view filter, std::string_view name);

/*
 * Runs the cases on a client that has not negotiated yet (the first case,
 * "session.setup", does that) and prints one line per case to out:
 *   ok NAME DETAILS...   or   not ok NAME # REASON
 * (a JSON array instead with json). Returns the number of failed cases.
 */
int run_selftest(Client &client, const SelftestOptions &options, std::FILE *out);

} // namespace smb2

#endif
