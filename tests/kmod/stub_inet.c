// SPDX-License-Identifier: GPL-2.0
/*
 * sd_stub_inet.ko (test builds only): a stand-in for a kernel that serves
 * IPPROTO_SMBDIRECT itself, as the in-kernel smbdirect of upstream's April
 * 2026 series would at 257. It registers an AF_INET protosw entry for
 * (SOCK_STREAM, protocol) whose sockets are refused with EHOSTDOWN, an
 * error no other path of socket() gives, so a test can tell whose entry a
 * socket() reached. zz_inet_taken_test loads it before af_smbdirect.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <net/inet_common.h>
#include <net/inet_sock.h>
#include <net/protocol.h>
#include <net/sock.h>

static int protocol = 257;
module_param(protocol, int, 0444);
MODULE_PARM_DESC(protocol, "the IPPROTO_ number to take (default 257)");

/* inet_create() calls it last; its error undoes the socket. */
static int stub_init_sock(struct sock *sk)
{
	return -EHOSTDOWN;
}

/* sk_common_release() calls it unconditionally; nothing was hashed. */
static void stub_unhash(struct sock *sk)
{
}

static struct proto stub_proto = {
	.name = "SMBD_INET_STUB",
	.owner = THIS_MODULE,
	.obj_size = sizeof(struct inet_sock),
	.init = stub_init_sock,
	.unhash = stub_unhash,
};

static struct inet_protosw stub_protosw = {
	.type = SOCK_STREAM,
	.prot = &stub_proto,
	.ops = &inet_stream_ops,
};

static int __init stub_init(void)
{
	int err;

	if (protocol <= 0 || protocol >= IPPROTO_MAX)
		return -EINVAL;
	err = proto_register(&stub_proto, 0);
	if (err)
		return err;
	stub_protosw.protocol = protocol;
	inet_register_protosw(&stub_protosw);
	pr_info("socket(AF_INET, SOCK_STREAM, %d) taken: EHOSTDOWN\n", protocol);
	return 0;
}

static void __exit stub_exit(void)
{
	inet_unregister_protosw(&stub_protosw);
	proto_unregister(&stub_proto);
}

module_init(stub_init);
module_exit(stub_exit);
MODULE_DESCRIPTION("af_smbdirect test: a stand-in owner of IPPROTO_SMBDIRECT");
MODULE_LICENSE("GPL");
