#!/usr/bin/env python3
"""Write a golden case for `linnet validate` from Hugging Face `transformers`.

A case is a directory holding
  config.json        the Hugging Face config of the checkpoint
  model.safetensors  the checkpoint, every float tensor in bf16 (GPT-OSS
                     experts as u8 MXFP4 blocks and scales, as published)
  expected.npz       tokens, logits_f32, logits_bf16, generated,
                     generated_logits_f32 (golden/README.md says what each is)
  meta.json          versions, seed, sizes, how each array was made, and
                     `linnet_generics`: the values to bind in the card

Two sources of checkpoints:
  --tiny FAMILY      a tiny random checkpoint of `mistral`, `qwen3` or
                     `gpt_oss`, with the sizes of the checked-in cases
  --model ID_OR_DIR  your own checkpoint (a Hub id or a local directory);
                     --layers L keeps only its first L layers

This script is for users with torch, transformers, safetensors and numpy
installed. The project's CI never runs it: the checked-in cases under
golden/ are the references, produced with the versions golden/README.md
lists. Other versions may differ from them in the last bits.

Examples:
  python3 scripts/dump_goldens.py --tiny qwen3 --seed 4 --out /tmp/qwen3-b
  python3 scripts/dump_goldens.py --model Qwen/Qwen3-8B --layers 2 --out /tmp/qwen3-real
  linnet validate nest/qwen3-8b /tmp/qwen3-b
"""

import argparse
import glob
import json
import os
import re
import sys

FAMILIES = ("mistral", "qwen3", "gpt_oss")

# The sizes of the checked-in tiny cases (golden/*/config.json).
TINY_CONFIGS = {
    "mistral": dict(
        model_type="mistral", vocab_size=512, hidden_size=64, intermediate_size=176,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        max_position_embeddings=131072, rms_norm_eps=1e-5, sliding_window=None,
        tie_word_embeddings=False, bos_token_id=1, eos_token_id=2,
        rope={"rope_type": "default", "rope_theta": 1000000.0},
    ),
    "qwen3": dict(
        model_type="qwen3", vocab_size=512, hidden_size=64, intermediate_size=160,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
        max_position_embeddings=32768, rms_norm_eps=1e-6, sliding_window=None,
        use_sliding_window=False, tie_word_embeddings=False, attention_bias=False,
        rope={"rope_type": "default", "rope_theta": 1000000.0},
    ),
    "gpt_oss": dict(
        model_type="gpt_oss", vocab_size=512, hidden_size=64, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        num_local_experts=8, num_experts_per_tok=2, sliding_window=8,
        layer_types=["sliding_attention", "full_attention"], max_position_embeddings=131072,
        rms_norm_eps=1e-5, swiglu_limit=7.0, attention_bias=True, tie_word_embeddings=False,
        rope={"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0, "beta_fast": 32.0,
              "beta_slow": 1.0, "original_max_position_embeddings": 4096, "truncate": False},
    ),
}

# Prompt length S and generated tokens N of the checked-in cases.
TINY_LENGTHS = {"mistral": (16, 12), "qwen3": (16, 12), "gpt_oss": (24, 10)}

# GPT-OSS modules transformers' MXFP4 integration leaves unquantized.
GPT_OSS_NOT_CONVERTED = ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tiny", choices=FAMILIES, help="a tiny random checkpoint of this family")
    source.add_argument("--model", help="a Hugging Face model id or a local checkpoint directory")
    parser.add_argument("--out", required=True, help="the case directory to write (created)")
    parser.add_argument("--case", help="the case's name in meta.json (default: the directory's name)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the weights and the tokens (default 1)")
    parser.add_argument("--layers", type=int, help="with --model: keep only the first L layers")
    parser.add_argument("--prompt-length", type=int, help="S, prompt tokens (default: 16, 24 for gpt_oss)")
    parser.add_argument("--new-tokens", type=int, help="N, greedily generated tokens (default: 12, 10 for gpt_oss)")
    parser.add_argument("--max-seq", type=int, default=64, help="MaxSeq to bind in the card (default 64)")
    parser.add_argument("--revision", help="with --model: the Hub revision to download")
    arguments = parser.parse_args()
    if arguments.layers is not None and arguments.tiny:
        parser.error("--layers goes with --model (a tiny checkpoint has 2 layers)")
    return arguments


