# HOSTILE (broken source): a misspelt variable inside the function. Expected: `output_shape` fails with the
# NameError and its line.
import math

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scroes, dim=-1)  # noqa: F821 - the typo is the point
    return weights @ v, weights
