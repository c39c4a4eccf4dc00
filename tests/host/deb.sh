#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages, built and judged on the host (never installed):
#
#   tests/host/deb.sh <repo-root> <build-dir>
#
# host-deb/build    `make deb`: `make dist`'s tarball as the .orig.tar.xz,
#                   unpacked in BUILD/deb with userspace/packaging/debian as
#                   debian/, dpkg-buildpackage -us -uc: the 3.0 (quilt)
#                   source package and the binaries (dpkg-buildflags with
#                   hardening=+all and
#                   _FORTIFY_SOURCE=3, no -Werror, dpkg-gensymbols at level
#                   4 against debian/libsmbdirect0.symbols)
# host-deb/lintian  lintian on the .changes: any error, warning, info or
#                   pedantic tag fails (experimental ones are shown; the
#                   overrides in debian/ say why each is there)
# host-deb/no-rpath no ELF file in any package has an RPATH or RUNPATH
# host-deb/contents each package holds what it must and nothing of the
#                   others': libsmbdirect.so.0 needs libc only (its NEEDED)
#                   and holds no C++ runtime (no __cxa_*, __gxx_*, _Unwind_*,
#                   std:: or operator new symbol, wanted or defined, and
#                   none of libstdc++'s messages),
#                   the UAPI header under usr/include/smbdirect/,
#                   nothing under usr/include/linux/; the DKMS source and a
#                   postinst that adds af_smbdirect/VERSION (VERSION =
#                   MODULE_VERSION in kernel/main.c); smbdirect-tools
#                   depends on the package of each library libsmbdirect
#                   loads at run time (libnl-route: `smbdirect dev`)
# host-deb/copyright debian/copyright agrees with the SPDX line of every
#                   file of the source package (tests/host/copyright.py)
# host-deb/reproducible
#                   the release tarball unpacked at another path
#                   (BUILD/repro/...) and `make deb` run there gives the same
#                   .deb files and .dsc, byte for byte (cmp; on a difference,
#                   the files that differ are named); both take their dates
#                   from the changelog
# host-deb/userspace-buildflags
#                   `make userspace` with dpkg-buildflags' variables exported
#                   (hardening=+all, _FORTIFY_SOURCE raised to 3), as a
#                   distribution's own scripts would: it builds, every
#                   compile has _FORTIFY_SOURCE=3 and -Werror=format-security
#                   and none -Werror, and `make install DESTDIR PREFIX=/usr`
#                   leaves no RPATH in an installed ELF file
# One "pass|fail host-deb/<name>" line each in $SMBDIRECT_RESULTS. make
# check runs it as the first half of the VM phase's "deb" boot
# (tests/vm/deb-vm.sh, which then installs, uses and purges the packages).
set -u -o pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 <repo-root> <build-dir>" >&2
	exit 2
fi
repo=$(realpath "$1")
mkdir -p "$2"
build=$(realpath "$2")
results=${SMBDIRECT_RESULTS:-}
status=0
record() { # record pass|fail name
	[ -n "$results" ] && echo "$1 $2" >>"$results"
	[ "$1" = pass ] || status=1
}

version=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' "$repo/kernel/main.c")
log=$build/deb.log
deb=$build/deb
# make deb runs lintian last: a build failure and a lintian failure are told
# apart by whether the .changes exists.
make --no-print-directory -C "$repo" deb BUILD="$build" >"$log" 2>&1
rc=$?
changes=$(ls "$deb"/smbdirect_*.changes 2>/dev/null | head -n 1)
if [ -z "$changes" ]; then
	echo "deb: dpkg-buildpackage failed (exit $rc); the end of $log:"
	tail -n 40 "$log"
	record fail host-deb/build
	record fail host-deb/lintian
	record fail host-deb/no-rpath
	record fail host-deb/contents
	record fail host-deb/reproducible
	record fail host-deb/userspace-buildflags
	exit 1
