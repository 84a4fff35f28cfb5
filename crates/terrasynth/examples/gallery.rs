//! Renders the picture gallery of docs/GALLERY.md: one shaded-relief picture per built-in
//! preset, and strips of small panels that each change one recipe parameter, with the value
//! written under each panel. Everything goes through the public API (recipes run by
//! [`Pipeline`], `render::palette` + `render::hillshade`, `io::png::write_rgb8`), so the
//! pictures show exactly what `terrasynth generate` produces for the same recipe.
//!
//! ```text
//! cargo run --release -p terrasynth --example gallery -- docs/images [docs/GALLERY.md]
//! ```
//!
//! The Markdown page is written next to the images folder (`<out>/../GALLERY.md`) unless a
//! second path is given. Output is deterministic: the same library gives the same bytes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, StepEntry, presets, registry};
use terrasynth::render::plot::Canvas;
use terrasynth::render::{HillshadeOptions, hillshade, shade};
use terrasynth::step::ParamValue;
use terrasynth::{Heightmap, io};

/// Side of a preset picture, in cells and pixels (2^n + 1 suits every generator).
const PRESET_SIDE: usize = 385;
/// Default side of a strip panel, in cells and pixels.
const PANEL_SIDE: usize = 193;
/// World width of a strip panel, metres (the cell size is this over `side − 1`).
const PANEL_WORLD_M: f64 = 5000.0;
/// Vertical scale of a strip panel: metres per height unit (heights are normalised to [0, 1]).
const PANEL_RELIEF_M: f64 = 1000.0;
/// Seed of every strip recipe, so panels of a strip differ only by the parameter shown.
const STRIP_SEED: u64 = 7;
/// Gap between panels and height of the label band, pixels.
const GAP: usize = 4;
const LABEL_H: usize = 22;
const BACKGROUND: [u8; 3] = [32, 32, 36];
const INK: [u8; 3] = [235, 235, 235];
const RIVER: [u8; 3] = [30, 90, 200];
const LAKE: [u8; 3] = [70, 130, 200];
const SOURCE: [u8; 3] = [250, 210, 40];
const CHECK_LIGHT: [u8; 3] = [96, 96, 100];
const CHECK_DARK: [u8; 3] = [64, 64, 68];

/// One panel: the label drawn under it and the steps of its recipe.
struct Panel {
    label: String,
    steps: Vec<StepEntry>,
    palette: &'static str,
}

/// A strip: file stem, caption, panel side, and its panels.
struct Strip {
    name: &'static str,
    caption: &'static str,
    side: usize,
    panels: Vec<Panel>,
}

fn step(kind: &str, params: &[(&str, ParamValue)]) -> StepEntry {
    params.iter().fold(StepEntry::new(kind), |s, (k, v)| s.with(k, v.clone()))
}

fn num(v: f64) -> ParamValue {
    ParamValue::Number(v)
}
fn text(v: &str) -> ParamValue {
    ParamValue::Text(v.to_string())
}
fn list(v: &[f64]) -> ParamValue {
    ParamValue::List(v.to_vec())
}

/// The usual tail of a strip recipe: heights to [0, 1], then a sea at `sea` of the range.
fn finish(mut steps: Vec<StepEntry>, sea: f64) -> Vec<StepEntry> {
    steps.push(StepEntry::new("normalize"));
    if sea > 0.0 {
        steps.push(step("sea-level", &[("value", num(sea))]));
    }
    steps
}

fn panel(label: impl Into<String>, steps: Vec<StepEntry>) -> Panel {
    Panel { label: label.into(), steps, palette: "classic" }
}

/// fBm Perlin noise with the given extra keys (the base of most shaping strips).
fn noise(extra: &[(&str, ParamValue)]) -> StepEntry {
    let mut s = step(
        "noise",
        &[
            ("kind", text("perlin")),
            ("fractal", text("fbm")),
            ("octaves", num(8.0)),
            ("feature-size", num(0.5)),
        ],
    );
    for (k, v) in extra {
        s = s.with(k, v.clone());
    }
    s
}

/// A strip that varies one noise key over `values` (labels `key=value`).
fn noise_strip(
    name: &'static str,
    caption: &'static str,
    key: &str,
    values: &[ParamValue],
    base: &[(&str, ParamValue)],
) -> Strip {
    let panels = values
        .iter()
        .map(|v| {
            let mut extra: Vec<(&str, ParamValue)> = base.to_vec();
            extra.push((key, v.clone()));
            let shown = match v {
                ParamValue::Text(t) => t.clone(),
                other => format!("{key}={}", value_text(other)),
            };
            panel(shown, finish(vec![noise(&extra)], 0.2))
        })
        .collect();
    Strip { name, caption, side: PANEL_SIDE, panels }
}

