# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Helper of selftests/95-rdma-core-suite.sh (not a test by itself).

run TESTS_DIR RECORD [--test-timeout S] [--exclude GLOB]... --
        RUN_TESTS_ARGS...
    Runs rdma-core's TESTS_DIR/run_tests.py itself, unmodified, with
    RUN_TESTS_ARGS (e.g. --dev scire0 --gid 1 -v), as
    `python3 run_tests.py ...` would, and also appends one JSON line per
    event to RECORD: {"ev": "start", "id": ...} when a test starts, and
    {"ev": "end", "id", "status", "secs", "detail"} when it ends (status
    pass, skip, fail or error; detail: the skip reason or the traceback).
    RECORD is flushed after every line, so when the whole run is killed
    (timeout) the last "start" without an "end" names the test that hung.
    Each test also gets SIGALRM after S seconds (default 120): a test that
    hangs in Python code then errors as "timed out" and the run goes on.
    Tests whose id matches a GLOB (fnmatch) are not loaded at all.
    With --resume STATUS, RECORD holds an earlier run that died (python3
    killed by a signal inside a test, exit status STATUS): the test it
    died in is recorded as an error saying so, and every test RECORD
    already has an outcome for is left out, so the rest of the suite runs.

    One adaptation, the same for every device: the suite finds the IP
    address its rdma_cm tests bind to through the sysfs link
    /sys/class/infiniband/DEV/device/net/, which only devices with a
    parent bus device have; software devices (rxe, siw, scire) have none,
    so every rdma_cm test would skip ("doesn't have net interface") on
    both. When that link is missing, the netdev of the GID in use
    (/sys/class/infiniband/DEV/ports/PORT/gid_attrs/ndevs/GID) is used
    instead, which is what the link would have led to.

compare [--all] SCIRE_RECORD RXE_RECORD
    With --all, first one line per test: both outcomes and scire's reason.
    Prints both runs' counts and commonest skip reasons, and lists (with scire's traceback or skip
    reason) every test that fails, errors, hangs, is skipped or did not run
    on scire but passes on rxe, then the tests that fail on both and those
    that ran on scire only. Exit status 1 if any test fails, errors, hangs
    or does not run on scire but passes on rxe (the criterion: no test
    fails on scire that passes on rxe); 2 on bad records. A test scire
    skips (the suite skips on EOPNOTSUPP and missing capabilities) but rxe
    passes is listed as a missing feature without failing.

clean RECORD
    Prints the run's counts and commonest skip reasons; exit status 0 if it recorded at least one
    test and none failed, errored or hung, else 1. When scire's run is
    clean, no test can fail on scire yet pass on rxe, so the rxe run
    cannot change compare's verdict.
