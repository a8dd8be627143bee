"""A package manager that finds no build of a package for this machine's platform: conda's
"not available from current channels" and libmamba's "nothing provides requested", and pip's "No
matching distribution found", read beside the platform the paste names (an Arm or POWER machine,
conda's platform subdir in its channel URLs; knowledge/messages/conda.toml, pip.toml, prose.toml)."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "conda-package-unavailable-for-platform"

# pip's refusal for torch is torch-wheel-unavailable's, for TensorFlow tensorflow-wheel-unavailable's
# (they read the Python and the index as well): one cause, one finding.
_PIP_NOT_FOUND = "pip:no-matching-distribution"
_ANSWERED_DISTS = ("torch", "torchvision", "torchaudio")
_ANSWERED_PREFIX = "tensorflow"

# conda's subdirs other than linux-64 that name a machine (conda/base/constants.py NON_X86_LINUX_MACHINES
# and KNOWN_SUBDIRS), as the paste names them; a Jetson is an aarch64 board.
_PLATFORM_SAID = {"prose:aarch64-said": "aarch64 (64-bit Arm: Grace, Graviton, Ampere, Jetson)",
                  "prose:arm64-said": "arm64 (64-bit Arm)",
                  "prose:ppc64le-said": "ppc64le (POWER)",
                  "prose:jetson-said": "aarch64 (an NVIDIA Jetson)"}

_FIX_PLATFORM = ("conda config --show subdir   # the platform conda looks for: linux-aarch64 on Arm nodes, linux-ppc64le on POWER\n"
                 "conda search -c conda-forge PACKAGE   # whether conda-forge builds the package for this platform "
                 "(it builds many for linux-aarch64 and linux-ppc64le that defaults and the pytorch channel do not)\n"
                 "# none anywhere: drop that pin from the environment file, use the project's pip wheels for this "
                 "platform, or its container image for this architecture")
_FIX_CHANNELS = ("conda config --show channels subdir   # the channels searched and the platform looked for\n"
                 "conda search -c conda-forge PACKAGE   # whether another channel has the package: add it with -c CHANNEL")


def _platform(f: FactView) -> Optional[dict]:
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("id") in _PLATFORM_SAID), None)


def _pip_not_found(f: FactView) -> Optional[dict]:
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") == _PIP_NOT_FOUND:
            name = str(s.get("req") or "").split("==")[0].split(">")[0].split("<")[0].split("[")[0].strip().lower()
            if name and name not in _ANSWERED_DISTS and not name.startswith(_ANSWERED_PREFIX):
                return s
    return None


@rule("SW066", SYMBOL, "warning", "a package manager finds no build of a package for this machine's platform (Arm, POWER)",
      impact=5, also={"info": "conda found no package in its channels and the paste names no platform: the channels, "
                              "a misspelt name or a version that does not exist are as likely"})
def conda_package_unavailable_for_platform(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, conda's refusal to find a package: "PackagesNotFoundError: The following
        packages are not available from current channels" (conda 4.4 on), "Packages missing in
        current channels" (conda 4.3), "ResolvePackageNotFound" (conda env create) and libmamba's
        "nothing provides requested ..." (mamba, conda's libmamba solver); or pip's "No matching
        distribution found for ..." for a package other than torch or TensorFlow. A warning when the paste
        also names a platform other than x86-64: aarch64 (the user's words, conda's
        linux-aarch64 subdir in the channel URLs it lists, a wheel's platform tag), arm64,
        ppc64le or a Jetson. Without a platform named, conda's refusal is information only.

    Why it matters:
        conda and pip look for builds of the machine's own platform (conda's subdir, pip's
        platform tags). Many pins in environment files and install guides exist only for
        linux-64: pytorch-cuda and the pytorch channel's builds, mkl, old libgcc builds. On an
        Arm node (NVIDIA Grace, GH200, AWS Graviton, Jetson) or a POWER node the same command
        then finds nothing, whatever the channels.

    How to fix:
        Check the platform conda looks for (conda config --show subdir) and whether any channel
        builds the package for it (conda-forge builds many for linux-aarch64 and linux-ppc64le);
        otherwise drop the x86-only pins (mkl is Intel's x86 library), use pip wheels built for
        the platform, or the project's container image for that architecture.

    References:
        - https://github.com/conda/conda/blob/26.7.1/conda/exceptions.py (PackagesNotFoundError)
        - https://github.com/conda/conda/blob/26.7.1/conda/base/constants.py (KNOWN_SUBDIRS, NON_X86_LINUX_MACHINES)
        - https://github.com/openSUSE/libsolv/blob/0.7.39/src/problems.c (nothing provides requested)
        - https://github.com/pypa/pip/blob/26.2.1/src/pip/_internal/resolution/resolvelib/factory.py (No matching distribution found)
        - https://github.com/aqlaboratory/openfold/issues/474 (conda's pins for linux-64 on a Grace Hopper node)
    """
    platform = _platform(f)
    told = catalogued(f, SYMBOL)
    said = told[0] if told else (_pip_not_found(f) if platform else None)
    if said is None:
        return
    if platform is None:
        yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": no channel searched has the package; the paste "
                          "names no platform, so the channels, the name or the version asked for are as likely as the "
                          "platform", fix=_FIX_CHANNELS, evidence=told_evidence(said), severity="info")
        return
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\", on a machine the paste names as "
                      f"{_PLATFORM_SAID[platform['id']]} (line {platform.get('line')}): the package, at the version pinned, "
                      "is most likely not built for this platform (many conda and pip builds exist for x86-64 only)",
              fix=_FIX_PLATFORM, evidence={**told_evidence(said), "platform.line": platform.get("line"),
                                           "platform.text": told_text(platform)})
