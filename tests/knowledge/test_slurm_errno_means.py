"""slurm.toml's slurm_strerror entries say what each code means where Slurm returns it, not the
generic sentence they once shared (which told a user whose controller disk was full that the job
"does not fit the cluster's configuration")."""

from __future__ import annotations

from hpcdoctor.knowledge import messages

_OLD = "it does not fit the cluster's configuration or policy"


def _slurm():
    return messages.families(("slurm",))[0]


def test_no_entry_keeps_the_old_generic_means():
    kept = [e.get("key") for e in _slurm().entries if _OLD in str(e.get("means", ""))]
    assert kept == []


def test_codes_no_code_path_returns_say_so():
    # A value git grep finds only in the table is "no longer returned", cause unclassified; a
    # value read where it is returned names that place.
    for e in _slurm().entries:
        src, means = str(e.get("source", "")), str(e.get("means", ""))
        if "(the text only)" in src:
            assert e.get("cause") == "unclassified" and "no longer returned at 284c3b95" in means, e.get("key")
        elif "where it is returned: " in src:
            assert "src/" in src.split("where it is returned: ", 1)[1], e.get("key")
            assert e.get("cause") != "unclassified", e.get("key")


def test_a_full_disk_and_a_held_job_read_apart():
    by_key = {e.get("key"): e for e in _slurm().entries}
    assert by_key["ESLURM_WRITING_TO_FILE"].get("cause") == "resource"
    assert "held" in str(by_key["ESLURM_JOB_HELD"].get("means"))
    assert "MaxJobCount" in str(by_key["ESLURM_MAX_JOB_COUNT"].get("means"))
    assert by_key["ESLURM_NEED_RESTART"].get("cause") == "unclassified"
