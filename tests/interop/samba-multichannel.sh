#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Multichannel as Windows clients do it, against the patched smbd: a session
# established over TCP binds an SMB-Direct channel. cifs.ko never mixes RDMA
# and TCP channels and smbtorture connects every channel alike, so the
# client is smbdirect-example-smb2-client --bind-from-tcp 445: NEGOTIATE,
# SESSION_SETUP (signed) and TREE_CONNECT over TCP to the transport's
# address, then an SMB-Direct connection there that NEGOTIATEs with the same
# ClientGuid (smbd passes it to the process owning the session,
# MSG_SMBXSRV_CONNECTION_PASS) and sends SESSION_SETUP with
# SMB2_SESSION_FLAG_BINDING, signed with Session.SigningKey; CREATE, WRITE
# or READ with the RDMA channel and CLOSE then go over the SMB-Direct
# channel, signed with its Channel.SigningKey. Over rxe (10.77.0.1, RoCE,
# SMB-Direct port 445) and siw (10.77.0.2, iWARP, port 5445: TCP 445 is
# smbd's own there), each:
#
#   bind_put_get_NMIB  put and get of $SD_MC_MIB MiB (2) through a bound
#       channel: the client's --json names TCP for channel 1 and the
#       transport for the bound channel 2, SHA-256 of the source, smbd's copy
#       and the copy read back are equal;
#   by_rdma_on_bound_channel  smbd's sockets RDMA-read at least the size (the
#       put) and RDMA-wrote at least the size (the get) on the transport's
#       device; two SMB-Direct connections, and TCP connections opened
#       beside them (the first channels);
#   bind_unsigned_refused, bind_wrong_signature_refused  the same binding
#       with its SESSION_SETUP unsigned, or with one bit of the signature
#       flipped: smbd must refuse it with an NTSTATUS (no data moves).
#
# smbd runs in the root namespace, as in samba-rdma.sh (whose comment says
# why: ksmbd, once started, holds TCP 445 and SMB-Direct 445/5445), so this
# script runs before the ksmbd scripts; it starts and stops its own smbd.
#
# Environment: SD_SAMBA (the patched build; unset: `1..0 # SKIP`, or a
# failure with SD_SAMBA_REQUIRED=1), SD_US (the user-space build: the
# example client and the smbdirect tool), SD_MC_MIB, SD_SAMBA_TRANSPORTS
# ("rxe4 siw4"), SD_SAMBA_DEBUG (smbd's debug level, 1), SD_SAMBA_KEEP (a
# directory to keep the logs in). TAP on stdout.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/interop/common.bash"

samba=${SD_SAMBA:-}
missing=
if [ -z "$samba" ]; then
	missing="SD_SAMBA is not set"
elif [ ! -x "$samba/smbd" ]; then
	missing="no executable smbd in SD_SAMBA=$samba"
