"""The quality bench's Python half (scripts/quality-bench.sh runs it in the model's virtualenv).

  extract  --letter N --out DIR           Frankenstein's letter N: DIR/letter.txt (English, the
                                          book to translate) and DIR/reference.txt (the 1821
                                          French translation of the same letter)
  baseline --url URL --source F --out F   the plain one-prompt-per-paragraph translation with the
                                          same model: "Translate into French; reply with the
                                          translation only", one request per paragraph
  score    --work DIR                     chrF (sacrebleu) of every system against the reference,
                                          the letter as one document, with what each system's
                                          text shows of misbehaviour (paragraphs the same as
                                          another's, left in English), tokens and wall time;
                                          where the reference has as many paragraphs as the
                                          source, each paragraph's chrF against booktr's
                                          confidence in it (Spearman's rank correlation, and
                                          how many of the lowest-scoring tenth the review
                                          queue's first tenth holds)
"""

import argparse
import json
import re
import sys
import time
import urllib.request
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent.parent / "corpus" / "reference"
ROMAN = ["Ière", "II", "III", "IV"]


def paragraphs(text):
    """Blank-line separated paragraphs, each on one line."""
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def section(text, start, end):
    """The text from the line `start` to the line `end` (exclusive), both matched whole; the
    first occurrence after the table of contents (the one followed by text)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == start]
    for at in starts:
        for stop in range(at + 1, len(lines)):
            if lines[stop].strip() == end:
                if stop - at > 5:
                    return "\n".join(lines[at:stop])
                break
    sys.exit(f"'{start}' ... '{end}' not found")


def extract(args):
    n = args.letter
    english = (REFERENCE / "frankenstein.en.txt").read_text()
    french = (REFERENCE / "frankenstein.fr.txt").read_text()
    letter = section(english, f"Letter {n}", f"Letter {n + 1}" if n < 4 else "Chapter 1")
    reference = section(
        french, f"LETTRE {ROMAN[n - 1]}", f"LETTRE {ROMAN[n]}" if n < 4 else "CHAPITRE Ier"
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # Gutenberg's _italics_ marks are not the author's words.
    (out / "letter.txt").write_text(letter.replace("_", "") + "\n")
    (out / "reference.txt").write_text(reference + "\n")
    print(f"Letter {n}: {len(letter.split())} words, {len(paragraphs(letter))} paragraphs")


def chat(url, prompt, max_tokens):
    body = json.dumps(
        {
            "model": "local",
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0.3,
            "max_tokens": max_tokens,
        }
    ).encode()
    request = urllib.request.Request(
        f"{url}/chat/completions", body, {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=3600) as response:
        answer = json.load(response)
    usage = answer.get("usage", {})
    text = answer["choices"][0]["message"]["content"]
    return text, usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)


def baseline(args):
    source = paragraphs(Path(args.source).read_text())
    out, stats = [], {"inputTokens": 0, "outputTokens": 0, "requests": 0}
    started = time.time()
    for paragraph in source:
        prompt = f"Translate into {args.language}; reply with the translation only.\n\n{paragraph}"
        text, tokens_in, tokens_out = chat(args.url, prompt, len(paragraph) // 2 + 128)
        out.append(" ".join(text.split()))
        stats["inputTokens"] += tokens_in
        stats["outputTokens"] += tokens_out
        stats["requests"] += 1
    stats["seconds"] = round(time.time() - started, 1)
    Path(args.out).write_text("\n\n".join(out) + "\n")
    Path(args.stats).write_text(json.dumps(stats))


def misbehaviour(source, translation):
    """Paragraphs whose translation is the same as another's while their sources differ, and
    paragraphs given back as their source."""
    same = 0
    for i, text in enumerate(translation):
        if len(text) >= 30 and any(
            j != i and other == text and source[j] != source[i]
            for j, other in enumerate(translation)
            if j < len(source) and i < len(source)
        ):
            same += 1
    echoed = sum(
        1 for s, t in zip(source, translation) if len(s) >= 30 and s.strip() == t.strip()
    )
    return same, echoed


def score(args):
    from sacrebleu.metrics import CHRF

    work = Path(args.work)
    chrf = CHRF()
    reference = " ".join(paragraphs((work / "reference.txt").read_text()))
    source = paragraphs((work / "letter.txt").read_text())
    report = json.loads((work / "report.json").read_text())
    base_stats = json.loads((work / "baseline.json").read_text())
    usage = report.get("usage", {})
    rows = [("English source (no translation)", source, None, None)]
    rows.append(("plain one prompt per paragraph", paragraphs((work / "baseline.txt").read_text()),
                 base_stats, base_stats.get("seconds")))
    passes = ["translate", "review", "polish"]
    for pass_name in passes:
        path = work / "passes" / f"chapter-1.{pass_name}.txt"
        if path.exists():
            rows.append((f"booktr after {pass_name}", paragraphs(path.read_text()),
                         usage.get(pass_name), None))
    print()
    print(f"{'system':36} {'chrF':>6} {'paras':>5} {'same':>5} {'echo':>5} "
          f"{'in tok':>7} {'out tok':>7} {'req':>4} {'s':>6}")
    for name, text, stats, seconds in rows:
        value = chrf.corpus_score([" ".join(text)], [[reference]]).score
        same, echoed = misbehaviour(source, text) if stats is not None or "booktr" in name else ("-", "-")
        stats = stats or {}
        print(f"{name:36} {value:6.1f} {len(text):5} {same!s:>5} {echoed!s:>5} "
              f"{stats.get('inputTokens', '-')!s:>7} {stats.get('outputTokens', '-')!s:>7} "
              f"{stats.get('requests', '-')!s:>4} {seconds if seconds is not None else '-'!s:>6}")
    print()
    print(f"booktr: {report['seconds']:.0f} s in all, {report['requests']} requests, "
          f"flagged {report['flaggedBlocks']} blocks {report['flagged']}, "
          f"changed by the review {report['changed']['review']}, by the polish "
          f"{report['changed']['polish']}, repaired {report['repaired']}, "
          f"{report['inTarget']} of {report['judged']} judged blocks in the target language")
    confidence_against_chrf(work, report, chrf)


def ranks(values):
    """Ranks from 1, ties given their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs, ys):
    """Spearman's rank correlation (Pearson's on the ranks); None when one side is constant."""
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return None if vx == 0 or vy == 0 else cov / (vx * vy) ** 0.5


