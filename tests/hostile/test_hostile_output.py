"""Hostile values in every output: shell text that the real shells eval safely, terminal control
sequences shown rather than obeyed, Markdown that cannot be broken out of. The values are built
here; the shells are the real ones (.ci/run installs zsh, fish and tcsh)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import NODES, real_shell, run_main
from hpcdoctor import engine
from hpcdoctor.facts import FactView
from hpcdoctor.report import envlines, markdown, safe
from rulekit import with_env

HOSTILE = [
    "x\\", "a'b", "a\\b", "x\\'; touch PWNED; echo '", "$(touch PWNED)", "`touch PWNED`", "a b  c", "*",
    "~root", "$HOME", "{a,b}", "a;b|c&d", "!!", "x!y", "!touch PWNED", "a\"b", "-n", "", "é ü 中",
    "'\\''", "\\!", "%1", "a\tb",
]


def _doc(value: str) -> dict:
    return {"findings": [{"code": "ENV001", "symbol": "nccl-async-error-handling",
                          "env": {"HPCD_T": value}}]}


# How each shell's users are told to load the output, and how the test reads the result back.
IDIOMS = {
    "bash": ("bash", ["bash", "--norc", "--noprofile", "-c", 'eval "$(cat "$1")"; printenv HPCD_T', "x"]),
    "zsh": ("zsh", ["zsh", "-f", "-c", 'eval "$(cat "$1")"; printenv HPCD_T', "x"]),
    "fish-eval": ("fish", ["fish", "--no-config", "-c", "eval (cat $argv[1]); printenv HPCD_T"]),
    "fish-source": ("fish", ["fish", "--no-config", "-c", "cat $argv[1] | source; printenv HPCD_T"]),
}


# bash is everywhere and cheap; zsh and fish are real shells CI installs: slow.
@pytest.mark.parametrize("idiom", [i if IDIOMS[i][0] == "bash" else pytest.param(i, marks=pytest.mark.slow)
                                   for i in sorted(IDIOMS)])
def test_env_output_evals_to_the_exact_value_in_the_real_shell(idiom, tmp_path):
    shell, argv = IDIOMS[idiom]
    real_shell(shell)
    shell_name = "fish" if shell == "fish" else shell
    for value in HOSTILE:
        script = tmp_path / "env.sh"
        text = envlines.render(_doc(value), shell_name, {})
        if shell_name == "fish" and "\t" in value:
            assert text == "", "fish cannot hold a control character through eval: withheld"
            continue
        script.write_text(text)
        res = subprocess.run(argv + [str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=30)
        assert not (tmp_path / "PWNED").exists(), (idiom, value, script.read_text())
        assert res.returncode == 0, (idiom, value, script.read_text(), res.stderr)
        assert res.stdout == value + "\n", (idiom, value, script.read_text())


@pytest.mark.slow  # a real shell (CI installs it)
def test_env_output_evals_to_the_exact_value_in_interactive_tcsh(tmp_path):
    # History substitution ("!") happens only in an interactive tcsh, where people eval this.
    real_shell("tcsh")
    for value in HOSTILE:
        script = tmp_path / "env.csh"
        text = envlines.render(_doc(value), "csh", {})
        if "\t" in value:
            assert text == ""
            continue
        script.write_text(text)
        got = tmp_path / "got.txt"
        driver = f'eval "`cat {script}`"\nprintenv HPCD_T > {got}\n'
        res = subprocess.run(["tcsh", "-f", "-i"], input=driver, capture_output=True, text=True, cwd=tmp_path,
                             timeout=30)
        assert not (tmp_path / "PWNED").exists(), (value, script.read_text())
        assert got.read_text() == value + "\n", (value, script.read_text(), res.stderr)


def test_values_no_shell_can_hold_are_withheld_with_a_reason():
    for shell in ("fish", "csh"):
        lines, notes = envlines.render_parts(_doc("a\nb; touch PWNED"), shell, {})
        assert lines == [] and any("control character" in n for n in notes)
    lines, notes = envlines.render_parts({"findings": [{"code": "X", "symbol": "x", "env": {"A;B": "1"}}]}, "bash", {})
    assert lines == [] and "not a shell variable name" in notes[0]


def test_fish_and_csh_scripts_carry_no_comments_the_eval_would_swallow():
    doc = {"findings": [{"code": "THR001", "symbol": "s", "env": {"A": "1"}},
                        {"code": "THR002", "symbol": "t", "env": {"B": "2", "C": "x y"}}]}
    for shell in ("fish", "csh"):
        text = envlines.render(doc, shell, {"C": "mine"})
        assert "#" not in text and text.count(";") == 2, text


@pytest.mark.slow  # a real shell (CI installs it)
def test_env_command_with_a_crafted_old_nccl_variable_is_safe_in_fish(tmp_path):
    real_shell("fish")
    crafted = "1\\'; touch PWNED; echo '"
    # The real rule on the recorded H100 node (torch 2.11) with the crafted variable set.
    g = with_env("h100-kvm-1gpu", {"NCCL_ASYNC_ERROR_HANDLING": crafted})
    rules, errors = engine.load_rules()
    assert not errors
    findings, _ = engine.evaluate(rules, FactView(g["facts"], g["unknown"], {}))
    hits = [x for x in findings if x.code == "ENV001"]
    assert hits, "ENV001 should fire on the crafted variable"
    doc = {"findings": [{"code": "ENV001", "symbol": "nccl-async-error-handling", "env": hits[0].env}]}
    script = tmp_path / "env.fish"
    script.write_text(envlines.render(doc, "fish", {}))
    subprocess.run(["fish", "--no-config", "-c", "eval (cat $argv[1])", str(script)], cwd=tmp_path, timeout=30)
    assert not (tmp_path / "PWNED").exists()
    # The printed fix runs as printed too, and sets the same value.
    out = subprocess.run(["bash", "-c", hits[0].fix + '; printf %s "$TORCH_NCCL_ASYNC_ERROR_HANDLING"'],
                         capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert out.stdout == crafted and not (tmp_path / "PWNED").exists()


# --- terminal ---------------------------------------------------------------------------------

ESCAPES = {
    "osc52": "\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "clear": "\x1b[2J",
    "osc8": "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "title": "\x1b]0;owned\x07",
    "c1": "\x9b2J",
    "bidi": "\u202eevil\u202c",
}


def _bundle_with_gpu_name(tmp_path, name: str):
    """The real H100 recording with its GPU name replaced, as a hostile bundle would carry it."""
    dest = tmp_path / "node"
    shutil.copytree(NODES / "h100-kvm-1gpu", dest)
    changed = 0
    for path in dest.rglob("*"):
        if path.is_file():
            try:
                text = path.read_text()
            except UnicodeDecodeError:
                continue
            if "NVIDIA H100 80GB HBM3" in text:
                value = json.dumps(name)[1:-1] if path.suffix == ".json" else name
                path.write_text(text.replace("NVIDIA H100 80GB HBM3", value))
                changed += 1
    assert changed, "the recording should name its GPU"
    # XML cannot carry C0 controls at all, so a hostile name arrives through nvidia-smi -q's text:
    # drop the XML output from the copy (the recording itself is untouched).
    index = dest / "cmd" / "index.json"
    entries = [e for e in json.loads(index.read_text()) if e["argv"] != ["nvidia-smi", "-q", "-x"]]
    index.write_text(json.dumps(entries))
    return dest


@pytest.mark.parametrize("kind", sorted(ESCAPES))
def test_no_control_sequence_reaches_the_terminal(kind, tmp_path):
    # In this process (run_main): what reaches the terminal is what the CLI writes, encoded as a pipe
    # would; six outputs for each of six escapes through a fresh interpreter each cost 25 s.
    node = _bundle_with_gpu_name(tmp_path, "NVIDIA H100 " + ESCAPES[kind] + " 80GB HBM3")
    outputs = {
        "check": run_main("check", "--from", str(node), "--fail-on", "never"),
        "quiet": run_main("check", "--from", str(node), "--quiet", "--fail-on", "advice"),
        "nhc": run_main("nhc", "--from", str(node)),
        "markdown": run_main("check", "--from", str(node), "--format", "markdown"),
        "rank": run_main("check", "--from", str(node), "--rank-report"),
        "prometheus": run_main("check", "--from", str(node), "--format", "prometheus"),
    }
    seen_name = False
    for what, res in outputs.items():
        assert res.returncode in (0, 1), (what, res.stderr)
        for stream in (res.stdout, res.stderr):
            assert "\x1b" not in stream and "\x9b" not in stream and "\x07" not in stream, (what, stream)
            assert "\u202e" not in stream, what
        seen_name |= "\\x1b" in res.stdout or "\\u202e" in res.stdout or "\\x9b" in res.stdout
    assert seen_name, "the hostile name should be shown, escaped, not dropped"


def test_diff_shows_hostile_values_escaped(tmp_path):
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps({"schema_version": 1, "facts": {"gpus": [{"name": "H100"}]}, "findings": []}))
    b.write_text(json.dumps({"schema_version": 1, "facts": {"gpus": [{"name": "H100\x1b]52;c;eA==\x07"}]},
                             "findings": [{"code": "X1", "symbol": "x", "severity": "error",
                                           "message": "m\x1b[2J", "subject": "s\x9b"}]}))
    res = run_main("diff", str(a), str(b))
    assert "\x1b" not in res.stdout and "\x9b" not in res.stdout
    assert "\\x1b]52" in res.stdout


def test_safe_term_escapes_every_control_and_keeps_text():
    assert safe.term("GPU\x1b[31m") == "GPU\\x1b[31m"
    assert safe.term("a\nb\tc\x7f\x85") == "a\\x0ab\\x09c\\x7f\\x85"
    assert safe.term("H100 80GB HBM3 · é") == "H100 80GB HBM3 · é"
    assert safe.term_block("line1\nline2\x1b") == "line1\nline2\\x1b"
    assert safe.term("\ud800") == "\\ud800"  # a lone surrogate can no longer break an encoder


# --- Markdown ---------------------------------------------------------------------------------

def _md_doc(**over):
    doc = {"tool": {"version": "0"}, "schema_version": 1, "source": {"mode": "live"}, "depth": "fast",
           "facts": {"system": {"hostname": "gpu`01"}}, "unknown": {}, "skipped": [], "findings": [
               {"code": "ENV001", "symbol": "nccl-async-error-handling", "severity": "advice", "title": "t",
                "message": "value <img src=x onerror=alert(1)> [click](http://evil.example) a|b \\| c",
                "fix": "export A='x\n```\n# owned\n```'", "references": [], "subject": "cell|split"}]}
    doc.update(over)
    return doc


def test_markdown_fix_block_cannot_be_closed_by_its_content():
    text = markdown.render(_md_doc())
    fence_lines = [ln for ln in text.splitlines() if ln.startswith("```")]
    opening = fence_lines[0]
    assert opening.startswith("````") and opening.endswith("bash")
    # The block closes only on a fence as long as the opening one, after the whole fix.
    body = text.split(opening + "\n", 1)[1]
    closing = "`" * (len(opening) - len("bash"))
    assert body.split("\n" + closing + "\n", 1)[0].endswith("# owned\n```'")


def test_markdown_prose_and_cells_carry_no_html_links_or_cell_breaks():
    text = markdown.render(_md_doc())
    import re

    assert not re.search(r"(?<!\\)<img", text) and not re.search(r"(?<!\\)\]\(http", text)
    assert "\\<img" in text and "\\[click\\]" in text
    for line in text.splitlines():
        if line.startswith("|"):
            # Unescaped pipes are only the table's own: two columns.
            unescaped = len(line.replace("\\\\", "").replace("\\|", "")) - len(
                line.replace("\\\\", "").replace("\\|", "").replace("|", ""))
            assert unescaped == 3, line
    assert "``gpu`01``" in text


def test_markdown_escaping_is_linear():
    import time

    # 256 KB of special characters: linear escaping takes a fraction of a second; a quadratic one
    # (65 billion steps) misses the limit by far, as it did at 1 MB.
    big = "<`|[" * 64_000
    start = time.process_time()
    safe.md_text(big)
    safe.md_block(big)
    assert time.process_time() - start < 5