fn strips() -> Vec<Strip> {
    let n = num;
    let mut out = vec![
        Strip {
            name: "generators-1",
            caption: "Base generators with default parameters (then `normalize`, `sea-level` 0.2).",
            side: PANEL_SIDE,
            panels: ["mdp", "diamond-square", "triangular", "spectral"]
                .iter()
                .map(|g| panel(*g, finish(vec![StepEntry::new(*g)], 0.2)))
                .collect(),
        },
        Strip {
            name: "generators-2",
            caption: "More base generators with default parameters (then `normalize`, `sea-level` 0.2).",
            side: PANEL_SIDE,
            panels: ["voronoi", "fault", "circles", "voronoi-ds"]
                .iter()
                .map(|g| panel(*g, finish(vec![StepEntry::new(*g)], 0.2)))
                .collect(),
        },
        noise_strip(
            "noise-octaves",
            "Noise `octaves`: each octave adds detail at twice the frequency and half the amplitude.",
            "octaves",
            &[n(1.0), n(3.0), n(8.0)],
            &[],
        ),
        noise_strip(
            "noise-persistence",
            "Noise `persistence` (amplitude ratio between octaves, 8 octaves): higher is rougher.",
            "persistence",
            &[n(0.3), n(0.5), n(0.7)],
            &[],
        ),
        noise_strip(
            "noise-lacunarity",
            "Noise `lacunarity` (frequency ratio between octaves, 8 octaves).",
            "lacunarity",
            &[n(1.5), n(2.0), n(3.0)],
            &[],
        ),
        noise_strip(
            "noise-fractal",
            "Noise `fractal`: fBm, ridged multifractal, hybrid multifractal, billow (8 octaves).",
            "fractal",
            &[text("fbm"), text("ridged"), text("hybrid"), text("billow")],
            &[],
        ),
        noise_strip(
            "noise-warp",
            "Noise `warp`: domain-warp amplitude (0 = off); ridges and valleys bend and fold.",
            "warp",
            &[n(0.0), n(0.5), n(1.0)],
            &[],
        ),
        noise_strip(
            "noise-kinds",
            "Noise `kind` under the same 4-octave fBm: value, Perlin variants, OpenSimplex2, Worley.",
            "kind",
            &["value", "perlin-angle", "perlin-table", "perlin", "opensimplex2", "worley"].map(text),
            &[("octaves", n(4.0))],
        ),
    ];
    let ds = |label: String, params: &[(&str, ParamValue)], normalize: bool| {
        let mut steps = vec![step("diamond-square", params)];
        if normalize {
            steps = finish(steps, 0.2);
        } else {
            steps.push(step("sea-level", &[("value", n(0.2))]));
        }
        panel(label, steps)
    };
    out.push(Strip {
        name: "ds-roughness",
        caption: "Diamond-square `roughness` scales the whole relief (no `normalize` here, heights × 1000 m): \
                  steeper shading, same shapes.",
        side: PANEL_SIDE,
        panels: [0.25, 0.5, 1.0]
            .iter()
            .map(|&r| ds(format!("roughness={r}"), &[("roughness", n(r))], false))
            .collect(),
    });
    out.push(Strip {
        name: "ds-smoothness",
        caption: "Diamond-square `smoothness` H (displacement × 2^-H per level): 0.5 rugged, 2 rolling.",
        side: PANEL_SIDE,
        panels: [0.5, 1.0, 1.5, 2.0]
            .iter()
            .map(|&h| ds(format!("smoothness={h}"), &[("smoothness", n(h))], true))
            .collect(),
    });
    out.push(Strip {
        name: "ds-detail",
        caption: "Diamond-square `detail`: levels with random offsets; finer levels are interpolated.",
        side: PANEL_SIDE,
        panels: [3.0, 5.0, 0.0]
            .iter()
            .map(|&d| ds(format!("detail={d}"), &[("detail", n(d))], true))
            .collect(),
    });
    let coefficients: [(&str, &[f64]); 4] =
        [("c=-1", &[-1.0]), ("c=1", &[1.0]), ("c=-1,1", &[-1.0, 1.0]), ("c=0,1", &[0.0, 1.0])];
    out.push(Strip {
        name: "voronoi-coefficients",
        caption: "Voronoi `coefficients` c1..cn in h = Σ c_i d_i (d_i = distance to the i-th nearest point).",
        side: PANEL_SIDE,
        panels: coefficients
            .iter()
            .map(|(label, c)| panel(*label, finish(vec![step("voronoi", &[("coefficients", list(c))])], 0.2)))
            .collect(),
    });
    out.push(Strip {
        name: "spectral-passes",
        caption: "Spectral synthesis `passes`: lattices at doubling frequency, amplitude 0.5^i.",
        side: PANEL_SIDE,
        panels: [1.0, 3.0, 8.0]
            .iter()
            .map(|&p| panel(format!("passes={p}"), finish(vec![step("spectral", &[("passes", n(p))])], 0.2)))
            .collect(),
    });
    out.push(Strip {
        name: "fault-iterations",
        caption: "Fault `iterations`: number of random fault lines.",
        side: PANEL_SIDE,
        panels: [10.0, 100.0, 1000.0]
            .iter()
            .map(|&i| {
                panel(format!("iterations={i}"), finish(vec![step("fault", &[("iterations", n(i))])], 0.2))
            })
            .collect(),
    });
    out.push(Strip {
        name: "circles-count",
        caption: "Circles `count`: number of random circular hills.",
        side: PANEL_SIDE,
        panels: [10.0, 100.0, 1000.0]
            .iter()
            .map(|&c| panel(format!("count={c}"), finish(vec![step("circles", &[("count", n(c))])], 0.2)))
            .collect(),
    });
    out.push(Strip {
        name: "falloff-shape",
        caption: "Fall-off `shape` on fBm noise (default curve [0, 0.6, 0.9, 1, 1]); none for reference.",
        side: PANEL_SIDE,
        panels: vec![
            panel("none", finish(vec![noise(&[])], 0.25)),
            panel(
                "shape=circle",
                finish(vec![noise(&[]), step("falloff", &[("shape", text("circle"))])], 0.25),
            ),
            panel(
                "shape=rectangle",
                finish(vec![noise(&[]), step("falloff", &[("shape", text("rectangle"))])], 0.25),
            ),
        ],
    });
    let curves: [(&str, &[f64]); 3] = [
        ("linear", &[0.0, 1.0]),
        ("default", &[0.0, 0.6, 0.9, 1.0, 1.0]),
        ("steep", &[0.0, 0.0, 0.2, 1.0, 1.0]),
    ];
    out.push(Strip {
        name: "falloff-curve",
        caption: "Fall-off `curve` (circle): coefficients from border to centre, linearly interpolated.",
        side: PANEL_SIDE,
        panels: curves
            .iter()
            .map(|(label, c)| {
                panel(*label, finish(vec![noise(&[]), step("falloff", &[("curve", list(c))])], 0.25))
            })
            .collect(),
    });
    out.push(Strip {
        name: "island-h0",
        caption: "Island `h0` (seed 004 §8) on fBm noise normalised to [0, 1], sea at the absolute height 0.3: \
                  `h0` multiplies the weight, so it decides how much rises above a fixed sea. (A `normalize` \
                  after `island` would cancel it.)",
        side: PANEL_SIDE,
        panels: [0.75, 1.5, 3.0]
            .iter()
            .map(|&h| {
                let steps = vec![
                    noise(&[]),
                    StepEntry::new("normalize"),
                    step("island", &[("h0", n(h))]),
                    step("sea-level", &[("mode", text("absolute")), ("value", n(0.3))]),
                ];
                panel(format!("h0={h}"), steps)
            })
            .collect(),
    });
    out.push(Strip {
        name: "perturb-magnitude",
        caption: "Perturbation `magnitude` on a Voronoi terrain (c = -1, 1): straight cell edges wobble.",
        side: PANEL_SIDE,
        panels: [0.0, 0.05, 0.25]
            .iter()
            .map(|&m| {
                panel(
                    format!("magnitude={m}"),
                    finish(vec![StepEntry::new("voronoi"), step("perturb", &[("magnitude", n(m))])], 0.2),
                )
            })
            .collect(),
    });
    out.push(Strip {
        name: "terrace",
        caption: "Terrace `levels` (sharpness 0.8) on fBm noise; none for reference.",
        side: PANEL_SIDE,
        panels: std::iter::once(panel("none", finish(vec![noise(&[])], 0.2)))
            .chain([4.0, 8.0, 16.0].iter().map(|&l| {
                panel(
                    format!("levels={l}"),
                    finish(vec![noise(&[]), step("terrace", &[("levels", n(l))])], 0.2),
                )
            }))
            .collect(),
    });
    out.push(Strip {
        name: "palettes",
        caption: "Palettes (recipe key `palette`) on the same island recipe, sea at 0.3.",
        side: PANEL_SIDE,
        panels: ["classic", "mdp", "simple", "grayscale"]
            .iter()
            .map(|p| Panel {
                label: (*p).to_string(),
                steps: finish(vec![noise(&[]), StepEntry::new("island")], 0.3),
                palette: p,
            })
            .collect(),
    });
    out.extend(process_strips());
    out.extend(seed_strips());
    out
}

