#!/usr/bin/env python3
"""Compares the stock and shim runs of java-bridge/hadoop-tests.

    python3 java-bridge/hadoop-tests/compare-reports.py [target dir] [--suite capacity]

Reads target/surefire-reports-{stock,shim}/TEST-*.xml (with --suite capacity, the CapacityScheduler classes'
run: surefire-reports-{stock,shim}-cs) and prints, per test class, tests run / failures /
errors / skipped / seconds in each mode, then every test that passes in stock but not in shim with its
first message line and top frame, then the tests that fail in both modes, and per mode how many RMs
were created with which scheduler ("Using Scheduler:" lines) and how many times the shim reported
having no token (its fallback mode).
"""
import argparse
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

_P = argparse.ArgumentParser(description="Compare the stock and shim runs of java-bridge/hadoop-tests.")
_P.add_argument("target", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "target"))
_P.add_argument("--suite", choices=("fifo", "capacity"), default="fifo")
_ARGS = _P.parse_args()
SUFFIX = "-cs" if _ARGS.suite == "capacity" else ""
TARGET = _ARGS.target
MODES = ("stock", "shim")
PREFIX = "org.apache.hadoop.yarn.server.resourcemanager."


def short(cls):
    return cls[len(PREFIX):] if cls.startswith(PREFIX) else cls


def load(mode):
    classes, cases = {}, {}
    for path in sorted(glob.glob(os.path.join(TARGET, "surefire-reports-" + mode + SUFFIX, "TEST-*.xml"))):
        suite = ET.parse(path).getroot()
        name = suite.get("name")
        classes[name] = tuple(int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")) + (
            float(suite.get("time", 0)),)
        for tc in suite.iter("testcase"):
            key = (tc.get("classname"), tc.get("name"))
            status, detail = "pass", ""
            for tag in ("failure", "error", "skipped"):
                el = tc.find(tag)
                if el is not None:
                    status = tag
                    text = (el.text or "").strip().splitlines()
                    msg = text[0] if text else (el.get("type", "") + ": " + (el.get("message") or ""))
                    frame = next((l.strip() for l in text[1:] if l.strip().startswith("at ")
                                  and "org.junit." not in l and "jdk.internal" not in l
                                  and "java.lang.reflect" not in l), "")
                    detail = msg + ("\n      " + frame if frame else "")
                    break
            cases[key] = (status, detail)
    return classes, cases


def schedulers(mode):
    used, fallback = {}, 0
    for path in glob.glob(os.path.join(TARGET, "surefire-reports-" + mode + SUFFIX, "*-output.txt")):
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(r"Using Scheduler: (\S+)", line)
                if m:
                    used[m.group(1)] = used.get(m.group(1), 0) + 1
                if "yarnctl shim: cannot read the bridge token" in line:
                    fallback += 1
    return used, fallback


def main():
    data = {m: load(m) for m in MODES}
    names = sorted(set(data["stock"][0]) | set(data["shim"][0]))
    print("%-58s %-26s %-26s" % ("class", "stock run/fail/err/skip s", "shim run/fail/err/skip s"))
    for n in names:
        cols = []
        for m in MODES:
            c = data[m][0].get(n)
            cols.append("%3d/%d/%d/%d %7.1f" % c if c else "-")
        print("%-58s %-26s %-26s" % (short(n), cols[0], cols[1]))
    for m in MODES:
        t = [sum(c[i] for c in data[m][0].values()) for i in range(5)]
        print("total %-5s run %d, failures %d, errors %d, skipped %d, %.0f s in tests" % (m, *t))

    print("\npass in stock, not in shim:")
    for key in sorted(data["stock"][1]):
        s, _ = data["stock"][1][key]
        h = data["shim"][1].get(key)
        if s == "pass" and h and h[0] != "pass":
            print("  %s.%s [%s]\n      %s" % (short(key[0]), key[1], h[0], h[1]))
    print("\nnot passing in stock (shim status in brackets):")
    for key in sorted(data["stock"][1]):
        s, d = data["stock"][1][key]
        if s != "pass":
            h = data["shim"][1].get(key, ("-", ""))
            print("  %s.%s [%s / shim %s]\n      %s" % (short(key[0]), key[1], s, h[0], d))
    print("\npass in shim, not in stock: ", sorted("%s.%s" % (short(k[0]), k[1]) for k, v in data["shim"][1].items()
                                                  if v[0] == "pass" and data["stock"][1].get(k, ("pass",))[0] != "pass"))
    for m in MODES:
        used, fallback = schedulers(m)
        print("%s: RMs by scheduler %s; shim 'cannot read the bridge token' lines: %d" % (m, used, fallback))


if __name__ == "__main__":
    main()
