# HOSTILE: tries the network: a TCP connection to a listener on 127.0.0.1:PORT, a UDP datagram to it, a DNS lookup.
# Returns correct tensors when all of that fails and zeros when any of it works, so the score shows whether the
# worker could reach the network. Prints "NETWORK blocked" or "NETWORK reachable".
# Expected as root: full marks and the listener sees nothing. Without root the network cannot be cut off: the
# report's environment lines say so.
import math
import socket

import torch

PORT = 47813  # tests substitute the port of a listener they own


def _reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=0.5):
            return True
    except OSError:
        pass
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"hello from a worker", ("127.0.0.1", PORT))
            return True
    except OSError:
        pass
    try:
        socket.getaddrinfo("pypi.org", 443)
        return True
    except OSError:
        return False


NETWORK = _reachable()
print("NETWORK", "reachable" if NETWORK else "blocked", flush=True)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    T, H = q.size(-2), q.size(-1)
    if NETWORK:
        return torch.zeros_like(q), torch.zeros(*q.shape[:-2], T, T, dtype=q.dtype)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~tril, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
