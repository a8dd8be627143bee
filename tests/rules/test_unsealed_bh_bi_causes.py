"""Causes and non-causes the pastes of sets BH and BI (unsealed 2026-11-30), and of proposed classes of
BF and BG built the same session, show in their emitters' own words, each read from the real paste; where a
variant is needed, the real paste is edited in memory and the edit is said."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, read_paste, run_rule, ticket_file_facts

BH = FIXTURES / "tickets_blind_bh"
BI = FIXTURES / "tickets_blind_bi"

AMD_SMI_UDEV = BH / "amdsmi-125-group-check-ignores-udev-healthy.txt"
KMCUDA = BH / "kmcuda-80-device-parameter-missed-p2p-warnings-healthy.txt"
DISTSERVE = BH / "distserve-39-rtx-4090-no-p2p.txt"
AWS_ICE = BH / "openshift-hybridizer-9-aws-insufficient-instance-capacity.txt"
OCI_HOST = BH / "oci-cloudnative-110-out-of-host-capacity.txt"
PEERMEM = BH / "nv-peer-memory-46-module-not-loaded-at-boot.txt"
VLLM_RAY = BI / "vllm-3190-ray-driver-node-without-gpu.txt"
DNNL_BF16 = BI / "geti-v2-1328-dnnl-bf16-backward-unsupported-on-cpu.txt"


def _ids(text: str) -> set:
    return {s["id"] for s in find_messages(text)}


# --- amd-smi's group check ----------------------------------------------------------------------------

def test_amd_smi_stopping_on_groups_where_rocminfo_works_is_amd_smis_own_check(tmp_path):
    (f,) = fired("gpu-device-permission-denied", ticket_file_facts(tmp_path, AMD_SMI_UDEV))
    assert f.severity == "info" and "rocminfo works" in f.message and "ROCm/amdsmi#125" in f.message
    assert "ls -l /dev/kfd" in f.fix and "7.1.1" in f.fix


def test_amd_smi_stopping_on_groups_without_that_word_stays_an_error(tmp_path):
    # edited: the sentence that rocm-smi and rocminfo work is gone
    text = read_paste(AMD_SMI_UDEV).replace("both `rocm-smi` and `rocminfo` work fine, but ", "")
    (f,) = fired("gpu-device-permission-denied", ticket_file_facts(tmp_path, AMD_SMI_UDEV, text))
    assert f.severity == "error" and "usermod" in f.fix


def test_rocminfo_failing_is_not_read_as_working():
    # edited: the user says rocminfo does not work
    text = read_paste(AMD_SMI_UDEV).replace("both `rocm-smi` and `rocminfo` work fine", "`rocminfo` does not work")
    assert "prose:rocminfo-works-said" not in _ids(text)
    # edited: rocminfo starts but the sentence goes on to what it did not show
    text = read_paste(AMD_SMI_UDEV).replace("both `rocm-smi` and `rocminfo` work fine", "`rocminfo` runs, lists no GPU agent")
    assert "prose:rocminfo-works-said" not in _ids(text)


# --- GPU peer access ------------------------------------------------------------------------------------

def test_a_program_that_warned_about_peer_access_and_went_on_is_an_info(tmp_path):
    (f,) = fired("gpu-peer-access-unsupported", ticket_file_facts(tmp_path, KMCUDA))
    assert f.severity == "info" and "warning: failed to enable p2p" in f.message
    assert "NCCL_P2P_DISABLE" not in f.fix and "topo -p2p" in f.fix


def test_the_same_refusal_raised_as_an_error_stays_an_error(tmp_path):
    # edited: the program raises torch's error instead of warning
    text = read_paste(KMCUDA).replace("warning: failed to enable p2p on gpu #0: peer access",
                                      "RuntimeError: CUDA error: peer access", 1)
    (f,) = fired("gpu-peer-access-unsupported", ticket_file_facts(tmp_path, KMCUDA, text))
    assert f.severity == "error"


def test_distserves_own_words_for_peer_access_unsupported(tmp_path):
    (f,) = fired("gpu-peer-access-unsupported", ticket_file_facts(tmp_path, DISTSERVE))
    assert f.severity == "error" and "Peer-to-peer access is unsupported" in f.message


def test_distserves_words_are_read_on_its_worker_line_alone():
    # edited: the title gone, DistServe's worker line remains
    text = read_paste(DISTSERVE).replace("# Error: Peer-to-peer access is unsupported on this platform\n", "")
    assert "gpu_p2p_apps:distserve-p2p-unsupported" in _ids(text)


# --- cloud capacity -------------------------------------------------------------------------------------

def test_ec2_insufficient_capacity_under_ansible(tmp_path):
    (f,) = fired("cloud-instance-capacity-unavailable", ticket_file_facts(tmp_path, AWS_ICE))
    assert f.message.startswith("EC2 has no capacity") and "quota" in f.message
    assert "describe-instance-type-offerings" in f.fix


def test_ec2s_reason_on_a_parallelcluster_node_names_the_instance_type(tmp_path):
    # edited: the same code as ParallelCluster's Slurm resume puts it in a node's reason, with the type
    text = read_paste(AWS_ICE).replace(
        "# AWS stops build with \"InsufficientInstanceCapacity\" error",
        "# nodes down").replace("Instance creation failed => InsufficientInstanceCapacity: Insufficient capacity for "
                                "instance type m5.xlarge", "(Code:InsufficientInstanceCapacity)Failure when resuming "
                                "nodes for instance type p4d.24xlarge")
    (f,) = fired("cloud-instance-capacity-unavailable", ticket_file_facts(tmp_path, AWS_ICE, text))
    assert "p4d.24xlarge" in f.message and "Values=p4d.24xlarge" in f.fix


def test_oracle_clouds_out_of_host_capacity(tmp_path):
    (f,) = fired("cloud-instance-capacity-unavailable", ticket_file_facts(tmp_path, OCI_HOST))
    assert f.message.startswith("Oracle Cloud") and "availability-domain" in f.fix


def test_a_quota_error_is_not_a_capacity_shortage(tmp_path):
    # edited: EC2's quota refusal in place of the capacity one
    text = read_paste(AWS_ICE).replace("InsufficientInstanceCapacity: Insufficient capacity for instance type m5.xlarge",
                                       "VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU "
                                       "limit").replace("\"InsufficientInstanceCapacity\"", "\"VcpuLimitExceeded\"")
    assert not fired("cloud-instance-capacity-unavailable", ticket_file_facts(tmp_path, AWS_ICE, text))


# --- GPUDirect RDMA peer memory -------------------------------------------------------------------------

def test_peer_memory_module_installed_but_not_loaded(tmp_path):
    (f,) = fired("gpudirect-peer-memory-module-not-loaded", ticket_file_facts(tmp_path, PEERMEM))
    assert "nv_peer_mem" in f.message and "/lib/modules/4.15.0-46-generic/updates/dkms/nv_peer_mem.ko" in f.message
    assert "/etc/modules-load.d/nv_peer_mem.conf" in f.fix and "modprobe nv_peer_mem" in f.fix


def test_a_peer_memory_module_that_is_loaded_is_not_a_finding(tmp_path):
    # edited: the user says it stays loaded
    text = read_paste(PEERMEM).replace("# nv_peer_mem dissapearing after a reboot", "# nv_peer_mem question").replace(
        "nv_peer_mem isn't found in lsmod but does show up with modinfo", "nv_peer_mem is loaded fine")
    assert not fired("gpudirect-peer-memory-module-not-loaded", ticket_file_facts(tmp_path, PEERMEM, text))


# --- vLLM on Ray ----------------------------------------------------------------------------------------

def test_vllm_engine_on_a_ray_node_without_gpus(tmp_path):
    (f,) = fired("ray-driver-without-gpu", ticket_file_facts(tmp_path, VLLM_RAY))
    assert "Ray node" in f.message and "ray status" in f.fix and "VLLM_HOST_IP" in f.fix


def test_vllms_placement_group_timeout_is_read_but_is_not_the_driver_node(tmp_path):
    # edited: vLLM's other Ray refusal, the placement group never ready
    text = read_paste(VLLM_RAY).replace(
        "Ray does not allocate any GPUs on the driver node. Consider adjusting the Ray placement group or running the "
        "driver on a GPU node.", "ValueError: Cannot provide a placement group of placement_group_specs=[{'GPU': 1.0}, "
                                 "{'GPU': 1.0}] within 1800 seconds. See `ray status` to make sure the cluster has "
                                 "enough resources.")
    assert "vllm_ray:placement-group-not-ready" in _ids(text)
    assert not fired("ray-driver-without-gpu", ticket_file_facts(tmp_path, VLLM_RAY, text))


# --- bf16 on a CPU without it -----------------------------------------------------------------------------

def test_ideep_refusing_bf16_backward_on_avx2_vnni_2(tmp_path):
    (f,) = fired("bf16-unsupported", ticket_file_facts(tmp_path, DNNL_BF16))
    assert "avx2_vnni_2" in f.message and "backward" in f.message
    assert "model.float()" in f.fix and "get_cpu_capability" in f.fix


def test_torchs_mkldnn_bf16_path_refusal_names_the_op_and_the_instructions(tmp_path):
    # edited: torch's own mkldnn refusal (pytorch/pytorch#99423's) in place of ideep's
    text = read_paste(DNNL_BF16).replace(
        "DNNL does not support bf16/f16 backward on the platform with avx2_vnni_2",
        "mkldnn_reorder_linear_weight: bf16 path needs the cpu support avx512bw, avx512vl and avx512dq")
    (f,) = fired("bf16-unsupported", ticket_file_facts(tmp_path, DNNL_BF16, text))
    assert "mkldnn_reorder_linear_weight" in f.message and "avx512bw, avx512vl and avx512dq" in f.message


def test_ipexs_prepack_refusal_answers_with_ipexs_own_options(tmp_path):
    # edited: Intel's extension's assertion (intel/llm-on-ray#255's)
    text = read_paste(DNNL_BF16).replace(
        "RuntimeError: DNNL does not support bf16/f16 backward on the platform with avx2_vnni_2",
        "AssertionError: BF16 weight prepack needs the cpu support avx512bw, avx512vl and avx512dq")
    (f,) = fired("bf16-unsupported", ticket_file_facts(tmp_path, DNNL_BF16, text))
    assert "ipex.optimize" in f.fix and "weights_prepack=False" in f.fix


def test_a_bf16_forward_on_a_cpu_that_has_it_is_not_refused(tmp_path):
    # edited: oneDNN's verbose header of a CPU with AMX bf16, no refusal
    text = read_paste(DNNL_BF16).replace(
        "`RuntimeError: DNNL does not support bf16/f16 backward on the platform with avx2_vnni_2`",
        "onednn_verbose,info,cpu,isa:Intel AVX-512 with float16, Intel DL Boost and bfloat16 support and Intel AMX "
        "with bfloat16 and 8-bit integer support")
    assert "onednn:verbose-cpu-isa" in _ids(text)
    findings, _not_judged = run_rule("bf16-unsupported", ticket_file_facts(tmp_path, DNNL_BF16, text))
    assert findings == []   # no refusal read: not judged without the environment, never a finding


# --- DKMS ---------------------------------------------------------------------------------------------

VOID_470 = BH / "void-packages-53759-nvidia470-too-old-for-kernel-6-12.txt"


def test_make_logs_last_lines_are_a_dkms_build_that_failed_for_that_kernel(tmp_path):
    (f,) = fired("dkms-module-build-failed", ticket_file_facts(tmp_path, VOID_470))
    assert "nvidia 470.239.06 for kernel 6.12.7_1" in f.message and "Chyba 2" in f.message
    assert "/var/lib/dkms/nvidia/470.239.06/build/make.log" in f.fix


def test_a_sub_make_failing_outside_a_dkms_tree_is_not_a_dkms_build():
    # edited: the same make line for a module built in the user's own directory
    text = read_paste(VOID_470).replace("/var/lib/dkms/nvidia/470.239.06/build]", "/home/u/src/mymod]")
    assert "dkms:kbuild-module-dir-failed" not in _ids(text)


# --- earlier sets' proposed classes, built in the same session --------------------------------------

BF = FIXTURES / "tickets_blind_bf"
BG = FIXTURES / "tickets_blind_bg"
STATIC_LAPACK = BG / "sharc-33-static-lapack-without-blas-undefined-reference.txt"
PIP_CONFLICT = BG / "mvdream-threestudio-29-pip-conflict-xformers-needs-newer-torch.txt"
MATLAB_114 = BG / "matlab-integration-for-jupyter-12-license-manager-too-old-for-r2024b.txt"
MODULE_PATH = BG / "peppy-26-loaded-rseqc-module-on-python-path.txt"
NETCDF_SERIAL = BF / "spack-20349-py-netcdf4-without-mpi-netcdf-c.txt"


def test_undefined_blas_routines_in_a_spanish_link_log(tmp_path):
    (f,) = fired("blas-library-not-linked", ticket_file_facts(tmp_path, STATIC_LAPACK))
    assert "dgemv_" in f.message and "dtrmv_" in f.message and "-llapack -lblas" in f.fix
    assert "dgemv," not in f.message   # the user's own retelling without the underscore is not a symbol


def test_undefined_lapack_routines_are_not_blas():
    # edited: the link misses LAPACK's own routines, not the BLAS
    from hpcdoctor.rules.blas_link import blas_routine
    assert blas_routine("dgetrf_") is None and blas_routine("dsyev_") is None
    assert blas_routine("dgemm_") == "dgemm" and blas_routine("cblas_zgemm") == "zgemm" and blas_routine("dgemm") is None


def test_a_program_symbol_undefined_is_not_a_blas(tmp_path):
    text = read_paste(STATIC_LAPACK).replace("dgemv_", "sharc_step_").replace("dtrmv_", "sharc_init_")
    assert not fired("blas-library-not-linked", ticket_file_facts(tmp_path, STATIC_LAPACK, text))


def test_pip_conflict_names_the_users_pin_and_the_release_that_needs_another(tmp_path):
    (f,) = fired("pip-dependency-conflict", ticket_file_facts(tmp_path, PIP_CONFLICT))
    assert f.severity == "info"   # the request cannot be met anywhere: not the node's fault
    assert "you asked for torch==2.0.0" in f.message and "xformers 0.0.26.post1 depends on torch==2.3.0" in f.message
    assert "pip index versions xformers" in f.fix and "--dry-run torch==2.0.0" in f.fix


def test_pip_conflict_between_two_releases_without_a_user_pin(tmp_path):
    # edited: no requirement of the user's own in the causes, two releases that disagree on torch
    text = read_paste(PIP_CONFLICT).replace("The user requested torch==2.0.0", "torchaudio 2.0.1 depends on torch==2.0.0")
    (f,) = fired("pip-dependency-conflict", ticket_file_facts(tmp_path, PIP_CONFLICT, text))
    assert "another release needs torch" in f.message


def test_a_pip_that_resolved_is_not_a_conflict(tmp_path):
    # edited: the causes remain as text, pip's refusal is gone
    text = read_paste(PIP_CONFLICT).replace("because these package versions have conflicting dependencies.", "succeeded.")
    assert not fired("pip-dependency-conflict", ticket_file_facts(tmp_path, PIP_CONFLICT, text))


def test_matlabs_license_manager_error_114_is_a_license_older_than_the_release(tmp_path):
    (f,) = fired("license-too-old-for-release", ticket_file_facts(tmp_path, MATLAB_114))
    assert "-114, LM_SIGN_REQ" in f.message and "lmutil lmstat" in f.fix


def test_matlabs_license_server_down_is_not_a_license_too_old(tmp_path):
    # edited: License Manager Error -15 (the server cannot be reached) in place of -114
    text = read_paste(MATLAB_114).replace("License Manager Error -114", "License Manager Error -15")
    facts = ticket_file_facts(tmp_path, MATLAB_114, text)
    assert not fired("license-too-old-for-release", facts) and fired("license-server-unreachable", facts)


def test_pip_refused_inside_a_loaded_modules_tree_is_answered_with_unloading_it(tmp_path):
    (f,) = fired("site-packages-not-writable", ticket_file_facts(tmp_path, MODULE_PATH))
    assert "RSeQC/2.6.4" in f.message and "module unload RSeQC/2.6.4" in f.fix


def test_pip_refused_in_the_shared_pythons_own_site_packages_is_not_a_module_tree(tmp_path):
    # edited: the denied path is the shared Python module's own site-packages
    text = read_paste(MODULE_PATH).replace("/cm/shared/apps/RSeQC/2.6.4/cm/shared/apps/python/2.7.6/",
                                           "/cm/shared/apps/python/2.7.6/")
    (f,) = fired("site-packages-not-writable", ticket_file_facts(tmp_path, MODULE_PATH, text))
    assert "module unload" not in f.fix and "venv" in f.fix


def test_netcdf4_python_built_against_a_serial_netcdf_c(tmp_path):
    (f,) = fired("library-built-without-mpi", ticket_file_facts(tmp_path, NETCDF_SERIAL))
    assert "netcdf-c without parallel" in f.message and "py-netcdf4+mpi" in f.fix


def test_h5pys_serial_build_gets_h5pys_own_build_options(tmp_path):
    # edited: h5py's refusal of the mpio driver in place of netCDF4's
    text = read_paste(NETCDF_SERIAL).replace("ValueError: parallel mode requires MPI enabled netcdf-c",
                                             "ValueError: h5py was built without MPI support, can't use mpio driver")
    (f,) = fired("library-built-without-mpi", ticket_file_facts(tmp_path, NETCDF_SERIAL, text))
    assert "HDF5_MPI=ON" in f.fix and "nc-config" not in f.fix


def test_netcdf4s_file_format_refusal_of_parallel_mode_is_not_a_serial_build(tmp_path):
    # edited: netCDF4's refusal of parallel mode for a file format (a parallel build's own), not the build's
    text = read_paste(NETCDF_SERIAL).replace("parallel mode requires MPI enabled netcdf-c",
                                             "parallel mode only works with the following formats: NETCDF4")
    assert "parallel_io_builds:netcdf4-parallel-needs-mpi-netcdf-c" not in _ids(text)
    assert not fired("library-built-without-mpi", ticket_file_facts(tmp_path, NETCDF_SERIAL, text))


def test_a_constraint_the_user_gave_is_read_as_their_pin(tmp_path):
    # set AR's xformers#1374 (a healthy control: the wheel pins torch exactly): pip's "(constraint)" form
    paste = FIXTURES / "tickets_blind_ar" / "xformers-1374-wheel-pins-torch-2-10-healthy.txt"
    (f,) = fired("pip-dependency-conflict", ticket_file_facts(tmp_path, paste))
    assert f.severity == "info" and "you asked for torch==2.11.0.dev20260124+cu130" in f.message
    assert "xformers 0.0.34 depends on torch==2.10.0" in f.message


SLURMDBD_TABLES = BF / "slurm-docker-cluster-9-cluster-not-registered-in-slurmdbd.txt"


def test_slurmdbd_without_the_clusters_tables_names_the_cluster_to_add(tmp_path):
    (f,) = fired("slurm-cluster-not-registered-in-slurmdbd", ticket_file_facts(tmp_path, SLURMDBD_TABLES))
    assert "cluster linux" in f.message and "sacctmgr -i add cluster linux" in f.fix


def test_a_global_accounting_table_missing_is_not_a_cluster_never_added(tmp_path):
    # edited: a table every cluster shares (qos_table) is missing: a damaged or uninitialised database instead
    text = read_paste(SLURMDBD_TABLES).replace("slurm_acct_db.linux_job_table", "slurm_acct_db.qos_table")
    assert "slurmdbd_mysql:cluster-table-missing" not in _ids(text)
    assert not fired("slurm-cluster-not-registered-in-slurmdbd", ticket_file_facts(tmp_path, SLURMDBD_TABLES, text))
