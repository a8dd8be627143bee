"""Two machines' outputs in one paste, or in several --from files, are refused with one sentence
naming the identity that differs (issue 13, issue 19); one machine's outputs pasted together, or
the same output twice, are read. Every input is a real recording put side by side."""

from __future__ import annotations

from conftest import NODES, PUBLIC, report_of, run_main

PASTES = NODES.parent / "pastes"
H100_8 = PASTES / "vllm-dstack-8xh100-collect_env-indented.txt"     # 8 x H100, driver 550.90.12, Xeon 8480+
A10 = PASTES / "vllm-7943-a10-driver470-cu121-forward-compat.txt"  # A10, driver 470
H100_TABLE = NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi.txt"          # 1 x H100, driver 580.159.04
EPYC_LSCPU = PUBLIC / "cpu_numa" / "perfstudy_azure_hbv3_2xEPYC7V73X_lscpu.txt"


def _joined(tmp_path, *paths):
    out = tmp_path / "paste.txt"
    out.write_text("\n".join(p.read_text(encoding="utf-8") for p in paths) + "\n", encoding="utf-8")
    return out


def _refused(res, *words):
    assert res.returncode == 2, res.stdout[-500:]
    err = res.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert "different machines" in err
    for w in words:
        assert w in err, err
    return err


def test_nvidia_smi_table_beside_another_machines_collect_env_is_refused(tmp_path):
    err = _refused(run_main("check", "--from", str(_joined(tmp_path, H100_TABLE, H100_8))))
    assert "8 GPU(s)" in err or "580.159.04" in err


def test_lscpu_beside_a_collect_env_whose_own_lscpu_says_another_cpu_is_refused(tmp_path):
    _refused(run_main("check", "--from", str(_joined(tmp_path, EPYC_LSCPU, H100_8))), "CPU", "EPYC 7V73X", "8480+")


def test_two_reports_in_one_file_are_refused(tmp_path):
    _refused(run_main("check", "--from", str(_joined(tmp_path, A10, H100_8))), "A10")


def test_two_files_of_two_machines_are_refused():
    _refused(run_main("check", "--from", str(A10), "--from", str(H100_8)), "A10")


def test_the_same_report_twice_is_one_machine(tmp_path):
    doc = report_of("check", "--from", str(_joined(tmp_path, H100_8, H100_8)))
    assert doc["source"]["mode"] == "paste"
    assert any("same machine" in n for n in doc["source"]["notes"])
