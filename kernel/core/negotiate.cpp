// SPDX-License-Identifier: GPL-2.0
#include "negotiate.h"

namespace sd
{

void config_default(Config &cfg, u32 role)
{
	__builtin_memset(&cfg, 0, sizeof(cfg));
	cfg.role = role;
	cfg.receive_credit_max = 255;
	cfg.send_credit_target = 255;
	cfg.max_send_size = 1364;
	cfg.max_receive_size = 1364;
	cfg.max_fragmented_size = 1024 * 1024;
	cfg.max_read_write_size = 8 * 1024 * 1024;
	cfg.keepalive_interval_ms = 120 * 1000;
	cfg.keepalive_timeout_ms = 5 * 1000;
	cfg.negotiate_timeout_ms = 5 * 1000;
}

Errc validate_config(const Config &cfg)
{
	if (cfg.role != SD_CORE_ROLE_CLIENT && cfg.role != SD_CORE_ROLE_SERVER)
		return Errc::config;
	/*
	 * With one credit each way the single credit can only circulate:
	 * whichever side holds none cannot ask, so the holder must hand it
	 * back at once, forever. Two is the smallest working setting.
	 */
	if (cfg.receive_credit_max < 2 || cfg.receive_credit_max > u16_max)
		return Errc::config;
	if (cfg.send_credit_target < 2 || cfg.send_credit_target > u16_max)
		return Errc::config;
	/* We must hold ourselves to the limits we check the peer against. */
	if (cfg.max_send_size < min_receive_size || cfg.max_receive_size < min_receive_size)
		return Errc::config;
	if (cfg.max_fragmented_size < min_fragmented_size)
		return Errc::config;
	if (cfg.keepalive_interval_ms != 0 && cfg.keepalive_timeout_ms == 0)
		return Errc::config;
	if (cfg.negotiate_timeout_ms == 0)
		return Errc::config;
	return Errc::ok;
}

NegotiateRequest make_request(const Config &cfg)
{
	NegotiateRequest r{};
	r.min_version = version_1;
	r.max_version = version_1;
	r.credits_requested = static_cast<u16>(cfg.send_credit_target);
	r.preferred_send_size = cfg.max_send_size;
	r.max_receive_size = cfg.max_receive_size;
	r.max_fragmented_size = cfg.max_fragmented_size;
	return r;
}

Params server_params(const Config &cfg, const NegotiateRequest &req)
{
	Params p{};
	p.version = version_1;
	p.max_send_size = min(cfg.max_send_size, req.max_receive_size);
	/* The client sends at most its preferred size, so we expect no more. */
	p.max_receive_size = min(cfg.max_receive_size, req.preferred_send_size);
	p.max_fragmented_send_size = min(req.max_fragmented_size, SD_CORE_MAX_FRAGMENTED_SEND_SIZE);
	p.max_fragmented_receive_size = cfg.max_fragmented_size;
	p.max_read_write_size = cfg.max_read_write_size;
	p.peer_credit_target = req.credits_requested;
	p.receive_credit_target =
		static_cast<u16>(min<u32>(cfg.receive_credit_max, req.credits_requested));
	return p;
}

NegotiateResponse make_response(const Config &cfg, const Params &params, u16 credits_granted)
{
	NegotiateResponse r{};
	r.min_version = version_1;
	r.max_version = version_1;
	r.negotiated_version = version_1;
	r.credits_requested = static_cast<u16>(cfg.send_credit_target);
	r.credits_granted = credits_granted;
	r.status = status_success;
	r.max_read_write_size = params.max_read_write_size;
	/* Never above the requester's MaxReceiveSize: it is already min()ed. */
	r.preferred_send_size = params.max_send_size;
	r.max_receive_size = cfg.max_receive_size;
	r.max_fragmented_size = cfg.max_fragmented_size;
	return r;
}

NegotiateResponse make_refusal(Errc why)
{
	NegotiateResponse r{};
	r.min_version = version_1;
	r.max_version = version_1;
	r.status = why == Errc::version ? status_not_supported : status_invalid_parameter;
	return r;
}

Result<Params> client_params(const Config &cfg, const NegotiateResponse &resp)
{
	if (resp.preferred_send_size > cfg.max_receive_size)
		return Errc::send_size_exceeds_receive;
	Params p{};
	p.version = resp.negotiated_version;
	p.max_send_size = min(cfg.max_send_size, resp.max_receive_size);
	p.max_receive_size = resp.preferred_send_size;
	p.max_fragmented_send_size =
		min(resp.max_fragmented_size, SD_CORE_MAX_FRAGMENTED_SEND_SIZE);
	p.max_fragmented_receive_size = cfg.max_fragmented_size;
	p.max_read_write_size = min(cfg.max_read_write_size, resp.max_read_write_size);
	p.peer_credit_target = resp.credits_requested;
	p.receive_credit_target =
		static_cast<u16>(min<u32>(cfg.receive_credit_max, resp.credits_requested));
	return p;
}

} // namespace sd
