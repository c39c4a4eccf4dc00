#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tests/vm/deb-vm.sh: deb.sh VERSION PROGRAM SRC
#
# The root is the scratch root deb-vm.sh installed the Debian packages
# into (an overlay of the host's root): the module DKMS built and
# installed under /lib/modules/$(uname -r)/updates/dkms, the packaged
# /usr/bin/smbdirect and libsmbdirect.so.0, and PROGRAM, the C program
# built there with pkg-config (tests/vm/deb-smoke.c), and SRC, the source
# package unpacked (its debian/tests). Nothing is loaded from the
# repository. TAP in $SD_OUT/deb.tap, dmesg in $SD_OUT/dmesg.txt.
set -u
version=$1 program=$2 srcdir=$3
out=$SD_OUT
# shellcheck source=tests/interop/common.bash
. "$SD_REPO/tests/interop/common.bash"
exec >"$out/deb.tap" 2>&1
tmp=$(mktemp -d)
tap_plan 9

# 1. modprobe finds the module where DKMS put it, and loads that file.
kver=$(uname -r)
if modprobe af_smbdirect 2>"$tmp/mp.err"; then
	path=$(modinfo -n af_smbdirect 2>/dev/null)
	src=$(modinfo -F srcversion af_smbdirect 2>/dev/null)
	loaded=$(cat /sys/module/af_smbdirect/srcversion 2>/dev/null)
	mver=$(cat /sys/module/af_smbdirect/version 2>/dev/null)
	case $path in
	"/lib/modules/$kver/updates/dkms/af_smbdirect.ko"*)
		if [ -n "$src" ] && [ "$src" = "$loaded" ] && [ "$mver" = "$version" ]; then
			tap_ok "deb.module # modprobe loaded $path, version $mver"
		else
			tap_fail deb.module "loaded srcversion '$loaded' version '$mver', $path has '$src', want version $version"
		fi ;;
	*) tap_fail deb.module "modprobe loaded '$path', not DKMS's /lib/modules/$kver/updates/dkms/af_smbdirect.ko" ;;
	esac
else
	tap_fail deb.module "modprobe af_smbdirect failed" "$tmp/mp.err"
fi

# 2. The packaged command: its version (one version everywhere: the
#    command's, the library's, the module's), the RDMA devices over netlink.
sd=$(command -v smbdirect)
got=$("$sd" --version 2>&1)
want="smbdirect $version (libsmbdirect $version)"
if [ "$sd" = /usr/bin/smbdirect ] && [ "$got" = "$want" ]; then
	tap_ok "deb.tool # $sd --version: $got"
else
	tap_fail deb.tool "smbdirect is '$sd', --version said '$got', want /usr/bin/smbdirect and '$want'"
fi
if "$sd" dev --json >"$tmp/dev.json" 2>"$tmp/dev.err" && grep -q '"rxe0"' "$tmp/dev.json"; then
	tap_ok "deb.tool-dev # smbdirect dev --json lists rxe0"
else
	tap_fail deb.tool-dev "smbdirect dev --json did not list rxe0" "$tmp/dev.json" "$tmp/dev.err"
fi
# As after `apt-get install --no-install-recommends smbdirect-tools`: the
# scratch root overlays a host that has libnl, so every library the
# command loads (libnl-3 and libnl-route-3, which libsmbdirect opens when
# first asked for interfaces) is hidden (/dev/null bound over it in a
# mount namespace of its own) unless its package is in the Depends and
# Pre-Depends closure of smbdirect-tools, Recommends left out: deb-vm.sh
# wrote the closure and the libraries outside it from dpkg's database
# (here /var/lib is a tmpfs). A package that only Recommends what its
# commands load fails here.
libdir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
hide_dev=
while read -r l owner; do
	hide_dev+="mount --bind /dev/null $libdir/$l && "
	echo "# $l (package $owner) is outside smbdirect-tools' Depends closure: hidden"
done </opt/sd-deb-test/hide-dev
if [ ! -s /opt/sd-deb-test/closure ]; then
	tap_fail deb.tool-dev-depends "deb-vm.sh wrote no Depends closure of smbdirect-tools"
elif unshare --mount sh -c "${hide_dev}exec \"\$0\" dev --json" "$sd" >"$tmp/dev2.json" 2>"$tmp/dev2.err" &&
	grep -q '"rxe0"' "$tmp/dev2.json"; then
	tap_ok "deb.tool-dev-depends # smbdirect dev --json with only smbdirect-tools' Depends closure ($(wc -l </opt/sd-deb-test/closure) packages) visible"
