#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The SMB3 RDMA offload, server side, against cifs.ko (issue 10, item 4):
# smbdirect-example-smb2-server (userspace/examples, libsmbdirect only)
# serves a directory; `mount -t cifs -o rdma` mounts it over rxe (RoCE,
# 10.77.0.1, SMB 3.1.1 as guest) and siw (iWARP, 10.77.0.2, SMB 3.0.2 with
# user and password); files of 1 MiB and 4 MiB are written through the
# mount (dd through the page cache and with oflag=direct), read back
# (after dropping the caches, and with iflag=direct), compared by sha256
# with the server's files and the sources; ls, mv, rm; umount. cifs.ko
# registers its pages and sends buffer descriptors for I/O at or above
# /proc/fs/cifs/rdma_readwrite_threshold: the server's log must show the
# data moved by RDMA WRITE from the file (READ) and RDMA READ (WRITE), at
# least as many bytes as the test moved; data that went inline fails it.
# A sparse file of the server's (4 MiB, 4 KiB of data at 1 MiB) is read
# with iflag=direct: its holes are not in the page cache, the kernel
# refuses the zero-copy transfer (ENODATA) and the server reads them
# itself and sends them from memory (its log counts them); the file must
# come back equal and the server's copy keep its blocks (nothing
# allocated into the holes by the read path).
#
# Runs before ksmbd.sh and the ksmbd-*.sh scripts (glob order): ports 445
# and 5445 must be free of ksmbd, which cannot be stopped once started.
# TAP on stdout; case names cifs-offload.TRANSPORT.CASE.
set -u
. "$(dirname "$0")/common.bash"

server=${SD_US:-}/examples/smbdirect-example-smb2-server
work=$(mktemp -d /tmp/sd-cifs-offload.XXXXXX)
transports=(rxe4 siw4)
cases=(mount write.1m write.4m.direct sha256.server read.1m read.4m.direct read.sparse.direct ls mv
	rm umount rdma.counts)
