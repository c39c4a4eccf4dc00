#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The smbdirect command in the test VM (TAP): every subcommand's --help and
# usage errors, "module not loaded", `dev --json` (veth0/rxe0 RoCE and
# veth1/siw1 iWARP RDMA-capable), `params` against `params -l` (negotiated
# = module defaults), `cat` and `cat --rdma` moving 64 MiB each way with
# sha256 over rxe4 and siw6, a truncated stream and a vanished reader
# failing on both ends, and `perf --json` of every test kind.
#
# Environment: SD_US (user-space build dir). Transports: rxe4 10.77.0.1
# (rxe0 on veth0), siw6 fd77::2 (siw1 on veth1); both ends use the same
# address, as everywhere in these tests.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/interop/common.bash"

sd=${SD_US:?SD_US is not set}/tools/smbdirect
tmp=$(mktemp -d /tmp/tool.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
ensure_siw_on_veth1
# Per-command limit: a hung transfer must fail the case, not the run. The
# 64 MiB transfers get more (about a minute each on an idle host).
T="timeout -s KILL 120" TB="timeout -s KILL 180"

declare -A addr=([rxe4]=10.77.0.1 [siw6]=fd77::2)
transports="rxe4 siw6"
subcommands="cat perf dev params family run"
module_commands="cat perf params family"
usage_cases=(
	"cat"			"cat -l"		"cat --bogus 10.77.0.1 7000"
	"cat --send --recv 10.77.0.1 7000"	"cat 10.77.0.1 99999"
	"cat --buffers 1 --rdma 10.77.0.1 7000"	"perf --test nope 10.77.0.1 7000"
	"perf -l"		"perf --time 1 --iters 2 10.77.0.1 7000"
	"perf -l --test send 7000"	"dev extra"		"params 10.77.0.1"
	"params --once 10.77.0.1 7000"	"params -o nope=1 10.77.0.1 7000"
	"family extra"		"nosuchcommand"		""
	"perf --test read --api v1 --depth 8 10.77.0.1 7000"
	"perf --test send --depth 2 10.77.0.1 7000"	"perf --test read --api pooled 10.77.0.1 7000"
)
# perf: every test kind, plus read/write at --depth 8 and with --api v1,
# register with --api async (NAME:ARGS, ARGS the name when absent). Each
# runs over one transport, rxe4 and siw6 in turn (the transports' RDMA is
# the selftests' business; here the command's modes and JSON are tested):
# half the guest time of running every case over both.
perf_cases=(send latency read write register "read.depth8:read --depth 8"
	"write.depth8:write --depth 8" "read.v1:read --api v1" "write.v1:write --api v1"
	"register.async:register --api async")
plan=$((1 + 6 + ${#usage_cases[@]} + 4 + 1 + 1 + 9 + 3 + ${#perf_cases[@]}))
tap_plan $plan
tap_case_times

port=7400
next_port() { port=$((port + 1)); }

# --- help and usage ----------------------------------------------------------
# Output is checked with common.bash's file_has (bash builtins): in the TCG
# guest a grep per case costs more than the command it checks.
if $T "$sd" --help > "$tmp/help" 2>&1 && file_has "$tmp/help" '^Usage: smbdirect'; then
	tap_ok tool.help
else
	tap_fail tool.help "smbdirect --help" "$tmp/help"
fi
for c in $subcommands; do
	$T "$sd" "$c" --help > "$tmp/help" 2> "$tmp/help.err"
	rc=$?
	if [ $rc -eq 0 ] && file_has "$tmp/help" "^Usage: smbdirect $c" && [ ! -s "$tmp/help.err" ]; then
		tap_ok "tool.help.$c"
	else
		tap_fail "tool.help.$c" "exit $rc, want 0 and a usage text on stdout" "$tmp/help" "$tmp/help.err"
	fi
done
for u in "${usage_cases[@]}"; do
	# shellcheck disable=SC2086 # word splitting wanted
	$T "$sd" $u > "$tmp/usage" 2>&1
	rc=$?
	name=${u:-none}
	name=${name//[^a-z0-9]/_}
	while [[ $name == *__* ]]; do name=${name//__/_}; done
	name=${name%_}
	shopt -s nocasematch
	file_has "$tmp/usage" 'usage|try|unknown|expected|needs|not '
	hint=$?
	shopt -u nocasematch
	if [ $rc -eq 2 ] && [ $hint -eq 0 ]; then
		tap_ok "tool.usage.$name"
	else
		tap_fail "tool.usage.$name" "smbdirect $u: exit $rc, want 2" "$tmp/usage"
	fi
done

# --- module not loaded (the family file hidden in a private mount namespace) ----
for c in $module_commands; do
	case $c in
	cat | perf) args="10.77.0.1 7000" ;;
	params) args="" ;;
	family) args="" ;;
	esac
	$T unshare -m sh -c "mount -t tmpfs none /sys/module/af_smbdirect/parameters && exec \"$sd\" $c $args" \
		> "$tmp/noload" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && file_has "$tmp/noload" "af_smbdirect is not loaded: modprobe af_smbdirect"; then
		tap_ok "tool.not_loaded.$c"
	else
		tap_fail "tool.not_loaded.$c" "exit $rc, want 1 and the modprobe hint" "$tmp/noload"
	fi
done

echo "# tool.sh: $SECONDS s before dev"
# --- dev -----------------------------------------------------------------------
if $T "$sd" dev --json > "$tmp/dev.json" 2> "$tmp/dev.err" &&
	python3 - "$tmp/dev.json" > "$tmp/dev.check" 2>&1 <<'PY'
import json, sys
devs = {d["ifname"]: d for d in json.load(open(sys.argv[1]))}
want = {"veth0": ("rxe0", "RoCE"), "veth1": ("siw1", "iWARP")}
bad = []
for name, (rdma, transport) in want.items():
    d = devs.get(name)
    if not d:
        bad.append(f"{name} missing")
    elif (d["rdma_device"], d["transport"], d["rdma_capable"]) != (rdma, transport, True):
        bad.append(f"{name}: {d}")
    elif not any(a.startswith("10.77.0.") for a in d["addresses"]) or not d["reason"]:
        bad.append(f"{name}: addresses/reason {d}")
if bad:
    sys.exit("; ".join(bad))
PY
then
	tap_ok tool.dev.json
else
	tap_fail tool.dev.json "veth0/rxe0 RoCE and veth1/siw1 iWARP not both RDMA-capable" \
		"$tmp/dev.json" "$tmp/dev.err" "$tmp/dev.check"
fi

echo "# tool.sh: $SECONDS s before params"
# --- params -----------------------------------------------------------------------
next_port
$T "$sd" params -l -v --once --json 10.77.0.1 $port > "$tmp/params.srv" 2> "$tmp/params.srv.err" &
srv=$!
if wait_for_line "$tmp/params.srv.err" 30 listening $srv &&
	$T "$sd" params --json > "$tmp/params.defaults" 2>&1 &&
	$T "$sd" params --json 10.77.0.1 $port > "$tmp/params.json" 2>&1 &&
	wait $srv &&
	python3 - "$tmp/params.defaults" "$tmp/params.json" "$tmp/params.srv" > "$tmp/params.check" 2>&1 <<'PY'
import json, sys
mod = json.load(open(sys.argv[1]))
cli = json.load(open(sys.argv[2]))
srv = json.loads(open(sys.argv[3]).readline())
bad = []
for side, p in (("client", cli), ("server", srv)):
    for key, default in (("max_send_size", "max_send_size"), ("max_receive_size", "max_receive_size"),
                         ("max_fragmented_send_size", "max_fragmented_size"),
                         ("max_fragmented_receive_size", "max_fragmented_size"),
                         ("max_read_write_size", "max_read_write_size"),
                         ("receive_credit_max", "receive_credit_max"),
                         ("send_credit_target", "send_credit_target"),
                         ("keepalive_interval", "keepalive_interval")):
        if p[key] != mod[default]:
            bad.append(f"{side} {key} {p[key]} != module {default} {mod[default]}")
    if p["version"] != "1.0" or p["transport"] != "RoCE":
        bad.append(f"{side}: version/transport {p['version']} {p['transport']}")
if bad:
    sys.exit("; ".join(bad))
print("ok", cli)
PY
then
	tap_ok tool.params.rxe4
else
	kill $srv 2>/dev/null
	tap_fail tool.params.rxe4 "negotiated parameters differ from the module defaults" \
		"$tmp/params.defaults" "$tmp/params.json" "$tmp/params.srv" "$tmp/params.srv.err" \
		"$tmp/params.check"
fi

echo "# tool.sh: $SECONDS s before cat"
# --- cat -------------------------------------------------------------------------------
# The issue asks for 64 MiB each way, with and without --rdma. In make
# check's TCG guest (KASAN/lockdep kernel, another guest beside it) every
# transfer is 4 MiB: measured, 16 MiB took 6 s over siw with 64 KiB PDUs and
# 18-28 s over rxe with --rdma, and the script's time goes mostly to
# starting programs. The "big" transfers are messages over siw6 with 64 KiB
# PDUs on both ends (-o, which also exercises the options) and --rdma over
# rxe4 (1 MiB per RDMA WRITE, SMB's RoCE path); SD_TOOL_MIB=64 gives them
# the issue's size, SD_TOOL_SMALL_MIB scales the others.
big=${SD_TOOL_MIB:-4} small=${SD_TOOL_SMALL_MIB:-2}
pdu64k="-o max_send_size=64K -o max_receive_size=64K -o receive_credit_max=64"
head -c "${big}M" /dev/urandom > "$tmp/in.big"
head -c "${small}M" "$tmp/in.big" > "$tmp/in.small"
declare -A sha
sha[big]=$(sha256sum < "$tmp/in.big" | cut -d' ' -f1)
sha[small]=$(sha256sum < "$tmp/in.small" | cut -d' ' -f1)

# cat_case NAME ADDR DIRECTION SIZE FLAGS...: ADDR is both ends' address,
# or "LISTEN|CONNECT" with an empty LISTEN for a listener without one;
# DIRECTION to_listener (the
# listener receives) or from_listener (it sends); SIZE big or small. The
# receiving end's stdout and the sending end's stdin are files; both ends
# must exit 0 and the sha256 must match.
cat_case() {
	local name=$1 la=${2%%|*} ca=${2##*|} dir=$3 size=$4 lpid lrc crc got t0
	shift 4
	local in=$tmp/in.$size
	next_port
	rm -f "$tmp/out"
	: > "$tmp/l.err"
	if [ "$dir" = to_listener ]; then
		$T "$sd" cat -l -v --recv "$@" ${la:+"$la"} $port > "$tmp/out" 2> "$tmp/l.err" &
	else
		$T "$sd" cat -l -v --send "$@" ${la:+"$la"} $port < "$in" > /dev/null 2> "$tmp/l.err" &
	fi
	lpid=$!
	if ! wait_for_line "$tmp/l.err" 30 listening $lpid; then
		kill $lpid 2>/dev/null
		tap_fail "$name" "the listener did not start" "$tmp/l.err"
		return
	fi
	t0=$SECONDS
	if [ "$dir" = to_listener ]; then
		$T "$sd" cat --json --send "$@" "$ca" $port < "$in" > /dev/null 2> "$tmp/c.err"
	else
		$T "$sd" cat --json --recv "$@" "$ca" $port > "$tmp/out" 2> "$tmp/c.err"
	fi
	crc=$?
	wait $lpid
	lrc=$?
	got=$(sha256sum < "$tmp/out" | cut -d' ' -f1)
	if [ $crc -eq 0 ] && [ $lrc -eq 0 ] && [ "$got" = "${sha[$size]}" ]; then
		tap_ok "$name # $((SECONDS - t0)) s: $(tail -n1 "$tmp/c.err" | cut -c1-200)"
	else
		tap_fail "$name" "listener exit $lrc, connector exit $crc after $((SECONDS - t0)) s, sha256 ${got:0:12} want ${sha[$size]:0:12}" \
			"$tmp/l.err" "$tmp/c.err"
	fi
}
# shellcheck disable=SC2086 # word splitting of $pdu64k wanted
for dir in to_listener from_listener; do
	T="$TB" cat_case "tool.cat.siw6.messages.$dir.${big}mib" fd77::2 $dir big $pdu64k
	T="$TB" cat_case "tool.cat.rxe4.rdma.$dir.${big}mib" 10.77.0.1 $dir big --rdma
	cat_case "tool.cat.rxe4.messages.$dir.${small}mib" 10.77.0.1 $dir small
	cat_case "tool.cat.siw6.rdma.$dir.${small}mib" fd77::2 $dir small --rdma
done
# A listener without an address listens on all of them, IPv4 too.
cat_case "tool.cat.rxe4.wildcard.${small}mib" "|10.77.0.1" to_listener small
# Failures must look like failures on both ends.
# 1. Both ends --rdma or not: refused by the listener with a reason.
next_port
: > "$tmp/l.err"
$T "$sd" cat -l -v --rdma 10.77.0.1 $port > /dev/null 2> "$tmp/l.err" &
lpid=$!
wait_for_line "$tmp/l.err" 30 listening $lpid
echo hi | $T "$sd" cat 10.77.0.1 $port > /dev/null 2> "$tmp/c.err"
crc=$?
wait $lpid
lrc=$?
if [ $crc -eq 1 ] && [ $lrc -eq 1 ] && grep -q -- "--rdma" "$tmp/c.err"; then
	tap_ok tool.cat.mismatch
else
	tap_fail tool.cat.mismatch "listener exit $lrc, connector exit $crc, want 1 and 1" \
		"$tmp/l.err" "$tmp/c.err"
fi
# 2. The sender dies in the middle: the receiver has no end marker and fails.
for mode in messages rdma; do
	flag=
	[ $mode = rdma ] && flag=--rdma
	next_port
	: > "$tmp/l.err"
	$T "$sd" cat -l -v $flag 10.77.0.1 $port > "$tmp/out" 2> "$tmp/l.err" &
	lpid=$!
	wait_for_line "$tmp/l.err" 30 listening $lpid
	# The sender reads a FIFO this script holds open: 1 MiB, then nothing.
	rm -f "$tmp/fifo"
	mkfifo "$tmp/fifo"
	"$sd" cat $flag -v 10.77.0.1 $port < "$tmp/fifo" 2> "$tmp/c.err" &
	cpid=$!
	exec 3> "$tmp/fifo"
	head -c 1M "$tmp/in.big" >&3
	# How far the receiver wrote, from its stdout's file position (no
	# process per look: common.bash, "Waiting without starting processes").
	for _ in {1..75}; do
		pos=0
		while read -r key val; do
			[ "$key" = pos: ] && { pos=$val; break; }
		done </proc/$lpid/fdinfo/1 2>/dev/null
		[ "$pos" -ge 1048576 ] && break
		sd_sleep 0.2
	done
	kill -KILL $cpid
	exec 3>&-
	wait $lpid
	lrc=$?
	wait $cpid 2>/dev/null
	if [ $lrc -eq 1 ] && grep -q "ended before\|Connection reset\|Broken pipe" "$tmp/l.err"; then
		tap_ok "tool.cat.rxe4.$mode.truncated # $(stat -c %s "$tmp/out") bytes, then: $(tail -n1 "$tmp/l.err")"
	else
		tap_fail "tool.cat.rxe4.$mode.truncated" "receiver exit $lrc after the sender was killed, want 1" \
			"$tmp/l.err" "$tmp/c.err"
	fi
done

echo "# tool.sh: $SECONDS s before perf"
# --- perf --------------------------------------------------------------------------------
declare -A perf_port perf_srv
for t in $transports; do
	next_port
	perf_port[$t]=$port
	$T "$sd" perf -l -v "${addr[$t]}" $port > /dev/null 2> "$tmp/perf.$t.srv" &
	perf_srv[$t]=$!
	wait_for_line "$tmp/perf.$t.srv" 30 listening ${perf_srv[$t]}
done
read -r -a tlist <<< "$transports"
i=0
for spec in "${perf_cases[@]}"; do
	t=${tlist[$((i % ${#tlist[@]}))]}
	i=$((i + 1))
	port=${perf_port[$t]}
	name=${spec%%:*} args=${spec#*:}
	test=${args%% *} extra=${args#"$test"}
	size=64K
	[ $test = latency ] && size=64
	# shellcheck disable=SC2086 # extra: words
	$T "$sd" perf --json --test $test $extra --size $size --time 1 "${addr[$t]}" $port \
		> "$tmp/perf.json" 2> "$tmp/perf.err"
	rc=$?
	if [ $rc -eq 0 ] && python3 - "$tmp/perf.json" $test "$extra" > "$tmp/perf.check" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
extra = sys.argv[3].split()
want_api = extra[extra.index("--api") + 1] if "--api" in extra else \
    {"read": "async", "write": "async", "register": "v1"}.get(sys.argv[2])
want_depth = int(extra[extra.index("--depth") + 1]) if "--depth" in extra else 1
if r.get("api") != want_api:
    sys.exit(f"api {r.get('api')}, want {want_api}")
if sys.argv[2] in ("read", "write") and r.get("depth") != want_depth:
    sys.exit(f"depth {r.get('depth')}, want {want_depth}")
keys = ["iterations", "seconds", "bytes", "mib_per_s", "gbit_per_s", "ops_per_s", "size"]
if sys.argv[2] != "send":
    keys += ["latency_us." + k for k in ("min", "avg", "p50", "p99", "max")]
bad = []
for k in keys:
    v = r
    for part in k.split("."):
        v = v[part]
    # The guest's clock may tick coarsely (a 4 ms step was seen; a loaded
    # host makes the guest drop its TSC for jiffies): one operation inside
    # a tick measures 0, so the minimum may be 0, and the median too when
    # most operations are shorter than a tick (pooled register+deregister
    # at ~1.9 ms each, 2026-11-27). The mean and the maximum still must not.
    if not isinstance(v, (int, float)) or v < 0 or \
            (v == 0 and k not in ("latency_us.min", "latency_us.p50")):
        bad.append(f"{k}={v}")
if r["test"] != sys.argv[2] or r["verified"] is not True:
    bad.append(f"test/verified {r['test']} {r['verified']}")
if bad:
    sys.exit(" ".join(bad))
lat = r.get("latency_us", {}).get("avg", "-")
print(f"{r['mib_per_s']} MiB/s {r['ops_per_s']} ops/s avg {lat} us")
PY
	then
		tap_ok "tool.perf.$t.$name # $(cat "$tmp/perf.check")"
	else
		tap_fail "tool.perf.$t.$name" "exit $rc or bad JSON" "$tmp/perf.json" "$tmp/perf.err" \
			"$tmp/perf.check" "$tmp/perf.$t.srv"
	fi
done
for t in $transports; do
	kill ${perf_srv[$t]} 2>/dev/null
	wait ${perf_srv[$t]} 2>/dev/null
done
echo "# tool.sh: $SECONDS s in the guest"
tap_exit
