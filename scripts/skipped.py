#!/usr/bin/env python3
"""The tests a meson run skipped, and why: the last line each printed.

    skipped.py BUILD/meson-logs/testlog.json

A skipped test (exit 77) passes in meson's summary, so without this list a
suite that did not run (no FUSE, no CRIU beside the clone, no runc) looks
the same as one that passed. Prints nothing when none was skipped."""
import json
import sys


def reason(entry):
    for stream in ("stdout", "stderr"):
        lines = [l.strip() for l in (entry.get(stream) or "").splitlines() if l.strip()]
        if lines:
            return lines[-1]
    return "(it gave no reason)"


def main(path):
    try:
        with open(path, encoding="utf-8") as f:
            entries = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        print("skipped.py: cannot read %s: %s" % (path, e), file=sys.stderr)
        return 1
    skipped = [e for e in entries if e.get("result") == "SKIP"]
    if skipped:
        print("\nSkipped (%d of %d), and why:" % (len(skipped), len(entries)))
        for e in skipped:
            print("  %s: %s" % (e["name"], reason(e)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
