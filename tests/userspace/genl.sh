#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# af_smbdirect's generic netlink family, `smbdirect ss` and `smbdirect
# stats` in the test VM (TAP).
#
# tests/userspace/genl_check.py (raw NETLINK_GENERIC, python3's standard
# library only: it checks the kernel without our tool) holds a known set of
# sockets while the cases run: a SOCK_SEQPACKET listener on rxe 10.77.0.1
# (rxe0 on veth0, RoCE) with one accepted connection and one waiting to be
# accepted, a SOCK_STREAM listener and pair on siw fd77::2 (siw1 on veth1,
# iWARP), an unconnected inet socket (socket(AF_INET, SOCK_STREAM, 257)),
# a 64 KiB registration RDMA-written by the peer, and known messages each
# way. Every attribute of every socket is checked against what it did
# (addresses, ports, state, type, family, uid, inode as /proc/self/fd
# shows it, cookie as SO_COOKIE, params as SMBDIRECT_IOC_GET_PARAMS,
# credits and queues as SMBDIRECT_OPT_INFO, registrations and pinned bytes,
# message, byte, PDU and RDMA counters, accept queues), the dump filters,
# `smbdirect ss -a -e -p --json` against the raw dump, `ss -p` naming the
# process, the text forms, `smbdirect stats --json` against raw STATS_GET
# and growing by exactly one transfer, an unprivileged user (uid 65534)
# seeing only its own sockets and refused STATS_RESET, another network
# namespace (root, then uid 65534) seeing only its own counters and
# resetting only its own, the reset, malformed
# requests and a seeded fuzz loop (after which the family still answers
# and the sockets still check), and closed sockets leaving the dump.
#
# Environment: SD_US (user-space build dir), SD_GENL_FUZZ (requests,
# default 2000), SD_GENL_SEED (default: the date), SD_GENL_CLI (0: skip
# the three command-line cases, --help, usage errors and "not loaded",
# which test the tool, not the kernel: make check runs them on the
# USERSPACE_KERNELS only).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/interop/common.bash"
# Each verdict follows a comment with its case's guest time.
tap_case_times

