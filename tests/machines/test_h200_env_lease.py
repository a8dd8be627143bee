"""The live rules on an H200 whose environment was made unsound one way at a time (2026-11-28,
bench/gpu_lease_env.sh; tests/fixtures/README.md): each fault's redacted snapshot replayed, and the
loader probe that tells a library the cache still names from one that is there."""

from __future__ import annotations

import os

import pytest

from rulekit import facts, fired
from hpcdoctor.checks import devices

ENV = "h200-fc-env-{}-2026-11-28"
HEALTHY = "h200-fc-1gpu-quick-idle"


def test_a_gpu_node_without_libcuda_is_named_though_nvml_lists_the_gpu():
    g = facts(ENV.format("libcuda-missing"))
    assert g["facts"]["devices"]["driver_libraries"]["libcuda.so.1"] is None
    [hit] = fired("gpu-driver-unusable", g)
    assert hit.severity == "error" and "no libcuda.so.1" in hit.message
    assert "ldconfig -p | grep -F libcuda.so.1" in hit.fix
    assert not fired("cuda-stub-libcuda-loaded", g)


def test_the_stub_libcuda_first_on_the_path_is_named_live():
    g = facts(ENV.format("stub-libcuda"))
    [hit] = fired("cuda-stub-libcuda-loaded", g)
    assert "/stubs/libcuda.so" in hit.message and hit.severity == "error"
    assert not fired("gpu-driver-unusable", g)


def test_no_device_nodes_is_told_from_a_driver_not_loaded():
    g = facts(ENV.format("no-device-nodes"))
    assert g["facts"]["system"]["nvidia_module_loaded"] is True and g["facts"]["devices"]["nvidia_nodes"] == 0
    [hit] = fired("gpu-driver-unusable", g)
    assert "no /dev/nvidia* device nodes" in hit.message and "--gpus all" in hit.fix
    # The same NVML error where the device nodes are there is the driver's own state.
    g = facts(ENV.format("no-device-nodes"), **{"devices.nvidia_nodes": 3})
    [hit] = fired("gpu-driver-unusable", g)
    assert "no /dev/nvidia* device nodes" not in hit.message


def test_nvml_missing_stays_the_driver_libraries_answer():
    [hit] = fired("gpu-driver-unusable", facts(ENV.format("nvml-missing")))
    assert "NVML Shared Library Not Found" in hit.message


def test_root_only_nodes_are_a_permission_not_a_broken_driver():
    # The lease's snapshot as nobody could not be written (its $OUT was root's): the no-device-nodes
    # node's facts with what the live check as nobody read (GPU023's nodes, NVML's own error).
    denied = [{"path": p, "mode": "0600", "uid": 0, "gid": 0, "group": "root", "rw": False}
              for p in ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0")]
    g = facts(ENV.format("no-device-nodes"), **{
        "devices.nodes": denied, "devices.nvidia_nodes": 3, "devices.nvidia_gpu_nodes": 1,
        "devices.nvidia_denied": denied, "devices.euid": 65534, "devices.groups": [65534],
        "nvidia.error": "NVML init failed: Insufficient Permissions; nvidia-smi -q -x exited 4: "
                        "Failed to initialize NVML: Insufficient Permissions"})
    assert not fired("gpu-driver-unusable", g)
    assert fired("gpu-device-permission-denied", g)


@pytest.mark.parametrize("node", [HEALTHY, "h100-fc-1gpu-quick-2026-11-27"])
def test_healthy_recorded_gpu_nodes_stay_silent(node):
    g = facts(node)
    assert not fired("gpu-driver-unusable", g)
    assert not fired("cuda-stub-libcuda-loaded", g)


def test_a_cache_entry_whose_file_is_gone_is_no_library(monkeypatch):
    """This machine's own loader cache: a library it names is found where its file is, and not
    found once that file is gone (a driver removed without ldconfig, a library hidden from a
    container), which the soname's presence in the cache alone had counted as found."""
    try:
        with open(devices.LD_CACHE, "rb") as fh:
            cache = fh.read(devices.MAX_CACHE_BYTES)
    except OSError:
        pytest.skip("no /etc/ld.so.cache on this machine")
    soname = "libc.so.6"
    paths = devices._cache_paths(cache, soname)
    assert paths and all(p.endswith("/" + soname) for p in paths)
    assert devices._found_by_loader(soname, "", cache) in paths + [os.path.join(d, soname) for d in devices.SYSTEM_DIRS]
    real_exists = os.path.exists
    monkeypatch.setattr(devices.os.path, "exists", lambda p: False if p.endswith("/" + soname) else real_exists(p))
    assert devices._found_by_loader(soname, "", cache) is None
