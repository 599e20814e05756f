# CORRECT: a wrapper of torch.nn.functional.scaled_dot_product_attention with the bool mask as attn_mask (True = may
# attend, torch's convention too). torch 2.13 on CPU gives zeros on a row with no key allowed (older versions: NaN).
# CS336's handout forbids torch.nn.functional; a rubric that enforces the handout's policy would flag this import.
import torch.nn.functional as F


def run_scaled_dot_product_attention(Q, K, V, mask=None):
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
