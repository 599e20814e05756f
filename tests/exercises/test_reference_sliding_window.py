"""The sliding-window reference agrees with torch's scaled_dot_product_attention under an explicit band mask."""

import pytest
import torch
import torch.nn.functional as F

from grader.reference.sliding_window import sliding_window_attention


def band(t: int, window: int) -> torch.Tensor:
    i, j = torch.arange(t)[:, None], torch.arange(t)[None, :]
    return (j <= i) & (j > i - window)


def sdpa_weights(q, k, mask):
    """SDPA returns no weights; with v = I its output is the weights."""
    eye = torch.eye(k.shape[-2], dtype=q.dtype).expand(*k.shape[:-1], k.shape[-2])
    return F.scaled_dot_product_attention(q, k, eye, attn_mask=mask)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("window", [1, 2, 3, 7, 50])
@pytest.mark.parametrize("shape", [(1, 1, 4), (2, 5, 4), (3, 2, 7, 8), (2, 2, 2, 9, 3)])
def test_matches_torch_sdpa(shape, window, dtype):
    g = torch.Generator().manual_seed(sum(shape) * 7 + window)
    q, k, v = (torch.randn(shape, generator=g, dtype=dtype) * 2 for _ in range(3))
    t = shape[-2]
    out, w = sliding_window_attention(q, k, v, window)
    assert out.shape == shape and w.shape == shape[:-1] + (t,) and out.dtype == w.dtype == dtype
    allowed = band(t, window)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=allowed), **tol)
    torch.testing.assert_close(w, sdpa_weights(q, k, allowed), **tol)
    assert (w[..., ~allowed] == 0).all()  # outside the band: exactly 0


def test_window_of_T_or_more_is_causal_and_window_one_returns_v():
    q, k, v = (torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(i), dtype=torch.float64) for i in range(3))
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    for window in (6, 7, 100):
        torch.testing.assert_close(sliding_window_attention(q, k, v, window)[0], causal, rtol=1e-10, atol=1e-12)
    out, w = sliding_window_attention(q, k, v, 1)
    assert torch.equal(w, torch.eye(6, dtype=w.dtype).expand_as(w)) and torch.equal(out, v)


def test_window_below_one_is_refused():
    q = torch.randn(1, 3, 2)
    with pytest.raises(ValueError, match="at least 1"):
        sliding_window_attention(q, q, q, 0)
