"""Causes and non-causes the pastes of sets AT and AU (unsealed 2026-11-29) show in their emitters'
own words, each read from the real paste; where a variant is needed, the real paste is edited in
memory and the edit is said."""

from __future__ import annotations

from conftest import FIXTURES, run_main
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, message_ids, read_paste, run_rule, ticket_file_facts

AT = FIXTURES / "tickets_blind_at"
AU = FIXTURES / "tickets_blind_au"

VOID_DKMS = AT / "void-packages-61087-nvidia580-dkms-predates-linux-7-1.txt"
GSP = AT / "nixpkgs-454772-gsp-firmware-not-installed.txt"
CGROUP_V2 = AT / "nixpkgs-127146-libnvidia-container-no-cgroup-v2.txt"
HOOK_TIMEOUT = AT / "nvidia-docker-723-driver-init-timeout-persistence-mode-off.txt"
UVM_NODE = AT / "nvidia-docker-288-uvm-device-missing-after-reboot.txt"
OMP_15 = AT / "tensorflow-deeplab-resnet-206-two-openmp-runtimes-loaded.txt"
MACBOOK = AU / "pulse-13-macbook-has-no-cuda-gpu-healthy.txt"
ROCM_41 = AU / "legacy-rocm-build-1423-rocm-4-1-kernel-userspace-incompatible.txt"
RADEON_PRO = AU / "legacy-rocm-build-1583-kernel-userspace-incompatible-upgrade-amdgpu.txt"
ILGPU = AU / "ilgpu-36-driver-ptx-jit-supports-only-ptx-5-0.txt"


# --- Void Linux's xbps trigger for a DKMS package ---------------------------------------------

def test_voids_package_trigger_failing_a_dkms_build_is_read_and_answered(tmp_path):
    assert {"dkms:xbps-trigger-build-failed", "dkms:xbps-trigger-build-failed-check"} <= message_ids(read_paste(VOID_DKMS))
    (f,) = fired("dkms-module-build-failed", ticket_file_facts(tmp_path, VOID_DKMS))
    assert "nvidia 580.142" in f.message and "kernel 7.1.0_1" in f.message
    assert "/var/lib/dkms/nvidia/580.142/build/make.log" in f.fix and "dkms build nvidia/580.142 -k 7.1.0_1" in f.fix
    assert run_main("check", "--from", str(VOID_DKMS)).returncode != 2


def test_voids_trigger_skipping_a_kernel_without_headers_is_the_headers_rule(tmp_path):
    # edited: the two lines of the failed build replaced by the trigger's own skip line
    text = read_paste(VOID_DKMS).replace(
        "Building DKMS module 'nvidia-580.142' for kernel-7.1.0_1... FAILED!\nDKMS module 'nvidia-580.142' failed to build, "
        "please check /var/lib/dkms\n", "Skipping kernel-7.1.0_1. kernel-headers package not installed...\n")
    assert "dkms:xbps-trigger-headers-skipped" in message_ids(text)
    facts = ticket_file_facts(tmp_path, VOID_DKMS, text)
    assert fired("kernel-headers-missing-for-dkms", facts)
    assert not fired("dkms-module-build-failed", facts)


# --- NVIDIA's GSP firmware ----------------------------------------------------------------------

def test_gsp_firmware_of_the_loaded_driver_missing_is_named_with_its_release(tmp_path):
    (f,) = fired("nvidia-gsp-firmware-missing", ticket_file_facts(tmp_path, GSP))
    assert "gsp_tu10x.bin" in f.message and "565.57.01" in f.message and "Turing" in f.message
    assert "ls /lib/firmware/nvidia/" in f.fix and "'*/nvidia/565.57.01/gsp_tu10x.bin'" in f.fix


def test_a_gsp_firmware_load_failing_otherwise_than_not_found_is_not_a_missing_file(tmp_path):
    # edited: ENOENT (-2) replaced by ENOMEM (-12), a file that exists but could not be read into memory
    text = read_paste(GSP).replace("failed with error -2", "failed with error -12")
    assert "gpu_firmware:linux-nvidia-gsp-firmware-load-failed" not in message_ids(text)


def test_amdgpus_missing_firmware_is_not_nvidias_gsp(tmp_path):
    # edited: the file asked for is amdgpu's, which GPU048 answers
    text = read_paste(GSP).replace("nvidia/565.57.01/gsp_tu10x.bin", "amdgpu/navy_flounder_sos.bin")
    facts = ticket_file_facts(tmp_path, GSP, text)
    assert not fired("nvidia-gsp-firmware-missing", facts)
    assert fired("amdgpu-firmware-missing", facts)


