#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""sdprofile.py DUMP KALLSYMS RANGES PAIR [TOP]

The functions that executed the most guest instructions in one window of
the sdcount plugin (its dump= file: "pair label addr insns" per TB), by
bucket: the TB's address is looked up in KALLSYMS (the guest's
/proc/kallsyms, saved by guest-count.sh) and RANGES (the plugin's ranges
file). User-space TBs count as one "[user]" entry. TOP (default 10)
functions per bucket.
"""
import bisect
import sys


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    dump, kallsyms, ranges, pair = sys.argv[1:5]
    top = int(sys.argv[5]) if len(sys.argv) == 6 else 10
    syms = []
    with open(kallsyms) as f:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[1] in "tTwW":
                syms.append((int(w[0], 16), w[2] + (" " + w[3] if len(w) > 3 else "")))
    syms.sort()
    addrs = [a for a, _ in syms]
    rng = []
    with open(ranges) as f:
        for line in f:
            s, e, b = line.split()
            rng.append((int(s, 16), int(e, 16), b))
    rng.sort()
    starts = [s for s, _, _ in rng]
    per = {}
    total = 0
    with open(dump) as f:
        for line in f:
            w = line.split()
            if w[0] != pair:
                continue
            a, n = int(w[2], 16), int(w[3])
            total += n
            if not a >> 63:
                b, fn = "user", "[user]"
            else:
                i = bisect.bisect_right(starts, a) - 1
                b = rng[i][2] if i >= 0 and a < rng[i][1] else "kernel"
                j = bisect.bisect_right(addrs, a) - 1
                fn = syms[j][1] if j >= 0 else hex(a)
            per.setdefault(b, {}).setdefault(fn, 0)
            per[b][fn] += n
    if not total:
        sys.exit("sdprofile: no window %s in %s" % (pair, dump))
    print("window %s: %d instructions" % (pair, total))
    for b, fns in sorted(per.items(), key=lambda x: -sum(x[1].values())):
        s = sum(fns.values())
        print("%-13s %12d %5.1f%%" % (b, s, 100.0 * s / total))
        for fn, n in sorted(fns.items(), key=lambda x: -x[1])[:top]:
            print("    %12d %5.1f%%  %s" % (n, 100.0 * n / total, fn))


if __name__ == "__main__":
    main()
