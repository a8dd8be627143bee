"""Causes and non-causes the pastes of sets AN and AO (unsealed 2026-11-29) show in their emitters'
own words, each read from the real paste; where a variant is needed, the real paste is edited in
memory and the edit is said."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, read_paste, run_rule, ticket_file_facts

AN = FIXTURES / "tickets_blind_an"
AO = FIXTURES / "tickets_blind_ao"


def test_cublas_refusing_bf16_operands_is_a_gpu_without_bf16(tmp_path):
    (f,) = fired("bf16-unsupported", ticket_file_facts(tmp_path, AN / "mineru-1508-bf16-on-tesla-m40.txt"))
    assert "CUDA_R_16BF" in f.message and "line 5" in f.message and "torch.float16" in f.fix


def test_cublas_refusing_bf16_on_a_named_ampere_gpu_is_another_cause(tmp_path):
    path = AN / "mineru-1508-bf16-on-tesla-m40.txt"
    text = "NVIDIA A100-SXM4-80GB\n" + read_paste(path)
    findings, _ = run_rule("bf16-unsupported", ticket_file_facts(tmp_path, path, text))
    assert findings == []


def test_cublas_not_supported_on_half_operands_is_not_bf16():
    ids = [s["id"] for s in find_messages("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( "
                                          "handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, "
                                          "c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`")]
    assert "cublas:CUBLAS_STATUS_NOT_SUPPORTED" in ids and "torch:cublas-bf16-gemm-not-supported" not in ids


def test_cudnn8_on_windows_names_its_sub_library_dll(tmp_path):
    (f,) = fired("cuda-runtime-library-missing", ticket_file_facts(tmp_path, AN / "narratoai-74-cudnn8-dll-with-cudnn9-installed.txt"))
    assert "cudnn_ops_infer64_8.dll" in f.message and "cuDNN 8" in f.message
    assert f.fix.startswith("where cudnn64_8.dll cudnn_ops_infer64_8.dll") and ".so" not in f.fix


def test_another_release_of_libcublaslt_is_two_copies_not_torch(tmp_path):
    (f,) = fired("duplicate-libraries", ticket_file_facts(tmp_path, AN / "onnxruntime-8594-other-libcublaslt-copy-loaded.txt"))
    assert "libcublas.so.11 needs free_gemm_select at version libcublasLt.so.11" in f.message
    assert f.fix.startswith("ldd /home/gpu/anaconda3/envs/FXM/lib/libcublas.so.11 | grep libcublasLt.so.11")
    assert "conda list" in f.fix


def test_torch_import_failing_on_cublas_own_pair_is_answered_once(tmp_path):
    # pytorch#51080: the same relocation error under `import torch`; the pair is cuBLAS's own, not torch's
    facts = ticket_file_facts(tmp_path, AN / "pytorch-51080-cudatoolkit-11-0-221-package-bug-healthy.txt")
    assert fired("duplicate-libraries", facts)
    findings, _ = run_rule("torch-import-failed", facts)
    assert findings == []


def test_a_glibc_version_on_the_old_relocation_error_is_not_two_copies(tmp_path):
    text = ("mcx: relocation error: mcx: symbol __get_cpu_features, version GLIBC_PRIVATE not defined in file libc.so.6 "
            "with link time reference\n")
    findings, _ = run_rule("duplicate-libraries", ticket_file_facts(tmp_path, AN / "x.txt", text))
    assert findings == []


def test_old_nvrtc_failing_to_load_its_builtins_is_a_library_path(tmp_path):
    (f,) = fired("cuda-runtime-library-missing", ticket_file_facts(tmp_path, AN / "openmm-1485-nvrtc-builtins-library-path.txt"))
    assert "libnvrtc-builtins.so" in f.message and "LD_LIBRARY_PATH" in f.fix


def test_builtins_without_an_architecture_is_another_failure():
    ids = [s["id"] for s in find_messages("nvrtc: error: failed to load builtins for compute_90.")]
    assert "nvrtc:builtins-load-failed" not in ids


def test_ucx_shmget_enospc_is_system_v_used_up_not_a_full_disk(tmp_path):
    for name in ("ucx-9347-sysv-shm-limit-used-up.txt", "ucx-3668-sysv-shm-limit-used-up.txt"):
        facts = ticket_file_facts(tmp_path, AN / name)
        (f,) = fired("stale-shm-segments", facts)
        assert "System V shared memory is used up" in f.message and "ipcrm -m" in f.fix
        assert run_rule("disk-full", facts)[0] == []


def test_ucx_shmget_refused_for_size_is_not_segments_left(tmp_path):
    text = ("[1693920302.521306]          sys.c:915  UCX  ERROR   shmget(size=134221824 flags=0x7b0) for mm_recv_desc "
            "failed: Invalid argument, please check shared memory limits by 'ipcs -l'\n")
    findings, _ = run_rule("stale-shm-segments", ticket_file_facts(tmp_path, AN / "x.txt", text))
    assert findings == []


def test_libtorch_not_found_by_a_rust_program_is_its_loader_path(tmp_path):
    (f,) = fired("shared-library-not-found", ticket_file_facts(tmp_path, AN / "tch-rs-824-libtorch-not-on-loader-path.txt"))
    assert "libtorch_cuda.so" in f.message and "$LIBTORCH/lib" in f.fix


def test_libtorch_not_found_by_an_extension_import_is_torchs_lib_folder(tmp_path):
    facts = ticket_file_facts(tmp_path, AN / "one-shot-object-detection-15-libtorch-not-on-loader-path.txt")
    (f,) = fired("shared-library-not-found", facts)
    assert "extension module" in f.message and "torch.__file__" in f.fix
    assert run_rule("torch-import-failed", facts)[0] == []


def test_a_version_whose_backtick_markdown_ate_is_still_libstdcxx(tmp_path):
    (f,) = fired("libstdcxx-older-than-binary", ticket_file_facts(tmp_path, AN / "agibot-x1-infer-4-library-built-with-gcc13.txt"))
    assert "GLIBCXX_3.4.32" in f.message and "libxyber_controller.so" in f.message


def test_apex_without_its_cuda_extensions(tmp_path):
    (f,) = fired("framework-built-without-gpu", ticket_file_facts(tmp_path, AN / "open-sora-116-apex-without-cuda-extensions.txt"))
    assert "NVIDIA apex" in f.message and "fused_layer_norm_cuda" in f.message
    assert "--build-option=--cuda_ext" in f.fix and "pip uninstall -y apex" in f.fix


def test_a_module_no_package_builds_as_an_extension_is_not_a_gpu_build(tmp_path):
    text = "ModuleNotFoundError: No module named 'fused_attention_kernels'\n"
    findings, _ = run_rule("framework-built-without-gpu", ticket_file_facts(tmp_path, AN / "x.txt", text))
    assert findings == []


def test_a_cuda_build_on_a_machine_without_an_nvidia_gpu_is_a_hint(tmp_path):
    (f,) = fired("cuda-toolkit-nvcc-missing", ticket_file_facts(tmp_path, AN / "memtorch-95-cuda-package-on-machine-without-gpu-healthy.txt"))
    assert f.severity == "info" and "CPU variant" in f.message


def test_the_same_build_with_no_word_of_the_gpu_wants_the_toolkit(tmp_path):
    path = AN / "memtorch-95-cuda-package-on-machine-without-gpu-healthy.txt"
    text = "\n".join(line for line in read_paste(path).splitlines() if "NVIDIA graphic card" not in line)
    (f,) = fired("cuda-toolkit-nvcc-missing", ticket_file_facts(tmp_path, path, text))
    assert f.severity == "error"


def test_cmake_architectures_above_the_gpu(tmp_path):
    (f,) = fired("framework-missing-arch", ticket_file_facts(tmp_path, AO / "tensorrt-yolo-74-cuda-architectures-89-not-this-gpu.txt"))
    assert "compute capability 8.9 and newer only" in f.message and "set(CMAKE_CUDA_ARCHITECTURES 89)" in f.message
    assert f.fix.startswith("nvidia-smi --query-gpu=name,compute_cap")


def test_a_commented_out_setting_is_not_read():
    ids = [s["id"] for s in find_messages("# set(CMAKE_CUDA_ARCHITECTURES 89)\n")]
    assert "cmake_cuda:cuda-architectures-set" not in ids


def test_cmake_architectures_that_cover_a_named_gpu_are_not_the_cause(tmp_path):
    path = AO / "tensorrt-yolo-74-cuda-architectures-89-not-this-gpu.txt"
    text = read_paste(path) + "\nGPU: NVIDIA H100 80GB HBM3\n"
    findings, _ = run_rule("framework-missing-arch", ticket_file_facts(tmp_path, path, text))
    assert not any("CMAKE_CUDA_ARCHITECTURES" in h.message for h in findings)


def test_lightnings_few_workers_hint_alone_is_advice(tmp_path):
    (f,) = fired("dataloader-workers", ticket_file_facts(tmp_path, AO / "caduceus-29-few-dataloader-workers-warning-healthy.txt"))
    assert f.severity == "advice" and "sched_getaffinity" in f.fix and "CPUs in the machine" in f.message


def test_lightnings_few_workers_on_one_cpu_is_nothing_to_raise(tmp_path):
    (f,) = fired("dataloader-workers", ticket_file_facts(tmp_path, AO / "pytorch-lightning-19223-few-workers-warning-healthy.txt"))
    assert f.severity == "info" and "19223" in f.message


def test_lightnings_few_workers_beside_an_idle_gpu_is_a_warning(tmp_path):
    (f,) = fired("dataloader-workers", ticket_file_facts(tmp_path, FIXTURES / "tickets_blind_e" / "nemo-speech-1204-gpu-util-zero-few-loader-workers.txt"))
    assert f.severity == "warning" and "utilisation is low" in f.message


def test_intel_mpi_dapl_memlock_under_torque_points_at_pbs_mom(tmp_path):
    (f,) = fired("mpi-memlock-limit", ticket_file_facts(tmp_path, AO / "fds-6023-dapl-memlock-64k-from-pbs-mom.txt"))
    assert "DAPL" in f.message and "pbs_mom" in f.fix and "slurm.conf" not in f.fix


def test_intel_mpi_dapl_memlock_without_a_batch_system_named(tmp_path):
    path = AO / "fds-6023-dapl-memlock-64k-from-pbs-mom.txt"
    text = "\n".join(line for line in read_paste(path).splitlines() if "torque" not in line.lower())
    (f,) = fired("mpi-memlock-limit", ticket_file_facts(tmp_path, path, text))
    assert "pbs_mom" not in f.fix and "ulimit -l" in f.fix


def test_a_dkms_modules_own_source_failing_on_a_kernel_interface(tmp_path):
    facts = ticket_file_facts(tmp_path, AO / "amdgpu-53-rock-dkms-module-fails-on-newer-kernel.txt")
    (f,) = fired("dkms-module-too-old-for-kernel", facts)
    assert "amdgpu 1.8-192's own source" in f.message and f.fix.startswith("dkms status amdgpu; uname -r")


def test_the_modules_interface_error_answers_for_dkms_bad_return_status(tmp_path):
    # the paste with dkms's own verdict appended (its format, dell/dkms dkms.in report_build_problem)
    path = AO / "amdgpu-53-rock-dkms-module-fails-on-newer-kernel.txt"
    text = read_paste(path) + "\nError! Bad return status for module build on kernel: 4.15.0-33-generic (x86_64)\n"
    facts = ticket_file_facts(tmp_path, path, text)
    assert fired("dkms-module-too-old-for-kernel", facts)
    assert run_rule("dkms-module-build-failed", facts)[0] == []


def test_another_compile_error_in_a_dkms_module_is_not_a_kernel_interface(tmp_path):
    text = ("/var/lib/dkms/nvidia/550.54.14/build/nvidia/nv.c:12:1: error: expected ';' before 'int'\n")
    assert not fired("dkms-module-too-old-for-kernel", ticket_file_facts(tmp_path, AO / "x.txt", text))


def test_nvvs_without_its_package_configuration(tmp_path):
    (f,) = fired("dcgm-install-incomplete", ticket_file_facts(tmp_path, AO / "dcgm-121-diag-skus-yaml-missing-install-incomplete.txt"))
    assert "/usr/share/nvidia-validation-suite/diag-skus.yaml is not there" in f.message
    assert f.fix.startswith("ls -l /usr/share/nvidia-validation-suite/diag-skus.yaml") and "-config" not in f.fix


def test_a_yaml_file_nvvs_could_not_open_without_its_fallback_line_is_not_read_as_it(tmp_path):
    # the real paste without nvvs's own "Could not read package diag config" line: another YAML's
    # failure may print "Exception: bad file: ..." too; only nvvs's line says it fell back
    path = AO / "dcgm-121-diag-skus-yaml-missing-install-incomplete.txt"
    text = "\n".join(line for line in read_paste(path).splitlines() if "Could not read package diag config" not in line)
    assert not fired("dcgm-install-incomplete", ticket_file_facts(tmp_path, path, text))


def test_prima_cpp_ring_ports_of_the_rank_on_its_command_line(tmp_path):
    path = FIXTURES / "tickets_blind_al" / "prima-cpp-18-rank-port-held-by-other-server.txt"
    (f,) = fired("master-port-in-use", ticket_file_facts(tmp_path, path))
    assert "ports 9002 (data) and 10002 (signal) of rank 2" in f.message
    assert f.fix.startswith("ss -ltnp '( sport = :9002 or sport = :10002 )'") and "MASTER_PORT" not in f.fix


def test_prima_cpp_ring_ports_without_a_rank_named(tmp_path):
    path = FIXTURES / "tickets_blind_al" / "prima-cpp-18-rank-port-held-by-other-server.txt"
    text = read_paste(path).replace(" --rank 2", "").replace("--data-port", "")
    (f,) = fired("master-port-in-use", ticket_file_facts(tmp_path, path, text + "\n./llama-cli --data-port 9500\n"))
    assert "9500 + rank" in f.message and "awk -v d=9500 -v s=10000" in f.fix


def test_another_zeromq_error_of_the_ring_is_not_a_port_in_use():
    ids = [s["id"] for s in find_messages("Error binding/connecting recv socket to endpoint: No such device\n")]
    assert "prima_cpp:ring-socket-address-in-use" not in ids
