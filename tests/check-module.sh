#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-module.sh ROOT BUILD "SERIES..." [PART]
#
# Compile tests of af_smbdirect.ko with W=1 (warnings are errors for the
# project's files; modpost and objtool output must be clean), against
# Debian 12's stock headers (linux-headers-amd64, 6.1) and each test kernel:
#  - the product build (stock headers, newest test kernel) is Debian's
#    dkms, as an administrator's `dkms install` runs it: `make
#    dkms-source` copies the tree as
#    /usr/src/af_smbdirect-VERSION holds it, then `dkms add` and `dkms
#    build` in a private tree under BUILD/dkms (the system's /var/lib/dkms,
#    /usr/src and /lib/modules are left alone, and checked to be);
#  - the KUnit build (SMBDIRECT_KUNIT=1) of each test kernel by `make module`;
#  - portability, by `make module`: arm64, cross-compiled against 6.12
#    (tests/cross/prepare.sh: tinyconfig plus tests/cross/arm64.config,
#    pointer authentication and the shadow call stack), where the C++
#    core's objects must also carry what the C objects carry; and the
#    newest kernel Debian has, from experimental (x86_64), when it is newer
#    than the test kernels (else one line says so and nothing is recorded).
# Also checkpatch.pl --strict, the netlink spec against its UAPI header
# (tests/genl-spec.sh), and that every place stating the version
# agrees with MODULE_VERSION in kernel/main.c.
# PART: all (the default), native (all but the arm64 and newest-kernel
# compile tests) or cross (only those). make check runs the cross part
# beside the VM boots at the lowest priority: on a machine without its
# cached trees it builds two kernels, ~14 min of CPU that the boots leave
# partly idle, and in seconds once they are cached.
set -uo pipefail
root=$1 build=$2 series=$3 part=${4:-all}
case $part in all | native | cross) ;; *) echo "check-module.sh: PART is all, native or cross, not $part" >&2; exit 2 ;; esac
res=${SMBDIRECT_RESULTS:-/dev/null}
rc=0
mkdir -p "$build/logs"

result() { # pass|fail name
	echo "$1 module/$2" >>"$res"
	if [ "$1" = pass ]; then echo "   ok"; else rc=1; fi
}

# What every build must show. Kbuild reports modpost and objtool problems
# as warnings: any warning about our objects fails. Exports must never
# collide with the in-tree smbdirect module's (smbdirect_*) or any other:
# ours all carry the af_smbdirect_ prefix. modinfo: every parameter has a
# description an administrator can read.
check_build() { # log ko exports
	local log=$1 ko=$2 exports=$3 bad undoc
	if grep -E 'warning:|WARNING:' "$log" | grep -v '^make'; then
		echo "   ^ warnings in $log"; return 1
	fi
	bad=$(awk 'NF && !/^af_smbdirect_/' <<<"$exports")
	if [ -n "$bad" ]; then
		echo "   exported symbols without the af_smbdirect_ prefix: $bad"; return 1
	fi
	undoc=$(modinfo -p "$ko" | awk -F: '$2 ~ /^ *\(/ || $2 == "" { print $1 }')
	if [ -z "$(modinfo -p "$ko")" ] || [ -n "$undoc" ]; then
		echo "   module parameters without a description: ${undoc:-(no parameters at all)}"
		return 1
	fi
}

