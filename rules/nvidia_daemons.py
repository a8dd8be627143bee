"""The NVIDIA driver's own daemons missing from a host's service manager: the persistence daemon's
systemd unit not installed (knowledge/messages/nvidia_persistenced.toml), so enabling persistence the
way the driver's documentation asks for fails, and every GPU client then pays the driver's start-up."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, told_evidence, told_text

SYMBOL = "nvidia-persistenced-unit-missing"

# The packages that carry the unit (Debian's nvidia-persistenced, Ubuntu's nvidia-compute-utils-<branch>,
# NVIDIA's nvidia-persistenced RPM) differ by distribution and driver branch, so the fix asks the
# package manager; a runfile install has the unit only in its sample tarball, whose folder is "sample"
# or "samples" by release.
_FIX = ("command -v nvidia-persistenced   # the daemon itself, installed with the driver or by its own package\n"
        "dnf provides '*/nvidia-persistenced.service' 2>/dev/null || apt-file search nvidia-persistenced.service   "
        "# the package that carries the unit for this driver's repository: install it\n"
        "tar -xjf /usr/share/doc/NVIDIA_GLX-1.0/sample*/nvidia-persistenced-init.tar.bz2 -C /tmp && sudo "
        "/tmp/nvidia-persistenced-init/install.sh   # a runfile install: the unit NVIDIA ships as a sample\n"
        "sudo systemctl enable --now nvidia-persistenced && nvidia-smi -q | grep -m1 'Persistence Mode'")


@rule("GPU052", SYMBOL, "warning", "the NVIDIA persistence daemon's systemd unit is not installed", impact=3)
def nvidia_persistenced_unit_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, systemd refusing the persistence daemon's unit because none is installed:
        "Failed to enable unit: Unit file nvidia-persistenced.service does not exist." (systemctl
        enable) or "Unit nvidia-persistenced.service not found." (start, status), from an
        administrator's command or a tool that enables it (envycontrol, a node image's script).

    Why it matters:
        NVIDIA's driver documentation keeps persistence with nvidia-persistenced, run as a service;
        without its unit nothing starts it at boot, so on a node without other clients the driver
        tears the GPUs' state down between jobs and every CUDA start pays for bringing it back
        (persistence-mode-off says the same of a live node). The driver may be installed, only the
        package (or the runfile's sample) that holds the unit is missing.

    How to fix:
        Find the package that carries the unit for this driver's repository and install it, or,
        after a runfile install, install the unit from the driver's nvidia-persistenced-init
        sample; then enable and start it and check persistence mode.

    References:
        - https://github.com/systemd/systemd/blob/main/src/shared/install.c ("Unit file %s does not exist.")
        - https://packages.debian.org/trixie/amd64/nvidia-persistenced/filelist (the unit in Debian's package)
        - https://github.com/NVIDIA/yum-packaging-nvidia-persistenced (NVIDIA's RPM of the daemon and its unit)
        - https://docs.nvidia.com/deploy/driver-persistence/persistence-daemon.html (the daemon; its sample init scripts ship with the driver)
    """
    s = first_symptom(f, "nvidia_persistenced:unit-file-missing")
    if s is None:
        return
    yield Hit(message=f"systemd has no nvidia-persistenced.service unit on this host (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): the NVIDIA persistence daemon cannot be enabled, so nothing keeps the "
                      "driver's state between GPU clients; the package (or the runfile's sample) that holds the unit "
                      "is not installed",
              fix=_FIX, evidence=told_evidence(s))
