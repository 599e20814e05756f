# HOSTILE: correct on the CPU, but spins forever, ignoring SIGTERM, when it sees tensors on another device (the
# device check's meta tensors), after printing its pid. Without a preloaded fork server that call runs in the
# worker's meta twin.
# Expected: `device_placement` fails ("timed out after 1 s"), every other check passes, and no process is left.
import math
import os
import signal

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    if q.device.type != "cpu":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("HOSTILE-PID", os.getpid(), flush=True)
        while True:
            pass
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        scores = scores.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
