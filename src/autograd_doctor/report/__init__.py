"""The renderers of the diagnosis model (`autograd_doctor.diagnosis.model`): text, JSON,
graph pictures, HTML.

Importing the package connects the renderers to the model, so `str(diagnosis)` and
`diagnosis.graph()` work while the model itself imports no renderer (it sits a layer below).
"""

from autograd_doctor.diagnosis import model as _model
from autograd_doctor.report import graph as _graph
from autograd_doctor.report import text as _text

_model.register_renderer("text", _text.render_diagnosis)
_model.register_renderer("picture", _graph.picture_for)
