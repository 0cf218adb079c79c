"""Write the small embedded WorldTree-format sample used by mathir's demo and tests.

Every fact, question and explanation was written for mathir; nothing is copied from the
WorldTree corpus or the ARC questions. The content lives in ``scripts/worldtree_sample/``
(``tables.yaml``, ``questions.yaml``, ``lemmas.yaml``); this script only renders the file
formats of the TextGraphs-2019 distribution: a tablestore of TSV tables (``[FILL]`` connective
columns, ``[SKIP]`` comment and UID columns, a trailing tab on every line), a table without
UIDs (``LemmatizerAdditions.tsv``), ``lemmatization-en.txt`` (``lemma<TAB>word``, BOM, CRLF),
and the 18-column question TSVs with the stem and options in ``Question`` and the gold
explanation as ``uid|ROLE`` items. Deterministic; needs the standard library and PyYAML:

    python scripts/make_worldtree_sample.py [--out DIR] [--data DIR]
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from sample_data import (
    TEXT,
    Map,
    SampleDataError,
    check_fields,
    generator_args,
    is_text,
    list_of,
    load_yaml,
    run_cli,
)

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE.parent / "mathir/samples/worldtree"
DATA_DIR = HERE / "worldtree_sample"
TABLES = "annotation/expl-tablestore-sample/tables"
LETTERS = "ABCDE"
SPLITS = ("Train", "Dev", "Test")
HEADER = [
    "questionID",
    "originalQuestionID",
    "totalPossiblePoint",
    "AnswerKey",
    "isMultipleChoiceQuestion",
    "includesDiagram",
    "examName",
    "grade",
    "year",
    "AnswerKey",
    "Question",
    "explanation",
    "notes",
    "explanation annotators",
    "flags",
    "subject",
    "category",
    "fold",
]


def _cell(value: object) -> bool:
    return isinstance(value, str) and not re.search(r"[\t\r\n]", value)


CELLS = list_of(_cell, "cells (text without tabs or newlines; '' for an empty cell)")
PAIR = (lambda v: isinstance(v, list) and len(v) == 2 and all(is_text(x) for x in v), "a pair")


def _mapping_of(check, what: str):
    return (lambda v: isinstance(v, dict) and all(check(x) for x in v.values()), what)


def load(data_dir: Path) -> tuple[Map, list[Map], Map]:
    """Read and check tables.yaml, questions.yaml and lemmas.yaml."""
    path = data_dir / "tables.yaml"
    tables = load_yaml(path)
    if not isinstance(tables, Map) or not tables:
        raise SampleDataError("must map table names to tables", path)
    keys: dict[str, str] = {}
    for name, table in tables.items():
        table = check_fields(
            table,
            {
                "header": CELLS,
                "rows": (lambda v: isinstance(v, dict), "a mapping from fact key to cells"),
            },
            f"table {name}",
            tables,
        )
        for key, cells in table["rows"].items():
            if not CELLS[0](cells) or len(cells) != len(table["header"]):
                raise SampleDataError(
                    f"table {name}: fact {key!r} must list "
                    f"{len(table['header'])} cells, one per header column",
                    path,
                    table["rows"].line,
                )
            if key in keys:
                raise SampleDataError(
                    f"fact key {key!r} also used in table {keys[key]}", path, table["rows"].line
                )
            keys[key] = name

    path = data_dir / "questions.yaml"
    questions = load_yaml(path)
    if not isinstance(questions, list) or not questions:
        raise SampleDataError("must be a non-empty list of questions", path)
    spec = {
        "id": TEXT,
        "split": (lambda v: v in SPLITS, "one of " + ", ".join(SPLITS)),
        "stem": TEXT,
        "options": (
            lambda v: list_of(is_text, "")[0](v) and len(v) <= len(LETTERS),
            f"a list of 1-{len(LETTERS)} options",
        ),
        "answer": (lambda v: v in tuple(LETTERS), "an option letter A-E"),
        "explanation": _mapping_of(is_text, "a mapping from fact key to role"),
        "flags": TEXT,
        "fold": TEXT,
    }
    ids: set[str] = set()
    for q in questions:
        q = check_fields(q, spec, "question", path)
        if q["id"] in ids:
            raise SampleDataError(f"question id {q['id']!r} used twice", path, q.line)
        ids.add(q["id"])
        if LETTERS.index(q["answer"]) >= len(q["options"]):
            raise SampleDataError(
                f"answer {q['answer']} but {len(q['options'])} options", path, q.line
            )
        for key in q["explanation"]:
            if key not in keys:
                raise SampleDataError(f"explanation: no fact {key!r} in tables.yaml", path, q.line)

    path = data_dir / "lemmas.yaml"
    lemmas = check_fields(
        load_yaml(path),
        {
            "lemmatization": list_of(PAIR[0], "[lemma, word] pairs"),
            "lemmatizer_additions": _mapping_of(is_text, "a mapping word -> lemma"),
        },
        "lemmas file",
        path,
    )
    return tables, questions, lemmas


def uid(key: str) -> str:
    """The UID of the fact with key ``key`` (stable: a hash of the key).

    >>> uid("melt-process")
    '2344-ce46-edfb-5f68'
    """
    h = hashlib.sha256(key.encode()).hexdigest()
    return f"{h[0:4]}-{h[4:8]}-{h[8:12]}-{h[12:16]}"


def generate(out: Path, data_dir: Path = DATA_DIR) -> None:
    """Write the sample into ``out`` from the content files in ``data_dir``."""
    tables, questions, lemmas = load(data_dir)
    (out / TABLES).mkdir(parents=True, exist_ok=True)
    keys: dict[str, str] = {}
    index = []
    for name, table in tables.items():
        full = table["header"] + ["[SKIP] COMMENTS", "[SKIP] UID"]
        lines = ["\t".join(full) + "\t"]
        for i, (key, cells) in enumerate(table["rows"].items()):
            u = uid(key)
            # One UID written upper-case, as some real tables do (the scorer lower-cases).
            if key == "heat-energy":
                u = u.upper()
            keys[key] = u.lower()
            lines.append("\t".join(cells + [f"#{i + 1}", u]) + "\t")
        (out / TABLES / f"{name}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        index.append(f"{name}.tsv")
    additions = "".join(f"{w}\t{lemma}\t\n" for w, lemma in lemmas["lemmatizer_additions"].items())
    (out / TABLES / "LemmatizerAdditions.tsv").write_text(
        "WORD\tLEMMA\t\n" + additions, encoding="utf-8"
    )
    (out / TABLES).parent.joinpath("tableindex.txt").write_text(
        "\n".join(index + ["LemmatizerAdditions.tsv"]) + "\n", encoding="utf-8"
    )
    (out / "annotation/lemmatization-en.txt").write_bytes(
        ("\ufeff" + "".join(f"{a}\t{b}\r\n" for a, b in lemmas["lemmatization"])).encode("utf-8")
    )
    (out / "questions").mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        lines = ["\t".join(HEADER)]
        for q in questions:
            if q["split"] != split:
                continue
            qid, options = q["id"], q["options"]
            question = (
                q["stem"] + " " + " ".join(f"({LETTERS[i]}) {o}" for i, o in enumerate(options))
            )
            explanation = " ".join(f"{keys[k]}|{role}" for k, role in q["explanation"].items())
            key = q["answer"]
            lines.append(
                "\t".join(
                    [
                        qid,
                        qid.rsplit("_", 1)[1],
                        "1",
                        key,
                        "1",
                        "0",
                        "mathir sample",
                        "4",
                        "2026",
                        key,
                        question,
                        explanation,
                        "",
                        "",
                        q["flags"],
                        "",
                        split,
                        q["fold"],
                    ]
                )
            )
        (out / f"questions/ARC-Elementary+EXPL-{split}.tsv").write_text(
            "\n".join(lines) + "\n", encoding="utf-8"
        )
    (out / "README.md").write_text(
        "# WorldTree-format sample (written for mathir; not taken from WorldTree or ARC)\n"
        "All facts, questions and explanations were written for mathir; only the formats follow the\n"
        "TextGraphs-2019 distribution.\n"
        f"- `annotation/expl-tablestore-sample/tables/`: {len(tables)} tables, "
        f"{sum(len(t['rows']) for t in tables.values())} facts, and `LemmatizerAdditions.tsv` (no UIDs)\n"
        "- `annotation/lemmatization-en.txt`: `lemma<TAB>word` (BOM, CRLF)\n"
        "- `questions/ARC-Elementary+EXPL-{Train,Dev,Test}.tsv`: 18-column question files with\n"
        "  `uid|ROLE` explanations (one Dev question has none)\n"
        "Regenerate with `python scripts/make_worldtree_sample.py` (deterministic, needs PyYAML; content in `scripts/worldtree_sample/`).\n",
        encoding="utf-8",
    )


def main(argv: list[str] | None = None) -> None:
    args = generator_args(__doc__, OUT_DIR, DATA_DIR, argv)
    run_cli(lambda: generate(args.out, args.data))


if __name__ == "__main__":
    main()
