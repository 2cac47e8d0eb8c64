#!/usr/bin/env python3
"""`ember viz` in a real headless browser (Debian's chromium, chromium-driver, python3-selenium).

Trains two tiny runs (one with --profile), serves them with `ember viz --port 0`, loads the page
and checks what it draws against the records on disk: both runs listed; one evaluation point per
scheduled evaluation and one training-return point per epoch with a return; every kernel of the
kernel table in the Kernels view, and every kernel of the training step's graph among them; a
graph drawn with a box per kernel, by Graphviz where `dot` is installed and by the page's own
layout; a run added while the page is open appears. With --onnx-model, that model profiled by
`ember onnx run --profile` into the runs folder: the ONNX view draws one box per node of the model
(`ember onnx info` counts them) and a table row per node. Screenshots of the Runs, Kernels,
Graphs, Timeline and ONNX views go to --out.

Usage: viz_browser.py --ember BUILD/apps/ember --out DIR [--onnx-model MODEL.onnx]
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait


def train(ember, out, extra):
    args = [ember, "train", "--out", out, "--envs", "2", "--steps-per-env", "32",
            "--minibatch", "64", "--passes", "1", "--eval-every", "2", "--max-transitions", "192",
            "--hidden", "8", "--layers", "1", "--eval-envs", "1", "--eval-episodes-per-env", "1",
            "--final-eval-episodes-per-env", "1", "--max-episode-steps", "20",
            "--progress", "none"] + extra
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, timeout=120)


def epochs(run_dir):
    with open(os.path.join(run_dir, "epochs.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def start_viz(ember, runs):
    p = subprocess.Popen([ember, "viz", "--runs", runs, "--port", "0"], stdout=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()
    m = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
    if not m:
        p.kill()
        sys.exit("ember viz printed no URL: " + line)
    return p, m.group(1)


def browser():
    o = webdriver.ChromeOptions()
    o.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1500,1100"):
        o.add_argument(a)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                            options=o)


def count(d, css):
    return len(d.find_elements(By.CSS_SELECTOR, css))


def wait_count(d, css, n, what):
    try:
        WebDriverWait(d, 20).until(lambda d: count(d, css) == n)
    except Exception:
        sys.exit(f"{what}: expected {n} of {css}, the page has {count(d, css)}")


def step_kernels(graphs_dir):
    """The kernels (names) of the realize with the most kernels (the training step's fused graph)."""
    best = []
    for f in os.listdir(graphs_dir):
        if f.endswith(".fused.dot"):
            with open(os.path.join(graphs_dir, f)) as g:
                names = re.findall(r'^    label="\d+: (\w+)";', g.read(), re.M)
            if len(names) > len(best):
                best = names
    return best


def profile_onnx(ember, model, out):
    """`ember onnx run --profile` into the runs folder; the model's node count (ember onnx info)."""
    info = subprocess.run([ember, "onnx", "info", model], check=True, capture_output=True,
                          text=True, timeout=60).stdout
    nodes = int(re.search(r"^ops: (\d+) nodes$", info, re.M).group(1))
    subprocess.run([ember, "onnx", "run", model, "--profile", out, "--repeat", "2"], check=True,
                   stdout=subprocess.DEVNULL, timeout=120)
    return nodes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--onnx-model")
    a = ap.parse_args()
    runs = os.path.join(a.out, "runs")
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(runs)
    t0 = time.time()
    train(a.ember, os.path.join(runs, "profiled"), ["--profile", "--seed", "1"])
    train(a.ember, os.path.join(runs, "plain"), ["--seed", "2"])
    rec = epochs(os.path.join(runs, "profiled"))
    evals = sum(r.get("eval_mean") is not None for r in rec)
    returns = sum(r.get("train_return_mean") is not None for r in rec)
    assert len(rec) >= 2 and evals >= 1, f"the run is too short to check: {len(rec)} epochs, {evals} evaluations"
    with open(os.path.join(runs, "profiled", "profile", "trace.kernels.json")) as f:
        table = json.load(f)["kernels"]
    step_list = step_kernels(os.path.join(runs, "profiled", "profile", "graphs"))
    step = set(step_list)
    assert step, "no fused graph with kernels"
    print(f"trained in {time.time() - t0:.1f} s: {len(rec)} epochs, {evals} evaluations, "
          f"{returns} returns, {len(table)} kernels, {len(step_list)} in the step")
    onnx_nodes = profile_onnx(a.ember, a.onnx_model, os.path.join(runs, "onnx")) if a.onnx_model else 0

    # chromedriver reaches chromium, and selenium reaches chromedriver, at the name localhost: say
    # so plainly where it does not resolve (a root with no /etc/hosts) instead of timing out.
    try:
        socket.getaddrinfo("localhost", None)
    except OSError as e:
        sys.exit(f"the name localhost does not resolve ({e}): chromedriver needs it (/etc/hosts)")
    viz, url = start_viz(a.ember, runs)
    try:
        d = browser()
    except Exception:
        viz.kill()  # else its open stdout keeps ctest waiting until the test's timeout
        viz.wait()
        raise
    try:
        d.get(url)
        wait_count(d, "#runs-table tbody tr", 2, "runs listed")
        d.find_element(By.CSS_SELECTOR, '#runs-table tbody tr[data-run="profiled"]').click()
        # The newest run starts selected and overlaid; overlay the other one too.
        WebDriverWait(d, 20).until(lambda d: d.execute_script("return state.current") == "profiled")
        box = d.find_element(By.CSS_SELECTOR, '#runs-table tbody tr[data-run="plain"] input')
        if not box.is_selected():
            box.click()
        wait_count(d, 'circle.eval-point[data-run="profiled"]', evals, "evaluation curve")
        wait_count(d, 'circle.return-point[data-run="profiled"]', returns, "training-return curve")
        plain = epochs(os.path.join(runs, "plain"))
        wait_count(d, 'circle.eval-point[data-run="plain"]',
                   sum(r.get("eval_mean") is not None for r in plain), "overlaid evaluation curve")
        assert count(d, "rect.phase-bar") == 3 * len(rec), "phase bars: three per epoch"
        d.save_screenshot(os.path.join(a.out, "viz-runs.png"))

        d.find_element(By.CSS_SELECTOR, 'nav button[data-view="kernels"]').click()
        wait_count(d, "#kernel-table tbody tr", len(table), "kernel table")
        shown = {r.find_elements(By.TAG_NAME, "td")[0].text
                 for r in d.find_elements(By.CSS_SELECTOR, "#kernel-table tbody tr")}
        assert shown == {k["name"] for k in table}, "kernel names differ from trace.kernels.json"
        assert step <= shown, f"step kernels missing from the table: {sorted(step - shown)}"
        d.find_element(By.CSS_SELECTOR, "#kernel-table tbody tr").click()
        WebDriverWait(d, 10).until(lambda d: count(d, "#kernel-source span.kw") > 0)
        d.save_screenshot(os.path.join(a.out, "viz-kernels.png"))

        d.find_element(By.CSS_SELECTOR, 'nav button[data-view="graphs"]').click()
        layouts = ["graphviz", "page"] if shutil.which("dot") else ["page"]
        for layout in layouts:
            Select(d.find_element(By.ID, "graph-layout")).select_by_value(layout)
            WebDriverWait(d, 30).until(lambda d: d.execute_script(
                "const v = document.querySelector('#graph-view');"
                "return v.dataset.layout === arguments[0] && v.querySelectorAll('svg .node').length > 0",
                layout))
            clusters = count(d, "#graph-view svg .cluster")
            assert clusters == len(step_list), \
                f"graph ({layout}): {clusters} kernel boxes, the step has {len(step_list)}"
        d.save_screenshot(os.path.join(a.out, "viz-graphs.png"))

        d.find_element(By.CSS_SELECTOR, 'nav button[data-view="timeline"]').click()
        WebDriverWait(d, 20).until(lambda d: d.execute_script("return tl.rows.length") > 0)
        d.save_screenshot(os.path.join(a.out, "viz-timeline.png"))

        if onnx_nodes:
            d.find_element(By.CSS_SELECTOR, 'nav button[data-view="onnx"]').click()
            wait_count(d, "#onnx-graph svg .node.op", onnx_nodes, "ONNX graph's nodes")
            with open(os.path.join(runs, "onnx", "onnx-profile.json")) as f:
                prof = json.load(f)
            rows = onnx_nodes + len(prof["groups"]) + (prof["unattributed_s"] > 0)
            wait_count(d, "#onnx-table tbody tr", rows, "ONNX table (nodes, fused groups, copies)")
            d.find_element(By.CSS_SELECTOR, '#onnx-table th[data-key="us"]').click()  # ascending
            shown = [float(r.find_elements(By.TAG_NAME, "td")[4].text)
                     for r in d.find_elements(By.CSS_SELECTOR, "#onnx-table tbody tr")]
            assert shown == sorted(shown), f"ONNX table not sorted by time: {shown}"
            d.save_screenshot(os.path.join(a.out, "viz-onnx.png"))

        # A run that appears while the page is open is listed at the next poll.
        d.find_element(By.CSS_SELECTOR, 'nav button[data-view="runs"]').click()
        shutil.copytree(os.path.join(runs, "plain"), os.path.join(runs, "later"))
        wait_count(d, "#runs-table tbody tr", 3, "a run added while the page is open")
        errors = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
        assert not errors, f"console errors: {errors}"
    finally:
        d.quit()
        viz.terminate()
        viz.wait()
    for v in ("runs", "kernels", "graphs", "timeline") + (("onnx",) if onnx_nodes else ()):
        print("screenshot:", os.path.join(a.out, f"viz-{v}.png"))
    print(f"ok in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
