#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A two-host lab in the one test VM (TAP; issue #13 item 12; not in make
# check): a network namespace "peer" is the second host, reached over veth
# pairs, and `smbdirect cat` moves data between the two with sha256 checks
# while tc netem damages the wire.
#
#   root netns                                  netns peer
#   labA 10.78.0.1/24 fd78::1/64  rxeA  <-veth->  rxeB  labB 10.78.0.2 fd78::2
#   labC 10.79.0.1/24 fd79::1/64  siwC  <-veth->  siwD  labD 10.79.0.2 fd79::2
#
# One veth pair per transport: rdma_cm binds an address to the first RDMA
# device on its netdev (cma_acquire_dev_by_src_ip walks its device list),
# so an rxe and a siw link on the same veth would give every connection to
# whichever was added first. Each case checks the transport the connection
# got (cat --json) and the bytes that crossed the veth (its counters).
#
# Who runs where: the listener in the root netns on labA's or labC's
# address, the client side inside peer (`ip netns exec peer smbdirect
# cat`). siw makes a connection's TCP socket in the netns of the task that
# calls rdma_connect(); the module calls it in the connect() caller's
# context for that (sd_cm_connect_elsewhere()): every siw case connects
# from peer with a blocking connect(), and lab.siw[46].nonblocking_connect
# with a non-blocking one and poll() (nbconnect.py, the IPPROTO_SMBDIRECT
# entry point). The rdma links of labB and labD are created
# from inside peer (rdma netlink resolves the netdev in the caller's netns).
# rxe before Linux 7.0 is not netns-aware (its UDP port 4791 socket and its
# routes are init_net's: a link on labB can send but never receive), so
# the RoCE cases are skipped on such kernels (no rxe_ns_pernet_sk4 in
# /proc/kallsyms).
#
# Cases, in order: setup; MTU 1500: messages (8 KiB PDUs, so that one PDU
# spans packets) and --rdma on each transport, rxe's data packets checked
# to be 1024-byte path MTU; netem on both ends of the pair (loss 1%,
# reorder, duplicate 5%, delay 50 ms on rxe, loss and delay on siw): each
# a small transfer that must arrive intact; blackouts (netem loss 100% on
# both ends in the middle of a transfer): a short one, inside rxe's retry
# budget (retry_count 6 x local ACK timeout 2^17 x 4.096 us: ~3.8 s) and
# TCP's, must be survived with the data intact; a long one with
# keepalive_interval=1 on both ends must end both with ETIMEDOUT or
# ECONNRESET within SD_LAB_DETECT_MAX s (default 25) while it lasts,
# what was received a prefix of what was sent, and no socket left; MTU 9000
# (rxe path MTU 4096, checked from the packets) on each transport; siw
# non-blocking connects from inside peer; teardown: links and netns deleted, no
# socket, cm_id, netdev or module reference left.
#
#   lab.sh [SUBSTRING...]   only the cases whose names contain one (setup
#                           and teardown always run)
#
# Environment: SD_US (user-space build dir), SD_LAB_DETECT_MAX,
# SD_LAB_ALL_BLACKOUTS=1 (both blackouts over both transports).
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
. "$root/tests/interop/common.bash"

sd=${SD_US:?SD_US is not set}/tools/smbdirect
tmp=$(mktemp -d /tmp/lab.XXXXXX)
lab_up=0
peer="ip netns exec peer"
# Per-command limits: a hung transfer fails its case, not the run.
T="timeout -s KILL 40" TN="timeout -s KILL 60" TB="timeout -s KILL 60"
detect_max=${SD_LAB_DETECT_MAX:-25}

