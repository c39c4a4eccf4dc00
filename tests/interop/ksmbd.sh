#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ksmbd against an AF_SMBDIRECT client of ours: ksmbd.mountd with a
# minimal configuration (one share on tmpfs, user U), then
# interop_ksmbd_client connects to ksmbd's SMB-Direct listener, prints the
# negotiated parameters, sends an SMB2 NEGOTIATE request it builds itself
# and checks the SMB2 NEGOTIATE response. ksmbd listens on 0.0.0.0 (IPv4
# only): since 7.x on 445 for IB/RoCE devices and on 5445 for iWARP ones;
# before (6.12) on one port for all devices, 5445 as soon as any iWARP
# device exists. So rxe 10.77.0.1 and siw 10.77.0.2, each on the port
# ksmbd listens on for it. TAP on stdout.
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

# What ksmbd (6.12 and 7.x alike) accepts our request of 8/8 with, seen from
# our side: it serves 1 READ and issues up to 8, so over RoCE we may issue 1
# and serve 8. Over iWARP siw's relaxed IRD negotiation raises the
# responder's IRD to the initiator's ORD when it accepts, so ksmbd's QP
# really serves our 8: iw_cm reports 8/8 and so do we.
ksmbd_rd_depths() { # case-name
	case $1 in
	*-rxe*) echo 1/8 ;;
	*-siw*) echo 8/8 ;;
	esac
}

# case NAME ADDR PORT
run_case() {
	local name=$1 log=/tmp/sd-ksmbd-$1.log rc why
	SD_EXPECT_RD_DEPTHS=$(ksmbd_rd_depths "$name") \
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
# A deadline in seconds: each round of rdma + grep costs most of a second
# in the TCG guest, so counting rounds would wait far longer than meant.
# One port alone may be the first of two listeners (7.x): wait a few
# seconds more for the other before taking it as the only one (6.12).
listening= first=
deadline=$((SECONDS + 30))
while [ "$SECONDS" -lt "$deadline" ]; do
	listening=$(rdma resource show cm_id 2>/dev/null | grep LISTEN)
	grep -q ':445 ' <<<"$listening" && grep -q ':5445 ' <<<"$listening" && break
	if grep -q ':445 \|:5445 ' <<<"$listening"; then
		: "${first:=$SECONDS}"
		[ $((SECONDS - first)) -ge 3 ] && break
	fi
	sleep 0.5
done
if ! grep -q ':445 \|:5445 ' <<<"$listening"; then
	rdma resource show cm_id | sed 's/^/# cm_id: /'
	for n in "${names[@]}"; do tap_fail "$n" "ksmbd's SMB-Direct listener did not come up in 30 s"; done
	tap_exit
fi
sed 's/^/# /' <<<"$listening"
# RoCE on 445 where ksmbd listens there, else on its one port (5445);
# iWARP on 5445 where ksmbd listens there, else on 445.
rxe_port=5445 siw_port=445
grep -q ':445 ' <<<"$listening" && rxe_port=445
grep -q ':5445 ' <<<"$listening" && siw_port=5445

run_case ksmbd-rdma-rxe4-negotiate 10.77.0.1 "$rxe_port"
run_case ksmbd-rdma-siw4-negotiate 10.77.0.2 "$siw_port"
echo "# ksmbd left running (see the header of this script)"
tap_exit
