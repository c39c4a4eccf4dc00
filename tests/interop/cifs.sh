#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cifs.ko against an AF_SMBDIRECT server of ours: interop_cifs_server
# listens on 445 and 5445, `mount -t cifs -o rdma` connects (cifs.ko tries
# 5445, allowed only on iWARP devices, then 445, only on IB/RoCE), the
# SMB-Direct negotiation completes, and the first message our socket
# delivers must be cifs.ko's SMB2 NEGOTIATE request, intact. Our server
# answers it with an SMB2 error (interop_cifs_server.c says why not a
# close), so the mount fails; it must still finish (or is killed).
# Over rxe (RoCEv2, 10.77.0.1) and siw (iWARP, 10.77.0.2). TAP on stdout.
set -u
. "$(dirname "$0")/common.bash"

server=$(helper interop_cifs_server)
work=$(mktemp -d /tmp/sd-cifs.XXXXXX)
mnt=$work/mnt
mkdir -p "$mnt"

# case NAME ADDR
run_case() {
	local name=$1 addr=$2 depths spid mpid src mrc i why
	local slog=$work/$name.server.log mlog=$work/$name.mount.log

	# cifs.ko asks 32 responder resources and initiator depth 1 (in the
	# iWARP legacy private data too): we issue up to 8 READs, serve 1.
	# 6.12's asks initiator depth 0 over RoCE (we serve none) and 32/1 in
	# host byte order in the iWARP private data.
	case $(uname -r)/$name in
	6.*rxe*) depths=8/0 ;;
	*) depths=8/1 ;;
	esac
	SD_EXPECT_RD_DEPTHS=$depths "$server" "$addr" 60 445 5445 >"$slog" 2>&1 &
	spid=$!
	if ! wait_for_line "$slog" 20 '^listening' "$spid"; then
		wait "$spid"
		tap_fail "$name" "$(first_error "$slog")" "$slog"
		return
	fi
	timeout -s KILL 120 mount -t cifs "//$addr/share" "$mnt" \
		-o rdma,username=U,password=P,vers=3.1.1 >"$mlog" 2>&1 &
	mpid=$!
	wait "$spid"
	src=$?
	# The mount ends once our server has closed; give it a minute.
	for ((i = 0; i < 600; i++)); do
		kill -0 "$mpid" 2>/dev/null || break
		sd_sleep 0.1
	done
	if kill -0 "$mpid" 2>/dev/null; then
		echo "# $name: mount still running 60 s after the server closed; killed"
		kill -KILL "$mpid" 2>/dev/null
	fi
	wait "$mpid"
	mrc=$?
	mountpoint -q "$mnt" && umount -l "$mnt"
	sed "s/^/# $name: /" "$slog"
	echo "# $name: mount exit status $mrc: $(head -n 1 "$mlog")"
	if [ "$src" -eq 0 ]; then
		tap_ok "$name"
	else
		why=$(first_error "$slog")
		tap_fail "$name" "${why:-server exit $src}" "$mlog"
		case $why in socket:*) ;; *)
			dmesg | grep -i -E 'cifs|smbd' | grep -v af_smbdirect | tail -n 8 |
				sed "s/^/# dmesg: /" ;;
		esac
	fi
}

tap_plan 2
if ! grep -qw cifs /proc/filesystems; then
	tap_skip cifs-rdma-rxe4-negotiate "no cifs in this kernel"
	tap_skip cifs-rdma-siw4-negotiate "no cifs in this kernel"
	tap_exit
fi
if [ ! -x "$server" ]; then
	tap_fail cifs-rdma-rxe4-negotiate "$server was not built"
	tap_fail cifs-rdma-siw4-negotiate "$server was not built"
	tap_exit
fi
run_case cifs-rdma-rxe4-negotiate 10.77.0.1
if ensure_siw_on_veth1; then
	run_case cifs-rdma-siw4-negotiate 10.77.0.2
else
	tap_fail cifs-rdma-siw4-negotiate "could not add a siw link on veth1"
fi
rm -rf "$work"
tap_exit
