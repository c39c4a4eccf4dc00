#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the benchmark VM (non-debug kernel): perftest and
# `smbdirect perf` on the same rxe device, one after the other, and prints
# the ratios.
# Usage: guest-bench.sh SMBDIRECT_BINARY SECONDS
#
# Units: perftest's "BW average[MB/sec]" column is MiB/s (2^20 bytes: it
# divides by 0x100000, see its --help for --report_gbits). smbdirect perf
# prints mib_per_s (the same unit) and gbit_per_s; every throughput ratio
# below is MiB/s over MiB/s.
set -u
sd=$1 secs=${2:-5}
addr=10.77.0.1
out=$SD_OUT/bench.txt
: > "$out"
: > "$SD_OUT/perftest.log"
: > "$SD_OUT/smbdirect-perf.log"
log() { echo "$*" | tee -a "$out"; }

insmod "$SD_MODULE_DIR/af_smbdirect.ko" || { log "insmod failed"; exit 1; }

# perftest over rdma_cm (-R): same device, same addresses as ours. Its
# duration mode (-D) measures only between the margins (-f) at both ends:
# -D W+2 -f 1 samples for W seconds after a 1 s warm-up. It counts whole
# messages completed in that window, so at ~15 MiB/s an 8 MiB run sees a
# handful of them: those get a window of 2*SECONDS. smbdirect perf instead times
# exactly the calls it made, so it needs no such care.
perf() { # tool args...
	local tool=$1; shift
	timeout -k 5 120 "$tool" -R -d rxe0 -F "$@" >/tmp/$tool.srv 2>&1 &
	local srv=$!
	sleep 2
	timeout -k 5 120 "$tool" -R -d rxe0 -F "$@" "$addr" >/tmp/$tool.cli 2>&1
	wait $srv
	{ echo "=== $tool $*"; cat /tmp/$tool.cli; } >> "$SD_OUT/perftest.log"
}
# The result line is the first one after the "#bytes" header.
perf_col() { # file column
	awk -v c="$2" 'h && NF > c - 1 && $1 ~ /^[0-9]+$/ { print $c; exit } /#bytes/ { h = 1 }' "$1"
}
perf_bw() { # tool size [perftest args...] -> MiB/s
	local tool=$1 size=$2 window=$secs
	shift 2
	[ "$size" -gt 1048576 ] && window=$((2 * secs))
	perf "$tool" -s "$size" -D $((window + 2)) -f 1 "$@"
	perf_col "/tmp/$tool.cli" 4
}

send_bw=$(perf_bw ib_send_bw 1048576)
perf ib_send_lat -s 64 -n 2000
send_lat=$(perf_col /tmp/ib_send_lat.cli 6)
read_bw1=$(perf_bw ib_read_bw 1048576)
read_bw8=$(perf_bw ib_read_bw 8388608)
write_bw1=$(perf_bw ib_write_bw 1048576)
write_bw8=$(perf_bw ib_write_bw 8388608)
# perftest busy-polls its CQ; on this 2-vCPU TCG guest the poller and rxe's
# work compete for the CPUs, while af_smbdirect's ioctls sleep until done.
# perftest offers no fair alternative here: -e (sleep on CQ events) is
# refused with -D ("Duration mode doesn't work with events") and by
# ib_write_bw altogether ("Events feature not available on WRITE verb").

# smbdirect perf: one server for every run; the client prints one JSON
# object per run, logged whole. The time of a run is exactly the calls it
# timed (send: until the server confirmed the count), so no margins are
# needed as for perftest.
"$sd" perf -l -v $addr 7445 2>>"$SD_OUT/smbdirect-perf.log" &
sd_srv=$!
for _ in $(seq 50); do
	grep -q listening "$SD_OUT/smbdirect-perf.log" && break
	sleep 0.1
done
notes=()
sd_perf() { # label perf-args... -> /tmp/sd.json
	local label=$1
	shift
	rm -f /tmp/sd.json
	timeout -k 5 120 "$sd" perf --json "$@" $addr 7445 >/tmp/sd.json 2>/tmp/sd.err
	local rc=$?
	{ echo "=== smbdirect perf $* (exit $rc)"; cat /tmp/sd.json /tmp/sd.err; } \
		>> "$SD_OUT/smbdirect-perf.log"
	[ $rc -eq 0 ] || notes+=("  [$label] exit $rc: $(head -n1 /tmp/sd.err)")
	grep -q '"verified":false' /tmp/sd.json && notes+=("  [$label] data check FAILED")
}
sd_val() { # key.path -> value from /tmp/sd.json
	python3 -c 'import json, sys
try:
    v = json.load(open("/tmp/sd.json"))
    for k in sys.argv[1].split("."):
        v = v[k]
    print(v)
except Exception:
    pass' "$1"
}

