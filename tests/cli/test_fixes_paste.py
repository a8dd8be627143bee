"""Fixes that can be pasted: the right language block, never broken at 80 columns."""

from __future__ import annotations

import io

from fixcheck import fix_problem, prime
from hpcdoctor.report import markdown, terminal

LONG = ("srun --gpus-per-task=1 --gpu-bind=closest --cpu-bind=cores python train.py"
        "   # or: numactl --cpunodebind=1 --membind=1 python train.py")


def _doc(fix, lang="bash"):
    return {"tool": {"version": "0"}, "schema_version": "2.0", "source": {"mode": "live"}, "facts": {},
            "unknown": {}, "checks": {}, "skipped": [], "summary": {"warning": 1}, "unchecked": [],
            "findings": [{"code": "THR006", "symbol": "gpu-numa-mismatch", "severity": "warning", "title": "t",
                          "message": "m", "fix": fix, "fix_lang": lang, "evidence": {}, "references": []}]}


def test_the_checker_catches_what_users_tripped_on():
    assert fix_problem("pip install 'torch>=2.7' --index-url https://download.pytorch.org/whl/cu128   "
                       "(the +cu128 wheels of torch>=2.7 run sm_120)", "bash")
    assert fix_problem('torch.set_float32_matmul_precision("high")', "bash")
    assert fix_problem("srun --pty -p <gpu-partition> --gpus=1 hpcdoctor check", "bash")
    assert fix_problem("export OMP_NUM_THREADS=2   # and srun --cpu-bind=cores", "bash") is None
    assert fix_problem('torch.set_float32_matmul_precision("high")', "python") is None


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_terminal_never_breaks_a_fix_at_80_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")
    out = _Tty()
    terminal.write(_doc(LONG), out)
    assert any(LONG in line for line in out.getvalue().splitlines()), out.getvalue()


def test_markdown_puts_each_fix_in_its_own_language_block():
    text = markdown.render(_doc('torch.set_float32_matmul_precision("high")', "python"))
    assert '```python\ntorch.set_float32_matmul_precision("high")\n```' in text
    assert "```bash\n" + LONG + "\n```" in markdown.render(_doc(LONG))


def test_every_fix_the_ticket_corpora_get_runs_as_printed():
    """The in-process corpus reports (conftest.check_from) are made outside the per-test fix check,
    so that a memoised report does not depend on which test asked first: check them all here, once."""
    from conftest import FIXTURES, check_from

    pastes = [p for d in ("tickets", "tickets_blind_a", "pastes") for p in sorted((FIXTURES / d).glob("*.txt"))]
    assert len(pastes) > 150
    docs = [check_from(path)["doc"] or {} for path in pastes]
    prime([f["fix"] for doc in docs for f in doc.get("findings", []) if f.get("fix_lang", "bash") == "bash"])
    bad = []
    for path, doc in zip(pastes, docs):
        for f in doc.get("findings", []):
            problem = fix_problem(f["fix"], f.get("fix_lang", "bash"))
            if problem:
                bad.append(f"{path.name} {f['code']}: {problem}")
    assert bad == []


def test_a_broken_fix_primed_with_good_ones_is_still_caught():
    """prime() parses many fixes in one bash run; a broken one among them must not pass."""
    broken, fine = "echo 'an unclosed quote", "export OMP_NUM_THREADS=4   # primed"
    prime([fine, broken, "srun --cpu-bind=cores true"])
    assert fix_problem(broken, "bash") is not None
    assert fix_problem(fine, "bash") is None
    prime([fine + "\nfi"])  # a lone fi is an error inside a function body too
    assert fix_problem(fine + "\nfi", "bash") is not None
