"""Readers of the collections' files, in one place: each streams its format and keeps
memory bounded, and none knows what reads it.

* :mod:`~mathir.readers.mse_posts`: the Math StackExchange ``Posts.V1.3.xml`` dump;
* :mod:`~mathir.readers.thread_html`: ARQMath thread HTML files (``threads_all``);
* :mod:`~mathir.readers.formula_tsv`: ARQMath's formula index TSVs (``latex_representation_v3``);
* :mod:`~mathir.readers.html_text`: the text of a post's HTML body;
* :mod:`~mathir.readers.word_problems`: the DRAW-1K / Alg-514 / Dolphin-L JSON releases;
* :mod:`~mathir.readers.tabular`: tab-separated files as trec_eval and the official
  scripts read them (BOMs, CRLF, quoting);
* :mod:`~mathir.readers.safe_xml`: XML without entity expansion or network access;
* :mod:`~mathir.readers.json_input`: JSON with errors that name the file and line.
"""