sd_perf "send 1MiB" --test send --size 1M --time "$secs"
sd_bw=$(sd_val mib_per_s) sd_bw_gb=$(sd_val gbit_per_s)
sd_perf "latency 64B" --test latency --size 64 --iters 2000
sd_lat=$(sd_val latency_us.avg) sd_lat99=$(sd_val latency_us.p99)

rdma() { # read|write size label -> sets rdma_mib rdma_gb rdma_us
	sd_perf "$3" --test "$1" --size "$2" --time "$secs"
	rdma_mib=$(sd_val mib_per_s) rdma_gb=$(sd_val gbit_per_s) rdma_us=$(sd_val latency_us.avg)
}
rdma read 1M "read 1MiB";   rd1=$rdma_mib rd1_gb=$rdma_gb rd1_us=$rdma_us
rdma read 8M "read 8MiB";   rd8=$rdma_mib rd8_gb=$rdma_gb rd8_us=$rdma_us
rdma write 1M "write 1MiB"; wr1=$rdma_mib wr1_gb=$rdma_gb wr1_us=$rdma_us
rdma write 8M "write 8MiB"; wr8=$rdma_mib wr8_gb=$rdma_gb wr8_us=$rdma_us

sd_perf "register 1MiB" --test register --size 1M --iters 1000
reg=$(sd_val latency_us.avg) reg_min=$(sd_val latency_us.min) reg_p99=$(sd_val latency_us.p99)
kill $sd_srv 2>/dev/null
wait $sd_srv 2>/dev/null

# What the connections negotiated (server side of a test connection).
"$sd" params -l --once --json -v $addr 7446 >/tmp/params.json 2>/tmp/params.err &
for _ in $(seq 50); do
	grep -q listening /tmp/params.err && break
	sleep 0.1
done
timeout -k 5 60 "$sd" params --json $addr 7446 > /dev/null 2>&1
wait
params=$(head -n1 /tmp/params.json)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
v() { echo "${1:-n/a}"; }
log "benchmark on rxe0, kernel $(uname -r), ${secs}s sampled per bandwidth run ($((2 * secs))s for perftest 8 MiB)"
log "units: MiB/s = 2^20 B/s (perftest's \"MB/sec\" column is MiB/s); Gbit/s = 10^9 bit/s"
log "  ib_send_bw   1 MiB:   $(v "$send_bw") MiB/s"
log "  ib_read_bw   1 MiB:   $(v "$read_bw1") MiB/s"
log "  ib_read_bw   8 MiB:   $(v "$read_bw8") MiB/s"
log "  ib_write_bw  1 MiB:   $(v "$write_bw1") MiB/s"
log "  ib_write_bw  8 MiB:   $(v "$write_bw8") MiB/s"
log "  ib_send_lat  64 B:    $(v "$send_lat") us (t_avg)"
log "  smbdirect perf send 1 MiB messages: $(v "$sd_bw") MiB/s ($(v "$sd_bw_gb") Gbit/s)"
log "  smbdirect perf latency 64 B (round trip/2): $(v "$sd_lat") us avg, $(v "$sd_lat99") us p99"
log "  smbdirect perf read  1 MiB (RDMA_READV):  $(v "$rd1") MiB/s ($(v "$rd1_gb") Gbit/s, $(v "$rd1_us") us/call)"
log "  smbdirect perf read  8 MiB (RDMA_READV):  $(v "$rd8") MiB/s ($(v "$rd8_gb") Gbit/s, $(v "$rd8_us") us/call)"
log "  smbdirect perf write 1 MiB (RDMA_WRITEV): $(v "$wr1") MiB/s ($(v "$wr1_gb") Gbit/s, $(v "$wr1_us") us/call)"
log "  smbdirect perf write 8 MiB (RDMA_WRITEV): $(v "$wr8") MiB/s ($(v "$wr8_gb") Gbit/s, $(v "$wr8_us") us/call)"
log "  smbdirect perf register 1 MiB (REGISTER+DEREGISTER): $(v "$reg") us avg, $(v "$reg_min") us min, $(v "$reg_p99") us p99"
[ -n "${params:-}" ] && log "  negotiated (server side): $params"
for n in "${notes[@]}"; do
	[ -n "$n" ] && log "$n"
done
log "ratio throughput smbdirect send/ib_send_bw: $(ratio "${sd_bw:-0}" "${send_bw:-0}")"
log "ratio latency    smbdirect latency/ib_send_lat: $(ratio "${sd_lat:-0}" "${send_lat:-0}") (lower is better)"
log "ratio read  1MiB smbdirect/ib_read_bw:  $(ratio "${rd1:-0}" "${read_bw1:-0}")"
log "ratio read  8MiB smbdirect/ib_read_bw:  $(ratio "${rd8:-0}" "${read_bw8:-0}")"
log "ratio write 1MiB smbdirect/ib_write_bw: $(ratio "${wr1:-0}" "${write_bw1:-0}")"
log "ratio write 8MiB smbdirect/ib_write_bw: $(ratio "${wr8:-0}" "${write_bw8:-0}")"
rmmod af_smbdirect
exit 0
