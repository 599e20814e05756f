# HOSTILE: asks for 64 GiB while the file loads. Expected: `loads` fails with "memory limit exceeded".
blob = bytearray(64 << 30)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    return q, q
