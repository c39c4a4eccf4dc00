/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * AF_SMBDIRECT: the SMB-Direct transport ([MS-SMBD] v1.0) as a socket family.
 *
 * A module cannot extend AF_MAX, so af_smbdirect.ko takes an address-family
 * slot that no protocol has registered on the running kernel, chosen at load
 * time, and publishes it read-only in SMBDIRECT_FAMILY_SYSFS. Applications
 * read that file (libsmbdirect's smbdirect_socket() does) instead of using a
 * constant. An administrator may force a slot: modprobe af_smbdirect family=N;
 * the module then refuses to load if N is taken.
 *
 * Without a forced slot the module tries, in this order, families that
 * upstream Linux retired or never implemented: SMBDIRECT_FAMILY_CANDIDATES.
 */
#ifndef _UAPI_LINUX_SMBDIRECT_H
#define _UAPI_LINUX_SMBDIRECT_H

#define SMBDIRECT_FAMILY_SYSFS "/sys/module/af_smbdirect/parameters/family"

/* AF_IRDA, AF_WANPIPE, AF_ECONET, AF_IPX, AF_DECnet, AF_ASH, AF_SNA, AF_NETBEUI */
#define SMBDIRECT_FAMILY_CANDIDATES { 23, 25, 19, 4, 12, 18, 22, 13 }
#define SMBDIRECT_FAMILY_NR_CANDIDATES 8

#endif /* _UAPI_LINUX_SMBDIRECT_H */