/// Numeric recipe keys of one step, as (key, value) pairs.
type NumberKeys = &'static [(&'static str, f64)];

/// Side of the issue-14 strips that need room (a triangular array of 2^8 + 1 rows).
const SEED_SIDE: usize = 257;

/// The strips of issue 14 (seed algorithms as the seeds describe them): noise scale and
/// offset per axis (seed 003), the triangle form of `triangular` and squig-curve rivers on it
/// (seed 001 §1.1.1, §2.1), Olsen's in-place sweeps (Olsen 2004), and the river walks from
/// placed sources (seed 004 §9).
fn seed_strips() -> Vec<Strip> {
    let n = num;
    let known: Vec<&str> = registry().iter().map(|s| s.name).collect();
    let has = |name: &str| known.contains(&name);
    let mut out = Vec::new();
    let axes: [(&str, NumberKeys); 4] = [
        ("default", &[]),
        ("scale-x=2", &[("scale-x", 2.0)]),
        ("scale-y=0.5", &[("scale-y", 0.5)]),
        ("offset-x=96", &[("offset-x", 96.0)]),
    ];
    out.push(Strip {
        name: "noise-scale-offset",
        caption: "Noise `scale-x`, `scale-y`, `offset-x` (seed 003's per-axis scale and offset): column i \
                  samples the default map's column i · scale-x + offset-x (rows likewise), so `scale-x = 2` \
                  squeezes the features to half their width, `scale-y = 0.5` stretches them to twice their \
                  height, and `offset-x = 96` shows the terrain 96 cells further east: the left half of that \
                  panel has the shapes of the first panel's right half (each panel is normalised on its own, \
                  so its colours and sea line differ).",
        side: PANEL_SIDE,
        panels: axes
            .iter()
            .map(|(label, keys)| {
                let extra: Vec<(&str, ParamValue)> = keys.iter().map(|(k, v)| (*k, n(*v))).collect();
                panel(*label, finish(vec![noise(&extra)], 0.2))
            })
            .collect(),
    });
    if has("triangular") {
        let tri = |shape: &str| step("triangular", &[("shape", text(shape))]);
        out.push(Strip {
            name: "triangle-shape",
            caption: "`triangular` (seed 001 §1.1.1) with the same seed and parameters: `shape = \"square\"` \
                      (the map's square cut into two triangles, a shared edge averaged over both) and \
                      `shape = \"triangle\"` (the seed's one triangle, stored as its triangular array of \
                      2^8 + 1 rows, row i of i + 1 points, Fig. 5; each midpoint the mean of its own \
                      triangle's three vertices plus noise). The checkerboard is what `triangle.png` leaves \
                      transparent (cells x > y, where the map holds the mirrored triangle).",
            side: SEED_SIDE,
            panels: vec![
                panel("shape=square", finish(vec![tri("square")], 0.0)),
                panel("shape=triangle", finish(vec![tri("triangle")], 0.0)),
            ],
        });
    }
    if has("squig-rivers") {
        let squig: [(&str, NumberKeys); 4] = [
            ("rivers=0", &[("rivers", 0.0)]),
            ("defaults", &[]),
            (
                "river-level=1",
                &[("rivers", 2.0), ("river-level", 1.0), ("tributaries", 6.0), ("branch-level", 2.0)],
            ),
            ("rivers=6 trib=12", &[("rivers", 6.0), ("tributaries", 12.0)]),
        ];
        out.push(Strip {
            name: "squig-rivers",
            caption: "`squig-rivers` (Prusinkiewicz & Hammel 1993, seed 001 §2.1) on the `triangular` step's \
                      triangle, outside masked as in `triangle.png`: `rivers = 0` is that triangle bit for bit \
                      (the `shape=triangle` panel above); the defaults (3 rivers, 4 tributaries, river-level 2, \
                      branch-level 3) give 3 rivers, each a squig curve inside one level-2 triangle (the big \
                      triangle cut into 16) that touches the coast, from a spring on an inland edge to its \
                      mouth on the coast (the triangle's border), with tributaries joining them (seed 001 \
                      §2.1.3: each river a tree); \
                      `river-level = 1` gives longer rivers (in triangles of twice the leg); 6 rivers and 12 \
                      tributaries. Heights never rise downstream along a river and stay below the terrain \
                      beside it; rivers drawn 2 px wide. Every spring is inland: tributaries open only on \
                      free inland edges (a unit test checks 40 seeds).",
            side: SEED_SIDE,
            panels: squig
                .iter()
                .map(|(label, keys)| {
                    let keys: Vec<(&str, ParamValue)> = keys.iter().map(|(k, v)| (*k, n(*v))).collect();
                    panel(*label, finish(vec![step("squig-rivers", &keys)], 0.0))
                })
                .collect(),
        });
    }
    out.extend(olsen_sweep_strips());
    out.extend(river_mode_strips());
    out
}

