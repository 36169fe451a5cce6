"""Prints 'N passed, N failed, N skipped' summed over meson testlog.json files.

    test-summary.py TESTLOG.json [TESTLOG.json ...]

A file that is missing or unreadable (a run that never got to its tests)
counts as one failure.
"""
import json
import sys

counts = {"OK": 0, "FAIL": 0, "SKIP": 0, "TIMEOUT": 0, "EXPECTEDFAIL": 0,
          "UNEXPECTEDPASS": 0, "ERROR": 0}
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    r = json.loads(line).get("result", "ERROR")
                    counts[r] = counts.get(r, 0) + 1
    except (OSError, ValueError) as e:
        print(f"test-summary: {path}: {e}", file=sys.stderr)
        counts["ERROR"] += 1
passed = counts["OK"] + counts["EXPECTEDFAIL"]
failed = counts["FAIL"] + counts["TIMEOUT"] + counts["UNEXPECTEDPASS"] + counts["ERROR"]
print(f"{passed} passed, {failed} failed, {counts['SKIP']} skipped")