def family_of(model_type):
    if model_type in ("mistral", "llama"):
        return "mistral"
    if model_type in FAMILIES:
        return model_type
    sys.exit(f"error: model_type {model_type!r} has no Linnet card here (mistral, llama, qwen3, gpt_oss)")


def set_rope(config, rope):
    """transformers 5 spells rope settings `rope_parameters`; 4.x `rope_theta` and `rope_scaling`."""
    if hasattr(config, "rope_parameters"):
        config.rope_parameters = dict(rope)
    else:
        config.rope_theta = rope["rope_theta"]
        scaling = {k: v for k, v in rope.items() if k != "rope_theta"}
        config.rope_scaling = None if scaling.get("rope_type") == "default" else scaling


def tiny_checkpoint(family, seed, out):
    """A random model of the checked-in sizes, written to `out` as a published checkpoint would be."""
    import numpy as np
    import torch
    from safetensors.torch import save_file
    from transformers import AutoConfig, AutoModelForCausalLM

    settings = dict(TINY_CONFIGS[family])
    rope = settings.pop("rope")
    model_type = settings.pop("model_type")
    config = AutoConfig.for_model(model_type, **settings)
    set_rope(config, rope)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32).eval()
    with torch.no_grad():
        # Norm weights away from their initial ones, so a norm applied wrongly shows.
        for module in model.modules():
            if type(module).__name__.endswith("RMSNorm"):
                module.weight.copy_(1 + 0.1 * torch.randn_like(module.weight))
        if family == "gpt_oss":
            for name, parameter in model.named_parameters():
                if name.endswith("self_attn.sinks"):
                    parameter.copy_(torch.randn_like(parameter))
                elif ".self_attn." in name and name.endswith(".bias"):
                    parameter.copy_(0.02 * torch.randn_like(parameter))

    tensors = {}
    for name, value in model.state_dict().items():
        if family == "gpt_oss" and ".mlp.experts." in name:
            continue  # replaced by MXFP4 blocks below
        if value.is_floating_point():
            value = value.to(torch.bfloat16)  # nearest even
        tensors[name] = value.contiguous()
    if family == "gpt_oss":
        tensors.update(random_mxfp4_experts(config, seed))
    os.makedirs(out, exist_ok=True)
    save_file(tensors, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    if family == "gpt_oss":
        config.quantization_config = {"quant_method": "mxfp4", "modules_to_not_convert": GPT_OSS_NOT_CONVERTED}
    config.torch_dtype = torch.bfloat16
    config.save_pretrained(out)
    return {"norm_weights": "every RMSNorm weight = 1 + 0.1 * randn (drawn after the model's own init)"}


def random_mxfp4_experts(config, seed):
    """GPT-OSS experts as the published checkpoint stores them: u8 blocks and scales, bf16 biases."""
    import torch

    generator = torch.Generator().manual_seed(1000 + seed)
    experts, hidden, inner = config.num_local_experts, config.hidden_size, config.intermediate_size
    tensors = {}
    for layer in range(config.num_hidden_layers):
        prefix = f"model.layers.{layer}.mlp.experts."
        # gate_up: [E, 2 * Inner] outputs over H inputs; down: [E, H] outputs over Inner inputs.
        for projection, rows, inputs in (("gate_up_proj", 2 * inner, hidden), ("down_proj", hidden, inner)):
            groups = inputs // 32
            tensors[prefix + projection + "_blocks"] = torch.randint(
                0, 256, (experts, rows, groups, 16), generator=generator, dtype=torch.uint8)
            tensors[prefix + projection + "_scales"] = torch.randint(
                118, 125, (experts, rows, groups), generator=generator, dtype=torch.uint8)
            tensors[prefix + projection + "_bias"] = (
                0.02 * torch.randn((experts, rows), generator=generator)).to(torch.bfloat16)
    return tensors


def truncated_checkpoint(model, revision, layers, out):
    """The first `layers` layers of a published checkpoint, its tensors copied as stored (floats as bf16)."""
    import torch
    from safetensors import safe_open
    from safetensors.torch import save_file

    directory = model
    if not os.path.isdir(directory):
        from huggingface_hub import snapshot_download
        directory = snapshot_download(model, revision=revision, allow_patterns=["*.json", "*.safetensors"])
    with open(os.path.join(directory, "config.json")) as f:
        config = json.load(f)
    total = config["num_hidden_layers"]
    keep = total if layers is None else layers
    if not 1 <= keep <= total:
        sys.exit(f"error: --layers {layers}: the checkpoint has {total} layers")
    layer_of = re.compile(r"\.layers\.(\d+)\.")
    tensors = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.safetensors"))):
        with safe_open(path, framework="pt") as source:
            for name in source.keys():
                found = layer_of.search(name)
                if found and int(found.group(1)) >= keep:
                    continue
                value = source.get_tensor(name)
                if value.is_floating_point():
                    value = value.to(torch.bfloat16)
                tensors[name] = value.contiguous()
    os.makedirs(out, exist_ok=True)
    save_file(tensors, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    config["num_hidden_layers"] = keep
    if isinstance(config.get("layer_types"), list):
        config["layer_types"] = config["layer_types"][:keep]
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return {"source_checkpoint": model, "revision": revision, "checkpoint_layers_before_truncation": total}


def load_model(directory, family, dtype):
    """The checkpoint through transformers, eager attention, as the references were made."""
    import torch
    from transformers import AutoModelForCausalLM

    options = dict(attn_implementation="eager")
    if family == "gpt_oss":
        from transformers import Mxfp4Config
        options["quantization_config"] = Mxfp4Config(dequantize=True)
        options["experts_implementation"] = "eager"
    try:
        model = AutoModelForCausalLM.from_pretrained(directory, dtype=dtype, **options)
    except TypeError:  # transformers 4.x: `torch_dtype`, and no `experts_implementation`
        options.pop("experts_implementation", None)
        model = AutoModelForCausalLM.from_pretrained(directory, torch_dtype=dtype, **options)
    if family == "gpt_oss" and dtype == torch.float32:
        # transformers dequantizes MXFP4 to bf16 whatever dtype is asked
        # for; widening to f32 is exact (every MXFP4 value is a bf16 value).
        with torch.no_grad():
            for name, module in model.named_modules():
                if name.endswith("mlp.experts"):
                    for parameter in module.parameters(recurse=False):
                        parameter.data = parameter.data.to(torch.float32)
    return model.eval()


def linnet_generics(config, family, batch, max_seq):
    """What the card binds: its generic names, in the order the checked-in cases list them."""
    generics = {"Vocab": config["vocab_size"], "H": config["hidden_size"], "Heads": config["num_attention_heads"],
                "KvHeads": config["num_key_value_heads"]}
    if family in ("qwen3", "gpt_oss"):
        generics["HeadDim"] = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    generics["Inner"] = config["intermediate_size"]
    if family == "gpt_oss":
        generics["Experts"] = config["num_local_experts"]
        generics["TopK"] = config["num_experts_per_tok"]
    generics["Layers"] = config["num_hidden_layers"]
    if family == "gpt_oss":
        generics["Window"] = config["sliding_window"]
    generics.update({"Batch": batch, "MaxSeq": max_seq, "T": "f32"})
    return generics


def main():
    arguments = parse_arguments()
    import numpy as np
    import torch
    import transformers

    torch.set_num_threads(1)
    out = arguments.out
    if arguments.tiny:
        family = arguments.tiny
        provenance = tiny_checkpoint(family, arguments.seed, out)
        default_lengths = TINY_LENGTHS[family]
    else:
        provenance = truncated_checkpoint(arguments.model, arguments.revision, arguments.layers, out)
        with open(os.path.join(out, "config.json")) as f:
            family = family_of(json.load(f)["model_type"])
        default_lengths = TINY_LENGTHS[family]
    with open(os.path.join(out, "config.json")) as f:
        config = json.load(f)
    prompt_length = arguments.prompt_length or default_lengths[0]
    new_tokens = arguments.new_tokens or default_lengths[1]
    batch = 1
    if prompt_length + new_tokens > arguments.max_seq:
        sys.exit(f"error: S + N = {prompt_length + new_tokens} does not fit --max-seq {arguments.max_seq}")

    vocab = config["vocab_size"]
    tokens = np.random.default_rng(arguments.seed).integers(0, vocab, size=(batch, prompt_length)).astype(np.int32)
    input_ids = torch.from_numpy(tokens.astype(np.int64))

    with torch.no_grad():
        model = load_model(out, family, torch.float32)
        logits_f32 = model(input_ids=input_ids).logits.to(torch.float32).numpy()
        generation = model.generate(
            input_ids, attention_mask=torch.ones_like(input_ids), max_new_tokens=new_tokens,
            min_new_tokens=new_tokens, do_sample=False, eos_token_id=None, pad_token_id=0,
            output_logits=True, return_dict_in_generate=True)
        generated = generation.sequences[:, prompt_length:].numpy().astype(np.int32)
        generated_logits = torch.stack(generation.logits, dim=1).to(torch.float32).numpy()
        del model
        model = load_model(out, family, torch.bfloat16)
        # bf16 logits widen exactly to f32 (NumPy has no bf16).
        logits_bf16 = model(input_ids=input_ids).logits.to(torch.float32).numpy()
        del model

    arrays = {"tokens": tokens, "logits_f32": logits_f32, "logits_bf16": logits_bf16,
              "generated": generated, "generated_logits_f32": generated_logits}
    np.savez_compressed(os.path.join(out, "expected.npz"), **arrays)

    ordered = np.sort(generated_logits, axis=-1)
    checks = {
        "generated_is_argmax_of_generated_logits": bool((generated_logits.argmax(-1) == generated).all()),
        "gen_step0_vs_forward_last_max_abs_diff": float(np.abs(generated_logits[:, 0] - logits_f32[:, -1]).max()),
        "greedy_top2_margin_min": float((ordered[..., -1] - ordered[..., -2]).min()),
        "bf16_vs_f32_logits_max_abs_diff": float(np.abs(logits_bf16 - logits_f32).max()),
        "bf16_vs_f32_argmax_agreement": float((logits_bf16.argmax(-1) == logits_f32.argmax(-1)).mean()),
    }
    how = ("from_pretrained(dtype={}, attn_implementation='eager')"
           + (", quantization_config=Mxfp4Config(dequantize=True)" if family == "gpt_oss" else ""))
    meta = {
        "case": arguments.case or os.path.basename(os.path.normpath(out)),
        "family": family,
        "description": f"written by scripts/dump_goldens.py ({'tiny random ' + family if arguments.tiny else arguments.model})",
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "numpy_version": np.__version__,
        "seed": arguments.seed,
        "torch_num_threads": 1,
        "B": batch, "S": prompt_length, "N": new_tokens,
        "checkpoint_layers": config["num_hidden_layers"],
        "run_layers": config["num_hidden_layers"],
        "attn_implementation": "eager",
        "dtype_notes": {
            "checkpoint": "all floating tensors stored as bf16"
                          + ("; experts as MXFP4 u8 blocks/scales + bf16 biases" if family == "gpt_oss" else ""),
            "logits_f32": how.format("float32") + ": bf16 checkpoint values cast to f32, whole forward in f32"
                          + (", experts cast to f32 after loading" if family == "gpt_oss" else ""),
            "logits_bf16": how.format("bfloat16") + ", logits upcast exactly to f32 for storage",
            "generated": f"model.generate(max_new_tokens={new_tokens}, min_new_tokens={new_tokens}, do_sample=False, "
                         "eos_token_id=None, output_logits=True, return_dict_in_generate=True) on the f32 model, "
                         "only the new tokens",
            "generated_logits_f32": "out.logits (raw logits before any processor), [B, N, V]; step 0 is the "
                                    "prompt's last position, step j>0 one cached decode step",
            "tokens": f"numpy.random.default_rng({arguments.seed}).integers(0, V, size=(B, S))",
        },
        "expected_npz": {name: [str(value.dtype), list(value.shape)] for name, value in arrays.items()},
        "checks": checks,
        "linnet_generics": linnet_generics(config, family, batch, arguments.max_seq),
        "linnet_T_per_reference": {"logits_f32": "f32", "generated_logits_f32": "f32", "logits_bf16": "bf16"},
    }
    meta.update(provenance)
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
    print(f"wrote {out}: S={prompt_length}, N={new_tokens}, "
          f"greedy top-2 margin {checks['greedy_top2_margin_min']:.3g}")


if __name__ == "__main__":
    main()
