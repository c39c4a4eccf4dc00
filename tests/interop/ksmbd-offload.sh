#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The SMB3 RDMA offload, client side, against ksmbd (issue 10, item 3):
# smbdirect-example-smb2-client (userspace/examples, libsmbdirect only)
# negotiates 3.1.1 and 3.0.2, authenticates as U with NTLMv2, connects
# \\SERVER\share and runs its self-test: WRITE and READ with
# SMB2_CHANNEL_RDMA_V1_INVALIDATE and SMB2_CHANNEL_RDMA_V1 carrying
# descriptors from smbdirect_rdma_v1_register(), 1 B to the negotiated
# maximum, page-aligned and not, one descriptor and several; every byte is
# checked against the file in ksmbd's share directory (local to the guest),
# DEREGISTER must report remote invalidation exactly for _INVALIDATE, and
# the memory around the registered buffers must stay untouched. Then the
# command line: put and get of a file over the RDMA channel, checked with
# cmp. Over rxe (RoCE, 10.77.0.1) and siw (iWARP, 10.77.0.2), each on the
# port ksmbd listens on for it. TAP on stdout; case names
# ksmbd-offload.TRANSPORT.DIALECT.CASE.
#
# ksmbd is started by ksmbd_start (common.bash) unless it runs already, and
# left running (see tests/interop/ksmbd.sh).
set -u
. "$(dirname "$0")/common.bash"

client=${SD_US:-}/examples/smbdirect-example-smb2-client
work=$(mktemp -d /tmp/sd-ksmbd-offload.XXXXXX)
transports=(rxe4 siw4)
dialects=(3.1.1 3.0.2)
# Every case on 3.1.1; on 3.0.2 (the same RDMA paths in ksmbd, where TCG
# time is dear) unaligned, several descriptors and short reads.
filter_of() { case $1 in 3.1.1) echo "" ;; *) echo "session.,4k.unaligned,1m.segments3,past_end" ;; esac; }

# (no process substitution: the test guest has no /dev/fd)
cases_of() { [ -x "$client" ] && "$client" list-cases --filter "$(filter_of "$1")"; }
all_names() {
	local t d c cs
	for t in "${transports[@]}"; do
		for d in "${dialects[@]}"; do
			cs=$(cases_of "$d")
			[ -n "$cs" ] || cs=selftest
			for c in $cs; do echo "ksmbd-offload.$t.smb${d//./}.$c"; done
		done
		echo "ksmbd-offload.$t.cli.put_get"
		echo "ksmbd-offload.$t.cli.put_get.depth8"
	done
}
names=$(all_names)
tap_plan "$(wc -l <<<"$names")"
fail_all() { local n; for n in $names; do tap_fail "$n" "$1"; done; tap_exit; }
skip_all() { local n; for n in $names; do tap_skip "$n" "$1"; done; tap_exit; }

[ -n "${SD_US:-}" ] || fail_all "SD_US (the user-space build) is not set"
[ -x "$client" ] || fail_all "$client was not built"
ksmbd_start || case $ksmbd_error in
	*"not installed"* | *"no ksmbd"*) skip_all "$ksmbd_error" ;;
	*) fail_all "$ksmbd_error" ;;
	esac
sed 's/^/# /' <<<"$ksmbd_listening"

addr_of() { case $1 in rxe*) echo 10.77.0.1 ;; siw*) echo 10.77.0.2 ;; esac; }
port_of() { case $1 in rxe*) echo "$ksmbd_rxe_port" ;; siw*) echo "$ksmbd_siw_port" ;; esac; }

ksmbd_dmesg() { dmesg | grep -i -E 'ksmbd|smbdirect|smb_direct' | grep -v af_smbdirect | tail -n 8 |
	sed 's/^/# dmesg: /'; }

