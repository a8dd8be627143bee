"""Every default time limit, in one table: what a command may take when ``--budget`` is not given.

A budget bounds the whole run (unpacking a bundle, reading a paste, every check, a benchmark's
torch import), not one stage; the runner gives each check what is left of it.
"""

from __future__ import annotations

from typing import Optional

# Per command. nhc is shorter because Slurm's HealthCheckInterval and a Prolog wait on it; snapshot
# is longer because a recording is made once, for a ticket, and every tool's output is worth having.
COMMAND = {"check": 30.0, "env": 30.0, "nhc": 20.0, "snapshot": 60.0}

# `check --bench TIER`: the whole run, torch import included (checks/bench.py stops its payload
# before this). A cluster check's payload gets the same figure for its benchmark.
BENCH = {"quick": 20.0, "full": 120.0}

# What one check may take when it names no timeout of its own: the default run budget.
CHECK_DEFAULT = COMMAND["check"]


def default(command: str, bench: Optional[str] = None) -> float:
    """The budget of ``command`` (with ``--bench TIER`` where one is asked for)."""
    base = COMMAND.get(command, COMMAND["check"])
    if bench:
        # A recording keeps its own, longer floor: every tool's output is still worth having.
        return max(base, BENCH[bench]) if command == "snapshot" else BENCH[bench]
    return base
