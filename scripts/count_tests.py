#!/usr/bin/env python3
"""Sum test cases over meson test logs (testlog.json). A doctest executable counts its test
cases (from its "[doctest] test cases: X | Y passed | Z failed" line); any other test counts one.
Prints "passed failed" for the given logs."""
import json
import re
import sys

SUMMARY = re.compile(r"\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed")

passed = failed = 0
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            t = json.loads(line)
            out = (t.get("stdout") or "") + (t.get("stderr") or "")
            m = SUMMARY.findall(out)
            ok = t.get("result") in ("OK", "EXPECTEDFAIL", "SKIP")
            if m:
                _, p, fl = map(int, m[-1])
                passed += p
                failed += fl
                if not ok and fl == 0:  # crashed after the summary, or a timeout
                    failed += 1
            else:
                passed += ok
                failed += not ok
print(passed, failed)
