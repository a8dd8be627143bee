"""What a batch job's first lines fail on before the program runs: `conda activate` in a shell where
conda's shell function was never defined, and a rendezvous port another process already holds. Read
from the tools' own messages in a pasted ticket (knowledge/messages/conda.toml, shell.toml, torch.toml)."""

from __future__ import annotations

import shlex
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, stated, told_evidence, told_text

# The refusals of conda itself (the executable was reached, only its shell function is missing).
_CONDA_SAID = ("conda:shell-not-configured", "conda:run-conda-init-first", "conda:mamba1-run-mamba-init")
_MAMBA_SAID = ("conda:micromamba-running-as-subprocess", "conda:micromamba-shell-not-initialized")
_NOT_ON_PATH = ("shell:conda-not-found", "shell:mamba-not-found")

# conda init (4.6 on) and `conda info --base` (4.6 on) name the same prefix; 4.4 and 4.5 had neither,
# and printed the prefix in the refusal instead (conda:enable-conda-sh-hint).
_CONDA_SH = 'source "$(conda info --base)/etc/profile.d/conda.sh"'
_BEFORE = "   # in the script, before its first conda activate line"


@rule("ENV026", "conda-activate-not-initialised", "error",
      "conda activate in a shell where conda's shell function was never set up", impact=6,
      also={"info": "the shell's own \"conda: command not found\": conda is not on PATH, for one of three reasons the line cannot tell apart"})