# session TRANSPORT DIALECT: one self-test run, one TAP line per case.
session() {
	local t=$1 d=$2 addr port log prefix rc start c line
	addr=$(addr_of "$t") port=$(port_of "$t")
	prefix=ksmbd-offload.$t.smb${d//./}
	log=$work/$t-$d.log
	start=$SECONDS
	timeout -s KILL 150 "$client" -u U -p P -D "$d" "$addr" "$port" "//$addr/share" \
		selftest --local-dir "$ksmbd_share" --filter "$(filter_of "$d")" >"$log" 2>&1
	rc=$?
	echo "# $prefix: self-test exit $rc after $((SECONDS - start)) s"
	[ "$rc" -eq 137 ] && echo "killed after 150 s" >>"$log"
	for c in $(cases_of "$d"); do
		line=$(awk -v c="$c" '($1 == "ok" && $2 == c) || ($1 == "not" && $3 == c) { print; exit }' "$log")
		case $line in
		"ok $c"*)
			echo "# $prefix.$c: ${line#ok $c }"
			tap_ok "$prefix.$c"
			;;
		"not ok $c"*)
			tap_fail "$prefix.$c" "${line#not ok $c \# }"
			;;
		*)
			tap_fail "$prefix.$c" "did not run (self-test exit $rc: $(grep -v '^\(not \)\?ok ' "$log" | tail -n 1))"
			;;
		esac
	done
	# Lines for cases the list does not know (a failed CLOSE) still fail the script.
	# (The pipeline's status would be sed's: test grep's own.)
	if grep -q '^not ok close\.' "$log"; then
		grep '^not ok close\.' "$log" | sed 's/^/# /'
		tap_failed=1
	fi
	if [ "$rc" -ne 0 ]; then
		grep -v '^ok ' "$log" | tail -n 5 | sed "s/^/# $prefix: /"
		ksmbd_dmesg
	fi
}

# put_get TRANSPORT [NAME-SUFFIX EXTRA-OPTIONS...]: the command line, put
# with _INVALIDATE in 3 descriptors, get plain. .depth8: 2 MiB + 123 bytes
# in 64 KiB requests, 8 outstanding (33 requests each way, the last
# short), checked with cmp (the same bytes as sha256 would compare).
put_get() {
	local t=$1 addr port name=ksmbd-offload.$t.cli.put_get${2:-} src=$work/src.bin got=$work/got.bin
	local remote=sd-offload-cli-$t.bin out rc why= bytes=$((1048576 + 123))
	shift $(($# < 2 ? $# : 2))
	[ $# -gt 0 ] && bytes=$((2 * 1048576 + 123))
	addr=$(addr_of "$t") port=$(port_of "$t")
	head -c $bytes /dev/urandom >"$src"
	out=$(timeout -s KILL 120 "$client" -u U -p P "$addr" "$port" "//$addr/share" put \
		"$src" "$remote" --rdma --invalidate --segments 3 "$@" 2>&1)
	rc=$?
	echo "# $name: $out"
	if [ $rc -ne 0 ]; then
		why="put exit $rc: $out"
	elif ! cmp -s "$src" "$ksmbd_share/$remote"; then
		why="the file on ksmbd's disk differs from what was put"
	elif [ $# -gt 0 ] && [[ $out != *"up to 8 outstanding"* ]]; then
		why="put did not have 8 WRITEs outstanding: $out"
	else
		out=$(timeout -s KILL 120 "$client" -u U -p P "$addr" "$port" "//$addr/share" get \
			"$remote" "$got" --rdma "$@" 2>&1)
		rc=$?
		echo "# $name: $out"
		if [ $rc -ne 0 ]; then
			why="get exit $rc: $out"
		elif ! cmp -s "$src" "$got"; then
			why="the file got differs from ksmbd's"
		elif [ $# -gt 0 ] && [[ $out != *"up to 8 outstanding"* ]]; then
			why="get did not have 8 READs outstanding: $out"
		fi
	fi
	rm -f "$ksmbd_share/$remote" "$got"
	if [ -z "$why" ]; then
		tap_ok "$name"
	else
		tap_fail "$name" "$why"
		ksmbd_dmesg
	fi
}

for t in "${transports[@]}"; do
	for d in "${dialects[@]}"; do
		session "$t" "$d"
	done
	put_get "$t"
	put_get "$t" .depth8 --depth 8 --io-size 64K
done
rm -rf "$work"
tap_exit
