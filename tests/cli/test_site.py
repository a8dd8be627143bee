"""Site configuration, system recognition, site rules, and `hpcdoctor env`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import NODES, PUBLIC, report_of, run_cli, run_main
from rulekit import facts, fired, nvsmi_node
from hpcdoctor import config
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge.systems import recognise

H100 = "h100-kvm-1gpu"


def _cfg(tmp_path, text):
    p = tmp_path / "site.toml"
    p.write_text(text)
    return str(p)


def test_config_errors_name_file_and_line(tmp_path):
    with pytest.raises(config.ConfigError, match=r"site.toml:3: unknown key 'gpu' in \[expect\]"):
        config.load(_cfg(tmp_path, "[expect]\ngpus = 4\ngpu = 2\n"))
    with pytest.raises(config.ConfigError, match=r"site.toml:2: 'gpus' must be int"):
        config.load(_cfg(tmp_path, "[expect]\ngpus = \"4\"\n"))
    with pytest.raises(config.ConfigError, match=r"site.toml:1: not valid TOML"):
        config.load(_cfg(tmp_path, "[expect\n"))
    with pytest.raises(config.ConfigError, match=r"unknown section \[expected\]"):
        config.load(_cfg(tmp_path, "[expected]\ngpus = 4\n"))


def test_config_typo_on_cli_is_one_line_exit_2(tmp_path):
    res = run_cli("check", "--config", _cfg(tmp_path, "[expect]\ngpus = 4\ngpu = 2\n"))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "site.toml:3" in res.stderr


def test_config_ignore_list(tmp_path):
    res = run_main("check", "--from", str(NODES / "cpu-kvm-2core"), "--fail-on", "advice", "-q",
                  "--config", _cfg(tmp_path, "[rules]\nignore = [\"CPU001\", \"login-node\"]\n"))
    assert res.returncode == 0 and res.stdout == ""


def test_gpu_count_against_config_and_allocation():
    cfg = {"expect": {"gpus": 4}, "_path": "site.toml"}
    (f,) = fired("gpu-count-mismatch", facts(H100), cfg)
    assert "1 GPU(s) visible, 4 expected" in f.message
    assert not fired("gpu-count-mismatch", facts(H100), {"expect": {"gpus": 1}})
    # A job allocated 1 GPU on a 4-GPU node sees 1 through its cgroup: not a missing GPU.
    assert not fired("gpu-count-mismatch", facts(H100, **{"scheduler.gpus_on_node": 1}), cfg)
    (f,) = fired("gpu-count-mismatch", facts(H100, **{"scheduler.gpus_on_node": 2}))
    assert "allocated 2" in f.message


def test_gpu_on_bus_but_not_listed():
    (f,) = fired("gpu-count-mismatch", facts(H100, **{"nvidia.pci_devices": 2}))
    assert "2 NVIDIA GPU(s) on the PCI bus" in f.message


def test_node_shape():
    cfg = {"expect": {"cpus": 32, "memory_gib": 128, "gpu_model": "A100"}}
    (f,) = fired("node-shape-mismatch", facts(H100), cfg)
    assert "logical CPUs 16 (expected 32)" in f.message and "model" in f.message
    assert not fired("node-shape-mismatch", facts(H100), {"expect": {"cpus": 16, "memory_gib": 126, "gpu_model": "H100"}})


def _leonardo(tmp_path, nccl):
    g = nvsmi_node("telegraf_a100-sxm4-80gb_mig_v12.xml", tmp_path)
    g["facts"]["gpus"][0]["name"] = "NVIDIA A100-SXM-64GB"
    g["facts"]["cpu"] = {"model_name": "Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz", "microarch": "icelake"}
    g["facts"]["torch"] = {"installed": True, "nccl": nccl, "version": "2.5.0"}
    return g


def test_recognition(tmp_path):
    g = _leonardo(tmp_path, "2.21.5")
    assert [s["id"] for s in recognise(FactView(g["facts"], g["unknown"]))] == ["leonardo-booster"]
    v100s = nvsmi_node("datakit_8x_v100s-pcie-32gb.xml", tmp_path / "v")
    assert recognise(FactView(v100s["facts"], v100s["unknown"])) == []  # 8 V100S: not ARC4's 4 V100


def test_leonardo_needs_four_gpus_by_shape(tmp_path):
    (f,) = fired("gpu-count-mismatch", _leonardo(tmp_path, "2.21.5"))
    assert "4 expected (Leonardo Booster node shape)" in f.message


def test_nccl_known_issue(tmp_path):
    (f,) = fired("nccl-known-issue", _leonardo(tmp_path, "2.27.3"))
    assert f.env == {"NCCL_PXN_DISABLE": "1"} and "Leonardo" in f.message
    assert not fired("nccl-known-issue", _leonardo(tmp_path / "b", "2.21.5"))
    assert not fired("nccl-known-issue", facts(H100))  # not Leonardo


def test_env_command_never_overrides_user_values():
    res = run_main("env", "--from", str(NODES / "cpu-kvm-2core"))
    assert res.returncode == 0
    assert "export DNNL_DEFAULT_FPMATH_MODE=BF16" in res.stdout
    res = run_main("env", "--shell", "fish", "--from", str(NODES / "cpu-kvm-2core"))
    assert "set -gx DNNL_DEFAULT_FPMATH_MODE BF16" in res.stdout


def test_env_command_live_with_user_setting():
    res = run_cli("env", env={"SLURM_JOB_ID": "5", "SLURM_CPUS_PER_TASK": "2", "OMP_NUM_THREADS": "7"})
    assert "export OMP_NUM_THREADS" not in res.stdout
    assert "# OMP_NUM_THREADS is already set to '7'" in res.stdout
    res = run_cli("env", env={"SLURM_JOB_ID": "5", "SLURM_CPUS_PER_TASK": "2"})
    assert "export OMP_NUM_THREADS=2" in res.stdout


SITE_H100 = """
[[gpu]]
id = "site-h100"
names = ["H100 80GB HBM3"]
cc = "9.0"
segment = "datacenter"
source = "the site's acceptance sheet, 2026-11-01"
"""

SITE_GPU = """
[[gpu]]
names = ["H300 SXM"]
cc = "10.3"
segment = "datacenter"
bf16 = 2500
source = "vendor sheet, 2026-11-01"
"""


def test_site_adds_a_gpu_without_a_release(tmp_path):
    from hpcdoctor.knowledge import gpus

    site = config.load(_cfg(tmp_path, SITE_GPU))
    assert gpus.compute_capability("NVIDIA H300 SXM 288GB") is None
    found = gpus.lookup("NVIDIA H300 SXM 288GB", site["gpu"])
    assert found["cc"] == "10.3" and found["kind"] == "site" and "vendor sheet" in found["source"]
    assert gpus.datasheet("NVIDIA H300 SXM 288GB", site["gpu"])["bf16"] == 2500
    assert gpus.compute_capability("NVIDIA H100 80GB HBM3", site["gpu"]) == "9.0"  # the shipped table still answers
    # Passed in, never set globally: a lookup without the site's entries does not see them.
    assert gpus.lookup("NVIDIA H300 SXM 288GB") is None


def test_two_diagnoses_with_two_configs_do_not_share_gpus(tmp_path):
    """The site's [[gpu]] entries reach the checks of the run that loaded them, and no other: the
    same recorded H100 is the site's entry under the site's config, the shipped one without it,
    in either order, in one process."""
    from hpcdoctor import app

    cfg = _cfg(tmp_path, SITE_H100)
    node = str(NODES / "h100-kvm-1gpu")

    def sku(config):
        return app.diagnose(app.Request(sources=(node,), config=config))["facts"]["gpus"][0]["sku"]

    absent = str(tmp_path / "empty.toml")
    Path(absent).write_text("")
    assert sku(absent) == "h100-sxm"
    assert sku(cfg) == "site-h100"
    assert sku(absent) == "h100-sxm"


def test_site_gpu_entry_overrides_the_shipped_segment(tmp_path):
    """A site that runs its RTX 4090s with ECC on says so; the real 8x RTX 4090 paste (ECC off) then
    draws ecc-disabled on all eight, where the shipped table keeps it silent."""
    paste = str(PUBLIC / "nvsmi" / "gpud_8xRTX4090_nvsmi_q_pcie_gen1_idle.txt")
    cfg = _cfg(tmp_path, '[[gpu]]\nnames = ["RTX 4090"]\ncc = "8.9"\nsegment = "datacenter"\n')
    doc = report_of("check", "--from", paste, "--config", cfg)
    assert len([x for x in doc["findings"] if x["symbol"] == "ecc-disabled"]) == 8
    doc = report_of("check", "--from", paste)
    assert not [x for x in doc["findings"] if x["symbol"] == "ecc-disabled"]


@pytest.mark.parametrize("text,message", [
    ('[[gpu]]\ncc = "9.0"\n', "needs names"),
    ('[[gpu]]\nnames = ["X1"]\n', "needs cc"),
    ('[[gpu]]\nnames = ["X1"]\ncc = "nine"\n', "cc must look like"),
    ('[[gpu]]\nnames = ["X1"]\ncc = "9.0"\nsegment = "hpc"\n', "segment must be one of"),
    ('[[gpu]]\nnames = ["X1"]\ncc = "9.0"\nbf16 = "fast"\n', "'bf16' must be int or float"),
    ('[[gpu]]\nnames = ["X1"]\ncc = "9.0"\nmatch = "X1"\n', "unknown key 'match'"),
])
def test_site_gpu_mistakes_name_the_file(tmp_path, text, message):
    with pytest.raises(config.ConfigError, match="site.toml:1: .*" + re.escape(message)):
        config.load(_cfg(tmp_path, text))


def test_system_recognition_matches_gpu_names_by_tokens(tmp_path):
    """'RTX A1000 ... 64GB' contains the text 'A100' and '64GB', but it is no Leonardo A100."""
    g = _leonardo(tmp_path, "2.21.5")
    g["facts"]["gpus"][0]["name"] = "NVIDIA RTX A1000 64GB"
    assert recognise(FactView(g["facts"], g["unknown"])) == []
