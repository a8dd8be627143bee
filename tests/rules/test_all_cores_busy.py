"""omp-threads-unset from a ticket whose user sees every core busy (prose all-cores-busy), on blind
set D's real OSVOS ticket; a title's "High CPU usage" without the cores counted says nothing."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts, run_rule

NAME = "osvos-19-high-cpu-omp-num-threads"


def _text():
    return (FIXTURES / "tickets_blind_d" / f"{NAME}.txt").read_text(encoding="utf-8")


def test_all_cores_busy_in_the_users_words_is_openmps_default(tmp_path):
    (f,) = fired("omp-threads-unset", paste_facts(tmp_path, _text(), NAME + ".txt"))
    assert "all 36 cores busy" in f.message and f.severity == "warning"
    assert f.fix.startswith("export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-4}")


def test_high_cpu_usage_without_every_core_named_is_not_read(tmp_path):
    title_only = _text().splitlines()[0] + "\n"
    findings, skipped = run_rule("omp-threads-unset", paste_facts(tmp_path, title_only, NAME + ".txt"))
    assert not findings and skipped
