#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libsmbdirect in the test VM (TAP): sd_lib_vm_test (tests/userspace/lib)
# runs every C function end to end over rxe4, rxe6, siw4 and siw6, the C++
# API's RAII (VmPin back after a Registration's scope), fork (a child
# serving what its parent accepted; a child registering after its parent
# exited; a registration made before fork), SCM_RIGHTS of a connected
# socket, the RDMA-capable interfaces, and last a reload of the module
# into another address-family slot. Each case runs in its own process with
# an alarm; the whole run has a hard limit.
#
#   lib.sh [SUBSTRING...]   only the cases whose names contain one
#
# Environment: SD_US (user-space build dir), SD_MODULE_DIR (for the reload).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/interop/common.bash"

us=${SD_US:?SD_US is not set}
bin=$us/tests/userspace/lib/sd_lib_vm_test
if [ ! -x "$bin" ]; then
	tap_plan 1
	tap_fail lib.build "$bin was not built"
	tap_exit
fi
ensure_siw_on_veth1
timeout -s KILL 600 "$bin" "$@"
rc=$?
[ $rc -eq 137 ] && echo "# sd_lib_vm_test killed after 600 s"
echo "# lib.sh took ${SECONDS} s"
exit $rc
