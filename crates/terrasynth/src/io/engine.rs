//! Game-engine targets: valid heightmap sizes, row order, and import figures for Unreal,
//! Unity and Godot (research/terrain-tools.md §4; docs/ENGINES.md explains the import
//! settings).

use serde::Serialize;

use crate::{Error, Result};

/// A game engine whose terrain importer we target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// Unreal Engine Landscape: 16-bit PNG or `.r16` (LE), sizes `N = C·S·Q + 1`.
    Unreal,
    /// Unity built-in Terrain: square `.raw`, u16 little-endian ("Windows"), `2^n + 1` in
    /// 33..=4097, first row = south (Unity reads the file bottom-up relative to our images).
    Unity,
    /// Godot (Terrain3D or Zylann's HTerrain): `.r16`/`.exr`; square `2^n + 1` suits both.
    Godot,
}

/// Unreal Landscape sizes recommended by Epic (vertices per side, `N = C·S·Q + 1` with
/// quads per section Q ∈ {63, 127}, 2×2 sections per component, 1..=32 components per side).
pub const UNREAL_SIZES: &[usize] = &[127, 253, 505, 1009, 2017, 4033, 8129];

/// Unity's `TerrainData.heightmapResolution` values (`2^n + 1`).
pub const UNITY_SIZES: &[usize] = &[33, 65, 129, 257, 513, 1025, 2049, 4097];

/// Godot sizes: square `2^n + 1` (HTerrain crops other sizes; Terrain3D takes any).
pub const GODOT_SIZES: &[usize] = &[33, 65, 129, 257, 513, 1025, 2049, 4097, 8193];

/// Unreal's Z scale per metre of height range: a Landscape at Z scale 100 spans 512 m
/// (−256 m … +256 m) over the 16-bit range, so `z_scale = range_m × 100 / 512`.
pub const UNREAL_Z_SCALE_PER_M: f64 = 100.0 * 0.001_953_125;

impl Engine {
    /// Every engine name accepted by `--engine`.
    pub const NAMES: &'static [&'static str] = &["unreal", "unity", "godot"];

    /// Parses `unreal`, `unity` or `godot`.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "unreal" => Ok(Self::Unreal),
            "unity" => Ok(Self::Unity),
            "godot" => Ok(Self::Godot),
            _ => Err(Error::param("engine", name, format!("one of {}", Self::NAMES.join(", ")))),
        }
    }

    /// The engine's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Unreal => "unreal",
            Self::Unity => "unity",
            Self::Godot => "godot",
        }
    }

    /// The sizes we pick from (vertices per side; maps are square).
    pub fn sizes(self) -> &'static [usize] {
        match self {
            Self::Unreal => UNREAL_SIZES,
            Self::Unity => UNITY_SIZES,
            Self::Godot => GODOT_SIZES,
        }
    }

    /// Whether `n` vertices per side is importable as is. Unreal: any `C·S·Q + 1` with
    /// Q ∈ {7, 15, 31, 63, 127, 255}, S ∈ {1, 2}, C ∈ 1..=32. Unity and Godot: `2^n + 1` in
    /// their ranges.
    pub fn is_valid_side(self, n: usize) -> bool {
        match self {
            Self::Unreal => [7usize, 15, 31, 63, 127, 255].iter().any(|q| {
                [1usize, 2].iter().any(|s| {
                    let per = q * s;
                    n > 1 && (n - 1).is_multiple_of(per) && (1..=32).contains(&((n - 1) / per))
                })
            }),
            Self::Unity | Self::Godot => self.sizes().contains(&n),
        }
    }

    /// The engine size nearest to `requested` (ties go to the larger size).
    pub fn pick_side(self, requested: usize) -> usize {
        let sizes = self.sizes();
        let mut best = sizes[0];
        for &s in sizes {
            if s.abs_diff(requested) <= best.abs_diff(requested) {
                best = s;
            }
        }
        best
    }

    /// Whether the engine wants the south row first (our files are north row first).
    pub fn flip_rows(self) -> bool {
        matches!(self, Self::Unity)
    }

    /// The heightmap files this engine imports, in order of preference.
    pub fn height_files(self) -> &'static [&'static str] {
        match self {
            Self::Unreal => &["height.png", "height.r16"],
            Self::Unity => &["height.raw"],
            Self::Godot => &["height.exr", "height.r16"],
        }
    }
}

