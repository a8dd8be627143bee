"""hpcdoctor payload: what the job's Python would load. Runs inside the *target* interpreter.

Standard library and torch only, Python 3.6 syntax and up, one JSON document on stdout, exit 0
even when torch is broken (the breakage is the finding). Two depths:

  fast  package metadata and files only; torch is never imported (tens of milliseconds)
  deep  imports torch and initialises the GPU runtime, then reads what was really loaded
"""

import json
import os
import re
import sys
import time

LIBS = ("libnccl", "librccl", "libcudart", "libcudnn", "libcublas", "libamdhip64", "libMIOpen",
        "libgomp", "libiomp5", "libomp", "libmkl_core", "libopenblas", "libtorch_cuda", "libtorch_cpu",
        "libnvidia-ml", "libcuda", "libarm_compute")
NETWORK_FS = ("lustre", "gpfs", "nfs", "nfs4", "beegfs", "cephfs", "ceph", "wekafs", "fuse.sshfs",
              "panfs", "orangefs", "glusterfs", "fuse.glusterfs", "cvmfs", "fuse.cvmfs")


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions():
    """(name, version, location) of every installed distribution on sys.path, from the names
    of *.dist-info / *.egg-info folders: no import, no metadata parsing, works on Python 3.6."""
    seen = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for n in names:
            m = re.match(r"^(.+?)-([0-9][^-]*?)(?:-py[0-9.]+)?\.(dist-info|egg-info)$", n)
            if m:
                seen.append((norm(m.group(1)), m.group(2), entry))
    return seen


def torch_version_file():
    """torch/version.py of the torch that `import torch` would load, read as text."""
    for entry in sys.path:
        path = os.path.join(entry or os.getcwd(), "torch", "version.py")
        if os.path.isfile(path):
            try:
                with open(path) as fh:
                    text = fh.read()
            except OSError:
                continue
            out = {"path": os.path.dirname(path)}
            for key in ("__version__", "cuda", "hip", "git_version"):
                m = re.search(r"^%s\s*(?::[^=]*)?=\s*(?:'([^']*)'|\"([^\"]*)\"|None)" % re.escape(key), text, re.M)
                if m:
                    out[key.strip("_")] = m.group(1) if m.group(1) is not None else m.group(2)
            return out
    return None


def mount_of(path):
    """(mount point, fstype) holding path, from /proc/mounts (longest matching prefix)."""
    try:
        with open("/proc/mounts") as fh:
            mounts = [line.split() for line in fh]
    except OSError:
        return None, None
    real = os.path.realpath(path)
    best = ("", None)
    for parts in mounts:
        if len(parts) < 3:
            continue
        mp = parts[1].replace("\\040", " ")
        if (real == mp or real.startswith(mp.rstrip("/") + "/")) and len(mp) >= len(best[0]):
            best = (mp, parts[2])
    return best


def conda_packages(prefix):
    meta = os.path.join(prefix, "conda-meta")
    wanted = ("pytorch", "pytorch-cuda", "cudatoolkit", "cuda-version", "cudnn", "nccl", "cpuonly",
              "pytorch-gpu", "pytorch-cpu", "mkl", "libopenblas", "numpy")
    out = {}
    try:
        names = os.listdir(meta)
    except OSError:
        return None
    for n in names:
        m = re.match(r"^(.+)-([^-]+)-([^-]+)\.json$", n)
        if m and m.group(1) in wanted:
            out[m.group(1)] = {"version": m.group(2), "build": m.group(3)}
    return out


def user_site():
    """Whether Python puts the user's site directory (~/.local/lib/pythonX.Y/site-packages) on
    sys.path: ENABLE_USER_SITE is False with -s or PYTHONNOUSERSITE, None when the user ids differ."""
    try:
        import site
    except ImportError:
        return None
    path = getattr(site, "USER_SITE", None)
    return {"enabled": getattr(site, "ENABLE_USER_SITE", None), "path": path,
            "on_path": bool(path) and path in sys.path}


def shadowed(dists):
    """Distributions installed in more than one sys.path entry: the first wins the import, the
    others (an image's own copy, a conda env's) are hidden behind it."""
    by_name = {}
    for name, version, loc in dists:
        by_name.setdefault(name, []).append((version, loc))
    out = []
    for name, copies in sorted(by_name.items()):
        places = []
        for version, loc in copies:
            if loc not in [p for _, p in places]:
                places.append((version, loc))
        if len(places) > 1:
            out.append({"name": name, "version": places[0][0], "location": places[0][1],
                        "hidden": [{"version": v, "location": p} for v, p in places[1:4]]})
    return out[:30]


