"""The bi- and cross-encoders' CPU backends: which backends there are (``backends``),
exporting a model to ONNX or OpenVINO, int8 included (``export``, calibrated by
``calibration``), tokenising in worker processes (``tokenizing``), running an export
(``runtime``) and the bi-encoder the pipelines and dense indexes use (``bi_encoder``).

Nothing is imported here: ``import mathir.neural`` stays cheap.
"""
