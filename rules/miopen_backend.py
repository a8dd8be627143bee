"""MIOpen failing to create its handle under a ROCm framework (knowledge/messages/miopen.toml):
TensorFlow-ROCm's "could not create miopen handle: miopenStatusUnknownError". MIOpen was packaged for
two back ends that cannot be installed together (miopen-hip, miopen-opencl; MIOpen's README), and the
frameworks built for ROCm use the HIP one: the OpenCL build cannot create a handle on a HIP stream."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import told_evidence, told_text

SYMBOL = "miopen-backend-mismatch"


@rule("SW116", SYMBOL, "info", "MIOpen could not create its handle: the OpenCL build of MIOpen where the HIP one is needed",
      impact=4)
def miopen_backend_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, TensorFlow-ROCm's "could not create miopen handle: miopenStatusUnknownError"
        (rocm_dnn.cc, MIOpenSupport::Init, when miopenCreateWithStream fails). A hint, not a
        verdict: the status does not name its cause.

    Why it matters:
        MIOpen ships as two packages that cannot be installed together, miopen-hip and miopen-opencl
        (MIOpen's README, "Installing MIOpen with pre-built packages"), and ROCm's TensorFlow and
        PyTorch call it with HIP streams, which only the HIP build accepts; AMD's answer to this
        error in ROCm/MIOpen#132 was the OpenCL build installed. Other causes (the GPU not
        accessible through /dev/kfd) print the same status.

    How to fix:
        See which MIOpen package is installed; if it is miopen-opencl, remove it and install
        miopen-hip. If miopen-hip is already there, check the GPU's device files.

    References:
        - https://github.com/ROCm/MIOpen#installing-miopen-with-pre-built-packages
        - https://github.com/ROCm/MIOpen/issues/132
    """
    s = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "miopen:miopenStatusUnknownError"
              and "could not create miopen handle" in str(s.get("text", ""))), None)
    if s is None:
        return
    yield Hit(message=f"MIOpen could not create its handle (line {s.get('line')}: \"{told_text(s)}\"): MIOpen's own status "
                      "does not say why; the OpenCL build of MIOpen (miopen-opencl) installed where the ROCm framework "
                      "needs the HIP one (miopen-hip) is the cause AMD found for it",
              fix=("dpkg -l | grep -i miopen || rpm -qa | grep -i miopen   # miopen-opencl: the OpenCL build; ROCm's "
                   "TensorFlow and PyTorch need miopen-hip\n"
                   "sudo apt-get remove miopen-opencl && sudo apt-get install miopen-hip   # the two cannot be installed "
                   "together (MIOpen's README)\n"
                   "ls -l /dev/kfd /dev/dri/render*   # miopen-hip already there: the user must be able to open these"),
              evidence=told_evidence(s))
