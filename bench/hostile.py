#!/usr/bin/env python3
"""The worst input of each kind that chose hpcdoctor's memory and time (issue 19), generated
here, and the peak memory and wall time of one hpcdoctor on each (issue 27 added the rows from
env-200KB on: quadratic patterns, pastes read before the budget, depth, a FIFO).

    python bench/hostile.py                                   # this checkout's hpcdoctor
    python bench/hostile.py --hpcdoctor /tmp/orig/.venv/bin/hpcdoctor   # another one, to compare
    python bench/hostile.py --only tar-longname,diff          # some rows

Peak memory is the child's own maximum resident set (os.wait4); a row runs under a 120 s limit
(--limit) and is reported as "killed" past it. Inputs are built in a temporary folder: the tar
bundle is 3.1 MB on disk for a 3 GB header of zeros, the paste 12 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "tests" / "fixtures" / "nodes" / "cpu-kvm-2core"
Q_SOURCE = ROOT / "tests" / "fixtures" / "public" / "nvsmi" / "gls_8xH100-SXM_nvsmi_a_565.txt"
MARKER = "hpcdoctor-bench-hostile"
sys.path.insert(0, str(ROOT / "tests"))
from hostile_inputs import header_bundle  # noqa: E402  (the inputs the tests use)


def cpulist_snapshot(path: Path) -> Path:
    """The 2-core recording with 400 ranges of 65,537 CPUs as its online list (7 KB)."""
    shutil.copytree(NODE, path)
    hostile = ",".join(f"{i * 70000}-{i * 70000 + 65536}" for i in range(400)) + "\n"
    for folder in ("cpu", "node"):
        (path / "fs" / "sys" / "devices" / "system" / folder / "online").write_text(hostile)
    return path


def tool_path(tmp: Path, name: str, script: str) -> dict:
    bindir = tmp / f"bin-{name}"
    bindir.mkdir()
    tool = bindir / "nvidia-smi"
    tool.write_text("#!/bin/sh\n" + script)
    tool.chmod(0o755)
    return {"PATH": f"{bindir}:{os.environ['PATH']}"}


def diff_reports(tmp: Path):
    """Two 300 KB reports whose 45,000-CPU lists differ in every item."""
    paths = []
    for name, odd in (("a", 0), ("b", 1)):
        doc = {"schema_version": "1.0", "findings": [], "unknown": {},
               "facts": {"affinity": {"allowed_cpus": [2 * i + odd for i in range(45_000)]}}}
        p = tmp / f"{name}.json"
        p.write_text(json.dumps(doc))
        paths.append(str(p))
    return paths


def q_paste(path: Path, gpus: int = 1200) -> Path:
    """`nvidia-smi -q` of ``gpus`` GPUs (12 MB for 1200), each with its own bus id."""
    head, *blocks = re.split(r"(?m)^(?=GPU [0-9A-F]{8}:)", Q_SOURCE.read_text())
    head = re.sub(r"(Attached GPUs\s*: )\d+", lambda m: m.group(1) + str(gpus), head)
    with open(path, "w") as fh:
        fh.write(head)
        for i in range(gpus):
            fh.write(re.sub(r"^GPU [0-9A-F:.]+", f"GPU {i // 256:08X}:{i % 256:02X}:00.0", blocks[i % len(blocks)], count=1))
    return path


PASTES = ROOT / "tests" / "fixtures" / "pastes"


def env_value_snapshot(path: Path, size: int = 200_000) -> Path:
    """The 2-core recording with one 200 KB environment value of letters (issue 27 H1)."""
    shutil.copytree(NODE, path)
    env = path / "cmd" / "env.txt"
    env.write_text(env.read_text() + "NCCL_DEBUG_FILE=" + "a" * size + "\n")
    return path


def vllm_env_paste(path: Path, size: int = 200_000) -> Path:
    text = (PASTES / "vllm-dstack-8xh100-collect_env-indented.txt").read_text()
    path.write_text(text.replace("NCCL_VERSION=2.19.3", "NCCL_VERSION=2.19.3-" + "a" * size))
    return path


def gpu_list_pastes(tmp: Path, names: int = 4000):
    """Two collect_env reports whose GPU lists (140 KB each) name the same GPUs in reverse order."""
    text = (PASTES / "pytorch-43058-cuda102-driver418.txt").read_text()
    tmp.mkdir(exist_ok=True)
    out = []
    for name, order in (("g1.txt", 1), ("g2.txt", -1)):
        gpus = "\n".join(f"GPU {i}: Tesla V100-PCIE-16GB unit {i}" for i in range(names))
        lines = gpus.split("\n")[::order]
        p = tmp / name
        p.write_text(text.replace("GPU 0: Tesla V100-PCIE-16GB\nGPU 1: Tesla V100-PCIE-16GB", "\n".join(lines)))
        out.append(str(p))
    return out


def xml_gpu_flood(path: Path, size: int = 2 << 20) -> Path:
    body = "<gpu/>" * (size // 6)
    path.write_text(f'<?xml version="1.0" ?>\n<nvidia_smi_log><driver_version>550.54</driver_version>{body}</nvidia_smi_log>\n')
    return path


def alternating_pieces(path: Path, size: int = 16 << 20) -> Path:
    """Lines that each start a tool output (ibstat, then ibv_devinfo), 16 MiB (issue 27 M1)."""
    with open(path, "w") as fh:
        i = written = 0
        while True:
            chunk = f"CA 'mlx5_{i}'\nhca_id: mlx5_{i}\n"
            if written + len(chunk) > size - 1:
                break
            fh.write(chunk)
            written += len(chunk)
            i += 1
    return path


def deep_bundle(path: Path, depth: int = 1800) -> Path:
    import io

    with tarfile.open(path, "w:gz", format=tarfile.GNU_FORMAT) as tar:
        for level in range(1, depth + 1):  # one folder member per level, as tar writes a tree
            folder = tarfile.TarInfo("snap/" + "d/" * level)
            folder.type = tarfile.DIRTYPE
            tar.addfile(folder)
        info = tarfile.TarInfo("snap/" + "d/" * depth + "meta.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
    return path


def deep_reports(tmp: Path, depth: int = 950):
    a, b = tmp / "deep-a.json", tmp / "deep-b.json"
    a.write_text('{"schema_version": "1.0", "findings": [], "unknown": {}, "facts": {"a": %s}}' % ("[" * depth + "]" * depth))
    b.write_text('{"schema_version": "1.0", "findings": [], "unknown": {}, "facts": {"a": 1}}')
    return [str(a), str(b)]


def numa_flood(path: Path, nodes: int = 100_000) -> Path:
    path.write_text(f"available: {nodes} nodes (0-{nodes - 1})\n"
                    + "".join(f"node {i} cpus: {i}\nnode {i} size: 1000 MB\n" for i in range(nodes)))
    return path


def fifo_snapshot(path: Path) -> Path:
    shutil.copytree(NODE, path)
    (path / "cmd" / "env.txt").unlink()
    os.mkfifo(path / "cmd" / "env.txt")
    return path


def store_row() -> int:
    """Rank 0's collector under a peer that appends 8 MiB eight times to every key it can list and
    fills the post queue with the largest items the store takes (issue 27, M4), with the store
    served as rank 0 serves it (its own process, under its ceiling). Prints the largest value rank
    0 read and the store process's resident memory."""
    import datetime
    import socket

    from torch.distributed import TCPStore
    from hpcdoctor.payload import cluster_probe
    from hpcdoctor.payload import cluster_wire as probe

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server, kind, ceiling = cluster_probe.start_store_server(port, 2, 60)
    try:
        t = datetime.timedelta(seconds=20)
        rank0 = TCPStore("127.0.0.1", port, 2, False, timeout=t)
        key = os.urandom(32)
        probe.post(probe.Channel(TCPStore("127.0.0.1", port, 2, False, timeout=t), key, probe.POSTS, 2, kind),
                   key, "job", {"from": 1, "node": {}, "ranks": {"1": {}}})
        peer = TCPStore("127.0.0.1", port, 2, False, timeout=t)
        for name in set(peer.list_keys()) | {"hpcdoctor/post/1", "hpcdoctor/posts"}:
            for _ in range(8):
                peer.append(name, b"x" * (8 << 20))
        for _ in range(4):
            peer.queue_push(probe.POSTS, b"y" * (8 << 20))
        c = probe.Collector(rank0, key, "job", 2, kind)
        c.poll(time.monotonic() + 20)
        with open(f"/proc/{server.pid}/status") as fh:
            rss = next(int(line.split()[1]) >> 10 for line in fh if line.startswith("VmRSS:"))
        print(json.dumps({"kind": kind, "largest_read": max(c.post_bytes), "posts_read": len(c.post_bytes),
                          "arrived": sorted(c.ranks), "server_rss_mb": rss, "ceiling_mb": ceiling >> 20}))
    finally:
        cluster_probe.stop_store_server(server)
    return 0


