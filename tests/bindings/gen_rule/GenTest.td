// gentest: a dialect defined only in ODS, to test tether_dialect_library (the Python op classes and
// enums mlir-tblgen-19 generates, on tether.ir) on its own. No C++: the generated classes build ops
// with OpView.build_generic, and the test's context allows unregistered dialects. Each op covers
// one part of what -gen-python-op-bindings emits (test_gen_rule.py).
#ifndef GENTEST_TD
#define GENTEST_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def GenTest_Dialect : Dialect {
  let name = "gentest";
  let cppNamespace = "::gentest";
}

class GenTest_Op<string mnemonic, list<Trait> traits = []>
    : Op<GenTest_Dialect, mnemonic, traits>;

// ---- enums --------------------------------------------------------------------------------------

// An integer enum (an i32 IntegerAttr); "class" and "None" are Python keywords (the case name gets
// a trailing underscore), a gap in the values.
def GenTest_Color : I32EnumAttr<"Color", "a color", [
    I32EnumAttrCase<"Red", 0, "red">,
    I32EnumAttrCase<"Green", 1, "green">,
    I32EnumAttrCase<"Blue", 5, "blue">,
    I32EnumAttrCase<"None", 6, "none">,
  ]> {
  let cppNamespace = "::gentest";
}

// A bit enum (IntFlag).
def GenTest_Flags : I32BitEnumAttr<"Flags", "flags", [
    I32BitEnumAttrCaseNone<"none">,
    I32BitEnumAttrCaseBit<"Read", 0, "read">,
    I32BitEnumAttrCaseBit<"Write", 1, "write">,
    I32BitEnumAttrCaseBit<"Exec", 2, "exec">,
  ]> {
  let cppNamespace = "::gentest";
  let separator = "|";
}

// A dialect enum attribute (#gentest<shape round>), its enum without an attribute of its own.
def GenTest_ShapeKind : I32EnumAttr<"ShapeKind", "a shape", [
    I32EnumAttrCase<"Round", 0, "round">,
    I32EnumAttrCase<"Square", 1, "square">,
  ]> {
  let cppNamespace = "::gentest";
  let genSpecializedAttr = 0;
}

def GenTest_ShapeAttr : EnumAttr<GenTest_Dialect, GenTest_ShapeKind, "shape">;

// ---- ops ----------------------------------------------------------------------------------------

// Several variadic operand and result groups, with optional ones among them: the sizes of each
// group go into operandSegmentSizes / resultSegmentSizes.
def GenTest_SegmentsOp : GenTest_Op<"segments",
    [AttrSizedOperandSegments, AttrSizedResultSegments]> {
  let arguments = (ins
    I32:$first,
    Variadic<AnyType>:$lhs,
    Optional<AnyType>:$maybe,
    Variadic<AnyType>:$rhs,
    AnyType:$last
  );
  let results = (outs
    AnyType:$main,
    Variadic<AnyType>:$extras,
    Optional<AnyType>:$flag,
    Variadic<AnyType>:$tail
  );
}

// Variadic groups of the same size (no segment attributes: equally_sized_accessor), with one
// single operand, two single results among the result groups (as memref.extract_strided_metadata).
def GenTest_SameSizeOp : GenTest_Op<"same_size",
    [SameVariadicOperandSize, SameVariadicResultSize]> {
  let arguments = (ins AnyType:$head, Variadic<AnyType>:$xs, Variadic<AnyType>:$ys);
  let results = (outs AnyType:$base, Variadic<AnyType>:$sizes, AnyType:$offset,
                      Variadic<AnyType>:$strides);
}

// Three groups of the same size and nothing else (as omp.loop_nest).
def GenTest_TriplesOp : GenTest_Op<"triples", [SameVariadicOperandSize]> {
  let arguments = (ins Variadic<AnyType>:$lo, Variadic<AnyType>:$hi, Variadic<AnyType>:$step);
}

// One variadic group only: no segments at all.
def GenTest_PackOp : GenTest_Op<"pack"> {
  let arguments = (ins Variadic<AnyType>:$items);
  let results = (outs Variadic<AnyType>:$values);
}

// Attributes of many kinds, mandatory, optional and default-valued; enums; no results.
def GenTest_AttrsOp : GenTest_Op<"attrs"> {
  let arguments = (ins
    I32Attr:$count,
    F32Attr:$scale,
    StrAttr:$label,
    ArrayAttr:$items,
    TypeAttr:$elem,
    I64ArrayAttr:$dims,
    DenseI64ArrayAttr:$sizes,
    BoolAttr:$flag,
    FlatSymbolRefAttr:$callee,
    GenTest_Color:$color,
    GenTest_Flags:$flags,
    GenTest_ShapeAttr:$shape,
    UnitAttr:$fast,
    OptionalAttr<I64Attr>:$opt_int,
    OptionalAttr<StrAttr>:$opt_str,
    OptionalAttr<GenTest_Color>:$opt_color,
    DefaultValuedAttr<I32Attr, "7">:$dflt_int,
    DefaultValuedStrAttr<StrAttr, "hello">:$dflt_str
  );
}

// Exactly two results and one operand.
def GenTest_FixedOp : GenTest_Op<"fixed"> {
  let arguments = (ins AnyType:$input);
  let results = (outs I32:$low, F32:$high);
}

// Exactly one result, no operands, an attribute: the builder function returns the result.
def GenTest_ConstOp : GenTest_Op<"const"> {
  let arguments = (ins I64Attr:$value);
  let results = (outs I64:$out);
}

// Regions: a sized one, an unconstrained one, and any number after them.
def GenTest_RegionsOp : GenTest_Op<"regions"> {
  let arguments = (ins Variadic<AnyType>:$inits);
  let results = (outs Variadic<AnyType>:$outs);
  let regions = (region SizedRegion<1>:$body, AnyRegion:$other, VariadicRegion<AnyRegion>:$rest);
}

// Successors: a fixed one and a variadic group, with operands.
def GenTest_BranchOp : GenTest_Op<"branch", [Terminator]> {
  let arguments = (ins Variadic<AnyType>:$args);
  let successors = (successor AnySuccessor:$dest, VariadicSuccessor<AnySuccessor>:$others);
}

// Operands and an attribute whose names clash with Python keywords and the builder's own
// parameters ("from", "loc", "ip", "results").
def GenTest_KeywordsOp : GenTest_Op<"keywords"> {
  let arguments = (ins AnyType:$from, AnyType:$in, StrAttr:$loc, OptionalAttr<I32Attr>:$ip);
  let results = (outs AnyType:$results);
}

#endif