tap_plan $((${#transports[@]} * ${#cases[@]}))

fail_rest() { # transport first-case-index reason
	local i
	for ((i = $2; i < ${#cases[@]}; i++)); do tap_fail "cifs-offload.$1.${cases[i]}" "$3"; done
}
all_fail() { local t; for t in "${transports[@]}"; do fail_rest "$t" 0 "$1"; done; tap_exit; }
all_skip() {
	local t c
	for t in "${transports[@]}"; do
		for c in "${cases[@]}"; do tap_skip "cifs-offload.$t.$c" "$1"; done
	done
	tap_exit
}

grep -qw cifs /proc/filesystems || all_skip "no cifs in this kernel"
[ -n "${SD_US:-}" ] || all_fail "SD_US (the user-space build) is not set"
[ -x "$server" ] || all_fail "$server was not built"
if pgrep -x ksmbd.mountd >/dev/null; then
	all_fail "ksmbd runs already and holds the SMB ports: run this before ksmbd.sh"
fi
threshold=$(cat /proc/fs/cifs/rdma_readwrite_threshold 2>/dev/null)
echo "# /proc/fs/cifs/rdma_readwrite_threshold: ${threshold:-unknown} (READ/WRITE of at least that many bytes use the RDMA channel)"

head -c $((1 << 20)) /dev/urandom >"$work/src1"
head -c $((4 << 20)) /dev/urandom >"$work/src4"
sum() { sha256sum "$1" | cut -d' ' -f1; }

# check NAME COMMAND...: one TAP line from a command's status.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		tap_ok "$name"
	else
		# The error line (dd prints its counts after it), else the last one.
		tap_fail "$name" "$(grep -m1 -i -E 'error|differs|denied|invalid|unavailable' <<<"$out" ||
			tail -n 1 <<<"$out")"
		dmesg | grep -i cifs | tail -n 4 | sed 's/^/# dmesg: /'
	fi
}

same_sum() { [ "$(sum "$1")" = "$(sum "$2")" ] || { echo "sha256 of $2 differs from $1"; return 1; }; }

# dd with timing into the TAP comments.
timed_dd() { # name dd-args...
	local name=$1 start out
	shift
	start=$(date +%s%N)
	out=$(timeout -s KILL 120 dd "$@" bs=1M 2>&1) || { echo "$out"; return 1; }
	echo "# $name: $(tail -n 1 <<<"$out") (wall $((($(date +%s%N) - start) / 1000000)) ms)" >&3
}

# run_transport TRANSPORT ADDR MOUNT-OPTIONS
run_transport() {
	local t=$1 addr=$2 opts=$3 share=$work/share-$1 mnt=$work/mnt-$1 log=$work/server-$1.log
	local spid i rc line n_read n_write
	mkdir -p "$share" "$mnt"
	"$server" --listen "$addr" --port 445 --port 5445 --log "$log" -v "$share" &
	spid=$!
	if ! wait_for_line "$log" 30 'listening on' "$spid"; then
		wait "$spid"
		fail_rest "$t" 0 "server did not start: $(tail -n 1 "$log")"
		return
	fi
	timeout -s KILL 120 mount -t cifs "//$addr/share" "$mnt" -o "rdma,$opts" >"$work/mount-$t.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || ! mountpoint -q "$mnt"; then
		tap_fail "cifs-offload.$t.mount" "mount exit $rc: $(head -n 1 "$work/mount-$t.log")" "$log"
		dmesg | grep -i cifs | tail -n 8 | sed 's/^/# dmesg: /'
		fail_rest "$t" 1 "not mounted"
		kill "$spid" 2>/dev/null
		wait "$spid"
		return
	fi
	tap_ok "cifs-offload.$t.mount"
	grep -i -A3 "rdma\|smbdirect" /proc/fs/cifs/DebugData 2>/dev/null | head -n 6 | sed 's/^/# DebugData: /'

	check "cifs-offload.$t.write.1m" timed_dd "$t write 1 MiB (page cache)" \
		if="$work/src1" of="$mnt/f1" conv=fsync
	check "cifs-offload.$t.write.4m.direct" timed_dd "$t write 4 MiB (oflag=direct)" \
		if="$work/src4" of="$mnt/f4" oflag=direct
	check "cifs-offload.$t.sha256.server" \
		bash -c "$(declare -f sum same_sum); same_sum '$work/src1' '$share/f1' && same_sum '$work/src4' '$share/f4'"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	check "cifs-offload.$t.read.1m" bash -c "$(declare -f sum same_sum timed_dd); \
		timed_dd '$t read 1 MiB (page cache)' if='$mnt/f1' of='$work/back1' && same_sum '$work/src1' '$work/back1'"
	check "cifs-offload.$t.read.4m.direct" bash -c "$(declare -f sum same_sum timed_dd); \
		timed_dd '$t read 4 MiB (iflag=direct)' if='$mnt/f4' of='$work/back4' iflag=direct && \
		same_sum '$work/src4' '$work/back4'"
	truncate -s $((4 << 20)) "$share/s4"
	head -c 4096 "$work/src1" | dd of="$share/s4" bs=4096 seek=256 conv=notrunc status=none
	local blocks0
	blocks0=$(stat -c %b "$share/s4")
	check "cifs-offload.$t.read.sparse.direct" bash -c "$(declare -f sum same_sum timed_dd); \
		timed_dd '$t read a sparse 4 MiB file (iflag=direct)' if='$mnt/s4' of='$work/backs' \
			iflag=direct bs=1M && same_sum '$share/s4' '$work/backs' && \
		{ [ \$(stat -c %b '$share/s4') = $blocks0 ] || \
			{ echo \"the read allocated blocks: \$(stat -c %b '$share/s4') not $blocks0\"; false; }; }"
	rm -f "$share/s4"
	ls -l "$mnt" | sed "s/^/# $t ls: /"
	check "cifs-offload.$t.ls" bash -c "ls -l '$mnt' | grep -q ' 1048576 .* f1\$' && \
		ls -l '$mnt' | grep -q ' 4194304 .* f4\$'"
	check "cifs-offload.$t.mv" bash -c "mv '$mnt/f1' '$mnt/g1' && [ -f '$share/g1' ] && [ ! -e '$share/f1' ] && \
		[ -f '$mnt/g1' ]"
	check "cifs-offload.$t.rm" bash -c "rm '$mnt/g1' '$mnt/f4' && [ ! -e '$share/g1' ] && [ ! -e '$share/f4' ]"
	check "cifs-offload.$t.umount" timeout -s KILL 60 umount "$mnt"
	mountpoint -q "$mnt" && umount -l "$mnt"

	# The connection's process logs its summary when cifs.ko has gone.
	wait_for_line "$log" 30 'summary:' || true
	kill "$spid" 2>/dev/null
	wait "$spid"
	# One summary per connection (cifs.ko may have reconnected): add them up.
	grep 'summary:' "$log" | sed "s/^/# $t server: /"
	n_read=$(sed -n 's/.*READ over RDMA: [0-9]* RDMA WRITE from the file, \([0-9]*\) bytes.*/\1/p' "$log" |
		awk '{ n += $1 } END { print n + 0 }')
	n_write=$(sed -n 's/.*WRITE over RDMA: [0-9]* RDMA READ, \([0-9]*\) bytes.*/\1/p' "$log" |
		awk '{ n += $1 } END { print n + 0 }')
	n_flight=$(sed -n 's/.* at most \([0-9]*\) transfers and [0-9]* WRITEs in flight.*/\1/p' "$log" |
		sort -n | tail -n 1)
	n_first=$(sed -n 's/.* bytes (\([0-9]*\) read first, not cached;.*/\1/p' "$log" |
		awk '{ n += $1 } END { print n + 0 }')
	echo "# $t: the server moved $n_read bytes by RDMA for READ ($n_first transfers read first: not cached), $n_write for WRITE, at most ${n_flight:-?} transfers in flight"
	# 1 + 4 MiB each way at least; inline data would leave these short.
	if ! grep -q 'summary:' "$log"; then
		tap_fail "cifs-offload.$t.rdma.counts" "no summary in the server's log" "$log"
	elif [ "${n_read:-0}" -lt $((5 << 20)) ] || [ "${n_write:-0}" -lt $((5 << 20)) ]; then
		tap_fail "cifs-offload.$t.rdma.counts" \
			"RDMA moved ${n_read:-0} bytes for READ and ${n_write:-0} for WRITE, under 5 MiB: data went inline" "$log"
	elif [ "${n_first:-0}" -lt 1 ]; then
		tap_fail "cifs-offload.$t.rdma.counts" \
			"no READ was read first: the sparse file's holes went from the page cache?" "$log"
	else
		tap_ok "cifs-offload.$t.rdma.counts"
	fi
	if [ "$tap_failed" -ne 0 ]; then
		grep -v -E ' -> STATUS_SUCCESS$|: RDMA (READ|WRITE) (from|into)' "$log" |
			tail -n 40 | sed "s/^/# $t server log: /"
		dmesg | grep -i -E 'cifs|smbd|smb_direct' | tail -n 20 | sed "s/^/# dmesg: /"
	fi
	rm -rf "$share"
}

exec 3>&1
run_transport rxe4 10.77.0.1 "vers=3.1.1,guest"
if ensure_siw_on_veth1; then
	run_transport siw4 10.77.0.2 "vers=3.0.2,username=U,password=P"
else
	fail_rest siw4 0 "could not add a siw link on veth1"
fi
rm -rf "$work"
tap_exit
