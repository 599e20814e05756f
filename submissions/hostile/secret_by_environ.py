# HOSTILE: looks for the course secret (ATTENTION_GRADER_SECRET) in its own process's memory, where an environment
# inherited at exec keeps it: right after the program's arguments on the stack, which libc's
# program_invocation_name points into (no /proc needed). If it finds it, it prints it.
# Expected: the worker's process never had it: "SECRET NOT FOUND", and the grade of a correct file.
import ctypes
import os

import torch


def _look() -> bytes:
    """Page by page from argv[0] to the stack's end, in a child: reading past the end kills the reader."""
    libc = ctypes.CDLL(None)
    start = ctypes.c_void_p.in_dll(libc, "program_invocation_name").value
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        page = start - start % 4096
        at = start
        while True:
            chunk = ctypes.string_at(at, page + 4096 - at)
            if b"ATTENTION_GRADER_SECRET=" in chunk:
                os.write(w, chunk.split(b"ATTENTION_GRADER_SECRET=", 1)[1].split(b"\0", 1)[0][:200])
                os._exit(0)
            page += 4096
            at = page
    os.close(w)
    found = os.read(r, 200)
    os.waitpid(pid, 0)
    return found


_FOUND = _look()
print(f"SECRET FOUND: {_FOUND.decode(errors='replace')}" if _FOUND else "SECRET NOT FOUND", flush=True)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5
    if causal:
        T = q.size(-2)
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights
