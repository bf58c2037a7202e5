#!/usr/bin/env python3
"""Edits loom's printed 27-point box kernel for probe_box27_gap.cu (one kernel, changed one way):
  edit_rows.py predicate IN OUT NAME: each row's `if (z_whole) { vector ... } else { elements }`
      becomes the vector alone with its two neighbours predicated (gen27.cuh -> gen27p.cuh);
  edit_rows.py nobranch IN OUT NAME: each row's `if (z_rows_whole) { vector } else { elements }`
      becomes the vector alone (gen27n.cuh -> gen27nb.cuh).
Both assume rows whose length is a multiple of 4 (the probe's 512^3). NAME renames the kernel."""
import re
import sys


def edit(lines, test, keep):
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == f'if ({test}) {{' and 'load_lanes<4>' in lines[i + 1]:
            indent = line[:len(line) - len(line.lstrip())]
            j = i + 1
            body = []
            while lines[j].strip() != '} else {':
                body.append(lines[j])
                j += 1
            depth, j = 1, j + 1
            while depth:  # skip the element-by-element branch
                depth += lines[j].count('{') - lines[j].count('}')
                j += 1
            out += [indent + '{'] + [keep(b) for b in body] + [indent + '}']
            i = j
        else:
            out.append(line)
            i += 1
    return out


def predicated(line):
    m = re.match(r'(\s*)(\w+)\[0\] = (src_c\[.*\]);', line)
    if m:
        return f'{m.group(1)}{m.group(2)}[0] = z_lanes >= 1 ? {m.group(3)} : 0.0f;'
    m = re.match(r'(\s*)(\w+)\[5\] = (src_c\[.*\]);', line)
    if m:
        return f'{m.group(1)}{m.group(2)}[5] = z_lanes + 4 < size_2 ? {m.group(3)} : 0.0f;'
    return line


mode, src, dst, name = sys.argv[1:5]
text = open(src).read()
text = re.sub(r'void \w+\(', f'void {name}(', text, count=1)
lines = text.split('\n')
lines = edit(lines, 'z_whole', predicated) if mode == 'predicate' else edit(lines, 'z_rows_whole', lambda l: l)
open(dst, 'w').write('\n'.join(lines))