# --- the NVIDIA container hook and the host -------------------------------------------------------

def test_a_hook_without_cgroup_v2_support_is_answered_with_the_release_that_added_it(tmp_path):
    (f,) = fired("nvidia-container-cli-without-cgroup-v2", ticket_file_facts(tmp_path, CGROUP_V2))
    assert "1.8.0" in f.message and "cgroup v2" in f.message
    assert "stat -fc %T /sys/fs/cgroup" in f.fix and "systemd.unified_cgroup_hierarchy=0" in f.fix


def test_another_cgroup_subsystem_missing_is_not_the_cgroup_v2_gap(tmp_path):
    # edited: the devices controller replaced by cpuset, which the hook does not look for
    text = read_paste(CGROUP_V2).replace("cgroup subsystem devices not found", "cgroup subsystem cpuset not found")
    assert not fired("nvidia-container-cli-without-cgroup-v2", ticket_file_facts(tmp_path, CGROUP_V2, text))


def test_the_hook_timing_out_on_the_driver_is_persistence_mode_and_an_error(tmp_path):
    (f,) = fired("persistence-mode-off", ticket_file_facts(tmp_path, HOOK_TIMEOUT))
    assert f.severity == "error" and "10 s" in f.message and "nvidia-persistenced" in f.fix


def test_the_driver_refusing_the_hooks_request_is_not_persistence_mode(tmp_path):
    # edited: the helper's timeout replaced by a failed request, the driver's answer
    text = read_paste(HOOK_TIMEOUT).replace("driver error: timed out", "driver error: failed to process request")
    assert "container:nvc-driver-rpc-timeout" in message_ids(text)
    findings, _ = run_rule("persistence-mode-off", ticket_file_facts(tmp_path, HOOK_TIMEOUT, text))
    assert not findings


def test_a_containers_nvidia_node_missing_on_the_host_is_the_driver_not_loaded(tmp_path):
    (f,) = fired("gpu-driver-unusable", ticket_file_facts(tmp_path, UVM_NODE))
    assert "device node" in f.message and "nvidia-modprobe -u -c=0" in f.fix and "nvidia-persistenced" in f.fix


def test_a_missing_device_node_of_another_kind_is_not_the_nvidia_driver(tmp_path):
    # edited: the node is AMD's /dev/kfd, not one of the NVIDIA driver's
    text = read_paste(UVM_NODE).replace("/dev/nvidia-uvm-tools", "/dev/kfd")
    assert "container:docker-custom-device-missing-nvidia" not in message_ids(text)
    assert not fired("gpu-driver-unusable", ticket_file_facts(tmp_path, UVM_NODE, text))


# --- OpenMP's Error #15 quoted without its prefix; a user's MacBook --------------------------------

def test_openmps_error_15_quoted_without_omp_is_still_two_runtimes(tmp_path):
    assert "openmp:omp-error-15" in message_ids(read_paste(OMP_15))
    assert fired("duplicate-libraries", ticket_file_facts(tmp_path, OMP_15))


def test_an_error_15_of_other_words_is_not_openmps(tmp_path):
    # edited: the runtime's "already initialized" replaced
    text = read_paste(OMP_15).replace("already initialized", "in the wrong folder")
    assert "openmp:omp-error-15" not in message_ids(text)
    findings, _ = run_rule("duplicate-libraries", ticket_file_facts(tmp_path, OMP_15, text))
    assert not findings


def test_a_macbook_in_lower_case_is_a_mac_without_a_cuda_gpu(tmp_path):
    assert "prose:apple-mac" in message_ids(read_paste(MACBOOK))
    assert not fired("torch-cpu-only", ticket_file_facts(tmp_path, MACBOOK))


def test_the_same_paste_on_a_linux_workstation_is_a_cpu_build(tmp_path):
    # edited: the platform line and the title no longer name a Mac
    text = read_paste(MACBOOK).replace("Platform: macbook pro 16in", "Platform: linux workstation").replace("MAC OX", "LINUX")
    assert "prose:apple-mac" not in message_ids(text)
    assert fired("torch-cpu-only", ticket_file_facts(tmp_path, MACBOOK, text))


# --- ROCr's KFD interface check ------------------------------------------------------------------

