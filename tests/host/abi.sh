#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The binary contracts, checked on the host (no VM, no module):
#
#   tests/host/abi.sh <repo-root> <build-dir> [LIBRARY]   check
#   tests/host/abi.sh --update <repo-root> <build-dir>     rewrite the UAPI baseline
#
# 1. abi/uapi-x86_64, abi/uapi-i386: every struct of uapi/linux/*.h (size,
#    each member's offset and size), every ioctl number (direction, type,
#    number, size) and every integer constant and netlink enum value,
#    compiled for x86-64 and for i386 (tests/host/uapi_layout.py), must
#    equal tests/host/abi/uapi-layout.txt. One baseline for both: the
#    header promises i386 programs the same layout (compat_ioctl).
#    abi/uapi-guards: SOL_SMBDIRECT and IPPROTO_SMBDIRECT defined by the
#    system before the header stay as the system has them.
# 2. abi/libsmbdirect-symbols: the dynamic symbols LIBRARY exports, each
#    with its version node and whether it is the default version (@@) or
#    an older one kept for old programs (@), must be exactly the
#    elf-symbol list of userspace/lib/abi/libsmbdirect.abi.
# 3. abi/libsmbdirect-types: abidiff of LIBRARY's public types and
#    functions against userspace/lib/abi/libsmbdirect.abi
#    (userspace/lib/abi/abi-check.sh). Without abidw/abidiff it fails:
#    abigail-tools is installed by `make deps`.
#
# LIBRARY defaults to BUILD/host-asan/lib/libsmbdirect.so.0 (check.sh's
# sanitizer build: instrumentation changes code, not the exported types).
# One line per result goes to $SMBDIRECT_RESULTS: "pass host/abi/...".
set -u -o pipefail

update=0
if [ "${1:-}" = --update ]; then
	update=1
	shift
fi
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 [--update] <repo-root> <build-dir> [LIBRARY]" >&2
	exit 2
fi
repo=$(realpath "$1")
mkdir -p "$2/abi"
work=$(realpath "$2")/abi
lib=${3:-$(realpath "$2")/host-asan/lib/libsmbdirect.so.0}
results=${SMBDIRECT_RESULTS:-}
baseline=$repo/tests/host/abi/uapi-layout.txt
libabi=$repo/userspace/lib/abi/libsmbdirect.abi
status=0

record() { # record pass|fail name
	[ -n "$results" ] && echo "$1 $2" >>"$results"
	[ "$1" = pass ] || status=1
}