else
	tap_fail deb.tool-dev-depends "smbdirect dev --json failed with the libraries outside smbdirect-tools' Depends closure hidden" \
		"$tmp/dev2.err" /opt/sd-deb-test/closure
fi

# 3. Data through the packaged command: `smbdirect cat` to its listener
#    over rxe0, IPv4.
head -c 300000 /dev/urandom >"$tmp/in"
: >"$tmp/l.err"
"$sd" cat -l -v --recv 10.77.0.1 7401 >"$tmp/out" 2>"$tmp/l.err" &
lpid=$!
if wait_for_line "$tmp/l.err" 30 listening "$lpid"; then
	"$sd" cat --send 10.77.0.1 7401 <"$tmp/in" >/dev/null 2>"$tmp/c.err"
	crc=$?
	wait "$lpid"
	lrc=$?
	if [ $crc -eq 0 ] && [ $lrc -eq 0 ] && cmp -s "$tmp/in" "$tmp/out"; then
		tap_ok "deb.tool-cat # 300000 bytes over rxe0"
	else
		tap_fail deb.tool-cat "connector exit $crc, listener exit $lrc, $(stat -c %s "$tmp/out") bytes received" \
			"$tmp/c.err" "$tmp/l.err"
	fi
else
	kill "$lpid" 2>/dev/null
	tap_fail deb.tool-cat "the listener did not start" "$tmp/l.err"
fi

# 4. The C program (pkg-config, libsmbdirect.so.0) over rxe0, IPv4, and
#    siw1, IPv6: a listener, a forked connector, one SOCK_STREAM message,
#    then smbdirect_interfaces(). Over siw it runs with libstdc++,
#    libgcc_s and libnl hidden (/dev/null bound over them in a mount
#    namespace of its own): a C program needs nothing of the library but
#    libc (libsmbdirect needs no C++ runtime and holds none:
#    tests/host/deb.sh's host-deb/contents checks its symbols), and
#    listing interfaces without libnl is a clear error.
msg="deb smoke $version $$"
hide=
for l in libstdc++.so.6 libgcc_s.so.1 libnl-3.so.200 libnl-route-3.so.200; do
	hide+="mount --bind /dev/null $libdir/$l && "
done
for where in "10.77.0.1 7402 rxe" "fd77::2 7403 siw"; do
	read -r host port name <<<"$where"
	if [ "$name" = rxe ]; then
		"$program" "$host" "$port" "$msg" >"$tmp/c.out" 2>"$tmp/c.err"
		want="RDMA-capable interface"
	else
		unshare --mount sh -c "$hide exec \"\$0\" \"\$@\"" "$program" "$host" "$port" "$msg" \
			>"$tmp/c.out" 2>"$tmp/c.err"
		want="interfaces: Can not access a needed shared library"
	fi
	rc=$?
	if [ $rc -eq 0 ] && grep -q "$want" "$tmp/c.out"; then
		tap_ok "deb.c-program-$name # $(cat "$tmp/c.out")"
	else
		tap_fail "deb.c-program-$name" "exit $rc, want '$want' in its output" "$tmp/c.err" "$tmp/c.out"
	fi
done

# 5. The module unloads (no socket left behind).
if rmmod af_smbdirect 2>"$tmp/rm.err"; then
	tap_ok "deb.rmmod"
else
	tap_fail deb.rmmod "rmmod af_smbdirect failed" "$tmp/rm.err"
fi
# 6. debian/tests/module-rxe as autopkgtest runs a needs-root,
#    isolation-machine test: from the unpacked source's top, as root,
#    AUTOPKGTEST_TMP set; exit 0 and nothing on stderr (no allow-stderr).
mkdir -p "$tmp/apt"
(cd "$srcdir" && AUTOPKGTEST_TMP=$tmp/apt debian/tests/module-rxe) >"$tmp/apt.out" 2>"$tmp/apt.err"
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$tmp/apt.err" ]; then
	tap_ok "deb.autopkgtest-module-rxe # $(paste -sd ';' "$tmp/apt.out")"
else
	tap_fail deb.autopkgtest-module-rxe "exit $rc (77: skipped), or stderr not empty" \
		"$tmp/apt.out" "$tmp/apt.err"
fi
dmesg >"$out/dmesg.txt"
tap_exit
