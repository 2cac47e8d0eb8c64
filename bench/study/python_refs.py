"""The study's Python references (bench/study/py/), run from the project's .venv-study, which
scripts/study-venv.sh creates from PyPI (`make study` runs it). Each reference is found and
versioned on its own: a missing tinygrad does not drop PyTorch, and the report names what was
missing and why. Python standard library only (the references run in the venv's interpreter)."""
import json
import os
import subprocess

PY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "py")

# What each reference needs, and the expression that gives its version.
PROBES = {
    "pytorch": ("import torch", "torch.__version__"),
    "gymnasium": ("import gymnasium; gymnasium.make('LunarLanderContinuous-v3')", "gymnasium.__version__"),
    "tinygrad": ("from importlib.metadata import version; from tinygrad import Tensor; "
                 "(Tensor([1.0]) + 1).realize()", "version('tinygrad')"),
}


class PythonRefs:
    def __init__(self, venv):
        self.venv = os.path.abspath(venv) if venv else None
        self.python = os.path.join(self.venv, "bin", "python") if self.venv else None
        self.versions, self.missing = {}, {}
        if not self.venv:
            self.missing["all"] = "disabled (--no-python)"
            return
        if not os.access(self.python or "", os.X_OK):
            self.missing["all"] = (f"no virtual environment at {self.venv} (create it with "
                                   "scripts/study-venv.sh; `make study` does)")
            return
        for name, (setup, version) in PROBES.items():
            code = f"{setup}; import json; print(json.dumps({version}))"
            try:
                p = subprocess.run([self.python, "-c", code], capture_output=True, text=True, timeout=300,
                                   cwd=PY_DIR)
            except (OSError, subprocess.TimeoutExpired) as e:
                self.missing[name] = str(e)
                continue
            if p.returncode == 0:
                self.versions[name] = json.loads(p.stdout.strip().splitlines()[-1])
            else:
                last = (p.stderr.strip().splitlines() or ["no output"])[-1]
                self.missing[name] = f"import failed: {last[:200]}"
        self.versions["python"] = subprocess.run([self.python, "--version"], capture_output=True,
                                                 text=True).stdout.strip()

    def has(self, *names):
        return all(n in self.versions for n in names)

    def cmd(self, script, *args):
        return [self.python, os.path.join(PY_DIR, script)] + [str(a) for a in args]

    def notes(self):
        """Lines for the report's "Not in this run" section."""
        if "all" in self.missing:
            return [f"Python references (PyTorch on Gymnasium, tinygrad): {self.missing['all']}"]
        return [f"Python reference {k}: {v}" for k, v in self.missing.items()]