/// Erosion and hydrology strips, when those steps are registered.
fn process_strips() -> Vec<Strip> {
    let n = num;
    let known: Vec<&str> = registry().iter().map(|s| s.name).collect();
    let has = |name: &str| known.contains(&name);
    let base =
        || vec![noise(&[("fractal", text("ridged")), ("octaves", n(6.0))]), StepEntry::new("normalize")];
    let side = 257;
    let mut out = Vec::new();
    let erosions: Vec<(&str, StepEntry)> = [
        ("thermal", step("thermal", &[("iterations", n(30.0))])),
        ("olsen-erosion", StepEntry::new("olsen-erosion")),
        ("droplets", step("droplets", &[("droplets", n(100000.0))])),
        ("stream-power", step("stream-power", &[("iterations", n(40.0))])),
    ]
    .into_iter()
    .filter(|(name, _)| has(name))
    .collect();
    for pair in erosions.chunks(2) {
        let mut panels = vec![panel("before", finish(base(), 0.0))];
        for (name, s) in pair {
            let mut steps = base();
            steps.push(s.clone());
            panels.push(panel(*name, finish(steps, 0.0)));
        }
        let (name, caption) = if pair[0].0 == "thermal" {
            (
                "erosion-1",
                "Erosion before/after on ridged noise: `thermal` (30 iterations), `olsen-erosion` (defaults: 50 iterations, talus-k 16).",
            )
        } else {
            (
                "erosion-2",
                "Erosion before/after on ridged noise: `droplets` (100 000 droplets), `stream-power` (40 steps).",
            )
        };
        out.push(Strip { name, caption, side, panels });
    }
    if has("stream-power") && has("falloff") {
        // A noise island as `highlands` (sea first: it is stream power's base level).
        let island = |keys: &[(&str, f64)]| {
            let mut sp = step(
                "stream-power",
                &[
                    ("iterations", n(40.0)),
                    ("dt", n(5.0)),
                    ("coarse", n(2.0)),
                    ("fine-iterations", n(8.0)),
                    ("g", n(0.5)),
                ],
            );
            for (k, v) in keys {
                sp = sp.with(k, n(*v));
            }
            vec![
                noise(&[("feature-size", n(0.7))]),
                step(
                    "falloff",
                    &[("curve", list(&[0.0, 0.0, 0.0, 0.4, 0.8, 1.0, 1.0])), ("coast-warp", n(0.45))],
                ),
                StepEntry::new("normalize"),
                step("sea-level", &[("value", n(0.1))]),
                sp,
            ]
        };
        out.push(Strip {
            name: "stream-power-fields",
            caption: "`stream-power` with uplift and erodibility from noise fields, on the same island (40 steps \
                      on the grid twice as coarse, 8 at full resolution, G = 0.5): uniform rates; \
                      `uplift-variation = 0.7` (a range rises where the uplift field is high, lower hills \
                      elsewhere); `rock-contrast = 3` (soft rock, K·3, wears down into plains, hard rock, K/3, \
                      stands as ridges); both.",
            side,
            panels: vec![
                panel("uniform", island(&[])),
                panel("uplift-variation=0.7", island(&[("uplift-variation", 0.7)])),
                panel("rock-contrast=3", island(&[("rock-contrast", 3.0)])),
                panel("both", island(&[("uplift-variation", 0.7), ("rock-contrast", 3.0)])),
            ],
        });
    }
    if has("rivers") && has("lakes") {
        let base = || vec![noise(&[("octaves", n(6.0))]), StepEntry::new("normalize")];
        // The sea comes first: hydrology drains into it.
        let with = |extra: Vec<StepEntry>| {
            let mut s = base();
            s.push(step("sea-level", &[("value", n(0.2))]));
            s.extend(extra);
            s
        };
        out.push(Strip {
            name: "hydrology",
            caption: "Hydrology drawn on the map: `rivers` (blue polylines, width from drainage area), `lakes` \
                      (filled depressions), both.",
            side,
            panels: vec![
                panel("before", with(vec![])),
                panel("rivers", with(vec![StepEntry::new("rivers")])),
                panel("lakes", with(vec![StepEntry::new("lakes")])),
                panel("lakes+rivers", with(vec![StepEntry::new("lakes"), StepEntry::new("rivers")])),
            ],
        });
    }
    out
}

