# HOSTILE (broken source): imports a package that does not exist. Expected: `loads` fails with
# "No module named 'attention_helpers_that_do_not_exist'".
import attention_helpers_that_do_not_exist  # noqa: F401

import torch


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    return q, torch.ones(q.size(-2), q.size(-2))