fi
record pass host-deb/build
echo "deb: built $(cd "$deb" && echo *.deb)"
# Pedantic tags fail here, not by lintian's --fail-on (2.116 counts the
# overridden ones there): make deb displays them.
tags=$(sed -n '/^lintian /,$p' "$log" | grep -E '^[EWIP]: ')
if [ $rc -eq 0 ] && [ -z "$tags" ]; then
	echo "deb: lintian: no tag (pedantic and info included; experimental ones, if any, in $log)"
	record pass host-deb/lintian
else
	echo "deb: lintian failed (make deb's exit $rc):"
	echo "$tags" | head -n 40
	record fail host-deb/lintian
fi

x=$build/deb-extract
rm -rf "$x"
for d in "$deb"/*.deb; do
	p=$(basename "$d" | cut -d_ -f1)
	mkdir -p "$x/$p"
	dpkg-deb -x "$d" "$x/$p" && dpkg-deb -e "$d" "$x/$p/DEBIAN"
done

rpath=$(find "$x" -type f -not -path '*/DEBIAN/*' | while read -r f; do
	readelf -d "$f" 2>/dev/null | grep -qE '\((RPATH|RUNPATH)\)' && echo "${f#"$x"/}"
done)
if [ -z "$rpath" ]; then
	record pass host-deb/no-rpath
else
	echo "deb: RPATH/RUNPATH in: $rpath"
	record fail host-deb/no-rpath
fi

missing=()
want() { # package path-glob
	compgen -G "$x/$1/$2" >/dev/null || missing+=("$1:$2")
}
want af-smbdirect-dkms "usr/src/af_smbdirect-$version/dkms.conf"
want af-smbdirect-dkms "usr/src/af_smbdirect-$version/Kbuild"
want af-smbdirect-dkms "usr/src/af_smbdirect-$version/kernel/main.c"
want af-smbdirect-dkms "usr/src/af_smbdirect-$version/kernel/core/smbdirect_core.h"
want af-smbdirect-dkms "usr/src/af_smbdirect-$version/uapi/linux/smbdirect.h"
want libsmbdirect0 "usr/lib/*/libsmbdirect.so.0"
want libsmbdirect-dev "usr/include/smbdirect/smbdirect.h"
want libsmbdirect-dev "usr/include/smbdirect/smbdirect.hpp"
want libsmbdirect-dev "usr/include/smbdirect/linux/smbdirect.h"
want libsmbdirect-dev "usr/include/smbdirect/linux/smbdirect_genl.h"
want libsmbdirect-dev "usr/lib/*/pkgconfig/smbdirect.pc"
want libsmbdirect-dev "usr/lib/*/cmake/smbdirect/smbdirectConfig.cmake"
want libsmbdirect-dev "usr/share/man/man3/smbdirect_socket.3.gz"
want libsmbdirect-dev "usr/share/man/man7/smbdirect.7.gz"
want smbdirect-tools "usr/bin/smbdirect"
want smbdirect-tools "usr/lib/*/smbdirect/libsmbdirect-preload.so"
want smbdirect-tools "usr/share/man/man8/smbdirect.8.gz"
bad=()
[ -z "$(find "$x" -path '*/usr/include/linux*' -print -quit)" ] ||
	bad+=("a header under usr/include/linux (linux-libc-dev's)")
[ -z "$(find "$x" -name 'smbdirect-example-*' -print -quit)" ] || bad+=("the examples are shipped")
grep -q "af_smbdirect" "$x/af-smbdirect-dkms/DEBIAN/postinst" 2>/dev/null &&
	grep -q "$version" "$x/af-smbdirect-dkms/DEBIAN/postinst" ||
	bad+=("af-smbdirect-dkms's postinst does not name af_smbdirect $version")
