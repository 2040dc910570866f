"""Builds a vocabulary of the most frequent words and writes the corpus as token ids."""
import argparse
import collections
import json
import os

from cairn_step import context, report

p = argparse.ArgumentParser()
p.add_argument("--corpus", required=True)
p.add_argument("--vocab", type=int, required=True)
p.add_argument("--out", required=True)
a = p.parse_args()

with open(os.path.join(a.corpus, "corpus.txt")) as f:
    lines = [line.split() for line in f]
counts = collections.Counter(w for line in lines for w in line)
vocab = ["<unk>"] + [w for w, _ in counts.most_common(a.vocab - 1)]
index = {w: i for i, w in enumerate(vocab)}
os.makedirs(a.out, exist_ok=True)
with open(os.path.join(a.out, "vocab.json"), "w") as f:
    json.dump(vocab, f)
with open(os.path.join(a.out, "tokens.json"), "w") as f:
    json.dump([[index.get(w, 0) for w in line] for line in lines], f)
report({"tokens": sum(len(line) for line in lines), "vocab": len(vocab)}, metadata={"attempt": context().attempt})
