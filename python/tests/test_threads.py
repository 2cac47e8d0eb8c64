"""The GIL is released while ember computes: another Python thread runs during a long realize,
and two threads computing at once both get correct results."""
import threading
import time

import numpy as np

import ember


def timed_item(n):
    """(start, end) around a realize of an n x n matmul chain (item() waits for it)."""
    a = ember.rand(n, n)
    b = ember.rand(n, n)
    r = ((a @ b).tanh() @ b).sum()
    t0 = time.perf_counter()
    r.item()
    return t0, time.perf_counter()


def test_another_thread_runs_during_a_realize():
    timed_item(64)  # warm the engine
    n, span, ticks = 256, (0.0, 0.0), []
    while True:  # a size whose realize takes 0.2 s or more on this machine (the middle half is
        # then long enough for the scheduler to run the main thread even on a loaded machine)
        done = threading.Event()

        def work():
            nonlocal span
            span = timed_item(n)
            done.set()

        ticks.clear()
        worker = threading.Thread(target=work)
        worker.start()
        while not done.is_set():
            ticks.append(time.perf_counter())  # pure Python: needs the GIL
        worker.join()
        t0, t1 = span
        if t1 - t0 >= 0.2 or n >= 4096:
            break
        n *= 2
    assert t1 - t0 >= 0.2
    # With the GIL held by the realize, no tick could fall inside its middle half.
    lo, hi = t0 + 0.25 * (t1 - t0), t1 - 0.25 * (t1 - t0)
    assert sum(lo < t < hi for t in ticks) > 0, (n, t1 - t0)


def test_two_threads_compute_at_once_correctly():
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((96, 64)).astype(np.float32) for _ in range(2)]
    weights = [rng.standard_normal((64, 32)).astype(np.float32) for _ in range(2)]
    results, errors = [[], []], []

    def work(k):
        try:
            x, w = ember.from_numpy(inputs[k]), ember.from_numpy(weights[k])
            for i in range(15):
                results[k].append(((x @ w) * (i + 1)).tanh().sum(0).numpy())
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(2):
        for i, r in enumerate(results[k]):
            expected = np.tanh(inputs[k].astype(np.float64) @ weights[k] * (i + 1)).sum(0)
            np.testing.assert_allclose(r, expected, rtol=1e-4, atol=1e-4)