grep -q "^Depends:.*dkms" "$x/af-smbdirect-dkms/DEBIAN/control" || bad+=("af-smbdirect-dkms does not depend on dkms")
# A C library needs libc only (libnl is loaded when interfaces are listed),
# and holds no C++ runtime either (issue #49: libstdc++ and libgcc were
# linked in statically, an embedded copy libstdc++'s security fixes never
# reach). Any C++ runtime symbol in its dynamic table, defined or wanted
# (libc's own __cxa_finalize@GLIBC aside), or the messages libstdc++'s
# code carries (the library is stripped), says one is needed or inside.
cxx_runtime='^(__cxa_|__gxx_|__dynamic_cast|_Unwind_|_ZSt|_ZNSt|_ZNKSt|_ZTI|_ZTS|_ZTV|_Znw|_Zna|_Zdl|_Zda|_ZGT)'
for so in "$x"/libsmbdirect0/usr/lib/*/libsmbdirect.so.0.*; do
	needed=$(readelf -d "$so" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
		grep -v -x -E 'libc\.so\.6|ld-linux[-.a-z0-9_]*\.so\.[0-9]+' | tr '\n' ' ')
	[ -z "$needed" ] || bad+=("libsmbdirect.so.0 needs more than libc: $needed")
	runtime=$(nm -D "$so" 2>/dev/null | awk '{ print $NF }' | grep -E "$cxx_runtime" |
		grep -v '@GLIBC_' | tr '\n' ' ')
	[ -z "$runtime" ] || bad+=("libsmbdirect.so.0 has C++ runtime symbols: $runtime")
	embedded=$(strings -a "$so" | grep -E '^(basic_string::|vector::|terminate called|pure virtual method called)' |
		sort -u | head -n 3 | tr '\n' ' ')
	[ -z "$embedded" ] || bad+=("libsmbdirect.so.0 holds libstdc++'s code: $embedded")
done
# What the library loads at run time (dlopen: libnl-route for the interface
# list `smbdirect dev` shows) is only Recommended by libsmbdirect0; the
# tools, whose commands need it, depend on each such package (issue #49:
# installed with --no-install-recommends, `smbdirect dev` failed).
for so in "$x"/libsmbdirect0/usr/lib/*/libsmbdirect.so.0.*; do
	for lib in $(strings -a "$so" | grep -E '^lib[a-z0-9-]+\.so\.[0-9]+$' |
			grep -v -x -E 'libc\.so\.6|libsmbdirect\.so\.0' | sort -u); do
		pkg=$(dpkg -S "*/$lib" 2>/dev/null | head -n1 | cut -d: -f1)
		if [ -z "$pkg" ]; then
			bad+=("libsmbdirect.so.0 loads $lib, which no installed package holds")
		elif ! grep -q -E "^Depends:.*(^|[ ,])$pkg([ ,(]|$)" "$x/smbdirect-tools/DEBIAN/control"; then
			bad+=("smbdirect-tools does not depend on $pkg ($lib, loaded by the library)")
		fi
	done
