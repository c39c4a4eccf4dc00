#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh ROOT BUILD: the main job (`make demo`). Builds the newest test
# kernel, af_smbdirect.ko and the user space (libsmbdirect, the preload, the
# smbdirect command), boots the VM, loads the module beside the in-tree
# SMB-Direct users (cifs, ksmbd) and shows the library at work: the RDMA
# devices as SMB3 multichannel would announce them, `smbdirect cat` moving a
# file over rxe and over siw (messages, then RDMA writes) with checksums, an
# unmodified TCP program (socat) put on SMB-Direct by `smbdirect run`, and
# ksmbd's SMB-Direct listener answering our client. Works from a fresh clone:
# everything it writes goes under BUILD, which it creates.
set -euo pipefail
root=$1
mkdir -p "$2"
build=$(realpath "$2")
series=${SD_DEMO_KERNEL:-7.2}
# The light test kernel (KASAN and kmemleak, no lockdep: build-kernel.sh),
# the one make check boots for the user-space suites.
variant=${SD_DEMO_KERNEL_VARIANT:-light}

echo "demo: test kernel $series, $variant variant (built once, then cached)"
kdir=$("$root/tests/vm/build-kernel.sh" "$series" "$variant")
echo "demo: building af_smbdirect.ko against $kdir"
mkdir -p "$build/demo"
make --no-print-directory -C "$root" module KDIR="$kdir" BUILD="$build" WERROR=1 \
	>"$build/demo/module.log" 2>&1 || { tail -n 30 "$build/demo/module.log"; exit 1; }
mdir=$(sed -n 's/^built \(.*\)\/af_smbdirect.ko against .*/\1/p' "$build/demo/module.log")
[ -f "$mdir/af_smbdirect.ko" ] || { echo "demo: module build failed"; exit 1; }

echo "demo: building libsmbdirect, the preload and the smbdirect command"
us=$("$root/tests/userspace/build.sh" "$root" "$build") || exit 1
src=$("$root/tests/vm/fetch-kernel.sh" "$series")
make --no-print-directory -C "$root/tests/selftests" KSRC="$src" \
	OUT="$build/demo/selftests" ROOT="$root" > "$build/demo/selftests.log" 2>&1 ||
	{ tail -n 20 "$build/demo/selftests.log"; exit 1; }

out=$build/vm/demo
rm -rf "$out"
mkdir -p "$out"
echo "demo: booting the VM (QEMU/TCG, a few minutes)"
rc=0
SD_MODULE_DIR=$mdir SD_VM_QUIET=1 SD_VM_TIMEOUT=900 \
	"$root/tests/vm/run-vm.sh" "$kdir" "$out" tests/vm/guest/demo.sh "$us" \
	"$build/demo/selftests" || rc=$?
cat "$out/demo.txt" 2>/dev/null || true
ok=$(grep -c ' checksum ok$' "$out/demo.txt" 2>/dev/null || true)
if [ "$rc" -ne 0 ] || ! grep -q '^af_smbdirect is loaded' "$out/demo.txt" ||
   [ "${ok:-0}" -ne 5 ]; then
	echo "demo: FAILED (exit $rc, ${ok:-0} of 5 transfers verified); console: $out/console.log"
	tail -n 30 "$out/console.log"
	exit 1
fi
echo "demo: done: af_smbdirect.ko was loaded in the test VM (kernel $series);" \
	"files moved over rxe and siw by smbdirect cat, messages and RDMA," \
	"and by socat under smbdirect run, with matching checksums"
