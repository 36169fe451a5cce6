"""Prints 'N passed, N failed, N skipped' from a meson testlog.json."""
import json
import sys

counts = {"OK": 0, "FAIL": 0, "SKIP": 0, "TIMEOUT": 0, "EXPECTEDFAIL": 0,
          "UNEXPECTEDPASS": 0, "ERROR": 0}
with open(sys.argv[1]) as f:
    for line in f:
        line = line.strip()
        if line:
            r = json.loads(line).get("result", "ERROR")
            counts[r] = counts.get(r, 0) + 1
passed = counts["OK"] + counts["EXPECTEDFAIL"]
failed = counts["FAIL"] + counts["TIMEOUT"] + counts["UNEXPECTEDPASS"] + counts["ERROR"]
print(f"{passed} passed, {failed} failed, {counts['SKIP']} skipped")
