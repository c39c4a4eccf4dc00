#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unmodified Samba smbclient against ksmbd over SMB-Direct (issue #10 item 1):
# smbclient runs under `smbdirect run --no-fallback --ports PORT` against
# ksmbd's SMB-Direct listener, over rxe (10.77.0.1) and siw (10.77.0.2), each
# on the port ksmbd listens on for that device (ksmbd_start in common.bash).
# Per transport, two smbclient runs (each costs seconds of start-up in the
# TCG guest):
#   1. put and get of 1 B and 1 MiB; mkdir, put, rename, ls, rm, rmdir
#   2. put and get of the large file ($SD_SAMBA_BIG_MIB MiB, 4 by default)
# Every file is checked with SHA-256: the source, the copy on ksmbd's disk,
# the copy read back. The directory operations are checked in smbclient's
# listing (taken by the server after the rename) and on ksmbd's disk.
#
# Proof that every smbclient connection went over SMB-Direct and not over
# TCP (ksmbd also listens on TCP 445): --no-fallback (a failed SMB-Direct
# connect fails smbclient); the preload's debug line "connect ADDR:PORT ->
# SMB-Direct" and none saying TCP; and the kernel's TCP ActiveOpens counter
# (/proc/net/snmp), which may move while smbclient runs only by the
# transport's own connections: none over RoCE, one over iWARP (siw carries
# RDMA over a kernel TCP connection to ksmbd's iWARP port). The TCP
# baseline case (the same smbclient and file to 10.77.0.1:445 over TCP,
# without `smbdirect run`) must move it: the detector is seen to work in
# the same run. A connected cm_id toward ksmbd's port, sampled during the
# large transfer, is printed as a comment.
#
# Sizes: ksmbd's configuration (common.bash) has smb2 max write = 128K, so
# each inline WRITE fits ksmbd's receive MaxFragmentedSize (173910 bytes);
# ksmbd's 4 MiB READ responses fit ours because the preload raises its
# sockets' MaxFragmentedSize to 16 MiB. Wall times and smbclient's own rates
# of the large transfers, over SMB-Direct and over TCP, are TAP comments
# ("# time ..."), not criteria. TAP on stdout.
set -u
. "$(dirname "$0")/common.bash"

