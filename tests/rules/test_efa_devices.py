"""efa-device-missing (NET048): AWS's EFA device plugin on a node without an EFA device."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts


def test_the_plugin_crash_looping_on_a_node_without_efa():
    # https://github.com/aws/sagemaker-hyperpod-cli/issues/367: k9s's log view, box characters and all
    (f,) = fired("efa-device-missing", recorded_paste_facts("hyperpod-cli-367-efa-plugin-on-instance-without-efa.txt"))
    assert f.severity == "warning" and "line 5" in f.message
    assert '"Error to get IB device: %v. No valid EFA devices found"' in f.message
    assert f.fix.startswith("kubectl get node NODE -L node.kubernetes.io/instance-type")
    assert "supportedInstanceLabels" in f.fix


def test_the_instance_type_is_named_where_the_plugin_says_it(tmp_path):
    # the plugin's two lines as a public deployment note quotes them (efa_device_plugin.toml)
    text = "Instance type g6e.12xlarge is not EFA enabled\nNo valid EFA devices found\n"
    (f,) = fired("efa-device-missing", paste_facts(tmp_path, text))
    assert "(instance type g6e.12xlarge)" in f.message


def test_a_node_whose_plugin_found_its_devices_is_not_this(tmp_path):
    # the same plugin's start, and an RDMA listing, without its refusal
    text = "2026/02/03 15:23:32 Fetching EFA devices.\nInstance type p5.48xlarge is EFA enabled\n"
    assert not fired("efa-device-missing", paste_facts(tmp_path, text + "NCCL WARN NET/Socket : no socket interface found\n"))
