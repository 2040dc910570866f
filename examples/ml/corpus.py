"""Writes a synthetic corpus (seeded, standard library only): corpus.txt in the output directory."""
import argparse
import os
import random

from cairn_step import report

WORDS = ("the cat dog sat on mat ran fast slow red blue big small a an and or but "
         "model data token train eval loss step epoch batch learn rate").split()

p = argparse.ArgumentParser()
p.add_argument("--docs", type=int, required=True)
p.add_argument("--seed", type=int, required=True)
p.add_argument("--out", required=True)
a = p.parse_args()

rng = random.Random(a.seed)
os.makedirs(a.out, exist_ok=True)
with open(os.path.join(a.out, "corpus.txt"), "w") as f:
    for _ in range(a.docs):
        f.write(" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 15))) + "\n")
report({"docs": a.docs})
