#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unmodified Samba smbd, serving over SMB-Direct under `smbdirect run
# --listen`, mounted by cifs.ko with `mount -t cifs -o rdma` (issue #10
# item 2), over rxe (10.77.0.1) and siw (10.77.0.2).
#
# smbd is Debian's, of the installed smbclient's version, extracted by
# tests/samba-fetch.sh on the host (the samba package conflicts with
# ksmbd-tools); it runs in the foreground with a configuration whose every
# writable directory is under /tmp, binds 10.77.0.1 and 10.77.0.2 on 445
# and 5445 (cifs.ko tries 5445 first, then 445), and every one of those
# listeners must be an SMB-Direct one (the preload's debug lines).
#
# The data goes inline: Samba has no RDMA offload, and cifs.ko uses the RDMA
# channel on unsigned sessions for I/O at or above
# /proc/fs/cifs/rdma_readwrite_threshold (clamped to our MaxFragmentedSize).
# The threshold is set to its maximum for the run and restored afterwards,
# and cifs.ko must not sign (its DebugData), so it is the threshold, not
# signing, that keeps the data inline. Sizes, inline:
#   WRITE  cifs.ko's wsize (4 MiB at most; 2 MiB over rxe, 1 MiB over siw,
#          bounded by the device's fast-registration depth) must fit smbd's
#          receive MaxFragmentedSize: the preload raises it to 16 MiB for
#          SMB sockets (1 MiB default)
#   READ   smbd's response must fit cifs.ko's receive MaxFragmentedSize,
#          173910 bytes: smb2 max read = 163840 in smb.conf, so cifs.ko's
#          rsize is 160 KiB (+ 80 bytes of SMB2 header = 163920)
#
# Per transport: two mounts at once (nosharesock: smbd forks one process per
# client, "smbd[ADDR]" each), $SD_SAMBA_BIG_MIB MiB (4 by default)
# copied in through the first and
# read back through the second (a different client: from smbd, not from a
# page cache) with SHA-256 checks against the source and smbd's disk;
# mkdir, ls, rename, unlink, rmdir; both unmounted cleanly. Then smbd stops
# and nothing is left: no smbd process, no cm_id on 445/5445, the module's
# reference count (one per live socket) back to what it was before.
# Wall times are TAP comments ("# time ..."). TAP on stdout.
#
# Leaves 445/5445 free (the ksmbd-* scripts run after this one).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/interop/common.bash"

us=${SD_US:-}
sd=$us/tools/smbdirect
work=$(mktemp -d /tmp/sd-smbd.XXXXXX)
threshold=/proc/fs/cifs/rdma_readwrite_threshold
old_threshold=
spid=
MiB=1048576
# Oplock and lease breaks (issue #23), per transport, before the directory
# operations: a lease (SMB 3.1.1, cifs.ko's default), an oplock (a third
# mount with nolease) and smbclient as the second client (get under
# `smbdirect run`): both connections stay up and both read the right data.
#
# The large file: 4 MiB. The issue asks 64 MiB, which does not fit the
# test's time budget in the TCG guest (SMB-Direct moves well under 1 MiB/s
# there with cifs.ko's 1364-byte PDUs: see Documentation/samba.rst); 4 MiB
# is still 2 or 4 WRITEs of cifs.ko's wsize and 26 READs of its rsize
# (8 MiB until 2026-11-24: make check's budget). SD_SAMBA_BIG_MIB=64 for
# the full size.
big_mib=${SD_SAMBA_BIG_MIB:-4}
big=$((big_mib * MiB))
mounts=()

