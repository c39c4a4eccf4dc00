#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb-vm.sh ROOT BUILD ["SERIES..."]
#
# The Debian packages as an administrator gets them, on each SERIES test
# kernel in turn (default 7.2; make check's VM phase runs this as its
# "deb" boot, on 7.2 and on 6.12, Debian 13's kernel, each with the
# variant make check boots for it: 6.12's with lockdep). Results are
# vm-deb/SERIES/<name>:
#
#   host-deb/*        tests/host/deb.sh: `make deb` from the tree, lintian,
#                     the packages' contents, no RPATH, the same packages
#                     from the release tarball unpacked elsewhere, make userspace
#                     under dpkg-buildflags
#   vm-deb/install    dpkg -i of the four packages into a scratch root: an
#                     overlay of the host's root (upper layer on a tmpfs,
#                     in a mount namespace of its own, so nothing of it
#                     reaches the host) whose only kernel is the test
#                     kernel, its build tree as the headers. dpkg runs
#                     af-smbdirect-dkms's postinst as a distribution does:
#                     DKMS builds and installs the module for it.
#   vm-deb/pkg-config tests/vm/deb-smoke.c built in the scratch root with
#                     `cc ... $(pkg-config --cflags --libs smbdirect)`
#   vm-deb/autopkgtest (the first SERIES only: it never boots a test kernel)
#                     the source package's debian/tests with autopkgtest
#                     (-B, the null runner, in the scratch root): the
#                     README's examples built by pkg-config and run without
#                     the module, the tools' --version and --help (module-rxe,
#                     isolation-machine, runs in the guest)
#   vm-deb/guest      the test VM boots the scratch root (run-vm.sh's
#                     SD_VM_ROOT) and runs tests/vm/guest/deb.sh: modprobe
#                     loads DKMS's module, the packaged smbdirect, the C
#                     program to the packaged `smbdirect cat -l` over rxe
#                     (IPv4) and siw (IPv6), rmmod, then debian/tests/
#                     module-rxe as autopkgtest runs a needs-root,
#                     isolation-machine test; each a TAP case
#   vm-deb/dmesg      no KASAN, lockdep or other report in the guest
#   vm-deb/purge      dpkg --purge of the four packages leaves nothing: no
#                     file or directory in the overlay's upper layer that
#                     was not there before dpkg -i, but dpkg's and
#                     debconf's own databases, dpkg's log, ld.so's cache,
#                     apt's own state (autopkgtest's satdep package) and
#                     the kernel's module index (which must not name
#                     af_smbdirect)
#
# The guest reads the scratch root while the host may change its own: the
# overlay's lower layer is the live root, read-only here.
# Needs root (mounts, chroot), as make check's VM phase does.
set -uo pipefail
root=$1 build=$2 kernels=${3:-7.2}
res=${SMBDIRECT_RESULTS:-/dev/null}
series=${kernels%% *}
layer=vm-deb/$series
rec() { echo "$1 $layer/$2" >>"$res"; [ "$1" = pass ] || echo "FAIL: $layer/$2"; }
pkgs=(af-smbdirect-dkms libsmbdirect0 libsmbdirect-dev smbdirect-tools)

if [ -z "${SD_DEB_NAMESPACE:-}" ]; then
	echo "== Debian packages: build, lintian, install with DKMS, boot, purge"
	t0=$SECONDS
	# SD_DEB_REUSE=1 (a developer's loop): the packages an earlier run
	# left in BUILD/deb-check/deb, no host-deb results.
	if [ "${SD_DEB_REUSE:-0}" != 1 ]; then
		"$root/tests/host/deb.sh" "$root" "$build/deb-check"
		echo "== deb.sh: $((SECONDS - t0)) s"
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "deb-vm: the scratch root needs root (overlay mount, chroot); run make check as root"
		rec fail install
		exit 1
	fi
	# One scratch root and boot per kernel; autopkgtest (which runs in
	# the scratch root, never on a test kernel) with the first.
	rc=0 first=1
	for series in $kernels; do
		layer=vm-deb/$series
		echo "== deb-vm: $series"
		if ! kdir=$("$root/tests/vm/build-kernel.sh" "$series"); then
			rec fail install
			rc=1
			continue
		fi
		SD_DEB_NAMESPACE=1 SD_DEB_KDIR=$kdir SD_DEB_AUTOPKGTEST=$first \
			unshare --mount --propagation private "$0" "$root" "$build" "$series" || rc=1
		first=0
	done
	exit $rc
