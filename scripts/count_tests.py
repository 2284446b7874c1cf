#!/usr/bin/env python3
"""scripts/count_tests.py LOG.json… — sum test cases over meson test logs (testlog.json).

A doctest executable counts its test cases, from its last
  "[doctest] test cases: X | Y passed | Z failed | W skipped"
line (plus one failure if meson saw it fail without a failed case: a crash after the summary, a
timeout, a sanitizer report at exit). Any other test (samples, scripts) counts one. A missing or
unreadable log counts one failure. Prints "PASSED FAILED"."""
import json
import re
import sys

SUMMARY = re.compile(r"\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed")
OK = ("OK", "EXPECTEDFAIL", "SKIP")

passed = failed = 0
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
    except OSError as e:
        print(f"count_tests: {e}", file=sys.stderr)
        failed += 1
        continue
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            t = json.loads(line)
        except json.JSONDecodeError:
            failed += 1
            continue
        out = (t.get("stdout") or "") + (t.get("stderr") or "")
        found = SUMMARY.findall(out)
        ok = t.get("result") in OK
        if found:
            _, p, fl = map(int, found[-1])
            passed += p
            failed += fl
            if not ok and fl == 0:
                failed += 1
        elif ok:
            passed += 1
        else:
            failed += 1
print(passed, failed)