"""

import atexit
import fnmatch
import json
import os
import runpy
import signal
import sys
import time
import unittest
from importlib.machinery import SourceFileLoader

STATUSES = ('pass', 'skip', 'fail', 'error')


class TestTimeout(Exception):
    """Raised by SIGALRM inside a test that ran too long."""


def _test_id(test):
    """The id the record uses: a subtest counts for its parent test."""
    parent = getattr(test, 'test_case', None)
    if parent is not None and isinstance(test, unittest.case._SubTest):
        return parent.id()
    # setUpClass/setUpModule failures come as an _ErrorHolder whose
    # description is e.g. "setUpClass (tests.test_x.Class)".
    return test.id()


def _one_line(text, limit=300):
    text = ' '.join(str(text).split())
    return text if len(text) <= limit else text[:limit] + '...'


def make_result_class(record, test_timeout):
    """A TextTestResult that also writes the JSON record and arms SIGALRM."""
    out = open(record, 'a', encoding='utf-8')
    atexit.register(out.close)

    def emit(**kw):
        out.write(json.dumps(kw) + '\n')
        out.flush()

    def on_alarm(signum, frame):
        raise TestTimeout(f'test still running after {test_timeout} s '
                          '(per-test SIGALRM of rdma_core_suite.py)')

    signal.signal(signal.SIGALRM, on_alarm)

    class RecordingResult(unittest.TextTestResult):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._start = {}
            self._worst = {}

        def startTest(self, test):
            tid = _test_id(test)
            self._start[tid] = time.monotonic()
            self._worst.pop(tid, None)
            emit(ev='start', id=tid)
            signal.alarm(test_timeout)
            super().startTest(test)

        def _note(self, test, status, detail):
            """Keep the worst outcome of a test (subtests may add several)."""
            tid = _test_id(test)
            old = self._worst.get(tid)
            rank = {'pass': 0, 'skip': 1, 'fail': 2, 'error': 3}
            if old is None or rank[status] > rank[old[0]]:
                self._worst[tid] = (status, detail)
            if tid not in self._start:
                # setUpClass and friends: no startTest, no stopTest.
                emit(ev='end', id=tid, status=status, secs=0.0,
                     detail=detail)

        def stopTest(self, test):
            signal.alarm(0)
            super().stopTest(test)
            tid = _test_id(test)
            status, detail = self._worst.pop(tid, ('pass', ''))
            secs = time.monotonic() - self._start.pop(tid, time.monotonic())
            emit(ev='end', id=tid, status=status, secs=round(secs, 3),
                 detail=detail)

        def addSuccess(self, test):
            super().addSuccess(test)
            self._note(test, 'pass', '')

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self._note(test, 'skip', reason)

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._note(test, 'fail', self._exc_info_to_string(err, test))

        def addError(self, test, err):
            super().addError(test, err)
            self._note(test, 'error', self._exc_info_to_string(err, test))

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is None:
                return
            status = 'fail' if issubclass(err[0], test.failureException) \
                else 'error'
            self._note(subtest, status,
                       f'subtest {subtest}:\n' +
                       self._exc_info_to_string(err, test))

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self._note(test, 'pass', 'expected failure')

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._note(test, 'fail', 'unexpected success')

    return RecordingResult


def netdev_from_gid(base):
    """Let RDMATestCase find the netdev of a device without a parent."""
    orig = base.RDMATestCase._get_ip_mac

    def _get_ip_mac(self, dev, port, idx):
        sysdev = f'/sys/class/infiniband/{dev}'
        ndevs = f'{sysdev}/ports/{port}/gid_attrs/ndevs/{idx}'
        if idx is None or os.path.exists(f'{sysdev}/device/net/') or \
                not os.path.exists(ndevs):
            return orig(self, dev, port, idx)
        with open(ndevs, encoding='ascii') as f:
            net_name = f.read().strip()
        try:
            ip_addr, mac_addr = self.get_ip_mac_address(net_name)
        except (KeyError, IndexError):
            self.args.append([dev, port, idx, None, None])
        else:
            self.args.append([dev, port, idx, ip_addr, mac_addr])

    base.RDMATestCase._get_ip_mac = _get_ip_mac


def exclude_tests(globs, ids=frozenset()):
    """Make the default loader (the one unittest.main uses) drop tests
    whose id matches one of GLOBS or is in IDS."""
    loader = unittest.defaultTestLoader
    orig = loader.getTestCaseNames

    def get_names(case_class):
        prefix = f'{case_class.__module__}.{case_class.__qualname__}.'
        return [n for n in orig(case_class)
                if prefix + n not in ids and
                not any(fnmatch.fnmatchcase(prefix + n, g) for g in globs)]

    loader.getTestCaseNames = get_names


def cmd_run(argv):
    usage = ('usage: run TESTS_DIR RECORD [--test-timeout S] '
             '[--exclude GLOB]... [--resume STATUS] -- ARGS...')
    if len(argv) < 2:
        sys.exit(usage)
    tests_dir, record = os.path.abspath(argv[0]), argv[1]
    rest = argv[2:]
    test_timeout = 120
    globs = []
    died = None
    while rest and rest[0] != '--':
        if rest[0] == '--test-timeout' and len(rest) > 1:
            test_timeout = int(rest[1])
        elif rest[0] == '--exclude' and len(rest) > 1:
            globs.append(rest[1])
        elif rest[0] == '--resume' and len(rest) > 1:
            died = int(rest[1])
        else:
            sys.exit(usage)
        rest = rest[2:]
    rest = rest[1:]
    done = frozenset()
    if died is not None:
        done = resume(record, died)
    script = os.path.join(tests_dir, 'run_tests.py')
    unittest.TextTestRunner.resultclass = make_result_class(record,
                                                            test_timeout)
    # What `python3 run_tests.py ARGS` sets up: its directory first on the
    # path (it imports args_parser, and loads __init__.py as "tests").
    sys.path.insert(0, tests_dir)
    # Load the package as run_tests.py does, to adapt it before it runs;
    # run_tests.py's own load then finds its test modules already imported.
    SourceFileLoader('tests',
                     os.path.join(tests_dir, '__init__.py')).load_module()
    netdev_from_gid(sys.modules['tests.base'])
    if globs or done:
        exclude_tests(globs, done)
    sys.argv = [script] + rest
    runpy.run_path(script, run_name='__main__')


def load(record):
    """Return ({id: (status, secs, detail)}, [ids started, never ended])."""
    ends, started = {}, []
    with open(record, encoding='utf-8') as f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get('ev') == 'start':
                started.append(ev['id'])
            elif ev.get('ev') == 'end':
                ends[ev['id']] = (ev['status'], ev.get('secs', 0.0),
                                  ev.get('detail', ''))
    return ends, [t for t in started if t not in ends]


def resume(record, status):
    """Close the test an earlier run died in as an error; return the ids
    RECORD has an outcome for (the tests a resumed run leaves out)."""
    ends, hung = load(record)
    with open(record, 'a', encoding='utf-8') as out:
        for tid in hung:
            sig = f' (signal {status - 128})' if status > 128 else ''
            detail = (f'python3 died in this test, exit status {status}{sig}'
                      '; the suite was resumed after it')
            out.write(json.dumps({'ev': 'end', 'id': tid, 'status': 'error',
                                  'secs': 0.0, 'detail': detail}) + '\n')
            print(f'resume: {tid}: {detail}', flush=True)
            ends[tid] = ('error', 0.0, detail)
    return frozenset(ends)


def counts(res):
    n = {s: 0 for s in STATUSES}
    for status, _, _ in res.values():
        n[status] += 1
    return ' '.join(f'{n[s]} {s}' for s in STATUSES)


def slowest(res, k=8):
    top = sorted(res.items(), key=lambda kv: -kv[1][1])[:k]
    return ', '.join(f'{tid.split(".", 1)[-1]} {secs:.0f}s'
                     for tid, (_, secs, _) in top)


def skip_reasons(res, k=15):
    """Lines 'N  reason' for the K commonest skip reasons in RES (a
    reason's digits folded, so that one cause counts once)."""
    by = {}
    for status, _, detail in res.values():
        if status != 'skip':
            continue
        lines = detail.strip().splitlines() if detail else []
        why = _one_line(lines[-1] if lines else '(no reason given)', 100)
        why = ''.join('N' if c.isdigit() else c for c in why)
        by[why] = by.get(why, 0) + 1
    top = sorted(by.items(), key=lambda kv: (-kv[1], kv[0]))
    out = [f'    {n:4d}  {why}' for why, n in top[:k]]
    rest = sum(n for _, n in top[k:])
    if rest:
        out.append(f'    {rest:4d}  ({len(top) - k} other reasons)')
    return out


def indent(text, prefix='      | ', limit=40):
    lines = text.rstrip().splitlines()
    if len(lines) > limit:
        lines = lines[:8] + ['...'] + lines[-(limit - 9):]
    return '\n'.join(prefix + line for line in lines)


def cmd_compare(argv):
    show_all = argv[:1] == ['--all']
    if show_all:
        argv = argv[1:]
    if len(argv) != 2:
        sys.exit('usage: compare [--all] SCIRE_RECORD RXE_RECORD')
    try:
        scire, scire_hung = load(argv[0])
        rxe, rxe_hung = load(argv[1])
    except OSError as ex:
        print(f'compare: {ex}')
        return 2
    for name, res, hung in (('scire', scire, scire_hung),
                            ('rxe', rxe, rxe_hung)):
        total = sum(secs for _, secs, _ in res.values())
        print(f'{name}: {counts(res)} ({len(res)} tests, {total:.0f}s in '
              f'tests; slowest: {slowest(res)})')
        for tid in hung:
            print(f'{name}: HUNG in {tid} (started, never finished: the '
                  'run was killed there)')
        print(f'{name}: skips by reason:')
        print('\n'.join(skip_reasons(res)))
    if not scire or not rxe:
        print('compare: a run recorded no test at all')
        return 2

    if show_all:
        print('every test: scire/rxe outcome, scire\'s reason; rxe\'s if '
              'it differs')
        for tid in sorted(set(scire) | set(rxe)):
            s = scire.get(tid, ('-', 0, ''))
            r = rxe.get(tid, ('-', 0, ''))
            line = f'  {s[0]:>5}/{r[0]:<5} {s[1]:5.1f}s {tid}'
            if s[2]:
                line += ': ' + _one_line(s[2].strip().splitlines()[-1], 160)
            if r[2] and r[2] != s[2]:
                line += ' | rxe: ' + \
                    _one_line(r[2].strip().splitlines()[-1], 160)
            print(line)

    worse, skipped, both, scire_only = [], [], [], []
    for tid in sorted(set(scire) | set(rxe)):
        r = rxe.get(tid, ('not run', 0, ''))
        s = scire.get(tid)
        if s is None:
            why = 'hung' if tid in scire_hung else 'not run'
            s = (why, 0, 'the scire run stopped before this test'
                 if why == 'not run' else 'the scire run was killed here')
        if r[0] == 'pass' and s[0] != 'pass':
            (skipped if s[0] == 'skip' else worse).append((tid, s))
        elif s[0] in ('fail', 'error') and r[0] in ('fail', 'error'):
            both.append((tid, s, r))
        elif tid not in rxe:
            scire_only.append((tid, s))

    print(f'{len(worse)} test(s) fail, error or hang on scire but pass on '
          'rxe:')
    for tid, (status, secs, detail) in worse:
        print(f'  {status.upper()} {tid} ({secs:.1f}s)')
        print(indent(detail))
    print(f'{len(skipped)} test(s) skipped on scire but pass on rxe (not '
          'counted: scire says it lacks the feature, rxe has it):')
    for tid, (status, secs, detail) in skipped:
        print(f'  SKIP {tid}: {_one_line(detail)}')
    print(f'{len(both)} test(s) fail or error on both (not counted):')
    for tid, s, r in both:
        print(f'  {s[0]}/{r[0]} {tid}: scire: '
              f'{_one_line(s[2].strip().splitlines()[-1] if s[2] else "")}'
              f'; rxe: '
              f'{_one_line(r[2].strip().splitlines()[-1] if r[2] else "")}')
    print(f'{len(scire_only)} test(s) ran on scire only (excluded or not '
          'reached on rxe; not counted):')
    for tid, (status, _, detail) in scire_only:
        last = detail.strip().splitlines()[-1] if detail.strip() else ''
        print(f'  {status} {tid}' + (f': {_one_line(last)}' if last else ''))
    return 1 if worse else 0


def cmd_clean(argv):
    if len(argv) != 1:
        sys.exit('usage: clean RECORD')
    try:
        res, hung = load(argv[0])
    except OSError as ex:
        print(f'clean: {ex}')
        return 1
    bad = [tid for tid, (status, _, _) in res.items()
           if status in ('fail', 'error')]
    print(f'{counts(res)} ({len(res)} tests, {len(hung)} hung)')
    print('skips by reason:')
    print('\n'.join(skip_reasons(res)))
    for tid in sorted(bad) + hung:
        print(f'  not clean: {tid}')
    return 0 if res and not bad and not hung else 1


def main():
    cmds = {'run': cmd_run, 'compare': cmd_compare, 'clean': cmd_clean}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    if sys.argv[1] == 'run':
        cmd_run(sys.argv[2:])
        return 0
    return cmds[sys.argv[1]](sys.argv[2:])


if __name__ == '__main__':
    sys.exit(main())