done
if [ ${#missing[@]} -eq 0 ] && [ ${#bad[@]} -eq 0 ]; then
	echo "deb: every package holds what it must"
	record pass host-deb/contents
else
	echo "deb: missing: ${missing[*]:-none}; wrong: ${bad[*]:-none}"
	record fail host-deb/contents
fi
# debian/copyright against every shipped file's SPDX line (issue #49).
if python3 "$repo/tests/host/copyright.py" "$repo"; then
	record pass host-deb/copyright
else
	record fail host-deb/copyright
fi
# --- the same packages from another path --------------------------------------
# The release tarball the first build made (its .orig.tar.xz) unpacked at
# another path, and make deb run there into another BUILD: every .deb and
# the .dsc must be the same, byte for byte (issue #49: /usr/bin/smbdirect
# kept the build tree's RUNPATH string in .dynstr after CMake's
# install-time RPATH removal). Both take their dates from the changelog.
repro=$build/repro
rsrc=$repro/elsewhere/smbdirect-source-copy
rm -rf "$repro"
mkdir -p "$rsrc"
tar -C "$rsrc" --strip-components=1 -xf "$deb/smbdirect_$version.orig.tar.xz"
start=$(date +%s)
make --no-print-directory -C "$rsrc" deb BUILD="$repro/build" >"$repro.log" 2>&1
rc=$?
echo "deb: the second build, from $rsrc, took $(($(date +%s) - start)) s (exit $rc)"
differ=()
for d in "$deb"/*.deb "$deb"/*.dsc; do
	n=$(basename "$d")
	other=$repro/build/deb/$n
	if [ ! -f "$other" ]; then
		differ+=("$n: not built there (log: $repro.log)")
		continue
	fi
	cmp -s "$d" "$other" && continue
	case $n in *.dsc) differ+=("$n: $(diff "$d" "$other" | grep -c '^>') lines"); continue ;; esac
	# Name the files that differ: both packages unpacked, compared file by file.
	mkdir -p "$repro/x/1/$n" "$repro/x/2/$n"
	dpkg-deb -R "$d" "$repro/x/1/$n" && dpkg-deb -R "$other" "$repro/x/2/$n"
	files=$(cd "$repro/x/1/$n" && find . -type f | sort | while read -r f; do
		cmp -s "$f" "$repro/x/2/$n/$f" || echo "${f#./}"
	done | head -n 5 | tr '\n' ' ')
	differ+=("$n: ${files:-the archive only (no file differs)}")
done
if [ ${#differ[@]} -eq 0 ]; then
	echo "deb: the same $(ls "$deb"/*.deb | wc -l) packages and .dsc, byte for byte, from $rsrc"
	rm -rf "$rsrc" "$repro/build/deb/smbdirect-$version"
	record pass host-deb/reproducible
else
	echo "deb: built from $rsrc, the packages differ: ${differ[*]}"
	command -v diffoscope >/dev/null &&
		echo "deb: diffoscope $deb/<package>.deb $repro/build/deb/<package>.deb shows how"
	record fail host-deb/reproducible
fi

# --- make userspace under dpkg-buildflags ------------------------------------
fb=$build/buildflags
rm -rf "$fb"
flog=$build/buildflags.log
(
	export DEB_BUILD_MAINT_OPTIONS=hardening=+all
	eval "$(dpkg-buildflags --export=sh)"
	CPPFLAGS="${CPPFLAGS/_FORTIFY_SOURCE=2/_FORTIFY_SOURCE=3}"
	export CPPFLAGS
	make --no-print-directory -C "$repo" userspace BUILD="$fb" PREFIX=/usr &&
		make --no-print-directory -C "$repo" install-userspace BUILD="$fb" PREFIX=/usr \
			DESTDIR="$fb/stage"
) >"$flog" 2>&1
rc=$?
why=
if [ $rc -ne 0 ]; then
	why="make userspace/install-userspace failed (exit $rc): $(grep -m3 -E 'error|Error' "$flog" | tr '\n' ' ')"
else
	why=$(python3 - "$fb/userspace/build/compile_commands.json" <<'PY'
import json, sys
cmds = json.load(open(sys.argv[1]))
bad = []
for c in cmds:
    f = c["file"].rsplit("/", 1)[-1]
    words = c["command"].split()
    if "-D_FORTIFY_SOURCE=3" not in words:
        bad.append(f + ": no -D_FORTIFY_SOURCE=3")
    if "-Werror=format-security" not in words:
        bad.append(f + ": no -Werror=format-security")
    if "-Werror" in words:
        bad.append(f + ": -Werror")
print("; ".join(bad[:5]) + (f" (and {len(bad) - 5} more)" if len(bad) > 5 else "") if bad
      else "" if cmds else "no compile commands")
PY
)
	rp=$(find "$fb/stage" -type f | while read -r f; do
		readelf -d "$f" 2>/dev/null | grep -qE '\((RPATH|RUNPATH)\)' && echo "${f#"$fb/stage"}"
	done)
	[ -z "$rp" ] || why+=" RPATH/RUNPATH in:$(echo "$rp" | tr '\n' ' ')"
fi
if [ -z "$why" ]; then
	echo "deb: make userspace under dpkg-buildflags: $(grep -c '"file"' \
		"$fb/userspace/build/compile_commands.json") compiles with _FORTIFY_SOURCE=3, none -Werror; no RPATH installed"
	record pass host-deb/userspace-buildflags
else
	echo "deb: make userspace under dpkg-buildflags: $why (log: $flog)"
	record fail host-deb/userspace-buildflags
fi
exit $status
