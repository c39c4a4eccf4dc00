#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sdsyms.sh KDIR > names
#
# For tests/bench/plugin/sdranges.py: which built-in kernel function is
# whose, from the kernel build tree KDIR (the bench kernel builds rxe, siw,
# ksmbd, cifs and the network stack in, so /proc/kallsyms does not tell
# them apart). One line per text symbol: "BUCKET NAME", from the objects
# under each directory:
#   rxe        drivers/infiniband/sw/rxe
#   siw        drivers/infiniband/sw/siw
#   rdma_core  drivers/infiniband/core
#   ksmbd      fs/smb/server
#   cifs       fs/smb/client
#   smb_common fs/smb/common, fs/smb/smbdirect (7.x's shared module)
#   net        net/, drivers/net/
# A name defined in two buckets (two static functions) is left out: it
# counts as "kernel".
set -euo pipefail
kdir=${1:?usage: sdsyms.sh KDIR}
[ -d "$kdir" ] || { echo "sdsyms: no directory $kdir" >&2; exit 1; }
while read -r bucket dirs; do
	for d in $dirs; do
		[ -d "$kdir/$d" ] || continue
		find "$kdir/$d" -name '*.o' ! -name '*.mod.o' ! -name 'built-in*' -print0 |
			xargs -0 -r nm --defined-only 2>/dev/null |
			awk -v b="$bucket" '$2 ~ /^[tT]$/ { print b, $3 }'
	done
done <<'EOT' | sort -u | awk '{ n[$2]++; b[$2] = $1 } END { for (s in n) if (n[s] == 1) print b[s], s }' | sort
rxe drivers/infiniband/sw/rxe
siw drivers/infiniband/sw/siw
rdma_core drivers/infiniband/core
ksmbd fs/smb/server
cifs fs/smb/client
smb_common fs/smb/common fs/smb/smbdirect
net net drivers/net
EOT
