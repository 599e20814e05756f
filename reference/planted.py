"""The attention core with known bugs planted, for diagnosis: every exercise's `plant` builds its mask (with its
own mask bugs) and any transform of its inputs, then calls `attend`. Bug-free, `attend` is the reference.

Imported lazily by grader.exercises, in the grader process only (grading.diagnosis runs it); a student build
leaves it out with the rest of grader/reference/ and answers the probes from its book (checks.known_answers).
"""

import math

SCALES = ("no scaling", "scaled by 1/H", "scaled by 1/sqrt(T)")


def attend(q, k, v, allowed, bugs=frozenset(), *, scale=None):
    """softmax(q kᵀ · scale, masked where `allowed` is False) @ v, with `bugs` planted: (out, weights).

    allowed: bool, broadcastable to the scores [..., T_q, T_k]; "no mask" in `bugs` leaves it out of the softmax
    (the causal mean still averages over it). scale: the exercise's own wrong scale (a bug of its own); without
    one, 1/sqrt(head size) unless a scale bug of SCALES is planted."""
    t, h = q.shape[-2:]
    if "causal mean" in bugs:  # chapter 4: uniform over the allowed keys, no scores at all
        w = allowed.to(q.dtype).expand(*q.shape[:-1], k.shape[-2])
        w = w / w.sum(-1, keepdim=True)
        return w @ v, w
    wrong = {"no scaling": 1.0, "scaled by 1/H": 1 / h, "scaled by 1/sqrt(T)": t**-0.5}
    s = q @ k.transpose(-2, -1) * next((wrong[b] for b in SCALES if b in bugs), h**-0.5 if scale is None else scale)
    dims = (-2,) if "softmax over queries" in bugs else (0, -1) if "batch mixed" in bugs else (-1,)

    def softmax(x):
        top = 0.0 if "exp without max" in bugs else x.amax() if "global max" in bugs else x.amax(dims, keepdim=True)
        e = (x - top).exp()
        return e / e.sum(dims, keepdim=True)

    unmasked = s
    masked = "no mask" not in bugs
    after = masked and "mask after softmax" in bugs
    if masked and not after:
        s = s.masked_fill(~allowed, 0.0 if "zero fill" in bugs else -math.inf)
    w = softmax(s)
    if after:
        w = w * allowed
    returned = s if "weights before softmax" in bugs else softmax(unmasked) if "weights before mask" in bugs else w
    return w @ v, returned
