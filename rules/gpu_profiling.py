"""GPU profiling refused because the NVIDIA driver keeps the GPU performance counters to administrators:
read from every NVIDIA tool's ERR_NVGPUCTRPERM, from CUPTI's CUPTI_ERROR_INSUFFICIENT_PRIVILEGES by name
or by its number on a line that names CUPTI (knowledge/messages/gpu_profiling.toml), and from a pasted
/proc/driver/nvidia/params line "RmProfilingAdminOnly: 1"."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, cuda_gpus, told_evidence, told_text

SYMBOL = "gpu-profiling-restricted-to-admins"
_PARAMS = "gpu_profiling:rm-profiling-admin-only"
_HYPERVISOR = "gpu_profiling:CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES"

# NVIDIA's ERR_NVGPUCTRPERM page: the module option, the initramfs that carries it, and the capability
# that lets one run through without changing the node.
_FIX = ("grep RmProfilingAdminOnly /proc/driver/nvidia/params   # 1: the driver keeps the GPU performance counters "
        "to administrators (root, CAP_SYS_ADMIN; CAP_PERFMON from driver R565)\n"
        "# ask the site to allow profiling on this node, or to run the profiler for you with the privileges it needs; "
        "administrators (NVIDIA's ERR_NVGPUCTRPERM page), effective when the nvidia module is next loaded:\n"
        "echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | sudo tee /etc/modprobe.d/nvidia-profiling.conf   "
        "# then rebuild the initramfs (sudo update-initramfs -u; dracut --regenerate-all -f on RHEL) and reboot\n"
        "# in a container: the host's setting decides; NVIDIA's alternative is a container started with --cap-add=SYS_ADMIN")
_HYPERVISOR_FIX = ("# CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES: the hypervisor does not allow profiling of this "
                   "virtual GPU; only the host's administrators can enable it for the VM (vGPU profiling), or profile on a "
                   "bare-metal node")


@rule("GPU040", SYMBOL, "error", "GPU profiling refused: the NVIDIA driver keeps the performance counters to administrators",
      impact=3, also={"info": "the driver's RmProfilingAdminOnly: 1, pasted with no profiler refused beside it, "
                              "or read live by a user who is not root"})
def gpu_profiling_restricted_to_admins(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a GPU profiler refused the performance counters: ERR_NVGPUCTRPERM in any
        NVIDIA tool's sentence (nvprof's "The user does not have permission to profile on the
        target device", Nsight Compute's "... to access NVIDIA GPU Performance Counters on the
        target device 0", NVIDIA's shared "The user running <tool> does not have permission ...");
        CUPTI's CUPTI_ERROR_INSUFFICIENT_PRIVILEGES by name (TensorFlow's and torch's profilers,
        PAPI's cuda component, newer likwid) or as its number, 35, on a line that names the CUPTI
        call ("cuptiProfilerBeginSession... failed with error 35", likwid 5.1); and CUPTI's
        CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES (40), a hypervisor that forbids
        profiling a virtual GPU. At info level, a pasted /proc/driver/nvidia/params line
        "RmProfilingAdminOnly: 1" with no refusal beside it: the node's setting, not yet a failure;
        and, on a live node (or its snapshot), the same line in the driver's params read by a user
        who is not root.

    Why it matters:
        Since Linux driver 418.43 (NVIDIA's security notice of November 2018, GPU side channels)
        the driver by default lets only administrators read the GPU performance counters. Every
        counter-based profiler (nvprof --metrics, Nsight Compute, Nsight Systems' GPU metrics,
        likwid's GPU groups, PAPI's cuda component, DCGM's profiling metrics) then fails for users,
        while the program itself runs normally. No change inside the job or the container can lift
        it: the setting belongs to the host's nvidia kernel module.

    How to fix:
        Ask the site's administrators to allow profiling for users on the node (the nvidia module
        option NVreg_RestrictProfilingToAdminUsers=0, loaded from /etc/modprobe.d at the next
        module load, with the initramfs rebuilt), or to run the profiler with the needed privilege
        (root, CAP_SYS_ADMIN, or CAP_PERFMON from driver R565). Tracing that reads no counters (nsys
        without GPU metrics) keeps working meanwhile.

    References:
        - https://developer.nvidia.com/nvidia-development-tools-solutions-ERR_NVGPUCTRPERM-permission-issue-performance-counters
        - https://developer.nvidia.com/nvidia-development-tools-solutions-err-nvgpuctrperm-cupti
        - https://nvidia.custhelp.com/app/answers/detail/a_id/4738 (the security notice behind the default)
        - https://docs.nvidia.com/cupti/api/group__CUPTI__RESULT__API.html (CUptiResult)
        - https://github.com/RRZE-HPC/likwid/issues/347 (error 35 is CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    """
    told = catalogued(f, SYMBOL)
    refused = [s for s in told if s.get("id") != _PARAMS]
    if refused:
        s = refused[0]
        hypervisor = s.get("id") == _HYPERVISOR
        setting = next((p for p in told if p.get("id") == _PARAMS), None)
        why = ("the hypervisor does not allow profiling of this virtual GPU" if hypervisor else
               "the NVIDIA driver keeps the GPU performance counters to administrators "
               "(the nvidia module option NVreg_RestrictProfilingToAdminUsers, shown as RmProfilingAdminOnly: 1 in "
               "/proc/driver/nvidia/params" + (f", pasted on line {setting.get('line')}" if setting else "") + ")")
        number = s.get("code") if str(s.get("text", "")).find("CUPTI_ERROR") < 0 and s.get("code") is not None else None
        decoded = f" (CUPTI's result {number} is {str(s.get('id', '')).split(':', 1)[-1]})" if number is not None else ""
        yield Hit(message=f"a GPU profiler was refused the performance counters (line {s.get('line')}: "
                          f"\"{told_text(s)}\"){decoded}: {why}",
                  fix=_HYPERVISOR_FIX if hypervisor else _FIX, evidence=told_evidence(s))
        return
    if not told:
        yield from _restricted_live(f)
        return
    s = told[0]
    yield Hit(message=f"the NVIDIA driver on this node keeps the GPU performance counters to administrators (line "
                      f"{s.get('line')}: \"{told_text(s)}\"): counter-based profilers (ncu, nvprof --metrics, "
                      "likwid's GPU groups, PAPI's cuda component) fail for users until the site allows it",
              fix=_FIX, evidence=told_evidence(s), severity="info")


def _restricted_live(f: FactView) -> Iterator[Hit]:
    """Live: the loaded driver keeps the counters to administrators (checks/system.py) and this user
    is not root (the user id checks/devices.py records). Info: it matters only to a user who profiles.
    Read with f[...] so that a node without the driver's params is skipped with its reason, never
    passed; a node known to have no NVIDIA GPU has nothing to profile."""
    if not cuda_gpus(f):
        return
    if not f["system.nvidia_profiling_admin_only"] or f["devices.euid"] == 0:
        return
    yield Hit(message="the NVIDIA driver on this node keeps the GPU performance counters to administrators "
                      "(/proc/driver/nvidia/params: RmProfilingAdminOnly: 1) and this user is not root: counter-based "
                      "profilers (ncu, nvprof --metrics, likwid's GPU groups, PAPI's cuda component) will be refused "
                      "(ERR_NVGPUCTRPERM, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)",
              fix=_FIX, severity="info",
              evidence={"system.nvidia_profiling_admin_only": True, "devices.euid": f.get("devices.euid")})
