"""dataloader-workers from a paste, on blind set E's real tickets: torch's DataLoader warning of more
workers than CPUs (torch/utils/data/dataloader.py) and PyTorch Lightning's warning of too few."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts


def _ticket(tmp_path, name: str):
    text = (FIXTURES / "tickets_blind_e" / f"{name}.txt").read_text(encoding="utf-8")
    return paste_facts(tmp_path, text, name + ".txt")


def test_more_workers_than_cpus_lowers_num_workers_below_torchs_count(tmp_path):
    (f,) = fired("dataloader-workers", _ticket(tmp_path, "mteb-1331-loader-workers-exceed-suggested-max-freeze"))
    assert "starts 104 workers on 23 CPUs" in f.message and "num_workers=22" in f.fix


def test_lightnings_few_workers_raises_num_workers_to_the_cpus_the_job_may_use(tmp_path):
    # older Lightning counts the machine's CPUs ("the number of cpus on this machine"), not the job's:
    # the fix asks for the CPUs this process may run on
    (f,) = fired("dataloader-workers", _ticket(tmp_path, "nemo-speech-1204-gpu-util-zero-few-loader-workers"))
    assert "fewer than 2 workers on 32 CPUs in the machine" in f.message
    assert "num_workers=len(os.sched_getaffinity(0)) - 1" in f.fix


def test_torchs_warning_without_a_cpu_count_is_no_finding(tmp_path):
    # The message as torch 2.13.0's _create_warning_msg builds it when cpu_count() is None.
    text = ("This DataLoader will create 8 worker processes in total. DataLoader is not able to compute a suggested "
            "max number of worker in current system. Please be aware that excessive worker creation might get "
            "DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if "
            "necessary.\n")
    assert not fired("dataloader-workers", paste_facts(tmp_path, text, "nocount.txt"))
