#!/usr/bin/env python3
"""The study (docs/training.md) reproduced side by side: `make study` runs this.

Runs one measuring process at a time and writes, into --out:
  raw.jsonl   every measurement as one JSON line (with its section and the command that made it)
  report.md   the tables, the study's anchors next to them, and the provenance

Sections: peak probe; the controlled optimizer step (ember at each ISA level and libtorch, five
process pairs alternating who goes first); BEAM=2's plans against the heuristic's (beam_rows.py);
the three matrix-product shapes (ember, oneDNN, OpenBLAS, libtorch); kernel attribution of one ember step; third-epoch phase times of
`ember train`; cold start (first epoch on an empty kernel cache against a warm one); with --full,
time to the target over 5 seeds. --short shrinks every section to seconds (CI). A reference that
is not built (no libtorch, no oneDNN/OpenBLAS) is skipped and the report says so.
Python standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

from beam_rows import BeamRows
from python_refs import PythonRefs

ANCHORS = {
    "step": {"PyTorch (M4)": 10.582, "tinygrad (M4)": 234.562},
    "matmul": {
        "(4x128) @ (128x128)": (0.0015, 0.0844),
        "(10000x128) @ (128x128)": (0.2260, 6.2470),
        "(128x10000) @ (10000x128)": (0.2328, 10.2067),
    },
    "phases": {"PyTorch (M4)": (0.821, 0.423, 1.245), "tinygrad (M4)": (9.761, 4.277, 14.038)},
}


class Study:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.out = os.path.abspath(args.out)
        os.makedirs(self.out, exist_ok=True)
        self.raw = []
        self.notes = []
        self.errors = []  # failed measurements: the exit status is 1 when there are any
        self.threads = args.threads or int(os.environ.get("EMBER_THREADS") or os.cpu_count() or 1)
        self.levels = [l for l in ("avx512", "avx2", "sse2") if self.cpu_has(l)]
        if args.levels:
            self.levels = [l for l in args.levels.split(",") if l]
        self.top = self.levels[0] if self.levels else "sse2"
        # The Python references are minutes, not seconds: the short (CI) mode leaves them out.
        self.py = PythonRefs(None if (args.no_python or args.short) else args.python_venv)
        if args.short:
            self.py.missing = {"all": "left out of the short mode"}

    # --- helpers -------------------------------------------------------------------------------
    @staticmethod
    def cpu_has(level):
        try:
            flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
        except (OSError, StopIteration):
            return level == "sse2"
        need = {"avx512": ["avx512f", "avx512vl", "avx512bw", "avx512dq"], "avx2": ["avx2", "fma"],
                "sse2": ["sse2"]}[level]
        return all(f in flags for f in need)

    def exe(self, name):
        for sub in ("bench", "apps"):
            p = os.path.join(self.build, sub, name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
        return None

    def run(self, section, cmd, env_extra=None, unset=(), timeout=3600):
        """Runs one process; returns its JSON lines (each also appended to raw with provenance)."""
        env = dict(os.environ)
        for k in unset:
            env.pop(k, None)
        env.update(env_extra or {})
        shown = " ".join([f"{k}={v}" for k, v in (env_extra or {}).items()] + cmd)
        print(f"[study] {section}: {shown}", file=sys.stderr, flush=True)
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.errors.append(f"{section}: `{shown}` timed out after {timeout} s")
            return []
        if p.returncode != 0:
            self.errors.append(f"{section}: `{shown}` failed (exit {p.returncode}): "
                               f"{p.stderr.strip().splitlines()[-1:] or ''}")
            return []
        rows = []
        for line in p.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                r["section"] = section
                r["command"] = shown
                r["loadavg"] = os.getloadavg()[0]
                self.raw.append(r)
                rows.append(r)
        return rows

    def write_atomically(self, name, text):
        fd, tmp = tempfile.mkstemp(dir=self.out, prefix=f".{name}.")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(self.out, name))

    # --- provenance ----------------------------------------------------------------------------
    def provenance(self):
        def cmd_out(c):
            try:
                return subprocess.run(c, capture_output=True, text=True, timeout=30).stdout.strip()
            except (OSError, subprocess.TimeoutExpired):
                return ""

        model = ""
        try:
            model = next(l for l in open("/proc/cpuinfo") if l.startswith("model name")).split(":", 1)[1].strip()
        except (OSError, StopIteration):
            model = platform.processor()
        cache = {}
        try:
            for line in open(os.path.join(self.build, "CMakeCache.txt")):
                for k in ("CMAKE_CXX_COMPILER:", "CMAKE_BUILD_TYPE:", "CMAKE_CXX_FLAGS_RELEASE:", "CMAKE_CXX_FLAGS:"):
                    if line.startswith(k):
                        cache[k.rstrip(":")] = line.split("=", 1)[1].strip()
        except OSError:
            pass
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        pkgs = {}
        for pkg in ("libtorch-dev", "libdnnl-dev", "libopenblas-dev", "libbox2d-dev"):
            v = cmd_out(["dpkg-query", "-W", "-f=${Version}", pkg])
            pkgs[pkg] = v or "not installed"
        ember = self.exe("ember")
        return {
            "kind": "provenance",
            "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "revision": cmd_out(["git", "-C", src, "rev-parse", "HEAD"]),
            "dirty": bool(cmd_out(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"])),
            "cpu": model,
            "isa_levels": self.levels,
            "cores": os.cpu_count(),
            "threads": self.threads,
            "compiler": cmd_out([cache.get("CMAKE_CXX_COMPILER", "c++"), "--version"]).splitlines()[:1],
            "build_type": cache.get("CMAKE_BUILD_TYPE", ""),
            "cxx_flags": (cache.get("CMAKE_CXX_FLAGS", "") + " " + cache.get("CMAKE_CXX_FLAGS_RELEASE", "")).strip(),
            "kernel_compiler": cmd_out([os.environ.get("EMBER_CC") or "cc", "--version"]).splitlines()[:1],
            "ember_version": cmd_out([ember, "--version"]) if ember else "ember not built",
            "packages": pkgs,
            "openblas_coretype_env": os.environ.get("OPENBLAS_CORETYPE"),
            "omp_wait_policy_env": os.environ.get("OMP_WAIT_POLICY"),
            "loadavg_start": os.getloadavg(),
            "mode": "short" if self.args.short else ("full" if self.args.full else "default"),
            "python_refs": self.py.versions,
        }

    # --- sections ------------------------------------------------------------------------------
    def peak(self):
        exe = self.exe("study_matmul")
        if not exe:
            self.notes.append("peak and BLAS references skipped: study_matmul not built (needs libdnnl-dev, libopenblas-dev)")
            return {}
        peaks = {}
        for level in self.levels:
            for r in self.run("peak", [exe, "peak", str(self.threads)], {"EMBER_ISA": level}):
                peaks[level] = r["gflops"]
        return peaks

    def paired(self, section, ember_cmd, ember_env, ref_cmd, pairs, level):
        """`pairs` process pairs of ember and a reference, alternating who runs first (docs/training.md).
        Returns (ember process medians, reference process medians, within-pair ratios ember/ref)."""
        em, ref, ratios = [], [], []
        for p in range(pairs):
            got = {}
            for who in (("ember", "ref") if p % 2 == 0 else ("ref", "ember")):
                if who == "ember":
                    rows = self.run(section, ember_cmd, ember_env)
                else:
                    rows = self.run(section, ref_cmd) if ref_cmd else []
                for r in rows:
                    r["pair"] = p
                    r["level"] = level
                    got[who] = r["median_ms"]
            if "ember" in got:
                em.append(got["ember"])
            if "ref" in got:
                ref.append(got["ref"])
            if "ember" in got and "ref" in got:
                ratios.append(got["ember"] / got["ref"])
        return em, ref, ratios

    def step(self):
        s = self.args
        batch = 1000 if s.short else 10000
        pairs = 1 if s.short else 5
        proto = ["--untimed", "1", "--warmup", "1", "--timed", "3"] if s.short else []
        common = ["--batch", str(batch), "--threads", str(self.threads)] + proto
        self.step_common = common
        ember, torch = self.exe("study_ember_step"), self.exe("study_torch_step")
        levels = self.levels[:1] if s.short else self.levels
        result = {"batch": batch, "pairs": pairs, "levels": {}, "torch": None, "python": {}}
        if not torch:
            self.notes.append("libtorch step skipped: study_torch_step not built (libtorch-dev)")
        med = lambda xs: statistics.median(xs) if xs else None
        torch_medians = []
        for level in levels:
            em, tm, ratios = self.paired("step", [ember] + common, {"EMBER_ISA": level},
                                         [torch] + common if torch else None, pairs, level)
            torch_medians += tm
            result["levels"][level] = {"median_ms": med(em), "process_medians": em, "ratio_median": med(ratios)}
        if torch_medians:
            result["torch"] = {"median_ms": med(torch_medians), "process_medians": torch_medians}
        # The Python references, each paired with ember at the machine's best level.
        for impl, script in (("pytorch", "torch_step.py"), ("tinygrad", "tinygrad_step.py")):
            if self.py.has(impl):
                em, ref, ratios = self.paired("step_python", [ember] + common, {"EMBER_ISA": self.top},
                                              self.py.cmd(script, *common), pairs, self.top)
                result["python"][impl] = {"median_ms": med(ref), "process_medians": ref,
                                          "ember_median_ms": med(em), "ratio_median": med(ratios)}
        return result

    def matmul(self):
        s = self.args
        timed = "5" if s.short else "30"
        rows = []
        exe = self.exe("study_matmul")
        if exe:
            for level in (self.levels[:1] if s.short else self.levels):
                for r in self.run("matmul", [exe, "ember", str(self.threads), timed], {"EMBER_ISA": level}):
                    r["level"] = level
                    rows.append(r)
            # At the machine's own level OpenBLAS picks its kernel for the CPU (as bench/run.sh).
            for lib in ("onednn", "openblas"):
                rows += self.run("matmul", [exe, lib, str(self.threads), timed],
                                 unset=("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"))
        t = self.exe("study_torch_matmul")
        if t:
            rows += self.run("matmul", [t, str(self.threads), timed])
        else:
            self.notes.append("libtorch matmul skipped: study_torch_matmul not built")
        if self.py.has("pytorch"):
            rows += self.run("matmul", self.py.cmd("torch_matmul.py", self.threads, timed))
        if self.py.has("tinygrad"):
            rows += self.run("matmul", self.py.cmd("tinygrad_matmul.py", timed))
        return rows

    def beam(self):
        """BEAM=2's plans against the heuristic's (beam_rows.py), on the step and the products."""
        mm = self.exe("study_matmul")
        timed = "5" if self.args.short else "30"
        return BeamRows(self).measure([self.exe("study_ember_step")] + self.step_common,
                                      [mm, "ember", str(self.threads), timed] if mm else None,
                                      1 if self.args.short else 5)

    def direct(self):
        exe = self.exe("study_direct_kernel")
        if not exe:
            self.notes.append("direct-kernel test skipped: study_direct_kernel not built (libopenblas-dev)")
            return None
        rows = self.run("direct_kernel", [exe, str(self.threads), "5" if self.args.short else "30"],
                        {"EMBER_ISA": self.top}, unset=("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"))
        return rows[0] if rows else None

    def attribution(self):
        batch = "1000" if self.args.short else "10000"
        rows = self.run("attribution", [self.exe("study_ember_step"), "--batch", batch, "--threads",
                                        str(self.threads), "--untimed", "1", "--warmup", "2", "--timed",
                                        "1", "--attribution"], {"EMBER_ISA": self.top})
        return next((r for r in rows if r["kind"] == "attribution"), None)

    def train_args(self, epochs):
        if self.args.short:
            per = ["--steps-per-env", "250", "--minibatch", "500"]
            n = 1000
        else:
            per = []
            n = 20000
        return per + ["--max-transitions", str(n * epochs), "--eval-every", "100000",
                      "--eval-episodes-per-env", "1", "--final-eval-episodes-per-env", "1",
                      "--checkpoint-every", "0", "--progress", "none", "--threads", str(self.threads)]

    def ember_train(self, section, args, cache_dir=None):
        ember = self.exe("ember")
        run_dir = tempfile.mkdtemp(prefix=f"{section}-", dir=self.out)
        env = {"EMBER_CACHE_DIR": cache_dir} if cache_dir else {}
        self.run(section, [ember, "train", "--out", run_dir] + args, env)
        epochs = []
        try:
            with open(os.path.join(run_dir, "epochs.jsonl")) as f:
                epochs = [json.loads(l) for l in f if l.strip()]
            with open(os.path.join(run_dir, "summary.json")) as f:
                summary = json.load(f)
        except (OSError, ValueError):
            self.errors.append(f"{section}: no records in {run_dir}")
            return [], None
        for e in epochs:
            self.raw.append({"section": section, "kind": "epoch", **e})
        summary_row = {"section": section, "kind": "summary", **{k: summary.get(k) for k in (
            "transitions_at_stop", "seconds_to_stop", "reached_target", "stop_reason")},
            "saved_policy_eval": (summary.get("saved_policy_eval") or {}).get("mean")}
        self.raw.append(summary_row)
        shutil.rmtree(run_dir, ignore_errors=True)
        return epochs, summary_row

    def torch_train_args(self, epochs, seed=None):
        n = (1000 if self.args.short else 20000) * epochs
        a = ["--max-transitions", str(n), "--threads", str(self.threads)]
        if self.args.short:
            a += ["--steps-per-env", "250", "--minibatch", "500"]
        if seed is None:
            a += ["--eval-every", "100000", "--eval-episodes-per-env", "1"]
        else:
            a += ["--seed", str(seed)]
        return a

    def phases(self):
        epochs, _ = self.ember_train("phases", self.train_args(3))
        ember = epochs[2] if len(epochs) >= 3 else None
        torch = None
        exe = self.exe("study_torch_ppo")
        if exe:
            rows = [r for r in self.run("phases", [exe] + self.torch_train_args(3)) if r["kind"] == "epoch"]
            torch = rows[2] if len(rows) >= 3 else None
        else:
            self.notes.append("libtorch trainer skipped: study_torch_ppo not built (libtorch-dev)")
        py = None
        if self.py.has("pytorch", "gymnasium"):
            args = self.torch_train_args(3) + ["--final-eval-episodes-per-env", "1"]
            rows = [r for r in self.run("phases", self.py.cmd("torch_ppo_gym.py", *args)) if r["kind"] == "epoch"]
            py = rows[2] if len(rows) >= 3 else None
        return ember, torch, py

    def cold_start(self):
        cache = tempfile.mkdtemp(prefix="cold-cache-", dir=self.out)
        cold, _ = self.ember_train("cold", self.train_args(1), cache)
        warm, _ = self.ember_train("warm", self.train_args(1), cache)
        shutil.rmtree(cache, ignore_errors=True)
        return (cold[0] if cold else None), (warm[0] if warm else None)

    def full(self):
        rows = []
        for seed in range(1, 6):
            _, s = self.ember_train(f"time-to-target", ["--seed", str(seed), "--progress", "none",
                                                         "--threads", str(self.threads)])
            if s:
                s["seed"] = seed
                s["impl"] = "ember"
                rows.append(s)
        exe = self.exe("study_torch_ppo")
        if exe:
            for seed in range(1, 6):
                for r in self.run("time-to-target", [exe] + self.torch_train_args(50, seed)):
                    if r["kind"] == "summary":
                        rows.append(r)
        if self.py.has("pytorch", "gymnasium"):
            for seed in range(1, 6):
                for r in self.run("time-to-target", self.py.cmd("torch_ppo_gym.py", *self.torch_train_args(50, seed))):
                    if r["kind"] == "summary":
                        rows.append(r)
        return rows

    # --- report --------------------------------------------------------------------------------
    def report(self, prov, peaks, step, beam, mm, direct, attr, ph, ph_torch, ph_py, cold, warm, full):
        L = []
        w = L.append
        w("# The PPO study, reproduced side by side\n")
        w(f"Mode: {prov['mode']}. Written by `bench/study/study.py` ({prov['date_utc']}); raw lines in `raw.jsonl`.\n")
        w("## Provenance\n")
        w(f"- CPU: {prov['cpu']}; {prov['cores']} logical cores; ISA levels {', '.join(prov['isa_levels'])}; threads {prov['threads']}")
        w(f"- revision {prov['revision'][:12]}{' (dirty)' if prov['dirty'] else ''}; {prov['build_type']} build; "
          f"{' '.join(prov['compiler'])}; flags `{prov['cxx_flags']}`; kernels: {' '.join(prov['kernel_compiler'])}")
        w(f"- {prov['ember_version'].replace(chr(10), '; ')}")
        w("- packages: " + ", ".join(f"{k} {v}" for k, v in prov["packages"].items()))
        if prov["python_refs"]:
            w("- Python references (.venv-study, bench/study/py/requirements.txt): "
              + ", ".join(f"{k} {v}" for k, v in prov["python_refs"].items()))
        w(f"- OPENBLAS_CORETYPE in the environment: {prov['openblas_coretype_env']} (unset for the OpenBLAS rows); "
          f"OMP_WAIT_POLICY: {prov['omp_wait_policy_env']} (libtorch and oneDNN use OpenMP; the study sets PASSIVE "
          "unless the environment has a value: spinning waits slowed them several-fold on a loaded machine)")
        w(f"- load average: {prov['loadavg_start'][0]:.2f} at start, {os.getloadavg()[0]:.2f} at the end "
          "(other work on the machine inflates every time here)\n")

        if peaks:
            w("## Peak probe\n")
            w("| level | measured peak (GFLOPS, all threads) |\n|---|---|")
            for k, v in peaks.items():
                w(f"| {k} | {v:.1f} |")
            w("")

        w(f"## Controlled optimizer step (batch {step['batch']})\n")
        w(f"Protocol: per process {'1 untimed, 1 warm-up, 3 timed' if self.args.short else '3 untimed, 5 warm-up, 10 timed'} steps; "
          f"{step['pairs']} process pair(s) per level, alternating who runs first; median of the process medians; "
          "ratio ember/libtorch taken within each pair, then the median. The step is `ember train`'s "
          "(PpoLearner::step_fn, jitted) and a libtorch transcription of it (bench/study/torch_step.cpp).\n")
        w("| implementation | step (ms) | ratio to libtorch (median of pairs) |\n|---|---|---|")
        tm = step["torch"]["median_ms"] if step["torch"] else None
        for level, r in step["levels"].items():
            ms = f"{r['median_ms']:.3f}" if r["median_ms"] is not None else "failed"
            ra = f"{r['ratio_median']:.2f}x" if r["ratio_median"] is not None else "n/a"
            w(f"| ember ({level}) | {ms} | {ra} |")
        w(f"| libtorch | {tm:.3f} | 1 |" if tm is not None else "| libtorch | not run | |")
        for k, v in ANCHORS["step"].items():
            w(f"| *study: {k}* | *{v}* | |")
        if step["python"]:
            w(f"\nThe Python references, each in {step['pairs']} process pair(s) with ember ({self.top}), alternating "
              "who runs first (bench/study/py/torch_step.py, tinygrad_step.py with TinyJit):\n")
            w("| reference | step (ms) | ember in the same pairs (ms) | ember / reference (median of pairs) |\n|---|---|---|---|")
            for impl, r in step["python"].items():
                f = lambda v, fmt: fmt.format(v) if v is not None else "failed"
                w(f"| {impl} (Python) | {f(r['median_ms'], '{:.3f}')} | {f(r['ember_median_ms'], '{:.3f}')} | "
                  f"{f(r['ratio_median'], '{:.2f}x')} |")
        best = [r["ratio_median"] for r in step["levels"].values() if r["ratio_median"]]
        if best:
            w(f"\nGap: ember's best level takes {min(best):.2f}x libtorch's step time (median of within-pair ratios; "
              "below 1: ember is faster).\n")
        py_ratio = (step["python"].get("pytorch") or {}).get("ratio_median")
        if py_ratio:
            w(f"Against PyTorch from Python: ember ({self.top}) takes {py_ratio:.2f}x its step time.\n")
        if beam:
            BeamRows.report(beam, tm, w)

        if mm:
            w("## Matrix products (10 warm-up, then " + ("5" if self.args.short else "30") + " timed calls; median)\n")
            w("ember's time is a whole eager call (`a.matmul(b).realize()`); its kernel alone in parentheses. "
              "Fraction of peak: against the probe at the level ember ran at, and at the machine's best level for the libraries.\n")
            w("| shape | implementation | ms | GFLOPS | fraction of peak | study PyTorch / tinygrad (ms) |\n|---|---|---|---|---|---|")
            for shape, anchor in ANCHORS["matmul"].items():
                rows = [r for r in mm if r["shape"] == shape]
                for r in rows:
                    name = r["impl"] + (f" ({r['level']})" if "level" in r else "")
                    pk = peaks.get(r.get("level", self.top))
                    frac = f"{r['gflops'] / pk:.0%}" if pk else "n/a"
                    kern = f" ({r['kernel_ms']:.4f})" if "kernel_ms" in r else ""
                    w(f"| {shape} | {name} | {r['median_ms']:.4f}{kern} | {r['gflops']:.1f} | {frac} | {anchor[0]} / {anchor[1]} |")
                em = [r["median_ms"] for r in rows if r["impl"] == "ember"]
                ref = [r for r in rows if not r["impl"].startswith("ember")]
                if em and ref:
                    fastest = min(ref, key=lambda r: r["median_ms"])
                    w(f"| {shape} | **gap** | best ember / fastest ({fastest['impl']}) = {min(em) / fastest['median_ms']:.2f}x | | | |")
            w("")

        if direct:
            w("## Direct kernel: ember's generated (10000x128) @ (128x128) against cblas_sgemm\n")
            w("The compiled function a realize launched, called on its own on the same 64-byte-aligned buffers as "
              "cblas_sgemm (OpenBLAS, its own kernel choice for this CPU), same thread count.\n")
            w("| function | ms | GFLOPS |\n|---|---|---|")
            w(f"| ember `{direct['kernel']}` ({self.top}) | {direct['ember_ms']:.4f} | {direct['ember_gflops']:.1f} |")
            w(f"| cblas_sgemm | {direct['openblas_ms']:.4f} | {direct['openblas_gflops']:.1f} |")
            w(f"\nGap: {direct['ratio']:.2f}x; results agree: {direct['results_agree']} (max |difference| {direct['max_abs_difference']:.2e}). "
              "The study: generated 52 GFLOPS (default) / 119 (beam) against 1428 for the vendor BLAS.\n")

        if attr:
            w(f"## Kernel attribution of one ember optimizer step (batch {attr['batch']}, {self.top})\n")
            w(f"{attr['calls']} kernel calls from {attr['programs']} distinct programs, {attr['kernel_ms']:.2f} ms of kernel time "
              "(the study, tinygrad: 150 calls from 65 programs, the 18 large matrix calls 92%).\n")
            w("| family | calls | programs | ms | share |\n|---|---|---|---|---|")
            for f in attr["families"]:
                w(f"| {f['family']} | {f['calls']} | {f['programs']} | {f['ms']:.2f} | {f['share']:.1%} |")
            top = sorted(attr["kernels"], key=lambda k: -k["us"])[:5]
            w("\nLongest kernels: " + "; ".join(f"{k['name']} {k['us']:.0f} us ({k['family']})" for k in top) + "\n")

        w("## Third-epoch phase times of `ember train` (seconds)\n")
        if ph:
            w("Settings as `ember train` (evaluation cut to 1 episode per env: it is not a phase here).\n")
            w("| implementation | collection | (actor inference / sampling / env / buffer) | update | (policy outputs / steps) | epoch |\n|---|---|---|---|---|---|")
            rows = [("ember", ph), ("libtorch on ember's env", ph_torch)]
            if self.py.has("pytorch", "gymnasium"):
                rows.append(("PyTorch on Gymnasium (Python)", ph_py))
            for name, e in rows:
                if e is None:
                    w(f"| {name} | not run | | | | |")
                    continue
                w(f"| {name} | {e['collect_s']:.3f} | {e['collect_inference_s']:.3f} / {e['collect_sampling_s']:.3f} / "
                  f"{e['collect_env_s']:.3f} / {e['collect_buffer_s']:.3f} | {e['update_s']:.3f} | "
                  f"{e.get('update_policy_outputs_s', 0):.3f} / {e.get('update_steps_s', 0):.3f} | {e['epoch_s']:.3f} |")
            for k, v in ANCHORS["phases"].items():
                w(f"| *study: {k}* | *{v[0]}* | | *{v[1]}* | | *{v[2]}* |")
            if ph_torch:
                w(f"\nGap: ember's epoch is {ph['epoch_s'] / ph_torch['epoch_s']:.2f}x libtorch's "
                  f"(collection {ph['collect_s'] / ph_torch['collect_s']:.2f}x, update {ph['update_s'] / ph_torch['update_s']:.2f}x). "
                  "The libtorch trainer (bench/study/torch_ppo.cpp) shares ember's env, collector, buffer and GAE; "
                  "only the networks and the update are libtorch.\n")
            if ph_py:
                w(f"Against PyTorch on Gymnasium from Python (its own env and collection loop): ember's epoch is "
                  f"{ph['epoch_s'] / ph_py['epoch_s']:.2f}x (collection {ph['collect_s'] / ph_py['collect_s']:.2f}x, "
                  f"update {ph['update_s'] / ph_py['update_s']:.2f}x).\n")
        else:
            w("not measured (see notes)\n")

        w("## Cold start: first epoch on an empty kernel cache vs a warm one (seconds)\n")
        if cold and warm:
            w("| cache | collection | update | epoch | process time at epoch end |\n|---|---|---|---|---|")
            for n, e in (("empty", cold), ("warm", warm)):
                w(f"| {n} | {e['collect_s']:.3f} | {e['update_s']:.3f} | {e['epoch_s']:.3f} | {e['elapsed_s']:.2f} |")
            w(f"\nCold start costs {cold['elapsed_s'] - warm['elapsed_s']:.2f} s of process time.\n")
        else:
            w("not measured (see notes)\n")

        if self.args.full:
            w("## Time to the target (evaluation mean 200), 5 seeds\n")
            w("| implementation | seed | transitions at stop | seconds to stop | reached | saved-policy eval |\n|---|---|---|---|---|---|")
            for r in full:
                w(f"| {r.get('impl', 'ember')} | {r['seed']} | {r['transitions_at_stop']} | {r['seconds_to_stop']:.1f} | {r['reached_target']} | "
                  f"{r['saved_policy_eval'] if r['saved_policy_eval'] is None else round(r['saved_policy_eval'], 2)} |")
            w("| *study: PyTorch (M4)* | | *520,000* | *45.60* | | *233.57* |")
            w("| *study: tinygrad (M4)* | | *520,000* | *579.42* | | *218.68* |\n")
            w("libtorch's final evaluation is of the live policy (no save and load).\n")

        w("## Not in this run\n")
        for n in self.py.notes():
            w(f"- {n}")
        for n in self.notes:
            w(f"- {n}")
        for n in self.errors:
            w(f"- FAILED: {n}")
        return "\n".join(L) + "\n"

    def main(self):
        prov = self.provenance()
        self.raw.append(prov)
        if not self.exe("ember") or not self.exe("study_ember_step"):
            sys.exit(f"study: build {self.build} first (needs apps/ember and bench/study_ember_step)")
        peaks = self.peak()
        step = self.step()
        beam = self.beam()
        mm = self.matmul() + beam["matmul"]
        direct = self.direct()
        attr = self.attribution()
        ph, ph_torch, ph_py = self.phases()
        cold, warm = self.cold_start()
        full = self.full() if self.args.full else []
        self.raw.append({"kind": "step_summary", **step})
        self.raw.append({"kind": "beam_summary", **{k: v for k, v in beam.items() if k != "matmul"}})
        self.write_atomically("raw.jsonl", "".join(json.dumps(r) + "\n" for r in self.raw))
        text = self.report(prov, peaks, step, beam, mm, direct, attr, ph, ph_torch, ph_py, cold, warm, full)
        self.write_atomically("report.md", text)
        print(f"[study] wrote {self.out}/report.md and raw.jsonl", file=sys.stderr)
        self.check(step, beam, attr, ph, cold, warm)
        for e in self.errors:
            print(f"[study] FAILED: {e}", file=sys.stderr)
        return 1 if self.errors else 0

    def check(self, step, beam, attr, ph, cold, warm):
        """What every run must have produced (the CI test of the short mode relies on this)."""
        if not any(r["median_ms"] for r in step["levels"].values()):
            self.errors.append("no ember step was measured")
        if beam["step"]["ratio_median"] is None or not beam["kernels"]:
            self.errors.append("no BEAM rows (no searched kernels or no paired step)")
        if attr is None:
            self.errors.append("no kernel attribution")
        else:
            total = sum(f["share"] for f in attr["families"])
            if abs(total - 1.0) > 1e-6 or sum(f["calls"] for f in attr["families"]) != attr["calls"]:
                self.errors.append(f"attribution shares sum to {total}, not 1")
            if len(attr["kernels"]) != attr["calls"]:
                self.errors.append("attribution lists a different number of kernels than calls")
        if ph is None:
            self.errors.append("no third-epoch phase times")
        if cold is None or warm is None:
            self.errors.append("no cold-start measurement")


def main():
    # OpenMP's default is to spin while waiting; with more runnable threads than cores (a shared
    # machine) that slows libtorch and oneDNN several-fold. Passive waiting is the fair default
    # here; a value the user set is kept, and the report records it either way.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build/release", help="CMake build directory")
    ap.add_argument("--out", default=None, help="output directory (default runs/study-<UTC time>)")
    ap.add_argument("--short", action="store_true", help="seconds, not minutes (CI)")
    ap.add_argument("--full", action="store_true", help="also time to the target over 5 seeds")
    ap.add_argument("--threads", type=int, default=0, help="threads for every library (default EMBER_THREADS or all cores)")
    ap.add_argument("--levels", default="", help="comma-separated ISA levels for ember (default: all the CPU has)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--python-venv", default=os.path.join(root, ".venv-study"),
                    help="virtual environment of the Python references (scripts/study-venv.sh creates it)")
    ap.add_argument("--no-python", action="store_true", help="leave out the Python references")
    args = ap.parse_args()
    if args.short and args.full:
        ap.error("--short and --full exclude each other")
    if args.out is None:
        args.out = os.path.join("runs", "study-" + datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ"))
    return Study(args).main()


if __name__ == "__main__":
    sys.exit(main())
