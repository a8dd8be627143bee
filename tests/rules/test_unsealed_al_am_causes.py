"""Causes and non-causes the pastes of sets AL and AM (unsealed 2026-11-29) show in their emitters'
own words, each read from the real paste."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, run_rule, ticket_file_facts

AL = FIXTURES / "tickets_blind_al"
AM = FIXTURES / "tickets_blind_am"


def test_one_address_warned_alone_is_a_hint_not_an_unreachable_store(tmp_path):
    (f,) = fired("c10d-store-unreachable", ticket_file_facts(tmp_path, AM / "bert-vits2-4-c10d-client-socket-warning-harmless-healthy.txt"))
    assert f.severity == "info" and "may have answered" in f.message
    assert f.fix.startswith("getent ahosts BJSK-A02133.bairong.ad.com")


def test_the_failure_after_the_warning_is_the_finding(tmp_path):
    # socket.cpp's order: the per-address warning, then the raise once no address answered
    text = ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-3]:29500 (errno: 113 - No route to host).\n"
            "RuntimeError: The client socket has failed to connect to any network address of (node-3, 29500).\n")
    (f,) = fired("c10d-store-unreachable", ticket_file_facts(tmp_path, AM / "x.txt", text))
    assert f.severity == "error" and "node-3:29500" in f.message


def test_the_per_address_warning_is_not_read_as_the_final_failure():
    ids = [s["id"] for s in find_messages("[W socket.cpp:601] [c10d] The client socket has failed to connect to "
                                          "[localhost]:29500 (errno: 99 - Cannot assign requested address).")]
    assert "torch:store-client-address-failed" in ids and "torch:store-client-connect-failed" not in ids


def test_a_device_plugin_of_2017_logs_the_bindings_error_after_loading_nvml(tmp_path):
    (f,) = fired("nvidia-container-toolkit-missing", ticket_file_facts(tmp_path, AM / "k8s-device-plugin-11-nvml-not-loaded-runtime-not-default.txt"))
    assert "device plugin" in f.message and "01:54:30 could not load NVML library" in f.message
    assert f.fix.startswith("nvidia-ctk --version")


def test_the_bindings_error_alone_is_not_the_device_plugins():
    # nvidia-docker 1.0's host plugin used the same Go bindings: there the host itself lacks the driver
    ids = [s["id"] for s in find_messages("2017/11/29 01:54:30 Error: could not load NVML library\n")]
    assert "k8s_device_plugin:nvml-library-not-loaded" not in ids


def test_docker_gpus_refused_on_a_machine_with_intel_graphics_is_a_hint(tmp_path):
    (f,) = fired("nvidia-container-toolkit-missing", ticket_file_facts(tmp_path, AL / "stable-diffusion-docker-82-no-nvidia-gpu-healthy.txt"))
    assert f.severity == "info" and "Intel GPU" in f.message and "nvidia-ctk" not in f.fix
    assert f.fix.startswith("lspci -nn")


def test_docker_gpus_refused_beside_an_nvidia_gpu_is_still_the_toolkit(tmp_path):
    path = AL / "stable-diffusion-docker-82-no-nvidia-gpu-healthy.txt"
    text = path.read_text(encoding="utf-8").replace("Graphics Mesa", "GPU NVIDIA GeForce RTX 3060\nGraphics Mesa")
    (f,) = fired("nvidia-container-toolkit-missing", ticket_file_facts(tmp_path, path, text))
    assert f.severity == "error" and f.fix.startswith("nvidia-ctk --version")


def test_a_binary_patched_to_the_users_own_old_libc_is_not_the_nodes_glibc(tmp_path):
    (f,) = fired("glibc-older-than-binary", ticket_file_facts(tmp_path, AL / "patchelf-489-binary-pointed-at-older-libc-healthy.txt"))
    assert f.severity == "info" and "user's own copy ./libc-2.23.so (glibc 2.23" in f.message
    assert "apptainer" not in f.fix and f.fix.startswith("readelf -d ./a.out")


def test_the_nodes_own_libc_still_is_the_error(tmp_path):
    text = "./a.out: /lib64/libc.so.6: version `GLIBC_2.34' not found (required by ./a.out)\n"
    (f,) = fired("glibc-older-than-binary", ticket_file_facts(tmp_path, AL / "x.txt", text))
    assert f.severity == "error"


def test_gxx_missing_in_a_dkms_make_recipe_is_the_toolchain(tmp_path):
    (f,) = fired("compile-toolchain-missing", ticket_file_facts(tmp_path, AL / "open-gpu-kernel-modules-805-dkms-build-without-gxx.txt"))
    assert '"/bin/sh: line 1: g++: command not found"' in f.message and "the g++ compiler" in f.message


def test_a_lua_torch_rock_older_than_its_caller_is_named(tmp_path):
    (f,) = fired("built-against-other-library-version", ticket_file_facts(tmp_path, AL / "threads-14-torch7-core-older-than-threads.txt"))
    assert "libthreads.so needs THAtomicIncrementRef" in f.message and "luarocks install torch " in f.fix
    (g,) = fired("built-against-other-library-version", ticket_file_facts(tmp_path, AL / "torch7-648-cutorch-older-than-torch.txt"))
    assert "libTHC of mixed releases" in g.message and "luarocks install cutorch " in g.fix


def test_pytorchs_own_undefined_symbol_is_not_lua_torchs(tmp_path):
    text = ("ImportError: /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so: undefined symbol: "
            "THPVariableClass\n")
    assert not fired("built-against-other-library-version", ticket_file_facts(tmp_path, AL / "x.txt", text))


def test_voids_hook_verdict_is_a_failed_dkms_build(tmp_path):
    (f,) = fired("dkms-module-build-failed", ticket_file_facts(tmp_path, AL / "void-packages-16778-dkms-cc-points-to-clang.txt"))
    assert "DKMS could not build nvidia 390.132" in f.message
    assert f.fix.startswith("tail -n 40 /var/lib/dkms/nvidia/390.132/build/make.log")
    assert "cc --version" in f.fix and "-k \"$(ls -t /lib/modules | head -n 1)\"" in f.fix


def test_dkms_own_report_names_the_kernel_and_the_log(tmp_path):
    # dell/dkms dkms.in's report_build_problem 10, as it prints after the make it ran
    text = ("Building module(s)........(bad exit status: 2)\n"
            "Error! Bad return status for module build on kernel: 6.8.0-31-generic (x86_64)\n"
            "Consult /var/lib/dkms/nvidia/535.183.01/build/make.log for more information.\n")
    (f,) = fired("dkms-module-build-failed", ticket_file_facts(tmp_path, AL / "x.txt", text))
    assert "nvidia 535.183.01 for kernel 6.8.0-31-generic" in f.message
    assert "sudo dkms build nvidia/535.183.01 -k 6.8.0-31-generic" in f.fix


def test_missing_headers_are_the_headers_rule_not_a_failed_build(tmp_path):
    text = ("WARNING: cannot build DKMS modules! missing kernel headers package for 5.3.13_1.\n"
            "Building DKMS module: nvidia-390.132... FAILED!\n")
    facts = ticket_file_facts(tmp_path, AL / "x.txt", text)
    assert not fired("dkms-module-build-failed", facts)
    assert fired("kernel-headers-missing-for-dkms", facts)


def test_condas_per_package_conflict_is_read_and_answers_nothing_on_the_node(tmp_path):
    ids = [s["id"] for s in find_messages((AL / "cvstudio-10-readme-cudatoolkit-pin-conflict-healthy.txt").read_text())]
    assert "conda:package-conflicts-for" in ids


def test_tensorflows_miopen_handle_failure_hints_at_the_opencl_build(tmp_path):
    (f,) = fired("miopen-backend-mismatch", ticket_file_facts(tmp_path, AM / "miopen-132-miopen-opencl-with-hip-tensorflow.txt"))
    assert f.severity == "info" and "miopen-opencl" in f.message and f.fix.startswith("dpkg -l | grep -i miopen")


def test_a_miopen_status_raised_by_an_operation_is_read_without_the_hint(tmp_path):
    text = "RuntimeError: miopenStatusUnknownError\n"
    facts = ticket_file_facts(tmp_path, AM / "x.txt", text)
    assert not fired("miopen-backend-mismatch", facts)
    assert [s["id"] for s in find_messages(text)] == ["miopen:miopenStatusUnknownError"]


def test_a_build_that_found_cuda_7_5_beside_nvcc_8_0_picked_the_other_toolkit(tmp_path):
    (f,) = fired("build-picked-other-cuda-toolkit", ticket_file_facts(tmp_path, AL / "pytorch-2651-build-picks-cuda-7-5-beside-8-0.txt"))
    assert "configured with CUDA 7.5" in f.message and "nvcc on PATH is release 8.0" in f.message
    assert "CUDA_TOOLKIT_ROOT_DIR" in f.fix and "(release 8.0)" in f.fix


def test_findcuda_naming_the_nvcc_on_paths_release_is_no_finding(tmp_path):
    text = ('-- Found CUDA: /usr/local/cuda-12.4 (found version "12.4")\n'
            "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n")
    assert not fired("build-picked-other-cuda-toolkit", ticket_file_facts(tmp_path, AL / "x.txt", text))
    other = text.replace('cuda-12.4 (found version "12.4")', 'cuda-11.8 (found version "11.8")')
    (f,) = fired("build-picked-other-cuda-toolkit", ticket_file_facts(tmp_path, AL / "y.txt", other))
    assert "CUDA 11.8 at /usr/local/cuda-11.8" in f.message


def test_nvrtc_h_missing_from_a_source_build_names_nvrtc(tmp_path):
    (f,) = fired("library-devel-headers-missing", ticket_file_facts(tmp_path, AL / "pytorch-19666-nvrtc-dev-package-missing.txt"))
    assert "NVRTC, CUDA's runtime compiler" in f.message and "nvidia-cuda-nvrtc-cu12" in f.fix


def test_libcuda_missing_where_the_user_says_docker_is_the_container_run(tmp_path):
    (f,) = fired("container-nvidia-libs-not-bound", ticket_file_facts(tmp_path, AL / "accel-sim-framework-222-libcuda-missing-in-docker.txt"))
    assert f.severity == "warning" and "driver's libcuda.so.1 is missing" in f.message
    assert f.fix.startswith("docker run --gpus all IMAGE nvidia-smi")


def test_jax_falling_back_with_only_cpu_platforms_at_log_level_0_is_a_cpu_jaxlib(tmp_path):
    (f,) = fired("jax-without-cuda", ticket_file_facts(tmp_path, AL / "min-dalle-22-cpu-only-jaxlib-installed.txt"))
    assert f.severity == "warning" and "names only Interpreter" in f.message and 'jax[cuda12]' in f.fix


def test_jax_falling_back_after_a_cuda_line_is_not_a_cpu_jaxlib(tmp_path):
    text = (AL / "min-dalle-22-cpu-only-jaxlib-installed.txt").read_text(encoding="utf-8").replace(
        "No TPU platform found.",
        "No TPU platform found.\n2022-06-28 20:30:10.937: E external/org_tensorflow/tensorflow/stream_executor/cuda/"
        "cuda_driver.cc:271] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected")
    findings, _ = run_rule("jax-without-cuda", ticket_file_facts(tmp_path, AL / "x.txt", text))
    assert findings == []   # judged on the node's own Python, which a paste does not have


def test_ptxas_refusing_fermi_is_a_newer_ptxas_than_the_flags(tmp_path):
    facts = ticket_file_facts(tmp_path, AL / "accelerate-410-ptxas-without-sm-21.txt")
    (f,) = fired("nvcc-dropped-requested-arch", facts)
    assert "asks ptxas for sm_21" in f.message and "dropped after 8.0" in f.message
    assert not fired("ptxas-too-old", facts)


def test_ptxas_refusing_a_new_gpu_is_still_too_old(tmp_path):
    facts = ticket_file_facts(tmp_path, AL / "x.txt", "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n")
    assert fired("ptxas-too-old", facts)
    assert not fired("nvcc-dropped-requested-arch", facts)


def test_the_shells_bare_killed_alone_is_the_oom_hint(tmp_path):
    (f,) = fired("host-memory-oom-killed", ticket_file_facts(tmp_path, AL / "x.txt", "$ python train.py --epochs 10\nKilled\n"))
    assert f.severity == "info" and "killed by SIGKILL" in f.message and f.fix.startswith("journalctl -k")


def test_killed_beside_a_program_that_names_its_own_cause_is_left_to_it(tmp_path):
    text = "slurmstepd: error: *** JOB 123 ON node01 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***\nKilled\n"
    findings, _ = run_rule("host-memory-oom-killed", ticket_file_facts(tmp_path, AL / "x.txt", text))
    assert findings == []
