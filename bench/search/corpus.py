#!/usr/bin/env python3
"""corpus.py — the text corpora of the search benchmark (bench/search/run.sh).

  corpus.py wordnet OUT.ndjson QUERIES.txt          the glosses of WordNet 3.0 (Debian package
                                                    wordnet-base): one document per synset,
                                                    "words: gloss" (117,659 documents)
  corpus.py zipf N OUT.ndjson QUERIES.txt           N generated documents of 10-60 words drawn
                                                    from a Zipf(1.1) law over 50,000 made-up words

Documents are written in the load format {"type":"Doc","data":{"slug","body"}}.  QUERIES.txt
gets 100 queries (50 of one word, 50 of two) made of words drawn from random documents, so
query terms follow the corpus' own frequencies (common and rare ones).  Deterministic (seeded).
"""
import json, random, re, sys, bisect

WORD = re.compile(r"[a-z]{4,}")

def wordnet_docs():
    for part in ("noun", "verb", "adj", "adv"):
        with open(f"/usr/share/wordnet/data.{part}", encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue  # licence header
                head, _, gloss = line.partition(" | ")
                fields = head.split()
                n = int(fields[3], 16)
                words = [fields[4 + 2 * i].replace("_", " ") for i in range(n)]
                yield f"{part}-{fields[0]}", ", ".join(words) + ": " + gloss.strip()

def zipf_docs(n, rng):
    syl = ["ka", "to", "ri", "mu", "ne", "so", "la", "pe", "di", "go", "vu", "ba", "zi", "fo", "he", "ju"]
    vocab, seen = [], set()
    while len(vocab) < 50000:
        w = "".join(rng.choice(syl) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            vocab.append(w)
    cum, acc = [], 0.0
    for r in range(1, len(vocab) + 1):
        acc += 1.0 / r ** 1.1
        cum.append(acc)
    for i in range(n):
        k = rng.randint(10, 60)
        yield f"z{i}", " ".join(vocab[bisect.bisect_left(cum, rng.random() * acc)] for _ in range(k))

def main():
    rng = random.Random(15)
    if sys.argv[1] == "wordnet":
        out, qout = sys.argv[2], sys.argv[3]
        docs = wordnet_docs()
    else:
        out, qout = sys.argv[3], sys.argv[4]
        docs = zipf_docs(int(sys.argv[2]), rng)
    sample = []
    with open(out, "w") as f:
        for i, (slug, body) in enumerate(docs):
            f.write(json.dumps({"type": "Doc", "data": {"slug": slug, "body": body}}) + "\n")
            if rng.random() < 0.002 or len(sample) < 50:
                words = WORD.findall(body.lower())
                if words:
                    sample.append(words)
    qs = []
    for i in range(100):
        words = rng.choice(sample)
        q = [rng.choice(words)]
        if i % 2:
            q.append(rng.choice(rng.choice(sample)))
        qs.append(" ".join(q))
    with open(qout, "w") as f:
        f.write("\n".join(qs) + "\n")

main()
