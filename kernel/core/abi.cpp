// SPDX-License-Identifier: GPL-2.0
#include "smbdirect_core.h"

extern "C" int sd_core_abi_version(void)
{
	return SD_CORE_ABI_VERSION;
}
