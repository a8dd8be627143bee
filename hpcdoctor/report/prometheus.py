"""``--format prometheus``: the report as metrics for node_exporter's textfile collector.

Admins watch fleets in Prometheus and Grafana, so what hpcdoctor found goes where their
monitoring already looks. The exposition format is written by the Prometheus project's own
client (its registry, ``generate_latest`` and the atomic ``write_to_textfile``), which escapes
label values, so a GPU name with quotes or newlines cannot break the file.

An unknown is never a pass here either: every part that matters on the node and could not be
checked (the verdict's list: GPUs, CPUs) is a ``hpcdoctor_unchecked`` sample, every probe that did
not run a ``hpcdoctor_probe_unknown`` sample, every fact that could not be established about a GPU's health
a ``hpcdoctor_fact_unknown`` sample, and a value that is unknown is absent, never exported as 0.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Dict, Iterable, List, Optional, Tuple

from hpcdoctor.report.safe import term_block

SEVERITIES = ("error", "warning", "advice", "info")
# The label value of a subject or name is capped: a label is an index key, not a document.
_MAX_LABEL = 200


def _label(value: Any) -> str:
    # The client escapes quotes, backslashes and newlines only: an ESC or a bidirectional control
    # in a GPU name would reach the terminal of whoever reads stdout.
    text = "" if value is None else term_block(str(value))
    return text if len(text) <= _MAX_LABEL else text[: _MAX_LABEL - 1] + "…"


def _num(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and value == value and value not in (float("inf"), float("-inf")):
        return float(value)
    return None


class _Metrics:
    """Gauges created on first use, so a report without benchmarks has no empty bench families."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry

        self.registry = CollectorRegistry()
        self._gauges: Dict[str, Any] = {}

    def set(self, name: str, doc: str, labels: Dict[str, Any], value: Any) -> None:
        v = _num(value)
        if v is None:
            return
        from prometheus_client import Gauge

        names = tuple(labels)
        gauge = self._gauges.get(name)
        if gauge is None:
            gauge = self._gauges[name] = Gauge(name, doc, names, registry=self.registry)
        (gauge.labels(**{k: _label(x) for k, x in labels.items()}) if names else gauge).set(v)


def _timestamp(doc: Dict[str, Any]) -> Optional[float]:
    stamp = doc.get("generated_at")
    if not isinstance(stamp, str):
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.timestamp() if when.tzinfo else None


def _gpu_health(m: _Metrics, gpus: Iterable[Any], base: Dict[str, Any]) -> None:
    for pos, g in enumerate(gpus):
        if not isinstance(g, dict):
            continue
        gpu = g.get("index", pos)
        m.set("hpcdoctor_gpu_info", "GPU identity (value 1)", {**base, "gpu": gpu, "name": g.get("name"),
              "pci_bus_id": g.get("pci_bus_id"), "driver": g.get("driver_version")}, 1)
        m.set("hpcdoctor_gpu_ecc_enabled", "ECC mode (1 on, 0 off)", {**base, "gpu": gpu}, g.get("ecc_enabled"))
        for scope in ("volatile", "aggregate"):
            m.set("hpcdoctor_gpu_ecc_uncorrectable_errors", "uncorrectable ECC errors",
                  {**base, "gpu": gpu, "scope": scope}, g.get(f"ecc_uncorrectable_{scope}"))
        rows = g.get("remapped_rows") if isinstance(g.get("remapped_rows"), dict) else {}
        for kind in ("correctable", "uncorrectable"):
            m.set("hpcdoctor_gpu_remapped_rows", "rows remapped", {**base, "gpu": gpu, "kind": kind}, rows.get(kind))
        m.set("hpcdoctor_gpu_remapped_rows_pending", "a row remapping waits for a GPU reset (1)", {**base, "gpu": gpu},
              rows.get("pending"))
        m.set("hpcdoctor_gpu_remapped_rows_failed", "a row remapping failed (1)", {**base, "gpu": gpu}, rows.get("failed"))
        m.set("hpcdoctor_gpu_retired_pages_pending", "a page retirement waits for a reset (1)", {**base, "gpu": gpu},
              g.get("retired_pages_pending"))
        for which, gen, width in (("current", "pcie_gen", "pcie_width"), ("max", "pcie_gen_max", "pcie_width_max")):
            m.set("hpcdoctor_gpu_pcie_link_gen", "PCIe link generation", {**base, "gpu": gpu, "which": which}, g.get(gen))
            m.set("hpcdoctor_gpu_pcie_link_width", "PCIe link width (lanes)", {**base, "gpu": gpu, "which": which},
                  g.get(width))
        reasons = g.get("clock_event_reasons")
        if isinstance(reasons, list):
            for reason in reasons:
                m.set("hpcdoctor_gpu_clock_event_reason", "an active clock event (throttle) reason (1)",
                      {**base, "gpu": gpu, "reason": reason}, 1)
        m.set("hpcdoctor_gpu_temperature_celsius", "GPU temperature", {**base, "gpu": gpu}, g.get("temperature_c"))
        m.set("hpcdoctor_gpu_power_limit_watts", "enforced power limit", {**base, "gpu": gpu}, g.get("power_limit_w"))
        m.set("hpcdoctor_gpu_power_default_limit_watts", "default power limit", {**base, "gpu": gpu},
              g.get("power_default_limit_w"))


