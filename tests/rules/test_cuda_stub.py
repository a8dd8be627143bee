"""SW103 cuda-stub-libcuda-loaded: CUDA error 34 (cudaErrorStubLibrary, CUDA_ERROR_STUB_LIBRARY),
the toolkit's link-time stub libcuda.so loaded at run time in place of the driver's libcuda.so.1."""

from __future__ import annotations

from rulekit import fired, paste_facts, told_paste_facts

SYMBOL = "cuda-stub-libcuda-loaded"


def test_driver_api_stub_error_fires():
    found = fired("cuda-stub-libcuda-loaded", told_paste_facts("cudarc-300-driver-error-stub-library.txt"))
    assert found and found[0].severity == "error"
    assert "CUDA_ERROR_STUB_LIBRARY" in found[0].message
    fix = found[0].fix
    assert "ldconfig -p | grep libcuda.so.1" in fix
    assert "echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -n stubs" in fix
    assert "grep -v '/stubs/*$'" in fix


def test_runtime_stub_error_fires():
    found = fired("cuda-stub-libcuda-loaded", told_paste_facts("nixpkgs-320145-ggml-cuda-init-stub-library.txt"))
    assert found and "CUDA driver is a stub library" in found[0].message


def test_torch_wording_fires(tmp_path):
    # torch's C10_CUDA_CHECK format ("CUDA error: " + cudaGetErrorString(34)), filled in: no public paste found
    g = paste_facts(tmp_path, "RuntimeError: CUDA error: CUDA driver is a stub library\n")
    assert fired(SYMBOL, g)


def test_stub_only_on_a_login_node_is_not_fired():
    # the stubs/libcuda.so found but no libcuda.so.1: no driver at all (another rule's case), no error 34 printed
    assert not fired("cuda-stub-libcuda-loaded", told_paste_facts("mxnet-6787-libcuda-stub-only-not-on-gpu-server.txt"))


def test_near_misses_are_not_fired(tmp_path):
    # NCCL's missing cuInit is not the stub (the stub exports cuInit), and error 35 is an old driver
    for text in ("node1:1234:1234 [0] misc/cudawrap.cc:189 NCCL WARN Failed to load CUDA missing symbol cuInit\n",
                 "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"):
        assert not fired("cuda-stub-libcuda-loaded", paste_facts(tmp_path, text)), text