def test_rocr_disabling_a_gfx906_for_an_old_kfd_is_an_old_kernel_driver(tmp_path):
    for path in (ROCM_41, RADEON_PRO):
        (f,) = fired("amdgpu-kernel-userspace-incompatible", ticket_file_facts(tmp_path, path))
        assert "Vega 20" in f.message and "KFD interface older than 1.4" in f.message
        assert "HSA_IGNORE_SRAMECC_MISREPORT=1" in f.fix and "dkms status amdgpu" in f.fix


def test_another_hsa_error_is_not_the_kfd_interface_check(tmp_path):
    # edited: the runtime's words after "HSA Error:" replaced
    text = read_paste(ROCM_41).replace("Incompatible kernel and userspace, Vega 20 [Radeon VII] disabled. Upgrade amdgpu.",
                                   "Vega 20 [Radeon VII] busy.")
    assert not fired("amdgpu-kernel-userspace-incompatible", ticket_file_facts(tmp_path, ROCM_41, text))


# --- the driver's PTX JIT, not a toolkit's ptxas ---------------------------------------------------

def test_the_drivers_jit_refusing_a_newer_ptx_is_the_driver_too_old(tmp_path):
    facts = ticket_file_facts(tmp_path, ILGPU)
    (f,) = fired("driver-too-old", facts)
    assert "PTX JIT" in f.message and "up to 5.0" in f.message and "PTX 6.0" in f.message
    assert not fired("ptxas-too-old", facts)


def test_the_same_ptxas_log_without_the_jits_error_is_a_toolkits_ptxas(tmp_path):
    # edited: the two lines that say the driver's JIT failed (error 218) removed
    text = "\n".join(line for line in read_paste(ILGPU).splitlines()
                     if "PTX JIT compilation failed" not in line and "CUDA_ERROR_INVALID_PTX" not in line)
    facts = ticket_file_facts(tmp_path, ILGPU, text)
    assert fired("ptxas-too-old", facts)
    findings, _ = run_rule("driver-too-old", facts)
    assert not findings


# --- GCC without an offload target; a CUDA DLL on Windows -------------------------------------------

WINLIBS = AU / "winlibs-mingw-43-gcc-not-built-with-nvptx-offload.txt"
LIBGPUARRAY = AU / "libgpuarray-562-cuda-bin-not-on-windows-path.txt"


def test_gcc_without_the_nvptx_offload_target_is_named_with_its_package(tmp_path):
    (f,) = fired("gcc-offload-target-not-built", ticket_file_facts(tmp_path, WINLIBS))
    assert f.message.startswith("gfortran was not built with the offload target nvptx-none")
    assert "--enable-offload-targets" in f.fix and "gcc-offload-nvptx" in f.fix


def test_an_offload_target_no_distribution_packages_gets_no_package_named(tmp_path):
    # edited: the target is AMD's, which no package named here builds
    text = read_paste(WINLIBS).replace("nvptx-none as offload target", "amdgcn-amdhsa as offload target")
    (f,) = fired("gcc-offload-target-not-built", ticket_file_facts(tmp_path, WINLIBS, text))
    assert "amdgcn-amdhsa" in f.message and "gcc-offload-nvptx" not in f.fix


def test_gcc_refusing_an_unknown_option_is_not_an_offload_target(tmp_path):
    # edited: the driver's offload refusal replaced by its refusal of an unknown option
    text = read_paste(WINLIBS).replace("GCC is not configured to support nvptx-none as offload target",
                                   "unrecognized command-line option '-foffload-nvptx'")
    assert not fired("gcc-offload-target-not-built", ticket_file_facts(tmp_path, WINLIBS, text))


def test_a_toolkit_dll_libgpuarray_could_not_load_is_answered_with_windows_path(tmp_path):
    assert "libraries:libnvrtc" in message_ids(read_paste(LIBGPUARRAY))
    (f,) = fired("cuda-runtime-library-missing", ticket_file_facts(tmp_path, LIBGPUARRAY))
    assert f.message.startswith("nvrtc64_70.dll cannot be loaded") and "CUDA_PATH" in f.message
    assert "where nvrtc64_70.dll" in f.fix and "set PATH=%CUDA_PATH%\\bin;%PATH%" in f.fix
    assert "LD_LIBRARY_PATH" not in f.fix


def test_a_dll_that_is_not_the_toolkits_is_not_read_as_one():
    # edited: the DLL is a game's, not one of the CUDA toolkit's
    text = read_paste(LIBGPUARRAY).replace("nvrtc64_70.dll", "physx64_70.dll")
    assert "libraries:libnvrtc" not in message_ids(text)


