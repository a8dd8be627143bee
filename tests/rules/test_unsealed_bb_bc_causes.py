"""Causes and non-causes the pastes of sets BB and BC, then BD and BE (all unsealed 2026-11-30) show in
their emitters' own words, each read from the real paste; where a variant is needed, the real paste is edited in
memory and the edit is said."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.knowledge import rocm_gpus
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, read_paste, run_rule, set_path, ticket_file_facts

BB = FIXTURES / "tickets_blind_bb"
BC = FIXTURES / "tickets_blind_bc"

OPENMM_LIBCUDA = BB / "openmm-4370-cuda-plugin-without-libcuda.txt"
OPENMM_CPU = BB / "openmm-1430-cpu-platform-needs-sse4-2.txt"
ELPA = BB / "elpa-58-gpu-build-on-node-without-driver.txt"
R_TORCH = BB / "deep-learning-and-scientific-computing-with-r-torch-16-libtorch-without-cuda.txt"
TCH = BB / "tch-rs-213-default-cpu-only-libtorch.txt"
PODMAN = BC / "nvidia-container-runtime-190-podman-gpus-flag-no-op.txt"
DOCKER_OLD = BC / "nvidia-docker-1199-docker-client-too-old-for-gpus-flag.txt"
ENROOT_LZO = BC / "enroot-6-squashfs-lzo-unsupported-by-squashfuse.txt"
ENROOT_CAPS = BC / "enroot-141-aufs2ovlfs-caps-package-missing.txt"
GFX90C = BC / "rocblas-1398-gfx90c-apu-not-supported.txt"


def _ids(text: str) -> set:
    return {s["id"] for s in find_messages(text)}


# --- OpenMM's plugins ----------------------------------------------------------------------------

def test_openmms_cuda_plugin_failing_on_libcuda_is_cuda_driver_library_not_found(tmp_path):
    # the failure is wrapped across two lines where the user pasted the tuple
    (f,) = fired("cuda-driver-library-not-found", ticket_file_facts(tmp_path, OPENMM_LIBCUDA))
    assert "OpenMM's CUDA plugin" in f.message and "libOpenMMCUDA.so" in f.message
    assert "getPluginLoadFailures()" in f.fix and "nvidia-smi" in f.fix


def test_an_openmm_plugin_failing_on_another_library_is_not_the_driver(tmp_path):
    # edited: the plugin's missing library is OpenCL's, not the driver's libcuda
    text = read_paste(OPENMM_LIBCUDA).replace("libcuda.so.1: cannot open", "libOpenCL.so.1: cannot open")
    assert "md_engines:openmm-plugin-needs-libcuda" not in _ids(text)
    findings, _ = run_rule("cuda-driver-library-not-found", ticket_file_facts(tmp_path, OPENMM_LIBCUDA, text))
    assert not findings


def test_openmm_without_its_cpu_platform_is_a_cpu_isa_hint_naming_both_causes(tmp_path):
    (f,) = fired("cpu-lacks-required-isa", ticket_file_facts(tmp_path, OPENMM_CPU))
    assert f.severity == "info" and "SSE4.1" in f.message and "OPENMM_PLUGIN_DIR" in f.message
    assert "sse4_1" in f.fix


def test_openmm_without_its_cpu_platform_beside_the_nodes_flags(tmp_path):
    # the paste beside a node's recorded CPU flags: without sse4_1 an error, with it no finding (the
    # plugins folder, not the CPU)
    for flags, expected in ((["fpu", "sse2", "sse4a", "lahf_lm"], ["error"]), (["fpu", "sse2", "sse4_1", "sse4_2"], [])):
        gathered = ticket_file_facts(tmp_path, OPENMM_CPU)
        set_path(gathered["facts"], "cpu.flags", flags)
        set_path(gathered["facts"], "cpu.arch", "x86_64")
        findings, _ = run_rule("cpu-lacks-required-isa", gathered)
        assert [f.severity for f in findings] == expected, flags


def test_openmm_without_its_cuda_platform_is_no_cpu_isa_finding(tmp_path):
    # edited: the platform asked for is CUDA's, whose absence says nothing of the CPU
    text = read_paste(OPENMM_CPU).replace('called "CPU"', 'called "CUDA"')
    findings, _ = run_rule("cpu-lacks-required-isa", ticket_file_facts(tmp_path, OPENMM_CPU, text))
    assert not findings


# --- CUDA error 35 on a machine said to have no driver ------------------------------------------

def test_error_35_on_a_system_said_to_have_no_cuda_driver_is_cuda_build_on_node_without_gpu(tmp_path):
    facts = ticket_file_facts(tmp_path, ELPA)
    (f,) = fired("cuda-build-on-node-without-gpu", facts)
    assert "no NVIDIA driver" in f.message
    findings, _ = run_rule("driver-too-old", facts)
    assert not findings


def test_error_35_without_the_no_driver_sentence_stays_driver_too_old(tmp_path):
    # edited: the title and the steps no longer say the system has no CUDA driver
    text = (read_paste(ELPA).replace("on system without Cuda driver", "on a cluster node")
            .replace("on a system that does not have a Cuda driver", "on a cluster node")
            .replace("Choose a system with no CUDA driver.", "Choose a cluster node."))
    facts = ticket_file_facts(tmp_path, ELPA, text)
    assert not fired("cuda-build-on-node-without-gpu", facts)
    assert fired("driver-too-old", facts)


# --- libtorch outside Python ---------------------------------------------------------------------

def test_r_torchs_not_linked_with_cuda_is_a_cpu_libtorch_with_r_torchs_fix(tmp_path):
    (f,) = fired("torch-cpu-only", ticket_file_facts(tmp_path, R_TORCH))
    assert f.severity == "warning" and "R torch" in f.message
    assert "torch-cdn.mlverse.org" in f.fix and "cu128" in f.fix and "525.60.13" in f.fix


def test_the_same_refusal_from_a_cpp_program_gets_the_linkers_fix(tmp_path):
    # edited: the refusal as a C++ program's uncaught c10::Error prints it, with no R call shown
    text = read_paste(R_TORCH).replace("Error in (function (self, device, dtype, non_blocking, copy, memory_format)",
                                       "terminate called after throwing an instance of 'c10::Error'\n  what()")
    (f,) = fired("torch-cpu-only", ticket_file_facts(tmp_path, R_TORCH, text))
    assert "R torch" not in f.message and "LIBTORCH" in f.fix and "--no-as-needed -ltorch_cuda" in f.fix


def test_the_xpu_form_of_not_linked_is_not_read_as_a_cpu_torch(tmp_path):
    # edited: the device type the refusal names is xpu (framework-built-without-gpu's, set AZ)
    text = read_paste(R_TORCH).replace("support for cuda devices", "support for xpu devices")
    findings, _ = run_rule("torch-cpu-only", ticket_file_facts(tmp_path, R_TORCH, text))
    assert not findings


def test_tch_answering_false_is_a_cpu_libtorch_with_tchs_fix(tmp_path):
    (f,) = fired("torch-cpu-only", ticket_file_facts(tmp_path, TCH))
    assert "tch's Cuda::is_available() is false" in f.message
    assert "LIBTORCH_USE_PYTORCH=1" in f.fix and "cargo clean -p torch-sys" in f.fix


def test_tch_answering_true_is_no_finding(tmp_path):
    # edited: the printed answer is true
    text = read_paste(TCH).replace("> false", "> true")
    findings, _ = run_rule("torch-cpu-only", ticket_file_facts(tmp_path, TCH, text))
    assert not findings


# --- containers: the runtime finding no nvidia-smi, docker's CLI, enroot --------------------------

def test_the_oci_runtime_finding_no_nvidia_smi_is_container_nvidia_libs_not_bound(tmp_path):
    (f,) = fired("container-nvidia-libs-not-bound", ticket_file_facts(tmp_path, PODMAN))
    assert "no nvidia-smi in the container" in f.message
    assert "--device nvidia.com/gpu=all" in f.fix and "nvidia-ctk cdi list" in f.fix


def test_the_runtime_not_finding_another_program_is_no_finding(tmp_path):
    # edited: the command the runtime could not find is the user's own
    text = read_paste(PODMAN).replace("executable file `nvidia-smi` not found", "executable file `python3` not found")
    assert not fired("container-nvidia-libs-not-bound", ticket_file_facts(tmp_path, PODMAN, text))


def test_docker_run_refusing_gpus_as_an_unknown_flag_is_docker_client_too_old(tmp_path):
    facts = ticket_file_facts(tmp_path, DOCKER_OLD)
    (f,) = fired("docker-client-too-old-for-gpus", facts)
    assert "17.12.0-ce" in f.message and "19.03" in f.message
    assert "which -a docker" in f.fix and "docker-ce-cli" in f.fix
    findings, _ = run_rule("slurm-job-without-gpus", facts)
    assert not findings
    assert "prose:slurm-gpus-requested" not in _ids(read_paste(DOCKER_OLD))


def test_unknown_flag_gpus_from_another_cobra_program_is_not_docker(tmp_path):
    # edited: the same refusal from apptainer, whose help line names apptainer
    text = read_paste(DOCKER_OLD).replace("See 'docker run --help'.", "Run 'apptainer exec --help' for more detailed usage information.")
    assert "docker_client:unknown-flag-gpus" not in _ids(text)
    assert not fired("docker-client-too-old-for-gpus", ticket_file_facts(tmp_path, DOCKER_OLD, text))


def test_enroots_lzo_image_refused_by_squashfuse_is_enroot_squashfs_compression_unsupported(tmp_path):
    (f,) = fired("enroot-squashfs-compression-unsupported", ticket_file_facts(tmp_path, ENROOT_LZO))
    assert "lzo" in f.message
    assert "ENROOT_SQUASH_OPTIONS='-comp lz4 -noD'" in f.fix and "enroot import" in f.fix


def test_a_squashfuse_that_decodes_only_zlib_gets_gzip_and_one_without_enroot_nothing(tmp_path):
    # edited: this squashfuse lists zlib alone (mksquashfs calls it gzip)
    text = read_paste(ENROOT_LZO).replace("supports only xz, zlib, lz4, zstd.", "supports only zlib.")
    (f,) = fired("enroot-squashfs-compression-unsupported", ticket_file_facts(tmp_path, ENROOT_LZO, text))
    assert "-comp gzip -noD" in f.fix
    # edited: the same squashfuse line without enroot's own lines (an AppImage's)
    alone = "Squashfs image uses lzo compression, this version supports only xz, zlib, lz4, zstd.\n"
    assert not fired("enroot-squashfs-compression-unsupported", ticket_file_facts(tmp_path, ENROOT_LZO, alone))


def test_enroots_helper_refused_its_capabilities_is_enroot_caps_package_missing(tmp_path):
    (f,) = fired("enroot-caps-package-missing", ticket_file_facts(tmp_path, ENROOT_CAPS))
    assert "enroot-aufs2ovlfs" in f.message and "enroot+caps" in f.message
    assert "getcap" in f.fix and "enroot+caps-$v-1.el8" in f.fix


def test_enroots_helper_refused_a_user_namespace_is_not_the_caps_package(tmp_path):
    # edited: the helper's other refusal, the kernel's user namespaces (user-namespaces-disabled's)
    text = read_paste(ENROOT_CAPS).replace("failed to set capabilities: Operation not permitted",
                                           "failed to create user namespace: Operation not permitted")
    assert not fired("enroot-caps-package-missing", ticket_file_facts(tmp_path, ENROOT_CAPS, text))


# --- a GPU target no ROCm release lists ----------------------------------------------------------

def test_rocblas_on_gfx90c_is_rocm_gpu_not_in_release_and_not_a_path_fix(tmp_path):
    facts = ticket_file_facts(tmp_path, GFX90C)
    (f,) = fired("rocm-gpu-not-in-release", facts)
    assert "gfx90c" in f.message and "5.4 to 7.2" in f.message
    assert not fired("rocblas-tensile-library-missing", facts)


def test_rocblas_on_a_supported_target_stays_the_library_folder(tmp_path):
    # edited: the GPU is a gfx90a, which ROCm's lists support
    text = read_paste(GFX90C).replace("gfx90c", "gfx90a")
    facts = ticket_file_facts(tmp_path, GFX90C, text)
    assert not fired("rocm-gpu-not-in-release", facts)
    assert fired("rocblas-tensile-library-missing", facts)


def test_a_target_newer_than_every_list_is_not_judged():
    # a future target of a listed generation: the lists predate it, so no verdict
    assert rocm_gpus.never_supported("gfx12ff") is None
    assert rocm_gpus.never_supported("gfx90c")
    assert rocm_gpus.never_supported("not-a-target") is None


# --- the HIP SDK for Windows has a list of its own -----------------------------------------------

RX580 = BC / "hip-3805-rx580-not-supported-by-hip-sdk.txt"


def test_an_rx_580_under_the_hip_sdk_62_on_windows_is_rocm_gpu_not_in_release(tmp_path):
    facts = ticket_file_facts(tmp_path, RX580)
    (f,) = fired("rocm-gpu-not-in-release", facts)
    assert "HIP SDK 6.2 on Windows" in f.message and "AMD Radeon RX 580" in f.message
    assert "hipInfo.exe" in f.fix and "rocminfo" not in f.fix
    findings, _ = run_rule("no-gpu-visible", facts)
    assert not findings   # the cause is named: the Linux commands of the bare "no device" would not help


def test_a_gpu_the_windows_list_supports_is_no_finding_and_leaves_the_bare_no_device(tmp_path):
    # edited: the template's GPU is an RX 6800, which the HIP SDK 6.2 list supports
    text = read_paste(RX580).replace("AMD RX580", "AMD RX 6800")
    facts = ticket_file_facts(tmp_path, RX580, text)
    findings, _ = run_rule("rocm-gpu-not-in-release", facts)
    assert not findings
    (f,) = fired("no-gpu-visible", facts)
    assert f.severity == "info"


def test_a_runtime_only_gpu_on_windows_is_named_so(tmp_path):
    # edited: an RX 6700 XT, which the HIP SDK 6.2 list gives the runtime only
    text = read_paste(RX580).replace("AMD RX580", "AMD RX 6700 XT")
    (f,) = fired("rocm-gpu-not-in-release", ticket_file_facts(tmp_path, RX580, text))
    assert "runtime-only" in f.message


def test_under_wsl_the_linux_list_is_read(tmp_path):
    # edited: the same machine said to run ROCm in WSL 2, where Linux's ROCm and its list apply
    text = read_paste(RX580).replace("Windows 10 IoT LTSC 10.0.19044", "Windows 10 IoT LTSC 10.0.19044, Ubuntu in WSL 2")
    (f,) = fired("rocm-gpu-not-in-release", ticket_file_facts(tmp_path, RX580, text))
    assert "on Windows" not in f.message and "ROCm 6.2" in f.message


def test_windows_named_in_passing_beside_a_gpu_linux_supports_is_no_finding(tmp_path):
    # edited: an MI250X, which ROCm 6.2's Linux list supports and the Windows list does not name; the
    # paste still says Windows, which a Linux node's user may write in passing
    text = read_paste(RX580).replace("AMD RX580", "AMD Instinct MI250X")
    findings, _ = run_rule("rocm-gpu-not-in-release", ticket_file_facts(tmp_path, RX580, text))
    assert not findings


# --- sets BD and BE (unsealed later the same day) --------------------------------------------------

BD = FIXTURES / "tickets_blind_bd"
BE = FIXTURES / "tickets_blind_be"
PERSISTENCED = BD / "envycontrol-150-persistenced-unit-file-missing.txt"
CAFFE2 = BE / "onnx-caffe2-288-cudnn-runtime-differs-from-build.txt"
LDD = BE / "arch4edu-24-mxnet-built-for-cuda-10-0-on-cuda-10-1.txt"


def test_systemd_without_the_persistence_daemons_unit_is_nvidia_persistenced_unit_missing(tmp_path):
    (f,) = fired("nvidia-persistenced-unit-missing", ticket_file_facts(tmp_path, PERSISTENCED))
    assert "nvidia-persistenced.service" in f.message
    assert "nvidia-persistenced-init.tar.bz2" in f.fix and "dnf provides" in f.fix and "systemctl enable --now" in f.fix


def test_another_units_absence_is_not_the_persistence_daemons(tmp_path):
    # edited: the unit systemd could not find is the fabric manager's
    text = read_paste(PERSISTENCED).replace("nvidia-persistenced.service does not exist", "nvidia-fabricmanager.service does not exist")
    assert not fired("nvidia-persistenced-unit-missing", ticket_file_facts(tmp_path, PERSISTENCED, text))


def test_caffe2s_compiled_and_runtime_cudnn_is_cudnn_version_mismatch_decoded(tmp_path):
    (f,) = fired("cudnn-version-mismatch", ticket_file_facts(tmp_path, CAFFE2))
    assert "cuDNN 6.0.21" in f.message and "7.0.3" in f.message
    assert "ldconfig -p | grep libcudnn" in f.fix


def test_the_same_words_of_another_library_are_not_caffe2s_cudnn_check(tmp_path):
    # edited: a CUDA version pair in the same shape, which is not Caffe2's cuDNN check
    text = read_paste(CAFFE2).replace("cuDNN compiled (6021) and runtime (7003)", "CUDA compiled (10010) and runtime (10020)")
    assert "cudnn_checks:caffe2-compiled-runtime-mismatch" not in _ids(text)
    findings, _ = run_rule("cudnn-version-mismatch", ticket_file_facts(tmp_path, CAFFE2, text))
    assert not findings


def test_ldds_not_found_rows_are_cuda_runtime_library_missing(tmp_path):
    (f,) = fired("cuda-runtime-library-missing", ticket_file_facts(tmp_path, LDD))
    assert "libcudart.so.10.0" in f.message and "CUDA 10.0" in f.message


def test_ldds_resolved_rows_are_no_finding(tmp_path):
    # edited: every CUDA library resolved, as ldd prints a found one, and one row of a library that is
    # no CUDA runtime left missing (read, with no rule), so that the paste still holds a line hpcdoctor reads
    text = "\n".join(line.replace("=> not found", "=> /opt/cuda/lib64/" + line.split()[0] + " (0x00007f0000000000)")
                     if "=> not found" in line else line for line in read_paste(LDD).splitlines())
    text = text.replace("```\n", "```\n\tlibgfortran.so.3 => not found\n", 1)
    assert _ids(text) == {"libraries:unlisted"}   # read as a library the catalogue does not list
    assert "libraries:libcudart" not in _ids(text)
    findings, _ = run_rule("cuda-runtime-library-missing", ticket_file_facts(tmp_path, LDD, text))
    assert not findings
