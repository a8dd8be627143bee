"""Every parser against generated input: random text and mutations of real recordings.

CI runs the "ci" profile; `HYPOTHESIS_PROFILE=stress` (bench/stress) runs 10,000 inputs per parser.
A parser may only raise its declared error (which the checks turn into an Unknown with the reason).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import CPUINFO, NODES, PUBLIC
from hpcdoctor import config
from hpcdoctor.envfilter import parse_env_output
from hpcdoctor.parse import (amdsmi, collect_env, cpuinfo, cpulist, kv, lscpu, lshw, lspci, numactl, nvsmi_topo, nvsmi_xml, rdma,
                             rocm_topo, torch_config)
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import recognise
from hpcdoctor.sysroot import ReplaySysRoot, SnapshotError

settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("stress", max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _samples(*paths):
    return [p.read_text(errors="replace") for p in paths]


@st.composite
def mutated(draw, samples):
    """A real recording cut, spliced, garbled or shuffled, or plain random text."""
    if draw(st.integers(0, 4)) == 0:
        return draw(st.text(max_size=2000))
    text = draw(st.sampled_from(samples))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.integers(0, 4))
        n = len(text)
        i = draw(st.integers(0, n))
        if op == 0:
            text = text[:i]                                   # cut off (a truncated paste)
        elif op == 1:
            text = text[:i] + draw(st.text(max_size=40)) + text[i:]
        elif op == 2:
            j = draw(st.integers(i, n))
            text = text[:i] + text[j:]
        elif op == 3:
            lines = text.splitlines(True)
            text = "".join(draw(st.permutations(lines))) if len(lines) < 60 else text
        else:
            text = text.replace("\n", draw(st.sampled_from(["\r\n", "\n\n", " ", "\t"])))
    return text


CPUINFO_S = _samples(*CPUINFO.iterdir(), PUBLIC / "cpu_numa" / "perfstudy_azure_hbv3_2xEPYC7V73X_proc_cpuinfo.txt")
XML_S = _samples(NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi_qx.txt", *sorted((PUBLIC / "nvsmi").glob("*.xml")))
TOPO_S = _samples(*(PUBLIC / "topo").iterdir(), NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi_topo.txt")
AMD_S = _samples(*(PUBLIC / "amd").glob("*.json"), PUBLIC / "amd" / "delai_8xMI300X_amd-smi_static_json_nonroot_banner.txt")
NET_S = _samples(*(PUBLIC / "net").iterdir())
TEXT_S = _samples(NODES / "h100-kvm-1gpu" / "cmd" / "collect_env.txt", NODES / "h100-kvm-1gpu" / "cmd" / "lscpu.txt",
                  NODES / "h100-kvm-1gpu" / "cmd" / "numactl_H.txt", PUBLIC / "cpu_numa" / "cscs_alps_eiger_numactl_H_epyc7742_nps4.txt",
                  NODES / "h100-kvm-1gpu" / "fs" / "proc" / "meminfo", NODES / "h100-kvm-1gpu" / "cmd" / "env.txt")
LIST_S = ["0-15", "0-3,8,10-11", "0-7:2", "00000000,0000ffff", "ff,ffffffff", "1", ""]


@given(mutated(CPUINFO_S))
def test_cpuinfo(text):
    blocks = cpuinfo.parse_cpuinfo(text)
    cpuinfo.infer_arch(blocks)
    for b in cpuinfo.processors(blocks)[:2]:
        cpuinfo.flags(b)
        cpuinfo.power_generation(b)


@given(mutated(CPUINFO_S))
def test_microarch_detection(text):
    from hpcdoctor.knowledge import microarch

    blocks = cpuinfo.parse_cpuinfo(text)
    arch = cpuinfo.infer_arch(blocks)
    if arch and blocks:
        microarch.detect(arch, blocks[0], cpuinfo.flags(blocks[0]), cpuinfo.power_generation(blocks[0]))


@given(mutated(LIST_S))
def test_cpulists_and_masks(text):
    for fn in (cpulist.parse_cpulist, cpulist.parse_cpumask):
        try:
            cpus = fn(text)
        except cpulist.ListFormatError:
            continue
        assert all(isinstance(c, int) and c >= 0 for c in cpus)


@given(mutated(XML_S))
def test_nvidia_smi_xml(text):
    try:
        nvsmi_xml.parse(text)
    except nvsmi_xml.NvsmiXmlError:
        pass


@given(mutated(TOPO_S))
def test_nvidia_smi_topo(text):
    try:
        nvsmi_topo.parse(text)
    except ValueError:
        pass


@given(mutated(AMD_S))
def test_amd_outputs(text):
    for fn in (amdsmi.parse_amdsmi_static, amdsmi.parse_rocm_smi_json, amdsmi.parse_amdsmi_version):
        try:
            fn(text)
        except ValueError:
            pass


@given(mutated(NET_S))
def test_rdma_outputs(text):
    rdma.parse_ibstat(text)
    rdma.parse_ibstatus(text)
    rdma.parse_fi_info(text)
    rdma.parse_ibv_devinfo(text)


PCI_S = _samples(*sorted((NODES.parent / "pastes").glob("lspci-*.txt")), *sorted((NODES.parent / "pastes").glob("lshw-*.txt")))


@given(mutated(PCI_S))
def test_lspci_and_lshw(text):
    for mod in (lspci, lshw):
        try:
            out = mod.parse(text)
        except ValueError:
            continue
        assert all(isinstance(d, dict) and "bound" in d for d in out["devices"])


REPORT_S = _samples(*(NODES.parent / "pastes").glob("*.txt"), *(PUBLIC / "amd").glob("*rocm-smi*.txt"))


@given(mutated(REPORT_S))
def test_pasted_reports(text):
    # vLLM's and sglang's reports, rocm-smi's topology, whole pastes: never anything but ValueError.
    collect_env.parse_collect_env(text)
    find_messages(text)
    recognise(text)
    try:
        rocm_topo.parse(text)
    except ValueError:
        pass


@given(mutated(TEXT_S))
def test_text_reports(text):
    collect_env.parse_collect_env(text)
    lscpu.parse_lscpu(text)
    numactl.parse_numactl_h(text)
    kv.parse_meminfo(text)
    kv.parse_status(text)
    kv.parse_os_release(text)
    kv.bracketed_choice(text)
    parse_env_output(text)
    torch_config.parse_config(text)


CONFIG_S = ["[expect]\ngpus = 4\ncpus = 64\ngpu_model = \"H100\"\n", "[rules]\nignore = [\"ENV004\"]\n",
            "[bench]\nmin_gemm_bf16_tflops = 600\n"]


@given(mutated(CONFIG_S))
def test_site_config(text):
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as fh:
        fh.write(text)
    try:
        config.load(fh.name)
    except config.ConfigError:
        pass
    finally:
        os.unlink(fh.name)


INDEX_S = [(NODES / "h100-kvm-1gpu" / "cmd" / "index.json").read_text(),
           json.dumps({"format": "hpcdoctor-snapshot", "version": 1, "unreadable": {}})]


@given(mutated(INDEX_S), st.booleans())
def test_snapshot_index_and_meta(text, as_meta):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if as_meta:
            (root / "meta.json").write_text(text)
        else:
            (root / "cmd").mkdir()
            (root / "cmd" / "index.json").write_text(text)
        try:
            r = ReplaySysRoot(root)
            try:
                r.run(["env"])
            except Exception as exc:  # only Missing is allowed here
                from hpcdoctor.sysroot import Missing

                assert isinstance(exc, Missing), exc
        except SnapshotError:
            pass


NVSMI_Q_S = _samples(*sorted((PUBLIC / "nvsmi").glob("*.txt")), NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi_q.txt")


@given(mutated(NVSMI_Q_S))
def test_nvidia_smi_q_text(text):
    from hpcdoctor.parse import nvsmi_q

    try:
        nvsmi_q.parse(text)
    except ValueError:
        pass


PASTE_S = TEXT_S + NVSMI_Q_S[:2] + TOPO_S + NET_S[:2] + AMD_S[:2]


@given(mutated(PASTE_S))
def test_paste_recognition(text):
    from hpcdoctor.triage import paste

    rec = paste.recognise(text)
    for piece in rec.pieces:
        assert piece.text and piece.line >= 1
    rec.summary()


AMD_TEXT_S = _samples(PUBLIC / "amd" / "amdsmi_readme_4xMI300A_amd-smi_static.txt", PUBLIC / "amd" / "gls_4xMI300X_vf_rocm-smi_a.txt",
                      PUBLIC / "amd" / "gls_4xMI300X_vf_rocm-smi.txt", NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi.txt")


@given(mutated(AMD_TEXT_S))
def test_vendor_text_tables(text):
    from hpcdoctor.parse import nvsmi_table

    for fn in (amdsmi.parse_amdsmi_static_text, amdsmi.parse_rocm_smi_text, nvsmi_table.parse):
        try:
            fn(text)
        except ValueError:
            pass


OOM_S = _samples(*(NODES.parent / "tickets").glob("*oom*.txt"))


@given(mutated(OOM_S))
def test_pasted_out_of_memory_messages(text):
    # Cut, spliced or garbled OOM messages: what is read must never break GPU011's arithmetic.
    from rulekit import facts, run_rule
    found = find_messages(text)
    if any(s["id"].startswith("torch:cuda-oom") for s in found):
        findings, skipped = run_rule("gpu-memory-in-use", facts("h100-kvm-1gpu", **{"ticket.symptoms": found}))
        assert not skipped, skipped  # the engine turns a rule's exception into a skip: that is a failure here


def test_nvidia_smi_xml_declaring_an_unknown_encoding_is_refused_in_one_line():
    # Found by the fuzzer above: expat hands the declared name to Python's codecs (LookupError).
    recorded = (NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi_qx.txt").read_text()
    text = recorded.replace('<?xml version="1.0" ?>', '<?xml version="1.0" encoding="U0TF-8"?>', 1)
    assert 'encoding="U0TF-8"' in text
    try:
        nvsmi_xml.parse(text)
    except nvsmi_xml.NvsmiXmlError as exc:
        assert "cannot be decoded" in str(exc)
    else:
        raise AssertionError("an undecodable report was parsed")
