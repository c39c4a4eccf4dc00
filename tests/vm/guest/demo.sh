#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the test VM for `make demo`.
# Usage: demo.sh USERSPACE_BUILD SELFTEST_DIR
set -u
us=$1 selftests=$2
sd=$us/tools/smbdirect
out=$SD_OUT/demo.txt
exec > "$out" 2>&1
# wait helpers that start no process (sd_sleep, cm_id_lines)
. "$SD_REPO/tests/interop/common.bash"

echo "kernel: $(uname -r)"
insmod "$SD_MODULE_DIR/af_smbdirect.ko" || exit 1
echo "dmesg: $(dmesg | grep 'af_smbdirect: loaded' | tail -n1 | sed -E 's/^\[[ 0-9.]+\] //')"
echo "address family: $("$sd" family)" \
	"(published in /sys/module/af_smbdirect/parameters/family)"
if grep -q ' smbdirect_socket_create_kern$' /proc/kallsyms; then
	echo "in-tree smbdirect (used by cifs and ksmbd) is present too"
fi
state=$(cat /sys/module/af_smbdirect/initstate)
[ "$state" = live ] && echo "af_smbdirect is loaded (initstate: $state)"

echo
echo "\$ smbdirect dev"
"$sd" dev 2>&1 | sed 's/^/  /'

head -c 4194304 /dev/urandom > /tmp/demo-in
want=$(sha256sum < /tmp/demo-in | cut -d' ' -f1)
verify() { # what
	local got
	got=$(sha256sum < /tmp/demo-out 2>/dev/null | cut -d' ' -f1)
	if [ "$got" = "$want" ]; then
		echo "$1: 4 MiB, sha256 ${want:0:16}..., checksum ok"
	else
		echo "$1: checksum MISMATCH (sent ${want:0:16}..., got ${got:-nothing})"
	fi
}
# An SMB-Direct listener is an rdma_cm id in LISTEN state on its port.
wait_listen() { # port
	local deadline=$((SECONDS + 30))
	while [ $SECONDS -lt $deadline ]; do
		cm_id_lines "LISTEN.*:$1 "
		[ ${#sd_cm_ids[@]} -gt 0 ] && return 0
		sd_sleep 0.3
	done
	echo "nothing listens on port $1 after 30 s"
	return 1
}
# cat NAME ADDR PORT [--rdma]
cat_over() {
	local name=$1 addr=$2 port=$3 rpid
	shift 3
	rm -f /tmp/demo-out
	echo
	echo "\$ smbdirect cat -l $* $addr $port > out &   smbdirect cat -v $* $addr $port < in"
	timeout 300 "$sd" cat -l "$@" "$addr" "$port" > /tmp/demo-out &
	rpid=$!
	wait_listen "$port"
	timeout 300 "$sd" cat -v "$@" "$addr" "$port" < /tmp/demo-in 2>&1 | sed 's/^/  /'
	wait $rpid
	verify "$name"
}
cat_over "smbdirect cat over rxe (RoCEv2, 10.77.0.1)" 10.77.0.1 7000
cat_over "smbdirect cat over siw (iWARP, fd77::2)" fd77::2 7001
cat_over "smbdirect cat --rdma over rxe (RDMA WRITE into registered buffers)" 10.77.0.1 7002 --rdma
cat_over "smbdirect cat --rdma over siw (RDMA WRITE into registered buffers)" 10.77.0.2 7003 --rdma

# socat knows only TCP. Over SOCK_STREAM, SMB-Direct carries SMB's framing
# (4-byte big-endian length, then the message), so the file socat moves is a
# sequence of such messages, as an SMB connection's byte stream is.
python3 - /tmp/demo-in /tmp/demo-framed <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "wb") as f:
    for i in range(0, len(data), 65536):
        chunk = data[i:i + 65536]
        f.write(len(chunk).to_bytes(4, "big") + chunk)
PY
want=$(sha256sum < /tmp/demo-framed | cut -d' ' -f1)
rm -f /tmp/demo-out
echo
echo "\$ smbdirect run --listen --ports 7100 socat -u TCP-LISTEN:7100,bind=10.77.0.1 CREATE:out &"
echo "\$ SMBDIRECT_DEBUG=1 smbdirect run --ports 7100 socat -u OPEN:framed TCP:10.77.0.1:7100"
timeout 300 "$sd" run --listen --ports 7100 -- socat -u TCP-LISTEN:7100,bind=10.77.0.1 \
	CREATE:/tmp/demo-out &
rpid=$!
wait_listen 7100
SMBDIRECT_DEBUG=1 timeout 300 "$sd" run --ports 7100 -- socat -u OPEN:/tmp/demo-framed \
	TCP:10.77.0.1:7100 2>&1 | sed 's/^/  /'
wait $rpid
verify "socat under smbdirect run over rxe"

echo
echo "ksmbd (the kernel's SMB server) over SMB-Direct, from our client socket:"
SD_SELFTESTS=$selftests bash "$SD_REPO/tests/interop/ksmbd.sh" |
	sed -n 's/^# ksmbd-rdma-\(.*\)-negotiate: /  \1: /p; s/^\(not \)\{0,1\}ok [0-9]* /  result: &/p'
exit 0
