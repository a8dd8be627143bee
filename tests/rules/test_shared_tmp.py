"""shared-tmp-owned-by-other-user: a fixed /tmp path refused because another user holds it, in real
public pastes (tests/fixtures/pastes, SOURCES.md there); a /tmp exec refused by noexec is not it."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


def test_pythons_eacces_on_a_fixed_tmp_path_is_a_warning_naming_the_path():
    (f,) = fired("shared-tmp-owned-by-other-user", recorded_paste_facts("percol-41-tmp-log-owned-by-other-user.txt"))
    assert f.severity == "warning" and f.message.startswith("/tmp/percol-log was refused (EACCES) (line 2")
    assert f.fix.startswith("ls -ld /tmp/percol-log") and 'export TMPDIR="$(mktemp -d)"' in f.fix


def test_the_users_words_about_other_users_are_a_hint():
    (f,) = fired("shared-tmp-owned-by-other-user", recorded_paste_facts("hemtt-489-shared-tmp-dir-other-user-permission.txt"))
    assert f.severity == "info" and "directory there with 755 permissions" in f.message


@pytest.mark.parametrize("paste", ["noexec-tmpfs-subprocess-run.txt", "noexec-tmpfs-bash-exec.txt",
                                   "pyxis-62-run-user-not-created.txt", "time-llm-158-master-port-98-permission-denied.txt"])
def test_other_permission_refusals_are_not_another_users_tmp_file(paste):
    # an exec in /tmp refused by a noexec mount (recorded), and real pastes of other EACCES causes
    assert not fired("shared-tmp-owned-by-other-user", recorded_paste_facts(paste))
