// SPDX-License-Identifier: GPL-2.0
/*
 * The address-family slot of AF_SMBDIRECT: chosen at load, published
 * read-only as the "family" module parameter.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/socket.h>

#include "uapi/linux/smbdirect.h"

#include "af_family.h"
#include "sd_sock.h"

static int family;
module_param(family, int, 0444);
MODULE_PARM_DESC(family,
		 "address family number (0 at load: pick a free retired slot; read back: the one in use)");

static const int af_smbdirect_candidates[] = SMBDIRECT_FAMILY_CANDIDATES;
static_assert(ARRAY_SIZE(af_smbdirect_candidates) == SMBDIRECT_FAMILY_NR_CANDIDATES);

int af_smbdirect_family_pick(int forced,
			     int (*try_register)(int family, void *ctx),
			     void *ctx)
{
	unsigned int i;
	int err;

	if (forced) {
		/* AF_UNSPEC and out-of-table numbers can never be registered. */
		if (forced <= AF_UNSPEC || forced >= NPROTO)
			return -EINVAL;
		err = try_register(forced, ctx);
		return err ? err : forced;
	}
	for (i = 0; i < ARRAY_SIZE(af_smbdirect_candidates); i++) {
		err = try_register(af_smbdirect_candidates[i], ctx);
		if (!err)
			return af_smbdirect_candidates[i];
		if (err != -EEXIST)
			return err;
	}
	return -EBUSY;
}

static struct net_proto_family af_smbdirect_family_ops;

static int af_smbdirect_create(struct net *net, struct socket *sock,
			       int protocol, int kern)
{
	/* family is set before sock_register(), unlike the parameter. */
	return sd_sock_create(net, sock, af_smbdirect_family_ops.family,
			      protocol, kern);
}

static struct net_proto_family af_smbdirect_family_ops = {
	.create = af_smbdirect_create,
	.owner = THIS_MODULE,
};

static int af_smbdirect_try_register(int nr, void *ctx)
{
	struct net_proto_family *ops = ctx;

	ops->family = nr;
	return sock_register(ops);
}

int af_smbdirect_family_init(void)
{
	int nr = af_smbdirect_family_pick(family, af_smbdirect_try_register,
					  &af_smbdirect_family_ops);

	if (nr < 0) {
		if (family)
			pr_err("cannot use forced address family %d: %d\n",
			       family, nr);
		else
			pr_err("no free address-family slot among the retired ones: %d\n",
			       nr);
		return nr;
	}
	family = nr;
	return 0;
}

int af_smbdirect_family(void)
{
	return family;
}

void af_smbdirect_family_exit(void)
{
	sock_unregister(family);
}
