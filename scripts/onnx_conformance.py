#!/usr/bin/env python3
"""ONNX conformance: runs `ember onnx test` on every folder of ONNX's backend test data (Debian's
libonnx-testdata) on each device and writes a Markdown report: pass/fail per folder and device,
the percentage per folder group, and every failure with its one-line reason, grouped by cause.
A folder ember cannot run (an op, dtype or value kind it lacks) counts as a failure.

Usage:
  scripts/onnx_conformance.py --build build/release [--data DIR] [--devices cpu,interp]
                              [--jobs N] [--timeout S] [--out onnx-conformance.md]
  scripts/onnx_conformance.py --build B --subset tests/onnx/conformance_subset.txt --check
      (only the listed folders, "GROUP/NAME" per line; --check: exit 1 unless every one passes)
"""
import argparse
import collections
import concurrent.futures
import datetime
import os
import re
import subprocess
import sys

GROUPS = ["node", "pytorch-converted", "pytorch-operator", "simple"]

# Failures whose one-line reason alone does not explain them: the test data disagree with ONNX's
# own specification.
KNOWN = {
    "node/test_adam_multiple": "the expected values were computed with epsilon 1e-2, which the "
                               "node does not set (Adam's default is 1e-6)",
    "node/test_cast_FLOAT_to_BFLOAT16": "the expected bfloat16 values are float32's top 16 bits "
                                        "(truncation); Cast rounds to nearest even",
}
# ONNX 1.12's CastLike tests to and from bfloat16 declare the 'like' input [3, 4] but store one
# element: the input does not match the model's declaration.
for _name in ["BFLOAT16_to_FLOAT", "FLOAT_to_BFLOAT16"]:
    for _suffix in ["", "_expanded"]:
        KNOWN[f"node/test_castlike_{_name}{_suffix}"] = (
            "the test data's 'like' input holds 1 element where the model declares [3, 4]")
DEFAULT_DATA = "/usr/share/libonnx-testdata/data"


def run_one(ember, folder, device, timeout, env):
    """(status, reason): status is 'pass' or 'fail'."""
    cmd = [ember, "onnx", "test", folder, "--device", device]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "fail", f"timeout: no result within {timeout} s"
    out = (p.stdout + p.stderr).strip().splitlines()
    line = next((l for l in out if l.startswith(("ok ", "FAIL "))), out[-1] if out else "")
    if p.returncode == 0:
        return "pass", ""
    if p.returncode < 0:
        return "fail", f"crash: killed by signal {-p.returncode}"
    reason = line.split(": ", 1)[1] if line.startswith("FAIL ") and ": " in line else line
    return "fail", reason or f"exit status {p.returncode} without a message"


def op_random(reason):
    return re.search(r"op (Bernoulli|RandomUniform|RandomUniformLike|RandomNormal|RandomNormalLike|"
                     r"Multinomial) is not supported", reason) is not None


