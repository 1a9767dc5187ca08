#!/usr/bin/env python3
"""Writes test/fixtures/list-diffs.jsonl: random pairs of lists (sections of rows, ids from a
small pool so rows and sections move, some spelled in NFC in one list and NFD in the other) with
the list changes a reference runner answers for them, so test/engine.lists.test.js holds the
JavaScript diff to the Swift one without a Swift build.

    python3 clients/js/tools/list_diff_fixture.py --reference ".build/debug/flowstack engine-suite run" \\
        --seed 37 --count 400 > clients/js/test/fixtures/list-diffs.jsonl

Each pair goes through the runner as the suite's lists-from-params case does it: the case's
bundle with the contacts screen's list set to `old`, then `contacts.load` with `new` as its
`sections` param. A line is `{"old", "new", "changes"}`, `changes` the transition's
`{"sections", "rows"}` for that screen, or null when the runner reports none (equal lists).
"""

import argparse
import json
import os
import random
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = os.path.join(HERE, '..', '..', '..', 'engine-suite', 'cases', 'lists.lists-from-params.jsonl')

# Canonical ids; 'café' is written precomposed or decomposed at random, one id either way.
SECTION_IDS = ['A', 'B', 'C', 'D', 'caf\u00e9']
ROW_IDS = ['r%d' % n for n in range(14)] + ['n\u00e9']
KINDS = ['contact', 'contact.vip']


def spelled(rng, text):
    return text.replace('\u00e9', 'e\u0301') if '\u00e9' in text and rng.random() < 0.5 else text


def random_lists(rng):
    """Two lists over the same id pools: the second mostly the first, shuffled and edited."""
    def make():
        sections = []
        ids = rng.sample(ROW_IDS, rng.randrange(len(ROW_IDS) + 1))
        for section_id in rng.sample(SECTION_IDS, rng.randrange(len(SECTION_IDS) + 1)):
            take = rng.randrange(len(ids) + 1) if ids else 0
            rows = [{'id': spelled(rng, row), 'kind': rng.choice(KINDS), 'values': {'n': rng.randrange(3)}} for row in ids[:take]]
            ids = ids[take:]
            section = {'id': spelled(rng, section_id), 'rows': rows}
            if rng.random() < 0.5:
                section['title'] = rng.choice(['x', 'y'])
            sections.append(section)
        return sections

    old = make()
    if rng.random() < 0.3:
        return old, make()
    new = json.loads(json.dumps(old))
    for _ in range(rng.randrange(1, 5)):
        roll = rng.random()
        all_rows = [(s, r) for s in range(len(new)) for r in range(len(new[s]['rows']))]
        if roll < 0.2 and all_rows:  # move a row
            s, r = rng.choice(all_rows)
            row = new[s]['rows'].pop(r)
            target = rng.randrange(len(new))
            new[target]['rows'].insert(rng.randrange(len(new[target]['rows']) + 1), row)
        elif roll < 0.35 and all_rows:  # delete a row
            s, r = rng.choice(all_rows)
            new[s]['rows'].pop(r)
        elif roll < 0.5 and new:  # insert a row
            used = {row['id'].replace('e\u0301', '\u00e9') for section in new for row in section['rows']}
            free = [row for row in ROW_IDS if row not in used]
            if free:
                target = rng.randrange(len(new))
                new[target]['rows'].insert(rng.randrange(len(new[target]['rows']) + 1),
                                           {'id': spelled(rng, rng.choice(free)), 'kind': 'contact', 'values': {}})
        elif roll < 0.65 and all_rows:  # change a row's values or kind
            s, r = rng.choice(all_rows)
            row = new[s]['rows'][r]
            if rng.random() < 0.5:
                row['values'] = {'n': rng.randrange(3)}
            else:
                row['kind'] = rng.choice(KINDS)
        elif roll < 0.75 and len(new) > 1:  # move a section
            section = new.pop(rng.randrange(len(new)))
            new.insert(rng.randrange(len(new) + 1), section)
        elif roll < 0.82 and new:  # delete a section
            new.pop(rng.randrange(len(new)))
        elif roll < 0.9:  # insert a section
            used = {section['id'].replace('e\u0301', '\u00e9') for section in new}
            free = [section for section in SECTION_IDS if section not in used]
            if free:
                new.insert(rng.randrange(len(new) + 1), {'id': spelled(rng, rng.choice(free)), 'rows': []})
        elif new:  # retitle a section
            section = rng.choice(new)
            section['title'] = rng.choice(['x', 'z'])
            if rng.random() < 0.3:
                section['indexTitle'] = 'X'
    return old, new


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--reference', required=True, help='the reference runner command')
    parser.add_argument('--seed', type=int, default=37)
    parser.add_argument('--count', type=int, default=400)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    bundle = json.loads(open(CASE, encoding='utf-8').read().split('\n')[1])['bundle']
    pairs, lines = [], []
    for _ in range(args.count):
        old, new = random_lists(rng)
        pairs.append((old, new))
        bundle['tree']['root']['entries'][0]['sections'] = old
        lines.append(json.dumps({'bundle': bundle}, ensure_ascii=False, separators=(',', ':')))
        action = {'type': 'contacts.load', 'from': 'e2', 'params': {'sections': new}}
        lines.append(json.dumps({'action': action}, ensure_ascii=False, separators=(',', ':')))
    result = subprocess.run(shlex.split(args.reference), input=('\n'.join(lines) + '\n').encode(), stdout=subprocess.PIPE, check=True)
    answers = result.stdout.decode().split('\n')[:-1]
    for index, (old, new) in enumerate(pairs):
        answer = json.loads(answers[2 * index + 1])
        if 'refused' in answer or 'error' in answer:
            sys.exit(f'pair {index} was refused: {answers[2 * index + 1][:300]}')
        lists = (answer.get('transition') or {}).get('lists') or []
        changes = {'sections': lists[0]['sections'], 'rows': lists[0]['rows']} if lists else None
        print(json.dumps({'old': old, 'new': new, 'changes': changes}, ensure_ascii=False, separators=(',', ':')))


if __name__ == '__main__':
    main()
