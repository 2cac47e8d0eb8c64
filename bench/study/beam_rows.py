"""The study's BEAM rows (issue 40): ember with the schedule search's plans beside ember with the
heuristic's, at the machine's best ISA level.

One untimed process per program runs with BEAM=2 and a private kernel cache directory
(EMBER_CACHE_DIR): it searches every kernel's plan and stores the winners in the directory's
tune.sqlite. Its wall time is the one-off search cost (compiling the candidates included). One
untimed process compiles the winners' own objects into that cache; then process pairs alternate the heuristic (the default cache) and the searched plans (the private cache,
no BEAM: the plans are read back), so the within-pair ratio is BEAM's effect alone. `ember tune
--list` on the private cache gives how many kernels the search changed and by how much.
Python standard library only.
"""
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

TUNE_ROW = re.compile(r"^(\S+)\s+(\d+) threads (\S+)\s+([\d.]+) us ->\s+([\d.]+) us \(([\d.]+)x\), "
                      r"(\d+) plans in ([\d.]+) s")


class BeamRows:
    def __init__(self, study):
        self.s = study
        self.cache = None

    def search(self, section, cmd):
        """Runs `cmd` once with BEAM=2 on the private cache; returns its wall seconds."""
        t0 = time.monotonic()
        self.s.run(section, cmd, {"EMBER_ISA": self.s.top, "BEAM": "2", "EMBER_CACHE_DIR": self.cache})
        return time.monotonic() - t0

    def tune_rows(self):
        """The private cache's rows: (kernel, heuristic us, searched us, speed-up, plans, seconds)."""
        try:
            p = subprocess.run([self.s.exe("ember"), "tune", "--list"], capture_output=True, text=True,
                               timeout=60, env=dict(os.environ, EMBER_CACHE_DIR=self.cache))
        except (OSError, subprocess.TimeoutExpired):
            return []
        rows = []
        for line in p.stdout.splitlines():
            m = TUNE_ROW.match(line)
            if m:
                rows.append({"kernel": m[1], "heuristic_us": float(m[4]), "beam_us": float(m[5]),
                             "speedup": float(m[6]), "plans": int(m[7]), "search_s": float(m[8])})
        return rows

    def measure(self, step_cmd, matmul_cmd, pairs):
        """BEAM's effect on the optimizer step and on the three products; None when not run."""
        self.cache = tempfile.mkdtemp(prefix="beam-cache-", dir=self.s.out)
        try:
            out = {"level": self.s.top, "pairs": pairs, "search_s": {}}
            out["search_s"]["step"] = self.search("beam_search", step_cmd)
            if matmul_cmd:
                out["search_s"]["matmul"] = self.search("beam_search", matmul_cmd)
            out["kernels"] = self.tune_rows()
            # The searched plans' own objects are compiled by the next process that uses them:
            # one untimed run, so that no pair times a compile.
            self.s.run("beam_warm", step_cmd, {"EMBER_ISA": self.s.top, "EMBER_CACHE_DIR": self.cache})
            heur, beam, ratios = [], [], []
            for p in range(pairs):
                got = {}
                for who in (("heuristic", "beam") if p % 2 == 0 else ("beam", "heuristic")):
                    env = {"EMBER_ISA": self.s.top}
                    if who == "beam":
                        env["EMBER_CACHE_DIR"] = self.cache
                    for r in self.s.run(f"beam_step_{who}", step_cmd, env):
                        got[who] = r["median_ms"]
                if len(got) == 2:
                    heur.append(got["heuristic"])
                    beam.append(got["beam"])
                    ratios.append(got["beam"] / got["heuristic"])
            med = lambda xs: statistics.median(xs) if xs else None
            out["step"] = {"heuristic_ms": med(heur), "beam_ms": med(beam), "ratio_median": med(ratios)}
            out["matmul"] = []
            if matmul_cmd:
                for r in self.s.run("beam_matmul", matmul_cmd,
                                    {"EMBER_ISA": self.s.top, "EMBER_CACHE_DIR": self.cache}):
                    r["impl"] = "ember, BEAM=2 plans"
                    r["level"] = self.s.top
                    out["matmul"].append(r)
            return out
        finally:
            shutil.rmtree(self.cache, ignore_errors=True)

    @staticmethod
    def report(beam, torch_ms, w):
        """The report's BEAM section, written with `w` (one line per call)."""
        w(f"## Schedule search: BEAM=2 against the heuristic ({beam['level']})\n")
        w("One untimed BEAM=2 process per program searched every kernel and stored the plans in a private "
          "tune cache; then " + str(beam["pairs"]) + " process pair(s) of the step alternated the heuristic's "
          "plans and the cached ones (no search in the timed runs).\n")
        st = beam["step"]
        f = lambda v, fmt: fmt.format(v) if v is not None else "failed"
        w("| step | ms | BEAM / heuristic (median of pairs) | to libtorch |\n|---|---|---|---|")
        for name, key in (("heuristic", "heuristic_ms"), ("BEAM=2 plans", "beam_ms")):
            ms = st[key]
            to = f"{ms / torch_ms:.2f}x" if ms and torch_ms else "n/a"
            ratio = f(st["ratio_median"], "{:.3f}x") if key == "beam_ms" else "1"
            w(f"| ember, {name} | {f(ms, '{:.3f}')} | {ratio} | {to} |")
        w("")
        search = ", ".join(f"{k} {v:.1f} s" for k, v in beam["search_s"].items())
        k = beam["kernels"]
        won = [r for r in k if r["speedup"] > 1.0]
        w(f"Search (wall time of the BEAM=2 processes, compiling included): {search}. "
          f"{len(k)} kernels searched, {sum(r['plans'] for r in k)} plans timed in "
          f"{sum(r['search_s'] for r in k):.1f} s; BEAM's plan beat the heuristic's on {len(won)}"
          + (f" (median speed-up {statistics.median(r['speedup'] for r in won):.2f}x, best "
             f"{max(r['speedup'] for r in won):.2f}x)" if won else "") + ".\n")
        if won:
            w("| kernel | heuristic (us) | BEAM (us) | speed-up | plans timed |\n|---|---|---|---|---|")
            for r in sorted(won, key=lambda r: r["heuristic_us"] - r["beam_us"], reverse=True)[:10]:
                w(f"| {r['kernel']} | {r['heuristic_us']:.2f} | {r['beam_us']:.2f} | {r['speedup']:.2f}x | {r['plans']} |")
            w("")
