"""Regenerate mathir/samples/word_problems/ (problems written for mathir).

Each problem's text marks aligned numbers as ``[slot:token]`` and numbers that are
interchangeable with an aligned one (EquivTNum) as ``[=slot:token]``; the script
computes SentenceId/TokenId the way the DRAW release does and solves the template.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mathir.answers.templates import Template
from mathir.indexing.word_problems import sentences, token_value

OUT = Path(__file__).resolve().parents[1] / "mathir" / "samples" / "word_problems"
TICKETS = ["a * m + b * n = c", "m + n = d"]
SUM_DIFF = ["m + n = a", "m - n = b"]
MORE_THAN = ["m = b * n + a", "m + n = c"]
STREAM = ["b * m + b * n = a", "c * m - c * n = a"]
COINS = ["m + n = a", "b * m + c * n = d"]
MIXTURE = ["a * m + b * n = c * d", "m + n = d"]

PROBLEMS = [  # (id, split, template, marked text, equations as a person wrote them)
    ("9001", "train", TICKETS, "Tickets for a play cost [a:9] dollars for adults and [b:4] dollars "
     "for children . A total of [d:50] tickets were sold for [c:300] dollars . How many adult "
     "tickets were sold ?", ["9*x+4*y=300", "x+y=50"]),
    ("9002", "train", SUM_DIFF, "The sum of two numbers is [a:40] . Their difference is [b:12] . "
     "Find the numbers .", ["x+y=40", "x-y=12"]),
    ("9003", "train", MORE_THAN, "One number is [a:5] more than [b:twice] another number . Their "
     "sum is [c:35] . Find the numbers .", ["x=2*y+5", "x+y=35"]),
    ("9004", "train", STREAM, "A boat goes [a:36] miles downstream in [b:3] hours and returns "
     "upstream in [c:4] hours . Find the speed of the boat in still water and the speed of the "
     "current .", ["3*(x+y)=36", "4*(x-y)=36"]),
    ("9005", "train", COINS, "A jar has [a:30] coins in [b:dimes] and [c:nickels] worth [d:2.10] "
     "dollars . How many dimes are there ?", ["x+y=30", "0.10*x+0.05*y=2.10"]),
    ("9006", "train", TICKETS, "Pens cost [a:3] dollars each and notebooks cost [b:5] dollars each "
     ". Sam bought [d:14] items for [c:54] dollars . How many pens did he buy ?",
     ["3*x+5*y=54", "x+y=14"]),
    ("9007", "train", SUM_DIFF, "The sum of two numbers is [a:58] and their difference is [b:20] . "
     "What are the numbers ?", ["x+y=58", "x-y=20"]),
    ("9008", "train", MORE_THAN, "A number is [a:7] more than [b:three] times another number . The "
     "sum of the numbers is [c:47] . Find them .", ["x=3*y+7", "x+y=47"]),
    ("9009", "train", MIXTURE, "A chemist mixes a [a:50] % solution with a [b:20] % solution to get "
     "[d:60] liters of a [c:30] % solution . How many liters of the [=a:50] % solution are used ?",
     ["50*x+20*y=30*60", "x+y=60"]),
    ("9101", "test", TICKETS, "Adult tickets cost [a:6] dollars and student tickets cost [b:2] "
     "dollars . [d:40] tickets were sold for [c:160] dollars . How many of each were sold ?",
     ["6*x+2*y=160", "x+y=40"]),
    ("9102", "test", SUM_DIFF, "The sum of two numbers is [a:30] and their difference is [b:8] . "
     "Find the numbers .", ["x+y=30", "x-y=8"]),
    ("9103", "test", MORE_THAN, "One number is [a:3] more than [b:twice] another . Their sum is "
     "[c:27] . Find the numbers .", ["x=2*y+3", "x+y=27"]),
    ("9104", "test", COINS, "A box has [a:25] coins in [b:dimes] and [c:nickels] worth [d:1.80] "
     "dollars . How many nickels are there ?", ["x+y=25", "0.10*x+0.05*y=1.80"]),
    ("9105", "test", MIXTURE, "We mix a solution of [a:30] % acid with a solution of [b:10] % acid "
     ". How many liters of the [=a:30] % and the [=b:10] % solution make [d:40] liters of a [c:25] "
     "% solution ?", ["30*x+10*y=25*40", "x+y=40"]),
]

MARK = re.compile(r"\[(=?)(\w):([^\]]+)\]")


def build(pid, template, marked, equations):
    plain = MARK.sub(lambda m: m.group(3), marked)
    flat = [(s, i) for s, sent in enumerate(sentences(plain)) for i, _ in enumerate(sent)]
    toks = plain.split()
    alignment, equiv = [], {}
    k = 0
    for tok_index, tok in enumerate(marked.split()):
        m = MARK.fullmatch(tok)
        if m:
            s, i = flat[tok_index]
            value = token_value(m.group(3))
            assert value is not None and toks[tok_index] == m.group(3), tok
            if m.group(1):
                equiv.setdefault(m.group(2), []).append([s, i, value])
            else:
                alignment.append({"coeff": m.group(2), "SentenceId": s, "TokenId": i,
                                  "Value": value})
        k += 1
    for a in alignment:
        if a["coeff"] in equiv:
            equiv[a["coeff"]].insert(0, [a["SentenceId"], a["TokenId"], a["Value"]])
    t = Template(template)
    solution = t.solve({a["coeff"]: a["Value"] for a in alignment})
    return {"sQuestion": plain, "lSolutions": [round(float(x), 6) for x in solution],
            "Template": template, "lEquations": equations, "iIndex": int(pid),
            "Alignment": alignment, "Equiv": list(equiv.values())}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    records = [build(pid, t, text, eqs) for pid, _, t, text, eqs in PROBLEMS]
    (OUT / "draw.json").write_text(json.dumps(records, indent=1) + "\n")
    for split in ("train", "test"):
        ids = [pid for pid, s, *_ in PROBLEMS if s == split]
        (OUT / f"draw-{split}.txt").write_text("".join(f"{i}\r\n" for i in ids))


if __name__ == "__main__":
    main()
