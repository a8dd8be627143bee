"""Secrets found by their value as well as by their name, and --redact hiding who and where: the
cases an adversarial trial found kept in cmd/env.txt, the JSON report and the tar headers."""

from __future__ import annotations

import socket
import tarfile

from conftest import run_cli
from hpcdoctor import envfilter
from hpcdoctor.snapshot import redact

# Each value here was kept verbatim before; the needle is the part that must never be written.
BY_NAME = {"SLURM_JWT": "eyJhbGciOiJIUzI1NiJ9.jwtpayload.sig", "TORCH_HUB_APIKEY": "hubkey-93c1f0aa",
           "NCCL_APITOKEN": "nccltok-77aa31", "NCCL_PASSPHRASE": "correct horse battery",
           "CONDA_PWD": "condapw-5521"}
BY_VALUE = {
    "CONDA_CHANNEL_URL": ("https://conda.anaconda.org/t/ct-9f8e7d6c5b4a/private/linux-64", "ct-9f8e7d6c5b4a"),
    "TORCH_DATA_URL": ("https://b.s3.amazonaws.com/o.tar?X-Amz-Algorithm=AWS4&X-Amz-Signature=5ac1deadbeef99",
                       "5ac1deadbeef99"),
    "TORCH_SAS_URL": ("https://a.blob.core.windows.net/c/x?sv=2020-08-04&sig=Zm9vYmFyc2ln%3D&se=2030",
                      "Zm9vYmFyc2ln"),
    "MASTER_ADDR": ("https://trainer:pa/ss@w0rd@10.0.0.7:29500", "pa/ss@w0rd"),
    "NCCL_PROXY": ("https://:tok3nonly@proxy.example:3128", "tok3nonly"),
    "TORCH_MODEL_URL": ("git+https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/o/r", "ghp_abcdefghij"),
}


def _env():
    env = dict(BY_NAME)
    env.update({k: v for k, (v, _) in BY_VALUE.items()})
    return env


def _needles():
    return list(BY_NAME.values()) + [n for _, n in BY_VALUE.values()]


def _assert_clean(blob: str) -> None:
    for needle in _needles():
        assert needle not in blob, needle


def test_secret_names_that_the_old_rule_missed():
    for name in BY_NAME:
        assert envfilter.is_secret_name(name), name
    for name in ("NCCL_IB_PKEY", "OMP_NUM_THREADS", "NCCL_SOCKET_IFNAME", "SLURM_JOB_PARTITION", "PWD",
                 "SLURM_STEP_LAUNCHER_PORT", "CUDA_VISIBLE_DEVICES"):
        assert not envfilter.is_secret_name(name), name


def test_values_keep_what_is_not_a_secret():
    keep = ["https://host/pkg@1.0", "https://host:8080/a@b", "/usr/bin:/opt/token:/bin",
            "https://download.pytorch.org/whl/cu128", "gpu[001-004]"]
    for v in keep:
        assert envfilter.scrub_value(v) == v, v
    assert envfilter.scrub_value(BY_VALUE["MASTER_ADDR"][0]) == "https://<redacted>@10.0.0.7:29500"


def test_no_secret_in_json_report_snapshot_or_env_output(tmp_path):
    env = _env()
    res = run_cli("check", "--format", "json", env=env)
    assert res.returncode in (0, 1), res.stderr
    _assert_clean(res.stdout + res.stderr)
    assert '"<redacted>"' in res.stdout  # the names are kept, their values are not
    assert run_cli("snapshot", str(tmp_path / "s.tar.gz"), env=env).returncode == 0
    with tarfile.open(tmp_path / "s.tar.gz") as tar:
        blob = b"".join(tar.extractfile(m).read() for m in tar if m.isfile())
    _assert_clean(blob.decode("utf-8", "replace"))
    assert b"conda.anaconda.org/t/<redacted>/private" in blob


def test_redacted_bundle_hides_owner_and_glued_names(tmp_path):
    host = socket.gethostname()
    user = "bobsmith"
    env = {"USER": user, "HOME": f"/home/{user}", "TMPDIR": f"/scratch/{host}_tmp/{user}_7",
           "CONDA_PREFIX": f"/projects/{user}-lab/env", "SLURM_JOB_ID": "42",
           "SLURM_STEP_NODELIST": f"{host}-ib,gpu943", "SLURM_JOB_NODELIST": "gpu[941-943]"}
    out = tmp_path / "r.tar.gz"
    res = run_cli("snapshot", "--redact", str(out), env=env)
    assert res.returncode == 0, res.stderr
    with tarfile.open(out) as tar:
        members = tar.getmembers()
        assert members and all(m.uid == 0 and m.gid == 0 and m.uname == "" and m.gname == "" for m in members)
        blob = b"".join(tar.extractfile(m).read() for m in members if m.isfile()).decode("utf-8", "replace")
    assert "CONDA_PREFIX=/projects/user-" in blob  # the variable is there, the name in it is not
    for value in (user, "gpu943", "gpu941"):
        assert value not in blob, value
    if len(host) >= 2 and host not in ("localhost",):
        assert f"{host}_tmp" not in blob and f"{host}-ib" not in blob


def test_nodelist_expansion_is_bounded():
    hosts = redact.expand_nodelist("n[0-99999999]")
    assert len(hosts) <= 4096 and hosts[0] == "n0"  # Slurm pads to the width of the lower bound
    assert redact.expand_nodelist("gpu042-ib,gpu[043-044]") == ["gpu042-ib", "gpu043", "gpu044"]
