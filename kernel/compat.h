/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place that knows kernel versions (6.1 .. 7.2). Everything else
 * uses the names defined here.
 */
#ifndef AF_SMBDIRECT_COMPAT_H
#define AF_SMBDIRECT_COMPAT_H

#include <linux/version.h>
#include <linux/net.h>

/* 6.19 gave bind() and connect() a "struct sockaddr_unsized *". */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
#define SD_SOCKADDR_ARG struct sockaddr_unsized
#else
#define SD_SOCKADDR_ARG struct sockaddr
#endif

/* 6.10 folded accept()'s flags and kern into struct proto_accept_arg. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define SD_ACCEPT_ARGS struct proto_accept_arg *arg
#define SD_ACCEPT_FLAGS (arg->flags)
#define SD_ACCEPT_KERN (arg->kern)
#else
#define SD_ACCEPT_ARGS int flags, bool kern
#define SD_ACCEPT_FLAGS (flags)
#define SD_ACCEPT_KERN (kern)
#endif

#endif
