#!/usr/bin/env python3
"""Differential fuzz of two engine-suite runners (engine-suite/README.md): random lines on every
suite case's bundle (actions of every type the definitions name and the generic ones, from ids
right and wrong, row taps on rows that are there, gone or malformed, params with odd numbers,
lists and rows good and malformed for the list effects, the engine's own row.* params, text in
NFC and NFD, control characters, deep links good and malformed, interactive flags, predict and
dry runs, available actions and junk lines)
are sent to both runners, which must answer the same bytes; `message` members of error lines
are left out of the comparison, as the suite leaves them out. Needs no server.

    python3 clients/js/tools/engine_fuzz.py --seeds 1-30 --cases 80 \
        --reference ".build/debug/flowstack engine-suite run" \
        --candidate "node clients/js/bin/engine-suite-runner.mjs"

Exit status 0 when every answer agreed, 1 otherwise (the first differences are printed).
"""

import argparse
import copy
import json
import os
import random
import re
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MESSAGE = re.compile(r'"message":"(?:[^"\\]|\\.)*"')


def make_lines(seed, count, cases):
    """The input of one seed: `count` cases, each a bundle then 5 to 39 random lines."""
    rng = random.Random(seed)
    bundles, types = [], set(['back','interaction.update','interaction.end','interaction.cancel','link','link.cancel','nope.x'])
    row_ids, section_ids, kinds = set(), set(), set()
    def collect(value):
        """The row and section ids and row kinds written anywhere in a bundle (definitions, tree)."""
        if isinstance(value, dict):
            if isinstance(value.get('rows'), list) and isinstance(value.get('id'), str):
                section_ids.add(value['id'])
            if isinstance(value.get('kind'), str) and isinstance(value.get('id'), str) and 'values' in value:
                row_ids.add(value['id'])
                kinds.add(value['kind'])
            for member in value.values():
                collect(member)
        elif isinstance(value, list):
            for element in value:
                collect(element)
    own = {}  # a bundle's own action types and rows, so its rules (row taps, list effects) are hit often
    for name in sorted(os.listdir(cases)):
        lines = open(os.path.join(cases, name), encoding='utf-8').read().split('\n')
        bundles.append(lines[1])
        bundle = json.loads(lines[1])['bundle']
        before = set(row_ids)
        row_ids.clear()
        collect(bundle)
        own[lines[1]] = (sorted({t for d in bundle['definitions'].values() for t in d.get('on', {})}), sorted(row_ids))
        row_ids.update(before)
        for d in bundle['definitions'].values():
            types.update(d.get('on', {}).keys())
    row_ids = sorted(row_ids) + ['gone', 'caf\u00e9', 'cafe\u0301', '']
    section_ids = sorted(section_ids) + ['Q', '', 'caf\u00e9']
    kinds = sorted(kinds) + ['', 'other.row']
    types = sorted(types) + ['back'] * 6 + ['interaction.update', 'interaction.end', 'link'] * 3
    uris = ['/modal/Hi', '/modal/%E2%9C%93', '/home/1', '/home/abc', '/home/99', 'myapp://x/home/1', 'myapp://X/modal/a+b?x=1', '/nowhere', '', 'no space', '/a/{b}', '//x', 'myapp:/modal/Hi', '/modal/%ZZ', '/modal/%C3', '/checkout', '/paywall', '/home/1?tab=2', '/settings', 'https://example.com/home/0#frag', '/modal/%2F', 'x'*3000]
    def number():
        return rng.choice([0, 1, -1, 2, 0.5, 0.51, 1.0, 2.5e-5, 1e-7, 0.0001, 1e20, 9007199254740993, 12345678901234567890, -0.0, 301, 299.9, 1e300, 0.49999, 3, 10, 1e17, 9.3e18, -9223372036854775808, 9223372036854775807, 1.5])
    def value(depth=0):
        k = rng.randrange(8 if depth < 2 else 5)
        if k == 0: return None
        if k == 1: return rng.choice([True, False])
        if k == 2: return number()
        if k == 3: return rng.choice(['', 'Hi', 'caf\u00e9', 'cafe\u0301', '/\\"\n\t\u0001\u007f\u2028', '\U0001F600', 'e3', 'f1'])
        if k == 4: return rng.choice(['home.first', 'modal', 'onboarding.first', 'e1', 'e5'])
        if k == 5: return [value(depth+1) for _ in range(rng.randrange(3))]
        return {rng.choice(['a','street','$param','content','b']): value(depth+1) for _ in range(rng.randrange(3))}
    def row():
        """A row as a list param gives it: mostly well formed, sometimes not."""
        r = {'id': rng.choice(row_ids), 'kind': rng.choice(kinds)}
        k = rng.random()
        if k < 0.5: r['values'] = {rng.choice(['name', 'city', 'starred']): value(1) for _ in range(rng.randrange(3))}
        elif k < 0.55: r['values'] = rng.choice([None, [1], 'x'])
        elif k < 0.6: del r[rng.choice(['id', 'kind'])]
        elif k < 0.63: r['extra'] = 1
        elif k < 0.66: r['id'] = rng.choice([5, None, 'x' * 201])
        return r
    def rows():
        return rng.choice([[row() for _ in range(rng.randrange(4))], [], 'rows', {'$param': 'rows'}, [row(), 3]])
    def sections():
        out = []
        for _ in range(rng.randrange(4)):
            section = {'id': rng.choice(section_ids), 'rows': rows() if rng.random() < 0.3 else [row() for _ in range(rng.randrange(4))]}
            if rng.random() < 0.4: section['title'] = rng.choice(['A', '', None, 3, 'x' * 201])
            if rng.random() < 0.2: section['indexTitle'] = rng.choice(['A', None])
            if rng.random() < 0.05: del section['rows']
            if rng.random() < 0.03: section['extra'] = True
            out.append(section)
        return rng.choice([out] * 8 + [{}, 'sections'])
    def params():
        p = {}
        for _ in range(rng.randrange(4)):
            key = rng.choice(['index','progress','velocity','uri','content','address','id','plan','tab','x','caf\u00e9', 'note',
                              'sections', 'rows', 'section', 'id', 'name', 'country', 'row.id', 'row.kind', 'row.values'])
            if key == 'uri' and rng.random() < 0.8: p[key] = rng.choice(uris)
            elif key in ('index','progress','velocity','tab') and rng.random() < 0.8: p[key] = number()
            elif key == 'sections' and rng.random() < 0.9: p[key] = sections()
            elif key == 'rows' and rng.random() < 0.9: p[key] = rows()
            elif key in ('section', 'country') and rng.random() < 0.9: p[key] = rng.choice(section_ids + ['FR', 'DE', 'IT'])
            elif key == 'id' and rng.random() < 0.8: p[key] = rng.choice(row_ids + ['n%d' % rng.randrange(5)])
            elif key == 'row.id' and rng.random() < 0.8: p[key] = rng.choice(row_ids)
            else: p[key] = value()
        return p
    def line(bundle):
        r = rng.random()
        if r < 0.03: return rng.choice(['garbage', '[]', '{}', '{"available":false}', '{"action":"back"}', '{"action":{"type":"back","extra":1}}'])
        if r < 0.12: return json.dumps({'available': True})
        own_types, own_rows = own[bundle]
        a = {'type': rng.choice(own_types if own_types and rng.random() < 0.5 else types)}
        if rng.random() < 0.3: a['from'] = rng.choice(['e%d' % rng.randrange(1, 25), 'f1', 'e0', 'e01', 'x', None, 5])
        if own_rows and rng.random() < 0.5: a['row'] = rng.choice(own_rows)
        elif rng.random() < 0.2: a['row'] = rng.choice(row_ids * 4 + [None, 7, '', 'x' * 201, ['a']])
        if a['type'] == 'link' and rng.random() < 0.8: a['params'] = {'uri': rng.choice(uris)}
        elif rng.random() < 0.6: a['params'] = params()
        if rng.random() < 0.3: a['interactive'] = rng.choice([True, True, False, 'yes'])
        out = {'action': a}
        if rng.random() < 0.2: out['predict'] = True
        if rng.random() < 0.15: out['dryRun'] = True
        return json.dumps(out, ensure_ascii=rng.random() < 0.5, separators=(',', ':'))
    out = []
    for _ in range(count):
        bundle = rng.choice(bundles)
        out.append(bundle)
        for _ in range(rng.randrange(5, 40)):
            out.append(line(bundle))
    return out


