"""GPUs shared with other work: a compute mode that refuses a second process, an MPS daemon a client
cannot reach, the run-time limit on kernels of a GPU that drives a display (GPU010, GPU021,
GPU022), a CUDA feature MPS does not support (GPU046). Memory another process holds at start is gpu_memory_held.py (GPU011)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, facts_or_ticket, told_evidence, told_text
from hpcdoctor.rules._compute_mode_told import INFO, engine_told
from hpcdoctor.rules._gpu import gpu_list, subject


@rule("GPU010", "compute-mode-restricted", "warning", "GPU compute mode restricts processes", impact=6,
      also={"error": "the compute mode is Prohibited",
            "info": "an application's refusal only consistent with a compute mode (OpenMM's, NAMD's)"})
def compute_mode_restricted(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU in compute mode Prohibited (no process may use it), or Exclusive_Process while
        several ranks on the node are set to share GPUs. In a pasted ticket, CUDA's error 46, "all
        CUDA-capable devices are busy or unavailable" (since CUDA 11 "CUDA-capable device(s) is/are
        busy or unavailable"), unless the same paste shows a kernel that faulted before it (an
        unspecified launch failure, a launch time-out, an illegal address): a GPU left unusable
        by that fault until a reset says nothing of its compute mode. GROMACS's GPU status
        "unavailable" (its name for that CUDA error) likewise; OpenMM's "No compatible CUDA device is
        available" / "The requested CUDA device could not be loaded" and NAMD's "all devices are in
        prohibited mode, ... or otherwise unusable" as info only: their sources throw them for other
        causes too (no free memory, a driver refusing contexts, an old or small GPU).

    Why it matters:
        Prohibited makes the GPU unusable; Exclusive_Process lets only one process create a
        context, so a second rank (or a DataLoader worker that touches CUDA) fails with "all
        CUDA-capable devices are busy or unavailable".

    How to fix:
        Give each rank its own GPU (srun --gpus-per-task=1) or ask the administrators to set the
        Default mode (nvidia-smi -c DEFAULT).

    References:
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html
        - https://github.com/openmm/openmm/blob/master/platforms/cuda/src/CudaContext.cpp (CudaContext: cuCtxCreate on each GPU)
        - https://github.com/gromacs/gromacs/blob/main/src/gromacs/hardware/device_information.h (DeviceStatus::Unavailable)
        - https://github.com/openmm/openmm/issues/2840 (exclusive-process GPUs on a university cluster)
    """
    said = [s for s in catalogued(f, "compute-mode-restricted") if not _after_kernel_fault(f, s)]
    # a message that states the refusal (CUDA's, GROMACS's) before one only consistent with it (OpenMM's)
    said.sort(key=lambda s: s.get("id") in INFO)
    told = ((engine_told(s) or _busy_told(s)) for s in said[:1])
    yield from facts_or_ticket(lambda: list(_compute_mode_from_facts(f)), told)


# A kernel that faulted or was killed (by the display's watchdog, an illegal access) can leave the
# GPU unusable until a reset: the next run's "busy or unavailable" is that fault's consequence, not a
# compute mode (blind set E's neuraltalk2-127: "unspecified launch failure", then busy until reboot).
_KERNEL_FAULTS = frozenset(
    f"{fam}:{key}" for fam, keys in (
        ("cuda", ("cudaErrorLaunchFailure", "cudaErrorPriorLaunchFailure", "cudaErrorLaunchTimeout",
                  "cudaErrorIllegalAddress", "cudaErrorHardwareStackError", "cudaErrorIllegalInstruction",
                  "cudaErrorMisalignedAddress", "cudaErrorInvalidPc")),
        ("cuda_driver", ("CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_ILLEGAL_ADDRESS",
                         "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
                         "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_INVALID_PC"))) for key in keys)


def _after_kernel_fault(f: FactView, busy: dict) -> bool:
    line = busy.get("line") or 0
    return any(s.get("id") in _KERNEL_FAULTS and (s.get("line") or 0) <= line
               for s in f.get("ticket.symptoms") or [])


def _busy_told(s):
    return Hit(message=f"CUDA found every GPU busy or unavailable (line {s.get('line')}: \"{told_text(s)}\"): "
                       "a GPU in Exclusive_Process mode already used by another process, or in Prohibited mode",
               fix="nvidia-smi --query-gpu=index,compute_mode --format=csv   # Exclusive_Process or Prohibited?\n"
                   "nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv   # the process that holds it",
               evidence=told_evidence(s))


