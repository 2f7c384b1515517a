#!/usr/bin/env python3
"""Write a golden case for `linnet validate` from Hugging Face `transformers`.

A case is a directory holding
  config.json        the Hugging Face config of the checkpoint
  model.safetensors  the checkpoint, every float tensor in bf16 (GPT-OSS
                     experts as u8 MXFP4 blocks and scales, as published)
  expected.npz       tokens, logits_f32, logits_bf16, generated,
                     generated_logits_f32, decode_logits_bf16
                     (golden/README.md says what each is)
  meta.json          versions, seed, sizes, how each array was made, and
                     `linnet_generics`: the values to bind in the card

Sources of cases:
  --tiny FAMILY      a tiny random checkpoint of `mistral`, `qwen3` or
                     `gpt_oss`, with the sizes of the checked-in cases;
                     --checkpoint-layers C stores C layers of which the
                     references read only the first --run-layers R
  --model ID_OR_DIR  your own checkpoint (a Hub id or a local directory);
                     --layers L keeps only its first L layers
  --mxfp4-dequant    the MXFP4 dequantization case: blocks holding every
                     byte value, through convert_moe_packed_tensors
  --all              every checked-in case (golden/README.md), written
                     under --out as golden/ lays them out

This script is for users with torch, transformers, safetensors and numpy
installed. The project's CI never runs it: the checked-in cases under
golden/ are the references, produced with the versions golden/README.md
lists. Other versions may differ from them in the last bits.

Examples:
  python3 scripts/dump_goldens.py --all --out /tmp/golden      # then diff with golden/
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

# Every checked-in case and how it was made (--all): the family, seed,
# lengths, and settings that differ from TINY_CONFIGS.
STORED_CASES = {
    "mistral-a": dict(tiny="mistral", seed=1),
    # A checkpoint deeper than the run: 4 layers stored, multi-head
    # attention, the references read layers 0 and 1 only.
    "mistral-trunc": dict(tiny="mistral", seed=3, lengths=(12, 6), checkpoint_layers=4, run_layers=2,
                          overrides=dict(intermediate_size=128, num_key_value_heads=4)),
    "qwen3-a": dict(tiny="qwen3", seed=4),
    "gptoss-a": dict(tiny="gpt_oss", seed=6),
    "mxfp4-dequant": dict(mxfp4=True, seed=8),
}

# GPT-OSS modules transformers' MXFP4 integration leaves unquantized.
GPT_OSS_NOT_CONVERTED = ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tiny", choices=FAMILIES, help="a tiny random checkpoint of this family")
    source.add_argument("--model", help="a Hugging Face model id or a local checkpoint directory")
    source.add_argument("--mxfp4-dequant", action="store_true", help="the MXFP4 dequantization case")
    source.add_argument("--all", action="store_true", help="every checked-in case, as directories under --out")
    parser.add_argument("--out", required=True, help="the case directory to write (created); with --all, their parent")
    parser.add_argument("--checkpoint-layers", type=int, help="with --tiny: layers stored (default 2)")
    parser.add_argument("--run-layers", type=int,
                        help="with --tiny: layers the references read, from_pretrained(num_hidden_layers=R) "
                             "(default: all stored)")
    parser.add_argument("--case", help="the case's name in meta.json (default: the directory's name)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the weights and the tokens (default 1)")
    parser.add_argument("--layers", type=int, help="with --model: keep only the first L layers")
    parser.add_argument("--prompt-length", type=int, help="S, prompt tokens (default: 16, 24 for gpt_oss)")
    parser.add_argument("--new-tokens", type=int, help="N, greedily generated tokens (default: 12, 10 for gpt_oss)")
    parser.add_argument("--max-seq", type=int, default=64, help="MaxSeq to bind in the card (default 64)")
    parser.add_argument("--revision", help="with --model: the Hub revision to download")
    arguments = parser.parse_args()
    if arguments.layers is not None and not arguments.model:
        parser.error("--layers goes with --model (a tiny checkpoint takes --checkpoint-layers)")
    if (arguments.checkpoint_layers or arguments.run_layers) and not arguments.tiny:
        parser.error("--checkpoint-layers and --run-layers go with --tiny")
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


def tiny_checkpoint(family, seed, out, overrides=None, checkpoint_layers=None):
    """A random model of the checked-in sizes, written to `out` as a published checkpoint would be."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoConfig, AutoModelForCausalLM

    settings = dict(TINY_CONFIGS[family])
    settings.update(overrides or {})
    if checkpoint_layers:
        settings["num_hidden_layers"] = checkpoint_layers
        if "layer_types" in settings:  # GPT-OSS alternates sliding and full attention
            settings["layer_types"] = [settings["layer_types"][i % 2] for i in range(checkpoint_layers)]
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


