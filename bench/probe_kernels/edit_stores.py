#!/usr/bin/env python3
"""Variants of loom's printed 27-point box kernel's stores (probe only):
  now:    the kernel as printed, renamed;
  scalar: every `if (z_whole) { store_lanes } else { guarded elements }` keeps only the guarded
          elements (predicated stores, no branch);
  group:  `if (z_rows_whole) {A} else {B}` becomes `if (z_whole) {A, vector stores only} else if
          (z_rows_whole) {A} else {B}` (one store branch a group);
  vector: A keeps only its vector stores (wrong at the row ends: an upper bound)."""
import re, sys

def block_end(lines, i):
    depth = 0
    for j in range(i, len(lines)):
        depth += lines[j].count('{') - lines[j].count('}')
        if depth == 0:
            return j
    raise SystemExit('unbalanced')

def stores(lines, keep):  # keep: 'vector' or 'scalar'
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == 'if (z_whole) {' and 'store_lanes' in lines[i + 1]:
            ind = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
            j = i + 1
            vec = []
            while lines[j].strip() != '} else {':
                vec.append(lines[j]); j += 1
            k = j
            depth, k = 1, j + 1
            els = []
            while True:
                depth += lines[k].count('{') - lines[k].count('}')
                if depth == 0: break
                els.append(lines[k]); k += 1
            out += [ind + '{'] + (vec if keep == 'vector' else els) + [ind + '}']
            i = k + 1
        else:
            out.append(lines[i]); i += 1
    return out

mode, src, dst, name = sys.argv[1:5]
text = re.sub(r'void \w+\(', f'void {name}(', open(src).read(), count=1)
lines = text.split('\n')
if mode == 'now':
    pass
elif mode == 'scalar':
    lines = stores(lines, 'scalar')
else:
    i = next(n for n, l in enumerate(lines) if l.strip() == 'if (z_rows_whole) {')
    ind = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    e = next(n for n in range(i + 1, len(lines)) if lines[n] == ind + '} else {')
    A = lines[i + 1:e]
    Avec = stores(A, 'vector')
    if mode == 'vector':
        lines = lines[:i + 1] + Avec + lines[e:]
    else:
        lines = lines[:i] + [ind + 'if (z_whole) {'] + Avec + [ind + '} else if (z_rows_whole) {'] + A + lines[e:]
open(dst, 'w').write('\n'.join(lines))
