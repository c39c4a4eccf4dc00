#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh ROOT BUILD: the main job. Builds the newest test kernel and
# af_smbdirect.ko, boots the VM, loads the module beside the in-tree
# SMB-Direct users (cifs, ksmbd), moves a file between two AF_SMBDIRECT
# sockets over rxe and over siw with a verified checksum, and connects to
# ksmbd's SMB-Direct listener, printing what was negotiated.
set -euo pipefail
root=$1 build=$2
series=${SD_DEMO_KERNEL:-7.2}

echo "demo: test kernel $series (built once, then cached)"
kdir=$("$root/tests/vm/build-kernel.sh" "$series")
echo "demo: building af_smbdirect.ko against $kdir"
make --no-print-directory -C "$root" module KDIR="$kdir" BUILD="$build" |
	tee "$build/demo-module.log" | grep -E '^built|error' || true
mdir=$(sed -n 's/^built \(.*\)\/af_smbdirect.ko against .*/\1/p' "$build/demo-module.log")
[ -f "$mdir/af_smbdirect.ko" ] || { echo "demo: module build failed"; exit 1; }

src=$("$root/tests/vm/fetch-kernel.sh" "$series")
echo "demo: building the smbdirect tool and the interop client"
mkdir -p "$build/demo"
g++ -std=gnu++20 -O2 -Wall -Wextra -Werror -I "$root/uapi" \
	-o "$build/demo/smbdirect" "$root/userspace/tools/smbdirect.cpp"
make --no-print-directory -C "$root/tests/selftests" KSRC="$src" \
	OUT="$build/demo/selftests" ROOT="$root" > "$build/demo/selftests.log" 2>&1 ||
	{ tail -n 20 "$build/demo/selftests.log"; exit 1; }

out=$build/vm/demo
rm -rf "$out"
mkdir -p "$out"
echo "demo: booting the VM (QEMU/TCG, about a minute)"
SD_MODULE_DIR=$mdir SD_VM_QUIET=1 SD_VM_TIMEOUT=600 \
	"$root/tests/vm/run-vm.sh" "$kdir" "$out" tests/vm/guest/demo.sh "$build/demo" || rc=$?
cat "$out/demo.txt" 2>/dev/null || true
if [ "${rc:-0}" -ne 0 ] || ! grep -q '^af_smbdirect is loaded' "$out/demo.txt" ||
   [ "$(grep -c '^transfer over .* checksum ok' "$out/demo.txt")" -ne 2 ]; then
	echo "demo: FAILED (exit ${rc:-0}); console: $out/console.log"
	tail -n 30 "$out/console.log"
	exit 1
fi
echo "demo: done: af_smbdirect.ko was loaded in the test VM (kernel $series);" \
	"files moved over rxe and siw with matching checksums"
