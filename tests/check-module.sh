#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-module.sh ROOT BUILD "SERIES..."
#
# Compile tests of af_smbdirect.ko with W=1 (warnings are errors for the
# project's files; modpost and objtool output must be clean):
#  - against Debian 12's stock headers (linux-headers-amd64, 6.1);
#  - against each test kernel, both the product build and the KUnit build.
set -uo pipefail
root=$1 build=$2 series=$3
res=${SMBDIRECT_RESULTS:-/dev/null}
rc=0

compile() { # name kdir extra-make-args...
	local name=$1 kdir=$2; shift 2
	local log=$build/logs/module-$name.log
	mkdir -p "$build/logs"
	echo "== compile test: $name ($kdir)"
	if ! make --no-print-directory -C "$root" module KDIR="$kdir" BUILD="$build" "$@" >"$log" 2>&1; then
		tail -n 30 "$log"
		echo "fail module/$name" >>"$res"; rc=1; return
	fi
	# Kbuild reports modpost and objtool problems as warnings; any warning
	# about our objects fails the test.
	if grep -E 'warning:|WARNING:' "$log" | grep -v '^make' ; then
		echo "   ^ warnings in $log"
		echo "fail module/$name" >>"$res"; rc=1; return
	fi
	# Exports must never collide with the in-tree smbdirect module's
	# (smbdirect_*) or any other: ours all carry the af_smbdirect_ prefix.
	local mdir bad
	mdir=$(sed -n 's/^built \(.*\)\/af_smbdirect.ko against .*/\1/p' "$log" | tail -n1)
	bad=$(awk '$2 !~ /^af_smbdirect_/ { print $2 }' "$mdir/Module.symvers")
	if [ -n "$bad" ]; then
		echo "   exported symbols without the af_smbdirect_ prefix: $bad"
		echo "fail module/$name" >>"$res"; rc=1; return
	fi
	# modinfo: every parameter has a description an administrator can read.
	local undoc
	undoc=$(modinfo -p "$mdir/af_smbdirect.ko" | awk -F: '$2 ~ /^ *\(/ || $2 == "" { print $1 }')
	if [ -z "$(modinfo -p "$mdir/af_smbdirect.ko")" ] || [ -n "$undoc" ]; then
		echo "   module parameters without a description: ${undoc:-(no parameters at all)}"
		echo "fail module/$name" >>"$res"; rc=1; return
	fi
	echo "pass module/$name" >>"$res"
	echo "   ok"
}

checkpatch() { # kernel-source
	local files
	files=$(cd "$root" && ls kernel/*.c kernel/*.h tests/kunit/*.c tests/kunit/*.h \
		kernel/core/smbdirect_core.h uapi/linux/*.h 2>/dev/null)
	echo "== checkpatch.pl --strict"
	if (cd "$root" && "$1/scripts/checkpatch.pl" --strict --no-tree --terse \
			--show-types --quiet -f $files); then
		echo "pass module/checkpatch-strict" >>"$res"
		echo "   ok"
	else
		echo "fail module/checkpatch-strict" >>"$res"; rc=1
	fi
}

stock=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n1)
if [ -z "$stock" ]; then
	echo "fail module/debian-6.1-headers" >>"$res"
	echo "no /usr/src/linux-headers-*-amd64: run make deps"; rc=1
else
	compile "debian-$(basename "$stock" | sed 's/linux-headers-//')" "$stock"
fi

newest=$(echo $series | tr ' ' '\n' | sort -V | tail -n1)
checkpatch "$("$root/tests/vm/fetch-kernel.sh" "$newest")"

for s in $series; do
	kdir=$("$root/tests/vm/build-kernel.sh" "$s") || {
		echo "fail module/kernel-$s" >>"$res"; rc=1; continue; }
	compile "test-kernel-$s" "$kdir"
	compile "test-kernel-$s-kunit" "$kdir" SMBDIRECT_KUNIT=1
done
exit $rc
