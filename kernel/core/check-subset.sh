#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Enforces the restricted C++ subset of kernel/core (Documentation/core.rst).
#
#   check-subset.sh <core-source-dir> [object-or-archive ...]
#
# Sources: no angle-bracket include (the core builds with -nostdinc and must
# never reach for <linux/...> or a libstdc++ header), and none of the
# constructs that need a C++ runtime or FPU state the kernel does not have.
# Comments and string/character literals are stripped first, and tokens are
# matched whole, so "renew" or a comment about "new" is fine; "= delete"
# (a deleted function) is allowed.
# Objects: no constructor/destructor tables and no reference to the C++
# runtime (operator new/delete, __cxa_*, RTTI, unwinder). Sanitizers (KASAN,
# ASan, coverage) register their own prioritised constructors
# (.init_array.00099 and the like); those are the toolchain's, not ours, so
# only the unprioritised tables and C++ static-initialiser symbols count.
set -u -o pipefail
# report() runs at the end of pipelines and must set fail in this shell.
shopt -s lastpipe

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 <core-source-dir> [object ...]" >&2
	exit 2
fi
dir=$1
shift
fail=0

shopt -s nullglob
sources=("$dir"/*.cpp "$dir"/*.h "$dir"/*.hpp "$dir"/*.cc)
if [ ${#sources[@]} -eq 0 ]; then
	echo "check-subset: no sources in $dir" >&2
	exit 2
fi

# Prints "file:line:text" for every line, comments and literals blanked.
strip() {
	awk '
	FNR == 1 { incomment = 0 }
	{
		out = ""; line = $0; n = length(line); i = 1
		while (i <= n) {
			c = substr(line, i, 1); c2 = substr(line, i, 2)
			if (incomment) {
				if (c2 == "*/") { incomment = 0; i += 2; out = out " " } else i++
				continue
			}
			if (c2 == "/*") { incomment = 1; i += 2; continue }
			if (c2 == "//") break
			if (c == "\"" || c == "\047") {
				q = c; out = out q; i++
				while (i <= n) {
					d = substr(line, i, 1)
					if (d == "\\") { i += 2; continue }
					i++
					if (d == q) break
				}
				out = out q
				continue
			}
			out = out c; i++
		}
		print FILENAME ":" FNR ":" out
	}' "$@"
}

stripped=$(strip "${sources[@]}") || exit 2

report() {
	# $1 = message, stdin = offending stripped lines
	local hits
	hits=$(cat)
	if [ -n "$hits" ]; then
		echo "check-subset: $1:" >&2
		echo "$hits" | sed 's/^/  /' >&2
		fail=1
	fi
}

# Includes are checked on the raw text: a commented-out include is harmless,
# but an include inside a string is not a thing, so raw grep is exact enough.
grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<linux/' "${sources[@]}" |
	report "includes a Linux header (the core is freestanding; use the glue)"
grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' "${sources[@]}" |
	grep -vE '#[[:space:]]*include[[:space:]]*<linux/' |
	report "angle-bracket include (the core builds with -nostdinc)"
grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' "${sources[@]}" |
	report "include reaching outside kernel/core"

forbidden='new|delete|throw|try|catch|typeid|dynamic_cast|thread_local|virtual|float|double|long[[:space:]]+double|__int128|__uint128_t|__int128_t'
# Allow deleted special members; anything else named delete is forbidden.
# Only the code is matched, not the path in front of it: a build directory
# named "new-build" or "demo-try" is no forbidden construct.
echo "$stripped" | sed -E 's|^.*/kernel/core/||; s/=[[:space:]]*delete\b/= DELETED_FN/g' |
	grep -E "(^|[^[:alnum:]_])($forbidden)([^[:alnum:]_]|$)" |
	report "forbidden construct (new/delete/exceptions/RTTI/thread_local/virtual/FP/int128)"

for obj in "$@"; do
	if [ ! -r "$obj" ]; then
		echo "check-subset: cannot read $obj" >&2
		fail=1
		continue
	fi
	readelf -SW "$obj" 2>/dev/null |
		grep -E '[[:space:]]\.(init_array|ctors|fini_array|dtors)([[:space:]]|$)' |
		report "$obj has static constructor/destructor tables"
	nm -A "$obj" 2>/dev/null |
		grep -E '[[:space:]](__cxa_[[:alnum:]_]*|_Znw[[:alnum:]_]*|_Zna[[:alnum:]_]*|_Zdl[[:alnum:]_]*|_Zda[[:alnum:]_]*|__dynamic_cast|__gxx_personality[[:alnum:]_]*|_Unwind_[[:alnum:]_]*|_ZTI[[:alnum:]_]*|_ZTV[[:alnum:]_]*|_GLOBAL__sub_[ID]_[[:alnum:]_.]*)$' |
		report "$obj references the C++ runtime or has static initialisers"
done

exit $fail