def cases(tmp: Path):
    """(name, argv after the executable, extra environment, what to read in the result)."""
    yield "tar-longname", ["check", "--from", str(header_bundle(tmp / "ln.tar.gz", 3 << 30, tarfile.GNUTYPE_LONGNAME)),
                           "--budget", "3"], {}
    yield "tar-pax", ["check", "--from", str(header_bundle(tmp / "pax.tar.gz", 3 << 30, tarfile.XHDTYPE)),
                      "--budget", "3"], {}
    yield "cpulist", ["check", "--from", str(cpulist_snapshot(tmp / "cpus")), "--format", "json"], {}
    yield "endless-tool", ["check", "--budget", "20", "--format", "json"], tool_path(tmp, "yes", f"exec yes {'x' * 200}\n")
    yield "setsid-child", ["check", "--budget", "30", "--format", "json"], tool_path(
        tmp, "setsid", f"setsid sh -c 'sleep 120; : {MARKER}' &\necho 'NVIDIA-SMI has failed'\nexit 9\n")
    yield "diff-300KB", ["diff", *diff_reports(tmp)], {}
    yield "paste-q-12MB", ["check", "--from", str(q_paste(tmp / "q.txt")), "--format", "json"], {}
    # issue 27
    yield "env-200KB", ["check", "--from", str(env_value_snapshot(tmp / "envsnap")), "--budget", "5", "--format", "json"], {}
    yield "vllm-env-200KB", ["check", "--from", str(vllm_env_paste(tmp / "vllm.txt")), "--budget", "5", "--format", "json"], {}
    g1, g2 = gpu_list_pastes(tmp)
    yield "gpu-lists-150KB", ["check", "--from", g1, "--from", g2, "--budget", "5", "--format", "json"], {}
    yield "xml-gpu-2MB", ["check", "--from", str(xml_gpu_flood(tmp / "x.txt")), "--budget", "5", "--format", "json"], {}
    yield "pieces-16MiB", ["check", "--from", str(alternating_pieces(tmp / "ib.txt")), "--budget", "5", "--format", "json"], {}
    yield "tar-1800-deep", ["check", "--from", str(deep_bundle(tmp / "deep.tar.gz")), "--budget", "5"], {"TMPDIR": str(_scratch(tmp))}
    yield "json-950-deep", ["diff", *deep_reports(tmp)], {}
    yield "numa-100000", ["check", "--from", str(numa_flood(tmp / "numa.txt")), "--budget", "5", "--format", "json"], {}
    yield "fifo-output", ["check", "--from", str(fifo_snapshot(tmp / "fifo")), "--budget", "5", "--format", "json"], {}
    # issue 27, the sizes the issue measured past the first rows, and the budget on a paste
    yield "env-1MB", ["check", "--from", str(env_value_snapshot(tmp / "envsnap1m", 1_000_000)), "--budget", "5",
                      "--format", "json"], {}
    yield "sigterm-env-1MB", ["check", "--from", str(tmp / "envsnap1m"), "--budget", "5", "--format", "json"], {}
    g1, g2 = gpu_list_pastes(tmp / "g300", 8000)
    yield "gpu-lists-300KB", ["check", "--from", g1, "--from", g2, "--budget", "5", "--format", "json"], {}
    yield "xml-gpu-16MB", ["check", "--from", str(xml_gpu_flood(tmp / "x16.txt", 16 << 20)), "--budget", "5",
                           "--format", "json"], {}
    yield "paste-q-12MB-b5", ["check", "--from", str(tmp / "q.txt"), "--budget", "5", "--format", "json"], {}
    yield "store-append", [sys.executable, __file__, "--store-row"], {}