def _compute_mode_from_facts(f: FactView):
    from hpcdoctor.rules._common import local_ranks

    gpus = gpu_list(f)
    ranks = local_ranks(f)
    for g in gpus:
        mode = g.get("compute_mode")
        if mode == "Prohibited":
            yield Hit(message="compute mode Prohibited: no process can use this GPU", subject=subject(g),
                      fix="nvidia-smi -i %s -c DEFAULT   # admins" % g.get("index"), evidence={"compute_mode": mode},
                      severity="error")
        elif mode in ("Exclusive_Process", "Exclusive_Thread") and ranks > len(gpus):
            yield Hit(message=f"compute mode {mode} with {ranks} local ranks for {len(gpus)} GPU(s): ranks cannot share it",
                      subject=subject(g), fix="srun --gpus-per-task=1 python train.py   # one rank per GPU",
                      evidence={"compute_mode": mode, "local_ranks": ranks})


@rule("GPU021", "mps-client-cannot-connect", "error", "CUDA cannot reach the MPS control daemon or server", impact=7)
def mps_client_cannot_connect(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, CUDA's error 805 (cudaErrorMpsConnectionFailed,
        CUDA_ERROR_MPS_CONNECTION_FAILED): "MPS client failed to connect to the MPS control daemon or
        the MPS server", as torch, the CUDA samples or the driver API print it.

    Why it matters:
        An MPS control daemon runs on the node, so CUDA tries to go through it, but this process
        cannot reach its named pipes and sockets: they live in CUDA_MPS_PIPE_DIRECTORY
        (/tmp/nvidia-mps by default), which must be the same for the daemon and every client. A
        client in a container without that directory, or with another CUDA_MPS_PIPE_DIRECTORY, or a
        daemon that died, leaves every CUDA call failing.

    How to fix:
        Check the daemon (echo get_server_list | nvidia-cuda-mps-control) and its pipe directory;
        give the client the daemon's CUDA_MPS_PIPE_DIRECTORY (in a container, mount the host's
        directory at the same path), or stop MPS (echo quit | nvidia-cuda-mps-control) to run
        without it.

    References:
        - https://docs.nvidia.com/deploy/mps/latest/appendix-environment-variables.html
        - https://docs.nvidia.com/deploy/topics/topic_6_1_2_2.html
    """
    for s in catalogued(f, "mps-client-cannot-connect")[:1]:
        yield Hit(message=f"CUDA could not connect to the MPS control daemon or server (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): the client does not reach the daemon's pipes",
                  fix=("echo get_server_list | nvidia-cuda-mps-control   # on the host: is the control daemon up?\n"
                       "ls -l ${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}   # its pipes and sockets: the client needs "
                       "this same directory (same CUDA_MPS_PIPE_DIRECTORY)\n"
                       "# in a container mount it at the same path: docker run -v /tmp/nvidia-mps:/tmp/nvidia-mps ...; "
                       "or stop MPS: echo quit | nvidia-cuda-mps-control"),
                  evidence=told_evidence(s))


@rule("GPU022", "gpu-display-watchdog", "error", "a kernel ran past the run-time limit of a GPU that drives a display",
      impact=6)
def gpu_display_watchdog(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, CUDA's error 702 (cudaErrorLaunchTimeout, CUDA_ERROR_LAUNCH_TIMEOUT; error 6
        in the old runtime torch's THC printed): "the launch timed out and was terminated".

    Why it matters:
        CUDA returns it only where the GPU has a run-time limit on kernels (the device property
        kernelExecTimeoutEnabled; deviceQuery's "Run time limit on kernels: Yes"; numba's
        "Watchdog: Enabled"), which a GPU that also drives a display has: the desktop (X on Linux,
        WDDM on Windows) must stay responsive, so a kernel that runs for seconds is killed. The
        CUDA context is lost; the same job runs on a GPU that drives no display.

    How to fix:
        nvidia-smi -q shows "Display Mode" and "Display Active" for each GPU. Run on a GPU with no
        display (CUDA_VISIBLE_DEVICES), move the display to another GPU, or run without the
        desktop; otherwise make each kernel shorter (a smaller batch or image).

    References:
        - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
        - https://docs.nvidia.com/cuda/cuda-runtime-api/structcudaDeviceProp.html
        - https://github.com/numba/numba/issues/9381 (the watchdog of a GPU that drives the display)
    """
    for s in catalogued(f, "gpu-display-watchdog")[:1]:
        yield Hit(message=f"a CUDA kernel ran past the GPU's run-time limit and was terminated (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): the limit is on where the GPU also drives a display",
                  fix=("nvidia-smi -q | grep -E 'Product Name|Display (Mode|Active)'   # Enabled/Active: this GPU drives "
                       "a display and kills long kernels\n"
                       "# run on a GPU without a display (CUDA_VISIBLE_DEVICES=<its index>), move the display to another "
                       "GPU or run without the desktop; else a smaller batch makes each kernel shorter"),
                  evidence=told_evidence(s))


