#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the benchmark VM (non-debug kernel): perftest and sd_bench on
# the same rxe device, one after the other, and prints the ratios.
# Usage: guest-bench.sh BENCH_BIN_DIR SECONDS
#
# Units: perftest's "BW average[MB/sec]" column is MiB/s (2^20 bytes: it
# divides by 0x100000, see its --help for --report_gbits). sd_bench prints
# both MB/s (10^6) and MiB/s; every throughput ratio below is MiB/s over
# MiB/s.
set -u
bin=$1 secs=${2:-5}
addr=10.77.0.1
out=$SD_OUT/bench.txt
: > "$out"
: > "$SD_OUT/perftest.log"
: > "$SD_OUT/sd_bench.log"
log() { echo "$*" | tee -a "$out"; }

insmod "$SD_MODULE_DIR/af_smbdirect.ko" || { log "insmod failed"; exit 1; }

# perftest over rdma_cm (-R): same device, same addresses as ours. Its
# duration mode (-D) measures only between the margins (-f) at both ends:
# -D W+2 -f 1 samples for W seconds after a 1 s warm-up. It counts whole
# messages completed in that window, so at ~15 MiB/s an 8 MiB run sees a
# handful of them: those get a window of 2*SECONDS. sd_bench instead times
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

sd() { # mode n size
	rm -f /tmp/sd.srv /tmp/sd.cli
	timeout -k 5 120 "$bin/sd_bench" "$1" server $addr 7445 "$2" "$3" >/tmp/sd.srv 2>&1 &
	local srv=$!
	for _ in $(seq 50); do
		grep -q listening /tmp/sd.srv 2>/dev/null && break
		sleep 0.1
	done
	timeout -k 5 120 "$bin/sd_bench" "$1" client $addr 7445 "$2" "$3" >/tmp/sd.cli 2>&1
	echo "client exit $?" >> /tmp/sd.cli
	wait $srv
	echo "server exit $?" >> /tmp/sd.srv
	{ echo "=== sd_bench $* server"; cat /tmp/sd.srv
	  echo "=== sd_bench $* client"; cat /tmp/sd.cli; } >> "$SD_OUT/sd_bench.log"
}
sd_val() { # key: its value from either side
	awk -v k="$1" '$1 == k { print $2; exit }' /tmp/sd.srv /tmp/sd.cli
}
# Why a run gave no number, or its data check failed; printed at the end.
notes=()
sd_note() { # label
	notes+=("$(grep -h -e '^sd_bench:' -e 'verify FAILED' -e '^client exit [^0]' \
		-e '^server exit [^0]' /tmp/sd.srv /tmp/sd.cli | sed "s|^|  [$1] |")")
}

sd bw "$secs" 1048576
sd_bw=$(sd_val bw_MiBps) sd_bw_mb=$(sd_val bw_MBps)
sd_note "stream bw"
sd lat 2000 64
sd_lat=$(sd_val lat_us)
sd_note "stream lat"

rdma() { # mode size label -> sets rdma_mib rdma_mb rdma_us
	sd "$1" "$secs" "$2"
	local key=rdma_read
	[ "$1" = writev ] && key=rdma_write
	rdma_mib=$(sd_val ${key}_MiBps) rdma_mb=$(sd_val ${key}_MBps)
	rdma_us=$(awk -v k="${key}_calls" '$1 == k { print $6; exit }' /tmp/sd.srv)
	[ -n "${params:-}" ] || params=$(sed -n 's/^params: //p' /tmp/sd.srv)
	notes+=("$(grep -h -e '^peer buffer:' -e '^verify ok' /tmp/sd.srv /tmp/sd.cli |
		sed "s|^|  [$3] |")")
	sd_note "$3"
}
rdma readv 1048576 "readv 1MiB";  rd1=$rdma_mib rd1_mb=$rdma_mb rd1_us=$rdma_us
rdma readv 8388608 "readv 8MiB";  rd8=$rdma_mib rd8_mb=$rdma_mb rd8_us=$rdma_us
rdma writev 1048576 "writev 1MiB"; wr1=$rdma_mib wr1_mb=$rdma_mb wr1_us=$rdma_us
rdma writev 8388608 "writev 8MiB"; wr8=$rdma_mib wr8_mb=$rdma_mb wr8_us=$rdma_us

sd reg 1000 1048576
reg=$(sd_val reg_dereg_us) reg_r=$(sd_val reg_us) reg_d=$(sd_val dereg_us)
reg_min=$(sd_val reg_dereg_min_us)
sd_note "reg"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
v() { echo "${1:-n/a}"; }
log "benchmark on rxe0, kernel $(uname -r), ${secs}s sampled per bandwidth run ($((2 * secs))s for perftest 8 MiB)"
log "units: MiB/s = 2^20 B/s (perftest's \"MB/sec\" column is MiB/s); MB/s = 10^6 B/s"
log "  ib_send_bw   1 MiB:   $(v "$send_bw") MiB/s"
log "  ib_read_bw   1 MiB:   $(v "$read_bw1") MiB/s"
log "  ib_read_bw   8 MiB:   $(v "$read_bw8") MiB/s"
log "  ib_write_bw  1 MiB:   $(v "$write_bw1") MiB/s"
log "  ib_write_bw  8 MiB:   $(v "$write_bw8") MiB/s"
log "  ib_send_lat  64 B:    $(v "$send_lat") us (t_avg)"
log "  af_smbdirect stream 1 MiB messages: $(v "$sd_bw") MiB/s ($(v "$sd_bw_mb") MB/s)"
log "  af_smbdirect stream 64 B round trip/2: $(v "$sd_lat") us"
log "  af_smbdirect RDMA_READV  1 MiB: $(v "$rd1") MiB/s ($(v "$rd1_mb") MB/s, $(v "$rd1_us") us/call)"
log "  af_smbdirect RDMA_READV  8 MiB: $(v "$rd8") MiB/s ($(v "$rd8_mb") MB/s, $(v "$rd8_us") us/call)"
log "  af_smbdirect RDMA_WRITEV 1 MiB: $(v "$wr1") MiB/s ($(v "$wr1_mb") MB/s, $(v "$wr1_us") us/call)"
log "  af_smbdirect RDMA_WRITEV 8 MiB: $(v "$wr8") MiB/s ($(v "$wr8_mb") MB/s, $(v "$wr8_us") us/call)"
log "  af_smbdirect REGISTER+DEREGISTER 1 MiB: $(v "$reg") us (register $(v "$reg_r") us, deregister $(v "$reg_d") us, min pair $(v "$reg_min") us)"
[ -n "${params:-}" ] && log "  RDMA connection parameters (server side): $params"
for n in "${notes[@]}"; do
	[ -n "$n" ] && log "$n"
done
log "ratio throughput af_smbdirect/ib_send_bw: $(ratio "${sd_bw:-0}" "${send_bw:-0}")"
log "ratio latency    af_smbdirect/ib_send_lat: $(ratio "${sd_lat:-0}" "${send_lat:-0}") (lower is better)"
log "ratio rdma_readv/ib_read_bw 1MiB: $(ratio "${rd1:-0}" "${read_bw1:-0}")"
log "ratio rdma_readv/ib_read_bw 8MiB: $(ratio "${rd8:-0}" "${read_bw8:-0}")"
log "ratio rdma_writev/ib_write_bw 1MiB: $(ratio "${wr1:-0}" "${write_bw1:-0}")"
log "ratio rdma_writev/ib_write_bw 8MiB: $(ratio "${wr8:-0}" "${write_bw8:-0}")"
log "reg+dereg 1 MiB: $(v "$reg") us"
rmmod af_smbdirect
exit 0
