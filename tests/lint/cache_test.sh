#!/usr/bin/env bash
# The result cache: a second run on an unchanged tree parses nothing and prints the same report;
# a changed header re-parses exactly the translation units that include it; the key covers the
# file, its flags, every header it read, the configuration and the rules; a corrupt, truncated or
# foreign entry is ignored; parallel runs share a cache safely; cross-file facts come back from
# cached translation units; failures are not cached.
set -u
lint=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
fx=$PWD/tests/lint/fixtures
t=$TEST_TMPDIR
fail=0
check() { if eval "$2"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; sed 's/^/    /' $t/err | head -20; fi; }
K=$t/cache
run() { (cd $P && timeout 300 "$lint" --config /dev/null --cache-dir $K --cache-stats "$@" >$t/out 2>$t/err); rc=$?; }
stats() { grep -q "cache: $1 of $2 translation unit(s) from the cache, $3 parsed" $t/err; }
same_report() { cmp -s $t/out $t/ref.out && cmp -s <(grep -v 'cache:' $t/err) <(grep -v 'cache:' $t/ref.err); }

P=$t/p
mkdir -p $P/src $P/include
cp $fx/rawop/py_bindings.h $P/include/
printf '#pragma once\n#include "py_bindings.h"\ninline int common() { return 1; }\n' >$P/include/common.h
printf '#pragma once\ninline int only_c() { return 3; }\n' >$P/include/only_c.h
for f in a b; do
  printf '#include "common.h"\nvoid %s(PyBlock &x) {\n  mlirBlockDump(x.get());\n}\n' $f >$P/src/$f.cpp
done
printf '#include "py_bindings.h"\n#include "only_c.h"\nvoid c(PyBlock &x) {\n  mlirBlockDump(x.get());\n}\n' >$P/src/c.cpp
cat >$P/compile_commands.json <<EOF
[{"directory": "$P", "file": "src/a.cpp", "arguments": ["c++", "-Iinclude", "-c", "src/a.cpp"]},
 {"directory": "$P", "file": "src/b.cpp", "arguments": ["c++", "-Iinclude", "-c", "src/b.cpp"]},
 {"directory": "$P", "file": "src/c.cpp", "arguments": ["c++", "-Iinclude", "-c", "src/c.cpp"]}]
EOF

run -p . src
cp $t/out $t/ref.out
cp $t/err $t/ref.err
check "first run: 3 findings, every translation unit parsed and stored" "[ $rc -eq 1 ] && grep -q ' 3 finding(s)' $t/out && stats 0 3 3 && grep -q '3 stored' $t/err"
run -p . src
check "second run on the unchanged tree: nothing parsed" "[ $rc -eq 1 ] && stats 3 3 0"
check "second run: the same report and messages" "same_report"
run -j 2 -p . src
check "-j 2 uses the same entries" "stats 3 3 0 && same_report"
run --format json -p . src
check "--format json uses the same entries" "stats 3 3 0"
touch $P/src/a.cpp $P/include/common.h
run -p . src
check "touched (same contents): still from the cache" "stats 3 3 0 && same_report"

echo '// a comment' >>$P/include/only_c.h
run -p . src
check "one header changed: only the translation unit that includes it is parsed" "stats 2 3 1 && same_report"
echo '// another comment' >>$P/include/py_bindings.h
run -p . src
check "a header every unit includes changed: all are parsed" "stats 0 3 3 && same_report"
run -p . src
check "... and stored again" "stats 3 3 0"
printf '#include "common.h"\nvoid a(PyBlock &x) {\n  x.checkValid();\n  mlirBlockDump(x.get());\n}\n' >$P/src/a.cpp
run -p . src
check "the source itself changed: that one is parsed, its finding is gone" "stats 2 3 1 && [ $rc -eq 1 ] && grep -q ' 2 finding(s)' $t/out && ! grep -q 'src/a.cpp' $t/out"
sed -i 's/-Iinclude", "-c", "src\/b.cpp"/-Iinclude", "-DNEW_FLAG", "-c", "src\/b.cpp"/' $P/compile_commands.json
run -p . src
check "a unit's flags changed: that one is parsed" "stats 2 3 1"
run --disable raw-op-escape -p . src
check "the enabled rules changed: all are parsed" "stats 0 3 3"
printf '[lint]\ndisable = raw-op-escape\n' >$P/cfg.ini
(cd $P && "$lint" --config cfg.ini --cache-dir $K --cache-stats -p . src >$t/out 2>$t/err)
check "the configuration changed: all are parsed" "stats 0 3 3"
(cd $P && "$lint" --config cfg.ini --cache-dir $K --cache-stats -p . src >$t/out 2>$t/err)
check "... and the same configuration again: from the cache" "stats 3 3 0"

# A corrupt, truncated or foreign entry is ignored (and replaced).
run -p . src
cp $t/out $t/ref.out
cp $t/err $t/ref.err
for e in $(find $K -type f); do printf '\x01' | dd of=$e bs=1 seek=50 conv=notrunc 2>/dev/null; done
run -p . src
check "corrupt entries: ignored, everything parsed, the same report" "stats 0 3 3 && same_report"
for e in $(find $K -type f); do truncate -s 40 $e; done
run -p . src
check "truncated entries: ignored" "stats 0 3 3 && same_report"
for e in $(find $K -type f); do head -c 300 /dev/urandom >$e; done
run -p . src
check "entries replaced by random bytes: ignored" "stats 0 3 3 && same_report"
run -p . src
check "after that, the cache works again" "stats 3 3 0 && same_report"

