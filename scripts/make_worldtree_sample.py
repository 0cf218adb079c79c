"""Write the small embedded WorldTree-format sample used by mathir's demo and tests.

Every fact, question and explanation below was written for mathir; nothing is copied
from the WorldTree corpus or the ARC questions. Only the file formats follow the
TextGraphs-2019 distribution: a tablestore of TSV tables (``[FILL]`` connective columns,
``[SKIP]`` comment and UID columns, a trailing tab on every line), a table without UIDs
(``LemmatizerAdditions.tsv``), ``lemmatization-en.txt`` (``lemma<TAB>word``, BOM, CRLF),
and the 18-column question TSVs with the stem and options in ``Question`` and the gold
explanation as ``uid|ROLE`` items.

    python scripts/make_worldtree_sample.py
"""

from __future__ import annotations

import hashlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "mathir/samples/worldtree"
TABLES = OUT / "annotation/expl-tablestore-sample/tables"

# table name -> (header, rows); a row lists the header's cells before the [SKIP] ones,
# its key (used by the questions below) comes first.
T = {
    "KINDOF": (["[FILL] a/the", "HYPONYM", "[FILL] is a kind of", "SCOPE", "HYPERNYM"], [
        ("melt-process", ["", "melting", "is a kind of", "", "process"]),
        ("evap-process", ["", "evaporation", "is a kind of", "", "process"]),
        ("icecube-solid", ["an", "ice cube", "is a kind of", "", "solid"]),
        ("water-liquid", ["", "water", "is a kind of", "", "liquid"]),
        ("steam-gas", ["", "steam", "is a kind of", "", "gas"]),
        ("sun-star", ["the", "sun", "is a kind of", "", "star"]),
        ("dog-animal", ["a", "dog", "is a kind of", "", "animal"]),
        ("animal-organism", ["an", "animal", "is a kind of", "", "organism"]),
        ("plant-organism", ["a", "plant", "is a kind of", "", "organism"]),
        ("apple-fruit", ["an", "apple", "is a kind of", "", "fruit"]),
        ("fruit-food", ["a", "fruit", "is a kind of", "", "food"]),
        ("iron-metal", ["", "iron", "is a kind of", "", "metal"]),
        ("nail-object", ["a", "nail", "is a kind of", "", "object"]),
        ("magnet-object", ["a", "magnet", "is a kind of", "", "object"]),
        ("thermometer-tool", ["a", "thermometer", "is a kind of", "measuring", "tool"]),
        ("ruler-tool", ["a", "ruler", "is a kind of", "measuring", "tool"]),
        ("rain-precip", ["", "rain", "is a kind of", "", "precipitation"]),
        ("oak-tree", ["an", "oak", "is a kind of", "", "tree"]),
        ("tree-plant", ["a", "tree", "is a kind of", "", "plant"]),
        ("wood-material", ["", "wood", "is a kind of", "", "material"]),
        ("copper-metal", ["", "copper", "is a kind of", "", "metal"]),
        ("wool-material", ["", "wool", "is a kind of", "natural", "material"]),
        ("rabbit-herbivore", ["a", "rabbit", "is a kind of", "", "herbivore"]),
        ("herbivore-consumer", ["a", "herbivore", "is a kind of", "", "consumer"]),
    ]),
    "SYNONYMY": (["X", "[FILL] means", "Y"], [
        ("heat-energy", ["heat", "means", "heat energy"]),
        ("sunlight-light", ["sunlight", "means", "light from the sun"]),
        ("insun-sunlight", ["to be in the sun", "means", "to be in the sunlight"]),
        ("warm-heat", ["warming", "means", "adding heat"]),
        ("grow-size", ["growing", "means", "increasing in size"]),
        ("eat-consume", ["eating", "means", "consuming food"]),
        ("vapor-gas", ["water vapor", "means", "water in the gas state"]),
    ]),
    "CHANGE": (["ACTION", "[FILL] means", "[FILL] changing", "[FILL] from", "FROM", "[FILL] into", "TO",
                "[FILL] by", "HOW"], [
        ("melting-def", ["melting", "means", "changing", "from", "a solid", "into", "a liquid", "by",
                         "adding heat energy"]),
        ("freezing-def", ["freezing", "means", "changing", "from", "a liquid", "into", "a solid", "by",
                          "removing heat energy"]),
        ("evap-def", ["evaporation", "means", "changing", "from", "a liquid", "into", "a gas", "by",
                      "adding heat energy"]),
        ("condense-def", ["condensation", "means", "changing", "from", "a gas", "into", "a liquid",
                          "by", "removing heat energy"]),
    ]),
    "PROTO-IF-THEN": (["[FILL] if", "CONDITION", "[FILL] then", "CONSEQUENCE"], [
        ("absorb-temp", ["if", "an object absorbs heat energy", "then", "that object will increase in temperature"]),
        ("sun-absorb", ["if", "an object is in the sunlight", "then", "that object will absorb heat energy"]),
        ("temp-melt", ["if", "the temperature of a solid rises above its melting point", "then",
                       "that solid will melt"]),
        ("cold-freeze", ["if", "liquid water is cooled below 0 C", "then", "that water will freeze"]),
        ("noeat-die", ["if", "an animal does not eat food", "then", "that animal will starve"]),
        ("nolight-plant", ["if", "a plant does not receive sunlight", "then", "that plant will die"]),
    ]),
    "SOURCEOF": (["X", "[FILL] is a source of", "Y"], [
        ("sun-light", ["the sun", "is a source of", "light ; light energy"]),
        ("sun-heat", ["the sun", "is a source of", "heat energy"]),
        ("food-energy", ["food", "is a source of", "energy for animals"]),
        ("plant-oxygen", ["a plant", "is a source of", "oxygen"]),
    ]),
    "USEDFOR": (["X", "[FILL] is used for", "Y"], [
        ("thermo-temp", ["a thermometer", "is used for", "measuring temperature"]),
        ("ruler-length", ["a ruler", "is used for", "measuring length"]),
        ("magnet-pick", ["a magnet", "is used for", "picking up iron objects"]),
        ("leaf-food", ["a leaf", "is used for", "making food by a plant"]),
        ("root-water", ["a root", "is used for", "absorbing water from the soil by a plant"]),
    ]),
    "PROPERTIES-GENERIC": (["X", "[FILL] is", "PROPERTY"], [
        ("magnet-attract", ["a magnet", "attracts", "magnetic metals"]),
        ("iron-magnetic", ["iron", "is", "magnetic"]),
        ("copper-nonmag", ["copper", "is", "nonmagnetic"]),
        ("wood-nonmag", ["wood", "is", "nonmagnetic"]),
        ("metal-conduct", ["metal", "is", "an electrical conductor"]),
        ("wool-insulate", ["wool", "is", "a thermal insulator"]),
    ]),
    "REQUIRES": (["X", "[FILL] requires", "Y", "[FILL] for", "PURPOSE"], [
        ("plant-sunlight", ["a plant", "requires", "sunlight", "for", "photosynthesis"]),
        ("plant-water", ["a plant", "requires", "water", "for", "survival"]),
        ("animal-food", ["an animal", "requires", "food", "for", "survival"]),
        ("photosyn-light", ["photosynthesis", "requires", "light energy", "", ""]),
    ]),
    "CAUSE": (["CAUSE", "[FILL] causes", "EFFECT"], [
        ("heat-evap", ["heat from the sun", "causes", "water to evaporate"]),
        ("rain-flood", ["heavy rain", "causes", "flooding"]),
        ("friction-heat", ["rubbing two objects together", "causes", "friction and heat"]),
        ("gravity-fall", ["gravity", "causes", "objects to fall toward the ground"]),
    ]),
    "PROTO-ACTION": (["AGENT", "ACTION", "OBJECT"], [
        ("consumer-eat", ["consumers", "eat", "other organisms for food"]),
        ("producer-make", ["producers", "make", "their own food using sunlight"]),
        ("herbivore-plants", ["herbivores", "eat", "only plants"]),
    ]),
}

