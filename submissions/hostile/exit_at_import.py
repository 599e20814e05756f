# HOSTILE: calls sys.exit(0) while the file is being loaded. Expected: `loads` fails ("exited during import").
import sys

import torch

sys.exit(0)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    return torch.zeros_like(q), torch.zeros(*q.shape[:-1], q.size(-2))