us=${SD_US:-}
sd=$us/tools/smbdirect
work=$(mktemp -d /tmp/sd-smbclient.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
MiB=1048576
# The large file: 4 MiB. The issue asks 64 MiB, which does not fit the
# test's time budget in the TCG guest (SMB-Direct moves well under 1 MiB/s
# there with ksmbd's 1364-byte PDUs: see Documentation/samba.rst); 4 MiB
# still takes a full 4 MiB READ response (8 MiB, two of them, until
# 2026-11-24: make check's budget). SD_SAMBA_BIG_MIB=64 for the full size.
big_mib=${SD_SAMBA_BIG_MIB:-4}
big=$((big_mib * MiB))
# A hung run fails its cases, not the script; smbclient's own per-request
# timeout (20 s by default) is raised: 4 MiB READs queue behind each other
# in the slow guest.
T="timeout -s KILL 240"
smb_timeout=120

read -r -a transports <<<"${SD_SAMBA_TRANSPORTS:-rxe4 siw4}"
declare -A addr=([rxe4]=10.77.0.1 [siw4]=10.77.0.2)
# TCP connections the RDMA transport itself opens per connection.
declare -A own_tcp=([rxe4]=0 [siw4]=1)
names=()
for t in "${transports[@]}"; do
	for c in put_get_1b put_get_1mib dir_ops commands_vs_tcp "put_get_${big_mib}mib"; do
		names+=("ksmbd-smbclient.$t.$c")
	done
done
names+=("ksmbd-smbclient.tcp4.put_get_${big_mib}mib")
tap_plan ${#names[@]}

skip_all() { for n in "${names[@]}"; do tap_skip "$n" "$1"; done; tap_exit; }
fail_all() { for n in "${names[@]}"; do tap_fail "$n" "$1"; done; tap_exit; }
command -v smbclient >/dev/null || skip_all "smbclient is not installed"
ksmbd_start || { why=$ksmbd_error
	case $why in "ksmbd-tools are not installed" | "no ksmbd in this kernel" | \
		"/etc/ksmbd is not writable") skip_all "$why" ;; esac
	fail_all "$why"; }
[ -x "$sd" ] || fail_all "$sd was not built (SD_US=$us)"
declare -A port=([rxe4]=$ksmbd_rxe_port [siw4]=$ksmbd_siw_port)
sed 's/^/# /' <<<"$ksmbd_listening"
echo "# time ksmbd listening after $SECONDS s"

# The client's own configuration: everything it may write under $work (the
# guest's root is read-only), SMB3 only, no NetBIOS.
mkdir -p "$work/state"
cat >"$work/smb.conf" <<CONF
[global]
	client min protocol = SMB3
	disable netbios = yes
	cache directory = $work/state
	lock directory = $work/state
	state directory = $work/state
	private dir = $work/state
	ncalrpc dir = $work/state
CONF

sha() { sha256sum <"$1" 2>/dev/null | cut -d' ' -f1; }
tcp_opens() {
	awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "ActiveOpens") c = i; h = 1 }
		else print $c }' /proc/net/snmp
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# smbc LOG MODE ADDR PORT COMMANDS: smbclient with COMMANDS; MODE rdma runs it
# under `smbdirect run --no-fallback`, MODE tcp plain. smbclient goes on
# after a failed command and exits 0: the callers check the files. Sets rc,
# wall (seconds) and opened (TCP ActiveOpens during the run).
smbc() {
	local log=$1 mode=$2 a=$3 p=$4 cmds=$5 t0 t1 o0 o1
	local pre=()
	[ "$mode" = rdma ] && pre=("$sd" run --no-fallback --ports "$p" --)
	o0=$(tcp_opens)
	t0=$(now)
	SMBDIRECT_DEBUG=1 $T "${pre[@]}" smbclient "//$a/share" -p "$p" -s "$work/smb.conf" \
		-t $smb_timeout -U U%P -c "$cmds" >"$log" 2>&1
	rc=$?
	t1=$(now)
	o1=$(tcp_opens)
	wall=$(secs "$t0" "$t1")
	opened=$((o1 - o0))
	[ $rc -eq 137 ] && echo "smbclient killed after 240 s" >>"$log"
}

# over_smbdirect LOG ADDR PORT T: empty if the run just made over transport
# T went over SMB-Direct, else why not.
over_smbdirect() {
	# smbclient connects non-blocking: "-> SMB-Direct (in progress, no fallback)".
	if ! grep -q "^smbdirect-preload: fd [0-9]*: connect $2:$3 -> SMB-Direct\( (in progress, no fallback)\)\?\$" "$1"; then
		echo "no 'connect $2:$3 -> SMB-Direct' line from the preload"
	elif grep -q '^smbdirect-preload: .*\(TCP fallback\|kept TCP\)' "$1"; then
		grep -m1 '^smbdirect-preload: .*\(TCP fallback\|kept TCP\)' "$1"
	elif [ "$opened" -ne "${own_tcp[$4]}" ]; then
		echo "$opened TCP connection(s) opened while smbclient ran, ${own_tcp[$4]} by the $4 transport"
	fi
}

# The first line of smbclient's output that explains a failure.
smb_error() {
	grep -v '^smbdirect-preload:' "$1" | grep -m1 'NT_STATUS\|rror\|ail\|killed' ||
		echo "smbclient exit $rc"
}

# check_copy NAME LOG SRC REMOTE BACK: SHA-256 of the source, of REMOTE on
# ksmbd's disk and of the copy read back; empty or why not.
check_copy() {
	local want
	want=$(sha "$3")
	if [ ! -f "$ksmbd_share/$4" ]; then
		echo "put: $4 is not on ksmbd's disk ($(smb_error "$2"))"
	elif [ "$(sha "$ksmbd_share/$4")" != "$want" ]; then
		echo "put: $4 on ksmbd's disk: sha256 differs ($(stat -c %s "$ksmbd_share/$4") of $(stat -c %s "$3") bytes)"
	elif [ ! -f "$5" ]; then
		echo "get wrote no file ($(smb_error "$2"))"
	elif [ "$(sha "$5")" != "$want" ]; then
		echo "get: sha256 differs ($(stat -c %s "$5") of $(stat -c %s "$3") bytes)"
	fi
}

