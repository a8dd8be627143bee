"""container-localtime-bind-fails (rules/container_binds.py) on set Q's ticket and other threads' pastes."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, recorded_paste_facts

Q = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_q"


def test_a_wrapped_fatal_line_is_read(tmp_path):
    gathered = paste_facts(tmp_path, (Q / "afni-194-image-localtime-not-bindable.txt").read_text(encoding="utf-8"))
    (f,) = fired("container-localtime-bind-fails", gathered)
    assert f.severity == "error" and "not a directory" in f.message and "--no-mount /etc/localtime" in f.fix


def test_singularity_3_6_refusal_in_another_thread():
    (f,) = fired("container-localtime-bind-fails", recorded_paste_facts("singularity-5465-localtime-not-a-directory.txt"))
    assert f.severity == "error" and "did not start" in f.message


def test_a_skipped_bind_is_a_warning():
    (f,) = fired("container-localtime-bind-fails", recorded_paste_facts("nanoasv-56-localtime-warning.txt"))
    assert f.severity == "warning" and "keeps the image's own /etc/localtime" in f.message


def test_a_host_without_the_file_is_not_this():
    assert not fired("container-localtime-bind-fails", recorded_paste_facts("singularity-docker-11-localtime-missing-on-host.txt"))
