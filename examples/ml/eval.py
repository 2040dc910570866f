"""Perplexity of the bigram model on the held-out tenth of the corpus (add-one smoothing)."""
import argparse
import json
import math
import os

from cairn_step import report

p = argparse.ArgumentParser()
p.add_argument("--model", required=True)
p.add_argument("--tokens", required=True)
a = p.parse_args()

with open(os.path.join(a.model, "model.json")) as f:
    model = json.load(f)
with open(os.path.join(a.tokens, "tokens.json")) as f:
    docs = json.load(f)
counts, size = model["counts"], model["size"]
held_out = docs[int(len(docs) * 0.9):]
log_prob, n = 0.0, 0
for doc in held_out:
    for x, y in zip(doc, doc[1:]):
        row = counts[x]
        log_prob += math.log((row[y] + 1) / (sum(row) + size))
        n += 1
report({"perplexity": round(math.exp(-log_prob / max(n, 1)), 3), "pairs": n})