/// Olsen 2004's fast erosions with `sweep = "coloured"` (exchange passes by cell colour) and
/// `sweep = "in-place"` (his row-major sweep as published) on his base terrain.
fn olsen_sweep_strips() -> Vec<Strip> {
    let n = num;
    let known: Vec<&str> = registry().iter().map(|s| s.name).collect();
    let has = |name: &str| known.contains(&name);
    // Olsen's base terrain, as the `olsen` preset: 2/3 diamond-square + 1/3 Voronoi, perturbed.
    let base = || {
        vec![
            step("diamond-square", &[("smoothness", n(1.0))]),
            step("blend", &[("source", text("voronoi")), ("mode", text("lerp")), ("weight", n(1.0 / 3.0))]),
            step("perturb", &[("magnitude", n(0.25))]),
            StepEntry::new("normalize"),
        ]
    };
    let mut out = Vec::new();
    let cases: [(&str, &str, &str, NumberKeys); 2] = [
        (
            "olsen-sweep-erosion",
            "olsen-erosion",
            "Olsen's erosion (`olsen-erosion`, T = 16/N, Von Neumann, 50 iterations) on his base terrain \
             (the `olsen` preset's steps), coloured vs in-place sweep: the same terrain after the same \
             iterations. In place (Olsen 2004 as published: one row-major sweep, each cell seeing its \
             up and left neighbours already changed) carries material along +x and +y within a sweep \
             and levels more per iteration; its slopes end in small steps along the rows and columns. \
             The coloured passes (the default) have no visit order.",
            &[("iterations", 50.0)],
        ),
        (
            "olsen-sweep-thermal",
            "thermal-olsen",
            "Olsen's optimised thermal erosion (`thermal-olsen`, T = 4/N, rotated Von Neumann, \
             200 iterations), coloured vs in-place sweep on the same base terrain: with the rotated \
             (diagonal) neighbourhood the in-place sweep leaves fine streaks along the diagonals.",
            &[("iterations", 200.0)],
        ),
    ];
    for (name, kind, caption, keys) in cases {
        if !has(kind) {
            continue;
        }
        let run = |sweep: &str| {
            let mut params: Vec<(&str, ParamValue)> = keys.iter().map(|(k, v)| (*k, n(*v))).collect();
            params.push(("sweep", text(sweep)));
            let mut steps = base();
            steps.push(step(kind, &params));
            finish(steps, 0.0)
        };
        out.push(Strip {
            name,
            caption,
            side: SEED_SIDE,
            panels: vec![
                panel("before", base()),
                panel("sweep=coloured", run("coloured")),
                panel("sweep=in-place", run("in-place")),
            ],
        });
    }
    out
}

