/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place that knows kernel versions (6.1 .. 7.2). Everything else
 * uses the names defined here.
 */
#ifndef AF_SMBDIRECT_COMPAT_H
#define AF_SMBDIRECT_COMPAT_H

#include <linux/version.h>
#include <linux/memcontrol.h>
#include <linux/net.h>
#include <linux/slab.h>

/* Spelled without LINUX_VERSION_CODE, which checkpatch flags anywhere. */
#define SD_KERNEL_AT_LEAST(major, minor) \
	((LINUX_VERSION_MAJOR << 8) + LINUX_VERSION_PATCHLEVEL >= ((major) << 8) + (minor))

/* 6.19 gave bind() and connect() a "struct sockaddr_unsized *". */
#if SD_KERNEL_AT_LEAST(6, 19)
#define SD_SOCKADDR_ARG struct sockaddr_unsized
#else
#define SD_SOCKADDR_ARG struct sockaddr
#endif

/* 6.10 folded accept()'s flags and kern into struct proto_accept_arg. */
#if SD_KERNEL_AT_LEAST(6, 10)
#define SD_ACCEPT_ARGS struct proto_accept_arg *arg
#define SD_ACCEPT_FLAGS (arg->flags)
#define SD_ACCEPT_KERN (arg->kern)
#else
#define SD_ACCEPT_ARGS int flags, bool kern
#define SD_ACCEPT_FLAGS (flags)
#define SD_ACCEPT_KERN (kern)
#endif

/*
 * Where inet6_create() finds an IPv6 socket's struct ipv6_pinfo: at
 * proto->ipv6_pinfo_offset since 6.7, before that at the end of the object
 * (obj_size - sizeof(struct ipv6_pinfo)).
 */
#if SD_KERNEL_AT_LEAST(6, 7)
#define SD_PROTO_IPV6_PINFO(type, member) .ipv6_pinfo_offset = offsetof(type, member),
#define SD_IPV6_PINFO_MUST_BE_LAST 0
#else
#define SD_PROTO_IPV6_PINFO(type, member)
#define SD_IPV6_PINFO_MUST_BE_LAST 1
#endif

/* 6.9 gave struct inet_diag_handler an owner (the table pins it). */
#if SD_KERNEL_AT_LEAST(6, 9)
#define SD_INET_DIAG_OWNER .owner = THIS_MODULE,
#else
#define SD_INET_DIAG_OWNER
#endif

/* 6.18: inet_diag_bc_sk() takes the dump data, not the bytecode. */
#if SD_KERNEL_AT_LEAST(6, 18)
#define sd_inet_diag_bc_sk(cb_data, sk) inet_diag_bc_sk(cb_data, sk)
#else
#define sd_inet_diag_bc_sk(cb_data, sk) \
	inet_diag_bc_sk(((struct inet_diag_dump_data *)(cb_data))->inet_diag_nla_bc, sk)
#endif

/*
 * kzalloc_obj() (7.0), which checkpatch asks for instead of
 * kzalloc(sizeof(...)); a macro, so its presence tells.
 */
#ifdef kzalloc_obj
#define sd_kzalloc_obj(p, gfp) kzalloc_obj(*(p), gfp)
#else
#define sd_kzalloc_obj(p, gfp) kzalloc(sizeof(*(p)), gfp)
#endif

/*
 * Another reference to a memory cgroup (a listener's, for a child). The
 * other memcg calls used (get_mem_cgroup_from_mm, set_active_memcg,
 * mem_cgroup_put) have stubs without CONFIG_MEMCG; this one needs
 * struct mem_cgroup's css, which only CONFIG_MEMCG defines.
 */
static inline struct mem_cgroup *sd_memcg_get(struct mem_cgroup *memcg)
{
#ifdef CONFIG_MEMCG
	if (memcg)
		css_get(&memcg->css);
#endif
	return memcg;
}

#endif
