#!/usr/bin/env python3
"""The end of scripts/test: what every conformance suite checked, and one line naming
everything that did not run, with why.

    scripts/test-summary.py RECORD_DIR

RECORD_DIR holds the suites' records (<suite>.txt, written by testsupport/src/record.rs),
cargo-test.log (the output of every cargo test run), ignored-run.list (the #[ignore]d tests
scripts/test ran because their prerequisites were there) and prerequisites-missing.list
(name<TAB>why for those it could not run).

Exit status 1 when a conformance suite left no record (it did not run) or, under CI=true, when
a test could not run for lack of a prerequisite. Golden cases of features not implemented yet
(NOT_YET) and the by-hand exhaustive sweeps are named in the summary line but do not fail CI.
"""

import os
import re
import sys
from collections import defaultdict
from pathlib import Path

# Conformance suites that must leave a record (prefixes: hf_golden-<fixture> for each fixture).
EXPECTED = [
    "hf_golden-",
    "tokenizer_golden",
    "convert_cli-golden",
    "convert_cli-legacy",
    "batch_cli-fixtures",
    "batch_cli-every-variant",
    "quantize_golden",
    "roundtrip-golden",
    "manifests-golden",
    "legacy_golden",
    "quant_vectors",
    "interop-gguf-py",
    "edit_golden",
    "split_golden",
    "split_golden_cases",
]
# Suites that are #[ignore]d tests with an optional prerequisite: (record, test name).
OPTIONAL = {"interop-gguf-py": "gguf_py_reads_our_files_as_we_do"}
# Ignored tests that other tests run in a child process (not skips): their reason says
# "run by <test> ... child".
NOT_YET = "not implemented yet"


def main() -> int:
    d = Path(sys.argv[1])
    ci = os.environ.get("CI") == "true"
    records = sorted(p for p in d.glob("*.txt"))
    failures = []
    print()
    print("=== conformance: what each suite checked ===")
    not_run = defaultdict(list)  # reason -> [case]
    seen = []
    for p in records:
        lines = p.read_text().splitlines()
        if not lines:
            continue
        suite = lines[0].split(":", 1)[0]
        seen.append(suite)
        skipped = [l.split("\t") for l in lines[1:] if l.startswith("not run\t")]
        extra = f"  (not run: {len(skipped)})" if skipped else ""
        print(f"  {lines[0]}{extra}")
        for _, case, why in skipped:
            not_run[why].append(f"{suite}: {case}")
    prereq = []
    if (d / "prerequisites-missing.list").exists():
        for line in (d / "prerequisites-missing.list").read_text().splitlines():
            name, why = line.split("\t", 1)
            prereq.append(name)
            not_run[why].append(name)
    for e in EXPECTED:
        if OPTIONAL.get(e) in prereq:
            continue  # named above, with why
        if not any(s == e or (e.endswith("-") and s.startswith(e)) for s in seen):
            not_run["no record: the suite did not run"].append(e + ("*" if e.endswith("-") else ""))
            failures.append(f"{e}: no record")

    log = (d / "cargo-test.log").read_text(errors="replace") if (d / "cargo-test.log").exists() else ""
    ran = set((d / "ignored-run.list").read_text().split()) if (d / "ignored-run.list").exists() else set()
    passed = failed = 0
    for m in re.finditer(r"^test result: \w+\. (\d+) passed; (\d+) failed;", log, re.M):
        passed += int(m.group(1))
        failed += int(m.group(2))
    for m in re.finditer(r"^test (\S+) \.\.\. ignored(?:, (.*))?$", log, re.M):
        name, why = m.group(1), (m.group(2) or "ignored").strip()
        short = name.rsplit("::", 1)[-1]
        if short in ran or short in prereq or (why.startswith("run by ") and "child" in why):
            continue
        not_run[why].append(name)
    for m in re.finditer(r"\*\*\* SKIPPED ([^*]*)\*\*\*", log):
        not_run["skipped"].append(m.group(1).strip())

    print(f"=== cargo: {passed} passed, {failed} failed (all runs) ===")
    if not not_run:
        print("NOT RUN: nothing")
    else:
        parts = []
        for why, cases in sorted(not_run.items(), key=lambda kv: -len(kv[1])):
            if len(cases) <= 4:
                names = ", ".join(cases)
            else:
                per_suite = defaultdict(int)
                for c in cases:
                    per_suite[c.split(":", 1)[0]] += 1
                names = f"{len(cases)} cases (" + ", ".join(
                    f"{s} {n}" for s, n in sorted(per_suite.items())) + ")"
            parts.append(f"{why}: {names}")
        print("NOT RUN: " + " | ".join(parts))
    blocking = [
        (why, c)
        for why, cases in not_run.items()
        for c in cases
        if why != NOT_YET and "run by hand" not in why
    ]
    if ci and blocking:
        failures.append(f"CI=true: {len(blocking)} test(s) could not run")
    for f in failures:
        print(f"scripts/test: FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
