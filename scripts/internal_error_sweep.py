"""Count the doctor's own failures ("autograd-doctor internal error", printed under
AUTOGRAD_DOCTOR_DEBUG=1) over every corpus: fresh bug sets (buggy and correct), tests/bug_reports/programs,
the error catalogue's programs, the held-out variants, tests/silent, examples/. A fork server (see
scripts/silence_sweep.py), one program at a time.

    AUTOGRAD_DOCTOR_DEBUG=1 PYTHONPATH=ABS/src nice python scripts/internal_error_sweep.py OUT default,full,strict [fresh,catalogue,...]

OUT/results.jsonl: one row per program and mode with `internal` (how many failures); the
tracebacks are in OUT/logs/MODE/. A cut-off run resumes where it stopped.
"""
import json, os, sys, time, shutil, glob
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, os.path.join(REPO, "tests/errors"))
import silence_sweep as s

def corpora():
    found = []
    for setdir in sorted(glob.glob(f"{REPO}/tests/bug_reports/fresh/set*")):
        for f in sorted(glob.glob(f"{setdir}/cases/*.py")):
            found.append(("fresh", f"{os.path.basename(setdir)}/{os.path.basename(f)[:-3]}", os.path.basename(f), [(f, os.path.basename(f))]))
    for f in sorted(glob.glob(f"{REPO}/tests/bug_reports/programs/*.py")):
        found.append(("bug_programs", os.path.basename(f)[:-3], os.path.basename(f), [(f, os.path.basename(f))]))
    for f in sorted(glob.glob(f"{REPO}/tests/errors/programs/*.py")):
        found.append(("catalogue", os.path.basename(f)[:-3], os.path.basename(f), [(f, os.path.basename(f))]))
    import held_out
    V = f"{REPO}/tests/errors/variants"
    for name in held_out.variant_names():
        found.append(("variants", name, f"{name}.py", [(os.path.join(V, fn), fn) for fn in held_out.files_of(name)]))
    for f in sorted(glob.glob(f"{REPO}/tests/silent/programs/*.py")):
        found.append(("silent", os.path.basename(f)[:-3], os.path.basename(f), [(f, os.path.basename(f))]))
    for f in sorted(glob.glob(f"{REPO}/examples/*.py")):
        found.append(("examples", os.path.basename(f)[:-3], os.path.basename(f), [(f, os.path.basename(f))]))
    for name, fn, files in s.programs():
        found.append(("correct", name, fn, files))
    return found

def main():
    out, modes, only = sys.argv[1], sys.argv[2].split(","), (sys.argv[3].split(",") if len(sys.argv) > 3 else None)
    import torch, torch.nn.functional, torch.utils.checkpoint, torch._dynamo
    import autograd_doctor.cli, autograd_doctor.cli.runner, autograd_doctor.doctor
    print("doctor:", autograd_doctor.__file__, flush=True)
    found = [c for c in corpora() if only is None or c[0] in only]
    todo = [(corp, name, mode, fn, files) for mode in modes for corp, name, fn, files in found]
    os.makedirs(out, exist_ok=True)
    rp = os.path.join(out, "results.jsonl")
    done = set()
    if os.path.exists(rp):
        for line in open(rp):
            r = json.loads(line); done.add((r["corpus"], r["name"], r["mode"]))
    todo = [t for t in todo if (t[0], t[1], t[2]) not in done]
    print(len(todo), "runs", flush=True)
    with open(rp, "a") as results:
        for corp, name, mode, fn, files in todo:
            key = f"{corp}__{name.replace('/', '__')}"
            work = os.path.join(out, "work", mode, key)
            shutil.rmtree(work, ignore_errors=True); s.stage(files, work)
            output = os.path.join(out, "logs", mode, key + ".txt")
            os.makedirs(os.path.dirname(output), exist_ok=True)
            sys.stdout.flush(); sys.stderr.flush()
            t0 = time.monotonic()
            pid = os.fork()
            if pid == 0:
                s.child(mode, os.path.join(work, fn), work, output)
            while True:
                p, st = os.waitpid(pid, os.WNOHANG)
                if p: break
                if time.monotonic() - t0 > 120: os.kill(pid, 9)
                time.sleep(0.02)
            text = open(output, errors="replace").read()
            n = text.count("autograd-doctor internal error")
            row = {"corpus": corp, "name": name, "mode": mode, "internal": n, "secs": round(time.monotonic() - t0, 1)}
            results.write(json.dumps(row) + "\n"); results.flush()
            if n: print(json.dumps(row), flush=True)
            shutil.rmtree(work, ignore_errors=True)
if __name__ == "__main__":
    main()