def load_model(directory, family, dtype, run_layers=None):
    """The checkpoint through transformers, eager attention, as the references were made;
    `run_layers`: read only the first layers (from_pretrained(num_hidden_layers=...))."""
    import torch
    from transformers import AutoModelForCausalLM

    options = dict(attn_implementation="eager")
    if run_layers:
        options["num_hidden_layers"] = run_layers
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


def teacher_forced(model, input_ids, generated):
    """Prefill of the prompt, then one cached decode step per token of `generated` but the last,
    fed those tokens whatever the model would choose: the logits of each step, [B, N, V] in f32."""
    import torch

    # The model makes its own default cache, as generate() does (sliding layers included).
    output = model(input_ids=input_ids, use_cache=True)
    steps = [output.logits[:, -1]]
    for step in range(generated.shape[1] - 1):
        token = generated[:, step:step + 1]
        output = model(input_ids=token, past_key_values=output.past_key_values, use_cache=True)
        steps.append(output.logits[:, -1])
    return torch.stack(steps, dim=1).to(torch.float32).numpy()


def greedy(model, input_ids, new_tokens):
    """Greedy decoding through the default cache, with each step's raw logits."""
    import torch

    generation = model.generate(
        input_ids, attention_mask=torch.ones_like(input_ids), max_new_tokens=new_tokens,
        min_new_tokens=new_tokens, do_sample=False, eos_token_id=None, pad_token_id=0,
        output_logits=True, output_scores=True, return_dict_in_generate=True)
    generated = generation.sequences[:, input_ids.shape[1]:]
    logits = torch.stack(generation.logits, dim=1).to(torch.float32)
    scores = torch.stack(generation.scores, dim=1).to(torch.float32)
    return generated, logits, scores


def uncached_steps(model, input_ids, generated):
    """Each step's logits from a whole forward pass over prompt + tokens so far (no cache)."""
    import torch

    sequence = torch.cat([input_ids, generated[:, :-1]], dim=1)
    logits = model(input_ids=sequence).logits.to(torch.float32)
    return logits[:, input_ids.shape[1] - 1:].numpy()


def mxfp4_dequant_case(seed, out):
    """convert_moe_packed_tensors on blocks covering every byte value and scales around 127."""
    import numpy as np
    import torch
    import transformers
    from transformers.integrations.mxfp4 import convert_moe_packed_tensors

    rng = np.random.default_rng(seed)
    shape = (4, 16, 6, 16)
    count = int(np.prod(shape))
    values = np.concatenate([np.arange(256), rng.integers(0, 256, size=count - 256)])
    blocks = rng.permutation(values).astype(np.uint8).reshape(shape)
    scales = rng.integers(90, 165, size=shape[:3]).astype(np.uint8)
    scales.reshape(-1)[rng.choice(scales.size, size=4, replace=False)] = 127
    as_torch = (torch.from_numpy(blocks.copy()), torch.from_numpy(scales.copy()))
    f32 = convert_moe_packed_tensors(*as_torch, dtype=torch.float32).numpy()
    bf16 = convert_moe_packed_tensors(*as_torch, dtype=torch.bfloat16)
    bf16_bits = bf16.view(torch.int16).numpy().view(np.uint16)

    # An independent NumPy dequantization: FP4 E2M1 codes, low nibble first, times 2**(scale - 127).
    table = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])
    nibbles = np.stack([blocks & 0x0F, blocks >> 4], axis=-1).reshape(shape[0], shape[1], shape[2], 32)
    reference = table[nibbles] * np.exp2(scales.astype(np.float64) - 127)[..., None]
    reference = reference.reshape(shape[0], shape[1], shape[2] * 32).transpose(0, 2, 1).astype(np.float32)
    os.makedirs(out, exist_ok=True)
    np.savez_compressed(os.path.join(out, "expected.npz"), blocks=blocks, scales=scales, bf16_bits=bf16_bits, f32=f32)
    meta = {
        "case": os.path.basename(os.path.normpath(out)),
        "family": "mxfp4",
        "description": "transformers.integrations.mxfp4.convert_moe_packed_tensors alone on blocks covering all "
                       "256 byte values and scales 90..164 incl. 127",
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "numpy_version": np.__version__,
        "seed": seed,
        "torch_num_threads": 1,
        "function": "transformers.integrations.mxfp4.convert_moe_packed_tensors(blocks, scales, dtype=...)",
        "inputs": {"blocks": ["uint8", list(blocks.shape)], "scales": ["uint8", list(scales.shape)]},
        "outputs": {"bf16_bits": ["uint16", list(bf16_bits.shape)], "f32": ["float32", list(f32.shape)]},
        "layout": "blocks [E, R, G, 16], scales [E, R, G]; the low nibble of byte j of group g is input feature "
                  "g*32 + 2j, the high nibble g*32 + 2j + 1; outputs TRANSPOSED to [E, G*32, R]",
        "bf16_bits": "out_bf16.view(int16) reinterpreted as uint16 (raw bfloat16 bit patterns, -0.0 = 0x8000)",
        "scales_range": [int(scales.min()), int(scales.max())],
        "scale_127_count": int((scales == 127).sum()),
        "checks": {
            "all_256_byte_values_present": bool(np.unique(blocks).size == 256),
            "f32_equals_numpy_reference": bool(np.array_equal(f32, reference)),
            "bf16_equals_f32": bool(np.array_equal(bf16.to(torch.float32).numpy(), f32)),
        },
    }
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
    print(f"wrote {out}: checks {meta['checks']}")


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