/// The `river-sources` step's three walks (seed 004 §9 versions 1 and 2, and the filled walk)
/// from the same sources on one map with lakes.
fn river_mode_strips() -> Vec<Strip> {
    let n = num;
    if !registry().iter().any(|s| s.name == "river-sources") {
        return Vec::new();
    }
    let with = |mode: Option<&str>| {
        let mut steps = vec![
            noise(&[("octaves", n(6.0))]),
            StepEntry::new("island"),
            StepEntry::new("normalize"),
            step("sea-level", &[("value", n(0.15))]),
            StepEntry::new("lakes"),
        ];
        if let Some(mode) = mode {
            steps.push(step("river-sources", &[("sources", list(RIVER_SOURCES)), ("mode", text(mode))]));
        }
        steps
    };
    vec![Strip {
        name: "river-sources",
        caption: RIVER_SOURCES_CAPTION,
        side: SEED_SIDE,
        panels: vec![
            panel("lakes", with(None)),
            panel("walk-v1", with(Some("walk-v1"))),
            panel("backtrack-v2", with(Some("backtrack-v2"))),
            panel("filled", with(Some("filled"))),
        ],
    }]
}

/// Sources of the `river-sources` strip (x, y pairs, cells).
const RIVER_SOURCES: &[f64] = &[168.0, 72.0, 144.0, 120.0, 216.0, 24.0];

const RIVER_SOURCES_CAPTION: &str = "`river-sources` (seed 004 §9) from the same three sources \
    (yellow dots) on one island with lakes (the `lakes` step's depressions, light blue; sea at 0.15). \
    `walk-v1`, the seed's first version, moves to the lowest neighbour not yet in the river, uphill if \
    it must: each of the three rivers fills the pit it runs into cell by cell and stops there, enclosed \
    by its own cells (the dark blue patches: the seed's lake). `backtrack-v2`, its second version, makes \
    the same walks but steps back out of each dead end (the cell stays water) and goes on: the two \
    inland rivers fill their lakes, merge and run to the sea on the east coast, the third reaches the \
    north edge. `filled` descends the depression-filled surface, crossing each lake at its surface to the \
    sea (the editor's default). Rivers from sources are drawn 2 px wide.";

/// A recipe for a strip panel: `side`² cells over [`PANEL_WORLD_M`], heights × [`PANEL_RELIEF_M`].
fn panel_recipe(p: &Panel, side: usize) -> terrasynth::Result<Recipe> {
    let mut r = Recipe::from_toml_str("")?;
    r.name = p.label.clone();
    r.width = side;
    r.height = side;
    r.cell_size = PANEL_WORLD_M / (side - 1) as f64;
    r.seed = STRIP_SEED;
    r.palette = terrasynth::recipe::PaletteSpec::Named(p.palette.to_string());
    r.exports.height_scale = PANEL_RELIEF_M;
    r.steps = p.steps.clone();
    Ok(r)
}