def make_broken_bundles(seed, count, cases):
    """The input of one seed in bundle mode: `count` suite bundles, each broken at one or two
    random places (a value replaced by another or by junk, a member dropped or added, an element
    appended) in its definitions, tree, context or versions, then an available-actions line; the
    readers of definitions and trees must fail at the same pointer."""
    rng = random.Random(seed)
    bundles = [json.loads(open(os.path.join(cases, n), encoding='utf-8').read().split('\n')[1])['bundle'] for n in sorted(os.listdir(cases))]
    junk = [None, True, 0, -1, 1.5, 99, '', 'x', 'stacked', 'tabbed', 'e3', 'home', 'app', '/modal/{content}', '/a/{x}/{x}', 'myapp://h/x?y={z}', [], [1], {}, {'push': 'x'}, {'pop': {}}, {'bubble': {}}, {'flag': 'f', 'is': True}, {'user': 'u', 'in': [1]}, {'all': []}, {'not': {'param': 'p', 'exists': True}}, {'$param': 'index'}, {'$link': 'content'}, {'screen': 'a'}, {'flow': 'modal'}, {'handoff': 'purchase'}, {'present': {'flow': 'modal', 'style': {'compact': 'pageSheet'}}}, {'selectTab': 5}, {'result': {'into': 'a', 'value': 1}}, {'popTo': {'id': 'e0'}}, {'setUser': {}}, 'interaction.end', {'description': 3},
            [{'id': 'A', 'rows': []}], [{'id': 'A', 'rows': [{'id': 'a', 'kind': 'k'}, {'id': 'a', 'kind': 'k'}]}], {'id': 'r', 'kind': 'k', 'values': {}},
            {'removeRow': {'row': 'ada'}}, {'insertRow': {'section': 'A', 'row': {'id': 'n', 'kind': 'k'}, 'at': 9}}, {'moveRow': {'row': {'$param': 'row.id'}, 'at': -1}},
            {'setSections': {'sections': {'$param': 'sections'}}}, {'screen': 'contacts', 'sections': []}, {'row': 'contact'}, 'row.id', {'$param': 'row.values'}]
    def paths(value, path=()):
        yield path
        if isinstance(value, dict):
            for k, v in value.items(): yield from paths(v, path + (k,))
        elif isinstance(value, list):
            for i, v in enumerate(value): yield from paths(v, path + (i,))
    def get(v, p):
        for t in p: v = v[t]
        return v
    out = []
    for _ in range(count):
        b = copy.deepcopy(rng.choice(bundles))
        for _ in range(rng.randrange(1, 3)):
            area = rng.choice(['definitions'] * 5 + ['tree', 'context', 'flowVersions', None])
            root = b if area is None else b[area]
            ps = list(paths(root))
            p = rng.choice(ps[1:] if len(ps) > 1 else ps)
            parent = get(root, p[:-1]) if p else None
            op = rng.random()
            if parent is None: continue
            if op < 0.35: parent[p[-1]] = copy.deepcopy(rng.choice(junk))
            elif op < 0.55 and isinstance(parent, dict): del parent[p[-1]]
            elif op < 0.7 and isinstance(parent, dict): parent[rng.choice(['frm', 'when', 'via', 'params', 'interactive', 'guard', 'links', 'selected', 'style', 'extra', 'row', 'sections', 'rows', 'at'])] = copy.deepcopy(rng.choice(junk))
            elif op < 0.85 and isinstance(parent, list): parent.append(copy.deepcopy(rng.choice(junk)))
            else: parent[p[-1]] = copy.deepcopy(get(root, rng.choice(ps)))
        out.append(json.dumps({'bundle': b}, ensure_ascii=False, separators=(',', ':')))
        out.append('{"available":true}')
    return out


