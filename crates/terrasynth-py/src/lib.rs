//! `terrasynth._terrasynth`: the pyo3 extension module under the `terrasynth` Python package
//! (`python/terrasynth/__init__.py` wraps it, converts arrays and holds the docs users see).
//!
//! A third front end beside the CLI and the editor: every call goes through the library's
//! public API (recipes and [`Pipeline`], [`export::write`], the hydrology types, the step
//! registry for erosion), nothing is reimplemented here. Long calls run on a worker thread with
//! the GIL released ([`run_long`]); the calling thread wakes every [`POLL`] to run the Python
//! progress callback and `check_signals`, so Ctrl-C cancels the job through the library's
//! [`Progress`] cancel flag.

use std::path::PathBuf;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use terrasynth::analyze::realism::{Realism, RealismOptions};
use terrasynth::export::{self, ExportOptions, Window};
use terrasynth::hydro::{D8Router, DepressionFiller, FlowGraph, RiversStep};
use terrasynth::io::engine::Engine;
use terrasynth::noise::{NoiseSpec, Region};
use terrasynth::recipe::{
    ErosionRecorder, Pipeline, PipelineProgress, RunOutput, StepEntry, StepScore, registry,
};
use terrasynth::step::{Category, ParamValue, Terrain};
use terrasynth::{Error, Heightmap, Progress, World};

/// How often the waiting thread runs the progress callback and checks for Ctrl-C.
const POLL: Duration = Duration::from_millis(50);

/// Largest worker thread count `generate(threads=…)` accepts (as the CLI's `--threads`).
const MAX_THREADS: usize = 1024;

/// The library's error as a Python exception: I/O problems are `OSError`, a cancelled job
/// `KeyboardInterrupt`, everything else (bad parameters, recipes, sizes) `ValueError`, each
/// with the library's one-line message.
fn py_err(e: Error) -> PyErr {
    match e {
        Error::Io { .. } => PyOSError::new_err(e.to_string()),
        Error::Cancelled => PyKeyboardInterrupt::new_err("cancelled"),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// Runs `job` on a worker thread with the GIL released. While it runs, the calling thread wakes
/// every [`POLL`], takes the GIL, checks signals (a pending `KeyboardInterrupt` calls `cancel`
/// and is raised once the job has stopped) and calls `callback(fraction())` when the fraction
/// changed; an exception from the callback also cancels the job and is raised. Only the
/// calling (main) thread sees signals, which is where Python delivers them.
fn run_long<T: Send>(
    py: Python<'_>,
    callback: Option<Py<PyAny>>,
    fraction: impl Fn() -> f64 + Sync,
    cancel: impl Fn() + Sync,
    job: impl FnOnce() -> terrasynth::Result<T> + Send,
) -> PyResult<T> {
    let mut raised: Option<PyErr> = None;
    let joined = py.detach(|| {
        std::thread::scope(|s| {
            let (done_tx, done_rx) = mpsc::channel::<()>();
            let worker = s.spawn(move || {
                let out = job();
                let _ = done_tx.send(());
                out
            });
            let mut last = f64::NAN;
            while let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(POLL) {
                if raised.is_some() {
                    continue;
                }
                Python::attach(|py| {
                    let step = py.check_signals().and_then(|()| match &callback {
                        Some(cb) if fraction() != last => {
                            last = fraction();
                            cb.call1(py, (last,)).map(drop)
                        }
                        _ => Ok(()),
                    });
                    if let Err(e) = step {
                        raised = Some(e);
                        cancel();
                    }
                });
            }
            worker.join()
        })
    });
    if let Some(e) = raised {
        return Err(e);
    }
    let out =
        joined.map_err(|_| PyRuntimeError::new_err("terrasynth: the worker thread panicked (a bug)"))?;
    let value = out.map_err(py_err)?;
    if let Some(cb) = callback {
        cb.call1(py, (1.0,))?;
    }
    Ok(value)
}

/// A 2-D C-contiguous float32 array as a [`Heightmap`] (one copy; the Python side converts
/// other dtypes and layouts first).
fn heightmap(dem: &PyReadonlyArray2<'_, f32>, cell_size: f64) -> PyResult<Heightmap> {
    let shape = dem.shape();
    let (h, w) = (shape[0], shape[1]);
    let data = dem
        .as_slice()
        .map_err(|_| PyValueError::new_err("dem must be C-contiguous (use numpy.ascontiguousarray)"))?;
    Heightmap::from_vec(w, h, cell_size, data.to_vec()).map_err(py_err)
}

/// Moves a row-major grid into a numpy array of shape (height, width) without copying.
fn to_numpy<'py, T: numpy::Element>(
    py: Python<'py>,
    width: usize,
    height: usize,
    data: Vec<T>,
) -> PyResult<Bound<'py, PyArray2<T>>> {
    let arr = Array2::from_shape_vec((height, width), data)
        .map_err(|e| PyRuntimeError::new_err(format!("terrasynth: grid shape (a bug): {e}")))?;
    Ok(arr.into_pyarray(py))
}