def _bench(m: _Metrics, bench: Any, base: Dict[str, Any]) -> None:
    if not isinstance(bench, dict):
        return
    for pos, b in enumerate(bench.get("gpus") or []):
        if not isinstance(b, dict):
            continue
        gpu = b.get("index", pos)
        for dtype, r in (b.get("gemm") or {}).items():
            if isinstance(r, dict):
                m.set("hpcdoctor_bench_gemm_tflops", "measured GEMM throughput", {**base, "gpu": gpu, "dtype": dtype},
                      r.get("tflops"))
        for key, value in (b.get("memory") or {}).items():
            if key.endswith("_gbs"):
                m.set("hpcdoctor_bench_copy_gbs", "measured copy bandwidth", {**base, "gpu": gpu, "kind": key[:-4]}, value)
    cpu = bench.get("cpu")
    if isinstance(cpu, dict):
        for dtype, r in cpu.items():
            if isinstance(r, dict):
                m.set("hpcdoctor_bench_cpu_gemm_gflops", "measured CPU GEMM throughput", {**base, "dtype": dtype},
                      r.get("gflops"))
    ar = bench.get("allreduce")
    rows = ar.get("results") if isinstance(ar, dict) else None
    if isinstance(rows, list) and rows and isinstance(rows[-1], dict):
        # The largest message: the bandwidth figure nccl-tests and the rules quote.
        m.set("hpcdoctor_bench_allreduce_busbw_gbs", "all-reduce bus bandwidth at the largest size",
              {**base, "backend": ar.get("backend")}, rows[-1].get("busbw_gbs"))
        m.set("hpcdoctor_bench_allreduce_algbw_gbs", "all-reduce algorithm bandwidth at the largest size",
              {**base, "backend": ar.get("backend")}, rows[-1].get("algbw_gbs"))


def unknown_checks(doc: Dict[str, Any]) -> List[Tuple[str, str]]:
    out = []
    for name, p in sorted((doc.get("checks") or {}).items()):
        if isinstance(p, dict) and p.get("status") != "ok":
            out.append((name, str(p.get("status"))))
    return out


def fill(m: _Metrics, doc: Dict[str, Any], labels: Dict[str, Any]) -> None:
    """Every sample of one report, each with ``labels`` added (a node name in cluster mode)."""
    facts = doc.get("facts") or {}
    src = doc.get("source") or {}
    m.set("hpcdoctor_info", "the hpcdoctor run (value 1)", {**labels, "version": (doc.get("tool") or {}).get("version"),
          "depth": doc.get("depth"), "source": src.get("mode", "live")}, 1)
    m.set("hpcdoctor_run_duration_seconds", "how long the check took", labels, doc.get("elapsed_s"))
    m.set("hpcdoctor_run_timestamp_seconds", "when the check ran (Unix time)", labels, _timestamp(doc))
    counts = {s: 0 for s in SEVERITIES}
    for f in doc.get("findings") or []:
        counts[f.get("severity")] = counts.get(f.get("severity"), 0) + 1
        m.set("hpcdoctor_finding", "a finding (value 1)", {**labels, "code": f.get("code"), "symbol": f.get("symbol"),
              "severity": f.get("severity"), "subject": f.get("subject") or ""}, 1)
    for sev, n in counts.items():
        m.set("hpcdoctor_findings", "findings by severity", {**labels, "severity": sev}, n)
    problems = unknown_checks(doc)
    m.set("hpcdoctor_checks_unknown", "checks that did not run or finish", labels, len(problems))
    for name, status in problems:
        m.set("hpcdoctor_check_unknown", "a check that did not run or finish (value 1)",
              {**labels, "check": name, "status": status}, 1)
    # The verdict's own list: a part that matters here (the GPUs, the CPUs) and gave no facts.
    for u in doc.get("unchecked") or []:
        if isinstance(u, dict):
            m.set("hpcdoctor_unchecked", "a part that matters on this node could not be checked (value 1)",
                  {**labels, "area": u.get("area")}, 1)
    for path in sorted(doc.get("unknown") or {}):
        if path.startswith("gpus") or path.startswith("bench"):
            m.set("hpcdoctor_fact_unknown", "a GPU or benchmark fact that could not be established (value 1)",
                  {**labels, "fact": path}, 1)
    gpus = facts.get("gpus")
    if isinstance(gpus, list):
        _gpu_health(m, gpus, labels)
    _bench(m, facts.get("bench"), labels)


def registry_for(doc: Dict[str, Any]):
    m = _Metrics()
    fill(m, doc, {})
    return m.registry


def registry_for_nodes(docs: Dict[str, Dict[str, Any]]):
    """One registry for a whole allocation (cluster mode's rank 0): every sample labelled by node."""
    m = _Metrics()
    for node, doc in sorted(docs.items()):
        fill(m, doc, {"node": node})
    return m.registry


def render(doc: Dict[str, Any]) -> str:
    from prometheus_client import generate_latest

    return generate_latest(registry_for(doc)).decode("utf-8")


def exposition(registry) -> str:
    from prometheus_client import generate_latest

    return generate_latest(registry).decode("utf-8")


def write_registry(registry, path: str) -> None:
    from prometheus_client import write_to_textfile

    write_to_textfile(path, registry)


def write(doc: Dict[str, Any], path: str) -> None:
    """Atomically (a temporary file renamed over the target), so the collector never reads half."""
    from prometheus_client import write_to_textfile

    write_to_textfile(path, registry_for(doc))
