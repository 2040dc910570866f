"""Trains a smoothed bigram model, one pass per epoch, writing a checkpoint after each.

Resumes from the latest checkpoint in the step's checkpoint directory ($CAIRN_CHECKPOINT_DIR,
which Cairn keeps across failed attempts, killed runners and reruns until the step succeeds;
--checkpoints outside Cairn), so an interrupted training continues where it stopped. Each
checkpoint is written under a dot-name and renamed: a half-written one is never resumed from.
The runtime value epochSeconds (not part of the step's identity) slows each epoch down, to
watch a kill and resume.
"""
import argparse
import json
import os
import time

from cairn_step import report

p = argparse.ArgumentParser()
p.add_argument("--tokens", required=True)
p.add_argument("--epochs", type=int, required=True)
p.add_argument("--out", required=True)
p.add_argument("--checkpoints")
a = p.parse_args()
os.makedirs(a.out, exist_ok=True)
ckpt_dir = a.checkpoints or os.environ.get("CAIRN_CHECKPOINT_DIR") or os.path.join(a.out, "checkpoints")
epoch_seconds = 0
if os.environ.get("CAIRN_CONTEXT"):
    with open(os.environ["CAIRN_CONTEXT"]) as f:
        epoch_seconds = json.load(f).get("runtime", {}).get("epochSeconds", 0)
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
    print("resuming from epoch", start, flush=True)
for epoch in range(start + 1, a.epochs + 1):
    time.sleep(epoch_seconds)
    for doc in train_docs:
        for x, y in zip(doc, doc[1:]):
            counts[x][y] += 1
    tmp = os.path.join(ckpt_dir, ".epoch-%d.tmp" % epoch)
    with open(tmp, "w") as f:
        json.dump(counts, f)
    os.replace(tmp, os.path.join(ckpt_dir, "epoch-%d.json" % epoch))
    print("epoch", epoch, "done", flush=True)
with open(os.path.join(a.out, "model.json"), "w") as f:
    json.dump({"counts": counts, "size": size}, f)
report({"epochs": a.epochs, "resumedFrom": start})