/// Import figures for one engine, written into report.json under `engine`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EngineImport {
    /// Engine name.
    pub engine: Engine,
    /// Vertices per side (the map is square).
    pub size: usize,
    /// Files to import, best first.
    pub files: Vec<String>,
    /// Whether the files' first row is south (true for Unity) instead of north.
    pub south_row_first: bool,
    /// Lowest height in metres (16-bit value 0 / the EXR's minimum).
    pub min_height_m: f64,
    /// Highest height in metres (16-bit value 65535).
    pub max_height_m: f64,
    /// Horizontal spacing between vertices, metres.
    pub cell_size_m: f64,
    /// Engine scale settings: Unreal `x`, `y`, `z` (cm per unit and Z scale); Unity
    /// terrain size `width`, `height`, `length` in metres; Godot `vertex-spacing` and
    /// `height-scale`.
    pub settings: serde_json::Map<String, serde_json::Value>,
}

impl EngineImport {
    /// Import settings for a square map of `size` vertices, `cell_size_m` apart, whose heights
    /// span `[min_m, max_m]` metres.
    pub fn new(engine: Engine, size: usize, cell_size_m: f64, min_m: f64, max_m: f64) -> Self {
        let range = (max_m - min_m).max(0.0);
        let mut s = serde_json::Map::new();
        let mut put = |k: &str, v: f64| {
            s.insert(k.to_string(), serde_json::json!(v));
        };
        match engine {
            Engine::Unreal => {
                put("scale-x", cell_size_m * 100.0);
                put("scale-y", cell_size_m * 100.0);
                put("scale-z", range * UNREAL_Z_SCALE_PER_M);
                // Value 32768 sits at the actor's Z, so centre the range on it.
                put("location-z-cm", (min_m + range / 2.0) * 100.0);
            }
            Engine::Unity => {
                let side = (size.saturating_sub(1)) as f64 * cell_size_m;
                put("terrain-width-m", side);
                put("terrain-length-m", side);
                put("terrain-height-m", range);
                put("position-y-m", min_m);
            }
            Engine::Godot => {
                put("vertex-spacing-m", cell_size_m);
                put("height-offset-m", min_m);
                put("height-scale-m", range);
            }
        }
        Self {
            engine,
            size,
            files: engine.height_files().iter().map(|f| f.to_string()).collect(),
            south_row_first: engine.flip_rows(),
            min_height_m: min_m,
            max_height_m: max_m,
            cell_size_m,
            settings: s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreal_recommended_sizes_follow_the_component_rule() {
        for &n in UNREAL_SIZES {
            assert!(Engine::Unreal.is_valid_side(n), "{n}");
        }
        assert!(Engine::Unreal.is_valid_side(8161)); // 32 × 1 × 255 + 1
        assert!(!Engine::Unreal.is_valid_side(1024));
        assert!(!Engine::Unreal.is_valid_side(1025)); // 1024 = 2^10: no Q·S·C product
    }

    #[test]
    fn pick_side_is_nearest_valid() {
        assert_eq!(Engine::Unreal.pick_side(1024), 1009);
        assert_eq!(Engine::Unreal.pick_side(65), 127);
        assert_eq!(Engine::Unreal.pick_side(100_000), 8129);
        assert_eq!(Engine::Unity.pick_side(1000), 1025);
        assert_eq!(Engine::Unity.pick_side(2), 33);
        assert_eq!(Engine::Godot.pick_side(513), 513);
        for e in [Engine::Unreal, Engine::Unity, Engine::Godot] {
            for n in [2, 100, 777, 3000, 9000] {
                assert!(e.is_valid_side(e.pick_side(n)), "{e:?} {n}");
            }
        }
    }

    #[test]
    fn unreal_z_scale_matches_epic_rule() {
        // 512 m of range needs Z scale 100.
        let imp = EngineImport::new(Engine::Unreal, 1009, 1.0, -256.0, 256.0);
        assert_eq!(imp.settings["scale-z"], serde_json::json!(100.0));
        assert_eq!(imp.settings["location-z-cm"], serde_json::json!(0.0));
    }

    #[test]
    fn unknown_engine_names_the_choices() {
        let e = Engine::from_name("cryengine").unwrap_err().to_string();
        assert!(e.contains("unreal, unity, godot"), "{e}");
    }
}
