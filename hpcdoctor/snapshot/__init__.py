"""Snapshots: recording a node into a bundle and opening one (``bundle``), the secrets kept out of
it (``redact``), and comparing two nodes' reports (``diff``). What a SysRoot keeps of the job's
environment is ``hpcdoctor.envfilter``, below this package: the live SysRoot needs it too."""
