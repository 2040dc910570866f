"""Trains a smoothed bigram model, one pass per epoch, writing a checkpoint after each.

Resumes from the latest checkpoint in --checkpoints (default: <out>/checkpoints), so a rerun
of an interrupted attempt that keeps its checkpoint directory continues where it stopped.
"""
import argparse
import json
import os

from cairn_step import report

p = argparse.ArgumentParser()
p.add_argument("--tokens", required=True)
p.add_argument("--epochs", type=int, required=True)
p.add_argument("--out", required=True)
p.add_argument("--checkpoints")
a = p.parse_args()
os.makedirs(a.out, exist_ok=True)
ckpt_dir = a.checkpoints or os.path.join(a.out, "checkpoints")
os.makedirs(ckpt_dir, exist_ok=True)

with open(os.path.join(a.tokens, "tokens.json")) as f:
    docs = json.load(f)
with open(os.path.join(a.tokens, "vocab.json")) as f:
    size = len(json.load(f))
train_docs = docs[: int(len(docs) * 0.9)]


def latest():
    done = sorted(int(n[len("epoch-"):-len(".json")]) for n in os.listdir(ckpt_dir) if n.startswith("epoch-"))
    return done[-1] if done else 0


start = latest()
counts = [[0] * size for _ in range(size)]
if start > 0:
    with open(os.path.join(ckpt_dir, "epoch-%d.json" % start)) as f:
        counts = json.load(f)
    print("resuming from epoch", start)
for epoch in range(start + 1, a.epochs + 1):
    for doc in train_docs:
        for x, y in zip(doc, doc[1:]):
            counts[x][y] += 1
    tmp = os.path.join(ckpt_dir, ".epoch-%d.tmp" % epoch)
    with open(tmp, "w") as f:
        json.dump(counts, f)
    os.replace(tmp, os.path.join(ckpt_dir, "epoch-%d.json" % epoch))
    print("epoch", epoch, "done")
with open(os.path.join(a.out, "model.json"), "w") as f:
    json.dump({"counts": counts, "size": size}, f)
report({"epochs": a.epochs, "resumedFrom": start})
