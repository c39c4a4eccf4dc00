// SPDX-License-Identifier: LGPL-2.1-or-later
//
// SOL_SMBDIRECT options (the local negotiation parameters) and the
// connection's negotiated parameters.
#include "internal.h"

#include <climits>
#include <sys/ioctl.h>
#include <sys/socket.h>

using namespace sd::detail;

extern "C" {

int smbdirect_set_option(int fd, int option, uint32_t value)
{
	if (fd < 0)
		return -EBADF;
	// The kernel takes an int; no option's range reaches this far.
	if (value > INT_MAX)
		return -EINVAL;
	int v = static_cast<int>(value);
	if (::setsockopt(fd, SMBDIRECT_SOL, option, &v, sizeof(v)))
		return neg_errno();
	return 0;
}

int smbdirect_get_option(int fd, int option, uint32_t *value)
{
	if (fd < 0)
		return -EBADF;
	if (!value)
		return -EINVAL;
	int v = 0;
	socklen_t len = sizeof(v);
	if (::getsockopt(fd, SMBDIRECT_SOL, option, &v, &len))
		return neg_errno();
	if (len != sizeof(v) || v < 0)
		return -EPROTO;
	*value = static_cast<uint32_t>(v);
	return 0;
}

#define SD_TYPED_OPTION(name, option)                                                              \
	int smbdirect_set_##name(int fd, uint32_t value)                                           \
	{                                                                                          \
		return smbdirect_set_option(fd, option, value);                                    \
	}                                                                                          \
	int smbdirect_get_##name(int fd, uint32_t *value)                                          \
	{                                                                                          \
		return smbdirect_get_option(fd, option, value);                                    \
	}

SD_TYPED_OPTION(receive_credit_max, SMBDIRECT_OPT_RECEIVE_CREDIT_MAX)
SD_TYPED_OPTION(send_credit_target, SMBDIRECT_OPT_SEND_CREDIT_TARGET)
SD_TYPED_OPTION(max_send_size, SMBDIRECT_OPT_MAX_SEND_SIZE)
SD_TYPED_OPTION(max_receive_size, SMBDIRECT_OPT_MAX_RECEIVE_SIZE)
SD_TYPED_OPTION(max_fragmented_size, SMBDIRECT_OPT_MAX_FRAGMENTED_SIZE)
SD_TYPED_OPTION(max_read_write_size, SMBDIRECT_OPT_MAX_READ_WRITE_SIZE)
SD_TYPED_OPTION(keepalive_interval, SMBDIRECT_OPT_KEEPALIVE_INTERVAL)

#undef SD_TYPED_OPTION

int smbdirect_connection_get_parameters(int fd, struct smbdirect_params *params)
{
	if (fd < 0)
		return -EBADF;
	if (!params)
		return -EINVAL;
	struct smbdirect_params p = {};
	p.size = sizeof(p);
	if (::ioctl(fd, SMBDIRECT_IOC_GET_PARAMS, &p))
		return neg_errno();
	*params = p;
	params->size = sizeof(p);
	return 0;
}

const char *smbdirect_transport_name(uint32_t transport)
{
	switch (transport) {
	case SMBDIRECT_TRANSPORT_IB:
		return "InfiniBand";
	case SMBDIRECT_TRANSPORT_ROCE:
		return "RoCE";
	case SMBDIRECT_TRANSPORT_IWARP:
		return "iWARP";
	default:
		return "unknown";
	}
}

} // extern "C"
