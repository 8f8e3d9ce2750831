"""Threads that never made IR drop the last references to a module and collect; the main thread
uses an operation of it after."""
# tether: worked 'arith.muli'
# raw: signal
import threading

from misuse_common import TEXT, attempt, churn, collect, demo

ctx = demo.context()
holders = [demo.parse_module(ctx, TEXT)]
mul = holders[0].body().first_op().region(0).front().ops()[1]


def drop():
    holders.clear()
    collect()
    churn()


for _ in range(2):
    t = threading.Thread(target=drop)
    t.start()
    t.join()
attempt(lambda: mul.name())
