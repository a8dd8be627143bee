"""A setuid Apptainer or Singularity that cannot get a loop device to mount a SIF image
(knowledge/messages/apptainer.toml no-loop-devices, loop-attach-failed)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "apptainer-loop-devices-unavailable"

_FIX = ("losetup -a | wc -l; ls /dev/loop* | head   # loop devices in use, and those the node has\n"
        "apptainer exec --userns IMAGE.sif true   # without setuid: the image is mounted with squashfuse, no loop device\n"
        "apptainer build --sandbox IMAGE_DIR IMAGE.sif && apptainer exec IMAGE_DIR true   # or unpack it once to a "
        "directory (no mount at all)\n"
        "# administrators: 'max loop devices' in apptainer.conf (256 by default), modprobe loop, and free loop devices "
        "left by crashed containers (losetup -d)")


@rule("ENV133", SYMBOL, "error", "a setuid Apptainer cannot get a loop device to mount the container image", impact=5)
def apptainer_loop_devices_unavailable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Apptainer's (and SingularityCE's) setuid starter failing to mount a SIF
        image: "failed to find loop device: no loop devices available" and "failed to attach loop
        device: ..."; Singularity 2.x's "No more available loop devices, try increasing 'max loop
        devices' in singularity.conf".

    Why it matters:
        A setuid installation mounts each SIF image through a loop device. When every loop device
        the configuration allows is taken ('max loop devices', 256 by default, or all the node's
        devices, some left attached by crashed containers), or the node has none (inside another
        container, no loop module), no container starts on that node. Singularity 3.x before
        3.4.1 also said "no loop devices available" when many containers started at once and the
        kernel answered a busy device with EAGAIN (fixed in 3.4.1, apptainer/singularity#4652).

    How to fix:
        Run without setuid (--userns: the image is mounted with squashfuse) or from an unpacked
        sandbox directory; administrators raise 'max loop devices', load the loop module and
        detach stale loop devices.

    References:
        - https://apptainer.org/docs/admin/main/configfiles.html (max loop devices)
        - https://github.com/apptainer/apptainer/blob/v1.4.5/pkg/util/loop/loop.go
        - https://apptainer.org/docs/user/main/fakeroot.html (running without setuid)
        - https://github.com/apptainer/singularity/issues/4652 (many containers at once before 3.4.1)
    """
    s = next(iter(catalogued(f, SYMBOL)), None)
    if s is None:
        return
    yield Hit(message=(f"Apptainer could not get a loop device to mount the image (line {s.get('line')}: "
                       f"\"{told_text(s)}\"): every loop device it may use is taken, or the node has none (Singularity 3.x "
                       "before 3.4.1 said so too when many containers started at once)"),
              fix=_FIX, evidence=told_evidence(s))
