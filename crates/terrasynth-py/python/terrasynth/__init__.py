"""terrasynth: procedural terrain generation and fast hydrology on numpy.

The engine is the Rust library ``terrasynth`` (the same one behind the ``terrasynth`` CLI and
the editor): a recipe generates the same heights here as ``terrasynth generate`` does, and
``Terrain.export`` writes the same files.

Quick start::

    import terrasynth
    terrain = terrasynth.Recipe.preset("island").generate(size=257, seed=7)
    terrain.height            # float32 numpy array, shape (257, 257)

Hydrology works on any 2-D numpy DEM: :func:`fill`, :func:`flow_directions`,
:func:`flow_accumulation`, :func:`rivers`; erosion with :func:`erode`; :func:`analyze` (and
``Terrain.analyze``) measures how real a DEM looks against the ranges of real terrain.

Arrays in: any real 2-D array. float32 C-contiguous arrays are used as they are; other real
dtypes (float64, integers) are converted to float32 and non-contiguous arrays are copied
(``numpy.ascontiguousarray(dem, dtype=numpy.float32)``). NaN or infinite heights raise
``ValueError`` naming the first bad cell. Complex, boolean, object or non-2-D arrays raise
``ValueError``.

Long calls (``generate``, ``export``, ``erode``) release the GIL, accept
``progress=callable(fraction)`` and stop on Ctrl-C (``KeyboardInterrupt``). Errors from the
library are ``ValueError`` (bad parameters, recipes, sizes) or ``OSError`` (files), with the
library's message.

Endless worlds: :class:`World` makes any window of a world recipe (one with a ``[world]``
table, e.g. the ``world`` preset) on demand; a window equals the same cells cut from any
larger window, bit for bit, so windows can be computed independently (one per
``dask.array.map_blocks`` block, one per process) and stitched.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _terrasynth
from ._terrasynth import __version__

__all__ = [
    "Recipe",
    "Terrain",
    "World",
    "presets",
    "noise",
    "analyze",
    "fill",
    "flow_directions",
    "flow_accumulation",
    "rivers",
    "erode",
    "erosion_steps",
    "__version__",
]

Progress = Optional[Callable[[float], Any]]


def presets() -> Dict[str, str]:
    """The built-in presets: ``{name: description}``, in the CLI's order."""
    return dict(_terrasynth._presets())


def _size(size: Union[None, int, Sequence[int]]) -> Tuple[Optional[int], Optional[int]]:
    if size is None:
        return None, None
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        return int(size), int(size)
    try:
        w, h = size  # type: ignore[misc]
        return int(w), int(h)
    except (TypeError, ValueError):
        raise ValueError(f"invalid size = {size!r}: allowed an int N (N x N) or a (width, height) pair") from None


def _nonneg(name: str, value: Optional[int]) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"invalid {name} = {value!r}: allowed a non-negative integer")
    return int(value)


_MAX_SEED = 2**64 - 1


def _seed(value: Optional[int]) -> Optional[int]:
    """A seed: any unsigned 64-bit integer, as in recipes and the CLI's ``--seed``."""
    v = _nonneg("seed", value)
    if v is not None and v > _MAX_SEED:
        raise ValueError(f"invalid seed = {v}: allowed an integer in 0..={_MAX_SEED}")
    return v


