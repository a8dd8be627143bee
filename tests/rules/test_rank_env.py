"""distributed-rank-env-preset (rules/rank_env.py): a rank variable preset where no launcher set it,
on the node and in pastes (set AD's Lightning #5651, Lightning #16313; nnue-pytorch #352 whose ranks
are fine)."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts, with_env

AD = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_ad"


def test_node_rank_preset_and_single_rank_line_in_ad_5651(tmp_path):
    text = (AD / "pytorch-lightning-5651-node-rank-preset-ddp-hang.txt").read_text(encoding="utf-8")
    (f,) = fired("distributed-rank-env-preset", paste_facts(tmp_path, text))
    assert f.severity == "error" and "NODE_RANK=0, WORLD_SIZE=8" in f.message and "rank 0 of 8" in f.message
    assert f.fix.startswith("unset NODE_RANK WORLD_SIZE ")


def test_local_rank_preset_by_the_container_in_lightning_16313():
    (f,) = fired("distributed-rank-env-preset", recorded_paste_facts("pytorch-lightning-16313-local-rank-preset-freeze.txt"))
    assert f.severity == "error" and "LOCAL_RANK=0" in f.message and "creates_processes_externally" in f.message
    assert f.fix.startswith("unset LOCAL_RANK ")


def test_a_lightning_start_whose_ranks_all_registered_is_not_fired():
    assert not fired("distributed-rank-env-preset", recorded_paste_facts("nnue-pytorch-352-lightning-ranks-registered.txt"))


def test_stated_variable_with_a_hang_in_words_is_a_warning():
    # No public paste with this wording alone: an export line and a sentence, filled in by hand.
    (f,) = fired("distributed-rank-env-preset", told_facts("export RANK=0\nmy DDP training hangs at init_process_group\n"))
    assert f.severity == "warning" and "RANK=0" in f.message


def test_a_stated_variable_alone_or_torchruns_own_listing_is_not_fired():
    assert not fired("distributed-rank-env-preset", told_facts("NODE_RANK=0\n"))
    listing = ("'RANK': '0', 'LOCAL_RANK': '0', 'TORCHELASTIC_RUN_ID': 'none'\n"
               "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n")
    assert not fired("distributed-rank-env-preset", told_facts(listing))


def test_rank_lines_of_several_ranks_are_not_fired():
    text = ("NODE_RANK=0\nInitializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
            "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n")
    assert not fired("distributed-rank-env-preset", told_facts(text))


def test_live_node_rank_outside_a_launcher_warns():
    (f,) = fired("distributed-rank-env-preset", with_env("h100-kvm-1gpu", {"NODE_RANK": "0", "LOCAL_RANK": "0"}))
    assert f.severity == "warning" and "NODE_RANK=0, LOCAL_RANK=0" in f.message
    assert f.fix.startswith("unset NODE_RANK LOCAL_RANK ")


def test_live_ranks_of_a_torchrun_or_srun_process_are_its_own():
    for mark in ({"TORCHELASTIC_RUN_ID": "none"}, {"SLURM_PROCID": "0", "SLURM_JOB_ID": "7"}):
        g = with_env("h100-kvm-1gpu", {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "2", **mark})
        assert not fired("distributed-rank-env-preset", g)
    assert not fired("distributed-rank-env-preset", with_env("h100-kvm-1gpu", {}))
