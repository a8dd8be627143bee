"""checks/vendor_loaders.py on a replayed node (OpenCL's and EGL's vendor directories, a Jetson's
nvpmodel -q recorded in public: tests/fixtures/pastes/jetson-agx-orin-nvpmodel-q-mode-40w.txt), and
the live halves of opencl-icd-missing, egl-device-unavailable and jetson-power-mode-capped on those
facts."""

from __future__ import annotations

import json

from rulekit import PASTES, facts, fired
from hpcdoctor.checks import vendor_loaders
from hpcdoctor.sysroot import ReplaySysRoot

NVPMODEL_Q = (PASTES / "jetson-agx-orin-nvpmodel-q-mode-40w.txt").read_text()


def _node(tmp_path, files=(), dirs=(), nvpmodel=None):
    fs = tmp_path / "fs"
    for d in dirs:
        (fs / d.lstrip("/")).mkdir(parents=True, exist_ok=True)
    for f in files:
        (fs / f.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (fs / f.lstrip("/")).write_text("x")
    cmds = []
    if nvpmodel is not None:
        (tmp_path / "cmd").mkdir()
        (tmp_path / "cmd" / "nvpmodel.txt").write_text(nvpmodel)
        cmds.append({"argv": ["nvpmodel", "-q"], "rc": 0, "stdout": "nvpmodel.txt"})
        (tmp_path / "cmd" / "index.json").write_text(json.dumps(cmds))
    return vendor_loaders.collect(ReplaySysRoot(tmp_path), None)["vendor_loaders"]


def test_nvpmodel_query_is_parsed_from_its_recorded_output():
    assert vendor_loaders.parse_nvpmodel_query(NVPMODEL_Q) == {"mode": "MODE_40W", "id": 3, "maxn": False}
    assert vendor_loaders.parse_nvpmodel_query("NV Power Mode: MAXN_SUPER\n2\n")["maxn"] is True
    assert vendor_loaders.parse_nvpmodel_query("nvpmodel: command not found\n") is None


def test_the_check_reads_vendor_files_and_the_power_mode(tmp_path):
    got = _node(tmp_path, files=["/usr/lib/x86_64-linux-gnu/libOpenCL.so.1", "/usr/lib/x86_64-linux-gnu/libEGL.so.1",
                                 "/usr/share/glvnd/egl_vendor.d/50_mesa.json", "/etc/nvpmodel.conf"],
                dirs=["/etc/OpenCL/vendors"], nvpmodel=NVPMODEL_Q)
    assert got["opencl"]["loader"] == "/usr/lib/x86_64-linux-gnu/libOpenCL.so.1" and got["opencl"]["vendors"] == []
    assert got["egl"]["vendors"] == ["/usr/share/glvnd/egl_vendor.d/50_mesa.json"]
    assert got["jetson_power_mode"]["mode"] == "MODE_40W"


def test_a_node_without_those_files_claims_nothing(tmp_path):
    got = _node(tmp_path)
    assert got["opencl"]["loader"] is None and got["egl"]["loader"] is None and got["jetson_power_mode"] is None


def _loaders(opencl=(), egl=("/usr/share/glvnd/egl_vendor.d/50_mesa.json",), mode=None):
    return {"opencl": {"loader": "/usr/lib/x86_64-linux-gnu/libOpenCL.so.1", "dirs": ["/etc/OpenCL/vendors"],
                       "vendors": list(opencl)},
            "egl": {"loader": "/usr/lib/x86_64-linux-gnu/libEGL.so.1", "dirs": ["/usr/share/glvnd/egl_vendor.d"],
                    "vendors": list(egl)},
            "jetson_power_mode": mode}


def test_live_opencl_loader_without_a_driver_is_advice_where_the_job_uses_opencl():
    uses = {"torch.packages.pyopencl": "2024.2.7"}
    (f,) = fired("opencl-icd-missing", facts("h100-kvm-1gpu", vendor_loaders=_loaders(), **uses))
    assert f.severity == "advice" and "/etc/OpenCL/vendors holds no .icd file" in f.message
    (f,) = fired("opencl-icd-missing", facts("h100-kvm-1gpu", vendor_loaders=_loaders(),
                                             **{"env.vars.OCL_ICD_VENDORS": "/opt/ocl/vendors"}))
    assert not fired("opencl-icd-missing", facts("h100-kvm-1gpu", vendor_loaders=_loaders(opencl=["/etc/OpenCL/vendors/nvidia.icd"]), **uses))
    # The loader alone is a dependency of many packages: no advice on a node where nothing uses it.
    assert not fired("opencl-icd-missing", facts("h100-kvm-1gpu", vendor_loaders=_loaders()))


def test_live_mujoco_egl_on_nvidia_gpus_without_nvidias_vendor_file():
    g = facts("h100-kvm-1gpu", vendor_loaders=_loaders(), **{"env.vars.MUJOCO_GL": "egl"})
    (f,) = fired("egl-device-unavailable", g)
    assert "MUJOCO_GL=egl" in f.message and "NVIDIA GPU(s) but EGL has no NVIDIA vendor (50_mesa.json)" in f.message
    nvidia = _loaders(egl=["/usr/share/glvnd/egl_vendor.d/10_nvidia.json", "/usr/share/glvnd/egl_vendor.d/50_mesa.json"])
    assert not fired("egl-device-unavailable", facts("h100-kvm-1gpu", vendor_loaders=nvidia, **{"env.vars.MUJOCO_GL": "egl"}))
    assert not fired("egl-device-unavailable", facts("h100-kvm-1gpu", vendor_loaders=_loaders()))   # EGL not asked for


def test_live_jetson_mode_below_maxn_is_a_warning():
    mode = vendor_loaders.parse_nvpmodel_query(NVPMODEL_Q)
    (f,) = fired("jetson-power-mode-capped", facts("h100-kvm-1gpu", vendor_loaders=_loaders(mode=mode)))
    assert f.severity == "warning" and "power mode MODE_40W (ID 3), not MAXN" in f.message
    maxn = {"mode": "MAXN", "id": 0, "maxn": True}
    assert not fired("jetson-power-mode-capped", facts("h100-kvm-1gpu", vendor_loaders=_loaders(mode=maxn)))