class Recipe:
    """A terrain recipe: size, seed, palette, exports and steps (plain data, TOML).

    Create one with :meth:`Recipe.preset` or :meth:`Recipe.from_toml`; run it with
    :meth:`generate`.
    """

    __slots__ = ("_inner",)

    def __init__(self, _inner: "_terrasynth.Recipe") -> None:
        self._inner = _inner

    @staticmethod
    def preset(name: str) -> "Recipe":
        """The built-in preset ``name`` (see :func:`presets`); ``ValueError`` if unknown."""
        return Recipe(_terrasynth.Recipe.preset(name))

    @staticmethod
    def from_toml(text: str) -> "Recipe":
        """A recipe from TOML text, the format of ``terrasynth generate --recipe``.

        The text is parsed here; its parameters are validated by :meth:`generate` (every
        problem in one ``ValueError``)."""
        return Recipe(_terrasynth.Recipe.from_toml(text))

    def to_toml(self) -> str:
        """The recipe as TOML text (``Recipe.from_toml(r.to_toml())`` gives the same recipe)."""
        return self._inner.to_toml()

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def width(self) -> int:
        return self._inner.width

    @property
    def height(self) -> int:
        return self._inner.height

    @property
    def seed(self) -> int:
        return self._inner.seed

    @property
    def cell_size(self) -> float:
        """Metres per cell."""
        return self._inner.cell_size

    def __repr__(self) -> str:
        return repr(self._inner)

    def generate(
        self,
        size: Union[None, int, Tuple[int, int]] = None,
        seed: Optional[int] = None,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> "Terrain":
        """Runs the recipe and returns the :class:`Terrain`.

        ``size``: ``N`` (N x N) or ``(width, height)`` in cells, overriding the recipe's
        (each side 2..=32769, as the CLI's ``--size``); ``seed`` overrides the recipe seed;
        ``threads`` is the worker thread count (default: all cores; the heights do not depend
        on it). ``progress(fraction)`` is called from the calling thread about every 50 ms
        while the pipeline runs and once with 1.0 at the end; an exception from it stops the
        run and is raised. The GIL is released while the pipeline runs; Ctrl-C stops it with
        ``KeyboardInterrupt``.
        """
        w, h = _size(size)
        inner = self._inner._generate(
            w, h, _seed(seed), _nonneg("threads", threads), progress
        )
        return Terrain(inner)


class Terrain:
    """A generated terrain.

    ``height`` is a read-only float32 array of shape (height, width), row 0 the north edge,
    in height units (``height * height_scale`` is metres); ``report`` is report.json as a
    dict; :meth:`export` writes the recipe's files; :meth:`to_xarray` gives a DataArray with
    x/y in metres.
    """

    __slots__ = ("_inner", "_report")

    def __init__(self, _inner: "_terrasynth.Terrain") -> None:
        self._inner = _inner
        self._report: Optional[Dict[str, Any]] = None

    @property
    def height(self) -> np.ndarray:
        """Heights, float32, shape (height, width), read-only (no copy of the engine's map).
        Use ``terrain.height.copy()`` to edit."""
        return self._inner.height

    @property
    def shape(self) -> Tuple[int, int]:
        return self._inner.height.shape

    @property
    def cell_size(self) -> float:
        """Metres per cell."""
        return self._inner.cell_size

    @property
    def sea_level(self) -> float:
        """Sea level in height units."""
        return self._inner.sea_level

    @property
    def height_scale(self) -> float:
        """Metres per height unit (the recipe's ``exports.height-scale``; 1 for a window of a
        :class:`World`, whose heights are metres)."""
        return self._inner.height_scale

    @property
    def recipe(self) -> Recipe:
        """The recipe as run (size and seed overrides applied)."""
        return Recipe(self._inner.recipe)

    @property
    def report(self) -> Dict[str, Any]:
        """report.json as a dict: the report of the last :meth:`export`. Before any export it
        is computed by an export into a temporary folder that is then removed (so the first
        access costs as much as an export); it is cached."""
        if self._report is None:
            import tempfile

            with tempfile.TemporaryDirectory(prefix="terrasynth-report-") as tmp:
                self.export(os.path.join(tmp, "out"))
        assert self._report is not None
        return self._report

    def analyze(
        self, channel_area: Optional[float] = None, depression_tolerance: float = 1.0
    ) -> Dict[str, Any]:
        """The realism figures of this terrain and their verdicts against the ranges of real
        terrain, as :func:`analyze` gives them, with the terrain's own cell size, height scale
        and sea level: the figures ``terrasynth analyze --preset`` prints for the same run."""
        return analyze(
            self.height,
            cell_size=self.cell_size,
            height_scale=self.height_scale,
            sea_level=self.sea_level,
            channel_area=channel_area,
            depression_tolerance=depression_tolerance,
        )

    def export(
        self,
        out_dir: Union[str, "os.PathLike[str]"],
        engine: Optional[str] = None,
        progress: Progress = None,
    ) -> Dict[str, Any]:
        """Writes every output of the recipe (``[exports]``: height PNG/R16/EXR/TIFF, images,
        mesh, rivers.geojson, report.json) into ``out_dir`` through the library's export,
        the same bytes as ``terrasynth generate``; returns report.json as a dict.

        ``engine``: ``"unity"`` or ``"unreal"`` adds the engine's import files, as the CLI's
        ``--engine``. Files are written atomically. The GIL is released; Ctrl-C stops the
        export with ``KeyboardInterrupt`` and, if ``out_dir`` did not exist before, removes it
        (an existing folder keeps the files finished before the interrupt).
        """
        path = os.fspath(out_dir)
        existed = os.path.exists(path)
        try:
            text = self._inner._export(path, engine, progress)
        except BaseException:
            if not existed and os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            raise
        self._report = json.loads(text)
        return self._report

    def to_xarray(self, name: str = "height") -> Any:
        """The heights as an ``xarray.DataArray`` with dims ``("y", "x")`` and coordinates in
        metres (cell centres: ``x = (i + 0.5) * cell_size``, ``y`` likewise, row 0 first);
        attrs ``res`` (cell size, m), ``units`` ("height units"), ``height_scale_m`` and
        ``sea_level``. Needs xarray (``pip install xarray``), imported only here."""
        try:
            import xarray as xr
        except ImportError:
            raise ImportError(
                "Terrain.to_xarray needs xarray: pip install xarray"
            ) from None
        h, w = self.shape
        c = self.cell_size
        return xr.DataArray(
            self.height,
            dims=("y", "x"),
            coords={"y": (np.arange(h) + 0.5) * c, "x": (np.arange(w) + 0.5) * c},
            name=name,
            attrs={
                "res": (c, c),
                "units": "height units",
                "height_scale_m": self.height_scale,
                "sea_level": self.sea_level,
            },
        )

    def __repr__(self) -> str:
        h, w = self.shape
        return f"Terrain({w}x{h}, cell_size={self.cell_size} m, recipe={self.recipe.name!r})"


class World:
    """An endless world: a world recipe (one with a ``[world]`` table, every length in metres,
    heights in metres within the declared ``height_range``) of which any window is computed on
    demand.

    ``World(preset="world")``, ``World(recipe=Recipe.from_toml(text))`` or
    ``World(recipe=text)``; ``seed`` overrides the recipe's. ``ValueError`` for a single-map
    recipe or one with a step that needs the whole map (erosion by droplets, hydrology: the
    message names the step).

    :meth:`window` returns a :class:`Terrain` of any window (cell coordinates, negative
    allowed); **a window equals the same cells cut from any larger window, bit for bit**, so
    windows can be computed independently and stitched. :meth:`chunk` gives chunks that share
    their edge row and column, as engine landscapes expect. A window's ``Terrain.export``
    maps its 16-bit files to the world's height range (tiles line up); for seamless shading at
    tile edges and engine tile sets use the CLI's ``terrasynth tiles``.
    """

    __slots__ = ("_inner",)

    def __init__(
        self,
        preset: Optional[str] = None,
        recipe: Union[None, Recipe, str] = None,
        seed: Optional[int] = None,
    ) -> None:
        if preset is not None and recipe is not None:
            raise ValueError("World: give preset or recipe, not both")
        if recipe is None:
            r = Recipe.preset(preset if preset is not None else "world")
        elif isinstance(recipe, Recipe):
            r = recipe
        elif isinstance(recipe, str):
            r = Recipe.from_toml(recipe)
        else:
            raise ValueError(f"invalid recipe = {recipe!r}: allowed a Recipe or TOML text")
        self._inner = _terrasynth.World(r._inner, _seed(seed))

    @property
    def height_range(self) -> Tuple[float, float]:
        """The world's height range in metres, ``(lowest, highest)``: what 0 and 65535 of
        every window's 16-bit files stand for."""
        return self._inner.height_range

    @property
    def recipe(self) -> Recipe:
        """The world recipe."""
        return Recipe(self._inner.recipe)

    def window(
        self,
        x: int,
        y: int,
        width: int,
        height: int,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> Terrain:
        """The ``width`` x ``height`` window whose cell ``[0, 0]`` is world cell ``(x, y)``
        (x grows east, y south, as array columns and rows; negative allowed; each side
        2..=32769, every cell within ±10¹² cells). Heights in metres (``height_scale`` 1).
        ``threads`` and ``progress`` as in :meth:`Recipe.generate`."""
        return Terrain(
            self._inner._window(
                _int("x", x), _int("y", y), _int("width", width), _int("height", height),
                _nonneg("threads", threads), progress,
            )
        )

    def chunk(
        self,
        cx: int,
        cy: int,
        size: int,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> Terrain:
        """Chunk ``(cx, cy)`` of ``size`` cells a side: the window at ``(cx * (size - 1),
        cy * (size - 1))``, so neighbouring chunks share their edge row and column."""
        x, y = _terrasynth.World._chunk_origin(_int("cx", cx), _int("cy", cy), _nonneg("size", size))
        return self.window(x, y, size, size, threads, progress)

    def __repr__(self) -> str:
        return repr(self._inner)


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"invalid {name} = {value!r}: allowed an integer")
    return int(value)


def _dem(dem: Any, name: str = "dem") -> np.ndarray:
    """``dem`` as a C-contiguous float32 2-D array (see the module docs for the conversion)."""
    arr = np.asarray(dem)
    if arr.ndim != 2:
        raise ValueError(f"invalid {name}: allowed a 2-D array, got {arr.ndim} dimensions (shape {arr.shape})")
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"invalid {name} dtype {arr.dtype}: allowed a real (float or integer) array")
    return np.ascontiguousarray(arr, dtype=np.float32)


def _sea(sea_level: Optional[float]) -> Optional[float]:
    return None if sea_level is None else float(sea_level)


def noise(
    spec: Union[str, Dict[str, Any]],
    x0: float,
    y0: float,
    width: int,
    height: int,
    dx: float = 1.0,
    dy: float = 1.0,
) -> np.ndarray:
    """A noise sampled on a grid: float32 array of shape (height, width) with pixel
    ``[j, i]`` at ``(x0 + i*dx, y0 + j*dy)``.

    ``spec`` is the noise as ``terrasynth noise --noise`` takes it: inline TOML text
    (``'kind = "perlin", fractal = "fbm", octaves = 6, seed = 3'``) or a dict of the same
    keys. Tiles from global coordinates stitch exactly (a pure function of the position), so
    it suits ``dask.array.map_blocks``.
    """
    if isinstance(spec, dict):
        spec = ", ".join(f"{k} = {_toml_value(v)}" for k, v in spec.items())
    return _terrasynth._noise(spec, float(x0), float(y0), int(width), int(height), float(dx), float(dy))


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return repr(v.item() if hasattr(v, "item") else v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise ValueError(f"invalid noise parameter value {v!r}: allowed a bool, number, string or list")


def analyze(
    dem: Any,
    cell_size: float = 1.0,
    height_scale: float = 1.0,
    sea_level: Optional[float] = None,
    channel_area: Optional[float] = None,
    depression_tolerance: float = 1.0,
) -> Dict[str, Any]:
    """How real ``dem`` looks, measured (docs/ANALYZE.md; the library's
    ``analyze::realism``, the figures of ``terrasynth analyze --json``): a dict with the
    spectral slope ``spectral_beta``, slope percentiles, ``hypsometric_integral``, peaks and
    pits per km², the ``drained_fraction`` (strict and ignoring depressions up to
    ``depression_tolerance`` metres), ``depression_fraction``, ``mean_fill_depth_m``,
    ``hack_exponent``, ``drainage_density_per_km`` (channels from ``channel_area`` m²; by
    default 10⁵ m², or 100 cells where that is less), the grid
    signatures ``isotropy_h4`` and ``isotropy_h8`` with their signed parts ``isotropy_c4``,
    ``isotropy_s4``, ``isotropy_c8`` and ``isotropy_s8``, ``pits_per_10k_cells``, and
    ``real_ranges``: one dict per judged figure with ``figure``, ``low``, ``high``, ``value``
    and ``inside`` (``None`` where the figure cannot be measured on this map).

    ``cell_size`` is metres per cell, ``height_scale`` metres per height unit; cells strictly
    below ``sea_level`` (height units; ``None``: no sea) are sea. The GIL is released.
    """
    text = _terrasynth._analyze(
        _dem(dem),
        float(cell_size),
        float(height_scale),
        _sea(sea_level),
        None if channel_area is None else float(channel_area),
        float(depression_tolerance),
    )
    return json.loads(text)


def fill(dem: Any, epsilon: bool = False, sea_level: Optional[float] = None) -> np.ndarray:
    """Fills the depressions of ``dem`` (Priority-Flood, Barnes, Lehman & Mulla 2014): a new
    float32 array where every cell drains to the map edge (or to a cell below
    ``sea_level``). ``epsilon=True`` adds the ε gradient (Priority-Flood+ε) so flats and
    filled pits drain too, the surface :func:`flow_directions` needs; ``epsilon=False`` gives
    the minimal filled surface (depressions exactly flat). Edge cells keep their height."""
    return _terrasynth._fill(_dem(dem), bool(epsilon), _sea(sea_level))


def flow_directions(dem: Any, sea_level: Optional[float] = None) -> np.ndarray:
    """D8 flow directions (O'Callaghan & Mark 1984) of ``dem`` as given: a uint32 array of
    the same shape holding each cell's receiver as a row-major linear index
    ``y * width + x``; outlets (edge cells, cells below ``sea_level``) and undrained pits
    are their own receiver. Steepest strictly lower neighbour, diagonals at distance √2, ties
    to the first in E, SE, S, SW, W, NW, N, NE order. Fill first (``fill(dem, epsilon=True)``)
    so that every cell drains to the edge. ``numpy.unravel_index(r, dem.shape)`` gives (row,
    column) of a receiver."""
    return _terrasynth._flow_directions(_dem(dem), _sea(sea_level))


def flow_accumulation(
    dem: Any, weights: Any = None, sea_level: Optional[float] = None
) -> np.ndarray:
    """D8 flow accumulation of ``dem`` as given (routed as :func:`flow_directions`): float64
    array, each cell's weight plus everything upstream (with ``weights=None`` every cell
    weighs 1, so the result is the drainage area in cells, the cell itself included). Fill
    first (``fill(dem, epsilon=True)``) so that pits do not stop the flow."""
    w = None if weights is None else _dem(weights, "weights")
    return _terrasynth._flow_accumulation(_dem(dem), w, _sea(sea_level))


def rivers(
    dem: Any,
    threshold: Optional[float] = None,
    max_width: Optional[float] = None,
    sea_level: Optional[float] = None,
) -> List[np.ndarray]:
    """The river network of ``dem``, as the ``rivers`` recipe step finds it: the DEM is
    filled with ε, routed by D8 and accumulated; every cell draining at least ``threshold``
    (a fraction of the map's cells; default and allowed range: the ``rivers`` step's, see
    ``terrasynth steps``) is a river cell. Returns one float64 array
    per river of shape (points, 5) with columns x (column), y (row), height (filled surface),
    discharge (drainage area, cells) and width (cells, ``max_width`` at the largest
    drainage area; default the ``rivers`` step's default), from source downstream."""
    mw = None if max_width is None else float(max_width)
    th = None if threshold is None else float(threshold)
    return _terrasynth._rivers(_dem(dem), th, mw, _sea(sea_level))


def erosion_steps() -> Dict[str, Dict[str, Any]]:
    """The erosion steps :func:`erode` runs, from the library's registry: ``{name: {"doc":
    text, "params": {key: {"default", "allowed", "unit", "doc"}}}}``."""
    out: Dict[str, Dict[str, Any]] = {}
    for name, (doc, params) in _terrasynth._erosion_steps().items():
        out[name] = {
            "doc": doc,
            "params": {
                key: {"default": default, "allowed": allowed, "unit": unit, "doc": pdoc}
                for key, default, allowed, unit, pdoc in params
            },
        }
    return out


def erode(
    dem: Any,
    kind: str,
    *,
    cell_size: float = 1.0,
    sea_level: float = 0.0,
    seed: int = 0,
    progress: Progress = None,
    **params: Any,
) -> np.ndarray:
    """Runs the erosion step ``kind`` (``"thermal"``, ``"hydraulic"``, ``"droplets"``,
    ``"stream-power"``, … see :func:`erosion_steps`) on ``dem``; returns the eroded float32
    array (``dem`` is not changed).

    ``params`` are the step's recipe keys with ``_`` for ``-`` (``iterations=50``,
    ``talus_k=4``); missing keys take the step's defaults and values outside the allowed
    range raise ``ValueError`` naming the key and the range, exactly as in a recipe.
    ``cell_size`` in metres, ``sea_level`` in height units and ``seed`` (the step's seed is
    derived from it as for step 1 of a recipe) are the recipe's fields. The GIL is released;
    ``progress(fraction)`` and Ctrl-C work as in :meth:`Recipe.generate`.
    """
    arr = _dem(dem)
    return _terrasynth._erode(
        arr, kind, params, float(cell_size), float(sea_level), _seed(seed) or 0, progress
    )
