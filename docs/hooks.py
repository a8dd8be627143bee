"""MkDocs hooks: the pages that are generated, never typed.

- rules/index.md and one page per rule, from the rules' own docstrings through the discovery
  that `hpcdoctor rules` and `hpcdoctor explain` use (built-in rules only: a site plugin on the
  machine that builds the docs is not part of hpcdoctor);
- knowledge.md, from `hpcdoctor knowledge --format json` (the CLI's output, which stays the same
  whatever module holds the tables);
- performance.md, from the bench scripts' result files in bench/results/ (`--json-out`), each
  with the command, machine and date it was measured with.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
SEVERITY_MARK = {"error": "error", "warning": "warning", "advice": "advice", "info": "info"}
MODULE_TOPIC = {
    "driver_crash": "GPU health",
    "rank_env": "Environment", "pip_managed_env": "Software stack", "machine_checks": "Memory", "cvmfs_mount": "Environment", "file_size_limit": "Environment", "gpu_jit_libs": "GPU health", "ssh_x11_xauth": "Environment", "cpu_msr": "Environment", "slurm_arrays": "Environment", "jvm_heap": "Memory", "apptainer_loop": "Environment",
    "toolchain_releases": "Software stack", "build_versions": "Software stack", "mkl_libraries": "Software stack", "assembler": "Software stack", "openmp_env": "Threads and placement", "cpu_affinity": "Threads and placement", "logind": "Environment", "fortran_modules": "Software stack", "fortran_arguments": "Software stack",
    "build_targets": "Software stack", "data_files": "Software stack", "toolchain": "Software stack", "python_headers": "Software stack", "devel_headers": "Software stack", "slingshot": "Network", "lustre_metadata": "Environment", "mpi_io": "Environment", "kernel_headers": "GPU health", "dkms_build": "GPU health", "dcgm_install": "GPU health",
    "fail2ban": "Network", "md_engine_builds": "Software stack", "jupyter_server": "Environment", "mpi_wrappers": "Software stack", "gpu_profiling": "GPU health", "bundled_libraries": "Software stack",
    "torch_allocator": "Software stack", "nccl_net": "Network", "nccl_ranks": "Network", "nccl_peers": "Network", "mpi_root": "Environment",
    "bench": "Benchmarks", "cluster": "Cluster", "cpu": "CPU precision", "environment": "Environment",
    "gpu_health": "GPU health", "gpu_driver": "GPU health", "secure_boot": "GPU health", "gpu_memory": "GPU health", "gpu_sharing": "GPU health", "gpu_memory_held": "GPU health",
    "memory": "Memory", "network": "Network", "site": "Site expectations",
    "threads": "Threads and placement", "torch_build": "Software stack", "torch_driver": "Software stack", "torch_install": "Software stack",
    "torch_rocm": "Software stack", "libraries": "Software stack", "precision": "Software stack",
    "frameworks": "Software stack", "gpu_builds": "Software stack", "extension_builds": "Software stack", "driver_generation": "Software stack", "gpu_messages": "GPU health",
    "nccl_messages": "Network", "rdma_completions": "Network", "nccl_env": "Environment", "torch_messages": "Software stack", "cuda_toolkit": "Software stack", "build_cuda_toolkits": "Software stack", "rocm_devices": "GPU health", "rocm_support": "Software stack", "pcie_p2p": "GPU health",
    "tf_jax": "Software stack", "env_modules": "Environment", "mpi_messages": "Network", "mpi_slots": "Network", "gpu_ranks": "Threads and placement", "numpy_abi": "Software stack", "job_setup": "Environment",
    "network_access": "Network", "gpu_access": "GPU health", "container_python": "Environment",
    "limits": "Environment", "job_end": "Environment", "file_systems": "Environment", "fs_support": "Environment", "remote_launch": "Network", "host_compilers": "Software stack", "shared_libraries": "Software stack", "wheel_tags": "Software stack", "libstdcxx_versions": "Software stack", "cuda_libraries": "Software stack", "cuda_stub": "Software stack", "intel_gpu": "Software stack", "gpu_models": "GPU health", "container_access": "Environment", "x11_forwarding": "Network", "parallel_pools": "Network", "nfs_exports": "Environment", "clock": "Environment", "storage_devices": "Environment", "read_only_fs": "Environment", "nfs_client": "Environment", "clocksource": "Environment", "pids_limit": "Environment", "core_dumps": "Environment", "executables": "Environment", "fuse_mounts": "Environment", "downloads": "Network", "tensorrt": "Software stack", "caches": "Environment", "container_binds": "Environment", "container_storage": "Environment", "xla_libdevice": "Software stack", "xla_compile": "Software stack", "package_platforms": "Software stack", "gpu_faults": "GPU health", "gpu_firmware": "GPU health", "cuda_driver_library": "Software stack", "compiler_offload": "Software stack", "rocm_kernel_interface": "GPU health", "gpu_visibility": "GPU health", "nvlink": "GPU health",
    "no_display": "Environment", "locales": "Environment", "slurm_requests": "Environment", "slurm_power": "Environment", "slurm_client_env": "Environment", "slurm_nodes": "Environment", "address_space": "Environment", "preload": "Environment", "slurm_rpc": "Environment", "batch_limits": "Environment", "library_versions": "Software stack", "cray_mpi": "Network", "k8s_gpus": "GPU health", "k8s_scheduling": "GPU health", "k8s_crds": "GPU health", "container_devices": "GPU health",
    "container_runtimes": "Environment", "nvidia_daemons": "GPU health", "docker_cli": "Environment", "enroot_images": "Environment", "torch_companions": "Software stack", "openmp_compilers": "Software stack", "cloud_capacity": "Environment", "vllm_ray": "Environment", "peer_memory": "Network", "blas_link": "Software stack", "pip_resolver": "Software stack", "parallel_io_builds": "Software stack", "slurm_accounting_db": "Environment", "python_installs": "Software stack", "node_access": "Environment", "ssh_host_keys": "Network", "allocations": "Environment", "id_mapping": "Environment", "sessions": "Environment", "shared_storage": "Environment", "registry_pulls": "Environment", "blas_threads": "Threads and placement", "compute_apis": "Software stack", "onnxruntime_install": "Software stack", "jetson_power": "GPU health", "jit_builds": "Software stack",
    "mpi_libraries": "Network", "mpi_network": "Network", "rdma_setup": "Network",
    "tensorflow_install": "Software stack", "build_tools": "Software stack", "compiler_crashes": "Software stack", "compiler_runtimes": "Software stack", "graphics_libraries": "Environment", "perf_counters": "Environment", "cpu_frequency": "Threads and placement", "submit_hosts": "Environment", "qsub_options": "Environment", "stale_hosts": "Network", "hostname_lookup": "Network", "net_interfaces": "Network", "ib_subnet": "Network", "rdma_devices": "Network", "batch_daemons": "Environment", "sge_hosts": "Environment", "pbs_requests": "Environment", "conda_shadowing": "Environment", "kernel_module_symbols": "Environment", "modulefile_errors": "Environment", "shell_functions": "Environment", "scheduler_setup": "Environment",
    "rocm_libraries": "Software stack", "miopen_backend": "Software stack", "stack_limit": "Environment", "host_memory": "Memory", "open_files": "Environment", "shm_segments": "Memory", "inotify_limits": "Environment", "shared_fs": "Environment", "conda_installs": "Software stack", "node_memory": "Memory",
    "job_admission": "Environment", "licenses": "Network",
}


def _rules() -> List[Any]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from hpcdoctor import engine, plugins

    return engine.collect_rules(plugins.builtin_modules("hpcdoctor.rules"))


def _reference(ref: str) -> str:
    from hpcdoctor import knowledge  # the titles `hpcdoctor explain` prints

    title = knowledge.reference_title(ref)
    url = ref.split()[0]
    if url.startswith(("https://", "http://")):
        return f"[{title}]({url})"
    return title


def _indent_text(text: str) -> str:
    # Docstrings are prose wrapped at a fixed width; Markdown joins the lines of a paragraph.
    return text.strip() + "\n"


def rule_page(r: Any) -> str:
    lines = [f"# {r.code} {r.symbol}", "", f"**{r.title}**", "",
             "| | |", "| --- | --- |",
             f"| code | `{r.code}` |", f"| symbol | `{r.symbol}` |",
             f"| severity | {r.severity_story()} |", f"| status | {r.status} |",
             f"| ranking weight | {r.impact} |", f"| module | `{r.module}` |", ""]
    for head in ("What it detects", "Why it matters", "How to fix"):
        lines += [f"## {head}", "", _indent_text(r.docs.get(head, "(not documented)")), ""]
    lines += ["## References", ""]
    lines += [f"- {_reference(ref)}" for ref in r.references] or ["(none)"]
    lines += ["", "Select or ignore it with `--select` / `--ignore` and the code or symbol; "
              f"`hpcdoctor explain {r.symbol}` prints this page in a terminal.", ""]
    return "\n".join(lines)


def rules_index(rules: List[Any]) -> str:
    lines = ["# Rule reference", "",
             f"hpcdoctor {_version()} ships {len(rules)} rules. Each page below is generated from the rule's own "
             "docstring when the documentation is built, so it says what `hpcdoctor explain CODE` says.",
             "Findings are ranked by severity, then by the ranking weight (how much the problem typically costs).", ""]
    by_topic: Dict[str, List[Any]] = {}
    for r in rules:
        by_topic.setdefault(r.module.rsplit(".", 1)[-1], []).append(r)
    for topic in sorted(by_topic, key=lambda t: MODULE_TOPIC.get(t, t)):
        lines += [f"## {MODULE_TOPIC.get(topic, topic)}", "", "| code | symbol | severity | title |",
                  "| --- | --- | --- | --- |"]
        for r in sorted(by_topic[topic], key=lambda x: x.code):
            title = r.title.replace("|", "\\|")
            lines.append(f"| [{r.code}]({r.symbol}.md) | `{r.symbol}` | {r.severity} | {title} |")
        lines.append("")
    return "\n".join(lines)


def _version() -> str:
    from hpcdoctor import __version__

    return __version__


def knowledge_page() -> str:
    proc = subprocess.run([sys.executable, "-m", "hpcdoctor", "knowledge", "--format", "json"],
                          capture_output=True, text=True, cwd=str(ROOT), timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"hpcdoctor knowledge --format json failed: {proc.stderr.strip()}")
    tables = json.loads(proc.stdout)
    lines = ["# Knowledge tables", "",
             "What hpcdoctor knows about hardware and software comes from these tables. Every entry "
             "carries its source and the date it was read; this page is generated from "
             "`hpcdoctor knowledge --format json` when the documentation is built, and "
             "`hpcdoctor knowledge --all` prints the same on any node.", "",
             "| table | file | sourced entries | without a read date | dates read |",
             "| --- | --- | --- | --- | --- |"]
    for t in tables:
        dates = ", ".join(t["dates"]) if t["dates"] else "none recorded"
        lines.append(f"| [{t['table']}](#{t['table']}) | `{t['file']}` | {t['entries']} | "
                     f"{t.get('undated', 0)} | {dates} |")
    for t in tables:
        lines += ["", f"## {t['table']}", "", f"`{t['file']}`: {t['entries']} sourced entries.", ""]
        lines += [f"- {_escape(src)}" for src in t["sources"]] or ["(no sources recorded)"]
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    # Sources quote headers and enum names: keep underscores, stars and angle brackets literal.
    for ch in ("\\", "*", "_", "<", ">", "[", "]", "`", "|"):
        text = text.replace(ch, "\\" + ch)
    if text.startswith(("https://", "http://")) and " " not in text:
        return f"<{text.replace(chr(92), '')}>"
    return text


def _load_results() -> List[Dict[str, Any]]:
    out = []
    for path in sorted(RESULTS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["_file"] = f"bench/results/{path.name}"
        out.append(doc)
    return out


def _figure(doc: Dict[str, Any]) -> str:
    r = doc["results"]
    if doc["bench"] == "check_time":
        target = "" if r["check_arguments"] else f"; target {r['target_s']:g} s"  # issue 2's target is the plain check's
        return f"median {r['median_s']:.3f} s of {r['runs']} runs (min {r['min_s']:.3f}, max {r['max_s']:.3f}{target})"
    if doc["bench"] == "triage_score":
        recall = f"{100 * r['recall']:.1f} %" if r.get("recall") is not None else "n/a"
        return (f"{r['tickets']} tickets ({r['healthy']} healthy controls): recall {r['hit']}/{r['expected']} "
                f"({recall}), false positives {r['false_positives']}, refusals {r['refusals']}, "
                f"tracebacks {r['tracebacks']}")
    if doc["bench"] == "gpu_lookup":
        return (f"{r['names']} pci.ids names: {r['first_us']:.1f} µs per first lookup, "
                f"{r['cached_us']:.2f} µs cached")
    return "`" + json.dumps(r, sort_keys=True) + "`"


def performance_page() -> str:
    results = _load_results()
    lines = ["# Performance, measured", "",
             "Every figure on this page is read from a result file a bench script wrote (`--json-out`) when "
             "the documentation is built; none is typed. Rerun a command to measure your own machine. The "
             "load average (1 minute, when the file was written) says how busy the machine was: on 2 CPUs, "
             "a load above 2 means other work shared them, and the times are longer than on an idle node.", ""]
    if not results:
        return "\n".join(lines + ["No result files in `bench/results/`.", ""])
    lines += ["| what | command | figure | machine | date |", "| --- | --- | --- | --- | --- |"]
    for doc in results:
        m = doc["machine"]
        load = m.get("load_average")
        machine = (f"{m.get('cpu_model') or 'unknown CPU'}, {m.get('cpus')} CPUs, Python {m.get('python')}"
                   + (f", load average {load[0]:g}" if load else ""))
        lines.append(f"| `{doc['_file']}` | `{doc['command']}` | {_figure(doc)} | {machine} | {doc['date']} |")
    lines += ["", "## The machines", ""]
    seen = set()
    for doc in results:
        m = doc["machine"]
        if m["uname"] in seen:
            continue
        seen.add(m["uname"])
        lines += [f"- `{m['uname']}`: {m.get('cpu_model')}, {m.get('cpus')} CPUs"]
    lines += ["", "How each benchmark measures (the node's `--bench` figures and hpcdoctor's own speed) is "
              "described in `bench/README.md` in the source tree.", ""]
    return "\n".join(lines)


def on_files(files: Any, config: Any) -> Any:
    rules = _rules()
    generated = {"rules/index.md": rules_index(rules), "knowledge.md": knowledge_page(),
                 "performance.md": performance_page()}
    generated.update({f"rules/{r.symbol}.md": rule_page(r) for r in rules})
    for uri, content in generated.items():
        files.append(File.generated(config, uri, content=content))
    return files


def on_config(config: Any) -> Any:
    """Every rule page in the navigation, by topic, under the reference's "Rules" entry."""
    by_topic: Dict[str, List[Any]] = {}
    for r in _rules():
        by_topic.setdefault(MODULE_TOPIC.get(r.module.rsplit(".", 1)[-1], r.module), []).append(r)
    section = [{"Overview": "rules/index.md"}]
    section += [{topic: [{f"{r.code} {r.symbol}": f"rules/{r.symbol}.md"} for r in sorted(rs, key=lambda x: x.code)]}
                for topic, rs in sorted(by_topic.items())]
    for entry in config["nav"]:
        for items in entry.values():
            if not isinstance(items, list):
                continue
            for i, item in enumerate(items):
                if isinstance(item, dict) and item.get("Rules") == "rules/index.md":
                    items[i] = {"Rules": section}
    return config
