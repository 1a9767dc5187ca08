#!/usr/bin/env python3
"""Differential fuzz of the definition readers: the lists suite's definition and the sample app's
address picker, broken at one or two random places (list junk: sections, rows, row kinds, list
effects, param references), read by the JavaScript engine (`readDefinition`) and checked by the
Swift one (`flowstack flows validate FILE`, one file at a time). Wherever the JavaScript reader
finds problems, the Swift output for that file must be the same lines (pointer and message, in
order). Files the JavaScript reader accepts are counted only: the Swift check adds the catalog's
problems there (flows a file names, screens that never hold a list), which the engine does not
port.

    python3 clients/js/tools/reader_fuzz.py --flowstack .build/debug/flowstack --seeds 1-2 --count 300

Exit status 0 when every compared file agreed, 1 otherwise (the first differences are printed).
"""

import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, '..', '..', '..')
JUNK = [None, True, 0, -1, 1.5, '', 'x', 'x' * 201, [], [1], {}, {'$param': 'sections'}, {'$param': ''}, {'$param': 'row.id'},
        {'$param': 'undeclared'}, [{'id': 'A', 'rows': []}], [{'id': 'A', 'rows': []}, {'id': 'A', 'rows': []}],
        [{'id': 'A', 'rows': [{'id': 'a', 'kind': 'k'}, {'id': 'a', 'kind': 'k'}]}], {'id': 'r', 'kind': 'k', 'values': {}},
        {'id': 'r'}, {'kind': 'k'}, {'id': 'r', 'kind': {'$param': 'k'}}, {'id': 'r', 'kind': 'k', 'values': 3},
        {'removeRow': {'row': 'ada'}}, {'removeRow': {}}, {'insertRow': {'section': 'A', 'row': {'id': 'n', 'kind': 'k'}, 'at': -1}},
        {'moveRow': {'row': {'$param': 'row.id'}, 'at': 'x'}}, {'setRows': {'section': 3, 'rows': 'r'}},
        {'updateRow': {'row': 'a', 'values': 3}}, {'setSections': {'sections': {'$param': 'sections'}, 'extra': 1}},
        {'setSections': 3}, {'screen': 'contacts', 'sections': []}, {'flow': 'x', 'sections': []}, 'contact',
        ['contact', ''], ['contact', 3], 'row.id', {'title': 3}, {'indexTitle': None}]
JS = """
import { readFileSync } from 'node:fs';
import { parseJSON, readDefinition, DefinitionProblems } from %s;
for (const file of process.argv.slice(2)) {
  try { readDefinition(parseJSON(readFileSync(file, 'utf8'))); }
  catch (error) {
    if (!(error instanceof DefinitionProblems)) throw error;
    for (const problem of error.problems) console.log(`${file}:${problem.path}: ${problem.message}`);
  }
}
"""


def paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, member in value.items():
            yield from paths(member, path + (key,))
    elif isinstance(value, list):
        for index, element in enumerate(value):
            yield from paths(element, path + (index,))


def broken(rng, definitions):
    definition = copy.deepcopy(rng.choice(definitions))
    for _ in range(rng.randrange(1, 3)):
        path = rng.choice(list(paths(definition))[1:])
        parent = definition
        for token in path[:-1]:
            parent = parent[token]
        roll = rng.random()
        if roll < 0.5:
            parent[path[-1]] = copy.deepcopy(rng.choice(JUNK))
        elif roll < 0.7 and isinstance(parent, dict):
            del parent[path[-1]]
        elif roll < 0.85 and isinstance(parent, dict):
            parent[rng.choice(['row', 'sections', 'rows', 'at', 'screen', 'extra', 'values'])] = copy.deepcopy(rng.choice(JUNK))
        elif isinstance(parent, list):
            parent.append(copy.deepcopy(rng.choice(JUNK)))
    return definition


def by_file(text):
    lines = {}
    for line in text.split('\n'):
        name, _, rest = line.partition(':')
        if name.endswith('.json') and rest:
            lines.setdefault(os.path.basename(name), []).append(rest)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--flowstack', required=True, help='the flowstack binary (flows validate)')
    parser.add_argument('--seeds', default='1-2')
    parser.add_argument('--count', type=int, default=300, help='definitions per seed')
    args = parser.parse_args()
    definitions = [json.load(open(os.path.join(ROOT, 'engine-suite', 'sources', 'lists.json'), encoding='utf-8'))['definitions']['app'],
                   json.load(open(os.path.join(ROOT, 'flows', 'address.json'), encoding='utf-8'))]
    engine = json.dumps('file://' + os.path.abspath(os.path.join(HERE, '..', 'src', 'engine', 'index.js')))
    first, _, last = args.seeds.partition('-')
    compared = accepted = differed = 0
    for seed in range(int(first), int(last or first) + 1):
        rng = random.Random(seed)
        work = tempfile.mkdtemp(prefix='reader-fuzz-')
        try:
            files = []
            for number in range(args.count):
                name = os.path.join(work, f'd{number:04d}.json')
                with open(name, 'w', encoding='utf-8') as out:
                    json.dump(broken(rng, definitions), out, ensure_ascii=False)
                files.append(name)
            script = os.path.join(work, 'read.mjs')
            with open(script, 'w', encoding='utf-8') as out:
                out.write(JS % engine)
            js = by_file(subprocess.run(['node', script, *files], stdout=subprocess.PIPE, check=True, text=True).stdout)
            for name in files:
                base = os.path.basename(name)
                if base not in js:
                    accepted += 1
                    continue
                swift = by_file(subprocess.run([args.flowstack, 'flows', 'validate', name], stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True).stdout).get(base, [])
                compared += 1
                if swift != js[base]:
                    differed += 1
                    if differed <= 5:
                        print(f'seed {seed} {base}:\n  swift {swift[:3]}\n  js    {js[base][:3]}')
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f'{compared} definitions with problems compared, {differed} differed; {accepted} the JavaScript reader accepted')
    sys.exit(1 if differed else 0)


if __name__ == '__main__':
    main()
