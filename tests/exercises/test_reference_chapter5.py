"""The chapter-5 reference agrees with torch's own scaled_dot_product_attention."""

import pytest
import torch
import torch.nn.functional as F

from grader.reference.chapter5 import scaled_dot_product_attention


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 5, 4), (3, 7, 8), (2, 3, 9, 16), (1, 2, 2, 33, 5), (4, 2)])
def test_matches_torch_sdpa(shape, causal, dtype):
    g = torch.Generator().manual_seed(hash((shape, causal)) % 1000)
    q, k, v = (torch.randn(shape, generator=g, dtype=dtype) * 2 for _ in range(3))
    out, weights = scaled_dot_product_attention(q, k, v, causal=causal)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=causal), **tol)
    t = shape[-2]
    assert weights.shape == shape[:-2] + (t, t)
    torch.testing.assert_close(weights.sum(-1), torch.ones(shape[:-1], dtype=dtype), **tol)
    if causal:
        assert (weights[..., torch.ones(t, t, dtype=torch.bool).triu(1)] == 0).all()
