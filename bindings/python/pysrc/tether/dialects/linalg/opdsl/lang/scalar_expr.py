"""Scalar expression trees: the body of a structured op at the level of math on elements, still
polymorphic in its types. A comprehension's right-hand side becomes one of these
(``TensorExpression.to_scalar_expression``); the emitter turns it into arith/math/complex ops and
``dump_oplib`` into YAML."""

from .yaml_helper import YAMLObject

__all__ = ["ScalarAssign", "ScalarFn", "ScalarArg", "ScalarConst", "ScalarIndex",
           "ScalarExpression"]


class ScalarFn:
    """A function applied to operands: named (``fn_name``) or chosen by an attribute
    (``attr_name``); ``kind`` is a FunctionKind, ``type_var`` the target of a type function."""

    def __init__(self, kind, fn_name, attr_name, type_var, operands):
        if bool(fn_name) == bool(attr_name):
            raise ValueError("One of 'fn_name', 'attr_name' must be specified")
        self.kind, self.fn_name, self.attr_name = kind, fn_name, attr_name
        self.type_var, self.operands = type_var, list(operands)

    def expr(self):
        return ScalarExpression(scalar_fn=self)

    def __repr__(self):
        return (f"ScalarFn<{self.kind.name}.{self.fn_name or self.attr_name}>"
                f"(type_var={self.type_var}, operands=[{', '.join(map(repr, self.operands))}])")


class ScalarArg:
    """The element of a named operand."""

    def __init__(self, arg):
        self.arg = arg

    def expr(self):
        return ScalarExpression(scalar_arg=self)

    def __repr__(self):
        return f"ScalarArg({self.arg})"


class ScalarConst:
    """A constant, as MLIR's attribute text (``'42 : i64'``)."""

    def __init__(self, value):
        self.value = value

    def expr(self):
        return ScalarExpression(scalar_const=self)

    def __repr__(self):
        return f"ScalarConst({self.value})"


class ScalarIndex:
    """The iteration index along dimension ``dim`` (a position)."""

    def __init__(self, dim):
        self.dim = dim

    def expr(self):
        return ScalarExpression(scalar_index=self)

    def __repr__(self):
        return f"ScalarIndex({self.dim})"


class ScalarExpression(YAMLObject):
    """Exactly one of a ScalarFn, ScalarArg, ScalarConst or ScalarIndex."""

    yaml_tag = "!ScalarExpression"

    def __init__(self, scalar_fn=None, scalar_arg=None, scalar_const=None, scalar_index=None):
        given = [x for x in (scalar_fn, scalar_arg, scalar_const, scalar_index) if x is not None]
        if len(given) != 1:
            raise ValueError("One of 'scalar_fn', 'scalar_arg', 'scalar_const', or "
                             "'scalar_index' must be specified")
        self.scalar_fn, self.scalar_arg = scalar_fn, scalar_arg
        self.scalar_const, self.scalar_index = scalar_const, scalar_index

    def to_yaml_custom_dict(self):
        if self.scalar_fn is not None:
            fn = self.scalar_fn
            d = {"kind": fn.kind.name.lower()}
            if fn.fn_name:
                d["fn_name"] = fn.fn_name
            if fn.attr_name:
                d["attr_name"] = fn.attr_name
            if fn.type_var is not None:
                d["type_var"] = fn.type_var.name
            d["operands"] = list(fn.operands)
            return {"scalar_fn": d}
        if self.scalar_arg is not None:
            return {"scalar_arg": self.scalar_arg.arg}
        if self.scalar_const is not None:
            return {"scalar_const": self.scalar_const.value}
        return {"scalar_index": self.scalar_index.dim}

    def __repr__(self):
        inner = self.scalar_fn or self.scalar_arg or self.scalar_const or self.scalar_index
        return repr(inner)


class ScalarAssign(YAMLObject):
    """``arg`` (an output's name) = ``value`` (a ScalarExpression)."""

    yaml_tag = "!ScalarAssign"

    def __init__(self, arg, value):
        self.arg, self.value = arg, value

    def to_yaml_custom_dict(self):
        return {"arg": self.arg, "value": self.value}

    def __repr__(self):
        return f"ScalarAssign({self.arg}, {self.value!r})"
