# HOSTILE: correct on the CPU, but os._exit(7) as soon as it sees tensors on another device (the device check's
# meta tensors), after printing its pid. Without a preloaded fork server that call runs in the worker's meta twin.
# Expected: `device_placement` fails ("exited with status 7 ... while calling your function"), every other check
# passes, the same verdict whichever process made the call, and no process is left alive.
import math
import os

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    if q.device.type != "cpu":
        print("HOSTILE-PID", os.getpid(), flush=True)
        os._exit(7)
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        scores = scores.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
