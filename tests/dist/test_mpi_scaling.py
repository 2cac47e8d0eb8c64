#!/usr/bin/python3
"""scripts/mpi_scaling.py's arithmetic (`make bench-mpi`): records to table rows, the fit and the
model, against hand values. Runs nothing; ctest runs it as dist.mpi_scaling_script."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import mpi_scaling as m  # noqa: E402


def record(epoch, transitions, epoch_s, steps, ranks):
    """An epochs.jsonl record of a 2-rank job (rank 0's fields first in `ranks`)."""
    return {"epoch": epoch, "transitions": transitions, "epoch_s": epoch_s, "world_size": 2,
            "collect_s": ranks["collect_s"][0], "update_s": ranks["update_s"][0],
            "update_steps_s": ranks["update_steps_s"][0],
            "update_allreduce_s": ranks["allreduce_s"][0], "optimizer_steps": steps,
            "ranks": ranks}


class MpiScaling(unittest.TestCase):
    def test_flat_gradient_elements(self):
        # Actor 8-128-128-128-128-2 (50,946) + log_std 2, critic 8-...-1 (50,817), 6 metrics.
        self.assertEqual(m.flat_gradient_elements(128, 4), 101771)
        # 8-16-2: 144 + 34, + 2; 8-16-1: 144 + 17; + 6.
        self.assertEqual(m.flat_gradient_elements(16, 1), 347)

    def test_epoch_rows(self):
        ranks = {"collect_s": [1.0, 1.2], "update_s": [2.0, 2.5], "update_steps_s": [1.6, 2.0],
                 "allreduce_s": [0.4, 0.2]}
        recs = [record(0, 1000, 9.0, 4, ranks),  # compiles: left out
                record(1, 3000, 4.0, 4, ranks)]
        rows = m.epoch_rows(recs)
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual(r["transitions"], 2000)
        self.assertAlmostEqual(r["steps_per_s"], 500.0)
        self.assertAlmostEqual(r["update_s"], 2.5)  # the slowest rank
        self.assertAlmostEqual(r["step_per_step_s"], 0.4)  # rank 0's 1.6 s / 4
        self.assertAlmostEqual(r["allreduce_min_per_step_s"], 0.05)
        self.assertAlmostEqual(r["allreduce_max_per_step_s"], 0.1)
        self.assertAlmostEqual(r["compute_per_step_s"], 0.375)  # mean of 1.2 and 1.8, / 4

    def test_epoch_rows_one_process(self):
        # A job of one may lack "ranks": rank 0's fields stand in.
        rec = {"epoch": 1, "transitions": 100, "epoch_s": 0.5, "collect_s": 0.1, "update_s": 0.3,
               "update_steps_s": 0.2, "update_allreduce_s": 0.0, "optimizer_steps": 2}
        r = m.epoch_rows([rec])[0]
        self.assertAlmostEqual(r["steps_per_s"], 200.0)
        self.assertEqual(r["allreduce_max_per_step_s"], 0.0)
        self.assertAlmostEqual(r["compute_per_step_s"], 0.1)

    def test_fit_and_model(self):
        # Exact points of t = 2 us + bytes / 1 GB/s.
        alpha, bw = m.fit_latency_bandwidth([(b, 2e-6 + b / 1e9) for b in (0, 1000, 10**6)])
        self.assertAlmostEqual(alpha, 2e-6, places=12)
        self.assertAlmostEqual(bw / 1e9, 1.0, places=9)
        self.assertEqual(m.ring_allreduce_s(1, 10**6, 5e-6, 1e9), 0.0)
        # p = 4: 6 messages of latency, 2 * 3/4 of the bytes: 30 us + 1.5 ms.
        self.assertAlmostEqual(m.ring_allreduce_s(4, 10**6, 5e-6, 1e9), 1.53e-3)
        # compute per epoch row 1 us / 10 passes + 1 us, M = 1000: 1.1 ms; t_ar 0.11 ms: 1 / 1.1.
        self.assertAlmostEqual(m.efficiency(1.1e-4, 1000, 1e-6, 1e-6, 10), 1 / 1.1)


if __name__ == "__main__":
    unittest.main()