fi

# --- inside a mount namespace of our own: what is mounted here vanishes with it
kdir=$SD_DEB_KDIR
kver=$(<"$kdir/include/config/kernel.release")
version=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' "$root/kernel/main.c")
# libsmbdirect's version, from where CMake reads it (the header's macros).
libversion=$(awk '$1 == "#define" && $2 ~ /^SMBDIRECT_VERSION_(MAJOR|MINOR|PATCH)$/ { v[$2] = $3 }
	END { if (length(v) == 3) print v["SMBDIRECT_VERSION_MAJOR"] "." v["SMBDIRECT_VERSION_MINOR"] "." v["SMBDIRECT_VERSION_PATCH"] }' \
	"$root/userspace/lib/include/smbdirect/smbdirect.h")
[ -n "$libversion" ] || { echo "deb-vm: no SMBDIRECT_VERSION_* in smbdirect.h" >&2; exit 1; }
debs=()
for p in "${pkgs[@]}"; do
	d=
	for f in "$build/deb-check/deb/${p}_"*.deb; do [ -f "$f" ] && d=$f; done
	[ -n "$d" ] || { echo "deb-vm: no ${p}_*.deb in $build/deb-check/deb"; rec fail install; exit 1; }
	debs+=("$d")
done
s=$build/deb-vm-$series
out=$s.out
mkdir -p "$s" "$out"
rm -rf "${out:?}"/*
log=$out/host.log
: >"$log"
mount -t tmpfs -o size=3g,mode=0755 sd-deb-scratch "$s" || { rec fail install; exit 1; }
mkdir "$s/upper" "$s/work" "$s/root"
r=$s/root
if ! mount -t overlay sd-deb-root -o "lowerdir=/,upperdir=$s/upper,workdir=$s/work" "$r"; then
	echo "deb-vm: cannot mount an overlay of / (CONFIG_OVERLAY_FS on the host)"
	rec fail install
	exit 1
fi
binds() { # mount|umount: the chroot's /proc, /sys, /dev
	local d
	for d in proc sys dev; do
		if [ "$1" = mount ]; then mount --rbind "/$d" "$r/$d"; else umount -R "$r/$d"; fi
	done
}
in_root() {
	chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}

# The scratch root's kernels: the test kernel alone, its build tree as
# its headers (dkms's postinst, in a chroot whose `uname -r` is not
# installed, builds for every /lib/modules/* with a build directory).
# man-db's trigger (rebuilding the manual index) is switched off here, as
# only this scratch root sees it.
rm -rf "$r/lib/modules/"*
mkdir -p "$r/lib/modules/$kver" "$r/opt/sd-deb-test"
ln -s "$kdir" "$r/lib/modules/$kver/build"
rm -f "$r/var/lib/man-db/auto-update"
cp "${debs[@]}" "$root/tests/vm/deb-smoke.c" "$r/opt/sd-deb-test/"
# The source package, for its autopkgtests: as a .dsc for autopkgtest,
# and unpacked (/opt/sd-deb-test/src) for the guest's run of module-rxe.
dsc=$(ls "$build"/deb-check/deb/smbdirect_*.dsc 2>/dev/null | head -n 1)
if [ -n "$dsc" ]; then
	cp "$dsc" "$build"/deb-check/deb/smbdirect_*.orig.tar.xz \
		"$build"/deb-check/deb/smbdirect_*.debian.tar.xz "$r/opt/sd-deb-test/"
	dpkg-source -q -x "$dsc" "$r/opt/sd-deb-test/src" >>"$log" 2>&1
fi
before=$out/upper-before.txt
(cd "$s/upper" && find . | sort) >"$before"

binds mount
t0=$SECONDS
idebs=()
for d in "${debs[@]}"; do idebs+=("/opt/sd-deb-test/${d##*/}"); done
if in_root dpkg -i "${idebs[@]}" >>"$log" 2>&1 &&
	in_root dkms status -m af_smbdirect -v "$version" -k "$kver" >"$out/dkms-status" 2>&1 &&
	grep -q ': installed' "$out/dkms-status" &&
	[ -f "$r/lib/modules/$kver/updates/dkms/af_smbdirect.ko" ] &&
	[ "$(in_root dpkg-query -S /usr/bin/smbdirect 2>/dev/null)" = "smbdirect-tools: /usr/bin/smbdirect" ]; then
	echo "deb-vm: dpkg -i and DKMS's build for $kver: $((SECONDS - t0)) s; $(cat "$out/dkms-status")"
	rec pass install
	installed=1
