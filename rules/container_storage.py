"""Container images, overlays and image stores kept on a file system that cannot hold them
(knowledge/messages/container_fs.toml): Apptainer's overlay on NFS, FUSE, Lustre or GPFS, a SIF
whose squashfs the kernel will not mount from where it lies, podman's graphroot on NFS; and an
Apptainer build or pull that runs out of space in its own temporary directory (apptainer_tmpdir.toml);
and an ext3 overlay image another process holds locked (apptainer_overlay.toml, ENV139)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "container-image-fs-unsupported"
_SQUASHFS = ("container_fs:squashfs-bad-superblock", "container_fs:squashfs-mount-failed")
_LOCAL = "${TMPDIR:-/tmp}"


def _apptainer_overlay(s: dict) -> tuple:
    fs, d = s.get("fstype") or "this", s.get("dir") or "upper"
    return (f"Apptainer's overlay {d} directory {s.get('path')} is on {fs}, which it does not accept as an overlay {d} "
            "directory (NFS and FUSE not as upper; Lustre, GPFS, PanFS, eCryptfs not at all)",
            f"stat -f -c %T {s.get('path') or '.'}   # the file system type the overlay sits on\n"
            f"apptainer overlay create --size 1024 {_LOCAL}/overlay.img && apptainer exec --overlay {_LOCAL}/overlay.img IMAGE.sif ...   "
            "# an overlay image file (ext3 inside it) works from any file system; or a directory on local disk\n"
            "apptainer exec --writable-tmpfs IMAGE.sif ...   # or a throw-away writable layer in memory")


def _squashfs(s: dict) -> tuple:
    return ("the kernel would not mount the image's squashfs: the image file sits on a file system that cannot back a loop "
            "mount (a FUSE or network mount, an encrypted partition), the kernel lacks its compression, or the image is damaged",
            "stat -f -c %T IMAGE.sif; df -T IMAGE.sif   # the file system the image lies on\n"
            f"cp IMAGE.sif {_LOCAL}/ && apptainer exec {_LOCAL}/IMAGE.sif true   # from local disk: works, then the file system was the cause\n"
            "unsquashfs -s IMAGE.sif | grep -i compression; grep -w squashfs /proc/filesystems   # the compression, and the kernel's squashfs")


def _podman(s: dict) -> tuple:
    return (f"podman's image store (graphroot {s.get('path')}) is on {s.get('fstype')}, where its overlay driver cannot work "
            "(a rootless store in an NFS home)",
            "podman info --format '{{.Store.GraphRoot}} {{.Store.GraphDriverName}}'; stat -f -c %T \"$(podman info --format '{{.Store.GraphRoot}}')\"\n"
            "podman system reset   # first drop the store made on NFS (removes its images and containers)\n"
            "mkdir -p ~/.config/containers && printf '[storage]\\ndriver = \"overlay\"\\ngraphroot = \"/tmp/%s/containers\"\\n' \"$USER\" "
            "> ~/.config/containers/storage.conf   # then keep the store on local disk (containers-storage.conf(5) graphroot)")


def _sandbox_lower(s: dict) -> tuple:
    return ("the sandbox image directory lies on a file system the kernel's overlay refuses as a lower directory (Lustre, "
            "GPFS, PanFS, eCryptfs): Apptainer fell back to underlay and ran without the overlay images or --writable-tmpfs asked for",
            "stat -f -c %T SANDBOX_DIR   # the file system the sandbox lies on\n"
            f"apptainer build {_LOCAL}/image.sif SANDBOX_DIR && apptainer exec --writable-tmpfs {_LOCAL}/image.sif ...   "
            "# a SIF (or a sandbox on local disk) keeps the writable layer")


_WHY = {"container_fs:overlay-incompatible-fs": _apptainer_overlay, "container_fs:podman-overlay-not-supported-over": _podman,
        "apptainer_overlay:overlay-dropped-sandbox-fs-incompatible": _sandbox_lower}
_WARN = _SQUASHFS + ("apptainer_overlay:overlay-dropped-sandbox-fs-incompatible",)


@rule("ENV053", SYMBOL, "error", "a container image, overlay or image store is on a file system that cannot hold it", impact=6,
      also={"warning": "the kernel refused a SIF's squashfs, or a sandbox's file system made Apptainer drop its overlay"})
def container_image_fs_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Apptainer refusing an overlay directory on a file system it does not
        support ("<path> is located on a NFS filesystem incompatible as overlay upper
        directory"; also FUSE, Lustre, GPFS, PanFS, eCryptfs), podman's "'overlay' is not
        supported over nfs at <graphroot>", and, as a warning, the kernel refusing a SIF's
        squashfs ("kernel reported a bad superblock for squashfs image partition", Singularity's
        "failed to mount squashfs filesystem: invalid argument"), whose causes are the image
        file's file system, the kernel's squashfs compression or a damaged image; also as a
        warning, Apptainer dropping overlay images or --writable-tmpfs "due to sandbox filesystem
        incompatibility with overlay" (a sandbox on Lustre, GPFS, PanFS or eCryptfs).

    Why it matters:
        The container does not start. Overlays need a local-style file system (NFS lacks what an
        upper directory needs; parallel file systems are refused outright); rootless podman's
        store in an NFS home cannot unpack layers; a SIF on a FUSE, network or encrypted mount
        may not be loop-mountable.

    How to fix:
        Keep overlays, image stores and images on local disk (TMPDIR, node-local scratch), or
        use an overlay image file instead of a directory; for podman, set graphroot in
        ~/.config/containers/storage.conf to local disk.

    References:
        - https://github.com/apptainer/apptainer/blob/main/internal/pkg/util/fs/overlay/overlay_linux.go
        - https://apptainer.org/docs/user/latest/persistent_overlays.html
        - https://github.com/containers/storage/blob/main/drivers/overlay/overlay.go
        - https://github.com/containers/storage/blob/main/docs/containers-storage.conf.5.md (graphroot)
        - https://github.com/cytomine/Cytomine-core-legacy/issues/1196
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = next((t for t in told if t.get("id") not in _SQUASHFS), told[0])
    why, fix = _WHY.get(str(s.get("id")), _squashfs)(s)
    yield Hit(message=f"{why} (line {s.get('line')}: \"{told_text(s)}\")", fix=fix, evidence=told_evidence(s),
              severity="warning" if s.get("id") in _WARN else None)


# ----------------------------------------------------------------------------------------------
TMPDIR_SYMBOL = "apptainer-tmpdir-too-small"
_TMP_DIRS = ("mkdir -p /scratch/$USER/apptainer/tmp /scratch/$USER/apptainer/cache   # a file system with room "
             "(the site's scratch or project space, or a node-local disk in a job)\n"
             "export APPTAINER_TMPDIR=/scratch/$USER/apptainer/tmp APPTAINER_CACHEDIR=/scratch/$USER/apptainer/cache "
             "SINGULARITY_TMPDIR=/scratch/$USER/apptainer/tmp SINGULARITY_CACHEDIR=/scratch/$USER/apptainer/cache   "
             "# Apptainer reads the first two, Singularity the last two; then rerun the build or pull")


def _temp_root(path: str, temp: str) -> str:
    """The temporary directory a bundle-temp-/build-temp-/oci-put-blob path lies in."""
    at = path.find("/" + temp)
    return path[:at] or "/" if at >= 0 else ""


@rule("ENV083", TMPDIR_SYMBOL, "error", "an Apptainer build or pull ran out of space in its temporary directory", impact=5)
def apptainer_tmpdir_too_small(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, an Apptainer (or Singularity) build or pull failing for space under its
        own temporary files: Go's "write /tmp/bundle-temp-.../oci-put-blob...: no space left on
        device" (the build bundle, bundle-temp-*; the stage's parent, build-temp-*; the OCI blobs,
        oci-put-blob*; Singularity 3's cache, oci-tmp/) and mksquashfs's "Write failed because No
        space left on device" while Apptainer packs the SIF.

    Why it matters:
        Apptainer unpacks every layer and packs the SIF under APPTAINER_TMPDIR (SINGULARITY_TMPDIR),
        else TMPDIR, else /tmp. On many nodes /tmp is a RAM-backed tmpfs of a few GB, smaller than
        the image: the build fails however much room the destination's disk or the cache directory
        has, and setting only the cache directory does not move it.

    How to fix:
        Point APPTAINER_TMPDIR (SINGULARITY_TMPDIR for Singularity; or --tmpdir) and the cache
        directory at a file system with room, then rerun; in a job, a node-local disk will do.

    References:
        - https://apptainer.org/docs/user/main/build_env.html#temporary-folders (APPTAINER_TMPDIR, APPTAINER_CACHEDIR)
        - https://github.com/apptainer/apptainer/blob/main/internal/pkg/build/types/bundle.go (bundle-temp-, build-temp-)
        - https://github.com/apptainer/apptainer/issues/1380 (/tmp a tmpfs: a pull fails for space)
        - https://github.com/apptainer/singularity/issues/6500 (the cache moved, the temporary directory not)
    """
    told = catalogued(f, TMPDIR_SYMBOL)
    if not told:
        return
    s = told[0]
    path, temp = str(s.get("path") or ""), str(s.get("temp") or "")
    root = _temp_root(path, temp) if path and temp else ""
    if temp == "oci-tmp/":
        where = f"Singularity's cache directory {root} (SINGULARITY_CACHEDIR) is full"
    elif root:
        where = (f"its temporary directory {root} is full (often a RAM-backed tmpfs, smaller than the image)"
                 if temp != "build-temp-" else
                 f"the directory of its build stage, {root} (the temporary directory, or the destination's directory "
                 "for a sandbox build), is full")
    else:
        where = ("the SIF is packed under its temporary directory (APPTAINER_TMPDIR, else TMPDIR, else /tmp), and that "
                 "file system is full, whatever room the destination and the cache have")
    check = f"df -h {root or '${APPTAINER_TMPDIR:-${TMPDIR:-/tmp}}'}; findmnt -no FSTYPE,SIZE --target {root or '/tmp'}   # tmpfs: memory, not disk\n"
    yield Hit(message=f"an Apptainer build ran out of space (line {s.get('line')}: \"{told_text(s)}\"): {where}",
              fix=check + _TMP_DIRS, evidence=told_evidence(s))


