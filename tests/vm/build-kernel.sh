#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh SERIES [debug|light|bench|kcsan|test]
#
# Builds a test kernel from Debian's linux-source-SERIES: tinyconfig plus
# tests/vm/kernel.config (plus kernel-light.config for "light", KASAN and
# kmemleak without lockdep, kernel-bench.config for "bench", or
# kernel-kcsan.config for "kcsan", KCSAN instead of KASAN, by hand). "test"
# (the default) is the variant make check boots for SERIES: debug for the
# kernels in LOCKDEP_KERNELS (default 6.12), light for the others;
# SD_KERNEL_VARIANT names one for every series. Verifies that
# every option asked for survived olddefconfig, and prints the build directory
# (bzImage, Module.symvers, usable as KDIR). Cached by source version and
# configuration hash under ~/.cache/smbdirect/kernels/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/apt-private.sh"

series=${1:?usage: build-kernel.sh SERIES [debug|light|bench|kcsan|test]}
variant=${2:-test}
if [ "$variant" = test ]; then
	case " ${LOCKDEP_KERNELS-6.12} " in
	*" $series "*) variant=${SD_KERNEL_VARIANT:-debug} ;;
	*) variant=${SD_KERNEL_VARIANT:-light} ;;
	esac
fi
frags=("$here/kernel.config")
case $variant in
debug) ;;
light) frags+=("$here/kernel-light.config") ;;
bench) frags+=("$here/kernel-bench.config") ;;
kcsan) frags+=("$here/kernel-kcsan.config") ;;
*) echo "build-kernel: unknown variant '$variant'" >&2; exit 2 ;;
esac

# Not through ccache (make check puts it first in PATH): a kernel tree is
# cached whole and rebuilt incrementally, so ccache never serves one of its
# objects, and each miss costs a second preprocessor run and the hashing
# of every header: six large 7.2 objects took 31.5 s through ccache, 27.1
# s without (+16%, 2026-11-27), ~8 of a cold run's CPU minutes. Outside
# the cache key: the compiler is the same gcc either way.
PATH=${PATH//\/usr\/lib\/ccache:/}
src=$("$here/fetch-kernel.sh" "$series")
# The key reads the fragments' options, not their comments: a comment
# edit rebuilds no kernel.
key=$( { basename "$src"
	 grep -h -E '^(CONFIG_|# CONFIG_[A-Za-z0-9_]+ is not set$)' "${frags[@]}"
	 gcc --version | head -n1
	 sed -n '/^# cache-key-begin/,/^# cache-key-end/p' "$0"; } |
	sha256sum | cut -c1-16)
out=$SD_CACHE/kernels/$(basename "$src")-$variant-$key
# Concurrent callers (parallel make targets, several shells) wait for one
# build instead of racing in the same output directory.
mkdir -p "$SD_CACHE/kernels"
exec 9>"$out.lock"
flock 9
if [ -f "$out/.smbdirect-complete" ]; then
	echo "$out"
	exit 0
fi

# A configuration change starts from the newest complete build of the same
# source and variant: Kbuild then recompiles only what the changed options
# touch (it tracks dependencies per option), not the whole kernel. (No such
# build yet is no error: ls fails, and pipefail would end the script.)
if [ ! -e "$out/.config" ]; then
	seed=$(ls -td "$SD_CACHE/kernels/$(basename "$src")-$variant"-*/.smbdirect-complete \
		2>/dev/null | head -n1 || true)
	if [ -n "$seed" ]; then
		seed=$(dirname "$seed")
		echo "build-kernel: starting from $(basename "$seed")" >&2
		rm -rf "$out"
		cp -a "$seed" "$out"
		rm -f "$out/.smbdirect-complete"
	fi
fi

# cache-key-begin (changes to these steps rebuild every kernel)
log=$SD_CACHE/kernels/$(basename "$out").log
mkdir -p "$out"
echo "build-kernel: building $(basename "$out") (log: $log)" >&2
kmake() { make -C "$src" O="$out" ARCH=x86_64 "$@"; }
{
	kmake tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}"
	kmake olddefconfig
} >"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }

# Later fragments override earlier ones, as merge_config does.
declare -A want=()
while IFS= read -r line; do
	if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
		want[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
	elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
		want[${BASH_REMATCH[1]}]=n
	fi
done < <(cat "${frags[@]}")
bad=0
for opt in "${!want[@]}"; do
	have=$(grep -E "^$opt=" "$out/.config" | cut -d= -f2- || true)
	[ -n "$have" ] || have=n
	if [ "$have" != "${want[$opt]}" ]; then
		echo "build-kernel: $opt: asked for ${want[$opt]}, olddefconfig gave $have" >&2
		bad=1
	fi
done
if [ $bad -ne 0 ]; then
	echo "build-kernel: FAILED: the configuration is not what tests/vm/kernel.config asks for" >&2
	exit 1
fi

jobs=$(( $(nproc) + 1 ))
# KASAN instruments the code the module's memory passes through, not the
# whole kernel: the RDMA stack (drivers/infiniband), the network stack and
# veth (net, drivers/net) that rxe and siw send through, ksmbd and cifs
# (fs/smb), the VFS's file code the sockets' files go through (fs), the
# memory manager and the helpers that pin, map and copy user pages (mm,
# lib), io_uring, and the workqueues and timers its work items and the
# module's run on (kernel, kernel/time). The module itself is always
# instrumented (an external module's objects default to KASAN_SANITIZE
# y), and every allocation is KASAN's, wherever it is made. Not
# instrumented: the architecture code, the other drivers (PCI, virtio,
# the serial console), the scheduler, locking, RCU and tracing, the
# other file systems (the guest's 9p root among them, with net/9p), the
# crypto library. mm/kasan and kernel/entry keep their own
# KASAN_SANITIZE := n, which a command-line value would override.
# Why: Documentation/testing.rst (the cold budget, issue #25).
kasan_scope='$(if $(filter-out mm/kasan kernel/entry net/9p net/9p/%,$(filter
	net net/% drivers/infiniband drivers/infiniband/% drivers/net drivers/net/%
	fs fs/smb fs/smb/% mm mm/% lib lib/% io_uring kernel kernel/time,$(obj))),,n)'
kasan_scope=${kasan_scope//$'\n\t'/ }
kmake -j"$jobs" KASAN_SANITIZE="$kasan_scope" >>"$log" 2>&1 ||
	{ grep -E 'error|Error' "$log" | tail -n 30 >&2; exit 1; }
# cache-key-end
touch "$out/.smbdirect-complete"
echo "$out"
