# BUG: correct_complex's layer, right, returning beside its output weights of shape [..., T, heads, T] (transposed
# with the heads like the output before the merge) instead of [..., heads, T, T]: weights_shape fails, the weights'
# other checks are skipped.
import math

import torch


def run_multihead_self_attention_with_rope(d_model, num_heads, max_seq_len, theta, q_proj_weight, k_proj_weight,
                                           v_proj_weight, o_proj_weight, in_features, token_positions=None):
    *lead, T, _ = in_features.shape
    d_head = d_model // num_heads
    real = torch.float64 if in_features.dtype == torch.float64 else torch.float32
    freqs = 1.0 / theta ** (torch.arange(0, d_head, 2, dtype=real, device=in_features.device) / d_head)
    table = torch.polar(torch.ones(max_seq_len, d_head // 2, dtype=real, device=in_features.device),
                        torch.outer(torch.arange(max_seq_len, dtype=real, device=in_features.device), freqs))
    if token_positions is None:
        token_positions = torch.arange(T, device=in_features.device)
    rot = table[token_positions].unsqueeze(-3)  # [..., 1, T, d_head/2]

    def split(w):
        return (in_features @ w.T).reshape(*lead, T, num_heads, d_head).transpose(-3, -2)

    def rotate(x):
        xc = torch.view_as_complex(x.to(real).reshape(*x.shape[:-1], -1, 2).contiguous())
        return torch.view_as_real(xc * rot).flatten(-2).to(x.dtype)

    q, k, v = split(q_proj_weight), split(k_proj_weight), split(v_proj_weight)
    q, k = rotate(q), rotate(k)
    causal = torch.ones(T, T, dtype=torch.bool, device=in_features.device).tril()
    scores = (q @ k.transpose(-2, -1) / math.sqrt(d_head)).masked_fill(~causal, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v
    return out.transpose(-3, -2).reshape(*lead, T, d_model) @ o_proj_weight.T, weights.transpose(-3, -2)
