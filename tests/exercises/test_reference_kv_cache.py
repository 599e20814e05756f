"""The KV-cache reference agrees with torch's scaled_dot_product_attention under the explicit bottom-right causal
mask of the new tokens, returns the past followed by the new keys, and decoding equals the whole sequence."""

import pytest
import torch
import torch.nn.functional as F

from grader.reference.kv_cache import cached_attention


def tolerances(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("b, h, p, t_new, d", [(1, 1, 0, 4, 4), (2, 3, 2, 3, 4), (2, 2, 5, 1, 8), (1, 4, 3, 4, 3), (3, 1, 1, 6, 16)])
def test_matches_torch_sdpa(b, h, p, t_new, d, dtype):
    g = torch.Generator().manual_seed(b * 1000 + h * 100 + p * 10 + t_new)
    q, k, v = (torch.randn(b, h, p + t_new, d, generator=g, dtype=dtype) * 2 for _ in range(3))
    past = (k[..., :p, :].clone(), v[..., :p, :].clone())
    out, w, (k_all, v_all) = cached_attention(q[..., p:, :], k[..., p:, :], v[..., p:, :], past if p else None)
    assert out.shape == (b, h, t_new, d) and w.shape == (b, h, t_new, p + t_new) and out.dtype == w.dtype == dtype

    allowed = torch.ones(t_new, p + t_new, dtype=torch.bool).tril(p)  # new query i at position p + i
    tol = tolerances(dtype)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q[..., p:, :], k, v, attn_mask=allowed), **tol)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True)[..., p:, :], **tol)
    torch.testing.assert_close(w @ v, out, **tol)
    torch.testing.assert_close(w.sum(-1), torch.ones(b, h, t_new, dtype=dtype), **tol)
    assert (w[..., ~allowed] == 0).all()
    assert torch.equal(k_all, k) and torch.equal(v_all, v)
    if p:
        assert torch.equal(past[0], k[..., :p, :]) and torch.equal(past[1], v[..., :p, :])  # the caller's cache untouched


@pytest.mark.parametrize("prefill", [1, 3])
def test_decoding_token_by_token_equals_the_whole_sequence(prefill):
    g = torch.Generator().manual_seed(prefill)
    q, k, v = (torch.randn(2, 2, 6, 4, generator=g, dtype=torch.float64) for _ in range(3))
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out, _, cache = cached_attention(q[..., :prefill, :], k[..., :prefill, :], v[..., :prefill, :])
    steps = [out]
    for i in range(prefill, 6):
        out, _, cache = cached_attention(q[..., i : i + 1, :], k[..., i : i + 1, :], v[..., i : i + 1, :], cache)
        steps.append(out)
    torch.testing.assert_close(torch.cat(steps, dim=-2), full, rtol=1e-10, atol=1e-12)
