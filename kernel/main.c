// SPDX-License-Identifier: GPL-2.0
/*
 * af_smbdirect: module entry points.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "smbdirect_core.h"
#include "af_family.h"
#include "sd_sock.h"
#include "test_hooks.h"

static int __init af_smbdirect_init(void)
{
	int err;

	err = sd_params_init();
	if (err)
		return err;
	err = sd_conn_init();
	if (err)
		return err;
	err = sd_proto_init();
	if (err)
		goto out_conn;
	err = sd_device_init();
	if (err)
		goto out_proto;
	err = sd_genl_init();
	if (err)
		goto out_device;
	/* Last: from here on, sockets can be created. */
	err = af_smbdirect_family_init();
	if (err)
		goto out_genl;
	err = sd_inet_init();
	if (err)
		goto out_family;
	af_smbdirect_test_hooks_init();
	pr_info("loaded: address family %d, protocol core ABI %d\n",
		af_smbdirect_family(), sd_core_abi_version());
	return 0;

out_family:
	af_smbdirect_family_exit();
out_genl:
	sd_genl_exit();
out_device:
	sd_device_exit();
out_proto:
	sd_proto_exit();
out_conn:
	sd_conn_exit();
	return err;
}

static void __exit af_smbdirect_exit(void)
{
	af_smbdirect_test_hooks_exit();
	sd_inet_exit();
	af_smbdirect_family_exit();
	sd_genl_exit();
	sd_device_exit();
	sd_proto_exit();
	sd_conn_exit();
	pr_info("unloaded\n");
}

module_init(af_smbdirect_init);
module_exit(af_smbdirect_exit);

MODULE_DESCRIPTION("SMB-Direct (MS-SMBD) socket family over RDMA");
MODULE_AUTHOR("The smbdirect developers");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.2.0");