def conda_activate_not_initialised(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, conda, mamba or micromamba refusing to activate an environment because the
        shell it runs in never defined their shell function: conda 4.4-23.10's CommandNotFoundError
        "Your shell has not been properly configured to use 'conda activate'", conda 23.11 and later's
        "CondaError: Run 'conda init' before 'conda activate'", mamba 1.x's "Run 'mamba init' to be
        able to run mamba activate/deactivate", micromamba's and mamba 2's "'micromamba' is running
        as a subprocess and can't modify the parent shell" and "critical libmamba Shell not
        initialized"; and, at info, the shells' own "conda: command not found" (bash, dash, zsh, fish
        and tcsh forms) when conda is not on the shell's PATH at all: a job's shell that read no
        ~/.bashrc, a site module not loaded, or a conda never installed for this user (a guide's
        install step skipped) all print it, so it names no fault of the node.

    Why it matters:
        Activation changes the calling shell's PATH, so it works only as a shell function, which
        conda's etc/profile.d/conda.sh, `conda shell.bash hook` or `micromamba shell hook` define.
        conda init puts that in ~/.bashrc, which an interactive shell reads and a batch script
        (sbatch, `bash script.sh`) does not. The activate line fails, the script goes on, and the
        program runs with the system's Python and packages: import errors or a wrong torch, far from
        the cause. Starting the script with #!/bin/bash -l helps only where the login files set conda
        up: a login bash reads ~/.bash_profile (or ~/.bash_login, ~/.profile), and conda init on
        Linux writes its block to ~/.bashrc, which the login shell reads only if ~/.bash_profile
        sources it.

    How to fix:
        conda: source "$(conda info --base)/etc/profile.d/conda.sh" in the script before conda
        activate (conda 4.6 and later; eval "$(conda shell.bash hook)" does the same), or with conda
        4.4-4.5 the conda.sh under the installation the message names. micromamba (and mamba 2):
        eval "$(micromamba shell hook --shell bash)" before micromamba activate. conda not on PATH:
        module spider conda (module avail conda) lists the site's conda modules, to load before
        sourcing; a conda of your own is sourced by its full path.

    References:
        - https://github.com/conda/conda/blob/23.10.0/conda/exceptions.py (CommandNotFoundError)
        - https://github.com/conda/conda/blob/26.7.1/conda/cli/main_mock_activate.py
        - https://github.com/conda/conda/blob/26.7.1/conda/core/initialize.py (conda init bash writes ~/.bashrc on Linux)
        - https://github.com/mamba-org/mamba/blob/2.8.1/micromamba/src/activate.cpp
        - https://github.com/conda/conda/issues/8536 (conda activate failing in a Slurm job)
    """
    told = catalogued(f, "conda-activate-not-initialised")
    if not told:
        return
    said = [s for s in told if s.get("id") in _CONDA_SAID + _MAMBA_SAID]
    s = (said or told)[0]
    sid = s.get("id")
    quoted = f"(line {s.get('line')}: \"{told_text(s)}\")"
    if sid in _MAMBA_SAID:
        tool = next((t["tool"] for t in said if t.get("tool")), "micromamba")   # "Shell not initialized" names none
        what = f"{tool} activate ran in a shell where {tool}'s shell function was never defined {quoted}"
        fix = f'eval "$({tool} shell hook --shell bash)"   # in the script, before its first {tool} activate line'
    elif sid in _CONDA_SAID:
        tool = "mamba" if sid == "conda:mamba1-run-mamba-init" else "conda"
        what = (f"{tool} activate ran in a shell where {tool}'s shell function was never defined {quoted}: a batch script "
                "reads no ~/.bashrc")
        if tool == "mamba":   # mamba 1.x's own advice: conda activates once conda's function is there
            what += "; conda activate works once conda.sh is sourced"
        hint = first_symptom(f, "conda:enable-conda-sh-hint")
        fix = (f"source {shlex.quote(hint['root'] + '/etc/profile.d/conda.sh')}" if hint and hint.get("root") else _CONDA_SH) + \
            (_BEFORE if tool == "conda" else "   # in the script; then conda activate in place of mamba activate")
    else:
        tool = s.get("command") or s.get("zsh") or s.get("fish") or "conda"
        what = (f"the shell has no {tool} on PATH {quoted}: it did not read what puts it there (conda init's block in "
                f"~/.bashrc, a module), or no {tool} was installed for this user yet")
        fix = (f"module spider {tool}   # the site's {tool} modules (module avail {tool} on Tcl modules): load one in the script, "
               "then source its etc/profile.d/conda.sh; a conda of your own: source that file by its full path")
        yield Hit(message=what, fix=fix, evidence=told_evidence(s), severity="info")
        return
    yield Hit(message=what, fix=fix, evidence=told_evidence(s))


def _port(s: dict) -> Optional[str]:
    if s.get("port"):
        return str(s["port"])
    address = str(s.get("address") or "")
    tail = address.rsplit(":", 1)[-1] if ":" in address else ""
    return tail if tail.isdigit() else None


# torchrun's own lines: the launcher reads its port from --master-port (PET_MASTER_PORT), not MASTER_PORT.
_TORCHRUN = ("threads:torchrun-omp-num-threads-default",)


def _by_torchrun(f: FactView) -> bool:
    return any(s.get("id") in _TORCHRUN or s.get("family") == "elastic" for s in f.get("ticket.symptoms") or [])


_UNIQUE = "$((10000 + ${SLURM_JOB_ID:-$$} % 50000))"


def _prima_ring_ports(f: FactView, s: dict) -> Hit:
    """prima.cpp's ring: each rank binds data_port + rank and signal_port + rank (defaults 9000 and 10000,
    knowledge/messages/prima_cpp.toml); every rank must use the same bases, since a rank connects to the
    next one at the next one's data_port + rank."""
    def said(sid):
        t = next((x for x in f.get("ticket.symptoms") or [] if x.get("id") == sid), None)
        return t.get("rank") or t.get("port") if t else None
    rank, data, signal = said("prima_cpp:rank-option"), said("prima_cpp:data-port-option"), said("prima_cpp:signal-port-option")
    data, signal = int(data or 9000), int(signal or 10000)
    if rank is not None:
        ports = f"ports {data + int(rank)} (data) and {signal + int(rank)} (signal) of rank {rank}"
        look = f"ss -ltnp '( sport = :{data + int(rank)} or sport = :{signal + int(rank)} )'   # the process holding them"
    else:
        ports = f"the ports {data} + rank (data) and {signal} + rank (signal)"
        look = (f"ss -ltnp | awk -v d={data} -v s={signal} '{{n = split($4, a, \":\"); p = a[n]}} "
                f"(p >= d && p < d + 64) || (p >= s && p < s + 64)'   # the processes holding the ring's ports (ranks 0-63)")
    return Hit(message=f"a prima.cpp rank could not bind its ring sockets (line {s.get('line')}: \"{told_text(s)}\"): "
                       f"{ports} are held by another process on this node (a server, or a run that did not exit)",
               fix=(f"{look}\n"
                    f"# or move the ring to free ports: the same --data-port and --signal-port on every rank (each binds "
                    f"base + its rank), e.g. --data-port {data + 100} --signal-port {signal + 100}"),
               evidence={**told_evidence(s), "rank": rank, "data_port": data, "signal_port": signal})


