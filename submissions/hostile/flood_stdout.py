# HOSTILE: prints 300 MB while loading and 1 MB more on every call; its tensors are correct.
# Expected: the captured output is capped (the rubric's output_kb), the grader never blocks, the report stays
# small and notes that the output was cut; full marks for the tensors.
import math

import torch

CHUNK = "x" * (1 << 20)
for _ in range(300):
    print(CHUNK)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    print(CHUNK)
    T, H = q.size(-2), q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(H)
    if causal:
        tril = torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~tril, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
