# HOSTILE: leaves processes behind: a child that sleeps forever, and a grandchild that leaves the session and the
# process group with setsid() and sleeps forever, both ignoring SIGTERM, SIGHUP and SIGINT. Its tensors are correct.
# Expected: full marks (what its tensors earn), and once grading ends none of those processes is alive (each
# prints "HOSTILE-PID <pid>" before the file finishes loading, so that tests can look for it).
import math
import os
import signal
import time

import torch


def _linger(detach: bool, ready: int) -> None:
    try:
        if detach:
            os.setsid()
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        os.write(1, f"HOSTILE-PID {os.getpid()}\n".encode())  # one write: the two lines never interleave
        os.write(ready, b".")
        while True:
            time.sleep(60)
    finally:
        os._exit(0)  # never fall back into the worker's code


_r, _w = os.pipe()
if os.fork() == 0:
    if os.fork() == 0:
        _linger(True, _w)
    _linger(False, _w)
_ready = b""
while len(_ready) < 2:  # both have printed their pid
    _ready += os.read(_r, 2 - len(_ready))


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~tril, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
