# Emitting the LLVM dialect directly (as a small language's backend does, without the upstream
# lowering passes): llvm.func with !llvm.func types, struct and pointer types, llvm.mlir.global,
# alloca / GEP / load / store, icmp and branches between blocks, insertvalue / extractvalue,
# calls; then JIT it and call it through ctypes.
# e2e-mlir: 19 -- llvm.GEPOp without MLIR 22's noWrapFlags
import ctypes

from mlir.ir import *
from mlir.dialects import llvm
from mlir.execution_engine import ExecutionEngine

with Context() as ctx, Location.unknown():
    i32 = IntegerType.get_signless(32)
    i64 = IntegerType.get_signless(64)
    i1 = IntegerType.get_signless(1)
    ptr = llvm.PointerType.get()
    pair = llvm.StructType.get_literal([i32, i64])
    named = llvm.StructType.get_identified("Node")
    named.set_body([i32, ptr])
    print("types:", ptr, pair, named, named.name, list(pair.body), pair.packed)
    print("opaque:", llvm.StructType.get_opaque("Opaque"), llvm.StructType.get_opaque("Opaque").opaque, llvm.StructType.get_opaque("Opaque").body)
    fresh = llvm.StructType.new_identified("Node", [i64])
    print("new identified:", fresh, fresh.name, fresh == named)
    try:
        named.set_body([i64])
    except ValueError as e:
        print("set_body again:", e)
    print("ptr addr space:", llvm.PointerType.get(address_space=1), llvm.PointerType.get(address_space=1).address_space, type(llvm.PointerType.get()).__name__)

    def fn_type(ret, args):
        return TypeAttr.get(Type.parse("!llvm.func<%s (%s)>" % (ret, ", ".join(str(a) for a in args))))

    module = Module.create()
    with InsertionPoint(module.body):
        g = llvm.GlobalOp(i32, "counter", Attribute.parse("#llvm.linkage<internal>"),
                          value=IntegerAttr.get(i32, 5))
        # i32 @clamp_add(i32 a, i32 b): s = a + b; return s > 100 ? 100 : s
        f = llvm.LLVMFuncOp("clamp_add", fn_type(i32, [i32, i32]))
        entry = f.body.blocks.append(i32, i32)
        big = f.body.blocks.append()
        small = f.body.blocks.append(i32)
        with InsertionPoint(entry):
            s = llvm.AddOp(entry.arguments[0], entry.arguments[1], Attribute.parse("#llvm.overflow<none>"))
            hundred = llvm.mlir_constant(IntegerAttr.get(i32, 100))
            cmp = llvm.ICmpOp(llvm.ICmpPredicate.sgt, s.result, hundred)
            llvm.CondBrOp(cmp.result, [], [s.result], big, small)
        with InsertionPoint(big):
            llvm.ReturnOp(arg=llvm.mlir_constant(IntegerAttr.get(i32, 100)))
        with InsertionPoint(small):
            llvm.ReturnOp(arg=small.arguments[0])

        # i64 @pair_sum(): builds {7, 35} in a struct, stores it in an alloca, reads back via GEP
        h = llvm.LLVMFuncOp("pair_sum", fn_type(i64, []))
        hb = h.body.blocks.append()
        with InsertionPoint(hb):
            undef = llvm.UndefOp(pair)
            v0 = llvm.InsertValueOp(undef.result, llvm.mlir_constant(IntegerAttr.get(i32, 7)), DenseI64ArrayAttr.get([0]))
            v1 = llvm.InsertValueOp(v0.result, llvm.mlir_constant(IntegerAttr.get(i64, 35)), DenseI64ArrayAttr.get([1]))
            one = llvm.mlir_constant(IntegerAttr.get(i64, 1))
            slot = llvm.AllocaOp(ptr, one, TypeAttr.get(pair))
            llvm.StoreOp(v1.result, slot.result)
            p1 = llvm.GEPOp(ptr, slot.result, [], DenseI32ArrayAttr.get([0, 1]), TypeAttr.get(pair))
            second = llvm.LoadOp(i64, p1.result)
            first = llvm.ExtractValueOp(i32, v1.result, DenseI64ArrayAttr.get([0]))
            wide = llvm.SExtOp(i64, first.result)
            gaddr = llvm.AddressOfOp(ptr, "counter")
            gval = llvm.LoadOp(i32, gaddr.result)
            gwide = llvm.SExtOp(i64, gval.result)
            tot = llvm.AddOp(wide.result, second.result, Attribute.parse("#llvm.overflow<none>"))
            tot2 = llvm.AddOp(tot.result, gwide.result, Attribute.parse("#llvm.overflow<none>"))
            llvm.ReturnOp(arg=tot2.result)

        # i32 @twice(i32 x) = clamp_add(x, x), through llvm.call
        t = llvm.LLVMFuncOp("twice", fn_type(i32, [i32]))
        tb = t.body.blocks.append(i32)
        with InsertionPoint(tb):
            c = llvm.CallOp(i32, [tb.arguments[0], tb.arguments[0]], callee=FlatSymbolRefAttr.get("clamp_add"))
            llvm.ReturnOp(arg=c.result)
    print(module)
    print("verify:", module.operation.verify())
    print("func class:", type(f).__name__, f.sym_name, f.function_type)
    print("global:", g.sym_name, g.global_type, g.linkage)

    engine = ExecutionEngine(module, opt_level=0)

    # No C-interface wrappers here: call the packed entry points (one void** of argument and
    # result pointers) that raw_lookup returns.
    def call(name, restype, *args):
        res = restype()
        ptrs = [ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args]
        ptrs.append(ctypes.cast(ctypes.pointer(res), ctypes.c_void_p))
        packed = (ctypes.c_void_p * len(ptrs))(*ptrs)
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup(name))(packed)
        return res.value

    for a, b in [(1, 2), (60, 50), (-5, 3)]:
        print("clamp_add(%d, %d) = %d" % (a, b, call("clamp_add", ctypes.c_int32, ctypes.c_int32(a), ctypes.c_int32(b))))
    print("pair_sum() =", call("pair_sum", ctypes.c_int64))
    print("twice(30) =", call("twice", ctypes.c_int32, ctypes.c_int32(30)))
    try:
        engine.invoke("clamp_add")
    except RuntimeError as e:
        print("invoke without C interface:", e)