cases=(
	lab.setup
	lab.mtu1500.rxe4.messages lab.mtu1500.rxe4.rdma
	lab.mtu1500.siw6.messages lab.mtu1500.siw6.rdma
	lab.netem.loss1.rxe4.rdma
	lab.netem.reorder.rxe4.messages lab.netem.duplicate.rxe4.messages
	lab.netem.delay50.rxe4.messages
	lab.netem.loss1.siw4.messages
	lab.blackout.short.rxe4 lab.blackout.short.siw6
	lab.blackout.long.rxe4 lab.blackout.long.siw6
	lab.mtu9000.setup
	lab.mtu9000.rxe6.rdma lab.mtu9000.siw4.messages
	lab.siw4.nonblocking_connect
	lab.teardown
)
tap_plan ${#cases[@]}
tap_case_times

# wanted NAME: whether the command line selects the case.
wanted() {
	local s
	[ ${#selection[@]} -eq 0 ] && return 0
	for s in "${selection[@]}"; do
		[[ $1 == *"$s"* ]] && return 0
	done
	return 1
}
selection=("$@")

# --- the lab ------------------------------------------------------------------------
# Each end of each pair: the root side, the netns side, the rdma links.
declare -A root_if=([rxe]=labA [siw]=labC) peer_if=([rxe]=labB [siw]=labD)
declare -A addr=([rxe4]=10.78.0.1 [rxe6]=fd78::1 [siw4]=10.79.0.1 [siw6]=fd79::1)
declare -A want_transport=([rxe]=RoCE [siw]=iWARP)
rdma_links="rxeA rxeB siwC siwD"

# af_smbdirect's module reference count, in sd_refcnt (no process).
refcnt() { sd_refcnt=0; read -r sd_refcnt 2>/dev/null </sys/module/af_smbdirect/refcnt || :; }
refcnt
refs0=$sd_refcnt

# lab_down: deletes what lab_setup made (best effort, for the EXIT trap).
lab_down() {
	local l
	for l in $rdma_links; do
		[ -e "/sys/class/infiniband/$l" ] && rdma link delete "$l" 2>/dev/null
	done
	ip netns del peer 2>/dev/null
	for l in labA labC; do
		[ -e "/sys/class/net/$l" ] && ip link del "$l" 2>/dev/null
	done
	lab_up=0
}
# stop PID...: ends our background jobs, each a timeout process: TERM first
# (timeout passes it on to its command and then exits), KILL after 2 s.
stop() {
	local i p alive
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	for ((i = 0; i < 20; i++)); do
		alive=0
		for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		sd_sleep 0.1
	done
	kill -KILL "$@" 2>/dev/null
	wait "$@" 2>/dev/null
	return 0
}
cleanup() {
	# shellcheck disable=SC2046 # the pids, split
	stop $(jobs -p)
	[ "$lab_up" = 1 ] && lab_down
	rm -rf "$tmp"
}
trap cleanup EXIT

# veth_stats IF: its counters, in sd_rxb sd_rxp sd_txb sd_txp (no process).
veth_stats() {
	local d=/sys/class/net/$1/statistics
	sd_rxb=0 sd_rxp=0 sd_txb=0 sd_txp=0
	read -r sd_rxb <"$d/rx_bytes" 2>/dev/null
	read -r sd_rxp <"$d/rx_packets" 2>/dev/null
	read -r sd_txb <"$d/tx_bytes" 2>/dev/null
	read -r sd_txp <"$d/tx_packets" 2>/dev/null
	return 0
}

# last_line FILE: its last line, in sd_last (no process).
last_line() {
	local line
	sd_last=
	[ -r "$1" ] || return 0
	while IFS= read -r line || [ -n "$line" ]; do sd_last=$line; done <"$1"
}

# file_pos PID FD: the file position of PID's FD, in sd_pos (no process).
file_pos() {
	local key val
	sd_pos=0
	{
		while read -r key val; do
			[ "$key" = pos: ] && { sd_pos=$val; break; }
		done <"/proc/$1/fdinfo/$2"
	} 2>/dev/null
	return 0
}

# usecs: the wall clock in microseconds (bash's EPOCHREALTIME, no process).
usecs() { sd_us=${EPOCHREALTIME/./}; }

# rxe in this kernel works inside a network namespace?
rxe_netns=0
if grep -qw rxe_ns_pernet_sk4 /proc/kallsyms 2>/dev/null; then
	rxe_netns=1
fi
rxe_skip="this kernel's rxe is not netns-aware (UDP 4791 socket and routes in init_net only: a link on labB in netns peer never receives)"

# Test data: one random file and its prefixes; sha256 of each.
declare -A sha size
size=([256k]=262144 [512k]=524288 [2m]=2097152 [4m]=4194304)
head -c 4M /dev/urandom >"$tmp/in.4m"
head -c 2M "$tmp/in.4m" >"$tmp/in.2m"
head -c 512K "$tmp/in.4m" >"$tmp/in.512k"
head -c 256K "$tmp/in.4m" >"$tmp/in.256k"
sha256sum "$tmp"/in.* >"$tmp/sums"
while read -r s f; do sha[${f##*/in.}]=$s; done <"$tmp/sums"

# --- setup ---------------------------------------------------------------------------
setup_err=
lab_setup() {
	local l want
	ip netns add peer || { setup_err="ip netns add peer failed"; return 1; }
	lab_up=1
	ip -b - >"$tmp/ip.root" 2>&1 <<'EOF' || { setup_err="root-side ip batch failed"; return 1; }
link add labA type veth peer name labB netns peer
link add labC type veth peer name labD netns peer
addr add 10.78.0.1/24 dev labA
addr add fd78::1/64 dev labA nodad
addr add 10.79.0.1/24 dev labC
addr add fd79::1/64 dev labC nodad
link set labA up
link set labC up
EOF
	ip -n peer -b - >"$tmp/ip.peer" 2>&1 <<'EOF' || { setup_err="peer-side ip batch failed"; return 1; }
link set lo up
addr add 10.78.0.2/24 dev labB
addr add fd78::2/64 dev labB nodad
addr add 10.79.0.2/24 dev labD
addr add fd79::2/64 dev labD nodad
link set labB up
link set labD up
EOF
	if [ $rxe_netns = 1 ]; then
		rdma -b - >"$tmp/rdma.root" 2>&1 <<'EOF' || { setup_err="rdma link add in the root netns failed"; return 1; }
link add rxeA type rxe netdev labA
link add siwC type siw netdev labC
EOF
		$peer rdma -b - >"$tmp/rdma.peer" 2>&1 <<'EOF' || { setup_err="rdma link add in netns peer failed"; return 1; }
link add rxeB type rxe netdev labB
link add siwD type siw netdev labD
EOF
		want=$rdma_links
	else
		rdma link add siwC type siw netdev labC 2>"$tmp/rdma.root" ||
			{ setup_err="rdma link add in the root netns failed"; return 1; }
		$peer rdma link add siwD type siw netdev labD 2>"$tmp/rdma.peer" ||
			{ setup_err="rdma link add in netns peer failed"; return 1; }
		want="siwC siwD"
	fi
	for l in $want; do
		[ -e "/sys/class/infiniband/$l" ] || { setup_err="no RDMA device $l after rdma link add"; return 1; }
	done
	return 0
}
if lab_setup; then
	links="siwC siwD"
	[ $rxe_netns = 1 ] && links="rxeA rxeB $links"
	tap_ok "lab.setup # veth labA/labB, labC/labD; rdma $links"
else
	tap_fail lab.setup "$setup_err" "$tmp/ip.root" "$tmp/ip.peer" "$tmp/rdma.root" "$tmp/rdma.peer"
	# Nothing else can run: every remaining case fails with the reason.
	for c in "${cases[@]:1}"; do tap_fail "$c" "no lab: $setup_err"; done
	tap_exit
fi

port=7800
next_port() { port=$((port + 1)); }

# ends TR: the case's ends, in lns (listener's netns prefix), cns
# (connector's), a (the listener's address), pair (rxe|siw).
ends() {
	pair=${1%[46]}
	a=${addr[$1]}
	lns='' cns=$peer
}

# skip_case NAME TR: skips NAME when unselected or its transport cannot run.
skip_case() {
	if ! wanted "$1"; then
		tap_skip "$1" "not selected"
		return 0
	fi
	if [[ $2 == rxe* ]] && [ $rxe_netns = 0 ]; then
		tap_skip "$1" "$rxe_skip"
		return 0
	fi
	return 1
}

# lab_cat NAME TR DIR DATA MTU_CHECK [FLAGS...]: one transfer over TR
# (rxe4, siw6...), DIR to_listener (the listener receives) or
# from_listener, DATA one of the input files (1m, 512k...). Both ends must
# exit 0, the sha256 match, the connection be TR's transport and at least
# DATA's bytes cross the pair's veth. MTU_CHECK (rxe only): 1024 or 4096,
# the path MTU the data packets must show, or - for none.
lab_cat() {
	local name=$1 tr=$2 dir=$3 data=$4 mtu=$5 lpid lrc crc got t0 ifc dir_root
	local rxb0 rxp0 txb0 txp0 moved dbytes dpkts avg why='' info
	shift 5
	skip_case "$name" "$tr" && return
	ends "$tr"
	ifc=${root_if[$pair]}
	next_port
	: >"$tmp/out"
	: >"$tmp/l.err"
	veth_stats "$ifc"
	rxb0=$sd_rxb rxp0=$sd_rxp txb0=$sd_txb txp0=$sd_txp
	# shellcheck disable=SC2086 # $lns/$cns: a command prefix or nothing
	if [ "$dir" = to_listener ]; then
		$T $lns "$sd" cat -l -v --recv "$@" "$a" $port >"$tmp/out" 2>"$tmp/l.err" &
	else
		$T $lns "$sd" cat -l -v --send "$@" "$a" $port <"$tmp/in.$data" >/dev/null 2>"$tmp/l.err" &
	fi
	lpid=$!
	if ! wait_for_line "$tmp/l.err" 20 listening $lpid; then
		stop $lpid
		tap_fail "$name" "the listener did not start" "$tmp/l.err"
		return
	fi
	t0=$SECONDS
	# shellcheck disable=SC2086
	if [ "$dir" = to_listener ]; then
		$T $cns "$sd" cat --json --send "$@" "$a" $port <"$tmp/in.$data" >/dev/null 2>"$tmp/c.err"
	else
		$T $cns "$sd" cat --json --recv "$@" "$a" $port >"$tmp/out" 2>"$tmp/c.err"
	fi
	crc=$?
	# A connector that failed leaves the listener waiting: end it now.
	[ $crc -eq 0 ] || stop $lpid
	wait $lpid 2>/dev/null
	lrc=$?
	got=$(sha256sum <"$tmp/out")
	got=${got%% *}
	veth_stats "$ifc"
	moved=$((sd_rxb - rxb0 + sd_txb - txb0))
	# The data direction on the root side's veth: the root end (the
	# listener) sends from_listener.
	dir_root=rx
	[ "$dir" = from_listener ] && dir_root=tx
	if [ $dir_root = tx ]; then
		dbytes=$((sd_txb - txb0)) dpkts=$((sd_txp - txp0))
	else
		dbytes=$((sd_rxb - rxb0)) dpkts=$((sd_rxp - rxp0))
	fi
	avg=$((dpkts > 0 ? dbytes / dpkts : 0))
	if [ $crc -ne 0 ] || [ $lrc -ne 0 ]; then
		why="listener exit $lrc, connector exit $crc (137: killed by the timeout; 143: stopped after the connector failed)"
	elif [ "$got" != "${sha[$data]}" ]; then
		why="sha256 ${got:0:12} != ${sha[$data]:0:12}: the data arrived corrupted"
	elif ! file_has "$tmp/c.err" "\"transport\":\"${want_transport[$pair]}\""; then
		why="the connection is not ${want_transport[$pair]}"
	elif [ $moved -lt "${size[$data]}" ]; then
		why="only $moved bytes crossed ${ifc}: the data did not go over the veth"
	elif [ "$mtu" = 1024 ] && [ $avg -gt 1200 ]; then
		why="$avg bytes per data packet on $ifc: not a 1024-byte path MTU"
	elif [ "$mtu" = 4096 ] && [ $avg -lt 3000 ]; then
		why="$avg bytes per data packet on $ifc: not a 4096-byte path MTU"
	fi
	last_line "$tmp/c.err"
	info=
	[[ $sd_last =~ \"mib_per_s\":([0-9.]+) ]] && info="${BASH_REMATCH[1]} MiB/s, "
	info+="$moved bytes over $ifc, $avg bytes per data packet"
	if [ -z "$why" ]; then
		tap_ok "$name # $((SECONDS - t0)) s, $info"
	else
		# A refused connect (seen now and then over siw, cause not
		# known yet): the module's counters, rejects included.
		rm -f "$tmp/stats"
		file_has "$tmp/c.err" 'refused' && $T "$sd" stats >"$tmp/stats" 2>&1
		tap_fail "$name" "$why ($info)" "$tmp/l.err" "$tmp/c.err" "$tmp/stats"
	fi
}

# --- netem -----------------------------------------------------------------------------
# netem_set PAIR ARGS...: netem ARGS on the egress of both ends of PAIR
# (both directions of the wire); "none" removes it. Skipped when PAIR
# already has ARGS. Sets netem_err on failure.
declare -A netem_now=([rxe]=none [siw]=none)
netem_set() {
	local p=$1 ri=${root_if[$1]} pi=${peer_if[$1]}
	shift
	netem_err=
	[ "${netem_now[$p]}" = "$*" ] && return 0
	if [ "$*" = none ]; then
		tc qdisc del dev "$ri" root 2>"$tmp/tc.err"
		tc -n peer qdisc del dev "$pi" root 2>>"$tmp/tc.err"
	else
		# shellcheck disable=SC2068 # the netem arguments, split
		tc qdisc replace dev "$ri" root netem $@ 2>"$tmp/tc.err" &&
			tc -n peer qdisc replace dev "$pi" root netem $@ 2>>"$tmp/tc.err" ||
			{ netem_err="tc netem $* on $ri/$pi failed"; return 1; }
	fi
	netem_now[$p]=$*
	return 0
}

# netem_cat NAME TR NETEM DIR DATA [FLAGS...]: lab_cat under netem NETEM.
netem_cat() {
	local name=$1 tr=$2 ne=$3
	shift 3
	if skip_case "$name" "$tr"; then return; fi
	# shellcheck disable=SC2086 # the netem arguments, split
	if ! netem_set "${tr%[46]}" $ne; then
		tap_fail "$name" "$netem_err" "$tmp/tc.err"
		return
	fi
	# (skip_case already ran: lab_cat's own call passes)
	T=$TN lab_cat "$name" "$tr" "$@"
}

# --- blackouts ---------------------------------------------------------------------------
# rxe retransmits after the local ACK timeout (rdma_cm's RoCE packet
# lifetime 16 + 1: 4.096 us << 17, 537 ms), 6 times (SD_CM_RETRY), then
# fails the QP: the 6th retry leaves ~3.2 s after the first loss and must
# find the wire lit both ways. A short blackout longer than this (timer
# slack included) may end the connection.
rxe_bridge_ms=2700
# blackout PAIR on|off: 100% loss on both ends' egress, or none; the
# moments each end went dark or came back, in sd_b0 (root end) and sd_b1.
blackout() {
	local p=$1 ri=${root_if[$1]} pi=${peer_if[$1]} ok=0
	# (Each moment is taken when tc returns: starting tc is most of
	# its time in the guest, the change itself comes at its end.)
	if [ "$2" = on ]; then
		tc qdisc replace dev "$ri" root netem loss 100% 2>"$tmp/tc.err" || ok=1
		usecs; sd_b0=$sd_us
		tc -n peer qdisc replace dev "$pi" root netem loss 100% 2>>"$tmp/tc.err" || ok=1
		usecs; sd_b1=$sd_us
	else
		# In the same order: both directions stay dark about as long.
		tc qdisc del dev "$ri" root 2>>"$tmp/tc.err" || ok=1
		usecs; sd_b0=$sd_us
		tc -n peer qdisc del dev "$pi" root 2>>"$tmp/tc.err" || ok=1
		usecs; sd_b1=$sd_us
	fi
	netem_now[$p]=none
	return $ok
}

# ms_between A B: (B - A) in ms from two usecs readings, in sd_ms.
ms_between() { sd_ms=$((($2 - $1) / 1000)); }

# socks_gone: waits up to 20 s for af_smbdirect's references to come back
# to where they were (sockets hold one each; closed ones drain up to
# 10 s), then looks with smbdirect ss -a in both namespaces. Sets
# socks_err.
socks_gone() {
	local deadline=$((SECONDS + 20)) out
	socks_err=
	while :; do
		refcnt
		[ "$sd_refcnt" -le "$refs0" ] && break
		[ $SECONDS -lt $deadline ] || break
		sd_sleep 0.5
	done
	if [ "$sd_refcnt" -gt "$refs0" ]; then
		socks_err="af_smbdirect holds $sd_refcnt references, $refs0 before the lab"
	fi
	out=$($T "$sd" ss -a -H 2>&1)
	[ -n "$out" ] && socks_err+="${socks_err:+; }root netns: ss -a: ${out//$'\n'/ | }"
	if [ "$lab_up" = 1 ]; then
		# shellcheck disable=SC2086
		out=$($T $peer "$sd" ss -a -H 2>&1)
		[ -n "$out" ] && socks_err+="${socks_err:+; }netns peer: ss -a: ${out//$'\n'/ | }"
	fi
	[ -z "$socks_err" ]
}

# blackout_cat NAME TR KIND DATA: a messages transfer to the listener (64
# KiB messages) that goes dark once the receiver has 128 KiB.
#   short: dark for SD_LAB_SHORT s plus the tc calls; must complete
#         intact, unless (rxe) the wire was dark in some direction for
#         longer than rxe's retries can bridge (see rxe_bridge_ms): then
#         an intact transfer or a clean failure as for a long one.
#   long: keepalive_interval=1 on both ends; dark until both ends have
#         exited (at most detect_max s): both must fail with ETIMEDOUT or
#         ECONNRESET, the output be a prefix of the input, and no socket
#         be left.
blackout_cat() {
	local name=$1 tr=$2 kind=$3 data=$4 lpid cpid lrc crc t_dark deadline got why='' info
	local -a opts=(-b 64K)
	local pos_on pos_off dark_ms dark_ms2 l_end c_end cmpout lerr cerr
	skip_case "$name" "$tr" && return
	ends "$tr"
	[ "$kind" = long ] && opts+=(-o keepalive_interval=1)
	next_port
	: >"$tmp/out"
	: >"$tmp/l.err"
	# shellcheck disable=SC2086
	$TB $lns "$sd" cat -l -v --recv "${opts[@]}" "$a" $port >"$tmp/out" 2>"$tmp/l.err" &
	lpid=$!
	if ! wait_for_line "$tmp/l.err" 20 listening $lpid; then
		stop $lpid
		tap_fail "$name" "the listener did not start" "$tmp/l.err"
		return
	fi
	# shellcheck disable=SC2086
	$TB $cns "$sd" cat -v --json --send "${opts[@]}" "$a" $port <"$tmp/in.$data" >/dev/null 2>"$tmp/c.err" &
	cpid=$!
	# The receiver's progress: the position of its stdout (shared with
	# the timeout process whose pid we have).
	deadline=$((SECONDS + 30))
	while :; do
		file_pos $lpid 1
		[ "$sd_pos" -ge 131072 ] && break
		if ! kill -0 $lpid 2>/dev/null || ! kill -0 $cpid 2>/dev/null ||
			[ $SECONDS -ge $deadline ]; then
			break
		fi
		sd_sleep 0.1
	done
	if [ "$sd_pos" -lt 131072 ]; then
		stop $lpid $cpid
		tap_fail "$name" "the receiver did not get 128 KiB (it has $sd_pos bytes)" "$tmp/l.err" "$tmp/c.err"
		return
	fi
	if ! blackout "$pair" on; then
		blackout "$pair" off
		stop $lpid $cpid
		tap_fail "$name" "tc netem loss 100% failed" "$tmp/tc.err"
		return
	fi
	t_dark=$SECONDS
	local on0=$sd_b0 on1=$sd_b1
	file_pos $lpid 1
	pos_on=$sd_pos
	if ! kill -0 $lpid 2>/dev/null || ! kill -0 $cpid 2>/dev/null; then
		why="the transfer ended before the blackout was in place (make DATA larger)"
	fi
	if [ "$kind" = short ]; then
		sd_sleep "${SD_LAB_SHORT:-0.5}"
	else
		# Dark until both ends are gone or detect_max has passed.
		deadline=$((t_dark + detect_max))
		l_end=- c_end=-
		while :; do
			[ "$l_end" = - ] && ! kill -0 $lpid 2>/dev/null && l_end=$((SECONDS - t_dark))
			[ "$c_end" = - ] && ! kill -0 $cpid 2>/dev/null && c_end=$((SECONDS - t_dark))
			[ "$l_end" != - ] && [ "$c_end" != - ] && break
			[ $SECONDS -lt $deadline ] || break
			sd_sleep 0.25
		done
	fi
	file_pos $lpid 1
	pos_off=$sd_pos
	blackout "$pair" off || why+="${why:+; }tc could not end the blackout"
	ms_between "$on0" "$sd_b0"
	dark_ms=$sd_ms
	ms_between "$on1" "$sd_b1"
	dark_ms2=$sd_ms
	if [ "$kind" = long ] && { kill -0 $lpid 2>/dev/null || kill -0 $cpid 2>/dev/null; }; then
		why+="${why:+; }still running $detect_max s into the blackout: not detected"
		# What the sockets looked like, for the record.
		# shellcheck disable=SC2086
		{ $T "$sd" ss -a -e; $T $peer "$sd" ss -a -e; } >"$tmp/ss.hang" 2>&1
		stop $lpid $cpid
	fi
	wait $lpid
	lrc=$?
	wait $cpid
	crc=$?
	got=$(sha256sum <"$tmp/out")
	got=${got%% *}
	info="dark ${dark_ms}/${dark_ms2} ms (root/peer egress), receiver at $pos_on bytes when dark, $pos_off when lit"
	# From the first egress going dark to the last coming back: how long
	# no round trip could complete.
	local first=$on0 last=$sd_b1
	[ "$on1" -lt "$first" ] && first=$on1
	[ "$sd_b0" -gt "$last" ] && last=$sd_b0
	ms_between "$first" "$last"
	local rt_ms=$sd_ms
	info+=", no round trip for $rt_ms ms"
	if [ "$kind" = short ] && [ "$pair" = rxe ] && [ "$rt_ms" -gt "$rxe_bridge_ms" ] &&
		{ [ $crc -ne 0 ] || [ $lrc -ne 0 ]; }; then
		# Longer than rxe's retries bridge (a slow tc under load): a
		# clean failure is what the issue allows; judged as a long one.
		info+=" (over the ${rxe_bridge_ms} ms rxe's retries bridge: judged as a long blackout)"
		kind=long
		l_end=? c_end=?
	fi
	if [ "$kind" = short ]; then
		if [ -z "$why" ]; then
			if [ $crc -ne 0 ] || [ $lrc -ne 0 ]; then
				why="listener exit $lrc, connector exit $crc: a short blackout must be survived"
			elif [ "$got" != "${sha[$data]}" ]; then
				why="sha256 ${got:0:12} != ${sha[$data]:0:12}: the data arrived corrupted"
			elif ! file_has "$tmp/c.err" "\"transport\":\"${want_transport[$pair]}\""; then
				why="the connection is not ${want_transport[$pair]}"
			fi
		fi
	else
		last_line "$tmp/l.err"
		lerr=$sd_last
		last_line "$tmp/c.err"
		cerr=$sd_last
		cmpout=$(cmp "$tmp/out" "$tmp/in.$data" 2>&1)
		if [ -n "$why" ]; then
			:
		elif [ $lrc -ne 1 ] || [ $crc -ne 1 ]; then
			why="listener exit $lrc, connector exit $crc: want 1 and 1 (137: killed)"
		elif ! [[ $lerr =~ timed\ out|reset|ended\ before ]] || ! [[ $cerr =~ timed\ out|reset|ended\ before ]]; then
			why="want ETIMEDOUT or ECONNRESET on both ends: listener '$lerr', connector '$cerr'"
		elif ! [[ $cmpout == *"EOF on $tmp/out"* ]]; then
			why="the output is not a prefix of the input: $cmpout"
		elif ! socks_gone; then
			why="$socks_err"
		fi
		info+=", listener ended after $l_end s: '${lerr#smbdirect cat: }', connector after $c_end s: '${cerr#smbdirect cat: }'"
	fi
	if [ -z "$why" ]; then
		tap_ok "$name # $info"
	else
		tap_fail "$name" "$why ($info)" "$tmp/l.err" "$tmp/c.err" "$tmp/ss.hang"
	fi
	rm -f "$tmp/ss.hang"
}

# --- the cases ------------------------------------------------------------------------------
pdu8k=(-o max_send_size=8K -o max_receive_size=8K -o receive_credit_max=64)
echo "# lab.sh: $SECONDS s before MTU 1500"
lab_cat lab.mtu1500.rxe4.messages rxe4 to_listener 256k 1024 "${pdu8k[@]}"
lab_cat lab.mtu1500.rxe4.rdma rxe4 from_listener 256k 1024 --rdma
lab_cat lab.mtu1500.siw6.messages siw6 to_listener 256k - "${pdu8k[@]}"
lab_cat lab.mtu1500.siw6.rdma siw6 from_listener 256k - --rdma

echo "# lab.sh: $SECONDS s before netem"
# 1% loss on RoCE under RDMA writes: a lost packet at a burst's tail
# waits for the ACK timeout, and a TCG guest on a loaded host stalls for
# seconds, beyond rdma_cm's 6 retries of 537 ms: a retry error ended the
# connection in a cold make check (2026-11-27, and issue #26's busy
# machine). A stalling host is not a fabric; this case runs with the
# ack_timeout the admin guide gives for fabrics that pause (19: 2.1 s,
# about 15 s in all) and puts the default back.
ack_param=/sys/module/af_smbdirect/parameters/ack_timeout
ack_was=$(cat "$ack_param" 2>/dev/null) || ack_was=
[ -z "$ack_was" ] || echo 19 >"$ack_param"
netem_cat lab.netem.loss1.rxe4.rdma rxe4 "loss 1%" from_listener 256k - --rdma
[ -z "$ack_was" ] || echo "$ack_was" >"$ack_param"
netem_cat lab.netem.reorder.rxe4.messages rxe4 "delay 10ms reorder 25% 50%" to_listener 256k -
netem_cat lab.netem.duplicate.rxe4.messages rxe4 "duplicate 5%" from_listener 256k -
netem_cat lab.netem.delay50.rxe4.messages rxe4 "delay 50ms" to_listener 256k -
netem_cat lab.netem.loss1.siw4.messages siw4 "loss 1%" to_listener 256k -
for p in rxe siw; do
	netem_set $p none || echo "# could not remove netem from the $p pair: $netem_err"
done

echo "# lab.sh: $SECONDS s before the blackouts"
# One blackout per transport (make check's budget): the short one over
# rxe, whose retries must bridge it (RoCE's retry budget is the fragile
# one), the long one over siw, whose keepalive must detect it. The other
# two run with SD_LAB_ALL_BLACKOUTS=1.
blackout_cat lab.blackout.short.rxe4 rxe4 short 2m
# (siw moved 0.85 MiB/s on 6.12: 2 MiB ended before tc had made it dark)
if [ "${SD_LAB_ALL_BLACKOUTS:-0}" = 1 ]; then
	blackout_cat lab.blackout.short.siw6 siw6 short 4m
	blackout_cat lab.blackout.long.rxe4 rxe4 long 2m
else
	tap_skip lab.blackout.short.siw6 "one blackout per transport (SD_LAB_ALL_BLACKOUTS=1)"
	tap_skip lab.blackout.long.rxe4 "one blackout per transport (SD_LAB_ALL_BLACKOUTS=1)"
fi
blackout_cat lab.blackout.long.siw6 siw6 long 4m

echo "# lab.sh: $SECONDS s before MTU 9000"
if printf 'link set %s mtu 9000\n' labA labC | ip -b - &&
	printf 'link set %s mtu 9000\n' labB labD | ip -n peer -b -; then
	tap_ok lab.mtu9000.setup
	mtu_ok=1
else
	tap_fail lab.mtu9000.setup "ip link set mtu 9000 failed"
	mtu_ok=0
fi
for c in rxe6.rdma:from_listener siw4.messages:to_listener; do
	tr=${c%%.*} mode=${c#*.} mode=${mode%%:*} dir=${c##*:}
	name=lab.mtu9000.$tr.$mode
	if [ $mtu_ok = 0 ]; then
		tap_fail "$name" "no MTU 9000"
		continue
	fi
	mtu=-
	[[ $tr == rxe* ]] && mtu=4096
	if [ "$mode" = rdma ]; then
		lab_cat "$name" "$tr" "$dir" 512k $mtu --rdma
	else
		lab_cat "$name" "$tr" "$dir" 512k $mtu "${pdu8k[@]}"
	fi
done

# --- non-blocking connects from inside the netns ------------------------------------------
# siw's connect runs in the context of the task that called connect(): a
# non-blocking connect() has returned EINPROGRESS and waits in poll(), so
# the module interrupts that poll() with a task work (it restarts). The
# listener in the root netns, the connector in peer; a message of 64 KiB
# must arrive intact. Before the fix: EADDRNOTAVAIL (siw bound the source
# address in the root netns, where it does not exist).
for tr in siw4; do
	name=lab.$tr.nonblocking_connect
	skip_case "$name" $tr && continue
	ends $tr
	next_port
	: >"$tmp/l.err"
	$T python3 "$root/tests/userspace/lab/nbconnect.py" listen "$a" $port >"$tmp/l.err" 2>&1 &
	lpid=$!
	if ! wait_for_line "$tmp/l.err" 20 listening $lpid; then
		stop $lpid
		tap_fail "$name" "the listener did not start" "$tmp/l.err"
		continue
	fi
	# shellcheck disable=SC2086
	$T $cns python3 "$root/tests/userspace/lab/nbconnect.py" connect "$a" $port >"$tmp/c.err" 2>&1
	crc=$?
	[ $crc -eq 0 ] || stop $lpid
	wait $lpid
	lrc=$?
	if [ $crc -eq 0 ] && [ $lrc -eq 0 ]; then
		last_line "$tmp/l.err"
		tap_ok "$name # from netns peer: $sd_last"
	else
		last_line "$tmp/c.err"
		tap_fail "$name" "connector exit $crc ($sd_last), listener exit $lrc" "$tmp/l.err" "$tmp/c.err"
	fi
done

# --- teardown --------------------------------------------------------------------------------------
# The links first (rdma link delete, the devices idle), then the netns,
# which takes the veth pairs with it.
echo "# lab.sh: $SECONDS s before teardown"
why=
for p in rxe siw; do
	[ "${netem_now[$p]}" = none ] || netem_set $p none
done
for l in $rdma_links; do
	if [ -e "/sys/class/infiniband/$l" ] && ! rdma link delete "$l" 2>>"$tmp/rdma.del"; then
		why+="${why:+; }rdma link delete $l failed"
	fi
done
ip netns del peer 2>>"$tmp/rdma.del" || why+="${why:+; }ip netns del peer failed"
# A netns goes in a workqueue: its veths (and their root ends) shortly after.
deadline=$((SECONDS + 20))
while [ -e /sys/class/net/labA ] || [ -e /sys/class/net/labC ]; do
	[ $SECONDS -lt $deadline ] || break
	sd_sleep 0.2
done
for l in labA labC $rdma_links; do
	[ -e "/sys/class/net/$l" ] && why+="${why:+; }netdev $l still there 20 s after the netns went"
	[ -e "/sys/class/infiniband/$l" ] && why+="${why:+; }RDMA device $l still there"
done
lab_up=0
socks_gone || why+="${why:+; }$socks_err"
cm_id_lines '10\.7[89]\.|fd7[89]:'
# shellcheck disable=SC2154 # sd_cm_ids: set by common.bash's cm_id_lines
[ ${#sd_cm_ids[@]} -eq 0 ] || why+="${why:+; }cm_ids left: ${sd_cm_ids[0]}"
refcnt
if [ -z "$why" ]; then
	tap_ok "lab.teardown # af_smbdirect refcnt $sd_refcnt (was $refs0)"
else
	tap_fail lab.teardown "$why" "$tmp/rdma.del"
fi
echo "# lab.sh: $SECONDS s in the guest"
tap_exit
