#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""sdranges.py KALLSYMS MODULES [NAMES] > ranges

The ranges file of the sdcount TCG plugin (tests/bench/plugin/sdcount.c):
"start end bucket" per line, hex, end exclusive, sorted, non-overlapping,
from the guest's /proc/kallsyms and /proc/modules (read as root: without
it kallsyms shows zeros) and NAMES, the "BUCKET NAME" lines of sdsyms.sh
for the built-in kernel's functions. A function's range runs from its
address to the next text symbol's. Attribution, first match:
  copy          the kernel's copy routines (memcpy and friends, copy to and
                from user space and iov_iters, page copies, copy+checksum)
  crc           crc32 and crc32c (rxe's ICRC, siw's MPA CRC: the device's
                work on hardware)
  af_smbdirect  this project's module
  rxe, siw      the software RDMA devices (module or built in)
  rdma_core     ib_core, rdma_cm, iw_cm ... (module or built in)
  ksmbd, cifs, smb_common, net   as sdsyms.sh names them, or by module
  modules       any other module
Everything else in the kernel is left out: the plugin counts it as
"kernel".
"""
import re
import sys

COPY = re.compile(
    r"^(__)?(memcpy|memmove|memcpy_orig|memmove_orig|memcpy_erms|"
    r"rep_movs_alternative|rep_stos_alternative|"
    r"copy_user_\w+|_?copy_to_user|_?copy_from_user|_?copy_from_user_nocache|"
    r"__copy_user_\w+|copy_mc_\w+|"
    r"_copy_to_iter|_copy_from_iter\w*|copy_page_to_iter\w*|"
    r"copy_page_from_iter\w*|copy_to_user_iter\w*|copy_from_user_iter\w*|"
    r"memcpy_to_iter|memcpy_from_iter\w*|copy_folio_from_iter\w*|"
    r"copy_page|copy_mc_to_kernel|copy_mc_to_user|"
    r"csum_partial_copy\w*|csum_and_copy_\w+|"
    r"memcpy_to_page|memcpy_from_page|memcpy_page)$")

# The software devices' checksums: rxe's ICRC is crc32_le over every
# packet, siw's MPA CRC (off by default) crc32c. A NIC computes them.
CRC = re.compile(r"^(__)?(crc32\w*|crc32c\w*|crc_pcl|crc32_le_base|crc32_be_base)$")

MODULE_BUCKETS = {
    "af_smbdirect": "af_smbdirect",
    "rdma_rxe": "rxe",
    "siw": "siw",
    "ib_core": "rdma_core", "rdma_cm": "rdma_core", "iw_cm": "rdma_core",
    "ib_cm": "rdma_core", "ib_uverbs": "rdma_core", "rdma_ucm": "rdma_core",
    "ksmbd": "ksmbd",
    "cifs": "cifs",
    "smbdirect": "smb_common",
}


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    names = {}
    if len(sys.argv) == 4:
        with open(sys.argv[3]) as f:
            for line in f:
                b, n = line.split()
                names[n] = b
    mods = {}
    with open(sys.argv[2]) as f:
        for line in f:
            w = line.split()
            # name size refcount deps state address
            if len(w) >= 6 and w[5].startswith("0x"):
                mods[w[0]] = (int(w[5], 16), int(w[1]))
    syms = []
    with open(sys.argv[1]) as f:
        for line in f:
            w = line.split()
            if len(w) < 3 or w[1] not in "tTwW":
                continue
            a = int(w[0], 16)
            if a == 0:
                continue
            mod = w[3].strip("[]") if len(w) > 3 else None
            syms.append((a, w[2], mod))
    if not syms:
        sys.exit("sdranges: no text symbols in %s (not read as root?)" % sys.argv[1])
    syms.sort()
    out = []
    for i, (a, name, mod) in enumerate(syms):
        if i + 1 < len(syms) and syms[i + 1][0] == a:
            continue  # aliases: the last one at this address speaks
        end = syms[i + 1][0] if i + 1 < len(syms) else a + 4096
        if mod in mods:
            base, size = mods[mod]
            if base <= a < base + size:
                end = min(end, base + size)
        end = min(end, a + (1 << 20))
        if COPY.match(name):
            b = "copy"
        elif CRC.match(name):
            b = "crc"
        elif mod:
            b = MODULE_BUCKETS.get(mod, "modules")
        else:
            b = names.get(name)
        if not b:
            continue
        if out and out[-1][2] == b and out[-1][1] == a:
            out[-1][1] = end
        else:
            out.append([a, end, b])
    for a, e, b in out:
        print("%x %x %s" % (a, e, b))


if __name__ == "__main__":
    main()