def fast():
    info = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "prefix": sys.prefix,
        "virtualenv": sys.prefix != getattr(sys, "base_prefix", sys.prefix),
        "conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta")),
    }
    dists = distributions()
    info["user_site"] = user_site()
    info["shadowed"] = shadowed(dists)
    torch_dists = [d for d in dists if d[0] == "torch"]
    info["torch_installs"] = [{"version": v, "location": loc} for _, v, loc in torch_dists]
    info["packages"] = {n: v for n, v, _ in dists if n.startswith(("nvidia-", "torch", "triton", "pytorch-triton",
                                                                   "rocm", "intel-extension", "deepspeed",
                                                                   "accelerate", "vllm", "jax", "numpy", "onnxruntime",
                                                                   "pyopencl"))}
    vf = torch_version_file()
    if vf:
        info["torch"] = vf
        mp, fstype = mount_of(vf["path"])
        info["torch_mount"] = {"mount_point": mp, "fstype": fstype, "network": fstype in NETWORK_FS}
    if info["conda"]:
        info["conda_packages"] = conda_packages(sys.prefix)
    return info


def loaded_libraries():
    """Shared libraries mapped into this process, grouped by family (libnccl, libgomp, ...)."""
    found = {}
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 6 or "/" not in parts[-1]:
                    continue
                path = parts[-1]
                base = os.path.basename(path)
                for lib in LIBS:
                    if base.startswith(lib + ".") or base.startswith(lib + "-") or base == lib + ".so":
                        found.setdefault(lib, set()).add(os.path.realpath(path))
    except OSError:
        return None
    return {k: sorted(v) for k, v in found.items()}


def deep(info):
    start = time.time()
    try:
        import torch  # the point of the deep probe
    except BaseException as exc:  # ImportError, OSError from a missing libcudnn, even SystemExit
        info["import_error"] = "%s: %s" % (type(exc).__name__, str(exc).strip().splitlines()[-1][:500] if str(exc).strip() else "")
        info["import_s"] = round(time.time() - start, 3)
        return info
    info["import_s"] = round(time.time() - start, 3)
    t = {"version": torch.__version__, "cuda": getattr(torch.version, "cuda", None),
         "hip": getattr(torch.version, "hip", None), "path": os.path.dirname(torch.__file__)}
    step("cudnn", t, lambda: torch.backends.cudnn.version())
    step("float32_matmul_precision", t, torch.get_float32_matmul_precision)
    step("matmul_allow_tf32", t, lambda: bool(torch.backends.cuda.matmul.allow_tf32))
    step("cudnn_allow_tf32", t, lambda: bool(torch.backends.cudnn.allow_tf32))
    step("num_threads", t, torch.get_num_threads)
    step("num_interop_threads", t, torch.get_num_interop_threads)
    step("mkldnn", t, lambda: torch.backends.mkldnn.is_available())
    step("mkl", t, lambda: torch.backends.mkl.is_available())
    step("openmp", t, lambda: torch.backends.openmp.is_available())
    step("cpu_capability", t, lambda: torch.backends.cpu.get_cpu_capability())
    if hasattr(torch.backends.mkldnn, "is_acl_available"):
        step("acl", t, torch.backends.mkldnn.is_acl_available)
    step("config", t, lambda: torch.__config__.show())
    step("parallel_info", t, lambda: torch.__config__.parallel_info())
    step("arch_list", t, lambda: torch.cuda.get_arch_list())
    step("cuda_available", t, lambda: torch.cuda.is_available())
    if t.get("cuda_available"):
        step("device_count", t, torch.cuda.device_count)
        step("nccl", t, lambda: ".".join(str(x) for x in torch.cuda.nccl.version())
             if isinstance(torch.cuda.nccl.version(), tuple) else str(torch.cuda.nccl.version()))
        step("devices", t, lambda: [device(torch, i) for i in range(torch.cuda.device_count())])
        # Touch the device so the runtime loads every library it will use in a job.
        step("cuda_init_s", t, lambda: timed(lambda: torch.zeros(1, device="cuda").sum().item()))
    info["torch"] = dict(info.get("torch") or {}, **t)
    info["loaded_libraries"] = loaded_libraries()
    return info


def device(torch, i):
    p = torch.cuda.get_device_properties(i)
    out = {"index": i, "name": p.name, "total_memory": int(p.total_memory),
           "multi_processor_count": int(p.multi_processor_count),
           "capability": "%d.%d" % (p.major, p.minor)}
    arch = getattr(p, "gcnArchName", None)
    if arch:
        out["gcn_arch"] = arch
    return out


def timed(fn):
    start = time.time()
    fn()
    return round(time.time() - start, 3)


def step(key, out, fn):
    try:
        out[key] = fn()
    except BaseException as exc:
        out.setdefault("errors", {})[key] = "%s: %s" % (type(exc).__name__, str(exc).strip()[:300])


def main():
    depth = "deep" if "--deep" in sys.argv else "fast"
    info = {"payload": "torch_probe", "depth": depth, "env": {
        k: os.environ.get(k) for k in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")
        if os.environ.get(k) is not None}}
    try:
        info.update(fast())
        if depth == "deep":
            deep(info)
    except BaseException as exc:
        info["payload_error"] = "%s: %s" % (type(exc).__name__, exc)
    sys.stdout.write(json.dumps(info, default=str))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
