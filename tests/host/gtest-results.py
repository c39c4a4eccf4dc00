#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# gtest-results.py LAYER XML RESULTS: one "pass|fail LAYER/Suite.case" line
# per case of a GoogleTest XML report appended to RESULTS (none when RESULTS
# is empty), each failure printed with its message, then a count line.
# Exit 1 when a case failed.
import sys
import xml.etree.ElementTree as ET

layer, xml, results = sys.argv[1:4]
root = ET.parse(xml).getroot()
out = open(results, "a") if results else None
failed = total = 0
for case in root.iter("testcase"):
    if case.get("result", "completed") == "skipped":
        continue
    total += 1
    name = f"{case.get('classname')}.{case.get('name')}"
    fails = case.findall("failure")
    if out:
        out.write(f"{'fail' if fails else 'pass'} {layer}/{name}\n")
    if fails:
        failed += 1
        print(f"FAILED {layer}/{name}")
        for f in fails:
            print("    " + (f.get("message") or "").replace("\n", "\n    "))
label = "gtest" if layer == "host" else f"gtest ({layer.removeprefix('host-')})"
print(f"{label}: {total - failed} passed, {failed} failed, {total} total")
sys.exit(1 if failed else 0)