# --- aarch64 GCC refusing a feature modifier -----------------------------------------------------

COMPUTELIBRARY = AU / "computelibrary-978-gcc-7-rejects-sve-march.txt"


def test_a_refused_sve_modifier_names_the_gcc_release_that_brought_it(tmp_path):
    (f,) = fired("compiler-older-than-build-flags", ticket_file_facts(tmp_path, COMPUTELIBRARY))
    assert "+sve and +dotprod (in -march=armv8.2-a+sve+fp16+dotprod) are accepted from GCC 8.1 on" in f.message
    assert "8.1 or newer" in f.fix


def test_the_modifier_newer_gccs_name_is_the_one_judged(tmp_path):
    # edited: the refusal in GCC 12's words, naming +i8mm (GCC 10) in a value that also holds +sve (GCC 8)
    text = read_paste(COMPUTELIBRARY).replace("invalid feature modifier in ‘-march=armv8.2-a+sve+fp16+dotprod’",
                                          "invalid feature modifier ‘i8mm’ in ‘-march=armv8.2-a+sve+i8mm’")
    (f,) = fired("compiler-older-than-build-flags", ticket_file_facts(tmp_path, COMPUTELIBRARY, text))
    assert "+i8mm (in -march=armv8.2-a+sve+i8mm) is accepted from GCC 10.1 on" in f.message


def test_a_modifier_the_release_notes_do_not_date_is_not_judged(tmp_path):
    # edited: +sve misspelt +svee, which no GCC knows: a typo, not an old compiler
    text = read_paste(COMPUTELIBRARY).replace("+sve+fp16+dotprod", "+svee+fp16+dotprod")
    assert "target_options:aarch64-invalid-feature-modifier" in message_ids(text)
    assert not fired("compiler-older-than-build-flags", ticket_file_facts(tmp_path, COMPUTELIBRARY, text))


# --- TensorFlow's BFC allocator out of GPU memory: read, not a fault of the node --------------------

ALPHAFOLD = AU / "alphafold-651-allocation-163-gib-exceeds-one-gpu-healthy.txt"


def test_tensorflows_allocator_running_out_is_read_and_answers_nothing():
    assert "tensorflow:bfc-allocator-out-of-memory" in message_ids(read_paste(ALPHAFOLD))
    done = run_main("check", "--from", str(ALPHAFOLD))
    assert done.returncode == 0 and "bfc-allocator-out-of-memory" in done.stdout


def test_the_allocators_retry_warning_is_not_the_failure():
    line = ("W tensorflow/core/common_runtime/bfc_allocator.cc:243] Allocator (GPU_0_bfc) ran out of memory trying to "
            "allocate 1.25GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that "
            "there could be performance gains if more memory were available.")
    ids = message_ids(line)
    assert "tensorflow:bfc-allocator-retry-not-a-failure" in ids and "tensorflow:bfc-allocator-out-of-memory" not in ids


RCCL_TOPO = AU / "rccl-1210-xgmi-48gbs-after-overheads-healthy.txt"


def test_rccls_topology_header_is_read_as_a_listing():
    assert "nccl:topo-system-header" in message_ids(read_paste(RCCL_TOPO))
    assert run_main("check", "--from", str(RCCL_TOPO)).returncode == 0


def test_nccl_2_7s_topology_header_is_the_same_listing():
    # NCCL 2.7.8's own words (src/graph/topo.cc at v2.7.8-1), before maxWidth became maxBw
    assert "nccl:topo-system-header" in message_ids("=== System : maxWidth 24.0 ===")
    assert "nccl:topo-system-header" not in message_ids("=== System : all links up ===")


# --- ROCr's other reports before it aborts (runtime.cpp, queue.cpp): read beside AU's gfx906 line, not
# from a set's paste; the hang is a user's line from a public ROCm thread, the others the format filled in

def test_rocrs_hardware_exception_is_read_with_its_cause():
    hang = "HW Exception by GPU node-1 (Agent handle: 0x12e78350) reason :GPU Hang\nAborted (core dumped)"
    assert "rocr_vm_fault:hw-exception-gpu-hang" in message_ids(hang)
    ecc = message_ids("HW Exception by GPU node-1 (Agent handle: 0x5627e0a3c1d0) reason :ECC")
    assert "rocr_vm_fault:hw-exception-ecc" in ecc and "rocr_vm_fault:hw-exception-gpu-hang" not in ecc


