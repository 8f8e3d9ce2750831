"""Affine expressions of the OpDSL: named dimensions (``D.m``), named symbols (``S.M``), integer
constants, and ``+``, ``*``, ``%``, ``//`` (floordiv) and ``/`` (ceildiv) of them. They are
symbolic until built into MLIR ``AffineExpr``s against an ``AffineBuildState``, which numbers
dims and symbols in the order it first meets them:

    >>> from tether import ir
    >>> with ir.Context():
    ...     state = AffineBuildState()
    ...     print((S.K * 2 + D.i).build(state))
    ...     print((D.j // S.K).build(state), (D.i % 4).build(state), (S.N / S.K).build(state))
    ...     state
    d0 + s0 * 2
    d1 floordiv s0 d0 mod 4 s1 ceildiv s0
    AffineBuildState<
      symbols={'K': 0, 'N': 1}
      dims={'i': 0, 'j': 1}>

Dims and symbols are unique by name:

    >>> D.i is D.i, D.i is D.j, S.K is SymbolDef("K")
    (True, False, True)
    >>> D.i, S.K
    (Dim(i), Symbol(K))
"""

from ..... import ir as _ir
from .types import _Expando

__all__ = ["AffineBuildState", "AffineExprDef", "D", "DimDef", "S", "SymbolDef"]


class AffineBuildState:
    """Positions of dims and symbols while expressions are built.

    A state made with ``global_state=g`` shares ``g``'s numbering (new names it meets are added
    to both) and also records the names its own builds used (``local_dims``/``local_symbols``).
    ``allow_new_dims``/``allow_new_symbols`` False make meeting an unknown name a ValueError.
    """

    def __init__(self, *, global_state=None, allow_new_symbols=True, allow_new_dims=True):
        if global_state is None:
            self.all_symbols, self.all_dims = {}, {}
        else:
            self.all_symbols, self.all_dims = global_state.all_symbols, global_state.all_dims
        self.local_symbols, self.local_dims = {}, {}
        self.allow_new_symbols = allow_new_symbols
        self.allow_new_dims = allow_new_dims

    def _position(self, table, local, name, allowed, what):
        pos = table.get(name)
        if pos is None:
            if not allowed:
                raise ValueError(f"New {what} not allowed in the current affine expression: "
                                 f"Requested '{name}', Available: {table}")
            pos = table[name] = len(table)
        local[name] = pos
        return pos

    def get_dim(self, dimname):
        return self._position(self.all_dims, self.local_dims, dimname, self.allow_new_dims,
                              "dimensions")

    def get_symbol(self, symname):
        return self._position(self.all_symbols, self.local_symbols, symname,
                              self.allow_new_symbols, "symbols")

    @property
    def local_dim_count(self):
        return len(self.local_dims)

    @property
    def local_symbol_count(self):
        return len(self.local_symbols)

    @property
    def dim_count(self):
        return len(self.all_dims)

    @property
    def symbol_count(self):
        return len(self.all_symbols)

    def __repr__(self):
        return (f"AffineBuildState<\n  symbols={self.local_symbols}\n"
                f"  dims={self.local_dims}>")


class AffineExprDef:
    """An affine expression being defined (not yet bound to positions or a context)."""

    def build(self, state=None):
        """The MLIR AffineExpr, numbering names in ``state`` (a new one when None)."""
        return self._create(AffineBuildState() if state is None else state)

    def _create(self, state):
        raise NotImplementedError(type(self).__name__)

    @staticmethod
    def coerce_from(value):
        if isinstance(value, AffineExprDef):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return AffineConstantExpr(value)
        raise TypeError(f"an affine expression needs a dim, a symbol or an int, not {value!r}")

    def visit_affine_exprs(self, callback):
        """Calls ``callback`` on this expression and every sub-expression."""
        callback(self)

    def _binary(self, kind, other, swap=False):
        other = AffineExprDef.coerce_from(other)
        return AffineBinaryExprDef(kind, other, self) if swap else \
            AffineBinaryExprDef(kind, self, other)

    def __add__(self, other):
        return self._binary(_ir.AffineAddExpr, other)

    def __radd__(self, other):
        return self._binary(_ir.AffineAddExpr, other, swap=True)

    def __mul__(self, other):
        return self._binary(_ir.AffineMulExpr, other)

    def __rmul__(self, other):
        return self._binary(_ir.AffineMulExpr, other, swap=True)

    def __mod__(self, other):
        return self._binary(_ir.AffineModExpr, other)

    def __floordiv__(self, other):
        return self._binary(_ir.AffineFloorDivExpr, other)

    def __truediv__(self, other):
        # The DSL's `/` is a ceildiv, as upstream's.
        return self._binary(_ir.AffineCeilDivExpr, other)


class AffineConstantExpr(AffineExprDef):
    def __init__(self, value):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"an affine constant must be an int, not {value!r}")
        self.value = value

    def _create(self, state):
        return _ir.AffineConstantExpr.get(self.value)

    def __repr__(self):
        return f"Const({self.value})"


class AffineBinaryExprDef(AffineExprDef):
    def __init__(self, ir_ctor, lhs, rhs):
        self.ir_ctor, self.lhs, self.rhs = ir_ctor, lhs, rhs

    def _create(self, state):
        return self.ir_ctor.get(self.lhs._create(state), self.rhs._create(state))

    def visit_affine_exprs(self, callback):
        callback(self)
        self.lhs.visit_affine_exprs(callback)
        self.rhs.visit_affine_exprs(callback)

    def __repr__(self):
        return f"{self.ir_ctor.__name__}({self.lhs!r}, {self.rhs!r})"


class _Named(AffineExprDef):
    """Dims and symbols: one object per name and class."""

    def __new__(cls, name):
        known = cls._ALL.get(name)
        if known is None:
            if not isinstance(name, str) or not name:
                raise ValueError(f"a {cls.__name__} needs a non-empty name, not {name!r}")
            known = super().__new__(cls)
            known._name = name
            cls._ALL[name] = known
        return known

    def __repr__(self):
        return f"{self._KIND}({self._name})"

    @classmethod
    def create_expando(cls):
        return _Expando(cls)


class DimDef(_Named):
    """A named dimension of the iteration domain."""

    _ALL = ALL_DIMS = {}
    _KIND = "Dim"

    @property
    def dimname(self):
        return self._name

    def _create(self, state):
        return _ir.AffineDimExpr.get(position=state.get_dim(self._name))


class SymbolDef(_Named):
    """A named symbol: a size, or an index attribute's value."""

    _ALL = ALL_SYMBOLS = {}
    _KIND = "Symbol"

    @property
    def symname(self):
        return self._name

    def _create(self, state):
        return _ir.AffineSymbolExpr.get(position=state.get_symbol(self._name))


D = DimDef.create_expando()
S = SymbolDef.create_expando()
