"""Long calls release the GIL, report progress and stop on Ctrl-C."""

import _thread
import faulthandler
import signal
import threading
import time

import numpy as np
import pytest

import terrasynth

# A thermal run long enough for several 50 ms progress polls even in an optimised build.
DEM = terrasynth.noise('kind = "perlin", fractal = "fbm", octaves = 6, seed = 5', 0, 0, 384, 384, 1 / 64, 1 / 64)
ITER = 400


def test_two_threads_run_in_parallel():
    """Each thread's progress callbacks run only while its own call is in flight (the last one,
    after it, is marked). If the callback of one thread runs between two in-flight callbacks of
    the other, both calls were running at once: neither held the GIL while it computed."""
    events = []
    lock = threading.Lock()
    results = {}
    spans = {}

    def work(name):
        def progress(f):
            with lock:
                events.append(name)

        t0 = time.perf_counter()
        results[name] = terrasynth.erode(DEM, "thermal", iterations=ITER, progress=progress)
        spans[name] = (t0, time.perf_counter())
        with lock:
            events.append(name + "-done")

    threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert np.array_equal(results["a"], results["b"])

    def interleaved(x, y):
        # x … y … x, where the second x is before x's call returned (the final 1.0 callback
        # comes before "x-done", so require another x event before that final one).
        seq = [e for e in events if e in (x, y, x + "-done")]
        done = seq.index(x + "-done")
        inflight = seq[: done - 1]  # drop x's final callback
        first_x = inflight.index(x) if x in inflight else None
        if first_x is None:
            return False
        rest = inflight[first_x + 1 :]
        return y in rest and x in rest[rest.index(y) + 1 :]

    assert interleaved("a", "b") or interleaved("b", "a"), events
    (a0, a1), (b0, b1) = spans["a"], spans["b"]
    assert max(a0, b0) < min(a1, b1), "the calls' wall intervals overlap"


def test_progress_reports_fractions_in_order():
    seen = []
    terrasynth.erode(DEM, "thermal", iterations=ITER, progress=seen.append)
    assert seen[-1] == 1.0
    assert seen == sorted(seen) and all(0.0 <= f <= 1.0 for f in seen)
    assert len(seen) >= 2


@pytest.fixture(autouse=True)
def sigint_raises_keyboard_interrupt():
    """Python installs its KeyboardInterrupt handler only when SIGINT is not ignored at start-up,
    and a CI that starts its jobs in the background (non-interactive `&`) ignores it: then
    `_thread.interrupt_main` does nothing and the Ctrl-C tests would run 10⁶ iterations. Every
    test here runs with Python's own handler, as in an interactive session, and puts the
    inherited one back. Should a Ctrl-C still be missed, the process exits after 5 minutes
    with every thread's traceback instead of hanging CI."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    faulthandler.dump_traceback_later(300, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
    signal.signal(signal.SIGINT, previous)


def _interrupt_once_started():
    """A progress callback that, on its first call (so the job is surely running), starts a
    thread that sends SIGINT to the main thread, as Ctrl-C would."""
    started = threading.Event()

    def progress(f):
        if not started.is_set():
            started.set()
            threading.Thread(target=_thread.interrupt_main).start()

    return progress, started


def test_ctrl_c_stops_erosion():
    progress, started = _interrupt_once_started()
    with pytest.raises(KeyboardInterrupt):
        terrasynth.erode(DEM, "thermal", iterations=10**6, progress=progress)
    assert started.is_set()
    # The next call runs normally (no stale interrupt, no stale cancel flag).
    assert terrasynth.erode(DEM, "thermal", iterations=1).shape == DEM.shape


def test_ctrl_c_stops_an_export_and_leaves_no_file(tmp_path):
    terrain = terrasynth.Recipe.preset("mountains").generate(size=2049, seed=1)
    progress, started = _interrupt_once_started()
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        terrain.export(out, progress=progress)
    assert started.is_set()
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_stops_generate():
    progress, started = _interrupt_once_started()
    recipe = terrasynth.Recipe.preset("mountains")
    with pytest.raises(KeyboardInterrupt):
        recipe.generate(size=4097, progress=progress)
    assert started.is_set()