def confidence_against_chrf(work, report, chrf):
    """Each paragraph's chrF against booktr's confidence in it, where the paragraphs align."""
    reference = paragraphs((work / "reference.txt").read_text())
    final = work / "passes" / "chapter-1.polish.txt"
    if not final.exists():
        return
    text = paragraphs(final.read_text())
    source = paragraphs((work / "letter.txt").read_text())
    confidence = report.get("blockConfidence", [])
    if not (len(reference) == len(text) == len(confidence) == len(source)):
        print(f"confidence against chrF: not measured, the paragraphs do not align "
              f"(reference {len(reference)}, booktr {len(text)}, confidences {len(confidence)})")
        return
    scored = [(c, chrf.sentence_score(t, [r]).score, len(s))
              for c, t, r, s in zip(confidence, text, reference, source) if c is not None]
    # A line of a few words (a heading, a signature) scores by the reference's wording more than
    # by the translation's quality: the figures are given with and without them.
    for label, pairs in (("all", scored), ("of 100 characters or more", [p for p in scored if p[2] >= 100])):
        if len(pairs) < 3:
            continue
        rho = spearman([c for c, _, _ in pairs], [s for _, s, _ in pairs])
        tenth = max(1, -(-len(pairs) // 10))
        queue = sorted(range(len(pairs)), key=lambda i: pairs[i][0])[:tenth]
        lowest = sorted(range(len(pairs)), key=lambda i: pairs[i][1])[:tenth]
        held = len(set(queue) & set(lowest))
        shown = "undefined (one side is constant)" if rho is None else f"{rho:.2f}"
        print(f"confidence against per-paragraph chrF, paragraphs {label} ({len(pairs)}): "
              f"Spearman {shown}; the review queue's first {tenth} hold {held} of the "
              f"{tenth} lowest-scoring")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("extract")
    p.add_argument("--letter", type=int, default=1, choices=[1, 2, 3, 4])
    p.add_argument("--out", required=True)
    p = sub.add_parser("baseline")
    p.add_argument("--url", required=True)
    p.add_argument("--language", default="French")
    p.add_argument("--source", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--stats", required=True)
    p = sub.add_parser("score")
    p.add_argument("--work", required=True)
    args = parser.parse_args()
    {"extract": extract, "baseline": baseline, "score": score}[args.command](args)


if __name__ == "__main__":
    main()
