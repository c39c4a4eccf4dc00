#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Many requests in flight (issue 24, item 3): smbdirect-example-smb2-client
# at --depth 8 against smbdirect-example-smb2-server, both on the
# asynchronous RDMA interface, over rxe (RoCE, 10.77.0.1) and siw (iWARP,
# 10.77.0.2) on port 7445 (ksmbd keeps 445 and 5445). A file of 2 MiB +
# 123 bytes goes up in 64 KiB WRITEs (33 requests, the last short) with
# SMB2_CHANNEL_RDMA_V1_INVALIDATE and comes back in 256 KiB READs with
# RDMA_V1, then again with every READ rounded up past the end of the file;
# sha256 compares the source, the server's file and each copy. The client
# must report 8 requests outstanding at its peak and every WRITE's token
# invalidated by the server; the server's summary must show the bytes
# moved by RDMA both ways, every READ answered in the same sendmsg as its
# RDMA WRITE from the file, and send-with-invalidate for the WRITEs. TAP on
# stdout; case names examples-depth.TRANSPORT.CASE.
set -u
. "$(dirname "$0")/common.bash"

client=${SD_US:-}/examples/smbdirect-example-smb2-client
server=${SD_US:-}/examples/smbdirect-example-smb2-server
work=$(mktemp -d /tmp/sd-examples-depth.XXXXXX)
transports=(rxe4 siw4)
cases=(put.depth8 sha256.server get.depth8 get.depth8.round_up server.counts)
tap_plan $((${#transports[@]} * ${#cases[@]}))
fail_rest() { # transport first-case-index reason
	local i
	for ((i = $2; i < ${#cases[@]}; i++)); do tap_fail "examples-depth.$1.${cases[i]}" "$3"; done
}
if [ -z "${SD_US:-}" ] || [ ! -x "$client" ] || [ ! -x "$server" ]; then
	for t in "${transports[@]}"; do fail_rest "$t" 0 "the examples were not built (SD_US=${SD_US:-})"; done
	tap_exit
fi

size=$((2 * 1048576 + 123))
head -c "$size" /dev/urandom >"$work/src"
sum() { sha256sum "$1" | cut -d' ' -f1; }
src_sum=$(sum "$work/src")
json_val() { # file key
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null
}

run_transport() { # transport addr
	local t=$1 addr=$2 share=$work/share-$1 log=$work/server-$1.log spid out rc why
	local n_read n_write n_same n_inval
	mkdir -p "$share"
	"$server" --listen "$addr" --port 7445 --log "$log" "$share" &
	spid=$!
	if ! wait_for_line "$log" 30 'listening on' "$spid"; then
		fail_rest "$t" 0 "server did not start: $(tail -n 1 "$log")"
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		return
	fi
	cli() { timeout -s KILL 120 "$client" "$addr" 7445 "//$addr/share" "$@" --json; }

	# put: WRITEs with _INVALIDATE, 8 outstanding.
	cli put "$work/src" f.bin --rdma --invalidate --depth 8 --io-size 64K \
		>"$work/put-$t.json" 2>"$work/put-$t.err"
	rc=$? why=
	echo "# $t put: $(cat "$work/put-$t.json" "$work/put-$t.err")"
	if [ $rc -ne 0 ]; then
		why="put exit $rc: $(tail -n 1 "$work/put-$t.err")"
	elif [ "$(json_val "$work/put-$t.json" bytes)" != "$size" ]; then
		why="put moved $(json_val "$work/put-$t.json" bytes) bytes, not $size"
	elif [ "$(json_val "$work/put-$t.json" max_outstanding)" != 8 ]; then
		why="at most $(json_val "$work/put-$t.json" max_outstanding) WRITEs were outstanding, not 8"
	elif [ "$(json_val "$work/put-$t.json" remote_invalidations)" != 33 ]; then
		why="$(json_val "$work/put-$t.json" remote_invalidations) of 33 tokens were invalidated by the server"
	fi
	[ -z "$why" ] && tap_ok "examples-depth.$t.put.depth8" || tap_fail "examples-depth.$t.put.depth8" "$why" "$log"
	if [ -f "$share/f.bin" ] && [ "$(sum "$share/f.bin")" = "$src_sum" ]; then
		tap_ok "examples-depth.$t.sha256.server"
	else
		tap_fail "examples-depth.$t.sha256.server" "the server's file differs from the source"
	fi

	# get: READs with RDMA_V1, 8 outstanding; then every READ asks for 256 KiB.
	local c name extra
	for c in get.depth8 get.depth8.round_up; do
		name=examples-depth.$t.$c extra=
		[ "$c" = get.depth8.round_up ] && extra=--round-up
		rm -f "$work/back"
		cli get f.bin "$work/back" --rdma --depth 8 --io-size 64K $extra \
			>"$work/$c-$t.json" 2>"$work/$c-$t.err"
		rc=$? why=
		echo "# $t $c: $(cat "$work/$c-$t.json" "$work/$c-$t.err")"
		if [ $rc -ne 0 ]; then
			why="get exit $rc: $(tail -n 1 "$work/$c-$t.err")"
		elif [ "$(sum "$work/back")" != "$src_sum" ]; then
			why="the copy differs from the source ($(stat -c %s "$work/back") bytes)"
		elif [ "$(json_val "$work/$c-$t.json" max_outstanding)" != 8 ]; then
			why="at most $(json_val "$work/$c-$t.json" max_outstanding) READs were outstanding, not 8"
		fi
		[ -z "$why" ] && tap_ok "$name" || tap_fail "$name" "$why" "$log"
	done

	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	grep 'summary:' "$log" | sed "s/^/# $t server: /"
	add() { sed -n "s/$1/\\1/p" "$log" | awk '{ n += $1 } END { print n + 0 }'; }
	n_read=$(add '.*READ over RDMA: [0-9]* RDMA WRITE from the file, \([0-9]*\) bytes.*')
	n_same=$(add '.* \([0-9]*\) responses in the same sendmsg).*')
	n_write=$(add '.*WRITE over RDMA: [0-9]* RDMA READ, \([0-9]*\) bytes.*')
	n_inval=$(add '.*; \([0-9]*\) send_with_invalidate;.*')
	why=
	if [ "$(grep -c 'summary:' "$log")" -ne 3 ]; then
		why="$(grep -c 'summary:' "$log") connection summaries in the server's log, not 3"
	elif [ "$n_write" -ne "$size" ]; then
		why="the server RDMA-read $n_write bytes, not $size"
	elif [ "$n_read" -ne $((2 * size)) ]; then
		why="the server RDMA-wrote $n_read bytes from the file, not $((2 * size))"
	elif [ "$n_same" -ne $((33 + 33)) ]; then
		why="$n_same READ responses went with their RDMA WRITE, not 66"
	elif [ "$n_inval" -ne 33 ]; then
		why="$n_inval responses were sent with invalidate, not 33 (the WRITEs)"
	fi
	[ -z "$why" ] && tap_ok "examples-depth.$t.server.counts" || tap_fail "examples-depth.$t.server.counts" "$why" "$log"
	rm -rf "$share"
}

run_transport rxe4 10.77.0.1
if ensure_siw_on_veth1; then
	run_transport siw4 10.77.0.2
else
	fail_rest siw4 0 "could not add a siw link on veth1"
fi
rm -rf "$work"
tap_exit
