"""Another process on the GPU, for the lease scripts: holds 20 GiB and multiplies for SECONDS, so a
snapshot taken meanwhile must say the card is shared (gpu-memory-in-use, the benchmark's
conditions) and not call a healthy card slow. Its synchronize() spins one CPU, which is what the
CPU figures' load sample must see too.

    python3 bench/gpu_hog.py [SECONDS]     # default 90
"""

import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 90.0
hold = torch.empty(20 << 30, dtype=torch.uint8, device="cuda")
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
print("hog: holding 20 GiB and multiplying", flush=True)
end = time.time() + seconds
while time.time() < end:
    for _ in range(50):
        a @ a
    torch.cuda.synchronize()
