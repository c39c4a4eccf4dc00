/* SPDX-License-Identifier: GPL-2.0 */
#ifndef AF_SMBDIRECT_FAMILY_H
#define AF_SMBDIRECT_FAMILY_H

#include <linux/net.h>

/*
 * Picks the address family: @forced if non-zero, else the first of the UAPI
 * candidates that @try_register accepts. @try_register returns 0 when it
 * took the slot, -EEXIST when the slot is in use, or another error that
 * stops the search. Returns the family or a negative errno.
 */
int af_smbdirect_family_pick(int forced,
			     int (*try_register)(int family, void *ctx),
			     void *ctx);

int af_smbdirect_family_init(void);
/* The family in use, valid between init and exit. */
int af_smbdirect_family(void);
void af_smbdirect_family_exit(void);

#endif
