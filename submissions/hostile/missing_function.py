# HOSTILE (broken source): the function has another name. Expected: `loads` fails and names what it looked for.
import torch


def my_attention(q, k, v, causal: bool = True):
    return q, torch.ones(q.size(-2), q.size(-2))
