"""The environment-module rules (rules/env_modules.py) on real pastes of Lmod, Environment Modules
and bash (fixtures/pastes, SOURCES.md), and on Lmod's own texts from messageDir/en.lua at 9.2.9
where no public paste shows a message (the template's fixed words, its %{...} filled in)."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts, recorded_paste_facts

PASTES = FIXTURES / "pastes"
RULES = ("module-unknown", "module-not-loadable", "module-conflict", "module-command-missing")


def _facts(tmp_path, name):
    return paste_facts(tmp_path, (PASTES / name).read_text(encoding="utf-8"), name)


def _only(facts, symbol):
    """The one finding of ``symbol``, and no other module rule fired."""
    others = [s for s in RULES if s != symbol and fired(s, facts)]
    assert not others, others
    (f,) = fired(symbol, facts)
    return f


def test_lmod_unknown_and_exists_but_not_loadable_on_one_paste(tmp_path):
    facts = _facts(tmp_path, "hiop-524-lmod-unknown-and-not-loadable.txt")
    (unknown,) = fired("module-unknown", facts)
    assert unknown.fix.startswith("module spider gcc   #")
    assert "gcc/7.4.0" in unknown.message
    (hier,) = fired("module-not-loadable", facts)
    # Lmod's own suggestion: spider with the full name shows what must be loaded first
    assert hier.fix.startswith("module spider m4/1.4.18   #")


def test_lmod_unknown_name_on_a_later_line_is_read(tmp_path):
    f = _only(_facts(tmp_path, "lmod-592-unknown-module-name-on-later-line.txt"), "module-unknown")
    assert f.fix.startswith("module spider help2man   #")


def test_lmod_unknown_inside_a_sites_modulefile(tmp_path):
    f = _only(_facts(tmp_path, "rrfs-workflow-962-lmod-unknown-inside-modulefile.txt"), "module-unknown")
    assert f.fix.startswith("module spider libfabric   #")


def test_tcl_modules_unable_to_locate(tmp_path):
    f = _only(_facts(tmp_path, "envmodules-192-unable-to-locate-gcc.txt"), "module-unknown")
    assert f.message.startswith("Environment Modules has no module gcc/4.2.1")
    assert f.fix.startswith("module avail gcc   #")


def test_modules_3_2_error_105_is_read(tmp_path):
    f = _only(_facts(tmp_path, "trixie-17-modules32-unable-to-locate-conda.txt"), "module-unknown")
    assert f.fix.startswith("module avail conda   #")


def test_modules_3_2_naming_a_modulefile_is_that_modulefiles_own_request_and_only_info(tmp_path):
    # alidist#1122 (set T, unsealed; a healthy control): 3.2 prints the modulefile being read and its
    # line where the C file of the module command stands when the lookup is the user's own
    # (error.c PrintError); the module asked for loaded, and only its line 52's request failed
    name = "alidist-1122-modulefile-probe-message-expected-healthy.txt"
    facts = paste_facts(tmp_path, (FIXTURES / "tickets_blind_t" / name).read_text(encoding="utf-8"), name)
    f = _only(facts, "module-unknown")
    assert f.severity == "info"
    assert "GCC-Toolchain/v6.2.0-alice1-4 asks, on its line 52, for module Toolchain/GCC-v6.2.0" in f.message
    assert f.fix.startswith("module show GCC-Toolchain/v6.2.0-alice1-4   # line 52 names Toolchain/GCC-v6.2.0")
    # the command's own lookup, named by its C file, stays the error
    g = _only(_facts(tmp_path, "trixie-17-modules32-unable-to-locate-conda.txt"), "module-unknown")
    assert g.severity == "error" and "asks, on its line" not in g.message


def test_a_software_directory_given_as_a_module_gets_no_path_in_the_fix(tmp_path):
    f = _only(_facts(tmp_path, "hic-bench-9-modules32-locate-software-path.txt"), "module-unknown")
    assert f.fix.startswith("module avail   #") and "/share/" not in f.fix


def test_module_command_not_found_in_a_slurm_script(tmp_path):
    facts = _facts(tmp_path, "batchspawner-246-slurm-script-module-command-not-found.txt")
    (f,) = fired("module-command-missing", facts)
    assert _only(facts, "module-command-missing") == f
    assert f.fix.startswith("#!/bin/bash -l   #")
    g = _only(_facts(tmp_path, "envmodules-339-sh-script-ml-command-not-found.txt"), "module-command-missing")
    assert "no ml command" in g.message


def test_lmod_prereq_from_en_lua_loads_the_prerequisites_first(tmp_path):
    # e_Prereq at 9.2.9, as M.error prints it: the list on its own line, a blank line, the traceback
    text = ('Lmod has detected the following error:  Cannot load module "hdf5/1.12.1" without these module(s) loaded:\n'
            "   gcc/11.2.0 openmpi/4.1.1\n\nWhile processing the following module(s):\n")
    f = _only(paste_facts(tmp_path, text), "module-not-loadable")
    assert f.fix == "module load gcc/11.2.0 openmpi/4.1.1 hdf5/1.12.1"


def test_lmod_conflict_from_en_lua_unloads_the_conflicting_modules(tmp_path):
    text = ('Lmod has detected the following error:  Cannot load module "cuda/12.4" because these module(s) are loaded:\n'
            "   cuda/11.8\n\nWhile processing the following module(s):\n")
    facts = paste_facts(tmp_path, text)
    (f,) = fired("module-conflict", facts)
    assert f.fix == "module unload cuda/11.8 && module load cuda/12.4"
    assert _only(facts, "module-conflict") == f


def test_tcl_modules_conflict_hint_names_what_to_unload(tmp_path):
    # Modules 5.5.0 report.tcl.in: getErrConflictMsg and getHintUnFirstMsg under a load block
    text = ("Loading openmpi/4.1\n  ERROR: Module cannot be loaded due to a conflict.\n"
            '    HINT: Might try "module unload mpich/3.4" first.\n')
    f = _only(paste_facts(tmp_path, text), "module-conflict")
    assert f.fix.startswith("module unload mpich/3.4   #")


def test_a_name_from_the_paste_is_quoted_for_the_shell(tmp_path):
    text = 'Lmod has detected the following error:  The following module(s) are unknown: "a;touch${IFS}x/1"\n'
    (f,) = fired("module-unknown", paste_facts(tmp_path, text))
    assert f.fix.startswith("module spider 'a;touch${IFS}x'   #")


def test_python_and_other_commands_not_found_and_lmods_notes_are_not_module_errors(tmp_path):
    text = ("ModuleNotFoundError: No module named 'torch'\n"
            "/var/spool/slurmd/job1/slurm_script: line 9: python: command not found\n"
            "bash: html: command not found\n"
            # m_Family_Swap, a note (rrfs-workflow#962): Lmod swapped a module and went on
            'Lmod is automatically replacing "intel/2025.2" with "intel-classic/2023.2.0".\n')
    facts = paste_facts(tmp_path, text)
    for sym in ("module-unknown", "module-not-loadable", "module-conflict", "module-command-missing"):
        assert not fired(sym, facts), sym


def test_a_prereq_the_pasted_module_list_shows_loaded_is_not_told_to_load():
    # TACC/Lmod#719, a healthy control of set Q: not a bug, the modulefile's prereq() names the module otherwise
    (f,) = fired("module-not-loadable", recorded_paste_facts("lmod-719-prereq-full-name-not-a-bug-healthy.txt"))
    assert f.severity == "info" and "shows loaded" in f.message
    assert "module load" not in f.fix and f.fix.startswith("module -t list")


def test_tcl_modules_requirement_not_loaded_loads_it_first(tmp_path):
    # Modules 5.5.0 report.tcl.in getReqNotLoadedMsg as its testsuite expects it (005-init_ts.exp), under a load block
    f = _only(paste_facts(tmp_path, "Loading mpi4py/3.1\n  ERROR: Requirement openmpi/4.1 is not loaded\n"),
              "module-not-loadable")
    assert f.fix.startswith("module load openmpi/4.1   # first") and "openmpi/4.1 loaded first" in f.message


def test_tcl_modules_conflict_it_could_not_unload_is_the_conflict(tmp_path):
    # Modules 5.5.0 subcmd.tcl.in (conun) with report.tcl.in getErrConUnMsg, as 005-init_ts.exp expects it
    f = _only(paste_facts(tmp_path, "Loading gcc/12\n  ERROR: Unload of conflicting gcc/9 failed\n"), "module-conflict")
    assert f.fix.startswith("module unload gcc/9") and "conflicts with gcc/9" in f.message


def test_forced_warnings_of_tcl_modules_are_not_refusals(tmp_path):
    # the same two texts under --force (005-init_ts.exp's warn_msgs forms): the module was loaded anyway
    facts = paste_facts(tmp_path, "Loading mpi4py/3.1\n  WARNING: Requirement openmpi/4.1 is not loaded\n"
                                  "Loading gcc/12\n  WARNING: Unload of conflicting gcc/9 failed\n")
    assert [s for s in RULES if fired(s, facts)] == []


def test_lmod_unknown_retyped_in_lower_case_is_read(tmp_path):
    # the reporter's own sentence: "Lmod has detected the following errors: the following module(s) are
    # unknown: ..."; the same site's other ticket quotes Lmod's capitals, and both name one fault
    for name in ("global-workflow-4102-lmod-unknown-retyped-lowercase.txt", "ufs-srweather-app-1327-lmod-unknown-after-upgrade.txt"):
        f = _only(_facts(tmp_path, name), "module-unknown")
        assert "libfabric/1.20.1" in f.message and f.fix.startswith("module spider libfabric   #")


def test_modules_3_2_is_a_warning_only_where_the_paste_shows_the_zero_status():
    # modules#505 (set Z): `echo $?` answers 0 after the failed load: the release is the ticket's fault
    (f,) = fired("environment-modules-too-old",
                 recorded_paste_facts("../tickets_blind_z/modules-505-module-load-exit-zero-modules-3-2.txt"))
    assert f.severity == "warning"
    # alidist#1122 (set T, healthy): a modulefile's expected probe, no exit status shown: a hint only
    (g,) = fired("environment-modules-too-old",
                 recorded_paste_facts("../tickets_blind_t/alidist-1122-modulefile-probe-message-expected-healthy.txt"))
    assert g.severity == "info"