# verdict NAME WHY LOG...
verdict() {
	local name=$1 why=$2
	shift 2
	if [ -z "$why" ]; then tap_ok "$name"; else tap_fail "$name" "$why" "$@"; fi
}

# smbclient's rates ("(123.4 kb/s)" for put, "(123.4 KiloBytes/sec)" for
# get, both KiB/s) as "put X MiB/s get Y MiB/s".
rates() {
	sed -n 's/^putting file .*(\([0-9.]*\) kb\/s).*/put \1/p
		s/^getting file .*(\([0-9.]*\) KiloBytes\/sec).*/get \1/p' "$1" |
		awk '{ r[$1] = $2 } END { printf "put %.2f MiB/s, get %.2f MiB/s", r["put"] / 1024, r["get"] / 1024 }'
}

small_and_dirs() { # T
	local t=$1 a=${addr[$1]} p=${port[$1]} why log=$work/$1.small.log d=sd-dir-$1
	local pre=ksmbd-smbclient.$1 listing
	head -c 1 /dev/urandom >"$work/$t.1b"
	head -c $MiB /dev/urandom >"$work/$t.1mib"
	echo "directory operations over SMB-Direct" >"$work/$t.small"
	rm -rf "${ksmbd_share:?}/$t-1b.bin" "$ksmbd_share/$t-1mib.bin" "$ksmbd_share/$d" \
		"$work/$t.1b.back" "$work/$t.1mib.back"
	smbc "$log" rdma "$a" "$p" "put $work/$t.1b $t-1b.bin; get $t-1b.bin $work/$t.1b.back; put $work/$t.1mib $t-1mib.bin; get $t-1mib.bin $work/$t.1mib.back; mkdir $d; cd $d; put $work/$t.small a; rename a b; ls; rm b; cd ..; rmdir $d; ls"
	echo "# time $pre small run (1 B and 1 MiB each way, directory operations): $wall s"
	grep -h '^smbdirect-preload:' "$log" | sort -u | sed "s/^/# $pre: /"
	why=$(over_smbdirect "$log" "$a" "$p" "$t")
	local via=$why
	[ -z "$via" ] && why=$(check_copy "$pre.put_get_1b" "$log" "$work/$t.1b" "$t-1b.bin" "$work/$t.1b.back")
	verdict "$pre.put_get_1b" "$why" "$log"
	why=$via
	[ -z "$why" ] && why=$(check_copy "$pre.put_get_1mib" "$log" "$work/$t.1mib" "$t-1mib.bin" "$work/$t.1mib.back")
	verdict "$pre.put_get_1mib" "$why"
	# The listing of $d, taken after the rename: ".", "..", "b" and no "a".
	listing=$(awk '/^  \.  +D/ { n++ } n == 1 { print } /blocks of size/ && n == 1 { exit }' "$log")
	why=$via
	if [ -n "$why" ]; then
		:
	elif ! grep -q '^  b  *A  *[0-9]' <<<"$listing"; then
		why="mkdir/put/rename: the listing of $d has no b ($(smb_error "$log"))"
	elif grep -q '^  a  *A' <<<"$listing"; then
		why="rename: $d still lists a"
	elif [ -e "$ksmbd_share/$d" ]; then
		why="rm/rmdir: $d is still on ksmbd's disk ($(ls "$ksmbd_share/$d" | tr '\n' ' '))"
	fi
	verdict "$pre.dir_ops" "$why"
	rm -f "$ksmbd_share/$t-1b.bin" "$ksmbd_share/$t-1mib.bin"
}

