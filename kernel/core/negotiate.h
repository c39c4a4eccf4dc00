/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Negotiation for both roles ([MS-SMBD] 3.1.5.2, 3.1.5.6/7): building the
 * request and response from local settings, checking the peer's, and the
 * effective connection parameters both sides then use.
 */
#ifndef SD_CORE_NEGOTIATE_H
#define SD_CORE_NEGOTIATE_H

#include "pdu.h"
#include "result.h"
#include "smbdirect_core.h"
#include "types.h"

namespace sd
{

using Config = sd_core_config;

struct Params {
	u16 version;
	u16 receive_credit_target;
	u16 peer_credit_target;
	u32 max_send_size;
	u32 max_receive_size;
	u32 max_fragmented_send_size;
	u32 max_fragmented_receive_size;
	u32 max_read_write_size;
};

void config_default(Config &cfg, u32 role);
[[nodiscard]] Errc validate_config(const Config &cfg);

NegotiateRequest make_request(const Config &cfg);

/* Server: parameters from a request that decoded cleanly. */
Params server_params(const Config &cfg, const NegotiateRequest &req);
NegotiateResponse make_response(const Config &cfg, const Params &params, u16 credits_granted);
/* The refusal a peer gets; the status tells it why. */
NegotiateResponse make_refusal(Errc why);

/* Client: checks what only the requester can check, then the parameters. */
[[nodiscard]] Result<Params> client_params(const Config &cfg, const NegotiateResponse &resp);

} // namespace sd

#endif
