#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the test VM for `make demo`.
set -eu
out=$SD_OUT/demo.txt
{
	echo "kernel: $(uname -r)"
	echo "RDMA links:"
	rdma link show | sed 's/^/  /'
	insmod "$SD_MODULE_DIR/af_smbdirect.ko"
	echo "dmesg: $(dmesg | grep 'af_smbdirect: loaded' | tail -n1 | sed -E 's/^\[[ 0-9.]+\] //')"
	echo "address family: $(cat /sys/module/af_smbdirect/parameters/family)" \
		"(published in /sys/module/af_smbdirect/parameters/family)"
	if grep -q ' smbdirect_socket_create_kern$' /proc/kallsyms; then
		echo "in-tree smbdirect (used by cifs and ksmbd) is present too"
	fi
	state=$(cat /sys/module/af_smbdirect/initstate)
	[ "$state" = live ] && echo "af_smbdirect is loaded (initstate: $state)"
} > "$out" 2>&1
