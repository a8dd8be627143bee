"""nfs-export-squash-denies-chmod on chown's, chmod's and dockerd's EPERM beside what the paste shows
of NFS and its export options, replayed from public pastes (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_a_chmod_refused_on_a_share_that_squashes_root_is_the_export():
    (f,) = fired("nfs-export-squash-denies-chmod", recorded_paste_facts("docker-volume-plugins-8-nfs-squash-chmod.txt"))
    assert f.severity == "error" and "line 11" in f.message and "\"squash root\"" in f.message
    assert "exportfs -v" in f.fix and "findmnt -T PATH" in f.fix


def test_chown_refused_on_an_nfs_volume_is_the_default_root_squash_at_warning():
    (f,) = fired("nfs-export-squash-denies-chmod", recorded_paste_facts("nfs-provisioner-39-chown-on-nfs-volume.txt"))
    assert f.severity == "warning" and "line 10" in f.message and "root_squash" in f.message


def test_chown_refused_with_nothing_showing_nfs_is_not_called_the_export():
    assert not fired("nfs-export-squash-denies-chmod", recorded_paste_facts("scalelite-132-chown-eperm-no-mount-shown.txt"))


def test_root_refused_a_home_path_by_enroot_is_root_squash():
    from rulekit import recorded_paste_facts

    (f,) = fired("nfs-root-squash", recorded_paste_facts("enroot-140-nfs-root-squash.txt"))
    assert f.severity == "warning" and "root" in f.message and "/home/wjy/nv-maskrcnn" in f.message
    assert "id -u" in f.fix and "no_root_squash" in f.fix


def test_a_mount_refused_without_root_shown_is_not_root_squash():
    from rulekit import recorded_paste_facts

    # the same pyxis lines without the root prompt line: nothing says the caller was root but the
    # enroot path's user-0, which still does; without both the rule stays silent
    gathered = recorded_paste_facts("deepops-1179-invalid-job-credential-healthy.txt")
    assert not fired("nfs-root-squash", gathered)