big_copy() { # T
	local t=$1 a=${addr[$1]} p=${port[$1]} why log=$work/$1.big.log sampler
	local name=ksmbd-smbclient.$1.put_get_${big_mib}mib
	rm -f "$ksmbd_share/$t-big.bin" "$work/big.back"
	# A connected cm_id toward ksmbd while it runs.
	: >"$work/cmid"
	(for _ in {1..100}; do
		cm_id_lines "state CONNECT.*dst-addr $a:$p "
		[ ${#sd_cm_ids[@]} -gt 0 ] && { printf '%s\n' "${sd_cm_ids[@]}" >"$work/cmid"; break; }
		sd_sleep 1
	done) &
	sampler=$!
	smbc "$log" rdma "$a" "$p" "put $work/big $t-big.bin; get $t-big.bin $work/big.back"
	kill "$sampler" 2>/dev/null
	wait "$sampler" 2>/dev/null
	echo "# time $name: $wall s for both ways; smbclient says $(rates "$log"); smbclient under smbdirect run, $t"
	grep -h '^smbdirect-preload:' "$log" | sort -u | sed "s/^/# $name: /"
	if [ -s "$work/cmid" ]; then
		sed 's/^/# cm_id while it ran: /' "$work/cmid"
	else
		echo "# cm_id while it ran: not sampled"
	fi
	why=$(over_smbdirect "$log" "$a" "$p" "$t")
	[ -z "$why" ] && why=$(check_copy "$name" "$log" "$work/big" "$t-big.bin" "$work/big.back")
	verdict "$name" "$why" "$log"
	rm -f "$ksmbd_share/$t-big.bin" "$work/big.back"
}

# smbclient's command set (common.bash) over SMB-Direct, compared with the
# same commands over TCP (run once, first): the same output, times, rates
# and free blocks aside.
commands_vs_tcp() { # T
	local t=$1 a=${addr[$1]} p=${port[$1]} why log=$work/$1.cmds.log d=sd-cmds
	local name=ksmbd-smbclient.$1.commands_vs_tcp
	rm -rf "${ksmbd_share:?}/$d"
	smbc "$log" rdma "$a" "$p" "$(smbc_command_set $d "$work/cmds.src")"
	echo "# time $name: $wall s"
	why=$(over_smbdirect "$log" "$a" "$p" "$t")
	smbc_normalise "$log" >"$log.n"
	# The baseline itself worked: allinfo answered, the file was opened.
	if ! grep -q '^attributes:' "$work/cmds.tcp.n" || ! grep -q 'fnum' "$work/cmds.tcp.n"; then
		why="the TCP baseline did not run the commands: $(head -n 2 "$work/cmds.tcp.n" | tr '\n' ' ')"
	elif [ -z "$why" ] && ! diff -u "$work/cmds.tcp.n" "$log.n" >"$log.diff"; then
		why="differs from TCP: $(grep -m3 '^[-+][^-+]' "$log.diff" | tr '\n' ' ')"
	fi
	verdict "$name" "$why" "$log.diff"
}

echo "commands over SMB-Direct and TCP" >"$work/cmds.src"
rm -rf "${ksmbd_share:?}/sd-cmds"
smbc "$work/cmds.tcp" tcp 10.77.0.1 445 "$(smbc_command_set sd-cmds "$work/cmds.src")"
smbc_normalise "$work/cmds.tcp" >"$work/cmds.tcp.n"
echo "# smbclient's command set over TCP, 10.77.0.1:445 ($wall s): $(grep -c 'NT_STATUS' "$work/cmds.tcp.n") NT_STATUS lines, the baseline"
grep 'NT_STATUS\|not found' "$work/cmds.tcp.n" | head -n 5 | sed 's/^/# tcp: /'

head -c $big /dev/urandom >"$work/big"
for t in "${transports[@]}"; do
	small_and_dirs "$t"
	commands_vs_tcp "$t"
	big_copy "$t"
done

# The baseline: the same smbclient over TCP on the same veth, to ksmbd's TCP
# listener. Here TCP connections must be counted.
name=ksmbd-smbclient.tcp4.put_get_${big_mib}mib
rm -f "$work/big.back"
smbc "$work/tcp.log" tcp 10.77.0.1 445 "put $work/big tcp-big.bin; get tcp-big.bin $work/big.back"
echo "# time $name: $wall s for both ways; smbclient says $(rates "$work/tcp.log"); smbclient over TCP, 10.77.0.1:445"
why=$(check_copy "$name" "$work/tcp.log" "$work/big" tcp-big.bin "$work/big.back")
[ -z "$why" ] && [ "$opened" -lt 1 ] &&
	why="TCP ActiveOpens did not move: the SMB-Direct cases' TCP detector is blind"
verdict "$name" "$why" "$work/tcp.log"
rm -f "$ksmbd_share/tcp-big.bin"
echo "# ksmbd left running (see tests/interop/ksmbd.sh)"
echo "# time ksmbd-smbclient.sh: $SECONDS s"
tap_exit