/// `sea_level=None` means no sea: only the map edge drains.
fn sea(sea_level: Option<f32>) -> f32 {
    sea_level.unwrap_or(f32::NEG_INFINITY)
}

/// A recipe: plain data, validated when it runs.
#[pyclass(module = "terrasynth._terrasynth", name = "Recipe", from_py_object)]
#[derive(Clone)]
struct PyRecipe {
    inner: terrasynth::Recipe,
}

#[pymethods]
impl PyRecipe {
    /// The built-in preset `name` (see `terrasynth.presets()`).
    #[staticmethod]
    fn preset(name: &str) -> PyResult<Self> {
        let inner = terrasynth::recipe::preset(name).and_then(|p| p.recipe()).map_err(py_err)?;
        Ok(Self { inner })
    }

    /// A recipe from TOML text (the format of `terrasynth generate --recipe`).
    #[staticmethod]
    fn from_toml(text: &str) -> PyResult<Self> {
        Ok(Self { inner: terrasynth::Recipe::from_toml_str(text).map_err(py_err)? })
    }

    /// The recipe as TOML text.
    fn to_toml(&self) -> PyResult<String> {
        self.inner.to_toml_string().map_err(py_err)
    }

    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }
    #[getter]
    fn width(&self) -> usize {
        self.inner.width
    }
    #[getter]
    fn height(&self) -> usize {
        self.inner.height
    }
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed
    }
    #[getter]
    fn cell_size(&self) -> f64 {
        self.inner.cell_size
    }

    fn __repr__(&self) -> String {
        format!(
            "Recipe(name={:?}, size={}x{}, seed={}, steps={})",
            self.inner.name,
            self.inner.width,
            self.inner.height,
            self.inner.seed,
            self.inner.steps.len()
        )
    }

    /// Runs the recipe (the Python wrapper documents the arguments).
    #[pyo3(signature = (width=None, height=None, seed=None, threads=None, progress=None))]
    fn _generate(
        &self,
        py: Python<'_>,
        width: Option<usize>,
        height: Option<usize>,
        seed: Option<u64>,
        threads: Option<usize>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<PyTerrain> {
        let mut recipe = self.inner.clone();
        if let Some(w) = width {
            recipe.width = w;
        }
        if let Some(h) = height {
            recipe.height = h;
        }
        if let Some(s) = seed {
            recipe.seed = s;
        }
        let threads = thread_count(threads)?;
        export::check_recipe(&recipe).map_err(py_err)?;
        let pipeline = Pipeline::new(recipe, &registry()).map_err(py_err)?;
        let pool = thread_pool(threads)?;
        let pp = PipelineProgress::new();
        let (run, log) = run_long(
            py,
            progress,
            || pp.fraction(),
            || pp.cancel(),
            || {
                pool.install(|| {
                    let mut recorder = ErosionRecorder::new(None);
                    let out = pipeline.run_with(&pp, &mut recorder)?;
                    Ok((out, recorder.into_log()))
                })
            },
        )?;
        PyTerrain::new(py, Arc::new(pipeline), run, threads, log.scores)
    }
}