# CUDA's answers for a feature the configuration does not support (cuda.toml, cuda_driver.toml): MPS
# returns "operation not supported" where it refuses a feature (a module using dynamic parallelism
# fails to load), and CUDA 12 added the dynamic-parallelism error whose doc comment names MPS.
_NOT_SUPPORTED = frozenset(("cuda:cudaErrorNotSupported", "cuda_driver:CUDA_ERROR_NOT_SUPPORTED",
                            "cuda:cudaErrorCdpNotSupported", "cuda_driver:CUDA_ERROR_CDP_NOT_SUPPORTED"))
_CDP = frozenset(("cuda:cudaErrorCdpNotSupported", "cuda_driver:CUDA_ERROR_CDP_NOT_SUPPORTED"))
# What NVIDIA's MPS documentation (When to Use MPS > Considerations > Application Considerations,
# read 2026-11-28) says MPS does not support.
_MPS_LIMITS = ("dynamic parallelism (any MPS: a module that uses it fails to load), and on pre-Volta MPS clients "
               "stream callbacks, CUDA graphs with host nodes, the Video Codec SDK and page-locked host memory beyond "
               "the size of /dev/shm (on Tegra also cooperative group launches and CUDA IPC)")


@rule("GPU046", "mps-unsupported-cuda-feature", "error", "A CUDA feature that MPS does not support fails under MPS",
      impact=6)
def mps_unsupported_cuda_feature(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a CUDA call failing with "operation not supported"
        (CUDA_ERROR_NOT_SUPPORTED, cudaErrorNotSupported, 801) or with CUDA 12's dynamic
        parallelism error (CUDA_ERROR_CDP_NOT_SUPPORTED, cudaErrorCdpNotSupported, 811: "the
        current configuration, like MPS, does not support it"), where the same paste shows MPS in
        use: the nvidia-cuda-mps-server process, nvidia-cuda-mps-control, CUDA_MPS_PIPE_DIRECTORY
        or CUDA_MPS_LOG_DIRECTORY, or a line of MPS's control or server log
        (knowledge/messages/mps.toml).

    Why it matters:
        MPS is a different implementation of the CUDA API with documented gaps: dynamic parallelism
        is not supported at all (CUDA module load fails if the module uses it: cuModuleLoadData
        returns "operation not supported"); pre-Volta MPS clients also lack stream callbacks, CUDA
        graphs with host nodes, the Video Codec SDK, and are limited to /dev/shm's size of
        page-locked memory. The same program works without MPS, so the error reads like a bug or a
        driver fault when it is the sharing set-up.

    How to fix:
        Run the job without MPS (stop the daemon: echo quit | nvidia-cuda-mps-control, as the user
        or administrator who started it, or use a GPU or node where no MPS daemon runs), or build
        the kernel without the feature (no device-side launches or device-side
        cudaDeviceSynchronize; no host nodes or stream callbacks before Volta).

    References:
        - https://docs.nvidia.com/deploy/mps/ (When to Use MPS > Considerations > Application Considerations; Appendix: Common Tasks)
        - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (cudaErrorNotSupported, cudaErrorCdpNotSupported)
        - https://github.com/heterodb/pg-strom/issues/348
    """
    failed = [s for s in catalogued(f, "mps-unsupported-cuda-feature") if s.get("id") in _NOT_SUPPORTED]
    mps = next((s for s in f.get("ticket.symptoms") or []
                if isinstance(s, dict) and str(s.get("id", "")).startswith("mps:")), None)
    if not failed or mps is None:
        return
    s = next((t for t in failed if t.get("id") in _CDP), failed[0])
    text = told_text(s)
    load = "moduleload" in text.lower().replace("_", "")
    why = ("a module that uses dynamic parallelism cannot load under MPS" if load or s.get("id") in _CDP
           else "the call uses a feature MPS does not support")
    yield Hit(message=f"line {s.get('line')}: \"{text}\" while MPS is in use (line {mps.get('line')}: "
                      f"\"{told_text(mps)}\"): {why}. MPS does not support {_MPS_LIMITS}",
              fix=("echo get_server_list | nvidia-cuda-mps-control   # a server listed: this node's GPU work goes "
                   "through MPS\n"
                   "echo quit | nvidia-cuda-mps-control   # stop MPS (as the user or admin who started it), then rerun "
                   "the job without it\n"
                   "# or keep MPS and drop the feature: no device-side kernel launches or device-side "
                   "cudaDeviceSynchronize (dynamic parallelism); before Volta no stream callbacks or graph host nodes"),
              evidence={**told_evidence(s), "mps.line": mps.get("line"), "mps.message": mps.get("id")})
