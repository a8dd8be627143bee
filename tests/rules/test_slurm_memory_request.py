"""slurm-request-exceeds-node's memory form (rules/slurm_requests.py): slurmctld's "Memory
specification can not be satisfied" names node memory configured below the request, the way a site
that gives jobs no memory to ask for refuses any --mem (bench/proposed_aliases.toml maps the proposed
slurm-memory-request-not-allowed to it); on real pastes (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_a_site_that_refuses_any_memory_request():
    (f,) = fired("slurm-request-exceeds-node", recorded_paste_facts("gdasapp-1762-site-allows-no-memory-request.txt"))
    assert "Memory specification can not be satisfied" in f.message and "RealMemory" in f.message
    assert "--mem=0" in f.message and "sinfo -N -o" in f.fix and "sbatch --mem=0" in f.fix


def test_a_request_beyond_every_node_keeps_the_node_listing():
    # a real Slurm 22.05 refusing --mem=4000000: the same line, the listing says which case it is
    (f,) = fired("slurm-request-exceeds-node", recorded_paste_facts("slurm-22.05-requests-beyond-the-node.txt"))
    assert "line 14" in f.message and "CoreSpecCount" in f.fix and "MaxMemPer" in f.fix


def test_a_paste_without_a_slurm_refusal_says_nothing():
    assert not fired("slurm-request-exceeds-node", recorded_paste_facts("sbws-195-thread-start-fails-low-ram.txt"))