/// Worker threads from the `threads` argument (default: all cores).
fn thread_count(threads: Option<usize>) -> PyResult<usize> {
    match threads {
        Some(n) if !(1..=MAX_THREADS).contains(&n) => Err(PyValueError::new_err(format!(
            "invalid threads = {n}: allowed an integer in 1..={MAX_THREADS}"
        ))),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// A rayon pool of `threads` workers.
fn thread_pool(threads: usize) -> PyResult<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the worker threads: {e}")))
}

/// An endless world from a world recipe: any window on demand ([`World`]).
#[pyclass(module = "terrasynth._terrasynth", name = "World")]
struct PyWorld {
    world: Arc<World>,
    /// The same recipe's pipeline, shared by the terrains of its windows (for their export).
    pipeline: Arc<Pipeline>,
}

#[pymethods]
impl PyWorld {
    /// The world of a world recipe (`ValueError` for a single-map recipe or a global step).
    /// `seed` replaces the recipe's.
    #[new]
    #[pyo3(signature = (recipe, seed=None))]
    fn new(recipe: PyRecipe, seed: Option<u64>) -> PyResult<Self> {
        let mut recipe = recipe.inner;
        if let Some(s) = seed {
            recipe.seed = s;
        }
        let world = World::new(recipe.clone()).map_err(py_err)?;
        let pipeline = Pipeline::new(recipe, &registry()).map_err(py_err)?;
        Ok(Self { world: Arc::new(world), pipeline: Arc::new(pipeline) })
    }

    /// The world's height range in metres, `(lowest, highest)`.
    #[getter]
    fn height_range(&self) -> (f64, f64) {
        let [lo, hi] = self.world.height_range();
        (lo, hi)
    }

    /// The recipe.
    #[getter]
    fn recipe(&self) -> PyRecipe {
        PyRecipe { inner: self.world.recipe().clone() }
    }

    /// The `width × height` window at world cell `(x, y)` (the Python wrapper documents it).
    #[pyo3(signature = (x, y, width, height, threads=None, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn _window(
        &self,
        py: Python<'_>,
        x: i64,
        y: i64,
        width: usize,
        height: usize,
        threads: Option<usize>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<PyTerrain> {
        let window = Window::new(x, y, width, height).map_err(py_err)?;
        let threads = thread_count(threads)?;
        let pool = thread_pool(threads)?;
        let pp = PipelineProgress::new();
        let world = &self.world;
        let run = run_long(
            py,
            progress,
            || pp.fraction(),
            || pp.cancel(),
            || pool.install(|| world.run_window(window.x0, window.y0, window.width, window.height, &pp)),
        )?;
        PyTerrain::new(py, self.pipeline.clone(), run, threads, Vec::new())
    }

    /// World cell of chunk `(cx, cy)`'s first cell for chunks of `size` cells.
    #[staticmethod]
    fn _chunk_origin(cx: i64, cy: i64, size: usize) -> PyResult<(i64, i64)> {
        terrasynth::recipe::chunk_origin(cx, cy, size).map_err(py_err)
    }

    fn __repr__(&self) -> String {
        let r = self.world.recipe();
        let [lo, hi] = self.world.height_range();
        format!(
            "World(name={:?}, seed={}, cell_size={} m, height_range=({lo}, {hi}) m)",
            r.name, r.seed, r.cell_size
        )
    }
}

/// A generated terrain: heights (numpy, read-only) and what export and the report need.
#[pyclass(module = "terrasynth._terrasynth", name = "Terrain")]
struct PyTerrain {
    pipeline: Arc<Pipeline>,
    /// The run with its heights moved out into `height` (rebuilt for an export).
    run: RunOutput,
    height: Py<PyArray2<f32>>,
    cell_size: f64,
    threads: usize,
    erosion_scores: Vec<StepScore>,
}

impl PyTerrain {
    fn new(
        py: Python<'_>,
        pipeline: Arc<Pipeline>,
        mut run: RunOutput,
        threads: usize,
        erosion_scores: Vec<StepScore>,
    ) -> PyResult<Self> {
        let hm = std::mem::replace(&mut run.terrain.height, Heightmap::new(1, 1, 1.0).map_err(py_err)?);
        let (w, h, cell_size) = (hm.width(), hm.height(), hm.cell_size());
        let arr = to_numpy(py, w, h, hm.into_vec())?;
        arr.readwrite().make_nonwriteable();
        Ok(Self { pipeline, run, height: arr.unbind(), cell_size, threads, erosion_scores })
    }
}

#[pymethods]
impl PyTerrain {
    /// Heights, float32 array of shape (height, width), row 0 first (north), read-only.
    #[getter]
    fn height(&self, py: Python<'_>) -> Py<PyArray2<f32>> {
        self.height.clone_ref(py)
    }

    /// Cell size, metres.
    #[getter]
    fn cell_size(&self) -> f64 {
        self.cell_size
    }

    /// Sea level, height units.
    #[getter]
    fn sea_level(&self) -> f32 {
        self.run.terrain.sea_level
    }

    /// Metres per height unit (the recipe's `exports.height-scale`; 1 for a world: metres).
    #[getter]
    fn height_scale(&self) -> f64 {
        export::metres_per_unit(self.pipeline.recipe())
    }

    /// The resolved recipe this terrain was generated from.
    #[getter]
    fn recipe(&self) -> PyRecipe {
        PyRecipe { inner: self.pipeline.recipe().clone() }
    }

    /// Writes every output of the recipe into `out_dir`; returns report.json as JSON text.
    #[pyo3(signature = (out_dir, engine=None, progress=None))]
    fn _export(
        &self,
        py: Python<'_>,
        out_dir: PathBuf,
        engine: Option<&str>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<String> {
        let engine = engine.map(Engine::from_name).transpose().map_err(py_err)?;
        let mut run = self.run.clone();
        let arr = self.height.bind(py).readonly();
        run.terrain.height = heightmap(&arr, self.cell_size)?;
        let cancel = Progress::new();
        let opts = ExportOptions {
            engine,
            threads: self.threads,
            erosion_scores: self.erosion_scores.clone(),
            trace: None,
            progress: cancel.clone(),
            ..ExportOptions::default()
        };
        let pool = thread_pool(self.threads)?;
        let pipeline = &self.pipeline;
        let report = run_long(
            py,
            progress,
            || cancel.fraction(),
            || cancel.cancel(),
            || pool.install(|| export::write(&out_dir, &run, pipeline, &opts)),
        )?;
        // Through a `Value`, as report.json is written (f32 fields widened to f64 alike).
        serde_json::to_value(&report)
            .map(|v| v.to_string())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }
}

/// Names and descriptions of the built-in presets, in the CLI's order.
#[pyfunction]
fn _presets() -> PyResult<Vec<(String, String)>> {
    let describe = |p: &terrasynth::recipe::Preset| Ok((p.name.to_string(), p.recipe()?.description));
    terrasynth::recipe::presets().iter().map(describe).collect::<terrasynth::Result<_>>().map_err(py_err)
}

/// The noise `spec` (inline TOML) sampled on a `width × height` grid: pixel `(i, j)` at
/// `(x0 + i·dx, y0 + j·dy)`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _noise<'py>(
    py: Python<'py>,
    spec: &str,
    x0: f64,
    y0: f64,
    width: usize,
    height: usize,
    dx: f64,
    dy: f64,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let noise = NoiseSpec::from_inline_toml(spec).and_then(|s| s.build()).map_err(|e| py_err(e.into()))?;
    for (name, v) in [("x0", x0), ("y0", y0)] {
        if !v.is_finite() {
            return Err(PyValueError::new_err(format!("invalid {name} = {v}: allowed a finite number")));
        }
    }
    for (name, v) in [("dx", dx), ("dy", dy)] {
        if !(v.is_finite() && v > 0.0) {
            return Err(PyValueError::new_err(format!("invalid {name} = {v}: allowed a finite number > 0")));
        }
    }
    terrasynth::grid::check_size::<f32>(width, height).map_err(py_err)?;
    let region = Region { x0, y0, dx, dy, width, height };
    let data = py.detach(|| {
        let mut data = vec![0f32; width * height];
        noise.fill(&region, &mut data).map(|_| data)
    });
    to_numpy(py, width, height, data.map_err(|e| py_err(e.into()))?)
}

/// The realism figures of `dem` ([`Realism`]) and their verdicts against the ranges of real
/// terrain, as the JSON text `terrasynth analyze --json` prints (without `map`).
#[pyfunction]
#[pyo3(signature = (dem, cell_size, height_scale, sea_level, channel_area, depression_tolerance))]
fn _analyze(
    py: Python<'_>,
    dem: PyReadonlyArray2<'_, f32>,
    cell_size: f64,
    height_scale: f64,
    sea_level: Option<f32>,
    channel_area: Option<f64>,
    depression_tolerance: f64,
) -> PyResult<String> {
    let map = heightmap(&dem, cell_size)?;
    let options = RealismOptions {
        height_scale_m: height_scale,
        sea_level: sea(sea_level),
        channel_area_m2: channel_area,
        depression_tolerance_m: depression_tolerance,
    };
    let figures = py.detach(|| Realism::compute(&map, &options)).map_err(py_err)?;
    Ok(figures.to_json().to_string())
}

/// Depression filling (Priority-Flood, optionally with the ε gradient).
#[pyfunction]
#[pyo3(signature = (dem, epsilon, sea_level=None))]
fn _fill<'py>(
    py: Python<'py>,
    dem: PyReadonlyArray2<'py, f32>,
    epsilon: bool,
    sea_level: Option<f32>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let mut map = heightmap(&dem, 1.0)?;
    let filler = DepressionFiller { epsilon };
    py.detach(|| filler.fill_in_place(&mut map, sea(sea_level))).map_err(py_err)?;
    let (w, h) = (map.width(), map.height());
    to_numpy(py, w, h, map.into_vec())
}

