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

# case NAME ADDR PORT [inet]: with inet, the client's socket is
# socket(AF_INET, SOCK_STREAM, IPPROTO_SMBDIRECT) (upstream's proposed
# shape) and must say so in SO_DOMAIN/SO_PROTOCOL.
run_case() {
	local name=$1 log=/tmp/sd-ksmbd-$1.log rc why inet=0 want
	[ "${4:-}" = inet ] && inet=1
	SD_INET=$inet SD_EXPECT_RD_DEPTHS=$(ksmbd_rd_depths "$name") \
		timeout -s KILL 120 "$client" "$2" "$3" >"$log" 2>&1
	rc=$?
	sed "s/^/# $name: /" "$log"
	if [ "$rc" -eq 0 ] && [ $inet = 1 ]; then
		want="socket: SO_DOMAIN 2 SO_PROTOCOL $(cat /sys/module/af_smbdirect/parameters/inet_protocol)"
		grep -qx "$want" "$log" || { echo "no '$want' line" >>"$log"; rc=1; }
	fi
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

names=(ksmbd-rdma-rxe4-negotiate ksmbd-rdma-siw4-negotiate ksmbd-inet-rxe4-negotiate)
tap_plan 3
skip_all() { for n in "${names[@]}"; do tap_skip "$n" "$1"; done; tap_exit; }
ksmbd_start || { why=$ksmbd_error
	case $why in "ksmbd-tools are not installed" | "no ksmbd in this kernel" | \
		"/etc/ksmbd is not writable") skip_all "$why" ;; esac
	for n in "${names[@]}"; do tap_fail "$n" "$why"; done
	tap_exit; }
[ -x "$client" ] || { for n in "${names[@]}"; do tap_fail "$n" "$client was not built"; done; tap_exit; }
sed 's/^/# /' <<<"$ksmbd_listening"

run_case ksmbd-rdma-rxe4-negotiate 10.77.0.1 "$ksmbd_rxe_port"
run_case ksmbd-rdma-siw4-negotiate 10.77.0.2 "$ksmbd_siw_port"
run_case ksmbd-inet-rxe4-negotiate 10.77.0.1 "$ksmbd_rxe_port" inet
echo "# ksmbd left running (see the header of this script)"
tap_exit
