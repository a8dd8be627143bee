"""Pure parsers: text in, plain data out. Each is tested on recorded real output."""

# More GPUs than any node holds (the largest NVLink domains put 72 in a rack, not in one OS):
# a report listing more is refused before one dict per GPU is built. 2 MB of "<gpu/>" made 350,000
# of them, 1.5 GB (issue 27). A pasted report of 1,200 GPUs is still read whole.
MAX_GPUS = 4096