/// D8 receivers (linear indices) of the surface as given.
#[pyfunction]
#[pyo3(signature = (dem, sea_level=None))]
fn _flow_directions<'py>(
    py: Python<'py>,
    dem: PyReadonlyArray2<'py, f32>,
    sea_level: Option<f32>,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let map = heightmap(&dem, 1.0)?;
    let field = py.detach(|| D8Router.d8(&map, sea(sea_level))).map_err(py_err)?;
    to_numpy(py, field.width(), field.height(), field.receivers().to_vec())
}

/// D8 drainage area in cells (optionally weighted) of the surface as given.
#[pyfunction]
#[pyo3(signature = (dem, weights=None, sea_level=None))]
fn _flow_accumulation<'py>(
    py: Python<'py>,
    dem: PyReadonlyArray2<'py, f32>,
    weights: Option<PyReadonlyArray2<'py, f32>>,
    sea_level: Option<f32>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let map = heightmap(&dem, 1.0)?;
    let weights = weights.as_ref().map(|w| heightmap(w, 1.0)).transpose()?;
    let acc = py
        .detach(|| D8Router.d8(&map, sea(sea_level)).and_then(|f| f.accumulate(weights.as_ref())))
        .map_err(py_err)?;
    let (w, h) = (acc.width(), acc.height());
    to_numpy(py, w, h, acc.into_vec())
}

