"""DCGM's diagnostic (dcgmi diag, nvvs) running without a file its own package installs
(knowledge/messages/dcgm_nvvs.toml): the per-GPU-model configuration diag-skus.yaml."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, told_evidence, told_text


@rule("SW119", "dcgm-install-incomplete", "warning",
      "DCGM's diagnostic runs without the configuration its package installs", impact=4)
def dcgm_install_incomplete(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted dcgmi diag or nvvs log, "Could not read package diag config. Please ensure the
        datacanter-gpu-manager-config package is installed" (later releases spell datacenter), with
        the next line's "Exception: bad file: .../diag-skus.yaml" naming the file it looked for.

    Why it matters:
        nvvs reads the per-GPU-model configuration (test parameters and thresholds for each SKU)
        that DCGM's package installs beside it; without it, it runs with the configuration compiled
        into it, so the diagnostic's verdicts may not be the ones NVIDIA ships for this GPU. The
        "-config" package the line names does not exist: the file is part of DCGM's own package, so
        the install is incomplete (a file removed, a package half-upgraded, a copy of nvvs moved).

    How to fix:
        Check the file and the package's integrity (rpm -V, dpkg --verify) and reinstall DCGM's
        package; do not look for a datacenter-gpu-manager-config package.

    References:
        - https://github.com/NVIDIA/DCGM/blob/master/nvvs/src/ConfigFileParser_v2.cpp (the fallback to the compiled-in YAML)
        - https://github.com/NVIDIA/DCGM/issues/121 (NVIDIA: diag-skus.yaml is part of the datacenter-gpu-manager package)
    """
    s = first_symptom(f, "dcgm_nvvs:package-diag-config-unreadable")
    if s is None:
        return
    missing = first_symptom(f, "dcgm_nvvs:package-diag-config-exception")
    path = str((missing or {}).get("path") or "")
    look = (f"ls -l {shlex.quote(path)}   # the file nvvs looked for" if path else
            "ls -l /usr/share/nvidia-validation-suite/diag-skus.yaml /usr/share/datacenter-gpu-manager*/diag-skus.yaml "
            "2>/dev/null   # where DCGM's packages install it")
    said = f" ({path} is not there)" if path else ""
    yield Hit(message=f"dcgmi diag ran without the per-GPU configuration DCGM's package installs{said} (line "
                      f"{s.get('line')}: \"{told_text(s)}\"): it fell back to the configuration compiled into nvvs. "
                      "The file is part of DCGM's own package, not of a -config package (none exists): the install "
                      "is incomplete",
              fix=(f"{look}\n"
                   "rpm -qa 'datacenter-gpu-manager*' 2>/dev/null; dpkg -l 'datacenter-gpu-manager*' 2>/dev/null | grep '^ii'   "
                   "# DCGM's installed package (its name varies by release)\n"
                   "# then verify and reinstall that package: rpm -V NAME / sudo dnf reinstall NAME, or dpkg --verify "
                   "NAME / sudo apt-get install --reinstall NAME"),
              evidence={**told_evidence(s), **({"path": path} if path else {})})
