"""netCDF-C's nc_strerror texts (knowledge/messages/netcdf.toml, Unidata/netcdf-c v4.9.3
libdispatch/derror.c) read in real public pastes (tests/fixtures/pastes, SOURCES.md there): quoted
back, never a diagnosis by themselves ("NetCDF: HDF error" has several causes the line cannot tell
apart)."""

from __future__ import annotations

import pytest

from rulekit import paste_facts, recorded_paste_facts
from hpcdoctor import engine
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import messages


def _read(g):
    return [s for s in g["facts"]["ticket"]["symptoms"] if s.get("family") == "netcdf"]


def _findings(g):
    rules, _ = engine.load_rules()
    findings, _ = engine.evaluate(rules, FactView(g["facts"], g["unknown"], None))
    return findings


@pytest.mark.parametrize("paste,line", [("global-workflow-1256-netcdf-hdf-error-after-site-maintenance.txt", 5),
                                        ("gsi-357-netcdf-hdf-error-scratch-fs-fault.txt", 1)])
def test_hdf_error_is_read_and_claims_nothing(paste, line):
    g = recorded_paste_facts(paste)
    (s,) = [x for x in _read(g) if x["line"] == line]
    assert s["key"] == "NC_EHDFERR" and s.get("code") in (-101, "-101")
    assert [f for f in _findings(g) if f.severity in ("error", "warning")] == []


def test_every_code_of_the_header_with_a_text_is_listed():
    fam = next(f for f in messages.families() if f.id == "netcdf")
    keys = {e.key for e in fam.entries}
    # nc_strerror at v4.9.3 names 92 codes (NC_EXDR alone has none)
    assert len(keys) == 92 and {"NC_EHDFERR", "NC_ENOTNC", "NC_ETRUNC", "NC_EPLUGIN", "NC_ENOTBUILT"} <= keys


def test_the_longest_text_wins(tmp_path):
    g = paste_facts(tmp_path, "NetCDF: Attempting netcdf-4 operation on strict nc3 netcdf-4 file\n")
    assert [s["key"] for s in _read(g)] == ["NC_ESTRICTNC3"]