/// The river network of `dem` as arrays of (x, y, height, discharge, width) rows: the
/// hydrology layers' [`FlowGraph`] and rivers, `threshold` and `max_width` checked against the
/// `rivers` step's ParamSpecs (defaults: the step's defaults).
#[pyfunction]
#[pyo3(signature = (dem, threshold=None, max_width=None, sea_level=None))]
fn _rivers<'py>(
    py: Python<'py>,
    dem: PyReadonlyArray2<'py, f32>,
    threshold: Option<f64>,
    max_width: Option<f32>,
    sea_level: Option<f32>,
) -> PyResult<Bound<'py, PyList>> {
    // The `rivers` step's checked constructor: its one declaration gives defaults and ranges.
    let d = RiversStep::default();
    let step =
        RiversStep::new(threshold.unwrap_or(d.threshold), max_width.unwrap_or(d.max_width), d.carve_depth)
            .map_err(py_err)?;
    let (threshold, max_width) = (step.threshold, step.max_width);
    let map = heightmap(&dem, 1.0)?;
    let rivers = py
        .detach(|| FlowGraph::new(&map, sea(sea_level)).and_then(|g| g.rivers(threshold, max_width)))
        .map_err(py_err)?;
    let out = PyList::empty(py);
    for r in rivers {
        let rows: Vec<f64> = r
            .points
            .iter()
            .flat_map(|p| [p.x as f64, p.y as f64, p.height as f64, p.discharge as f64, p.width as f64])
            .collect();
        out.append(to_numpy(py, 5, r.points.len(), rows)?)?;
    }
    Ok(out)
}

/// For the benchmark (`bench/bench.py`): the library calls behind `fill(dem, epsilon=True)`,
/// `flow_directions(filled)` and `flow_accumulation(filled)`, timed inside Rust (seconds,
/// without the array copies in and out), so the binding's overhead is the Python-side time
/// minus these.
#[pyfunction]
fn _bench_hydro(py: Python<'_>, dem: PyReadonlyArray2<'_, f32>) -> PyResult<(f64, f64, f64)> {
    let map = heightmap(&dem, 1.0)?;
    py.detach(|| {
        let t0 = std::time::Instant::now();
        let filled = DepressionFiller::with_epsilon().fill(&map, f32::NEG_INFINITY)?;
        let t1 = std::time::Instant::now();
        let field = D8Router.d8(&filled, f32::NEG_INFINITY)?;
        let t2 = std::time::Instant::now();
        let acc = D8Router.d8(&filled, f32::NEG_INFINITY).and_then(|f| f.accumulate(None))?;
        let t3 = std::time::Instant::now();
        drop((field, acc));
        Ok((t1 - t0, t2 - t1, t3 - t2))
    })
    .map(|(a, b, c): (Duration, Duration, Duration)| (a.as_secs_f64(), b.as_secs_f64(), c.as_secs_f64()))
    .map_err(py_err)
}