def model_case(out, family, seed, case_name, prompt_length, new_tokens, max_seq, run_layers, provenance):
    """The reference arrays and meta.json of a model case whose checkpoint is already in `out`."""
    import numpy as np
    import torch
    import transformers

    with open(os.path.join(out, "config.json")) as f:
        config = json.load(f)
    checkpoint_layers = config["num_hidden_layers"]
    run_layers = run_layers or checkpoint_layers
    if not 1 <= run_layers <= checkpoint_layers:
        sys.exit(f"error: --run-layers {run_layers}: the checkpoint has {checkpoint_layers} layers")
    batch = 1
    if prompt_length + new_tokens > max_seq:
        sys.exit(f"error: S + N = {prompt_length + new_tokens} does not fit --max-seq {max_seq}")

    vocab = config["vocab_size"]
    tokens = np.random.default_rng(seed).integers(0, vocab, size=(batch, prompt_length)).astype(np.int32)
    input_ids = torch.from_numpy(tokens.astype(np.int64))

    with torch.no_grad():
        model = load_model(out, family, torch.float32, run_layers)
        logits_f32 = model(input_ids=input_ids).logits.to(torch.float32).numpy()
        second_f32 = model(input_ids=input_ids).logits.to(torch.float32).numpy()
        generated, generated_logits, scores = greedy(model, input_ids, new_tokens)
        second_generated, _, _ = greedy(model, input_ids, new_tokens)
        forced_f32 = teacher_forced(model, input_ids, generated)
        uncached = uncached_steps(model, input_ids, generated)
        del model
        model = load_model(out, family, torch.bfloat16, run_layers)
        # bf16 logits widen exactly to f32 (NumPy has no bf16).
        logits_bf16 = model(input_ids=input_ids).logits.to(torch.float32).numpy()
        decode_logits_bf16 = teacher_forced(model, input_ids, generated)
        del model

    generated_np = generated.numpy().astype(np.int32)
    generated_logits_np = generated_logits.numpy()
    arrays = {"tokens": tokens, "logits_f32": logits_f32, "logits_bf16": logits_bf16,
              "generated": generated_np, "generated_logits_f32": generated_logits_np,
              "decode_logits_bf16": decode_logits_bf16}
    np.savez_compressed(os.path.join(out, "expected.npz"), **arrays)

    ordered = np.sort(generated_logits_np, axis=-1)
    bf16_choices = decode_logits_bf16.argmax(-1)
    # Each claim meta.json makes is measured here, from the arrays just written.
    checks = {
        "f32_second_run_bit_identical": bool(np.array_equal(logits_f32, second_f32)),
        "generate_second_run_identical": bool(torch.equal(generated, second_generated)),
        "generated_is_argmax_of_generated_logits": bool((generated_logits_np.argmax(-1) == generated_np).all()),
        "teacher_forced_f32_vs_generated_logits_max_abs_diff":
            float(np.abs(forced_f32 - generated_logits_np).max()),
        "raw_logits_equal_processed_scores": bool(torch.equal(generated_logits, scores)),
        "gen_step0_vs_forward_last_max_abs_diff": float(np.abs(generated_logits_np[:, 0] - logits_f32[:, -1]).max()),
        "gen_logits_vs_uncached_forward_max_abs_diff": float(np.abs(generated_logits_np - uncached).max()),
        "greedy_top2_margin_min": float((ordered[..., -1] - ordered[..., -2]).min()),
        "bf16_vs_f32_logits_max_abs_diff": float(np.abs(logits_bf16 - logits_f32).max()),
        "bf16_vs_f32_argmax_agreement": float((logits_bf16.argmax(-1) == logits_f32.argmax(-1)).mean()),
        "bf16_decode_vs_f32_steps_max_abs_diff": float(np.abs(decode_logits_bf16 - generated_logits_np).max()),
        "bf16_decode_picks_f32_token": float((bf16_choices == generated_np).mean()),
    }
    how = ("from_pretrained(dtype={}, attn_implementation='eager'"
           + (f", num_hidden_layers={run_layers}" if run_layers != checkpoint_layers else "")
           + (", quantization_config=Mxfp4Config(dequantize=True), experts_implementation='eager'"
              if family == "gpt_oss" else "") + ")")
    linnet_config = dict(config, num_hidden_layers=run_layers)
    meta = {
        "case": case_name or os.path.basename(os.path.normpath(out)),
        "family": family,
        "description": provenance.pop("description"),
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "numpy_version": np.__version__,
        "seed": seed,
        "torch_num_threads": 1,
        "B": batch, "S": prompt_length, "N": new_tokens,
        "checkpoint_layers": checkpoint_layers,
        "run_layers": run_layers,
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
            "decode_logits_bf16": "the bf16 model's prefill + 1-token cached decode steps fed the f32 `generated` "
                                  "tokens (teacher forcing), [B, N, V]: the bf16 counterpart of generated_logits_f32",
            "tokens": f"numpy.random.default_rng({seed}).integers(0, V, size=(B, S))",
        },
        "expected_npz": {name: [str(value.dtype), list(value.shape)] for name, value in arrays.items()},
        "checks": checks,
        "linnet_generics": linnet_generics(linnet_config, family, batch, max_seq),
        "linnet_T_per_reference": {"logits_f32": "f32", "generated_logits_f32": "f32", "logits_bf16": "bf16",
                                   "decode_logits_bf16": "bf16"},
    }
    if run_layers != checkpoint_layers:
        meta["truncation"] = (f"checkpoint has num_hidden_layers={checkpoint_layers} (config.json says so); expected "
                              f"outputs use from_pretrained(..., num_hidden_layers={run_layers}), which reads only "
                              f"layers 0..{run_layers - 1}; bind Layers={run_layers}")
    meta.update(provenance)
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
    failed = [name for name, value in checks.items() if value is False]
    print(f"wrote {out}: S={prompt_length}, N={new_tokens}, greedy top-2 margin "
          f"{checks['greedy_top2_margin_min']:.3g}" + (f"; FAILED checks: {', '.join(failed)}" if failed else ""))


