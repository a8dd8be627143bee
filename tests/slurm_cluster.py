"""A real one-node Slurm for the tests: munged, slurmctld and slurmd from the distribution's packages
(Debian: slurm-wlm, munge), on loopback ports, with everything they write under one folder.

The configuration is generated for this machine (its CPUs and memory, as ``slurmd -C`` reports
them), with Linux process tracking and affinity binding, so that it runs where cgroups cannot be
delegated (a container). Daemons are started in the foreground as our own children and stopped by
their PIDs; nothing is left running and no system file is touched.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Optional

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sinfo", "srun", "sbatch", "scontrol")
SBIN = "/usr/sbin:/sbin"


class Unavailable(Exception):
    """Slurm cannot be started here (packages absent, not root); the reason is the message."""


def find(name: str) -> Optional[str]:
    return shutil.which(name, path=os.environ.get("PATH", "") + ":" + SBIN)


def missing() -> List[str]:
    return [n for n in DAEMONS + CLIENTS if find(n) is None]


def die_with_parent() -> None:
    """preexec_fn: the daemon gets SIGTERM when the test process dies, even by SIGKILL (a killed
    pytest must not leave a Slurm running). Linux prctl(PR_SET_PDEATHSIG)."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _free_ports(n: int) -> List[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def _shape() -> Dict[str, str]:
    """This machine as slurmd sees it: ``NodeName=vm CPUs=2 Boards=1 ... RealMemory=24105``."""
    out = subprocess.run([find("slurmd"), "-C"], capture_output=True, text=True, timeout=20).stdout
    first = out.splitlines()[0] if out else ""
    fields = dict(re.findall(r"(\w+)=(\S+)", first))
    if "CPUs" not in fields:
        raise Unavailable(f"slurmd -C gave no node shape: {first[:200]!r}")
    return fields


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# Slurm's hooks, each the shipped example behind a switch: slurmd starts hooks with almost no
# environment, so a wrapper says where this cluster's slurm.conf, hpcdoctor and folders are. They are
# in slurm.conf from the start and switched by a file: after an `scontrol reconfigure`, 22.05.8 gave
# out a job id a second time here, and slurmd ran no Prolog for it ("reissued job credential").
HOOKS = {"prolog": EXAMPLES / "prometheus" / "slurm-prolog.sh", "epilog": EXAMPLES / "prometheus" / "slurm-epilog.sh",
         "healthcheck": EXAMPLES / "slurm-healthcheck.sh"}


class SlurmCluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.conf = root / "slurm.conf"
        self.node = socket.gethostname().split(".")[0]
        self.procs: Dict[str, subprocess.Popen] = {}
        self.site_config = root / "site.toml"  # the hooks' hpcdoctor site config (HPCDOCTOR_CONFIG)
        self.bin = str(Path(sys.executable).parent)  # the test environment's hpcdoctor and python
        self.env = dict(os.environ, SLURM_CONF=str(self.conf), PATH=self.bin + ":" + os.environ.get("PATH", ""))
        from hpcdoctor.nodescope import is_job_variable

        for k in [k for k in self.env if is_job_variable(k)]:
            del self.env[k]  # a test run inside a job must not hand its job's settings to ours

    # --- configuration ---------------------------------------------------------------------
    def write_conf(self) -> None:
        r = self.root
        shape = self.shape
        lines = [
            "ClusterName=hpcdoctortest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={self.ports[0]}",
            f"SlurmdPort={self.ports[1]}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", f"AuthInfo=socket={r}/munge/munge.sock", "CredType=cred/munge",
            f"StateSaveLocation={r}/state", f"SlurmdSpoolDir={r}/spool",
            f"SlurmctldPidFile={r}/slurmctld.pid", f"SlurmdPidFile={r}/slurmd.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log", f"SlurmdLogFile={r}/log/slurmd.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/affinity",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            # MinJobAge of 5 or less keeps `sbatch --wait` polling every 2 s (sbatch.c's _job_wait).
            "MpiDefault=none", "ReturnToService=2", "KillWait=2", "MinJobAge=4", "InactiveLimit=0",
            "SlurmctldTimeout=30", "SlurmdTimeout=30", "MessageTimeout=10",
            # Listen on loopback only (the node's name resolves there, checked in start()).
            "CommunicationParameters=NoCtldInAddrAny" + (",NoInAddrAny" if self.loopback_name else ""),
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={shape['CPUs']} Boards={shape.get('Boards', 1)} "
            f"SocketsPerBoard={shape.get('SocketsPerBoard', 1)} CoresPerSocket={shape.get('CoresPerSocket', shape['CPUs'])} "
            f"ThreadsPerCore={shape.get('ThreadsPerCore', 1)} RealMemory={max(1, int(shape.get('RealMemory', 1024)) - 256)} "
            "State=UNKNOWN",
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            f"Prolog={r}/hooks/prolog", f"Epilog={r}/hooks/epilog",
            f"HealthCheckProgram={r}/hooks/healthcheck", "HealthCheckInterval=2", "HealthCheckNodeState=ANY",
        ]
        self.conf.write_text("\n".join(lines) + "\n")

    def write_hooks(self) -> None:
        hooks = self.root / "hooks"
        hooks.mkdir(mode=0o755, exist_ok=True)
        self.site_config.write_text("")
        for name, script in HOOKS.items():
            (self.root / f"textfile-{name}").mkdir(exist_ok=True)
            path = hooks / name
            path.write_text(f"#!/bin/bash\n[ -e {hooks}/{name}.on ] || exit 0\n"
                            f"export SLURM_CONF={self.conf} HPCDOCTOR={self.bin}/hpcdoctor "
                            f"HPCDOCTOR_TEXTFILE_DIR={self.root}/textfile-{name} HPCDOCTOR_CONFIG={self.site_config}\n"
                            f"exec bash {script}\n")
            path.chmod(0o755)

    @contextmanager
    def hook(self, name: str) -> Iterator[Path]:
        """The shipped example ``name`` runs as Slurm's hook while the block runs; yields its textfile folder."""
        on = self.root / "hooks" / f"{name}.on"
        on.touch()
        try:
            yield self.root / f"textfile-{name}"
        finally:
            on.unlink()

    # --- life cycle ------------------------------------------------------------------------
    def start(self, budget: float = 30.0) -> None:
        if os.geteuid() != 0:
            raise Unavailable("starting slurmd needs root")
        gone = missing()
        if gone:
            raise Unavailable(f"not installed: {', '.join(gone)} (Debian: apt-get install slurm-wlm munge)")
        r = self.root
        for d in ("munge", "state", "spool", "log", "jobs"):
            (r / d).mkdir(mode=0o700, exist_ok=True)
        os.chmod(r / "munge", 0o755)  # clients (a job's srun) reach the socket through it
        key = r / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.shape = _shape()
        self.ports = _free_ports(2)
        try:
            self.loopback_name = socket.gethostbyname(socket.gethostname()).startswith("127.")
        except OSError:
            self.loopback_name = False
        self.write_conf()
        self.write_hooks()
        deadline = time.monotonic() + budget
        self._spawn("munged", [find("munged"), "-F", "-f", f"--key-file={key}", f"--socket={r}/munge/munge.sock",
                               f"--pid-file={r}/munge/munged.pid", f"--log-file={r}/log/munged.log",
                               f"--seed-file={r}/munge/seed"])
        self._wait(lambda: (r / "munge" / "munge.sock").exists(), deadline, "munged made no socket")
        self._spawn("slurmctld", [find("slurmctld"), "-D", "-i", "-f", str(self.conf)])
        self._spawn("slurmd", [find("slurmd"), "-D", "-f", str(self.conf), "-N", self.node])
        self._wait(lambda: self.node_state() == "idle", deadline, "the node never became idle in sinfo")

    def _spawn(self, name: str, argv: List[str]) -> None:
        log = open(self.root / "log" / f"{name}.out", "wb")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=self.env, start_new_session=True, preexec_fn=die_with_parent)
        log.close()

    def _wait(self, ok, deadline: float, what: str) -> None:
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited ({p.returncode}): {self.log_tail(name)}")
            if ok():
                return
            time.sleep(0.2)
        raise RuntimeError(f"{what}: {self.log_tail('slurmd')} {self.log_tail('slurmctld')}")

    def log_tail(self, name: str, n: int = 5) -> str:
        texts = []
        for f in (self.root / "log" / f"{name}.log", self.root / "log" / f"{name}.out"):
            if f.exists():
                texts.extend(f.read_text(errors="replace").splitlines()[-n:])
        return " | ".join(texts)

    def stop(self) -> None:
        # The reverse order of start; each daemon by its own PID, waited for, then killed if stuck.
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)

    # --- use -------------------------------------------------------------------------------
    def run(self, argv: List[str], timeout: float = 60, check: bool = False, env: Optional[Dict[str, str]] = None,
            cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=dict(self.env, **(env or {})),
                             cwd=str(cwd or self.root / "jobs"))
        if check and res.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {res.returncode}: {res.stderr.strip()[-500:]}")
        return res

    def node_state(self) -> str:
        res = self.run(["sinfo", "-h", "-n", self.node, "-o", "%T"], timeout=15)
        return res.stdout.strip() if res.returncode == 0 else ""

    def node_reason(self) -> str:
        res = self.run(["sinfo", "-h", "-R", "-n", self.node, "-o", "%E"], timeout=15)
        return res.stdout.strip()

    def wait_for(self, ok, timeout: float, what: str, step: float = 0.3) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ok():
                return
            time.sleep(step)
        raise AssertionError(f"{what} (node state {self.node_state()!r}, reason {self.node_reason()!r})")

    def wait_idle(self, timeout: float = 20) -> None:
        """Between tests: no job left on the node (MinJobAge keeps finished jobs listed a while)."""
        self.wait_for(lambda: self.node_state() == "idle", timeout, "the node did not return to idle")