# ----------------------------------------------------------------------------------------------
OVERLAY_IN_USE = "container-overlay-in-use"
_RO_READER = "apptainer_overlay:image-in-use-for-writing-by-another-process"


@rule("ENV139", OVERLAY_IN_USE, "error",
      "an Apptainer or Singularity overlay image is locked by another process", impact=5)
def container_overlay_in_use(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Apptainer's (SingularityCE's, Singularity 3.5+'s) refusal to open an ext3
        overlay image whose lock another process holds: "while locking ext3 partition from IMAGE:
        can't open IMAGE for reading, currently in use for writing by another process" (a
        read-only --overlay IMAGE:ro while something has it writable) and "can't open IMAGE for
        writing, currently in use by another process" (a writable --overlay while anything else
        has it open).

    Why it matters:
        The container does not start. Apptainer takes an fcntl byte-range lock on the image's
        ext3 partition (pkg/image/image.go lockSection): a read lock for ':ro', a write lock for a
        writable overlay. Any number of readers may share an image; one writer excludes everyone
        else, because two kernels (or two mounts) writing one ext3 file system corrupt it. The
        holder is a container still running with the image writable (another job of the same
        user, often on another node of a shared file system, where fuser does not see it), or
        what a killed run left alive (a starter, fuse2fs or squashfuse process still holding it
        open; the lock goes only when the last holder exits).

    How to fix:
        Find the holder (fuser -v / lsof on this node, ps for apptainer, singularity, fuse2fs,
        squashfuse and fuse-overlayfs processes, squeue for jobs on other nodes) and let it end
        or end it by its PID. Jobs that only read the image mount it ':ro', all at once; only
        one job at a time may mount it writable. After a writer was killed, check the ext3 image
        (e2fsck -f, on a standalone image file only, once nothing holds it).

    References:
        - https://github.com/apptainer/apptainer/blob/main/pkg/image/image.go (lockSection)
        - https://github.com/apptainer/apptainer/blob/main/pkg/util/fs/lock/lock.go (F_SETLK byte-range locks)
        - https://apptainer.org/docs/user/latest/persistent_overlays.html
        - https://github.com/apptainer/singularity/issues/6196
        - https://github.com/sylabs/singularity/issues/1868
    """
    told = catalogued(f, OVERLAY_IN_USE)
    if not told:
        return
    s = told[0]
    img = str(s.get("path") or "IMAGE")
    said = " ".join(str(t.get("text", "")) for t in f.get("ticket.symptoms") or []).lower()
    prog = "singularity" if "singularity" in said and "apptainer" not in said else "apptainer"
    if s.get("id") == _RO_READER:
        why = (f"the overlay image {img} is held writable by another process, so even a read-only (':ro') mount is refused: "
               "a container still running with it as a writable overlay, or a process left from a killed run")
    else:
        why = (f"the overlay image {img} was asked for writable while another process has it open: only one process "
               "may mount an ext3 overlay writable, and only while no other holds it (concurrent jobs asking for it "
               "writable, a container still running with it, or a process left from a killed run)")
    fix = (f"fuser -v {img}; lsof {img}   # who holds it on this node (neither sees other nodes)\n"
           "ps -u $USER -f | grep -E 'apptainer|singularity|starter|squashfuse|fuse2fs|fuse-overlayfs'   "
           "# a container or FUSE helper left from a killed run: end it with kill PID\n"
           "squeue -u $USER   # on a shared file system the holder may be your job on another node\n"
           f"{prog} exec --overlay {img}:ro IMAGE.sif ...   # jobs that only read it: ':ro' lets many share it; "
           "one writer at a time, alone\n"
           f"e2fsck -f {img}   # once nothing holds it, after a writer was killed: checks the ext3 file system "
           "(a standalone overlay image file; not an overlay partition inside a SIF)")
    yield Hit(message=f"{why} (line {s.get('line')}: \"{told_text(s)}\")", fix=fix, evidence=told_evidence(s))
