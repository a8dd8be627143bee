"""efa-device-missing and rdma-device-missing (rules/rdma_devices.py): the EFA or InfiniBand/RoCE device
a node's software expected is absent, or the HCA failed to initialise."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts


def test_the_efa_plugin_on_a_node_without_efa():
    # aws/sagemaker-hyperpod-cli#367: the plugin's DaemonSet scheduled onto instance types without EFA
    (f,) = fired("efa-device-missing", recorded_paste_facts("hyperpod-cli-367-efa-plugin-no-valid-efa-devices.txt"))
    assert f.severity == "error" and "crash-loops" in f.message
    assert "supportedInstanceLabels" in f.fix and "vpc.amazonaws.com/efa" in f.fix and "fi_info -p efa" in f.fix


def test_a_healthy_efa_plugin_start_is_not_a_missing_efa():
    # aws-samples/aws-efa-eks#22: the plugin lists one device line per EFA on a p5.48xlarge
    assert not fired("efa-device-missing", recorded_paste_facts("aws-efa-eks-22-efa-plugin-devices-found-healthy.txt"))


def test_aws_ofi_nccl_finding_no_provider_on_ec2():
    # aws-ofi-nccl @ v1.21.1 platform-aws.cpp and nccl_ofi_net.cpp, NCCL_OFI_INFO/WARN's format
    # filled in (no public paste of these lines was found)
    text = ("ip-10-0-0-1:1234:1234 [0] NCCL INFO NET/OFI Setting provider_filter to efa\n"
            "ip-10-0-0-1:1234:1250 [0] nccl_net_ofi_create_plugin:334 NCCL WARN NET/OFI Unable to find a protocol "
            "that worked.  Failing initialization.\n")
    (f,) = fired("efa-device-missing", told_facts(text))
    assert "provider filter to efa" in f.message and "lsmod | grep efa" in f.fix


def test_the_rdma_protocol_alone_finding_no_provider_is_not_a_failure():
    # v1.15.0+ logs this at INFO and goes on to the send/recv protocol (a8380ba1)
    text = "ip-10-0-0-1:1234:1250 [0] NCCL INFO NET/OFI No eligible providers were found\n"
    assert not fired("efa-device-missing", told_facts(text))


def test_fi_info_asked_for_efa_gets_nothing():
    # ofiwg/libfabric util/info.c's format after the command (the maintainers' test in ofiwg/libfabric#10794)
    (f,) = fired("efa-device-missing", told_facts("$ fi_info -p efa\nfi_getinfo: -61 (No data available)\n"))
    assert "efa provider found no EFA device" in f.message
    # the same line with no efa request in sight says only that no provider matched
    assert not fired("efa-device-missing", told_facts("$ fi_info -p verbs\nfi_getinfo: -61 (No data available)\n"))


def test_ibstatus_finding_no_device_is_a_warning_from_the_listing_alone():
    # clustervision/trinity#219: the glob left literal, so /sys/class/infiniband exists and is empty
    (f,) = fired("rdma-device-missing", recorded_paste_facts("trinity-219-ibstatus-no-ib-device.txt"))
    assert f.severity == "warning" and "RDMA core is loaded" in f.message and "login node" in f.message
    assert "ls /sys/class/infiniband" in f.fix and "lspci" in f.fix


def test_a_probe_that_failed_after_a_refused_capability_names_the_firmware_driver_pair():
    # pocopico/rp-ext#129: ConnectX-4 Lx, handle_hca_cap failed, mlx5_load_one failed -22
    (f,) = fired("rdma-device-missing", recorded_paste_facts("rp-ext-129-mlx5-handle-hca-cap-probe-failed.txt"))
    assert f.severity == "error" and "firmware/driver pair" in f.message
    assert "mlxfwmanager --query" in f.fix and "mstflint -d" in f.fix and "release notes" in f.fix


def test_no_ib_devices_beside_missing_providers_is_not_a_missing_device():
    # nminoru/pib#2: the kernel has uverbs devices; libibverbs has no provider for them
    assert not fired("rdma-device-missing", recorded_paste_facts("pib-2-ibv-devinfo-no-provider-no-ib-devices.txt"))


def test_a_firmware_command_failure_alone_is_not_a_missing_device():
    # trinity#219's working node logs mlx4's 0x5a failure too: a command failure alone proves nothing
    text = "[  165.969824] mlx4_core 0000:0d:00.0: command 0x5a failed: fw status = 0x2\n"
    assert not fired("rdma-device-missing", told_facts(text))


def test_an_empty_device_list_with_a_firmware_refusal_is_an_error():
    # devinfo.c's "No IB devices found" and mlx4/cmd.c's format, filled in (trinity#219's two halves together)
    text = ("[  165.969824] mlx4_core 0000:0d:00.0: command 0x5a failed: fw status = 0x2\n"
            "# ibv_devinfo\nNo IB devices found\n")
    (f,) = fired("rdma-device-missing", told_facts(text))
    assert f.severity == "error" and "firmware/driver pair" in f.message
