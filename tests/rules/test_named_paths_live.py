"""checks/named_paths.py on a replayed node (the CA bundles and XLA's CUDA directory its environment
names), and the live halves of tls-certificate-verify-failed and xla-libdevice-not-found on those
facts; the recorded requests refusal of a bundle that is not there (tests/fixtures/pastes)."""

from __future__ import annotations

import json

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.checks import named_paths
from hpcdoctor.sysroot import ReplaySysRoot


def _node(tmp_path, env, files=(), recorded=True):
    fs = tmp_path / "fs"
    for f in files:
        (fs / f.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (fs / f.lstrip("/")).write_text("x")
    (tmp_path / "cmd").mkdir()
    (tmp_path / "cmd" / "env.txt").write_text("".join(f"{k}={v}\n" for k, v in env.items()))
    (tmp_path / "cmd" / "index.json").write_text(json.dumps([{"argv": ["env"], "rc": 0, "stdout": "env.txt", "stderr": ""}]))
    # as a snapshot recorded with this check says it ran (an older one cannot tell a file it kept from one absent)
    (tmp_path / "meta.json").write_text(json.dumps({"format": "hpcdoctor-snapshot", "version": 1,
                                                    "checks": {"named_paths": {"status": "ok"}} if recorded else {}}))
    return named_paths.collect(ReplaySysRoot(tmp_path), None)["named_paths"]


def test_the_check_reads_only_what_the_environment_names(tmp_path):
    got = _node(tmp_path, {"SSL_CERT_FILE": "/etc/pki/site-ca.pem", "REQUESTS_CA_BUNDLE": "/etc/ssl/certs/ca-certificates.crt",
                           "XLA_FLAGS": "--xla_gpu_cuda_data_dir=/opt/cuda-12.2 --xla_gpu_enable_triton_gemm=false"},
                files=["/etc/ssl/certs/ca-certificates.crt"])
    assert {"var": "SSL_CERT_FILE", "path": "/etc/pki/site-ca.pem", "exists": False} in got["ca_bundles"]
    assert {"var": "REQUESTS_CA_BUNDLE", "path": "/etc/ssl/certs/ca-certificates.crt", "exists": True} in got["ca_bundles"]
    assert got["xla_cuda_data_dir"] == {"path": "/opt/cuda-12.2", "libdevice": False}


def test_nothing_set_is_nothing_claimed(tmp_path):
    got = _node(tmp_path, {"CURL_CA_BUNDLE": ""})   # the empty value some scripts set: not a path
    assert got == {"ca_bundles": [], "xla_cuda_data_dir": None}


def test_a_ca_variable_naming_nothing_is_a_warning(tmp_path):
    live = _node(tmp_path, {"PIP_CERT": "/etc/pki/site-ca.pem"})
    (f,) = fired("tls-certificate-verify-failed", facts("h100-kvm-1gpu", **{"named_paths.ca_bundles": live["ca_bundles"]}))
    assert f.severity == "warning" and "PIP_CERT=/etc/pki/site-ca.pem names a CA bundle that does not exist" in f.message
    assert "export PIP_CERT=/etc/ssl/certs/ca-certificates.crt" in f.fix


def test_bundles_that_exist_are_silent(tmp_path):
    live = _node(tmp_path, {"SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt"}, files=["/etc/ssl/certs/ca-certificates.crt"])
    assert not fired("tls-certificate-verify-failed", facts("h100-kvm-1gpu", **{"named_paths.ca_bundles": live["ca_bundles"]}))


def test_xla_pointed_at_a_cuda_without_libdevice(tmp_path):
    live = _node(tmp_path, {"XLA_FLAGS": "--xla_gpu_cuda_data_dir=/opt/cuda-12.2"})
    (f,) = fired("xla-libdevice-not-found", facts("h100-kvm-1gpu", **{"named_paths.xla_cuda_data_dir": live["xla_cuda_data_dir"]}))
    assert f.severity == "warning" and "XLA_FLAGS points XLA at /opt/cuda-12.2" in f.message
    found = _node(tmp_path / "b", {"XLA_FLAGS": "--xla_gpu_cuda_data_dir=/opt/cuda-12.2"},
                  files=["/opt/cuda-12.2/nvvm/libdevice/libdevice.10.bc"])
    assert not fired("xla-libdevice-not-found", facts("h100-kvm-1gpu", **{"named_paths.xla_cuda_data_dir": found["xla_cuda_data_dir"]}))


def test_requests_refusing_a_bundle_that_is_not_there():
    (f,) = fired("tls-certificate-verify-failed", recorded_paste_facts("requests-ca-bundle-invalid-path.txt"))
    assert f.severity == "error" and "cannot be read" in f.message and "REQUESTS_CA_BUNDLE=" in f.fix


def test_a_recording_made_without_the_check_is_unknown_not_missing(tmp_path):
    # The file named is not in the recording, which cannot say whether the node had it.
    got = _node(tmp_path, {"SSL_CERT_FILE": "/etc/pki/site-ca.pem",
                           "XLA_FLAGS": "--xla_gpu_cuda_data_dir=/opt/cuda-12.2"}, recorded=False)
    assert "made without this check" in str(got) and not isinstance(got, dict)
    g = facts("h100-fc-1gpu-bench", **{"env.vars.XLA_FLAGS": "--xla_gpu_cuda_data_dir=/opt/cuda-12.2"})
    assert not fired("xla-libdevice-not-found", g) and not fired("tls-certificate-verify-failed", g)
