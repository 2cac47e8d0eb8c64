"""Real networks on ember against ONNX Runtime (`make onnx-networks`).

Runs under the project venv (.venv: numpy, onnxruntime, onnx; scripts/python-venv.sh). It
  1. exports the networks with Debian's torch (scripts/onnx_networks_export.py, /usr/bin/python3),
  2. runs them on ONNX Runtime and writes ONNX's backend-test layout (onnx_networks_reference.py),
  3. checks each with `ember onnx test` (ONNX's tolerances, rtol 1e-3 and atol 1e-7, unless the
     network's data.json names others: the export script says why) and runs it with
     `ember onnx run` to measure the largest absolute and relative errors against ONNX Runtime,
     and the largest absolute error of each of the two against torch run in float64,
and writes a table (--report). Exits 0 only when every network loads, runs and matches.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_networks_reference  # noqa: E402

def errors(got, want, rtol, atol):
    """Largest |got - want|, largest |got - want| / |want| (want != 0), and the largest share of
    the allowance atol + rtol |want| that an element uses (<= 1 passes)."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    d = np.abs(g - w)
    nz = w != 0
    rel = float((d[nz] / np.abs(w[nz])).max()) if nz.any() else 0.0
    return float(d.max(initial=0)), rel, float((d / (atol + rtol * np.abs(w))).max(initial=0))


def check(ember, d, device, rtol, atol):
    """One row of the table: (loads and runs, matches, [max abs, max rel, used, ember - fp64,
    ORT - fp64], note)."""
    test = subprocess.run([ember, "onnx", "test", d, "--device", device, "--rtol", str(rtol),
                           "--atol", str(atol)], capture_output=True, text=True)
    note = (test.stdout + test.stderr).strip().splitlines()
    inputs = np.load(os.path.join(d, "inputs.npz"))
    args = []
    for name in inputs.files:
        path = os.path.join(d, f"input.{name}.npy")
        np.save(path, inputs[name])
        args += ["--input", f"{name}={path}"]
    out = os.path.join(d, "ember")
    run = subprocess.run([ember, "onnx", "run", os.path.join(d, "model.onnx"), *args,
                          "--output-dir", out, "--device", device], capture_output=True, text=True)
    if run.returncode != 0:
        return False, False, [], (run.stderr.strip() or "ember onnx run failed").splitlines()[-1]
    ref, truth = np.load(os.path.join(d, "reference.npz")), np.load(os.path.join(d, "truth.npz"))
    worst = [0.0] * 5
    for name in ref.files:
        got = np.load(os.path.join(out, f"{name}.npy"))
        if got.shape != ref[name].shape:
            return True, False, [], f"{name}: shape {got.shape}, expected {ref[name].shape}"
        e = errors(got, ref[name], rtol, atol) + (errors(got, truth[name], 0, 1)[0],
                                                  errors(ref[name], truth[name], 0, 1)[0])
        worst = [max(a, b) for a, b in zip(worst, e)]
    return True, test.returncode == 0, worst, (note[-1] if note else "")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", required=True, help="the build folder (holds apps/ember)")
    p.add_argument("--out", required=True, help="where the networks and their data go")
    p.add_argument("--set", choices=["small", "all"], default="small")
    p.add_argument("--only", nargs="*", help="only these networks")
    p.add_argument("--device", default="cpu")
    p.add_argument("--report", help="the markdown table's file (default: OUT/onnx-networks.md)")
    a = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    export = ["/usr/bin/python3", os.path.join(here, "onnx_networks_export.py"), "--out", a.out,
              "--set", a.set] + (["--only", *a.only] if a.only else [])
    subprocess.run(export, check=True)
    nets = sorted(n for n in os.listdir(a.out)
                  if os.path.isfile(os.path.join(a.out, n, "inputs.npz"))
                  and (not a.only or n in a.only))
    ember = os.path.join(a.build, "apps", "ember")
    rows, ok = [], True
    for n in nets:
        d = os.path.join(a.out, n)
        onnx_networks_reference.reference(d)
        with open(os.path.join(d, "data.json")) as f:
            tol = json.load(f)
        runs, match, errs, note = check(ember, d, a.device, tol["rtol"], tol["atol"])
        ok &= match
        cells = " | ".join(f"{v:.3g}" for v in errs) if errs else " | ".join(["-"] * 5)
        rows.append(f"| {n} | {'yes' if runs else 'no'} | {'yes' if match else 'NO'} "
                    f"| {tol['rtol']:g}, {tol['atol']:g} | {cells} | {'' if match else note} |")
        print(rows[-1], flush=True)
    report = a.report or os.path.join(a.out, "onnx-networks.md")
    with open(report, "w") as f:
        f.write(f"# Real networks on ember ({a.device}) against ONNX Runtime "
                f"{onnx_networks_reference.onnxruntime.__version__}\n\n"
                "Fixed-seed random weights (scripts/onnx_networks_export.py). Matches: "
                "|ember - ORT| <= atol + rtol |ORT| for every element of every output (ONNX's "
                "backend-test comparison). Errors are the largest over all outputs: abs and rel "
                "against ONNX Runtime; 'used', the largest share of the allowance an element "
                "takes; the last two, the largest |error| of ember and of ONNX Runtime against "
                "torch run in float64.\n\n"
                "| network | loads and runs | matches | rtol, atol | max abs err | max rel err "
                "| used | ember - fp64 | ORT - fp64 | note |\n"
                "|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
    print(f"onnx-networks: {sum('| yes | yes |' in r for r in rows)} of {len(rows)} match; "
          f"wrote {report}")
    return 0 if ok and rows else 1


if __name__ == "__main__":
    sys.exit(main())