/// Runs a recipe and renders it as the CLI's `shaded.png` does (heights × height-scale,
/// palette colours × Horn hillshade, sea flat), then draws lakes and rivers if any.
fn render(recipe: Recipe) -> terrasynth::Result<(usize, usize, Vec<u8>)> {
    let scale = recipe.exports.height_scale;
    let palette = recipe.palette.resolve()?;
    let sources: Vec<(f32, f32)> = recipe
        .steps
        .iter()
        .filter(|s| s.kind == "river-sources")
        .filter_map(|s| s.params.get("sources"))
        .flat_map(|v| match v {
            ParamValue::List(xs) => xs.chunks(2).map(|p| (p[0] as f32, p[1] as f32)).collect(),
            _ => Vec::new(),
        })
        .collect();
    let out = Pipeline::new(recipe, &registry())?.run(&PipelineProgress::new())?;
    let t = &out.terrain;
    let hydro = t.layers.get::<terrasynth::hydro::HydroLayers>().cloned().unwrap_or_default();
    let metres: Heightmap = t.height.map(|&v| (v as f64 * scale) as f32);
    let sea = Some((t.sea_level as f64 * scale) as f32);
    let opts = HillshadeOptions::default();
    let colour = palette.colorize(&metres, sea);
    let hs = hillshade(&metres, &opts, sea)?;
    let mut rgb = shade(&colour, &hs, &opts)?;
    let (w, h) = (metres.width(), metres.height());
    if let Some(labels) = &hydro.lake_labels {
        for (i, &id) in labels.as_slice().iter().enumerate() {
            if id != 0 {
                let px = &mut rgb[i * 3..i * 3 + 3];
                for (c, l) in px.iter_mut().zip(LAKE) {
                    *c = ((*c as u16 + 3 * l as u16) / 4) as u8;
                }
            }
        }
    }
    // The network's rivers are not drawn across lakes (the export's water mask holds both as one
    // colour; here the lake keeps its relief, so a river traced over its flat fill would show as
    // straight lines). Rivers from sources are: their walks through lakes are the picture.
    let in_lake = |x: f32, y: f32| {
        let (xi, yi) =
            (x.round().clamp(0.0, (w - 1) as f32) as usize, y.round().clamp(0.0, (h - 1) as f32) as usize);
        hydro.lake_labels.as_ref().is_some_and(|l| l.as_slice()[yi * w + xi] != 0)
    };
    // Squig-curve rivers (on a triangle) and rivers from sources are drawn at least 2 px wide.
    let triangle = t.layers.get::<terrasynth::generate::TriangleMask>().is_some();
    let network = hydro.rivers.iter().map(|r| (r, triangle, true));
    for (river, thick, network) in network.chain(hydro.sourced.iter().map(|r| (r, true, false))) {
        for seg in river.points.windows(2) {
            let (a, b) = (&seg[0], &seg[1]);
            let r = (0.5 * a.width.max(1.0)).min(4.0).max(if thick { 1.0 } else { 0.0 });
            let steps = ((b.x - a.x).abs().max((b.y - a.y).abs()) * 2.0).ceil().max(1.0) as usize;
            for k in 0..=steps {
                let f = k as f32 / steps as f32;
                let (x, y) = (a.x + (b.x - a.x) * f, a.y + (b.y - a.y) * f);
                if !(network && in_lake(x, y)) {
                    disc(&mut rgb, w, h, x, y, r, RIVER);
                }
            }
        }
    }
    for &(x, y) in &sources {
        disc(&mut rgb, w, h, x, y, 3.0, INK);
        disc(&mut rgb, w, h, x, y, 2.0, SOURCE);
    }
    if triangle {
        // What `triangle.png` leaves transparent, drawn as a checkerboard.
        for y in 0..h {
            for x in (0..w).filter(|&x| !terrasynth::generate::TriangleMask::inside(x, y)) {
                let c = if (x / 8 + y / 8) % 2 == 0 { CHECK_LIGHT } else { CHECK_DARK };
                rgb[(y * w + x) * 3..(y * w + x) * 3 + 3].copy_from_slice(&c);
            }
        }
    }
    Ok((w, h, rgb))
}

/// Fills a disc of radius `r` (at least the pixel itself) centred on `(cx, cy)`.
fn disc(rgb: &mut [u8], w: usize, h: usize, cx: f32, cy: f32, r: f32, colour: [u8; 3]) {
    let r = r.max(0.5);
    let (x0, x1) = ((cx - r).floor().max(0.0) as usize, ((cx + r).ceil().max(0.0) as usize).min(w - 1));
    let (y0, y1) = ((cy - r).floor().max(0.0) as usize, ((cy + r).ceil().max(0.0) as usize).min(h - 1));
    for y in y0..=y1 {
        for x in x0..=x1 {
            let (dx, dy) = (x as f32 - cx, y as f32 - cy);
            if dx * dx + dy * dy <= r * r {
                rgb[(y * w + x) * 3..(y * w + x) * 3 + 3].copy_from_slice(&colour);
            }
        }
    }
}

/// Writes `s` centred in the band `[x0, x0 + width) × [y0, y0 + LABEL_H)` of `img`, at 2×
/// scale (1× if it would not fit), clipped to the band's right edge.
fn draw_label(img: &mut Canvas, x0: usize, width: usize, y0: usize, s: &str) {
    let chars = s.chars().count();
    let scale = if chars * 12 <= width { 2 } else { 1 };
    let text_w = (chars * 6 * scale).saturating_sub(scale);
    let left = x0 + width.saturating_sub(text_w) / 2;
    let top = y0 + (LABEL_H - 7 * scale) / 2;
    img.text_clipped(left as i64, top as i64, s, scale as i64, (x0 + width) as i64, INK);
}

/// Renders every panel of a strip side by side with its label under it.
fn render_strip(strip: &Strip) -> terrasynth::Result<(usize, usize, Vec<u8>)> {
    let side = strip.side;
    let n = strip.panels.len();
    let (w, h) = (n * side + (n + 1) * GAP, side + 2 * GAP + LABEL_H);
    let mut img = Canvas::new(w, h, BACKGROUND);
    for (k, p) in strip.panels.iter().enumerate() {
        let (pw, ph, rgb) = render(panel_recipe(p, side)?)?;
        let x0 = GAP + k * (side + GAP);
        for y in 0..ph {
            let dst = ((GAP + y) * w + x0) * 3;
            img.as_rgb_mut()[dst..dst + pw * 3].copy_from_slice(&rgb[y * pw * 3..(y + 1) * pw * 3]);
        }
        draw_label(&mut img, x0, side, GAP + side + GAP / 2, &p.label);
    }
    Ok((w, h, img.into_rgb()))
}

/// A parameter value as written in TOML.
fn value_text(v: &ParamValue) -> String {
    match v {
        ParamValue::Bool(b) => b.to_string(),
        ParamValue::Number(x) => format!("{x}"),
        ParamValue::Text(s) => format!("{s:?}"),
        ParamValue::List(xs) => {
            format!("[{}]", xs.iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(", "))
        }
        ParamValue::Absent => "(absent)".into(),
    }
}

