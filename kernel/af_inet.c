// SPDX-License-Identifier: GPL-2.0
/*
 * The upstream-shaped entry point: socket(AF_INET or AF_INET6, SOCK_STREAM,
 * IPPROTO_SMBDIRECT) leads to the same socket as AF_SMBDIRECT SOCK_STREAM,
 * through inet and inet6 protosw entries, as IPPROTO_SMC and IPPROTO_MPTCP
 * sockets are made. Not taken when the running kernel already serves the
 * protocol number (a kernel with upstream's own).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <net/protocol.h>
#include <net/ipv6.h>

#include "uapi/linux/smbdirect.h"
#include "sd_sock.h"

static int inet_protocol = SMBDIRECT_IPPROTO;
module_param(inet_protocol, int, 0444);
MODULE_PARM_DESC(inet_protocol,
		 "protocol number of socket(AF_INET[6], SOCK_STREAM, IPPROTO_SMBDIRECT) (default 257, upstream's proposal; 0: no inet entry point; read back: 0 when not registered)");

static int sol_level = SMBDIRECT_SOL_IPPROTO;
module_param(sol_level, int, 0444);
MODULE_PARM_DESC(sol_level,
		 "second socket option and control message level beside SOL_SMBDIRECT (default 289, upstream's proposal; 0: none)");

static struct inet_protosw sd_inetsw = {
	.type = SOCK_STREAM,
	.prot = &sd_proto,
	.ops = &sd_inet_ops,
};

#if IS_ENABLED(CONFIG_IPV6)
static struct inet_protosw sd_inet6sw = {
	.type = SOCK_STREAM,
	.prot = &sd_proto,
	.ops = &sd_inet6_ops,
};
#endif

static bool sd_inet_registered, sd_inet6_registered;

int sd_sol_level_ipproto(void)
{
	return sol_level;
}

/*
 * Does the running kernel serve socket(family, SOCK_STREAM, protocol)
 * already? inet_create() and inet6_create() answer EPROTONOSUPPORT or
 * ESOCKTNOSUPPORT only when no entry has the protocol (and socket()
 * EAFNOSUPPORT without the family); any other error
 * comes from an entry that has it, as the socket would: an owner that
 * refuses a kernel socket (it may need a device, a netns or a user) owns
 * the number all the same. A protosw added now would go before it and
 * take its sockets.
 */
static bool sd_inet_taken(int family, int protocol)
{
	struct socket *sock;
	int err;

	err = sock_create_kern(&init_net, family, SOCK_STREAM, protocol, &sock);
	if (!err) {
		sock_release(sock);
		return true;
	}
	if (err == -EPROTONOSUPPORT || err == -ESOCKTNOSUPPORT || err == -EAFNOSUPPORT)
		return false;
	pr_debug("socket(%s, SOCK_STREAM, %d): a kernel socket of it failed with %d\n",
		 family == AF_INET ? "AF_INET" : "AF_INET6", protocol, err);
	return true;
}

int sd_inet_init(void)
{
	int protocol = inet_protocol;

	if (sol_level == SMBDIRECT_SOL || sol_level == SOL_SOCKET) {
		pr_err("sol_level=%d is taken\n", sol_level);
		return -EINVAL;
	}
	if (!protocol)
		return 0;
	/* Within what inet_create() accepts; one it serves is left alone. */
	if (protocol < 0 || protocol >= IPPROTO_MAX) {
		pr_err("inet_protocol=%d is not a free protocol number\n", protocol);
		return -EINVAL;
	}
	if (sd_inet_taken(AF_INET, protocol)) {
		pr_info("socket(AF_INET, SOCK_STREAM, %d) is already served by the running kernel: not taken, AF_SMBDIRECT only\n",
			protocol);
		inet_protocol = 0;
		return 0;
	}
	sd_inetsw.protocol = protocol;
	inet_register_protosw(&sd_inetsw);
	sd_inet_registered = true;
#if IS_ENABLED(CONFIG_IPV6)
	if (!sd_inet_taken(AF_INET6, protocol)) {
		int err;

		sd_inet6sw.protocol = protocol;
		err = inet6_register_protosw(&sd_inet6sw);
		if (err)
			pr_warn("socket(AF_INET6, SOCK_STREAM, %d) not registered: %d\n",
				protocol, err);
		else
			sd_inet6_registered = true;
	}
#endif
	return sd_diag_init(protocol);
}

void sd_inet_exit(void)
{
	sd_diag_exit();
#if IS_ENABLED(CONFIG_IPV6)
	if (sd_inet6_registered)
		inet6_unregister_protosw(&sd_inet6sw);
#endif
	if (sd_inet_registered)
		inet_unregister_protosw(&sd_inetsw);
	sd_inet_registered = false;
	sd_inet6_registered = false;
}