def _scratch(tmp: Path) -> Path:
    path = tmp / "scratch"
    path.mkdir(exist_ok=True)
    return path


def measure(exe: str, argv, env, limit: float, term_after: float = 0.0):
    """Exit, peak MB, seconds, killed, stdout, stderr; with ``term_after`` a SIGTERM is sent then,
    and the seconds are those from the signal to the exit."""
    t0 = time.monotonic()
    cmd = argv if argv and argv[0] == sys.executable else [exe, *argv]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=dict(os.environ, **env),
                                start_new_session=True)
        killed = False
        termed = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if term_after and termed is None and time.monotonic() - t0 > term_after:
                proc.send_signal(signal.SIGTERM)
                termed = time.monotonic()
            if time.monotonic() - t0 > limit:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - (termed or t0)
        out.seek(0)
        err.seek(0)
        return proc.returncode, usage.ru_maxrss / 1024, wall, killed, out.read(), err.read().decode("utf-8", "replace")


def note(name: str, stdout: bytes, stderr: str) -> str:
    try:
        doc = json.loads(stdout) if stdout.startswith(b"{") else None
    except ValueError:
        doc = None
    if name == "paste-q-12MB" and doc:
        return f"{len(doc['facts'].get('gpus') or [])} GPUs read"
    if name == "cpulist" and doc:
        return f"logical_cpus={(doc['facts'].get('cpu') or {}).get('logical_cpus')}"
    if name == "endless-tool" and doc:
        nvidia = doc["facts"].get("nvidia") or {}
        if not isinstance(nvidia, dict):
            nvidia = {}
        return str(nvidia.get("error") or doc["checks"].get("gpu_nvidia", {}).get("reason") or "")[-60:]
    if name == "setsid-child" and doc:
        return f"gpu_nvidia check: {doc['checks'].get('gpu_nvidia', {}).get('status')}"
    if name == "store-append" and doc:
        return (f"largest value rank 0 read: {doc['largest_read'] / 2**20:.1f} MiB ({doc['kind']}); arrived "
                f"{doc['arrived']}; store process {doc['server_rss_mb']} MB (data ceiling {doc['ceiling_mb']} MB)")
    if name == "sigterm-env-1MB":
        return "seconds are from SIGTERM (sent at 0.5 s) to exit"
    if doc and name in ("env-200KB", "vllm-env-200KB", "gpu-lists-150KB", "xml-gpu-2MB", "pieces-16MiB", "numa-100000",
                        "fifo-output", "env-1MB", "gpu-lists-300KB", "xml-gpu-16MB", "paste-q-12MB-b5"):
        timeouts = [n for n, p in doc["checks"].items() if p.get("status") == "timeout"]
        return f"{len(stdout) / 1e6:.2f} MB printed; timed out: {', '.join(timeouts) or 'none'}"
    if name == "json-950-deep":
        return f"{len(stdout) / 1e3:.0f} KB printed; " + (stderr.strip().splitlines() or [""])[-1][:60]
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    return last.replace(str(Path(tempfile.gettempdir())), "$TMP")[:90]


