"""Former home of the annotation rows and their files; they live in :mod:`timingbench.annotation_io`.

Re-exports the names that modules outside the annotation tooling still import from here
(``calibration.evaluate``, ``commands.calibration_cmd``, the fuzz regression tests).
New code imports :mod:`timingbench.annotation_io`.
"""

from __future__ import annotations

from timingbench.annotation_io import (
    AnnotationSet,
    Layer1Row,
    import_audacity_labels,
    import_sonic_visualiser_csv,
    load_annotations,
)

__all__ = ["AnnotationSet", "Layer1Row", "import_audacity_labels", "import_sonic_visualiser_csv",
           "load_annotations"]
