"""The masked-self-attention reference agrees with torch's scaled_dot_product_attention under the combined mask."""

import pytest
import torch
import torch.nn.functional as F

from grader.reference.masked import AttentionOutput, masked_self_attention


def padding(kind: str, b: int, t: int, g: torch.Generator) -> torch.Tensor | None:
    """[B, T] int64, 1 = real token: each sequence padded on one side to a random length (0 and T included)."""
    if kind == "none":
        return None
    lengths = torch.randint(0, t + 1, (b,), generator=g)
    lengths[0] = t // 2  # a partly padded sequence; with b > 2 also an all-pad and an unpadded one
    lengths[1:3] = torch.tensor([0, t])[: b - 1]
    pos = torch.arange(t)
    mask = pos[None, :] < lengths[:, None] if kind == "right" else pos[None, :] >= (t - lengths)[:, None]
    return mask.to(torch.int64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", ["none", "right", "left"])
@pytest.mark.parametrize("shape", [(1, 1, 1, 4), (2, 3, 5, 4), (3, 2, 7, 8), (4, 1, 2, 16), (2, 4, 9, 3)])
def test_matches_torch_sdpa(shape, kind, dtype):
    g = torch.Generator().manual_seed(sum(shape) * 3 + ["none", "right", "left"].index(kind))
    q, k, v = (torch.randn(shape, generator=g, dtype=dtype) * 2 for _ in range(3))
    b, _, t, _ = shape
    mask = padding(kind, b, t, g)
    result = masked_self_attention(q, k, v, padding_mask=mask)
    assert isinstance(result, AttentionOutput)
    out, w = result.hidden_states, result.attention_weights
    assert out.shape == shape and w.shape == shape[:-1] + (t,) and out.dtype == w.dtype == dtype

    allowed = torch.ones(t, t, dtype=torch.bool).tril()[None, None]
    if mask is not None:
        allowed = allowed & mask[:, None, None, :].bool()
    seen = allowed.any(-1).expand(shape[:-1])  # [B, heads, T]: query rows with at least one visible key
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    torch.testing.assert_close(out[seen], sdpa[seen], **tol)
    torch.testing.assert_close(w[seen].sum(-1), torch.ones_like(w[seen].sum(-1)), **tol)
    assert (w[~allowed.expand_as(w)] == 0).all()  # future and padded keys: exactly 0
    assert (out[~seen] == 0).all() and (w[~seen] == 0).all()  # fully masked rows: zeros, not NaN
    assert torch.isfinite(out).all() and torch.isfinite(w).all()
    if kind == "left" and t > 1:
        assert (~seen).any(), "left padding must produce a fully masked row in this test"


def test_bool_and_long_masks_agree():
    q, k, v = (torch.randn(2, 2, 4, 3, generator=torch.Generator().manual_seed(i)) for i in range(3))
    mask = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 0]])
    a = masked_self_attention(q, k, v, mask)
    b = masked_self_attention(q, k, v, mask.bool())
    assert torch.equal(a.hidden_states, b.hidden_states) and torch.equal(a.attention_weights, b.attention_weights)


def test_gradients_are_finite_with_fully_masked_rows():
    q, k, v = (torch.randn(1, 2, 3, 4, dtype=torch.float64, requires_grad=True) for _ in range(3))
    masked_self_attention(q, k, v, torch.tensor([[0, 1, 1]])).hidden_states.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))