# The questions: (split, qid, stem, options, answer index, [(fact key, ROLE)], flags, fold)
Q = [
    ("Dev", "WT_DEV_01", "An ice cube is left on a plate in the sun. Soon only water is on the plate. "
     "Which process changed the ice cube into water?", ["condensation", "evaporation", "freezing", "melting"], 3,
     [("melting-def", "CENTRAL"), ("icecube-solid", "GROUNDING"), ("water-liquid", "GROUNDING"),
      ("melt-process", "CENTRAL"), ("sun-absorb", "CENTRAL"), ("insun-sunlight", "LEXGLUE"),
      ("heat-energy", "LEXGLUE")], "SUCCESS", "Easy"),
    ("Dev", "WT_DEV_02", "A puddle of water dries up on a hot sunny day. Where did most of the water go?",
     ["into the ground as ice", "into the air as water vapor", "into the clouds as snow", "into the sun"], 1,
     [("evap-def", "CENTRAL"), ("heat-evap", "CENTRAL"), ("vapor-gas", "LEXGLUE"), ("water-liquid", "GROUNDING"),
      ("evap-process", "BACKGROUND")], "SUCCESS", "Challenge"),
    ("Dev", "WT_DEV_03", "Which object would a magnet pick up?", ["a wooden spoon", "an iron nail",
                                                                   "a copper coin", "a wool sock"], 1,
     [("magnet-attract", "CENTRAL"), ("iron-magnetic", "CENTRAL"), ("nail-object", "GROUNDING"),
      ("iron-metal", "GROUNDING"), ("magnet-pick", "CENTRAL")], "SUCCESS", "Easy"),
    ("Dev", "WT_DEV_04", "Which tool should a student use to find out how warm the water in a pond is?",
     ["a ruler", "a magnet", "a thermometer", "a hand lens"], 2,
     [("thermo-temp", "CENTRAL"), ("thermometer-tool", "GROUNDING"), ("warm-heat", "LEXGLUE")],
     "SUCCESS", "Easy"),
    ("Dev", "WT_DEV_05", "A plant is kept in a dark closet for many weeks. What will most likely happen to the plant?",
     ["it will grow taller", "it will die", "it will make more flowers", "it will turn into a tree"], 1,
     [("nolight-plant", "CENTRAL"), ("plant-sunlight", "CENTRAL"), ("photosyn-light", "LEXGLUE"),
      ("plant-organism", "BACKGROUND")], "SUCCESS", "Easy"),
    ("Dev", "WT_DEV_06", "A girl eats an apple. This is an example of an organism",
     ["taking in nutrients", "making its own food", "giving off heat", "changing state"], 0,
     [("apple-fruit", "GROUNDING"), ("fruit-food", "GROUNDING"), ("eat-consume", "CENTRAL"),
      ("food-energy", "CENTRAL"), ("animal-organism", "LEXGLUE")], "SUCCESS", "Challenge"),
    ("Dev", "WT_DEV_07", "Which question cannot be answered with an explanation from the tables?",
     ["yes", "no"], 0, [], "HARD", "Challenge"),
    ("Train", "WT_TRAIN_01", "Water in a pot is heated on a stove until it boils. The water becomes",
     ["a solid", "a gas", "a metal", "a plant"], 1,
     [("evap-def", "CENTRAL"), ("steam-gas", "GROUNDING"), ("vapor-gas", "LEXGLUE"),
      ("water-liquid", "GROUNDING")], "SUCCESS", "Easy"),
    ("Train", "WT_TRAIN_02", "A bowl of water is put in a freezer overnight. In the morning the water is",
     ["a gas", "a solid", "warmer", "gone"], 1,
     [("freezing-def", "CENTRAL"), ("cold-freeze", "CENTRAL"), ("water-liquid", "GROUNDING")], "SUCCESS", "Easy"),
    ("Train", "WT_TRAIN_03", "Which material is attracted to a magnet?", ["wood", "copper", "iron", "wool"], 2,
     [("magnet-attract", "CENTRAL"), ("iron-magnetic", "CENTRAL"), ("iron-metal", "GROUNDING")],
     "SUCCESS", "Easy"),
    ("Train", "WT_TRAIN_04", "A rabbit eats grass and clover. The rabbit is best described as a",
     ["producer", "consumer", "decomposer", "mineral"], 1,
     [("rabbit-herbivore", "GROUNDING"), ("herbivore-consumer", "CENTRAL"), ("herbivore-plants", "CENTRAL"),
      ("consumer-eat", "CENTRAL")], "SUCCESS", "Challenge"),
    ("Train", "WT_TRAIN_05", "Which tool measures the length of a leaf?", ["a thermometer", "a ruler",
                                                                            "a magnet", "a scale"], 1,
     [("ruler-length", "CENTRAL"), ("ruler-tool", "GROUNDING")], "SUCCESS", "Easy"),
    ("Train", "WT_TRAIN_06", "What does a plant use its leaves for?", ["making food", "absorbing water",
                                                                        "holding the soil"], 0,
     [("leaf-food", "CENTRAL"), ("producer-make", "CENTRAL"), ("photosyn-light", "LEXGLUE")], "SUCCESS", "Easy"),
    ("Test", "WT_TEST_01", "Snow on a roof turns to water on a warm day. Which process is this?",
     ["melting", "freezing", "condensation", "evaporation"], 0,
     [("melting-def", "CENTRAL"), ("melt-process", "CENTRAL"), ("temp-melt", "CENTRAL"),
      ("warm-heat", "LEXGLUE")], "SUCCESS", "Easy"),
    ("Test", "WT_TEST_02", "Where does the energy in food for animals come from first?",
     ["the soil", "the sun", "the wind", "the moon"], 1,
     [("producer-make", "CENTRAL"), ("sun-light", "CENTRAL"), ("food-energy", "CENTRAL"),
      ("sunlight-light", "LEXGLUE")], "SUCCESS", "Challenge"),
    ("Test", "WT_TEST_03", "A dog that does not eat food for a long time will", ["grow", "starve",
                                                                                "melt", "fly"], 1,
     [("noeat-die", "CENTRAL"), ("dog-animal", "GROUNDING"), ("animal-food", "CENTRAL")], "SUCCESS", "Easy"),
    ("Test", "WT_TEST_04", "Which part of a plant takes in water from the soil?", ["the flower", "the root",
                                                                                  "the leaf", "the seed"], 1,
     [("root-water", "CENTRAL"), ("plant-water", "BACKGROUND")], "SUCCESS", "Easy"),
]

