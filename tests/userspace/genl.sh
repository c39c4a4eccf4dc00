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
# seeing only its own sockets and refused STATS_RESET, the reset, malformed
# requests and a seeded fuzz loop (after which the family still answers
# and the sockets still check), and closed sockets leaving the dump.
#
# Environment: SD_US (user-space build dir), SD_GENL_FUZZ (requests,
# default 3000), SD_GENL_SEED (default: the date).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/interop/common.bash"
# Each verdict follows a comment with its case's guest time.
eval "orig_$(declare -f tap_ok)"
eval "orig_$(declare -f tap_fail)"
case_start=$SECONDS
took() { echo "# $((SECONDS - case_start)) s"; case_start=$SECONDS; }
tap_ok() { took; orig_tap_ok "$@"; }
tap_fail() { took; orig_tap_fail "$@"; }

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
fuzz=${SD_GENL_FUZZ:-3000}
seed=${SD_GENL_SEED:-$(date +%s)}
tap_plan 19

# --- the command line ----------------------------------------------------------------
bad=
for c in ss stats; do
	$T "$sd" $c --help >"$tmp/help" 2>"$tmp/help.err"
	rc=$?
	[ $rc -eq 0 ] && grep -q "^Usage: smbdirect $c" "$tmp/help" && [ ! -s "$tmp/help.err" ] ||
		bad+=" $c --help: exit $rc;"
done
$T "$sd" --help >"$tmp/help" 2>&1
grep -q '^  ss  ' "$tmp/help" && grep -q '^  stats  ' "$tmp/help" || bad+=" smbdirect --help lists no ss/stats;"
[ -z "$bad" ] && tap_ok genl.help || tap_fail genl.help "$bad" "$tmp/help"

bad=
for u in "ss --bogus" "ss -a -l" "ss -4 -6" "ss --src 300.1.1.1" "ss src" "ss sport http" \
	"ss dev a dev b" "ss nonsense" "ss --dst [fd77::1" "stats extra" "stats --bogus"; do
	# shellcheck disable=SC2086 # the words are the arguments
	$T "$sd" $u >"$tmp/usage" 2>&1
	rc=$?
	[ $rc -eq 2 ] && grep -q "^smbdirect ${u%% *}: " "$tmp/usage" &&
		grep -q "^Try 'smbdirect ${u%% *} --help'" "$tmp/usage" || bad+=" [$u]=$rc"
done
[ -z "$bad" ] && tap_ok genl.usage_errors_exit_2 || tap_fail genl.usage_errors_exit_2 "$bad" "$tmp/usage"

# "Module not loaded", simulated as tool.sh does: the family file hidden.
bad=
for c in ss stats; do
	$T unshare -m sh -c "mount -t tmpfs none /sys/module/af_smbdirect/parameters && exec \"$sd\" $c" \
		>"$tmp/noload" 2>&1
	rc=$?
	[ $rc -eq 1 ] && grep -q "^smbdirect $c: af_smbdirect is not loaded: modprobe af_smbdirect$" \
		"$tmp/noload" || bad+=" $c: exit $rc: $(head -n1 "$tmp/noload");"
done
[ -z "$bad" ] && tap_ok genl.not_loaded_exits_1 || tap_fail genl.not_loaded_exits_1 "$bad"

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
	return "$(sed -n "s/^done $1 \([0-9]*\)$/\1/p" "$tmp/serve.out" | tail -n1)"
}
fails() { grep -h '^FAIL' "$@" 2>/dev/null | head -n 12 | tr '\n' ' '; }
state=$tmp/state.json
if wait_for_line "$tmp/serve.out" 240 '^ready$' "$serve_pid"; then
	tap_ok "genl.serve # $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(" ".join("%s:fd%d/ino%d" % (k, v["fd"], v["inode"]) for k, v in s["socks"].items()))' "$state")"
else
	tap_fail genl.serve "the holder did not make its sockets" "$tmp/serve.err"
	for _ in $(seq 15); do tap_fail genl.skipped "no sockets to check"; done
	tap_exit
