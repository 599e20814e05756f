"""The prefix-LM reference agrees with torch's scaled_dot_product_attention under an explicit prefix mask."""

import pytest
import torch
import torch.nn.functional as F

from grader.reference.prefix_lm import prefix_lm_attention


def allowed(t: int, prefix: list[int], heads: bool) -> torch.Tensor:
    """[B, (1,) T, T]: query i sees key j when j < prefix[b] or j <= i, written out entry by entry."""
    m = torch.tensor([[[j < p or j <= i for j in range(t)] for i in range(t)] for p in prefix])
    return m[:, None] if heads else m


def sdpa_weights(q, k, mask):
    """SDPA returns no weights; with v = I its output is the weights."""
    eye = torch.eye(k.shape[-2], dtype=q.dtype).expand(*k.shape[:-1], k.shape[-2])
    return F.scaled_dot_product_attention(q, k, eye, attn_mask=mask)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("per_row", [False, True])
@pytest.mark.parametrize("shape", [(1, 4, 4), (3, 5, 4), (3, 2, 7, 8), (4, 3, 2, 16)])
def test_matches_torch_sdpa(shape, per_row, dtype):
    g = torch.Generator().manual_seed(sum(shape) * 5 + per_row)
    q, k, v = (torch.randn(shape, generator=g, dtype=dtype) * 2 for _ in range(3))
    b, t = shape[0], shape[-2]
    lengths = torch.randint(0, t + 1, (b,), generator=g)
    lengths[:3] = torch.tensor([t // 2, 0, t])[:b]  # a partial prefix, none, and the whole sequence
    prefix = lengths if per_row else int(lengths[0])
    out, w = prefix_lm_attention(q, k, v, prefix)
    assert out.shape == shape and w.shape == shape[:-1] + (t,) and out.dtype == w.dtype == dtype
    mask = allowed(t, lengths.tolist() if per_row else [prefix] * b, heads=len(shape) == 4)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), **tol)
    torch.testing.assert_close(w, sdpa_weights(q, k, mask), **tol)
    assert (w[~mask.expand_as(w)] == 0).all()  # after the query and after the prefix: exactly 0


def test_no_prefix_is_causal_and_a_whole_prefix_is_bidirectional():
    q, k, v = (torch.randn(2, 2, 5, 4, generator=torch.Generator().manual_seed(i), dtype=torch.float64) for i in range(3))
    tol = dict(rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(prefix_lm_attention(q, k, v, 0)[0], F.scaled_dot_product_attention(q, k, v, is_causal=True), **tol)
    torch.testing.assert_close(prefix_lm_attention(q, k, v, 5)[0], F.scaled_dot_product_attention(q, k, v), **tol)
    torch.testing.assert_close(prefix_lm_attention(q, k, v, torch.tensor([0, 5]))[0][1], F.scaled_dot_product_attention(q, k, v)[1], **tol)
