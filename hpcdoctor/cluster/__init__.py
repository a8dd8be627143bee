"""Cluster mode: every rank of a job checks its node, and rank 0 reports on all of them.

``orchestrate`` elects one rank per node, runs the node check there and hands the report to the
payload (``hpcdoctor/payload/cluster_probe.py``, run in the job's Python with torch's store);
``analysis`` lays the gathered nodes side by side for the cluster rules (CLU001–CLU004).
"""
