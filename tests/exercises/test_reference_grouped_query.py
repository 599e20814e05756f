"""The grouped-query reference agrees with torch's scaled_dot_product_attention under an explicit causal mask, on k
and v repeat-interleaved and with enable_gqa, and query head h reads key/value head h // (Hq // Hkv)."""

import pytest
import torch
import torch.nn.functional as F

from grader.reference.grouped_query import grouped_query_attention


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("b, hq, hkv, t, d", [(1, 1, 1, 4, 4), (2, 4, 2, 5, 3), (2, 6, 3, 7, 8), (3, 4, 1, 2, 16), (1, 8, 8, 9, 5)])
def test_matches_torch_sdpa(b, hq, hkv, t, d, dtype):
    g = torch.Generator().manual_seed(b * 100 + hq * 10 + hkv + t)
    q = torch.randn(b, hq, t, d, generator=g, dtype=dtype) * 2
    k, v = (torch.randn(b, hkv, t, d, generator=g, dtype=dtype) * 2 for _ in range(2))
    out, w = grouped_query_attention(q, k, v)
    assert out.shape == (b, hq, t, d) and w.shape == (b, hq, t, t) and out.dtype == w.dtype == dtype

    allowed = torch.ones(t, t, dtype=torch.bool).tril()
    group = hq // hkv
    kr, vr = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, kr, vr, attn_mask=allowed), **tol)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, enable_gqa=True), **tol)
    torch.testing.assert_close(w @ vr, out, **tol)  # the weights are the ones that make out
    torch.testing.assert_close(w.sum(-1), torch.ones(b, hq, t, dtype=dtype), **tol)
    assert (w[..., ~allowed] == 0).all()  # future keys: exactly 0


def test_query_head_reads_its_groups_key_value_head():
    g = torch.Generator().manual_seed(3)
    q = torch.randn(1, 6, 4, 3, generator=g)
    k, v = (torch.randn(1, 2, 4, 3, generator=g) for _ in range(2))
    out, _ = grouped_query_attention(q, k, v)
    k2 = k.clone()
    k2[:, 1] += 1  # key/value head 1 serves query heads 3, 4, 5
    out2, _ = grouped_query_attention(q, k2, v)
    changed = [bool((out2[:, h] != out[:, h]).any()) for h in range(6)]
    assert changed == [False, False, False, True, True, True]
