#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# prepare.sh ARCH SERIES   (arm64 6.12 | x86_64 7.3 | ...)
#
# Prepares a kernel tree that af_smbdirect.ko can be compile-tested against
# for ARCH (cross-compiled with Debian's aarch64-linux-gnu- toolchain for
# arm64) and prints its path, usable as KDIR with ARCH= and CROSS_COMPILE=
# (`prepare.sh --make-args ARCH` prints those). The source is Debian's
# linux-source-SERIES (tests/vm/fetch-kernel.sh: bookworm-backports or sid;
# else experimental, tests/cross/fetch-experimental.sh).
#
# The configuration is tinyconfig plus tests/cross/ARCH.config, `make
# modules_prepare`d (a minute), not built: modpost needs a Module.symvers
# to check every symbol the module imports (that it exists on this
# architecture and kernel, GPL-only use, namespaces), and
# tests/cross/exports.py writes one from the source's EXPORT_SYMBOL*s.
# Building the kernel for its Module.symvers took ~10 CPU minutes per tree,
# the cold make check's critical path (issue #26). Checked on 2026-11-27
# against the built trees: exports.py's table held every export of the
# built 6.12 arm64 and 7.3 x86_64 kernels, with the same namespaces, and
# every import of the module. (It also lists exports of code this
# configuration does not build; see exports.py.)
#
# Cached by source version, ARCH, fragment, compiler and these steps under
# ~/.cache/smbdirect/kernels/; concurrent callers wait for one build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../vm/apt-private.sh"

make_args() { # arch
	case $1 in
	arm64) echo "ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-" ;;
	x86_64) echo "ARCH=x86_64" ;;
	*) echo "prepare: no fragment tests/cross/$1.config" >&2; return 2 ;;
	esac
}
if [ "${1:-}" = --make-args ]; then
	make_args "${2:?usage: prepare.sh --make-args ARCH}"
	exit
fi
arch=${1:?usage: prepare.sh ARCH SERIES}
series=${2:?usage: prepare.sh ARCH SERIES}
read -r -a margs <<<"$(make_args "$arch")"
frag=$here/$arch.config
cross=
[ "$arch" = arm64 ] && cross=aarch64-linux-gnu-
command -v "${cross}gcc" >/dev/null ||
	{ echo "prepare: no ${cross}gcc: run make deps" >&2; exit 1; }

# Not through ccache, as tests/vm/build-kernel.sh builds (outside the key).
PATH=${PATH//\/usr\/lib\/ccache:/}
src=$("$here/../vm/fetch-kernel.sh" "$series" 2>/dev/null) ||
	src=$("$here/fetch-experimental.sh" "$series") || exit
key=$( { basename "$src"; echo "$arch"; cat "$frag"; "${cross}gcc" --version | head -n1;
	 sed -n '/^# cache-key-begin/,/^# cache-key-end/p' "$0"; cat "$here/exports.py"; } |
	sha256sum | cut -c1-16)
out=$SD_CACHE/kernels/$(basename "$src")-$arch-compile-$key
mkdir -p "$SD_CACHE/kernels"
exec 9>"$out.lock"
flock 9
if [ -f "$out/.smbdirect-complete" ]; then
	echo "$out"
	exit 0
fi

# cache-key-begin (changes to these steps prepare every tree again)
log=$SD_CACHE/kernels/$(basename "$out").log
rm -rf "$out"
mkdir -p "$out"
echo "prepare: building $(basename "$out") (log: $log)" >&2
kmake() { make -C "$src" O="$out" "${margs[@]}" "$@"; }
{
	kmake tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag"
	kmake olddefconfig
} >"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }

bad=0
while IFS= read -r line; do
	[[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]] || continue
	have=$(grep -E "^${BASH_REMATCH[1]}=" "$out/.config" | cut -d= -f2- || true)
	if [ "$have" != "${BASH_REMATCH[2]}" ]; then
		echo "prepare: ${BASH_REMATCH[1]}: asked for ${BASH_REMATCH[2]}," \
			"olddefconfig gave ${have:-n}" >&2
		bad=1
	fi
done <"$frag"
[ $bad -eq 0 ] || { echo "prepare: FAILED: the configuration is not what $frag asks for" >&2; exit 1; }

jobs=$(( $(nproc) + 1 ))
kmake -j"$jobs" modules_prepare >>"$log" 2>&1 ||
	{ grep -E 'error|Error' "$log" | tail -n 30 >&2; exit 1; }
python3 "$here/exports.py" "$src" "$arch" >"$out/Module.symvers" 2>>"$log" &&
	[ "$(wc -l <"$out/Module.symvers")" -gt 1000 ] ||
	{ echo "prepare: exports.py wrote no export table (see $log)" >&2; exit 1; }
# cache-key-end
touch "$out/.smbdirect-complete"
echo "$out"