/// Steps as `` `type` {key = value, …} → … `` for the captions.
fn steps_text(steps: &[StepEntry]) -> String {
    let parts: Vec<String> = steps
        .iter()
        .map(|s| {
            let keys: Vec<String> =
                s.params.iter().map(|(k, v)| format!("{k} = {}", value_text(v))).collect();
            if keys.is_empty() {
                format!("`{}`", s.kind)
            } else {
                format!("`{}` {{{}}}", s.kind, keys.join(", "))
            }
        })
        .collect();
    parts.join(" → ")
}

fn main() -> terrasynth::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let out = PathBuf::from(args.get(1).cloned().unwrap_or_else(|| "docs/images".into()));
    let md_path = args.get(2).map(PathBuf::from).unwrap_or_else(|| {
        out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).join("GALLERY.md")
    });
    std::fs::create_dir_all(&out).map_err(|e| terrasynth::Error::Io { path: out.clone(), source: e })?;
    let images = out.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();

    let mut md = String::new();
    md.push_str(GALLERY_INTRO);
    md.push_str("\n## Presets\n\n");
    md.push_str(&format!(
        "Each built-in preset (`presets/<name>.toml`) at {PRESET_SIDE}×{PRESET_SIDE} cells: the preset's own \
         recipe, with the size overridden and the cell size scaled so the map covers the same ground.\n\n"
    ));
    // GALLERY_ONLY=<text>: render only pictures whose name contains it (for quick looks; the
    // Markdown page is then not written).
    let only = std::env::var("GALLERY_ONLY").ok();
    let wanted = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    for p in presets() {
        if !wanted(&format!("preset-{}", p.name)) {
            continue;
        }
        let mut r = p.recipe()?;
        let extent = r.cell_size * (r.width.max(r.height) - 1) as f64;
        r.width = PRESET_SIDE;
        r.height = PRESET_SIDE;
        r.cell_size = extent / (PRESET_SIDE - 1) as f64;
        let description = r.description.clone();
        let palette = match &r.palette {
            terrasynth::recipe::PaletteSpec::Named(n) => format!("`{n}`"),
            _ => "custom".to_string(),
        };
        let settings = format!(
            "`seed` = {}, `sea-level` = {}, `palette` = {palette}, `height-scale` = {} m, cell {:.2} m \
             (preset: {} m at {}×{})",
            r.seed,
            r.sea_level,
            r.exports.height_scale,
            r.cell_size,
            p.recipe()?.cell_size,
            p.recipe()?.width,
            p.recipe()?.height
        );
        let steps = steps_text(&r.steps);
        let (w, h, rgb) = render(r)?;
        let file = format!("preset-{}.png", p.name);
        io::png::write_rgb8(out.join(&file), w, h, &rgb)?;
        eprintln!("wrote {file}");
        let _ = write!(
            md,
            "### `{}`\n\n![preset {}]({images}/{file})\n\n{description}\n\nSteps: {steps}; {settings}.\n\n",
            p.name, p.name
        );
    }
    md.push_str("## One option at a time\n\n");
    let _ = write!(
        md,
        "Each strip runs one recipe per panel, identical except for the value written under the panel. \
         Panels are {PANEL_SIDE}×{PANEL_SIDE} cells over {:.0} km (erosion and hydrology: 257×257), seed \
         {STRIP_SEED}, heights × {PANEL_RELIEF_M:.0} m (`exports.height-scale`), palette `classic`, sun from \
         the north-west at 45°. Noise panels use `kind = \"perlin\"`, `fractal = \"fbm\"`, `octaves = 8`, \
         `feature-size = 0.5` unless the strip changes them.\n\n",
        PANEL_WORLD_M / 1000.0
    );
    for strip in strips() {
        if !wanted(strip.name) {
            continue;
        }
        let (w, h, rgb) = render_strip(&strip)?;
        let file = format!("{}.png", strip.name);
        io::png::write_rgb8(out.join(&file), w, h, &rgb)?;
        eprintln!("wrote {file}");
        let _ =
            write!(md, "### {}\n\n![{}]({images}/{file})\n\n{}\n\n", strip.name, strip.name, strip.caption);
        for p in &strip.panels {
            let palette =
                if p.palette == "classic" { String::new() } else { format!(" (palette `{}`)", p.palette) };
            let _ = writeln!(md, "- **{}**{palette}: {}", p.label, steps_text(&p.steps));
        }
        md.push('\n');
    }
    if only.is_some() {
        return Ok(());
    }
    std::fs::write(&md_path, md).map_err(|e| terrasynth::Error::Io { path: md_path.clone(), source: e })?;
    eprintln!("wrote {}", md_path.display());
    Ok(())
}

const GALLERY_INTRO: &str = "# Gallery\n\n\
Real output of terrasynth: shaded relief (palette colour × Horn hillshade, as `shaded.png` from \
`terrasynth generate`). Every picture and this page are produced by one command, deterministically \
(same library, same bytes):\n\n\
```sh\ncargo run --release -p terrasynth --example gallery -- docs/images\n```\n\n\
Step keys below are the recipe keys (`[[steps]]` tables, see docs/RECIPES.md); `→` separates steps \
in order.\n";