# Parallel runs on one cache.
rm -rf $K
for i in 1 2 3 4; do
  (cd $P && "$lint" --config /dev/null --cache-dir $K -j 2 -p . src >$t/par$i.out 2>$t/par$i.err) &
done
wait
ok=1
for i in 1 2 3 4; do cmp -s $t/par$i.out $t/ref.out || ok=0; done
check "four runs at once on an empty cache: each prints the full report" "[ $ok -eq 1 ]"
check "... and leave no temporary file" "[ -z \"\$(find $K -name '.tmp.*')\" ]"
run -p . src
check "... and the cache they wrote is whole" "stats 3 3 0 && same_report"

# A missing include that appears later.
printf '#include "py_bindings.h"\n#include "gen.h"\nvoid d(PyBlock &x) { GEN_USE(x); }\n' >$P/src/d.cpp
run src/d.cpp --compile-commands compile_commands.json
check "a missing include: the partial-tree note" "grep -q \"note: the syntax tree is partial: .*'gen.h' file not found\" $t/err"
run src/d.cpp --compile-commands compile_commands.json
check "... the result is cached" "stats 1 1 0"
printf '#define GEN_USE(x) mlirBlockDump(x.get())\n' >$P/include/gen.h
run src/d.cpp --compile-commands compile_commands.json
check "the header appears in an include folder: parsed again, the finding comes" "stats 0 1 1 && [ $rc -eq 1 ] && grep -q 'src/d.cpp:3:.*raw-op-unguarded' $t/out"
rm $P/src/d.cpp $P/include/gen.h

# Failures are not cached.
mkfifo $P/src/pipe.h
printf '#include "pipe.h"\nint x;\n' >$P/src/hang.cpp
run --timeout 2 src/hang.cpp
check "a unit that timed out: an error" "[ $rc -eq 2 ] && grep -q 'timed out after 2 s' $t/err"
run --timeout 2 src/hang.cpp
check "... and it is not cached: it is tried again" "stats 0 1 1 && grep -q 'timed out after 2 s' $t/err"
rm $P/src/hang.cpp $P/src/pipe.h

# Cross-file facts (weak-typeid) come back from cached translation units.
X=$t/x
cp -r $fx/typeid/cross $X
(cd $X && "$lint" --config /dev/null --cache-dir $t/xcache --cache-stats . >$t/x1.out 2>$t/x1.err)
(cd $X && "$lint" --config /dev/null --cache-dir $t/xcache --cache-stats . >$t/x2.out 2>$t/x2.err)
check "typeid cross-file findings: present" "grep -q 'weak-typeid' $t/x1.out"
check "... identical when every unit comes from the cache" "cmp -s $t/x1.out $t/x2.out && grep -q 'cache: \\([0-9]*\\) of \\1 translation unit(s) from the cache, 0 parsed' $t/x2.err"
(cd $X && "$lint" --config /dev/null --cache-dir $t/xcache tri_a.cpp >$t/x3.out 2>$t/x3.err)
(cd $X && "$lint" --config /dev/null --no-cache tri_a.cpp >$t/x4.out 2>$t/x4.err)
check "... and a partial run from the cache equals one without it" "cmp -s $t/x3.out $t/x4.out"

# Where the cache lives.
mkdir -p $t/home
(cd $P && env -u XDG_CACHE_HOME HOME=$t/home "$lint" --config /dev/null -p . src >/dev/null 2>&1)
check "default: \$HOME/.cache/tether-lint" "[ -n \"\$(find $t/home/.cache/tether-lint -type f)\" ]"
(cd $P && XDG_CACHE_HOME=$t/xdg HOME=$t/home2 "$lint" --config /dev/null -p . src >/dev/null 2>&1)
check "\$XDG_CACHE_HOME/tether-lint when set" "[ -n \"\$(find $t/xdg/tether-lint -type f)\" ] && [ ! -e $t/home2 ]"
(cd $P && XDG_CACHE_HOME=relative HOME=$t/home3 "$lint" --config /dev/null -p . src >/dev/null 2>&1)
check "a relative \$XDG_CACHE_HOME is ignored (XDG spec)" "[ ! -e $P/relative ] && [ -n \"\$(find $t/home3/.cache/tether-lint -type f)\" ]"
(cd $P && env -u XDG_CACHE_HOME -u HOME "$lint" --config /dev/null -p . src >$t/out 2>$t/err); rc=$?
check "neither set: no cache, no error" "[ $rc -eq 1 ] && ! grep -q 'cache' $t/err"
before=$(find $t/home -type f | sort | xargs md5sum)
(cd $P && env -u XDG_CACHE_HOME HOME=$t/home "$lint" --config /dev/null --no-cache -p . src >/dev/null 2>&1)
check "--no-cache: the cache is neither read nor written" "[ \"\$(find $t/home -type f | sort | xargs md5sum)\" = \"$before\" ]"
printf 'not a folder' >$t/notadir
(cd $P && "$lint" --config /dev/null --cache-dir $t/notadir/sub -p . src >$t/out 2>$t/err); rc=$?
check "a cache folder that cannot be made: a note, the run goes on" "[ $rc -eq 1 ] && grep -q 'note: result cache off: cannot use the cache folder' $t/err && cmp -s $t/out $t/ref.out"

[ $fail -eq 0 ] && echo "cache_test: passed" || echo "cache_test: FAILED"
exit $fail