fi
if [ -n "$missing" ]; then
	if [ "${SD_SAMBA_REQUIRED:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 samba-multichannel.patched_samba # patched Samba not built: $missing (SD_SAMBA_REQUIRED=1)"
		exit 1
	fi
	echo "# $missing"
	echo "1..0 # SKIP patched Samba not built"
	exit 0
fi

us=${SD_US:-}
sd=$us/tools/smbdirect
client=$us/examples/smbdirect-example-smb2-client
work=$(mktemp -d /tmp/sd-samba-mc.XXXXXX)
MiB=1048576
mib=${SD_MC_MIB:-2}
size=$((mib * MiB))
slib=$samba/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
slog=$work/smbd.log
share=$work/share
read -r -a transports <<<"${SD_SAMBA_TRANSPORTS:-rxe4 siw4}"
declare -A addr=([rxe4]=10.77.0.1 [siw4]=10.77.0.2)
declare -A sport=([rxe4]=445 [siw4]=5445)
declare -A sdev=([rxe4]=rxe0 [siw4]=siw1)
declare -A kind=([rxe4]=RoCE [siw4]=iWARP)
# TCP connections the transport opens per SMB-Direct connection (iWARP: one).
declare -A own_tcp=([rxe4]=0 [siw4]=1)
spid=

names=(samba-multichannel.smbd.listen)
for t in "${transports[@]}"; do
	p=samba-multichannel.$t
	names+=("$p.bind_put_get_${mib}mib" "$p.by_rdma_on_bound_channel"
		"$p.bind_unsigned_refused" "$p.bind_wrong_signature_refused")
done
names+=(samba-multichannel.smbd.stop)
tap_plan ${#names[@]}
fail_all() { for n in "${names[@]}"; do tap_fail "$n" "$1"; done; tap_exit; }
verdict() { # NAME WHY LOG...
	local name=$1 why=$2
	shift 2
	if [ -z "$why" ]; then tap_ok "$name"; else tap_fail "$name" "$why" "$@"; fi
}
smbd_pids() { pgrep -r R,S,D,T '^smbd'; }

cleanup() {
	[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	smbd_pids | xargs -r kill -KILL 2>/dev/null
	if [ -n "${SD_SAMBA_KEEP:-}" ] && mkdir -p "$SD_SAMBA_KEEP"; then
		cp "$work"/*.log "$work"/*.err "$work"/*.json "$SD_SAMBA_KEEP"/ 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT

[ -x "$client" ] || fail_all "$client was not built (SD_US=$us)"
[ -x "$sd" ] || fail_all "$sd was not built (SD_US=$us)"
pgrep -x ksmbd.mountd >/dev/null &&
	fail_all "ksmbd runs: it holds TCP 445 and SMB-Direct 445/5445 (run this script before the ksmbd ones)"
ensure_siw_on_veth1 || fail_all "could not add a siw link on veth1"
tap_case_times

samba_write_conf "$work" "${addr[rxe4]} ${addr[siw4]}"
samba_smbd_start "$samba" "$work/smb.conf" "$slog" "$slib" 3 "${addr[rxe4]}" "${addr[siw4]}"
spid=$sd_smbd_pid
if [ -n "$sd_why" ]; then
	grep -v '^ *#[0-9]' "$slog" | tail -n 30 | sed 's/^/# smbd log: /'
	fail_all "smbd is not listening: $sd_why"
fi
tap_ok samba-multichannel.smbd.listen

head -c "$size" /dev/urandom >"$work/src"

# tcp_opens: TCP ActiveOpens (/proc/net/snmp), in sd_opens (no process).
tcp_opens() {
	local line hdr=() val=() i
	sd_opens=0
	while read -r line; do
		[[ $line == Tcp:* ]] || continue
		if [ ${#hdr[@]} -eq 0 ]; then read -r -a hdr <<<"$line"; else read -r -a val <<<"$line"; fi
	done </proc/net/snmp
	for i in "${!hdr[@]}"; do [ "${hdr[i]}" = ActiveOpens ] && sd_opens=${val[i]:-0}; done
}

# bind_run T OUT COMMAND ARGS... [-- OPTIONS...]: the client, session over
# TCP 445, bound channel over SMB-Direct; stdout in OUT.json, stderr in
# OUT.err, the status in rc.
bind_run() {
	local t=$1 out=$2 cmd=$3 a=${addr[$1]}
	shift 3
	local args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	timeout -s KILL 300 "$client" -u root -p P --json --bind-from-tcp 445 "$@" \
		"$a" "${sport[$t]}" "//$a/share" "$cmd" "${args[@]}" >"$out.json" 2>"$out.err"
	rc=$?
}

# bound_json T FILE: empty if FILE's bind line names TCP for channel 1 and
# the transport for the bound channel 2, both signed.
bound_json() {
	local line want
	want="\"channels\": \\[\\{\"transport\": \"tcp\", \"port\": 445, \"signed\": true\\}, \\{\"transport\": \"${kind[$1]}\", \"port\": ${sport[$1]}, \"signed\": true, \"bound\": true\\}\\]"
	line=$(grep -m1 '"command": "bind"' "$2")
	if [ -z "$line" ]; then
		echo "no bind line in the client's output"
	elif ! [[ $line =~ $want ]]; then
		echo "bind line is not TCP then ${kind[$1]} (bound): $line"
	else
		echo "# $1: $line" >&2
	fi
}

multichannel() { # T
	local t=$1 p=samba-multichannel.$1 dev=${sdev[$1]} why='' o0 opened sum f
	local out=$work/$t
	rm -f "$share/mc.bin" "$work/back"
	stats "$work/c0"
	tcp_opens
	o0=$sd_opens
	bind_run "$t" "$out.put" put "$work/src" mc.bin -- --rdma
	[ $rc -ne 0 ] && why="put: exit $rc: $(head -n 1 "$out.put.err")"
	[ -z "$why" ] && why=$(bound_json "$t" "$out.put.json" 2>&3)
	if [ -z "$why" ]; then
		bind_run "$t" "$out.get" get mc.bin "$work/back" -- --rdma
		[ $rc -ne 0 ] && why="get: exit $rc: $(head -n 1 "$out.get.err")"
		[ -z "$why" ] && why=$(bound_json "$t" "$out.get.json" 2>&3)
	fi
	stats "$work/c1"
	tcp_opens
	opened=$((sd_opens - o0))
	if [ -z "$why" ]; then
		declare -A h=()
		while read -r sum f; do h[$f]=$sum; done <<<"$(sha256sum "$work/src" "$share/mc.bin" "$work/back" 2>/dev/null)"
		if [ "${h[$share/mc.bin]:-}" != "${h[$work/src]}" ]; then
			why="put: smbd's copy differs ($(stat -c %s "$share/mc.bin" 2>&1) bytes)"
		elif [ "${h[$work/back]:-}" != "${h[$work/src]}" ]; then
			why="get: the copy read back differs ($(stat -c %s "$work/back" 2>&1) bytes)"
		fi
	fi
	grep -h '"command": "\(put\|get\)"' "$out.put.json" "$out.get.json" 2>/dev/null | sed "s/^/# $t: /"
	verdict "$p.bind_put_get_${mib}mib" "$why" "$out.put.err" "$out.get.err"

	# The data went by RDMA on the bound channel, smbd moving it; two
	# SMB-Direct connections (one per run) and TCP connections beside them.
	echo "# $t, smbd's and the client's counters: $(rdma_summary "$work/c0" "$work/c1"); TCP opened $opened"
	why=$(at_least "$work/c0" "$work/c1" rdma_read_bytes "$size" "$dev")
	[ -z "$why" ] && why=$(at_least "$work/c0" "$work/c1" rdma_write_bytes "$size" "$dev")
	[ -z "$why" ] && why=$(at_least "$work/c0" "$work/c1" connections 2)
	[ -z "$why" ] && [ "$opened" -lt $((2 + 2 * ${own_tcp[$t]})) ] &&
		why="TCP ActiveOpens grew by $opened, want $((2 + 2 * ${own_tcp[$t]})): no TCP first channel"
	verdict "$p.by_rdma_on_bound_channel" "$why"

	# Negative: the binding SESSION_SETUP unsigned, or wrongly signed.
	local how name
	for how in none wrong; do
		name=$p.bind_unsigned_refused
		[ $how = wrong ] && name=$p.bind_wrong_signature_refused
		rm -f "$share/neg.bin"
		bind_run "$t" "$out.$how" put "$work/src" neg.bin -- --rdma --bind-signature "$how"
		why=
		if [ $rc -eq 0 ]; then
			why="smbd accepted a binding signed '$how' (the put succeeded)"
		elif ! file_has "$out.$how.err" 'SESSION_SETUP \(binding\): STATUS_'; then
			why="not refused by smbd at the binding: exit $rc: $(head -n 1 "$out.$how.err")"
		elif [ -e "$share/neg.bin" ]; then
			why="neg.bin exists on smbd's disk after a refused binding"
		fi
		echo "# $t $how: $(head -n 1 "$out.$how.err")"
		verdict "$name" "$why" "$out.$how.err"
	done
	rm -f "$share/mc.bin" "$share/neg.bin" "$work/back"
}

exec 3>&1
for t in "${transports[@]}"; do
	multichannel "$t"
done

# smbd stops within 20 s of SIGTERM.
kill -TERM "$spid" 2>/dev/null
for ((i = 0; i < 40; i++)); do
	[ -z "$(smbd_pids)" ] && break
	sd_sleep 0.5
done
why=
[ -n "$(smbd_pids)" ] && why="smbd processes left 20 s after SIGTERM: $(smbd_pids | tr '\n' ' ')"
spid=
[ "$tap_failed" = 1 ] && grep -v '^ *#[0-9]' "$slog" | tail -n 40 | sed 's/^/# smbd log: /'
verdict samba-multichannel.smbd.stop "$why"
tap_exit
