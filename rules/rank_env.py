"""A rank variable (NODE_RANK, LOCAL_RANK, RANK, WORLD_SIZE ...) preset in the job's environment, where
no launcher set it: PyTorch Lightning's cluster detection and torch.distributed's env:// init read it
as a launcher's word, start one process and wait for peers that never come."""

from __future__ import annotations

from typing import Dict, Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, stated, ticket_all, told_evidence, told_text

SYMBOL = "distributed-rank-env-preset"

# The names Lightning's cluster environments and torch's env:// rendezvous read (knowledge/messages/
# lightning.toml, the comment above ddp-init-member), in the order the finding names them.
RANK_VARS = ("NODE_RANK", "GROUP_RANK", "LOCAL_RANK", "RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")

# What a launcher sets in every process it starts, so that rank variables beside one are its own:
# torchrun/torch.distributed.elastic TORCHELASTIC_RUN_ID (torch/distributed/run.py, the worker
# environment; torch.distributed.is_torchelastic_launched() tests it, and Lightning 1.6+ takes the
# TorchElastic environment for it), srun SLURM_PROCID (srun(1): set for each task it starts; sbatch's
# batch shell has SLURM_JOB_ID but no SLURM_PROCID of a step), Open MPI's mpirun OMPI_COMM_WORLD_RANK,
# MPICH/Hydra and Intel MPI PMI_RANK, PMIx launchers PMIX_RANK, LSF's jsrun JSM_NAMESPACE_RANK.
LAUNCHER_MARKS = ("TORCHELASTIC_RUN_ID", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                  "JSM_NAMESPACE_RANK")

# The user's words that a distributed job hangs (knowledge/messages/faq_distributed.toml).
_HANG_SAID = ("faq_distributed:distributed-hang", "faq_distributed:distributed-stuck",
              "faq_distributed:distributed-hang-zh", "faq_distributed:distributed-stuck-at-zh")

_WHAT_READS = {
    "LOCAL_RANK": "Lightning (1.2 on) takes a set LOCAL_RANK to mean a launcher started every process "
                  "(LightningEnvironment.creates_processes_externally) and starts none of its own",
    "NODE_RANK": "Lightning reads it as this node's rank (global rank = NODE_RANK x devices + local rank); "
                 "1.0.x with WORLD_SIZE also set takes the torchelastic path and spawns nothing",
    "GROUP_RANK": "Lightning reads it as the node rank where NODE_RANK is unset; 1.0.x with WORLD_SIZE takes "
                  "the torchelastic path",
    "RANK": "torch.distributed's env:// init (init_process_group without rank=) takes it as this process's rank",
    "WORLD_SIZE": "torch.distributed's env:// init waits for WORLD_SIZE processes; Lightning 1.0.x takes the "
                  "torchelastic path with NODE_RANK or GROUP_RANK beside it",
    "LOCAL_WORLD_SIZE": "torchrun's count of workers on this node, read as the launcher's",
}


def _fix(names) -> str:
    return (f"unset {' '.join(names)}   # in the job script, before the launch line (and find what sets it: "
            "grep -n 'RANK\\|WORLD_SIZE' ~/.bashrc ~/.profile, the container's ENV)\n"
            "# then let one launcher set the ranks: python train.py (Lightning starts one process per device and "
            "sets LOCAL_RANK and NODE_RANK in each), torchrun --nproc-per-node=N train.py (sets RANK, LOCAL_RANK, "
            "GROUP_RANK, WORLD_SIZE and TORCHELASTIC_RUN_ID per worker), or srun python train.py under Slurm "
            "(Lightning then reads SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID)")


def _told_vars(f: FactView) -> Dict[str, dict]:
    """The rank variables a paste states, by name, first line each. An os.environ listing prints them
    on one line, read once: a line naming TORCHELASTIC_RUN_ID too counts as torchrun's mark."""
    out: Dict[str, dict] = {}
    for s in ticket_all(f, "prose:rank-variable-stated"):
        name = s.get("var") or s.get("dvar")
        if name:
            out.setdefault(str(name), s)
        if "TORCHELASTIC_RUN_ID" in str(s.get("text", "")):
            out.setdefault("TORCHELASTIC_RUN_ID", s)
    return out


def _rank_lines_only_zero(f: FactView) -> Optional[dict]:
    """The first of Lightning's rank lines where every one pasted says GLOBAL_RANK 0 of a world
    above 1 (one process started, or each thinks it is rank 0); None otherwise."""
    lines = ticket_all(f, "lightning:ddp-init-member")
    if not lines:
        return None
    try:
        ranks = {int(s.get("rank")) for s in lines}
        worlds = {int(s.get("world")) for s in lines}
    except (TypeError, ValueError):
        return None
    return lines[0] if ranks == {0} and max(worlds) > 1 else None


@rule("SW111", SYMBOL, "warning", "a rank variable preset in the job environment misleads the launcher's cluster detection",
      impact=7, also={"error": "a paste states the variable and Lightning's rank lines show only rank 0 of a larger world"})
