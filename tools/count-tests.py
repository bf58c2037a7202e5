#!/usr/bin/env python3
"""Fails unless ctest ran every test the suite defines.

    tools/count-tests.py BUILD_DIR CTEST_LOG

The suite defines two kinds of tests: plain add_test() entries (examples, benchmark smoke runs,
the command-line tool), which ctest always knows, and GoogleTest cases, which ctest only knows if
gtest_discover_tests found them. A test binary whose discovery failed would silently drop its
tests, so the GoogleTest cases are counted again here, from each binary's --gtest_list_tests, and
the total is compared with the number ctest reports having run.
"""
import json
import re
import subprocess
import sys


def main(build: str, log_path: str) -> int:
    info = json.loads(subprocess.check_output(
        ["ctest", "--test-dir", build, "--show-only=json-v1"], text=True))
    plain = 0
    binaries = set()
    for test in info["tests"]:
        command = test.get("command", [])
        if any(arg.startswith("--gtest_filter=") for arg in command):
            binaries.add(command[0])
        else:
            plain += 1
    gtest = 0
    for binary in sorted(binaries):
        listing = subprocess.check_output([binary, "--gtest_list_tests"], text=True)
        cases = [line for line in listing.splitlines()
                 if line.startswith("  ") and not line.strip().startswith("DISABLED_")]
        gtest += len(cases)
    expected = plain + gtest

    with open(log_path, encoding="utf-8", errors="replace") as f:
        match = re.search(r"tests passed, (\d+) tests failed out of (\d+)", f.read())
    if not match:
        print("loom: ctest printed no summary line; did any test run?", file=sys.stderr)
        return 1
    ran = int(match.group(2))
    print(f"loom: {ran} tests ran; the suite defines {expected} "
          f"({gtest} GoogleTest cases in {len(binaries)} binaries, {plain} other tests)")
    if ran < expected:
        print(f"loom: {expected - ran} defined tests did not run (a test binary's tests were "
              "not discovered?)", file=sys.stderr)
        return 1
    if expected == 0:
        print("loom: the suite defines no tests", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
