# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/interop/*.sh (not a test itself: check.sh runs *.sh).
# TAP helpers and the guest facts the interop scripts share.

tap_n=0 tap_failed=0
tap_plan() { echo "1..$1"; }
tap_ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n $1"; }
tap_skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n $1 # SKIP $2"; }
# tap_fail NAME REASON [LOG...]: the logs' last lines as comments, then the verdict.
tap_fail() {
	local name=$1 why=$2 f
	shift 2
	for f in "$@"; do
		[ -s "$f" ] && tail -n 12 "$f" | sed "s|^|# $(basename "$f"): |"
	done
	tap_n=$((tap_n + 1)); tap_failed=1
	echo "not ok $tap_n $name # ${why//$'\n'/ }"
}
tap_exit() { exit "$tap_failed"; }

# The C peers (tests/selftests/interop_*.c) are built next to the selftests.
helper() { echo "${SD_SELFTESTS:?SD_SELFTESTS is not set}/interop/$1"; }

# Soft-iWARP cannot be reached through guest-init.sh's siw0 on lo (RDMA CM
# finds no route for 127.0.0.1/::1 on it; rping fails alike), so the iWARP
# cases use a siw link on veth1 (10.77.0.2), added here when missing.
ensure_siw_on_veth1() {
	rdma link show 2>/dev/null | grep -q '^link siw[^ ]* .* netdev veth1 *$' ||
		rdma link add siw1 type siw netdev veth1
}

# Waits up to $2 seconds for the file $1 to contain $3; fails early if PID $4 dies.
wait_for_line() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -q "$3" "$1" 2>/dev/null && return 0
		[ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null && return 1
		sleep 0.1
	done
	return 1
}

# The first error line a helper wrote, for the verdict.
first_error() { grep -v '^\(negotiated\|listening\|accepted\|SMB2\)' "$1" | head -n 1; }
