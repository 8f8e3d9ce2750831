"""An op definition configured for emission: each operand with its shape map, index attribute
map and indexing map, the op's iterator types and its body as scalar assignments.

Positions: the iteration domain's dims come first, in the order ``domain(...)`` gives them (by
name when the definition gives no domain); symbols are numbered in the order operands declare
them (shapes of tensors, then sizes of index attributes). Every map is normalized to the op's
full dim and symbol counts; shape and index attribute maps have no dims.
"""

from ..... import ir as _ir
from .affine import AffineBuildState
from .comprehension import OperandKind
from .scalar_expr import ScalarAssign
from .yaml_helper import YAMLObject

__all__ = ["LinalgStructuredOpConfig", "LinalgOpConfig", "OperandDefConfig"]


def _serialize_affine_map(affine_map):
    with affine_map.context:
        return str(_ir.AffineMapAttr.get(affine_map))


class TensorUseConfig:
    """A tensor read or write with its indexing map."""

    def __init__(self, tensor_use, indexing_map):
        self.tensor_use, self.indexing_map = tensor_use, indexing_map

    def __repr__(self):
        return f"Use({self.tensor_use}, indexing_map={self.indexing_map})"


class OperandDefConfig(YAMLObject):
    """An operand definition with its maps."""

    yaml_tag = "!LinalgOperandDefConfig"

    def __init__(self, operand_def, shape_map=None, index_attr_map=None):
        self.operand_def = operand_def
        self.shape_map = shape_map
        self.index_attr_map = index_attr_map
        self.indexing_map = None

    @property
    def name(self):
        return self.operand_def.name

    @property
    def kind(self):
        return self.operand_def.kind

    @property
    def type_var(self):
        return self.operand_def.type_var

    def to_yaml_custom_dict(self):
        d = {"name": self.name, "kind": self.kind.name.lower()}
        if self.type_var is not None:
            d["type_var"] = self.type_var.name
        if self.shape_map is not None:
            d["shape_map"] = _serialize_affine_map(self.shape_map)
        if self.index_attr_map is not None:
            d["index_attr_map"] = _serialize_affine_map(self.index_attr_map)
        if self.operand_def.default_indices:
            d["default_indices"] = list(self.operand_def.default_indices)
        if self.operand_def.default_fn:
            d["default_fn"] = self.operand_def.default_fn
        return d

    def __repr__(self):
        return (f"OperandDefConfig({self.operand_def}, shape_map={self.shape_map}, "
                f"index_attr_map={self.index_attr_map}, indexing_map={self.indexing_map})")


class LinalgIndexingMapsConfig(YAMLObject):
    """The op's indexing maps (static: fixed by the op's definition)."""

    yaml_tag = "!LinalgIndexingMapsConfig"

    def __init__(self, static_indexing_maps=None):
        self.static_indexing_maps = static_indexing_maps

    def to_yaml_custom_dict(self):
        if self.static_indexing_maps is None:
            raise ValueError("LinalgIndexingMapsConfig must have one type of indexing map "
                             "(got none)")
        return {"static_indexing_maps":
                [_serialize_affine_map(m) for m in self.static_indexing_maps]}


