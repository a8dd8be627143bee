"""The command-line contract: exit codes, one-line errors, formats, quiet mode.

The live check, no arguments, a usage error, an unknown rule, a missing snapshot, --budget 0 and
NO_COLOR run as a user runs them (run_cli, a fresh interpreter); the rest of the contract is the
same main() in this process (run_main), where a fresh interpreter each cost ~0.4 s and added
nothing they check."""

from __future__ import annotations

import json
import tarfile

import jsonschema
import pytest

from conftest import NODES, ROOT, report_of, run_cli, run_main

SCHEMA = json.loads((ROOT / "hpcdoctor" / "schema" / "report.schema.json").read_text())
H100 = str(NODES / "h100-kvm-1gpu")
CPU = str(NODES / "cpu-kvm-2core")


def one_line_error(res, *needles):
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    for n in needles:
        assert n in lines[0]


PASTED = [str(NODES.parent / "pastes" / n) for n in ("vllm-dstack-8xh100-collect_env-indented.txt",
                                                     "transformerlab-370-vllm-bf16-on-v100.txt")]


@pytest.mark.parametrize("source", [None, H100, CPU] + PASTED)
def test_json_report_validates_against_published_schema(source):
    args = ["check"] + (["--from", source] if source else [])
    doc = report_of(*args)
    jsonschema.validate(doc, SCHEMA)
    assert doc["schema_version"] == "2.0"
    for probe in doc["checks"].values():
        assert probe["duration_s"] >= 0


def test_live_check_terminal_report():
    res = run_cli("check")
    assert res.returncode == 0, res.stderr
    assert "CPU" in res.stdout and "Memory" in res.stdout
    assert "\x1b[" not in res.stdout  # not a terminal: plain text


def test_no_args_means_check():
    res = run_cli()
    assert res.returncode == 0 and "hpcdoctor" in res.stdout


def test_unknown_flag_is_one_line_exit_2():
    one_line_error(run_cli("check", "--frobnicate"), "unrecognized arguments: --frobnicate")


def test_unknown_rule_in_select():
    one_line_error(run_cli("check", "--select", "nonsense-rule"), "unknown rule 'nonsense-rule' in --select")


def test_missing_snapshot():
    one_line_error(run_cli("check", "--from", "/nonexistent/snap"), "/nonexistent/snap")


def test_corrupt_snapshot_meta(tmp_path):
    (tmp_path / "meta.json").write_text("{not json")
    one_line_error(run_main("check", "--from", str(tmp_path)), "meta.json is not valid JSON")


def test_corrupt_command_index(tmp_path):
    (tmp_path / "cmd").mkdir()
    (tmp_path / "cmd" / "index.json").write_text('{"argv": 1}')
    one_line_error(run_main("check", "--from", str(tmp_path)), "cmd/index.json")


def test_truncated_archive(tmp_path):
    good = tmp_path / "a.tar.gz"
    with tarfile.open(good, "w:gz") as tar:
        tar.add(H100, arcname="snap")
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(good.read_bytes()[:2000])
    one_line_error(run_main("check", "--from", str(bad)), "bad.tar.gz")


def test_folder_that_is_not_a_snapshot(tmp_path):
    one_line_error(run_main("check", "--from", str(tmp_path)), "holds no snapshot")


def test_quiet_success_prints_nothing():
    res = run_main("check", "--from", CPU, "--quiet")
    assert res.returncode == 0 and res.stdout == "" and res.stderr == ""


def test_quiet_failure_one_line_per_blocking_finding():
    res = run_main("check", "--from", CPU, "--quiet", "--fail-on", "advice")
    assert res.returncode == 1
    lines = res.stdout.strip().splitlines()
    expected = report_of("check", "--from", CPU)["findings"]
    assert len(lines) == len(expected) >= 1
    for line, f in zip(lines, expected):
        assert line.startswith(f"hpcdoctor: {f['severity']} {f['code']} {f['symbol']}: ")
    assert any(l.startswith("hpcdoctor: advice CPU001 cpu-bf16-fpmath: ") for l in lines)


def test_fail_on_never_and_ignore():
    assert run_main("check", "--from", CPU, "--fail-on", "never").returncode == 0
    assert run_main("check", "--from", CPU, "--fail-on", "advice", "--ignore", "CPU001,ENV004", "-q").returncode == 0


def test_output_file_keeps_json_while_terminal_shows_report(tmp_path):
    out = tmp_path / "rec" / "report.json"
    res = run_main("check", "--from", H100, "--format", "json", "--output", str(out))
    assert res.returncode == 0
    assert "CPU" in res.stdout  # the human report still goes to the job log
    jsonschema.validate(json.loads(out.read_text()), SCHEMA)


def test_output_to_unwritable_place():
    one_line_error(run_main("check", "--from", CPU, "--output", "/proc/nope/x.json"), "cannot write")


def test_markdown_report():
    res = run_main("check", "--from", CPU, "--format", "markdown")
    assert res.returncode == 0
    assert res.stdout.startswith("## hpcdoctor report")
    assert "```bash\nexport DNNL_DEFAULT_FPMATH_MODE=BF16" in res.stdout


def test_rules_listing_and_explain():
    res = run_main("rules", "--format", "json")
    rules = json.loads(res.stdout)
    symbols = {r["symbol"] for r in rules}
    assert {"cpu-bf16-fpmath", "omp-threads-unset", "omp-threads-mismatch", "thp-disabled", "numa-balancing-on"} <= symbols
    text = run_main("explain", "cpu-bf16-fpmath")
    assert text.returncode == 0
    assert "Why it matters" in text.stdout and "Isambard" in text.stdout
    js = json.loads(run_main("explain", "CPU001", "--format", "json").stdout)
    assert js["symbol"] == "cpu-bf16-fpmath" and js["docs"]["How to fix"]
    one_line_error(run_main("explain", "XYZ999"), "no rule 'XYZ999'")


def test_bad_budget():
    one_line_error(run_cli("check", "--budget", "0"), "--budget")


def test_no_color_and_pipes_are_plain():
    res = run_cli("check", "--from", CPU, env={"NO_COLOR": "1"})
    assert "\x1b[" not in res.stdout
