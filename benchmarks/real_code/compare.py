"""Per label and mode (the files run_mode.sh wrote): outcome, diagnoses (AD codes or doctor
warnings in the output), time ratio to plain, and whether the outcomes (pytest: per test, from the
JUnit XML; a run cut by its time bound is compared on the tests that finished in both) or the output
(scripts: timings masked) are those of plain python; for a pytest run whose tests all finished,
its printed output too (progress dots and timings masked: a warning more in the summary is a
difference).
usage: python compare.py OUT [LABEL,LABEL (not seeded: exit codes compared only)]"""
import collections, difflib, glob, os, re, sys
import xml.etree.ElementTree as ET
OUT = sys.argv[1] if len(sys.argv) > 1 else 'out'
TIMING = [r'\d+(\.\d+)?\s*(ms|s)\b', r'mfu -?[\d.]+%', r"'?\w*(runtime|per_second)'?: '?[\d.e+-]+'?", r'in [\d.]+s( \(\d+:\d+:\d+\))?',
          r'rc=\d+ secs=[\d.]+( cpu=[\d.+]+)?', r'^\s*[\d.]+s (call|setup|teardown) .*$', r'\d+ (durations|slowest).*', r'\(\d+ durations < .*\)',
          r'at 0x[0-9a-f]+', r'elapsed[^|]*', r's/b : [\d.]+', r'ms/batch +[\d.]+', r'time: +[\d.]+s']
def mask(text):
    lines = []
    for line in text.splitlines():
        for pat in TIMING:
            line = re.sub(pat, '<t>', line)
        lines.append(re.sub(r'\s+', ' ', line))
    return lines
PROGRESS = re.compile(r'^[.sEFxX]+ ?(\[ ?\d+%\])?$')  # pytest's dots: how many fit a line varies
def pytest_lines(text):
    lines = [re.sub(r' ?\(\d+:\d\d:\d\d\)', '', line) for line in mask(text)]  # pytest's wall time past a minute
    return [line for line in lines if not PROGRESS.match(line.strip())]
def cpu_seconds(text):
    found = re.findall(r'cpu=([\d.]+)\+([\d.]+)', text)
    seconds = float(found[-1][0]) + float(found[-1][1]) if found else None
    return seconds if seconds and seconds >= 0.1 else None  # ~0: the bound killed the run, `time` saw only the kill


def outcomes(xml):
    res = {}
    for case in ET.parse(xml).iter('testcase'):
        if case.get('name') is None:
            continue  # the entry pytest writes for a run interrupted at its time bound (KeyboardInterrupt)
        name = (case.get('classname') or '') + '::' + case.get('name')
        kind = 'passed'
        for child in case:
            if child.tag in ('failure', 'error', 'skipped'):
                kind = child.tag
        codes = [p.get('value') for p in case.iter('property') if p.get('name') == 'autograd_doctor_code']
        res[name] = (kind, tuple(codes))
    return res
NONDET = set(sys.argv[2].split(',')) if len(sys.argv) > 2 else set()  # not seeded: exit codes compared only
labels = sorted({os.path.basename(p).rsplit('-', 1)[0] for p in glob.glob(OUT + '/*-plain.txt')})
for label in labels:
    base = open(f'{OUT}/{label}-plain.txt', errors='replace').read()
    bsecs = float(re.findall(r'secs=([\d.]+)', base)[-1]) if 'secs=' in base else None
    bcpu = cpu_seconds(base)
    bxml = f'{OUT}/{label}-plain.xml'
    bout = outcomes(bxml) if os.path.exists(bxml) else None
    for mode in ('plain', 'default', 'full', 'strict'):
        p = f'{OUT}/{label}-{mode}.txt'
        if not os.path.exists(p):
            continue
        text = open(p, errors='replace').read()
        if 'secs=' not in text:
            print(f'{label:14s} {mode:8s} (running)'); continue
        rc = re.findall(r'rc=(\d+)', text)[-1]; secs = float(re.findall(r'secs=([\d.]+)', text)[-1])
        codes = sorted(set(re.findall(r'\bAD\d{3}\b', text)))
        warns = len(re.findall(r'AutogradDoctorWarning|autograd-doctor:', text))
        xml = f'{OUT}/{label}-{mode}.xml'
        if os.path.exists(xml):
            o = outcomes(xml)
            counts = collections.Counter(k for k, _ in o.values())
            codes = sorted(set(codes) | {c for _, cs in o.values() for c in cs})
            both = set(o) & set(bout or {})  # a run cut by its time bound is compared on the tests that finished in both
            differ = [n for n in both if o[n][0] != bout[n][0]]
            if bout is None or differ:
                same = f'OUTCOMES DIFFER ({len(differ)} tests)'
            elif set(o) == set(bout):
                changed = [d for d in difflib.ndiff(pytest_lines(base), pytest_lines(text)) if d[:2] in ('- ', '+ ')]
                changed = [d for d in changed if not re.search(r'rc=|secs=|cpu=', d)]
                same = 'same outcomes' if not changed or label in NONDET else f'same outcomes, OUTPUT DIFFERS ({len(changed)} lines)'
            else:
                same = f'same outcomes, {len(both)} in both'
            what = f'{dict(counts)}'
        else:
            diff = [(a, b) for a, b in zip(mask(base), mask(text)) if a != b]
            extra = abs(len(mask(base)) - len(mask(text)))
            if label in NONDET:
                diff, extra = [], 0
            same = 'same output' if not diff and not extra else f'OUTPUT DIFFERS ({len(diff)} lines, {extra} extra)'
            what = f'rc={rc}'
        cpu = cpu_seconds(text)
        if cpu is not None and bcpu:  # CPU time: steadier than wall time on a loaded machine
            ratio = f'{cpu / bcpu:.2f} (cpu {cpu:.1f} s)' if mode != 'plain' else f'- (cpu {cpu:.1f} s)'
        else:
            ratio = f'{secs / bsecs:.2f}' if bsecs and mode != 'plain' else '-'
        print(f'{label:14s} {mode:8s} {what:45s} {same:28s} codes={codes} doctor-lines={warns} secs={secs:.0f} ratio={ratio}')