def run(command, lines):
    result = subprocess.run(shlex.split(command), input=('\n'.join(lines) + '\n').encode(), stdout=subprocess.PIPE, check=True)
    return result.stdout.decode().split('\n')[:-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--seeds', default='1-10', help='a range such as 1-30')
    parser.add_argument('--cases', type=int, default=60, help='cases (bundles) per seed')
    parser.add_argument('--suite', default=os.path.join(HERE, '..', '..', '..', 'engine-suite'))
    parser.add_argument('--reference', required=True, help='the reference runner command')
    parser.add_argument('--candidate', required=True, help='the runner under test')
    parser.add_argument('--mode', choices=['actions', 'bundles'], default='actions',
                        help='random actions on intact bundles, or broken bundles')
    args = parser.parse_args()
    first, _, last = args.seeds.partition('-')
    total = failed = 0
    for seed in range(int(first), int(last or first) + 1):
        make = make_lines if args.mode == 'actions' else make_broken_bundles
        lines = make(seed, args.cases, os.path.join(args.suite, 'cases'))
        expected = run(args.reference, lines)
        got = run(args.candidate, lines)
        for index, line in enumerate(lines):
            total += 1
            want = MESSAGE.sub('"message":M', expected[index]) if index < len(expected) else None
            have = MESSAGE.sub('"message":M', got[index]) if index < len(got) else None
            if want != have:
                failed += 1
                if failed <= 5:
                    print(f'seed {seed} line {index + 1}: {line[:200]}\n  reference {str(want)[:300]}\n  candidate {str(have)[:300]}')
    print(f'{total} lines, {failed} answers differed')
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