def distributed_rank_env_preset(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        On the node: NODE_RANK, GROUP_RANK, LOCAL_RANK, RANK, WORLD_SIZE or LOCAL_WORLD_SIZE in
        the environment hpcdoctor runs in, where no launcher started it: none of torchrun's
        TORCHELASTIC_RUN_ID, srun's SLURM_PROCID, mpirun's OMPI_COMM_WORLD_RANK, PMI_RANK,
        PMIX_RANK or jsrun's JSM_NAMESPACE_RANK is set (each launcher sets its mark in every
        process it starts, and the rank variables beside it are its own). In a paste: the user
        shows such a variable set (a "NODE_RANK=0" line, an export, an os.environ listing's
        'LOCAL_RANK': '0') together with PyTorch Lightning's rank lines all saying GLOBAL_RANK 0
        of a larger world ("initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/8") or the words that a
        distributed job hangs. Silent where the listing holds TORCHELASTIC_RUN_ID (torchrun's
        own worker), where Lightning says "All distributed processes registered", and where
        the rank lines show other ranks.

    Why it matters:
        Lightning decides who starts the processes from these names: 1.0.x takes the torchelastic
        path for WORLD_SIZE with NODE_RANK or GROUP_RANK and spawns nothing; 1.2 on, a set
        LOCAL_RANK means a launcher started every process (creates_processes_externally), and
        NODE_RANK/GROUP_RANK set the node's rank. torch.distributed's env:// init takes RANK
        and WORLD_SIZE as given. So `python train.py` with devices=8 starts one process, rank 0
        of 8, which waits in init_process_group for seven peers that never start, with no error.

    How to fix:
        unset the variable in the job script before the launch line (and remove it where it
        comes from: a shell profile, a container image's ENV, a site module), then let one
        launcher set the ranks: Lightning's own (python train.py), torchrun, or srun.

    References:
        - https://github.com/Lightning-AI/pytorch-lightning/blob/2.6.5/src/lightning/fabric/plugins/environments/lightning.py (creates_processes_externally, node_rank)
        - https://github.com/Lightning-AI/pytorch-lightning/blob/2.6.5/src/lightning/fabric/plugins/environments/torchelastic.py (detect: is_torchelastic_launched)
        - https://github.com/Lightning-AI/pytorch-lightning/blob/2.6.5/src/lightning/fabric/plugins/environments/slurm.py (detect: SLURM_NTASKS; the ranks from SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID)
        - https://github.com/Lightning-AI/pytorch-lightning/blob/1.0.8/pytorch_lightning/accelerators/accelerator_connector.py (_is_using_torchelastic: WORLD_SIZE with GROUP_RANK or NODE_RANK)
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/distributed/run.py (the worker environment torchrun sets, TORCHELASTIC_RUN_ID)
        - https://slurm.schedmd.com/srun.html (OUTPUT ENVIRONMENT VARIABLES: SLURM_PROCID)
        - https://github.com/Lightning-AI/pytorch-lightning/issues/5651 (NODE_RANK=0 and WORLD_SIZE=8 preset: the hang at MEMBER: 1/8)
    """
    told = _told_vars(f)
    if told:
        yield from _pasted(f, told)
        return
    if f.get("ticket.symptoms") or f.get("env.listed"):
        return  # a paste: only what it states is known
    env = f.get("env.vars") or {}
    if any(env.get(m) is not None for m in LAUNCHER_MARKS):
        return  # a launcher's process: its rank variables are its own
    preset = [v for v in RANK_VARS if env.get(v) is not None]
    if not preset:
        return
    shown = ", ".join(f"{v}={env[v]}" for v in preset)
    yield Hit(message=f"{shown} is set in this environment and no launcher set it (no TORCHELASTIC_RUN_ID, "
                      f"SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK): {_WHAT_READS[preset[0]]}; a job started "
                      "from here starts one process that waits for peers which never start",
              fix=_fix(preset), evidence={f"env.vars.{v}": env[v] for v in preset})


def _pasted(f: FactView, told: Dict[str, dict]) -> Iterator[Hit]:
    if "TORCHELASTIC_RUN_ID" in told:
        return  # torchrun's worker environment: the ranks are torchrun's
    names = [v for v in RANK_VARS if v in told]
    if not names or first_symptom(f, "lightning:all-processes-registered"):
        return
    first = told[names[0]]
    value = first.get("value") or first.get("dvalue")
    shown = ", ".join(f"{v}={told[v].get('value') or told[v].get('dvalue')}" for v in names)
    zero = _rank_lines_only_zero(f)
    if ticket_all(f, "lightning:ddp-init-member") and zero is None:
        return  # the rank lines show other ranks: the processes started
    if zero is not None:
        yield Hit(message=f"the paste shows {shown} set (line {first.get('line')}) and Lightning's rank lines "
                          f"only rank 0 of {zero.get('world')} (line {zero.get('line')}: \"{told_text(zero)}\"): "
                          f"{_WHAT_READS[names[0]]}, so one process started and waits for the others",
                  fix=_fix(names), evidence={**told_evidence(zero), f"told.{names[0]}": value}, severity="error")
        return
    hang = next((s for s in (first_symptom(f, sid) for sid in _HANG_SAID) if s and stated(s)), None)
    if hang is not None:
        yield Hit(message=f"the paste shows {shown} set (line {first.get('line')}) and says the distributed job hangs "
                          f"(line {hang.get('line')}): {_WHAT_READS[names[0]]}; the usual result is one process "
                          "waiting for peers that never start",
                  fix=_fix(names), evidence={**told_evidence(hang), f"told.{names[0]}": value})