else
	echo "deb-vm: dpkg -i failed or DKMS did not install af_smbdirect $version for $kver:"
	cat "$out/dkms-status" 2>/dev/null
	tail -n 40 "$log"
	find "$r/var/lib/dkms/af_smbdirect" -name make.log -exec tail -n 30 {} + 2>/dev/null
	rec fail install
	installed=0
fi

# The C program, as a C project builds it.
program=/opt/sd-deb-test/deb-smoke
if [ $installed = 1 ] &&
	in_root sh -c "cc -Wall -Wextra -Werror -o $program /opt/sd-deb-test/deb-smoke.c \$(pkg-config --cflags --libs smbdirect)" \
		>>"$log" 2>&1 &&
	[ "$(in_root pkg-config --modversion smbdirect)" = "$libversion" ]; then
	echo "deb-vm: deb-smoke.c built with pkg-config smbdirect $libversion"
	rec pass pkg-config
else
	echo "deb-vm: deb-smoke.c did not build with pkg-config (or its version is not $libversion):"
	tail -n 20 "$log"
	rec fail pkg-config
fi

# For the guest's deb.tool-dev-depends (`smbdirect dev` as after an
# install without recommends): the Depends and Pre-Depends closure of
# smbdirect-tools from dpkg's database (Recommends not followed), and the
# libraries libsmbdirect loads at run time whose package is outside it,
# which the guest hides. Computed here: the guest's /var/lib is a tmpfs,
# so dpkg's database is not seen there.
if [ $installed = 1 ]; then
	in_root dpkg-query -W -f='${Package} ${Depends}, ${Pre-Depends}\n' 2>>"$log" |
		awk -v root=smbdirect-tools '
			{ name = $1; $1 = ""; gsub(/\([^)]*\)|:any|:[a-z0-9]+/, ""); gsub(/[|,]/, " ")
			  deps[name] = $0 }
			END { n = 0; todo[n++] = root; seen[root] = 1
			      for (i = 0; i < n; i++) {
				      print todo[i]; k = split(deps[todo[i]], d, " ")
				      for (j = 1; j <= k; j++)
					      if (d[j] != "" && !(d[j] in seen)) {
						      seen[d[j]] = 1; todo[n++] = d[j]
					      }
			      } }' >"$r/opt/sd-deb-test/closure"
	: >"$r/opt/sd-deb-test/hide-dev"
	for l in libnl-3.so.200 libnl-route-3.so.200; do
		owner=$(in_root dpkg -S "*/$l" 2>/dev/null | sed -n '1s/:.*//p')
		grep -qx -e "${owner:-none}" "$r/opt/sd-deb-test/closure" ||
			echo "$l ${owner:-none}" >>"$r/opt/sd-deb-test/hide-dev"
	done
	echo "deb-vm: smbdirect-tools' Depends closure: $(wc -l <"$r/opt/sd-deb-test/closure") packages;" \
		"outside it: $(cut -d' ' -f1 "$r/opt/sd-deb-test/hide-dev" | paste -sd' ')"
fi

