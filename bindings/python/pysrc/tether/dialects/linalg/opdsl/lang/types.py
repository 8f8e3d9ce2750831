"""Type variables of the OpDSL.

A type variable names the element type of an operand (``TensorDef(T, ...)``) or the target of a
cast (``TypeFn.cast_signed(U, x)``); the emitter binds each to a concrete MLIR type from the
values an op is called with. Type variables are unique by name, and ``TV.<name>`` makes one:

    >>> TV.T is T, TV.Acc is TV.Acc, TV.A is TV.B
    (True, True, False)
    >>> TV.Acc
    TypeVar(Acc)

``I32``, ``I64``, ``F32`` and ``F64`` are type variables the emitter always binds to those types.
"""

__all__ = ["TypeVar", "TV", "I32", "I64", "F32", "F64", "T", "U", "V"]


class TypeVar:
    """A named, replaceable element type; one object per name."""

    ALL_TYPEVARS = {}

    def __new__(cls, name):
        known = cls.ALL_TYPEVARS.get(name)
        if known is None:
            if not isinstance(name, str) or not name:
                raise ValueError(f"a type variable needs a non-empty name, not {name!r}")
            known = super().__new__(cls)
            known.name = name
            cls.ALL_TYPEVARS[name] = known
        return known

    def __repr__(self):
        return f"TypeVar({self.name})"

    @classmethod
    def create_expando(cls):
        """An object whose every attribute ``x`` is ``cls("x")``."""
        return _Expando(cls)


class _Expando:
    __slots__ = ("_make",)

    def __init__(self, make):
        object.__setattr__(self, "_make", make)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._make(name)

    def __setattr__(self, name, value):
        raise AttributeError("names are made on access; they cannot be assigned")


TV = TypeVar.create_expando()

I32, I64, F32, F64 = TV.I32, TV.I64, TV.F32, TV.F64
T, U, V = TV.T, TV.U, TV.V
