#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""count-report.py RUNS.TXT [JSON-OUT]

The counted bench's table (tests/bench/run.sh): from guest-count.sh's
runs.txt (per run a "row=... ops=N bytes=B" line and the sdcount plugin's
report for that run's window), per row the guest instructions per byte,
outside the software RDMA device (rxe, siw and their crc32: a NIC's work on
hardware) and
per bucket, per I/O, and the spread of the runs: (max - min) / mean of the
instructions per byte outside the device, which must stay within 2 %.
Exit 1 if a row's spread is above 2 % or a run failed.
"""
import json
import sys

# The software RDMA device's work, a NIC's on hardware: rxe and siw, and the
# crc32 they compute over every packet (sdranges.py's "crc").
DEVICE = ("rxe", "siw", "crc")
ORDER = ("user", "kernel", "af_smbdirect", "rdma_core", "copy", "net",
         "ksmbd", "cifs", "smb_common", "modules", "rxe", "siw", "crc")


def kv(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    rows, failed = {}, []
    pending = None
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if line.startswith("row="):
                pending = kv(line)
            elif line.startswith("sdcount ") and pending:
                c = kv(line)
                if "error" in c:
                    failed.append(line)
                else:
                    run = {k: int(v) for k, v in c.items()
                           if k not in ("label", "pair")}
                    run["bytes"] = int(pending["bytes"])
                    run["ops"] = int(pending["ops"])
                    run["pair"] = int(c["pair"])
                    rows.setdefault(pending["row"], []).append(run)
                pending = None
            elif line:
                failed.append(line)
    status = 0
    out = {}
    print("guest instructions per byte (both ends of the connection, one guest; "
          "'outside' leaves out the software RDMA device)")
    buckets = [b for b in ORDER if any(b in r for rs in rows.values() for r in rs)]
    print("%-14s %4s %9s %9s %9s  %s" % ("row", "runs", "outside", "spread%",
                                         "insn/io", "  ".join("%s" % b for b in buckets)))
    for name, runs in rows.items():
        per = [(r["insns"] - sum(r.get(d, 0) for d in DEVICE)) / r["bytes"] for r in runs]
        mean = sum(per) / len(per)
        spread = (max(per) - min(per)) / mean * 100 if mean else 0.0
        io = sum((r["insns"] - sum(r.get(d, 0) for d in DEVICE)) / r["ops"]
                 for r in runs) / len(runs)
        byb = {b: sum(r.get(b, 0) / r["bytes"] for r in runs) / len(runs) for b in buckets}
        print("%-14s %4d %9.4f %9.2f %9.0f  %s  (windows %s)" % (
            name, len(runs), mean, spread, io,
            "  ".join("%s=%.4f" % (b, byb[b]) for b in buckets),
            ",".join(str(r["pair"]) for r in runs)))
        out[name] = {"runs": runs, "outside_insns_per_byte": mean,
                     "spread_percent": spread, "outside_insns_per_io": io,
                     "insns_per_byte": byb}
        if len(runs) < 2 or spread > 2.0:
            status = 1
    for f in failed:
        print("failed: " + f)
        status = 1
    if len(sys.argv) == 3:
        with open(sys.argv[2], "w") as f:
            json.dump(out, f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