def tiny_case(out, family, seed, case_name=None, lengths=None, max_seq=64, checkpoint_layers=None,
              run_layers=None, overrides=None):
    provenance = tiny_checkpoint(family, seed, out, overrides, checkpoint_layers)
    provenance["description"] = f"written by scripts/dump_goldens.py (tiny random {family})"
    prompt_length, new_tokens = lengths or TINY_LENGTHS[family]
    model_case(out, family, seed, case_name, prompt_length, new_tokens, max_seq, run_layers, provenance)


def main():
    arguments = parse_arguments()
    import torch

    torch.set_num_threads(1)
    out = arguments.out
    if arguments.all:
        for name, recipe in STORED_CASES.items():
            directory = os.path.join(out, name)
            if recipe.get("mxfp4"):
                mxfp4_dequant_case(recipe["seed"], directory)
            else:
                tiny_case(directory, recipe["tiny"], recipe["seed"], name, recipe.get("lengths"), arguments.max_seq,
                          recipe.get("checkpoint_layers"), recipe.get("run_layers"), recipe.get("overrides"))
        return
    if arguments.mxfp4_dequant:
        mxfp4_dequant_case(arguments.seed, out)
        return
    if arguments.tiny:
        default_lengths = TINY_LENGTHS[arguments.tiny]
        lengths = (arguments.prompt_length or default_lengths[0], arguments.new_tokens or default_lengths[1])
        tiny_case(out, arguments.tiny, arguments.seed, arguments.case, lengths, arguments.max_seq,
                  arguments.checkpoint_layers, arguments.run_layers)
        return
    provenance = truncated_checkpoint(arguments.model, arguments.revision, arguments.layers, out)
    provenance["description"] = f"written by scripts/dump_goldens.py ({arguments.model})"
    with open(os.path.join(out, "config.json")) as f:
        family = family_of(json.load(f)["model_type"])
    default_lengths = TINY_LENGTHS[family]
    model_case(out, family, arguments.seed, arguments.case, arguments.prompt_length or default_lengths[0],
               arguments.new_tokens or default_lengths[1], arguments.max_seq, None, provenance)


if __name__ == "__main__":
    main()