class LinalgStructuredOpConfig(YAMLObject):
    """A structured op's operands, maps, iterator types and assignments, in one context."""

    yaml_tag = "!LinalgStructuredOpConfig"

    def __init__(self, comprehension, domain, registered_operands, context=None):
        self.context = context if context is not None else _ir.Context()
        self.affine_state = AffineBuildState()
        self.writes = list(zip(comprehension.definitions, comprehension.values))
        self.operands = {}
        self.uses = {}
        registered_operands = list(registered_operands)

        tensor_uses, scalar_uses, dim_uses, indices = set(), set(), set(), set()
        for write, read in self.writes:
            tensor_uses.add(write)
            read.collect_tensor_uses(tensor_uses)
            read.collect_scalar_uses(scalar_uses)
            read.collect_dim_uses(dim_uses)
            write.collect_dim_uses(dim_uses)
            read.collect_indices(indices)

        # The domain: as given, else the used dims by name.
        domain = list(domain) or sorted(dim_uses, key=lambda d: d.dimname)
        if len(domain) != len(dim_uses) or any(d not in dim_uses for d in domain):
            raise ValueError(f"Expected the annotated domain dimensions {domain} to match the set "
                             f"of dimension used by the tensor comprehension {dim_uses}")
        with self.context:
            state = AffineBuildState(global_state=self.affine_state, allow_new_symbols=False)
            for d in domain:
                d.build(state=state)

        shape_only = []
        for o in registered_operands:
            if o.index_dims:
                if any(d not in dim_uses for d in o.index_dims):
                    raise ValueError(f"Expected all index dims {o.index_dims} of operand "
                                     f"{o.name} to have uses.")
                shape_only.append(o)

        used = {u.operand_def for u in tensor_uses} | {s.operand_def for s in scalar_uses}
        used |= {o for o in registered_operands if o.is_attribute()}
        used |= set(shape_only)
        for o in sorted(used, key=lambda o: o.registered_index):
            self.add_operand(o)
        for o in shape_only:
            self.add_indexed_operand(o)
        for u in sorted(tensor_uses, key=lambda u: u.operand_def.registered_index):
            self.add_tensor_use(u)

        # Every map over the op's full dims and symbols.
        for u in self.uses.values():
            u.indexing_map = self._normalize_affine_map(u.indexing_map)
        for o in shape_only:
            cfg = self.operands[o]
            cfg.indexing_map = self._normalize_affine_map(cfg.indexing_map)
        for cfg in self.operands.values():
            if cfg.shape_map is not None:
                cfg.shape_map = self._normalize_affine_map(cfg.shape_map, with_dims=False)
            if cfg.index_attr_map is not None:
                cfg.index_attr_map = self._normalize_affine_map(cfg.index_attr_map,
                                                                with_dims=False)

        # Indexing maps of written and read tensors, then scalars.
        for write, _ in self.writes:
            cfg = self.operands[write.operand_def]
            if cfg.indexing_map is not None:
                raise ValueError(f"Unexpected multi-write to a single tensor: {cfg}")
            cfg.indexing_map = self.uses[write].indexing_map
        for _, read in self.writes:
            reads = set()
            read.collect_tensor_uses(reads)
            for r in reads:
                cfg = self.operands[r.operand_def]
                m = self.uses[r].indexing_map
                if cfg.indexing_map is not None and cfg.indexing_map != m:
                    raise ValueError(f"Unexpected multi-read of a tensor with different "
                                     f"accesses:{cfg} vs {r}")
                cfg.indexing_map = m
        for cfg in self.operands.values():
            if cfg.kind == OperandKind.SCALAR:
                cfg.indexing_map = self._get_scalar_map()
        for o in registered_operands:
            if o.is_attribute():
                continue
            if o not in self.operands or self.operands[o].indexing_map is None:
                raise ValueError(f"Failed to compute an indexing map for operand {o.name}")

        reductions = comprehension.all_reduction_dims
        if len(reductions) != 1:
            raise ValueError(f"All writes within a generic must have the same reduction dims. "
                             f"Got: {reductions}")
        self.reduction_dims = next(iter(reductions))

        for ix in indices:
            if ix.dim_def.dimname not in self.affine_state.all_dims:
                raise ValueError(f"The dimension {ix.dim_def.dimname} is not part of the "
                                 f"iteration domain {self.affine_state.all_dims}")
            ix.resolve_dimension_name(self.affine_state)

        self.assignments = [ScalarAssign(w.tensor_name, r.to_scalar_expression())
                            for w, r in self.writes]

    @property
    def ordered_operands(self):
        return sorted(self.operands.values(), key=lambda c: c.operand_def.registered_index)

    @property
    def ordered_dims(self):
        """(name, position) of the domain's dims, in order."""
        return list(self.affine_state.all_dims.items())

    @property
    def indexing_maps(self):
        return [c.indexing_map for c in self.ordered_operands if c.indexing_map is not None]

    @property
    def iterator_types(self):
        reduced = {d.dimname for d in self.reduction_dims}
        return ["reduction" if name in reduced else "parallel" for name, _ in self.ordered_dims]

    def _map_of(self, exprs, state):
        with self.context:
            built = [e.build(state=state) for e in exprs]
            return _ir.AffineMap.get(dim_count=state.dim_count, symbol_count=state.symbol_count,
                                     exprs=built)

    def add_operand(self, operand_def):
        if operand_def in self.operands:
            return
        if not (operand_def.is_tensor() or operand_def.kind == OperandKind.INDEX_ATTR):
            self.operands[operand_def] = OperandDefConfig(operand_def)
            return
        state = AffineBuildState(global_state=self.affine_state, allow_new_dims=False)
        with self.context:
            built = [e.build(state=state) for e in operand_def.size_exprs]
            m = _ir.AffineMap.get(dim_count=0, symbol_count=state.symbol_count, exprs=built)
        if operand_def.kind == OperandKind.INDEX_ATTR:
            self.operands[operand_def] = OperandDefConfig(operand_def, index_attr_map=m)
        else:
            self.operands[operand_def] = OperandDefConfig(operand_def, shape_map=m)

    def add_indexed_operand(self, operand_def):
        state = AffineBuildState(global_state=self.affine_state, allow_new_symbols=False)
        self.operands[operand_def].indexing_map = self._map_of(operand_def.index_dims, state)

    def add_tensor_use(self, tensor_use):
        if tensor_use in self.uses:
            return
        state = AffineBuildState(global_state=self.affine_state, allow_new_symbols=False)
        self.uses[tensor_use] = TensorUseConfig(tensor_use,
                                                self._map_of(tensor_use.indices, state))

    def _get_scalar_map(self):
        with self.context:
            return _ir.AffineMap.get(dim_count=self.affine_state.dim_count,
                                     symbol_count=self.affine_state.symbol_count, exprs=[])

    def _normalize_affine_map(self, affine_map, with_dims=True):
        with self.context:
            return _ir.AffineMap.get(
                dim_count=self.affine_state.dim_count if with_dims else 0,
                symbol_count=self.affine_state.symbol_count, exprs=list(affine_map.results))

    def to_yaml_custom_dict(self):
        return {
            "args": self.ordered_operands,
            "indexing_maps": LinalgIndexingMapsConfig(static_indexing_maps=self.indexing_maps),
            "iterator_types": self.iterator_types,
            "assignments": self.assignments,
        }

    def __repr__(self):
        lines = [f"LinalgGenericOpConfig(reduction_dims={self.reduction_dims},", "operands=["]
        lines += [f"  {c!r}" for c in self.ordered_operands]
        lines.append("], indexing_maps=[")
        lines += [f"  {m!r}" for m in self.indexing_maps]
        lines.append("], iterator_types=[")
        lines += [f"  {t}" for t in self.iterator_types]
        lines.append("])")
        return "\n".join(lines)


class LinalgOpConfig(YAMLObject):
    """An op as configured: its metadata and its structured-op configuration."""

    yaml_tag = "!LinalgOpConfig"

    def __init__(self, metadata, *, structured_op=None):
        self.metadata, self.structured_op = metadata, structured_op

    def to_yaml_custom_dict(self):
        d = {"metadata": self.metadata}
        if self.structured_op is not None:
            d["structured_op"] = self.structured_op
        return d

    @staticmethod
    def from_linalg_op_def(op_def, context=None):
        """The configured ops of a definition (one per comprehension; one is supported)."""
        if len(op_def.comprehensions) != 1:
            raise ValueError(f"the definition of '{op_def.metadata.name}' must assign its outputs "
                             f"exactly once (found {len(op_def.comprehensions)} comprehensions)")
        return [LinalgOpConfig(op_def.metadata, structured_op=LinalgStructuredOpConfig(
            op_def.comprehensions[0], op_def.domain, op_def.registered_operands.values(),
            context))]

    def __repr__(self):
        return f"LinalgOpConfig(metadata={self.metadata},\nstructured_op={self.structured_op})"