cleanup() {
	local m
	for m in "${mounts[@]}"; do
		mountpoint -q "$m" && umount -l "$m"
	done
	[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	smbd_pids | xargs -r kill -KILL 2>/dev/null
	[ -n "$old_threshold" ] && echo "$old_threshold" >"$threshold"
	rm -rf "$work"
}
trap cleanup EXIT

read -r -a transports <<<"${SD_SAMBA_TRANSPORTS:-rxe4 siw4}"
declare -A addr=([rxe4]=10.77.0.1 [siw4]=10.77.0.2)
names=(cifs-smbd.listen)
for t in "${transports[@]}"; do
	for c in mount_two_clients "copy_in_${big_mib}mib" "copy_out_${big_mib}mib" \
		break_lease break_oplock break_smbclient commands_vs_tcp dir_ops umount; do
		names+=("cifs-smbd.$t.$c")
	done
done
names+=(cifs-smbd.stop_leaves_nothing)
tap_plan ${#names[@]}
skip_all() { for n in "${names[@]}"; do tap_skip "$n" "$1"; done; tap_exit; }
fail_all() { for n in "${names[@]}"; do tap_fail "$n" "$1"; done; tap_exit; }
# fail_rest REASON: every case not reported yet fails with REASON.
fail_rest() { while [ "$tap_n" -lt ${#names[@]} ]; do tap_fail "${names[$tap_n]}" "$1"; done; }

modprobe cifs 2>/dev/null
grep -qw cifs /proc/filesystems || skip_all "no cifs in this kernel"
[ -w "$threshold" ] || skip_all "cifs.ko without SMB-Direct ($threshold missing)"
[ -x "$sd" ] || fail_all "$sd was not built (SD_US=$us)"
samba=$(bash "$root/tests/samba-fetch.sh" --cached 2>&1) || fail_all "$samba"
smbd=$(realpath "$samba/usr/sbin/smbd")
# smbd and the processes it forked: "smbd", "smbd-notifyd", "smbd-cleanupd"
# and one "smbd[ADDR]" per client (their comm). Not zombies. One pgrep: in
# the TCG guest every process started costs a good part of a second.
smbd_pids() { pgrep -r R,S,D,T '^smbd'; }
# The number of smbd processes serving a client from ADDR ("smbd[ADDR]";
# pgrep takes no pattern longer than 15 characters, so no escapes).
clients() { pgrep -c -r R,S,D,T -x "smbd.$1."; }
export LD_LIBRARY_PATH=$samba/usr/lib/x86_64-linux-gnu/samba
if pgrep -x ksmbd.mountd >/dev/null; then
	fail_all "ksmbd runs and holds 445/5445 (run this script before the ksmbd-* ones)"
fi
ensure_siw_on_veth1 || fail_all "could not add a siw link on veth1"

sha() { sha256sum <"$1" | cut -d' ' -f1; }
mark() { echo "# time $*: at $SECONDS s"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
mibps() { awk -v n="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f", n / 1048576 / s; else print "?" }'; }
# af_smbdirect's module reference count, in sd_refcnt (no process).
refcnt() { sd_refcnt=0; read -r sd_refcnt 2>/dev/null </sys/module/af_smbdirect/refcnt || :; }
# cm_ids on the SMB ports (ours, cifs.ko's), in sd_cm_ids.
smb_cm_ids() { cm_id_lines ':(445|5445)( |$)'; }

# --- smbd ----------------------------------------------------------------------
share=$work/share
st=$work/state
mkdir -p "$share" "$st/ncalrpc"
conf=$work/smb.conf
cat >"$conf" <<CONF
[global]
	server role = standalone server
	smb ports = 445 5445 4445
	interfaces = 10.77.0.1 10.77.0.2
	bind interfaces only = yes
	disable netbios = yes
	server min protocol = SMB3
	server signing = disabled
	smb2 max read = 163840
	passdb backend = tdbsam:$st/passdb.tdb
	state directory = $st
	lock directory = $st
	cache directory = $st
	pid directory = $st
	private dir = $st
	binddns dir = $st
	ncalrpc dir = $st/ncalrpc
	log file = $st/log.%m
	load printers = no
	printing = bsd
	printcap name = /dev/null
	disable spoolss = yes
[share]
	path = $share
	read only = no
	force user = root
CONF
mark "samba found"
if ! printf 'P\nP\n' | "$samba/usr/bin/pdbedit" -s "$conf" -a -u root -t >"$work/pdbedit.log" 2>&1; then
	tap_fail cifs-smbd.listen "pdbedit could not add user root" "$work/pdbedit.log"
	fail_rest "no smbd"
	tap_exit
fi

mark "pdbedit done"
refcnt
refs0=$sd_refcnt
slog=$work/smbd.log
# Its own session: smbd signals its process group when it stops.
SMBDIRECT_DEBUG=1 setsid "$sd" run --listen --ports 445,5445 -- "$smbd" --foreground \
	--no-process-group --debug-stdout -d 1 -s "$conf" >"$slog" 2>&1 </dev/null &
spid=$!
# Four binds (two addresses, two ports), each an SMB-Direct listener.
why=
# Builtins only while smbd starts (common.bash: every process started here
# would take the guest's one CPU from smbd): rdma runs once the four binds
# are in the log.
deadline=$((SECONDS + 60)) listening=0
while [ $SECONDS -lt $deadline ]; do
	file_count "$slog" '^smbdirect-preload: fd [0-9]+: bind 10\.77\.0\.[12]:(445|5445) -> SMB-Direct$'
	if [ "$sd_count" -ge 4 ]; then
		cm_id_lines 'LISTEN.*src-addr 10\.77\.0\.[12]:(445|5445) '
		[ ${#sd_cm_ids[@]} -ge 4 ] && { listening=1; break; }
	fi
	kill -0 "$spid" 2>/dev/null || { why="smbd exited: $(grep -v '^smbdirect-preload' "$slog" | tail -n 1)"; break; }
	sd_sleep 0.3
done
[ -z "$why" ] && [ $listening = 0 ] && why="smbd has no four SMB-Direct listeners after 60 s"
grep '^smbdirect-preload:' "$slog" | sed 's/^/# smbd: /'
rdma resource show cm_id 2>/dev/null | grep LISTEN | sed 's/^/# /'
if [ -n "$why" ]; then
	tap_fail cifs-smbd.listen "$why" "$slog"
	fail_rest "smbd is not listening"
	tap_exit
fi
# 4445 stays TCP (not in --ports): the baseline of commands_vs_tcp.
grep -v ':4445 kept TCP' "$slog" | grep -q 'kept TCP\|TCP fallback' &&
	why=$(grep -v ':4445 kept TCP' "$slog" | grep -m1 'kept TCP\|TCP fallback')
[ -z "$why" ] && tap_ok cifs-smbd.listen || tap_fail cifs-smbd.listen "$why" "$slog"
echo "# time smbd listening after $SECONDS s"

old_threshold=$(cat "$threshold")
echo 2147483647 >"$threshold"
echo "# $threshold: $old_threshold -> $(cat "$threshold") for this run (cifs.ko clamps it to our MaxFragmentedSize): every READ and WRITE inline"

head -c $big /dev/urandom >"$work/src"
want=$(sha "$work/src")

# --- per transport ------------------------------------------------------------
run_transport() {
	local t=$1 a=${addr[$1]} m1=$work/$1.m1 m2=$work/$1.m2 why='' o m log t0 t1 n
	local opts=rdma,vers=3.1.1,username=root,password=P,nosharesock
	mkdir -p "$m1" "$m2"
	mounts+=("$m1" "$m2")

	# Two clients at once: smbd forks a process for each.
	name=cifs-smbd.$t.mount_two_clients
	for m in "$m1" "$m2"; do
		timeout -s KILL 120 mount -t cifs "//$a/share" "$m" -o "$opts" >"$m.log" 2>&1 ||
			{ why="mount $m: $(head -n 1 "$m.log")"; break; }
	done
	echo "# time $t: both mounted after $SECONDS s"
	if [ -z "$why" ]; then
		# cifs.ko's own view of its connections: the SMB-Direct
		# parameters and the threshold in force, and whether it signs
		# (" signed" after the dialect and the session id).
		cat /proc/fs/cifs/DebugData >"$work/debugdata"
		grep 'Conn max_fragmented_recv_size\|rdma_readwrite_threshold\|Dialect' \
			"$work/debugdata" | sed 's/^[ \t]*/# cifs.ko: /'
		n=$(clients "$a")
		if [ "$n" -ne 2 ]; then
			why="$n smbd processes serve $a, want 2: $(pgrep -a '^smbd' | tr '\n' ';')"
		elif grep -q 'Dialect.* signed\|SessionId.* signed' "$work/debugdata"; then
			why="cifs.ko signs: the threshold would not be what keeps the data inline"
		fi
		grep " $m1 \| $m2 " /proc/mounts | grep -o '^[^ ]* [^ ]*\|[rw]size=[0-9]*' | tr '\n' ' ' |
			sed 's/^/# mounts: /'
		echo
		for p in $(pgrep -x "smbd.$a."); do
			echo "# smbd $p ($(cat "/proc/$p/comm")): $(grep VmPin "/proc/$p/status" | tr -s ' \t' ' ')"
		done
	fi
	if [ -n "$why" ]; then
		tap_fail "$name" "$why" "$m1.log" "$m2.log" "$slog"
		dmesg | grep -i -E 'cifs|smbd' | grep -v af_smbdirect | tail -n 8 | sed "s/^/# dmesg: /"
		for c in "copy_in_${big_mib}mib" "copy_out_${big_mib}mib" break_lease \
			break_oplock break_smbclient commands_vs_tcp dir_ops umount; do
			tap_fail "cifs-smbd.$t.$c" "not mounted"
		done
		return
	fi
	tap_ok "$name"

	# The large file in through the first client.
	name=cifs-smbd.$t.copy_in_${big_mib}mib
	t0=$(now)
	timeout -s KILL 150 cp "$work/src" "$m1/in.bin" 2>"$work/cp-in.err"
	o=$?
	t1=$(now)
	echo "# time $name $(secs "$t0" "$t1") s ($(mibps $big "$(secs "$t0" "$t1")") MiB/s), cifs.ko -> smbd under smbdirect run, $t"
	why=
	if [ $o -ne 0 ]; then
		why="cp exit $o: $(head -n 1 "$work/cp-in.err")"
	elif [ "$(sha "$share/in.bin")" != "$want" ]; then
		why="smbd's disk: sha256 differs ($(stat -c %s "$share/in.bin") bytes)"
	fi
	[ -z "$why" ] && tap_ok "$name" || tap_fail "$name" "$why" "$slog"

	# And out through the second one.
	name=cifs-smbd.$t.copy_out_${big_mib}mib
	rm -f "$work/back"
	t0=$(now)
	timeout -s KILL 150 cp "$m2/in.bin" "$work/back" 2>"$work/cp-out.err"
	o=$?
	t1=$(now)
	echo "# time $name $(secs "$t0" "$t1") s ($(mibps $big "$(secs "$t0" "$t1")") MiB/s), smbd under smbdirect run -> cifs.ko, $t"
	why=
	if [ $o -ne 0 ]; then
		why="cp exit $o: $(head -n 1 "$work/cp-out.err")"
	elif [ "$(sha "$work/back")" != "$want" ]; then
		why="read back: sha256 differs ($(stat -c %s "$work/back") bytes)"
	fi
	[ -z "$why" ] && tap_ok "$name" || tap_fail "$name" "$why" "$slog"
	rm -f "$work/back"

	# Oplock and lease breaks (issue #23): client A holds a file open
	# with a write cached under its lease or oplock, client B opens it
	# and appends: smbd sends A a break, reads tcpi_rto (TCP_INFO) and
	# waits for SIOCOUTQ to show the break acknowledged. Both
	# connections must stay up (the same smbd processes, no disconnect
	# in smbd's log) and both clients must read A's line, then B's.
	break_case "$t" break_lease "$m1" "$m2" "$a"
	# The oplock and smbclient variants run over the first transport
	# only (make check's guest time); SD_SAMBA_ALL_BREAKS=1 for all.
	if [ "$1" != "${transports[0]}" ] && [ "${SD_SAMBA_ALL_BREAKS:-0}" != 1 ]; then
		tap_skip "cifs-smbd.$t.break_oplock" "first transport only (SD_SAMBA_ALL_BREAKS=1)"
		tap_skip "cifs-smbd.$t.break_smbclient" "first transport only (SD_SAMBA_ALL_BREAKS=1)"
		tap_skip "cifs-smbd.$t.commands_vs_tcp" "first transport only (SD_SAMBA_ALL_BREAKS=1)"
		mark "$t: breaks done"
	else
	local m3=$work/$1.m3
	mkdir -p "$m3"
	mounts+=("$m3")
	# cifs.ko asks for oplocks instead of leases with nolease.
	if timeout -s KILL 120 mount -t cifs "//$a/share" "$m3" -o "$opts,nolease" \
		>"$m3.log" 2>&1; then
		break_case "$t" break_oplock "$m3" "$m2" "$a"
		umount "$m3" 2>/dev/null || umount -l "$m3"
		# Its smbd process ends before the next case counts them.
		for ((i = 0; i < 40; i++)); do
			[ "$(clients "$a")" -le 2 ] && break
			sd_sleep 0.5
		done
	else
		tap_fail "cifs-smbd.$t.break_oplock" "mount nolease: $(head -n 1 "$m3.log")"
	fi
	break_case "$t" break_smbclient "$m1" smbclient "$a"
	mark "$t: breaks done"
	commands_vs_tcp "$t" "$a"
	fi

	# Names: mkdir, ls, rename, unlink, rmdir, each seen on smbd's disk.
	mark "$t: copies done"
	name=cifs-smbd.$t.dir_ops
	why=
	log=$work/$t.dir.log
	{
		mkdir "$m1/d" && echo data >"$m1/d/a" && mv "$m1/d/a" "$m1/d/b" &&
			mv "$m1/in.bin" "$m1/d/in.renamed" && ls -l "$m1/d"
	} >"$log" 2>&1 || why="mkdir/rename: $(tail -n 1 "$log")"
	if [ -z "$why" ]; then
		if [ ! -d "$share/d" ] || [ -e "$share/d/a" ] || [ "$(cat "$share/d/b" 2>/dev/null)" != data ]; then
			why="smbd's disk after mkdir/rename: $(ls "$share" "$share/d" 2>&1 | tr '\n' ' ')"
		elif [ -e "$share/in.bin" ] || [ ! -f "$share/d/in.renamed" ]; then
			why="rename of in.bin not on smbd's disk"
		elif ! grep -q ' b$' "$log" || ! grep -q ' in.renamed$' "$log"; then
			why="ls does not list b and in.renamed"
		fi
	fi
	if [ -z "$why" ]; then
		{ rm "$m1/d/b" "$m1/d/in.renamed" && rmdir "$m1/d"; } >>"$log" 2>&1 ||
			why="unlink/rmdir: $(tail -n 1 "$log")"
		[ -z "$why" ] && [ -e "$share/d" ] && why="d is still on smbd's disk after rmdir"
	fi
	[ -z "$why" ] && tap_ok "$name" || tap_fail "$name" "$why" "$log"
	mark "$t: directory operations done"

	# Unmount both; their smbd processes end.
	name=cifs-smbd.$t.umount
	why=
	for m in "$m1" "$m2"; do
		umount "$m" 2>"$work/umount.err" || { why="umount $m: $(head -n 1 "$work/umount.err")"; break; }
	done
	mark "$t: umount returned"
	if [ -z "$why" ]; then
		for ((i = 0; i < 40; i++)); do
			[ "$(clients "$a")" -eq 0 ] && break
			sd_sleep 0.5
		done
		[ "$(clients "$a")" -eq 0 ] ||
			why="$(clients "$a") smbd processes still serve $a 20 s after umount"
	fi
	echo "# time $t: unmounted after $SECONDS s"
	[ -z "$why" ] && tap_ok "$name" || tap_fail "$name" "$why" "$slog"
}

# The smbd processes serving ADDR, their PIDs in one line.
client_pids() { pgrep -d' ' -x "smbd.$1."; }

# break_case T NAME A B ADDR: mount A holds a file open with "A1" written
# through it; B (a mount) adds "B1" after it, which makes smbd break A's
# lease or oplock first; or B is "smbclient" (under `smbdirect run`), which
# reads the file (breaking A's write caching: it must read "A1"), and A
# then writes "B1" itself through its handle.
break_case() {
	local t=$1 name=cifs-smbd.$1.$2 ma=$3 b=$4 a=$5 f=brk-$2.txt why='' want afd
	local pids0 pids1 lines0 lines1 log=$work/$t.$2.log
	want=$(printf 'A1\nB1')
	pids0=$(client_pids "$a")
	lines0=$(wc -l <"$slog")
	exec {afd}>"$ma/$f" || { tap_fail "$name" "A cannot create $f"; return; }
	printf 'A1\n' >&$afd
	if [ "$b" = smbclient ]; then
		# smbclient reads the file: its open breaks A's write caching,
		# and only the flush that break makes gives it A's "A1". A then
		# writes on through its handle, which must still work.
		SMBDIRECT_DEBUG=1 timeout -s KILL 120 "$sd" run --no-fallback --ports 445 -- \
			smbclient "//$a/share" -p 445 -s "$work/client.conf" -U root%P \
			-c "get $f $work/$f.got" >"$log" 2>&1 ||
			why="smbclient: $(grep -v '^smbdirect-preload' "$log" | tail -n 1)"
		[ -z "$why" ] && ! grep -q "connect $a:445 -> SMB-Direct" "$log" &&
			why="smbclient did not connect over SMB-Direct"
		[ -z "$why" ] && [ "$(cat "$work/$f.got" 2>/dev/null)" != A1 ] &&
			why="smbclient read '$(tr '\n' '|' <"$work/$f.got" 2>/dev/null)', want 'A1|': A's write was not flushed by the break"
		printf 'B1\n' >&$afd || why=${why:-"A's write after the break failed"}
	else
		timeout -s KILL 60 sh -c 'printf "B1\n" >>"$1"' _ "$b/$f" 2>"$log" ||
			why="B's append: $(head -n 1 "$log")"
	fi
	# Directory listings after B's create: a directory lease break too.
	ls "$ma" >/dev/null 2>>"$log" || why=${why:-"ls through A failed"}
	exec {afd}>&-
	[ -z "$why" ] && [ "$(cat "$share/$f")" != "$want" ] &&
		why="smbd's disk has '$(tr '\n' '|' <"$share/$f")', want 'A1|B1|'"
	[ -z "$why" ] && [ "$(cat "$ma/$f")" != "$want" ] &&
		why="A reads '$(tr '\n' '|' <"$ma/$f")', want 'A1|B1|'"
	[ -z "$why" ] && [ "$b" != smbclient ] && [ "$(cat "$b/$f")" != "$want" ] &&
		why="B reads '$(tr '\n' '|' <"$b/$f")', want 'A1|B1|'"
	pids1=$(client_pids "$a")
	lines1=$(wc -l <"$slog")
	tail -n +$((lines0 + 1)) "$slog" | grep -v '^smbdirect-preload' >"$log.smbd"
	if [ -z "$why" ] && grep -q 'getsockopt(TCP_INFO)\|disconnect_client\|SEND_QUEUE_SIZE\|IO_TIMEOUT\|INTERNAL_ERROR' "$log.smbd"; then
		why="smbd: $(grep -m1 'getsockopt(TCP_INFO)\|disconnect_client\|SEND_QUEUE_SIZE\|IO_TIMEOUT\|INTERNAL_ERROR' "$log.smbd")"
	fi
	# A's smbd process is the one it had: its connection was not ended
	# and made again (cifs.ko reconnects silently).
	local p
	for p in $pids0; do
		[ -z "$why" ] && [[ " $pids1 " != *" $p "* ]] &&
			why="smbd process $p (a client of $a before the break) is gone: $pids0 -> $pids1"
	done
	echo "# $name: smbd clients $pids0 -> $pids1, $((lines1 - lines0)) smbd log lines"
	[ -z "$why" ] && tap_ok "$name" || tap_fail "$name" "$why" "$log" "$log.smbd"
	rm -f "$share/$f"
}

# smbclient's command set (common.bash) under `smbdirect run` against smbd,
# compared with the same commands over TCP to smbd's port 4445 (outside
# --ports, so a TCP listener of the same smbd): the same output, times,
# rates and free blocks aside.
smbclient_on() { # LOG PORT COMMANDS [PRELOAD...]
	local log=$1 p=$2 c=$3
	shift 3
	SMBDIRECT_DEBUG=1 timeout -s KILL 120 "$@" smbclient "//$cmd_addr/share" -p "$p" \
		-s "$work/client.conf" -U root%P -c "$c" >"$log" 2>&1
}
commands_vs_tcp() { # T ADDR
	local name=cifs-smbd.$1.commands_vs_tcp log=$work/$1.cmds.log why=
	cmd_addr=$2
	rm -rf "${share:?}/sd-cmds"
	smbclient_on "$log" 445 "$(smbc_command_set sd-cmds "$work/cmds.src")" \
		"$sd" run --no-fallback --ports 445 --
	grep -q "connect $2:445 -> SMB-Direct" "$log" || why="smbclient did not connect over SMB-Direct"
	smbc_normalise "$log" >"$log.n"
	if [ -z "$cmds_tcp" ]; then
		rm -rf "${share:?}/sd-cmds"
		smbclient_on "$work/cmds.tcp" 4445 "$(smbc_command_set sd-cmds "$work/cmds.src")"
		smbc_normalise "$work/cmds.tcp" >"$work/cmds.tcp.n"
		cmds_tcp=$work/cmds.tcp.n
		grep 'NT_STATUS\|not found' "$cmds_tcp" | head -n 5 | sed 's/^/# tcp: /'
	fi
	if ! grep -q '^attributes:' "$cmds_tcp" || ! grep -q 'fnum' "$cmds_tcp"; then
		why="the TCP baseline did not run the commands: $(head -n 2 "$cmds_tcp" | tr '\n' ' ')"
	elif [ -z "$why" ] && ! diff -u "$cmds_tcp" "$log.n" >"$log.diff"; then
		why="differs from TCP: $(grep -m3 '^[-+][^-+]' "$log.diff" | tr '\n' ' ')"
	fi
	[ -z "$why" ] && tap_ok "$name" || tap_fail "$name" "$why" "$log.diff" "$log"
}
cmds_tcp=
echo "commands over SMB-Direct and TCP" >"$work/cmds.src"

mkdir -p "$work/cstate"
cat >"$work/client.conf" <<CONF
[global]
	client min protocol = SMB3
	disable netbios = yes
	cache directory = $work/cstate
	lock directory = $work/cstate
	state directory = $work/cstate
	private dir = $work/cstate
	ncalrpc dir = $work/cstate
CONF
for t in "${transports[@]}"; do
	run_transport "$t"
done
echo "$old_threshold" >"$threshold"
echo "# $threshold restored to $(cat "$threshold")"
old_threshold=

# --- smbd stops; nothing is left -------------------------------------------------
name=cifs-smbd.stop_leaves_nothing
why=
kill -TERM "$spid"
for ((i = 0; i < 40; i++)); do
	[ -z "$(smbd_pids)" ] && break
	sd_sleep 0.5
done
if [ -n "$(smbd_pids)" ]; then
	why="smbd processes left 20 s after SIGTERM: $(smbd_pids | tr '\n' ' ')"
	for p in $(smbd_pids); do
		echo "# smbd $p ($(cat "/proc/$p/comm" 2>/dev/null)): state $(awk '/^State/ { print $2 }' "/proc/$p/status" 2>/dev/null) wchan $(cat "/proc/$p/wchan" 2>/dev/null)"
		sed "s/^/# smbd $p stack: /" "/proc/$p/stack" 2>/dev/null | head -n 12
	done
	smbd_pids | xargs -r kill -KILL
fi
# No wait: a process stuck in the kernel would hang the script here.
spid=
for ((i = 0; i < 40; i++)); do
	refcnt
	smb_cm_ids
	[ "$sd_refcnt" -le "$refs0" ] && [ ${#sd_cm_ids[@]} -eq 0 ] && break
	sd_sleep 0.5
done
refcnt
smb_cm_ids
if [ -z "$why" ] && [ ${#sd_cm_ids[@]} -gt 0 ]; then
	why="cm_ids left on 445/5445: ${sd_cm_ids[0]}"
elif [ -z "$why" ] && [ "$sd_refcnt" -gt "$refs0" ]; then
	why="af_smbdirect holds $sd_refcnt references, $refs0 before smbd: sockets left"
fi
refcnt
echo "# af_smbdirect refcnt: $refs0 before smbd, $sd_refcnt after"
grep -i 'error\|panic\|fault' "$slog" | grep -v '^smbdirect-preload' | head -n 5 | sed 's/^/# smbd log: /'
[ -z "$why" ] && tap_ok "$name" || tap_fail "$name" "$why" "$slog"
echo "# time cifs-smbd.sh: $SECONDS s"
tap_exit
