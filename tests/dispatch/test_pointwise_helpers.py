"""The scalar-helper vocabulary of ops.yaml pointwise expressions (dispatch/pointwise_helpers.py):
both backends implement every helper, every declared expression uses only them, and the
registration names the op and the call when an expression steps outside."""
import ast

import pytest

from tensorlib.dispatch import pointwise_helpers
from tensorlib.dispatch.registration import POINTWISE, YamlError, _parse_entry


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_each_backend_implements_the_whole_vocabulary(backend):
    import importlib
    mod = importlib.import_module(f"tensorlib.kernels.{backend}.scalar_math")
    missing = sorted(n for n in pointwise_helpers.NAMES
                     if n not in mod.__all__ or not callable(getattr(mod, n, None)))
    assert not missing, f"kernels/{backend}/scalar_math lacks {missing}"


def test_declared_expressions_call_only_the_vocabulary():
    assert POINTWISE, "ops.yaml declared no pointwise op"
    for name, info in POINTWISE.items():
        calls = {n.func.id for n in ast.walk(ast.parse(info.expr, mode="eval"))
                 if isinstance(n, ast.Call)}
        assert calls <= pointwise_helpers.NAMES, (name, calls - pointwise_helpers.NAMES)


def test_groups_do_not_repeat_a_name():
    names = [n for group in pointwise_helpers.HELPERS.values() for n in group]
    assert len(names) == len(set(names)) == len(pointwise_helpers.NAMES)


_SCHEMA = "frob.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"


@pytest.mark.parametrize("expr,match", [
    ("np.exp(self)", r"frob.*calls 'np\.exp'.*not a scalar helper"),
    ("frobnicate(self, 2)", r"frob.*calls 'frobnicate'"),
    ("exp(self", r"frob.*does not parse"),
])
def test_an_expression_outside_the_vocabulary_is_refused(expr, match):
    with pytest.raises(YamlError, match=match):
        _parse_entry({"func": _SCHEMA, "structured": True, "pointwise": expr}, "ops.yaml[0]")


def test_an_expression_inside_the_vocabulary_is_accepted():
    entry = _parse_entry({"func": _SCHEMA, "structured": True,
                          "pointwise": "true_div(exp(self), 1.0 + self * 2)"}, "ops.yaml[0]")
    assert entry.pointwise.expr == "true_div(exp(self), 1.0 + self * 2)"


def test_block_forms_use_the_cpu_block_helpers():
    """block_fast forms (ops.yaml) call the vocabulary plus the CPU's block helpers, which
    kernels/cpu/scalar_math/ implements; the plain expressions never call a block helper
    (the CUDA backend has none)."""
    import tensorlib.kernels.cpu.scalar_math as cpu
    assert pointwise_helpers.BLOCK_HELPERS <= set(cpu.__all__)
    assert not pointwise_helpers.BLOCK_HELPERS & pointwise_helpers.NAMES
    forms = {name: info for name, info in POINTWISE.items() if info.block_forms}
    assert {"sin", "cos", "tan", "pow", "log", "log2", "log10"} <= set(forms)
    assert len(forms["pow"].block_forms) == 2  # (a list in ops.yaml: tried in its order)
    allowed = pointwise_helpers.NAMES | pointwise_helpers.BLOCK_HELPERS
    for name, info in forms.items():
        for expr in (e for form in info.block_forms for e in form):
            calls = {n.func.id for n in ast.walk(ast.parse(expr, mode="eval"))
                     if isinstance(n, ast.Call)}
            assert calls <= allowed, (name, calls - allowed)


@pytest.mark.parametrize("block,match", [
    ({"when": "trig_short(self)"}, r"frob.*'block_fast' needs exactly 'when' and 'pointwise'"),
    ("sin_short(self)", r"frob.*'block_fast' needs exactly"),
    ({"when": "trig_short(self)", "pointwise": "np.sin(self)"},
     r"frob.*'block_fast pointwise' expression 'np.sin\(self\)' calls 'np\.sin'"),
    ([{"when": "trig_short(self)", "pointwise": "sin_short(self)"}, {"when": "trig_short(self)"}],
     r"frob.*'block_fast' needs exactly 'when' and 'pointwise' \(each form of a list\), got "
     r"\{'when'"),
    ([{"when": "trig_short(self)", "pointwise": "sin_short(self)"}, "x"],
     r"frob.*'block_fast' needs exactly.*got 'x'"),
])
def test_a_malformed_block_form_is_refused(block, match):
    with pytest.raises(YamlError, match=match):
        _parse_entry({"func": _SCHEMA, "structured": True, "pointwise": "sin(self)",
                      "block_fast": block}, "ops.yaml[0]")


def test_block_forms_parse_one_or_a_list_in_order():
    one = {"when": "trig_short(self)", "pointwise": "sin_short(self)"}
    two = {"when": "isfinite(self)", "pointwise": "sin(self)"}
    for block, forms in ((one, (("trig_short(self)", "sin_short(self)"),)),
                         ([one, two], (("trig_short(self)", "sin_short(self)"),
                                       ("isfinite(self)", "sin(self)")))):
        entry = _parse_entry({"func": _SCHEMA, "structured": True, "pointwise": "sin(self)",
                              "block_fast": block}, "ops.yaml[0]")
        assert entry.pointwise.block_forms == forms
    entry = _parse_entry({"func": _SCHEMA, "structured": True, "pointwise": "sin(self)"},
                         "ops.yaml[0]")
    assert entry.pointwise.block_forms == ()


def test_a_block_helper_in_the_plain_expression_is_refused():
    with pytest.raises(YamlError, match=r"frob.*calls 'sin_short'.*not a scalar helper"):
        _parse_entry({"func": _SCHEMA, "structured": True, "pointwise": "sin_short(self)"},
                     "ops.yaml[0]")


def test_integer_scalar_min_names_schema_arguments():
    """ops.yaml integer_scalar_min takes the schema's argument names with int bounds and fills
    dtypes.INTEGER_SCALAR_MIN, which every backend's scalar conversion reads."""
    for bad in ({"frob": 0}, {"self": 0.5}):
        with pytest.raises(YamlError, match=r"integer_scalar_min needs argument names"):
            _parse_entry({"func": _SCHEMA, "structured": True, "pointwise": "sin(self)",
                          "integer_scalar_min": bad}, "ops.yaml[0]")
    from tensorlib import dtypes
    assert dtypes.INTEGER_SCALAR_MIN[("pow", "exponent")] == 0
    with pytest.raises(ValueError, match=r"pow\(\): argument 'exponent' = -1 is below 0"):
        dtypes.scalar_to_compute(-1, dtypes.int8, "pow", "exponent")
    assert dtypes.scalar_to_compute(-1, dtypes.float32, "pow", "exponent") == -1


def test_comparisons_are_told_by_their_expression():
    """PointwiseInfo.compares (a Python int outside the compute dtype compares as a number):
    exactly the ops whose expression is one comparison of their two tensor arguments."""
    assert {name for name, info in POINTWISE.items() if info.compares} == {
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
    two = "frob.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"
    for expr, compares in (("self < other", True), ("other >= self", True),
                           ("self < other < self", False), ("self < 1", False),
                           ("maximum(self, other) == self", False), ("self + other", False)):
        entry = _parse_entry({"func": two, "structured": True, "pointwise": expr},
                             "ops.yaml[0]")
        assert entry.pointwise.compares is compares, expr
