"""``check --cluster``: one node check per node, every rank's placement, rank 0's report.

The node's first local rank (local rank 0 from torchrun, mpirun or srun) is its leader: it checks the node and
runs the payload that talks to rank 0's TCPStore. The node's other ranks gather only what is
theirs (allowed CPUs, binding and thread variables, visible GPUs), with no torch and no payload,
and leave it in a node-local folder that only this user can write, for the leader to forward.
Without a local rank variable the node's ranks elect one leader through the node folder
(``leads_host``), so sixteen ranks on a node still cost one check.

Posts are signed and enciphered with a per-job key made from a secret no other user can derive:
HPCDOCTOR_CLUSTER_SECRET when set, else a random secret kept in ~/.hpcdoctor/cluster-secret (created
0600 on first use; a cluster's home is shared by its nodes). A key made from the job's public
identity alone let anyone on the network forge a node and read every report (issue 27). The key
reaches the payload through its environment, never its command line.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from hpcdoctor import budgets, jsonbound
from hpcdoctor.payload.cluster_probe import rendezvous

MAX_RANK_INFO = 16 << 10


class ClusterError(Exception):
    pass


def testing(env: Dict[str, str]) -> bool:
    return env.get("HPCDOCTOR_TESTING") == "1"


def node_name(env: Dict[str, str]) -> str:
    # Tests run several "nodes" on one machine; the override is honoured only under the test flag.
    if testing(env) and env.get("HPCDOCTOR_TEST_NODE"):
        return env["HPCDOCTOR_TEST_NODE"]
    import socket

    return socket.gethostname()


# The launcher's own variables first: mpirun inside an allocation starts its ranks through one
# Slurm task per node, so SLURM_LOCALID is 0 for all of them. Open MPI sets OMPI_COMM_WORLD_LOCAL_*,
# MPICH and Intel MPI's Hydra MPI_LOCAL* (both read so by libpsm3's rank detection).
LOCAL_RANK_VARS = ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID")
LOCAL_SIZE_VARS = ("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS")


def local_rank(env: Dict[str, str]) -> Optional[int]:
    for name in LOCAL_RANK_VARS:
        if (env.get(name) or "").isdecimal():
            return int(env[name])
    return None


def tasks_per_node(spec: str) -> List[int]:
    """Slurm's SLURM_STEP_TASKS_PER_NODE: "2(x3),1" -> [2, 2, 2, 1]."""
    out: List[int] = []
    for part in (spec or "").split(","):
        m = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", part)
        if not m:
            return []
        out.extend([int(m.group(1))] * int(m.group(2) or 1))
    return out


def local_count(env: Dict[str, str]) -> int:
    """Ranks on this node, 0 when the launcher does not say (the leader then forwards until done)."""
    for name in LOCAL_SIZE_VARS:
        if (env.get(name) or "").isdecimal():
            return int(env[name])
    per_node = tasks_per_node(env.get("SLURM_STEP_TASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE") or "")
    node = env.get("SLURM_NODEID") or ""
    if per_node and node.isdecimal() and int(node) < len(per_node):
        return per_node[int(node)]
    return 0


def job_identity(env: Dict[str, str], master: str, port: int) -> str:
    parts = [env.get(k, "") for k in ("SLURM_JOB_ID", "SLURM_STEP_ID", "TORCHELASTIC_RUN_ID")]
    return "\0".join(parts + [master, str(port), str(os.getuid())])


SECRET_FILE = "~/.hpcdoctor/cluster-secret"


def job_key(env: Dict[str, str], identity: str) -> Tuple[bytes, str]:
    """The signing key and how it was made (the key itself is never printed)."""
    secret = env.get("HPCDOCTOR_CLUSTER_SECRET")
    if secret:
        return hashlib.sha256(b"hpcdoctor-cluster-secret\0" + secret.encode()).digest(), "HPCDOCTOR_CLUSTER_SECRET"
    kept = _secret_file(env)
    return (hashlib.sha256(b"hpcdoctor-cluster-file\0" + kept + b"\0" + identity.encode()).digest(),
            f"a secret file private to this user, {SECRET_FILE}")


