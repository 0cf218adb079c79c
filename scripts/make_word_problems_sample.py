"""Regenerate mathir/samples/word_problems/ (problems written for mathir).

The problems live in ``scripts/word_problems_sample/problems.yaml``. Each problem's text marks
aligned numbers as ``[slot:token]`` and numbers that are interchangeable with an aligned one
(EquivTNum) as ``[=slot:token]``; the script computes SentenceId/TokenId the way the DRAW
release does and solves the template. Needs mathir (tokenizer, template solver) and PyYAML:

    python scripts/make_word_problems_sample.py [--out DIR] [--data DIR]
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sample_data import (
    SampleDataError,
    check_fields,
    generator_args,
    is_text,
    list_of,
    load_yaml,
    run_cli,
)

from mathir.answer_checking.templates import Template
from mathir.readers.word_problems import sentences, token_value

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE.parent / "mathir" / "samples" / "word_problems"
DATA_DIR = HERE / "word_problems_sample"
MARK = re.compile(r"\[(=?)(\w):([^\]]+)\]")
EQUATIONS = list_of(is_text, "equations")


def load(data_dir: Path) -> tuple[dict, list]:
    """Read and check problems.yaml: (templates, problems)."""
    path = data_dir / "problems.yaml"
    doc = check_fields(
        load_yaml(path),
        {
            "templates": (lambda v: isinstance(v, dict), "a mapping"),
            "problems": list_of(lambda v: True, "problems"),
        },
        "problems file",
        path,
    )
    for name, equations in doc["templates"].items():
        if not EQUATIONS[0](equations):
            raise SampleDataError(
                f"template {name}: must be {EQUATIONS[1]}", path, doc["templates"].line
            )
    spec = {
        "id": (lambda v: type(v) is int, "an integer"),
        "split": (lambda v: v in ("train", "test"), "train or test"),
        "template": (lambda v: isinstance(v, str) and v in doc["templates"], "a template name"),
        "text": (lambda v: is_text(v) and "\n" not in v, "text on one line (use >- to fold)"),
        "equations": EQUATIONS,
    }
    for problem in doc["problems"]:
        check_fields(problem, spec, "problem", path)
    return doc["templates"], doc["problems"]


def build(pid: int, template: list[str], marked: str, equations: list[str]) -> dict:
    """One draw.json record from a marked problem text."""
    plain = MARK.sub(lambda m: m.group(3), marked)
    flat = [(s, i) for s, sent in enumerate(sentences(plain)) for i, _ in enumerate(sent)]
    toks = plain.split()
    alignment, equiv = [], {}
    for tok_index, tok in enumerate(marked.split()):
        m = MARK.fullmatch(tok)
        if m:
            s, i = flat[tok_index]
            value = token_value(m.group(3))
            assert value is not None and toks[tok_index] == m.group(3), tok
            if m.group(1):
                equiv.setdefault(m.group(2), []).append([s, i, value])
            else:
                alignment.append(
                    {"coeff": m.group(2), "SentenceId": s, "TokenId": i, "Value": value}
                )
    for a in alignment:
        if a["coeff"] in equiv:
            equiv[a["coeff"]].insert(0, [a["SentenceId"], a["TokenId"], a["Value"]])
    solution = Template(template).solve({a["coeff"]: a["Value"] for a in alignment})
    return {
        "sQuestion": plain,
        "lSolutions": [round(float(x), 6) for x in solution],
        "Template": template,
        "lEquations": equations,
        "iIndex": pid,
        "Alignment": alignment,
        "Equiv": list(equiv.values()),
    }


def generate(out: Path, data_dir: Path = DATA_DIR) -> None:
    """Write draw.json and the split files into ``out`` (README.md there is hand-written)."""
    templates, problems = load(data_dir)
    out.mkdir(parents=True, exist_ok=True)
    records = [
        build(p["id"], templates[p["template"]], p["text"], p["equations"]) for p in problems
    ]
    (out / "draw.json").write_text(json.dumps(records, indent=1) + "\n")
    for split in ("train", "test"):
        ids = [p["id"] for p in problems if p["split"] == split]
        (out / f"draw-{split}.txt").write_text("".join(f"{i}\r\n" for i in ids))


def main(argv: list[str] | None = None) -> None:
    args = generator_args(__doc__, OUT_DIR, DATA_DIR, argv)
    run_cli(lambda: generate(args.out, args.data))


if __name__ == "__main__":
    main()
