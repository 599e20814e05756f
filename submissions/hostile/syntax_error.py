# HOSTILE (broken source): a missing colon. Expected: `loads` fails naming the syntax error and its line.
import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True)
    return q, torch.ones(q.size(-2), q.size(-2))
