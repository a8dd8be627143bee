"""cvmfs-mount-failed (ENV129) on real pastes of the CernVM-FS loader's failure codes."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts


def test_failure_16_names_the_manifest_and_the_proxy_to_check():
    for name in ("aarocdevops-260-cvmfs-file-catalog-failure.txt", "cvmfs-4044-repository-name-typo-catalog-failure.txt"):
        [hit] = fired("cvmfs-mount-failed", recorded_paste_facts(name))
        assert "(16 - file catalog failure)" in hit.message and "no Stratum-1 server or proxy answered" in hit.message
        assert "cvmfs_config chksetup" in hit.fix and "CVMFS_(SERVER_URL|HTTP_PROXY)=" in hit.fix


def test_another_code_gets_its_own_check(tmp_path):
    # The loader's own format for code 9 (cvmfs/loader.cc FuseMain: "%s (%d - %s)"), the boot error's
    # wording filled in by hand: no public paste of it was found.
    g = paste_facts(tmp_path, "CernVM-FS: loading Fuse module... Failed to setup cache (9 - cache directory/plugin problem)\n")
    [hit] = fired("cvmfs-mount-failed", g)
    assert "CVMFS_CACHE_BASE" in hit.fix and "cache" in hit.message


def test_a_mounted_repository_is_no_failure():
    g = told_facts("$ cvmfs_config probe\nProbing /cvmfs/atlas.cern.ch... OK\nProbing /cvmfs/sft.cern.ch... OK\n"
                              "CernVM-FS: loading Fuse module... done\n")
    assert not fired("cvmfs-mount-failed", g)
