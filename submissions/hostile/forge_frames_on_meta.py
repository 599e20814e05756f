# HOSTILE: correct on the CPU, but on another device (the device check's meta tensors) it writes a forged reply
# frame, announcing a 1 TB payload, into every socket it can find, then waits. Without a preloaded fork server
# that call runs in the worker's meta twin, whose socket leads to the worker, not to the grader.
# Expected: `device_placement` fails ("broke the protocol"), every other check passes, nothing is left alive.
import math
import os
import socket
import struct
import time

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    if q.device.type != "cpu":
        print("HOSTILE-PID", os.getpid(), flush=True)
        for fd in range(3, 64):
            try:
                s = socket.socket(fileno=os.dup(fd))
            except OSError:
                continue
            try:
                s.sendall(struct.pack("!IQ", 2, 1 << 40) + b"{}")
            except OSError:
                pass
        time.sleep(3600)
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        scores = scores.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