# arm64: the C++ core's objects are built as the C glue's are. Every object
# has the same AArch64 feature properties (.note.gnu.property: PAC from
# -mbranch-protection, BTI where the kernel has it), each function that
# saves its return address also pushes it to the shadow call stack (x18)
# when the kernel has CONFIG_SHADOW_CALL_STACK, and no instruction uses an
# FP/SIMD register (-mgeneral-regs-only: the kernel does not preserve them).
check_arm64_objects() { # mdir kdir
	local mdir=$1 kdir=$2 o want bad="" fn
	props() { readelf -n "$1" 2>/dev/null | sed -n 's/^ *Properties: AArch64 feature: //p'; }
	want=$(props "$mdir/kernel/main.o")
	grep -q '^CONFIG_ARM64_PTR_AUTH_KERNEL=y' "$kdir/.config" && [[ $want != *PAC* ]] &&
		bad+=" kernel/main.o has no PAC property ('$want');"
	grep -q '^CONFIG_ARM64_BTI_KERNEL=y' "$kdir/.config" && [[ $want != *BTI* ]] &&
		bad+=" kernel/main.o has no BTI property ('$want');"
	for o in "$mdir"/kernel/*.o "$mdir"/kernel/core/*.o; do
		[ "$(props "$o")" = "$want" ] || bad+=" ${o#"$mdir"/}: '$(props "$o")', not '$want';"
	done
	if grep -q '^CONFIG_SHADOW_CALL_STACK=y' "$kdir/.config"; then
		fn=$(aarch64-linux-gnu-objdump -d "$mdir"/kernel/core/*.o | awk '
			/^[0-9a-f]+ <.*>:$/ { if (lr && !scs) print name; name = $2; lr = scs = 0 }
			/\tstp\tx29, x30, / { lr = 1 }
			/\tstr\tx30, \[x18\], #8/ { scs = 1 }
			END { if (lr && !scs) print name }' | head -n 5 | tr '\n' ' ')
		[ -z "$fn" ] || bad+=" C++ functions without a shadow-call-stack push: $fn;"
	fi
	fn=$(aarch64-linux-gnu-objdump -d "$mdir"/kernel/core/*.o | awk -F'\t' '
		/^[0-9a-f]+ <.*>:$/ { name = $0; sub(/^[0-9a-f]+ /, "", name) }
		NF >= 4 { ops = $4; sub(/\/\/.*/, "", ops); gsub(/[0-9a-f]+ <[^>]*>/, "", ops)
			if (ops ~ /(^|[^[:alnum:]_])[bhsdqv][0-9][0-9]?([^[:alnum:]_]|$)/) print name }' |
		sort -u | head -n 5 | tr '\n' ' ')
	[ -z "$fn" ] || bad+=" C++ code using FP/SIMD registers: $fn;"
	[ -z "$bad" ] && return 0
	echo "   arm64 objects:$bad"
	return 1
}

# compile: `make module` into BUILD, or into MBUILD when set: the test
# kernels' KUnit builds under make check go where the VM phase builds them
# (SD_SHARED_MODULE_BUILD, its BUILD), so each is compiled once. A lock
# per build directory keeps the two makes apart (check-vm.sh takes it
# too); when the VM phase compiled first, this make finds nothing to do and
# the warnings are read from the VM phase's log of that build as well.
compile() { # name kdir extra-make-args...
	local name=$1 kdir=$2; shift 2
	local log=$build/logs/module-$name.log mdir mb=${MBUILD:-$build} other
	echo "== compile test: $name ($kdir)"
	mkdir -p "$mb/logs"
	if ! flock "$mb/logs/module-$(basename "$kdir")$([[ " $* " == *" SMBDIRECT_KUNIT=1 "* ]] && echo -kunit).lock" \
			make --no-print-directory -C "$root" module KDIR="$kdir" BUILD="$mb" WERROR=1 "$@" >"$log" 2>&1; then
		tail -n 30 "$log"; result fail "$name"; return
	fi
	mdir=$(sed -n 's/^built \(.*\)\/af_smbdirect.ko against .*/\1/p' "$log" | tail -n1)
	if [ "$mb" != "$build" ] && ! grep -q 'CC \[M\]' "$log"; then
		for other in "$mb"/logs/module-vm-*.log; do
			if [ -f "$other" ] && grep -q 'CC \[M\]' "$other" &&
			   grep -q -x -F "built $mdir/af_smbdirect.ko against $kdir" "$other"; then
				echo "   compiled by the VM phase: its log $other is read too"
				cat "$other" >>"$log"
			fi
		done
	fi
	if check_build "$log" "$mdir/af_smbdirect.ko" "$(awk '{ print $2 }' "$mdir/Module.symvers")" &&
	   { [[ " $* " != *" ARCH=arm64 "* ]] || check_arm64_objects "$mdir" "$kdir"; }; then
		result pass "$name"
	else
		result fail "$name"
	fi
}

