#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest half of tests/vm/quick.sh: quick.sh SELFTEST_DIR USERSPACE_BUILD SCRIPT...
set -u
selftests=$1
export SD_US=$2
shift 2
# The patched Samba of `make samba` in the same build directory
# (BUILD/samba/bin), for tests/interop/samba-*.sh.
if [ -z "${SD_SAMBA:-}" ]; then
	for b in "${SD_US%/userspace/build}/samba/bin"; do
		[ -x "$b/smbd" ] && { export SD_SAMBA=$(cd "$b" && pwd); break; }
	done
fi
out=$SD_OUT
mkdir -p "$out/tap"
insmod "$SD_MODULE_DIR/af_smbdirect.ko" || { dmesg > "$out/dmesg.txt"; exit 1; }
for t in "$@"; do
	name=$(basename "$t" .sh)
	echo "guest: $t"
	start=$SECONDS
	case $t in
	*.sh) SD_SELFTESTS=$selftests timeout 900 bash "$SD_REPO/$t" ;;
	# a kselftest by its source path or name (tests/selftests/socket_test):
	# the binary built for this kernel
	*) b=$selftests/${t##*/}
		[ -x "$b" ] || b=$SD_REPO/$t
		(cd "$selftests" && timeout 600 "$b") ;;
	esac > "$out/tap/$name.tap" 2>&1
	echo "# exit $?" >> "$out/tap/$name.tap"
	echo "guest: $t took $((SECONDS - start)) s"
done
rmmod af_smbdirect || echo "guest: rmmod failed" >> "$out/tap/rmmod.tap"
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > "$out/kmemleak.txt"
fi
dmesg > "$out/dmesg.txt"
exit 0