def cause(reason):
    """The cause class of a failure reason (the report groups failures by it)."""
    if "random mask" in reason or op_random(reason):
        return "random values (a seeded draw ember cannot reproduce)"
    m = re.search(r"element type (\w+) is not supported", reason)
    if m:
        return f"needs dtype {m.group(1)}"
    if re.search(r"is a (seq|optional|map)\(", reason):
        return "needs Sequence/Optional values"
    m = re.search(r"op (\w+) is not supported", reason)
    if m:
        op = m.group(1)
        if op.startswith("Sequence") or op in ("SplitToSequence", "ConcatFromSequence",
                                               "Optional", "OptionalHasElement",
                                               "OptionalGetElement"):
            return "needs Sequence/Optional values"
        if op in ("If", "Loop", "Scan"):
            return "control flow (If/Loop/Scan)"
        return f"op {op} missing"
    m = re.search(r"domain '([^']+)' is not supported", reason)
    if m:
        return f"domain {m.group(1)}"
    if reason.startswith("unsupported:"):
        return "unsupported attribute or value"
    if reason.startswith("mismatch:"):
        return "wrong result"
    if reason.startswith("timeout"):
        return "timeout"
    if reason.startswith("crash"):
        return "crash"
    return "error"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="the build directory (holds apps/ember)")
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--devices", default="cpu,interp")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--out", default="onnx-conformance.md")
    ap.add_argument("--subset", help="a file listing GROUP/NAME folders to run instead of all")
    ap.add_argument("--check", action="store_true", help="exit 1 unless every folder passes")
    a = ap.parse_args()

    ember = os.path.join(a.build, "apps", "ember")
    if not os.access(ember, os.X_OK):
        sys.exit(f"onnx_conformance: no ember binary at {ember} (build first)")
    if not os.path.isdir(a.data):
        sys.exit(f"onnx_conformance: no test data at {a.data} (Debian package libonnx-testdata)")
    if a.subset:
        with open(a.subset) as f:
            folders = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    else:
        folders = [f"{g}/{t}" for g in GROUPS if os.path.isdir(os.path.join(a.data, g))
                   for t in sorted(os.listdir(os.path.join(a.data, g)))]
    devices = a.devices.split(",")
    # One kernel thread per test process: the processes themselves fill the cores.
    env = dict(os.environ, EMBER_THREADS="1")
    results = {}
    jobs = [(f, d) for d in devices for f in folders]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futs = {pool.submit(run_one, ember, os.path.join(a.data, f), d, a.timeout, env): (f, d)
                for f, d in jobs}
        for fut in concurrent.futures.as_completed(futs):
            results[futs[fut]] = fut.result()

    write_report(a, folders, devices, results, ember)
    failed = [(f, d, r[1]) for (f, d), r in sorted(results.items()) if r[0] != "pass"]
    for d in devices:
        n = sum(1 for f in folders if results[(f, d)][0] == "pass")
        print(f"onnx conformance on {d}: {n} of {len(folders)} folders pass "
              f"({100.0 * n / max(len(folders), 1):.1f}%)")
    print(f"report: {a.out}")
    if a.check and failed:
        for f, d, r in failed:
            print(f"FAIL {f} on {d}: {r}")
        sys.exit(1)


def write_report(a, folders, devices, results, ember):
    version = subprocess.run([ember, "--version"], capture_output=True, text=True).stdout.strip()
    pkg = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libonnx-testdata"],
                         capture_output=True, text=True).stdout.strip() or "unknown"
    L = ["# ONNX conformance", "",
         f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
         f"{version.splitlines()[0] if version else 'ember'}; test data {a.data} "
         f"(libonnx-testdata {pkg}); `ember onnx test` per folder (rtol 1e-3, atol 1e-7). "
         "A folder that ember cannot run counts as a failure.", "",
         "| group | folders | " + " | ".join(f"{d} pass | {d} %" for d in devices) + " |",
         "|---|---:|" + "---:|---:|" * len(devices)]
    groups = sorted({f.split("/")[0] for f in folders}, key=lambda g: (GROUPS + [g]).index(g))
    for g in groups + ["all"]:
        fs = [f for f in folders if g == "all" or f.split("/")[0] == g]
        row = [g if g != "all" else "**all**", str(len(fs))]
        for d in devices:
            n = sum(1 for f in fs if results[(f, d)][0] == "pass")
            row += [str(n), f"{100.0 * n / max(len(fs), 1):.1f}"]
        L.append("| " + " | ".join(row) + " |")
    for d in devices:
        fails = [(f, results[(f, d)][1]) for f in folders if results[(f, d)][0] != "pass"]
        by = collections.defaultdict(list)
        for f, r in fails:
            by[cause(r)].append((f, r))
        L += ["", f"## Failures on {d}: {len(fails)}, by cause", "",
              "| cause | folders |", "|---|---:|"]
        for c, items in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            L.append(f"| {c} | {len(items)} |")
        for c, items in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            L += ["", f"### {c} ({len(items)})", ""]
            L += [f"- `{f}`: {r.replace('|', '/')}" + (f" ({KNOWN[f]})" if f in KNOWN else "")
                  for f, r in items]
    L += ["", "## Every folder", "", "| folder | " + " | ".join(devices) + " |",
          "|---|" + "---|" * len(devices)]
    for f in folders:
        L.append(f"| {f} | " + " | ".join(results[(f, d)][0] for d in devices) + " |")
    with open(a.out, "w") as out:
        out.write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
