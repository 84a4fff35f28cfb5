"""Type stubs of the terrasynth Python package (docs in __init__.py)."""

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

Progress = Optional[Callable[[float], Any]]
ArrayLike2D = Union[npt.ArrayLike, Sequence[Sequence[float]]]

def presets() -> Dict[str, str]: ...

class Recipe:
    @staticmethod
    def preset(name: str) -> Recipe: ...
    @staticmethod
    def from_toml(text: str) -> Recipe: ...
    def to_toml(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def cell_size(self) -> float: ...
    def generate(
        self,
        size: Union[None, int, Tuple[int, int]] = None,
        seed: Optional[int] = None,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> Terrain: ...

class Terrain:
    @property
    def height(self) -> npt.NDArray[np.float32]: ...
    @property
    def shape(self) -> Tuple[int, int]: ...
    @property
    def cell_size(self) -> float: ...
    @property
    def sea_level(self) -> float: ...
    @property
    def height_scale(self) -> float: ...
    @property
    def recipe(self) -> Recipe: ...
    @property
    def report(self) -> Dict[str, Any]: ...
    def analyze(self, channel_area: Optional[float] = None, depression_tolerance: float = 1.0) -> Dict[str, Any]: ...
    def export(
        self,
        out_dir: Union[str, "os.PathLike[str]"],
        engine: Optional[str] = None,
        progress: Progress = None,
    ) -> Dict[str, Any]: ...
    def to_xarray(self, name: str = "height") -> Any: ...

class World:
    def __init__(
        self,
        preset: Optional[str] = None,
        recipe: Union[None, Recipe, str] = None,
        seed: Optional[int] = None,
    ) -> None: ...
    @property
    def height_range(self) -> Tuple[float, float]: ...
    @property
    def recipe(self) -> Recipe: ...
    def window(
        self,
        x: int,
        y: int,
        width: int,
        height: int,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> Terrain: ...
    def chunk(
        self,
        cx: int,
        cy: int,
        size: int,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> Terrain: ...

def noise(
    spec: Union[str, Dict[str, Any]],
    x0: float,
    y0: float,
    width: int,
    height: int,
    dx: float = 1.0,
    dy: float = 1.0,
) -> npt.NDArray[np.float32]: ...
def analyze(
    dem: ArrayLike2D,
    cell_size: float = 1.0,
    height_scale: float = 1.0,
    sea_level: Optional[float] = None,
    channel_area: Optional[float] = None,
    depression_tolerance: float = 1.0,
) -> Dict[str, Any]: ...
def fill(dem: ArrayLike2D, epsilon: bool = False, sea_level: Optional[float] = None) -> npt.NDArray[np.float32]: ...
def flow_directions(dem: ArrayLike2D, sea_level: Optional[float] = None) -> npt.NDArray[np.uint32]: ...
def flow_accumulation(
    dem: ArrayLike2D, weights: Optional[ArrayLike2D] = None, sea_level: Optional[float] = None
) -> npt.NDArray[np.float64]: ...
def rivers(
    dem: ArrayLike2D,
    threshold: Optional[float] = None,
    max_width: Optional[float] = None,
    sea_level: Optional[float] = None,
) -> List[npt.NDArray[np.float64]]: ...
def erosion_steps() -> Dict[str, Dict[str, Any]]: ...
def erode(
    dem: ArrayLike2D,
    kind: str,
    *,
    cell_size: float = 1.0,
    sea_level: float = 0.0,
    seed: int = 0,
    progress: Progress = None,
    **params: Any,
) -> npt.NDArray[np.float32]: ...
