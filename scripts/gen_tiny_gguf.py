#!/usr/bin/python3
"""Writes a tiny random-weight llama-architecture GGUF model for tests.

No trained weights can be had here, so the tests serve a model whose weights are drawn
from a seeded normal distribution (the same seed gives the same file, byte for byte)
and whose vocabulary is a real one: the tokenizer.* metadata of a vocab-only GGUF that
llama.cpp ships in its source (models/ggml-vocab-*.gguf). The engine, its tokenizer,
sampling, streaming and quantization are real; the text it writes is meaningless.

Usage: gen_tiny_gguf.py --gguf-py DIR --vocab VOCAB.gguf --out MODEL.gguf
                        [--seed N] [--embd 64] [--layers 2] [--heads 4] [--ff 128]
Needs numpy (Debian: python3-numpy) and llama.cpp's gguf-py (passed with --gguf-py).
"""
import argparse
import sys


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf-py", required=True, help="llama.cpp's gguf-py directory")
    ap.add_argument("--vocab", required=True, help="vocab-only GGUF to take the tokenizer from")
    ap.add_argument("--out", required=True, help="model file to write")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--embd", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ff", type=int, default=128)
    ap.add_argument("--ctx", type=int, default=2048)
    a = ap.parse_args()
    # Q4_0/Q8_0 quantize rows in blocks of 32 values.
    for name in ("embd", "ff"):
        if getattr(a, name) <= 0 or getattr(a, name) % 32:
            ap.error(f"--{name}: expected a positive multiple of 32, got {getattr(a, name)}")
    if a.heads <= 0 or a.embd % a.heads:
        ap.error(f"--heads: expected a divisor of --embd {a.embd}, got {a.heads}")
    if a.layers <= 0:
        ap.error(f"--layers: expected a positive count, got {a.layers}")
    return a


def die(msg):
    print(f"gen_tiny_gguf.py: {msg}", file=sys.stderr)
    sys.exit(2)


def copy_tokenizer(vocab, reader, writer, gguf):
    """Copies every tokenizer.* key of the vocab file; returns the vocabulary size."""
    n_vocab = 0
    for name, field in reader.fields.items():
        if not name.startswith("tokenizer."):
            continue
        vtype = gguf.GGUFValueType(field.types[0])
        sub = gguf.GGUFValueType(field.types[1]) if vtype == gguf.GGUFValueType.ARRAY else None
        value = field.contents()
        writer.add_key_value(name, value, vtype, sub)
        if name == "tokenizer.ggml.tokens":
            n_vocab = len(value)
    if n_vocab == 0:
        die(f"{vocab}: tokenizer.ggml.tokens: expected a non-empty token list")
    return n_vocab


def main():
    a = parse_args()
    sys.path.insert(0, a.gguf_py)
    try:
        import numpy as np
        import gguf
    except ImportError as e:
        die(f"{e} (numpy: Debian's python3-numpy; gguf: --gguf-py {a.gguf_py})")

    try:
        reader = gguf.GGUFReader(a.vocab)
    except (OSError, ValueError) as e:
        die(f"{a.vocab}: expected a GGUF file: {e}")
    writer = gguf.GGUFWriter(a.out, "llama")
    writer.add_name(f"calibench-tiny-random-seed{a.seed}")
    n_vocab = copy_tokenizer(a.vocab, reader, writer, gguf)
    head_dim = a.embd // a.heads
    writer.add_context_length(a.ctx)
    writer.add_embedding_length(a.embd)
    writer.add_block_count(a.layers)
    writer.add_feed_forward_length(a.ff)
    writer.add_head_count(a.heads)
    writer.add_head_count_kv(a.heads)
    writer.add_rope_dimension_count(head_dim)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    rng = np.random.default_rng(a.seed)

    def mat(rows, cols, scale):
        # numpy shape is (rows, cols) = ggml's ne reversed; f16 like a converted checkpoint.
        return (rng.standard_normal((rows, cols), dtype=np.float32) * scale).astype(np.float16)

    def norm():
        return np.ones(a.embd, dtype=np.float32)

    # Scales near 1/sqrt(fan_in) keep activations O(1) through the layers; the output
    # projection is larger so the next-token distribution is peaked enough that greedy
    # decoding and top-k log-probabilities are not all ties.
    s_in = 1.0 / np.sqrt(a.embd)
    writer.add_tensor("token_embd.weight", mat(n_vocab, a.embd, 1.0))
    for i in range(a.layers):
        p = f"blk.{i}."
        writer.add_tensor(p + "attn_norm.weight", norm())
        writer.add_tensor(p + "attn_q.weight", mat(a.embd, a.embd, s_in))
        writer.add_tensor(p + "attn_k.weight", mat(a.embd, a.embd, s_in))
        writer.add_tensor(p + "attn_v.weight", mat(a.embd, a.embd, s_in))
        writer.add_tensor(p + "attn_output.weight", mat(a.embd, a.embd, s_in))
        writer.add_tensor(p + "ffn_norm.weight", norm())
        writer.add_tensor(p + "ffn_gate.weight", mat(a.ff, a.embd, s_in))
        writer.add_tensor(p + "ffn_up.weight", mat(a.ff, a.embd, s_in))
        writer.add_tensor(p + "ffn_down.weight", mat(a.embd, a.ff, 1.0 / np.sqrt(a.ff)))
    writer.add_tensor("output_norm.weight", norm())
    writer.add_tensor("output.weight", mat(n_vocab, a.embd, 4.0 * s_in))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
