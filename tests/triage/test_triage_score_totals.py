"""The scorer's aggregates keep a hint (info, advice) apart from a diagnosis."""

from ticketkit import score_mod


def _run(findings):
    return {"rc": 0, "findings": findings, "stderr": "", "report": True}


def test_hints_are_counted_and_shown_apart():
    sick = {"id": "a", "must": ["gpu-memory-in-use", "gpu-throttled"], "healthy": False}
    well = {"id": "b", "must": [], "healthy": True}
    results = [score_mod.judge(sick, _run({"gpu-memory-in-use": "info", "gpu-throttled": "error"})),
               score_mod.judge(well, _run({"dataloader-workers": "advice"}))]
    t = score_mod.totals(results)
    assert (t["hit"], t["expected"]) == (2, 2)
    assert t["hit_hint"] == 1
    assert t["healthy_with_hint"] == 1
    assert t["false_positives"] == 0  # an advice on a healthy control is not an alarm


def test_a_warning_on_a_healthy_control_is_a_false_positive():
    well = {"id": "b", "must": [], "healthy": True}
    t = score_mod.totals([score_mod.judge(well, _run({"dataloader-workers": "warning"}))])
    assert (t["false_positives"], t["healthy_with_hint"]) == (1, 0)