# The source package's autopkgtests (debian/tests/control) with
# autopkgtest itself, its null runner in the scratch root (which has the
# packages installed, so -B: nothing built, no archive needed):
# readme-examples and tools must pass. Not module-rxe: the null runner
# counts as a machine of its own, and a chroot shares the host's kernel
# (its modprobe and network devices would be the host's); the guest runs
# it below. No bytecode written into the scratch root (the purge check).
if [ "${SD_DEB_AUTOPKGTEST:-1}" != 1 ]; then
	: # the first kernel's run had them
elif [ $installed = 1 ] && [ -n "$dsc" ]; then
	in_root env PYTHONDONTWRITEBYTECODE=1 autopkgtest -B --test-name=readme-examples \
		--test-name=tools "/opt/sd-deb-test/${dsc##*/}" -- null >"$out/autopkgtest.log" 2>&1
	arc=$?
	sed -n '/@@@@ summary/,$p' "$out/autopkgtest.log" >"$out/autopkgtest.summary"
	if [ $arc -eq 0 ] && grep -qx 'readme-examples *PASS' "$out/autopkgtest.summary" &&
		grep -qx 'tools *PASS' "$out/autopkgtest.summary"; then
		echo "deb-vm: autopkgtest -B ... -- null: $(tail -n +2 "$out/autopkgtest.summary" | tr -s ' ' | paste -sd ';')"
		rec pass autopkgtest
	else
		echo "deb-vm: autopkgtest exit $arc; the end of its log:"
		tail -n 30 "$out/autopkgtest.log"
		rec fail autopkgtest
	fi
else
	rec fail autopkgtest
fi
binds umount

if [ $installed = 1 ]; then
	SD_VM_ROOT=$r SD_VM_QUIET=1 SD_VM_TIMEOUT=${SD_DEB_TIMEOUT:-600} SD_VM_APPEND=kmemleak=off \
		"$root/tests/vm/run-vm.sh" "$kdir" "$out" tests/vm/guest/deb.sh "$version" "$program" /opt/sd-deb-test/src
	vrc=$?
	cat "$out/deb.tap" 2>/dev/null
	if [ $vrc -eq 0 ] && ! grep -q '^not ok' "$out/deb.tap"; then
		rec pass guest
	else
		echo "deb-vm: the guest's exit $vrc; the end of its console:"
		tail -n 30 "$out/console.log"
		rec fail guest
	fi
	if [ -f "$out/dmesg.txt" ] && "$root/tests/vm/scan-dmesg.sh" "$out/dmesg.txt"; then
		rec pass dmesg
	else
		rec fail dmesg
	fi
else
	rec fail guest
	rec fail dmesg
fi

# dpkg --purge, then what is left in the upper layer.
binds mount
rm -rf "$r/opt/sd-deb-test"
in_root dpkg --purge "${pkgs[@]}" >>"$log" 2>&1
prc=$?
binds umount
left=$(cd "$s/upper" && find . | sort | comm -13 "$before" - | while read -r p; do
	case ${p#.} in
	/var/lib/dpkg | /var/lib/dpkg/* | /var/log | /var/log/dpkg.log | /var/log/apt | /var/log/apt/*) continue ;;
	/etc/ld.so.cache | /var/cache/ldconfig | /var/cache/ldconfig/*) continue ;;
	# apt's own state: autopkgtest installs and removes its dependency
	# package (autopkgtest-satdep) through apt
	/var/lib/apt/extended_states | /var/cache/apt | /var/cache/apt/*) continue ;;
	/var/cache/debconf | /var/cache/debconf/*) continue ;;
	/lib/modules/"$kver"/modules.* | /usr/lib/modules/"$kver"/modules.*)
		grep -qa af_smbdirect "$s/upper/$p" || continue ;;
	esac
	# a directory of the host's, copied up when something beneath it changed
	[ -d "$s/upper/$p" ] && [ -d "/$p" ] && continue
	echo "${p#.}"
done)
if [ $prc -eq 0 ] && [ -z "$left" ]; then
	echo "deb-vm: dpkg --purge ${pkgs[*]}: nothing left behind"
	rec pass purge
else
	echo "deb-vm: dpkg --purge exit $prc; left behind:"
	echo "$left" | head -n 40
	tail -n 20 "$log"
	rec fail purge
fi
cd / && umount "$r" && umount "$s"