def _leftovers():
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if MARKER in line and "ps -eo" not in line]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hpcdoctor", default=str(Path(sys.executable).parent / "hpcdoctor"))
    ap.add_argument("--only", default="", help="comma-separated row names")
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--store-row", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.store_row:
        return store_row()
    only = {x for x in args.only.split(",") if x}
    print(f"{'input':15} {'exit':>4} {'peak MB':>8} {'seconds':>8}  note")
    # Not named with MARKER: _leftovers would take every run reading an input there for a leftover.
    with tempfile.TemporaryDirectory(prefix="hpcdoctor-hostile-inputs-") as tmp:
        for name, argv, env in cases(Path(tmp)):
            if only and name not in only:
                continue
            rc, peak, wall, killed, out, err = measure(args.hpcdoctor, argv, env, args.limit,
                                                       0.5 if name.startswith("sigterm") else 0.0)
            print(f"{name:15} {'kill' if killed else rc:>4} {peak:8.0f} {wall:8.2f}  {note(name, out, err)}", flush=True)
            if name == "tar-1800-deep":
                left = list(_scratch(Path(tmp)).iterdir())
                print(f"{'':15} temporary trees left behind: {len(left)}", flush=True)
                for p in left:
                    subprocess.run(["rm", "-rf", str(p)], check=False)
            for pid in _leftovers():  # the setsid child is outside hpcdoctor's reach by design
                try:
                    os.killpg(os.getpgid(pid), signal.SIGKILL)  # its session's group: the sleep too
                except ProcessLookupError:
                    pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
