"""enroot importing or starting an image and stopped by how it was installed or configured, not by
the image: its default squashfs compression (lzo) that the node's squashfuse cannot decode
(knowledge/messages/squashfuse.toml), and its layer-converting helpers without the file capabilities
the enroot+caps package grants (enroot.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, told_evidence, told_text

# mksquashfs names zlib "gzip"; the others by the names squashfuse prints. Fast to decode first.
_MKSQUASHFS = {"lz4": "lz4", "zstd": "zstd", "xz": "xz", "zlib": "gzip", "lzma": "lzma", "lzo": "lzo"}
_PREFERRED = ("lz4", "zstd", "xz", "zlib")


def _enroot_shown(f: FactView) -> bool:
    """Whether the paste is enroot's: a line of enroot's own catalogue (its [ERROR] lines, pyxis)."""
    return any(str(s.get("id", "")).startswith("enroot:") for s in f.get("ticket.symptoms") or [])


@rule("ENV144", "enroot-squashfs-compression-unsupported", "error",
      "enroot made its image with a squashfs compression the node's squashfuse cannot decode", impact=6)
def enroot_squashfs_compression_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted enroot log, squashfuse refusing the image it was asked to mount: "Squashfs
        image uses lzo compression, this version supports only xz, zlib, lz4, zstd." (enroot
        prints it as a [WARN]), beside enroot's own lines ("[ERROR] Failed to mount: ...").

    Why it matters:
        enroot makes its images with mksquashfs and ENROOT_SQUASH_OPTIONS, "-comp lzo" by
        default (images that must also run on RHEL 7), and starts them through squashfuse where
        it may not mount them itself. A squashfuse built without lzo cannot mount any image made
        with the default: every import gives an image that does not start.

    How to fix:
        Re-import with a compression the message lists (ENROOT_SQUASH_OPTIONS='-comp lz4 -noD',
        as enroot's maintainers answer), or set it in enroot.conf for every user; or install a
        squashfuse built with lzo.

    References:
        - https://github.com/NVIDIA/enroot/blob/8ea147d337da60cb1c557140f3a85cdf0d620968/doc/cmd/import.md (ENROOT_SQUASH_OPTIONS, default -comp lzo -noD -exit-on-error)
        - https://github.com/vasi/squashfuse/blob/df85c4ddf1a079b10cfe39a2caf7d0cfdc504a6b/util.c (the message)
        - https://github.com/NVIDIA/enroot/issues/6 (lzo for RHEL 7; -comp lz4 -noD)
    """
    s = first_symptom(f, "squashfuse:compression-unsupported")
    if s is None or not _enroot_shown(f):
        return
    supported = [c.strip() for c in str(s.get("supported") or "").split(",") if c.strip()]
    comp = next((c for c in _PREFERRED if c in supported), None)
    if comp is None:
        return  # nothing mksquashfs makes that this squashfuse decodes: not a setting enroot can change
    used = s.get("used")
    yield Hit(message=f"squashfuse cannot mount the enroot image: it is {used}-compressed and this squashfuse decodes "
                      f"only {', '.join(supported)} (line {s.get('line')}: \"{told_text(s)}\"); enroot compresses its "
                      "images with ENROOT_SQUASH_OPTIONS, -comp lzo by default",
              fix=(f"export ENROOT_SQUASH_OPTIONS='-comp {_MKSQUASHFS[comp]} -noD'   # a compression this squashfuse "
                   f"decodes (administrators: ENROOT_SQUASH_OPTIONS -comp {_MKSQUASHFS[comp]} -noD in enroot.conf)\n"
                   "enroot import docker://IMAGE   # import again: an image's compression is fixed when it is made"),
              evidence=told_evidence(s))


@rule("ENV145", "enroot-caps-package-missing", "error",
      "enroot's layer-converting helpers lack the file capabilities of the enroot+caps package", impact=6)
def enroot_caps_package_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted enroot import, its helper that converts image layers refusing to start:
        "enroot-aufs2ovlfs: failed to set capabilities: Operation not permitted" (or
        enroot-mksquashovlfs).

    Why it matters:
        Both helpers keep CAP_SYS_ADMIN and CAP_MKNOD while they turn docker layers into an
        overlay and squash it. An unprivileged user has them only through file capabilities on
        the two binaries, which the enroot+caps package sets when it is installed; without it
        every enroot import (and srun --container-image with a docker:// image) stops here.

    How to fix:
        Check the two binaries' capabilities; install the enroot+caps package of the same
        release as enroot (its package requires that release), from enroot's releases page.

    References:
        - https://github.com/NVIDIA/enroot/blob/8ea147d337da60cb1c557140f3a85cdf0d620968/doc/installation.md (enroot+caps)
        - https://github.com/NVIDIA/enroot/blob/8ea147d337da60cb1c557140f3a85cdf0d620968/pkg/rpm/SPECS/enroot.spec (setcap in %posttrans)
        - https://github.com/NVIDIA/enroot/issues/141 (RHEL 8: installing enroot+caps got the import further)
    """
    s = first_symptom(f, "enroot:enroot-helper-set-caps")
    if s is None:
        return
    yield Hit(message=f"{s.get('program')} could not keep the capabilities it converts image layers with (line "
                      f"{s.get('line')}: \"{told_text(s)}\"): the binary holds no file capabilities, which the "
                      "enroot+caps package sets; unprivileged imports stop here without it",
              fix=("getcap \"$(command -v enroot-aufs2ovlfs)\" \"$(command -v enroot-mksquashovlfs)\"   # nothing "
                   "printed: the enroot+caps package is not installed\n"
                   "v=$(enroot version); sudo dnf install -y \"https://github.com/NVIDIA/enroot/releases/download/v$v/"
                   "enroot+caps-$v-1.el8.$(uname -m).rpm\"   # RHEL 8 and later; Debian/Ubuntu: the "
                   "enroot+caps_${v}-1_$(dpkg --print-architecture).deb of the same release, with apt install"),
              evidence={**told_evidence(s), "program": s.get("program")})