HEADER = ["questionID", "originalQuestionID", "totalPossiblePoint", "AnswerKey", "isMultipleChoiceQuestion",
          "includesDiagram", "examName", "grade", "year", "AnswerKey", "Question", "explanation", "notes",
          "explanation annotators", "flags", "subject", "category", "fold"]


def uid(key: str) -> str:
    h = hashlib.sha256(key.encode()).hexdigest()
    return f"{h[0:4]}-{h[4:8]}-{h[8:12]}-{h[12:16]}"


def main() -> None:
    TABLES.mkdir(parents=True, exist_ok=True)
    keys: dict[str, str] = {}
    index = []
    for name, (header, rows) in T.items():
        full = header + ["[SKIP] COMMENTS", "[SKIP] UID"]
        lines = ["\t".join(full) + "\t"]
        for i, (key, cells) in enumerate(rows):
            assert len(cells) == len(header), (name, key)
            u = uid(key)
            # One UID written upper-case, as some real tables do (the scorer lower-cases).
            if key == "heat-energy":
                u = u.upper()
            keys[key] = u.lower()
            lines.append("\t".join(cells + [f"#{i + 1}", u]) + "\t")
        (TABLES / f"{name}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        index.append(f"{name}.tsv")
    (TABLES / "LemmatizerAdditions.tsv").write_text("WORD\tLEMMA\t\nicecubes\ticecube\t\n", encoding="utf-8")
    (TABLES.parent / "tableindex.txt").write_text("\n".join(index + ["LemmatizerAdditions.tsv"]) + "\n",
                                                   encoding="utf-8")
    lemmas = [("melt", "melting"), ("melt", "melts"), ("melt", "melted"), ("evaporate", "evaporation"),
              ("be", "is"), ("be", "was"), ("warm", "warming"), ("warm", "warmer"), ("eat", "eats"),
              ("eat", "eating"), ("plant", "plants"), ("animal", "animals"), ("magnet", "magnetic"),
              ("measure", "measures"), ("measure", "measuring"), ("grow", "growing"), ("leaf", "leaves"),
              ("sun", "sunny"), ("freeze", "freezing"), ("freeze", "freezer"), ("water", "waters")]
    (OUT / "annotation").mkdir(parents=True, exist_ok=True)
    (OUT / "annotation/lemmatization-en.txt").write_bytes(
        ("\ufeff" + "".join(f"{a}\t{b}\r\n" for a, b in lemmas)).encode("utf-8"))
    (OUT / "questions").mkdir(parents=True, exist_ok=True)
    for split in ("Train", "Dev", "Test"):
        lines = ["\t".join(HEADER)]
        for s, qid, stem, options, answer, expl, flags, fold in Q:
            if s != split:
                continue
            letters = "ABCDE"
            question = stem + " " + " ".join(f"({letters[i]}) {o}" for i, o in enumerate(options))
            explanation = " ".join(f"{keys[k]}|{role}" for k, role in expl)
            key = letters[answer]
            lines.append("\t".join([qid, qid.rsplit("_", 1)[1], "1", key, "1", "0", "mathir sample", "4",
                                    "2026", key, question, explanation, "", "", flags, "", split, fold]))
        (OUT / f"questions/ARC-Elementary+EXPL-{split}.tsv").write_text("\n".join(lines) + "\n",
                                                                       encoding="utf-8")
    (OUT / "README.md").write_text(
        "# WorldTree-format sample (written for mathir; not taken from WorldTree or ARC)\n"
        "All facts, questions and explanations were written for mathir; only the formats follow the\n"
        "TextGraphs-2019 distribution.\n"
        f"- `annotation/expl-tablestore-sample/tables/`: {len(T)} tables, "
        f"{sum(len(r) for _, r in T.values())} facts, and `LemmatizerAdditions.tsv` (no UIDs)\n"
        "- `annotation/lemmatization-en.txt`: `lemma<TAB>word` (BOM, CRLF)\n"
        "- `questions/ARC-Elementary+EXPL-{Train,Dev,Test}.tsv`: 18-column question files with\n"
        "  `uid|ROLE` explanations (one Dev question has none)\n"
        "Regenerate with `python scripts/make_worldtree_sample.py` (deterministic, stdlib only).\n",
        encoding="utf-8")


if __name__ == "__main__":
    main()