# --- 1. UAPI layout ---------------------------------------------------------
headers=("$repo"/uapi/linux/*.h)
python3 "$repo/tests/host/uapi_layout.py" "${headers[@]}" >"$work/uapi_layout.c" ||
	{ echo "abi: uapi_layout.py could not read the headers"; record fail host/abi/uapi-x86_64
	record fail host/abi/uapi-i386; exit 1; }
# The kernel's asm UAPI headers are one set for i386 and x86-64; without
# gcc-multilib (which conflicts with the arm64 cross compiler) they come
# from the native multiarch directory.
multiarch=$(gcc -print-multiarch)
. "$repo/tests/host/i386-exec.sh"
layout() { # abi-name gcc-flags...
	local name=$1
	shift
	local run=()
	if [ "$name" = i386 ]; then
		i386_probe "$work" || { echo "abi: i386 programs cannot run here: $i386_how"; return 1; }
		run=(i386_exec)
	fi
	gcc "$@" -std=gnu11 -Wall -Werror -I"$repo/uapi" "$work/uapi_layout.c" \
		-o "$work/uapi_layout-$name" &&
		"${run[@]}" "$work/uapi_layout-$name" | LC_ALL=C sort >"$work/uapi-$name.txt"
}
if [ $update -eq 1 ]; then
	layout x86_64 -m64 && cp "$work/uapi-x86_64.txt" "$baseline" &&
		echo "abi: wrote $baseline ($(wc -l <"$baseline") lines); commit it"
	exit
fi
for abi in x86_64 i386; do
	case $abi in
	x86_64) flags=(-m64) ;;
	i386) flags=(-m32 -idirafter "/usr/include/$multiarch") ;;
	esac
	if ! layout "$abi" "${flags[@]}"; then
		echo "abi: the UAPI layout program does not build or run for $abi"
		record fail "host/abi/uapi-$abi"
	elif ! diff -u --label "baseline ${baseline#"$repo"/}" --label "uapi/linux/*.h ($abi)" \
		"$baseline" "$work/uapi-$abi.txt"; then
		echo "abi: the UAPI ($abi) differs from ${baseline#"$repo"/} (above: - was, + is)."
		echo "abi: a released UAPI never changes a size, an offset, an ioctl or a value;"
		echo "abi: if this is an addition, accept it with: tests/host/abi.sh --update ROOT BUILD"
		record fail "host/abi/uapi-$abi"
	else
		echo "abi: UAPI ($abi): $(grep -c '^struct [a-z0-9_]* size ' "$baseline") structs," \
			"$(grep -c '^ioctl' "$baseline") ioctls, $(grep -c '^const' "$baseline") constants as in the baseline"
		record pass "host/abi/uapi-$abi"
	fi
done

# The names a system may already define (upstream's proposal puts
# SOL_SMBDIRECT = 289 in the socket headers, IPPROTO_SMBDIRECT = 257 in
# <netinet/in.h>): the header keeps the system's definitions, without a
# redefinition warning, and SMBDIRECT_SOL stays the module's own level.
cat >"$work/guards.c" <<'EOF_C'
#define SOL_SMBDIRECT 289
#define IPPROTO_SMBDIRECT 299
#include <linux/smbdirect.h>
_Static_assert(SOL_SMBDIRECT == 289, "the system's SOL_SMBDIRECT was replaced");
_Static_assert(IPPROTO_SMBDIRECT == 299, "the system's IPPROTO_SMBDIRECT was replaced");
_Static_assert(SMBDIRECT_SOL == 0x5344, "SMBDIRECT_SOL is not the module's level");
EOF_C
cat >"$work/guards-none.c" <<'EOF_C'
#include <linux/smbdirect.h>
_Static_assert(SOL_SMBDIRECT == SMBDIRECT_SOL, "SOL_SMBDIRECT undefined or not 0x5344");
_Static_assert(IPPROTO_SMBDIRECT == SMBDIRECT_IPPROTO, "IPPROTO_SMBDIRECT not 257");
EOF_C
if gcc -std=gnu11 -Wall -Werror -I"$repo/uapi" -c "$work/guards.c" -o /dev/null &&
	gcc -std=gnu11 -Wall -Werror -I"$repo/uapi" -c "$work/guards-none.c" -o /dev/null; then
	echo "abi: SOL_SMBDIRECT and IPPROTO_SMBDIRECT yield to the system's definitions"
	record pass host/abi/uapi-guards
else
	echo "abi: uapi/linux/smbdirect.h overrides or misses SOL_SMBDIRECT/IPPROTO_SMBDIRECT (above)"
	record fail host/abi/uapi-guards
fi

# --- 2. exported symbols -----------------------------------------------------
if [ ! -f "$lib" ]; then
	echo "abi: $lib was not built"
	record fail host/abi/libsmbdirect-symbols
	record fail host/abi/libsmbdirect-types
	exit 1
fi
# NAME@@NODE for the default version a program links to, NAME@NODE for
# an older one kept for programs built before (smbdirect_interfaces@SMBDIRECT_0.1).
sed -n -e "s/.*<elf-symbol name='\([^']*\)' version='\([^']*\)' is-default-version='yes'.*is-defined='yes'.*/\1@@\2/p" \
	-e "s/.*<elf-symbol name='\([^']*\)' version='\([^']*\)' is-default-version='no'.*is-defined='yes'.*/\1@\2/p" \
	"$libabi" | LC_ALL=C sort >"$work/symbols-baseline.txt"
# Defined, global or weak, of every type, with the version node; the
# version nodes themselves (ABS OBJECT SMBDIRECT_0.1) are not symbols.
readelf --dyn-syms --wide "$lib" |
	awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && $7 != "ABS" { print $8 }' |
	LC_ALL=C sort >"$work/symbols.txt"
if [ ! -s "$work/symbols-baseline.txt" ]; then
	echo "abi: no elf-symbol in $libabi"
	record fail host/abi/libsmbdirect-symbols
elif ! diff -u --label "baseline (userspace/lib/abi/libsmbdirect.abi)" \
	--label "$(basename "$lib")" "$work/symbols-baseline.txt" "$work/symbols.txt"; then
	echo "abi: the exported symbols of $(basename "$lib") changed (above: - was, + is)."
	echo "abi: if intended (a new function in a new version node of libsmbdirect.map), accept"
	echo "abi: it with: cmake --build <build dir> --target abi-update, and commit the .abi file"
	record fail host/abi/libsmbdirect-symbols
else
	echo "abi: $(wc -l <"$work/symbols.txt") exported symbols, names and version nodes as in the baseline"
	record pass host/abi/libsmbdirect-symbols
fi

# --- 3. types (abidiff) ------------------------------------------------------
if ! command -v abidw >/dev/null || ! command -v abidiff >/dev/null; then
	echo "abi: abidw/abidiff not installed: install abigail-tools (make deps does)"
	record fail host/abi/libsmbdirect-types
elif bash "$repo/userspace/lib/abi/abi-check.sh" check "$lib" "$libabi" \
	"$repo/userspace/lib/include/smbdirect" "$repo/uapi/linux"; then
	echo "abi: abidiff finds no change of libsmbdirect's types and functions"
	record pass host/abi/libsmbdirect-types
else
	record fail host/abi/libsmbdirect-types
fi
exit $status
