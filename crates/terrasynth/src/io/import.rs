//! The `import` step: start a recipe from a heightmap file (a generator).
//!
//! Heights: integer formats (PNG 8/16-bit, R16/RAW, u8/u16 TIFF) read as fractions in [0, 1];
//! float formats (EXR, f32 TIFF) keep their values; then every height is multiplied by `scale`.
//!
//! Size: when the file's size differs from the recipe's map size, `resize = "resample"`
//! (default) resamples bilinearly to the recipe size, corners onto corners
//! ([`crate::Heightmap::resample`]); `resize = "error"` refuses with a size-mismatch error. The
//! terrain keeps the recipe's cell size either way.

use std::path::PathBuf;

use super::{FileFormat, ReadOptions, read_heightmap};
use crate::step::{Category, Step, StepContext, StepInfo, Terrain};
use crate::step::{DefaultValue, ParamKind, ParamSpec, Params};
use crate::{Error, Result};

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "path",
        kind: ParamKind::Text,
        default: DefaultValue::Text(""),
        unit: "",
        doc: "Heightmap file to read (required), relative to the working directory.",
    },
    ParamSpec {
        name: "format",
        kind: ParamKind::Choice(FileFormat::NAMES),
        default: DefaultValue::Text("auto"),
        unit: "",
        doc: "File format; auto detects it from the signature, then the extension.",
    },
    ParamSpec {
        name: "width",
        kind: ParamKind::Int { min: 0, max: crate::grid::MAX_SIDE as i64 },
        default: DefaultValue::Number(0.0),
        unit: "cells",
        doc: "Width of a headerless R16/RAW file; 0 infers a square from the file size.",
    },
    ParamSpec {
        name: "height",
        kind: ParamKind::Int { min: 0, max: crate::grid::MAX_SIDE as i64 },
        default: DefaultValue::Number(0.0),
        unit: "cells",
        doc: "Height of a headerless R16/RAW file; 0 infers it from the size and width.",
    },
    ParamSpec {
        name: "scale",
        kind: ParamKind::Float { min: -1.0e6, max: 1.0e6 },
        default: DefaultValue::Number(1.0),
        unit: "",
        doc: "Multiplies every height read (integer formats read as [0, 1]).",
    },
    ParamSpec {
        name: "resize",
        kind: ParamKind::Choice(&["resample", "error"]),
        default: DefaultValue::Text("resample"),
        unit: "",
        doc: "When the file size differs from the map size: resample bilinearly, or fail.",
    },
];

/// Registry entry of the `import` step.
pub const INFO: StepInfo = StepInfo {
    name: "import",
    category: Category::Generate,
    doc: "Start from a heightmap file: PNG 8/16-bit, R16/RAW (size given or square), EXR, TIFF. \
          Integer formats read as [0, 1], floats as stored, then times `scale`; a file of another \
          size is resampled bilinearly to the map size (or refused with resize = \"error\").",
    source: "research/terrain-tools.md §4 (engine formats)",
    params: PARAMS,
    build,
};

/// The runnable `import` step.
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// File to read.
    pub path: PathBuf,
    /// How to read it.
    pub read: ReadOptions,
    /// Height multiplier.
    pub scale: f32,
    /// Resample to the map size (true) or fail on a different size (false).
    pub resample: bool,
}

fn build(p: &Params) -> Result<Box<dyn Step>> {
    let path = p.text("path")?;
    if path.trim().is_empty() {
        return Err(Error::param("path", "\"\"", "the path of a heightmap file"));
    }
    let format_name = p.text("format")?;
    let format = FileFormat::from_name(format_name).ok_or_else(|| {
        Error::param("format", format_name, format!("one of {}", FileFormat::NAMES.join(", ")))
    })?;
    Ok(Box::new(Import {
        path: PathBuf::from(path),
        read: ReadOptions { format, width: p.usize("width")?, height: p.usize("height")? },
        scale: p.f32("scale")?,
        resample: p.text("resize")? == "resample",
    }))
}

impl Step for Import {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.check_cancelled()?;
        let mut map = read_heightmap(&self.path, &self.read)?;
        ctx.progress.set(0.5);
        let (w, h) = (terrain.height.width(), terrain.height.height());
        if !map.same_size(&terrain.height) {
            if !self.resample {
                return Err(Error::SizeMismatch {
                    what: format!("imported file {}", self.path.display()),
                    expected_w: w,
                    expected_h: h,
                    got_w: map.width(),
                    got_h: map.height(),
                });
            }
            map = map.resample(w, h)?;
        }
        map.set_cell_size(terrain.height.cell_size())?;
        if self.scale != 1.0 {
            map.scale(self.scale, 0.0)?;
        }
        terrain.height = map;
        ctx.progress.set(1.0);
        Ok(())
    }
}