@rule("ENV027", "master-port-in-use", "error", "the rendezvous port is already held by another process on the node", impact=6,
      also={"info": "read from a bare \"Address already in use\" (faq_distributed.toml): the documented usual cause"})
def master_port_in_use(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, torch.distributed's TCPStore on rank 0 failing to listen on MASTER_PORT
        because another process holds it: socket.cpp's "The server socket has failed to bind to
        [::]:29500 (errno: 98 - Address already in use)" (alone, as a [W socket.cpp] log line, or
        inside "The server socket has failed to listen on any local network address."), and the
        libuv back end's "... failed to listen on any local network address. port: 29500, useIpv6:
        false, code: -98, name: EADDRINUSE, message: address already in use". A user's "Address
        already in use" in words is answered at info. prima.cpp's ring (a distributed llama.cpp
        over ZeroMQ): "Error binding/connecting recv socket to endpoint: Address already in use",
        with the ports that rank binds from its command line (data and signal port + rank).

    Why it matters:
        Every job and every run on a node that uses the default port (29500) or the same fixed
        MASTER_PORT competes for it: a second job sharing the node, or a previous run whose processes
        did not exit, keeps it, and the new run fails before training starts.

    How to fix:
        Give each job its own port: export MASTER_PORT=$((10000 + SLURM_JOB_ID % 50000)) before a
        launch that rendezvouses through env:// (init_process_group reads MASTER_PORT). torchrun
        takes its port from --master-port or PET_MASTER_PORT, not MASTER_PORT; for a single node,
        torchrun --standalone (or --rdzv-backend=c10d --rdzv-endpoint=localhost:0) picks a free port
        (torch 2.13.0's run.py). A run of your own left over: ss -ltnp shows the process holding
        the port.

    References:
        - https://pytorch.org/docs/stable/distributed.html (MASTER_PORT: a free port on the machine with rank 0)
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/distributed/run.py (--standalone, --master-port, localhost:0)
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/distributed/argparse_util.py (PET_ environment variables)
        - https://github.com/om-ai-lab/VLM-R1/issues/289 (a second training run on port 29500)
        - https://github.com/Lizonghang/prima.cpp/blob/main/src/llama.cpp (llama_init_sockets: the ring's binds)
    """
    told = catalogued(f, "master-port-in-use")
    ring = next((t for t in told if t.get("id") == "prima_cpp:ring-socket-address-in-use"), None)
    if ring is not None:
        yield _prima_ring_ports(f, ring)
        return
    said = [s for s in told if not str(s.get("id", "")).startswith("faq_")]
    s = said[0] if said else next((t for t in told if stated(t)), None)
    if s is None:
        return
    port = _port(s)
    where = f"port {port}" if port else "MASTER_PORT"
    quoted = f"(line {s.get('line')}: \"{told_text(s)}\")"
    if _by_torchrun(f):
        fix = (f"export PET_MASTER_PORT={_UNIQUE}   # torchrun's --master-port, one per job; "
               "on a single node torchrun --standalone picks a free port")
    else:
        fix = (f"export MASTER_PORT={_UNIQUE}   # before the launch line: a port per job (env:// reads it; an "
               "init_method tcp://HOST:PORT names its own)")
    if said:
        yield Hit(message=f"rank 0's rendezvous store could not listen on {where}: another process on this node (another "
                          f"job, or a run that did not exit) holds it {quoted}",
                  fix=fix, evidence=told_evidence(s))
    else:
        yield Hit(message=f"the ticket says the address is already in use {quoted}: the usual cause (torch.distributed's docs) is a "
                          "MASTER_PORT that another process on the node holds",
                  fix=fix, evidence=told_evidence(s), severity="info")