def test_a_queue_stopped_by_an_async_error_is_read_beside_the_status_that_names_it():
    text = ("Queue at 0x7f3e5c200000 inactivated due to async error:\n\tHSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: "
            "The agent attempted to access memory beyond the largest legal address.")
    assert {"rocr_vm_fault:queue-inactivated-async-error", "hsa:HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION"} <= message_ids(text)


def test_rocms_amdgpu_only_added_in_dkms_status_is_named_as_why(tmp_path):
    assert "dkms:status-module" in message_ids(read_paste(RADEON_PRO))
    (f,) = fired("amdgpu-kernel-userspace-incompatible", ticket_file_facts(tmp_path, RADEON_PRO))
    assert "amdgpu 4.3-52.el7 only added (line 20)" in f.message


def test_rocms_amdgpu_installed_is_not_called_only_added(tmp_path):
    # edited: dkms 2's line for a module built and installed for a kernel
    text = read_paste(RADEON_PRO).replace("amdgpu, 4.3-52.el7: added", "amdgpu, 4.3-52.el7, 4.18.0-305.el8.x86_64, x86_64: installed")
    assert "dkms:status-module" in message_ids(text)
    (f,) = fired("amdgpu-kernel-userspace-incompatible", ticket_file_facts(tmp_path, RADEON_PRO, text))
    assert "only added" not in f.message


def test_dkms_status_lines_of_both_formats_are_read_and_an_apt_line_is_not():
    lines = {"amdgpu/6.3.6-1697589.22.04, 6.8.0-49-generic, x86_64: installed": "installed",   # dkms 3
             "nvidia, 470.57.02, 5.4.0-80-generic, x86_64: installed": "installed",            # dkms 2
             "zfs/2.1.5: broken": "broken"}
    for line, state in lines.items():
        (s,) = [m for m in find_messages(line) if m["id"] == "dkms:status-module"]
        assert s["state"] == state
    assert "dkms:status-module" not in message_ids("Package foo: installed")


# --- cudarc's libcuda (set AR's cudarc#255, a proposed symbol left open last session) ----------------

CUDARC = FIXTURES / "tickets_blind_ar" / "cudarc-255-libcuda-not-on-loader-path-wsl.txt"
OMPI_HEALTHY = FIXTURES / "tickets_blind_w" / "ompi-6896-libcuda-missing-cuda-aware-disabled-healthy.txt"


def test_cudarc_finding_no_libcuda_names_the_driver_library_and_wsl(tmp_path):
    (f,) = fired("cuda-driver-library-not-found", ticket_file_facts(tmp_path, CUDARC))
    assert "unversioned libcuda.so" in f.message and "/usr/lib/wsl/lib" in f.fix


def test_cudarcs_later_words_for_a_toolkit_library_are_the_runtime_library_missing(tmp_path):
    # edited: cudarc 0.11.6's panic for cuBLAS in place of 0.11.5's for the driver
    text = read_paste(CUDARC).replace('Unable to find cuda lib under the names ["cuda", "nvcuda"]. Please open GitHub issue.',
                                  'Unable to dynamically load the "cublas" shared library - searched for library names: '
                                  '["cublas", "cublas64"].').replace("# Unable to find cuda lib", "# cublas")
    facts = ticket_file_facts(tmp_path, CUDARC, text)
    assert not fired("cuda-driver-library-not-found", facts)
    (f,) = fired("cuda-runtime-library-missing", facts)
    assert f.severity == "info" and f.message.startswith("cudarc could not load libcublas")


CUDARC_NAME_LIST = FIXTURES / "tickets_blind_al" / "cudarc-246-nvrtc-dll-name-list-lacks-cuda-12-5-healthy.txt"


def test_cudarcs_own_name_list_missing_a_release_is_a_hint_not_a_fault(tmp_path):
    # set AL's healthy control: cudarc 0.11.4 did not try CUDA 12.5's nvrtc64_120_0.dll (cudarc#246)
    (f,) = fired("cuda-runtime-library-missing", ticket_file_facts(tmp_path, CUDARC_NAME_LIST))
    assert f.severity == "info" and "names it tried" in f.message
    assert "where nvrtc64*.dll" in f.fix and "cargo update -p cudarc" in f.fix


def test_open_mpis_libcuda_warning_on_a_machine_without_cuda_is_not_the_driver_missing(tmp_path):
    assert "libraries:libcuda" in message_ids(read_paste(OMPI_HEALTHY))
    assert not fired("cuda-driver-library-not-found", ticket_file_facts(tmp_path, OMPI_HEALTHY))