def _secret_file(env: Dict[str, str]) -> bytes:
    """The user's cluster secret: read, or made once (written whole, then linked into place, so
    that two nodes starting together on a shared home agree on one)."""
    home = env.get("HOME") or os.path.expanduser("~")
    folder = Path(home) / ".hpcdoctor"
    path = folder / "cluster-secret"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        if not path.exists():
            fd, tmp = tempfile.mkstemp(prefix=".cluster-secret.", dir=str(folder))  # mode 0600
            try:
                with os.fdopen(fd, "w") as fh:
                    fh.write(os.urandom(32).hex() + "\n")
                os.link(tmp, path)
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read(4096)
    except OSError as exc:
        raise ClusterError(f"cannot use {path} for the job key ({exc.strerror or exc}); "
                           "set HPCDOCTOR_CLUSTER_SECRET to a secret of this job") from None
    if st.st_uid != os.getuid() or st.st_mode & 0o077 or len(data.strip()) < 32:
        raise ClusterError(f"{path} is not a private secret of this user (owner, mode 0600, 64 hex digits); "
                           "remove it, or set HPCDOCTOR_CLUSTER_SECRET")
    return data.strip()


def local_dir(env: Dict[str, str], identity: str, node: str, create: bool, key: bytes = b"") -> Path:
    """The node folder where the node's ranks leave their reports: private to this user, refused
    when someone else made it or can write to it. Its name comes from the job key, so no other
    user can make it first (a name from public facts could be taken in advance)."""
    tag = hashlib.sha256(key + b"\0" + (identity + "\0" + node).encode()).hexdigest()[:20]
    path = Path(tempfile.gettempdir()) / f"hpcdoctor-cluster-{os.getuid()}-{tag}"
    if create:
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise ClusterError(f"cannot create the node folder {path}: {exc.strerror}") from None
    try:
        st = os.lstat(path)
    except OSError:
        return path
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ClusterError(f"{path} is not a private folder of this user; refusing to use it")
    return path


