"""The quality bench's Python half (scripts/quality-bench.sh runs it in the model's virtualenv).

  extract  --letter N --out DIR           Frankenstein's letter N: DIR/letter.txt (English, the
                                          book to translate) and DIR/reference.txt (the 1821
                                          French translation of the same letter)
  baseline --url URL --source F --out F   the plain one-prompt-per-paragraph translation with the
                                          same model: "Translate into French; reply with the
                                          translation only", one request per paragraph
  score    --work DIR                     for every DIR/seed-N: chrF (sacrebleu) of every system
                                          against the reference, the letter as one document,
                                          then the means over the seeds; with what each system's
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
    """Every seed's table, then the means over the seeds, then confidence against chrF."""
    from sacrebleu.metrics import CHRF

    work = Path(args.work)
    chrf = CHRF()
    reference = " ".join(paragraphs((work / "reference.txt").read_text()))
    source = paragraphs((work / "letter.txt").read_text())
    runs = sorted(work.glob("seed-*"), key=lambda p: int(p.name.split("-")[1]))
    totals = {}
    scored = []
    for run in runs:
        print(f"\n{run.name}")
        for name, value, stats in seed_rows(run, source, reference, chrf):
            total = totals.setdefault(name, {"chrF": [], "outputTokens": 0, "requests": 0})
            total["chrF"].append(value)
            total["outputTokens"] += stats.get("outputTokens", 0) if stats else 0
            total["requests"] += stats.get("requests", 0) if stats else 0
        scored += confidence_pairs(work, run, chrf)
    base = totals.get("plain one prompt per paragraph")
    print(f"\nmeans over {len(runs)} seeds ({', '.join(r.name for r in runs)}):")
    print(f"{'system':36} {'chrF':>6} {'range':>13} {'of plain':>8} {'out tok':>8} {'req':>5}")
    for name, total in totals.items():
        values = total["chrF"]
        mean = sum(values) / len(values)
        ratio = f"{mean / (sum(base['chrF']) / len(base['chrF'])):.3f}x" if base else "-"
        spread = f"{min(values):.1f}-{max(values):.1f}"
        print(f"{name:36} {mean:6.2f} {spread:>13} {ratio:>8} "
              f"{total['outputTokens'] or '-'!s:>8} {total['requests'] or '-'!s:>5}")
    if base and "booktr after translate" in totals:
        booktr_tokens = sum(totals[f"booktr after {p}"]["outputTokens"]
                            for p in ("translate", "review", "polish") if f"booktr after {p}" in totals)
        print(f"booktr's output tokens: {booktr_tokens} against the plain prompts' "
              f"{base['outputTokens']} ({booktr_tokens / max(base['outputTokens'], 1):.2f}x)")
    confidence_against_chrf(scored)


def seed_rows(run, source, reference, chrf):
    """One seed's table, printed; returns (system, chrF, usage) for the systems that ran."""
    report = json.loads((run / "report.json").read_text())
    base_stats = json.loads((run / "baseline.json").read_text())
    usage = report.get("usage", {})
    rows = [("English source (no translation)", source, None, None)]
    rows.append(("plain one prompt per paragraph", paragraphs((run / "baseline.txt").read_text()),
                 base_stats, base_stats.get("seconds")))
    for pass_name in ("translate", "review", "polish"):
        path = run / "passes" / f"chapter-1.{pass_name}.txt"
        if path.exists():
            rows.append((f"booktr after {pass_name}", paragraphs(path.read_text()),
                         usage.get(pass_name), None))
    print(f"{'system':36} {'chrF':>6} {'paras':>5} {'same':>5} {'echo':>5} "
          f"{'in tok':>7} {'out tok':>7} {'req':>4} {'s':>6}")
    out = []
    for name, text, stats, seconds in rows:
        value = chrf.corpus_score([" ".join(text)], [[reference]]).score
        same, echoed = misbehaviour(source, text) if stats is not None or "booktr" in name else ("-", "-")
        shown = stats or {}
        print(f"{name:36} {value:6.1f} {len(text):5} {same!s:>5} {echoed!s:>5} "
              f"{shown.get('inputTokens', '-')!s:>7} {shown.get('outputTokens', '-')!s:>7} "
              f"{shown.get('requests', '-')!s:>4} {seconds if seconds is not None else '-'!s:>6}")
        out.append((name, value, stats))
    print(f"booktr: {report['seconds']:.0f} s in all, {report['requests']} requests, "
          f"flagged {report['flaggedBlocks']} blocks {report['flagged']}, "
          f"changed by the review {report['changed']['review']}, by the polish "
          f"{report['changed']['polish']}, sent to them {report.get('sent')}, "
          f"repaired {report['repaired']}, translated twice {report.get('secondOpinion')}, "
          f"{report['inTarget']} of {report['judged']} judged blocks in the target language")
    return out


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


def confidence_pairs(work, run, chrf):
    """(confidence, chrF, source length) of each paragraph of one seed's book, where the
    reference's paragraphs align with the source's."""
    reference = paragraphs((work / "reference.txt").read_text())
    final = run / "passes" / "chapter-1.polish.txt"
    if not final.exists():
        return []
    text = paragraphs(final.read_text())
    source = paragraphs((work / "letter.txt").read_text())
    confidence = json.loads((run / "report.json").read_text()).get("blockConfidence", [])
    if not (len(reference) == len(text) == len(confidence) == len(source)):
        print(f"confidence against chrF: not measured, the paragraphs do not align "
              f"(reference {len(reference)}, booktr {len(text)}, confidences {len(confidence)})")
        return []
    return [(c, chrf.sentence_score(t, [r]).score, len(s))
            for c, t, r, s in zip(confidence, text, reference, source) if c is not None]


def confidence_against_chrf(scored):
    """Each paragraph's chrF against booktr's confidence in it, over every seed's paragraphs."""
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
        print(f"confidence against per-paragraph chrF, paragraphs {label} ({len(pairs)} over the "
              f"seeds): Spearman {shown}; the review queue's first {tenth} hold {held} of the "
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
