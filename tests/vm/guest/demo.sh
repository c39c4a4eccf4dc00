#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the test VM for `make demo`. Usage: demo.sh DEMO_BUILD_DIR
set -u
bin=$1
out=$SD_OUT/demo.txt
exec > "$out" 2>&1

echo "kernel: $(uname -r)"
echo "RDMA links:"
rdma link show | sed 's/^/  /'
insmod "$SD_MODULE_DIR/af_smbdirect.ko" || exit 1
echo "dmesg: $(dmesg | grep 'af_smbdirect: loaded' | tail -n1 | sed -E 's/^\[[ 0-9.]+\] //')"
echo "address family: $(cat /sys/module/af_smbdirect/parameters/family)" \
	"(published in /sys/module/af_smbdirect/parameters/family)"
if grep -q ' smbdirect_socket_create_kern$' /proc/kallsyms; then
	echo "in-tree smbdirect (used by cifs and ksmbd) is present too"
fi
state=$(cat /sys/module/af_smbdirect/initstate)
[ "$state" = live ] && echo "af_smbdirect is loaded (initstate: $state)"

head -c 4194304 /dev/urandom > /tmp/demo-in
want=$(sha256sum < /tmp/demo-in | cut -d' ' -f1)
transfer() { # name addr port
	rm -f /tmp/demo-out
	"$bin/smbdirect" recv "$2" "$3" /tmp/demo-out &
	local rpid=$!
	sleep 1
	timeout 300 "$bin/smbdirect" send "$2" "$3" /tmp/demo-in
	wait $rpid
	local got
	got=$(sha256sum < /tmp/demo-out 2>/dev/null | cut -d' ' -f1)
	if [ "$got" = "$want" ]; then
		echo "transfer over $1: 4 MiB, sha256 $want, checksum ok"
	else
		echo "transfer over $1: checksum MISMATCH (sent $want, got ${got:-nothing})"
	fi
}
transfer "rxe (RoCEv2, 10.77.0.1)" 10.77.0.1 7000
transfer "siw (iWARP, 10.77.0.2)" 10.77.0.2 7001

echo "ksmbd (the kernel's SMB server) over SMB-Direct, from our client socket:"
SD_SELFTESTS=$bin/selftests bash "$SD_REPO/tests/interop/ksmbd.sh" |
	sed -n 's/^# ksmbd-rdma-\(.*\)-negotiate: /  \1: /p; s/^\(not \)\{0,1\}ok [0-9]* /  result: &/p'
exit 0
