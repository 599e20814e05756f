"""The masked_mha_module reference agrees with torch's nn.MultiheadAttention (a causal attn_mask, the padding as
key_padding_mask) given the same weights, on every real token; a query that sees no key gets zero weights and the
output bias, where torch gives NaN; the class is the function."""

import pytest
import torch

from grader.reference.masked_mha_module import MaskedSelfAttention, masked_multihead_attention


def drawn(seed: int, b: int, t: int, d: int, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(b, t, d, generator=g, dtype=dtype)
    ws = [torch.randn(d, d, generator=g, dtype=dtype) / d**0.5 for _ in range(4)]
    bs = [torch.randn(d, generator=g, dtype=dtype) * 0.5 for _ in range(4)]
    return x, ws, bs


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("t, d, heads", [(1, 4, 2), (5, 6, 3), (7, 8, 1), (4, 8, 4)])
def test_matches_torch_multihead_attention_on_real_tokens(t, d, heads, dtype):
    x, (wq, wk, wv, wo), (bq, bk, bv, bo) = drawn(t * 31 + d + heads, 3, t, d, dtype)
    mask = torch.ones(3, t, dtype=torch.int64)
    mask[1, : t // 2] = 0  # left padding
    mask[2, (t + 1) // 2 :] = 0  # right padding
    out, w = masked_multihead_attention(x, wq, wk, wv, wo, bq, bk, bv, bo, heads=heads, padding_mask=mask)
    mha = torch.nn.MultiheadAttention(d, heads, batch_first=True, dtype=dtype)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([wq, wk, wv]))
        mha.in_proj_bias.copy_(torch.cat([bq, bk, bv]))
        mha.out_proj.weight.copy_(wo)
        mha.out_proj.bias.copy_(bo)
    future = torch.ones(t, t, dtype=torch.bool).triu(1)
    want, want_w = mha(x, x, x, attn_mask=future, key_padding_mask=mask == 0, average_attn_weights=False)
    real = mask.bool()
    assert out.shape == x.shape and w.shape == (3, heads, t, t) and out.dtype == w.dtype == dtype
    torch.testing.assert_close(out[real], want.detach()[real])
    torch.testing.assert_close(w.transpose(1, 2)[real], want_w.detach().transpose(1, 2)[real])
    blind = ~(torch.ones(t, t, dtype=torch.bool).tril() & real[:, None, :]).any(-1)  # [B, T]: sees no key
    assert torch.isfinite(out).all() and (w.transpose(1, 2)[blind] == 0).all()
    torch.testing.assert_close(out[blind], bo.expand_as(out[blind]))


def test_the_class_is_the_function():
    x, ws, bs = drawn(3, 2, 5, 8)
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 0, 0]])
    layer = MaskedSelfAttention(8, 2).eval()
    with torch.no_grad():
        for p, w, b in zip((layer.q_proj, layer.k_proj, layer.v_proj, layer.o_proj), ws, bs):
            p.weight.copy_(w)
            p.bias.copy_(b)
        got = layer(x, padding_mask=mask)
    out, w = masked_multihead_attention(x, *ws, *bs, heads=2, padding_mask=mask)
    torch.testing.assert_close(got.hidden_states, out)
    torch.testing.assert_close(got.attention_weights, w)