/// A Python value as a recipe parameter value.
fn param_value(key: &str, v: &Bound<'_, PyAny>) -> PyResult<ParamValue> {
    if let Ok(b) = v.extract::<bool>() {
        return Ok(ParamValue::Bool(b));
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(ParamValue::Number(x));
    }
    if let Ok(s) = v.extract::<String>() {
        return Ok(ParamValue::Text(s));
    }
    if let Ok(l) = v.extract::<Vec<f64>>() {
        return Ok(ParamValue::List(l));
    }
    Err(PyValueError::new_err(format!(
        "invalid parameter `{key}`: allowed a bool, number, string or list of numbers, got {}",
        v.get_type().name()?
    )))
}

/// The erosion steps of the registry with their parameters: `{name: [ (key, default, allowed,
/// unit, doc), … ]}`.
#[pyfunction]
fn _erosion_steps(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for info in registry().into_iter().filter(|s| s.category == Category::Erode) {
        let params = PyList::empty(py);
        for p in info.params {
            let default = p.default.to_value().to_string();
            params.append((p.name, default, p.allowed(), p.unit, p.doc))?;
        }
        out.set_item(info.name, (info.doc, params))?;
    }
    Ok(out)
}

/// Runs the erosion step `kind` with `params` on `dem` through a one-step pipeline (validated
/// against the registry's ParamSpecs, as a recipe step).
#[pyfunction]
#[pyo3(signature = (dem, kind, params, cell_size, sea_level, seed, progress=None))]
#[allow(clippy::too_many_arguments)]
fn _erode<'py>(
    py: Python<'py>,
    dem: PyReadonlyArray2<'py, f32>,
    kind: &str,
    params: &Bound<'py, PyDict>,
    cell_size: f64,
    sea_level: f64,
    seed: u64,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let reg = registry();
    let erosions: Vec<&str> = reg.iter().filter(|s| s.category == Category::Erode).map(|s| s.name).collect();
    if !erosions.contains(&kind) {
        return Err(PyValueError::new_err(format!(
            "unknown erosion `{kind}`: allowed one of {}",
            erosions.join(", ")
        )));
    }
    let mut entry = StepEntry::new(kind);
    for (k, v) in params.iter() {
        let key: String = k.extract::<String>()?.replace('_', "-");
        let value = param_value(&key, &v)?;
        entry.params.insert(key, value);
    }
    let shape = dem.shape();
    let mut recipe = terrasynth::Recipe::new("python-erode");
    (recipe.width, recipe.height, recipe.cell_size) = (shape[1], shape[0], cell_size);
    (recipe.seed, recipe.sea_level) = (seed, sea_level);
    recipe.steps.push(entry);
    let pipeline = Pipeline::new(recipe, &reg).map_err(py_err)?;
    let mut terrain = Terrain::new(1, 1, cell_size).map_err(py_err)?;
    terrain.height = heightmap(&dem, cell_size)?;
    terrain.sea_level = sea_level as f32;
    let pp = PipelineProgress::new();
    let run = run_long(py, progress, || pp.fraction(), || pp.cancel(), || pipeline.run_on(terrain, &pp))?;
    let hm = run.terrain.height;
    let (w, h) = (hm.width(), hm.height());
    to_numpy(py, w, h, hm.into_vec())
}

/// The extension module.
#[pymodule]
fn _terrasynth(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRecipe>()?;
    m.add_class::<PyTerrain>()?;
    m.add_class::<PyWorld>()?;
    m.add_function(wrap_pyfunction!(_presets, m)?)?;
    m.add_function(wrap_pyfunction!(_noise, m)?)?;
    m.add_function(wrap_pyfunction!(_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(_fill, m)?)?;
    m.add_function(wrap_pyfunction!(_flow_directions, m)?)?;
    m.add_function(wrap_pyfunction!(_flow_accumulation, m)?)?;
    m.add_function(wrap_pyfunction!(_rivers, m)?)?;
    m.add_function(wrap_pyfunction!(_erosion_steps, m)?)?;
    m.add_function(wrap_pyfunction!(_erode, m)?)?;
    m.add_function(wrap_pyfunction!(_bench_hydro, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
