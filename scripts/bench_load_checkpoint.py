#!/usr/bin/env python3
"""Writes a Mistral-shaped bf16 safetensors checkpoint for scripts/bench_load.

Real Mistral 7B widths (H=4096, Inner=14336, Heads=32, KvHeads=8,
Vocab=32768, head dim 128) with few layers, the tensor names Hugging Face
uses, and a config.json. Weights are random bf16 numbers of magnitude
2^-8 to 2^-6 (norm weights are 1), built from integer bit patterns so that
several gigabytes take seconds, written tensor by tensor.

usage: bench_load_checkpoint.py DIRECTORY [--layers N]
"""
import argparse
import json
import os
import struct

import numpy as np

H, INNER, HEADS, KV_HEADS, VOCAB = 4096, 14336, 32, 8, 32768
HEAD_DIM = H // HEADS


def tensors(layers):
    """(name, shape) in the order they are written."""
    yield "model.embed_tokens.weight", (VOCAB, H)
    for i in range(layers):
        prefix = f"model.layers.{i}."
        yield prefix + "input_layernorm.weight", (H,)
        yield prefix + "self_attn.q_proj.weight", (HEADS * HEAD_DIM, H)
        yield prefix + "self_attn.k_proj.weight", (KV_HEADS * HEAD_DIM, H)
        yield prefix + "self_attn.v_proj.weight", (KV_HEADS * HEAD_DIM, H)
        yield prefix + "self_attn.o_proj.weight", (H, HEADS * HEAD_DIM)
        yield prefix + "post_attention_layernorm.weight", (H,)
        yield prefix + "mlp.gate_proj.weight", (INNER, H)
        yield prefix + "mlp.up_proj.weight", (INNER, H)
        yield prefix + "mlp.down_proj.weight", (H, INNER)
    yield "model.norm.weight", (H,)
    yield "lm_head.weight", (VOCAB, H)


def bf16_bits(name, shape, rng):
    count = int(np.prod(shape))
    if name.endswith("norm.weight"):
        return np.full(count, 0x3F80, dtype=np.uint16)  # 1.0
    # sign | exponent 119..121 (2^-8 .. 2^-6) | 7 random mantissa bits
    bits = rng.integers(0, 1 << 16, size=count, dtype=np.uint16)
    sign = bits & np.uint16(0x8000)
    mantissa = bits & np.uint16(0x007F)
    exponent = (np.uint16(119) + (bits >> np.uint16(7)) % np.uint16(3)) << np.uint16(7)
    return sign | exponent | mantissa


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    os.makedirs(args.directory, exist_ok=True)

    listing = list(tensors(args.layers))
    header = {}
    offset = 0
    for name, shape in listing:
        size = 2 * int(np.prod(shape))
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)  # as the reference writer pads

    rng = np.random.default_rng(0)
    path = os.path.join(args.directory, "model.safetensors")
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text.encode())
        for name, shape in listing:
            out.write(bf16_bits(name, shape, rng).tobytes())

    config = {
        "architectures": ["MistralForCausalLM"],
        "model_type": "mistral",
        "dtype": "bfloat16",
        "hidden_size": H,
        "intermediate_size": INNER,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM,
        "num_hidden_layers": args.layers,
        "vocab_size": VOCAB,
        "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-05,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": False,
    }
    with open(os.path.join(args.directory, "config.json"), "w") as out:
        json.dump(config, out, indent=2)
    print(f"{path}: {len(listing)} tensors, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
