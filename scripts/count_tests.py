#!/usr/bin/env python3
"""scripts/count_tests.py LOG.json… — sum test cases over meson test logs (testlog.json).

A doctest executable counts its test cases: passed and failed from its last
  "[doctest] test cases: X | Y passed | Z failed | W skipped"
line (plus one failure if meson saw it fail without a failed case: a crash after the summary, a
timeout, a sanitizer report at exit), skipped from its last
  "[tile] test cases skipped here: K"
line (test/doctest_main.cpp: the test cases that could not run here — a need not met, such as a
CUDA device or ptxas, or a doctest::skip decorator; doctest's own W also counts the test cases
a command-line filter leaves out, so it is not used). A doctest executable that exits 77 (its
backend is missing: meson's SKIP) prints only the second line: its K test cases are skipped. Any
other test counts one: passed, failed, or skipped when meson reports SKIP (exit 77). A skipped
test is never counted as passed. A missing or unreadable log counts one failure. Prints
"PASSED FAILED SKIPPED"."""
import json
import re
import sys

SUMMARY = re.compile(r"\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed")
SKIPPED = re.compile(r"\[tile\] test cases skipped here: (\d+)")
OK = ("OK", "EXPECTEDFAIL")

passed = failed = skipped = 0
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
        here = SKIPPED.findall(out)
        result = t.get("result")
        if found:
            _, p, fl = map(int, found[-1])
            passed += p
            failed += fl
            skipped += int(here[-1]) if here else 0
            if result not in OK and fl == 0:
                failed += 1
        elif result == "SKIP":
            skipped += int(here[-1]) if here else 1
        elif result in OK:
            passed += 1
        else:
            failed += 1
print(passed, failed, skipped)
