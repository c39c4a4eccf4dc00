#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ksmbd against an AF_SMBDIRECT client of ours: ksmbd.mountd with a
# minimal configuration (one share on tmpfs, user U), then
# interop_ksmbd_client connects to ksmbd's SMB-Direct listener, prints the
# negotiated parameters, sends an SMB2 NEGOTIATE request it builds itself
# and checks the SMB2 NEGOTIATE response. ksmbd listens on 0.0.0.0:445 for
# IB/RoCE devices and 0.0.0.0:5445 for iWARP ones (IPv4 only), so: rxe
# 10.77.0.1:445 and siw 10.77.0.2:5445. TAP on stdout.
#
# ksmbd is left running: stopping it (ksmbd.control -s, or a reset after
# mountd dies) hits a KASAN use-after-free in smb_direct_listener_destroy
# on Linux 7.2.13 (kthread_stop() on a listener thread that has already
# exited), which panics the test guest. Run this script last (glob order:
# it sorts after cifs.sh, which needs port 445 free).
set -u
. "$(dirname "$0")/common.bash"

client=$(helper interop_ksmbd_client)
share=/tmp/sd-ksmbd-share

# case NAME ADDR PORT
run_case() {
	local name=$1 log=/tmp/sd-ksmbd-$1.log rc why
	timeout -s KILL 120 "$client" "$2" "$3" >"$log" 2>&1
	rc=$?
	sed "s/^/# $name: /" "$log"
	if [ "$rc" -eq 0 ]; then
		tap_ok "$name"
	else
		[ "$rc" -eq 137 ] && echo "client killed after 120 s" >>"$log"
		why=$(first_error "$log")
		tap_fail "$name" "$why"
		case $why in socket:*) ;; *)
			dmesg | grep -i -E 'ksmbd|smbdirect' | grep -v af_smbdirect | tail -n 8 |
				sed "s/^/# dmesg: /" ;;
		esac
	fi
}

names=(ksmbd-rdma-rxe4-negotiate ksmbd-rdma-siw4-negotiate)
tap_plan 2
skip_all() { for n in "${names[@]}"; do tap_skip "$n" "$1"; done; tap_exit; }
command -v ksmbd.mountd >/dev/null || skip_all "ksmbd-tools are not installed"
grep -q ksmbd /proc/filesystems /proc/modules 2>/dev/null ||
	[ -d /sys/module/ksmbd ] || [ -d /sys/class/ksmbd-control ] ||
	skip_all "no ksmbd in this kernel"
[ -x "$client" ] || { for n in "${names[@]}"; do tap_fail "$n" "$client was not built"; done; tap_exit; }

mkdir -p "$share" /etc/ksmbd
cat >/etc/ksmbd/ksmbd.conf <<CONF || skip_all "/etc/ksmbd is not writable"
[global]
	server min protocol = SMB2_10
[share]
	path = $share
	read only = no
CONF
ksmbd.adduser -a U -p P >/dev/null 2>&1 || ksmbd.adduser -u U -p P >/dev/null 2>&1
ensure_siw_on_veth1 || echo "# could not add a siw link on veth1"
if ! pgrep -x ksmbd.mountd >/dev/null; then
	# -n: stay in the foreground (it prints nothing, even with -v).
	ksmbd.mountd -n >/dev/null 2>&1 </dev/null &
fi
up=0
for ((i = 0; i < 300; i++)); do
	rdma resource show cm_id 2>/dev/null | grep -q 'LISTEN.*:445 ' && { up=1; break; }
	sleep 0.1
done
if [ "$up" = 0 ]; then
	rdma resource show cm_id | sed 's/^/# cm_id: /'
	for n in "${names[@]}"; do tap_fail "$n" "ksmbd's SMB-Direct listener did not come up in 30 s"; done
	tap_exit
fi
rdma resource show cm_id | grep LISTEN | sed 's/^/# /'

run_case ksmbd-rdma-rxe4-negotiate 10.77.0.1 445
run_case ksmbd-rdma-siw4-negotiate 10.77.0.2 5445
echo "# ksmbd left running (see the header of this script)"
tap_exit
