#!/usr/bin/env python3
"""Train a small LlamaForCausalLM on real English text that every Debian machine has.

The budget-mode benchmark (scripts/bench-budget.sh) needs a *trained* model: a
random-weight fixture's next-token distributions are close to uniform, so perplexity and KL
divergence say little about it. No trained LLM can be downloaded here, so this script trains
one on the CPU in a bounded time:

* text: the docstrings of Python's standard library (/usr/lib/python3.X, read with `ast`,
  never imported) and the licence texts in /usr/share/common-licenses; documents are split
  by a hash of their name into training (95 %) and held-out (5 %) text, written as
  `train.txt` and `heldout.txt` next to the model (the held-out text is never trained on);
* tokenizer: the llama-spm fixture's 1000-piece SentencePiece model (testdata/hf/llama-spm);
* model: the llama-spm fixture's shapes (hidden 256, 2 layers, 4 heads, 2 KV heads, head_dim
  64, intermediate 512, vocab 1024: every matrix width a multiple of 256, so every K-quant
  applies; untied output), so the trained model and the random fixture compare directly;
* training: windows of SEQ tokens starting with BOS (as llama-perplexity scores its chunks),
  AdamW, warm-up then cosine decay, a fixed number of steps and a fixed seed (the same
  weights on the same machine and torch build; threads are fixed too).

    python conformance/train_tiny_llama.py OUT_DIR [--steps 400] [--threads 2]

(400 steps of 8 x 128 tokens: about 14 CPU-minutes on a 2-core machine.)

OUT_DIR gets a HuggingFace model directory (config.json, model.safetensors in F32, the
tokenizer files), train.txt, heldout.txt and train-log.txt (loss curve, held-out perplexity).
"""

import argparse
import ast
import glob
import hashlib
import math
import os
import shutil
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPM_DIR = os.path.join(ROOT, "testdata", "hf", "llama-spm")
TOKENIZER_FILES = [
    "tokenizer.model",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "generation_config.json",
]


def docstrings(path):
    """Every module/class/function docstring of one Python file, in source order."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            d = ast.get_docstring(node)
            if d and len(d) >= 80:
                out.append(d.strip())
    return out


def corpus():
    """(name, text) documents, sorted by name: stdlib docstrings per file, licences."""
    docs = []
    libs = sorted(glob.glob("/usr/lib/python3.[0-9]*"))
    if libs:
        lib = libs[-1]
        for path in sorted(glob.glob(os.path.join(lib, "**", "*.py"), recursive=True)):
            if "/test" in path[len(lib):] or "site-packages" in path or "dist-packages" in path:
                continue
            ds = docstrings(path)
            if ds:
                docs.append((os.path.relpath(path, lib), "\n\n".join(ds)))
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                docs.append(("licence/" + os.path.basename(path), f.read()))
    return docs


def held_out(name):
    return hashlib.sha256(name.encode()).digest()[0] < 13  # ~5 %


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--ffn", type=int, default=512)
    args = ap.parse_args()

    import numpy as np
    import sentencepiece as spm
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "train-log.txt"), "w")

    def say(msg):
        print(msg, flush=True)
        log.write(msg + "\n")
        log.flush()

    docs = corpus()
    train = [t for n, t in docs if not held_out(n)]
    test = [t for n, t in docs if held_out(n)]
    train_txt = "\n\n".join(train) + "\n"
    test_txt = "\n\n".join(test) + "\n"
    with open(os.path.join(args.out, "train.txt"), "w") as f:
        f.write(train_txt)
    with open(os.path.join(args.out, "heldout.txt"), "w") as f:
        f.write(test_txt)

    sp = spm.SentencePieceProcessor(model_file=os.path.join(SPM_DIR, "tokenizer.model"))
    bos = sp.bos_id()
    tr = np.array(sp.encode(train_txt), dtype=np.int64)
    te = np.array(sp.encode(test_txt), dtype=np.int64)
    say(f"documents {len(train)} train / {len(test)} held out; tokens {len(tr)} / {len(te)}; "
        f"chars {len(train_txt)} / {len(test_txt)}")

    cfg = LlamaConfig(
        vocab_size=1024,
        hidden_size=args.hidden,
        intermediate_size=args.ffn,
        num_hidden_layers=args.layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=2048,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        bos_token_id=1,
        eos_token_id=2,
    )
    model = LlamaForCausalLM(cfg).float()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.05)
    warm = max(1, args.steps // 20)

    def lr_at(step):
        if step < warm:
            return args.lr * (step + 1) / warm
        p = (step - warm) / max(1, args.steps - warm)
        return args.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * p)))

    rng = np.random.default_rng(args.seed)
    seq = args.seq

    def batch(tokens, starts):
        x = np.stack([tokens[s : s + seq] for s in starts])
        x[:, 0] = bos
        return torch.from_numpy(x)

    @torch.no_grad()
    def eval_ppl(tokens, limit=64):
        # Disjoint chunks, BOS first, the second half scored (llama-perplexity's rule).
        model.eval()
        n = min(limit, (len(tokens) - 1) // seq)
        nll, cnt = 0.0, 0
        for i in range(0, n, 16):
            x = batch(tokens, [j * seq for j in range(i, min(n, i + 16))])
            logits = model(x).logits[:, seq // 2 - 1 : -1].float()
            tgt = x[:, seq // 2 :]
            nll += torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), reduction="sum"
            ).item()
            cnt += tgt.numel()
        model.train()
        return math.exp(nll / cnt)

    say(f"params {sum(p.numel() for p in model.parameters())}; steps {args.steps} x "
        f"{args.batch} x {seq}; uniform perplexity {sp.get_piece_size()}")
    t0 = time.time()
    model.train()
    for step in range(args.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        x = batch(tr, rng.integers(0, len(tr) - seq, size=args.batch))
        loss = model(x, labels=x).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0 or step == args.steps - 1:
            say(f"step {step} loss {loss.item():.4f} lr {lr_at(step):.2e} {time.time() - t0:.0f}s")
    say(f"held-out perplexity {eval_ppl(te):.3f}; train perplexity {eval_ppl(tr):.3f}")

    model.save_pretrained(args.out, safe_serialization=True)
    for f in TOKENIZER_FILES:
        src = os.path.join(SPM_DIR, f)
        if os.path.exists(src):
            shutil.copy(src, os.path.join(args.out, f))
    say(f"saved {args.out}")


if __name__ == "__main__":
    sys.exit(main())