def leads_host(env: Dict[str, str], identity: str, node: str, rank: int, master: str, since: float) -> bool:
    """The election when the launcher gives no local rank: rank 0 leads its own host, and the ranks
    of a host named as the rendezvous host follow it; elsewhere the first rank to create the node
    folder's ``leader`` file leads and the others follow. The folder is on the node, so this costs
    no torch import and no store round trip (the store lives in rank 0's payload). A rank that
    reaches rank 0's host before rank 0 and cannot tell it is that host leads too: its node is
    then checked twice, never missed. A ``leader`` file older than ``since`` is an earlier run's
    (same port, no job id, a leader that died before tidying) and is taken over."""
    folder = local_dir(env, identity, node, create=True, key=job_key(env, identity)[0])
    if rank != 0 and master.split(".")[0] == node.split(".")[0]:
        return False
    leader = folder / "leader"
    for _ in range(2):
        try:
            fd = os.open(str(leader), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            break
        except FileExistsError:
            try:
                stale = os.lstat(leader).st_mtime < since
            except OSError:
                stale = True  # gone in between: try again
            if not stale:
                return rank == 0
            try:
                os.unlink(leader)
            except OSError:
                pass
        except OSError as exc:
            raise ClusterError(f"cannot elect this node's leader in {folder}: {exc.strerror}") from None
    else:
        return rank == 0
    with os.fdopen(fd, "w") as fh:
        fh.write(str(rank))
    return True


def rank_info(facts: Dict[str, Any], env: Dict[str, str], rank: int, node: str) -> Dict[str, Any]:
    """What is this rank's own: where it may run and what it will start."""
    from hpcdoctor.parse.cpulist import format_cpulist

    cpus = (facts.get("affinity") or {}).get("allowed_cpus")
    keep = ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "SLURM_CPU_BIND", "SLURM_CPU_BIND_LIST",
            "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "LOCAL_RANK", "SLURM_LOCALID")
    return {"rank": rank, "node": node, "cpus": format_cpulist(cpus) if isinstance(cpus, list) else None,
            "env": {k: env[k][:256] for k in keep if k in env}}


def _follower(env: Dict[str, str], rank: int, node: str, identity: str) -> int:
    from hpcdoctor.checks import affinity
    from hpcdoctor.facts import flatten_unknowns
    from hpcdoctor.runner import Options, merge_facts, run_checks
    from hpcdoctor.sysroot import LiveSysRoot

    # Only what is this rank's own: the node's other facts come once, from its leader.
    facts, _ = flatten_unknowns(merge_facts(run_checks(LiveSysRoot(), [affinity], Options(budget=5.0))))
    info = json.dumps(rank_info(facts, env, rank, node)).encode()[:MAX_RANK_INFO]
    folder = local_dir(env, identity, node, create=True, key=job_key(env, identity)[0])
    fd, tmp = tempfile.mkstemp(prefix=".rank-", dir=str(folder))
    with os.fdopen(fd, "wb") as fh:
        fh.write(info)
    os.replace(tmp, folder / f"rank-{rank}.json")  # whole or absent when the leader looks
    return 0


def gather(request: Any, diagnose: Callable[[Any], Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """This rank's part; on rank 0 the gathered reports (None on every other rank). ``request`` is
    an ``hpcdoctor.app.Request``; ``diagnose`` checks this node with it."""
    env = dict(os.environ)
    try:
        rank, world, master, port = rendezvous(env)
    except SystemExit as exc:
        raise ClusterError(str(exc).replace("hpcdoctor cluster: ", "")) from None
    except ValueError:
        raise ClusterError("RANK, WORLD_SIZE and MASTER_PORT must be integers") from None
    node = node_name(env)
    identity = job_identity(env, master, port)
    lr = local_rank(env)
    elected = lr is None
    if elected:
        lr = 0 if leads_host(env, identity, node, rank, master, time.time() - request.cluster_timeout) else 1
    if lr > 0 and rank != 0:
        _follower(env, rank, node, identity)
        return None
    from hpcdoctor.checks.torch_stack import target_python
    from hpcdoctor.runner import Options
    from hpcdoctor.sysroot import run_process

    python = target_python(Options(python=request.python))
    if python is None:
        raise ClusterError("--cluster needs a python3 with torch on the node leaders (pass --python)")
    key, how = job_key(env, identity)
    count = local_count(env)  # 0 when unknown: the leader forwards its node's reports until rank 0 is done
    # An elected leader always has the folder, and tidies its election away at the end.
    folder = local_dir(env, identity, node, create=True, key=key) if count != 1 or elected else None
    payload = Path(__file__).resolve().parent.parent / "payload" / "cluster_probe.py"
    child_env = dict(env, HPCDOCTOR_CLUSTER_KEY=key.hex(),
                     HPCDOCTOR_CLUSTER_JOB=hashlib.sha256(identity.encode()).hexdigest()[:32])
    bench_budget = budgets.BENCH.get(request.bench or "", 0.0)
    with tempfile.TemporaryDirectory(prefix="hpcdoctor-cluster-") as tmp:
        local, out = Path(tmp) / "local.json", Path(tmp) / "gathered.json"
        argv = [python, str(payload), "--report", str(local), "--out", str(out),
                "--timeout", str(request.cluster_timeout), "--local-count", str(count),
                "--since", str(time.time() - request.cluster_timeout)]
        if folder is not None:
            argv += ["--local-dir", str(folder)]
        if request.bench:
            argv += ["--bench", request.bench, "--bench-budget", str(bench_budget)]
        limit = request.cluster_timeout + (bench_budget + 10 if request.bench else 0) + 30
        # The payload imports torch and joins the store while this process checks the node; on a
        # shared filesystem the import alone can take longer than the check.
        box: Dict[str, Any] = {}
        worker = threading.Thread(target=lambda: box.update(res=run_process(argv, timeout=limit, env=child_env)),
                                  name="cluster-payload", daemon=True)
        if not request.bench:  # a benchmark beside a torch import would measure the import
            worker.start()
        try:
            doc = diagnose(request)
            mine = {"node": doc, "rank": rank_info(doc.get("facts", {}), env, rank, node)}
        except BaseException as exc:
            _hand_over(local, {"abort": f"node check failed: {exc.__class__.__name__}"})
            if worker.is_alive():
                worker.join(10)
            raise
        _hand_over(local, mine)
        if request.bench:
            worker.start()
        try:
            worker.join(limit + 5)
        finally:
            if folder is not None:
                _tidy(folder)
        res = box.get("res")
        if res is None:
            raise ClusterError("cluster gathering did not finish")
        if res.rc != 0:
            tail = (res.stderr.strip().splitlines() or ["no output"])[-1]
            raise ClusterError(f"cluster gathering failed: {tail[:300]}")
        if not out.exists():
            return None  # a leader other than rank 0: rank 0 prints the report
        try:
            gathered = jsonbound.loads(out.read_text())
        except ValueError as exc:
            raise ClusterError(f"cluster gathering wrote no readable result: {exc}") from None
    gathered["auth"] = how
    return gathered


def _hand_over(path: Path, doc: Dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(doc, default=str))
    os.replace(tmp, path)  # the payload sees the whole report or none


def _tidy(folder: Path) -> None:
    for p in folder.glob("*"):
        try:
            p.unlink()
        except OSError:
            pass
    try:
        folder.rmdir()
    except OSError:
        pass
