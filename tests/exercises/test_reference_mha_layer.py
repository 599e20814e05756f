"""The mha_layer reference agrees with torch's nn.MultiheadAttention (no bias, a causal mask) given the same
weights, for any batch dims."""

import pytest
import torch

from grader.reference.mha_layer import multihead_self_attention


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("lead, t, d, heads", [((1,), 1, 4, 2), ((2,), 5, 6, 3), ((3,), 7, 8, 1), ((2, 3), 4, 8, 4)])
def test_matches_torch_multihead_attention(lead, t, d, heads, dtype):
    g = torch.Generator().manual_seed(t * 31 + d + heads)
    x = torch.randn(*lead, t, d, generator=g, dtype=dtype)
    wq, wk, wv, wo = (torch.randn(d, d, generator=g, dtype=dtype) / d**0.5 for _ in range(4))
    (out,) = multihead_self_attention(d, heads, wq, wk, wv, wo, x)
    mha = torch.nn.MultiheadAttention(d, heads, bias=False, batch_first=True, dtype=dtype)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([wq, wk, wv]))
        mha.out_proj.weight.copy_(wo)
    future = torch.ones(t, t, dtype=torch.bool).triu(1)
    flat = x.reshape(-1, t, d)
    want, _ = mha(flat, flat, flat, attn_mask=future, need_weights=False)
    assert out.shape == x.shape and out.dtype == dtype
    torch.testing.assert_close(out, want.reshape(x.shape).detach())
