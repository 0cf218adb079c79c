"""mathir.report.charts: WorldTree's MAP by explanation length, names drawn as given."""

import pandas as pd

from mathir.report.charts import plot_map_by_length


def test_map_by_length_histogram_draws_names_as_given(tmp_path):
    t = pd.DataFrame({"qid": ["1", "2", "3"], "length": [2, 2, 5], "MAP": [0.5, 1.0, 0.2]})
    # "$x^{$" would be an unbalanced mathtext expression: drawn as text, it is no error
    png = plot_map_by_length({"a": t, "b $x^{$": t.assign(MAP=0.1)}, tmp_path / "h.png",
                             title="MAP by length of $x^{$")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
