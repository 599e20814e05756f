# HOSTILE: ignores SIGTERM, SIGINT, SIGALRM and SIGHUP, then never returns: only a deadline enforced from outside
# with SIGKILL stops it. Expected: `output_shape` fails ("timed out after N s").
import signal

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    signal.alarm(1)
    while True:
        pass
