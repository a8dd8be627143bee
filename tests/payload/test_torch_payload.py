"""The torch payload, run for real in an interpreter with the CPU build of torch."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from conftest import torch_python
from hpcdoctor.checks import torch_stack
from hpcdoctor.sysroot import Missing


@pytest.fixture(scope="module")
def py():
    return torch_python()


@pytest.fixture(scope="module")
def truth(py):
    out = subprocess.run([py, "-c", "import json, torch; print(json.dumps({'v': torch.__version__, "
                          "'cuda': torch.version.cuda, 'threads': torch.get_num_threads(), "
                          "'prec': torch.get_float32_matmul_precision()}))"], capture_output=True, text=True)
    return json.loads(out.stdout)


def test_fast_depth_reads_metadata_without_importing_torch(py, truth):
    start = time.monotonic()
    data = torch_stack.run_payload(py, "fast", 30)
    elapsed = time.monotonic() - start
    facts = torch_stack.from_payload(data, {})
    assert facts["version"] == truth["v"] and facts["installed"] is True
    assert facts["build"] == "cpu" and facts["cuda"] is None
    assert facts["from_knowledge"] and facts["float32_matmul_precision"] == truth["prec"] == "highest"
    assert facts["site_fs"]["fstype"] and facts["site_fs"]["network"] is False
    assert "import_s" not in facts and "loaded_libraries" not in facts
    assert elapsed < 5  # no torch import: a fraction of a second, with wide room for a slow CI


@pytest.mark.slow  # imports the real torch (seconds)
def test_deep_depth_imports_torch(py, truth):
    facts = torch_stack.from_payload(torch_stack.run_payload(py, "deep", 120), {})
    assert facts["version"] == truth["v"] and facts["build"] == "cpu"
    assert facts["cuda_available"] is False and facts["arch_list"] == []
    assert facts["num_threads"] == truth["threads"]
    assert facts["float32_matmul_precision"] == "highest" and "from_knowledge" not in facts
    assert facts["mkldnn"] is True and facts["config"]["use_mkldnn"] is True
    assert facts["config"]["cpu_capability"] == facts["cpu_capability"]
    assert any(p.endswith(".so") or ".so." in p for p in facts["loaded_libraries"]["libtorch_cpu"])
    assert facts["import_s"] > 0


def _fake_torch(tmp_path, init_body, version="2.9.0+cu126", cuda="12.6"):
    site = tmp_path / "site"
    pkg = site / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(init_body)
    (pkg / "version.py").write_text(f"__version__ = '{version}'\ncuda: Optional[str] = '{cuda}'\nhip = None\n")
    (site / f"torch-{version.split('+')[0]}.dist-info").mkdir()
    return site


def _run_with_path(py, site, depth, limit, budget=None):
    import os

    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(site)
    try:
        return torch_stack.run_payload(py, depth, limit, budget)
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


def test_broken_torch_install_reports_the_real_exception(py, tmp_path):
    site = _fake_torch(tmp_path, "raise ImportError('libcudnn.so.9: cannot open shared object file: No such file or directory')\n")
    fast = torch_stack.from_payload(_run_with_path(py, site, "fast", 30), {})
    assert fast["version"] == "2.9.0+cu126" and fast["build"] == "cuda"
    deep = torch_stack.from_payload(_run_with_path(py, site, "deep", 30), {})
    assert deep["import_error"].startswith("ImportError: libcudnn.so.9: cannot open shared object file")


def test_hung_torch_import_is_stopped(py, tmp_path):
    site = _fake_torch(tmp_path, "import time\ntime.sleep(60)\n")
    start = time.monotonic()
    with pytest.raises(Missing, match="did not finish within 1s"):
        _run_with_path(py, site, "deep", 1)
    assert time.monotonic() - start < 5


def test_a_probe_the_budget_cut_short_says_so(py, tmp_path):
    # The run's --budget, not the probe's own limit, stopped it: "did not finish within 0s" said neither.
    site = _fake_torch(tmp_path, "import time\ntime.sleep(60)\n")
    with pytest.raises(Missing, match=r"was stopped by the 0\.5s budget"):
        _run_with_path(py, site, "deep", 0.5, budget=0.5)


def test_python_that_does_not_exist():
    with pytest.raises(Missing, match="does not exist"):
        torch_stack.run_payload("/nonexistent/bin/python3", "fast", 5)


def test_interpreter_without_torch():
    import sys

    # -S drops site-packages: an interpreter in which torch is simply not installed.
    empty = subprocess.run([sys.executable, "-S", str(torch_stack.PAYLOAD)], capture_output=True, text=True)
    data = json.loads(empty.stdout)
    assert "torch" not in data and data["torch_installs"] == []
    facts = torch_stack.from_payload(data, {})
    assert facts["installed"] is False and facts["build"] is None


@pytest.mark.slow  # imports the real torch (seconds)
def test_cli_deep_check_reports_torch(py):
    from conftest import report_of

    doc = report_of("check", "--deep", "--python", py, "--budget", "120")
    t = doc["facts"]["torch"]
    assert t["source"] == "payload (deep)" and t["build"] == "cpu" and t["target_python"] == py
    assert doc["depth"] == "deep"


def test_cli_missing_python_is_unknown_not_crash():
    from conftest import report_of

    doc = report_of("check", "--python", "/nonexistent/python3", "--fail-on", "never")  # exit 3 otherwise
    assert doc["facts"]["torch"] is None
    assert "does not exist" in doc["unknown"]["torch"]