checkpatch() { # kernel-source
	local files
	files=$(cd "$root" && ls kernel/*.c kernel/*.h tests/kunit/*.c tests/kunit/*.h \
		kernel/core/smbdirect_core.h uapi/linux/*.h 2>/dev/null)
	echo "== checkpatch.pl --strict"
	# shellcheck disable=SC2086 # one argument per file
	if (cd "$root" && "$1/scripts/checkpatch.pl" --strict --no-tree --terse \
			--show-types --quiet -f $files); then
		result pass checkpatch-strict
	else
		result fail checkpatch-strict
	fi
}

# ---- the version ---------------------------------------------------------
#
# MODULE_VERSION in kernel/main.c is the version; dkms.conf (and so the
# Makefile) states it again as a literal, which dh_dkms can read. The
# user space cannot read it either: its version,
# SMBDIRECT_VERSION_MAJOR/MINOR/PATCH and _STRING in <smbdirect/smbdirect.h>
# (which userspace/CMakeLists.txt reads as the project's), must be the
# same MAJOR.MINOR.PATCH; the Debian changelog's newest entry (upstream
# part), the man pages' headers and the README's dkms commands name it
# too. One version everywhere.
version=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' "$root/kernel/main.c")
check_version() {
	local v=$1 lib hdr dkms deb bad=
	echo "== version: $v (MODULE_VERSION in kernel/main.c)"
	[ -n "$v" ] || { echo "   no MODULE_VERSION in kernel/main.c"; return 1; }
	# dkms.conf's literal version, read as dkms (bash) and as dh_dkms (its
	# regular expression, the last match of any line) read it.
	dkms=$(bash -c '. "$1" && echo "$PACKAGE_VERSION"' _ "$root/dkms.conf" 2>/dev/null)
	[ "$dkms" = "$v" ] || bad+=" dkms.conf:PACKAGE_VERSION(dkms)=$dkms"
	dkms=$(perl -ne '/PACKAGE_VERSION=(["'"'"']?)(.*)\1/ && ($v = $2); END { print $v }' \
		"$root/dkms.conf")
	[ "$dkms" = "$v" ] || bad+=" dkms.conf:PACKAGE_VERSION(dh_dkms)=$dkms"
	# The library's version (CMake reads it from the header too).
	hdr=$(awk '/^#define SMBDIRECT_VERSION_MAJOR / { M = $3 }
		/^#define SMBDIRECT_VERSION_MINOR / { m = $3 }
		/^#define SMBDIRECT_VERSION_PATCH / { p = $3 } END { print M "." m "." p }' \
		"$root/userspace/lib/include/smbdirect/smbdirect.h")
	[ "$hdr" = "$v" ] || bad+=" smbdirect.h:SMBDIRECT_VERSION_MAJOR.MINOR.PATCH=$hdr"
	hdr=$(sed -n 's/^#define SMBDIRECT_VERSION_STRING "\(.*\)"$/\1/p' \
		"$root/userspace/lib/include/smbdirect/smbdirect.h")
	[ "$hdr" = "$v" ] || bad+=" smbdirect.h:SMBDIRECT_VERSION_STRING=$hdr"
	deb=$(dpkg-parsechangelog -l "$root/userspace/packaging/debian/changelog" -S Version 2>/dev/null)
	[ "${deb%-*}" = "$v" ] || bad+=" debian/changelog:$deb"
	bad+=$(cd "$root" && grep -H '^\.TH ' Documentation/man/man*/*.[0-9] |
		grep -v "\"\(lib\)\?smbdirect $v\"" | sed 's/^\([^:]*\):.*/ \1/' | tr -d '\n')
	bad+=$(cd "$root" && grep -o 'af_smbdirect[-/][0-9][0-9.]*[0-9]' README.md Documentation/*.rst |
		grep -v "[-/]$v\$" | sed 's/^/ /' | tr -d '\n')
	[ -z "$bad" ] || { echo "   not $v:$bad"; return 1; }
}
if [ "$part" != cross ]; then
	if check_version "$version"; then result pass version; else result fail version; fi
fi

# ---- dkms ----------------------------------------------------------------
dk=$(realpath -m "$build")/dkms
arch=$(uname -m)
dkms_opts=(--dkmstree "$dk/tree" --sourcetree "$dk/src" --installtree "$dk/install")
sd_cache=${SMBDIRECT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/smbdirect}
ccache_path=
[ ! -d /usr/lib/ccache ] || ccache_path=/usr/lib/ccache:
# What dkms must not write to (it would without the options above).
system_state() {
	ls -lA /var/lib/dkms /usr/src 2>&1
	find /lib/modules -maxdepth 2 2>&1
}
system_before=$(system_state)

dkms_ready=0
dkms_add() {
	local log=$build/logs/module-dkms-add.log
	echo "== dkms add af_smbdirect/$version (tree: $dk)"
	rm -rf "$dk/src" "$dk/tree" "$dk/install"
	mkdir -p "$dk/tree"
	if ! command -v dkms >/dev/null; then
		echo "   no dkms: run make deps"
	elif [ -n "$version" ] &&
		make --no-print-directory -C "$root" dkms-source DKMS_SOURCE_TREE="$dk/src" >"$log" 2>&1 &&
		dkms add "af_smbdirect/$version" "${dkms_opts[@]}" >>"$log" 2>&1; then
		dkms_ready=1
	else
		cat "$log"
	fi
}

# dkms build for one kernel; the module it keeps must be for that kernel
# (vermagic), carry the version, and pass check_build on dkms's make.log.
dkms_build() { # name kdir
	local name=dkms-$1 kdir=$2 log kver base ko vermagic exports
	log=$build/logs/module-$name.log
	echo "== dkms build: $name ($kdir)"
	[ $dkms_ready = 1 ] || { echo "   dkms add failed"; result fail "$name"; return; }
	kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$kdir/include/generated/utsrelease.h" 2>/dev/null)
	[ -n "$kver" ] || { echo "   no UTS_RELEASE in $kdir"; result fail "$name"; return; }
	# W=1 as in every compile test, by its environment form (dkms.conf
	# stays what an administrator runs). dkms signs the module when it
	# finds the kernel's sign-file (Debian's 6.1): with a key of its own
	# here, not /var/lib/dkms/mok.key. dkms compiles every file afresh each
	# time; gcc and g++ through ccache make an unchanged file cost a cache
	# lookup (diagnostics are replayed; modpost, objtool, the core's subset
	# checks, signing and stripping all run).
	if ! PATH=$ccache_path$PATH CCACHE_DIR=$sd_cache/ccache CCACHE_MAXSIZE=1G \
			KBUILD_EXTRA_WARN=1 mok_signing_key=$dk/mok.key mok_certificate=$dk/mok.pub \
			dkms build "af_smbdirect/$version" -k "$kver/$arch" \
			--kernelsourcedir "$kdir" "${dkms_opts[@]}" >"$log" 2>&1; then
		# dkms's own message, then the make.log it leaves in its build
		# directory when the build fails.
		tail -n 8 "$log"
		if [ -f "$dk/tree/af_smbdirect/$version/build/make.log" ]; then
			tail -n 25 "$dk/tree/af_smbdirect/$version/build/make.log"
			cat "$dk/tree/af_smbdirect/$version/build/make.log" >>"$log"
		fi
		result fail "$name"; return
	fi
	if [ "$(system_state)" != "$system_before" ]; then
		echo "   dkms wrote outside $dk:"
		diff <(echo "$system_before") <(system_state)
		result fail "$name"; return
	fi
	base=$dk/tree/af_smbdirect/$version/$kver/$arch
	cat "$base/log/make.log" >>"$log"
	for ko in "$base"/module/af_smbdirect.ko*; do break; done
	[ -f "$ko" ] || { echo "   dkms kept no af_smbdirect.ko in $base/module"; result fail "$name"; return; }
	vermagic=$(modinfo -F vermagic "$ko")
	if [ "${vermagic%% *}" != "$kver" ]; then
		echo "   $ko: vermagic '$vermagic', not for $kver"; result fail "$name"; return
	fi
	if [ "$(modinfo -F version "$ko")" != "$version" ]; then
		echo "   $ko: version '$(modinfo -F version "$ko")', not $version"; result fail "$name"; return
	fi
	# dkms keeps the module, not Module.symvers: the exports are the
	# module's __ksymtab_ symbols (nm fails on a compressed module, and so
	# does the test).
	exports=$(nm --defined-only "$ko") || { result fail "$name"; return; }
	if check_build "$log" "$ko" "$(sed -n 's/^.* __ksymtab_//p' <<<"$exports")"; then
		result pass "$name"
	else
		result fail "$name"
	fi
}

# A DKMS build that meets a warning the sources never had (a compiler or
# kernel update brings one) still builds: -Werror belongs to make check's
# and developers' builds (WERROR=1), never to dkms.conf's make (issue #49).
# The warning is injected into every C and C++ file by KCFLAGS, which
# Kbuild reads from dkms's environment; the build must succeed and its
# log must show the warning, or the case proves nothing.
dkms_build_warning() { # name kdir
	local name=dkms-$1-injected-warning kdir=$2 log kver warn
	log=$build/logs/module-$name.log
	echo "== dkms build with an injected warning: $name ($kdir)"
	[ $dkms_ready = 1 ] || { echo "   dkms add failed"; result fail "$name"; return; }
	kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$kdir/include/generated/utsrelease.h" 2>/dev/null)
	warn=$dk/injected-warning.h
	echo '#warning "injected by check-module: a DKMS build must survive a new warning"' >"$warn"
	if ! PATH=$ccache_path$PATH CCACHE_DIR=$sd_cache/ccache CCACHE_MAXSIZE=1G \
			KCFLAGS="-include $warn" mok_signing_key=$dk/mok.key mok_certificate=$dk/mok.pub \
			dkms build --force "af_smbdirect/$version" -k "$kver/$arch" \
			--kernelsourcedir "$kdir" "${dkms_opts[@]}" >"$log" 2>&1; then
		tail -n 8 "$log"
		[ -f "$dk/tree/af_smbdirect/$version/build/make.log" ] &&
			tail -n 15 "$dk/tree/af_smbdirect/$version/build/make.log"
		result fail "$name"; return
	fi
	cat "$dk/tree/af_smbdirect/$version/$kver/$arch/log/make.log" >>"$log" 2>/dev/null
	if ! grep -q 'warning: #warning "injected by check-module' "$log"; then
		echo "   the injected warning is not in the build's log: nothing was shown"
		result fail "$name"; return
	fi
	echo "   built with $(grep -c 'warning: #warning "injected' "$log") injected warnings"
	result pass "$name"
}

newest=$(echo "$series" | tr ' ' '\n' | sort -V | tail -n1)
if [ "$part" != cross ]; then
	dkms_add

	stock=$(find /usr/src -maxdepth 1 -name "linux-headers-*-amd64" | sort -V | tail -n1)
	if [ -z "$stock" ]; then
		echo "no /usr/src/linux-headers-*-amd64: run make deps"
		result fail debian-6.1-headers
	else
		dkms_build "debian-$(basename "$stock" | sed 's/linux-headers-//')" "$stock"
		dkms_build_warning "debian-$(basename "$stock" | sed 's/linux-headers-//')" "$stock"
	fi

	newest_src=$("$root/tests/vm/fetch-kernel.sh" "$newest")
	checkpatch "$newest_src"

	# The netlink spec against the UAPI header, by the kernel's own generator.
	echo "== netlink spec (Documentation/netlink/specs/af_smbdirect.yaml)"
	if bash "$root/tests/genl-spec.sh" "$root" "$newest_src"; then
		result pass genl-spec
	else
		result fail genl-spec
	fi

	# Newest first, the order make check's VM phase builds them in (the
	# user-space kernel first): this part waits for that build instead of
	# starting another beside it. dkms builds for the newest test kernel
	# and the stock 6.1 headers: Debian's oldest and the newest kernel the
	# product build meets; the other test kernels' W=1 compile is their
	# KUnit build (the same files and more), and 6.12's product build the
	# arm64 one below (each module build is ~1 CPU minute of a cold run).
	for s in $(printf '%s\n' $series | sort -rV); do
		kdir=$("$root/tests/vm/build-kernel.sh" "$s") || { result fail "kernel-$s"; continue; }
		[ "$s" != "$newest" ] || dkms_build "test-kernel-$s" "$kdir"
		MBUILD=${SD_SHARED_MODULE_BUILD:-} compile "test-kernel-$s-kunit" "$kdir" SMBDIRECT_KUNIT=1
	done

fi

# ---- other architectures, the newest kernel -----------------------------
#
# The product build (`make module`, W=1) against trees tests/cross/prepare.sh
# builds and caches (a few minutes each, once).
cross() { # name arch series
	local kdir args
	echo "== $1: preparing the $2 $3 tree"
	kdir=$("$root/tests/cross/prepare.sh" "$2" "$3") || { result fail "$1"; return; }
	read -r -a args <<<"$("$root/tests/cross/prepare.sh" --make-args "$2")"
	compile "$1" "$kdir" "${args[@]}"
}
[ "$part" = native ] && exit $rc
cross cross-arm64-6.12 arm64 6.12

# The newest kernel is experimental's when it carries one newer than the
# test kernels; when it carries none (fetch-experimental.sh exits 3), one
# line says so and nothing is recorded.
exp_log=$build/logs/module-experimental.log
xs=$("$root/tests/cross/fetch-experimental.sh" --newest 2>"$exp_log")
case $? in
0)	if [ "$(printf '%s\n' "$xs" "$newest" | sort -V | tail -n1)" = "$newest" ]; then
		echo "== newest kernel: experimental's linux-source-$xs is no newer than the test kernels: not compiled"
	else
		cross "experimental-$xs" x86_64 "$xs"
	fi ;;
3)	echo "== newest kernel: $(tail -n1 "$exp_log"): not compiled" ;;
*)	tail -n 5 "$exp_log"; result fail experimental-newest ;;
esac
exit $rc