fi
inodes=$(python3 -c 'import json,sys; print(",".join(str(v["inode"]) for v in json.load(open(sys.argv[1]))["socks"].values()))' "$state")
hpid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$state")

# case NAME COMMAND...: a holder command as a case.
case_ask() {
	local name=$1
	shift
	if ask "$@"; then
		grep -v '^{' "$tmp/$1.log" | head -n 20 | sed 's/^/# /'
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
if $T "$sd" ss -a -p >"$tmp/ss.p" 2>"$tmp/ss.err"; then
	case_ask genl.ss.p_names_the_process users "$tmp/ss.p"
else
	tap_fail genl.ss.p_names_the_process "ss -a -p failed" "$tmp/ss.err"
fi

# The text forms: default (connected only), -l, -a, -e, -H.
p6=$((port + 1))
bad=
$T "$sd" ss >"$tmp/ss.default" 2>&1 || bad+=" ss: exit $?;"
$T "$sd" ss -l >"$tmp/ss.l" 2>&1 || bad+=" ss -l: exit $?;"
$T "$sd" ss -e >"$tmp/ss.e" 2>&1 || bad+=" ss -e: exit $?;"
$T "$sd" ss -a -H >"$tmp/ss.aH" 2>&1 || bad+=" ss -a -H: exit $?;"
head -n1 "$tmp/ss.default" | grep -q '^State  *Recv-Q  *Send-Q  *Local Address:Port  *Peer Address:Port  *Dev  *Transport$' ||
	bad+=" header: $(head -n1 "$tmp/ss.default");"
grep -q "^ESTAB  *0  *0  *\[fd77::2\]:$p6  *\[fd77::2\]:[0-9]*  *siw1/1  *iWARP$" "$tmp/ss.default" ||
	bad+=" no accepted siw6 line;"
grep -q "^ESTAB  *5500  *0  *10.77.0.1:[0-9]*  *10.77.0.1:$port  *rxe0/1  *RoCE$" "$tmp/ss.default" ||
	bad+=" no C1 line with Recv-Q 5500;"
grep -q '^LISTEN\|^UNCONN' "$tmp/ss.default" && bad+=" listeners or unconnected shown by default;"
[ "$(grep -c '^LISTEN' "$tmp/ss.l")" -ge 2 ] && ! grep -q '^ESTAB\|^UNCONN' "$tmp/ss.l" ||
	bad+=" ss -l: not only the listeners;"
grep -q "^LISTEN  *1  *8  *10.77.0.1:$port  *0.0.0.0:\*  *rxe0/1  *RoCE$" "$tmp/ss.l" ||
	bad+=" no L line with 1 ready, backlog 8;"
grep -q "^LISTEN  *0  *4  *\[fd77::2\]:$p6  *\[::\]:\*  *siw1/1  *iWARP$" "$tmp/ss.l" ||
	bad+=" no L6 line;"
grep -q '^State' "$tmp/ss.aH" && bad+=" -H printed a header;"
grep -q '^UNCONN  .*\*:\*  *\*:\*' "$tmp/ss.aH" || bad+=" -a: no unconnected socket;"
for w in 'uid:0 ino:[0-9]* cookie:[0-9]* family:[0-9]* type:seqpacket' \
	'params: version:1.0 max_send_size:[0-9]* ' 'credits: send:[0-9]* ' \
	'rx_queued:5500 tx_queued:0 registrations:1 pinned_bytes:65536' \
	'messages: msgs_tx:[0-9]* msgs_rx:[0-9]* pdus_tx' 'rdma: rdma_reads:0 ' 'errors: err_protocol:0 '; do
	grep -q "^	 $w" "$tmp/ss.e" || bad+=" ss -e lacks '$w';"
done
if [ -z "$bad" ]; then
	sed 's/^/# /' "$tmp/ss.e" | head -n 40
	tap_ok genl.ss.text
else
	tap_fail genl.ss.text "$bad" "$tmp/ss.default" "$tmp/ss.l" "$tmp/ss.e"
fi

# Filters through the tool: the kernel's (--dev, states) and the tool's own.
if python3 - "$sd" "$state" $port >"$tmp/filters.out" 2>&1 <<'PY'
import json, subprocess, sys
sd, state, port = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
ours = {v["inode"]: k for k, v in state["socks"].items()}
bad = []
def ss(*args):
    out = subprocess.run([sd, "ss", "--json", *args], capture_output=True, text=True, timeout=60)
    if out.returncode:
        bad.append(f"ss {' '.join(args)}: exit {out.returncode} {out.stderr}")
        return []
    return json.loads(out.stdout)
def names(socks):
    return sorted(ours[s["inode"]] for s in socks if s.get("inode") in ours)
cases = [
    (["-a", "--dev", "siw1"], ["A3", "C3", "L6"], lambda s: s.get("dev") == "siw1"),
    (["-a", "dev", "rxe0"], ["A1", "C1", "C2", "L"], lambda s: s.get("dev") == "rxe0"),
    (["--src", f"10.77.0.1:{port}"], ["A1"], lambda s: s["local_port"] == port and s["state"] != "LISTEN"),
    (["-l", "sport", str(port + 1)], ["L6"], lambda s: s["local_port"] == port + 1),
    (["dst", f"[fd77::2]:{port + 1}"], ["C3"], lambda s: s.get("peer_port") == port + 1),
    (["-a", "-6"], ["A3", "C3", "L6"], lambda s: s["addr_family"] == 10),
    (["-4"], ["A1", "C1", "C2"], lambda s: s["addr_family"] == 2 and s["state"] == "ESTAB"),
    (["dport", "=", str(port), "src", "10.77.0.0/24"], ["C1", "C2"],
     lambda s: s.get("peer_port") == port),
    (["--dst", "10.77.0.9"], [], lambda s: False),
    (["-a", "--dev", "nosuchdev0"], [], lambda s: False),
]
for args, want, pred in cases:
    got = ss(*args)
    if names(got) != want:
        bad.append(f"ss {' '.join(args)}: ours {names(got)}, want {want}")
    stray = [s for s in got if not pred(s)]
    if stray:
        bad.append(f"ss {' '.join(args)}: {len(stray)} that do not match: {stray[0]}")
    print(f"ss {' '.join(args)}: {names(got)}")
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
then
	sed 's/^/# /' "$tmp/filters.out"
	tap_ok genl.ss.filters
else
	tap_fail genl.ss.filters "$(fails "$tmp/filters.out")" "$tmp/filters.out"
fi

# --- smbdirect stats -------------------------------------------------------------------
if $T "$sd" stats --json >"$tmp/stats.json" 2>"$tmp/stats.err"; then
	case_ask genl.stats.json_is_the_raw_reply stats-tool "$tmp/stats.json"
else
	tap_fail genl.stats.json_is_the_raw_reply "stats --json failed" "$tmp/stats.err"
fi

$T "$sd" stats --json >"$tmp/before.json" 2>"$tmp/stats.err"
ask transfer
trc=$?
$T "$sd" stats --json >"$tmp/after.json" 2>>"$tmp/stats.err"
if [ $trc -eq 0 ] && python3 "$check" stats-delta "$tmp/before.json" "$tmp/after.json" \
	"$tmp/transfer.json" >"$tmp/delta.out" 2>&1; then
	sed 's/^/# /' "$tmp/delta.out"
	tap_ok genl.stats.grow_by_one_transfer
else
	tap_fail genl.stats.grow_by_one_transfer "transfer $trc: $(fails "$tmp/delta.out" "$tmp/transfer.log")" \
		"$tmp/delta.out" "$tmp/transfer.log" "$tmp/stats.err"
fi
$T "$sd" stats >"$tmp/stats.txt" 2>&1 && sed 's/^/# /' "$tmp/stats.txt"

# --- another user ------------------------------------------------------------------------
# uid 65534 cannot reach the build tree under /root: a copy of the tool,
# its library and the checker in a directory it can read.
mkdir -p "$tmp/bin"
cp "$sd" "$check" "$tmp/bin/" && cp -P "$us"/lib/libsmbdirect.so* "$tmp/bin/"
chmod -R a+rX "$tmp"
if $T setpriv --reuid=65534 --regid=65534 --clear-groups env LD_LIBRARY_PATH="$tmp/bin" \
	python3 "$tmp/bin/genl_check.py" unpriv "$tmp/bin/smbdirect" "$inodes" >"$tmp/unpriv.out" 2>&1; then
	sed 's/^/# /' "$tmp/unpriv.out"
	tap_ok genl.unprivileged_sees_its_own_only
else
	tap_fail genl.unprivileged_sees_its_own_only "$(fails "$tmp/unpriv.out")" "$tmp/unpriv.out"
fi

# The reset: root's --reset prints the counters it zeroed; then every total is 0.
if $T "$sd" stats --reset --json >"$tmp/reset.json" 2>"$tmp/reset.err" &&
	python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["module"]["msgs_tx"] > 0' "$tmp/reset.json" &&
	$T "$sd" stats --json >"$tmp/zero.json" 2>>"$tmp/reset.err" &&
	python3 "$check" stats-zero "$tmp/zero.json" >"$tmp/zero.out" 2>&1; then
	tap_ok genl.stats.reset
else
	tap_fail genl.stats.reset "$(fails "$tmp/zero.out")" "$tmp/reset.err" "$tmp/zero.out" "$tmp/zero.json"
fi

# --- malformed requests and the fuzzer ----------------------------------------------------
if $T python3 "$check" malformed >"$tmp/malformed.out" 2>&1; then
	tap_ok "genl.malformed_requests # $(grep -c '^ok' "$tmp/malformed.out") cases"
else
	tap_fail genl.malformed_requests "$(fails "$tmp/malformed.out")" "$tmp/malformed.out"
fi
if timeout -s KILL 150 python3 "$check" fuzz "$seed" "$fuzz" >"$tmp/fuzz.out" 2>&1; then
	tap_ok "genl.fuzz # $(head -n1 "$tmp/fuzz.out")"
else
	tap_fail genl.fuzz "seed $seed: $(fails "$tmp/fuzz.out")" "$tmp/fuzz.out"
fi
# After all that, the sockets still check and the tool still works.
case_ask genl.after_fuzz.fields fields.after_fuzz
if $T "$sd" ss -a --json >"$tmp/ss.after" 2>"$tmp/ss.err" && $T "$sd" stats >/dev/null 2>>"$tmp/ss.err" &&
	python3 -c 'import json,sys; got={s.get("inode") for s in json.load(open(sys.argv[1]))}; assert {int(i) for i in sys.argv[2].split(",")} <= got' \
		"$tmp/ss.after" "$inodes"; then
	tap_ok genl.after_fuzz.tool
else
	tap_fail genl.after_fuzz.tool "ss/stats after the fuzzer" "$tmp/ss.err" "$tmp/ss.after"
fi

# --- closing -----------------------------------------------------------------------------
ask quit
wait "$serve_pid"
src=$?
serve_pid=
if [ $src -eq 0 ] && $T python3 "$check" gone "$inodes" >"$tmp/gone.out" 2>&1; then
	tap_ok "genl.closed_sockets_leave_the_dump # $(cat "$tmp/gone.out")"
else
	tap_fail genl.closed_sockets_leave_the_dump "holder exit $src: $(fails "$tmp/gone.out")" \
		"$tmp/gone.out" "$tmp/serve.err"
fi
! kill -0 "$hpid" 2>/dev/null || echo "# holder $hpid still alive"
echo "# genl.sh: $SECONDS s in the guest (fuzz seed $seed)"
tap_exit
