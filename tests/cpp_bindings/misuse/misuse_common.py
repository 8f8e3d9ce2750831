"""What the misuse programs share: the demo module, IR to misuse, and how a program reports.

Each program ends with one `attempt(...)`, which prints `RESULT worked <value>` or `RESULT raised
<exception class>: <message>`; test_cpp_bindings.py compares that line with the program's
`# tether:` line. On the raw build the program is expected to die before it gets there (`# raw:`).
"""
import gc
import sys

import demo


def attempt(fn):
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - any Python exception is the point
        print(f"RESULT raised {type(e).__name__}: {e}", flush=True)
        return
    print(f"RESULT worked {value!r}", flush=True)


def collect():
    """Drop what Python no longer reaches, then what the arena no longer reaches."""
    for _ in range(3):
        gc.collect()
        demo.collect()


def function_module(ctx):
    """A module with `func.func @f(%n: index) -> index` holding two constants, a loop that adds,
    and a return. Returns the builder (its insertion point at the end of the body, before the
    return), the module and the function."""
    b = demo.builder(ctx)
    mod = b.create_module()
    b.set_insertion_point_to_start(mod.body())
    f = b.create_func("f", [b.index()], [b.index()])
    b.set_insertion_point_to_start(f.body())
    c0 = b.create_index(0)
    c1 = b.create_index(1)
    loop = b.create_for(c0, f.arg(0), c1)
    b.set_insertion_point_to_start(loop.body())
    b.create_add(loop.induction_var(), c1)
    b.set_insertion_point_to_end(f.body())
    ret = b.create_return([f.arg(0)])
    b.set_insertion_point(ret)
    return b, mod, f


TEXT = """
func.func @g(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  %1 = arith.muli %0, %b : i32
  return %1 : i32
}
"""


def churn():
    """Allocate and free IR-sized memory, so that freed IR is reused (the raw build's crash
    comes sooner)."""
    ctx = demo.context()
    for _ in range(20):
        demo.parse_module(ctx, TEXT)
    sys.stdout.flush()
