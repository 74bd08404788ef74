"""Programs x modes of a silence sweep (scripts/silence_sweep.py): how many ran, how many said
anything, exit statuses unlike plain python's.

usage: python scripts/silence_sweep_summary.py OUT/results.jsonl [PLAIN_RUN/results.jsonl]
"""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
plain_rows = [json.loads(line) for line in open(sys.argv[2])] if len(sys.argv) > 2 else rows
latest = {(r["name"], r["mode"]): r for r in rows}
plain = {r["name"]: r["exit"] for r in plain_rows if r["mode"] == "plain"}
for mode in ("plain", "default", "full", "strict"):
    got = [r for (n, m), r in latest.items() if m == mode]
    if not got:
        continue
    said = [r for r in got if r["said"]]
    nonzero = [r for r in got if r["exit"] != 0]
    unlike = [r for r in got if r["name"] in plain and r["exit"] != plain[r["name"]]]
    print(f"{mode}: {len(got)} programs, {len(said)} said something, exit != 0: {len(nonzero)}, "
          f"exit unlike plain: {len(unlike)} (of {sum(r['name'] in plain for r in got)} with a plain run)")
    for r in said + nonzero:
        print("   ", r["name"], r["exit"], r["codes"])
