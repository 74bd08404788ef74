"""The report model (`model`) and its renderers: text, JSON, graph pictures, HTML.

Importing the package connects the renderers to the model, so `str(diagnosis)` and
`diagnosis.graph()` work while `model` itself imports no renderer (no import cycle).
"""

from autograd_doctor.report import graph as _graph
from autograd_doctor.report import model as _model
from autograd_doctor.report import text as _text

_model.register_renderer("text", _text.render_diagnosis)
_model.register_renderer("picture", _graph.picture_for)