us=${SD_US:?SD_US is not set}
sd=$us/tools/smbdirect
check=$root/tests/userspace/genl_check.py
tmp=$(mktemp -d /tmp/genl.XXXXXX)
serve_pid=
cleanup() {
	[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null
	kill $(jobs -p) 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ensure_siw_on_veth1
T="timeout -s KILL 60"
port=7801
fuzz=${SD_GENL_FUZZ:-2000}
seed=${SD_GENL_SEED:-$(date +%s)}
tap_plan 19

# --- the command line ----------------------------------------------------------------
if [ "${SD_GENL_CLI:-1}" = 0 ]; then
	for c in help usage_errors_exit_2 not_loaded_exits_1; do
		tap_skip "genl.$c" "SD_GENL_CLI=0: the tool's command line is tested on the user-space kernels"
	done
else
	bad=
	for c in ss stats; do
		$T "$sd" $c --help >"$tmp/help" 2>"$tmp/help.err"
		rc=$?
		[ $rc -eq 0 ] && grep -q "^Usage: smbdirect $c" "$tmp/help" && [ ! -s "$tmp/help.err" ] ||
			bad+=" $c --help: exit $rc;"
	done
	if [ -z "$bad" ]; then tap_ok genl.help; else tap_fail genl.help "$bad" "$tmp/help"; fi

	# The parsers are unit-tested (tools_tests); here: exit codes, messages, and
	# the command list (smbdirect without a command prints it).
	bad=
	$T "$sd" >"$tmp/usage" 2>&1
	rc=$?
	[ $rc -eq 2 ] && grep -q '^  ss  ' "$tmp/usage" && grep -q '^  stats  ' "$tmp/usage" ||
		bad+=" smbdirect: exit $rc, or no ss/stats in its list;"
	$T "$sd" stats extra >"$tmp/usage" 2>&1
	rc=$?
	[ $rc -eq 2 ] && grep -q "^smbdirect stats: unexpected argument 'extra'" "$tmp/usage" &&
		grep -q "^Try 'smbdirect stats --help'" "$tmp/usage" || bad+=" stats extra: exit $rc;"
	if [ -z "$bad" ]; then tap_ok genl.usage_errors_exit_2; else tap_fail genl.usage_errors_exit_2 "$bad" "$tmp/usage"; fi

	# "Module not loaded", simulated as tool.sh does: the family file hidden.
	$T unshare -m sh -c "mount -t tmpfs none /sys/module/af_smbdirect/parameters &&
		{ \"$sd\" ss; echo \"exit \$?\"; \"$sd\" stats; echo \"exit \$?\"; }" >"$tmp/noload" 2>&1
	if [ "$(grep -c '^exit 1$' "$tmp/noload")" = 2 ] &&
		grep -q '^smbdirect ss: af_smbdirect is not loaded: modprobe af_smbdirect$' "$tmp/noload" &&
		grep -q '^smbdirect stats: af_smbdirect is not loaded: modprobe af_smbdirect$' "$tmp/noload"; then
		tap_ok genl.not_loaded_exits_1
	else
		tap_fail genl.not_loaded_exits_1 "want exit 1 and the modprobe hint from both" "$tmp/noload"
	fi
fi

# --- the sockets ------------------------------------------------------------------------
mkfifo "$tmp/cmd"
timeout -s KILL 900 python3 "$check" serve "$tmp" $port >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_pid=$!
exec 3<>"$tmp/cmd"
# ask NAME[.TAG] [ARGS...]: one command to the holder (each NAME.TAG once);
# its status, details in $tmp/NAME[.TAG].log.
ask() {
	echo "$*" >&3
	wait_for_line "$tmp/serve.out" 180 "^done $1 " "$serve_pid" || { echo "# no answer to $1"; return 2; }
	# The status of the last "done NAME STATUS" (builtins: no process).
	local line st=2
	while IFS= read -r line; do
		[[ $line =~ ^done\ $1\ ([0-9]+)$ ]] && st=${BASH_REMATCH[1]}
	done <"$tmp/serve.out"
	return "$st"
}
fails() { grep -h '^FAIL' "$@" 2>/dev/null | head -n 12 | tr '\n' ' '; }
if wait_for_line "$tmp/serve.out" 240 '^ready$' "$serve_pid"; then
	echo "# seconds: $(sed -n 's/^seconds //p' "$tmp/serve.out")"
	tap_ok "genl.serve # $(sed -n 's/^sockets //p' "$tmp/serve.out")"
else
	tap_fail genl.serve "the holder did not make its sockets" "$tmp/serve.err"
	for _ in $(seq 15); do tap_fail genl.skipped "no sockets to check"; done
	tap_exit
fi

# case_ask NAME COMMAND...: a holder command as a case.
case_ask() {
	local name=$1
	shift
	if ask "$@"; then
		grep -v '^{' "$tmp/$1.log" | head -n 80 | sed 's/^/# /'
		tap_ok "$name"
	else
		tap_fail "$name" "$(fails "$tmp/$1.log")" "$tmp/$1.log" "$tmp/serve.err"
	fi
}
case_ask genl.raw.fields fields
case_ask genl.raw.filters filters

# --- smbdirect ss ------------------------------------------------------------------------
if $T "$sd" ss -a -e -p --json >"$tmp/ss.json" 2>"$tmp/ss.err"; then
	case_ask genl.ss.json_is_the_raw_dump tool "$tmp/ss.json"
else
	tap_fail genl.ss.json_is_the_raw_dump "ss -a -e -p --json failed" "$tmp/ss.err"
fi

# -a -e -p: every row's columns, the -e lines, the processes.
if $T "$sd" ss -a -e -p >"$tmp/ss.text" 2>"$tmp/ss.err"; then
	case_ask genl.ss.p_names_the_process users "$tmp/ss.text"
	case_ask genl.ss.text text "$tmp/ss.text"
else
	tap_fail genl.ss.p_names_the_process "ss -a -e -p failed" "$tmp/ss.err"
	tap_fail genl.ss.text "ss -a -e -p failed" "$tmp/ss.err"
fi
case_ask genl.ss.filters tool-filters "$sd"

# --- smbdirect stats -------------------------------------------------------------------
if $T "$sd" stats --json >"$tmp/before.json" 2>"$tmp/stats.err"; then
	case_ask genl.stats.json_is_the_raw_reply stats-tool "$tmp/before.json"
else
	tap_fail genl.stats.json_is_the_raw_reply "stats --json failed" "$tmp/stats.err"
fi
if ask transfer && $T "$sd" stats --json >"$tmp/after.json" 2>>"$tmp/stats.err"; then
	case_ask genl.stats.grow_by_one_transfer stats-delta "$tmp/before.json" "$tmp/after.json"
else
	tap_fail genl.stats.grow_by_one_transfer "the transfer or stats failed" "$tmp/transfer.log" \
		"$tmp/stats.err"
fi

# --- another user ------------------------------------------------------------------------
# A child of the holder becomes uid 65534; it cannot reach the build tree
# under /root: a copy of the tool with its library, in a directory it can read.
mkdir -p "$tmp/bin"
cp "$sd" "$tmp/bin/" && cp -P "$us"/lib/libsmbdirect.so* "$tmp/bin/"
chmod -R a+rX "$tmp"
case_ask genl.unprivileged_sees_its_own_only unpriv "$tmp/bin/smbdirect"

# Another network namespace (unshare -n; then uid 65534 there) sees only its
# own counters, sockets and devices, raw and through the tool, while init_net
# holds connections with traffic; its root resets its totals, not init_net's.
case_ask genl.stats.other_netns_sees_its_own_only netns "$tmp/bin/smbdirect"

# The reset: root's --reset prints the counters it zeroed; then every total is 0.
if $T "$sd" stats --reset >"$tmp/reset.txt" 2>"$tmp/reset.err" && [ ! -s "$tmp/reset.err" ] &&
	grep -q '^  Messages sent  *[1-9]' "$tmp/reset.txt" &&
	$T "$sd" stats --json >"$tmp/zero.json" 2>>"$tmp/reset.err" && ask stats-zero "$tmp/zero.json"; then
	sed 's/^/# /' "$tmp/reset.txt"
	tap_ok genl.stats.reset
else
	tap_fail genl.stats.reset "$(fails "$tmp/stats-zero.log")" "$tmp/reset.txt" "$tmp/reset.err" \
		"$tmp/stats-zero.log"
fi

# --- malformed requests and the fuzzer (the sockets still open) --------------------------
if ask malformed; then
	tap_ok "genl.malformed_requests # $(grep -c '^ok' "$tmp/malformed.log") cases"
else
	tap_fail genl.malformed_requests "$(fails "$tmp/malformed.log")" "$tmp/malformed.log"
fi
if ask fuzz "$seed" "$fuzz"; then
	tap_ok "genl.fuzz # $(head -n1 "$tmp/fuzz.log")"
else
	tap_fail genl.fuzz "seed $seed: $(fails "$tmp/fuzz.log")" "$tmp/fuzz.log"
fi
# After all that, the sockets still check.
case_ask genl.after_fuzz.fields fields.after_fuzz

# --- closing -----------------------------------------------------------------------------
case_ask genl.closed_sockets_leave_the_dump close
ask quit
wait "$serve_pid"
src=$?
serve_pid=
[ $src -eq 0 ] || echo "# the holder exited with $src"
echo "# genl.sh: $SECONDS s in the guest (fuzz seed $seed)"
tap_exit
